//! Module images, as libcuda loads them: the formats are `ptxvm::image`'s (PTX text, fatbins
//! holding PTX, the fatbin wrapper, the linker's container); this module turns their errors
//! into `CUDA_ERROR_INVALID_IMAGE` and prints the hint for images without PTX.
#![deny(unsafe_code)]

use crate::abi::*;
pub use ptxvm::image::{
    classify, container, container_len, cubin_runs_on, elf_len, is_device_runtime, pick,
    ptx_target, read_elf, sm_number, ElfImage, Kind, PtxEntry, MAX_PTX_BYTES,
};

/// The hint printed when an image holds no PTX.
pub fn no_ptx_hint(what: &str) {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "ptxvm: the {what} holds no PTX, only machine code (SASS) that ptxvm cannot run; build with `-gencode arch=compute_XX,code=compute_XX` to embed PTX"
    );
}

/// [`ptxvm::image::fatbin_ptx`], a bad image being `CUDA_ERROR_INVALID_IMAGE`.
pub fn fatbin_ptx(data: &[u8]) -> Result<Vec<PtxEntry>, CUresult> {
    ptxvm::image::fatbin_ptx(data).map_err(|_| CUDA_ERROR_INVALID_IMAGE)
}

/// [`ptxvm::image::container_ptx`], a bad container being `CUDA_ERROR_INVALID_IMAGE`.
pub fn container_ptx(data: &[u8]) -> Result<Vec<String>, CUresult> {
    ptxvm::image::container_ptx(data).map_err(|_| CUDA_ERROR_INVALID_IMAGE)
}
