//! Runs the checker over the test data folders: `tests/check/ok` and the other valid corpora must
//! give no errors; every `tests/check/err` file must give an error on the line ptxas reports.

use ptx_check::{check_module, CheckOptions};
use ptx_diag::{Severity, SourceFile};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "ptx"));
    v.sort();
    v
}

/// `(line, rendered)` of every diagnostic of `severity` or worse.
fn run(path: &Path, min: Severity) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = ptx_syntax::parse(&text);
    let checked = check_module(&parsed.module, &CheckOptions::default());
    let src = SourceFile::new(path.display().to_string(), text.clone());
    checked
        .diagnostics
        .iter()
        .filter(|d| d.severity >= min)
        .map(|d| {
            let start = d.primary_span().map_or(0, |s| s.start as usize);
            let line = text[..start.min(text.len())].matches('\n').count() + 1;
            (line, ptx_diag::render_plain(&src, std::slice::from_ref(d)))
        })
        .collect()
}

fn expect_clean(files: &[PathBuf], min: Severity) {
    let mut bad = String::new();
    for f in files {
        for (_, r) in run(f, min) {
            bad.push_str(&r);
        }
    }
    assert!(bad.is_empty(), "unexpected diagnostics:\n{bad}");
}

#[test]
fn check_ok_files_have_no_errors() {
    let files = ptx_files(&repo().join("tests/check/ok"));
    assert!(!files.is_empty());
    expect_clean(&files, Severity::Error);
}

#[test]
fn corpus_has_no_errors() {
    expect_clean(
        &ptx_files(&repo().join("tests/corpus/ptx")),
        Severity::Error,
    );
}

#[test]
fn parse_ok_files_have_no_errors() {
    let files: Vec<PathBuf> = ptx_files(&repo().join("tests/parse/ok"))
        .into_iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap_or_default()
                .lines()
                .any(|l| l.trim_start().starts_with("// NOTE:"))
        })
        .collect();
    expect_clean(&files, Severity::Error);
}

/// The lines ptxas reports errors on, from `NAME.ptxas.txt`. Some errors ptxas reports for the
/// whole file, without a line ("File uses too much global constant data"): then the test names
/// the line we must report in an `// ERROR-LINE: N` comment, and ptxas must still have failed.
fn ptxas_lines(path: &Path) -> Vec<usize> {
    let txt = std::fs::read_to_string(path.with_extension("ptxas.txt")).unwrap_or_default();
    let lines: Vec<usize> = txt
        .lines()
        .filter_map(|l| {
            let rest = l.split(", line ").nth(1)?;
            let (n, after) = rest.split_once(';')?;
            let kind = after.trim_start();
            (kind.starts_with("error") || kind.starts_with("fatal"))
                .then(|| n.trim().parse().ok())?
        })
        .collect();
    if !lines.is_empty() || !txt.lines().any(|l| l.starts_with("ptxas error")) {
        return lines;
    }
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("// ERROR-LINE:")?.trim().parse().ok())
        .collect()
}

#[test]
fn err_files_fail_on_the_ptxas_line() {
    let mut missing = String::new();
    for f in ptx_files(&repo().join("tests/check/err")) {
        let lines = ptxas_lines(&f);
        assert!(!lines.is_empty(), "{}: no ptxas line", f.display());
        let got = run(&f, Severity::Error);
        for l in &lines {
            if !got.iter().any(|(gl, _)| gl == l) {
                missing.push_str(&format!(
                    "{}: ptxas reports line {l}, we report {:?}\n",
                    f.display(),
                    got.iter().map(|g| g.0).collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{missing}");
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

/// Every `.ptx` file under `tests/` that ptxas accepts is accepted, whatever the folder: all but
/// the `err` folders, files that say why ptxas rejects them (`// NOTE:`), run tests of malformed
/// input (`// STDERR: error`), and `tests/run-pending` (instructions not in the table yet).
#[test]
fn every_valid_ptx_under_tests_is_accepted() {
    let mut files = Vec::new();
    walk(&repo().join("tests"), &mut files);
    files.retain(|f| {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let skip = f.components().any(|c| {
            let c = c.as_os_str();
            c == "err" || c == "run-pending"
        }) || text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("// NOTE:") || l.starts_with("// STDERR: error")
        });
        !skip
    });
    files.sort();
    assert!(files.len() > 200, "{}", files.len());
    expect_clean(&files, Severity::Error);
}

/// Real compiler output (nvcc, clang, Triton, Numba) in `../shared/corpus` (or
/// `$PTXVM_SHARED/corpus`): no errors and no warnings. Skipped, with a note, where it is absent.
#[test]
fn shared_corpus_is_clean() {
    let root = std::env::var("PTXVM_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join("../shared"));
    let corpus = root.join("corpus");
    if !corpus.is_dir() {
        println!(
            "note: {} not found: shared corpus not checked",
            corpus.display()
        );
        return;
    }
    let mut files = Vec::new();
    walk(&corpus, &mut files);
    files.sort();
    assert!(!files.is_empty());
    expect_clean(&files, Severity::Warning);
}

/// Prints what the checker reports for each `tests/check/err` file (`--nocapture` to see it).
#[test]
#[ignore]
fn show_err_diagnostics() {
    for f in ptx_files(&repo().join("tests/check/err")) {
        for (l, r) in run(&f, Severity::Warning) {
            println!("{} line {l}\n{r}", f.display());
        }
    }
}
