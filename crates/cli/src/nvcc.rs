//! `ptxvm nvcc`: nvcc with `--cubin` made runnable on ptxvm.
//!
//! Tools that compile CUDA C++ at run time and load the result (PyCUDA's `SourceModule` runs
//! `nvcc --cubin -arch sm_XY`) get SASS, which ptxvm cannot run, and nvcc calls its own ptxas
//! (from its own folder, not from `PATH`), so the `ptxvm ptxas` link cannot stand in. This
//! wrapper runs the real nvcc (`PTXVM_NVCC`, else the next `nvcc` on `PATH`): a `--cubin`
//! compile becomes a `--ptx` compile for the same architecture, handed to `ptxvm ptxas`, which
//! writes the cubin where nvcc would have (`-o`, else `NAME.cubin`); every other command line
//! goes to nvcc unchanged. `ptxvm exec` puts an `nvcc` link to this binary first on the
//! program's `PATH` when it finds a real nvcc (`--no-ptxas` leaves both alone).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The real nvcc: `PTXVM_NVCC`, else the first `nvcc` on `PATH` that is not this binary.
pub fn real_nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXVM_NVCC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let me = std::env::current_exe().and_then(|e| e.canonicalize()).ok();
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("nvcc"))
        .filter(|p| p.is_file())
        .find(|p| p.canonicalize().ok() != me)
}

/// Options of nvcc that take a value in the next argument (those a `--cubin` command line of
/// a tool may carry; `-o` and the architecture options are read apart).
const WITH_VALUE: &[&str] = &[
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-include",
    "-Xcompiler",
    "-Xptxas",
    "-ccbin",
    "--compiler-bindir",
    "--include-path",
    "--define-macro",
    "--undefine-macro",
    "-std",
    "--std",
    "-maxrregcount",
    "--maxrregcount",
    "-x",
    "--x",
    "-rdc",
    "--relocatable-device-code",
    "-t",
    "--threads",
    "-isystem",
    "--system-include",
];

/// A `--cubin` command line taken apart: where the cubin goes, for which GPU, and the
/// arguments for a `--ptx` compile of the same sources.
#[derive(Debug, PartialEq, Eq)]
struct Cubin {
    output: Option<String>,
    sm: String,
    rest: Vec<String>,
    inputs: Vec<String>,
}

/// `None` unless the command line asks for a cubin.
fn cubin_request(args: &[String]) -> Option<Cubin> {
    if !args.iter().any(|a| a == "--cubin" || a == "-cubin") {
        return None;
    }
    let mut c = Cubin {
        output: None,
        sm: "sm_75".to_string(),
        rest: Vec::new(),
        inputs: Vec::new(),
    };
    let mut k = 0;
    let value = |k: &mut usize, a: &str, names: &[&str]| -> Option<Option<String>> {
        for n in names {
            if a == *n {
                *k += 1;
                return Some(args.get(*k).cloned());
            }
            if let Some(v) = a.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                return Some(Some(v.to_string()));
            }
        }
        None
    };
    while k < args.len() {
        let a = args[k].as_str();
        if a == "--cubin" || a == "-cubin" {
        } else if let Some(v) = value(&mut k, a, &["-o", "--output-file"]) {
            c.output = v;
        } else if let Some(v) = value(&mut k, a, &["-arch", "--gpu-architecture"]) {
            if let Some(v) = v {
                c.sm = v.replace("compute_", "sm_");
            }
        } else if let Some(v) = value(&mut k, a, &["-code", "--gpu-code"]) {
            if let Some(v) = v.filter(|v| v.starts_with("sm_")) {
                c.sm = v;
            }
        } else if let Some(v) = value(&mut k, a, &["-gencode", "--generate-code"]) {
            let code = v.as_deref().and_then(|g| {
                g.split(',')
                    .find_map(|p| p.strip_prefix("code="))
                    .map(|c| c.trim_matches(|ch| ch == '[' || ch == ']').to_string())
            });
            if let Some(code) = code.filter(|c| c.starts_with("sm_")) {
                c.sm = code;
            }
        } else if WITH_VALUE.contains(&a) {
            c.rest.push(a.to_string());
            k += 1;
            if let Some(v) = args.get(k) {
                c.rest.push(v.clone());
            }
        } else if !a.starts_with('-') {
            c.inputs.push(a.to_string());
        } else {
            c.rest.push(a.to_string());
        }
        k += 1;
    }
    Some(c)
}

/// `ptxvm nvcc ARGS…` (or a binary named `nvcc`): see the module's documentation.
pub fn main(args: &[String]) -> ExitCode {
    let Some(nvcc) = real_nvcc() else {
        eprintln!("nvcc fatal   : ptxvm's nvcc wrapper found no real nvcc (set PTXVM_NVCC, or put nvcc on PATH)");
        return ExitCode::from(1);
    };
    let Some(c) = cubin_request(args) else {
        return status(Command::new(&nvcc).args(args).status());
    };
    let [input] = c.inputs.as_slice() else {
        eprintln!(
            "nvcc fatal   : ptxvm's nvcc wrapper makes a cubin from one source file at a time"
        );
        return ExitCode::from(1);
    };
    let output = c.output.clone().unwrap_or_else(|| {
        let stem = Path::new(input)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "a".to_string());
        format!("{stem}.cubin")
    });
    let ptx = PathBuf::from(format!("{output}.ptxvm-{}.ptx", std::process::id()));
    let compute = c.sm.replace("sm_", "compute_");
    let st = Command::new(&nvcc)
        .arg("--ptx")
        .arg(format!("-arch={compute}"))
        .args(&c.rest)
        .arg(input)
        .arg("-o")
        .arg(&ptx)
        .status();
    let code = status(st);
    if code != ExitCode::SUCCESS {
        let _ = std::fs::remove_file(&ptx);
        return code;
    }
    let ptxas_args = vec![
        format!("-arch={}", c.sm),
        ptx.to_string_lossy().into_owned(),
        "-o".to_string(),
        output,
    ];
    let r = crate::ptxas::main(&ptxas_args);
    let _ = std::fs::remove_file(&ptx);
    r
}

fn status(s: std::io::Result<std::process::ExitStatus>) -> ExitCode {
    match s {
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("nvcc fatal   : cannot run the real nvcc: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_cubin_command_line_is_taken_apart() {
        // PyCUDA's: nvcc --cubin -arch sm_80 -I/x kernel.cu
        let c = cubin_request(&v("--cubin -arch sm_80 -I /x kernel.cu")).unwrap();
        assert_eq!(c.sm, "sm_80");
        assert_eq!(c.inputs, ["kernel.cu"]);
        assert_eq!(c.rest, ["-I", "/x"]);
        assert_eq!(c.output, None);
        let c = cubin_request(&v(
            "-cubin -gencode arch=compute_90a,code=sm_90a -o k.cubin -O3 k.cu",
        ))
        .unwrap();
        assert_eq!(
            (c.sm.as_str(), c.output.as_deref()),
            ("sm_90a", Some("k.cubin"))
        );
        assert_eq!(c.rest, ["-O3"]);
        let c = cubin_request(&v(
            "--cubin --gpu-architecture=sm_86 --output-file=o.cubin a.cu",
        ))
        .unwrap();
        assert_eq!(
            (c.sm.as_str(), c.output.as_deref()),
            ("sm_86", Some("o.cubin"))
        );
        assert!(cubin_request(&v("-ptx -arch sm_80 a.cu")).is_none());
    }
}
