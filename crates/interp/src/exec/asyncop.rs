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

/// A copy or asynchronous store that a CTA issued into the shared memory of another CTA of its
/// cluster, on its way to that CTA's pending copies ([`super::cluster::ClusterPart::outbox`]).
pub(super) struct Remote(Pending);

/// One outstanding copy. A copy into another CTA's shared memory (a `.shared::cluster`
/// address of another rank, `.multicast::cluster`, `st.async`, `red.async`) is kept by that
/// CTA, where the mbarrier it completes lives: its waits complete it as they complete the
/// CTA's own copies.
struct Pending {
    /// Issuing thread (linear index in the issuing CTA).
    thread: u32,
    /// The cluster rank of the issuing CTA when another CTA issued it (`u32::MAX`: this CTA).
    origin: u32,
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
    /// The shared memory of the cluster's CTA of this rank (the source of a copy from another
    /// CTA's `shared::cta`, read when the copy completes in the destination CTA).
    Peer(u32, u64),
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
    /// `st.async`/`red.async`: the first `n` bytes of `val` stored (or reduced) at shared
    /// offset `dst`, then `complete_tx` of `n` on `bar`.
    Store {
        dst: u64,
        val: [u8; 16],
        n: u32,
        bar: u64,
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
            Loc::Peer(r, off) => match self.clu.as_ref().and_then(|c| c.others.get(r as usize)) {
                Some(m) if !m.is_empty() => shared_bytes(m, off, len),
                _ => shared_bytes(&self.shared, off, len),
            },
            Loc::Global(addr) => self.alloc_of(addr, len as u64).map_or_else(
                || vec![0; len as usize],
                |(a, off)| a.read_bytes(off, len as u64),
            ),
        }
    }

    fn write_loc(&mut self, l: Loc, bytes: &[u8]) {
        match l {
            Loc::Shared(off) => put_shared(&mut self.shared, off, bytes),
            Loc::Peer(r, off) => put_shared(self.mem_of(Some(r)), off, bytes),
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

    /// The shared memory of the cluster's CTA `peer` (lent for this CTA's round), or this CTA's
    /// own (`None`).
    fn mem_of(&mut self, peer: Option<u32>) -> &mut Vec<u32> {
        let own = &mut self.shared;
        match (peer, self.clu.as_deref_mut()) {
            (Some(r), Some(c)) => match c.others.get_mut(r as usize) {
                Some(m) if !m.is_empty() => m,
                _ => own,
            },
            _ => own,
        }
    }

    fn mbar_state_at(&mut self, peer: Option<u32>, off: u64) -> u64 {
        mem::load(self.mem_of(peer), off, 8)
    }

    /// Writes an mbarrier of this CTA or of the cluster's CTA `peer`, whose suspended waits
    /// then retry (before its next round).
    fn set_mbar_at(&mut self, peer: Option<u32>, off: u64, s: u64, current: usize) {
        match peer {
            None => self.set_mbar(off, s, current),
            Some(r) => {
                mem::store(self.mem_of(Some(r)), off, 8, s);
                if let Some(c) = self.clu.as_deref_mut() {
                    c.woken |= 1 << r;
                }
            }
        }
    }

    /// Where a shared-memory address of the cluster lies: `None` when it names no CTA
    /// explicitly (no rank in it: it is resolved as usual); else `Some((peer, offset))`, `peer`
    /// `None` for this CTA's own rank. `bytes` at the offset are checked (alignment, bounds)
    /// and the CTA must be in the cluster and not have finished.
    fn cluster_place(
        &self,
        space: u64,
        a: u64,
        bytes: u32,
        l: usize,
    ) -> Result<Option<(Option<u32>, u64)>, Fault> {
        use super::cluster::RANK_SHIFT;
        let Some(c) = self.clu.as_deref() else {
            return Ok(None);
        };
        let off = match space_of(space) {
            Space::Shared => a,
            Space::Generic
                if (mem::SHARED_WINDOW..mem::SHARED_WINDOW + mem::WINDOW_SIZE).contains(&a) =>
            {
                a - mem::SHARED_WINDOW
            }
            _ => return Ok(None),
        };
        let tag = off >> RANK_SHIFT;
        if tag == 0 {
            return Ok(None);
        }
        let fault = |msg: String| Fault {
            kind: FaultKind::Other(msg),
            lane: Some(l as u32),
        };
        let r = tag - 1;
        if r >= c.size as u64 {
            return Err(fault(format!(
                "{a:#x} is in the shared memory of rank {r}, outside the cluster of {} CTAs",
                c.size
            )));
        }
        let local = off & ((1 << RANK_SHIFT) - 1);
        let align = bytes.clamp(1, 16) as u64;
        if local % align != 0 {
            return Err(Fault {
                kind: FaultKind::Misaligned {
                    space: "shared::cluster",
                    addr: a,
                    align: align as u32,
                },
                lane: Some(l as u32),
            });
        }
        let size = self.sh.env.shared_size;
        if local + bytes as u64 > size {
            return Err(oob(
                Space::Shared,
                a,
                bytes,
                l,
                format!("offset {local:#x} in the {size} bytes of shared memory of the cluster's CTA of rank {r}"),
            ));
        }
        let r = r as u32;
        if r == c.rank {
            return Ok(Some((None, local)));
        }
        self.peer_live(r, l)?;
        Ok(Some((Some(r), local)))
    }

    /// The CTAs a `.multicast::cluster` copy with `ctaMask` `mask` reaches (`None`: this one).
    fn multicast_ranks(&self, mask: u64, l: usize) -> Result<Vec<Option<u32>>, Fault> {
        let (rank, size) = self.clu.as_deref().map_or((0, 1), |c| (c.rank, c.size));
        if mask >> size != 0 {
            return Err(Fault {
                kind: FaultKind::Other(format!(
                    "the ctaMask {mask:#x} of a .multicast::cluster copy names CTAs outside the cluster of {size} CTAs"
                )),
                lane: Some(l as u32),
            });
        }
        let mut out = Vec::new();
        for r in (0..size).filter(|r| mask >> r & 1 != 0) {
            if r == rank {
                out.push(None);
            } else {
                self.peer_live(r, l)?;
                out.push(Some(r));
            }
        }
        Ok(out)
    }

    /// Faults when the cluster's CTA `r` has finished (its shared memory is gone).
    fn peer_live(&self, r: u32, l: usize) -> Result<(), Fault> {
        if self
            .clu
            .as_deref()
            .is_some_and(|c| c.finished >> r & 1 != 0)
        {
            return Err(Fault {
                kind: FaultKind::Other(format!(
                    "the cluster's CTA of rank {r} has exited: its shared memory can no longer be written"
                )),
                lane: Some(l as u32),
            });
        }
        Ok(())
    }

    /// Queues a copy: in this CTA, or for the cluster's CTA `peer`, which receives it before
    /// its next round. A CTA that has sent more than [`MAX_PENDING`] copies in one round
    /// completes the oldest of them itself.
    fn queue(&mut self, peer: Option<u32>, p: Pending) -> Result<(), ExecError> {
        match (peer, self.clu.as_deref_mut()) {
            (Some(r), Some(c)) => {
                c.outbox.push((r, Remote(p)));
                if c.outbox.len() > MAX_PENDING {
                    let old: Vec<_> = c.outbox.drain(..MAX_PENDING / 2).collect();
                    for (r, op) in old {
                        self.perform_as(r, op.0)?;
                    }
                }
            }
            _ => self.asy.ops.push(p),
        }
        Ok(())
    }

    /// Completes copy `p` of the cluster's CTA `r` from this CTA's round: it runs with `r`'s
    /// shared memory in this CTA's place (and this CTA's where `r`'s was lent).
    fn perform_as(&mut self, r: u32, p: Pending) -> Result<(), ExecError> {
        let (r, rank) = match self.clu.as_deref() {
            Some(c) if (r.max(c.rank) as usize) < c.others.len() => (r as usize, c.rank as usize),
            _ => return self.perform(p, usize::MAX),
        };
        // (`others` has a place for every rank: checked above)
        let swap = |this: &mut Self, to: usize, from: usize| {
            if let Some(c) = this.clu.as_deref_mut() {
                let theirs = std::mem::take(&mut c.others[to]);
                let mine = std::mem::replace(&mut this.shared, theirs);
                c.others[from] = mine;
            }
        };
        swap(self, r, rank);
        let res = self.perform(p, usize::MAX);
        swap(self, rank, r);
        if let Some(c) = self.clu.as_deref_mut() {
            c.woken |= 1 << r;
        }
        res
    }

    /// Before this CTA's round in a cluster: the copies other CTAs issued into its shared
    /// memory join its pending ones, and its suspended mbarrier waits retry when another CTA
    /// changed one of its mbarriers (`wake`) or sent copies.
    pub(super) fn async_receive(&mut self, ops: Vec<Remote>, wake: bool) -> Result<(), ExecError> {
        if ops.is_empty() && !wake {
            return Ok(());
        }
        self.asy.ops.extend(ops.into_iter().map(|r| r.0));
        self.async_changed(usize::MAX);
        if self.asy.ops.len() > MAX_PENDING {
            let excess = self.asy.ops.len() - MAX_PENDING / 2;
            self.complete(usize::MAX, |i, _| i < excess)?;
        }
        Ok(())
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
        let by = if p.origin == u32::MAX {
            String::new()
        } else {
            format!(" (issued by the cluster's CTA of rank {})", p.origin)
        };
        ExecError::Fault {
            kind: FaultKind::Other(format!("when the asynchronous copy{by} completed: {e}")),
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
            What::Store {
                dst,
                val,
                n,
                bar,
                red,
            } => {
                let mut v = val;
                if let Some((op, ty)) = red {
                    let get = |b: &[u8]| b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
                    let old = get(&shared_bytes(&self.shared, dst, n));
                    let r = mb::reduce(op, ty, old, get(&val[..n as usize])).unwrap_or(0);
                    v[..8].copy_from_slice(&r.to_le_bytes());
                }
                put_shared(&mut self.shared, dst, &v[..n as usize]);
                let s = self.mbar_state(bar);
                let s = mb::complete_tx(s, n as i64).map_err(|e| self.pending_fault(&p, e))?;
                mem::store(&mut self.shared[..], bar, 8, s);
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
                    What::Bulk { bar: Some(_), .. }
                        | What::Tensor { bar: Some(_), .. }
                        | What::Store { .. }
                )
            })
        {
            return Ok(());
        }
        self.complete(current, |i, p| match p.what {
            What::Cp { .. } | What::CpArrive { .. } => last.get(&p.thread).is_some_and(|&j| i <= j),
            What::Bulk { bar, .. } | What::Tensor { bar, .. } => bar.is_some(),
            What::Store { .. } => true,
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
        let esize = map.elem_size();
        let total = map.box_bytes();
        // the shared-memory operand: this CTA's, or another's of the cluster (mapa)
        let (dpeer, soff) = match self.cluster_place(
            k::space(aux, 0),
            reg(self, insn.a).wrapping_add(reg(self, insn.v[0])),
            total.min(u32::MAX as u64) as u32,
            l,
        )? {
            Some(p) => p,
            None => match resolve_at(self, 0, total.min(u32::MAX as u64) as u32, true)?.1 {
                Loc::Shared(soff) => (None, soff),
                _ => {
                    return Err(fault(
                        "the shared-memory operand is not in shared memory".into(),
                    ))
                }
            },
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
        let (bar, dests) = if to_global {
            (None, vec![None])
        } else {
            // the mbarrier: in the CTA of the destination, or at the same offset in every CTA
            // of a multicast's ctaMask
            let (bpeer, b) = match self.cluster_place(
                k::space(aux, 2),
                reg(self, insn.v[2]).wrapping_add(reg(self, insn.v[3])),
                8,
                l,
            )? {
                Some(p) => p,
                None => match resolve_at(self, 2, 8, true)?.1 {
                    Loc::Shared(b) => (None, b),
                    _ => return Err(fault("the mbarrier object is not in shared memory".into())),
                },
            };
            let dests = if aux & k::MULTICAST != 0 {
                self.multicast_ranks(reg(self, insn.c) & 0xFFFF, l)?
            } else if bpeer != dpeer {
                return Err(fault(
                    "the mbarrier of a tensor copy must be in the shared memory of the CTA of its destination".into(),
                ));
            } else {
                vec![dpeer]
            };
            for &peer in &dests {
                if !mb::initialized(self.mbar_state_at(peer, b)) {
                    return Err(fault(mb::MbarError::Uninitialized.to_string()));
                }
                let mem = self.mem_of(peer);
                for (off, _) in &elems {
                    put_shared(mem, *off, &POISON[..esize as usize]);
                }
            }
            (Some(b), dests)
        };
        let t = wi * 32 + l;
        let fill = tm::oob_fill(map.dtype, map.oob_nan);
        let rank = self.clu.as_deref().map_or(0, |c| c.rank);
        for peer in dests {
            let p = Pending {
                thread: t as u32,
                origin: if peer.is_some() { rank } else { u32::MAX },
                group: self.asy.bulk_groups[t],
                pc,
                what: What::Tensor {
                    map: Box::new(map.clone()),
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
            };
            self.queue(peer, p).map_err(|e| match e {
                ExecError::Fault { kind, .. } => Fault {
                    kind,
                    lane: Some(l as u32),
                },
                _ => fault("asynchronous copy failed".into()),
            })?;
        }
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
        // the CTA (`None`: this one) and shared-memory offset of address `which` of lane `l`,
        // a `.shared::cluster` (or generic) address that may name another CTA of the cluster
        let place = |this: &mut Self,
                     which: u32,
                     l: usize,
                     bytes: u32|
         -> Result<(Option<u32>, u64), Fault> {
            let a = addr(this, which, l);
            if let Some(p) = this.cluster_place(k::space(aux, which), a, bytes, l)? {
                return Ok(p);
            }
            match target(this, which, l, bytes, true)? {
                (Loc::Shared(off), _) => Ok((None, off)),
                (_, a) => Err(Fault {
                    kind: FaultKind::Other(format!(
                        "{a:#x} is not a shared-memory address of the cluster"
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
        // a copy that failed as it completed early (too many outstanding), as a fault of lane `l`
        let exec_fault = |e: ExecError, l: usize| match e {
            ExecError::Fault { kind, .. } => Fault {
                kind,
                lane: Some(l as u32),
            },
            _ => Fault {
                kind: FaultKind::Other("asynchronous copy failed".into()),
                lane: Some(l as u32),
            },
        };
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
                            origin: u32::MAX,
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
                            origin: u32::MAX,
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
                        // (`.shared::cluster`: possibly another CTA's mbarrier)
                        let (peer, bar) = place(self, 0, l, 8)?;
                        let s = self.mbar_state_at(peer, bar);
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
                        self.set_mbar_at(peer, bar, s, wi);
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
                            self.complete_tracked(wi).map_err(|e| exec_fault(e, l))?;
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
                        if size == 0 {
                            continue;
                        }
                        let t = thread(l);
                        if dir == k::S2G {
                            let (dst, _) = target(self, 0, l, size, true)?;
                            let (src, _) = target(self, 1, l, size, false)?;
                            self.asy.ops.push(Pending {
                                thread: t as u32,
                                origin: u32::MAX,
                                group: self.asy.bulk_groups[t],
                                pc,
                                what: What::Bulk {
                                    dst,
                                    src,
                                    size,
                                    bar: None,
                                    red,
                                },
                            });
                            continue;
                        }
                        // to shared::cluster: this CTA's, another's (mapa), or the same
                        // offsets in every CTA of a multicast's ctaMask
                        let (src, _) = target(self, 1, l, size, false)?;
                        let (dpeer, doff) = place(self, 0, l, size)?;
                        let (bpeer, boff) = place(self, 2, l, 8)?;
                        let dests = if aux & k::MULTICAST != 0 {
                            let mask = reg(self, insn.d, l) & 0xFFFF;
                            self.multicast_ranks(mask, l)?
                        } else {
                            if dpeer != bpeer {
                                return Err(Fault {
                                    kind: FaultKind::Other(
                                        "the mbarrier of a bulk copy must be in the shared memory of the CTA of its destination".into(),
                                    ),
                                    lane: Some(l as u32),
                                });
                            }
                            vec![dpeer]
                        };
                        let rank = self.clu.as_deref().map_or(0, |c| c.rank);
                        for peer in dests {
                            if !mb::initialized(self.mbar_state_at(peer, boff)) {
                                return Err(mb_err(mb::MbarError::Uninitialized, l));
                            }
                            if red.is_none() {
                                let mem = self.mem_of(peer);
                                for k in (0..size).step_by(16) {
                                    put_shared(mem, doff + k as u64, &POISON);
                                }
                            }
                            let (src, origin) = match (src, peer) {
                                (Loc::Shared(o), Some(_)) => (Loc::Peer(rank, o), rank),
                                (s, Some(_)) => (s, rank),
                                (s, None) => (s, u32::MAX),
                            };
                            self.queue(
                                peer,
                                Pending {
                                    thread: t as u32,
                                    origin,
                                    group: self.asy.bulk_groups[t],
                                    pc,
                                    what: What::Bulk {
                                        dst: Loc::Shared(doff),
                                        src,
                                        size,
                                        bar: Some(boff),
                                        red,
                                    },
                                },
                            )
                            .map_err(|e| exec_fault(e, l))?;
                        }
                    }
                }
                k::ST_ASYNC | k::RED_ASYNC => {
                    let list = &prog.lists[insn.imm as usize];
                    let (esize, red) = if kind == k::RED_ASYNC {
                        let (op, ty) = k::reduction(aux);
                        (ty.size(), Some((op, ty)))
                    } else {
                        (((aux >> 32) & 0xFF) as u32, None)
                    };
                    let n = esize * list.len() as u32;
                    let rank = self.clu.as_deref().map_or(0, |c| c.rank);
                    for l in lane_bits(m) {
                        let (dpeer, doff) = place(self, 0, l, n)?;
                        let (bpeer, boff) = place(self, 2, l, 8)?;
                        let Some(_) = dpeer else {
                            return Err(Fault {
                                kind: FaultKind::Other(format!(
                                    "{} into the executing CTA's own shared memory: the destination must be another CTA of its cluster",
                                    k::kind_name(aux)
                                )),
                                lane: Some(l as u32),
                            });
                        };
                        if bpeer != dpeer {
                            return Err(Fault {
                                kind: FaultKind::Other(format!(
                                    "the mbarrier of {} must be in the shared memory of the CTA of its destination",
                                    k::kind_name(aux)
                                )),
                                lane: Some(l as u32),
                            });
                        }
                        if !mb::initialized(self.mbar_state_at(dpeer, boff)) {
                            return Err(mb_err(mb::MbarError::Uninitialized, l));
                        }
                        let mut val = [0u8; 16];
                        for (j, &slot) in list.iter().enumerate() {
                            let v = reg(self, slot, l).to_le_bytes();
                            let e = esize as usize;
                            val[j * e..(j + 1) * e].copy_from_slice(&v[..e]);
                        }
                        if red.is_none() {
                            put_shared(self.mem_of(dpeer), doff, &POISON[..n as usize]);
                        }
                        let t = thread(l);
                        self.queue(
                            dpeer,
                            Pending {
                                thread: t as u32,
                                origin: rank,
                                group: 0,
                                pc,
                                what: What::Store {
                                    dst: doff,
                                    val,
                                    n,
                                    bar: boff,
                                    red,
                                },
                            },
                        )
                        .map_err(|e| exec_fault(e, l))?;
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
