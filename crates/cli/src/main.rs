//! `ptxvm`: the command line of the PTX virtual machine.
//!
//! Subcommands: `run` (execute a kernel), `check` (diagnostics), `fmt` (canonical formatting),
//! `ir` (the lowered IR), `exec` (a CUDA program on ptxvm's libcuda), `ptxas` (a stand-in for
//! NVIDIA's assembler: checks PTX, writes a cubin holding it), `nvcc` (nvcc whose `--cubin`
//! output ptxvm can run), `bench` (the benchmark suite against native code), `doc` and
//! `explain`. Started under the name `ptxas` (`nvcc`), the binary is `ptxvm ptxas`
//! (`ptxvm nvcc`). Exit codes: 0 success, 1 bad input (invalid PTX, bad arguments or command line),
//! 2 kernel fault (trap, out-of-bounds access, deadlock, instruction budget or timeout).

mod bench;
mod binary;
mod bytecode;
mod demangle;
mod exec;
mod input;
mod npy;
mod nvcc;
mod ptxas;
mod run;
mod run_args;

use clap::{Parser, Subcommand, ValueEnum};
use ptx_diag::{render_to_stderr, ColorMode, Diagnostic, SourceFile};
use std::io::Write;
use std::process::ExitCode;

// The parser allocates many small AST nodes; mimalloc parses a 100 MB module about 2x faster than
// the system allocator (measured in docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "ptxvm",
    version,
    about = "A PTX virtual machine: check, format and run PTX on the CPU"
)]
struct Cli {
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Check PTX files as strictly as ptxas and print every problem found (exit 1 if any error).
    Check {
        /// PTX files; `-` reads standard input.
        #[arg(required = true)]
        files: Vec<String>,
        /// Check against this target (e.g. `sm_75`) instead of the module's `.target`.
        #[arg(long, value_name = "sm_XX")]
        target: Option<String>,
    },
    /// Print a PTX file in canonical form.
    Fmt {
        /// The PTX file; `-` reads standard input.
        file: String,
        /// Print nothing; exit 1 if the file is not already in canonical form.
        #[arg(long)]
        check: bool,
    },
    /// Show an instruction's, directive's or special register's syntax, modifiers, operands,
    /// PTX version, target requirements and a summary (e.g. `ptxvm doc ld.global`, `ptxvm doc %tid`);
    /// a CUDA C++ name (`ptxvm doc __syncthreads`) shows the PTX nvcc emits for it.
    Doc {
        /// `OPCODE[.modifiers]`, `.directive`, `%register` or a CUDA C++ name.
        #[arg(required_unless_present = "list")]
        query: Option<String>,
        /// List every instruction, directive and special register.
        #[arg(long)]
        list: bool,
        /// With `--list`: add the parse/check/execute coverage columns.
        #[arg(long, requires = "list")]
        coverage: bool,
    },
    /// Explain a diagnostic code (e.g. `ptxvm explain E0010`).
    Explain {
        /// The code, e.g. E0010.
        code: String,
    },
    /// Run a kernel: `ptxvm run vadd.ptx --grid 4 --block 256 --arg @a.npy --arg f32[1024] --print 1`.
    ///
    /// One `--arg` per kernel parameter, in order: a scalar parsed per the parameter's type
    /// (`42`, `-7`, `0x1f`, `2.5`, `inf`), a zeroed buffer `DTYPE[N]`, a filled buffer
    /// `DTYPE[N]=iota|=VALUE|=rand[:SEED]`, or a file `@data.npy` / `@raw.bin`. DTYPE is one of
    /// u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64. A by-value struct parameter takes
    /// `{f32:1.5, f32[4]=iota, u32:7}` (fields laid out as C does; a buffer field is its
    /// address, read back with `--print N.F`). `--symbol NAME=SPEC` sets a module variable
    /// before the launch, `--out-symbol NAME` shows it after; `--list-params` prints the
    /// parameter layout. Details: docs/api.md. Exit 0 success, 1 bad input, 2 kernel fault.
    Run(Box<run::RunOptions>),
    /// Run the benchmark suite (bench/kernels) on ptxvm and on native Rust code, check that the
    /// outputs agree, and print per kernel the time of each, their ratio and ptxvm's
    /// G thread-instructions/s, then the geometric mean of the ratios.
    Bench(bench::BenchOptions),
    /// Run a program that uses the CUDA driver API (Python with tinygrad, numba-cuda or
    /// cuda-bindings, a Rust program on cudarc, a C program) with ptxvm's libcuda.so.1 first on
    /// the loader path: `ptxvm exec -- python3 my_script.py`.
    Exec(exec::ExecOptions),
    /// A stand-in for NVIDIA's ptxas, with its command line (`ptxvm ptxas -arch=sm_80 -v k.ptx
    /// -o k.cubin`): checks the PTX, prints errors as ptxas does (exit 255), and writes a cubin
    /// holding the PTX, which ptxvm's libcuda loads. `ptxvm exec` points Triton at it.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Ptxas {
        /// ptxas's options and input (`ptxvm ptxas --help` lists them).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// nvcc with `--cubin` made runnable on ptxvm: the PTX of the same compile wrapped by
    /// `ptxvm ptxas`; anything else goes to the real nvcc (`PTXVM_NVCC`, else `PATH`).
    /// `ptxvm exec` puts it first on `PATH` for tools that run `nvcc --cubin` (PyCUDA).
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Nvcc {
        /// nvcc's options and inputs.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the lowered IR of a PTX file: resolved registers, symbols, basic blocks and their
    /// immediate post-dominators (the reconvergence points).
    Ir {
        /// The PTX file.
        file: String,
        /// Print each kernel's bytecode instead, as the interpreter runs it (after slot
        /// assignment, hoisting, if-conversion and fusion).
        #[arg(long)]
        bytecode: bool,
        /// With `--bytecode`: only this kernel.
        #[arg(long, requires = "bytecode")]
        kernel: Option<String>,
    },
}

/// Whether `ptxvm run` compiles with the bytecode rewrites (`PTXVM_REWRITES=0` turns them off:
/// a diagnostic switch like `PTXVM_SIMD=0`, as results are the same either way).
pub(crate) static REWRITES: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(true);

/// The file name this process was started under (`ptxas`, `nvcc` for the links `ptxvm exec`
/// makes).
fn started_as() -> Option<std::ffi::OsString> {
    let argv0 = std::path::PathBuf::from(std::env::args_os().next()?);
    argv0.file_name().map(|n| n.to_os_string())
}

fn main() -> ExitCode {
    // started as `ptxas` or `nvcc`: that stand-in, with the whole command line
    let stand_in: Option<fn(&[String]) -> ExitCode> = match started_as() {
        Some(n) if n == "ptxas" => Some(ptxas::main),
        Some(n) if n == "nvcc" => Some(nvcc::main),
        _ => None,
    };
    if let Some(run) = stand_in {
        let args: Vec<String> = std::env::args().skip(1).collect();
        return run(&args);
    }
    if std::env::var_os("PTXVM_REWRITES").is_some_and(|v| v == "0") {
        REWRITES.store(false, std::sync::atomic::Ordering::Relaxed);
    }
    // `PTXVM_SIMD=0` runs the portable copies of the interpreter's handlers (a diagnostic
    // switch: both copies compute the same results)
    if std::env::var_os("PTXVM_SIMD").is_some_and(|v| v == "0") {
        ptxvm::set_simd(false);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(1),
            };
        }
    };
    let color = match cli.color {
        Color::Auto => ColorMode::Auto,
        Color::Always => ColorMode::Always,
        Color::Never => ColorMode::Never,
    };
    match cli.command {
        Command::Check { files, target } => check(&files, target, color),
        Command::Fmt { file, check } => fmt(&file, check, color),
        Command::Explain { code } => explain(&code),
        Command::Ir {
            file,
            bytecode: true,
            kernel,
        } => bytecode::bytecode(&file, kernel.as_deref(), color),
        Command::Ir { file, .. } => ir(&file, color),
        Command::Bench(opts) => bench::bench(&opts, color),
        Command::Run(opts) => run::run(*opts, color),
        Command::Exec(opts) => exec::exec(opts),
        Command::Ptxas { args } => ptxas::main(&args),
        Command::Nvcc { args } => nvcc::main(&args),
        Command::Doc {
            query,
            list,
            coverage,
        } => doc(query.as_deref(), list, coverage),
    }
}

fn ir(path: &str, color: ColorMode) -> ExitCode {
    let (file, diags) = match load(path) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if !diags.is_empty() {
        render_to_stderr(&file, &diags, color);
        return ExitCode::from(1);
    }
    match ptxvm::Module::from_ptx(&ptxvm::Device::new(), file.name(), file.text()) {
        Ok(m) => {
            print!("{}", ptx_ir::print(m.ir()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            e.render_to_stderr(color);
            ExitCode::from(1)
        }
    }
}

/// Reads a file (or standard input for `-`, at most [`input::MAX_SOURCE_BYTES`]) into a
/// [`SourceFile`], reporting invalid UTF-8. A fatbin holding PTX (or a host object or program
/// with one) gives its newest PTX ([`binary::fatbin_ptx`]). Any other binary file (a cubin, a
/// SASS-only fatbin, any file with NUL bytes or mostly non-text bytes at its start) is refused
/// with what it is and how to get PTX from it ([`binary::refuse`]). The error is the whole
/// message after `error: `.
pub(crate) fn load(path: &str) -> Result<(SourceFile, Vec<Diagnostic>), String> {
    let bytes = input::read_bounded(path, input::MAX_SOURCE_BYTES, "PTX source")
        .map_err(|e| format!("cannot read {e}"))?;
    let name = if path == "-" { "<stdin>" } else { path };
    // a cubin `ptxvm ptxas` wrote: the PTX it holds
    if let Some(c) = binary::ptxvm_cubin(&bytes) {
        let shown = format!("{name} (PTX of a ptxvm ptxas cubin for {})", c.target);
        return Ok((SourceFile::new(shown, c.ptx), Vec::new()));
    }
    // a fatbin, or a host object or program with one, holding PTX: its newest PTX, as libcuda
    // would load it
    match binary::fatbin_ptx(&bytes) {
        Some(Ok(f)) => {
            if f.entries > 1 {
                eprintln!(
                    "note: {name}: using its PTX for compute_{} (of {} in the fatbin)",
                    f.arch, f.entries
                );
            }
            let shown = format!("{name} (compute_{} PTX)", f.arch);
            return Ok((SourceFile::new(shown, f.text), Vec::new()));
        }
        Some(Err(e)) => return Err(format!("{name}: {e}")),
        None => {}
    }
    if let Some(why) = binary::refuse(name, &bytes) {
        return Err(why);
    }
    Ok(ptx_syntax::decode_source(name, &bytes))
}

fn check(files: &[String], target: Option<String>, color: ColorMode) -> ExitCode {
    let mut failed = false;
    for path in files {
        let (file, mut diags) = match load(path) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
                continue;
            }
        };
        if diags.is_empty() {
            let opts = ptx_check::CheckOptions {
                target_override: target.clone(),
            };
            diags = ptx_check::check_source(file.text(), &opts);
        }
        if ptx_diag::has_errors(&diags) {
            failed = true;
            // CUDA C++ given by mistake gets the way out, as under `ptxvm run`, not a page of
            // PTX syntax errors
            if let Some(hint) = input::cuda_hint(path, file.name(), file.text(), "check") {
                eprintln!("error: {hint}");
                continue;
            }
        }
        render_to_stderr(&file, &diags, color);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn fmt(path: &str, check_only: bool, color: ColorMode) -> ExitCode {
    let (file, mut diags) = match load(path) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let parsed = ptx_syntax::parse(file.text());
    diags.extend(parsed.diagnostics);
    if ptx_diag::has_errors(&diags) {
        render_to_stderr(&file, &diags, color);
        eprintln!(
            "error: not formatting {}: it has syntax errors",
            file.name()
        );
        return ExitCode::from(1);
    }
    let text = ptx_syntax::print_module(&parsed.module);
    if check_only {
        if text == file.text() {
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "{} is not in canonical form (run `ptxvm fmt {path}`)",
            file.name()
        );
        return ExitCode::from(1);
    }
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn doc(query: Option<&str>, list: bool, coverage: bool) -> ExitCode {
    if list {
        let stages = ptx_isa::Stages {
            check: &ptx_check::support,
            execute: &ptxvm::coverage::executes,
        };
        print!("{}", ptx_isa::render_list(coverage.then_some(&stages)));
        return ExitCode::SUCCESS;
    }
    match ptx_isa::render_doc(query.unwrap_or("")) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn explain(code: &str) -> ExitCode {
    match ptx_diag::codes::explain(code) {
        Some((c, title, text)) => {
            println!("{}: {title}\n\n{text}", c.0);
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: unknown diagnostic code `{code}`");
            ExitCode::from(1)
        }
    }
}
