//! The whole run path on arbitrary bytes: parse, check, lower, load, then launch a kernel (launch
//! shape and arguments from the input's `// RUN:` header or synthesised) with a 100,000
//! thread-instruction budget and a 1 s deadline. Any `Err` is fine; a panic, a launch that
//! overruns its deadline by more than 1 s, or peak RSS beyond the kernel's declared needs plus
//! 64 MiB is a bug. The body is the library function `ptxvm::fuzz::run_bytes`, replayed on stable
//! by `crates/runtime/tests/fuzz_replay.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ptxvm::fuzz::run_bytes(data);
});
