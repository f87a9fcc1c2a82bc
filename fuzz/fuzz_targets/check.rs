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
    let mut rng = ptx_check::fuzz::Rng::new(seed as u64);
    if rng.below(2) == 0 {
        libfuzzer_sys::fuzzer_mutate(data, size, max_size)
    } else {
        ptx_check::fuzz::mutate_in_place(&mut rng, data, size, max_size)
    }
});
