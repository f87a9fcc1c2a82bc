//! Launch latency through the library API: `Kernel::launch` end to end for kernels that do
//! (almost) nothing, so what is timed is the launch machinery itself — argument checks, the
//! program cache, the memory snapshot, CTA and warp set-up, scheduling — not the interpreter.
//!
//! `cargo bench -p ptxvm --bench launch -- --warm-up-time 1 --measurement-time 2`
//!
//! Each module is loaded (parsed, checked, lowered) once, outside the timing loop, and launched
//! once before it so that the kernel's compiled program is cached. Issue 5 asks for ≤ 50 µs for
//! an empty kernel of 1 block of 32 threads.
//!
//! * `empty/threads=default`: `ret;`, 1×32, `LaunchOptions::default()` (threads = all cores);
//! * `empty/threads=1`: the same on the calling thread;
//! * `store/threads=default`, `store/threads=1`: one `.u64` pointer parameter, one `st.global.u32`
//!   per thread;
//! * `empty_grid/threads=default`, `empty_grid/threads=1`: `ret;`, 64 blocks of 32 threads, to
//!   show the per-CTA cost and the cost of starting worker threads.

use criterion::{criterion_group, criterion_main, Criterion};
use ptxvm::{Arg, Device, LaunchOptions, Module};
use std::hint::black_box;

const EMPTY: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry empty()
{
    ret;
}
";

const STORE: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry store(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
";

/// One timed launch: `blocks` blocks of 32 threads.
struct Case<'a> {
    name: &'static str,
    module: &'a Module,
    kernel: &'static str,
    blocks: u32,
    args: &'a [Arg],
    opts: &'a LaunchOptions,
}

impl<'a> Case<'a> {
    fn new(
        name: &'static str,
        module: &'a Module,
        kernel: &'static str,
        blocks: u32,
        args: &'a [Arg],
        opts: &'a LaunchOptions,
    ) -> Self {
        Case {
            name,
            module,
            kernel,
            blocks,
            args,
            opts,
        }
    }
}

fn bench(c: &mut Criterion) {
    let device = Device::new();
    let (empty, store) = match (
        Module::from_ptx(&device, "empty.ptx", EMPTY),
        Module::from_ptx(&device, "store.ptx", STORE),
    ) {
        (Ok(e), Ok(s)) => (e, s),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{}", e.render());
            return;
        }
    };
    let out = match device.alloc::<u32>(32) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}", e.render());
            return;
        }
    };
    let store_args = [Arg::buffer(&out)];
    let default = LaunchOptions::default();
    let one = LaunchOptions {
        threads: 1,
        ..LaunchOptions::default()
    };
    let cases = [
        Case::new("empty/threads=default", &empty, "empty", 1, &[], &default),
        Case::new("empty/threads=1", &empty, "empty", 1, &[], &one),
        Case::new(
            "store/threads=default",
            &store,
            "store",
            1,
            &store_args,
            &default,
        ),
        Case::new("store/threads=1", &store, "store", 1, &store_args, &one),
        Case::new(
            "empty_grid/threads=default",
            &empty,
            "empty",
            64,
            &[],
            &default,
        ),
        Case::new("empty_grid/threads=1", &empty, "empty", 64, &[], &one),
    ];
    let mut g = c.benchmark_group("launch");
    for case in cases {
        let kernel = match case.module.kernel(case.kernel) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("{}", e.render());
                continue;
            }
        };
        let grid = [case.blocks, 1, 1];
        let launch = || kernel.launch(grid, [32, 1, 1], 0, case.args, case.opts);
        // The first launch compiles the kernel's program; the timed ones find it cached.
        if let Err(e) = launch() {
            eprintln!("{}: {}", case.name, e.render());
            continue;
        }
        g.bench_function(case.name, |b| b.iter(|| black_box(launch().is_ok())));
    }
    g.finish();
    if out.to_vec() != (0..32).collect::<Vec<u32>>() {
        eprintln!("store: unexpected output {:?}", out.to_vec());
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
