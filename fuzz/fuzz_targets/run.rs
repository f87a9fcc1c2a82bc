//! The whole run path on arbitrary bytes: parse, check, lower, load, then launch a kernel (launch
//! shape and arguments from the input's `// RUN:` header or synthesised) with a 100,000
//! thread-instruction budget and a 1 s deadline. Any `Err` is fine; a panic, a launch that
//! overruns its deadline by more than 1 s, or peak RSS beyond the kernel's declared needs plus
//! 64 MiB is a bug. The body is the library function `ptxvm::fuzz::run_bytes`, replayed on stable
//! by `crates/runtime/tests/fuzz_replay.rs`.
//!
//! Half of the mutations are libFuzzer's own (bytes, dictionary), half structure-aware
//! (`ptx_check::fuzz::mutate`: whole lines, operands, immediates, state spaces, types,
//! registers, the RUN launch), which reach valid-but-odd programs that byte flips rarely build.
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target};

fuzz_target!(|data: &[u8]| {
    ptxvm::fuzz::run_bytes(data);
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = ptx_check::fuzz::Rng::new(seed as u64);
    if rng.below(2) == 0 {
        libfuzzer_sys::fuzzer_mutate(data, size, max_size)
    } else {
        ptx_check::fuzz::mutate_in_place(&mut rng, data, size, max_size)
    }
});
