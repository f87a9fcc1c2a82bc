//! `ptxvm run`: launch one kernel with arguments given on the command line.

use crate::demangle::{demangle, find_kernel, shown_kernel};
use crate::npy;
use crate::run_args::{self, Dtype, HostArg, ParamInfo, ParamType};
use ptx_diag::{ColorMode, SourceFile};
use ptxvm::{Arg, Device, DeviceBuffer, LaunchOptions, Module, StructArg};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Options of `ptxvm run`, as parsed by clap.
#[derive(clap::Args)]
pub struct RunOptions {
    /// The PTX file; `-` reads standard input.
    pub file: String,
    /// Link another PTX file into the module (repeatable): `.extern` functions and variables
    /// are resolved by name across the files, as libcuda's JIT linker (`cuLinkAddData`) does.
    #[arg(long = "link", value_name = "FILE")]
    pub link: Vec<String>,
    /// The kernel (`.entry`) to run, or its C++ name when one kernel has it (`fill` for
    /// `_Z4fillPii`); optional when the module has one.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Grid size in blocks: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// Block size in threads: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    pub block: String,
    /// Dynamic shared memory per block, in bytes: the size of the kernel's `extern .shared`
    /// array (CUDA's `extern __shared__`, the third launch parameter `<<<g, b, BYTES>>>`).
    #[arg(long, default_value_t = 0)]
    pub shared: u64,
    /// Cluster shape in blocks: X[,Y[,Z]] (the grid must be a multiple of it; at most 8
    /// blocks, 16 with --non-portable-cluster). The blocks of a cluster run together.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Allow clusters of up to 16 blocks.
    #[arg(long)]
    pub non_portable_cluster: bool,
    /// One per kernel parameter, in order (see above).
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Write buffer argument N after the run: N=PATH.npy (NumPy) or N=PATH (raw bytes); N.F is
    /// the buffer of field F of struct argument N. The path is checked before the launch; a
    /// kernel fault still writes the buffer, as the fault left it.
    #[arg(long, value_name = "N=PATH")]
    pub out: Vec<String>,
    /// Print buffer argument N (or N.F, a struct field's buffer) after the run (at most COUNT
    /// elements).
    #[arg(long, value_name = "N[:COUNT]")]
    pub print: Vec<String>,
    /// Initialize the module variable NAME (`.global`/`__device__` or `.const`/`__constant__`)
    /// before the launch: SPEC is `DTYPE:VALUE`, `DTYPE:[V,V,…]`, `DTYPE[N]=…`, `@PATH[.npy]`,
    /// a struct `{…}` or a bare scalar; it must give exactly the variable's size.
    #[arg(long = "symbol", value_name = "NAME=SPEC", allow_hyphen_values = true)]
    pub symbols: Vec<String>,
    /// After the run, print module variable NAME as DTYPE elements (default: its declared
    /// type), or write it to PATH (.npy: NumPy; else raw bytes).
    #[arg(long = "out-symbol", value_name = "NAME[:DTYPE][=PATH]")]
    pub out_symbols: Vec<String>,
    /// Print each kernel's parameters (offset, size, alignment in the parameter buffer) and the
    /// module's variables, and exit without running.
    #[arg(long)]
    pub list_params: bool,
    /// Print a JSON report (kernel, grid, block, instructions executed, seconds) on stdout;
    /// after a kernel fault, its code and message instead of the instruction counts.
    #[arg(long)]
    pub json: bool,
    /// OS threads running blocks; results do not depend on it unless the kernel races
    /// [default: 0 = one per core].
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
    /// Stop (exit 2) after this many thread instructions.
    #[arg(long, default_value_t = 1u64 << 40)]
    pub max_instructions: u64,
    /// Stop (exit 2) after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// Stack (local memory) per thread, in bytes, like cudaLimitStackSize: what calls,
    /// recursion and alloca may use; raised to what the kernel's .local variables need (up to
    /// 512 KiB; a larger value raises that cap too).
    #[arg(long, value_name = "BYTES", default_value_t = ptxvm::DEFAULT_STACK_SIZE)]
    pub stack_size: u64,
    /// Shared memory per block (static + dynamic), in bytes: 227 KiB as on sm_90.
    #[arg(long, value_name = "BYTES", default_value_t = ptxvm::SHARED_LIMIT)]
    pub shared_limit: u64,
    /// printf FIFO size in bytes (CUDA's cudaLimitPrintfFifoSize): how much output blocks
    /// waiting for earlier blocks to finish may hold; a block that would overfill it pauses.
    /// Output is never lost and always in block order.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub printf_fifo: usize,
    /// Device heap size in bytes (CUDA's cudaLimitMallocHeapSize): what the kernel's `malloc`
    /// may hand out (it returns NULL when the heap is full).
    #[arg(long, value_name = "BYTES", default_value_t = ptxvm::DEFAULT_HEAP_SIZE)]
    pub heap_size: u64,
    /// Sanitizer checks, comma-separated: `mem` (bounds and alignment, always on), `race`
    /// (shared-memory data races between warps not ordered by a barrier), `init` (reads of
    /// shared memory nobody wrote), `sync` (barriers not every thread of the block reaches),
    /// `all`. Each problem is reported once per instruction with an explain code, then an
    /// `ERROR SUMMARY: N errors` line; exit status 2 when any is found. Checked runs are
    /// several times slower.
    #[arg(long, value_name = "LIST")]
    pub check: Option<String>,
    /// With --check: print at most N reports (all are counted in the summary) [default: 100;
    /// 0: no limit].
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100,
        hide_default_value = true
    )]
    pub print_limit: usize,
}

/// Standard output, remembering its first write error.
struct Recording {
    out: std::io::Stdout,
    error: Option<std::io::Error>,
}

impl Recording {
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if self.error.is_none() {
                self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
            }
        }
        r
    }
}

impl Write for Recording {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.out.write(buf);
        self.note(r)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.out.flush();
        self.note(r)
    }
}

fn bad(msg: impl AsRef<str>) -> ExitCode {
    eprintln!("error: {}", msg.as_ref());
    ExitCode::from(1)
}

/// `X[,Y[,Z]]`.
fn dims(text: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{what} `{text}`: expected X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("--{what} `{text}`: `{p}` is not a positive integer"))?;
    }
    Ok(d)
}

fn param_info(p: &ptxvm::ParamInfo) -> ParamInfo {
    let ty = if p.array {
        ParamType::Aggregate
    } else {
        ParamType::from_ptx(&p.type_name).unwrap_or(ParamType::Aggregate)
    };
    ParamInfo {
        name: p.name.clone(),
        ty,
        size: p.size as usize,
    }
}

/// The buffers made for `--arg`s, by `N` (a buffer argument) or `N.F` (a buffer field of a
/// struct argument).
type Buffers = std::collections::HashMap<String, (Dtype, DeviceBuffer<u8>)>;

/// Parses the `N` or `N.F` of `--out N=PATH` / `--print N[:COUNT]`: the key of a buffer.
fn buffer_key(spec: &str, nargs: usize, flag: &str, buffers: &Buffers) -> Result<String, String> {
    let (n, field) = match spec.split_once('.') {
        Some((n, f)) => (n, Some(f)),
        None => (spec, None),
    };
    let n: usize = n
        .parse()
        .map_err(|_| format!("--{flag}: `{spec}` is not an argument index (N or N.F)"))?;
    if n >= nargs {
        return Err(format!(
            "--{flag}: argument {n} does not exist (the kernel has {nargs} parameters, numbered from 0)"
        ));
    }
    let key = match field {
        None => n.to_string(),
        Some(f) => {
            let f: usize = f
                .parse()
                .map_err(|_| format!("--{flag}: `{spec}`: `{f}` is not a field index"))?;
            format!("{n}.{f}")
        }
    };
    if !buffers.contains_key(&key) {
        return Err(match field {
            None => format!("--{flag} {n}: argument {n} is a scalar, not a buffer"),
            Some(_) => format!(
                "--{flag} {key}: argument {n} has no buffer field {} (fields are numbered from 0, `align:` entries not counted)",
                key.split_once('.').map_or("", |x| x.1)
            ),
        });
    }
    Ok(key)
}

/// A device buffer of `bytes` bytes of `dtype`, filled per `fill` (`spec` names it in errors),
/// named `label` in fault reports.
fn make_buffer(
    device: &Device,
    spec: &str,
    dtype: Dtype,
    bytes: u64,
    fill: &run_args::Fill,
    label: &str,
) -> Result<DeviceBuffer<u8>, String> {
    let b = usize::try_from(bytes)
        .map_err(|_| format!("{bytes} bytes do not fit in this machine's memory"))
        .and_then(|n| device.alloc_bytes(n, label).map_err(|e| e.to_string()))
        .map_err(|e| {
            format!(
                "cannot allocate {}[{}] ({bytes} bytes) in device memory: {e}",
                dtype.name(),
                bytes / dtype.size().max(1) as u64
            )
        })?;
    // the contents are made straight into device memory, piece by piece
    let mut write = |off: u64, piece: &[u8]| b.write_bytes(off, piece).map_err(|e| e.to_string());
    run_args::fill_buffer(spec, dtype, bytes, fill, &mut write)?;
    Ok(b)
}

/// Lays out a struct spec's fields, allocating its buffer fields (kept in `buffers` under
/// `KEY.F`); `what` names the argument or variable in labels.
fn make_struct(
    device: &Device,
    fields: &[run_args::FieldSpec],
    key: &str,
    what: &str,
    buffers: &mut Buffers,
) -> Result<StructArg, String> {
    let mut st = StructArg::new();
    let mut f = 0;
    for field in fields {
        match field {
            run_args::FieldSpec::AlignNext(a) => {
                st = st.align_next(*a);
                continue;
            }
            run_args::FieldSpec::Value { align, bytes } => st = st.field(*align as u64, bytes),
            run_args::FieldSpec::Buffer {
                dtype,
                bytes,
                fill,
                spec,
            } => {
                let label = format!(
                    "{what} field {f} ({}[{}])",
                    dtype.name(),
                    bytes / dtype.size().max(1) as u64
                );
                let b = make_buffer(device, spec, *dtype, *bytes, fill, &label)
                    .map_err(|e| format!("field {f} `{spec}`: {e}"))?;
                st = st.pointer(b.addr());
                buffers.insert(format!("{key}.{f}"), (*dtype, b));
            }
        }
        f += 1;
    }
    Ok(st)
}

/// The buffer element type that shows a variable of PTX type `ty` (`.b32`: `u32`).
fn dtype_of(ty: Option<ptxvm::ScalarType>) -> Dtype {
    let Some(t) = ty else { return Dtype::U8 };
    let name = t.suffix().trim_start_matches('.');
    let bits = t.size_bits();
    let shown = if name.starts_with('f') || name == "bf16" {
        name.to_string()
    } else if name.starts_with('s') {
        format!("i{bits}")
    } else {
        format!("u{bits}")
    };
    Dtype::from_name(&shown).unwrap_or(Dtype::U8)
}

/// `--list-params`: each kernel's parameter layout and the module's variables.
fn list_params(module: &Module, kernel: Option<&str>) -> ExitCode {
    let names = match kernel {
        Some(k) => match find_kernel(&module.kernel_names(), k, module.source().name()) {
            Ok(k) => vec![k],
            Err(e) => return bad(e),
        },
        None => module.kernel_names(),
    };
    let mut out = String::new();
    for name in &names {
        let k = match module.kernel(name) {
            Ok(k) => k,
            Err(e) => return bad(e.to_string()),
        };
        let params = k.params();
        let size = match k.param_layout() {
            Ok((_, size)) => size,
            Err(e) => return bad(e.to_string()),
        };
        out += &format!(
            "kernel `{name}`{}: {} parameters, {size} bytes of parameter buffer\n",
            demangle(name).map_or(String::new(), |d| format!(" ({})", d.shown())),
            params.len()
        );
        let w = params
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0)
            .max(4);
        if !params.is_empty() {
            out += &format!(
                "  {:>3}  {:<w$}  {:<12} {:>6} {:>6} {:>5}\n",
                "#", "name", "type", "offset", "size", "align"
            );
        }
        for (i, p) in params.iter().enumerate() {
            let ty = if p.array {
                format!("{}[{}]", p.type_name, p.size)
            } else {
                p.type_name.clone()
            };
            out += &format!(
                "  {i:>3}  {:<w$}  {:<12} {:>6} {:>6} {:>5}{}\n",
                p.name,
                ty,
                p.offset,
                p.size,
                p.align,
                if p.array { "  struct: --arg {…}" } else { "" }
            );
        }
    }
    let globals = module.globals();
    if globals.is_empty() {
        out += "module variables: none\n";
    } else {
        out += "module variables (--symbol NAME=SPEC, --out-symbol NAME):\n";
        for g in &globals {
            out += &format!(
                "  {:<40} {:>6} bytes, align {}\n",
                g.declaration(),
                g.size,
                g.align
            );
        }
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    ExitCode::SUCCESS
}

/// `1234567` as `1.23 M`: a count for the progress bar.
fn human_count(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1_000_000_000_000, "T"),
        (1_000_000_000, "G"),
        (1_000_000, "M"),
        (1_000, "k"),
    ];
    for (size, unit) in UNITS {
        if n >= size {
            return format!("{:.2} {unit}", n as f64 / size as f64);
        }
    }
    n.to_string()
}

/// A fault on `.shared` memory in a kernel that declares dynamic shared memory (an unsized
/// `.extern .shared` array, CUDA's `extern __shared__`) says how its size is given: with
/// `--shared` absent the array has 0 bytes, so any access to it faults.
fn dynamic_shared_hint(
    module: &Module,
    shared: u64,
    failure: ptxvm::Failure,
    d: &mut ptx_diag::Diagnostic,
) {
    if failure != (ptxvm::Failure::OutOfBounds { shared: true }) {
        return;
    }
    let names: Vec<String> = module
        .ir()
        .globals
        .iter()
        .filter(|g| {
            matches!(
                g.space,
                ptx_isa::StateSpace::Shared | ptx_isa::StateSpace::SharedCta
            ) && g.external
                && g.size == 0
        })
        .map(|g| g.name.to_string())
        .collect();
    if names.is_empty() {
        return;
    }
    let decl = format!("extern .shared {}", names.join(", "));
    if shared == 0 {
        let help = format!(
            "the kernel uses dynamic shared memory ({decl}); give its size with --shared BYTES"
        );
        match &d.help {
            None => d.help = Some(help),
            Some(_) => d.notes.push(help),
        }
    } else {
        d.notes.push(format!(
            "the kernel's dynamic shared memory ({decl}) is the {shared} bytes given with --shared"
        ));
    }
}

/// `file` with the `--link` files linked in ([`ptxvm::link`]): each input checked on its own
/// (its errors name it), then resolved by name into one module; the linker's warnings go to
/// stderr. Without `--link`, `None`: `file` itself is the module.
fn linked(
    file: &SourceFile,
    libs: &[String],
    color: ColorMode,
) -> Result<Option<SourceFile>, ExitCode> {
    if libs.is_empty() {
        return Ok(None);
    }
    let mut inputs = vec![ptxvm::link::Input {
        name: file.name().to_string(),
        text: file.text().to_string(),
    }];
    for path in libs {
        let (lib, diags) = crate::load(path).map_err(bad)?;
        if !diags.is_empty() {
            ptx_diag::render_to_stderr(&lib, &diags, color);
            return Err(ExitCode::from(1));
        }
        inputs.push(ptxvm::link::Input {
            name: lib.name().to_string(),
            text: lib.text().to_string(),
        });
    }
    for i in &inputs {
        if let Err(log) = ptxvm::link::check_input(&i.name, &i.text) {
            eprint!("{log}");
            return Err(ExitCode::from(1));
        }
    }
    match ptxvm::link::link(&inputs, false) {
        Ok(l) => {
            // (each line of the info log is a `warning: …` already)
            eprint!("{}", l.info);
            let names: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
            Ok(Some(SourceFile::new(
                format!("<linked {}>", names.join(" + ")),
                l.ptx,
            )))
        }
        Err(log) => {
            eprintln!("error: the link failed:");
            eprint!("{log}");
            Err(ExitCode::from(1))
        }
    }
}

pub fn run(o: RunOptions, color: ColorMode) -> ExitCode {
    let (file, diags) = match crate::load(&o.file) {
        Ok(x) => x,
        Err(e) => return bad(e),
    };
    let cuda = || crate::input::cuda_hint(&o.file, file.name(), file.text(), "run").map(bad);
    if !diags.is_empty() {
        if let Some(code) = cuda() {
            return code;
        }
        ptx_diag::render_to_stderr(&file, &diags, color);
        return ExitCode::from(1);
    }
    let linked = match linked(&file, &o.link, color) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let source = linked.as_ref().unwrap_or(&file);
    let device = Device::new();
    if let Err(e) = device.set_heap_size(o.heap_size) {
        return bad(e.to_string());
    }
    let mut module = match Module::from_ptx(&device, source.name(), source.text()) {
        Ok(m) => m,
        Err(e) => {
            if let Some(code) = cuda() {
                return code;
            }
            e.render_to_stderr(color);
            return ExitCode::from(1);
        }
    };
    if !crate::REWRITES.load(std::sync::atomic::Ordering::Relaxed) {
        module.set_compile_options(ptxvm::CompileOptions {
            rewrites: false,
            ..Default::default()
        });
    }
    if o.list_params {
        return list_params(&module, o.kernel.as_deref());
    }
    let names = module.kernel_names();
    let kernel_name = match &o.kernel {
        Some(k) => match find_kernel(&names, k, file.name()) {
            Ok(k) => k,
            Err(e) => return bad(e),
        },
        None => match names.as_slice() {
            [one] => one.clone(),
            [] => return bad(format!("{} has no kernel (.entry)", o.file)),
            many => {
                let shown: Vec<String> = many.iter().map(|k| shown_kernel(k)).collect();
                return bad(format!(
                    "{} has {} kernels; choose one with --kernel: {}",
                    o.file,
                    many.len(),
                    shown.join(", ")
                ));
            }
        },
    };
    let kernel = match module.kernel(&kernel_name) {
        Ok(k) => k,
        Err(e) => return bad(e.to_string()),
    };
    let (grid, block) = match (dims(&o.grid, "grid"), dims(&o.block, "block")) {
        (Ok(g), Ok(b)) => (g, b),
        (Err(e), _) | (_, Err(e)) => return bad(e),
    };
    let cluster = match o.cluster.as_deref().map(|c| dims(c, "cluster")).transpose() {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    let params = kernel.params();
    if o.args.len() != params.len() {
        let list: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(k, p)| format!("{k}: {} {}", p.name, param_info(p).type_text()))
            .collect();
        return bad(format!(
            "kernel `{kernel_name}` takes {} arguments, {} given with --arg\n  parameters: {}\n  (`ptxvm run {} --list-params` shows their offsets, sizes and alignment)",
            params.len(),
            o.args.len(),
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            },
            o.file
        ));
    }
    // arguments
    let mut buffers = Buffers::new();
    let mut args = Vec::new();
    for (k, (spec, p)) in o.args.iter().zip(&params).enumerate() {
        let info = param_info(p);
        match run_args::parse_arg(spec, &info, Path::new(".")) {
            Ok(HostArg::Scalar(bytes)) => args.push(Arg::Bytes(bytes)),
            Ok(HostArg::Buffer { dtype, bytes, fill }) => {
                let label = format!(
                    "argument {k} (`{}`, {}[{}])",
                    p.name,
                    dtype.name(),
                    bytes / dtype.size().max(1) as u64
                );
                let b = match make_buffer(&device, spec, dtype, bytes, &fill, &label) {
                    Ok(b) => b,
                    Err(e) => return bad(format!("--arg {k} (`{}`): {e}", p.name)),
                };
                args.push(Arg::Pointer(b.addr()));
                buffers.insert(k.to_string(), (dtype, b));
            }
            Ok(HostArg::Struct(fields)) => {
                let what = format!("argument {k} (`{}`)", p.name);
                match make_struct(&device, &fields, &k.to_string(), &what, &mut buffers)
                    .and_then(|st| st.bytes_for(p))
                {
                    Ok(bytes) => args.push(Arg::Bytes(bytes)),
                    Err(e) => {
                        return bad(format!(
                            "--arg {k} (`{}`, {}): {e}",
                            p.name,
                            info.type_text()
                        ))
                    }
                }
            }
            Err(e) => {
                return bad(format!(
                    "--arg {k} (`{}`, {}): {e}",
                    p.name,
                    info.type_text()
                ))
            }
        }
    }
    // module variables initialised
    let mut seen = std::collections::HashSet::new();
    for spec in &o.symbols {
        let Some((name, value)) = spec.split_once('=') else {
            return bad(format!("--symbol `{spec}`: expected NAME=SPEC"));
        };
        let g = match module.global_info(name) {
            Ok(g) => g,
            Err(e) => return bad(format!("--symbol {name}: {e}")),
        };
        if !seen.insert(name.to_string()) {
            return bad(format!("--symbol {name}: given twice"));
        }
        let decl = g.declaration();
        let width = g.ty.map_or(1, |t| (t.size_bits() as u64 / 8).max(1));
        let var = ParamInfo {
            name: name.to_string(),
            ty: g
                .ty
                .and_then(|t| ParamType::from_ptx(t.suffix()))
                .unwrap_or(ParamType::Aggregate),
            size: g.size as usize,
        };
        let fail = |e: String| bad(format!("--symbol {name} ({decl}): {e}"));
        let size_err = |n: u64| {
            bad(format!(
                "--symbol {name}: `{value}` gives {n} bytes, but `{name}` ({decl}) is {} bytes",
                g.size
            ))
        };
        let arg = match run_args::parse_symbol(value, &var, g.size != width, Path::new(".")) {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        let bytes = match arg {
            HostArg::Scalar(bytes) => bytes,
            HostArg::Struct(fields) => {
                let what = format!("variable `{name}`");
                match make_struct(&device, &fields, &format!("@{name}"), &what, &mut buffers)
                    .and_then(|st| st.to_bytes().map_err(|e| e.to_string()))
                {
                    Ok(b) => b,
                    Err(e) => return fail(e),
                }
            }
            HostArg::Buffer { dtype, bytes, fill } => {
                if bytes != g.size {
                    return size_err(bytes);
                }
                let mut write = |off: u64, piece: &[u8]| {
                    module
                        .write_global_bytes(name, off, piece)
                        .map_err(|e| e.to_string())
                };
                if let Err(e) = run_args::fill_buffer(value, dtype, bytes, &fill, &mut write) {
                    return fail(e);
                }
                continue;
            }
        };
        if bytes.len() as u64 != g.size {
            return size_err(bytes.len() as u64);
        }
        if let Err(e) = module.write_global_bytes(name, 0, &bytes) {
            return fail(e.to_string());
        }
    }
    // module variables shown afterwards
    let mut out_symbols = Vec::new();
    for spec in &o.out_symbols {
        let (head, path) = match spec.split_once('=') {
            Some((h, p)) => (h, Some(p.to_string())),
            None => (spec.as_str(), None),
        };
        let (name, dt) = match head.split_once(':') {
            Some((n, d)) => (n, Some(d)),
            None => (head, None),
        };
        let g = match module.global_info(name) {
            Ok(g) => g,
            Err(e) => return bad(format!("--out-symbol {name}: {e}")),
        };
        let dtype = match dt {
            None => dtype_of(g.ty),
            Some(d) => match Dtype::from_name(d) {
                Some(d) => d,
                None => {
                    let names: Vec<&str> = Dtype::ALL.iter().map(|d| d.name()).collect();
                    return bad(format!(
                        "--out-symbol `{spec}`: unknown dtype `{d}` (expected one of {})",
                        names.join(" ")
                    ));
                }
            },
        };
        if g.size % dtype.size() as u64 != 0 {
            return bad(format!(
                "--out-symbol `{spec}`: `{name}` ({}) is {} bytes, not a whole number of {} elements",
                g.declaration(),
                g.size,
                dtype.name()
            ));
        }
        out_symbols.push((name.to_string(), dtype, path));
    }
    // outputs requested
    let mut outs = Vec::new();
    for spec in &o.out {
        let Some((n, path)) = spec.split_once('=') else {
            return bad(format!("--out `{spec}`: expected N=PATH"));
        };
        match buffer_key(n, params.len(), "out", &buffers) {
            Ok(key) => outs.push((key, path.to_string())),
            Err(e) => return bad(e),
        }
    }
    let mut prints = Vec::new();
    for spec in &o.print {
        let (n, count) = match spec.split_once(':') {
            Some((n, c)) => match c.parse::<usize>() {
                Ok(c) => (n, Some(c)),
                Err(_) => return bad(format!("--print `{spec}`: `{c}` is not a count")),
            },
            None => (spec.as_str(), None),
        };
        match buffer_key(n, params.len(), "print", &buffers) {
            Ok(key) => prints.push((key, count)),
            Err(e) => return bad(e),
        }
    }
    if !(o.timeout > 0.0 && o.timeout.is_finite()) {
        return bad(format!(
            "--timeout {}: expected a positive number of seconds",
            o.timeout
        ));
    }
    if o.printf_fifo == 0 {
        return bad("--printf-fifo 0: expected a positive number of bytes");
    }
    // the files to write are opened now, so that a path that cannot be written (a missing
    // folder, no permission) is refused before a long run rather than after it
    let mut out_files = Vec::new();
    for (n, path) in &outs {
        match OutFile::open(path) {
            Ok(f) => out_files.push(f),
            Err(e) => return bad(format!("--out {n}: cannot write {path}: {e}")),
        }
    }
    let mut symbol_files = Vec::new();
    for (name, _, path) in &out_symbols {
        match path.as_deref().map(OutFile::open).transpose() {
            Ok(f) => symbol_files.push(f),
            Err(e) => {
                let path = path.as_deref().unwrap_or("");
                return bad(format!("--out-symbol {name}: cannot write {path}: {e}"));
            }
        }
    }
    let checks = match o.check.as_deref().map(ptxvm::Checks::parse).transpose() {
        Ok(c) => c,
        Err(e) => return bad(format!("--check: {e}")),
    };
    let opts = LaunchOptions {
        checks: checks.unwrap_or_default(),
        threads: o.threads,
        max_instructions: o.max_instructions,
        timeout: Some(Duration::from_secs_f64(o.timeout.min(1e9))),
        stack_size: o.stack_size,
        shared_limit: o.shared_limit,
        printf_fifo: o.printf_fifo,
        cluster,
        non_portable_cluster: o.non_portable_cluster,
    };
    // progress bar for long launches on a terminal: blocks done, and the thread instructions
    // executed, which keep moving (with the spinner and the clock) while no block finishes
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let bar: OnceLock<indicatif::ProgressBar> = OnceLock::new();
    let progress = |p: &ptxvm::Progress| {
        if !tty || started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let b = bar.get_or_init(|| {
            let b = indicatif::ProgressBar::new(p.blocks_total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {pos}/{len} blocks, {msg} thread instructions [{elapsed}] {wide_bar}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        b.set_position(p.blocks_done);
        b.set_message(human_count(p.thread_instructions));
    };
    // printf output is written as the kernel runs, in block order
    let mut sink = Recording {
        out: std::io::stdout(),
        error: None,
    };
    let result = kernel.launch_streaming(
        grid,
        block,
        o.shared,
        &args,
        &opts,
        Some(&progress),
        &mut sink,
    );
    if let Some(b) = bar.get() {
        b.finish_and_clear();
    }
    // a reader that went away (`ptxvm run … | head`) is no error worth reporting
    if let Some(e) = sink
        .error
        .filter(|e| e.kind() != std::io::ErrorKind::BrokenPipe)
    {
        eprintln!("warning: the kernel's printf output could not all be written: {e}");
    }
    // sanitizer reports, whether the launch completed or faulted
    let hazards: &[ptxvm::Hazard] = match &result {
        Ok(r) => &r.hazards,
        Err(ptxvm::Error::Kernel { stats, .. }) => &stats.hazards,
        Err(_) => &[],
    };
    let hazard_count = hazards.len();
    if hazard_count > 0 {
        let shown = if o.print_limit == 0 {
            hazard_count
        } else {
            o.print_limit.min(hazard_count)
        };
        let diags: Vec<_> = hazards[..shown]
            .iter()
            .map(|h| kernel.hazard_diagnostic(h))
            .collect();
        ptx_diag::render_to_stderr(source, &diags, color);
        if shown < hazard_count {
            eprintln!(
                "note: {} more reports not shown (--print-limit {})",
                hazard_count - shown,
                o.print_limit
            );
        }
    }
    let mut stdout = std::io::stdout().lock();
    // a kernel fault still writes every output requested, as the fault left the memory
    let (report, fault) = match result {
        Ok(r) => (
            LaunchStats {
                thread_instructions: Some(r.thread_instructions),
                warp_instructions: Some(r.warp_instructions),
                seconds: r.seconds,
            },
            None,
        ),
        Err(mut e) if e.is_kernel_fault() => {
            if let ptxvm::Error::Kernel {
                diagnostic,
                failure,
                ..
            } = &mut e
            {
                dynamic_shared_hint(&module, o.shared, *failure, diagnostic);
            }
            e.render_to_stderr(color);
            // the instructions executed before a fault are not counted
            let stats = LaunchStats {
                thread_instructions: None,
                warp_instructions: None,
                seconds: started.elapsed().as_secs_f64(),
            };
            (stats, Some(e))
        }
        // the launch was refused: nothing ran and nothing is written (the files opened for
        // it that were not there before are removed)
        Err(e) => {
            e.render_to_stderr(color);
            return ExitCode::from(1);
        }
    };
    let at_fault = fault.is_some();
    let wrote = |path: &str| {
        if at_fault {
            eprintln!("note: wrote {path} (state at the fault)");
        }
    };
    let mut failed = false;
    let mut fail = |msg: String| {
        eprintln!("error: {msg}");
        failed = true;
    };
    for ((n, path), file) in outs.iter().zip(&mut out_files) {
        let Some((dtype, b)) = buffers.get(n) else {
            continue;
        };
        let bytes = b.to_bytes();
        let data = if path.ends_with(".npy") {
            npy::write_npy(*dtype, &bytes)
        } else {
            bytes
        };
        match file.write(&data) {
            Ok(()) => wrote(path),
            Err(e) => fail(format!("--out {n}: cannot write {path}: {e}")),
        }
    }
    if at_fault && !prints.is_empty() {
        eprintln!("note: --print shows the buffers as the fault left them");
    }
    for (n, count) in &prints {
        let Some((dtype, b)) = buffers.get(n) else {
            continue;
        };
        let arg: usize = n
            .split('.')
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or(0);
        let field = n
            .split_once('.')
            .map_or(String::new(), |(_, f)| format!(".{f}"));
        let _ = writeln!(
            stdout,
            "{}{field}: {}",
            params[arg].name,
            run_args::format_values(*dtype, &b.to_bytes(), *count)
        );
    }
    for ((name, dtype, path), file) in out_symbols.iter().zip(&mut symbol_files) {
        let bytes = match module.read_global_bytes(name) {
            Ok(b) => b,
            Err(e) => {
                fail(format!("--out-symbol {name}: {e}"));
                continue;
            }
        };
        match (path, file) {
            (Some(path), Some(file)) => {
                let data = if path.ends_with(".npy") {
                    npy::write_npy(*dtype, &bytes)
                } else {
                    bytes
                };
                match file.write(&data) {
                    Ok(()) => wrote(path),
                    Err(e) => fail(format!("--out-symbol {name}: cannot write {path}: {e}")),
                }
            }
            _ => {
                let _ = writeln!(
                    stdout,
                    "{name}: {}",
                    run_args::format_values(*dtype, &bytes, None)
                );
            }
        }
    }
    if o.json {
        let mut j = serde_json::json!({
            "kernel": kernel_name,
            "grid": grid,
            "block": block,
            "seconds": report.seconds,
        });
        if let (Some(t), Some(w)) = (report.thread_instructions, report.warp_instructions) {
            j["thread_instructions"] = t.into();
            j["warp_instructions"] = w.into();
        }
        if checks.is_some() {
            j["errors"] = (hazard_count + at_fault as usize).into();
        }
        if let Some(ptxvm::Error::Kernel { diagnostic, .. }) = &fault {
            j["fault"] = serde_json::json!({
                "code": diagnostic.code.0,
                "message": diagnostic.message,
            });
        }
        let _ = writeln!(stdout, "{j}");
    }
    let _ = stdout.flush();
    if checks.is_some() {
        let n = hazard_count + at_fault as usize;
        eprintln!(
            "========= ERROR SUMMARY: {n} error{}",
            if n == 1 { "" } else { "s" }
        );
    }
    if at_fault || hazard_count > 0 {
        ExitCode::from(2)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What a launch executed, for `--json`: the instruction counts of a launch that completed,
/// the time of any launch.
struct LaunchStats {
    thread_instructions: Option<u64>,
    warp_instructions: Option<u64>,
    seconds: f64,
}

/// A file of `--out`/`--out-symbol`, opened (and created if need be) before the launch and
/// written after it. Dropped unwritten, a file that did not exist before is removed; one that
/// did keeps its contents.
struct OutFile {
    path: String,
    file: std::fs::File,
    created: bool,
    written: bool,
}

impl OutFile {
    fn open(path: &str) -> std::io::Result<OutFile> {
        let created = std::fs::symlink_metadata(path).is_err();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(OutFile {
            path: path.to_string(),
            file,
            created,
            written: false,
        })
    }

    /// Replaces the file's contents with `data` (writes them to a pipe or device).
    fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        self.written = true;
        if self.file.metadata()?.is_file() {
            self.file.set_len(0)?;
            self.file.seek(SeekFrom::Start(0))?;
        }
        self.file.write_all(data)?;
        self.file.flush()
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
