//! File-driven tests: one named test per file under the repository's `tests/` folder.
//!
//! - `tests/parse/ok/*.ptx`: parse with no diagnostic; `parse(fmt(x)) == parse(x)` and
//!   `fmt(fmt(x)) == fmt(x)`.
//! - `tests/parse/err/*.ptx`: the rendered diagnostics (plain text) equal `NAME.stderr` beside it.
//! - `tests/corpus/ptx/*.ptx`: our own nvcc output; parses cleanly and round-trips.
//! - `tests/fmt/*.ptx`: `ptxvm fmt` output equals `NAME.fmt.ptx` beside it.
//! - `tests/check/ok/*.ptx`: modules ptxas accepts; `ptxvm check` reports nothing.
//! - `tests/check/err/*.ptx`: modules ptxas rejects (its output is in `NAME.ptxas.txt`); the
//!   rendered `ptxvm check` diagnostics equal `NAME.stderr`.
//!
//! `PTX_BLESS=1 cargo test --test filetests` rewrites the expectation files.

use libtest_mimic::{Arguments, Failed, Trial};
use ptx_diag::{render_plain, Diagnostic, SourceFile};
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| {
        p.to_str().is_some_and(|s| s.ends_with(ext))
            && !p.to_str().is_some_and(|s| s.ends_with(".fmt.ptx"))
    });
    out.sort();
    out
}

fn bless() -> bool {
    std::env::var_os("PTX_BLESS").is_some_and(|v| v != "0")
}

/// Reads and decodes a file; the diagnostics are those of decoding (invalid UTF-8).
fn read(path: &Path) -> Result<(SourceFile, Vec<Diagnostic>), Failed> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .strip_prefix(repo_root())
        .unwrap_or(path)
        .display()
        .to_string();
    Ok(ptx_syntax::decode_source(&name, &bytes))
}

fn load(path: &Path) -> Result<SourceFile, Failed> {
    Ok(read(path)?.0)
}

/// Parses and renders every diagnostic of a file (decoding included).
fn diagnostics_of(path: &Path) -> Result<(SourceFile, String, usize), Failed> {
    let (file, mut diags) = read(path)?;
    diags.extend(ptx_syntax::parse(file.text()).diagnostics);
    let rendered = render_plain(&file, &diags);
    Ok((file, rendered, diags.len()))
}

fn compare_or_bless(expected_path: &Path, actual: &str) -> Result<(), Failed> {
    if bless() {
        std::fs::write(expected_path, actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(expected_path).map_err(|_| {
        format!(
            "missing {} (run with PTX_BLESS=1 to create it)",
            expected_path.display()
        )
    })?;
    if expected != actual {
        return Err(format!(
            "output differs from {}\n--- expected ---\n{expected}\n--- actual ---\n{actual}",
            expected_path.display()
        )
        .into());
    }
    Ok(())
}

fn parse_ok(path: &Path) -> Result<(), Failed> {
    let (_, rendered, n) = diagnostics_of(path)?;
    if n != 0 {
        return Err(format!("expected no diagnostics, got:\n{rendered}").into());
    }
    let file = load(path)?;
    ptx_syntax::roundtrip_check(file.text()).map_err(Failed::from)
}

fn parse_err(path: &Path) -> Result<(), Failed> {
    let (_, rendered, n) = diagnostics_of(path)?;
    if n == 0 {
        return Err("expected at least one diagnostic, got none".into());
    }
    compare_or_bless(&path.with_extension("stderr"), &rendered)
}

fn check_diagnostics(path: &Path) -> Result<(SourceFile, String, usize), Failed> {
    let file = load(path)?;
    let diags = ptx_check::check_source(file.text(), &ptx_check::CheckOptions::default());
    let n = diags.iter().filter(|d| d.is_error()).count();
    Ok((file.clone(), render_plain(&file, &diags), n))
}

fn check_ok(path: &Path) -> Result<(), Failed> {
    let (_, rendered, _) = check_diagnostics(path)?;
    if !rendered.is_empty() {
        return Err(format!("expected no diagnostics, got:\n{rendered}").into());
    }
    Ok(())
}

fn check_err(path: &Path) -> Result<(), Failed> {
    let (_, rendered, errors) = check_diagnostics(path)?;
    if errors == 0 {
        return Err(format!("expected an error, got:\n{rendered}").into());
    }
    compare_or_bless(&path.with_extension("stderr"), &rendered)
}

fn fmt_golden(path: &Path) -> Result<(), Failed> {
    let file = load(path)?;
    let parsed = ptx_syntax::parse(file.text());
    if !parsed.diagnostics.is_empty() {
        return Err(render_plain(&file, &parsed.diagnostics).into());
    }
    let text = ptx_syntax::print_module(&parsed.module);
    compare_or_bless(&path.with_extension("fmt.ptx"), &text)?;
    ptx_syntax::roundtrip_check(file.text()).map_err(Failed::from)
}

/// A check run on one file.
type FileTest = fn(&Path) -> Result<(), Failed>;

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let groups: [(&str, &str, FileTest); 6] = [
        ("tests/parse/ok", "parse::ok", parse_ok),
        ("tests/parse/err", "parse::err", parse_err),
        ("tests/corpus/ptx", "corpus", parse_ok),
        ("tests/fmt", "fmt", fmt_golden),
        ("tests/check/ok", "check::ok", check_ok),
        ("tests/check/err", "check::err", check_err),
    ];
    for (dir, prefix, f) in groups {
        for p in files(dir, ".ptx") {
            let name = format!(
                "{prefix}::{}",
                p.file_stem().and_then(|s| s.to_str()).unwrap_or("?")
            );
            trials.push(Trial::test(name, move || f(&p)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
