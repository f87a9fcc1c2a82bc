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

/// A file of raw bytes in a fresh temporary folder.
fn temp_bytes(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxvm-inputs-{}-bin", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write temp file");
    path
}

/// The first 64 bytes of a little-endian 64-bit ELF file of type `ty` for machine `machine`.
fn elf_header(ty: u16, machine: u16) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // 64-bit
    h[5] = 1; // little-endian
    h[6] = 1; // version
    h[16..18].copy_from_slice(&ty.to_le_bytes());
    h[18..20].copy_from_slice(&machine.to_le_bytes());
    h
}

/// A fatbin as nvcc lays it out: `members` are (kind: 1 PTX, 2 ELF; architecture; payload).
fn fatbin(members: &[(u16, u32, &[u8])]) -> Vec<u8> {
    let mut entries = Vec::new();
    for (kind, arch, payload) in members {
        let mut h = vec![0u8; 64];
        h[..2].copy_from_slice(&kind.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        h[28..32].copy_from_slice(&arch.to_le_bytes());
        entries.extend(h);
        entries.extend(*payload);
    }
    let mut f = vec![0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0];
    f.extend((entries.len() as u64).to_le_bytes());
    f.extend(entries);
    f
}

/// A fatbin holding PTX, or a host object with one (nvcc's outputs of `tests/fatbin/k.cu` in
/// crates/cuda: `out[i] = 3 i + __CUDA_ARCH__ / 10`), runs its newest PTX, plain or compressed.
#[test]
fn fatbins_and_host_objects_run_their_newest_ptx() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../cuda/tests/fatbin/");
    for (file, arch) in [
        ("plain.fatbin", 80),
        ("zstd.fatbin", 80),
        ("lz4.fatbin", 80),
        ("multi.fatbin", 90),
        ("host.o", 80),
    ] {
        let path = format!("{dir}{file}");
        let o = ptxvm(
            &[
                "run", &path, "--block", "4", "--arg", "u32[4]", "--print", "0",
            ],
            b"",
        );
        let out = String::from_utf8_lossy(&o.stdout);
        let want = format!("[{}, {}, {}, {}]", arch, arch + 3, arch + 6, arch + 9);
        assert!(
            o.status.success() && out.contains(&want),
            "{file}: {out}{}",
            stderr(&o)
        );
        // of several, the note says which one ran
        assert_eq!(
            stderr(&o).contains(&format!(
                "using its PTX for compute_{arch} (of 3 in the fatbin)"
            )),
            file == "multi.fatbin",
            "{file}: {}",
            stderr(&o)
        );
        let c = ptxvm(&["check", &path], b"");
        assert!(c.status.success(), "check {file}: {}", stderr(&c));
    }
    // a fatbin whose PTX entry's headers lie is an error, not a crash
    let mut bad = std::fs::read(format!("{dir}zstd.fatbin")).unwrap();
    let n = bad.len();
    bad[n - 8..].fill(0xff);
    let path = temp_bytes("bad.fatbin", &bad);
    let o = ptxvm(&["run", path.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
}

/// Binary input to `run` and `check` that holds no PTX (a cubin, a SASS-only fatbin, any file
/// with NUL bytes) gets one error saying what the file is and how to get PTX, never its bytes.
#[test]
fn binary_files_are_named_not_printed() {
    let mut cubin = elf_header(2, 190);
    cubin.extend([0xde, 0xad, 0xbe, 0xef, 0, 0, 0x13, 0x37]);
    let sass_only = fatbin(&[
        (2, 80, b"\x7fELF\x02\x01\x01\0"),
        (2, 90, b"\x7fELF\x02\x01\x01\0"),
    ]);
    let mut gzip = vec![0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03];
    gzip.extend((0..200u32).map(|i| (i * 73 % 251) as u8));
    let mut utf16 = vec![0xff, 0xfe];
    utf16.extend(".version".bytes().flat_map(|b| [b, 0]));
    let cases: [(&str, &[u8], &[&str]); 4] = [
        (
            "k.cubin",
            &cubin,
            &[
                "k.cubin is a CUDA cubin (an ELF file of SASS, the machine code of one GPU), not PTX text\n",
                "help: SASS cannot run on ptxvm; compile the kernel to PTX instead: `nvcc -ptx kernel.cu` (clang: `--cuda-device-only -S`), or run the whole program with `ptxvm exec -- ./program`\n",
            ],
        ),
        (
            "sass.fatbin",
            &sass_only,
            &[
                "sass.fatbin is a CUDA fatbin (a container of compiled GPU code) holding only SASS, for sm_80 and sm_90, not PTX text\n",
                "help: SASS cannot run on ptxvm; rebuild with PTX included (`-gencode arch=compute_XX,code=compute_XX`), or compile the kernel with `nvcc -ptx`\n",
            ],
        ),
        (
            "k.ptx.gz",
            &gzip,
            &[
                "k.ptx.gz is a binary file (a NUL byte at offset 3), not PTX text\n",
                "help: ptxvm reads PTX, the text that `nvcc -ptx` writes (it starts with `.version`); to run a whole CUDA program, use `ptxvm exec -- ./program`\n",
            ],
        ),
        (
            "utf16.ptx",
            &utf16,
            &["utf16.ptx is UTF-16 text, not the UTF-8 (or ASCII) text ptxvm reads\n"],
        ),
    ];
    for (name, bytes, want) in cases {
        let path = temp_bytes(name, bytes);
        for cmd in ["run", "check"] {
            let o = ptxvm(&[cmd, path.to_str().unwrap()], b"");
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{cmd} {name}: {err}");
            assert!(err.starts_with("error: "), "{cmd} {name}: {err}");
            for w in want {
                assert!(err.contains(w), "{cmd} {name}: no `{w}` in:\n{err}");
            }
            // printable text only: no byte of the file is echoed
            assert!(
                err.chars().all(|c| c == '\n' || !c.is_control()) && !err.contains('\u{fffd}'),
                "{cmd} {name}: {err:?}"
            );
        }
    }
    // on standard input the file is `<stdin>`
    let o = ptxvm(&["run", "-"], &cubin);
    assert!(
        stderr(&o).starts_with("error: <stdin> is a CUDA cubin"),
        "{}",
        stderr(&o)
    );
    // text with one stray byte (a Latin-1 comment) is still text: E0020 points at the byte
    let latin1 = [b"// caf\xe9\n".as_slice(), STORE7.as_bytes()].concat();
    let path = temp_bytes("latin1.ptx", &latin1);
    let o = ptxvm(&["check", path.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("error[E0020]: file is not valid UTF-8 text"),
        "{}",
        stderr(&o)
    );
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

/// `--link FILE` links more PTX files into the module, as libcuda's JIT linker does (the
/// inputs of crates/cuda/tests/link: `out[i] = times3(i) + helper(i) = 4 i + 1000`, with
/// `times3` defined in callee.ptx and a private `helper` in each file).
#[test]
fn run_links_ptx_files() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../cuda/tests/link/");
    let caller = format!("{dir}caller.ptx");
    let callee = format!("{dir}callee.ptx");
    let args = ["--block", "4", "--arg", "u32[4]", "--print", "0"];
    let o = ptxvm(
        &[&["run", &caller, "--link", &callee], &args[..]].concat(),
        b"",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("[1000, 1004, 1008, 1012]"),
        "{out}{}",
        stderr(&o)
    );
    // without the callee, the call has nothing to call: the kernel is refused when launched
    let o = ptxvm(&[&["run", &caller], &args[..]].concat(), b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`times3`, which is declared but not defined"),
        "{}",
        stderr(&o)
    );
    // the same kernel twice: a link error naming both definitions
    let o = ptxvm(
        &[&["run", &caller, "--link", &caller], &args[..]].concat(),
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("error: the link failed:"),
        "{}",
        stderr(&o)
    );
}
