//! Asynchronous copies and mbarriers ([`Op::Async`](crate::program::Op::Async)).
//!
//! The CTA keeps the copies its threads have issued and not yet completed, in issue order
//! ([`AsyncState`]). A copy is checked (bounds, alignment, sizes) when it is issued and faults
//! there, but it moves data only when it completes, and it completes only where the ISA says
//! its data may be needed:
//! - `cp.async.wait_group N` / `wait_all`: the issuing thread's committed `cp.async` groups but
//!   the newest `N`;
//! - `cp.async.bulk.wait_group{.read} N`: the issuing thread's bulk groups but the newest `N`;
//! - an `mbarrier.try_wait` that finds its phase incomplete, and any point where every thread
//!   of the CTA waits (on mbarriers or barriers): every copy an mbarrier tracks (bulk copies
//!   with `complete_tx`, and the `cp.async`s before a `cp.async.mbarrier.arrive`), with the
//!   arrivals and `complete_tx` they owe;
//! - the end of the CTA: everything left (stores to global memory land);
//! - more than [`MAX_PENDING`] copies outstanding: the oldest, so memory stays bounded.
//!
//! Sources are read when the copy completes, and from its issue to its completion a
//! shared-memory destination holds `0xff` bytes (not for reductions). A thread that reads a
//! destination before the wait that covers it (its own or, for other threads, the wait and
//! the barrier after it) therefore sees `0xff…` (a NaN as a float, -1 as an integer), never
//! the copied data nor stale data that may happen to be right; a thread that overwrites the
//! source of a bulk store before `wait_group.read` changes what is stored. The program's bug
//! shows instead of working by luck. (ptxvm does not trap such reads: that would cost every
//! shared-memory load a check.)
//!
//! mbarrier objects live in their 8 bytes of shared memory (encoding:
//! [`crate::semantics::mbarrier`]). A `test_wait`/`try_wait` that fails writes `false` and
//! suspends its lanes after the instruction until an mbarrier of the CTA changes (an arrival,
//! a `complete_tx`, a copy completing), so that a waiting loop lets the producer run instead of
//! spinning. When every thread of the CTA waits, pending copies are completed; if that changes
//! nothing, the waiting lanes are resumed once (their wait reported `false`, as after a time
//! limit); when they all wait again with nothing changed, the launch stops with a deadlock
//! report naming each waiting instruction and its mbarrier.

use super::cta::Cta;
use super::fault::ExecError;
use super::warp::warp_ctx;
use crate::mem::{self, Allocation};
use crate::ops_async as k;
use crate::ops_move::{oob, resolve, space_of, Target};
use crate::program::{lane_bits, Fault, FaultKind, Space};
use crate::semantics::mbarrier::{self as mb, RedOp, RedType};

/// What the shared-memory destination of a copy holds from its issue to its completion.
const POISON: [u8; 16] = [0xFF; 16];

/// Copies a CTA may have outstanding before the oldest are completed.
pub(super) const MAX_PENDING: usize = 1 << 16;

/// The asynchronous-copy state of a CTA.
#[derive(Default)]
pub(super) struct AsyncState {
    /// Copies issued and not completed, oldest first.
    ops: Vec<Pending>,
    /// Per thread: `cp.async.commit_group`s executed (sized at the first `cp.async`).
    cp_groups: Vec<u64>,
    /// Per thread: `cp.async.bulk.commit_group`s executed.
    bulk_groups: Vec<u64>,
    /// Counts changes of mbarriers and completions.
    epoch: u64,
    /// Lanes suspended by a failed `test_wait`/`try_wait`.
    pub(super) waits: Vec<MbarWait>,
    /// The epoch at which suspended lanes were last resumed with nothing changed.
    forced: Option<u64>,
}

impl AsyncState {
    /// No copy pending and no lane waiting: nothing for the scheduler to do.
    #[inline]
    pub(super) fn idle(&self) -> bool {
        self.ops.is_empty() && self.waits.is_empty()
    }
}

/// Lanes of a warp suspended after a failed mbarrier wait.
pub(super) struct MbarWait {
    /// Warp.
    pub(super) wi: usize,
    /// Lanes.
    pub(super) lanes: u32,
    /// The wait instruction.
    pub(super) pc: u32,
    /// Shared-memory offset of the mbarrier.
    pub(super) bar: u64,
}

/// One outstanding copy.
struct Pending {
    /// Issuing thread (linear index in the CTA).
    thread: u32,
    /// Its commit group (the count of commits of its kind when it was issued).
    group: u64,
    /// The instruction that issued it.
    pc: u32,
    what: What,
}

#[derive(Clone, Copy)]
enum Loc {
    Shared(u64),
    Global(u64),
}

enum What {
    /// `cp.async`: `n` bytes to shared `dst`, the first `read` of them from global `src`, the
    /// rest zeros.
    Cp {
        dst: u64,
        src: u64,
        n: u32,
        read: u32,
    },
    /// `cp.async.mbarrier.arrive`: an arrival once the thread's earlier `cp.async`s are done.
    CpArrive { bar: u64 },
    /// `cp.async.bulk`/`cp.reduce.async.bulk`: `size` bytes, then `complete_tx` on `bar`.
    Bulk {
        dst: Loc,
        src: Loc,
        size: u32,
        bar: Option<u64>,
        red: Option<(RedOp, RedType)>,
    },
    /// `cp{.reduce}.async.bulk.tensor`: the box of `map` at `coords` (im2col `offsets`),
    /// placed at shared-memory offset `soff` ([`tensor_elements`]; kept this small, not as the
    /// element list, so that pending copies stay small); `esize`-byte elements; to global
    /// memory (bulk group) or to shared memory (`complete_tx` of `bytes` on `bar`).
    Tensor {
        map: Box<crate::semantics::tensormap::TensorMap>,
        coords: [i32; 5],
        offsets: [u16; 3],
        soff: u64,
        esize: u32,
        fill: u64,
        to_global: bool,
        bar: Option<u64>,
        bytes: u32,
        red: Option<(RedOp, RedType)>,
    },
}

/// The elements of a tensor copy: (swizzled shared-memory offset, global address or `None`
/// out of bounds), in shared-memory order.
fn tensor_elements(
    map: &crate::semantics::tensormap::TensorMap,
    coords: &[i32; 5],
    offsets: &[u16; 3],
    soff: u64,
) -> Vec<(u64, Option<u64>)> {
    use crate::semantics::tensormap as tm;
    let mut elems = if map.im2col {
        map.im2col_elements(coords, offsets)
    } else {
        map.tile_elements(coords)
    };
    for e in &mut elems {
        e.0 = tm::swizzle(soff + e.0, map.swizzle);
    }
    elems
}

fn loc(t: &Target<'_>, addr: u64) -> Loc {
    match t {
        Target::Shared(off) => Loc::Shared(*off),
        _ => Loc::Global(addr),
    }
}

fn shared_bytes(shared: &[u32], off: u64, len: u32) -> Vec<u8> {
    (0..len as u64)
        .map(|k| mem::load(shared, off + k, 1) as u8)
        .collect()
}

fn put_shared(shared: &mut [u32], off: u64, bytes: &[u8]) {
    for (k, b) in bytes.iter().enumerate() {
        mem::store(shared, off + k as u64, 1, *b as u64);
    }
}

impl<'s, 'a> Cta<'s, 'a> {
    fn alloc_of(&self, addr: u64, len: u64) -> Option<(&'a Allocation, u64)> {
        let m: &'a mem::MemMap = self.sh.env.mem;
        m.find(addr, len).map(|a| (a, addr - a.base))
    }

    fn read_loc(&self, l: Loc, len: u32) -> Vec<u8> {
        match l {
            Loc::Shared(off) => shared_bytes(&self.shared, off, len),
            Loc::Global(addr) => self.alloc_of(addr, len as u64).map_or_else(
                || vec![0; len as usize],
                |(a, off)| a.read_bytes(off, len as u64),
            ),
        }
    }

    fn write_loc(&mut self, l: Loc, bytes: &[u8]) {
        match l {
            Loc::Shared(off) => put_shared(&mut self.shared, off, bytes),
            Loc::Global(addr) => {
                if let Some((a, off)) = self.alloc_of(addr, bytes.len() as u64) {
                    a.write_bytes(off, bytes);
                }
            }
        }
    }

    fn mbar_state(&self, off: u64) -> u64 {
        mem::load(&self.shared[..], off, 8)
    }

    fn set_mbar(&mut self, off: u64, s: u64, current: usize) {
        mem::store(&mut self.shared[..], off, 8, s);
        self.async_changed(current);
    }

    /// Something an mbarrier wait may depend on changed: suspended waits retry.
    fn async_changed(&mut self, current: usize) {
        self.asy.epoch += 1;
        if self.asy.waits.is_empty() {
            return;
        }
        for mw in std::mem::take(&mut self.asy.waits) {
            let w = &mut self.warps[mw.wi];
            w.ready |= mw.lanes;
            if mw.wi == current {
                if let Some((cpc, cm)) = w.cur {
                    Self::save(w, cpc, cm);
                }
            }
            w.cur = None;
        }
    }

    /// The fault of a copy that fails when it completes (an mbarrier it arrives on).
    fn pending_fault(&self, p: &Pending, e: mb::MbarError) -> ExecError {
        let insn = &self.sh.prog.code[p.pc as usize];
        ExecError::Fault {
            kind: FaultKind::Other(format!("when the asynchronous copy completed: {e}")),
            pos: self.pos((p.thread / 32) as usize, (p.thread % 32) as usize, insn),
        }
    }

    fn perform(&mut self, p: Pending, current: usize) -> Result<(), ExecError> {
        match p.what {
            What::Cp { dst, src, n, read } => {
                let mut bytes = if read > 0 {
                    self.read_loc(Loc::Global(src), read)
                } else {
                    Vec::new()
                };
                bytes.resize(n as usize, 0);
                put_shared(&mut self.shared, dst, &bytes);
            }
            What::CpArrive { bar } => {
                let s = self.mbar_state(bar);
                let (s, _) =
                    mb::arrive(s, 1, 0, false, false).map_err(|e| self.pending_fault(&p, e))?;
                mem::store(&mut self.shared[..], bar, 8, s);
            }
            What::Bulk {
                dst,
                src,
                size,
                bar,
                red,
            } => {
                let mut bytes = self.read_loc(src, size);
                if let Some((op, ty)) = red {
                    let old = self.read_loc(dst, size);
                    let es = ty.size() as usize;
                    for (o, d) in bytes.chunks_exact_mut(es).zip(old.chunks_exact(es)) {
                        let get = |b: &[u8]| b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
                        let r = mb::reduce(op, ty, get(d), get(o)).unwrap_or(0);
                        for (k, x) in o.iter_mut().enumerate() {
                            *x = (r >> (8 * k)) as u8;
                        }
                    }
                }
                self.write_loc(dst, &bytes);
                if let Some(bar) = bar {
                    let s = self.mbar_state(bar);
                    let s =
                        mb::complete_tx(s, size as i64).map_err(|e| self.pending_fault(&p, e))?;
                    mem::store(&mut self.shared[..], bar, 8, s);
                }
            }
            What::Tensor {
                ref map,
                coords,
                offsets,
                soff,
                esize,
                fill,
                to_global,
                bar,
                bytes,
                red,
            } => {
                let get = |b: &[u8]| b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
                for (off, g) in tensor_elements(map, &coords, &offsets, soff) {
                    if to_global {
                        let Some(g) = g else { continue };
                        let mut v = get(&shared_bytes(&self.shared, off, esize));
                        if let Some((op, ty)) = red {
                            let old = get(&self.read_loc(Loc::Global(g), esize));
                            v = mb::reduce(op, ty, old, v).unwrap_or(0);
                        }
                        let b = v.to_le_bytes();
                        self.write_loc(Loc::Global(g), &b[..esize as usize]);
                    } else {
                        let v = match g {
                            Some(g) => get(&self.read_loc(Loc::Global(g), esize)),
                            None => fill,
                        };
                        put_shared(&mut self.shared, off, &v.to_le_bytes()[..esize as usize]);
                    }
                }
                if let Some(bar) = bar {
                    let s = self.mbar_state(bar);
                    let s =
                        mb::complete_tx(s, bytes as i64).map_err(|e| self.pending_fault(&p, e))?;
                    mem::store(&mut self.shared[..], bar, 8, s);
                }
            }
        }
        self.async_changed(current);
        Ok(())
    }

    /// Completes, in issue order, the pending copies `sel` picks.
    fn complete(
        &mut self,
        current: usize,
        mut sel: impl FnMut(usize, &Pending) -> bool,
    ) -> Result<(), ExecError> {
        let ops = std::mem::take(&mut self.asy.ops);
        let mut keep = Vec::new();
        let mut done = Vec::new();
        for (i, p) in ops.into_iter().enumerate() {
            if sel(i, &p) {
                done.push(p);
            } else {
                keep.push(p);
            }
        }
        self.asy.ops = keep;
        for p in done {
            self.perform(p, current)?;
        }
        Ok(())
    }

    /// Completes every copy an mbarrier tracks (with the `cp.async`s its arrivals wait for).
    fn complete_tracked(&mut self, current: usize) -> Result<(), ExecError> {
        // the index of each thread's last `cp.async.mbarrier.arrive`
        let mut last = std::collections::HashMap::new();
        for (i, p) in self.asy.ops.iter().enumerate() {
            if let What::CpArrive { .. } = p.what {
                last.insert(p.thread, i);
            }
        }
        if last.is_empty()
            && !self.asy.ops.iter().any(|p| {
                matches!(
                    p.what,
                    What::Bulk { bar: Some(_), .. } | What::Tensor { bar: Some(_), .. }
                )
            })
        {
            return Ok(());
        }
        self.complete(current, |i, p| match p.what {
            What::Cp { .. } | What::CpArrive { .. } => last.get(&p.thread).is_some_and(|&j| i <= j),
            What::Bulk { bar, .. } | What::Tensor { bar, .. } => bar.is_some(),
        })
    }

    /// At the end of the CTA: completes every pending copy.
    #[inline(never)]
    pub(super) fn async_finish(&mut self) -> Result<(), ExecError> {
        if self.asy.ops.is_empty() {
            return Ok(());
        }
        self.complete(usize::MAX, |_, _| true)
    }

    /// Every thread waits: completes what mbarriers track, or resumes the suspended waits once
    /// when nothing changed since they were last resumed. `false`: nothing can move.
    #[cold]
    pub(super) fn async_unstick(&mut self) -> Result<bool, ExecError> {
        if self.asy.waits.is_empty() && self.asy.ops.is_empty() {
            return Ok(false);
        }
        let before = self.asy.epoch;
        self.complete_tracked(usize::MAX)?;
        if self.asy.epoch != before {
            // (resumed whatever waited, if anything did)
            return Ok(!self.asy.waits.is_empty() || self.warps.iter().any(|w| w.ready != 0));
        }
        if self.asy.waits.is_empty() || self.asy.forced == Some(self.asy.epoch) {
            return Ok(false);
        }
        self.asy.forced = Some(self.asy.epoch);
        self.async_changed(usize::MAX);
        self.asy.epoch -= 1;
        Ok(true)
    }

    /// The mbarrier waits of a deadlock report: (threads, arrivals pending, offset, pc).
    pub(super) fn mbar_waits(&self) -> Vec<(u32, u32, u64, u32)> {
        let mut out: Vec<(u32, u32, u64, u32)> = Vec::new();
        for mw in &self.asy.waits {
            let n = mw.lanes.count_ones();
            match out.iter_mut().find(|x| x.2 == mw.bar && x.3 == mw.pc) {
                Some(x) => x.0 += n,
                None => out.push((
                    n,
                    mb::pending(self.mbar_state(mw.bar)) as u32,
                    mw.bar,
                    mw.pc,
                )),
            }
        }
        out
    }

    /// Issues the tensor copy (or prefetch) at `pc` for lane `l` of warp `wi`: reads and
    /// checks the tensor map, checks every in-bounds element's global address and the
    /// shared-memory range, and queues the copy.
    fn tensor_op(&mut self, wi: usize, pc: u32, l: usize) -> Result<(), Fault> {
        use crate::semantics::tensormap::{self as tm, TensorMap};
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let aux = insn.aux;
        let reg = |this: &Self, slot: u32| this.warps[wi].regs[slot as usize][l];
        let fault = |msg: String| Fault {
            kind: FaultKind::Other(msg),
            lane: Some(l as u32),
        };
        let resolve_at = |this: &mut Self, which: u32, bytes: u32, write: bool| {
            let (b, o) = match which {
                0 => (insn.a, insn.v[0]),
                1 => (insn.b, insn.v[1]),
                _ => (insn.v[2], insn.v[3]),
            };
            let a = reg(this, b).wrapping_add(reg(this, o));
            let mut space = space_of(k::space(aux, which));
            // `mov.u64 %rd, tmap` of a kernel parameter gives its param-space address, which
            // nvcc passes to the tensor copies as is
            if which == 1
                && a.checked_add(128)
                    .is_some_and(|e| e <= this.sh.env.param_size)
                && this.sh.env.mem.find(a, 128).is_none()
            {
                space = Space::KernelParam;
            }
            let (warps, shared, sh) = (&mut this.warps, &mut this.shared, this.sh);
            let ctx = warp_ctx(&mut warps[wi], shared, sh);
            resolve(&ctx, space, a, bytes, l, write).map(|t| match t {
                Target::Global(al, off) => (
                    Some(al.read_bytes(off, if write { 0 } else { 128 })),
                    Loc::Global(a),
                ),
                Target::Shared(off) => (None, Loc::Shared(off)),
                Target::Param(off) => (
                    Some(
                        (0..128)
                            .map(|k| mem::load(sh.env.params, off + k, 1) as u8)
                            .collect(),
                    ),
                    Loc::Global(a),
                ),
                Target::Local(_) => (None, Loc::Global(a)),
            })
        };
        // the tensor map
        let (bytes, at) = resolve_at(self, 1, 128, false)?;
        let bytes: Vec<u8> = match (bytes, at) {
            (Some(b), _) => b,
            (None, Loc::Shared(off)) => shared_bytes(&self.shared, off, 128),
            (None, _) => return Err(fault("the tensor map is in local memory".into())),
        };
        let raw: [u8; 128] = bytes.try_into().unwrap_or([0; 128]);
        let map = TensorMap::decode(&raw)
            .map_err(|e| fault(format!("the tensor map operand is invalid: {e}")))?;
        let rank = ((aux >> 32) & 7) as u8;
        if map.rank != rank {
            return Err(fault(format!(
                "a {rank}-dimensional copy through a {}-dimensional tensor map",
                map.rank
            )));
        }
        if map.im2col != (aux & k::IM2COL != 0) {
            return Err(fault(
                "the copy's load mode (tile/im2col) is not the tensor map's".into(),
            ));
        }
        if map.atomicity != 0 {
            return Err(fault(
                "ptxvm does not execute tensor maps with a swizzle atomicity other than 16 bytes (sm_100) yet".into(),
            ));
        }
        let list = &prog.lists[insn.imm as usize];
        let coords: Vec<i32> = list[..rank as usize]
            .iter()
            .map(|&s| reg(self, s) as i32)
            .collect();
        if k::kind(aux) == k::TENSOR_PREFETCH {
            return Ok(());
        }
        if aux & k::MULTICAST != 0 && reg(self, insn.c) & 1 == 0 {
            return Ok(());
        }
        let esize = map.elem_size();
        let total = map.box_bytes();
        let (_, sloc) = resolve_at(self, 0, total.min(u32::MAX as u64) as u32, true)?;
        let Loc::Shared(soff) = sloc else {
            return Err(fault(
                "the shared-memory operand is not in shared memory".into(),
            ));
        };
        if soff % 128 != 0 {
            return Err(fault(format!(
                "the shared-memory address of a tensor copy must be 128-byte aligned (offset {soff:#x})"
            )));
        }
        let mut offsets = [0u16; 3];
        for (o, &s) in offsets.iter_mut().zip(&list[rank as usize..]) {
            *o = reg(self, s) as u16;
        }
        let mut at = [0i32; 5];
        at[..coords.len()].copy_from_slice(&coords);
        let elems = tensor_elements(&map, &at, &offsets, soff);
        // the swizzle moves 16-byte chunks within 128-byte rows: a box whose last row is
        // partial reaches past its own bytes
        let len = self.sh.env.shared_size;
        if let Some(&(off, _)) = elems.iter().find(|e| e.0 + esize as u64 > len) {
            let what = "the block's shared memory (a chunk of the swizzled box)";
            let detail = crate::ops_move::window_detail(off, esize, len, what);
            return Err(oob(Space::Shared, off, esize, l, detail));
        }
        for e in &elems {
            if let Some(g) = e.1 {
                if self.alloc_of(g, esize as u64).is_none() {
                    let detail = self.sh.env.mem.blame(g, esize);
                    return Err(oob(Space::Global, g, esize, l, detail));
                }
            }
        }
        let to_global = (aux >> 8) & 3 == k::S2G;
        let red = if aux & k::REDUCE != 0 {
            let ty = match map.dtype {
                2 => RedType::U32,
                3 => RedType::S32,
                4 => RedType::U64,
                5 => RedType::S64,
                6 => RedType::F16,
                7 => RedType::F32,
                8 => RedType::F64,
                9 => RedType::Bf16,
                t => return Err(fault(format!("no reduction on tensor-map data type {t}"))),
            };
            let op = k::reduction(aux).0;
            if mb::reduce(op, ty, 0, 0).is_none() {
                return Err(fault(format!(
                    "the reduction {op:?} is not defined on {ty:?}"
                )));
            }
            Some((op, ty))
        } else {
            None
        };
        let bar = if to_global {
            None
        } else {
            let (_, b) = resolve_at(self, 2, 8, true)?;
            let Loc::Shared(b) = b else {
                return Err(fault("the mbarrier object is not in shared memory".into()));
            };
            if !mb::initialized(self.mbar_state(b)) {
                return Err(fault(mb::MbarError::Uninitialized.to_string()));
            }
            for (off, _) in &elems {
                put_shared(&mut self.shared, *off, &POISON[..esize as usize]);
            }
            Some(b)
        };
        let t = wi * 32 + l;
        let fill = tm::oob_fill(map.dtype, map.oob_nan);
        self.asy.ops.push(Pending {
            thread: t as u32,
            group: self.asy.bulk_groups[t],
            pc,
            what: What::Tensor {
                map: Box::new(map),
                coords: at,
                offsets,
                soff,
                esize,
                fill,
                to_global,
                bar,
                bytes: total as u32,
                red,
            },
        });
        Ok(())
    }

    /// Executes the asynchronous-copy or mbarrier instruction at `pc` for the lanes `m` of the
    /// group `mask` of warp `wi`. (Never inlined: the executor's `control`, which calls it,
    /// must stay small enough to be inlined into the dispatch loop.)
    #[inline(never)]
    pub(super) fn async_op(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
    ) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let aux = insn.aux;
        let kind = k::kind(aux);
        if k::is_cluster(kind) {
            return self.cluster_op(wi, pc, mask, m);
        }
        let nthreads = self.nthreads as usize;
        if self.asy.cp_groups.len() < nthreads {
            self.asy.cp_groups.resize(nthreads, 0);
            self.asy.bulk_groups.resize(nthreads, 0);
        }
        let reg = |this: &Self, slot: u32, l: usize| this.warps[wi].regs[slot as usize][l];
        let addr = |this: &Self, which: u32, l: usize| {
            let (b, o) = match which {
                0 => (insn.a, insn.v[0]),
                1 => (insn.b, insn.v[1]),
                _ => (insn.v[2], insn.v[3]),
            };
            reg(this, b, l).wrapping_add(reg(this, o, l))
        };
        // resolves address `which` of lane `l` for `bytes` bytes
        let target = |this: &mut Self, which: u32, l: usize, bytes: u32, write: bool| {
            let a = addr(this, which, l);
            let space = space_of(k::space(aux, which));
            let (warps, shared, sh) = (&mut this.warps, &mut this.shared, this.sh);
            let ctx = warp_ctx(&mut warps[wi], shared, sh);
            resolve(&ctx, space, a, bytes, l, write).map(|t| (loc(&t, a), a))
        };
        // the shared-memory offset of the mbarrier at address `which` of lane `l`
        let mbar = |this: &mut Self, which: u32, l: usize| -> Result<u64, Fault> {
            match target(this, which, l, 8, true)? {
                (Loc::Shared(off), _) => Ok(off),
                (_, a) => Err(Fault {
                    kind: FaultKind::Other(format!(
                        "the mbarrier object at {a:#x} is not in shared memory"
                    )),
                    lane: Some(l as u32),
                }),
            }
        };
        let mb_err = |e: mb::MbarError, l: usize| Fault {
            kind: FaultKind::Other(e.to_string()),
            lane: Some(l as u32),
        };
        let thread = |l: usize| wi * 32 + l;
        let mut failed = 0u32;
        let r: Result<(), Fault> = (|| {
            match kind {
                k::CP_ASYNC => {
                    let n = ((aux >> 32) & 0xFF) as u32;
                    for l in lane_bits(m) {
                        let mut read = n;
                        if aux & k::CP_SRC_SIZE != 0 {
                            let s = reg(self, insn.imm as u32, l);
                            if s > n as u64 {
                                return Err(Fault {
                                    kind: FaultKind::Other(format!(
                                        "src-size {s} is larger than the cp-size {n}"
                                    )),
                                    lane: Some(l as u32),
                                });
                            }
                            read = s as u32;
                        }
                        if aux & k::CP_IGNORE != 0 {
                            let p = self.warps[wi].preds[insn.imm as usize] >> l & 1 != 0;
                            if p != (aux & k::CP_IGNORE_NEG != 0) {
                                read = 0;
                            }
                        }
                        let (dst, _) = target(self, 0, l, n, true)?;
                        let src = addr(self, 1, l);
                        if read > 0 {
                            if src % n as u64 != 0 {
                                return Err(Fault {
                                    kind: FaultKind::Misaligned {
                                        space: "global",
                                        addr: src,
                                        align: n,
                                    },
                                    lane: Some(l as u32),
                                });
                            }
                            if self.alloc_of(src, read as u64).is_none() {
                                let detail = self.sh.env.mem.blame(src, read);
                                return Err(oob(Space::Global, src, read, l, detail));
                            }
                        }
                        let Loc::Shared(dst) = dst else {
                            continue;
                        };
                        let t = thread(l);
                        put_shared(&mut self.shared, dst, &POISON[..n as usize]);
                        self.asy.ops.push(Pending {
                            thread: t as u32,
                            group: self.asy.cp_groups[t],
                            pc,
                            what: What::Cp { dst, src, n, read },
                        });
                    }
                }
                k::CP_COMMIT => {
                    for l in lane_bits(m) {
                        self.asy.cp_groups[thread(l)] += 1;
                    }
                }
                k::BULK_COMMIT => {
                    for l in lane_bits(m) {
                        self.asy.bulk_groups[thread(l)] += 1;
                    }
                }
                k::CP_MBAR_ARRIVE => {
                    for l in lane_bits(m) {
                        let bar = mbar(self, 0, l)?;
                        let s = self.mbar_state(bar);
                        if !mb::initialized(s) {
                            return Err(mb_err(mb::MbarError::Uninitialized, l));
                        }
                        if aux & k::NOINC == 0 {
                            // one more arrival pending: the asynchronous one
                            let s = mb::add_pending(s).map_err(|e| mb_err(e, l))?;
                            self.set_mbar(bar, s, wi);
                        }
                        self.asy.ops.push(Pending {
                            thread: thread(l) as u32,
                            group: 0,
                            pc,
                            what: What::CpArrive { bar },
                        });
                    }
                }
                k::MBAR_INIT => {
                    for l in lane_bits(m) {
                        let bar = mbar(self, 0, l)?;
                        let s = mb::init(reg(self, insn.c, l) & 0xFFFF_FFFF)
                            .map_err(|e| mb_err(e, l))?;
                        self.set_mbar(bar, s, wi);
                    }
                }
                k::MBAR_INVAL => {
                    for l in lane_bits(m) {
                        let bar = mbar(self, 0, l)?;
                        self.set_mbar(bar, 0, wi);
                    }
                }
                k::MBAR_ARRIVE | k::MBAR_EXPECT_TX | k::MBAR_COMPLETE_TX => {
                    for l in lane_bits(m) {
                        let bar = mbar(self, 0, l)?;
                        let s = self.mbar_state(bar);
                        let v = (reg(self, insn.c, l) & 0xFFFF_FFFF) as i64;
                        let s = match kind {
                            k::MBAR_ARRIVE => {
                                let count = reg(self, insn.v[1], l) & 0xFFFF_FFFF;
                                let (s, token) = mb::arrive(
                                    s,
                                    count,
                                    v,
                                    aux & k::DROP != 0,
                                    aux & k::NO_COMPLETE != 0,
                                )
                                .map_err(|e| mb_err(e, l))?;
                                self.warps[wi].regs[insn.d as usize][l] = token;
                                s
                            }
                            k::MBAR_EXPECT_TX => mb::expect_tx(s, v).map_err(|e| mb_err(e, l))?,
                            _ => mb::complete_tx(s, v).map_err(|e| mb_err(e, l))?,
                        };
                        self.set_mbar(bar, s, wi);
                    }
                }
                k::MBAR_TEST_WAIT | k::MBAR_TRY_WAIT => {
                    let mut done = 0u32;
                    let mut bars = [0u64; 32];
                    for l in lane_bits(m) {
                        let bar = mbar(self, 0, l)?;
                        bars[l] = bar;
                        let v = reg(self, insn.c, l);
                        let check = |s: u64| {
                            if aux & k::PARITY != 0 {
                                mb::parity_complete(s, v)
                            } else {
                                mb::token_complete(s, v)
                            }
                        };
                        let mut s = self.mbar_state(bar);
                        if !mb::initialized(s) {
                            return Err(mb_err(mb::MbarError::Uninitialized, l));
                        }
                        if !check(s) && kind == k::MBAR_TRY_WAIT {
                            // a potentially blocking wait: the copies it may wait for complete
                            self.complete_tracked(wi).map_err(|e| match e {
                                ExecError::Fault { kind, .. } => Fault {
                                    kind,
                                    lane: Some(l as u32),
                                },
                                _ => Fault {
                                    kind: FaultKind::Other("asynchronous copy failed".into()),
                                    lane: Some(l as u32),
                                },
                            })?;
                            s = self.mbar_state(bar);
                        }
                        if check(s) {
                            done |= 1 << l;
                        }
                    }
                    failed = m & !done;
                    if insn.d != u32::MAX {
                        let p = &mut self.warps[wi].preds[insn.d as usize];
                        *p = (*p & !m) | done;
                    }
                    for l in lane_bits(failed) {
                        match self
                            .asy
                            .waits
                            .iter_mut()
                            .find(|x| x.wi == wi && x.pc == pc && x.bar == bars[l])
                        {
                            Some(x) => x.lanes |= 1 << l,
                            None => self.asy.waits.push(MbarWait {
                                wi,
                                lanes: 1 << l,
                                pc,
                                bar: bars[l],
                            }),
                        }
                    }
                }
                k::BULK | k::BULK_PREFETCH => {
                    let dir = (aux >> 8) & 3;
                    let red = (aux & k::REDUCE != 0).then(|| k::reduction(aux));
                    for l in lane_bits(m) {
                        let size = reg(self, insn.c, l) & 0xFFFF_FFFF;
                        if size % 16 != 0 {
                            return Err(Fault {
                                kind: FaultKind::Other(format!(
                                    "the size {size} of a bulk copy is not a multiple of 16"
                                )),
                                lane: Some(l as u32),
                            });
                        }
                        let size = size as u32;
                        if kind == k::BULK_PREFETCH {
                            if size > 0 {
                                target(self, 0, l, size, false)?;
                            }
                            continue;
                        }
                        // a multicast whose ctaMask leaves out this CTA copies nothing
                        // here; one to other CTAs of a cluster is not modelled yet
                        let absent = aux & k::MULTICAST != 0
                            && {
                                let (rank, size) =
                                    self.clu.as_ref().map_or((0, 1), |c| (c.rank, c.size));
                                let mask = reg(self, insn.d, l) & 0xFFFF;
                                let others = mask & !(1 << rank) & ((1u64 << size) - 1);
                                if others != 0 {
                                    return Err(Fault {
                                    kind: FaultKind::Other(format!(
                                        "a .multicast::cluster copy to other CTAs of the cluster (ctaMask {mask:#x}): ptxvm does not deliver to other CTAs yet"
                                    )),
                                    lane: Some(l as u32),
                                });
                                }
                                mask & (1 << rank) == 0
                            };
                        if size == 0 || absent {
                            continue;
                        }
                        let (dst, _) = target(self, 0, l, size, true)?;
                        let (src, _) = target(self, 1, l, size, false)?;
                        let bar = if dir == k::S2G {
                            None
                        } else {
                            let b = mbar(self, 2, l)?;
                            if !mb::initialized(self.mbar_state(b)) {
                                return Err(mb_err(mb::MbarError::Uninitialized, l));
                            }
                            Some(b)
                        };
                        if let (Loc::Shared(off), None) = (dst, red) {
                            for k in (0..size).step_by(16) {
                                put_shared(&mut self.shared, off + k as u64, &POISON);
                            }
                        }
                        let t = thread(l);
                        self.asy.ops.push(Pending {
                            thread: t as u32,
                            group: self.asy.bulk_groups[t],
                            pc,
                            what: What::Bulk {
                                dst,
                                src,
                                size,
                                bar,
                                red,
                            },
                        });
                    }
                }
                k::TENSOR | k::TENSOR_PREFETCH => {
                    for l in lane_bits(m) {
                        self.tensor_op(wi, pc, l)?;
                    }
                }
                k::TMAP_REPLACE | k::TMAP_CP | k::ST_BULK => {
                    for l in lane_bits(m) {
                        self.tmap_op(wi, pc, l)?;
                    }
                }
                _ => {}
            }
            Ok(())
        })();
        if let Err(e) = r {
            return Err(self.fault(wi, insn, e, m));
        }
        // completions at the waits
        match kind {
            k::CP_WAIT | k::CP_WAIT_ALL => {
                let n = if kind == k::CP_WAIT_ALL {
                    for l in lane_bits(m) {
                        self.asy.cp_groups[thread(l)] += 1;
                    }
                    0
                } else {
                    insn.imm as u64
                };
                let groups = &self.asy.cp_groups;
                let limits: Vec<(u32, u64)> = lane_bits(m)
                    .map(|l| (thread(l) as u32, groups[thread(l)].saturating_sub(n)))
                    .collect();
                self.complete(wi, |_, p| {
                    matches!(p.what, What::Cp { .. })
                        && limits.iter().any(|&(t, g)| t == p.thread && p.group < g)
                })?;
            }
            k::BULK_WAIT => {
                let n = insn.imm as u64;
                let groups = &self.asy.bulk_groups;
                let limits: Vec<(u32, u64)> = lane_bits(m)
                    .map(|l| (thread(l) as u32, groups[thread(l)].saturating_sub(n)))
                    .collect();
                self.complete(wi, |_, p| {
                    matches!(
                        p.what,
                        What::Bulk { bar: None, .. } | What::Tensor { bar: None, .. }
                    ) && limits.iter().any(|&(t, g)| t == p.thread && p.group < g)
                })?;
            }
            _ => {}
        }
        if self.asy.ops.len() > MAX_PENDING {
            let excess = self.asy.ops.len() - MAX_PENDING / 2;
            self.complete(wi, |i, _| i < excess)?;
        }
        // the lanes whose wait failed are suspended after it; the others go on
        let w = &mut self.warps[wi];
        if let Some((cpc, cm)) = w.cur.take() {
            Self::save(w, cpc, cm);
        }
        Self::save(w, pc + 1, mask);
        w.ready &= !failed;
        Ok(())
    }
}
