//! Random sequences of CUDA driver calls from one to four host threads on a fresh context
//! (allocations, copies in and out of range, memsets, streams, events, host functions, kernels
//! that write, spin or fault, graphs replayed, also after their memory was freed), each result
//! checked against a reference model of the handles each thread owns; then the context is
//! destroyed and nothing of it may stay registered. A panic, a result the model forbids, a hang
//! (60 s watchdog) or a leak is a bug. The body is the library function `cuda::fuzz::drive`
//! (crates/cuda/src/fuzz.rs), replayed on stable by `crates/cuda/tests/fuzz_replay.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(v) = cuda::fuzz::drive(data) {
        panic!("{}", v.0);
    }
});
