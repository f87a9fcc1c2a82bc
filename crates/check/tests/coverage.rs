//! `docs/isa-coverage.md` is generated from the `ptx-isa` table with the checker's support per
//! entry (`ptx_check::support`); this test keeps it in step. `PTX_BLESS=1` rewrites it.
//!
//! It lives here rather than in `ptx-isa` because the table crate cannot see the checker. The
//! "execute" column says `-` until the interpreter reports its support; `ptxvm doc --list
//! --coverage` passes the same two functions.

use ptx_isa::{coverage_markdown, Stages};

#[test]
fn coverage_page_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/isa-coverage.md");
    let stages = Stages {
        check: &ptx_check::support,
        execute: &ptx_isa::unsupported,
    };
    let want = coverage_markdown(&stages);
    if std::env::var_os("PTX_BLESS").is_some_and(|v| v != "0") {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/isa-coverage.md is out of date; rerun with PTX_BLESS=1"
    );
}
