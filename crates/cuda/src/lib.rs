//! `libcuda.so.1` for machines without a GPU: the CUDA driver API over the ptxvm runtime.
//!
//! Every function of the CUDA 13 driver API is exported (the list, and what `cuGetProcAddress`
//! answers, are generated from NVIDIA's headers into [`exports`] by `tools/gen-cuda-exports.py`);
//! what is not implemented returns `CUDA_ERROR_NOT_SUPPORTED`. Work on the default streams runs
//! synchronously on the calling thread; each created stream runs its work in order on a thread
//! of its own, and stream capture records work into graphs (`src/stream.rs`). A device
//! pointer is the host address of its allocation ([`ptxvm::Device::identity`]): host code may
//! read pinned, mapped and managed memory through it, and every kernel access is still checked
//! against the allocation map.
//!
//! Images (module `image`) are PTX text, fatbins holding PTX (plain, zstd or LZ4 entries, as nvcc 13
//! writes them; of several the highest architecture not above the device's runs), the
//! `__cudaFatBinaryWrapper` cudart registers, or the linker's output; cubins and SASS-only
//! fatbins are `CUDA_ERROR_NO_BINARY_FOR_GPU` with a one-line hint on stderr. The JIT linker
//! ([`ptxvm::link`], shared with `ptxvm run --link`) checks each PTX input on its own and
//! resolves `.extern` declarations by name into one PTX module, as the driver's linker does
//! (its //! doc gives the design).
//!
//! Programs built by nvcc against the CUDA Runtime run too: cudart asks the driver for private
//! tables of functions by UUID (`cuGetExportTable`, `driver/export_table.rs`, whose //! doc
//! lists them) and loads its fatbins as libraries, which belong to no context.
//!
//! Every export catches panics (none crosses the C ABI) and validates what the host hands it:
//! handles are looked up in a registry, device ranges in the allocation map; host pointers can
//! only be checked for NULL.
//!
//! Settings come from the environment (`ptxvm exec` sets them): `PTXVM_THREADS`,
//! `PTXVM_TIMEOUT` (seconds), `PTXVM_MAX_INSTRUCTIONS`, `PTXVM_TRACE=1` (each call, its
//! arguments and its result on stderr), `PTXVM_CC` (compute capability, `8.0` by default),
//! `PTXVM_EXACT_BOUNDS=1` (kernels may not touch the 256-byte granule past a buffer's size).
//!
//! `cuMemAlloc` memory lives in one `memfd` mapped shared (see `shm`), so that `cuIpc*` handles
//! can hand it to other processes; `PTXVM_NO_SHARED_MEMORY=1` uses the global allocator instead
//! (no IPC). A process that `fork`s without `exec` shares that memory with its child.

// The C ABI needs `#[no_mangle]` exports and raw pointers. Every function that dereferences a
// pointer the caller handed over is an `unsafe fn` with a `# Safety` contract: the exports
// (`api!`), the helpers of `abi` (`put`, `get`, `bytes`, `copy`, `fill`, …) and the driver's
// helpers that pass the caller's pointers on; the unsafe blocks themselves (in `abi`, `shm`,
// `fuzz`) each carry a `// SAFETY:` argument. `state` and `image` are safe code.
#![allow(unsafe_code)]
#![allow(non_snake_case)]

pub mod exports;

mod abi;
mod coop;
mod driver;
pub mod fuzz;
mod graph;
mod image;
/// The JIT linker is the runtime's ([`ptxvm::link`]).
pub use ptxvm::link;
mod memory;
mod shm;
mod state;
mod stream;
mod tensormap;

pub use abi::CUresult;
pub use driver::*;
pub use graph::*;
pub use memory::*;
pub use per_thread_exports::*;
pub use tensormap::*;

/// Calls `f`, turning its error into a `CUresult` and a panic into `CUDA_ERROR_UNKNOWN` (no
/// panic may unwind into C).
pub(crate) fn guard(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => abi::CUDA_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => abi::CUDA_ERROR_UNKNOWN,
    }
}

/// Defines exports: each `fn cuName(args) { body }` becomes a `#[no_mangle] unsafe extern "C"`
/// function whose body (returning `Result<(), CUresult>`) runs under [`guard`] and is traced
/// when `PTXVM_TRACE` is set.
macro_rules! api {
    ($( fn $name:ident ( $($a:ident : $t:ty),* $(,)? ) $body:block )*) => {$(
        #[doc = concat!("`", stringify!($name), "` of the CUDA driver API.")]
        ///
        /// # Safety
        /// As the driver API documents: pointers are NULL or valid for what the call reads
        /// or writes through them. Handles and device addresses are checked.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::CUresult {
            let r = $crate::guard(|| -> Result<(), $crate::CUresult> { $body });
            if $crate::state::settings().trace {
                $crate::abi::trace(
                    stringify!($name),
                    &[$((stringify!($a), &$a as &dyn std::fmt::Debug)),*],
                    r,
                );
            }
            r
        }
    )*};
}
pub(crate) use api;

/// Exports that are not implemented: `CUDA_ERROR_NOT_SUPPORTED`, whatever the arguments (the
/// C calling convention lets a function ignore them).
macro_rules! stubs {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not supported by ptxvm yet.")]
        #[no_mangle]
        pub extern "C" fn $name() -> $crate::CUresult {
            $crate::abi::unsupported(stringify!($name))
        }
    )*};
}

/// `X_ptds`/`X_ptsz` exports of an implemented `X`: the per-thread default stream is the
/// default stream here (all work is synchronous), so they are `X`.
macro_rules! per_thread {
    ($( fn $name:ident ( $($a:ident : $t:ty),* ) => $base:ident; )*) => {$(
        #[doc = concat!("`", stringify!($name), "`: `", stringify!($base), "` (per-thread default stream).")]
        ///
        /// # Safety
        #[doc = concat!("As for `", stringify!($base), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::CUresult {
            // SAFETY: the same arguments, under the same contract.
            unsafe { $base($($a),*) }
        }
    )*};
}

#[allow(unused_imports)]
mod per_thread_exports {
    use crate::driver::*;
    use crate::memory::*;
    use std::ffi::{c_char, c_int, c_uint, c_void};
    include!(concat!(env!("OUT_DIR"), "/per_thread.rs"));
}

include!(concat!(env!("OUT_DIR"), "/stubs.rs"));
