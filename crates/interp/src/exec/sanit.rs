//! Sanitizer checks (`--check race,init,sync`): shadow state beside shared memory and the
//! barriers, fed by probes that replace the instructions they watch.
//!
//! A checked launch runs a program compiled without rewrites (one bytecode instruction per
//! PTX instruction) and then [`instrument`]ed: every `ld`/`ldu`/`st`/`atom`/`red` that may
//! touch shared memory, and (for `sync`) every forward branch that jumps over a CTA barrier,
//! becomes an [`Op::Probe`] naming a [`Probe`] that keeps the original operation. The dispatch
//! loop hands a probe to the warp's control path like any other instruction that is not
//! lane-wise, so an unchecked launch — whose program has no probe — pays nothing: its hot loop
//! is the same code.
//!
//! A probe looks at the addresses and values of its active lanes *before* the access runs:
//!
//! - **race**: one [`Cell`] per byte of the CTA's shared memory records the last write
//!   (thread, instruction, barrier epoch, atomic or not, byte written) and the last read. The
//!   epoch counts the CTA's barrier releases: two accesses in the same epoch by threads of
//!   *different warps* are unordered (the threads of one warp run in lockstep in this
//!   interpreter, and `__syncwarp` orders them anyway). A read after such a write is a RAW
//!   hazard, a write after such a read a WAR hazard, a write after such a write a WAW hazard
//!   when it changes the byte (the same value written twice is benign). Both accesses must be
//!   plain: an atomic, or a `.volatile`/`.relaxed`/`.acquire`/`.release` access, races with
//!   nothing (CAS loops read the value plainly first; flags are polled with volatile loads).
//!   Fences, mbarrier and asynchronous-copy instructions start a new epoch (they order memory
//!   in ways the shadow does not model; races across them are not found). The cost is linear
//!   in the bytes accessed.
//! - **init**: the same cells carry a "written" bit; a read (or atomic) of a byte no thread of
//!   the CTA wrote is reported once per instruction. A kernel holding an instruction that
//!   writes shared memory without a probe (`cp.async`, `stmatrix`, `wmma.store`, mbarriers,
//!   cluster accesses) is not checked for uninitialised shared memory (its writes would be
//!   invisible; the launch says so once).
//! - **sync** (aligned barriers of the whole block: `bar.sync`, `barrier.sync.aligned`,
//!   `bar.red`; the non-aligned `barrier.sync` may be reached at different instructions): a
//!   generation of a barrier (the arrivals between two releases) that threads reach
//!   at different instructions, or one that some threads reach while others of the block jump
//!   over it (a branch over a barrier instruction to code that does not just exit: `if (tid <
//!   16) __syncthreads();` followed by more work). An early `return` before a barrier is not
//!   reported: since Volta, exited threads are not waited for.
//!
//! Reports ([`Hazard`]) are collected per CTA, once per (kind, instruction, other instruction),
//! and merged by the launch keeping the lowest block, so that the output does not depend on
//! the number of OS threads.

use super::fault::ThreadPos;
use crate::program::{BarKind, Op, Program, Space};

/// Which sanitizer checks a launch runs. Bounds and alignment checks (`mem`) always run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Checks {
    /// Shared-memory data races.
    pub race: bool,
    /// Reads of shared memory no thread wrote.
    pub init: bool,
    /// Barriers not every thread of the block reaches.
    pub sync: bool,
}

impl Checks {
    /// No check beyond the bounds checks.
    pub const NONE: Checks = Checks {
        race: false,
        init: false,
        sync: false,
    };
    /// Every check.
    pub const ALL: Checks = Checks {
        race: true,
        init: true,
        sync: true,
    };

    /// Parses a comma-separated list of `mem`, `race`, `init`, `sync`, `all`.
    pub fn parse(list: &str) -> Result<Checks, String> {
        let mut c = Checks::NONE;
        for word in list.split(',').map(str::trim) {
            match word {
                "mem" | "memcheck" => {}
                "race" | "racecheck" => c.race = true,
                "init" | "initcheck" => c.init = true,
                "sync" | "synccheck" => c.sync = true,
                "all" => c = Checks::ALL,
                "" => return Err("empty check name in the list".into()),
                other => {
                    return Err(format!(
                        "unknown check `{other}` (expected mem, race, init, sync or all)"
                    ))
                }
            }
        }
        Ok(c)
    }

    /// Whether the launch needs an instrumented program.
    pub fn instrumented(self) -> bool {
        self.race || self.init || self.sync
    }
}

/// What kind of problem a [`Hazard`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HazardKind {
    /// Read after an unordered write.
    ReadAfterWrite,
    /// Write after an unordered read.
    WriteAfterRead,
    /// Write of a different value after an unordered write.
    WriteAfterWrite,
    /// A read of bytes nobody wrote.
    Uninitialized,
    /// A barrier generation reached at two different instructions.
    BarrierMismatch,
    /// A barrier some threads reach while others jump over it.
    BarrierSkipped,
}

impl HazardKind {
    /// Whether it is a data race.
    pub fn is_race(self) -> bool {
        matches!(
            self,
            HazardKind::ReadAfterWrite | HazardKind::WriteAfterRead | HazardKind::WriteAfterWrite
        )
    }
}

/// One side of a hazard: who did what where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SanAccess {
    /// Thread, block and instruction.
    pub pos: ThreadPos,
    /// A store (or the write of an atomic).
    pub write: bool,
    /// An atomic.
    pub atomic: bool,
    /// The value written (little-endian bytes of the access), for writes.
    pub value: Option<u64>,
}

/// One sanitizer report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    /// What.
    pub kind: HazardKind,
    /// The access (or barrier arrival, or branch) that found it.
    pub at: SanAccess,
    /// The earlier access it conflicts with (races, barriers).
    pub other: Option<SanAccess>,
    /// Byte offset in shared memory of the first conflicting byte (memory hazards).
    pub offset: u64,
    /// Bytes concerned (memory hazards).
    pub size: u32,
    /// The shared variable the offset falls in, and the offset within it.
    pub var: Option<(String, u64)>,
}

/// A memory access watched by a probe.
#[derive(Clone, Debug)]
pub struct MemProbe {
    /// The space as decoded (`Shared`, `Generic`, `Local`…).
    pub(crate) space: Space,
    /// Bytes of one element.
    pub size: u32,
    /// Elements (vector width).
    pub vec: u32,
    /// Stores (`st`).
    pub store: bool,
    /// Read-modify-writes (`atom`, `red`).
    pub atomic: bool,
    /// `.volatile`, `.relaxed`, `.acquire` or `.release` loads and stores: like atomics, they
    /// race with nothing (flags polled across warps).
    pub ordered: bool,
}

/// An instruction replaced by [`Op::Probe`].
#[derive(Clone)]
pub struct Probe {
    /// The operation it runs after the checks.
    pub orig: Op,
    /// The memory access it makes.
    pub mem: Option<MemProbe>,
    /// For a branch over a barrier: the barrier's pc and id.
    pub skips: Option<(u32, u32)>,
}

/// Whether `pc` leads straight to the end of the thread: `exit`, or `ret` in the kernel,
/// through no-ops and unconditional branches.
fn exits_at(p: &Program, mut pc: u32) -> bool {
    let kernel = p.funcs.first().map_or(u32::MAX, |f| f.ir_index);
    for _ in 0..8 {
        let Some(i) = p.code.get(pc as usize) else {
            return false;
        };
        match i.op {
            Op::Exit => return true,
            Op::Ret => return i.func == kernel,
            Op::Nop => pc += 1,
            Op::Bra(t) if i.guard == crate::program::NO_PRED => pc = t,
            _ => return false,
        }
    }
    false
}

/// Rewrites `p` (compiled without rewrites) for a launch with `checks`: the instructions to
/// watch become [`Op::Probe`]s. Returns whether the kernel writes shared memory in ways no
/// probe sees (then the init check leaves shared memory alone).
pub fn instrument(p: &mut Program, m: &ptx_ir::Module, checks: Checks) -> bool {
    let mut unmodelled = !p.cluster_mem.is_empty();
    let mut probes = Vec::new();
    // barrier instructions of the CTA (not `bar.warp.sync`), by pc
    let bars: Vec<(u32, u32)> = p
        .code
        .iter()
        .enumerate()
        .filter_map(|(pc, i)| match i.op {
            Op::Bar(k) => {
                let b = &p.barriers[k as usize];
                let whole = b.count.is_none() && b.count_slot.is_none();
                (b.kind != BarKind::Warp
                    && b.kind != BarKind::Arrive
                    && b.id_slot.is_none()
                    && b.aligned
                    && whole)
                    .then_some((pc as u32, b.id))
            }
            _ => None,
        })
        .collect();
    for pc in 0..p.code.len() {
        let insn = &p.code[pc];
        let inst = m
            .functions
            .get(insn.func as usize)
            .and_then(|f| f.insts.get(insn.inst as usize));
        let Some(inst) = inst else { continue };
        use ptx_ir::Opcode as O;
        match inst.op {
            O::Stmatrix | O::WmmaStore | O::Wmma => unmodelled = true,
            _ => {}
        }
        if matches!(insn.op, Op::Async | Op::Wgmma) {
            unmodelled = true;
        }
        let probe = match (insn.op, inst.op) {
            (Op::Mem(_), O::Ld | O::Ldu | O::St) if checks.race || checks.init => {
                let space = crate::ops_move::space_of(insn.aux);
                let size = (insn.aux >> 8 & 0xFF) as u32;
                let vec = (insn.aux >> 16 & 0xFF) as u32;
                use ptx_ir::Modifier as M;
                let ordered = [M::Volatile, M::Relaxed, M::Acquire, M::Release, M::Mmio]
                    .iter()
                    .any(|&m| inst.has(m));
                watched(space).then_some(Probe {
                    orig: insn.op,
                    mem: Some(MemProbe {
                        space,
                        size,
                        vec,
                        store: inst.op == O::St,
                        atomic: false,
                        ordered,
                    }),
                    skips: None,
                })
            }
            (Op::Mem(_), O::Atom | O::Red) if checks.race || checks.init => {
                let space = crate::ops_move::space_of(insn.aux >> 8);
                let size = inst.types().next().map_or(4, |t| t.size_bits().div_ceil(8));
                let vec = inst.vector_width().unwrap_or(1);
                watched(space).then_some(Probe {
                    orig: insn.op,
                    mem: Some(MemProbe {
                        space,
                        size,
                        vec,
                        store: false,
                        atomic: true,
                        ordered: true,
                    }),
                    skips: None,
                })
            }
            // mbarriers, asynchronous copies and fences order memory in ways the shadow does
            // not model: each one starts a new epoch, so that nothing before it races with
            // anything after it (no false reports; races across them are not found)
            (Op::Async, _) | (Op::Nop, O::Membar | O::Fence) if checks.race => Some(Probe {
                orig: insn.op,
                mem: None,
                skips: None,
            }),
            (Op::Bra(t), _) if checks.sync && t > pc as u32 + 1 => {
                let over = bars.iter().find(|&&(b, _)| {
                    b > pc as u32 && b < t && p.code[b as usize].func == insn.func
                });
                match over {
                    Some(&(b, id)) if !exits_at(p, t) => Some(Probe {
                        orig: insn.op,
                        mem: None,
                        skips: Some((b, id)),
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(pr) = probe {
            p.code[pc].op = Op::Probe(probes.len() as u32);
            probes.push(pr);
        }
    }
    p.probes = probes;
    unmodelled
}

fn watched(space: Space) -> bool {
    matches!(space, Space::Shared | Space::Generic)
}

/// The shadow of one byte of shared memory.
#[derive(Clone, Copy, Default)]
pub(super) struct Cell {
    /// Epoch of the last write (0: never written in this CTA).
    w_epoch: u32,
    /// Its thread (linear index in the block) and pc.
    w_thread: u32,
    w_pc: u32,
    /// Epoch of the last read (0: none).
    r_epoch: u32,
    r_thread: u32,
    r_pc: u32,
    /// A reader of the same epoch in another warp than `r_thread`'s (valid with [`R_MULTI`]).
    r2_thread: u32,
    r2_pc: u32,
    /// [`INIT`], [`W_ATOMIC`], [`R_MULTI`].
    flags: u8,
}

const INIT: u8 = 1;
const W_ATOMIC: u8 = 2;
/// Readers of more than one warp in the read epoch.
const R_MULTI: u8 = 4;

/// A probe's view of one lane's access.
pub(super) struct LaneAccess {
    pub(super) thread: u32,
    pub(super) pc: u32,
    pub(super) off: u64,
    pub(super) bytes: u32,
    /// The bytes it writes (stores).
    pub(super) value: Option<[u8; 32]>,
    /// An atomic, or a volatile/relaxed/acquire/release access: it races with nothing.
    pub(super) atomic: bool,
    /// A read-modify-write (`atom`, `red`).
    pub(super) rmw: bool,
}

/// A hazard found in the shadow, before it is turned into a [`Hazard`] (which needs thread
/// coordinates).
pub(super) struct Found {
    pub(super) kind: HazardKind,
    /// The earlier access: thread, pc, whether a write, whether atomic, its value bytes.
    pub(super) other: (u32, u32, bool, bool, Option<u64>),
    pub(super) off: u64,
}

/// The sanitizer state of one CTA.
#[derive(Default)]
pub(super) struct SanCta {
    pub(super) checks: Checks,
    /// The CTA's linear index in the grid.
    pub(super) linear: u64,
    /// Whether uninitialised shared reads are checked.
    pub(super) init_shared: bool,
    /// Barrier releases so far, plus one.
    pub(super) epoch: u32,
    pub(super) cells: Vec<Cell>,
    /// Reports of this CTA, in the order found.
    pub(super) found: Vec<Hazard>,
    /// Sites reported: (kind, pc, other pc).
    pub(super) seen: std::collections::HashSet<(HazardKind, u32, u32)>,
    /// Per barrier id, the arrivals of its current generation: (barrier pc, first thread to
    /// arrive there).
    pub(super) arrivals: Vec<Vec<(u32, u32)>>,
    /// Per barrier id, the threads that jumped over it in its current generation: (barrier pc,
    /// thread, branch pc).
    pub(super) skips: Vec<Vec<(u32, u32, u32)>>,
}

impl SanCta {
    pub(super) fn new(checks: Checks, init_shared: bool, shared_bytes: u64, linear: u64) -> SanCta {
        SanCta {
            checks,
            linear,
            init_shared,
            epoch: 1,
            cells: if checks.race || checks.init {
                vec![Cell::default(); shared_bytes as usize]
            } else {
                Vec::new()
            },
            arrivals: vec![Vec::new(); 16],
            skips: vec![Vec::new(); 16],
            ..Default::default()
        }
    }

    /// Checks one lane's shared-memory access against the shadow and records it; the hazards
    /// go to `out` (at most one race and one uninitialised read per access).
    pub(super) fn access(&mut self, a: &LaneAccess, cur: &[u32], out: &mut Vec<Found>) {
        let end = a.off + a.bytes as u64;
        if end > self.cells.len() as u64 {
            return; // the handler reports the fault
        }
        let epoch = self.epoch;
        let warp = a.thread / 32;
        // (an atomic-like load has no value: it reads; an atomic writes)
        let write = a.value.is_some() || (a.atomic && a.rmw);
        let mut race: Option<Found> = None;
        let mut uninit: Option<u64> = None;
        for (k, off) in (a.off..end).enumerate() {
            let c = &mut self.cells[off as usize];
            // (a store makes the bytes initialised; loads and atomics read them)
            if self.init_shared && self.checks.init && c.flags & INIT == 0 && a.value.is_none() {
                uninit.get_or_insert(off);
            }
            if self.checks.race && race.is_none() {
                let w_other = c.w_epoch == epoch && c.w_thread / 32 != warp;
                let w_atomic = c.flags & W_ATOMIC != 0;
                // an unordered reader in another warp: the first reader, or the one of
                // another warp than the first's
                let r_other = if c.r_epoch != epoch {
                    None
                } else if c.r_thread / 32 != warp {
                    Some((c.r_thread, c.r_pc))
                } else if c.flags & R_MULTI != 0 {
                    Some((c.r2_thread, c.r2_pc))
                } else {
                    None
                };
                let old = old_byte(cur, off);
                // a race needs two plain accesses: an atomic (or a volatile, relaxed,
                // acquire or release access) races with nothing, as CAS loops read the value
                // plainly before they swap it
                let kind = if a.atomic {
                    None
                } else if !write {
                    (w_other && !w_atomic).then_some(HazardKind::ReadAfterWrite)
                } else {
                    let new = a.value.map_or(0, |v| v[k]);
                    if w_other && !w_atomic && new != old {
                        Some(HazardKind::WriteAfterWrite)
                    } else if r_other.is_some() {
                        Some(HazardKind::WriteAfterRead)
                    } else {
                        None
                    }
                };
                if let Some(kind) = kind {
                    let (t, pc, w, at) =
                        if let (HazardKind::WriteAfterRead, Some((t, pc))) = (kind, r_other) {
                            (t, pc, false, false)
                        } else {
                            (c.w_thread, c.w_pc, true, w_atomic)
                        };
                    race = Some(Found {
                        kind,
                        other: (t, pc, w, at, None),
                        off,
                    });
                }
            }
            // record
            if write {
                c.w_epoch = epoch;
                c.w_thread = a.thread;
                c.w_pc = a.pc;
                c.flags |= INIT;
                c.flags = if a.atomic {
                    c.flags | W_ATOMIC
                } else {
                    c.flags & !W_ATOMIC
                };
            }
            if !write && !a.atomic {
                if c.r_epoch != epoch {
                    c.r_epoch = epoch;
                    c.r_thread = a.thread;
                    c.r_pc = a.pc;
                    c.flags &= !R_MULTI;
                } else if c.r_thread / 32 != warp && c.flags & R_MULTI == 0 {
                    c.r2_thread = a.thread;
                    c.r2_pc = a.pc;
                    c.flags |= R_MULTI;
                }
            }
        }
        if let Some(mut f) = race {
            if f.other.2 {
                // the earlier write's value: what the memory holds before this access
                let n = a.bytes.min(8) as u64;
                let start = a.off + (f.off - a.off) / n * n;
                let mut v = 0u64;
                for i in 0..n.min(end - start) {
                    v |= (old_byte(cur, start + i) as u64) << (8 * i);
                }
                f.other.4 = Some(v);
            }
            out.push(f);
        }
        if let Some(off) = uninit {
            out.push(Found {
                kind: HazardKind::Uninitialized,
                other: (0, 0, false, false, None),
                off,
            });
        }
    }

    /// Everything before is ordered with everything after (a barrier release, a fence).
    pub(super) fn new_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
    }

    /// A barrier was released: a new epoch; the generation's arrivals and skips are done.
    pub(super) fn released(&mut self, id: usize) {
        self.new_epoch();
        if let Some(a) = self.arrivals.get_mut(id) {
            a.clear();
        }
        if let Some(s) = self.skips.get_mut(id) {
            s.clear();
        }
    }

    /// Records a report unless its site was reported before.
    pub(super) fn report(&mut self, h: Hazard) {
        let other = h.other.as_ref().map_or(u32::MAX, |o| o.pos.inst);
        let key = (
            h.kind,
            h.at.pos.func << 20 ^ h.at.pos.inst,
            other ^ h.other.as_ref().map_or(0, |o| o.pos.func << 20),
        );
        if self.found.len() < 1000 && self.seen.insert(key) {
            self.found.push(h);
        }
    }
}

fn old_byte(cur: &[u32], off: u64) -> u8 {
    (cur[(off / 4) as usize] >> ((off % 4) * 8)) as u8
}

/// The shared variable holding byte `off`, and the offset in it.
pub fn shared_var(p: &Program, off: u64) -> Option<(String, u64)> {
    p.shared_vars
        .iter()
        .rev()
        .find(|(start, size, _)| off >= *start && (off < start + size || *size == 0))
        .map(|(start, _, name)| (name.clone(), off - start))
}

/// The sanitizer state of one checked launch, shared by its CTAs.
pub struct SanLaunch {
    /// The checks (the program is instrumented for them).
    pub checks: Checks,
    /// Whether the init check covers shared memory (no unwatched shared writes).
    pub init_shared: bool,
    /// The reports of the finished CTAs.
    pub hazards: std::sync::Mutex<HazardLog>,
}

/// The reports of a launch: per site, the one of the lowest block (so that they do not depend
/// on which OS thread ran which block), in block order.
#[derive(Default)]
pub struct HazardLog {
    /// Per site, the report of the lowest block: (block, its place among that block's, report).
    sites: std::collections::HashMap<Site, (u64, usize, Hazard)>,
}

/// A report's site: its kind and the (function, instruction) of both sides.
type Site = (HazardKind, u32, u32, u32, u32);

impl HazardLog {
    /// Adds the reports of block `linear`.
    pub fn add(&mut self, linear: u64, found: Vec<Hazard>) {
        for (i, h) in found.into_iter().enumerate() {
            let o = h
                .other
                .as_ref()
                .map_or((u32::MAX, u32::MAX), |o| (o.pos.func, o.pos.inst));
            let key = (h.kind, h.at.pos.func, h.at.pos.inst, o.0, o.1);
            match self.sites.get(&key) {
                Some((l, _, _)) if *l <= linear => {}
                _ => {
                    self.sites.insert(key, (linear, i, h));
                }
            }
        }
    }

    /// The reports, in block order and then in the order found.
    pub fn into_sorted(self) -> Vec<Hazard> {
        let mut v: Vec<(u64, usize, Hazard)> = self.sites.into_values().collect();
        v.sort_by_key(|a| (a.0, a.1));
        v.into_iter().map(|x| x.2).collect()
    }
}

impl<'s, 'a> super::cta::Cta<'s, 'a> {
    /// Executes probe `k` at `pc` for the group `mask` of warp `wi` (`m`: the lanes whose guard
    /// holds): the checks, then the instruction it replaced. Sets the warp's next group.
    /// (Out of line: `control`, which the dispatch loop inlines, must not grow with it.)
    #[cold]
    #[inline(never)]
    pub(super) fn probe(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
        k: u32,
    ) -> Result<(), super::fault::ExecError> {
        let prog = self.sh.prog;
        let p = &prog.probes[k as usize];
        let insn = &prog.code[pc as usize];
        match p.orig {
            Op::Mem(f) => {
                if m != 0 {
                    if let Some(mp) = &p.mem {
                        self.san_access(wi, pc, m, mp);
                    }
                    let w = &mut self.warps[wi];
                    let mut ctx = super::warp::warp_ctx(w, &mut self.shared, self.sh);
                    if let Err(e) = f(&mut ctx, insn, m) {
                        self.warps[wi].cur = Some((pc, mask));
                        return Err(self.fault(wi, insn, e, m));
                    }
                }
                self.warps[wi].cur = Some((pc + 1, mask));
                Ok(())
            }
            Op::Bra(t) => {
                if let (Some((bpc, id)), true) = (p.skips, m != 0) {
                    self.san_skip(wi, pc, m, bpc, id);
                }
                self.branch(wi, pc, mask, m, t);
                Ok(())
            }
            Op::Async => {
                if let Some(san) = self.san.as_mut() {
                    san.new_epoch();
                }
                self.async_op(wi, pc, mask, m)
            }
            _ => {
                // fences (and nothing else: instrument makes probes of memory accesses,
                // branches, asynchronous operations and fences)
                if let Some(san) = self.san.as_mut() {
                    san.new_epoch();
                }
                self.warps[wi].cur = Some((pc + 1, mask));
                Ok(())
            }
        }
    }

    /// The checks of a memory probe, for the lanes of `m`.
    fn san_access(&mut self, wi: usize, pc: u32, m: u32, mp: &MemProbe) {
        use crate::mem::{SHARED_WINDOW, WINDOW_SIZE};
        let Some(mut san) = self.san.take() else {
            return;
        };
        let insn = &self.sh.prog.code[pc as usize];
        let bytes = mp.size * mp.vec;
        let mut found = Vec::new();
        let w = &self.warps[wi];
        for l in crate::program::lane_bits(m) {
            let addr = w.regs[insn.a as usize][l].wrapping_add(insn.imm as u64);
            let off = match mp.space {
                Space::Shared => addr,
                Space::Generic if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) => {
                    addr - SHARED_WINDOW
                }
                _ => continue,
            };
            let value = (mp.store).then(|| {
                let mut v = [0u8; 32];
                for e in 0..mp.vec.min(4) as usize {
                    let x = w.regs[insn.v[e] as usize][l].to_le_bytes();
                    let s = mp.size as usize;
                    v[e * s..e * s + s.min(8)].copy_from_slice(&x[..s.min(8)]);
                }
                v
            });
            let a = LaneAccess {
                thread: wi as u32 * 32 + l as u32,
                pc,
                off,
                bytes: bytes.min(32),
                value,
                atomic: mp.atomic || mp.ordered,
                rmw: mp.atomic,
            };
            let before = found.len();
            san.access(&a, &self.shared, &mut found);
            for f in found.drain(before..) {
                let here = SanAccess {
                    pos: self.pos(wi, l, insn),
                    write: mp.store || mp.atomic,
                    atomic: mp.atomic,
                    value: value.map(|v| {
                        let n = bytes.min(8) as usize;
                        let mut b = [0u8; 8];
                        b[..n].copy_from_slice(&v[..n]);
                        u64::from_le_bytes(b)
                    }),
                };
                let other = (f.kind != HazardKind::Uninitialized).then(|| {
                    let (t, opc, write, atomic, value) = f.other;
                    SanAccess {
                        pos: self.pos(
                            (t / 32) as usize,
                            (t % 32) as usize,
                            &self.sh.prog.code[opc as usize],
                        ),
                        write,
                        atomic,
                        value,
                    }
                });
                san.report(Hazard {
                    kind: f.kind,
                    at: here,
                    other,
                    offset: f.off,
                    size: bytes,
                    var: shared_var(self.sh.prog, f.off),
                });
            }
        }
        self.san = Some(san);
    }

    /// Lanes `m` of warp `wi` take the branch at `pc` over the barrier at `bpc` (id `id`).
    fn san_skip(&mut self, wi: usize, pc: u32, m: u32, bpc: u32, id: u32) {
        let Some(mut san) = self.san.take() else {
            return;
        };
        let l = m.trailing_zeros() as usize;
        let thread = wi as u32 * 32 + l as u32;
        if let Some(s) = san.skips.get_mut(id as usize) {
            if !s.iter().any(|&(b, _, _)| b == bpc) {
                s.push((bpc, thread, pc));
            }
        }
        let arrived = san
            .arrivals
            .get(id as usize)
            .and_then(|a| a.iter().find(|&&(b, _)| b == bpc).copied());
        if let Some((_, t)) = arrived {
            let h = self.skip_hazard(t, bpc, thread, pc);
            san.report(h);
        }
        self.san = Some(san);
    }

    /// The report of thread `skipper` jumping (at `branch`) over the barrier at `bpc` that
    /// thread `arrived` reached.
    fn skip_hazard(&self, arrived: u32, bpc: u32, skipper: u32, branch: u32) -> Hazard {
        let code = &self.sh.prog.code;
        let at = |t: u32, pc: u32| SanAccess {
            pos: self.pos((t / 32) as usize, (t % 32) as usize, &code[pc as usize]),
            write: false,
            atomic: false,
            value: None,
        };
        Hazard {
            kind: HazardKind::BarrierSkipped,
            at: at(arrived, bpc),
            other: Some(at(skipper, branch)),
            offset: 0,
            size: 0,
            var: None,
        }
    }

    /// The sync checks of lanes `m` of warp `wi` arriving at the barrier at `pc` (id `id`).
    #[cold]
    #[inline(never)]
    pub(super) fn san_arrive(&mut self, wi: usize, pc: u32, m: u32, id: u32) {
        let Some(mut san) = self.san.take() else {
            return;
        };
        if san.checks.sync && m != 0 {
            let thread = wi as u32 * 32 + m.trailing_zeros();
            let arrivals = &mut san.arrivals[id as usize];
            let first_other = arrivals.iter().find(|&&(b, _)| b != pc).copied();
            let new_pc = !arrivals.iter().any(|&(b, _)| b == pc);
            if new_pc {
                arrivals.push((pc, thread));
            }
            if let Some((opc, t)) = first_other.filter(|_| new_pc) {
                let code = &self.sh.prog.code;
                let at = |t: u32, pc: u32| SanAccess {
                    pos: self.pos((t / 32) as usize, (t % 32) as usize, &code[pc as usize]),
                    write: false,
                    atomic: false,
                    value: None,
                };
                san.report(Hazard {
                    kind: HazardKind::BarrierMismatch,
                    at: at(thread, pc),
                    other: Some(at(t, opc)),
                    offset: 0,
                    size: 0,
                    var: None,
                });
            }
            let skipped = san.skips[id as usize]
                .iter()
                .find(|&&(b, _, _)| b == pc)
                .copied();
            if let (Some((_, t, branch)), true) = (skipped, new_pc) {
                let h = self.skip_hazard(thread, pc, t, branch);
                san.report(h);
            }
        }
        self.san = Some(san);
    }

    /// Hands this CTA's reports to the launch.
    pub(super) fn flush_san(&mut self) {
        if let Some(san) = self.san.as_mut() {
            let found = std::mem::take(&mut san.found);
            if !found.is_empty() {
                let Some(launch) = self.sh.san else { return };
                let mut log = launch.hazards.lock().unwrap_or_else(|e| e.into_inner());
                log.add(san.linear, found);
            }
        }
    }
}
