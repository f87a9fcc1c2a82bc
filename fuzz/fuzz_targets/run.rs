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
