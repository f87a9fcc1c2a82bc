//! `ptxvm run`: launch one kernel with arguments given on the command line.

use crate::npy;
use crate::run_args::{self, Dtype, HostArg, ParamInfo, ParamType};
use ptx_diag::ColorMode;
use ptxvm::{Arg, Device, DeviceBuffer, LaunchOptions, Module};
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
    /// The kernel (`.entry`) to run; optional when the module has one.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Grid size in blocks: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// Block size in threads: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    pub block: String,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    pub shared: u64,
    /// One per kernel parameter, in order (see above).
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Write buffer argument N after the run: N=PATH.npy (NumPy) or N=PATH (raw bytes).
    #[arg(long, value_name = "N=PATH")]
    pub out: Vec<String>,
    /// Print buffer argument N after the run (at most COUNT elements).
    #[arg(long, value_name = "N[:COUNT]")]
    pub print: Vec<String>,
    /// Print a JSON report (kernel, grid, block, instructions executed, seconds) on stdout.
    #[arg(long)]
    pub json: bool,
    /// OS threads running blocks (default: all cores).
    #[arg(long, default_value_t = 0)]
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

/// Parses `N=PATH` / `N[:COUNT]`.
fn index_of(spec: &str, nargs: usize, flag: &str) -> Result<usize, String> {
    let n: usize = spec
        .parse()
        .map_err(|_| format!("--{flag}: `{spec}` is not an argument index"))?;
    if n >= nargs {
        return Err(format!(
            "--{flag}: argument {n} does not exist (the kernel has {nargs} parameters, numbered from 0)"
        ));
    }
    Ok(n)
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

pub fn run(o: RunOptions, color: ColorMode) -> ExitCode {
    let (file, diags) = match crate::load(&o.file) {
        Ok(x) => x,
        Err(e) => return bad(format!("cannot read {e}")),
    };
    let cuda = || {
        crate::input::looks_like_cuda(&o.file, file.text()).then(|| {
            bad(format!(
                "{} looks like CUDA C++, not PTX; compile it with `nvcc -ptx` first \
                 (e.g. `nvcc -ptx -arch=sm_90 kernel.cu -o kernel.ptx`) and run the .ptx file",
                file.name()
            ))
        })
    };
    if !diags.is_empty() {
        if let Some(code) = cuda() {
            return code;
        }
        ptx_diag::render_to_stderr(&file, &diags, color);
        return ExitCode::from(1);
    }
    let device = Device::new();
    let module = match Module::from_ptx(&device, file.name(), file.text()) {
        Ok(m) => m,
        Err(e) => {
            if let Some(code) = cuda() {
                return code;
            }
            e.render_to_stderr(color);
            return ExitCode::from(1);
        }
    };
    let kernel_name = match &o.kernel {
        Some(k) => k.clone(),
        None => {
            let names = module.kernel_names();
            match names.as_slice() {
                [one] => one.clone(),
                [] => return bad(format!("{} has no kernel (.entry)", o.file)),
                many => {
                    return bad(format!(
                        "{} has {} kernels; choose one with --kernel: {}",
                        o.file,
                        many.len(),
                        many.join(", ")
                    ))
                }
            }
        }
    };
    let kernel = match module.kernel(&kernel_name) {
        Ok(k) => k,
        Err(e) => return bad(e.to_string()),
    };
    let (grid, block) = match (dims(&o.grid, "grid"), dims(&o.block, "block")) {
        (Ok(g), Ok(b)) => (g, b),
        (Err(e), _) | (_, Err(e)) => return bad(e),
    };
    let params = kernel.params();
    if o.args.len() != params.len() {
        let list: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(k, p)| format!("{k}: {} {}", p.name, param_info(p).ty.name()))
            .collect();
        return bad(format!(
            "kernel `{kernel_name}` takes {} arguments, {} given with --arg\n  parameters: {}",
            params.len(),
            o.args.len(),
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        ));
    }
    // arguments
    let mut buffers: Vec<Option<(Dtype, DeviceBuffer<u8>)>> = Vec::new();
    let mut args = Vec::new();
    for (k, (spec, p)) in o.args.iter().zip(&params).enumerate() {
        let info = param_info(p);
        match run_args::parse_arg(spec, &info, Path::new(".")) {
            Ok(HostArg::Scalar(bytes)) => {
                args.push(Arg::Bytes(bytes));
                buffers.push(None);
            }
            Ok(HostArg::Buffer { dtype, bytes, fill }) => {
                let label = format!(
                    "argument {k} (`{}`, {}[{}])",
                    p.name,
                    dtype.name(),
                    bytes / dtype.size().max(1) as u64
                );
                // the contents are made straight into device memory, piece by piece
                let b = match usize::try_from(bytes)
                    .map_err(|_| format!("{bytes} bytes do not fit in this machine's memory"))
                    .and_then(|n| device.alloc_bytes(n, &label).map_err(|e| e.to_string()))
                {
                    Ok(b) => b,
                    Err(e) => {
                        return bad(format!(
                            "--arg {k} (`{}`): cannot allocate {}[{}] ({bytes} bytes) in device memory: {e}",
                            p.name,
                            dtype.name(),
                            bytes / dtype.size().max(1) as u64
                        ))
                    }
                };
                let mut write =
                    |off: u64, piece: &[u8]| b.write_bytes(off, piece).map_err(|e| e.to_string());
                if let Err(e) = run_args::fill_buffer(spec, dtype, bytes, &fill, &mut write) {
                    return bad(format!("--arg {k} (`{}`): {e}", p.name));
                }
                args.push(Arg::Pointer(b.addr()));
                buffers.push(Some((dtype, b)));
            }
            Err(e) => return bad(format!("--arg {k} (`{}`, {}): {e}", p.name, info.ty.name())),
        }
    }
    // outputs requested
    let mut outs = Vec::new();
    for spec in &o.out {
        let Some((n, path)) = spec.split_once('=') else {
            return bad(format!("--out `{spec}`: expected N=PATH"));
        };
        let n = match index_of(n, params.len(), "out") {
            Ok(n) => n,
            Err(e) => return bad(e),
        };
        if buffers[n].is_none() {
            return bad(format!("--out {n}: argument {n} is a scalar, not a buffer"));
        }
        outs.push((n, path.to_string()));
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
        let n = match index_of(n, params.len(), "print") {
            Ok(n) => n,
            Err(e) => return bad(e),
        };
        if buffers[n].is_none() {
            return bad(format!(
                "--print {n}: argument {n} is a scalar, not a buffer"
            ));
        }
        prints.push((n, count));
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
    let opts = LaunchOptions {
        threads: o.threads,
        max_instructions: o.max_instructions,
        timeout: Some(Duration::from_secs_f64(o.timeout.min(1e9))),
        stack_size: o.stack_size,
        shared_limit: o.shared_limit,
        printf_fifo: o.printf_fifo,
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
    let mut stdout = std::io::stdout().lock();
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            e.render_to_stderr(color);
            return ExitCode::from(if e.is_kernel_fault() { 2 } else { 1 });
        }
    };
    for (n, path) in &outs {
        let Some((dtype, b)) = &buffers[*n] else {
            continue;
        };
        let bytes = b.to_bytes();
        let data = if path.ends_with(".npy") {
            npy::write_npy(*dtype, &bytes)
        } else {
            bytes
        };
        if let Err(e) = std::fs::write(path, data) {
            return bad(format!("--out {n}: cannot write {path}: {e}"));
        }
    }
    for (n, count) in &prints {
        let Some((dtype, b)) = &buffers[*n] else {
            continue;
        };
        let _ = writeln!(
            stdout,
            "{}: {}",
            params[*n].name,
            run_args::format_values(*dtype, &b.to_bytes(), *count)
        );
    }
    if o.json {
        let j = serde_json::json!({
            "kernel": report.kernel,
            "grid": report.grid,
            "block": report.block,
            "thread_instructions": report.thread_instructions,
            "warp_instructions": report.warp_instructions,
            "seconds": report.seconds,
        });
        let _ = writeln!(stdout, "{j}");
    }
    let _ = stdout.flush();
    ExitCode::SUCCESS
}
