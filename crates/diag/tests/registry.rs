//! The registry of diagnostic codes (`ptx_diag::codes`) is the one place codes are defined:
//! every code has an explanation, no code has two meanings, and no crate makes up its own.

use ptx_diag::codes;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name ends with one of `exts`, skipping build output.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            out.push(p);
        }
    }
}

#[test]
fn every_code_has_a_title_and_an_explanation_and_one_meaning() {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut n = 0;
    for (c, title, text) in codes::all() {
        n += 1;
        let ok = c.0.len() == 5
            && (c.0.starts_with('E') || c.0.starts_with('W'))
            && c.0[1..].bytes().all(|b| b.is_ascii_digit());
        assert!(ok, "malformed code {c}");
        assert!(!title.is_empty(), "{c} has no title");
        assert!(text.len() > 30, "{c}: the explanation is too short");
        if let Some(other) = seen.insert(c.0, title) {
            panic!("{c} is defined twice: `{other}` and `{title}`");
        }
    }
    // syntax, check, lower and runtime codes are all there
    for c in [
        "E0001", "E0101", "E0201", "E0301", "E0401", "W0301", "E0501", "E0502",
    ] {
        assert!(codes::explain(c).is_some(), "{c} is missing");
    }
    for k in 1..=10 {
        let c = format!("E06{k:02}");
        assert!(codes::explain(&c).is_some(), "{c} is missing");
    }
    assert!(codes::explain("e0601").is_some(), "lookup ignores case");
    assert!(codes::explain("E9999").is_none());
    assert!(n > 60);
}

/// Codes are defined only in the registry: no source file outside it builds a `Code` from a
/// literal (which could reuse a number for another meaning, or have no explanation).
#[test]
fn no_crate_defines_its_own_codes() {
    let root = workspace();
    let registry = root
        .join("crates/diag/src/codes.rs")
        .canonicalize()
        .unwrap();
    let mut all = Vec::new();
    for d in ["crates", "fuzz", "tools", "examples", "bench"] {
        files(&root.join(d), &[".rs"], &mut all);
    }
    assert!(
        all.len() > 20,
        "the sources were not found under {}",
        root.display()
    );
    let needle = ["Code", "(\""].concat();
    for p in all {
        if p.canonicalize().unwrap() == registry {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (k, line) in text.lines().enumerate() {
            assert!(
                !line.contains(&needle),
                "{}:{}: a code defined outside crates/diag/src/codes.rs: {}",
                p.display(),
                k + 1,
                line.trim()
            );
        }
    }
}

/// Every code that a test expectation shows (`error[E0102]` in a `.stderr` file, a code in a run
/// test's `STDERR:` line) is a registered code.
#[test]
fn codes_in_test_expectations_are_registered() {
    let mut all = Vec::new();
    files(
        &workspace().join("tests"),
        &[".stderr", ".ptx", ".txt"],
        &mut all,
    );
    let mut found = 0;
    for p in all {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (k, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(i) = rest.find("error[").or_else(|| rest.find("warning[")) {
                let after = &rest[i..];
                let open = after.find('[').unwrap() + 1;
                if let Some(close) = after[open..].find(']') {
                    let code = &after[open..open + close];
                    // ptxas output (`.ptxas.txt`) has no such codes; only ptxvm's
                    if code.len() == 5 {
                        found += 1;
                        assert!(
                            codes::explain(code).is_some(),
                            "{}:{}: unregistered code {code}",
                            p.display(),
                            k + 1
                        );
                    }
                }
                rest = &after[open..];
            }
        }
    }
    assert!(
        found > 10,
        "only {found} codes found in the test expectations"
    );
}
