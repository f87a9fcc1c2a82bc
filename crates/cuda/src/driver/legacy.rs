//! The deprecated execution and context API that PyCUDA and other long-lived clients still
//! call (cuda.h: "Execution Control [DEPRECATED]", "Context Management [DEPRECATED]"): a
//! function's block shape, shared size and parameter bytes set by separate calls, then
//! `cuLaunch`/`cuLaunchGrid[Async]`; `cuCtxAttach`/`cuCtxDetach` usage counts.
//!
//! The per-function launch state lives here, keyed by the function handle (handles are never
//! reused), and is read at launch: the parameter bytes go to the same launch path as
//! `cuLaunchKernel`'s `extra` buffer, zero-padded to the kernel's parameter size when the
//! caller set fewer (the bytes a GPU would leave unset).

use super::*;
use std::collections::HashMap;

/// The most parameter bytes `cuParamSetSize` takes: the 32,764-byte kernel parameter limit of
/// CUDA 12.1 and later.
const PARAM_MAX: usize = 32_764;

/// What the deprecated calls have set on one function.
#[derive(Default)]
struct Legacy {
    block: Option<[u32; 3]>,
    shared: u32,
    params: Vec<u8>,
    size: usize,
}

static LEGACY: Mutex<Option<HashMap<u64, Legacy>>> = Mutex::new(None);

/// Runs `f` on function `fh` (checked to be live) and its launch state.
fn with_func<R>(fh: u64, f: impl FnOnce(&Func, &mut Legacy) -> R) -> Result<R, CUresult> {
    let func = state::init_lock()?.func(fh)?;
    let mut map = LEGACY.lock().unwrap_or_else(|e| e.into_inner());
    Ok(f(
        &func,
        map.get_or_insert_with(HashMap::new).entry(fh).or_default(),
    ))
}

/// Runs `f` on the launch state of function `fh`, after checking that the handle is a live
/// function.
fn with<R>(fh: u64, f: impl FnOnce(&mut Legacy) -> R) -> Result<R, CUresult> {
    with_func(fh, |_, l| f(l))
}

/// Writes `bytes` at `offset` of the function's parameter bytes (growing them as needed).
fn set_param(fh: u64, offset: c_int, bytes: &[u8]) -> Result<(), CUresult> {
    let offset = usize::try_from(offset).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    let end = offset
        .checked_add(bytes.len())
        .filter(|&e| e <= PARAM_MAX)
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    with(fh, |l| {
        if l.params.len() < end {
            l.params.resize(end, 0);
        }
        l.params[offset..end].copy_from_slice(bytes);
    })
}

/// `cuLaunchGrid[Async]`: the grid `w`×`h`, the rest from the deprecated calls.
fn launch_grid(fh: u64, w: c_int, h_: c_int, stream: u64) -> Result<(), CUresult> {
    let (need, block, shared, mut buf) = with_func(fh, |f, l| {
        let mut buf = l.params.clone();
        buf.resize(l.size, 0);
        (f.param_size as usize, l.block, l.shared, buf)
    })?;
    // a block shape is required (a GPU's driver refuses the launch without one)
    let block = block.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let grid = [w, h_].map(|d| u32::try_from(d).unwrap_or(0));
    if buf.len() > need.next_multiple_of(16) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    buf.resize(need.max(buf.len()), 0);
    let mut size = buf.len();
    let mut extra: [*mut c_void; 5] = [
        std::ptr::without_provenance_mut(1), // CU_LAUNCH_PARAM_BUFFER_POINTER
        buf.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(2), // CU_LAUNCH_PARAM_BUFFER_SIZE
        (&raw mut size).cast(),
        std::ptr::null_mut(), // CU_LAUNCH_PARAM_END
    ];
    let a = LaunchArgs {
        grid: [grid[0], grid[1], 1],
        block,
        shared,
        stream,
        coop: false,
        cluster: None,
        shared_memory_mode: None,
    };
    let extra = if need == 0 && buf.is_empty() {
        std::ptr::null_mut()
    } else {
        extra.as_mut_ptr()
    };
    // SAFETY: `extra` is a CU_LAUNCH_PARAM_END-terminated array whose buffer pointer and size
    // pointer point at `buf` and `size`, both alive until `launch` returns (it copies the
    // parameter bytes before queueing the launch).
    unsafe { launch(fh, a, std::ptr::null_mut(), extra) }
}

/// Usage counts of contexts beyond the one `cuCtxCreate` gives, from `cuCtxAttach`.
static ATTACHED: Mutex<Option<HashMap<u64, u32>>> = Mutex::new(None);

api! {
    fn cuFuncSetBlockShape(f: Handle, x: c_int, y: c_int, z: c_int) {
        let dims = [x, y, z].map(|d| u32::try_from(d).unwrap_or(0));
        if dims.contains(&0) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        with(h(f), |l| l.block = Some(dims))
    }

    fn cuFuncSetSharedSize(f: Handle, bytes: c_uint) {
        with(h(f), |l| l.shared = bytes)
    }

    fn cuParamSetSize(f: Handle, bytes: c_uint) {
        if bytes as usize > PARAM_MAX {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        with(h(f), |l| l.size = bytes as usize)
    }

    fn cuParamSeti(f: Handle, offset: c_int, value: c_uint) {
        set_param(h(f), offset, &value.to_le_bytes())
    }

    fn cuParamSetf(f: Handle, offset: c_int, value: f32) {
        set_param(h(f), offset, &value.to_le_bytes())
    }

    fn cuParamSetv(f: Handle, offset: c_int, ptr: *const c_void, bytes: c_uint) {
        if bytes as usize > PARAM_MAX {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut data = vec![0u8; bytes as usize];
        if bytes > 0 {
            if ptr.is_null() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            read_into(ptr, &mut data)?;
        }
        set_param(h(f), offset, &data)
    }

    fn cuLaunch(f: Handle) {
        launch_grid(h(f), 1, 1, 0)
    }

    fn cuLaunchGrid(f: Handle, w: c_int, height: c_int) {
        launch_grid(h(f), w, height, 0)
    }

    fn cuLaunchGridAsync(f: Handle, w: c_int, height: c_int, stream: Handle) {
        launch_grid(h(f), w, height, h(stream))
    }

    fn cuCtxAttach(pctx: *mut Handle, flags: c_uint) {
        if pctx.is_null() || flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let s = state::init_lock()?;
        let c = state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        s.ctx(c)?;
        drop(s);
        put(pctx, handle(c))?;
        let mut map = ATTACHED.lock().unwrap_or_else(|e| e.into_inner());
        *map.get_or_insert_with(HashMap::new).entry(c).or_insert(0) += 1;
        Ok(())
    }

    fn cuCtxDetach(ctx: Handle) {
        // the context must be current; the last usage destroys it, as cuCtxDestroy does
        let c = h(ctx);
        state::init_lock()?.ctx(c)?;
        if state::stack_top() != Some(c) {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        {
            let mut map = ATTACHED.lock().unwrap_or_else(|e| e.into_inner());
            let counts = map.get_or_insert_with(HashMap::new);
            if let Some(n) = counts.get_mut(&c) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(&c);
                }
                return Ok(());
            }
        }
        ctx_destroy(c)
    }
}
