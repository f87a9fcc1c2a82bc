//! One CTA: its set-up and the round-robin over its warps.
//!
//! [`run_cta`] runs a CTA to completion on a worker thread, reusing the storage of the
//! worker's previous CTA ([`CtaScratch`]): a warp's register file is built in full once
//! (constants, launch-invariant special registers, the hoisted prelude), then only what a CTA
//! can see is reset. Shared and local memory are zeroed in pieces that check the deadline.
//! [`Cta::run`] gives each warp a slice in turn until all have finished, and reports a
//! deadlock when none can move; [`Cta::flush_budget`] adds the CTA's thread instructions to
//! the launch's counter and checks the budget, the clock and cancellation.

use super::barrier::BarState;
use super::fault::{thread_pos, ExecError, Stuck, ThreadPos};
use super::warp::{warp_ctx, Warp};
use crate::invariant::launch_invariant;
use crate::program::{Env, FaultKind, Op, Program, SregInit, FULL};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Thread instructions a CTA runs between updates of the launch's shared counter (an atomic
/// read-modify-write) and checks of the budget, the clock and cancellation; a CTA also checks
/// when it ends. A runaway warp reaches it within one slice.
pub(super) const FLUSH_EVERY: u64 = 1 << 16;

/// Bytes a CTA's set-up zeroes (shared and local memory) between two checks of the deadline
/// and of cancellation.
pub(super) const ZERO_CHECK_BYTES: usize = 4 << 20;

/// Why a CTA's set-up stopped.
pub(super) enum SetupStop {
    /// An allocation failed.
    NoMemory,
    /// The deadline passed.
    Deadline,
    /// Another CTA failed.
    Cancelled,
}

/// Limits and shared state of one launch.
pub struct LaunchShared<'a> {
    /// The compiled kernel.
    pub prog: &'a Program,
    /// Memory map, parameters, shared memory size, start: what the handlers see.
    pub env: Env<'a>,
    /// Grid size.
    pub grid: [u32; 3],
    /// Block size.
    pub block: [u32; 3],
    /// Dynamic shared bytes.
    pub dyn_shared: u64,
    /// Thread-instruction budget.
    pub max_instructions: u64,
    /// Thread instructions executed so far (flushed per slice).
    pub executed: AtomicU64,
    /// Warp instructions executed so far.
    pub warp_executed: AtomicU64,
    /// Deadline.
    pub deadline: Option<Instant>,
    /// Set when any CTA fails.
    pub cancel: AtomicBool,
    /// Cluster shape in CTAs (`[1, 1, 1]` without clusters).
    pub cluster: [u32; 3],
    /// Whether the launch names a cluster shape (`%is_explicit_cluster`).
    pub explicit_cluster: bool,
    /// Number of emulated SMs (`%nsmid`).
    pub nsm: u32,
    /// Where printf records go (`None`: the kernel has no printf).
    pub printf: Option<&'a dyn crate::fifo::Records>,
    /// Thread instructions a CTA runs between checks of the budget and the clock: at most
    /// [`FLUSH_EVERY`], less for a small budget, so that a budget of a few instructions stops
    /// a launch after its first slice rather than after 64 Ki instructions' worth of CTAs.
    pub flush_every: u64,
    /// Blocks finished.
    pub blocks_done: AtomicU64,
    /// Blocks in the grid.
    pub blocks_total: u64,
    /// Called with the launch's progress when a block finishes and at each check of the
    /// budget (so that it shows life while no block finishes).
    pub progress: Option<&'a (dyn Fn(&crate::launch::Progress) + Sync)>,
    /// The sanitizer state of a checked launch (`None` otherwise: one word here, so that an
    /// unchecked launch's shared state keeps its layout).
    pub san: Option<&'a super::sanit::SanLaunch>,
}

impl LaunchShared<'_> {
    /// The check interval for a budget of `max_instructions`.
    pub fn flush_every(max_instructions: u64) -> u64 {
        (max_instructions / 8).clamp(1, FLUSH_EVERY)
    }

    /// Calls the progress callback, if any, with `executed` thread instructions.
    pub fn report_progress(&self, executed: u64) {
        if let Some(p) = self.progress {
            p(&crate::launch::Progress {
                blocks_done: self.blocks_done.load(Ordering::Relaxed),
                blocks_total: self.blocks_total,
                thread_instructions: executed,
            });
        }
    }

    /// During a CTA's set-up: whether the launch must stop (cancelled, or past its deadline).
    pub(super) fn check_setup(&self) -> Result<(), SetupStop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(SetupStop::Cancelled);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(SetupStop::Deadline);
        }
        self.report_progress(self.executed.load(Ordering::Relaxed));
        Ok(())
    }

    /// The launch's timeout, in seconds.
    pub(super) fn timeout_seconds(&self) -> f64 {
        self.deadline
            .map(|d| d.saturating_duration_since(self.env.start).as_secs_f64())
            .unwrap_or(0.0)
    }
}

/// Makes `buf` `words` zero words long. It is zeroed in pieces, with a check of the deadline
/// and of cancellation each time [`ZERO_CHECK_BYTES`] have been zeroed (counted in `since`,
/// across the calls of one set-up): the memory a CTA zeroes before it starts is the part of
/// its set-up whose cost the program decides (a GiB of shared memory per block…), and the
/// launch's limits bound that too. Small buffers take one `resize`, as before.
pub(super) fn zero_words(
    buf: &mut Vec<u32>,
    words: usize,
    since: &mut usize,
    sh: &LaunchShared<'_>,
) -> Result<(), SetupStop> {
    const PIECE: usize = ZERO_CHECK_BYTES / 4;
    buf.clear();
    buf.try_reserve_exact(words)
        .map_err(|_| SetupStop::NoMemory)?;
    while buf.len() < words {
        let n = (words - buf.len()).min(PIECE);
        buf.resize(buf.len() + n, 0);
        *since += n * 4;
        if *since >= ZERO_CHECK_BYTES {
            *since = 0;
            sh.check_setup()?;
        }
    }
    Ok(())
}

/// Output of one CTA.
#[derive(Default)]
pub struct CtaOutput {
    /// Thread instructions executed.
    pub thread_insts: u64,
    /// Warp instructions executed.
    pub warp_insts: u64,
}

/// Storage of a CTA's warps and shared memory, kept by a worker thread from one CTA to the next
/// so that a grid of many small CTAs does not allocate per CTA. A warp's register file is set
/// up in full (constants, launch-invariant special registers, the hoisted prelude) the first
/// time; after that only [`Program::reset_slots`] and [`Program::reset_preds`] are cleared and
/// the CTA-dependent special registers rewritten, so no value of an earlier CTA can be read.
#[derive(Default)]
pub struct CtaScratch {
    pub(super) warps: Vec<Warp>,
    pub(super) shared: Vec<u32>,
    pub(super) bars: Vec<BarState>,
    /// Thread instructions of this worker's CTAs not yet added to the launch's counter: it
    /// is updated every [`FLUSH_EVERY`] instructions, not once per CTA, since two workers
    /// adding to one counter for every short CTA fight over its cache line.
    pub(super) pending: u64,
}

impl CtaScratch {
    /// Adds what this worker has not yet counted to the launch's counter (when it stops).
    pub fn flush(&mut self, sh: &LaunchShared<'_>) {
        sh.executed
            .fetch_add(std::mem::take(&mut self.pending), Ordering::Relaxed);
    }
}

/// Runs one CTA to completion.
pub fn run_cta(
    sh: &LaunchShared<'_>,
    ctaid: [u32; 3],
    linear: u64,
    scratch: &mut CtaScratch,
) -> Result<CtaOutput, ExecError> {
    let mut cta = Cta::new(sh, ctaid, linear, scratch)?;
    cta.pending_insts = std::mem::take(&mut scratch.pending);
    let r = cta.run();
    cta.flush_san();
    scratch.warps = std::mem::take(&mut cta.warps);
    scratch.shared = std::mem::take(&mut cta.shared);
    scratch.bars = std::mem::take(&mut cta.bars);
    scratch.pending = cta.pending_insts;
    r.map(|()| cta.out)
}

/// A CTA being run.
pub(super) struct Cta<'s, 'a> {
    pub(super) sh: &'s LaunchShared<'a>,
    pub(super) ctaid: [u32; 3],
    pub(super) nthreads: u32,
    pub(super) warps: Vec<Warp>,
    pub(super) shared: Vec<u32>,
    pub(super) bars: Vec<BarState>,
    /// Bit `id`: barrier `id` counts the whole CTA and has arrivals (exits may release it).
    pub(super) armed: u32,
    pub(super) out: CtaOutput,
    pub(super) pending_insts: u64,
    /// Threads that have exited (kept up to date by `exit_lanes`).
    pub(super) exited: u32,
    /// The CTA's place in the printf output: its linear index, or its cluster's index when
    /// the launch runs clusters together.
    pub(super) linear: u64,
    /// Pending asynchronous copies and suspended mbarrier waits.
    pub(super) asy: super::asyncop::AsyncState,
    /// The CTA's part of its cluster (`None` unless the launch runs clusters together).
    pub(super) clu: Option<Box<super::cluster::ClusterPart>>,
    /// Warpgroup arrivals at `wgmma.mma_async` and the results pending per warp.
    pub(super) wg: super::wgmma::WgState,
    /// Sanitizer state (checked launches only).
    pub(super) san: Option<Box<super::sanit::SanCta>>,
}

impl<'s, 'a> Cta<'s, 'a> {
    pub(super) fn new(
        sh: &'s LaunchShared<'a>,
        ctaid: [u32; 3],
        linear: u64,
        scratch: &mut CtaScratch,
    ) -> Result<Self, ExecError> {
        let prog = sh.prog;
        let [bx, by, bz] = sh.block;
        let nthreads = bx * by * bz;
        let nwarps = nthreads.div_ceil(32);
        let shared_size = sh.env.shared_size;
        let kernel = &prog.funcs[0];
        let frame = kernel.frame_size;
        let words = (frame.div_ceil(4)) as usize;
        let mut warps = std::mem::take(&mut scratch.warps);
        warps.truncate(nwarps as usize);
        while warps.len() < nwarps as usize {
            warps.push(Warp::empty());
        }
        let mut fresh_warps: Vec<usize> = Vec::new();
        // bytes zeroed since the last check of the limits (see `zero_words`)
        let mut zeroed = 0usize;
        let setup_error = |stop: SetupStop, what: String| -> ExecError {
            match stop {
                SetupStop::Cancelled => ExecError::Cancelled,
                SetupStop::Deadline => ExecError::Timeout {
                    seconds: sh.timeout_seconds(),
                    at: Some(Box::new(Stuck {
                        block: ctaid,
                        ntid: sh.block,
                        groups: Vec::new(),
                        more_groups: 0,
                        more_threads: 0,
                        exited: 0,
                        setup: Some(format!("zeroing {what}")),
                        other_blocks: 0,
                    })),
                },
                SetupStop::NoMemory => ExecError::Fault {
                    kind: FaultKind::Other(format!("cannot allocate {what}")),
                    pos: ThreadPos {
                        block: ctaid,
                        thread: [0; 3],
                        func: 0,
                        inst: 0,
                    },
                },
            }
        };
        for (w, warp) in warps.iter_mut().enumerate() {
            let w = w as u32;
            let regs = &mut warp.regs;
            let fresh = regs.len() != prog.nslots as usize;
            if fresh {
                fresh_warps.push(w as usize);
                regs.clear();
                regs.resize(prog.nslots as usize, [0u64; 32]);
                for &(s, v) in &prog.consts {
                    regs[s as usize] = [v; 32];
                }
                let preds = &mut warp.preds;
                preds.clear();
                preds.resize(prog.npreds as usize, 0);
                for &(s, v) in &prog.const_preds {
                    preds[s as usize] = v;
                }
            } else {
                for &(a, b) in &prog.reset_slots {
                    regs[a as usize..b as usize].fill([0u64; 32]);
                }
                for &(a, b) in &prog.reset_preds {
                    warp.preds[a as usize..b as usize].fill(0);
                }
            }
            let valid = match nthreads - w * 32 {
                n if n >= 32 => FULL,
                n => (1u32 << n) - 1,
            };
            // thread coordinates of each lane, counted up without a division per lane; they
            // are launch-invariant, so only a fresh warp needs them
            let tids = || {
                let mut tids = [[0u32; 3]; 32];
                let first = w * 32;
                let mut tid = [first % bx, (first / bx) % by, first / (bx * by)];
                for t in tids.iter_mut() {
                    *t = tid;
                    tid[0] += 1;
                    if tid[0] == bx {
                        tid[0] = 0;
                        tid[1] += 1;
                        if tid[1] == by {
                            tid[1] = 0;
                            tid[2] += 1;
                        }
                    }
                }
                tids
            };
            for &(s, init) in &prog.sreg_slots {
                if !fresh && launch_invariant(init) {
                    continue;
                }
                let r = &mut regs[s as usize];
                let uniform = |v: u64| [v; 32];
                let per_lane = |f: &dyn Fn(usize) -> u64| std::array::from_fn(f);
                *r = match init {
                    // the fourth component (`.w`) of the vector registers reads 0
                    SregInit::Tid(c) if c < 3 => {
                        let tids = tids();
                        per_lane(&|l| tids[l][c as usize] as u64)
                    }
                    SregInit::Tid(_) => uniform(0),
                    SregInit::Ntid(c) => uniform(sh.block.get(c as usize).map_or(0, |&v| v as u64)),
                    SregInit::Ctaid(c) => uniform(ctaid.get(c as usize).map_or(0, |&v| v as u64)),
                    SregInit::Nctaid(c) => {
                        uniform(sh.grid.get(c as usize).map_or(0, |&v| v as u64))
                    }
                    SregInit::Laneid => per_lane(&|l| l as u64),
                    SregInit::Warpid => uniform(w as u64),
                    SregInit::Nwarpid => uniform(nwarps as u64),
                    SregInit::LanemaskEq => per_lane(&|l| 1u64 << l),
                    SregInit::LanemaskLt => per_lane(&|l| (1u64 << l) - 1),
                    SregInit::LanemaskLe => per_lane(&|l| ((1u64 << (l + 1)) - 1) & 0xFFFF_FFFF),
                    SregInit::LanemaskGt => per_lane(&|l| (!((1u64 << (l + 1)) - 1)) & 0xFFFF_FFFF),
                    SregInit::LanemaskGe => per_lane(&|l| (!((1u64 << l) - 1)) & 0xFFFF_FFFF),
                    SregInit::Smid => uniform(linear % sh.nsm as u64),
                    SregInit::Nsmid => uniform(sh.nsm as u64),
                    SregInit::Gridid => uniform(1),
                    SregInit::DynSmem => uniform(sh.dyn_shared),
                    // "in multiples of the shared memory allocation unit": 128 bytes
                    SregInit::TotalSmem => uniform(shared_size.div_ceil(128) * 128),
                    SregInit::Zero => uniform(0),
                    SregInit::One => uniform(1),
                    SregInit::ClusterId(c) => uniform(match c {
                        0..3 => (ctaid[c as usize] / sh.cluster[c as usize]) as u64,
                        _ => 0,
                    }),
                    SregInit::NClusterId(c) => uniform(match c {
                        0..3 => (sh.grid[c as usize] / sh.cluster[c as usize]) as u64,
                        _ => 0,
                    }),
                    SregInit::ClusterCtaid(c) => uniform(match c {
                        0..3 => (ctaid[c as usize] % sh.cluster[c as usize]) as u64,
                        _ => 0,
                    }),
                    SregInit::ClusterNctaid(c) => {
                        uniform(sh.cluster.get(c as usize).map_or(0, |&v| v as u64))
                    }
                    SregInit::ClusterCtarank => {
                        let [cx, cy, _] = sh.cluster;
                        let r = |d: usize| ctaid[d] % sh.cluster[d];
                        uniform((r(0) + r(1) * cx + r(2) * cx * cy) as u64)
                    }
                    SregInit::ClusterNctarank => {
                        uniform(sh.cluster.iter().map(|&v| v as u64).product())
                    }
                    SregInit::IsExplicitCluster => uniform(sh.explicit_cluster as u64),
                };
            }
            // only calls change the frame pointer and the function of a lane
            let calls = prog.funcs.len() > 1;
            if fresh || calls {
                regs[prog.fp_slot as usize] = [0; 32];
                warp.func = [0; 32];
            }
            warp.pcs = [kernel.entry; 32];
            warp.ready = valid;
            warp.exited = !valid;
            warp.parked = 0;
            // (`bar_pc` is read only for lanes waiting at a barrier, which set it on arrival)
            warp.barrier = 0;
            // call stacks are empty after a CTA that ended normally, and a frame of 0 bytes
            // has nothing to zero
            if fresh {
                warp.stacks.resize_with(32, Vec::new);
                warp.saves.resize_with(32, Vec::new);
                warp.local.resize_with(32, Default::default);
            }
            if calls {
                for s in &mut warp.stacks {
                    s.clear();
                }
                for s in &mut warp.saves {
                    s.clear();
                }
                warp.booked = [0; 32];
            }
            // local memory is stored only as far as a thread writes it (`LocalMem`): starting a
            // block costs nothing per byte of `.local` it declares. A kernel with no frame, no
            // calls and no `alloca` never has local memory to clear.
            if fresh || words > 0 || calls || prog.alloca {
                for l in &mut warp.local {
                    l.reset(words);
                }
            }
            warp.sp = [frame; 32];
            // the whole warp starts at the entry: the group `pick` would choose
            warp.cur = (valid != 0).then_some((kernel.entry, valid));
            warp.others_min = u32::MAX;
            warp.run_len = 0;
            warp.force_sync = false;
        }
        let shared_words = shared_size.div_ceil(4) as usize;
        let mut shared = std::mem::take(&mut scratch.shared);
        zero_words(&mut shared, shared_words, &mut zeroed, sh)
            .map_err(|e| setup_error(e, format!("{shared_size} bytes of shared memory")))?;
        // values fixed for the launch, computed once per warp (see `invariant`)
        for w in fresh_warps {
            let warp = &mut warps[w];
            let m = warp.ready;
            for insn in &prog.prelude {
                let r = match insn.op {
                    Op::Alu(f) => {
                        f(&mut warp.regs, &mut warp.preds, insn, m);
                        Ok(())
                    }
                    Op::Mem(f) => f(&mut warp_ctx(warp, &mut shared, sh), insn, m),
                    _ => Ok(()),
                };
                if let Err(e) = r {
                    let lane = e.lane.unwrap_or(0).min(31) as usize;
                    return Err(ExecError::Fault {
                        kind: e.kind,
                        pos: thread_pos(sh.block, ctaid, w, lane, insn),
                    });
                }
            }
        }
        // barrier state, reused with the capacity of its lists; a released barrier is already
        // in its initial state (the rest of it is set by the first arrival)
        let mut bars = std::mem::take(&mut scratch.bars);
        bars.resize_with(16, BarState::default);
        for b in &mut bars {
            if b.arrived != 0 || !b.waiting.is_empty() || !b.red_dest.is_empty() {
                b.reset();
            }
        }
        Ok(Cta {
            sh,
            ctaid,
            nthreads,
            warps,
            shared,
            bars,
            armed: 0,
            out: CtaOutput::default(),
            pending_insts: 0,
            exited: 0,
            linear,
            asy: Default::default(),
            clu: None,
            wg: Default::default(),
            san: sh.san.map(|s| {
                Box::new(super::sanit::SanCta::new(
                    s.checks,
                    s.init_shared,
                    shared_size,
                    linear,
                ))
            }),
        })
    }

    pub(super) fn run(&mut self) -> Result<(), ExecError> {
        loop {
            match self.round()? {
                super::cluster::Round::Done => return Ok(()),
                super::cluster::Round::Moved => {}
                super::cluster::Round::Stuck => return Err(self.deadlock()),
            }
        }
    }

    pub(super) fn flush_budget(&mut self) -> Result<(), ExecError> {
        let sh = self.sh;
        if sh.cancel.load(Ordering::Relaxed) {
            return Err(ExecError::Cancelled);
        }
        let n = std::mem::take(&mut self.pending_insts);
        let total = sh.executed.fetch_add(n, Ordering::Relaxed) + n;
        if total > sh.max_instructions {
            return Err(ExecError::Budget {
                limit: sh.max_instructions,
                at: Some(Box::new(self.stuck())),
            });
        }
        if let Some(d) = sh.deadline {
            if Instant::now() >= d {
                return Err(ExecError::Timeout {
                    seconds: sh.timeout_seconds(),
                    at: Some(Box::new(self.stuck())),
                });
            }
        }
        sh.report_progress(total);
        Ok(())
    }
}
