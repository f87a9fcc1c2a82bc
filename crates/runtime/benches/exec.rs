//! Execution benchmarks: thread-instructions per second for vector add, tiled matmul and a
//! shared-memory reduction, at 1 OS thread and at all threads.
//!
//! `cargo bench -p ptxvm --bench exec` (criterion; throughput is reported in elements, and the
//! thread-instruction count of each launch is printed once so that G thread-instr/s follows from
//! the time). The kernels are nvcc 13.5 output of the CUDA sources beside them in `benches/ptx/`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ptxvm::{Arg, Device, LaunchOptions, Module};

struct Case {
    name: &'static str,
    ptx: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
}

fn setup(device: &Device, case: &Case) -> (Module, Vec<Arg>, Vec<ptxvm::DeviceBuffer<f32>>) {
    let module = Module::from_ptx(device, case.name, case.ptx).expect("valid PTX");
    let mut bufs = Vec::new();
    let args = match case.name {
        "vector_add" => {
            let n = 1 << 20;
            let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
            bufs.push(device.from_slice(&a).unwrap());
            bufs.push(device.from_slice(&a).unwrap());
            bufs.push(device.alloc::<f32>(n).unwrap());
            vec![
                Arg::buffer(&bufs[0]),
                Arg::buffer(&bufs[1]),
                Arg::buffer(&bufs[2]),
                Arg::i32(n as i32),
            ]
        }
        "matmul_tiled" => {
            let n = 256usize;
            let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32).collect();
            bufs.push(device.from_slice(&a).unwrap());
            bufs.push(device.from_slice(&a).unwrap());
            bufs.push(device.alloc::<f32>(n * n).unwrap());
            vec![
                Arg::buffer(&bufs[0]),
                Arg::buffer(&bufs[1]),
                Arg::buffer(&bufs[2]),
                Arg::i32(n as i32),
                Arg::i32(n as i32),
                Arg::i32(n as i32),
            ]
        }
        _ => {
            let n = 1 << 20;
            let x: Vec<f32> = (0..n).map(|i| (i % 3) as f32).collect();
            bufs.push(device.from_slice(&x).unwrap());
            bufs.push(device.alloc::<f32>(n / 256).unwrap());
            vec![
                Arg::buffer(&bufs[0]),
                Arg::buffer(&bufs[1]),
                Arg::i32(n as i32),
            ]
        }
    };
    (module, args, bufs)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "vector_add",
            ptx: include_str!("ptx/vector_add_f32.ptx"),
            kernel: "_Z10vector_addPKfS0_Pfi",
            grid: [4096, 1, 1],
            block: [256, 1, 1],
        },
        Case {
            name: "matmul_tiled",
            ptx: include_str!("ptx/matmul_tiled_f32.ptx"),
            kernel: "_Z12matmul_tiledPKfS0_Pfiii",
            grid: [16, 16, 1],
            block: [16, 16, 1],
        },
        Case {
            name: "reduce_sum_shared",
            ptx: include_str!("ptx/reduce_sum_shared.ptx"),
            kernel: "_Z9block_sumPKfPfi",
            grid: [4096, 1, 1],
            block: [256, 1, 1],
        },
    ]
}

fn bench(c: &mut Criterion) {
    let all = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut group = c.benchmark_group("execute");
    group.sample_size(10);
    for case in cases() {
        let device = Device::new();
        let (module, args, _bufs) = setup(&device, &case);
        let kernel = module.kernel(case.kernel).unwrap();
        for threads in [1usize, all] {
            let opts = LaunchOptions {
                threads,
                ..LaunchOptions::default()
            };
            let r = kernel
                .launch(case.grid, case.block, 0, &args, &opts)
                .expect("launch");
            eprintln!(
                "{}: {} thread instructions per launch ({} warp instructions)",
                case.name, r.thread_instructions, r.warp_instructions
            );
            group.throughput(Throughput::Elements(r.thread_instructions));
            group.bench_function(format!("{}/threads={threads}", case.name), |b| {
                b.iter(|| {
                    kernel
                        .launch(case.grid, case.block, 0, &args, &opts)
                        .expect("launch")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
