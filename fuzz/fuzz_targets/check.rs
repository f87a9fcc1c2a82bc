//! Decode + parse + check + render arbitrary bytes, as `ptxvm check` does. Diagnostics are fine;
//! a panic (or a diagnostic pointing outside the text) is a bug. The body is the library function
//! `ptx_check::fuzz::check_bytes`, replayed on stable by `crates/check/tests/fuzz_replay.rs`.
//!
//! Half of the mutations are libFuzzer's own (bytes, dictionary), half structure-aware
//! (`ptx_check::fuzz::mutate`).
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target};

fuzz_target!(|data: &[u8]| {
    ptx_check::fuzz::check_bytes(data);
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    ptx_mutate(data, size, max_size, seed)
});

fn ptx_mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let mut rng = ptx_check::fuzz::Rng::new(seed as u64);
    if rng.below(2) == 0 {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    let text = String::from_utf8_lossy(&data[..size]).into_owned();
    let mut out = text.clone();
    for _ in 0..1 + rng.below(3) {
        out = ptx_check::fuzz::mutate(&mut rng, &out, &text);
    }
    let n = out.len().min(max_size);
    data[..n].copy_from_slice(&out.as_bytes()[..n]);
    n
}
