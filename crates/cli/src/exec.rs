//! `ptxvm exec -- PROGRAM ARGS…`: runs an unmodified program with ptxvm's `libcuda.so.1` first
//! on the loader path, as `compute-sanitizer PROGRAM` wraps one. The settings reach the
//! library as the environment variables a user can also set directly with `LD_LIBRARY_PATH`:
//! `PTXVM_THREADS`, `PTXVM_TIMEOUT`, `PTXVM_MAX_INSTRUCTIONS`, `PTXVM_TRACE`,
//! `PTXVM_EXACT_BOUNDS`, `PTXVM_CC` (and `PTXVM_PROGRESS`, which has no flag: `0` or
//! `always`; by default a progress line after 2 s on a terminal).
//!
//! Tools that assemble PTX with ptxas and load the cubin (Triton) get `ptxvm ptxas` instead:
//! a `ptxas` link to this binary comes first on the program's `PATH`, and Triton's
//! `TRITON_PTXAS_PATH`/`TRITON_PTXAS_BLACKWELL_PATH` point at it unless the user set them.
//! When a real nvcc is on `PATH`, an `nvcc` link (`ptxvm nvcc`, which turns `--cubin` compiles
//! into cubins holding PTX) comes first too, with `PTXVM_NVCC` naming the real one.
//! `--no-ptxas` leaves all of it alone.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Options of `ptxvm exec`.
#[derive(Args)]
pub struct ExecOptions {
    /// OS threads running a kernel's blocks (0: all cores) [env: PTXVM_THREADS].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Wall-clock limit of one launch, in seconds [env: PTXVM_TIMEOUT].
    #[arg(long, value_name = "S")]
    timeout: Option<f64>,
    /// Thread-instruction budget of one launch [env: PTXVM_MAX_INSTRUCTIONS].
    #[arg(long, value_name = "N")]
    max_instructions: Option<u64>,
    /// Print each driver API call with its arguments and result on stderr [env: PTXVM_TRACE=1].
    #[arg(long)]
    trace: bool,
    /// Report every kernel access past the size a buffer was allocated with; by default a buffer
    /// is 256-byte granular as on a GPU [env: PTXVM_EXACT_BOUNDS=1].
    #[arg(long)]
    exact_bounds: bool,
    /// Report this compute capability (e.g. 9.0) [env: PTXVM_CC; default 8.0].
    #[arg(long, value_name = "X.Y")]
    cc: Option<String>,
    /// Leave ptxas and nvcc alone: no `ptxvm ptxas`/`ptxvm nvcc` links first on `PATH`,
    /// Triton's ptxas variables untouched (the real tools write SASS, which ptxvm cannot run).
    #[arg(long)]
    no_ptxas: bool,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    program: Vec<String>,
}

/// Where ptxvm's `libcuda` is: `PTXVM_LIBCUDA`, else beside the `ptxvm` executable (`cargo
/// build` puts it in `deps/`), else in `../lib/ptxvm/`, else the copy embedded in this binary
/// (see `build.rs`), written once to a cache directory.
fn find_library() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("PTXVM_LIBCUDA").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("PTXVM_LIBCUDA={} is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate ptxvm itself: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("libcuda.so.1"),
        dir.join("libcuda.so"),
        dir.join("deps/libcuda.so"),
        dir.join("../lib/ptxvm/libcuda.so.1"),
    ];
    if let Some(p) = candidates.iter().find(|p| p.is_file()) {
        return Ok(p.clone());
    }
    match embedded() {
        Some(bytes) => extract(bytes),
        None => Err(format!(
            "ptxvm's libcuda.so was not found beside {} (build it with `cargo build --release -p ptxvm-cuda`, or set PTXVM_LIBCUDA to its path)",
            exe.display()
        )),
    }
}

/// The `libcuda.so` linked into this binary (see `build.rs`).
#[cfg(all(ptxvm_embedded_libcuda, not(test)))]
fn embedded() -> Option<&'static [u8]> {
    // SAFETY: the linker defines both symbols (build.rs: `--defsym` on the raw binary input),
    // the first and one-past-the-last byte of the library's bytes in the read-only image of
    // this executable, which live as long as the process.
    #[allow(unsafe_code)]
    unsafe {
        unsafe extern "C" {
            static ptxvm_libcuda_start: u8;
            static ptxvm_libcuda_end: u8;
        }
        let start = &raw const ptxvm_libcuda_start;
        let end = &raw const ptxvm_libcuda_end;
        let len = (end as usize).checked_sub(start as usize)?;
        (len > 0).then(|| std::slice::from_raw_parts(start, len))
    }
}

#[cfg(not(all(ptxvm_embedded_libcuda, not(test))))]
fn embedded() -> Option<&'static [u8]> {
    None
}

/// Writes the embedded library to `$XDG_CACHE_HOME/ptxvm/<id>/libcuda.so.1` (`~/.cache`, else
/// the temporary directory), once: an existing file with the same bytes is reused, and a new
/// one is written beside and renamed into place, so concurrent runs never see half a file.
fn extract(bytes: &[u8]) -> Result<PathBuf, String> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    // FNV-1a over every 64th byte and the length: names the build; the bytes are compared
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes.iter().step_by(64) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let id = format!("{}-{:016x}-{}", env!("CARGO_PKG_VERSION"), h, bytes.len());
    let mut tried = Vec::new();
    for root in [base.join("ptxvm"), std::env::temp_dir().join("ptxvm-cache")] {
        let dir = root.join(&id);
        let lib = dir.join("libcuda.so.1");
        if std::fs::read(&lib).is_ok_and(|old| old == bytes) {
            return Ok(lib);
        }
        let tmp = dir.join(format!("libcuda.so.1.{}", std::process::id()));
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, &lib));
        match written {
            Ok(()) => return Ok(lib),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                tried.push(format!("{}: {e}", dir.display()));
            }
        }
    }
    Err(format!(
        "cannot write ptxvm's embedded libcuda.so.1 ({}); set PTXVM_LIBCUDA to a copy",
        tried.join("; ")
    ))
}

/// The variables Triton reads for its ptxas (the second for sm_90 and newer).
const TRITON_PTXAS: [&str; 2] = ["TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"];

/// `dir/bin/NAME`, a link to this binary (which, started as `ptxas` or `nvcc`, is
/// `ptxvm ptxas` or `ptxvm nvcc`).
fn tool_link(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| format!("cannot locate ptxvm itself: {e}"))?;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    let link = bin.join(name);
    std::os::unix::fs::symlink(&exe, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    Ok(link)
}

/// A fresh directory holding `libcuda.so.1` and `libcuda.so`, links to `lib`.
fn library_dir(lib: &Path) -> Result<PathBuf, String> {
    let lib = lib
        .canonicalize()
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    let dir = std::env::temp_dir().join(format!("ptxvm-exec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for name in ["libcuda.so.1", "libcuda.so"] {
        std::os::unix::fs::symlink(&lib, dir.join(name))
            .map_err(|e| format!("{}: {e}", dir.join(name).display()))?;
    }
    Ok(dir)
}

/// Runs the program; its exit status is ptxvm's (128 + N when a signal N ended it).
pub fn exec(opts: ExecOptions) -> ExitCode {
    let dir = match find_library().and_then(|lib| library_dir(&lib)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let mut path = std::ffi::OsString::from(&dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    let (program, args) = opts.program.split_first().expect("clap requires a program");
    let mut cmd = Command::new(program);
    cmd.args(args).env("LD_LIBRARY_PATH", path);
    if let Some(n) = opts.threads {
        cmd.env("PTXVM_THREADS", n.to_string());
    }
    if let Some(s) = opts.timeout {
        cmd.env("PTXVM_TIMEOUT", s.to_string());
    }
    if let Some(n) = opts.max_instructions {
        cmd.env("PTXVM_MAX_INSTRUCTIONS", n.to_string());
    }
    if opts.trace {
        cmd.env("PTXVM_TRACE", "1");
    }
    if opts.exact_bounds {
        cmd.env("PTXVM_EXACT_BOUNDS", "1");
    }
    if let Some(cc) = &opts.cc {
        cmd.env("PTXVM_CC", cc);
    }
    if !opts.no_ptxas {
        // the real nvcc, found before our folder goes first on PATH: `ptxvm nvcc` runs it
        if let Some(real) = crate::nvcc::real_nvcc() {
            if tool_link(&dir, "nvcc").is_ok() {
                cmd.env("PTXVM_NVCC", real);
            }
        }
        let link = match tool_link(&dir, "ptxas") {
            Ok(l) => l,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        };
        let mut path = std::ffi::OsString::from(dir.join("bin"));
        if let Some(old) = std::env::var_os("PATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(old);
        }
        cmd.env("PATH", path);
        for var in TRITON_PTXAS {
            if std::env::var_os(var).is_none_or(|v| v.is_empty()) {
                cmd.env(var, &link);
            }
        }
    }
    let status = cmd.status();
    let _ = std::fs::remove_dir_all(&dir);
    match status {
        Ok(s) => match s.code() {
            Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
            None => {
                use std::os::unix::process::ExitStatusExt;
                ExitCode::from(128u8.saturating_add(s.signal().unwrap_or(0) as u8))
            }
        },
        Err(e) => {
            eprintln!("error: cannot run `{program}`: {e}");
            ExitCode::from(127)
        }
    }
}
