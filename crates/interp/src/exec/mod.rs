//! The SIMT executor: warps, reconvergence, calls, barriers, and the CTA scheduler.
//!
//! Each lane of a warp has its own program counter. The warp runs one *group* at a time: the
//! lanes that share the lowest program counter. Structured code (everything nvcc, clang, Triton
//! and Numba emit is laid out with a branch's join point after both arms) therefore reconverges
//! at the immediate post-dominator: the arm with the lower address runs first, reaches the join
//! point, and waits there, because the other arm's lanes now have the lower counter; when they
//! arrive the group is whole again. A group that keeps the warp for [`STARVE_LIMIT`] steps while
//! other lanes wait is preempted in favour of the next group by address, so a lane spinning on a
//! lock held by another lane of its own warp lets the holder run (independent thread
//! scheduling, sm_70+).
//!
//! Warp-synchronous instructions wait until every lane of their member mask that has not exited
//! is in the group. Barriers count threads (`bar.sync a, b`: `b` threads, or the whole CTA);
//! when every warp of a CTA is blocked and no barrier can complete, the launch stops with a
//! deadlock report naming who waits where and how many threads exited. Exited threads are
//! never expected at a barrier, aligned or not (since Volta, `bar.sync` waits for the threads
//! of the block that have not exited): an early return that splits a warp is not divergence.
//! When the launch's instruction budget or deadline passes, the CTA that notices it reports
//! where its threads are and what they are doing ([`Stuck`]); its set-up (zeroing shared and
//! local memory) checks the deadline too.

pub mod fifo;
pub mod launch;

use crate::invariant::launch_invariant;
use crate::program::{
    for_lanes, lane_bits, BarKind, CallOperand, CallTarget, Ctx, Env, Fault, FaultKind, Insn,
    Lanes, Op, Program, RedOp, SregInit, FULL, LANE_BIT, NO_PRED,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Steps a group may run while other lanes of its warp wait before it is preempted.
pub const STARVE_LIMIT: u32 = 4096;
/// Warp steps per scheduling slice (also how often budgets are checked).
const SLICE: u32 = 16384;
/// Thread instructions a CTA runs between updates of the launch's shared counter (an atomic
/// read-modify-write) and checks of the budget, the clock and cancellation; a CTA also checks
/// when it ends. A runaway warp reaches it within one slice.
const FLUSH_EVERY: u64 = 1 << 16;
/// Local memory a thread can have by default (bytes): what an sm_90 GPU allows per thread. A
/// kernel whose `.local` variables need more is refused at launch unless the stack size is
/// raised to cover them.
pub const LOCAL_MAX: u64 = 512 << 10;
/// The default per-thread stack (bytes), as `cudaLimitStackSize` sets it on a GPU: the bound on
/// the local memory a thread's calls and `alloca` can use when it is not known before the
/// launch (recursion, indirect calls, `alloca`); the launch raises it to what the kernel's own
/// `.local` frame and its call tree need. CUDA's default is 1 KiB, but a ptxvm frame also holds
/// the registers a recursive call saves (8 bytes each), so the default is larger.
pub const DEFAULT_STACK_SIZE: u64 = 64 << 10;
/// Bookkeeping bytes every call counts against the thread's stack (return address, saved frame
/// pointer), besides the callee's frame and, for a recursive callee, 8 bytes per register and
/// predicate it saves: every call costs stack, so call depth and the host memory of call
/// frames are bounded by the stack size. (They are counted, not laid out in local memory: a
/// frame's local addresses follow the caller's.)
pub const CALL_OVERHEAD: u64 = 32;

/// The stack bytes a call to `callee` counts besides its frame ([`CALL_OVERHEAD`]).
fn call_cost(callee: &crate::program::FuncInfo) -> u64 {
    let saved = if callee.recursive {
        8 * ((callee.slots.1 - callee.slots.0) + (callee.pred_slots.1 - callee.pred_slots.0)) as u64
    } else {
        0
    };
    CALL_OVERHEAD + saved
}

/// Where a thread is and what stopped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPos {
    /// `%ctaid`.
    pub block: [u32; 3],
    /// `%tid`.
    pub thread: [u32; 3],
    /// IR function index.
    pub func: u32,
    /// Instruction index in the function.
    pub inst: u32,
}

/// Why a launch stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecError {
    /// A lane faulted.
    Fault {
        /// What.
        kind: FaultKind,
        /// Where.
        pos: ThreadPos,
    },
    /// `trap`.
    Trap(ThreadPos),
    /// `__assertfail`.
    Assert {
        /// Message, file, line, function.
        message: String,
        /// Where.
        pos: ThreadPos,
    },
    /// A barrier that can never complete.
    Deadlock {
        /// `%ctaid` of the block.
        block: [u32; 3],
        /// Who waits where: (threads waiting, threads expected, barrier id, function, inst).
        waits: Vec<(u32, u32, u32, u32, u32)>,
        /// Threads of the block.
        threads: u32,
        /// Exited threads.
        exited: u32,
        /// Threads parked at warp-synchronous instructions.
        other: String,
    },
    /// An aligned barrier executed by part of a warp.
    DivergentBarrier {
        /// Where.
        pos: ThreadPos,
        /// Lanes that arrived.
        arrived: u32,
        /// Lanes expected.
        expected: u32,
    },
    /// Instruction budget exhausted.
    Budget {
        /// The budget, in thread instructions.
        limit: u64,
        /// Where the block that ran out of it was (`None`: the grid had finished).
        at: Option<Box<Stuck>>,
    },
    /// Wall-clock limit.
    Timeout {
        /// The limit, in seconds.
        seconds: f64,
        /// Where the block that noticed it was.
        at: Option<Box<Stuck>>,
    },
    /// Valid but unsupported instruction.
    Unsupported {
        /// Message.
        message: String,
        /// Where.
        pos: ThreadPos,
    },
    /// Stopped because another CTA failed.
    Cancelled,
}

/// What a group of threads was doing when a launch stopped on its budget or deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StuckState {
    /// Ready to run the instruction (running, or waiting for its turn in its warp).
    Running,
    /// Waiting at a barrier.
    Barrier {
        /// Barrier id.
        id: u32,
        /// Threads arrived.
        arrived: u32,
        /// Threads the barrier waits for.
        expected: u32,
        /// A barrier for the whole CTA, which exited threads release.
        all: bool,
    },
    /// Waiting at a warp-synchronous instruction for other lanes of its warp.
    WarpSync,
}

/// Threads of one block in the same state at the same instruction: the lanes of one warp, or
/// of consecutive warps (threads numbered linearly in the block, x fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckGroup {
    /// First thread.
    pub first: u32,
    /// Last thread.
    pub last: u32,
    /// Threads in the group (fewer than `last - first + 1` when the lanes are not contiguous).
    pub count: u32,
    /// IR function index of the instruction.
    pub func: u32,
    /// Instruction index in the function.
    pub inst: u32,
    /// What the threads were doing there.
    pub state: StuckState,
}

/// Where a block was when the launch stopped on its instruction budget or deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// `%ctaid` of the block.
    pub block: [u32; 3],
    /// Block size (`%ntid`), to turn thread numbers into coordinates.
    pub ntid: [u32; 3],
    /// Threads that had not finished, by state and instruction (the first [`STUCK_GROUPS`]).
    pub groups: Vec<StuckGroup>,
    /// Groups left out.
    pub more_groups: u32,
    /// Threads in the groups left out.
    pub more_threads: u32,
    /// Threads of the block that had exited.
    pub exited: u32,
    /// What the block's set-up was doing, when the limit passed before its threads started.
    pub setup: Option<String>,
    /// Other blocks that were running (on other OS threads) and were stopped.
    pub other_blocks: u64,
}

/// Groups a [`Stuck`] report lists.
pub const STUCK_GROUPS: usize = 8;

/// Bytes a CTA's set-up zeroes (shared and local memory) between two checks of the deadline
/// and of cancellation.
const ZERO_CHECK_BYTES: usize = 4 << 20;

/// Why a CTA's set-up stopped.
enum SetupStop {
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
    fn check_setup(&self) -> Result<(), SetupStop> {
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
    fn timeout_seconds(&self) -> f64 {
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
fn zero_words(
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

#[derive(Clone, Debug)]
struct Frame {
    ret_pc: u32,
    fp: u64,
    sp: u64,
    call: u32,
    callee: u32,
    caller: u32,
}

struct Warp {
    regs: Vec<Lanes>,
    preds: Vec<u32>,
    pcs: [u32; 32],
    ready: u32,
    exited: u32,
    parked: u32,
    barrier: u32,
    bar_pc: [u32; 32],
    stacks: Vec<Vec<Frame>>,
    /// Per lane, the registers and predicates (one word each) of the recursive calls in
    /// progress, saved at the call and restored at its return, in call order.
    saves: Vec<Vec<u64>>,
    /// Per lane, the stack bytes its calls in progress count besides their frames
    /// ([`call_cost`]).
    booked: [u64; 32],
    local: Vec<crate::mem::LocalMem>,
    sp: [u64; 32],
    /// Function (index in `Program::funcs`) each lane is executing.
    func: [u32; 32],
    cur: Option<(u32, u32)>,
    others_min: u32,
    run_len: u32,
    force_sync: bool,
}

impl Warp {
    fn empty() -> Warp {
        Warp {
            regs: Vec::new(),
            preds: Vec::new(),
            pcs: [0; 32],
            ready: 0,
            exited: 0,
            parked: 0,
            barrier: 0,
            bar_pc: [0; 32],
            stacks: Vec::new(),
            saves: Vec::new(),
            booked: [0; 32],
            local: Vec::new(),
            sp: [0; 32],
            func: [0; 32],
            cur: None,
            others_min: u32::MAX,
            run_len: 0,
            force_sync: false,
        }
    }
}

#[derive(Clone, Default)]
struct BarState {
    arrived: u32,
    expected: u32,
    /// Counts every thread of the CTA (no explicit count): exited threads release it.
    all: bool,
    red_op: Option<RedOp>,
    waiting: Vec<(usize, u32)>,
    pc: u32,
    red_popc: u32,
    red_and: bool,
    red_or: bool,
    red_dest: Vec<(usize, u32, u32)>,
}

impl BarState {
    /// The state of a barrier nobody has arrived at; the lists keep their capacity.
    fn reset(&mut self) {
        let (mut waiting, mut red_dest) = (
            std::mem::take(&mut self.waiting),
            std::mem::take(&mut self.red_dest),
        );
        waiting.clear();
        red_dest.clear();
        *self = BarState {
            waiting,
            red_dest,
            ..BarState::default()
        };
    }
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
    warps: Vec<Warp>,
    shared: Vec<u32>,
    bars: Vec<BarState>,
    /// Thread instructions of this worker's CTAs not yet added to the launch's counter: it
    /// is updated every [`FLUSH_EVERY`] instructions, not once per CTA, since two workers
    /// adding to one counter for every short CTA fight over its cache line.
    pending: u64,
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
    scratch.warps = std::mem::take(&mut cta.warps);
    scratch.shared = std::mem::take(&mut cta.shared);
    scratch.bars = std::mem::take(&mut cta.bars);
    scratch.pending = cta.pending_insts;
    r.map(|()| cta.out)
}

struct Cta<'s, 'a> {
    sh: &'s LaunchShared<'a>,
    ctaid: [u32; 3],
    nthreads: u32,
    warps: Vec<Warp>,
    shared: Vec<u32>,
    bars: Vec<BarState>,
    /// Bit `id`: barrier `id` counts the whole CTA and has arrivals (exits may release it).
    armed: u32,
    out: CtaOutput,
    pending_insts: u64,
    /// Threads that have exited (kept up to date by `exit_lanes`).
    exited: u32,
    /// The CTA's linear index (its place in the printf output).
    linear: u64,
}

/// Where lane `lane` of warp `w` of CTA `ctaid` (blocks of shape `block`) is, at `insn`.
fn thread_pos(block: [u32; 3], ctaid: [u32; 3], w: usize, lane: usize, insn: &Insn) -> ThreadPos {
    let [bx, by, _] = block;
    let t = w as u32 * 32 + lane as u32;
    ThreadPos {
        block: ctaid,
        thread: [t % bx, (t / bx) % by, t / (bx * by)],
        func: insn.func,
        inst: insn.inst,
    }
}

/// The lanes whose guard predicate lets `insn` run (all of them for an unguarded one).
#[inline(always)]
fn guard_lanes(preds: &[u32], insn: &Insn) -> u32 {
    if insn.guard == NO_PRED {
        u32::MAX
    } else {
        let p = preds[insn.guard as usize];
        if insn.neg {
            !p
        } else {
            p
        }
    }
}

impl<'s, 'a> Cta<'s, 'a> {
    fn new(
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
        })
    }

    fn pos(&self, w: usize, lane: usize, insn: &Insn) -> ThreadPos {
        thread_pos(self.sh.block, self.ctaid, w, lane, insn)
    }

    fn run(&mut self) -> Result<(), ExecError> {
        loop {
            let mut progress = false;
            let mut all_done = true;
            for w in 0..self.warps.len() {
                if self.warps[w].ready != 0 || self.warps[w].parked != 0 {
                    all_done = false;
                }
                if self.warps[w].ready == 0 && self.warps[w].parked == 0 {
                    continue;
                }
                if self.run_warp(w)? {
                    progress = true;
                }
                if self.pending_insts >= self.sh.flush_every {
                    self.flush_budget()?;
                }
            }
            if all_done {
                let waiting: u32 = self.warps.iter().map(|w| w.barrier.count_ones()).sum();
                if waiting == 0 {
                    // the rest is counted with the worker's next CTAs, or when it stops
                    if self.pending_insts >= self.sh.flush_every {
                        self.flush_budget()?;
                    }
                    return Ok(());
                }
                return Err(self.deadlock());
            }
            if !progress {
                return Err(self.deadlock());
            }
        }
    }

    fn flush_budget(&mut self) -> Result<(), ExecError> {
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

    /// Where the threads of this CTA that have not finished are, and what they are doing:
    /// groups of threads in one state at one instruction, by warp and lane (the lanes of
    /// consecutive warps in the same state at the same instruction make one group).
    #[cold]
    fn stuck(&self) -> Stuck {
        let mut st = Stuck {
            block: self.ctaid,
            ntid: self.sh.block,
            groups: Vec::new(),
            more_groups: 0,
            more_threads: 0,
            exited: self.exited,
            setup: None,
            other_blocks: 0,
        };
        for (wi, w) in self.warps.iter().enumerate() {
            // the running group's pc is in `cur`, not yet in `pcs`
            let mut pcs = w.pcs;
            if let Some((pc, m)) = w.cur {
                for l in lane_bits(m) {
                    pcs[l] = pc;
                }
            }
            // each lane's state and pc
            let at = |l: usize| -> (u8, u32) {
                let bit = 1u32 << l;
                if w.barrier & bit != 0 {
                    (1, w.bar_pc[l])
                } else if w.parked & bit != 0 {
                    (2, pcs[l])
                } else {
                    (0, pcs[l])
                }
            };
            let mut left = w.ready | w.parked | w.barrier;
            while left != 0 {
                let l0 = left.trailing_zeros() as usize;
                let key = at(l0);
                let mut lanes = 0u32;
                for l in lane_bits(left) {
                    if at(l) == key {
                        lanes |= 1 << l;
                    }
                }
                left &= !lanes;
                let (kind, pc) = key;
                let Some(insn) = self.sh.prog.code.get(pc as usize) else {
                    continue;
                };
                let state = match kind {
                    1 => self
                        .bars
                        .iter()
                        .enumerate()
                        .find(|(_, b)| b.waiting.iter().any(|&(x, m)| x == wi && m & lanes != 0))
                        .map_or(StuckState::Running, |(id, b)| StuckState::Barrier {
                            id: id as u32,
                            arrived: b.arrived,
                            expected: b.expected,
                            all: b.all,
                        }),
                    2 => StuckState::WarpSync,
                    _ => StuckState::Running,
                };
                let base = wi as u32 * 32;
                let g = StuckGroup {
                    first: base + lanes.trailing_zeros(),
                    last: base + 31 - lanes.leading_zeros(),
                    count: lanes.count_ones(),
                    func: insn.func,
                    inst: insn.inst,
                    state,
                };
                let contiguous = |g: &StuckGroup| g.count == g.last - g.first + 1;
                match st.groups.last_mut() {
                    Some(p)
                        if (p.func, p.inst, &p.state) == (g.func, g.inst, &g.state)
                            && contiguous(p)
                            && contiguous(&g)
                            && g.first == p.last + 1 =>
                    {
                        p.last = g.last;
                        p.count += g.count;
                    }
                    _ => st.groups.push(g),
                }
            }
        }
        if st.groups.len() > STUCK_GROUPS {
            let rest = st.groups.split_off(STUCK_GROUPS);
            st.more_groups = rest.len() as u32;
            st.more_threads = rest.iter().map(|g| g.count).sum();
        }
        st
    }

    fn deadlock(&self) -> ExecError {
        let mut waits: Vec<(u32, u32, u32, u32, u32)> = Vec::new();
        for (id, b) in self.bars.iter().enumerate() {
            let n: u32 = b.waiting.iter().map(|(_, m)| m.count_ones()).sum();
            if n > 0 {
                let insn = &self.sh.prog.code[b.pc as usize];
                waits.push((n, b.expected, id as u32, insn.func, insn.inst));
            }
        }
        let exited = self.exited_threads();
        let parked: u32 = self.warps.iter().map(|w| w.parked.count_ones()).sum();
        ExecError::Deadlock {
            block: self.ctaid,
            waits,
            threads: self.nthreads,
            exited,
            other: if parked > 0 {
                format!("{parked} threads wait at warp-synchronous instructions")
            } else {
                String::new()
            },
        }
    }

    /// Picks the group with the lowest pc among ready lanes. The loops run over all 32 lanes
    /// without branches and compare as `i32` (a pc is below 2^31), so that even baseline
    /// x86-64 (SSE2) code does them four lanes at a time.
    fn pick(w: &mut Warp) {
        if w.ready == 0 {
            w.cur = None;
            return;
        }
        let ready = w.ready;
        let pcs: [i32; 32] = std::array::from_fn(|l| {
            if ready & LANE_BIT[l] != 0 {
                w.pcs[l] as i32
            } else {
                i32::MAX
            }
        });
        let min = pcs.iter().fold(i32::MAX, |a, &b| a.min(b));
        let mut mask = 0;
        let mut others = i32::MAX;
        for l in 0..32 {
            let at = pcs[l] == min;
            mask |= if at { LANE_BIT[l] } else { 0 };
            others = others.min(if at { i32::MAX } else { pcs[l] });
        }
        w.cur = Some((min as u32, mask));
        w.others_min = others as u32;
        w.run_len = 0;
    }

    /// Preempts a starving warp: the next group by address after `pc` runs.
    fn pick_after(w: &mut Warp, pc: u32) {
        let mut best = u32::MAX;
        for l in lane_bits(w.ready) {
            if w.pcs[l] > pc {
                best = best.min(w.pcs[l]);
            }
        }
        if best == u32::MAX {
            Self::pick(w);
            return;
        }
        let mut mask = 0;
        for l in lane_bits(w.ready) {
            if w.pcs[l] == best {
                mask |= 1 << l;
            }
        }
        w.cur = Some((best, mask));
        // run it for a while regardless of lower groups
        w.others_min = u32::MAX;
        w.run_len = 0;
    }

    /// Sets the pc of the lanes of `mask` (a branch-free blend over all 32 lanes: vector
    /// stores, which the vector loads of `pick` can read without waiting).
    fn save(w: &mut Warp, pc: u32, mask: u32) {
        for (l, p) in w.pcs.iter_mut().enumerate() {
            *p = if mask & LANE_BIT[l] != 0 { pc } else { *p };
        }
    }

    /// Runs warp `wi` for one slice. Returns whether it made progress.
    ///
    /// One dispatch loop runs every instruction. The group's pc and mask stay in locals while
    /// it runs computation, memory accesses and branches that the whole group takes (or none
    /// of it), no-ops stepped over with [`Insn::skip`]. An instruction that may change the
    /// group (a branch that splits it, a warp-synchronous instruction with lanes to wait for
    /// or merge, `brx.idx`, calls, returns, barriers, `exit`, `trap`) ends the run:
    /// [`Self::control`] executes it and sets the warp's next group. A run also ends at a
    /// reconvergence point (the lowest pc of the other groups, `others_min`), at the end of
    /// the slice, and when a starving group has used its [`STARVE_LIMIT`] steps (it runs one
    /// more instruction, then yields).
    fn run_warp(&mut self, wi: usize) -> Result<bool, ExecError> {
        let prog = self.sh.prog;
        let code = &prog.code[..];
        let mut steps = 0u32;
        // converted instructions no lane ran (`ifconv`): not counted as warp instructions
        let mut warp_steps_skipped = 0u32;
        let mut thread_insts = 0u64;
        let mut progress = false;
        // Unpark lanes whose partners can no longer arrive: they run the warp-synchronous
        // instruction with the lanes that are there.
        {
            let w = &mut self.warps[wi];
            if w.ready == 0 && w.parked != 0 {
                w.ready |= w.parked;
                w.parked = 0;
                w.cur = None;
                w.force_sync = true;
            }
        }
        loop {
            let w = &mut self.warps[wi];
            let (mut pc, mask) = match w.cur {
                Some(c) => c,
                None => {
                    Self::pick(w);
                    match w.cur {
                        Some(c) => c,
                        None => break,
                    }
                }
            };
            if pc >= w.others_min || (w.others_min != u32::MAX && w.run_len > STARVE_LIMIT) {
                Self::save(w, pc, mask);
                if pc < w.others_min {
                    Self::pick_after(w, pc);
                } else {
                    Self::pick(w);
                }
                continue;
            }
            if steps >= SLICE {
                Self::save(w, pc, mask);
                w.cur = None;
                break;
            }
            let limit = w.others_min;
            // dispatches this run may make: at least one (a group at its starvation limit runs
            // one more instruction before it yields)
            let budget = if limit == u32::MAX {
                SLICE - steps
            } else {
                (SLICE - steps)
                    .min(STARVE_LIMIT.saturating_sub(w.run_len))
                    .max(1)
            };
            // dispatches, and instructions run (no-ops stepped over included); thread
            // instructions of those that lanes skipped (if-converted ones)
            let (mut n, mut count, mut short) = (0u32, 0u32, 0u32);
            // set when the run stops at an instruction for `control`
            let mut other = false;
            // `code.len()` bounds the loop too, so that indexing it needs no check
            let limit = limit.min(code.len() as u32);
            while n < budget && pc < limit {
                let insn = &code[pc as usize];
                let m = mask & guard_lanes(&w.preds, insn);
                // an instruction guarded by if-conversion that some lanes skip counts for
                // the lanes that run it only (a warp instruction if any does), and the
                // no-ops after it are not stepped over (they count for some lanes each)
                if insn.converted && m != mask {
                    match insn.op {
                        Op::Alu(f) if m != 0 => f(&mut w.regs, &mut w.preds, insn, m),
                        Op::Mem(f) if m != 0 => {
                            let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                            if let Err(e) = f(&mut ctx, insn, m) {
                                self.warps[wi].cur = Some((pc, mask));
                                return Err(self.fault(wi, insn, e, m));
                            }
                        }
                        Op::Alu(_) | Op::Mem(_) | Op::Nop => {}
                        _ => {
                            other = true;
                            break;
                        }
                    }
                    short += (mask & !m).count_ones();
                    warp_steps_skipped += (m == 0) as u32;
                    n += 1;
                    count += 1;
                    pc += 1;
                    continue;
                }
                // whether the group falls through (over the no-ops after the instruction)
                let fall = match insn.op {
                    Op::Alu(f) => {
                        if m != 0 {
                            f(&mut w.regs, &mut w.preds, insn, m);
                        }
                        true
                    }
                    // memory, and a warp-synchronous instruction whose members are all in
                    // the group (nobody parked, no forced run: nothing to wait for or merge)
                    Op::Mem(f) | Op::WarpSync(f) => {
                        if let Op::WarpSync(_) = insn.op {
                            if w.parked != 0 || w.force_sync {
                                other = true;
                                break;
                            }
                            let member = if insn.b == u32::MAX {
                                FULL
                            } else {
                                let l = m.trailing_zeros().min(31) as usize;
                                w.regs[insn.b as usize][l] as u32
                            };
                            if member & !w.exited & !mask != 0 {
                                other = true;
                                break;
                            }
                        }
                        if m != 0 {
                            let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                            if let Err(e) = f(&mut ctx, insn, m) {
                                self.warps[wi].cur = Some((pc, mask));
                                return Err(self.fault(wi, insn, e, m));
                            }
                        }
                        true
                    }
                    Op::Nop => true,
                    Op::Bra(t) if m == mask => {
                        pc = t;
                        false
                    }
                    Op::Bra(_) if m == 0 => true,
                    _ => {
                        other = true;
                        break;
                    }
                };
                n += 1;
                count += 1;
                if fall {
                    pc += 1 + insn.skip as u32;
                    count += insn.skip as u32;
                }
            }
            steps += count;
            w.run_len = w.run_len.saturating_add(n);
            thread_insts += (count * mask.count_ones() - short) as u64;
            w.cur = Some((pc, mask));
            if n > 0 {
                progress = true;
            }
            // a run that stopped at its budget or limit, or at an instruction for `control`
            // once the slice is used up (no-ops stepped over may pass its end): the next
            // round picks, preempts or ends the slice
            if !other && n > 0 || other && steps >= SLICE {
                continue;
            }
            // (lowering ends every function with an instruction that does not fall through,
            // so a pc is always inside the code; should that ever fail, the launch stops with
            // an error instead of a panic)
            let Some(insn) = code.get(pc as usize) else {
                self.warps[wi].cur = None;
                return Err(self.past_end(wi, mask));
            };
            let m = mask & guard_lanes(&w.preds, insn);
            steps += 1;
            w.run_len = w.run_len.saturating_add(1);
            progress = true;
            thread_insts += if insn.converted {
                warp_steps_skipped += (m == 0) as u32;
                m.count_ones() as u64
            } else {
                mask.count_ones() as u64
            };
            self.control(wi, pc, mask, m)?;
        }
        self.pending_insts += thread_insts;
        self.out.thread_insts += thread_insts;
        self.out.warp_insts += (steps - warp_steps_skipped) as u64;
        Ok(progress)
    }

    /// Executes the instruction at `pc` for the group `mask` of warp `wi` (`m`: the lanes whose
    /// guard holds) where the run of [`Self::run_warp`] stopped: an instruction that may change
    /// the group. Sets the warp's next group (`cur`, or `None` to pick one).
    fn control(&mut self, wi: usize, pc: u32, mask: u32, m: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let w = &mut self.warps[wi];
        match insn.op {
            // (never sent here: the run executes these itself; the same for completeness)
            Op::Alu(f) => {
                if m != 0 {
                    f(&mut w.regs, &mut w.preds, insn, m);
                }
                w.cur = Some((pc + 1, mask));
            }
            Op::Mem(f) => {
                if m != 0 {
                    let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                    if let Err(e) = f(&mut ctx, insn, m) {
                        return Err(self.fault(wi, insn, e, m));
                    }
                }
                self.warps[wi].cur = Some((pc + 1, mask));
            }
            Op::Nop => w.cur = Some((pc + 1, mask)),
            Op::WarpSync(f) => {
                let member = if insn.b == u32::MAX {
                    FULL
                } else {
                    w.regs[insn.b as usize][m.trailing_zeros().min(31) as usize] as u32
                };
                let need = member & !w.exited;
                // merge lanes parked at this instruction
                let mut group = mask;
                for l in lane_bits(w.parked) {
                    if w.pcs[l] == pc {
                        group |= 1 << l;
                    }
                }
                let forced = std::mem::take(&mut w.force_sync);
                if need & !group & !w.parked != 0 && !forced && m != 0 {
                    // wait for the missing lanes
                    w.parked |= mask;
                    w.ready &= !mask;
                    Self::save(w, pc, mask);
                    w.cur = None;
                    return Ok(());
                }
                w.parked &= !group;
                w.ready |= group;
                // merged lanes take part only where the guard holds for them too
                let guard = guard_lanes(&w.preds, insn);
                let m = m | (group & !mask & guard);
                if m != 0 {
                    let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                    if let Err(e) = f(&mut ctx, insn, m) {
                        return Err(self.fault(wi, insn, e, m));
                    }
                }
                let w = &mut self.warps[wi];
                w.cur = Some((pc + 1, group));
                Self::pick_keep(w);
            }
            Op::Bra(t) => {
                if m == mask {
                    w.cur = Some((t, mask));
                } else if m == 0 {
                    w.cur = Some((pc + 1, mask));
                } else {
                    Self::save(w, t, m);
                    Self::save(w, pc + 1, mask & !m);
                    // the two halves and the groups already waiting (whose lowest pc is
                    // `others_min`, exact unless a preempting group runs): the lower half
                    // runs next when no waiting group is at or below it
                    let (lo, lo_mask, hi) = if t < pc + 1 {
                        (t, m, pc + 1)
                    } else {
                        (pc + 1, mask & !m, t)
                    };
                    let exact = w.others_min != u32::MAX || w.ready & !mask == 0;
                    w.cur = if exact && lo < w.others_min {
                        w.others_min = w.others_min.min(hi);
                        w.run_len = 0;
                        Some((lo, lo_mask))
                    } else {
                        None
                    };
                }
            }
            Op::Brx(tab) => {
                let table = &prog.tables[tab as usize];
                let mut bad = None;
                for l in lane_bits(m) {
                    let idx = w.regs[insn.a as usize][l] as u32;
                    match table.get(idx as usize) {
                        Some(&t) => w.pcs[l] = t,
                        None => {
                            bad = Some((l, idx));
                            break;
                        }
                    }
                }
                if let Some((l, idx)) = bad {
                    let e = Fault {
                        kind: FaultKind::Other(format!(
                            "brx.idx index {idx} is outside its target list of {} labels",
                            table.len()
                        )),
                        lane: Some(l as u32),
                    };
                    return Err(self.fault(wi, insn, e, m));
                }
                Self::save(w, pc + 1, mask & !m);
                w.cur = None;
            }
            Op::Exit => {
                self.exit_lanes(wi, m)?;
                let w = &mut self.warps[wi];
                let rest = mask & !m;
                w.cur = if rest != 0 {
                    Some((pc + 1, rest))
                } else {
                    None
                };
            }
            Op::Trap => {
                if m != 0 {
                    let l = m.trailing_zeros() as usize;
                    return Err(ExecError::Trap(self.pos(wi, l, insn)));
                }
                w.cur = Some((pc + 1, mask));
            }
            Op::Unsupported(k) => {
                if m != 0 {
                    let l = m.trailing_zeros() as usize;
                    return Err(ExecError::Unsupported {
                        message: prog.messages[k as usize].clone(),
                        pos: self.pos(wi, l, insn),
                    });
                }
                w.cur = Some((pc + 1, mask));
            }
            Op::Call(k) => {
                self.call(wi, pc, mask, m, k)?;
            }
            Op::Ret => {
                self.ret(wi, pc, mask, m)?;
            }
            Op::Bar(k) => {
                self.barrier(wi, pc, mask, m, k)?;
            }
        }
        Ok(())
    }

    /// After a warp-sync instruction: keep the group unless lower lanes are ready.
    fn pick_keep(w: &mut Warp) {
        if let Some((_, mask)) = w.cur {
            let mut others = u32::MAX;
            for l in lane_bits(w.ready & !mask) {
                others = others.min(w.pcs[l]);
            }
            w.others_min = others;
        }
    }

    /// Lanes `mask` of warp `wi` have a pc past the end of the code (an internal error).
    #[cold]
    fn past_end(&self, wi: usize, mask: u32) -> ExecError {
        let nop = Insn::new(Op::Nop, 0, 0);
        let last = self.sh.prog.code.last().unwrap_or(&nop);
        ExecError::Fault {
            kind: FaultKind::Other(
                "internal error: control ran past the end of the kernel's code".into(),
            ),
            pos: self.pos(wi, mask.trailing_zeros().min(31) as usize, last),
        }
    }

    fn fault(&self, wi: usize, insn: &Insn, e: impl Into<Box<Fault>>, m: u32) -> ExecError {
        let e = *e.into();
        let lane = e.lane.unwrap_or(m.trailing_zeros()) as usize;
        ExecError::Fault {
            kind: e.kind,
            pos: self.pos(wi, lane.min(31), insn),
        }
    }

    fn exit_lanes(&mut self, wi: usize, m: u32) -> Result<(), ExecError> {
        let w = &mut self.warps[wi];
        self.exited += (m & !w.exited).count_ones();
        w.exited |= m;
        w.ready &= !m;
        if m != 0 {
            let mut armed = self.armed;
            while armed != 0 {
                self.release_if_complete(armed.trailing_zeros() as usize, wi);
                armed &= armed - 1;
            }
        }
        // Lanes of this warp may be waiting at an aligned barrier while these exit: that is
        // not divergence. An exited thread is no longer expected at any barrier ("since
        // Volta, bar.sync and its derivatives wait for every thread of the block that has not
        // exited"), so `if (i >= n) return; … __syncthreads();` is well-defined wherever the
        // early return splits a warp. (Divergence is a live lane of the warp reaching another
        // barrier, or skipping this one under a guard: see `barrier`.)
        Ok(())
    }

    fn barrier(&mut self, wi: usize, pc: u32, mask: u32, m: u32, k: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let bar = &prog.barriers[k as usize];
        let w = &mut self.warps[wi];
        let rest = mask & !m;
        if m == 0 {
            w.cur = Some((pc + 1, mask));
            return Ok(());
        }
        // the common case, the whole group at a `bar.sync` of the whole CTA with nobody of the
        // warp waiting elsewhere, cannot fail any of the checks
        let (id, expected) = if rest == 0 && w.barrier == 0 && bar.whole_cta() {
            (bar.id, self.nthreads)
        } else {
            if bar.kind == BarKind::Warp {
                w.cur = Some((pc + 1, mask));
                return Ok(());
            }
            let first = m.trailing_zeros() as usize;
            let id = match bar.id_slot {
                Some(s) => w.regs[s as usize][first] as u32,
                None => bar.id,
            };
            if id >= 16 {
                let e = Fault {
                    kind: FaultKind::Other(format!("barrier id {id} is out of range (0..15)")),
                    lane: Some(first as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
            let expected = match (bar.count_slot, bar.count) {
                (Some(s), _) => w.regs[s as usize][first] as u32,
                (None, Some(c)) => c,
                (None, None) => self.nthreads,
            };
            // aligned barriers: every live lane of the warp must arrive together
            let live = !w.exited;
            if bar.aligned && bar.kind != BarKind::Arrive {
                let others_waiting = w.barrier;
                if others_waiting != 0 {
                    let other_pc = w.bar_pc[others_waiting.trailing_zeros() as usize];
                    if other_pc != pc {
                        // report the barrier the warp reached first
                        let waiting = others_waiting.trailing_zeros() as usize;
                        let first_bar = &prog.code[other_pc as usize];
                        return Err(ExecError::DivergentBarrier {
                            pos: self.pos(wi, waiting, first_bar),
                            arrived: others_waiting.count_ones(),
                            expected: live.count_ones(),
                        });
                    }
                }
                if rest != 0 {
                    // part of the group is guarded off: divergent use of an aligned barrier
                    return Err(ExecError::DivergentBarrier {
                        pos: self.pos(wi, first, insn),
                        arrived: m.count_ones(),
                        expected: live.count_ones(),
                    });
                }
            }
            (id, expected)
        };
        let b = &mut self.bars[id as usize];
        if b.arrived == 0 {
            b.expected = expected;
            b.all = bar.count.is_none() && bar.count_slot.is_none();
            b.red_op = bar.red.map(|r| r.0);
            b.pc = pc;
            b.red_popc = 0;
            b.red_and = true;
            b.red_or = false;
        }
        b.arrived += m.count_ones();
        if b.all && b.arrived > 0 {
            self.armed |= 1 << id;
        }
        if let Some((_, _, src, neg)) = bar.red {
            let p = w.preds[src as usize];
            let p = if neg { !p } else { p };
            let vals = p & m;
            b.red_popc += vals.count_ones();
            if vals != m {
                b.red_and = false;
            }
            if vals != 0 {
                b.red_or = true;
            }
        }
        match bar.kind {
            BarKind::Arrive => {
                w.cur = Some((pc + 1, mask));
            }
            _ => {
                w.barrier |= m;
                w.ready &= !m;
                for_lanes(m, |l| {
                    w.bar_pc[l] = pc;
                    w.pcs[l] = pc + 1;
                });
                b.waiting.push((wi, m));
                if let Some((_, dst, _, _)) = bar.red {
                    b.red_dest.push((wi, m, dst));
                }
                w.cur = if rest != 0 {
                    Some((pc + 1, rest))
                } else {
                    None
                };
            }
        }
        self.release_if_complete(id as usize, wi);
        Ok(())
    }

    /// Threads of the CTA that have exited.
    fn exited_threads(&self) -> u32 {
        self.exited
    }

    /// Releases barrier `id` when every thread it counts has arrived — or, for a barrier of the
    /// whole CTA, when the only threads missing have exited ("barriers exclusively waiting on
    /// arrivals from exited threads are always released", PTX ISA, `exit`).
    #[inline]
    fn release_if_complete(&mut self, id: usize, current: usize) {
        let exited = if self.bars[id].all {
            self.exited_threads()
        } else {
            0
        };
        let b = &self.bars[id];
        if b.arrived != 0 && b.arrived + exited >= b.expected {
            self.release(id, current);
        }
    }

    /// Releases barrier `id`, complete: its waiting lanes are ready again, its reduction
    /// results written, its state back to nobody arrived.
    fn release(&mut self, id: usize, current: usize) {
        let b = &mut self.bars[id];
        let mut waiting = std::mem::take(&mut b.waiting);
        let mut dests = std::mem::take(&mut b.red_dest);
        let (popc, and, or) = (b.red_popc, b.red_and, b.red_or);
        let red_op = b.red_op;
        b.arrived = 0;
        self.armed &= !(1 << id);
        for &(wj, lanes) in &waiting {
            let w = &mut self.warps[wj];
            w.barrier &= !lanes;
            w.ready |= lanes;
            if wj == current {
                if let Some((cpc, cm)) = w.cur {
                    Self::save(w, cpc, cm);
                }
            }
            w.cur = None;
            if w.ready == lanes {
                // the lanes of one arrival, all at the instruction after it, are the only
                // ready ones: the group `pick` would choose
                w.cur = Some((w.pcs[lanes.trailing_zeros() as usize], lanes));
                w.others_min = u32::MAX;
                w.run_len = 0;
            }
        }
        for &(wj, lanes, dst) in &dests {
            let w = &mut self.warps[wj];
            match red_op {
                Some(RedOp::Popc) => {
                    for l in lane_bits(lanes) {
                        w.regs[dst as usize][l] = popc as u64;
                    }
                }
                Some(op) => {
                    let v = if op == RedOp::And { and } else { or };
                    if dst != u32::MAX {
                        let p = &mut w.preds[dst as usize];
                        *p = if v { *p | lanes } else { *p & !lanes };
                    }
                }
                None => {}
            }
        }
        // the lists go back empty, keeping their capacity for the next arrivals
        waiting.clear();
        dests.clear();
        let b = &mut self.bars[id];
        b.waiting = waiting;
        b.red_dest = dests;
    }

    fn call(&mut self, wi: usize, pc: u32, mask: u32, m: u32, k: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let site = &prog.calls[k as usize];
        let rest = mask & !m;
        if m == 0 {
            self.warps[wi].cur = Some((pc + 1, mask));
            return Ok(());
        }
        match &site.target {
            CallTarget::Func(f) => {
                self.enter(wi, pc, m, k, *f)?;
            }
            CallTarget::Indirect(slot) => {
                let mut left = m;
                while left != 0 {
                    let l = left.trailing_zeros() as usize;
                    let addr = self.warps[wi].regs[*slot as usize][l];
                    let Some(f) = crate::compile::func_of_addr(prog, addr) else {
                        let e = Fault {
                            kind: FaultKind::Other(format!(
                                "indirect call to {addr:#x}, which is not the address of a function"
                            )),
                            lane: Some(l as u32),
                        };
                        return Err(self.fault(wi, insn, e, m));
                    };
                    let mut same = 0;
                    for x in lane_bits(left) {
                        if self.warps[wi].regs[*slot as usize][x] == addr {
                            same |= 1 << x;
                        }
                    }
                    self.enter(wi, pc, same, k, f)?;
                    left &= !same;
                }
                // lanes may now be in different functions: regroup by pc
                let w = &mut self.warps[wi];
                let target_pc = w.pcs[m.trailing_zeros() as usize];
                let all_same = lane_bits(m).all(|l| w.pcs[l] == target_pc);
                if !all_same || rest != 0 {
                    Self::save(w, pc + 1, rest);
                    w.cur = None;
                } else {
                    w.cur = Some((target_pc, m));
                }
                return Ok(());
            }
            CallTarget::Vprintf => {
                self.vprintf(wi, insn, m, site)?;
                self.warps[wi].cur = Some((pc + 1, mask));
                return Ok(());
            }
            CallTarget::AssertFail => {
                let l = m.trailing_zeros() as usize;
                let message = self.assert_message(wi, l, site);
                return Err(ExecError::Assert {
                    message,
                    pos: self.pos(wi, l, insn),
                });
            }
            CallTarget::Undefined(name) => {
                let l = m.trailing_zeros() as usize;
                return Err(ExecError::Unsupported {
                    message: format!(
                        "call to `{name}`, which is declared but not defined in this module"
                    ),
                    pos: self.pos(wi, l, insn),
                });
            }
        }
        let w = &mut self.warps[wi];
        let entry = w.pcs[m.trailing_zeros() as usize];
        if rest != 0 {
            Self::save(w, pc + 1, rest);
            w.cur = None;
        } else {
            w.cur = Some((entry, m));
        }
        Ok(())
    }

    /// Pushes a frame for lanes `m` calling function `f` from call site `k` at `pc`.
    fn enter(&mut self, wi: usize, pc: u32, m: u32, k: u32, f: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let callee = &prog.funcs[f as usize];
        let site = &prog.calls[k as usize];
        let fp_slot = prog.fp_slot as usize;
        for l in lane_bits(m) {
            let w = &mut self.warps[wi];
            let caller_fp = w.regs[fp_slot][l];
            let new_fp = (w.sp[l] + 15) & !15;
            let new_sp = new_fp + callee.frame_size;
            // the stack the thread uses: local memory up to the new frame's end, and the
            // bookkeeping of the calls in progress and this one (the registers a recursive
            // call saves are held beside the stack but counted in it)
            let cost = call_cost(callee);
            let used = new_sp + w.booked[l] + cost;
            let limit = self.sh.env.local_limit;
            if used > limit {
                let e = Fault {
                    kind: FaultKind::Other(format!(
                        "stack overflow: calling `{}` needs {used} bytes of the thread's stack, the stack size is {limit} bytes (raise it with --stack-size, LaunchOptions::stack_size)",
                        callee.name
                    )),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
            // a recursive callee's registers are the caller's (the same function): save them
            // before the arguments are written into them
            if callee.recursive {
                let (a, b) = callee.slots;
                let (pa, pb) = callee.pred_slots;
                let s = &mut w.saves[l];
                s.extend((a..b).map(|r| w.regs[r as usize][l]));
                s.extend((pa..pb).map(|p| (w.preds[p as usize] >> l & 1) as u64));
            }
            let local = &mut w.local[l];
            local.grow(new_sp.div_ceil(4) as usize);
            // arguments
            for (arg, param) in site.args.iter().zip(&callee.params) {
                let (poff, psize, preg) = *param;
                match (arg, preg) {
                    (CallOperand::Frame(off, size), None) => {
                        let n = (*size).min(psize);
                        copy_local(local, caller_fp + off, new_fp + poff, n);
                    }
                    (CallOperand::Slot(s), None) => {
                        let v = w.regs[*s as usize][l];
                        for b in 0..psize.min(8) {
                            crate::mem::store(local, new_fp + poff + b, 1, v >> (8 * b));
                        }
                    }
                    (CallOperand::Slot(s), Some(r)) => {
                        w.regs[r as usize][l] = w.regs[*s as usize][l];
                    }
                    (CallOperand::Frame(off, size), Some(r)) => {
                        let mut v = 0u64;
                        for b in 0..(*size).min(8) {
                            v |= crate::mem::load(local, caller_fp + off + b, 1) << (8 * b);
                        }
                        w.regs[r as usize][l] = v;
                    }
                }
            }
            let caller = w.func[l];
            w.stacks[l].push(Frame {
                ret_pc: pc + 1,
                fp: caller_fp,
                sp: w.sp[l],
                call: k,
                callee: f,
                caller,
            });
            if w.stacks[l].len() > 100_000 {
                let e = Fault {
                    kind: FaultKind::Other("call depth exceeds 100000: runaway recursion".into()),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
            w.booked[l] += cost;
            w.regs[fp_slot][l] = new_fp;
            w.sp[l] = new_sp;
            w.func[l] = f;
            w.pcs[l] = callee.entry;
        }
        Ok(())
    }

    fn ret(&mut self, wi: usize, pc: u32, mask: u32, m: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let fp_slot = prog.fp_slot as usize;
        let rest = mask & !m;
        if m == 0 {
            self.warps[wi].cur = Some((pc + 1, mask));
            return Ok(());
        }
        let mut exiting = 0u32;
        // a `ret` in the kernel's own code ends the threads (no lane there has a caller)
        let in_kernel = prog.funcs.get(1).is_none_or(|f| pc < f.entry);
        if in_kernel {
            exiting = m;
        } else {
            let w = &mut self.warps[wi];
            for l in lane_bits(m) {
                let Some(fr) = w.stacks[l].pop() else {
                    exiting |= 1 << l;
                    continue;
                };
                let callee = &prog.funcs[fr.callee as usize];
                w.booked[l] -= call_cost(callee);
                let site = &prog.calls[fr.call as usize];
                let callee_fp = w.regs[fp_slot][l];
                // results
                for (dst, ret) in site.rets.iter().zip(&callee.returns) {
                    let (roff, rsize, rreg) = *ret;
                    match (dst, rreg) {
                        (CallOperand::Frame(off, size), None) => {
                            copy_local(
                                &mut w.local[l],
                                callee_fp + roff,
                                fr.fp + off,
                                (*size).min(rsize),
                            );
                        }
                        (CallOperand::Slot(s), None) => {
                            let mut v = 0u64;
                            for b in 0..rsize.min(8) {
                                v |= crate::mem::load(&w.local[l], callee_fp + roff + b, 1)
                                    << (8 * b);
                            }
                            w.regs[*s as usize][l] = v;
                        }
                        (CallOperand::Slot(s), Some(r)) => {
                            w.regs[*s as usize][l] = w.regs[r as usize][l];
                        }
                        (CallOperand::Frame(off, size), Some(r)) => {
                            let v = w.regs[r as usize][l];
                            for b in 0..(*size).min(8) {
                                crate::mem::store(
                                    &mut w.local[l],
                                    fr.fp + off + b,
                                    1,
                                    v >> (8 * b),
                                );
                            }
                        }
                    }
                }
                if callee.recursive {
                    let (a, b) = callee.slots;
                    let (pa, pb) = callee.pred_slots;
                    let s = &mut w.saves[l];
                    let base = s.len() - (b - a + pb - pa) as usize;
                    for (i, &v) in s[base..base + (b - a) as usize].iter().enumerate() {
                        w.regs[a as usize + i][l] = v;
                    }
                    for (i, &v) in s[base + (b - a) as usize..].iter().enumerate() {
                        let p = &mut w.preds[pa as usize + i];
                        *p = (*p & !(1 << l)) | ((v as u32) << l);
                    }
                    s.truncate(base);
                }
                w.regs[fp_slot][l] = fr.fp;
                w.sp[l] = fr.sp;
                w.func[l] = fr.caller;
                w.pcs[l] = fr.ret_pc;
            }
        }
        if exiting != 0 {
            self.exit_lanes(wi, exiting)?;
        }
        let w = &mut self.warps[wi];
        let back = m & !exiting;
        if rest != 0 {
            Self::save(w, pc + 1, rest);
        }
        if back != 0 {
            let t = w.pcs[back.trailing_zeros() as usize];
            if rest == 0 && lane_bits(back).all(|l| w.pcs[l] == t) {
                w.cur = Some((t, back));
                let mut others = u32::MAX;
                for l in lane_bits(w.ready & !back) {
                    others = others.min(w.pcs[l]);
                }
                w.others_min = others;
                return Ok(());
            }
        }
        w.cur = None;
        Ok(())
    }

    fn read_frame_u64(&self, wi: usize, l: usize, off: u64) -> u64 {
        let w = &self.warps[wi];
        let fp = w.regs[self.sh.prog.fp_slot as usize][l];
        let mut v = 0u64;
        for b in 0..8 {
            let a = fp + off + b;
            if a + 1 > w.local[l].len() as u64 * 4 {
                return 0;
            }
            v |= crate::mem::load(&w.local[l], a, 1) << (8 * b);
        }
        v
    }

    fn arg_u64(&self, wi: usize, l: usize, site: &crate::program::CallSite, i: usize) -> u64 {
        match site.args.get(i) {
            Some(CallOperand::Frame(off, _)) => self.read_frame_u64(wi, l, *off),
            Some(CallOperand::Slot(s)) => self.warps[wi].regs[*s as usize][l],
            None => 0,
        }
    }

    /// Reads a NUL-terminated string at a generic address (at most 64 KiB).
    fn read_cstr(&self, wi: usize, l: usize, addr: u64) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut a = addr;
        while out.len() < 65536 {
            let b = self.read_byte(wi, l, a)?;
            if b == 0 {
                return Some(out);
            }
            out.push(b);
            a += 1;
        }
        Some(out)
    }

    fn read_byte(&self, wi: usize, l: usize, addr: u64) -> Option<u8> {
        use crate::mem::{LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
        if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
            let off = addr - LOCAL_WINDOW;
            let local = &self.warps[wi].local[l];
            if off < local.len() as u64 * 4 {
                return Some(crate::mem::load(local, off, 1) as u8);
            }
            return None;
        }
        if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
            let off = addr - SHARED_WINDOW;
            if off < self.sh.env.shared_size {
                return Some(crate::mem::load(&self.shared, off, 1) as u8);
            }
            return None;
        }
        let a = self.sh.env.mem.find(addr, 1)?;
        Some(crate::mem::load(&a.words, addr - a.base, 1) as u8)
    }

    fn vprintf(
        &mut self,
        wi: usize,
        insn: &Insn,
        m: u32,
        site: &crate::program::CallSite,
    ) -> Result<(), ExecError> {
        for l in lane_bits(m) {
            let fmt_addr = self.arg_u64(wi, l, site, 0);
            let args_addr = self.arg_u64(wi, l, site, 1);
            let Some(fmt) = self.read_cstr(wi, l, fmt_addr) else {
                let e = Fault {
                    kind: FaultKind::Other(format!(
                        "printf format string at {fmt_addr:#x} is not in device memory"
                    )),
                    lane: Some(l as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            };
            // The argument buffer: read up to 32 8-byte slots, as far as memory allows.
            let mut args = Vec::new();
            if args_addr != 0 {
                for k in 0..(32 * 8 + 64) {
                    match self.read_byte(wi, l, args_addr + k) {
                        Some(b) => args.push(b),
                        None => break,
                    }
                }
            }
            let mut read = |a: u64| self.read_cstr(wi, l, a);
            match crate::printf::format(&fmt, &args, &mut read) {
                Ok(text) => {
                    if let Some(f) = self.sh.printf {
                        if f.record(self.linear, &text, &self.sh.cancel).is_err() {
                            return Err(ExecError::Cancelled);
                        }
                    }
                    // one call can format up to 32 MiB per lane (32 conversions of
                    // `printf::MAX_FIELD`): the clock is checked per record, not only every
                    // `flush_every` instructions, so that the deadline holds for printf loops
                    if let Some(d) = self.sh.deadline {
                        if Instant::now() >= d {
                            return Err(ExecError::Timeout {
                                seconds: self.sh.timeout_seconds(),
                                at: Some(Box::new(self.stuck())),
                            });
                        }
                    }
                }
                Err(e) => {
                    let f = Fault {
                        kind: FaultKind::Other(format!("printf: {e}")),
                        lane: Some(l as u32),
                    };
                    return Err(self.fault(wi, insn, f, m));
                }
            }
            // return value: number of arguments (CUDA returns the count); write 0-extended
            if let Some(CallOperand::Frame(off, _)) = site.rets.first() {
                let w = &mut self.warps[wi];
                let fp = w.regs[self.sh.prog.fp_slot as usize][l];
                crate::mem::store(&mut w.local[l], fp + off, 4, 0);
            }
        }
        Ok(())
    }

    fn assert_message(&self, wi: usize, l: usize, site: &crate::program::CallSite) -> String {
        let s = |i: usize| {
            let a = self.arg_u64(wi, l, site, i);
            self.read_cstr(wi, l, a)
                .map(|v| String::from_utf8_lossy(&v).into_owned())
                .unwrap_or_else(|| "?".into())
        };
        let line = self.arg_u64(wi, l, site, 2) as u32;
        format!(
            "assertion `{}` failed at {}:{} in {}",
            s(0),
            s(1),
            line,
            s(3)
        )
    }
}

/// The handler context of warp `w`.
fn warp_ctx<'c>(w: &'c mut Warp, shared: &'c mut Vec<u32>, sh: &'c LaunchShared<'_>) -> Ctx<'c> {
    Ctx {
        regs: &mut w.regs,
        preds: &mut w.preds,
        shared,
        local: &mut w.local,
        sp: &mut w.sp,
        live: !w.exited,
        env: &sh.env,
    }
}

fn copy_local(local: &mut crate::mem::LocalMem, from: u64, to: u64, n: u64) {
    let len = local.len() as u64 * 4;
    for b in 0..n {
        if from + b + 1 > len || to + b + 1 > len {
            break;
        }
        let v = crate::mem::load(local, from + b, 1);
        crate::mem::store(local, to + b, 1, v);
    }
}
