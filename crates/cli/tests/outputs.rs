//! Where `ptxvm run` writes its results: `--out` and `--out-symbol` paths are checked before the
//! launch (a long run must not fail at its end on a typo), and a kernel fault still writes them,
//! prints `--print` and `--json`, as the fault left the memory, with the fault's exit status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Stores 7 into `p[0]` and 5 into the variable `counter`, then traps when `trap` is nonzero.
const STORE_THEN_TRAP: &str = "\
.version 8.0
.target sm_80
.address_size 64
.visible .global .align 4 .u32 counter;
.visible .entry k(.param .u64 k_p, .param .u32 k_trap)
{
\t.reg .pred %p<2>;
\t.reg .b64 %rd<3>;
\t.reg .b32 %r<3>;
\tld.param.u64 %rd1, [k_p];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, 7;
\tst.global.u32 [%rd2], %r1;
\tmov.u32 %r2, 5;
\tst.global.u32 [counter], %r2;
\tld.param.u32 %r2, [k_trap];
\tsetp.ne.u32 %p1, %r2, 0;
\t@%p1 trap;
\tret;
}
";

/// A fresh folder holding the kernel as `k.ptx`.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxvm-outputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("k.ptx"), STORE_THEN_TRAP).expect("write k.ptx");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .arg("run")
        .arg("k.ptx")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ptxvm")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A path in a folder that does not exist is refused before the launch: exit 1, and the
/// kernel, which would trap (exit 2), does not run.
#[test]
fn out_paths_are_checked_before_the_run() {
    let dir = folder("before");
    for (flag, spec, want) in [
        (
            "--out",
            "0=missing/p.bin",
            "error: --out 0: cannot write missing/p.bin: No such file or directory",
        ),
        (
            "--out-symbol",
            "counter=missing/c.npy",
            "error: --out-symbol counter: cannot write missing/c.npy: No such file or directory",
        ),
        // a folder is not a file
        ("--out", "0=.", "error: --out 0: cannot write .: "),
    ] {
        let o = run(
            &dir,
            &["--arg", "u32[1]", "--arg", "1", flag, spec, "--json"],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{spec}: {err}");
        assert!(err.starts_with(want), "{spec}: {err}");
        assert!(!err.contains("trap"), "{spec}: {err}");
        assert_eq!(text(&o.stdout), "", "{spec}");
    }
}

/// A launch refused after the paths were checked (a block too large) leaves no new file
/// behind and an existing one as it was.
#[test]
fn a_refused_launch_writes_nothing() {
    let dir = folder("refused");
    std::fs::write(dir.join("old.bin"), b"old").expect("write");
    let o = run(
        &dir,
        &[
            "--block",
            "2048",
            "--arg",
            "u32[1]",
            "--arg",
            "0",
            "--out",
            "0=new.bin",
            "--out",
            "0=old.bin",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(!dir.join("new.bin").exists());
    assert_eq!(std::fs::read(dir.join("old.bin")).unwrap(), b"old");
}

/// At a fault every output is still produced, from the memory as the fault left it: the
/// stores before the trap are there. Exit status 2.
#[test]
fn a_fault_still_writes_every_output() {
    let dir = folder("fault");
    std::fs::write(dir.join("p.bin"), b"previous contents, longer than 4 bytes").expect("write");
    let o = run(
        &dir,
        &[
            "--arg",
            "u32[2]",
            "--arg",
            "1",
            "--out",
            "0=p.bin",
            "--out-symbol",
            "counter=c.bin",
            "--print",
            "0",
            "--json",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error[E0603]: the kernel executed `trap`"),
        "{err}"
    );
    assert!(
        err.contains("note: wrote p.bin (state at the fault)\n"),
        "{err}"
    );
    assert!(
        err.contains("note: wrote c.bin (state at the fault)\n"),
        "{err}"
    );
    assert!(
        err.contains("note: --print shows the buffers as the fault left them\n"),
        "{err}"
    );
    // 7 then 0, little-endian; the old, longer contents are gone
    assert_eq!(
        std::fs::read(dir.join("p.bin")).unwrap(),
        [7, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(std::fs::read(dir.join("c.bin")).unwrap(), [5, 0, 0, 0]);
    let out = text(&o.stdout);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("k_p: [7, 0]"));
    let json: serde_json::Value = serde_json::from_str(lines.next().unwrap()).expect("JSON");
    assert_eq!(json["kernel"], "k");
    assert_eq!(json["fault"]["code"], "E0603");
    assert_eq!(json["fault"]["message"], "the kernel executed `trap`");
    // what ran before the fault is not counted
    assert!(json.get("thread_instructions").is_none(), "{json}");
    assert!(json["seconds"].is_f64(), "{json}");
    // without the trap: no notes, the counts, no fault
    let o = run(
        &dir,
        &[
            "--arg", "u32[2]", "--arg", "0", "--out", "0=p.bin", "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(json.get("fault").is_none(), "{json}");
    assert!(json["thread_instructions"].is_u64(), "{json}");
    assert_eq!(
        std::fs::read(dir.join("p.bin")).unwrap(),
        [7, 0, 0, 0, 0, 0, 0, 0]
    );
}
