//! The shapes and types of `mma` and `mma.sp` (without `.kind`) as ptxas judges them:
//! `tests/check/mma/*.ptx` hold one candidate instruction per line — every shape × D/A/B/C
//! combination ptxas 13.5 accepts on sm_90 and every combination one shape or type away from
//! one (the border of the table), the same accepted forms on sm_80, and the fp8 `mma.sp`
//! forms with every accumulator pair on sm_120a — and the `.ptxas.txt` beside each the lines
//! ptxas rejects (`tools/probe-mma-forms.py` writes both, from ptxas's verdict on all 72,600
//! combinations). The checker must reject exactly those lines: its one table of forms,
//! `ptx_isa::matrix::MMA_FORMS`, is also what the interpreter's decoder runs. No ptxas needed.

use ptx_check::{check_source, CheckOptions};
use ptx_diag::SourceFile;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/check/mma")
}

/// The line numbers of ptxas's errors.
fn ptxas_lines(text: &str) -> BTreeSet<u32> {
    text.lines()
        .filter(|l| l.contains("error"))
        .filter_map(|l| {
            let rest = &l[l.find(", line ")? + 7..];
            rest[..rest.find(';')?].parse().ok()
        })
        .collect()
}

#[test]
fn checker_rejects_exactly_the_mma_forms_ptxas_rejects() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/check/mma")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "the mma probe files are missing");
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
        candidates += lines
            .iter()
            .filter(|l| l.trim_start().starts_with("mma"))
            .count();
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
        candidates > 2500 && rejected > 2300,
        "{candidates} candidates, {rejected} rejected"
    );
    assert!(
        bad.is_empty(),
        "{} disagreements with ptxas:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
