//! `ptxvm ptxas`: a stand-in for NVIDIA's PTX assembler, for tools that compile PTX with ptxas
//! and load the cubin it writes (Triton first of all).
//!
//! It takes ptxas's command line (`--gpu-name`/`-arch`, `-o`, `-v`, `-lineinfo`, `-O3`,
//! `--opt-level N`, `-c`, `--maxrregcount N`, `--input-as-string`, `--options-file`, …; an
//! option ptxas does not know is refused as ptxas refuses it), checks the input as
//! `ptxvm check` does, prints the problems in ptxas's one-line format (`ptxas FILE, line N;
//! error   : …`, then `ptxas fatal   : Ptx assembly aborted due to errors`, exit status 255),
//! prints `-v` resource lines from ptxvm's own counts, and writes in place of machine code a
//! cubin holding the PTX and the target ([`ptxvm::image::cubin`]), which ptxvm's libcuda loads
//! through every module, library and linker entry point. Options that steer code generation
//! (`-O`, `--fmad`, `-maxrregcount`, cache defaults…) are accepted and have no effect: ptxvm
//! runs the PTX itself.
//!
//! `ptxvm exec` puts a `ptxas` link to this binary first on the program's `PATH` and points
//! Triton's `TRITON_PTXAS_PATH`/`TRITON_PTXAS_BLACKWELL_PATH` at it; a binary started under
//! the name `ptxas` behaves as `ptxvm ptxas` (`main.rs` looks at the name it was started as).

use std::io::Write as _;
use std::process::ExitCode;

/// The CUDA release this stand-in reports: the PTX ISA ptxvm implements is 13.5's (PTX 9.5),
/// so a tool that picks its PTX version from ptxas's release (Triton: 13.5 → PTX 9.5) emits
/// PTX that ptxvm checks.
pub const RELEASE: &str = "13.5";

/// ptxas's exit status for every failure.
const FAILED: u8 = 255;

/// ptxas's last line after errors.
const ABORTED: &str = "Ptx assembly aborted due to errors";

/// The targets `--gpu-name` takes (ptxas 13.5's list): `sm_*` assemble, `compute_*` and `lto_*`
/// only check.
const GPUS: &[&str] = &[
    "75", "80", "86", "87", "88", "89", "90", "90a", "100", "100a", "100f", "103", "103a", "103f",
    "107", "107a", "107f", "110", "110a", "110f", "120", "120a", "120f", "121", "121a", "121f",
];

/// PTX ISA versions ptxas 13.5 lists (`--list-version`).
const VERSIONS: &str = "1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1 2.2 2.3 3.0 3.1 3.2 4.0 4.1 4.2 4.3 5.0 \
                        5.1 6.0 6.1 6.2 6.3 6.4 6.5 7.0 7.1 7.2 7.3 7.4 7.5 7.6 7.7 7.8 8.0 8.1 \
                        8.2 8.3 8.4 8.5 8.6 8.7 8.8 9.0 9.1 9.2 9.3 9.4 9.5";

/// What an option takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
}

/// ptxas 13.5's options (`ptxas --help`): long name, short name, what it takes. Besides the
/// documented ones, `--regAllocOptLevel` (undocumented; Triton passes it).
const OPTIONS: &[(&str, &str, Takes)] = {
    use Takes::*;
    &[
        ("Ofast-compile", "Ofc", Value),
        (
            "allow-expensive-optimizations",
            "allow-expensive-optimizations",
            Value,
        ),
        ("apply-controls", "apply-controls", Value),
        ("compile-as-tools-patch", "astoolspatch", Nothing),
        ("compile-only", "c", Nothing),
        ("compiler-annotations", "annotate", Nothing),
        ("def-load-cache", "dlcm", Value),
        ("def-store-cache", "dscm", Value),
        ("device-debug", "g", Nothing),
        ("device-function-maxrregcount", "func-maxrregcount", Value),
        ("device-stack-protector", "device-stack-protector", Value),
        (
            "disable-optimizer-constants",
            "disable-optimizer-consts",
            Nothing,
        ),
        ("disable-warnings", "w", Nothing),
        ("dont-merge-basicblocks", "no-bb-merge", Nothing),
        ("enable-func-clone-sc", "enable-func-clone-sc", Value),
        ("entry", "e", Value),
        ("extensible-whole-program", "ewp", Nothing),
        ("fmad", "fmad", Value),
        ("force-load-cache", "flcm", Value),
        ("force-store-cache", "fscm", Value),
        (
            "g-tensor-memory-access-check",
            "g-tmem-access-check",
            Nothing,
        ),
        ("generate-line-info", "lineinfo", Nothing),
        (
            "gno-fabric-access-check",
            "gno-fabric-access-check",
            Nothing,
        ),
        (
            "gno-tensor-memory-access-check",
            "gno-tmem-access-check",
            Nothing,
        ),
        ("gpu-name", "arch", Value),
        ("help", "h", Nothing),
        ("input-as-string", "ias", Value),
        ("jobserver", "jobserver", Nothing),
        (
            "legacy-bar-warp-wide-behavior",
            "legacy-bar-warp-wide-behavior",
            Nothing,
        ),
        ("list-arch", "arch-ls", Nothing),
        ("list-version", "version-ls", Nothing),
        ("machine", "m", Value),
        (
            "make-errors-visible-at-exit",
            "make-errors-visible-at-exit",
            Nothing,
        ),
        ("maxntid", "maxntid", Value),
        ("maxrregcount", "maxrregcount", Value),
        ("minnctapersm", "minnctapersm", Value),
        ("opt-level", "O", Value),
        ("optimize-float-atomics", "opt-fp-atomics", Nothing),
        ("options-file", "optf", Value),
        ("output-file", "o", Value),
        (
            "override-directive-values",
            "override-directive-values",
            Nothing,
        ),
        ("position-independent-code", "pic", Value),
        ("preserve-relocs", "preserve-relocs", Nothing),
        ("register-usage-level", "regUsageLevel", Value),
        ("return-at-end", "ret-end", Nothing),
        ("sanitize", "sanitize", Value),
        ("sp-bounds-check", "sp-bounds-check", Nothing),
        ("split-compile", "split-compile", Value),
        (
            "suppress-async-bulk-multicast-advisory-warning",
            "suppress-async-bulk-multicast-advisory-warning",
            Nothing,
        ),
        ("suppress-debug-info", "suppress-debug-info", Nothing),
        (
            "suppress-double-demote-warning",
            "suppress-double-demote-warning",
            Nothing,
        ),
        (
            "suppress-position-independent-code-warning",
            "suppress-position-independent-code-warning",
            Nothing,
        ),
        (
            "suppress-sparse-mma-advisory-info",
            "suppress-sparse-mma-advisory-info",
            Nothing,
        ),
        (
            "suppress-stack-size-warning",
            "suppress-stack-size-warning",
            Nothing,
        ),
        ("verbose", "v", Nothing),
        ("verbose2", "v2", Nothing),
        ("version", "V", Nothing),
        ("warn-on-double-precision-use", "warn-double-usage", Nothing),
        ("warn-on-local-memory-usage", "warn-lmem-usage", Nothing),
        ("warn-on-spills", "warn-spills", Nothing),
        ("warning-as-error", "Werror", Nothing),
        ("regAllocOptLevel", "regAllocOptLevel", Value),
    ]
};

/// One PTX input: its name as ptxas shows it, and its text.
struct Input {
    name: String,
    text: String,
}

/// The parsed command line.
#[derive(Default)]
struct Args {
    /// `(long name, value)` per option given, in order.
    options: Vec<(&'static str, Option<String>)>,
    files: Vec<String>,
}

impl Args {
    fn has(&self, long: &str) -> bool {
        self.options.iter().any(|(n, _)| *n == long)
    }
    fn last(&self, long: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .filter(|(n, _)| *n == long)
            .find_map(|(_, v)| v.as_deref())
    }
    fn all<'a>(&'a self, long: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(n, _)| *n == long)
            .filter_map(|(_, v)| v.as_deref())
    }
}

/// A fatal error as ptxas prints it; the exit status.
fn fatal(message: &str) -> ExitCode {
    eprintln!("ptxas fatal   : {message}");
    ExitCode::from(FAILED)
}

/// Parses ptxas's command line: `--long[=v]`, `-short[=v]`, a value in the next argument, and
/// `-O3` (the level attached, as ptxas reads it). `depth` bounds nested `--options-file`s.
fn parse(argv: &[String], args: &mut Args, depth: u32) -> Result<(), String> {
    let mut k = 0;
    while k < argv.len() {
        let a = &argv[k];
        k += 1;
        let Some(body) = a.strip_prefix('-').filter(|b| !b.is_empty()) else {
            args.files.push(a.clone());
            continue;
        };
        let body = body.strip_prefix('-').unwrap_or(body);
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let found = OPTIONS.iter().find(|(l, s, _)| *l == name || *s == name);
        // `-O3`: the short optimisation level takes its value attached
        let found = match (found, name.strip_prefix('O')) {
            (None, Some(level))
                if !level.is_empty() && level.bytes().all(|b| b.is_ascii_digit()) =>
            {
                args.options.push(("opt-level", Some(level.to_string())));
                continue;
            }
            (f, _) => f,
        };
        let Some(&(long, _, takes)) = found else {
            return Err(format!(
                "Unknown option '{}'",
                a.strip_prefix('-').unwrap_or(a)
            ));
        };
        let value = match (takes, attached) {
            (Takes::Nothing, Some(_)) => {
                return Err(format!("Option '{name}' takes no value"));
            }
            (Takes::Nothing, None) => None,
            (Takes::Value, Some(v)) => Some(v),
            // bare `-O` keeps the default level, as ptxas does (the next argument is an input)
            (Takes::Value, None) if name == "O" => None,
            (Takes::Value, None) => {
                let v = argv
                    .get(k)
                    .ok_or_else(|| format!("Missing value for option '{name}'"))?;
                k += 1;
                Some(v.clone())
            }
        };
        if long == "options-file" {
            if depth > 8 {
                return Err("Options files nested too deeply".to_string());
            }
            for file in value.iter().flat_map(|v| v.split(',')) {
                let text = std::fs::read_to_string(file)
                    .map_err(|_| format!("Options file '{file}' could not be opened"))?;
                let more: Vec<String> = text.split_whitespace().map(str::to_string).collect();
                parse(&more, args, depth + 1)?;
            }
            continue;
        }
        args.options.push((long, value));
    }
    Ok(())
}

/// `ptxvm ptxas ARGS…` (or a binary named `ptxas`): see the module's documentation.
pub fn main(argv: &[String]) -> ExitCode {
    let mut args = Args::default();
    if let Err(e) = parse(argv, &mut args, 0) {
        return fatal(&e);
    }
    let mut out = std::io::stdout().lock();
    if args.has("version") {
        let _ = write!(
            out,
            "ptxas: NVIDIA (R) Ptx optimizing assembler (ptxvm {} stand-in: checks PTX, writes a cubin holding it)\n\
             Copyright (c) 2005-2026 NVIDIA Corporation\n\
             Cuda compilation tools, release {RELEASE}, V{RELEASE}.0\n\
             Build ptxvm_{}\n",
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_VERSION"),
        );
        return ExitCode::SUCCESS;
    }
    if args.has("list-arch") {
        for g in GPUS {
            let _ = writeln!(out, "sm_{g}");
        }
        return ExitCode::SUCCESS;
    }
    if args.has("list-version") {
        for v in VERSIONS.split_whitespace() {
            let _ = writeln!(out, "{v}");
        }
        return ExitCode::SUCCESS;
    }
    let strings: Vec<&str> = args.all("input-as-string").collect();
    if args.has("help") || (args.files.is_empty() && strings.is_empty()) {
        let _ = write!(out, "{}", help());
        return ExitCode::SUCCESS;
    }
    let gpu = args.last("gpu-name").unwrap_or("sm_75").to_string();
    let Some((sm, generates)) = gpu_of(&gpu) else {
        return fatal(&format!(
            "Value '{gpu}' is not defined for option 'gpu-name'"
        ));
    };
    let mut inputs = Vec::new();
    for f in &args.files {
        let text = match crate::input::read_bounded(f, crate::input::MAX_SOURCE_BYTES, "PTX source")
        {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(_) => {
                eprintln!("ptxas fatal   : Input file '{f}' could not be opened");
                return fatal(ABORTED);
            }
        };
        inputs.push(Input {
            name: f.clone(),
            text,
        });
    }
    for s in strings {
        inputs.push(Input {
            name: "application ptx input".to_string(),
            text: s.to_string(),
        });
    }
    if inputs.len() > 1 {
        return fatal(&format!(
            "ptxvm's ptxas assembles one PTX input at a time ({} given); run it once per file and link the cubins with cuLink*",
            inputs.len()
        ));
    }
    let input = &inputs[0];
    if let Err(e) = assemble(input, &gpu, sm, &args) {
        return e;
    }
    if !generates {
        return ExitCode::SUCCESS;
    }
    let path = args.last("output-file").unwrap_or("elf.o");
    let cubin = ptxvm::image::cubin(&input.text, &gpu, args.has("compile-only"));
    if std::fs::write(path, cubin).is_err() {
        return fatal(&format!("Could not open output file '{path}'"));
    }
    ExitCode::SUCCESS
}

/// The SM number of `--gpu-name`'s value and whether code is generated for it (`sm_*`; the
/// virtual `compute_*` and `lto_*` targets only check).
fn gpu_of(gpu: &str) -> Option<(String, bool)> {
    let (kind, rest) = gpu.split_once('_')?;
    let generates = match kind {
        "sm" => true,
        "compute" | "lto" => false,
        _ => return None,
    };
    GPUS.contains(&rest)
        .then(|| (format!("sm_{rest}"), generates))
}

/// Whether PTX for `.target ptx` can be assembled for the GPU `gpu` (both `sm_…`), by the rule
/// ptxas's `--help` gives: `sm_XY` for every `sm_MN{,a,f}` with MN ≥ XY; `sm_XYf` for
/// `sm_XZ{,a,f}` with Z ≥ Y in the same family; `sm_XYa` for `sm_XYa` only.
fn assembles_for(ptx: &str, gpu: &str) -> bool {
    use ptxvm::image::sm_number;
    let (Some(p), Some(g)) = (sm_number(ptx), sm_number(gpu)) else {
        return false;
    };
    if ptx.ends_with('a') {
        ptx == gpu
    } else if ptx.ends_with('f') {
        p / 10 == g / 10 && g >= p
    } else {
        g >= p
    }
}

/// One diagnostic as ptxas prints it: `ptxas NAME, line N; error   : MESSAGE`.
fn print_diagnostic(file: &ptx_diag::SourceFile, name: &str, d: &ptx_diag::Diagnostic) {
    let line = d
        .labels
        .first()
        .map(|l| file.line_col(l.span.start).line)
        .unwrap_or(1);
    let kind = if d.is_error() { "error  " } else { "warning" };
    eprintln!(
        "ptxas {name}, line {line}; {kind} : {} ({})",
        d.message, d.code.0
    );
}

/// Checks and loads the input, printing its diagnostics and (`-v`) each entry's resources.
fn assemble(input: &Input, gpu: &str, sm: String, args: &Args) -> Result<(), ExitCode> {
    let file = ptx_diag::SourceFile::new(input.name.as_str(), input.text.as_str());
    let diags = ptx_check::check_source(&input.text, &ptx_check::CheckOptions::default());
    let quiet = args.has("disable-warnings");
    let werror = args.has("warning-as-error");
    for d in diags.iter().filter(|d| d.is_error() || !quiet) {
        print_diagnostic(&file, &input.name, d);
    }
    if ptx_diag::has_errors(&diags) || (werror && !diags.is_empty()) {
        return Err(fatal(ABORTED));
    }
    let target = ptxvm::image::ptx_target(&input.text).unwrap_or("sm_75");
    if !assembles_for(target, &sm) {
        return Err(fatal(&format!(
            "SM version specified by .target is higher than default SM version assumed (.target {target}, --gpu-name {gpu})"
        )));
    }
    let device = ptxvm::Device::new();
    let module = match ptxvm::Module::from_ptx(&device, &input.name, &input.text) {
        Ok(m) => m,
        Err(e) => return Err(report(&input.name, e)),
    };
    let entries: Vec<&str> = args.all("entry").flat_map(|e| e.split(',')).collect();
    let verbose = args.has("verbose") || args.has("verbose2");
    let ir = module.ir();
    if verbose {
        let gmem: u64 = global_bytes(ir, ptx_isa::StateSpace::Global);
        let cmem: u64 = global_bytes(ir, ptx_isa::StateSpace::Const);
        let mut line = format!("ptxas info    : {gmem} bytes gmem");
        if cmem > 0 {
            line += &format!(", {cmem} bytes cmem[3]");
        }
        eprintln!("{line}");
    }
    // ptxas reports the entries last-defined first
    let mut names = module.kernel_names();
    names.reverse();
    for name in names
        .iter()
        .filter(|n| entries.is_empty() || entries.contains(&n.as_str()))
    {
        // refused as ptxvm would refuse it at launch: the tool learns now, not at run time
        let resources = module
            .kernel(name)
            .and_then(|k| k.check_runnable().and_then(|()| k.resources()));
        let r = match resources {
            Ok(r) => r,
            Err(e) => return Err(report(&input.name, e)),
        };
        if verbose {
            let barriers = ir
                .functions
                .iter()
                .find(|f| f.name.as_str() == name)
                .map_or(0, barriers_used);
            let smem = if r.shared_static > 0 {
                format!(", {} bytes smem", r.shared_static)
            } else {
                String::new()
            };
            eprintln!("ptxas info    : Compiling entry function '{name}' for '{sm}'");
            eprintln!("ptxas info    : Function properties for {name}");
            eprintln!(
                "    {} bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
                r.local_bytes
            );
            // the driver's constant bank 0 holds 352 bytes before the kernel's parameters
            eprintln!(
                "ptxas info    : Used {} registers, used {barriers} barriers{smem}, {} bytes cmem[0]",
                r.registers,
                352 + r.param_size
            );
        }
    }
    Ok(())
}

/// Prints a load or compile error in ptxas's format: its diagnostics then the abort line, or
/// its one fatal line; the exit status.
fn report(name: &str, e: ptxvm::Error) -> ExitCode {
    match e {
        ptxvm::Error::Invalid { file, diagnostics } => {
            for d in &diagnostics {
                print_diagnostic(&file, name, d);
            }
            fatal(ABORTED)
        }
        other => fatal(&other.to_string()),
    }
}

/// Bytes of the module's variables in `space` that it defines.
fn global_bytes(ir: &ptx_ir::Module, space: ptx_isa::StateSpace) -> u64 {
    ir.globals
        .iter()
        .filter(|g| g.space == space && !g.external)
        .map(|g| g.size)
        .sum()
}

/// Named barriers an entry uses, as ptxas counts them: one more than the highest constant
/// barrier id of its `bar`/`barrier` instructions, all 16 when an id is in a register.
fn barriers_used(f: &ptx_ir::Function) -> u64 {
    use ptx_ir::{Imm, Operand};
    f.insts
        .iter()
        .filter(|i| matches!(i.op, ptx_isa::Opcode::Bar | ptx_isa::Opcode::Barrier))
        .map(|i| match i.operands.first() {
            Some(Operand::Imm(Imm::Int(id))) => (*id).min(15) + 1,
            Some(_) => 16,
            None => 1,
        })
        .max()
        .unwrap_or(0)
}

/// `ptxvm ptxas --help`.
fn help() -> String {
    let mut s = String::from(
        "Usage  : ptxas [options] <ptx file>\n\n\
         ptxvm's stand-in for NVIDIA's PTX assembler: it checks the PTX as `ptxvm check` does,\n\
         prints errors in ptxas's format, and writes a cubin holding the PTX for ptxvm's libcuda\n\
         to load (no machine code). Options that steer code generation are accepted and ignored.\n\n\
         Options (ptxas's):\n",
    );
    for (long, short, takes) in OPTIONS {
        let value = if *takes == Takes::Value {
            " <value>"
        } else {
            ""
        };
        s += &format!("  --{long}{value}  (-{short})\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(argv: &[&str]) -> Result<Args, String> {
        let mut a = Args::default();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        parse(&argv, &mut a, 0).map(|_| a)
    }

    #[test]
    fn options_take_ptxas_spellings() {
        let a = parsed(&[
            "-lineinfo",
            "-v",
            "--regAllocOptLevel=2",
            "--gpu-name=sm_90a",
            "x.ptx",
            "-o",
            "x.o",
            "-O3",
        ])
        .unwrap();
        assert_eq!(a.last("gpu-name"), Some("sm_90a"));
        assert_eq!(a.last("output-file"), Some("x.o"));
        assert_eq!(a.last("opt-level"), Some("3"));
        assert!(a.has("generate-line-info") && a.has("verbose"));
        assert_eq!(a.files, ["x.ptx"]);
        let a = parsed(&["-arch", "sm_80", "--opt-level", "0", "-O", "2"]).unwrap();
        assert_eq!(a.last("gpu-name"), Some("sm_80"));
        assert_eq!(a.last("opt-level"), Some("0"));
        // a bare -O takes nothing: `2` is an input, as with ptxas
        assert_eq!(a.files, ["2"]);
        assert_eq!(
            parsed(&["--bogus"]).err().as_deref(),
            Some("Unknown option '-bogus'")
        );
        assert!(parsed(&["-o"]).is_err());
        assert!(parsed(&["-v=1"]).is_err());
    }

    #[test]
    fn targets_assemble_by_ptxas_rule() {
        assert!(assembles_for("sm_80", "sm_80") && assembles_for("sm_80", "sm_90a"));
        assert!(assembles_for("sm_80", "sm_120f") && !assembles_for("sm_90", "sm_80"));
        assert!(assembles_for("sm_90a", "sm_90a") && !assembles_for("sm_90a", "sm_90"));
        assert!(!assembles_for("sm_100a", "sm_103a"));
        assert!(assembles_for("sm_100f", "sm_103a") && !assembles_for("sm_100f", "sm_120"));
        assert!(!assembles_for("sm_103f", "sm_100f"));
        assert_eq!(gpu_of("compute_90a"), Some(("sm_90a".to_string(), false)));
        assert_eq!(gpu_of("sm_100f"), Some(("sm_100f".to_string(), true)));
        assert_eq!(gpu_of("sm_60"), None);
        assert_eq!(
            ptxvm::image::ptx_target(".version 8.0\n.target sm_90a, debug\n"),
            Some("sm_90a")
        );
    }
}
