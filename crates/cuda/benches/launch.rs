//! Launch overhead through the driver API: an empty kernel's `cuLaunchKernel` followed by
//! `cuCtxSynchronize` (the bound: 20 µs).
#![allow(unsafe_code)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::ffi::c_void;

const PTX: &str = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry empty(.param .u64 p)\n{\n    ret;\n}\n\0";

fn launch(c: &mut Criterion) {
    let mut ctx: *mut c_void = std::ptr::null_mut();
    let mut module: *mut c_void = std::ptr::null_mut();
    let mut f: *mut c_void = std::ptr::null_mut();
    // SAFETY: the driver API used as documented: out-pointers to locals, NUL-terminated strings,
    // one kernelParams entry pointing at a u64 for the kernel's one .u64 parameter.
    unsafe {
        assert_eq!(cuda::cuInit(0), 0);
        assert_eq!(cuda::cuCtxCreate_v2(&mut ctx, 0, 0), 0);
        assert_eq!(cuda::cuModuleLoadData(&mut module, PTX.as_ptr().cast()), 0);
        assert_eq!(
            cuda::cuModuleGetFunction(&mut f, module, c"empty".as_ptr()),
            0
        );
    }
    let mut p: u64 = 0;
    let mut params = [(&mut p as *mut u64).cast::<c_void>()];
    c.bench_function("cuLaunchKernel(empty, 1x1) + cuCtxSynchronize", |b| {
        b.iter(|| {
            // SAFETY: as above; the handles are live.
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
        })
    });
}

criterion_group!(benches, launch);
criterion_main!(benches);
