//! C ABI types and helpers: result codes, reading and writing through host pointers, tracing.

use crate::exports::CUDAERROR;
use std::ffi::{c_char, c_void, CStr};
use std::io::Write as _;

/// `CUresult` (a C enum: `int`-sized).
pub type CUresult = u32;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CUresult = 702;
pub const CUDA_ERROR_INVALID_CLUSTER_SIZE: CUresult = 912;
pub const CUDA_ERROR_CONTEXT_IS_DESTROYED: CUresult = 709;
pub const CUDA_ERROR_ASSERT: CUresult = 710;
pub const CUDA_ERROR_MISALIGNED_ADDRESS: CUresult = 716;
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_NOT_PERMITTED: CUresult = 800;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

/// The name of a result code (`CUDA_ERROR_INVALID_VALUE`).
pub fn error_name(code: CUresult) -> Option<&'static str> {
    CUDAERROR
        .iter()
        .find(|(_, v)| *v == code as i64)
        .map(|(n, _)| *n)
}

/// A one-line description of a result code, in our own words.
pub fn error_string(code: CUresult) -> Option<String> {
    let name = error_name(code)?;
    let s = match code {
        CUDA_SUCCESS => "no error".to_string(),
        CUDA_ERROR_INVALID_VALUE => "invalid argument".to_string(),
        CUDA_ERROR_NOT_INITIALIZED => "initialization error: cuInit has not been called".into(),
        CUDA_ERROR_ILLEGAL_ADDRESS => {
            "an illegal memory access was encountered (ptxvm printed the faulting access)".into()
        }
        CUDA_ERROR_NO_BINARY_FOR_GPU => {
            "no kernel image is available for execution on the device (ptxvm runs PTX only)".into()
        }
        CUDA_ERROR_NOT_SUPPORTED => "operation not supported by ptxvm's driver".into(),
        CUDA_ERROR_LAUNCH_FAILED => "unspecified launch failure".into(),
        _ => name
            .trim_start_matches("CUDA_ERROR_")
            .trim_start_matches("CUDA_")
            .replace('_', " ")
            .to_lowercase(),
    };
    Some(s)
}

/// Writes `v` through the output pointer `p` (`CUDA_ERROR_INVALID_VALUE` when NULL).
///
/// # Safety
/// `p` is NULL or points to a writable `T` (it may be unaligned).
pub(crate) unsafe fn put<T>(p: *mut T, v: T) -> Result<(), CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `p` is non-null and, by the driver API's contract, points to a writable `T` of the
    // caller's; it may be unaligned in a careless caller, hence `write_unaligned`.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

/// Reads the `T` at `p` (`CUDA_ERROR_INVALID_VALUE` when NULL).
///
/// # Safety
/// `p` is NULL or points to a readable `T` (it may be unaligned).
pub(crate) unsafe fn get<T: Copy>(p: *const T) -> Result<T, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `p` is non-null and, by the driver API's contract, points to a readable `T`.
    Ok(unsafe { p.read_unaligned() })
}

/// The NUL-terminated string at `p` (`CUDA_ERROR_INVALID_VALUE` when NULL or not UTF-8).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays readable during the call.
pub(crate) unsafe fn string(p: *const c_char) -> Result<String, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `p` is non-null and, by the driver API's contract, a NUL-terminated C string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(str::to_string)
        .map_err(|_| CUDA_ERROR_INVALID_VALUE)
}

/// A copy of the `len` host bytes at `p`.
///
/// # Safety
/// `len` is 0, or `p` is NULL or points to `len` readable bytes.
pub(crate) unsafe fn bytes(p: *const c_void, len: usize) -> Result<Vec<u8>, CUresult> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `p` is non-null and, by the driver API's contract, points to `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec())
}

/// Copies the `out.len()` host bytes at `p` into `out`.
///
/// # Safety
/// `out` is empty, or `p` is NULL or points to `out.len()` readable bytes.
pub(crate) unsafe fn read_into(p: *const c_void, out: &mut [u8]) -> Result<(), CUresult> {
    if out.is_empty() {
        return Ok(());
    }
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `p` is non-null and, by this function's contract, points to `out.len()` readable
    // bytes, which cannot overlap `out` (ours).
    unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), out.as_mut_ptr(), out.len()) };
    Ok(())
}

/// The bytes of a NUL-terminated image (PTX text) before its NUL; more than `max` of them is
/// CUDA_ERROR_INVALID_VALUE.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated byte string that stays readable during the call.
pub(crate) unsafe fn cstr_bytes(p: *const c_void, max: usize) -> Result<Vec<u8>, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `p` is non-null and, as a PTX image, NUL-terminated by the driver API's contract.
    let s = unsafe { CStr::from_ptr(p.cast::<c_char>()) }.to_bytes();
    // (measured before it is copied: a 300 MB string is refused, not duplicated)
    if s.len() > max {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(s.to_vec())
}

/// Copies `len` bytes from `src` to `dst` (which may overlap).
///
/// # Safety
/// Each range is host memory the driver API's caller vouches for (readable at `src`, writable
/// at `dst`, for `len` bytes, until the copy is done), or device memory (a driver allocation, a
/// module variable) that the caller checked and holds for the duration of the copy
/// ([`crate::state::Ends::hold`]): a copy may run later on a stream's worker thread, so a check
/// made when the call was issued is not enough by itself.
pub(crate) unsafe fn copy(dst: u64, src: u64, len: usize) -> Result<(), CUresult> {
    if len == 0 {
        return Ok(());
    }
    if dst == 0 || src == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: by this function's contract each range is caller-vouched host memory or a device
    // allocation held alive for the copy (a device address is the host address of its
    // storage, whose words are atomics, i.e. interior-mutable, so a kernel running meanwhile
    // on another stream races only in value, as on a GPU). `ptr::copy` allows overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
    Ok(())
}

/// Fills `count` elements of `width` bytes (1, 2 or 4) at device address `dst` with `value`.
///
/// # Safety
/// `[dst, dst + width * count)` lies in a device allocation that the caller checked and holds
/// for the duration of the fill ([`crate::state::Ends::hold`]).
pub(crate) unsafe fn fill(dst: u64, value: u32, width: usize, count: usize) {
    // SAFETY: by this function's contract the range lies in a device allocation held alive for
    // the fill: host memory at that address made of atomic (interior-mutable) words.
    unsafe {
        match width {
            1 => std::ptr::write_bytes(dst as *mut u8, value as u8, count),
            2 => {
                let p = dst as *mut u16;
                for k in 0..count {
                    p.add(k).write_unaligned(value as u16);
                }
            }
            _ => {
                let p = dst as *mut u32;
                for k in 0..count {
                    p.add(k).write_unaligned(value);
                }
            }
        }
    }
}

/// `CUDA_ERROR_NOT_SUPPORTED` for an export that is not implemented (traced).
pub fn unsupported(name: &str) -> CUresult {
    if crate::state::settings().trace {
        trace(name, &[], CUDA_ERROR_NOT_SUPPORTED);
    }
    CUDA_ERROR_NOT_SUPPORTED
}

/// One line of the call trace on stderr.
pub fn trace(name: &str, args: &[(&str, &dyn std::fmt::Debug)], r: CUresult) {
    let args: Vec<String> = args.iter().map(|(n, v)| format!("{n}: {v:?}")).collect();
    let result = error_name(r).unwrap_or("?");
    let _ = writeln!(
        std::io::stderr(),
        "[ptxvm] {name}({}) = {result}",
        args.join(", ")
    );
}
