//! Grid launch: CTAs spread over OS threads.
//!
//! CTAs are independent work items: worker threads take the next CTA indices (in short runs of
//! consecutive ones) from a shared counter until the grid is done or a CTA fails. printf output
//! goes through a [`PrintfFifo`]: streamed in CTA order with bounded memory, so the output never
//! depends on the number of threads.

use crate::exec::{run_cta, CtaScratch, ExecError, LaunchShared, ThreadPos};
use crate::fifo::{PrintfFifo, Sink};
use crate::program::Env;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Launch geometry and limits.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    /// Grid size in CTAs.
    pub grid: [u32; 3],
    /// Block size in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory bytes.
    pub shared_bytes: u64,
    /// OS threads (0: all cores).
    pub threads: usize,
    /// Thread-instruction budget.
    pub max_instructions: u64,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// Local memory (stack) bytes per thread: the bound on its `.local` frame, call frames and
    /// `alloca` ([`crate::exec::LOCAL_MAX`], raised by the runtime to the stack size it is given
    /// and to what the kernel's frames need).
    pub local_limit: u64,
    /// Bytes of printf output that CTAs after the lowest unfinished one may hold at once (see
    /// [`crate::fifo`]; [`crate::fifo::DEFAULT_PRINTF_FIFO`] is CUDA's default).
    pub printf_fifo: usize,
    /// Cluster shape in CTAs (`[1, 1, 1]`: clusters of one); the grid must be a multiple of it.
    /// The CTAs of a cluster run together on one worker thread (see `exec/cluster.rs`).
    pub cluster: [u32; 3],
    /// Whether the launch names its cluster shape (`%is_explicit_cluster`).
    pub explicit_cluster: bool,
    /// Sanitizer checks: the program must have been [`crate::exec::instrument`]ed for them
    /// (a program without probes runs no memory or branch check whatever this says).
    pub checks: crate::exec::Checks,
    /// Whether the init check covers shared memory (what `instrument` returned, negated).
    pub init_shared: bool,
}

/// Local memory the CTAs running at once may hold together (bytes): a launch whose blocks each
/// need `local_limit` × threads runs fewer blocks at a time when that would pass it, and is
/// refused (by the runtime, before it starts) when one block alone would.
pub const LOCAL_TOTAL: u64 = 4 << 30;

/// What a launch did.
#[derive(Clone, Debug, Default)]
pub struct LaunchStats {
    /// Thread instructions executed.
    pub thread_instructions: u64,
    /// Warp instructions executed.
    pub warp_instructions: u64,
    /// printf output in CTA order, when the launch had no sink ([`launch_with_sink`] writes it
    /// to the sink instead and leaves this empty; after the sink's first write error, the rest
    /// of the output is discarded: the sink knows the error).
    pub stdout: Vec<u8>,

    /// Seconds.
    pub seconds: f64,
    /// Sanitizer reports (checked launches), one per site, in block order.
    pub hazards: Vec<crate::exec::Hazard>,
}

/// How far a launch has got, for a progress display.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Blocks finished.
    pub blocks_done: u64,
    /// Blocks in the grid.
    pub blocks_total: u64,
    /// Thread instructions executed (as last counted: workers add theirs every 64 Ki or so).
    pub thread_instructions: u64,
}

/// The number of cores, asked once per process: on Linux the question reads several files
/// under `/proc` and `/sys` (about 8 µs, most of an empty launch).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// Runs `prog` over the grid; the printf output is collected in [`LaunchStats::stdout`].
pub fn launch(
    prog: &crate::program::Program,
    mem: &crate::mem::MemMap,
    params: &[u32],
    cfg: &LaunchConfig,
    progress: Option<&(dyn Fn(&Progress) + Sync)>,
) -> Result<LaunchStats, Box<(ExecError, LaunchStats)>> {
    launch_with_sink(prog, mem, params, cfg, progress, None)
}

/// [`launch`], writing the printf output to `sink` as it is produced (in CTA order, through a
/// FIFO of `cfg.printf_fifo` bytes) instead of collecting it.
pub fn launch_with_sink(
    prog: &crate::program::Program,
    mem: &crate::mem::MemMap,
    params: &[u32],
    cfg: &LaunchConfig,
    progress: Option<&(dyn Fn(&Progress) + Sync)>,
    sink: Option<Sink<'_>>,
) -> Result<LaunchStats, Box<(ExecError, LaunchStats)>> {
    let start = Instant::now();
    let [gx, gy, gz] = cfg.grid;
    let total = gx as u64 * gy as u64 * gz as u64;
    let [cx, cy, cz] = cfg.cluster;
    if (0..3).any(|d| cfg.cluster[d] == 0 || cfg.grid[d] % cfg.cluster[d] != 0) {
        let e = ExecError::Fault {
            kind: crate::program::FaultKind::Other(format!(
                "the grid {:?} is not a multiple of the cluster shape {:?}",
                cfg.grid, cfg.cluster
            )),
            pos: ThreadPos {
                block: [0; 3],
                thread: [0; 3],
                func: 0,
                inst: 0,
            },
        };
        return Err(Box::new((e, LaunchStats::default())));
    }
    let csize = cx as u64 * cy as u64 * cz as u64;
    // the CTAs of a cluster run together when there is more than one, or when the kernel
    // uses a cluster instruction (which then sees clusters of one)
    let clustered = csize > 1 || prog.cluster_insts;
    // what the workers hand out: CTAs, or clusters
    let units = if clustered { total / csize } else { total };
    let threads = if cfg.threads == 0 && total > 1 {
        cores()
    } else if cfg.threads == 0 {
        1
    } else {
        cfg.threads
    }
    .max(1)
    .min(units.max(1) as usize);
    // a block's threads may each hold `local_limit` bytes of local memory: run no more blocks
    // at once than `LOCAL_TOTAL` covers
    let per_block = cfg
        .local_limit
        .saturating_mul(cfg.block[0] as u64 * cfg.block[1] as u64 * cfg.block[2] as u64);
    let threads = threads.min((LOCAL_TOTAL / per_block.max(1)).max(1) as usize);
    // only a kernel that can print tracks its CTAs' order
    let prints = prog
        .calls
        .iter()
        .any(|c| matches!(c.target, crate::program::CallTarget::Vprintf));
    let fifo = prints.then(|| PrintfFifo::new(cfg.printf_fifo, sink));
    let san = cfg.checks.instrumented().then(|| crate::exec::SanLaunch {
        checks: cfg.checks,
        init_shared: cfg.init_shared,
        hazards: Default::default(),
    });
    let sh = LaunchShared {
        prog,
        env: Env {
            mem,
            shared_size: prog.shared_static + cfg.shared_bytes,
            params,
            param_size: prog.param_size,
            local_limit: cfg.local_limit,
            start,
            lists: &prog.lists,
        },
        grid: cfg.grid,
        block: cfg.block,
        cluster: if clustered { cfg.cluster } else { [1; 3] },
        explicit_cluster: cfg.explicit_cluster,
        dyn_shared: cfg.shared_bytes,
        max_instructions: cfg.max_instructions,
        executed: AtomicU64::new(0),
        warp_executed: AtomicU64::new(0),
        deadline: cfg.timeout.map(|t| start + t),
        cancel: AtomicBool::new(false),
        nsm: 132,
        flush_every: LaunchShared::flush_every(cfg.max_instructions),
        blocks_done: AtomicU64::new(0),
        blocks_total: total,
        progress,
        printf: fifo.as_ref().map(|f| f as &dyn crate::fifo::Records),
        san: san.as_ref(),
    };
    let next = AtomicU64::new(0);
    // blocks stopped because another failed
    let stopped = AtomicU64::new(0);
    let error: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let warp_insts = AtomicU64::new(0);
    let thread_insts = AtomicU64::new(0);
    // CTAs are handed out in runs of consecutive indices: a worker then streams through a
    // contiguous part of the data (kinder to the hardware prefetchers) and touches the shared
    // counters less often; runs stay short enough to balance the load.
    let batch = (units / (threads as u64 * 64)).clamp(1, 64);
    // Runs CTA `k`; false when the worker should stop.
    // per worker: (warp, thread) instructions, added to the shared totals when it stops
    let settle = |k: u64,
                  r: Result<crate::exec::CtaOutput, ExecError>,
                  n: u64,
                  counts: &mut (u64, u64)|
     -> bool {
        match r {
            Ok(out) => {
                counts.0 += out.warp_insts;
                counts.1 += out.thread_insts;
                if progress.is_some() {
                    sh.blocks_done.fetch_add(n, Ordering::Relaxed);
                    sh.report_progress(sh.executed.load(Ordering::Relaxed));
                }
                true
            }
            Err(ExecError::Cancelled) => {
                stopped.fetch_add(n, Ordering::Relaxed);
                false
            }
            Err(e) => {
                if let Ok(mut slot) = error.lock() {
                    let replace = match &*slot {
                        None => true,
                        Some((j, _)) => k < *j,
                    };
                    if replace {
                        *slot = Some((k, e));
                    }
                }
                sh.cancel.store(true, Ordering::Relaxed);
                false
            }
        }
    };
    let ctaid_of = |k: u64| {
        [
            (k % gx as u64) as u32,
            ((k / gx as u64) % gy as u64) as u32,
            (k / (gx as u64 * gy as u64)) as u32,
        ]
    };
    let run_one = |k: u64, scratch: &mut CtaScratch, counts: &mut (u64, u64)| -> bool {
        let r = run_cta(&sh, ctaid_of(k), k, scratch);
        if let Some(f) = &fifo {
            f.finish(k);
        }
        settle(k, r, 1, counts)
    };
    // Runs cluster `k` (its CTAs in rank order); false when the worker should stop.
    let run_cluster = |k: u64, scratch: &mut Vec<CtaScratch>, counts: &mut (u64, u64)| -> bool {
        let (ncx, ncy) = ((gx / cx) as u64, (gy / cy) as u64);
        let cid = [
            (k % ncx) as u32,
            ((k / ncx) % ncy) as u32,
            (k / (ncx * ncy)) as u32,
        ];
        let ctas: Vec<([u32; 3], u64)> = (0..csize)
            .map(|r| {
                let id = [
                    cid[0] * cx + (r % cx as u64) as u32,
                    cid[1] * cy + ((r / cx as u64) % cy as u64) as u32,
                    cid[2] * cz + (r / (cx as u64 * cy as u64)) as u32,
                ];
                let linear = id[0] as u64 + gx as u64 * (id[1] as u64 + gy as u64 * id[2] as u64);
                (id, linear)
            })
            .collect();
        // (a cluster's printf records are kept under its index `k`)
        let r = crate::exec::run_cluster(&sh, &ctas, k, scratch);
        if let Some(f) = &fifo {
            f.finish(k);
        }
        let first = ctas.iter().map(|c| c.1).min().unwrap_or(0);
        settle(first, r, csize, counts)
    };
    let worker = || {
        let mut scratch = CtaScratch::default();
        let mut cluster_scratch: Vec<CtaScratch> = Vec::new();
        let mut counts = (0u64, 0u64);
        'grid: loop {
            if sh.cancel.load(Ordering::Relaxed) {
                break;
            }
            let k0 = next.fetch_add(batch, Ordering::Relaxed);
            if k0 >= units {
                break;
            }
            for k in k0..(k0 + batch).min(units) {
                let go = if clustered {
                    run_cluster(k, &mut cluster_scratch, &mut counts)
                } else {
                    run_one(k, &mut scratch, &mut counts)
                };
                if !go {
                    break 'grid;
                }
            }
        }
        scratch.flush(&sh);
        for s in &mut cluster_scratch {
            s.flush(&sh);
        }
        warp_insts.fetch_add(counts.0, Ordering::Relaxed);
        thread_insts.fetch_add(counts.1, Ordering::Relaxed);
    };
    if threads == 1 {
        worker();
    } else {
        // the calling thread is one of the workers
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(worker);
            }
            worker();
        });
    }
    let hazards = san
        .map(|s| s.hazards.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default();
    let end = fifo.map(PrintfFifo::end).unwrap_or_default();
    let stats = LaunchStats {
        hazards: hazards.into_sorted(),
        thread_instructions: thread_insts.into_inner(),
        warp_instructions: warp_insts.into_inner(),
        stdout: end.collected,
        seconds: start.elapsed().as_secs_f64(),
    };
    match error.into_inner().ok().flatten() {
        Some((_, mut e)) => {
            if let ExecError::Budget { at: Some(at), .. }
            | ExecError::Timeout { at: Some(at), .. } = &mut e
            {
                at.other_blocks = stopped.into_inner();
            }
            Err(Box::new((e, stats)))
        }
        // the last instructions of each worker are counted when it stops: a launch that
        // finished past the budget is over it all the same
        None if stats.thread_instructions > cfg.max_instructions => Err(Box::new((
            ExecError::Budget {
                limit: cfg.max_instructions,
                at: None,
            },
            stats,
        ))),
        None => Ok(stats),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::test_program;
    use crate::exec::{StuckGroup, StuckState};
    use crate::mem::MemMap;

    fn cfg(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            shared_bytes: 0,
            threads: 1,
            max_instructions: 1 << 40,
            timeout: None,
            local_limit: crate::exec::DEFAULT_STACK_SIZE,
            printf_fifo: crate::fifo::DEFAULT_PRINTF_FIFO,
            cluster: [1; 3],
            explicit_cluster: false,
            checks: Default::default(),
            init_shared: false,
        }
    }

    #[test]
    fn a_tiny_budget_stops_the_launch_after_a_few_blocks() {
        // 2 instructions per thread (a mov and the implicit ret), 64 per block of 32; the
        // budget used to be checked every 64 Ki instructions: after 1024 blocks
        let prog = test_program("", ".reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;");
        let c = LaunchConfig {
            max_instructions: 5,
            ..cfg(100_000, 32)
        };
        let err = launch(&prog, &MemMap::default(), &[], &c, None).expect_err("over budget");
        let (e, stats) = *err;
        assert!(
            matches!(
                e,
                ExecError::Budget {
                    limit: 5,
                    at: Some(_)
                }
            ),
            "{e:?}"
        );
        assert!(
            stats.thread_instructions <= 64,
            "{}",
            stats.thread_instructions
        );
    }

    #[test]
    fn the_deadline_bounds_the_zeroing_of_shared_memory() {
        // 64 MiB of shared memory per block, zeroed before each of 100000 blocks starts
        let prog = test_program("", ".reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;");
        let c = LaunchConfig {
            shared_bytes: 64 << 20,
            timeout: Some(Duration::from_millis(200)),
            ..cfg(100_000, 32)
        };
        let t = Instant::now();
        let err = launch(&prog, &MemMap::default(), &[], &c, None).expect_err("times out");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        match err.0 {
            ExecError::Timeout { at: Some(at), .. } => {
                let setup = at.setup.expect("stopped in a block's set-up");
                assert!(setup.contains("shared memory"), "{setup}");
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn the_budget_report_says_where_each_warp_was() {
        // warp 0 waits at the barrier, warp 1 spins, warp 2's lanes 0-15 wait at a shfl.sync
        // for its lanes 16-31, which spin
        let prog = test_program(
            "",
            ".reg .pred %p<4>;\n.reg .b32 %r<4>;\n\
             mov.u32 %r1, %tid.x;\n\
             setp.ge.u32 %p1, %r1, 32;\n\
             @%p1 bra NOT0;\n\
             bar.sync 0;\n\
             ret;\n\
             NOT0:\n\
             setp.ge.u32 %p2, %r1, 80;\n\
             setp.lt.u32 %p3, %r1, 64;\n\
             or.pred %p2, %p2, %p3;\n\
             @%p2 bra SPIN;\n\
             shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;\n\
             ret;\n\
             SPIN:\n\
             add.s32 %r3, %r3, 1;\n\
             bra SPIN;",
        );
        // (a warp runs slices of 16 Ki steps: warp 1 spins through one, then warp 2)
        let c = LaunchConfig {
            max_instructions: 600_000,
            ..cfg(2, 96)
        };
        let err = launch(&prog, &MemMap::default(), &[], &c, None).expect_err("over budget");
        let ExecError::Budget { at: Some(at), .. } = err.0 else {
            panic!("{:?}", err.0);
        };
        let g = |first, last, inst, state| StuckGroup {
            first,
            last,
            count: last - first + 1,
            func: 0,
            inst,
            state,
        };
        let barrier = StuckState::Barrier {
            id: 0,
            arrived: 32,
            expected: 96,
            all: true,
        };
        assert_eq!(at.block, [0, 0, 0]);
        assert_eq!(at.setup, None);
        assert_eq!(at.more_groups, 0);
        // (the spinning lanes are at the add or at the bra, whichever the slice ended on)
        let spin = at.groups[1].inst;
        assert!(spin == 11 || spin == 12, "{spin}");
        assert_eq!(
            at.groups,
            [
                g(0, 31, 3, barrier),
                g(32, 63, spin, StuckState::Running),
                g(64, 79, 9, StuckState::WarpSync),
                g(80, 95, at.groups[3].inst, StuckState::Running),
            ]
        );
    }
}
