//! Stream order: where the work of a driver call runs, and when.
//!
//! - The legacy default stream (`NULL`, `CU_STREAM_LEGACY`) and the per-thread default stream
//!   run their work synchronously on the calling thread. Work on the legacy stream first waits
//!   for every blocking stream of its context (streams created without
//!   `CU_STREAM_NON_BLOCKING`), as CUDA's legacy stream does; since it is synchronous, later
//!   work of any stream finds it complete.
//! - A created stream has a worker thread (started at its first work) that runs its work in
//!   FIFO order, so a host function may block on something the host enqueues later, and two
//!   streams run concurrently. `cuStreamQuery`/`cuEventQuery` answer `CUDA_ERROR_NOT_READY`
//!   while work is pending; the synchronize calls wait. A kernel fault is sticky for its
//!   context (every later call reports it); any other failure of asynchronous work is
//!   reported by the stream's next synchronize.
//! - A stream being captured (`cuStreamBeginCapture`) records its work as graph nodes instead
//!   of running it; `cuGraphLaunch` replays them in order ([`crate::graph`]).
//!
//! The registries here (queues, events' recorded state, captures) are keyed by the handles of
//! [`crate::state`]; the state's lock is never held while waiting.

use crate::abi::*;
use crate::state::{self, Obj};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: CUresult = 900;
pub const CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: CUresult = 901;
pub const CUDA_ERROR_STREAM_CAPTURE_UNMATCHED: CUresult = 903;
pub const CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: CUresult = 906;
pub const CUDA_ERROR_CAPTURED_EVENT: CUresult = 907;
pub const CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: CUresult = 908;

/// Work in stream order. It may run more than once (a graph replays it).
pub type Op = Arc<dyn Fn() -> Result<(), CUresult> + Send + Sync>;

/// Recorded work: a graph's nodes in order.
pub type Nodes = Arc<Vec<(NodeKind, Op)>>;

/// `CUgraphNodeType` of captured work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum NodeKind {
    Kernel = 0,
    Memcpy = 1,
    Memset = 2,
    Host = 3,
    WaitEvent = 6,
    EventRecord = 7,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The FIFO of a created stream and its worker's progress.
pub struct Queue {
    pub ctx: u64,
    /// Created without `CU_STREAM_NON_BLOCKING`: the legacy stream waits for it.
    pub blocking: bool,
    m: Mutex<QState>,
    cv: Condvar,
    /// `QState::submitted` and `completed`, readable without the lock: a waiter and the
    /// worker spin on them briefly before sleeping, which keeps a launch and its synchronize
    /// a few microseconds apart instead of two thread wake-ups.
    posted: AtomicU64,
    done: AtomicU64,
}

/// How long a waiter or an idle worker spins before it sleeps.
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// Spins (yielding now and then) until `ready()` or [`SPIN`] has passed.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let t0 = Instant::now();
    let mut k = 0u32;
    loop {
        if ready() {
            return true;
        }
        k += 1;
        if k % 64 == 0 {
            if t0.elapsed() > SPIN {
                return false;
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

#[derive(Default)]
struct QState {
    jobs: VecDeque<Op>,
    submitted: u64,
    completed: u64,
    /// The first failure of asynchronous work not yet reported.
    error: Option<CUresult>,
    /// A job is running (on the worker or on a thread waiting for it).
    busy: bool,
    worker: bool,
    closed: bool,
}

impl Queue {
    /// Enqueues `op`; returns its ticket (done when `completed >= ticket`).
    fn push(self: &Arc<Self>, op: Op) -> u64 {
        let mut q = lock(&self.m);
        q.jobs.push_back(op);
        q.submitted += 1;
        let ticket = q.submitted;
        self.posted.store(ticket, Ordering::Release);
        if !q.worker {
            q.worker = true;
            let me = self.clone();
            let spawned = std::thread::Builder::new()
                .name("ptxvm-stream".into())
                .spawn(move || me.work());
            if spawned.is_err() {
                // no thread: run the work here (still in order, synchronously)
                q.worker = false;
                drop(q);
                self.wait(ticket);
            }
            return ticket;
        }
        self.cv.notify_all();
        ticket
    }

    fn finish(&self, r: Result<(), CUresult>) {
        let mut q = lock(&self.m);
        q.completed += 1;
        q.busy = false;
        self.done.store(q.completed, Ordering::Release);
        if let Err(e) = r {
            q.error.get_or_insert(e);
        }
        self.cv.notify_all();
    }

    fn work(self: Arc<Self>) {
        CURRENT.with(|c| *c.borrow_mut() = Some(Arc::as_ptr(&self) as usize));
        loop {
            let op = {
                let mut q = lock(&self.m);
                loop {
                    if !q.busy {
                        if let Some(op) = q.jobs.pop_front() {
                            q.busy = true;
                            break op;
                        }
                        if q.closed {
                            q.worker = false;
                            return;
                        }
                    }
                    q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let r = run_op(&op);
            self.finish(r);
        }
    }

    fn done(&self, ticket: u64) -> bool {
        lock(&self.m).completed >= ticket
    }

    fn idle(&self) -> bool {
        let q = lock(&self.m);
        q.completed >= q.submitted
    }

    /// Waits until the work up to `ticket` is done. Work the worker has not started yet runs
    /// on the waiting thread (in order, one job at a time): a launch and its synchronize then
    /// cost no thread wake-up.
    fn wait(&self, ticket: u64) {
        if self.is_current() {
            return;
        }
        loop {
            let mut q = lock(&self.m);
            if q.completed >= ticket {
                return;
            }
            if !q.busy {
                if let Some(op) = q.jobs.pop_front() {
                    q.busy = true;
                    drop(q);
                    let me = self as *const Self as usize;
                    let outer = CURRENT.with(|c| c.borrow_mut().replace(me));
                    let r = run_op(&op);
                    CURRENT.with(|c| *c.borrow_mut() = outer);
                    self.finish(r);
                    continue;
                }
            }
            drop(q);
            if spin_until(|| self.done.load(Ordering::Acquire) >= ticket) {
                return;
            }
            let mut q = lock(&self.m);
            while q.completed < ticket && (q.busy || q.jobs.is_empty()) {
                q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    /// Waits for all work and takes the failure to report.
    fn drain(&self) -> Option<CUresult> {
        if self.is_current() {
            return None;
        }
        self.wait(self.posted.load(Ordering::Acquire));
        lock(&self.m).error.take()
    }

    /// Called from this queue's own worker (a host function calling the driver): waiting for
    /// itself would never end.
    fn is_current(&self) -> bool {
        CURRENT.with(|c| *c.borrow() == Some(self as *const Self as usize))
    }
}

thread_local! {
    /// The queue whose worker this thread is.
    static CURRENT: std::cell::RefCell<Option<usize>> = const { std::cell::RefCell::new(None) };
}

fn run_op(op: &Op) -> Result<(), CUresult> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op()))
        .unwrap_or(Err(CUDA_ERROR_UNKNOWN))
}

static QUEUES: LazyLock<Mutex<HashMap<u64, Arc<Queue>>>> = LazyLock::new(Default::default);

/// Registers created stream `h` of context `ctx`.
pub fn created(h: u64, ctx: u64, flags: u32) {
    let q = Arc::new(Queue {
        ctx,
        blocking: flags & 1 == 0,
        m: Mutex::new(QState::default()),
        cv: Condvar::new(),
        posted: AtomicU64::new(0),
        done: AtomicU64::new(0),
    });
    lock(&QUEUES).insert(h, q);
}

/// Streams destroyed while work was still queued on them: that work still runs (as CUDA
/// documents), and whatever waits for the context — `cuMemFree`, `cuCtxSynchronize`, the
/// legacy stream — waits for it too. Dropped once idle.
static RETIRED: LazyLock<Mutex<Vec<Arc<Queue>>>> = LazyLock::new(Default::default);

/// Forgets stream `h`: its pending work still runs (as CUDA documents), then its worker ends.
pub fn destroyed(h: u64) {
    end_captures_of(h);
    if let Some(q) = lock(&QUEUES).remove(&h) {
        let mut s = lock(&q.m);
        s.closed = true;
        q.cv.notify_all();
        drop(s);
        if !q.idle() {
            lock(&RETIRED).push(q);
        }
    }
}

fn queue(h: u64) -> Option<Arc<Queue>> {
    if h <= 2 {
        return None;
    }
    lock(&QUEUES).get(&h).cloned()
}

/// The streams of `ctx` (all, or the blocking ones), destroyed ones with work left included.
fn queues_of(ctx: u64, blocking_only: bool) -> Vec<Arc<Queue>> {
    let mut v: Vec<Arc<Queue>> = lock(&QUEUES)
        .values()
        .filter(|q| q.ctx == ctx && (q.blocking || !blocking_only))
        .cloned()
        .collect();
    let mut retired = lock(&RETIRED);
    retired.retain(|q| !q.idle());
    v.extend(
        retired
            .iter()
            .filter(|q| q.ctx == ctx && (q.blocking || !blocking_only))
            .cloned(),
    );
    v
}

/// How many stream queues of context `ctx` are registered (the driver fuzzer's leak check).
pub fn queues_of_ctx(ctx: u64) -> usize {
    queues_of(ctx, false).len()
}

/// Waits for every stream of context `ctx` without taking their failures: those stay with
/// their streams until a synchronize of the stream or the context reports them (a `cuMemFree`
/// on one thread must not swallow the failure of another thread's stream).
pub fn wait_ctx(ctx: u64, blocking_only: bool) {
    for q in queues_of(ctx, blocking_only) {
        if !q.is_current() {
            q.wait(q.posted.load(Ordering::Acquire));
        }
    }
}

/// Waits for every stream of context `ctx` (all of them, or the blocking ones) and returns the
/// first failure they had to report.
pub fn drain_ctx(ctx: u64, blocking_only: bool) -> Result<(), CUresult> {
    let mut err = None;
    for q in queues_of(ctx, blocking_only) {
        if let Some(e) = q.drain() {
            err.get_or_insert(e);
        }
    }
    err.map_or(Ok(()), Err)
}

/// Runs or enqueues `op` on `stream` (whose context the caller has checked: `ctx`), or records
/// it when the stream is being captured.
pub fn submit(ctx: u64, stream: u64, kind: NodeKind, op: Op) -> Result<(), CUresult> {
    if CAPTURING.load(Ordering::Relaxed) > 0 {
        if let Some(c) = capture_of(stream) {
            return record(&c, kind, op);
        }
        if stream <= 1 {
            legacy_during_capture(ctx)?;
        }
    }
    match queue(stream) {
        Some(q) => {
            q.push(op);
            Ok(())
        }
        None => {
            if stream <= 1 {
                // the legacy stream waits for the blocking streams; their failures stay theirs
                wait_ctx(ctx, true);
            }
            op()
        }
    }
}

/// Runs `op` on `stream` and returns when it is done (a copy to pageable host memory).
pub fn submit_wait(ctx: u64, stream: u64, kind: NodeKind, op: Op) -> Result<(), CUresult> {
    submit(ctx, stream, kind, op)?;
    if capture_of(stream).is_some() {
        return Ok(());
    }
    match queue(stream) {
        Some(q) => q.drain().map_or(Ok(()), Err),
        None => Ok(()),
    }
}

/// Whether `addr` is memory the driver allocated (pinned, managed or device): asynchronous
/// copies read and write it when they run. Other host memory is pageable.
pub fn driver_memory(addr: u64) -> bool {
    state::lock().find(addr, 1).is_some()
}

/// `cuStreamSynchronize`.
pub fn synchronize(stream: u64) -> Result<(), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if capture_of(stream).is_some() {
        invalidate_stream(stream);
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    if stream <= 1 {
        legacy_during_capture(ctx)?;
    }
    let r = match queue(stream) {
        Some(q) => q.drain().map_or(Ok(()), Err),
        None if stream <= 1 => drain_ctx(ctx, true),
        None => Ok(()),
    };
    r?;
    // a kernel fault in the work just finished is sticky for the context
    state::init_lock()?.stream_ctx(stream).map(|_| ())
}

/// `cuStreamQuery`.
pub fn query(stream: u64) -> Result<(), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if capture_of(stream).is_some() {
        invalidate_stream(stream);
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    let busy = match queue(stream) {
        Some(q) => !q.idle(),
        None if stream <= 1 => queues_of(ctx, true).iter().any(|q| !q.idle()),
        None => false,
    };
    if busy {
        Err(CUDA_ERROR_NOT_READY)
    } else {
        Ok(())
    }
}

/// `cuCtxSynchronize` for context `ctx`: every stream's work.
pub fn synchronize_ctx(ctx: u64) -> Result<(), CUresult> {
    if CAPTURING.load(Ordering::Relaxed) > 0 && capture_blocks_sync(ctx) {
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    drain_ctx(ctx, false)
}

// ---- events ----

/// What an event's last record stands for.
#[derive(Clone, Default)]
enum Rec {
    #[default]
    Never,
    /// Recorded on `queue`: complete at `ticket`, when `time` is set.
    Pending {
        queue: Arc<Queue>,
        ticket: u64,
        time: Arc<OnceLock<Instant>>,
    },
    Done(Instant),
    /// Recorded into the capture of stream `stream`.
    Captured {
        stream: u64,
    },
}

static EVENTS: LazyLock<Mutex<HashMap<u64, Rec>>> = LazyLock::new(Default::default);

fn check_event(e: u64) -> Result<(u64, u32), CUresult> {
    let s = state::init_lock()?;
    match s.objects.get(&e) {
        Some(Obj::Event(ev)) => Ok((ev.ctx, ev.flags)),
        _ => Err(CUDA_ERROR_INVALID_HANDLE),
    }
}

/// `cuEventRecord`: the event completes (and takes its time) when the stream's earlier work is
/// done.
pub fn event_record(e: u64, stream: u64) -> Result<(), CUresult> {
    let (ectx, _) = check_event(e)?;
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if ectx != ctx {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    if let Some(c) = capture_of(stream) {
        let op: Op = Arc::new(move || {
            lock(&EVENTS).insert(e, Rec::Done(Instant::now()));
            Ok(())
        });
        record(&c, NodeKind::EventRecord, op)?;
        lock(&EVENTS).insert(e, Rec::Captured { stream });
        return Ok(());
    }
    if stream <= 1 {
        legacy_during_capture(ctx)?;
    }
    let rec = match queue(stream) {
        Some(q) => {
            let time = Arc::new(OnceLock::new());
            let t = time.clone();
            let ticket = q.push(Arc::new(move || {
                let _ = t.set(Instant::now());
                Ok(())
            }));
            Rec::Pending {
                queue: q,
                ticket,
                time,
            }
        }
        None => {
            if stream <= 1 {
                wait_ctx(ctx, true);
            }
            Rec::Done(Instant::now())
        }
    };
    lock(&EVENTS).insert(e, rec);
    Ok(())
}

fn rec_of(e: u64) -> Rec {
    lock(&EVENTS).get(&e).cloned().unwrap_or_default()
}

/// `cuEventQuery`.
pub fn event_query(e: u64) -> Result<(), CUresult> {
    check_event(e)?;
    match rec_of(e) {
        Rec::Pending { queue, ticket, .. } if !queue.done(ticket) => Err(CUDA_ERROR_NOT_READY),
        Rec::Captured { stream } => {
            invalidate_stream(stream);
            Err(CUDA_ERROR_CAPTURED_EVENT)
        }
        _ => Ok(()),
    }
}

/// `cuEventSynchronize`.
pub fn event_synchronize(e: u64) -> Result<(), CUresult> {
    let (ctx, _) = check_event(e)?;
    match rec_of(e) {
        Rec::Pending { queue, ticket, .. } => queue.wait(ticket),
        Rec::Captured { stream } => {
            invalidate_stream(stream);
            return Err(CUDA_ERROR_CAPTURED_EVENT);
        }
        _ => {}
    }
    match state::init_lock()?.ctx(ctx)?.sticky {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// `cuEventElapsedTime`: milliseconds between two completed records.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
pub unsafe fn elapsed(ms: *mut f32, start: u64, end: u64) -> Result<(), CUresult> {
    let (_, fa) = check_event(start)?;
    let (_, fb) = check_event(end)?;
    if ms.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // CU_EVENT_DISABLE_TIMING = 2
    if fa & 2 != 0 || fb & 2 != 0 {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    let time = |e: u64| match rec_of(e) {
        Rec::Never => Err(CUDA_ERROR_INVALID_HANDLE),
        Rec::Captured { .. } => Err(CUDA_ERROR_INVALID_HANDLE),
        Rec::Done(t) => Ok(t),
        Rec::Pending { time, .. } => time.get().copied().ok_or(CUDA_ERROR_NOT_READY),
    };
    let (t0, t1) = (time(start)?, time(end)?);
    let d = if t1 >= t0 {
        (t1 - t0).as_secs_f64()
    } else {
        -(t0 - t1).as_secs_f64()
    };
    put(ms, (d * 1000.0) as f32)
}

/// `cuStreamWaitEvent`: the stream's later work waits for the event's last record.
pub fn wait_event(stream: u64, e: u64) -> Result<(), CUresult> {
    check_event(e)?;
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    let rec = rec_of(e);
    if let Rec::Captured { stream: from } = rec {
        // the stream joins the capture the event was recorded in
        let c = capture_of(from).ok_or(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)?;
        if capture_of(stream).is_none() {
            lock(&CAPTURES).insert(stream, c);
            CAPTURING.fetch_add(1, Ordering::Relaxed);
        }
        return Ok(());
    }
    let Rec::Pending {
        queue: src, ticket, ..
    } = rec
    else {
        return Ok(());
    };
    let wait: Op = Arc::new(move || {
        src.wait(ticket);
        Ok(())
    });
    if let Some(c) = capture_of(stream) {
        // an event recorded outside the capture: nothing to order inside the graph
        let _ = c;
        return Ok(());
    }
    submit(ctx, stream, NodeKind::WaitEvent, wait)
}

/// Forgets event `e`.
pub fn event_destroyed(e: u64) {
    lock(&EVENTS).remove(&e);
}

/// A host function and its argument (`cuLaunchHostFunc`).
#[derive(Clone, Copy)]
pub struct HostFn(
    pub unsafe extern "C" fn(*mut std::ffi::c_void),
    pub *mut std::ffi::c_void,
);

// SAFETY: the driver API hands host functions and their data to the driver to be called on a
// driver thread in stream order; the caller keeps `user` valid until then.
unsafe impl Send for HostFn {}
// SAFETY: as above; the driver only copies the pair and calls the function.
unsafe impl Sync for HostFn {}

impl HostFn {
    pub fn call(&self) {
        // SAFETY: the host's function with the argument it gave, called as the driver API
        // specifies: in stream order, with no lock of ours held.
        unsafe { (self.0)(self.1) }
    }
}

/// A stream callback (`cuStreamAddCallback`): called with the stream and its status.
#[derive(Clone, Copy)]
pub struct Callback(
    pub unsafe extern "C" fn(*mut std::ffi::c_void, CUresult, *mut std::ffi::c_void),
    pub u64,
    pub *mut std::ffi::c_void,
);

// SAFETY: as for `HostFn`.
unsafe impl Send for Callback {}
// SAFETY: as for `HostFn`.
unsafe impl Sync for Callback {}

impl Callback {
    pub fn call(&self, status: CUresult) {
        // SAFETY: the host's callback with its stream and argument, called in stream order
        // with no lock of ours held.
        unsafe { (self.0)(self.1 as *mut std::ffi::c_void, status, self.2) }
    }
}

/// `cuLaunchHostFunc`.
pub fn host_func(stream: u64, f: HostFn) -> Result<(), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    submit(
        ctx,
        stream,
        NodeKind::Host,
        Arc::new(move || {
            f.call();
            Ok(())
        }),
    )
}

/// `cuStreamAddCallback`: the status is the context's sticky error, if any.
pub fn add_callback(stream: u64, cb: Callback) -> Result<(), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if capture_of(stream).is_some() {
        invalidate_stream(stream);
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    submit(
        ctx,
        stream,
        NodeKind::Host,
        Arc::new(move || {
            let status = state::lock()
                .ctx(ctx)
                .ok()
                .and_then(|c| c.sticky)
                .unwrap_or(CUDA_SUCCESS);
            cb.call(status);
            Ok(())
        }),
    )
}

// ---- capture ----

/// `CUstreamCaptureMode`.
pub const MODE_GLOBAL: u32 = 0;
pub const MODE_THREAD_LOCAL: u32 = 1;
pub const MODE_RELAXED: u32 = 2;

/// A capture in progress: the work recorded so far, in submission order.
pub struct Capture {
    pub ctx: u64,
    pub origin: u64,
    pub mode: u32,
    pub thread: std::thread::ThreadId,
    pub id: u64,
    pub nodes: Vec<(NodeKind, Op)>,
    pub invalid: bool,
}

type SharedCapture = Arc<Mutex<Capture>>;

static CAPTURES: LazyLock<Mutex<HashMap<u64, SharedCapture>>> = LazyLock::new(Default::default);
/// Streams in a capture (a fast check for the common case of none).
static CAPTURING: AtomicUsize = AtomicUsize::new(0);
static CAPTURE_IDS: AtomicUsize = AtomicUsize::new(1);

fn capture_of(stream: u64) -> Option<SharedCapture> {
    if CAPTURING.load(Ordering::Relaxed) == 0 {
        return None;
    }
    lock(&CAPTURES).get(&stream).cloned()
}

fn record(c: &SharedCapture, kind: NodeKind, op: Op) -> Result<(), CUresult> {
    let mut c = lock(c);
    if c.invalid {
        return Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    c.nodes.push((kind, op));
    Ok(())
}

fn invalidate_stream(stream: u64) {
    if let Some(c) = capture_of(stream) {
        lock(&c).invalid = true;
    }
}

/// Whether a capture forbids the calling thread's "unsafe" calls (GLOBAL captures of any
/// thread, THREAD_LOCAL captures of this thread) in context `ctx`; such captures are
/// invalidated.
fn capture_blocks_sync(ctx: u64) -> bool {
    let me = std::thread::current().id();
    let mut hit = false;
    for c in lock(&CAPTURES).values() {
        let mut c = lock(c);
        let forbids = match c.mode {
            MODE_GLOBAL => true,
            MODE_THREAD_LOCAL => c.thread == me,
            _ => false,
        };
        if c.ctx == ctx && forbids && thread_mode() != MODE_RELAXED {
            c.invalid = true;
            hit = true;
        }
    }
    hit
}

/// Work on the legacy stream while a blocking stream of the context is captured would join
/// the capture implicitly: CUDA refuses it and invalidates the capture.
fn legacy_during_capture(ctx: u64) -> Result<(), CUresult> {
    legacy_blocked(ctx, true)
}

/// Whether a blocking stream of `ctx` is being captured (`CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`
/// then), invalidating those captures when `invalidate`.
fn legacy_blocked(ctx: u64, invalidate: bool) -> Result<(), CUresult> {
    let caps: Vec<(u64, SharedCapture)> = lock(&CAPTURES)
        .iter()
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    let mut hit = false;
    for (stream, c) in caps {
        let blocking = queue(stream).is_some_and(|q| q.blocking);
        let mut c = lock(&c);
        if c.ctx == ctx && blocking {
            c.invalid |= invalidate;
            hit = true;
        }
    }
    if hit {
        Err(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    } else {
        Ok(())
    }
}

thread_local! {
    /// This thread's capture interaction mode (`cuThreadExchangeStreamCaptureMode`).
    static THREAD_MODE: std::cell::Cell<u32> = const { std::cell::Cell::new(MODE_GLOBAL) };
}

fn thread_mode() -> u32 {
    THREAD_MODE.with(|m| m.get())
}

/// `cuThreadExchangeStreamCaptureMode`.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
pub unsafe fn exchange_mode(mode: *mut u32) -> Result<(), CUresult> {
    let new = get(mode)?;
    if new > MODE_RELAXED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let old = THREAD_MODE.with(|m| m.replace(new));
    put(mode, old)
}

/// `cuStreamBeginCapture`.
pub fn begin_capture(stream: u64, mode: u32) -> Result<(), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if mode > MODE_RELAXED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // the default streams cannot be captured here (the legacy one never can)
    if queue(stream).is_none() {
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    let mut caps = lock(&CAPTURES);
    if caps.contains_key(&stream) {
        return Err(CUDA_ERROR_ILLEGAL_STATE);
    }
    caps.insert(
        stream,
        Arc::new(Mutex::new(Capture {
            ctx,
            origin: stream,
            mode,
            thread: std::thread::current().id(),
            id: CAPTURE_IDS.fetch_add(1, Ordering::Relaxed) as u64,
            nodes: Vec::new(),
            invalid: false,
        })),
    );
    CAPTURING.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

pub const CUDA_ERROR_ILLEGAL_STATE: CUresult = 401;

fn end_captures_of(stream: u64) {
    let Some(c) = capture_of(stream) else { return };
    let mut caps = lock(&CAPTURES);
    let before = caps.len();
    caps.retain(|_, v| !Arc::ptr_eq(v, &c));
    CAPTURING.fetch_sub(before - caps.len(), Ordering::Relaxed);
}

/// `cuStreamEndCapture`: the recorded work, or the error that invalidated it.
pub fn end_capture(stream: u64) -> Result<Vec<(NodeKind, Op)>, CUresult> {
    state::init_lock()?.stream_ctx(stream)?;
    let c = capture_of(stream).ok_or(CUDA_ERROR_ILLEGAL_STATE)?;
    {
        let c = lock(&c);
        if c.origin != stream {
            return Err(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
        }
        if c.mode == MODE_THREAD_LOCAL && c.thread != std::thread::current().id() {
            return Err(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
        }
    }
    end_captures_of(stream);
    let mut c = lock(&c);
    // events recorded into the capture are plain events again
    lock(&EVENTS).retain(|_, r| !matches!(r, Rec::Captured { stream: s } if *s == stream));
    if c.invalid {
        return Err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    Ok(std::mem::take(&mut c.nodes))
}

/// `cuStreamIsCapturing` / `cuStreamGetCaptureInfo`: (status, id).
/// `CUstreamCaptureStatus`: NONE 0, ACTIVE 1, INVALIDATED 2.
pub fn capture_info(stream: u64) -> Result<(u32, u64), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if stream <= 1 && CAPTURING.load(Ordering::Relaxed) > 0 {
        // the capture goes on (as CUDA documents for this query)
        legacy_blocked(ctx, false)?;
    }
    Ok(match capture_of(stream) {
        None => (0, 0),
        Some(c) => {
            let c = lock(&c);
            (if c.invalid { 2 } else { 1 }, c.id)
        }
    })
}

/// Runs recorded work on `stream` in order (`cuGraphLaunch`): as one unit of the stream.
pub fn launch_nodes(stream: u64, nodes: Nodes) -> Result<(), CUresult> {
    let ctx = state::init_lock()?.stream_ctx(stream)?;
    if let Some(c) = capture_of(stream) {
        // a graph launched into a capture: its nodes join it
        for (k, op) in nodes.iter() {
            record(&c, *k, op.clone())?;
        }
        return Ok(());
    }
    let op: Op = Arc::new(move || {
        for (_, op) in nodes.iter() {
            op()?;
        }
        Ok(())
    });
    submit(ctx, stream, NodeKind::Kernel, op)
}

/// Before context `ctx` goes (destroyed or reset): waits for its streams' work and forgets
/// them.
pub fn ctx_gone(ctx: u64) {
    wait_ctx(ctx, false);
    let hs: Vec<u64> = lock(&QUEUES)
        .iter()
        .filter(|(_, q)| q.ctx == ctx)
        .map(|(h, _)| *h)
        .collect();
    for h in hs {
        destroyed(h);
    }
}
