//! `ptxvm ir --bytecode`: each `tests/bytecode/NAME.ptx` disassembles to `NAME.bytecode`
//! beside it (written by hand: see tests/bytecode/README.md).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ptxvm(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("run ptxvm")
}

#[test]
fn listings_match() {
    let dir = repo_root().join("tests/bytecode");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bytecode")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tests in {}", dir.display());
    let mut failed = Vec::new();
    for ptx in &files {
        let rel = ptx.strip_prefix(repo_root()).unwrap_or(ptx);
        let out = ptxvm(&["ir", "--bytecode", &rel.to_string_lossy()]);
        let expected = std::fs::read_to_string(ptx.with_extension("bytecode"))
            .unwrap_or_else(|_| format!("missing {}", ptx.with_extension("bytecode").display()));
        let actual = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || actual != expected {
            failed.push(format!(
                "{}: exit {:?}\n--- expected ---\n{expected}--- actual ---\n{actual}{}",
                rel.display(),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn kernel_option() {
    let f = "tests/bytecode/guarded_scale.ptx";
    let all = ptxvm(&["ir", "--bytecode", f]);
    let one = ptxvm(&["ir", "--bytecode", f, "--kernel", "guarded_scale"]);
    assert!(one.status.success());
    assert_eq!(all.stdout, one.stdout);
    // an unknown kernel is a usage error naming the kernels there are
    let bad = ptxvm(&["ir", "--bytecode", f, "--kernel", "nope"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("no kernel named `nope`") && err.contains("guarded_scale"),
        "{err}"
    );
    // `--kernel` needs `--bytecode`
    let plain = ptxvm(&["ir", f, "--kernel", "guarded_scale"]);
    assert_eq!(plain.status.code(), Some(1));
}
