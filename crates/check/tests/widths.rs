//! Operand widths as ptxas judges them (ISA 9.4.1, "Operand Size Exceeding Instruction-Type
//! Size", and the bit-size type rules): `tests/check/widths/widths_NN.ptx` hold one candidate
//! instruction per line — `ld`, `st`, `cvt`, atomics, shuffles, `mov` and ALU forms with each
//! data operand given a register of every declared type — and `widths_NN.ptxas.txt` the lines
//! ptxas 13.5 rejects (`tools/probe-widths.py` writes both). The checker must reject exactly
//! those lines: an accepted line ptxas refuses would run with a width the ISA does not define,
//! and a refused line ptxas takes would stop a real program. No ptxas needed.

use ptx_check::{check_source, CheckOptions};
use ptx_diag::SourceFile;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/check/widths")
}

/// The line numbers ptxas names in its output.
fn ptxas_lines(text: &str) -> BTreeSet<u32> {
    text.lines()
        .filter_map(|l| {
            let rest = &l[l.find(", line ")? + 7..];
            rest[..rest.find(';')?].parse().ok()
        })
        .collect()
}

#[test]
fn checker_rejects_exactly_the_widths_ptxas_rejects() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/check/widths")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the width probe files are missing");
    let (mut candidates, mut rejected, mut bad) = (0, 0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let verdict = std::fs::read_to_string(f.with_extension("ptxas.txt")).expect("ptxas.txt");
        let want = ptxas_lines(&verdict);
        let src = SourceFile::new(f.display().to_string(), text.as_str());
        let got: BTreeSet<u32> = check_source(&text, &CheckOptions::default())
            .iter()
            .filter(|d| d.is_error())
            .filter_map(|d| d.primary_span())
            .map(|s| src.line_col(s.start).line)
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        candidates += lines.iter().filter(|l| l.starts_with('\t')).count();
        rejected += want.len();
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        for l in want.difference(&got) {
            bad.push(format!(
                "{name}:{l}: ptxas rejects, ptxvm accepts: {}",
                lines[*l as usize - 1].trim()
            ));
        }
        for l in got.difference(&want) {
            bad.push(format!(
                "{name}:{l}: ptxvm rejects, ptxas accepts: {}",
                lines[*l as usize - 1].trim()
            ));
        }
    }
    assert!(
        candidates > 5000 && rejected > 2000,
        "{candidates} candidates, {rejected} rejected"
    );
    assert!(
        bad.is_empty(),
        "{} disagreements with ptxas:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
