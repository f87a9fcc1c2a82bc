//! What `ptxvm … --help` tells a new user: every default shown means what it says.

use std::process::Command;

/// The help text of `ptxvm ARGS`, with runs of whitespace (clap's wrapping) made one space.
fn help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .args(args)
        .output()
        .expect("run ptxvm");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text of one option's entry: from its flag to the next `--flag` entry.
fn entry<'a>(help: &'a str, flag: &str) -> &'a str {
    let start = help
        .find(&format!("{flag} <"))
        .unwrap_or_else(|| panic!("no {flag} in: {help}"));
    let rest = &help[start + flag.len()..];
    let end = rest.find(" --").map_or(rest.len(), |e| e);
    &help[start..start + flag.len() + end]
}

/// `--threads 0` means one worker per core: the help says so instead of a bare "[default: 0]".
#[test]
fn run_threads_default_says_what_zero_means() {
    for args in [["run", "--help"], ["run", "-h"]] {
        let h = help(&args);
        let threads = entry(&h, "--threads");
        assert!(
            threads.contains("[default: 0 = one per core]"),
            "{args:?}: {threads}"
        );
        assert!(!threads.contains("[default: 0]"), "{args:?}: {threads}");
    }
}
