//! Decode + parse + check + render arbitrary bytes, as `ptxvm check` does. Diagnostics are fine;
//! a panic (or a diagnostic pointing outside the text) is a bug. The body is the library function
//! `ptx_check::fuzz::check_bytes`, replayed on stable by `crates/check/tests/fuzz_replay.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ptx_check::fuzz::check_bytes(data);
});
