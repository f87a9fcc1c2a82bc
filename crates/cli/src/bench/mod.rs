//! `ptxvm bench`: runs the benchmark suite of `bench/kernels/` on ptxvm and its native Rust
//! references, checks ptxvm's outputs against the native ones and reports the ratio of the two
//! times per kernel and their geometric mean.
//!
//! Both sides run interleaved in one process so that machine noise hits both: per kernel, one
//! untimed warm-up of each, then `repeat` rounds of one ptxvm launch and one native run; each
//! side's figure is the median of its timed runs. On the ptxvm side only
//! [`ptxvm::Kernel::launch`] is timed (not module loading, buffer setup or copies); on the native
//! side only the computation (inputs and outputs preallocated). With `--threads 1` the native
//! side runs the single-threaded loops, with N > 1 the rayon versions in a local pool of exactly N
//! threads, while ptxvm runs its CTAs on N OS threads.
//!
//! Each kernel runs in a child process (`ptxvm bench --in-process --json --filter NAME`, the same
//! executable), so that its peak RSS is its own: memory that an earlier kernel freed but the
//! allocator kept would otherwise count against the next. In that process the high-water mark is
//! reset (`5` into `/proc/self/clear_refs`, Linux) once the kernel's buffers and host data are set
//! up, and `VmHWM` is read after its last run; it includes the native side's host arrays
//! (reported as `host_bytes`) and the process's own baseline (`rss_before_bytes` minus the
//! kernel's data). Where the high-water mark cannot be reset it is reported as unknown.

mod native;
mod suite;

use ptx_diag::ColorMode;
use ptxvm::{Device, LaunchOptions, Module};
use rayon::ThreadPool;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;
use suite::{Spec, SUITE};

/// The command line of `ptxvm bench`.
#[derive(Clone, Debug, clap::Args)]
pub struct BenchOptions {
    /// OS threads: ptxvm runs CTAs on N threads; the native side runs single-threaded loops
    /// for 1, rayon on exactly N threads otherwise (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print a JSON report on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Tiny sizes (a few seconds in a debug build), for tests.
    #[arg(long)]
    pub quick: bool,
    /// Run only the kernels whose name contains SUBSTR.
    #[arg(long, value_name = "SUBSTR")]
    pub filter: Option<String>,
    /// Timed runs of each side per kernel (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Run every kernel in this process (default: one child process per kernel, so that
    /// each kernel's peak RSS is its own).
    #[arg(long)]
    pub in_process: bool,
}

/// One kernel's figures.
#[derive(Clone, Debug)]
struct Row {
    name: &'static str,
    check: &'static str,
    thread_instructions: u64,
    ptxvm_seconds: f64,
    native_seconds: f64,
    ctas: u64,
    peak_rss_bytes: Option<u64>,
    rss_before_bytes: Option<u64>,
    device_bytes: u64,
    host_bytes: u64,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.ptxvm_seconds / self.native_seconds
    }
    fn gips(&self) -> f64 {
        self.thread_instructions as f64 / self.ptxvm_seconds / 1e9
    }
}

/// Why the suite stopped.
enum Failure {
    /// Bad command line or setup (exit 1).
    Input(String),
    /// ptxvm refused the PTX or the launch, or the kernel faulted (exit 1 or 2).
    Ptxvm(&'static str, Box<ptxvm::Error>),
    /// ptxvm's output differs from the native one (exit 1).
    Mismatch(&'static str, String),
    /// A child process failed after printing its error: exit with its status.
    Child(u8),
}

/// Runs `ptxvm bench`; exit 0 when every kernel ran and matched, 1 on bad input or a mismatch,
/// 2 when a kernel faulted.
pub fn bench(opts: &BenchOptions, color: ColorMode) -> ExitCode {
    match run(opts, color) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Child(code)) => ExitCode::from(code),
        Err(Failure::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Mismatch(name, m)) => {
            eprintln!("error: kernel `{name}`: ptxvm's output differs from the native one: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Ptxvm(name, e)) => {
            eprintln!("error: kernel `{name}` failed:");
            e.render_to_stderr(color);
            ExitCode::from(if e.is_kernel_fault() { 2 } else { 1 })
        }
    }
}

fn run(opts: &BenchOptions, color: ColorMode) -> Result<(), Failure> {
    let threads = match opts.threads {
        Some(0) => return Err(Failure::Input("--threads must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    if opts.repeat == 0 {
        return Err(Failure::Input("--repeat must be at least 1".into()));
    }
    let specs: Vec<&Spec> = SUITE
        .iter()
        .filter(|s| opts.filter.as_deref().is_none_or(|f| s.name.contains(f)))
        .collect();
    if specs.is_empty() {
        let names: Vec<&str> = SUITE.iter().map(|s| s.name).collect();
        return Err(Failure::Input(format!(
            "--filter `{}` matches no kernel (the kernels: {})",
            opts.filter.as_deref().unwrap_or(""),
            names.join(", ")
        )));
    }
    let pool = if threads > 1 && opts.in_process {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| Failure::Input(format!("cannot start {threads} threads: {e}")))?,
        )
    } else {
        None
    };
    if !opts.json {
        println!(
            "ptxvm bench: {} kernel(s), {} size, {threads} thread(s), median of {} run(s); native: {}",
            specs.len(),
            if opts.quick { "quick" } else { "full" },
            opts.repeat,
            if threads > 1 {
                "rayon"
            } else {
                "single-threaded loops"
            }
        );
        print_header();
    }
    let mut rows = Vec::new();
    for spec in specs {
        let row = if opts.in_process {
            measure(spec, opts, threads, pool.as_ref())?
        } else {
            measure_in_child(spec, opts, threads, color)?
        };
        if !opts.json {
            print_row(&row);
        }
        rows.push(row);
    }
    let geomean = geometric_mean(rows.iter().map(Row::ratio));
    if opts.json {
        print_json(threads, geomean, &rows)?;
    } else {
        println!(
            "geometric mean of ratio ptxvm/native: {geomean:.3} ({} kernel(s), {threads} thread(s))",
            rows.len()
        );
    }
    Ok(())
}

/// The median of `v` (the mean of the middle two for an even count).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `exp(mean(ln x))`.
fn geometric_mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs {
        sum += x.ln();
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).exp()
    }
}

/// Clock resolution floor, so that a ratio is always finite and positive.
const MIN_SECONDS: f64 = 1e-9;

fn measure(
    spec: &'static Spec,
    opts: &BenchOptions,
    threads: usize,
    pool: Option<&ThreadPool>,
) -> Result<Row, Failure> {
    let name = spec.name;
    let fail = |e| Failure::Ptxvm(name, Box::new(e));
    let device = Device::new();
    let module = Module::from_ptx(&device, spec.file, spec.ptx).map_err(fail)?;
    let kernel = module.kernel(spec.entry).map_err(fail)?;
    let mut case = (spec.setup)(&device, opts.quick).map_err(fail)?;
    let geom = case.geometry();
    let args = case.args();
    let launch_opts = LaunchOptions {
        threads,
        ..LaunchOptions::default()
    };
    let launch = |case: &dyn suite::Case| -> Result<(f64, u64), Failure> {
        case.before_launch().map_err(fail)?;
        let start = Instant::now();
        let report = kernel
            .launch(geom.grid, geom.block, geom.shared, &args, &launch_opts)
            .map_err(fail)?;
        Ok((start.elapsed().as_secs_f64(), report.thread_instructions))
    };
    let rss_before_bytes = reset_peak_rss();
    launch(case.as_ref())?;
    case.run_native(pool);
    let mut ptxvm_times = Vec::with_capacity(opts.repeat);
    let mut native_times = Vec::with_capacity(opts.repeat);
    let mut thread_instructions = 0;
    for _ in 0..opts.repeat {
        let (seconds, instructions) = launch(case.as_ref())?;
        ptxvm_times.push(seconds);
        thread_instructions = instructions;
        let start = Instant::now();
        case.run_native(pool);
        native_times.push(start.elapsed().as_secs_f64());
    }
    let peak_rss_bytes = rss_before_bytes.and_then(|_| proc_status_bytes("VmHWM:"));
    case.verify().map_err(|m| Failure::Mismatch(name, m))?;
    Ok(Row {
        name,
        check: spec.check,
        thread_instructions,
        ptxvm_seconds: median(&mut ptxvm_times).max(MIN_SECONDS),
        native_seconds: median(&mut native_times).max(MIN_SECONDS),
        ctas: geom.ctas(),
        peak_rss_bytes,
        rss_before_bytes,
        device_bytes: case.device_bytes(),
        host_bytes: case.host_bytes(),
    })
}

/// Runs `spec` alone in a child process (this executable with `--in-process`) and reads its row
/// from the child's JSON report. The child's errors go to our standard error.
fn measure_in_child(
    spec: &'static Spec,
    opts: &BenchOptions,
    threads: usize,
    color: ColorMode,
) -> Result<Row, Failure> {
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Input(format!("cannot find the ptxvm executable: {e}")))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--color")
        .arg(match color {
            ColorMode::Auto => "auto",
            ColorMode::Always => "always",
            ColorMode::Never => "never",
        })
        .args(["bench", "--in-process", "--json", "--filter", spec.name])
        .arg(format!("--threads={threads}"))
        .arg(format!("--repeat={}", opts.repeat));
    if opts.quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| {
            Failure::Input(format!("cannot run a child ptxvm for `{}`: {e}", spec.name))
        })?;
    if !out.status.success() {
        return Err(match out.status.code() {
            Some(code) => Failure::Child(u8::try_from(code).unwrap_or(1).max(1)),
            None => Failure::Input(format!(
                "the child ptxvm running `{}` was killed ({})",
                spec.name, out.status
            )),
        });
    }
    let bad = |what: &str| {
        Failure::Input(format!(
            "the child ptxvm running `{}` printed an unexpected report ({what})",
            spec.name
        ))
    };
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| bad(&e.to_string()))?;
    let kernels = doc["kernels"].as_array().ok_or_else(|| bad("no kernels"))?;
    let [k] = kernels.as_slice() else {
        return Err(bad(&format!("{} kernels", kernels.len())));
    };
    if k["name"].as_str() != Some(spec.name) {
        return Err(bad("another kernel"));
    }
    let u = |key: &str| k[key].as_u64().ok_or_else(|| bad(key));
    let f = |key: &str| k[key].as_f64().ok_or_else(|| bad(key));
    Ok(Row {
        name: spec.name,
        check: spec.check,
        thread_instructions: u("thread_instructions")?,
        ptxvm_seconds: f("ptxvm_seconds")?,
        native_seconds: f("native_seconds")?,
        ctas: u("ctas")?,
        peak_rss_bytes: k["peak_rss_bytes"].as_u64(),
        rss_before_bytes: k["rss_before_bytes"].as_u64(),
        device_bytes: u("device_bytes")?,
        host_bytes: u("host_bytes")?,
    })
}

/// Resets the process's RSS high-water mark to its current RSS and returns that RSS; `None`
/// where `/proc/self/clear_refs` cannot be written (not Linux, or not permitted).
fn reset_peak_rss() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    proc_status_bytes("VmRSS:")
}

/// A `kB` field of `/proc/self/status`, in bytes.
fn proc_status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    kb.checked_mul(1024)
}

fn mib(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
        None => "-".to_string(),
    }
}

fn print_header() {
    println!(
        "{:<13} {:>13} {:>9} {:>9} {:>8} {:>9} {:>7} {:>11} {:>11} {:>11}",
        "kernel",
        "thread-instr",
        "ptxvm s",
        "native s",
        "ratio",
        "Ginstr/s",
        "CTAs",
        "peak RSS",
        "device",
        "host"
    );
}

fn print_row(r: &Row) {
    println!(
        "{:<13} {:>13} {:>9.4} {:>9.4} {:>8.2} {:>9.3} {:>7} {:>11} {:>11} {:>11}",
        r.name,
        r.thread_instructions,
        r.ptxvm_seconds,
        r.native_seconds,
        r.ratio(),
        r.gips(),
        r.ctas,
        mib(r.peak_rss_bytes),
        mib(Some(r.device_bytes)),
        mib(Some(r.host_bytes)),
    );
    let _ = std::io::stdout().flush();
}

fn print_json(threads: usize, geomean: f64, rows: &[Row]) -> Result<(), Failure> {
    let kernels: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name,
                "thread_instructions": r.thread_instructions,
                "ptxvm_seconds": r.ptxvm_seconds,
                "native_seconds": r.native_seconds,
                "ratio": r.ratio(),
                "gips": r.gips(),
                "ctas": r.ctas,
                "peak_rss_bytes": r.peak_rss_bytes,
                "rss_before_bytes": r.rss_before_bytes,
                "device_bytes": r.device_bytes,
                "host_bytes": r.host_bytes,
                "verified": true,
                "check": r.check,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "threads": threads,
        "geomean_ratio": geomean,
        "kernels": kernels,
    });
    let text = serde_json::to_string_pretty(&doc)
        .map_err(|e| Failure::Input(format!("cannot print the JSON report: {e}")))?;
    println!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_kernel_name_contains_another() {
        // A child process selects its kernel with `--filter NAME` (a substring match).
        for a in SUITE {
            let matches = SUITE.iter().filter(|b| b.name.contains(a.name)).count();
            assert_eq!(matches, 1, "{}", a.name);
        }
    }

    #[test]
    fn median_and_geometric_mean() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!((geometric_mean([2.0, 8.0].into_iter()) - 4.0).abs() < 1e-12);
    }
}
