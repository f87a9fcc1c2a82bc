//! The body of the `run` fuzz target (`fuzz/fuzz_targets/run.rs`): PTX bytes through the whole
//! run path (parse → check → lower → load → compile → launch), a plain function so that stable
//! Rust replays saved inputs through it (`crates/runtime/tests/fuzz_replay.rs`).
//!
//! The input is a PTX file as `ptxvm run` reads it. Its launch comes from the input too, so that
//! the fuzzer mutates it along with the code: a `// RUN:` header line as in `tests/run` (see
//! `tests/run/README.md`) gives `--kernel`, `--grid`, `--block`, `--shared` and `--arg` specs;
//! whatever it does not give is derived from a hash of the input and the kernel's declared
//! parameters (a small zeroed buffer for each 8-byte integer parameter, a small scalar for the
//! others). Everything is clamped small ([`FuzzLimits`]): the point is to explore code, not to
//! run big launches. Launches run on one OS thread with a small instruction budget and deadline.
//!
//! Every `Err` of the runtime is an acceptable answer to bad input. A bug is
//! - a panic anywhere in ptxvm (it propagates out of [`run_bytes`]);
//! - a launch that returns later than its deadline plus a margin;
//! - set-up (parse, check, lower, load) slower than [`FuzzLimits::setup_limit`];
//! - peak resident memory growing by more than the kernel's declared needs (globals, buffers,
//!   shared and local memory, used registers, see [`declared_needs`]) plus
//!   [`FuzzLimits::memory_slack`] (Linux only: measured with `/proc/self/status` `VmHWM`, reset
//!   through `/proc/self/clear_refs`; this is process-wide, so nothing else may run in the
//!   process meanwhile);
//! - an error message that cannot be rendered, or a diagnostic pointing outside the text.
//!
//! [`run_bytes`] panics on any of these; [`run_bytes_with`] returns them as a [`Violation`].

use crate::{Arg, Device, Error, LaunchOptions, Module};
use ptx_isa::{ScalarType, TypeKind};
use std::time::{Duration, Instant};

/// Limits of one fuzz run.
#[derive(Clone, Debug)]
pub struct FuzzLimits {
    /// Thread-instruction budget of the launch.
    pub max_instructions: u64,
    /// Deadline of the launch.
    pub timeout: Duration,
    /// How far past its deadline a launch may return before it is a bug.
    pub margin: Duration,
    /// Parse + check + lower + load longer than this is a bug (the input is small).
    pub setup_limit: Duration,
    /// Bytes of peak RSS growth allowed beyond the kernel's declared needs.
    pub memory_slack: u64,
    /// Whether to measure RSS at all (needs Linux and a process running nothing else).
    pub check_memory: bool,
    /// Most CTAs in the grid.
    pub max_ctas: u64,
    /// Most dynamic shared memory bytes.
    pub max_dynamic_shared: u64,
    /// Most bytes of one buffer argument.
    pub max_buffer: u64,
    /// Bytes of a buffer the header does not size.
    pub default_buffer: u64,
}

impl Default for FuzzLimits {
    fn default() -> Self {
        FuzzLimits {
            max_instructions: 100_000,
            timeout: Duration::from_secs(1),
            margin: Duration::from_secs(1),
            setup_limit: Duration::from_secs(10),
            memory_slack: 64 << 20,
            check_memory: cfg!(target_os = "linux"),
            max_ctas: 64,
            max_dynamic_shared: 1 << 20,
            max_buffer: 1 << 20,
            default_buffer: 4096,
        }
    }
}

/// How a run ended (every one of these is fine).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The PTX did not decode, parse, check, lower or load.
    Invalid,
    /// The module has no kernel.
    NoKernel,
    /// The launch was refused before it ran (arguments, geometry, limits, memory).
    Refused,
    /// The kernel ran to the end.
    Completed {
        /// Thread instructions executed.
        thread_instructions: u64,
    },
    /// The kernel stopped with a fault (its diagnostic code, `E06xx`).
    Fault(&'static str),
}

/// What [`run_bytes_with`] measured.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// How the run ended.
    pub outcome: Outcome,
    /// The launch as derived from the input (kernel, grid, block, shared, arguments).
    pub launch: String,
    /// Decode + parse + check + lower + load.
    pub setup: Duration,
    /// The launch call, compile included.
    pub run: Duration,
    /// Peak RSS growth during the run, when measured.
    pub rss_growth: Option<u64>,
    /// The memory the kernel declares it needs (see [`declared_needs`]).
    pub declared: u64,
}

/// A bug found by a run (other than a panic, which propagates).
#[derive(Clone, Debug)]
pub struct Violation {
    /// Short class: `slow-launch`, `slow-setup`, `memory`, `bad-span`.
    pub class: &'static str,
    /// What happened.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

/// [`run_bytes_with`] with the default limits; panics on a [`Violation`].
pub fn run_bytes(data: &[u8]) -> Outcome {
    match run_bytes_with(data, &FuzzLimits::default()) {
        Ok(r) => r.outcome,
        Err(v) => panic!("{v}"),
    }
}

/// Runs `data` through the run path under `limits` (see the module documentation).
pub fn run_bytes_with(data: &[u8], limits: &FuzzLimits) -> Result<RunReport, Violation> {
    let rss0 = if limits.check_memory {
        rss::reset_peak()
    } else {
        None
    };
    let t0 = Instant::now();
    let (file, diags) = ptx_syntax::decode_source("fuzz.ptx", data);
    let device = Device::new();
    let module = if diags.is_empty() {
        Module::from_ptx(&device, "fuzz.ptx", file.text())
    } else {
        Err(Error::Invalid {
            file: file.clone(),
            diagnostics: diags,
        })
    };
    let setup = t0.elapsed();
    if setup > limits.setup_limit {
        return Err(Violation {
            class: "slow-setup",
            message: format!(
                "parse, check, lower and load of {} bytes took {:.2} s (limit {:.2} s)",
                data.len(),
                setup.as_secs_f64(),
                limits.setup_limit.as_secs_f64()
            ),
        });
    }
    let mut report = RunReport {
        outcome: Outcome::Invalid,
        launch: String::new(),
        setup,
        run: Duration::ZERO,
        rss_growth: None,
        declared: 0,
    };
    let module = match module {
        Ok(m) => m,
        Err(e) => {
            check_error(file.text(), &e)?;
            return Ok(report);
        }
    };
    let header = Header::parse(file.text());
    let names = module.kernel_names();
    let name = match &header.kernel {
        Some(k) if names.contains(k) => k.clone(),
        _ if names.is_empty() => {
            report.outcome = Outcome::NoKernel;
            return Ok(report);
        }
        _ => names[(hash(data) % names.len() as u64) as usize].clone(),
    };
    let kernel = match module.kernel(&name) {
        Ok(k) => k,
        Err(e) => {
            check_error(file.text(), &e)?;
            report.outcome = Outcome::Refused;
            return Ok(report);
        }
    };
    let grid = clamp_grid(header.grid.unwrap_or([1, 1, 1]), limits.max_ctas);
    let block = header.block.unwrap_or_else(|| {
        // 1..=64 threads: one or two warps, partial ones included
        [(hash(data) >> 8) as u32 % 64 + 1, 1, 1]
    });
    let shared = header.shared.unwrap_or(0).min(limits.max_dynamic_shared);

    // arguments: the header's where they fit the parameter, synthesised otherwise
    let params = kernel.params();
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    let mut described = Vec::new();
    let mut buffer_bytes = 0u64;
    for (k, p) in params.iter().enumerate() {
        let pointer_like =
            p.size == 8 && !p.array && matches!(p.ty, Some(t) if t.kind() != TypeKind::Float);
        let spec = header.args.get(k).map(String::as_str);
        let scalar_size = p.size.min(limits.max_buffer) as usize;
        let arg = match spec.map(|s| parse_spec(s, limits)) {
            Some(Spec::Buffer(bytes)) if pointer_like => {
                described.push(format!("buffer[{}]", bytes.len()));
                Some(bytes)
            }
            Some(Spec::Scalar(v)) => {
                described.push(format!("{v}"));
                args.push(Arg::Bytes(scalar_bytes(v, p.ty, scalar_size)));
                None
            }
            _ if pointer_like => {
                described.push(format!("buffer[{}]", limits.default_buffer));
                Some(vec![0u8; limits.default_buffer as usize])
            }
            _ => {
                const SMALL: [i64; 12] = [0, 1, 2, 3, 7, 8, 16, 31, 32, 33, 64, -1];
                let v = SMALL[(hash(data).rotate_left(k as u32 * 5) % 12) as usize];
                described.push(format!("{v}"));
                args.push(Arg::Bytes(scalar_bytes(v as i128, p.ty, scalar_size)));
                None
            }
        };
        if let Some(bytes) = arg {
            buffer_bytes += bytes.len() as u64;
            match device.from_bytes(&bytes, &format!("argument {k} (`{}`)", p.name)) {
                Ok(b) => {
                    args.push(Arg::Pointer(b.addr()));
                    buffers.push(b);
                }
                Err(e) => {
                    check_error(file.text(), &e)?;
                    report.outcome = Outcome::Refused;
                    return Ok(report);
                }
            }
        }
    }
    report.launch = format!(
        "--kernel {name} --grid {},{},{} --block {},{},{} --shared {shared} args [{}]",
        grid[0],
        grid[1],
        grid[2],
        block[0],
        block[1],
        block[2],
        described.join(", ")
    );
    let threads = block.iter().map(|&d| d as u64).product::<u64>().min(1024);
    report.declared = declared_needs(&module, &name, threads, shared).saturating_add(buffer_bytes);

    let opts = LaunchOptions {
        threads: 1,
        max_instructions: limits.max_instructions,
        timeout: Some(limits.timeout),
        ..LaunchOptions::default()
    };
    let t1 = Instant::now();
    let result = kernel.launch(grid, block, shared, &args, &opts);
    report.run = t1.elapsed();
    report.outcome = match &result {
        Ok(r) => Outcome::Completed {
            thread_instructions: r.thread_instructions,
        },
        Err(Error::Kernel { diagnostic, .. }) => Outcome::Fault(diagnostic.code.0),
        Err(_) => Outcome::Refused,
    };
    if let Err(e) = &result {
        check_error(file.text(), e)?;
    }
    drop(result);
    drop(buffers);
    if report.run > limits.timeout + limits.margin {
        return Err(Violation {
            class: "slow-launch",
            message: format!(
                "{} took {:.2} s with a deadline of {:.2} s and {} instructions ({:?})",
                report.launch,
                report.run.as_secs_f64(),
                limits.timeout.as_secs_f64(),
                limits.max_instructions,
                report.outcome
            ),
        });
    }
    if let (Some(before), Some(peak)) = (rss0, rss0.and_then(|_| rss::peak())) {
        let growth = peak.saturating_sub(before);
        report.rss_growth = Some(growth);
        if growth > report.declared.saturating_add(limits.memory_slack) {
            return Err(Violation {
                class: "memory",
                message: format!(
                    "{}: peak RSS grew by {} MiB; the kernel declares {} MiB (+{} MiB allowed) ({:?})",
                    report.launch,
                    growth >> 20,
                    report.declared >> 20,
                    limits.memory_slack >> 20,
                    report.outcome
                ),
            });
        }
    }
    Ok(report)
}

/// Renders the error (the renderer must cope) and checks that its diagnostics point inside the
/// text.
fn check_error(text: &str, e: &Error) -> Result<(), Violation> {
    std::hint::black_box(e.render());
    let diags: &[ptx_diag::Diagnostic] = match e {
        Error::Invalid { diagnostics, .. } => diagnostics,
        Error::Kernel { diagnostic, .. } => std::slice::from_ref(&**diagnostic),
        _ => &[],
    };
    match ptx_check::fuzz::spans_problem(text, diags) {
        Some(m) => Err(Violation {
            class: "bad-span",
            message: m,
        }),
        None => Ok(()),
    }
}

/// An upper bound of the memory a launch of kernel `name` may legitimately touch, in bytes:
/// every `.global`, `.const` and module `.shared` variable, the dynamic shared memory, and per
/// thread of the block its reachable functions' frames (`.local` and `.param` variables; the
/// default stack size per thread when the call graph has a cycle) and 8 bytes per register its
/// instructions can name (at most 4 per instruction: storage should follow the registers used,
/// not the ones declared). Buffers passed as arguments come on top. CTAs run one at a time.
pub fn declared_needs(module: &Module, name: &str, threads: u64, dynamic_shared: u64) -> u64 {
    // a recursive kernel's stack grows up to the default stack size (the launch uses it)
    const STACK_LIMIT: u64 = crate::DEFAULT_STACK_SIZE;
    let ir = module.ir();
    let globals: u64 = ir
        .globals
        .iter()
        .fold(0u64, |a, g| a.saturating_add(g.size));
    let Some((root, _)) = ir.function(name) else {
        return globals;
    };
    // reachable functions, and whether the call graph among them has a cycle
    let n = ir.functions.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the DFS stack, 2 done
    let mut cyclic = false;
    let mut stack = vec![(root as usize, 0usize)];
    state[root as usize] = 1;
    while let Some((f, i)) = stack.pop() {
        let callees = &ir.functions[f].callees;
        if let Some(&c) = callees.get(i) {
            stack.push((f, i + 1));
            let c = c.index();
            match state.get(c) {
                Some(0) => {
                    state[c] = 1;
                    stack.push((c, 0));
                }
                Some(1) => cyclic = true,
                _ => {}
            }
        } else {
            state[f] = 2;
        }
    }
    let mut per_thread = 0u64;
    let mut per_cta = 0u64;
    for (f, s) in ir.functions.iter().zip(&state) {
        if *s == 0 {
            continue;
        }
        let regs = (f.regs.len() as u64).min(4 * f.insts.len() as u64 + 4);
        per_thread = per_thread
            .saturating_add(f.frame_size)
            .saturating_add(regs * 8);
        for l in &f.locals {
            if l.space == ptx_isa::StateSpace::Shared {
                per_cta = per_cta.saturating_add(l.size);
            }
        }
    }
    if cyclic {
        per_thread = per_thread.max(STACK_LIMIT);
    }
    globals
        .saturating_add(dynamic_shared)
        .saturating_add(per_cta)
        .saturating_add(per_thread.saturating_mul(threads))
}

/// FNV-1a.
fn hash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// At most `max` CTAs: X first, then Y and Z shrink (a zero stays zero: the launch refuses it).
fn clamp_grid(mut g: [u32; 3], max: u64) -> [u32; 3] {
    for k in (0..3).rev() {
        while g.iter().map(|&d| d as u64).product::<u64>() > max && g[k] > 1 {
            g[k] = (g[k] / 2).max(1);
        }
    }
    g
}

/// The `// RUN:` header of the input, as far as it could be read.
#[derive(Default, Debug)]
struct Header {
    kernel: Option<String>,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    shared: Option<u64>,
    args: Vec<String>,
}

impl Header {
    fn parse(text: &str) -> Header {
        let mut h = Header::default();
        let Some(line) = text.lines().find_map(|l| {
            l.trim_start()
                .strip_prefix("//")
                .and_then(|r| r.trim_start().strip_prefix("RUN:"))
        }) else {
            return h;
        };
        let mut it = line.split_whitespace();
        while let Some(flag) = it.next() {
            let Some(v) = it.next() else { break };
            match flag {
                "--kernel" => h.kernel = Some(v.to_string()),
                "--grid" => h.grid = dims(v),
                "--block" => h.block = dims(v),
                "--shared" => h.shared = v.parse().ok(),
                "--arg" => h.args.push(v.to_string()),
                _ => {}
            }
        }
        h
    }
}

fn dims(v: &str) -> Option<[u32; 3]> {
    let mut d = [1u32; 3];
    for (k, p) in v.split(',').enumerate() {
        *d.get_mut(k)? = p.parse().ok()?;
    }
    Some(d)
}

enum Spec {
    Buffer(Vec<u8>),
    Scalar(i128),
}

/// `DTYPE[N][=iota|=rand[:S]|=V]`, `@PATH` (a small zeroed buffer), or an integer / float scalar
/// (floats as their `f64` value, converted per parameter type in [`scalar_bytes`] — kept as the
/// raw `f64` bits tagged by [`FLOAT_TAG`]).
fn parse_spec(s: &str, limits: &FuzzLimits) -> Spec {
    if s.starts_with('@') {
        return Spec::Buffer(vec![0; 256]);
    }
    if let Some((dt, rest)) = s.split_once('[') {
        let size: u64 = match dt {
            "u8" | "i8" => 1,
            "u16" | "i16" | "f16" | "bf16" => 2,
            "u32" | "i32" | "f32" => 4,
            _ => 8,
        };
        let (n, fill) = rest.split_once(']').unwrap_or((rest, ""));
        let n: u64 = n.parse().unwrap_or(0);
        let bytes = n.saturating_mul(size).min(limits.max_buffer) as usize;
        let mut b = vec![0u8; bytes];
        let fill = fill.strip_prefix('=').unwrap_or("");
        let elem = |i: usize| -> u64 {
            match fill {
                "" => 0,
                "iota" => i as u64,
                f if f.starts_with("rand") => hash(&i.to_le_bytes()) % 100,
                f => scalar(f).map(|v| v as u64).unwrap_or(0),
            }
        };
        for (i, c) in b.chunks_mut(size as usize).enumerate() {
            let v = elem(i).to_le_bytes();
            let n = c.len();
            c.copy_from_slice(&v[..n]);
        }
        return Spec::Buffer(b);
    }
    Spec::Scalar(scalar(s).unwrap_or(0))
}

/// Marks a float scalar: bit 100 set, the `f64` bits below.
const FLOAT_TAG: i128 = 1 << 100;

fn scalar(s: &str) -> Option<i128> {
    if let Some(h) = s.strip_prefix("0x") {
        return u128::from_str_radix(h, 16).ok().map(|v| v as i128);
    }
    if let Ok(v) = s.parse::<i128>() {
        return Some(v);
    }
    s.parse::<f64>()
        .ok()
        .map(|f| FLOAT_TAG | f.to_bits() as i128)
}

/// The `size` little-endian bytes of `v` for a parameter of type `ty`.
fn scalar_bytes(v: i128, ty: Option<ScalarType>, size: usize) -> Vec<u8> {
    let float = ty.is_some_and(|t| t.kind() == TypeKind::Float);
    let bits: u128 = if v & FLOAT_TAG != 0 && v > 0 {
        let f = f64::from_bits(v as u64);
        match size {
            4 => (f as f32).to_bits() as u128,
            2 => 0x3c00, // 1.0 in f16 (bf16 1.0 is 0x3f80; any value will do)
            _ => f.to_bits() as u128,
        }
    } else if float {
        let f = v as f64;
        match size {
            4 => (f as f32).to_bits() as u128,
            2 => 0,
            _ => f.to_bits() as u128,
        }
    } else {
        v as u128
    };
    let mut out = vec![0u8; size];
    for (k, b) in out.iter_mut().enumerate().take(16) {
        *b = (bits >> (8 * k)) as u8;
    }
    out
}

/// Peak resident memory of this process (Linux `/proc`).
mod rss {
    /// Resets the peak to the current RSS and returns that, in bytes.
    pub fn reset_peak() -> Option<u64> {
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        read("VmHWM:")
    }

    /// The peak since the last reset, in bytes.
    pub fn peak() -> Option<u64> {
        read("VmHWM:")
    }

    fn read(key: &str) -> Option<u64> {
        let s = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = s.lines().find(|l| l.starts_with(key))?;
        let kb: u64 = line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    }
}
