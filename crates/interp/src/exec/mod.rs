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
//!
//! The module tree follows those seams:
//! - [`cta`]: one CTA, its set-up (register files, special registers, the hoisted prelude,
//!   shared and local memory) and the round-robin over its warps, with the instruction budget
//!   and the clock checked between slices;
//! - [`warp`]: a warp's groups and reconvergence, and the one dispatch loop of its
//!   instructions (`run_warp`), which hands the instructions that may change the group to
//!   `control`;
//! - [`asyncop`]: asynchronous copies (pending per CTA, completed at their waits) and mbarriers
//!   (waiting lanes suspended until an mbarrier changes);
//! - [`barrier`]: `bar`/`barrier` arrivals, reductions and releases, and exits, which may
//!   release a barrier of the whole CTA;
//! - [`call`]: calls and returns (frames, arguments, saved registers of recursive calls, the
//!   stack bound), `vprintf` and `__assertfail`;
//! - [`fault`]: why a launch stops ([`ExecError`]) and where its threads were ([`Stuck`],
//!   deadlock reports);
//! - `sanit`: the sanitizer checks of `--check race,init,sync` ([`Checks`]): [`instrument`]
//!   turns the instructions to watch into [`crate::program::Op::Probe`]s, which the dispatch
//!   loop hands to `control` like any instruction that is not lane-wise (an unchecked program
//!   has none, so its hot loop is unchanged); shadow state per byte of shared memory with
//!   barrier epochs, and per barrier generation; reports as [`Hazard`]s;
//! - [`launch`]: the grid, its CTAs spread over OS threads, and [`fifo`], the printf FIFO that
//!   keeps their output in CTA order.

mod asyncop;
mod barrier;
mod call;
mod cluster;
mod cta;
mod fault;
pub mod fifo;
pub mod launch;
mod sanit;
mod tmap;
mod warp;
pub(crate) mod wgmma;

pub use call::{CALL_OVERHEAD, DEFAULT_STACK_SIZE, LOCAL_MAX};
pub(crate) use cluster::run_cluster;
pub use cluster::RANK_SHIFT;
pub use cta::{run_cta, CtaOutput, CtaScratch, LaunchShared};
pub use fault::{
    ExecError, Stuck, StuckGroup, StuckState, ThreadPos, Wait, WaitKind, STUCK_GROUPS,
};
pub use sanit::{
    instrument, shared_var, Checks, Hazard, HazardKind, HazardLog, MemProbe, Probe, SanAccess,
    SanLaunch,
};
pub use warp::STARVE_LIMIT;
