//! Tensor maps: `cuTensorMapEncodeTiled`, `cuTensorMapEncodeIm2col` and
//! `cuTensorMapReplaceAddress` write and patch the 128-byte `CUtensorMap` in ptxvm's encoding
//! (`ptxvm::TensorMap`, docs/async.md), which `cp.async.bulk.tensor` reads. Every argument is
//! checked as the driver documents; a bad one is `CUDA_ERROR_INVALID_VALUE`.

use crate::abi::*;
use crate::api;
use ptxvm::{TensorMap, TensorMapLayout};
use std::ffi::{c_int, c_uint, c_void};

/// The `n` values at `p` (`CUDA_ERROR_INVALID_VALUE` when NULL).
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn array<T: Copy>(p: *const T, n: usize) -> Result<Vec<T>, CUresult> {
    (0..n).map(|k| get(p.wrapping_add(k))).collect()
}

/// Checks the output pointer and the rank; the rank as a count.
fn out_and_rank(map: *mut c_void, rank: c_uint) -> Result<usize, CUresult> {
    // (CUtensorMap is declared 64-byte aligned)
    if map.is_null() || map as usize % 64 != 0 || !(1..=5).contains(&rank) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(rank as usize)
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn write(map: *mut c_void, m: Result<TensorMap, String>) -> Result<(), CUresult> {
    let m = m.map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    for (k, b) in m.encode().into_iter().enumerate() {
        put(map.cast::<u8>().wrapping_add(k), b)?;
    }
    Ok(())
}

/// The tensor map at `map`, decoded.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn read(map: *const c_void) -> Result<TensorMap, CUresult> {
    let bytes: Vec<u8> = array(map.cast::<u8>(), 128)?;
    let raw: [u8; 128] = bytes.try_into().map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    TensorMap::decode(&raw).map_err(|_| CUDA_ERROR_INVALID_VALUE)
}

api! {
    fn cuTensorMapEncodeTiled(
        tensor_map: *mut c_void,
        data_type: c_uint,
        rank: c_uint,
        global_address: *mut c_void,
        global_dim: *const u64,
        global_strides: *const u64,
        box_dim: *const c_uint,
        element_strides: *const c_uint,
        interleave: c_uint,
        swizzle: c_uint,
        l2_promotion: c_uint,
        oob_fill: c_uint
    ) {
        let r = out_and_rank(tensor_map, rank)?;
        let dims = array(global_dim, r)?;
        let strides = if r > 1 { array(global_strides, r - 1)? } else { Vec::new() };
        let boxd = array(box_dim, r)?;
        let es = array(element_strides, r)?;
        let layout = TensorMapLayout { interleave, swizzle, l2promo: l2_promotion, oob_fill };
        let m = TensorMap::tiled(data_type, global_address as u64, &dims, &strides, &boxd, &es, layout);
        write(tensor_map, m)
    }

    fn cuTensorMapEncodeIm2col(
        tensor_map: *mut c_void,
        data_type: c_uint,
        rank: c_uint,
        global_address: *mut c_void,
        global_dim: *const u64,
        global_strides: *const u64,
        lower_corner: *const c_int,
        upper_corner: *const c_int,
        channels_per_pixel: c_uint,
        pixels_per_column: c_uint,
        element_strides: *const c_uint,
        interleave: c_uint,
        swizzle: c_uint,
        l2_promotion: c_uint,
        oob_fill: c_uint
    ) {
        let r = out_and_rank(tensor_map, rank)?;
        if r < 3 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let dims = array(global_dim, r)?;
        let strides = array(global_strides, r - 1)?;
        let lower = array(lower_corner, r - 2)?;
        let upper = array(upper_corner, r - 2)?;
        let es = array(element_strides, r)?;
        let layout = TensorMapLayout { interleave, swizzle, l2promo: l2_promotion, oob_fill };
        let m = TensorMap::im2col(
            data_type,
            global_address as u64,
            &dims,
            &strides,
            &lower,
            &upper,
            channels_per_pixel,
            pixels_per_column,
            &es,
            layout,
        );
        write(tensor_map, m)
    }

    fn cuTensorMapReplaceAddress(tensor_map: *mut c_void, global_address: *mut c_void) {
        if tensor_map.is_null() || tensor_map as usize % 64 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut m = read(tensor_map)?;
        m.addr = global_address as u64;
        m.check().map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        write(tensor_map, Ok(m))
    }
}
