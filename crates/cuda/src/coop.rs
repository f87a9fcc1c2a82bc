//! Cooperative launches and grid synchronization.
//!
//! On a GPU, `this_grid().sync()` calls `cudaCGSynchronize` of NVIDIA's device runtime
//! (`libcudadevrt.a`, linked by the program: SASS only). The JIT linker replaces that library
//! with our own PTX definitions of its grid entry points (`cudadevrt.ptx`), and a cooperative
//! launch runs all CTAs of its grid at once, one OS thread each, so that the barrier (a
//! counter the CTAs spin on) completes. The grid may hold no more CTAs than the device can
//! keep resident (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`), as on a GPU.
#![deny(unsafe_code)]

/// The PTX that stands in for `libcudadevrt.a`.
pub const CUDADEVRT_PTX: &str = include_str!("cudadevrt.ptx");

pub const CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: crate::CUresult = 720;

/// `CUlaunchAttributeID` `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`.
pub const ATTRIBUTE_COOPERATIVE: u32 = 2;

/// One `CUlaunchAttribute`: the id, padding to 8 bytes, and a 64-byte value union.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LaunchAttribute {
    pub id: u32,
    pad: u32,
    pub value: [u32; 16],
}
