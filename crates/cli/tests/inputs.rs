//! How `ptxvm` takes its inputs: PTX from standard input, CUDA C++ given by mistake, endless
//! streams (read with a bound), huge buffer arguments (named when they cannot be allocated), the
//! printf FIFO flag, and files with very many errors (the count is capped).

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// A kernel storing 7 into `p[0]` (a `.u32`).
const STORE7: &str = "\
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_p)
{
\t.reg .b64 %rd<3>;
\t.reg .b32 %r<2>;
\tld.param.u64 %rd1, [k_p];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, 7;
\tst.global.u32 [%rd2], %r1;
\tret;
}
";

fn ptxvm(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ptxvm");
    let mut input = child.stdin.take().expect("stdin");
    // ptxvm may stop reading early (an error); a broken pipe is then expected
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().expect("run ptxvm")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A file in a fresh temporary folder.
fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxvm-inputs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn run_reads_ptx_from_stdin() {
    let o = ptxvm(
        &["run", "-", "--arg", "u32[2]", "--print", "0"],
        STORE7.as_bytes(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "k_p: [7, 0]\n");
}

#[test]
fn cuda_source_is_refused_with_the_way_out() {
    let cu = "#include <cstdio>\n__global__ void k(int *p) { p[0] = 7; }\n";
    let want = "looks like CUDA C++, not PTX; compile it with `nvcc -ptx` first";
    // by its name, by its text under a .ptx name, and on stdin
    let named = temp_file("k.cu", cu);
    let disguised = temp_file("k.ptx", cu);
    for (args, input) in [
        (vec!["run", named.to_str().unwrap()], ""),
        (vec!["run", disguised.to_str().unwrap()], ""),
        (vec!["run", "-"], cu),
    ] {
        let o = ptxvm(&args, input.as_bytes());
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// `ptxvm check` gives CUDA C++ the same way out as `ptxvm run`, instead of E0014 ("instruction
/// outside of a function body") and other PTX syntax errors; PTX that merely mentions
/// `__global__` in a comment still checks clean.
#[test]
fn check_gives_cuda_source_the_same_way_out() {
    let cu = "#include <cstdio>\n__global__ void k(int *p) { p[0] = 7; }\n";
    let want = "looks like CUDA C++, not PTX; compile it with `nvcc -ptx` first \
                (e.g. `nvcc -ptx -arch=sm_90 kernel.cu -o kernel.ptx`) and check the .ptx file";
    let named = temp_file("c.cu", cu);
    let disguised = temp_file("c.ptx", cu);
    for (args, input) in [
        (vec!["check", named.to_str().unwrap()], ""),
        (vec!["check", disguised.to_str().unwrap()], ""),
        (vec!["check", "-"], cu),
    ] {
        let o = ptxvm(&args, input.as_bytes());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("E0014"), "{args:?}: {err}");
    }
    // the file is named in the message; other files of the same check are still checked
    let o = ptxvm(&["check", named.to_str().unwrap(), "-"], STORE7.as_bytes());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!("error: {} looks like CUDA C++", named.display())),
        "{err}"
    );
    let commented = format!("// from a __global__ function\n{STORE7}");
    let o = ptxvm(&["check", "-"], commented.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[cfg(unix)]
#[test]
fn endless_streams_are_read_with_a_bound() {
    // 256 MiB are read, then refused, naming the file
    let o = ptxvm(&["run", "/dev/zero"], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/dev/zero: more than 256 MiB, the most ptxvm reads as PTX source"),
        "{}",
        stderr(&o)
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} check - < /dev/zero",
            env!("CARGO_BIN_EXE_ptxvm")
        ))
        .output()
        .expect("sh");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("<stdin>: more than 256 MiB"),
        "{}",
        stderr(&o)
    );
    let ptx = temp_file("store7.ptx", STORE7);
    let o = ptxvm(&["run", ptx.to_str().unwrap(), "--arg", "@/dev/zero"], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "`@/dev/zero`: `/dev/zero` is not a regular file and gives more than 256 MiB"
        ),
        "{}",
        stderr(&o)
    );
}

/// With 2 GB of address space, a 4 GiB buffer cannot be allocated: the error names the argument
/// and the size (the buffer is allocated once, in device memory, not built on the host first).
#[cfg(target_os = "linux")]
#[test]
fn a_buffer_that_cannot_be_allocated_is_named() {
    let ptx = temp_file("store7b.ptx", STORE7);
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec {} run {} --arg 'u8[4294967296]'",
            env!("CARGO_BIN_EXE_ptxvm"),
            ptx.display()
        ))
        .output()
        .expect("sh");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "--arg 0 (`k_p`): cannot allocate u8[4294967296] (4294967296 bytes) in device memory"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn printf_fifo_must_be_positive() {
    let ptx = temp_file("store7c.ptx", STORE7);
    let o = ptxvm(
        &[
            "run",
            ptx.to_str().unwrap(),
            "--arg",
            "u32[1]",
            "--printf-fifo",
            "0",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--printf-fifo 0: expected a positive number of bytes"),
        "{}",
        stderr(&o)
    );
}

/// 5000 instructions with 3 undeclared registers each: 15,000 errors. The checker stops once it
/// has 1000 diagnostics, after the statement that reaches them: 334 statements, 1002 errors
/// (333 * 3 = 999 < 1000 before the 334th), then its "checking stopped" error. The first 1000
/// errors are shown, the stop error, and a line counting the 2 others.
#[test]
fn a_million_errors_are_capped() {
    let mut text =
        String::from(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n");
    for _ in 0..5000 {
        text.push_str("\tadd.u32 %r1, %r2, %r3;\n");
    }
    text.push_str("\tret;\n}\n");
    let o = ptxvm(&["check", "-"], text.as_bytes());
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.matches("error[E0102]: unknown register").count(), 1000);
    assert_eq!(
        err.matches("error[E0018]: too many errors; checking stopped after 1000 diagnostics")
            .count(),
        1
    );
    assert!(
        err.trim_end().ends_with(
            "note: 2 more errors not shown (ptxvm shows the first 1000 errors of a file)"
        ),
        "{}",
        &err[err.len().saturating_sub(500)..]
    );
}
