//! A driver-API fuzzer: [`drive`] turns arbitrary bytes into sequences of driver calls made
//! from one to four host threads on one fresh context, and checks each result against a small
//! reference model of the handles each thread owns.
//!
//! What the model knows, per thread: its allocations (device and pinned host memory, with a
//! shadow copy of their bytes), its streams (live or destroyed) and the context's stickiness.
//! Each thread touches only its own handles, so every result is determined even though the
//! threads run at once (the driver's locks, stream workers and the allocation map are what the
//! concurrency exercises). The model follows CUDA's ordering rules, not ptxvm's schedule:
//! streams are non-blocking and unordered with each other, so a write on a second stream, or a
//! synchronous copy, first waits for the thread's streams (and for the context once a stream
//! with work was destroyed: only that waits for it). Operations: allocate and free (also interior and wild pointers),
//! copies in every direction in and out of range, asynchronous memsets, streams created,
//! synchronized and destroyed (twice), kernels that write, spin or fault, host functions,
//! events, graphs captured from a stream and replayed — also after the memory a node writes
//! was freed — and stream-ordered allocation and free. A faulting kernel makes the context's error sticky; from then on an operation may
//! also answer that error, and contents are no longer compared.
//!
//! A bug is: a panic (libFuzzer reports it), a result the model does not allow, contents that
//! differ from the shadow, a hang (the threads do not finish within [`WATCHDOG`]), or a leak:
//! after `cuCtxDestroy`, an allocation, object, stream queue, graph or executable graph of the
//! context still registered. The cargo-fuzz target `fuzz/fuzz_targets/driver.rs` calls
//! [`drive`]; `tests/fuzz_replay.rs` replays the saved inputs and a fixed-seed random set on
//! stable.

#![allow(clippy::missing_safety_doc)]

use crate::abi::*;
use crate::driver::*;
use crate::graph::*;
use crate::{state, stream};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long all the threads of one input may take.
pub const WATCHDOG: Duration = Duration::from_secs(60);

/// Operations per thread, at most.
const MAX_OPS: usize = 48;

/// Why an input failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

const PTX: &str = ".version 7.5\n.target sm_80\n.address_size 64\n\
.visible .entry ok(.param .u64 p)\n{\n\t.reg .b64 %rd1;\n\t.reg .b32 %r1;\n\
\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 0x12345678;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n\
.visible .entry spin(.param .u32 n)\n{\n\t.reg .b32 %r<3>;\n\t.reg .pred %p;\n\
\tld.param.u32 %r1, [n];\n\tmov.u32 %r2, 0;\nL:\n\tadd.u32 %r2, %r2, 1;\n\
\tsetp.lt.u32 %p, %r2, %r1;\n\t@%p bra L;\n\tret;\n}\n\
.visible .entry fault()\n{\n\t.reg .b64 %rd1;\n\t.reg .b32 %r1;\n\tmov.u64 %rd1, 16;\n\
\tmov.u32 %r1, 1;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n\0";

/// The three kernels' handles (shared by the threads of one context).
#[derive(Clone, Copy)]
struct Kernels {
    ok: usize,
    spin: usize,
    fault: usize,
}

/// An allocation a thread owns, with its expected contents.
struct Buf {
    addr: u64,
    shadow: Vec<u8>,
    host: bool,
    /// The stream of the last asynchronous write not yet waited for: a write on another
    /// stream would race with it (streams are unordered), so the model waits first.
    pending: Option<usize>,
}

/// One thread's view: its handles and the shared stickiness.
struct Model {
    bufs: Vec<Buf>,
    streams: Vec<(usize, bool)>,
    /// A stream was destroyed since the last context synchronize (its work may still run).
    destroyed_with_work: bool,
    sticky: Arc<AtomicBool>,
    k: Kernels,
    log: Vec<String>,
}

/// Reads the input a byte at a time (zeros past its end).
struct Bytes<'a>(&'a [u8], usize);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let b = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        b
    }
    fn more(&self) -> bool {
        self.1 < self.0.len()
    }
}

const H0: Handle = std::ptr::null_mut();

fn handle(h: usize) -> Handle {
    h as Handle
}

/// Sleeps the number of microseconds its argument points at (a host function).
unsafe extern "C" fn nap(user: *mut c_void) {
    std::thread::sleep(Duration::from_micros(user as usize as u64));
}

impl Model {
    /// Checks `got` against `want`; once the context is sticky, its error is allowed too.
    fn expect(&mut self, what: &str, got: CUresult, want: CUresult) -> Result<bool, Violation> {
        self.log.push(format!("{what} = {got}"));
        if got == want {
            return Ok(got == CUDA_SUCCESS);
        }
        if self.sticky.load(Ordering::SeqCst) && got == CUDA_ERROR_ILLEGAL_ADDRESS {
            return Ok(false);
        }
        Err(Violation(format!(
            "{what}: returned {got}, the model expects {want}\nthis thread's calls:\n  {}",
            self.log.join("\n  ")
        )))
    }

    /// Checks an allocation's result (0 bytes is INVALID_VALUE, anything else succeeds) and
    /// adds the allocation it made to the model, zeroed.
    fn allocated(
        &mut self,
        what: &str,
        got: CUresult,
        addr: u64,
        size: usize,
        host: bool,
    ) -> Result<(), Violation> {
        let want = if size == 0 {
            CUDA_ERROR_INVALID_VALUE
        } else {
            CUDA_SUCCESS
        };
        if self.expect(what, got, want)? {
            self.bufs.push(Buf {
                addr,
                shadow: vec![0; size],
                host,
                pending: None,
            });
        }
        Ok(())
    }

    fn sticky(&self) -> bool {
        self.sticky.load(Ordering::SeqCst)
    }

    /// A live stream of this thread (the legacy default stream when it has none).
    fn stream(&self, b: u8) -> usize {
        let live: Vec<usize> = self.streams.iter().filter(|s| s.1).map(|s| s.0).collect();
        if live.is_empty() || b % 4 == 0 {
            0
        } else {
            live[b as usize % live.len()]
        }
    }

    /// A created stream of this thread that is live (`None` if it has none).
    fn created_stream(&self, b: u8) -> Option<usize> {
        let live: Vec<usize> = self.streams.iter().filter(|s| s.1).map(|s| s.0).collect();
        (!live.is_empty()).then(|| live[b as usize % live.len()])
    }

    /// Before an asynchronous write of allocation `i` on stream `s`: waits for an earlier
    /// write on another stream, and notes `s`.
    fn order(&mut self, i: usize, s: usize) -> Result<(), Violation> {
        if self.bufs[i].pending.is_some_and(|p| p != s) {
            self.settle()?;
        }
        self.bufs[i].pending = Some(s);
        Ok(())
    }

    /// Waits for this thread's streams (and, after a stream was destroyed, the context's):
    /// synchronous copies are ordered on the legacy stream only, which does not wait for
    /// non-blocking streams.
    #[allow(unsafe_code)]
    fn settle(&mut self) -> Result<(), Violation> {
        for b in &mut self.bufs {
            b.pending = None;
        }
        let live: Vec<usize> = self.streams.iter().filter(|s| s.1).map(|s| s.0).collect();
        for s in live {
            // SAFETY: a live stream handle of this thread.
            let got = unsafe { cuStreamSynchronize(handle(s)) };
            self.expect(
                &format!("cuStreamSynchronize {s:#x} (before a copy)"),
                got,
                CUDA_SUCCESS,
            )?;
        }
        if self.destroyed_with_work {
            // a destroyed stream's work still runs; only the context's synchronize waits for it
            // SAFETY: no arguments.
            let got = unsafe { cuCtxSynchronize() };
            self.expect("cuCtxSynchronize (before a copy)", got, CUDA_SUCCESS)?;
            self.destroyed_with_work = false;
        }
        Ok(())
    }

    /// Launches `ok(addr)` (one thread writes 0x12345678 at `addr`) on stream `s`.
    #[allow(unsafe_code)]
    fn launch_ok(&self, s: usize, addr: u64) -> CUresult {
        let mut p = addr;
        let mut params = [(&mut p as *mut u64).cast::<c_void>()];
        // SAFETY: a live function and stream handle; one kernelParams entry pointing at a u64
        // for the kernel's one .u64 parameter.
        unsafe {
            cuLaunchKernel(
                handle(self.k.ok),
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                handle(s),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    }

    /// Captures a memset of allocation `i` to `value` and a write of its first word on stream
    /// `s` into an executable graph (`None` when the sticky error stopped it; the capture is
    /// always ended).
    #[allow(unsafe_code)]
    fn capture(&mut self, s: usize, i: usize, value: u8) -> Result<Option<Handle>, Violation> {
        // SAFETY: as in `step`.
        let got = unsafe { cuStreamBeginCapture_v2(handle(s), 1) };
        if !self.expect("cuStreamBeginCapture (thread-local)", got, CUDA_SUCCESS)? {
            return Ok(None);
        }
        let (addr, len) = (self.bufs[i].addr, self.bufs[i].shadow.len());
        let got = unsafe { cuMemsetD8Async(addr, value, len, handle(s)) };
        let mut ok = self.expect("captured memset", got, CUDA_SUCCESS)?;
        let got = self.launch_ok(s, addr);
        ok &= self.expect("captured launch", got, CUDA_SUCCESS)?;
        let mut g: Handle = H0;
        let got = unsafe { cuStreamEndCapture(handle(s), &mut g) };
        if !(self.expect("cuStreamEndCapture", got, CUDA_SUCCESS)? && ok) {
            if !g.is_null() {
                unsafe { cuGraphDestroy(g) };
            }
            return Ok(None);
        }
        let mut x: Handle = H0;
        let got = unsafe { cuGraphInstantiateWithFlags(&mut x, g, 0) };
        let made = self.expect("cuGraphInstantiate", got, CUDA_SUCCESS)?;
        let got = unsafe { cuGraphDestroy(g) };
        self.expect("cuGraphDestroy", got, CUDA_SUCCESS)?;
        Ok(made.then_some(x))
    }

    /// Runs one operation read from `r`.
    // SAFETY (of the calls below): every pointer handed to the driver is a live local or a
    // live allocation of this thread's model with the length the model knows; handles are the
    // driver's own or deliberately stale ones, which it must refuse.
    #[allow(unsafe_code)]
    fn step(&mut self, r: &mut Bytes<'_>) -> Result<(), Violation> {
        let op = r.next() % 21;
        let (a, b, c) = (r.next(), r.next(), r.next());
        let pick = |n: usize, x: u8| (x as usize) % n.max(1);
        match op {
            // allocate: 0 bytes is INVALID_VALUE
            0 | 17 => {
                let size = [0usize, 1, 4, 64, 300, 4096][a as usize % 6];
                let host = op == 17;
                let mut addr = 0u64;
                let got = if host {
                    let mut p: *mut c_void = std::ptr::null_mut();
                    let g = unsafe { cuMemHostAlloc(&mut p, size, 0) };
                    addr = p as u64;
                    g
                } else {
                    unsafe { cuMemAlloc_v2(&mut addr, size) }
                };
                self.allocated(&format!("alloc {size} host={host}"), got, addr, size, host)?;
            }
            // free a live allocation
            1 => {
                if self.bufs.is_empty() {
                    return Ok(());
                }
                let buf = self.bufs.swap_remove(pick(self.bufs.len(), a));
                let got = free(&buf);
                self.expect(&format!("free {:#x}", buf.addr), got, CUDA_SUCCESS)?;
            }
            // free what is not an allocation: an interior pointer, a wild one, NULL (success)
            2 => {
                let (addr, want) = match (a % 3, self.bufs.is_empty()) {
                    (0, false) => {
                        let buf = &self.bufs[pick(self.bufs.len(), b)];
                        if buf.shadow.len() < 2 || buf.host {
                            return Ok(());
                        }
                        (buf.addr + 1, CUDA_ERROR_INVALID_VALUE)
                    }
                    (1, _) => (0, CUDA_SUCCESS),
                    _ => (0x10 + (c as u64) * 4096, CUDA_ERROR_INVALID_VALUE),
                };
                let got = unsafe { cuMemFree_v2(addr) };
                self.expect(&format!("free {addr:#x} (not an allocation)"), got, want)?;
            }
            // host to device, in range or past the end
            3 => {
                if self.bufs.is_empty() {
                    return Ok(());
                }
                self.settle()?;
                let i = pick(self.bufs.len(), a);
                let size = self.bufs[i].shadow.len();
                let off = pick(size, b);
                let len = (c as usize) % (size - off + 3);
                let data: Vec<u8> = (0..len).map(|k| (k as u8) ^ c).collect();
                let dst = self.bufs[i].addr + off as u64;
                let got = unsafe { cuMemcpyHtoD_v2(dst, data.as_ptr().cast(), len) };
                let fits = off + len <= size;
                let want = if fits {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                if self.expect(&format!("HtoD {dst:#x} {len}"), got, want)? && fits {
                    self.bufs[i].shadow[off..off + len].copy_from_slice(&data);
                }
            }
            // device to host, compared with the shadow
            4 => {
                if self.bufs.is_empty() {
                    return Ok(());
                }
                self.settle()?;
                let i = pick(self.bufs.len(), a);
                let size = self.bufs[i].shadow.len();
                let off = pick(size, b);
                let len = (c as usize) % (size - off + 3);
                let mut out = vec![0u8; len];
                let src = self.bufs[i].addr + off as u64;
                let got = unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), src, len) };
                let fits = off + len <= size;
                let want = if fits {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                if self.expect(&format!("DtoH {src:#x} {len}"), got, want)?
                    && fits
                    && !self.sticky()
                    && out[..] != self.bufs[i].shadow[off..off + len]
                {
                    return Err(Violation(format!(
                        "DtoH {src:#x} {len}: read {:02x?}, the model holds {:02x?}\nthis thread's calls:\n  {}",
                        out,
                        &self.bufs[i].shadow[off..off + len],
                        self.log.join("\n  ")
                    )));
                }
            }
            // device to device between two allocations of this thread
            5 => {
                if self.bufs.is_empty() {
                    return Ok(());
                }
                self.settle()?;
                let (i, j) = (pick(self.bufs.len(), a), pick(self.bufs.len(), b));
                let n = self.bufs[i].shadow.len().min(self.bufs[j].shadow.len());
                let len = (c as usize) % (n + 3);
                let (dst, src) = (self.bufs[i].addr, self.bufs[j].addr);
                let got = unsafe { cuMemcpyDtoD_v2(dst, src, len) };
                let fits = len <= n;
                let want = if fits {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_VALUE
                };
                if self.expect(&format!("DtoD {dst:#x} {src:#x} {len}"), got, want)? && fits {
                    let data = self.bufs[j].shadow[..len].to_vec();
                    self.bufs[i].shadow[..len].copy_from_slice(&data);
                }
            }
            // an asynchronous memset on one of this thread's streams
            6 => {
                if self.bufs.is_empty() {
                    return Ok(());
                }
                let i = pick(self.bufs.len(), a);
                let s = self.stream(b);
                self.order(i, s)?;
                let len = self.bufs[i].shadow.len();
                let got = unsafe { cuMemsetD8Async(self.bufs[i].addr, c, len, handle(s)) };
                if self.expect(
                    &format!("memset {:#x} on {s:#x}", self.bufs[i].addr),
                    got,
                    CUDA_SUCCESS,
                )? {
                    self.bufs[i].shadow.fill(c);
                }
            }
            7 => {
                let mut h: Handle = H0;
                // non-blocking: the legacy stream other threads use neither waits for them nor
                // joins their captures, so each thread's results stay its own
                let got = unsafe { cuStreamCreate(&mut h, 1) };
                if self.expect("cuStreamCreate", got, CUDA_SUCCESS)? {
                    self.streams.push((h as usize, true));
                }
            }
            // destroy a stream (a destroyed one again: INVALID_HANDLE)
            8 => {
                if self.streams.is_empty() {
                    return Ok(());
                }
                let k = pick(self.streams.len(), a);
                let (s, live) = self.streams[k];
                let got = unsafe { cuStreamDestroy_v2(handle(s)) };
                let want = if live {
                    CUDA_SUCCESS
                } else {
                    CUDA_ERROR_INVALID_HANDLE
                };
                self.expect(&format!("cuStreamDestroy {s:#x}"), got, want)?;
                self.streams[k].1 = false;
                self.destroyed_with_work |= live;
            }
            9 => {
                let s = self.stream(a);
                let got = unsafe { cuStreamSynchronize(handle(s)) };
                self.expect(&format!("cuStreamSynchronize {s:#x}"), got, CUDA_SUCCESS)?;
            }
            // a kernel writes 0x12345678 into the first word of an allocation
            10 => {
                let Some(i) = (!self.bufs.is_empty()).then(|| pick(self.bufs.len(), a)) else {
                    return Ok(());
                };
                if self.bufs[i].shadow.len() < 4 {
                    return Ok(());
                }
                let s = self.stream(b);
                self.order(i, s)?;
                let got = self.launch_ok(s, self.bufs[i].addr);
                if self.expect(
                    &format!("launch ok({:#x}) on {s:#x}", self.bufs[i].addr),
                    got,
                    CUDA_SUCCESS,
                )? {
                    self.bufs[i].shadow[..4].copy_from_slice(&0x1234_5678u32.to_le_bytes());
                }
            }
            11 => {
                let s = self.stream(a);
                let mut n = u32::from(b) * 64;
                let mut params = [(&mut n as *mut u32).cast::<c_void>()];
                let got = unsafe {
                    cuLaunchKernel(
                        handle(self.k.spin),
                        1,
                        1,
                        1,
                        32,
                        1,
                        1,
                        0,
                        handle(s),
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                };
                self.expect(&format!("launch spin({n}) on {s:#x}"), got, CUDA_SUCCESS)?;
            }
            // a kernel that faults: the context's error is sticky from here on
            12 => {
                if a % 4 != 0 {
                    return Ok(());
                }
                let s = self.stream(b);
                self.sticky.store(true, Ordering::SeqCst);
                let got = unsafe {
                    cuLaunchKernel(
                        handle(self.k.fault),
                        1,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        handle(s),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    )
                };
                // (the launch itself may already report it, on the default stream)
                self.expect(&format!("launch fault() on {s:#x}"), got, CUDA_SUCCESS)?;
            }
            13 => {
                let s = self.stream(a);
                let us = (b as usize % 4) * 250;
                let got = unsafe { cuLaunchHostFunc(handle(s), Some(nap), us as *mut c_void) };
                self.expect(&format!("cuLaunchHostFunc on {s:#x}"), got, CUDA_SUCCESS)?;
            }
            // an event recorded, waited for and destroyed
            14 => {
                let mut e: Handle = H0;
                let got = unsafe { cuEventCreate(&mut e, u32::from(a % 2) * 2) };
                if !self.expect("cuEventCreate", got, CUDA_SUCCESS)? {
                    return Ok(());
                }
                let s = self.stream(b);
                let got = unsafe { cuEventRecord(e, handle(s)) };
                self.expect(&format!("cuEventRecord on {s:#x}"), got, CUDA_SUCCESS)?;
                let got = unsafe { cuEventSynchronize(e) };
                self.expect("cuEventSynchronize", got, CUDA_SUCCESS)?;
                let got = unsafe { cuEventDestroy_v2(e) };
                self.expect("cuEventDestroy", got, CUDA_SUCCESS)?;
                let got = unsafe { cuEventDestroy_v2(e) };
                self.expect("cuEventDestroy again", got, CUDA_ERROR_INVALID_HANDLE)?;
            }
            // a memset and a kernel captured into a graph, replayed; for op 16 the memory is
            // freed first, and the replays must fail without writing
            15 | 16 => {
                let (Some(s), false) = (self.created_stream(a), self.bufs.is_empty()) else {
                    return Ok(());
                };
                let i = pick(self.bufs.len(), b);
                if self.bufs[i].shadow.len() < 4 {
                    return Ok(());
                }
                self.order(i, s)?;
                let Some(x) = self.capture(s, i, c)? else {
                    return Ok(());
                };
                let freed = op == 16;
                if freed {
                    let buf = self.bufs.swap_remove(i);
                    let got = free(&buf);
                    self.expect("free before the replay", got, CUDA_SUCCESS)?;
                }
                let mut ran = true;
                // a replay after the free runs on the legacy stream, which runs it at once and
                // returns its failure: queued on a stream, the failure would be reported by
                // whichever synchronize comes first, another thread's cuCtxSynchronize included
                let on = if freed { 0 } else { s };
                for round in 0..2 {
                    let mut got = unsafe { cuGraphLaunch(x, handle(on)) };
                    if got == CUDA_SUCCESS {
                        got = unsafe { cuStreamSynchronize(handle(on)) };
                    }
                    let want = if freed {
                        CUDA_ERROR_INVALID_VALUE
                    } else {
                        CUDA_SUCCESS
                    };
                    ran &= self.expect(
                        &format!("graph replay {round} (memory freed: {freed})"),
                        got,
                        want,
                    )?;
                }
                if !freed && ran {
                    self.bufs[i].shadow.fill(c);
                    self.bufs[i].shadow[..4].copy_from_slice(&0x1234_5678u32.to_le_bytes());
                }
                let got = unsafe { cuGraphExecDestroy(x) };
                self.expect("cuGraphExecDestroy", got, CUDA_SUCCESS)?;
            }
            // stream-ordered allocation on one of this thread's streams (or the legacy one)
            19 => {
                let size = [0usize, 1, 64, 4096][a as usize % 4];
                let s = self.stream(b);
                let mut addr = 0u64;
                let got = unsafe { cuMemAllocAsync(&mut addr, size, handle(s)) };
                self.allocated(
                    &format!("cuMemAllocAsync {size} on {s:#x}"),
                    got,
                    addr,
                    size,
                    false,
                )?;
            }
            // stream-ordered free of a device allocation, after the writes pending on it
            20 => {
                let devices: Vec<usize> = (0..self.bufs.len())
                    .filter(|&i| !self.bufs[i].host)
                    .collect();
                if devices.is_empty() {
                    return Ok(());
                }
                let i = devices[pick(devices.len(), a)];
                let s = self.stream(b);
                self.order(i, s)?;
                let buf = self.bufs.swap_remove(i);
                let got = unsafe { cuMemFreeAsync(buf.addr, handle(s)) };
                self.expect(
                    &format!("cuMemFreeAsync {:#x} on {s:#x}", buf.addr),
                    got,
                    CUDA_SUCCESS,
                )?;
            }
            _ => {
                let got = unsafe { cuCtxSynchronize() };
                if self.expect("cuCtxSynchronize", got, CUDA_SUCCESS)? {
                    self.destroyed_with_work = false;
                }
            }
        }
        Ok(())
    }
}

/// Frees an allocation of the model (device or pinned host memory).
#[allow(unsafe_code)]
fn free(buf: &Buf) -> CUresult {
    // SAFETY: an address the driver returned for this kind of allocation.
    unsafe {
        if buf.host {
            cuMemFreeHost(buf.addr as *mut c_void)
        } else {
            cuMemFree_v2(buf.addr)
        }
    }
}

/// What is still registered for context `ctx`: (allocations, objects, stream queues, graphs
/// and executable graphs).
fn registered(ctx: u64) -> (usize, usize, usize, usize) {
    let s = state::lock();
    let allocs = s.allocs.values().filter(|a| a.ctx == ctx).count();
    let objects = s
        .objects
        .iter()
        .filter(|(&h, o)| h == ctx || state::owner(o) == Some(ctx))
        .count();
    drop(s);
    (
        allocs,
        objects,
        stream::queues_of_ctx(ctx),
        graphs_of_ctx(ctx),
    )
}

/// Runs the driver calls `data` describes (see the module documentation).
#[allow(unsafe_code)]
pub fn drive(data: &[u8]) -> Result<(), Violation> {
    let v = |m: &str| Violation(m.to_string());
    // SAFETY: out-pointers to locals; the image is NUL-terminated.
    let (ctx, kernels) = unsafe {
        if cuInit(0) != CUDA_SUCCESS {
            return Err(v("cuInit failed"));
        }
        let mut ctx: Handle = H0;
        if cuCtxCreate_v2(&mut ctx, 0, 0) != CUDA_SUCCESS {
            return Err(v("cuCtxCreate failed"));
        }
        let mut m: Handle = H0;
        if cuModuleLoadData(&mut m, PTX.as_ptr().cast()) != CUDA_SUCCESS {
            return Err(v("cuModuleLoadData failed"));
        }
        let mut f = [H0; 3];
        for (k, name) in [c"ok", c"spin", c"fault"].iter().enumerate() {
            if cuModuleGetFunction(&mut f[k], m, name.as_ptr()) != CUDA_SUCCESS {
                return Err(v("cuModuleGetFunction failed"));
            }
        }
        (
            ctx as usize,
            Kernels {
                ok: f[0] as usize,
                spin: f[1] as usize,
                fault: f[2] as usize,
            },
        )
    };
    let threads = 1 + data.first().copied().unwrap_or(0) as usize % 4;
    let mut programs: Vec<Vec<u8>> = vec![Vec::new(); threads];
    for (k, op) in data.get(1..).unwrap_or(&[]).chunks(4).enumerate() {
        if programs[k % threads].len() < 4 * MAX_OPS {
            programs[k % threads].extend_from_slice(op);
        }
    }
    let sticky = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    for (t, program) in programs.into_iter().enumerate() {
        let (tx, sticky) = (tx.clone(), sticky.clone());
        std::thread::spawn(move || {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: a live context handle.
                let got = unsafe { cuCtxSetCurrent(handle(ctx)) };
                if got != CUDA_SUCCESS {
                    return Err(Violation(format!("thread {t}: cuCtxSetCurrent = {got}")));
                }
                let mut m = Model {
                    bufs: Vec::new(),
                    streams: Vec::new(),
                    destroyed_with_work: false,
                    sticky,
                    k: kernels,
                    log: Vec::new(),
                };
                let mut r = Bytes(&program, 0);
                while r.more() {
                    m.step(&mut r)
                        .map_err(|e| Violation(format!("thread {t}: {}", e.0)))?;
                }
                Ok(())
            }));
            let _ = tx.send(run.unwrap_or_else(|_| Err(Violation(format!("thread {t} panicked")))));
        });
    }
    drop(tx);
    let deadline = std::time::Instant::now() + WATCHDOG;
    for _ in 0..threads {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(r) => r?,
            Err(_) => {
                return Err(v(&format!(
                    "hang: the threads did not finish within {} s",
                    WATCHDOG.as_secs()
                )))
            }
        }
    }
    // SAFETY: a live context handle.
    let got = unsafe { cuCtxDestroy_v2(handle(ctx)) };
    if got != CUDA_SUCCESS {
        return Err(v(&format!("cuCtxDestroy = {got}")));
    }
    let left = registered(ctx as u64);
    if left != (0, 0, 0, 0) {
        return Err(v(&format!(
            "leak: after cuCtxDestroy the context still has {} allocations, {} objects, {} \
             stream queues and {} graphs or executable graphs",
            left.0, left.1, left.2, left.3
        )));
    }
    Ok(())
}

/// A fixed-length input from a seed (for the replay test's random set and the campaign's first
/// corpus): `ops` operations on `1 + seed % 4` threads.
pub fn input_from_seed(seed: u64, ops: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = vec![(seed % 4) as u8];
    for _ in 0..ops * 4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push((x >> 24) as u8);
    }
    out
}
