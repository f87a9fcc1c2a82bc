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
//!
//! # Parameters, variables and views
//!
//! A kernel's parameters are packed into one buffer, each at the previous one's end rounded up
//! to its alignment (a scalar's size, or `A` of `.param .align A .b8 name[N]`);
//! [`Kernel::params`] gives each one's name, type, offset, size and alignment. A by-value struct
//! (nvcc's `.param .align A .b8 name[N]`) is passed as an [`Arg::Struct`] built with
//! [`StructArg`], which lays fields out as C does; a launch refuses one whose size is not N or
//! whose alignment exceeds A. A module's `.const` (`__constant__`) and `.global` (`__device__`)
//! variables are read and written by name ([`Module::read_global`], [`Module::write_global`],
//! [`Module::globals`]). [`DeviceBuffer::view`] makes a sub-buffer; a kernel given a view is
//! bounded by the parent buffer, as a CUDA pointer into an allocation is. `docs/api.md` has the
//! details and the `ptxvm run` syntax for all of this.
//!
//! ```
//! use ptxvm::{Arg, Device, LaunchOptions, Module, StructArg};
//!
//! // struct Params { float scale; float *data; unsigned n; } by value, and a __device__ counter
//! let ptx = r#"
//! .version 8.0
//! .target sm_80
//! .address_size 64
//! .global .align 4 .u32 calls;
//! .visible .entry scale(.param .align 8 .b8 p[24])
//! {
//!     .reg .pred %q;
//!     .reg .b32 %r<4>;
//!     .reg .f32 %f<3>;
//!     .reg .b64 %rd<4>;
//!     ld.param.f32 %f1, [p];
//!     ld.param.u64 %rd1, [p+8];
//!     ld.param.u32 %r1, [p+16];
//!     mov.u32 %r2, %tid.x;
//!     setp.ge.u32 %q, %r2, %r1;
//!     @%q bra DONE;
//!     mul.wide.u32 %rd2, %r2, 4;
//!     add.u64 %rd3, %rd1, %rd2;
//!     ld.global.f32 %f2, [%rd3];
//!     mul.f32 %f2, %f2, %f1;
//!     st.global.f32 [%rd3], %f2;
//!     atom.global.add.u32 %r3, [calls], 1;
//! DONE:
//!     ret;
//! }
//! "#;
//! let device = Device::new();
//! let module = Module::from_ptx(&device, "scale.ptx", ptx)?;
//! let kernel = module.kernel("scale")?;
//! let p = &kernel.params()[0];
//! assert_eq!((p.offset, p.size, p.align, p.array), (0, 24, 8, true));
//!
//! let data = device.from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let tail = data.view(2..)?; // elements 2..6
//! module.write_global("calls", &[100u32])?;
//! let arg = StructArg::new().f32(10.0).view(&tail).u32(3); // offsets 0, 8, 16
//! kernel.launch([1, 1, 1], [4, 1, 1], 0, &[Arg::Struct(arg)], &LaunchOptions::default())?;
//!
//! let mut out = [0.0f32; 6];
//! data.copy_to(&mut out)?;
//! assert_eq!(out, [1.0, 2.0, 30.0, 40.0, 50.0, 6.0]);
//! assert_eq!(module.read_global::<u32>("calls")?, [103]);
//! # Ok::<(), ptxvm::Error>(())
//! ```
//!
//! # Images, linking and the driver layer
//!
//! [`image`] reads module images (fatbins holding PTX, plain or compressed, also inside host
//! objects; the linker's container) and [`link`] links PTX inputs by name into one module:
//! `ptxvm run` and libcuda (`crates/cuda`) share both. What libcuda needs beyond that is in
//! the `driver` module: identity-mapped devices, [`Device::claim`]/[`Device::hold`] for work
//! that runs after its call returned, [`Kernel::compile_within`], and
//! [`Kernel::launch_raw_streaming`] from a laid-out parameter buffer. A kernel's failure
//! carries its kind ([`Failure`]), which callers match on instead of the report's text.
mod device;
mod dtype;
mod error;
mod globals;
pub mod image;
mod launch;
mod limits;
pub mod link;
mod module;
mod sanitize;
mod tensormap;

pub use device::{BufferView, Device, DeviceBuffer, Element};
pub use dtype::Dtype;
pub use error::{Error, Failure};
pub use globals::GlobalInfo;
pub use launch::{Arg, LaunchOptions, LaunchReport, StructArg, CLUSTER_MAX};
pub use limits::{REGISTER_FILE_MAX, SHARED_LIMIT, SHARED_LIMIT_MAX};
pub use module::{Kernel, Module, ParamInfo, MAX_SOURCE_BYTES};
pub use ptx_interp::compile::CompileOptions;
pub use ptx_interp::coverage;
pub use ptx_interp::exec::{Checks, Hazard, HazardKind, SanAccess, DEFAULT_STACK_SIZE, LOCAL_MAX};
pub use ptx_interp::launch::{LaunchStats, Progress, LOCAL_TOTAL};
pub use ptx_interp::mem::DEFAULT_HEAP_SIZE;
pub use ptx_interp::set_simd;
pub use ptx_isa::{ScalarType, TypeKind};
pub use tensormap::{TensorMap, TensorMapLayout};

pub mod fuzz;

mod driver;
pub use driver::{AllocationInfo, Claim, Held, KernelResources};

/// Stable codes of runtime errors (rendered like the checker's diagnostics), defined with their
/// explanations in the one registry of the tool, [`ptx_diag::codes`]: add a code there.
pub mod codes {
    pub use ptx_diag::codes::runtime::*;
}
