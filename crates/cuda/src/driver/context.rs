//! Primary context and context management (cuda.h: "Primary Context Management", "Context Management").

use super::*;

api! {
    fn cuDevicePrimaryCtxRetain(pctx: *mut Handle, dev: CUdevice) {
        let mut s = state::init_lock()?;
        check_device(dev)?;
        if pctx.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let c = s.primary_ctx();
        s.primary_refs += 1;
        put(pctx, handle(c))
    }

    fn cuDevicePrimaryCtxRelease(dev: CUdevice) {
        primary_release(dev)
    }

    fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) {
        primary_release(dev)
    }

    fn cuDevicePrimaryCtxReset(dev: CUdevice) {
        primary_reset(dev)
    }

    fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) {
        primary_reset(dev)
    }

    fn cuDevicePrimaryCtxGetState(dev: CUdevice, flags: *mut c_uint, active: *mut c_int) {
        let s = state::init_lock()?;
        check_device(dev)?;
        put(flags, s.primary_flags)?;
        // active while retained (cudart's table hands the primary context out unretained)
        put(active, (s.primary.is_some() && s.primary_refs > 0) as c_int)
    }

    fn cuDevicePrimaryCtxSetFlags(dev: CUdevice, flags: c_uint) {
        let mut s = state::init_lock()?;
        check_device(dev)?;
        s.primary_flags = flags;
        Ok(())
    }

    fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) {
        let mut s = state::init_lock()?;
        check_device(dev)?;
        s.primary_flags = flags;
        Ok(())
    }

    fn cuCtxCreate(pctx: *mut Handle, flags: c_uint, dev: CUdevice) {
        ctx_create(pctx, flags, dev)
    }

    fn cuCtxCreate_v2(pctx: *mut Handle, flags: c_uint, dev: CUdevice) {
        ctx_create(pctx, flags, dev)
    }

    fn cuCtxCreate_v3(pctx: *mut Handle, params: *mut c_void, n: c_int, flags: c_uint, dev: CUdevice) {
        let _ = (params, n);
        ctx_create(pctx, flags, dev)
    }

    fn cuCtxCreate_v4(pctx: *mut Handle, params: *mut c_void, flags: c_uint, dev: CUdevice) {
        let _ = params;
        ctx_create(pctx, flags, dev)
    }

    fn cuCtxDestroy(ctx: Handle) {
        ctx_destroy(h(ctx))
    }

    fn cuCtxDestroy_v2(ctx: Handle) {
        ctx_destroy(h(ctx))
    }

    fn cuCtxPushCurrent(ctx: Handle) {
        let s = state::init_lock()?;
        s.ctx(h(ctx))?;
        state::stack_push(h(ctx));
        Ok(())
    }

    fn cuCtxPushCurrent_v2(ctx: Handle) {
        let s = state::init_lock()?;
        s.ctx(h(ctx))?;
        state::stack_push(h(ctx));
        Ok(())
    }

    fn cuCtxPopCurrent(pctx: *mut Handle) {
        ctx_pop(pctx)
    }

    fn cuCtxPopCurrent_v2(pctx: *mut Handle) {
        ctx_pop(pctx)
    }

    fn cuCtxSetCurrent(ctx: Handle) {
        let s = state::init_lock()?;
        if ctx.is_null() {
            state::stack_set(None);
            return Ok(());
        }
        s.ctx(h(ctx))?;
        state::stack_set(Some(h(ctx)));
        Ok(())
    }

    fn cuCtxGetCurrent(pctx: *mut Handle) {
        let s = state::init_lock()?;
        let c = state::stack_top().filter(|&c| s.ctx(c).is_ok()).unwrap_or(0);
        put(pctx, handle(c))
    }

    fn cuCtxGetDevice(dev: *mut CUdevice) {
        let s = state::init_lock()?;
        let c = state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        s.ctx(c)?;
        put(dev, 0)
    }

    fn cuCtxGetDevice_v2(dev: *mut CUdevice, ctx: Handle) {
        let s = state::init_lock()?;
        let c = if ctx.is_null() { state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)? } else { h(ctx) };
        s.ctx(c)?;
        put(dev, 0)
    }

    fn cuCtxGetFlags(flags: *mut c_uint) {
        let s = state::init_lock()?;
        let c = state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        put(flags, s.ctx(c)?.flags)
    }

    fn cuCtxGetId(ctx: Handle, id: *mut u64) {
        let s = state::init_lock()?;
        let c = if ctx.is_null() { state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)? } else { h(ctx) };
        put(id, s.ctx(c)?.id)
    }

    fn cuCtxGetApiVersion(ctx: Handle, version: *mut c_uint) {
        let s = state::init_lock()?;
        let c = if ctx.is_null() { state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)? } else { h(ctx) };
        s.ctx(c)?;
        put(version, 12010)
    }

    fn cuCtxSynchronize() {
        let c = state::init_lock()?.current()?;
        stream::synchronize_ctx(c)?;
        state::init_lock()?.current().map(|_| ())
    }

    fn cuCtxSynchronize_v2(ctx: Handle) {
        let c = if ctx.is_null() { state::init_lock()?.current()? } else { h(ctx) };
        state::init_lock()?.ctx(c)?;
        stream::synchronize_ctx(c)?;
        match state::init_lock()?.ctx(c)?.sticky {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn cuCtxGetLimit(value: *mut usize, limit: c_int) {
        let s = state::init_lock()?;
        let c = s.ctx(state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?)?;
        // CU_LIMIT_STACK_SIZE 0, PRINTF_FIFO_SIZE 1, MALLOC_HEAP_SIZE 2, DEV_RUNTIME_SYNC_DEPTH 3,
        // DEV_RUNTIME_PENDING_LAUNCH_COUNT 4, MAX_L2_FETCH_GRANULARITY 5, PERSISTING_L2_CACHE_SIZE 6
        let v = match limit {
            0 => c.stack_size,
            1 => c.printf_fifo,
            2 => s.device.heap_size(),
            3 => 2,
            4 => 2048,
            5 => 64,
            6 => 0,
            _ => return Err(CUDA_ERROR_NOT_SUPPORTED),
        };
        put(value, v as usize)
    }

    fn cuCtxSetLimit(limit: c_int, value: usize) {
        let mut s = state::init_lock()?;
        let c = state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if limit == 2 {
            // the device heap of kernels' malloc: refused once a kernel that uses it has run,
            // as CUDA refuses it
            s.ctx(c)?;
            return s
                .device
                .set_heap_size(value as u64)
                .map_err(|_| CUDA_ERROR_INVALID_VALUE);
        }
        let c = s.ctx_mut(c)?;
        match limit {
            0 => {
                if value as u64 > ptxvm::LOCAL_MAX {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                c.stack_size = value as u64
            }
            1 => c.printf_fifo = (value as u64).max(4096),
            3..=6 => {}
            _ => return Err(CUDA_ERROR_NOT_SUPPORTED),
        }
        Ok(())
    }

    fn cuCtxGetCacheConfig(config: *mut c_int) {
        let s = state::init_lock()?;
        let c = s.ctx(state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?)?;
        put(config, c.cache_config as c_int)
    }

    fn cuCtxSetCacheConfig(config: c_int) {
        let mut s = state::init_lock()?;
        let c = state::stack_top().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if !(0..=4).contains(&config) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        s.ctx_mut(c)?.cache_config = config as u32;
        Ok(())
    }

    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        let s = state::init_lock()?;
        s.current()?;
        if !least.is_null() {
            put(least, 0)?;
        }
        if !greatest.is_null() {
            put(greatest, -5)?;
        }
        Ok(())
    }
}
