//! `ptxvm`: the command line of the PTX virtual machine.
//!
//! Subcommands: `check` (diagnostics), `fmt` (canonical formatting), `explain` (what a diagnostic
//! code means). Exit codes: 0 success, 1 bad input (diagnostics were printed), 2 usage errors
//! (clap) and kernel faults (later, `run`).

mod npy;
mod run_args;

use clap::{Parser, Subcommand, ValueEnum};
use ptx_diag::{render_to_stderr, ColorMode, Diagnostic, SourceFile};
use std::io::{Read, Write};
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
    /// PTX version, target requirements and a summary (e.g. `ptxvm doc ld.global`, `ptxvm doc %tid`).
    Doc {
        /// `OPCODE[.modifiers]`, `.directive` or `%register`.
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        Color::Auto => ColorMode::Auto,
        Color::Always => ColorMode::Always,
        Color::Never => ColorMode::Never,
    };
    match cli.command {
        Command::Check { files, target } => check(&files, target, color),
        Command::Fmt { file, check } => fmt(&file, check, color),
        Command::Explain { code } => explain(&code),
        Command::Doc {
            query,
            list,
            coverage,
        } => doc(query.as_deref(), list, coverage),
    }
}

/// Reads a file (or standard input for `-`) into a [`SourceFile`], reporting invalid UTF-8.
fn load(path: &str) -> Result<(SourceFile, Vec<Diagnostic>), String> {
    let mut bytes = Vec::new();
    let name = if path == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("<stdin>: {e}"))?;
        "<stdin>"
    } else {
        bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        path
    };
    Ok(ptx_syntax::decode_source(name, &bytes))
}

fn check(files: &[String], target: Option<String>, color: ColorMode) -> ExitCode {
    let mut failed = false;
    for path in files {
        let (file, mut diags) = match load(path) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: cannot read {e}");
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
            eprintln!("error: cannot read {e}");
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
        print!("{}", ptx_isa::render_list(coverage));
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
    let want = code.trim().to_ascii_uppercase();
    let all = ptx_syntax::codes::EXPLANATIONS
        .iter()
        .chain(ptx_check::EXPLANATIONS);
    for (c, title, text) in all {
        if c.0 == want {
            println!("{}: {title}\n\n{text}", c.0);
            return ExitCode::SUCCESS;
        }
    }
    eprintln!("error: unknown diagnostic code `{code}`");
    ExitCode::from(1)
}
