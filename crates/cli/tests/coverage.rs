//! `docs/isa-coverage.md` is generated from the `ptx-isa` table with the checker's and the
//! interpreter's support per entry (`ptx_check::support`, `ptxvm::coverage::executes`), the same
//! two functions `ptxvm doc --list --coverage` uses; this test keeps the page in step
//! (`PTX_BLESS=1` rewrites it). It also checks that every instruction the interpreter claims to
//! execute is exercised by at least one run test under `tests/run/`.

mod common;

use common::ptx_files;
use ptx_isa::{coverage_markdown, Stages};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn coverage_page_is_current() {
    let path = root().join("docs/isa-coverage.md");
    let stages = Stages {
        check: &ptx_check::support,
        execute: &ptxvm::coverage::executes,
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

/// The opcode (with its leading modifiers, `shfl.sync`) of every instruction line of `text`.
fn instruction_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for line in text.lines() {
        let mut l = line.split("//").next().unwrap_or("").trim();
        if let Some(rest) = l.strip_prefix('@') {
            l = rest
                .split_once(char::is_whitespace)
                .map_or("", |x| x.1)
                .trim();
        }
        // a label (`$L__BB0_2:`; identifiers have no dots or spaces, `L2::x` is a modifier)
        if let Some((label, rest)) = l.split_once(':') {
            if !label.is_empty()
                && !rest.starts_with(':')
                && !label.contains(|c: char| c == '.' || c.is_whitespace())
            {
                l = rest.trim();
            }
        }
        let w = l
            .split(|c: char| c.is_whitespace() || c == ';')
            .next()
            .unwrap_or("");
        if w.starts_with(|c: char| c.is_ascii_lowercase()) {
            words.push(w.to_string());
        }
    }
    words
}

/// Whether instruction word `w` (`mad.lo.cc.u32`) is an instance of the table name `name`
/// (`mad.cc`): the same opcode, and every modifier of the name among the word's.
fn names_instruction(w: &str, name: &str) -> bool {
    let mut want = name.split('.');
    let mut have = w.split('.');
    if want.next() != have.next() {
        return false;
    }
    let have: Vec<&str> = have.collect();
    want.all(|m| have.contains(&m))
}

#[test]
fn every_executed_instruction_has_a_run_test() {
    let mut files = Vec::new();
    ptx_files(&root().join("tests/run"), &mut files);
    let mut words = std::collections::HashSet::new();
    for f in &files {
        words.extend(instruction_words(&std::fs::read_to_string(f).unwrap()));
    }
    let missing: Vec<&str> = ptxvm::coverage::executed_names()
        .into_iter()
        .filter(|name| !words.iter().any(|w| names_instruction(w, name)))
        .collect();
    assert!(
        missing.is_empty(),
        "instructions listed as executed but used by no run test: {missing:?}"
    );
}
