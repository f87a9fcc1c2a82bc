//! CUDA Runtime programs (tests/cudart/*.cu, ours) built with nvcc and run against this
//! crate's `libcuda.so.1`: cudart (static and shared) starts through the driver's private
//! export tables, loads its fatbins and launches `<<<>>>` kernels. Each program is built four
//! ways — the default target (PTX for compute_75) and `-gencode arch=compute_80,code=compute_80`,
//! each with `-cudart static` and `-cudart shared` — checks its own results and prints
//! `NAME: ok`. A SASS-only build must fail with cudaErrorNoKernelImageForDevice and the hint.
//! `rdc.cu` and `rdc_lib.cu` are one program of two files built with `-rdc=true`.
//!
//! nvcc comes from `$NVCC`, else `nvcc` on the PATH, else pip's `nvidia-cuda-nvcc`
//! (`python3 -c 'import nvidia'` …`/cu13/bin/nvcc`); the shared cudart from pip's
//! `nvidia-cuda-runtime` beside it (`cu13/lib/libcudart.so.13`). Without them every test here
//! prints why and passes. With `CUDART12_LIB` set to a folder holding cudart 12's
//! `libcudart_static.a` and `libcudart.so.12` (pip `nvidia-cuda-runtime-cu12`:
//! `nvidia/cuda_runtime/lib`), each program is also linked against cudart 12 both ways (nvcc 13
//! compiles; its host stubs register with cudart 12 alike).

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

/// The CUDA toolkit pieces the tests need: nvcc, and the folder holding `libcudart.so.13`.
struct Toolkit {
    nvcc: PathBuf,
    cudart_lib: Option<PathBuf>,
}

/// nvcc and cudart, or why the tests cannot run.
fn toolkit() -> Result<&'static Toolkit, String> {
    static TOOLKIT: std::sync::OnceLock<Result<Toolkit, String>> = std::sync::OnceLock::new();
    TOOLKIT
        .get_or_init(|| {
            let pip = Command::new("python3")
                .args(["-c", "import nvidia; print(nvidia.__path__[0])"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("cu13"));
            let runs = |p: &Path| {
                Command::new(p)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            };
            let nvcc = std::env::var_os("NVCC")
                .map(PathBuf::from)
                .into_iter()
                .chain(Some(PathBuf::from("nvcc")))
                .chain(pip.as_ref().map(|p| p.join("bin/nvcc")))
                .find(|p| runs(p))
                .ok_or("no nvcc ($NVCC, PATH or pip nvidia-cuda-nvcc)")?;
            // beside nvcc (a toolkit's lib64, pip's cu13/lib), else pip's
            let root = nvcc
                .canonicalize()
                .ok()
                .and_then(|n| Some(n.parent()?.parent()?.to_path_buf()));
            let cudart_lib = [
                root.as_ref().map(|r| r.join("lib64")),
                root.as_ref().map(|r| r.join("lib")),
                pip.map(|p| p.join("lib")),
            ]
            .into_iter()
            .flatten()
            .find(|d| d.join("libcudart.so.13").exists());
            Ok(Toolkit { nvcc, cudart_lib })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// How a program is built.
#[derive(Clone, Copy, Debug)]
enum Build {
    /// nvcc's default target (PTX for compute_75 and SASS for sm_75).
    Default,
    /// `-gencode arch=compute_80,code=compute_80`: PTX only.
    Compute80,
    /// `-gencode arch=compute_80,code=sm_80`: SASS only.
    Sass80,
}

/// A scratch directory with `libcuda.so.1` pointing at the built library (and, for the
/// linker, `libcudart.so` at the shared cudart).
fn scratch(name: &str) -> PathBuf {
    common::scratch_with_library("ptxvm-cudart", name, &["libcuda.so.1"])
}

/// Builds `tests/cudart/NAME.cu` as `build` with cudart `static` or `shared` (13, beside
/// nvcc), or `static12` or `shared12` (from `CUDART12_LIB`), and runs it; returns its
/// (success, stdout, stderr), or `None` when it cannot be built here (saying why, except for
/// cudart 12 without `CUDART12_LIB`).
fn run(name: &str, build: Build, cudart: &str) -> Option<(bool, String, String)> {
    run_sources(name, &[name], &[], build, cudart)
}

/// [`run`] for a program of several files (`sources`, without `.cu`) and more nvcc flags.
fn run_sources(
    name: &str,
    sources: &[&str],
    flags: &[&str],
    build: Build,
    cudart: &str,
) -> Option<(bool, String, String)> {
    let tk = match toolkit() {
        Ok(tk) => tk,
        Err(why) => {
            eprintln!("skipping {name}: {why}");
            return None;
        }
    };
    let cudart12 = std::env::var_os("CUDART12_LIB").map(PathBuf::from);
    // the folder of the shared cudart the program loads, and that cudart's file name
    let mut env_lib = None;
    match cudart {
        "shared" => match &tk.cudart_lib {
            Some(l) => env_lib = Some((l.clone(), "libcudart.so.13")),
            None => {
                eprintln!("skipping {name} (shared cudart): no libcudart.so.13 beside nvcc");
                return None;
            }
        },
        "static12" | "shared12" => match &cudart12 {
            Some(l) if cudart == "shared12" => env_lib = Some((l.clone(), "libcudart.so.12")),
            Some(_) => {}
            None => return None,
        },
        _ => {}
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cudart");
    let dir = scratch(&format!("{name}-{build:?}-{cudart}"));
    if let Some((l, file)) = &env_lib {
        // pip ships libcudart.so.13 (.12) only; the linker's -lcudart wants libcudart.so
        std::os::unix::fs::symlink(l.join(file), dir.join("libcudart.so")).expect("symlink");
    }
    let exe = dir.join(name);
    let mut cmd = Command::new(&tk.nvcc);
    // libraries go after the source: an archive only serves the objects before it
    let mut libs: Vec<std::ffi::OsString> = Vec::new();
    match (cudart, &cudart12) {
        ("static12", Some(l)) => {
            cmd.args(["-cudart", "none"]);
            libs.push(l.join("libcudart_static.a").into());
            libs.extend(["-ldl", "-lrt", "-lpthread"].map(Into::into));
        }
        ("shared12", _) => {
            cmd.args(["-cudart", "none"]);
            libs.push("-lcudart".into());
        }
        _ => {
            cmd.args(["-cudart", cudart]);
        }
    }
    cmd.arg("-L").arg(&dir);
    match build {
        Build::Default => {}
        Build::Compute80 => {
            cmd.args(["-gencode", "arch=compute_80,code=compute_80"]);
        }
        Build::Sass80 => {
            cmd.args(["-gencode", "arch=compute_80,code=sm_80"]);
        }
    }
    let built = cmd
        .args(flags)
        .args(sources.iter().map(|f| src.join(format!("{f}.cu"))))
        .args(&libs)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run nvcc");
    if !built.status.success() {
        let err = String::from_utf8_lossy(&built.stderr);
        // a machine whose host compiler nvcc refuses is not a ptxvm failure
        if err.contains("unsupported GNU version") || err.contains("failed to preprocess host") {
            eprintln!("skipping {name}: nvcc cannot use the host compiler:\n{err}");
            return None;
        }
        panic!("{name}.cu did not build:\n{err}");
    }
    let mut path = dir.as_os_str().to_owned();
    if let Some((l, _)) = &env_lib {
        path.push(":");
        path.push(l);
    }
    let out = Command::new(&exe)
        .current_dir(&dir)
        .env("LD_LIBRARY_PATH", path)
        .env_remove("PTXVM_TRACE")
        .env_remove("PTXVM_EXACT_BOUNDS")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .output()
        .expect("run the program");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Some((out.status.success(), stdout, stderr))
}

/// Runs `NAME` in all four builds (and four more with cudart 12 when `CUDART12_LIB` is set);
/// each must succeed and print `NAME: ok`.
fn all_builds(name: &str) {
    all_builds_of(
        name,
        &[name],
        &[],
        &["static", "shared", "static12", "shared12"],
    );
}

/// [`all_builds`] for a program of several files, with more nvcc flags, against `cudarts`.
fn all_builds_of(name: &str, sources: &[&str], flags: &[&str], cudarts: &[&str]) {
    for build in [Build::Default, Build::Compute80] {
        for &cudart in cudarts {
            let Some((ok, stdout, stderr)) = run_sources(name, sources, flags, build, cudart)
            else {
                continue;
            };
            // device printf reaches the program's stdout (reset.cu's kernel prints)
            let printed = name != "reset" || stdout.contains("kernel says 7");
            assert!(
                ok && printed && stdout.contains(&format!("{name}: ok")),
                "{name} ({build:?}, cudart {cudart}) failed:\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
        }
    }
}

#[test]
fn vector_add_templates_and_a_bad_launch() {
    all_builds("vector_add");
}

#[test]
fn constant_memory_and_memcpy_to_symbol() {
    all_builds("constant");
}

#[test]
fn device_variables() {
    all_builds("device_var");
}

#[test]
fn managed_variables_and_managed_memory() {
    all_builds("managed");
}

#[test]
fn streams_and_events() {
    all_builds("streams");
}

#[test]
fn host_threads_share_the_runtime() {
    all_builds("threads");
}

#[test]
fn device_reset_printf_and_occupancy() {
    all_builds("reset");
}

#[test]
fn relocatable_device_code_across_two_files() {
    // (not against cudart 12: with `-cudart none` nvcc skips the device link)
    all_builds_of(
        "rdc",
        &["rdc", "rdc_lib"],
        &["-rdc=true"],
        &["static", "shared"],
    );
}

#[test]
fn a_sass_only_program_gets_no_kernel_image_and_the_hint() {
    for cudart in ["static", "shared"] {
        let Some((ok, stdout, stderr)) = run("sass_only", Build::Sass80, cudart) else {
            continue;
        };
        assert!(ok && stdout.contains("sass_only: ok"), "{stdout}\n{stderr}");
        assert!(
            stderr.contains("holds no PTX") && stderr.contains("code=compute_XX"),
            "{stderr}"
        );
    }
}
