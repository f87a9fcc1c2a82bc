//! `ptxvm`: run PTX kernels on the CPU from Rust.
//!
//! The API mirrors the CUDA driver API at a smaller size: a [`Device`] owns device memory; a
//! [`Module`] is PTX text parsed, checked, lowered and loaded onto a device (its `.global` and
//! `.const` variables allocated and initialised); a [`Kernel`] is one `.entry` of a module;
//! [`DeviceBuffer`]s hold typed device memory; [`Kernel::launch`] runs a grid and returns a
//! [`LaunchReport`]. Everything that can go wrong — invalid PTX, wrong arguments, a kernel that
//! faults, deadlocks or runs away — is an [`Error`] whose [`Error::render`] gives the message
//! with the PTX source location (and the CUDA source line when the PTX has `.loc` information).
//!
//! ```
//! use ptxvm::{Arg, Device, LaunchOptions, Module};
//!
//! let ptx = r#"
//! .version 8.0
//! .target sm_80
//! .address_size 64
//! .visible .entry scale(.param .u64 out, .param .f32 k, .param .u32 n)
//! {
//!     .reg .pred %p;
//!     .reg .b32 %r<4>;
//!     .reg .f32 %f<3>;
//!     .reg .b64 %rd<4>;
//!     ld.param.u64 %rd1, [out];
//!     ld.param.f32 %f1, [k];
//!     ld.param.u32 %r1, [n];
//!     mov.u32 %r2, %tid.x;
//!     setp.ge.u32 %p, %r2, %r1;
//!     @%p bra DONE;
//!     cvt.rn.f32.u32 %f2, %r2;
//!     mul.f32 %f2, %f2, %f1;
//!     mul.wide.u32 %rd2, %r2, 4;
//!     add.u64 %rd3, %rd1, %rd2;
//!     st.global.f32 [%rd3], %f2;
//! DONE:
//!     ret;
//! }
//! "#;
//! let device = Device::new();
//! let module = Module::from_ptx(&device, "scale.ptx", ptx)?;
//! let kernel = module.kernel("scale")?;
//! let out = device.alloc::<f32>(8)?;
//! let report = kernel.launch(
//!     [1, 1, 1],
//!     [8, 1, 1],
//!     0,
//!     &[Arg::buffer(&out), Arg::f32(0.5), Arg::u32(8)],
//!     &LaunchOptions::default(),
//! )?;
//! assert_eq!(out.to_vec(), vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]);
//! assert!(report.thread_instructions > 0);
//! # Ok::<(), ptxvm::Error>(())
//! ```
mod device;
mod dtype;
mod error;
mod globals;
mod launch;
mod limits;
mod module;

pub use device::{BufferView, Device, DeviceBuffer, Element};
pub use dtype::Dtype;
pub use error::Error;
pub use globals::GlobalInfo;
pub use launch::{Arg, LaunchOptions, LaunchReport, StructArg};
pub use limits::{REGISTER_FILE_MAX, SHARED_LIMIT, SHARED_LIMIT_MAX};
pub use module::{Kernel, Module, ParamInfo};
pub use ptx_interp::coverage;
pub use ptx_interp::exec::{DEFAULT_STACK_SIZE, LOCAL_MAX};
pub use ptx_interp::launch::{LaunchStats, Progress, LOCAL_TOTAL};
pub use ptx_interp::set_simd;
pub use ptx_isa::{ScalarType, TypeKind};

pub mod fuzz;

mod driver;
pub use driver::{AllocationInfo, KernelResources};

/// Stable codes of runtime errors (rendered like the checker's diagnostics), defined with their
/// explanations in the one registry of the tool, [`ptx_diag::codes`]: add a code there.
pub mod codes {
    pub use ptx_diag::codes::runtime::*;
}
