//! Launch overhead through the driver API: an empty kernel's `cuLaunchKernel` followed by
//! `cuCtxSynchronize` (the bound: 20 µs), and the cost of a launch and of a
//! `cuMemFree` as live allocations grow (0, 20k and 100k: both must stay O(log n), a few µs).
#![allow(unsafe_code)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::ffi::c_void;

const PTX: &str = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry empty(.param .u64 p)\n{\n    ret;\n}\n\0";

/// A fresh context with the `empty` kernel loaded: its function handle.
fn empty_kernel() -> *mut c_void {
    let mut ctx: *mut c_void = std::ptr::null_mut();
    let mut module: *mut c_void = std::ptr::null_mut();
    let mut f: *mut c_void = std::ptr::null_mut();
    // SAFETY: the driver API used as documented: out-pointers to locals, NUL-terminated strings.
    unsafe {
        assert_eq!(cuda::cuInit(0), 0);
        assert_eq!(cuda::cuCtxCreate_v2(&mut ctx, 0, 0), 0);
        assert_eq!(cuda::cuModuleLoadData(&mut module, PTX.as_ptr().cast()), 0);
        assert_eq!(
            cuda::cuModuleGetFunction(&mut f, module, c"empty".as_ptr()),
            0
        );
    }
    f
}

/// One launch of `empty` (1 thread) with `param` as its `.u64` parameter, then a context
/// synchronize.
fn launch_and_sync(f: *mut c_void, param: u64) {
    let mut p = param;
    let mut params = [(&mut p as *mut u64).cast::<c_void>()];
    // SAFETY: `f` is a live function of the current context; one kernelParams entry points at
    // a u64 for the kernel's one .u64 parameter.
    unsafe {
        let r = cuda::cuLaunchKernel(
            f,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        assert_eq!(cuda::cuCtxSynchronize(), 0);
    }
}

fn launch(c: &mut Criterion) {
    let f = empty_kernel();
    c.bench_function("cuLaunchKernel(empty, 1x1) + cuCtxSynchronize", |b| {
        b.iter(|| launch_and_sync(f, 0))
    });
}

/// A launch and a free with `n` other allocations live.
fn with_live_allocations(c: &mut Criterion) {
    let f = empty_kernel();
    let mut live: Vec<u64> = Vec::new();
    let mut g = c.benchmark_group("live allocations");
    for n in [0usize, 20_000, 100_000] {
        while live.len() < n {
            let mut d = 0u64;
            // SAFETY: an out-pointer to a local.
            assert_eq!(unsafe { cuda::cuMemAlloc_v2(&mut d, 64) }, 0);
            live.push(d);
        }
        let p = live.first().copied().unwrap_or(0);
        g.bench_function(format!("launch + sync, {n} live"), |b| {
            b.iter(|| launch_and_sync(f, p))
        });
        g.bench_function(format!("cuMemFree, {n} live"), |b| {
            b.iter_batched(
                || {
                    let mut d = 0u64;
                    // SAFETY: an out-pointer to a local.
                    assert_eq!(unsafe { cuda::cuMemAlloc_v2(&mut d, 64) }, 0);
                    d
                },
                // SAFETY: `d` is live and freed once.
                |d| assert_eq!(unsafe { cuda::cuMemFree_v2(d) }, 0),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, launch, with_live_allocations);
criterion_main!(benches);
