//! Grid launch: CTAs spread over OS threads.
//!
//! CTAs are independent work items: worker threads take the next CTA indices (in short runs of
//! consecutive ones) from a shared counter until the grid is done or a CTA fails. printf output
//! goes through a [`PrintfFifo`]: streamed in CTA order with bounded memory, so the output never
//! depends on the number of threads.

use crate::exec::{run_cta, CtaScratch, ExecError, LaunchShared};
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
    /// Bytes of printf output that CTAs after the lowest unfinished one may hold at once (see
    /// [`crate::fifo`]; [`crate::fifo::DEFAULT_PRINTF_FIFO`] is CUDA's default).
    pub printf_fifo: usize,
}

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
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
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
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    sink: Option<Sink<'_>>,
) -> Result<LaunchStats, Box<(ExecError, LaunchStats)>> {
    let start = Instant::now();
    let [gx, gy, gz] = cfg.grid;
    let total = gx as u64 * gy as u64 * gz as u64;
    let threads = if cfg.threads == 0 && total > 1 {
        cores()
    } else if cfg.threads == 0 {
        1
    } else {
        cfg.threads
    }
    .max(1)
    .min(total.max(1) as usize);
    // only a kernel that can print tracks its CTAs' order
    let prints = prog
        .calls
        .iter()
        .any(|c| matches!(c.target, crate::program::CallTarget::Vprintf));
    let fifo = prints.then(|| PrintfFifo::new(cfg.printf_fifo, sink));
    let sh = LaunchShared {
        prog,
        env: Env {
            mem,
            shared_size: prog.shared_static + cfg.shared_bytes,
            params,
            param_size: prog.param_size,
            start,
        },
        grid: cfg.grid,
        block: cfg.block,
        dyn_shared: cfg.shared_bytes,
        max_instructions: cfg.max_instructions,
        executed: AtomicU64::new(0),
        warp_executed: AtomicU64::new(0),
        deadline: cfg.timeout.map(|t| start + t),
        cancel: AtomicBool::new(false),
        nsm: 132,
        printf: fifo.as_ref().map(|f| f as &dyn crate::fifo::Records),
    };
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let error: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let warp_insts = AtomicU64::new(0);
    let thread_insts = AtomicU64::new(0);
    // CTAs are handed out in runs of consecutive indices: a worker then streams through a
    // contiguous part of the data (kinder to the hardware prefetchers) and touches the shared
    // counters less often; runs stay short enough to balance the load.
    let batch = (total / (threads as u64 * 64)).clamp(1, 64);
    // Runs CTA `k`; false when the worker should stop.
    // per worker: (warp, thread) instructions, added to the shared totals when it stops
    let run_one = |k: u64, scratch: &mut CtaScratch, counts: &mut (u64, u64)| -> bool {
        let ctaid = [
            (k % gx as u64) as u32,
            ((k / gx as u64) % gy as u64) as u32,
            (k / (gx as u64 * gy as u64)) as u32,
        ];
        let r = run_cta(&sh, ctaid, k, scratch);
        if let Some(f) = &fifo {
            f.finish(k);
        }
        match r {
            Ok(out) => {
                counts.0 += out.warp_insts;
                counts.1 += out.thread_insts;
                if let Some(p) = progress {
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    p(d, total);
                }
                true
            }
            Err(ExecError::Cancelled) => false,
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
    let worker = || {
        let mut scratch = CtaScratch::default();
        let mut counts = (0u64, 0u64);
        'grid: loop {
            if sh.cancel.load(Ordering::Relaxed) {
                break;
            }
            let k0 = next.fetch_add(batch, Ordering::Relaxed);
            if k0 >= total {
                break;
            }
            for k in k0..(k0 + batch).min(total) {
                if !run_one(k, &mut scratch, &mut counts) {
                    break 'grid;
                }
            }
        }
        scratch.flush(&sh);
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
    let end = fifo.map(PrintfFifo::end).unwrap_or_default();
    let stats = LaunchStats {
        thread_instructions: thread_insts.into_inner(),
        warp_instructions: warp_insts.into_inner(),
        stdout: end.collected,
        seconds: start.elapsed().as_secs_f64(),
    };
    match error.into_inner().ok().flatten() {
        Some((_, e)) => Err(Box::new((e, stats))),
        // the last instructions of each worker are counted when it stops: a launch that
        // finished past the budget is over it all the same
        None if stats.thread_instructions > cfg.max_instructions => {
            Err(Box::new((ExecError::Budget(cfg.max_instructions), stats)))
        }
        None => Ok(stats),
    }
}
