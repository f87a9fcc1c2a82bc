//! Instruction counts of `ptxvm run --json`: thread and warp instructions of kernels whose
//! counts are worked out by hand, through the paths that rewrite instructions (if-conversion,
//! superinstructions), which must count exactly what the original instructions would.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `(thread_instructions, warp_instructions)` of `ptxvm run FILE ARGS --json`.
fn counts(file: &str, args: &[&str]) -> (u64, u64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/run")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .arg("run")
        .arg(&path)
        .args(args)
        .arg("--json")
        .output()
        .expect("run ptxvm");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let get = |k: &str| doc[k].as_u64().unwrap_or_else(|| panic!("{k} in {doc}"));
    (get("thread_instructions"), get("warp_instructions"))
}

/// ctrl/ifconv_else.ptx: per thread 33, 35 or 34 instructions (see the file), 4368 in all.
/// Per warp, the instructions that at least one lane runs: the 27 every thread runs, both
/// blocks of the first if-else (3 + 1) and of the second (3 + 2: its `bra E` and `mov`), one
/// block of the third (2, the guard is the same for the warp): 38, for 4 warps 152 — what the
/// branches would count, where a warp runs each side once.
#[test]
fn if_converted_blocks_count_like_the_branches() {
    let buf = "u32[128]";
    let args = ["--grid", "2", "--block", "64", "--arg", "u32[128]=iota"];
    let rest = ["--arg", buf, "--arg", buf, "--arg", buf];
    let all: Vec<&str> = args.iter().chain(&rest).copied().collect();
    assert_eq!(counts("ctrl/ifconv_else.ptx", &all), (4368, 152));
}

/// warp/scan_steps.ptx: 90 instructions, straight-line, run by all 48 threads (4320) and by
/// both warps (180), the fused scan steps included as three each.
#[test]
fn fused_scan_steps_count_as_three_instructions() {
    let mut args = vec!["--grid", "1", "--block", "48"];
    for _ in 0..6 {
        args.extend(["--arg", "u32[48]"]);
    }
    assert_eq!(counts("warp/scan_steps.ptx", &args), (4320, 180));
}
