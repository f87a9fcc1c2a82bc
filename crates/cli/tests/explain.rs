//! `ptxvm explain CODE` answers for every code of the registry: the syntax and checker codes,
//! the E05xx codes of loading and the E06xx codes every kernel fault prints.

use std::process::Command;

fn explain(code: &str) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .args(["explain", code])
        .output()
        .expect("runs ptxvm");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_registered_code_is_explained() {
    for (c, title, _) in ptx_diag::codes::all() {
        let (ok, out, err) = explain(c.0);
        assert!(ok, "explain {c}: {err}");
        assert!(out.starts_with(&format!("{c}: {title}\n\n")), "{c}: {out}");
    }
}

#[test]
fn run_fault_codes_are_explained() {
    // written by hand: the codes a run prints, and a word of each explanation
    for (code, word) in [
        ("E0501", "not supported"),
        ("E0502", "name"),
        ("E0601", "out-of-bounds"),
        ("E0602", "aligned"),
        ("E0603", "trap"),
        ("E0604", "deadlock"),
        ("E0605", "barrier"),
        ("E0606", "--max-instructions"),
        ("E0607", "--timeout"),
        ("E0608", "assert"),
        ("E0609", "not supported yet"),
        ("E0610", "fault"),
        ("e0601", "out-of-bounds"),
    ] {
        let (ok, out, err) = explain(code);
        assert!(ok, "explain {code}: {err}");
        assert!(out.contains(word), "explain {code}: {out}");
    }
    let (ok, _, err) = explain("E0999");
    assert!(!ok && err.contains("unknown diagnostic code"), "{err}");
}
