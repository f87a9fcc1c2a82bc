//! Every instruction example of the ISA reference (kept by the table: `ptx_isa::examples`) is
//! accepted by the parser and the checker.
//!
//! The examples are fragments: they use registers without declaring them (`add.u32 x,y,z;`),
//! branch to labels defined elsewhere, and mix declarations and prose. The test takes every
//! statement of an example that is an instruction (declarations, labels, comments and the
//! `...` of elided code dropped; a statement spanning lines joined), declares each name it uses
//! as the instruction's operand roles want it (a register of the role's type, a `.pred` for
//! predicates, a 64-bit register inside an address, a label at the end of the kernel), wraps it
//! in a kernel, and checks it under a few headers, newest first; it passes if one gives no
//! error. The names' types come from the same roles the checker uses, so what this test adds
//! over the mechanical form test (`forms.rs`) is independent input: real modifier spellings
//! and combinations, operand counts, immediates and addresses as NVIDIA writes them.
//!
//! Statements that cannot pass this way are listed in `tests/spec/example-exceptions.txt` as
//! `STATEMENT ## reason`; as with the form exceptions, the list must match exactly. Run with
//! `--nocapture` for the counts; `EXAMPLES_LIST=1` prints the unexpected failures in the
//! list's format.

use ptx_check::examples::{accepted, instruction_statements};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn exceptions() -> BTreeMap<String, String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/spec/example-exceptions.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (s, why) = l.split_once(" ## ")?;
            Some((s.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

#[test]
fn every_example_is_accepted() {
    let all = instruction_statements();
    assert!(all.len() > 500, "{}", all.len());
    let mut failing = BTreeMap::new();
    for s in &all {
        if let Err(e) = accepted(s) {
            failing.insert(s.clone(), e);
        }
    }
    let listed = exceptions();
    println!(
        "reference examples: {} statements, {} accepted, {} listed as exceptions",
        all.len(),
        all.len() - failing.len(),
        failing.len()
    );
    let mut msg = String::new();
    for (s, e) in &failing {
        if !listed.contains_key(s) {
            let _ = writeln!(msg, "example `{s}` is rejected: {e}");
            if std::env::var_os("EXAMPLES_LIST").is_some() {
                println!("{s} ## {e}");
            }
        }
    }
    for s in listed.keys() {
        if !failing.contains_key(s) {
            let _ = writeln!(
                msg,
                "example `{s}` is listed in tests/spec/example-exceptions.txt but is accepted: remove it"
            );
        }
    }
    assert!(msg.is_empty(), "{msg}");
}
