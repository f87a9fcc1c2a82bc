//! `ptxvm ptxas`, the stand-in for NVIDIA's assembler: its version line as tools parse it,
//! errors in ptxas's one-line format on the invalid files of `tests/check/err` (on the line
//! real ptxas 13.5 names, recorded beside each file), `-v` figures worked out by hand, the
//! cubin it writes run by `ptxvm run`, and the `ptxas` link `ptxvm exec` puts on `PATH`; and
//! `ptxvm nvcc`, whose `--cubin` compiles become PTX wrapped by the stand-in (against a
//! scripted "real" nvcc, so the test needs no CUDA toolkit).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ptxvm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptxvm"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptxvm-ptxas-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ptxas(args: &[&str]) -> Output {
    ptxvm().arg("ptxas").args(args).output().unwrap()
}

#[test]
fn the_version_names_a_release_whose_ptx_ptxvm_checks() {
    let out = ptxas(&["--version"]);
    assert!(out.status.success());
    let v = text(&out.stdout);
    // Triton reads `release (\d+\.\d+)` and picks PTX 9.5 for 13.5
    assert!(
        v.contains("Cuda compilation tools, release 13.5, V13.5"),
        "{v}"
    );
    assert!(
        v.starts_with("ptxas: NVIDIA (R) Ptx optimizing assembler"),
        "{v}"
    );
    let src = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n";
    let d = scratch("version");
    std::fs::write(d.join("k.ptx"), src).unwrap();
    let out = ptxas(&[
        "-arch=sm_80",
        d.join("k.ptx").to_str().unwrap(),
        "-o",
        d.join("k.o").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

/// The `line N` of each error of a ptxas report, in order.
fn error_lines(report: &str) -> Vec<u32> {
    report
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("ptxas ")?;
            let (_, after) = rest.split_once(", line ")?;
            let (n, kind) = after.split_once(';')?;
            kind.trim_start()
                .starts_with("error")
                .then(|| n.parse().ok())?
        })
        .collect()
}

#[test]
fn errors_come_in_ptxas_format_on_ptxas_lines() {
    let dir = repo().join("tests/check/err");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(files.len() >= 70, "{} files", files.len());
    let (mut compared, mut same) = (0, 0);
    for f in &files {
        let recorded = std::fs::read_to_string(f.with_extension("ptxas.txt")).unwrap();
        // the command ptxas was run with: `$ ptxas -arch=sm_XX file -o /dev/null`
        let arch = recorded
            .split_whitespace()
            .find(|w| w.starts_with("-arch="))
            .unwrap();
        let out = ptxas(&[arch, f.to_str().unwrap(), "-o", "/dev/null"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{}: {stderr}", f.display());
        let last = stderr.lines().last().unwrap_or("");
        assert!(
            last.starts_with("ptxas fatal   : "),
            "{}: {stderr}",
            f.display()
        );
        for l in stderr.lines() {
            let diag = l.starts_with(&format!("ptxas {}, line ", f.display()))
                && (l.contains("; error   : ") || l.contains("; warning : "));
            assert!(
                diag || l.starts_with("ptxas fatal   : "),
                "{}: `{l}`",
                f.display()
            );
        }
        // ptxas's first error is among ptxvm's (ptxas may list a header error after an
        // instruction's, ptxvm in source order)
        if let Some(&want) = error_lines(&recorded).first() {
            compared += 1;
            let got = error_lines(&stderr);
            if got.contains(&want) {
                same += 1;
            } else {
                eprintln!("{}: ptxas line {want}, ptxvm {got:?}", f.display());
            }
        }
    }
    // for every file of the suite
    assert!(compared >= 60, "{compared}");
    assert_eq!(same, compared, "ptxas's first error line reported");
}

#[test]
fn verbose_prints_the_resources_worked_out_by_hand() {
    let src = repo().join("crates/cli/tests/data/ptxas/resources.ptx");
    let out = ptxas(&[
        "-v",
        "--gpu-name=sm_80",
        src.to_str().unwrap(),
        "-o",
        "/dev/null",
    ]);
    let e = text(&out.stderr);
    assert!(out.status.success(), "{e}");
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines[0], "ptxas info    : 40 bytes gmem, 24 bytes cmem[3]");
    // entries last-defined first, as ptxas lists them
    assert_eq!(
        lines[1],
        "ptxas info    : Compiling entry function 'k2' for 'sm_80'"
    );
    assert_eq!(
        lines[3],
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    );
    assert!(
        lines[4].ends_with(" registers, used 0 barriers, 352 bytes cmem[0]"),
        "{e}"
    );
    assert_eq!(
        lines[5],
        "ptxas info    : Compiling entry function 'k' for 'sm_80'"
    );
    assert_eq!(lines[6], "ptxas info    : Function properties for k");
    assert_eq!(
        lines[7],
        "    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    );
    assert!(lines[8].starts_with("ptxas info    : Used "), "{e}");
    assert!(
        lines[8].ends_with(" registers, used 4 barriers, 128 bytes smem, 364 bytes cmem[0]"),
        "{e}"
    );
    // --entry restricts the report
    let out = ptxas(&[
        "-v",
        "-arch",
        "sm_80",
        "-e",
        "k2",
        src.to_str().unwrap(),
        "-o",
        "/dev/null",
    ]);
    let e = text(&out.stderr);
    assert!(e.contains("'k2'") && !e.contains("'k'"), "{e}");
}

const VADD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
    .visible .entry vadd(.param .u64 a, .param .u64 c)\n{\n\
    .reg .b32 %r<3>; .reg .b64 %rd<6>;\n\
    mov.u32 %r1, %tid.x;\n\
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [c];\n\
    mul.wide.u32 %rd3, %r1, 4; add.u64 %rd4, %rd1, %rd3; add.u64 %rd5, %rd2, %rd3;\n\
    ld.global.u32 %r2, [%rd4]; mul.lo.u32 %r2, %r2, 3; st.global.u32 [%rd5], %r2;\n\
    ret;\n}\n";

#[test]
fn the_cubin_holds_the_ptx_and_runs() {
    let d = scratch("cubin");
    let ptx = d.join("vadd.ptx");
    std::fs::write(&ptx, VADD).unwrap();
    let cubin = d.join("vadd.cubin");
    let out = ptxas(&[
        "-lineinfo",
        "-O3",
        "--regAllocOptLevel=2",
        "-arch=sm_86",
        ptx.to_str().unwrap(),
        "-o",
        cubin.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&cubin).unwrap();
    // an ELF64 image for EM_CUDA (190)
    assert!(bytes.starts_with(b"\x7fELF\x02\x01\x01"));
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 190);
    let out = ptxvm()
        .args([
            "run",
            cubin.to_str().unwrap(),
            "--block",
            "8",
            "--arg",
            "u32[8]=iota",
            "--arg",
            "u32[8]",
            "--print",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("[0, 3, 6, 9, 12, 15, 18, 21]"),
        "{}",
        text(&out.stdout)
    );
    // a virtual target only checks: no output is written
    let none = d.join("none.o");
    let out = ptxas(&[
        "-arch=compute_80",
        ptx.to_str().unwrap(),
        "-o",
        none.to_str().unwrap(),
    ]);
    assert!(out.status.success() && !none.exists());
    // PTX as a string
    let out = ptxvm()
        .current_dir(&d)
        .args(["ptxas", "-arch=sm_80", "--input-as-string", VADD])
        .output()
        .unwrap();
    assert!(
        out.status.success() && d.join("elf.o").exists(),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_form_ptxvm_cannot_run_fails_at_assembly() {
    // `istypep` checks but is not executed yet (coverage::NOT_EXECUTED): the tool hears of it
    // from ptxas, on the instruction's line, not at launch
    let d = scratch("unsupported");
    let ptx = d.join("k.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 t)\n{\n.reg .b64 %rd1; .reg .pred %q;\n\
         ld.param.u64 %rd1, [t];\nistypep.texref %q, %rd1;\nret;\n}\n",
    )
    .unwrap();
    let out = ptxas(&["-arch=sm_80", ptx.to_str().unwrap(), "-o", "/dev/null"]);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{e}");
    assert!(e.contains(", line 8; error   : kernel `k` cannot run: ptxvm does not execute `istypep.texref` yet (E0609)"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ptxas_refusals_are_ptxas_fatal_lines() {
    let d = scratch("refusals");
    let ptx = d.join("k.ptx");
    std::fs::write(&ptx, VADD.replace("sm_80", "sm_90a")).unwrap();
    let p = ptx.to_str().unwrap();
    for (args, want) in [
        (
            vec!["-arch=sm_90", p],
            "ptxas fatal   : SM version specified by .target is higher",
        ),
        (
            vec![p],
            "ptxas fatal   : SM version specified by .target is higher",
        ),
        (
            vec!["--bogus", p],
            "ptxas fatal   : Unknown option '-bogus'",
        ),
        (
            vec!["-arch=sm_60", p],
            "ptxas fatal   : Value 'sm_60' is not defined for option 'gpu-name'",
        ),
        (
            vec!["-arch=sm_90a", "/nonexistent.ptx"],
            "ptxas fatal   : Input file '/nonexistent.ptx' could not be opened",
        ),
        (
            vec!["-arch=sm_90a", "-o"],
            "ptxas fatal   : Missing value for option 'o'",
        ),
    ] {
        let out = ptxas(&args);
        assert_eq!(out.status.code(), Some(255), "{args:?}");
        assert!(
            text(&out.stderr).starts_with(want),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = ptxas(&["-arch=sm_90a", p, "-o", d.join("k.o").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn exec_puts_the_stand_in_first_and_points_triton_at_it() {
    let script = "command -v ptxas; echo \"$TRITON_PTXAS_PATH|$TRITON_PTXAS_BLACKWELL_PATH\"; ptxas --version | grep -c 'release 13.5'";
    let out = ptxvm()
        .args(["exec", "--", "sh", "-c", script])
        .output()
        .unwrap();
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert!(out.status.success(), "{s}{}", text(&out.stderr));
    assert!(lines[0].ends_with("/bin/ptxas"), "{s}");
    assert_eq!(lines[1], format!("{}|{}", lines[0], lines[0]));
    assert_eq!(lines[2], "1");
    // the user's own setting stays; --no-ptxas leaves everything alone
    let out = ptxvm()
        .args(["exec", "--", "sh", "-c", script])
        .env("TRITON_PTXAS_PATH", "/opt/mine/ptxas")
        .output()
        .unwrap();
    let s = text(&out.stdout);
    assert!(
        s.lines().nth(1).unwrap().starts_with("/opt/mine/ptxas|/"),
        "{s}"
    );
    let out = ptxvm()
        .args([
            "exec",
            "--no-ptxas",
            "--",
            "sh",
            "-c",
            "echo \"[$TRITON_PTXAS_PATH]\"; command -v ptxas || true",
        ])
        .env_remove("TRITON_PTXAS_PATH")
        .output()
        .unwrap();
    let s = text(&out.stdout);
    assert!(s.starts_with("[]\n") && !s.contains("ptxvm-exec-"), "{s}");
}

/// A stand-in for the real nvcc: `--ptx … -o OUT` writes VADD (with `.target` from `-arch`)
/// to OUT and logs its arguments; anything else logs and exits 3.
fn fake_nvcc(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("canned.ptx"), VADD).unwrap();
    let nvcc = dir.join("real-nvcc");
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> {log}\n\
         case \" $* \" in *\" --ptx \"*) ;; *) exit 3 ;; esac\n\
         out=; arch=; prev=\n\
         for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; case $a in -arch=*) arch=${{a#-arch=compute_}} ;; esac; prev=$a; done\n\
         sed \"s/sm_80/sm_$arch/\" {canned} > \"$out\"\n",
        log = dir.join("nvcc.log").display(),
        canned = dir.join("canned.ptx").display(),
    );
    std::fs::write(&nvcc, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    nvcc
}

#[test]
fn nvcc_cubin_compiles_become_runnable_cubins() {
    let d = scratch("nvcc");
    let nvcc = fake_nvcc(&d);
    std::fs::write(d.join("k.cu"), "// the scripted nvcc ignores this\n").unwrap();
    // PyCUDA's command line: nvcc --cubin -arch sm_86 -I DIR k.cu (output: k.cubin)
    let out = ptxvm()
        .current_dir(&d)
        .env("PTXVM_NVCC", &nvcc)
        .args(["nvcc", "--cubin", "-arch", "sm_86", "-I", "/inc", "k.cu"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(d.join("nvcc.log")).unwrap();
    assert!(
        log.starts_with("--ptx -arch=compute_86 -I /inc k.cu -o k.cubin.ptxvm-"),
        "{log}"
    );
    let cubin = d.join("k.cubin");
    let bytes = std::fs::read(&cubin).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 190);
    let run = ptxvm()
        .args([
            "run",
            cubin.to_str().unwrap(),
            "--block",
            "4",
            "--arg",
            "u32[4]=iota",
            "--arg",
            "u32[4]",
            "--print",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        text(&run.stdout).contains("[0, 3, 6, 9]"),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    // anything else goes to the real nvcc unchanged, with its exit status
    let out = ptxvm()
        .current_dir(&d)
        .env("PTXVM_NVCC", &nvcc)
        .args(["nvcc", "-c", "k.cu", "-o", "k.o"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(std::fs::read_to_string(d.join("nvcc.log"))
        .unwrap()
        .ends_with("-c k.cu -o k.o\n"));
    // under ptxvm exec, `nvcc` on PATH is the wrapper and PTXVM_NVCC the real one
    let fake_bin = d.join("bin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    std::os::unix::fs::symlink(&nvcc, fake_bin.join("nvcc")).unwrap();
    let path = format!(
        "{}:{}",
        fake_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = ptxvm()
        .env("PATH", path)
        .env_remove("PTXVM_NVCC")
        .args([
            "exec",
            "--",
            "sh",
            "-c",
            "command -v nvcc; echo \"$PTXVM_NVCC\"",
        ])
        .output()
        .unwrap();
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines[0].ends_with("/bin/nvcc") && lines[0].contains("ptxvm-exec-"),
        "{s}"
    );
    assert_eq!(lines[1], fake_bin.join("nvcc").to_str().unwrap(), "{s}");
    let _ = std::fs::remove_dir_all(&d);
}
