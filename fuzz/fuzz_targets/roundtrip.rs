//! Lex + parse + print + re-parse arbitrary UTF-8 text; any `Err` or panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        if let Err(e) = ptx_syntax::roundtrip_check(src) {
            panic!("round trip failed: {e}");
        }
    }
});
