//! The printf FIFO: a launch's printf output, streamed in CTA order with bounded memory.
//!
//! CUDA keeps device-side printf records in a FIFO of `cudaLimitPrintfFifoSize` bytes (1 MiB by
//! default) that the host drains at synchronisation points; once it is full, further records are
//! lost. ptxvm keeps the same bound on memory but loses nothing and keeps the output
//! deterministic:
//!
//! - The output is always in CTA order (CTA 0's records, then CTA 1's, …; within a CTA, in
//!   execution order), whatever the number of worker threads.
//! - The lowest CTA that has not finished (the *head*) writes its records straight to the sink,
//!   through a write buffer of at most [`STAGE_BYTES`] that is flushed when full, when 50 ms
//!   have passed since the last flush, and when the launch ends.
//! - A later CTA's records wait in the FIFO until every CTA before it has finished. At most
//!   `capacity` bytes wait at once; a worker whose CTA would exceed that pauses (the CTA stalls,
//!   as a GPU's SM stalls on a full queue) until the head moves on and makes room, or the launch
//!   is cancelled. The head never waits, so the launch always progresses: a full FIFO costs
//!   parallelism, never output. A record larger than the whole FIFO waits until its CTA becomes
//!   the head.
//!
//! Memory is thus bounded by `capacity` + [`STAGE_BYTES`] + one bit per CTA that finished ahead
//! of the head, whatever the kernel prints. Without a sink (the Rust API's default) the output is
//! collected in memory instead, for [`crate::launch::LaunchStats::stdout`].

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The FIFO size when none is given: 1 MiB, CUDA's default `cudaLimitPrintfFifoSize`.
pub const DEFAULT_PRINTF_FIFO: usize = 1 << 20;

/// The head CTA's write buffer: flushed to the sink when it holds this many bytes.
pub const STAGE_BYTES: usize = 64 * 1024;

/// The head CTA's write buffer is also flushed when this long has passed since the last flush,
/// so that a kernel printing slowly shows its output as it goes.
const STAGE_AGE: Duration = Duration::from_millis(50);

/// Where the output goes.
pub type Sink<'w> = &'w mut (dyn Write + Send);

/// A launch's printf FIFO (see the module documentation).
pub struct PrintfFifo<'w> {
    state: Mutex<State<'w>>,
    room: Condvar,
    capacity: usize,
}

struct State<'w> {
    /// The lowest CTA not yet finished.
    head: u64,
    /// CTAs at or above `base` that have finished: bit `i` of the deque's bits is CTA `base + i`.
    finished: VecDeque<u64>,
    /// A multiple of 64, at most `head`.
    base: u64,
    /// Records of CTAs above the head, waiting for their turn.
    waiting: BTreeMap<u64, Vec<u8>>,
    /// Bytes in `waiting`.
    waiting_bytes: usize,
    /// The head's records not yet written.
    stage: Vec<u8>,
    last_flush: Instant,
    sink: Option<Sink<'w>>,
    /// The output, when there is no sink.
    collected: Vec<u8>,
    /// The first error writing to the sink; later output is discarded.
    write_error: Option<std::io::Error>,
    /// Times a CTA waited for room.
    stalls: u64,
}

/// What the FIFO did, at the end of a launch.
#[derive(Debug, Default)]
pub struct FifoEnd {
    /// The output, when there was no sink.
    pub collected: Vec<u8>,
    /// The first error writing to the sink (output after it was discarded).
    pub write_error: Option<std::io::Error>,
    /// Times a CTA waited for room in the FIFO.
    pub stalls: u64,
}

/// What the executor sees of the FIFO (a trait object, so that [`crate::exec::LaunchShared`]
/// needs no lifetime for the sink).
pub trait Records: Sync {
    /// [`PrintfFifo::record`].
    fn record(&self, cta: u64, bytes: &[u8], cancel: &AtomicBool) -> Result<(), Cancelled>;
}

impl Records for PrintfFifo<'_> {
    fn record(&self, cta: u64, bytes: &[u8], cancel: &AtomicBool) -> Result<(), Cancelled> {
        PrintfFifo::record(self, cta, bytes, cancel)
    }
}

/// A record could not be kept because the launch was cancelled while it waited for room.
#[derive(Debug)]
pub struct Cancelled;

impl<'w> PrintfFifo<'w> {
    /// A FIFO of `capacity` bytes (at least 1) writing to `sink`, or collecting without one.
    pub fn new(capacity: usize, sink: Option<Sink<'w>>) -> Self {
        PrintfFifo {
            state: Mutex::new(State {
                head: 0,
                finished: VecDeque::new(),
                base: 0,
                waiting: BTreeMap::new(),
                waiting_bytes: 0,
                stage: Vec::new(),
                last_flush: Instant::now(),
                sink,
                collected: Vec::new(),
                write_error: None,
                stalls: 0,
            }),
            room: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<'w>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One printf record of CTA `cta`. Waits while the FIFO is full and `cta` is not the head;
    /// `Err` when `cancel` was set meanwhile.
    pub fn record(&self, cta: u64, bytes: &[u8], cancel: &AtomicBool) -> Result<(), Cancelled> {
        let mut st = self.lock();
        let mut waited = false;
        loop {
            if cta == st.head {
                st.stage.extend_from_slice(bytes);
                if st.stage.len() >= STAGE_BYTES || st.last_flush.elapsed() >= STAGE_AGE {
                    st.flush();
                }
                return Ok(());
            }
            if st.waiting_bytes + bytes.len() <= self.capacity {
                st.waiting_bytes += bytes.len();
                st.waiting.entry(cta).or_default().extend_from_slice(bytes);
                return Ok(());
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(Cancelled);
            }
            if !waited {
                st.stalls += 1;
                waited = true;
            }
            // woken when the head moves; the timeout notices a cancellation
            st = match self.room.wait_timeout(st, Duration::from_millis(10)) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// CTA `cta` has finished (successfully or not): when it was the head, the head moves to
    /// the next unfinished CTA and the records of the CTAs it passes are written.
    pub fn finish(&self, cta: u64) {
        let mut st = self.lock();
        if cta < st.head {
            return;
        }
        let bit = cta - st.base;
        let word = (bit / 64) as usize;
        if st.finished.len() <= word {
            st.finished.resize(word + 1, 0);
        }
        st.finished[word] |= 1 << (bit % 64);
        if cta != st.head {
            return;
        }
        let before = st.waiting_bytes;
        loop {
            let bit = st.head - st.base;
            let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
            if st.finished.get(word).is_none_or(|w| w & mask == 0) {
                break;
            }
            st.head += 1;
            if st.head - st.base == 64 {
                st.finished.pop_front();
                st.base += 64;
            }
            let head = st.head;
            if let Some(b) = st.waiting.remove(&head) {
                st.waiting_bytes -= b.len();
                st.stage.extend_from_slice(&b);
                if st.stage.len() >= STAGE_BYTES {
                    st.flush();
                }
            }
        }
        if st.last_flush.elapsed() >= STAGE_AGE {
            st.flush();
        }
        if st.waiting_bytes < before {
            self.room.notify_all();
        }
    }

    /// Writes everything still held, in CTA order (after a failed launch some CTAs never
    /// finished), and returns the outcome.
    pub fn end(self) -> FifoEnd {
        let mut st = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        for (_, b) in std::mem::take(&mut st.waiting) {
            st.stage.extend_from_slice(&b);
            if st.stage.len() >= STAGE_BYTES {
                st.flush();
            }
        }
        st.flush();
        FifoEnd {
            collected: st.collected,
            write_error: st.write_error,
            stalls: st.stalls,
        }
    }
}

impl State<'_> {
    fn flush(&mut self) {
        self.last_flush = Instant::now();
        if self.stage.is_empty() {
            return;
        }
        match &mut self.sink {
            None => self.collected.extend_from_slice(&self.stage),
            Some(w) => {
                if self.write_error.is_none() {
                    if let Err(e) = w.write_all(&self.stage).and_then(|_| w.flush()) {
                        self.write_error = Some(e);
                    }
                }
            }
        }
        self.stage.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cta_order_and_bound() {
        let cancel = AtomicBool::new(false);
        let f = PrintfFifo::new(8, None);
        f.record(2, b"c", &cancel).unwrap();
        f.record(1, b"b", &cancel).unwrap();
        f.record(0, b"a", &cancel).unwrap();
        f.finish(2);
        f.finish(0);
        f.record(1, b"B", &cancel).unwrap();
        f.finish(1);
        assert_eq!(f.end().collected, b"abBc");
    }

    #[test]
    fn a_full_fifo_waits_until_cancelled() {
        let cancel = AtomicBool::new(true);
        let f = PrintfFifo::new(4, None);
        f.record(1, b"1234", &cancel).unwrap();
        assert!(f.record(1, b"5", &cancel).is_err());
        // the head never waits
        f.record(0, b"0123456789", &cancel).unwrap();
        assert_eq!(f.end().collected, b"01234567891234");
    }

    #[test]
    fn head_moves_past_many_finished_ctas() {
        let cancel = AtomicBool::new(false);
        let f = PrintfFifo::new(1 << 20, None);
        for k in (0..1000u64).rev() {
            f.record(k, format!("{k} ").as_bytes(), &cancel).unwrap();
            f.finish(k);
        }
        let want: String = (0..1000).map(|k| format!("{k} ")).collect();
        assert_eq!(f.end().collected, want.as_bytes());
    }
}
