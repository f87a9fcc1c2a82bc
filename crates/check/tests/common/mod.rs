//! The ptxas-differential comparison the probe-data tests share (`widths.rs`, `mma_forms.rs`):
//! each `tests/check/FOLDER/*.ptx` holds one candidate instruction per line and its
//! `.ptxas.txt` ptxas's output on it; the checker must reject exactly the lines ptxas rejects.

use ptx_check::{check_source, CheckOptions};
use ptx_diag::SourceFile;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// What one comparison found.
pub struct Tally {
    /// Candidate lines (those `is_candidate` accepts).
    pub candidates: usize,
    /// Lines ptxas rejects.
    pub rejected: usize,
    /// Every disagreement, one line each.
    pub bad: Vec<String>,
}

/// The line numbers of ptxas's errors (its advisory `info` lines name lines too).
fn ptxas_lines(text: &str) -> BTreeSet<u32> {
    text.lines()
        .filter(|l| l.contains("error"))
        .filter_map(|l| {
            let rest = &l[l.find(", line ")? + 7..];
            rest[..rest.find(';')?].parse().ok()
        })
        .collect()
}

/// Compares the checker with ptxas over `tests/check/FOLDER` (at least `min_files` files).
pub fn compare(folder: &str, min_files: usize, is_candidate: impl Fn(&str) -> bool) -> Tally {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/check")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(
        files.len() >= min_files,
        "the {folder} probe files are missing"
    );
    let mut t = Tally {
        candidates: 0,
        rejected: 0,
        bad: Vec::new(),
    };
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
        t.candidates += lines.iter().filter(|l| is_candidate(l)).count();
        t.rejected += want.len();
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        for l in want.difference(&got) {
            t.bad.push(format!(
                "{name}:{l}: ptxas rejects, ptxvm accepts: {}",
                lines[*l as usize - 1].trim()
            ));
        }
        for l in got.difference(&want) {
            t.bad.push(format!(
                "{name}:{l}: ptxvm rejects, ptxas accepts: {}",
                lines[*l as usize - 1].trim()
            ));
        }
    }
    t
}
