//! The whole pipeline over the corpus: parse, check, lower (AST → IR, IR → interpreter program)
//! and execute.
//!
//! `PTXVM_SHARED=../shared cargo bench -p ptxvm --bench pipeline -- --warm-up-time 1 --measurement-time 2`
//!
//! Inputs:
//! * `parse`, `check`, `lower`: every file of a set, one by one, `Throughput::Bytes` of the whole
//!   set. Sets: `corpus` (`tests/corpus/ptx/*.ptx`, always) and `shared`
//!   (`$PTXVM_SHARED/corpus/**/*.ptx`, when `PTXVM_SHARED` is set). `check` and `lower` start from
//!   the parsed module (resp. the parsed module, and the lowered IR for `lower/compile`), so each
//!   stage is measured alone. Files whose stage fails are left out of the later stages' sets (the
//!   count is printed).
//! * `compile/live registers/N`: compiling one kernel whose N registers are live at once (must
//!   stay linear in N).
//! * `execute`: one launch per iteration on 1 OS thread, `Throughput::Elements` of its
//!   thread-instruction count (so criterion's "elem/s" is thread-instructions/s). Always the
//!   committed kernels (`examples/vector_add.ptx`, `crates/runtime/benches/ptx/*.ptx`) at small
//!   sizes; with `PTXVM_SHARED`, also every run case of `$PTXVM_SHARED/corpus/run/cases`
//!   (`case.json` as in `corpus/RUN-FORMAT.md`), its arguments built by the CLI's own
//!   `run_args.rs`. Buffers are set up once: kernels that update memory in place (sort,
//!   histogram) run again on their own output, which keeps the work the same.

// The `ptxvm run` argument parser, shared with the CLI as source (the CLI crate has no library
// target). Both files use only `std`, `ptxvm` (its `Dtype`) and each other (`crate::npy`,
// `crate::run_args`).
#[allow(dead_code, unused_macros)]
#[path = "../../cli/src/npy.rs"]
mod npy;
#[allow(dead_code, unused_macros)]
#[path = "../../cli/src/run_args.rs"]
mod run_args;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ptx_interp::compile::{compile, GlobalAddrs};
use ptxvm::{Arg, Device, LaunchOptions, Module};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            if recursive {
                collect(&p, true, out);
            }
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared_dir() -> Option<PathBuf> {
    std::env::var_os("PTXVM_SHARED").map(PathBuf::from)
}

/// One input set: the source texts, and what each stage made of them.
struct Set {
    name: &'static str,
    texts: Vec<String>,
    /// Parsed without syntax errors.
    parsed: Vec<(usize, ptx_syntax::ast::Module)>,
    /// The checker's result on each of `parsed`, which lowering reads (its name resolution).
    checked: Vec<ptx_check::Checked>,
    /// Lowered to IR (a subset of `parsed`).
    lowered: Vec<(usize, ptx_ir::Module)>,
}

impl Set {
    fn load(name: &'static str, dir: &Path, recursive: bool) -> Option<Set> {
        let mut paths = Vec::new();
        collect(dir, recursive, &mut paths);
        paths.sort();
        let texts: Vec<String> = paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        if texts.is_empty() {
            return None;
        }
        let mut parsed = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let p = ptx_syntax::parse(t);
            if !ptx_diag::has_errors(&p.diagnostics) {
                parsed.push((i, p.module));
            }
        }
        let opts = ptx_check::CheckOptions::default();
        let checked: Vec<ptx_check::Checked> = parsed
            .iter()
            .map(|(_, m)| ptx_check::check_module(m, &opts))
            .collect();
        let lowered = parsed
            .iter()
            .zip(&checked)
            .filter_map(|((i, m), c)| ptx_ir::lower(m, c).ok().map(|ir| (*i, ir)))
            .collect();
        let set = Set {
            name,
            texts,
            parsed,
            checked,
            lowered,
        };
        eprintln!(
            "input set {}: {} files, {} bytes; {} parse cleanly, {} lower",
            set.name,
            set.texts.len(),
            set.bytes(set.texts.iter().enumerate().map(|(i, _)| i)),
            set.parsed.len(),
            set.lowered.len()
        );
        Some(set)
    }

    fn bytes(&self, files: impl Iterator<Item = usize>) -> u64 {
        files.map(|i| self.texts[i].len() as u64).sum()
    }
}

fn sets() -> Vec<Set> {
    let mut v = Vec::new();
    v.extend(Set::load(
        "corpus",
        &repo_root().join("tests/corpus/ptx"),
        false,
    ));
    if let Some(shared) = shared_dir() {
        v.extend(Set::load("shared", &shared.join("corpus"), true));
    }
    v
}

/// Entry indices of an IR module's defined kernels.
fn entries(ir: &ptx_ir::Module) -> Vec<u32> {
    (0u32..)
        .zip(&ir.functions)
        .filter(|(_, f)| f.kind == ptx_ir::FunctionKind::Entry && f.defined)
        .map(|(i, _)| i)
        .collect()
}

fn bench_front(c: &mut Criterion, sets: &[Set]) {
    let mut g = c.benchmark_group("parse");
    g.sample_size(10);
    for set in sets {
        g.throughput(Throughput::Bytes(set.bytes(0..set.texts.len())));
        g.bench_with_input(BenchmarkId::from_parameter(set.name), set, |b, set| {
            b.iter(|| {
                for t in &set.texts {
                    black_box(ptx_syntax::parse(black_box(t)));
                }
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    let opts = ptx_check::CheckOptions::default();
    for set in sets {
        g.throughput(Throughput::Bytes(set.bytes(set.parsed.iter().map(|p| p.0))));
        g.bench_with_input(BenchmarkId::from_parameter(set.name), set, |b, set| {
            b.iter(|| {
                for (_, m) in &set.parsed {
                    black_box(ptx_check::check_module(black_box(m), &opts));
                }
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("lower");
    g.sample_size(10);
    for set in sets {
        // AST → IR, with the IR verifier that `Module::from_ptx` runs too.
        g.throughput(Throughput::Bytes(set.bytes(set.parsed.iter().map(|p| p.0))));
        g.bench_with_input(BenchmarkId::new("ir", set.name), set, |b, set| {
            b.iter(|| {
                for ((_, m), c) in set.parsed.iter().zip(&set.checked) {
                    if let Ok(ir) = ptx_ir::lower(black_box(m), c) {
                        black_box(ptx_ir::verify(&ir));
                    }
                }
            })
        });
        // IR → interpreter program, every kernel (what the first launch of a kernel does).
        // Global addresses only feed address operands, so placeholder values do.
        let inputs: Vec<(&ptx_ir::Module, Vec<u32>, GlobalAddrs)> = set
            .lowered
            .iter()
            .map(|(_, ir)| {
                let addr = (1..=ir.globals.len() as u64).map(|k| k << 16).collect();
                (ir, entries(ir), GlobalAddrs { addr })
            })
            .collect();
        g.throughput(Throughput::Bytes(
            set.bytes(set.lowered.iter().map(|l| l.0)),
        ));
        g.bench_with_input(
            BenchmarkId::new("compile", set.name),
            &inputs,
            |b, inputs| {
                b.iter(|| {
                    for (ir, kernels, globals) in inputs {
                        for &k in kernels {
                            black_box(compile(ir, k, globals).is_ok());
                        }
                    }
                })
            },
        );
    }
    g.finish();
}

/// One kernel launch to time: a loaded module, its arguments and buffers.
struct Launch {
    name: String,
    module: Module,
    kernel: String,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u64,
    args: Vec<Arg>,
    _buffers: Vec<ptxvm::DeviceBuffer<u8>>,
}

fn f32_bytes(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// The committed kernels at small sizes (a few ms per launch on one core).
fn committed(device: &Device) -> Result<Vec<Launch>, String> {
    let root = repo_root();
    let buf = |bytes: &[u8], label: &str, keep: &mut Vec<ptxvm::DeviceBuffer<u8>>| {
        device.from_bytes(bytes, label).map(|b| {
            let a = Arg::Pointer(b.addr());
            keep.push(b);
            a
        })
    };
    let load = |file: &str| -> Result<Module, String> {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
        Module::from_ptx(device, file, &text).map_err(|e| e.render())
    };
    let mut out = Vec::new();
    let err = |e: ptxvm::Error| e.render();

    // vadd4: float4 vector add, 16 Ki float4 = 64 Ki floats.
    let n4 = 1usize << 14;
    let a = f32_bytes((0..4 * n4).map(|i| i as f32));
    let mut keep = Vec::new();
    let args = vec![
        buf(&a, "a", &mut keep).map_err(err)?,
        buf(&a, "b", &mut keep).map_err(err)?,
        buf(&vec![0; a.len()], "c", &mut keep).map_err(err)?,
        Arg::i32(n4 as i32),
    ];
    out.push(Launch {
        name: "vadd4".into(),
        module: load("examples/vector_add.ptx")?,
        kernel: "vadd4".into(),
        grid: [64, 1, 1],
        block: [256, 1, 1],
        shared: 0,
        args,
        _buffers: keep,
    });

    // vector_add: 64 Ki floats.
    let n = 1usize << 16;
    let a = f32_bytes((0..n).map(|i| i as f32));
    let mut keep = Vec::new();
    let args = vec![
        buf(&a, "a", &mut keep).map_err(err)?,
        buf(&a, "b", &mut keep).map_err(err)?,
        buf(&vec![0; a.len()], "c", &mut keep).map_err(err)?,
        Arg::i32(n as i32),
    ];
    out.push(Launch {
        name: "vector_add".into(),
        module: load("crates/runtime/benches/ptx/vector_add_f32.ptx")?,
        kernel: "_Z10vector_addPKfS0_Pfi".into(),
        grid: [256, 1, 1],
        block: [256, 1, 1],
        shared: 0,
        args,
        _buffers: keep,
    });

    // matmul_tiled: 64×64 by 64×64 (16×16 tiles, 4×4 blocks).
    let n = 64usize;
    let a = f32_bytes((0..n * n).map(|i| (i % 7) as f32));
    let mut keep = Vec::new();
    let args = vec![
        buf(&a, "A", &mut keep).map_err(err)?,
        buf(&a, "B", &mut keep).map_err(err)?,
        buf(&vec![0; a.len()], "C", &mut keep).map_err(err)?,
        Arg::i32(n as i32),
        Arg::i32(n as i32),
        Arg::i32(n as i32),
    ];
    out.push(Launch {
        name: "matmul_tiled".into(),
        module: load("crates/runtime/benches/ptx/matmul_tiled_f32.ptx")?,
        kernel: "_Z12matmul_tiledPKfS0_Pfiii".into(),
        grid: [4, 4, 1],
        block: [16, 16, 1],
        shared: 0,
        args,
        _buffers: keep,
    });

    // reduce_sum_shared: 64 Ki floats, one partial sum per block of 256.
    let n = 1usize << 16;
    let x = f32_bytes((0..n).map(|i| (i % 3) as f32));
    let mut keep = Vec::new();
    let args = vec![
        buf(&x, "x", &mut keep).map_err(err)?,
        buf(&vec![0; n / 256 * 4], "partial", &mut keep).map_err(err)?,
        Arg::i32(n as i32),
    ];
    out.push(Launch {
        name: "reduce_sum_shared".into(),
        module: load("crates/runtime/benches/ptx/reduce_sum_shared.ptx")?,
        kernel: "_Z9block_sumPKfPfi".into(),
        grid: [256, 1, 1],
        block: [256, 1, 1],
        shared: 0,
        args,
        _buffers: keep,
    });
    Ok(out)
}

fn dim3(v: &serde_json::Value) -> Option<[u32; 3]> {
    let a = v.as_array()?;
    let mut d = [1u32; 3];
    for (k, x) in a.iter().take(3).enumerate() {
        d[k] = u32::try_from(x.as_u64()?).ok()?;
    }
    Some(d)
}

/// A run case (`corpus/run/cases/<name>/case.json`), loaded with its arguments the way
/// `ptxvm run` builds them.
fn run_case(device: &Device, dir: &Path) -> Result<Launch, String> {
    let json = std::fs::read_to_string(dir.join("case.json")).map_err(|e| e.to_string())?;
    let case: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    let ptx = case["ptx"].as_str().ok_or("no `ptx`")?;
    let kernel = case["kernel"].as_str().ok_or("no `kernel`")?.to_string();
    let grid = dim3(&case["grid"]).ok_or("bad `grid`")?;
    let block = dim3(&case["block"]).ok_or("bad `block`")?;
    let shared = case["shared"].as_u64().unwrap_or(0);
    let specs: Vec<&str> = case["args"]
        .as_array()
        .ok_or("no `args`")?
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    let text = std::fs::read_to_string(dir.join(ptx)).map_err(|e| format!("{ptx}: {e}"))?;
    let module = Module::from_ptx(device, ptx, &text).map_err(|e| e.render())?;
    let params = module.kernel(&kernel).map_err(|e| e.render())?.params();
    if params.len() != specs.len() {
        return Err(format!(
            "{} arguments for {} parameters",
            specs.len(),
            params.len()
        ));
    }
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (k, (spec, p)) in specs.iter().zip(&params).enumerate() {
        // As `param_info` in crates/cli/src/run.rs.
        let ty = if p.array {
            run_args::ParamType::Aggregate
        } else {
            run_args::ParamType::from_ptx(&p.type_name).unwrap_or(run_args::ParamType::Aggregate)
        };
        let info = run_args::ParamInfo {
            name: p.name.clone(),
            ty,
            size: p.size as usize,
        };
        match run_args::parse_arg(spec, &info, dir).map_err(|e| format!("arg {k}: {e}"))? {
            run_args::HostArg::Scalar(bytes) => args.push(Arg::Bytes(bytes)),
            run_args::HostArg::Buffer { dtype, bytes, fill } => {
                let b = device
                    .alloc_bytes(bytes as usize, &format!("argument {k}"))
                    .map_err(|e| e.render())?;
                let mut write =
                    |off: u64, piece: &[u8]| b.write_bytes(off, piece).map_err(|e| e.to_string());
                run_args::fill_buffer(spec, dtype, bytes, &fill, &mut write)?;
                args.push(Arg::Pointer(b.addr()));
                buffers.push(b);
            }
            run_args::HostArg::Struct(_) => {
                return Err(format!(
                    "arg {k}: struct arguments are not used by the bench"
                ))
            }
        }
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Launch {
        name,
        module,
        kernel,
        grid,
        block,
        shared,
        args,
        _buffers: buffers,
    })
}

fn run_cases(device: &Device) -> Vec<Launch> {
    let Some(shared) = shared_dir() else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(shared.join("corpus/run/cases")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .filter_map(|d| match run_case(device, d) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("run case {}: skipped: {e}", d.display());
                None
            }
        })
        .collect()
}

fn bench_execute(c: &mut Criterion) {
    let device = Device::new();
    let opts = LaunchOptions {
        threads: 1,
        max_instructions: 1 << 36,
        timeout: Some(Duration::from_secs(60)),
        ..LaunchOptions::default()
    };
    let mut launches: Vec<(&str, Launch)> = Vec::new();
    match committed(&device) {
        Ok(v) => launches.extend(v.into_iter().map(|l| ("committed", l))),
        Err(e) => eprintln!("committed kernels: skipped: {e}"),
    }
    launches.extend(run_cases(&device).into_iter().map(|l| ("case", l)));

    let mut g = c.benchmark_group("execute");
    g.sample_size(10);
    for (set, l) in &launches {
        let kernel = match l.module.kernel(&l.kernel) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("{set}/{}: skipped: {e}", l.name);
                continue;
            }
        };
        let launch = || kernel.launch(l.grid, l.block, l.shared, &l.args, &opts);
        // One launch first: the thread-instruction count, and no benchmark of a kernel that faults.
        let report = match launch() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{set}/{}: skipped: {}", l.name, e.render());
                continue;
            }
        };
        eprintln!(
            "{set}/{}: {} thread instructions per launch ({} warp instructions), first launch {:.3} ms",
            l.name,
            report.thread_instructions,
            report.warp_instructions,
            report.seconds * 1e3
        );
        g.throughput(Throughput::Elements(report.thread_instructions));
        g.bench_function(BenchmarkId::new(*set, &l.name), |b| {
            b.iter(|| black_box(launch().is_ok()))
        });
    }
    g.finish();
}

/// `compile/live registers/N`: compiling a kernel whose N registers are all live at once (the
/// shape that made compiling quadratic, issue 23 item 5); the time per register must stay flat.
fn bench_compile_registers(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile/live registers");
    g.sample_size(10);
    for n in [10_000usize, 40_000, 160_000] {
        let mut s = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n\
             .reg .b32 %r<{}>;\n.reg .b64 %rd1;\n",
            n + 1
        );
        for i in 1..=n {
            s.push_str(&format!("mov.u32 %r{i}, {i};\n"));
        }
        s.push_str("mov.u32 %r0, 0;\n");
        for i in 1..=n {
            s.push_str(&format!("add.u32 %r0, %r0, %r{i};\n"));
        }
        s.push_str("ld.param.u64 %rd1, [out];\nst.global.u32 [%rd1], %r0;\nret;\n}\n");
        let parsed = ptx_syntax::parse(&s);
        let checked = ptx_check::check_module(&parsed.module, &ptx_check::CheckOptions::default());
        let ir = ptx_ir::lower(&parsed.module, &checked).expect("lowers");
        let globals = GlobalAddrs { addr: Vec::new() };
        let k = entries(&ir)[0];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| compile(&ir, k, &globals).expect("compiles"))
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let sets = sets();
    bench_front(c, &sets);
    bench_execute(c);
    bench_compile_registers(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);
