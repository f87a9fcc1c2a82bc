//! Memory management: allocations, pointer attributes, 1D copies and memsets, advice and prefetch (cuda.h: "Memory Management"; 2D/3D, peer, registered and IPC memory are in `crate::memory`).

use super::*;

api! {
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) {
        let s = state::init_lock()?;
        s.current()?;
        let used: u64 = s.allocs.values().map(|a| a.buf.len() as u64).sum();
        let total_mem = host_memory();
        put(free, total_mem.saturating_sub(used) as usize)?;
        put(total, total_mem as usize)
    }

    fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, size: usize) {
        if dptr.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, alloc(size, MemKind::Device, 0)?)
    }

    fn cuMemAllocManaged(dptr: *mut CUdeviceptr, size: usize, flags: c_uint) {
        if dptr.is_null() || !(flags == 1 || flags == 2) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(dptr, alloc(size, MemKind::Managed, flags)?)
    }

    fn cuMemAllocPitch_v2(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: c_uint) {
        if dptr.is_null() || pitch.is_null() || !matches!(elem, 4 | 8 | 16) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let p = width.div_ceil(512).max(1) * 512;
        let size = p.checked_mul(height).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        put(dptr, alloc(size, MemKind::Device, 0)?)?;
        put(pitch, p)
    }

    fn cuMemFree_v2(dptr: CUdeviceptr) {
        free(dptr, MemKind::Device)
    }

    fn cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) {
        if pp.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(pp, alloc(size, MemKind::Host, 0)? as *mut c_void)
    }

    fn cuMemHostAlloc(pp: *mut *mut c_void, size: usize, flags: c_uint) {
        if pp.is_null() || flags & !0xF != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(pp, alloc(size, MemKind::Host, flags)? as *mut c_void)
    }

    fn cuMemFreeHost(p: *mut c_void) {
        free(p as u64, MemKind::Host)
    }

    fn cuMemHostGetDevicePointer_v2(pdptr: *mut CUdeviceptr, p: *mut c_void, flags: c_uint) {
        let s = state::init_lock()?;
        s.current()?;
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        match s.find(p as u64, 1) {
            Some((_, a)) if matches!(a.kind, MemKind::Host | MemKind::Registered) => put(pdptr, p as u64),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuMemHostGetFlags(pflags: *mut c_uint, p: *mut c_void) {
        let s = state::init_lock()?;
        s.current()?;
        match s.find(p as u64, 1) {
            Some((_, a)) if matches!(a.kind, MemKind::Host | MemKind::Registered) => put(pflags, a.flags | 2),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuMemGetAddressRange_v2(pbase: *mut CUdeviceptr, psize: *mut usize, dptr: CUdeviceptr) {
        let s = state::init_lock()?;
        s.current()?;
        let (base, size) = match s.find(dptr, 1) {
            Some((b, a)) => (b, a.size),
            None => {
                let m = s.device.allocation(dptr, 1).ok_or(CUDA_ERROR_NOT_FOUND)?;
                (m.base, m.size)
            }
        };
        if !pbase.is_null() {
            put(pbase, base)?;
        }
        if !psize.is_null() {
            put(psize, size as usize)?;
        }
        Ok(())
    }

    fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, ptr: CUdeviceptr) {
        let s = state::init_lock()?;
        let name = enum_name(CUPOINTER_ATTRIBUTE, attribute as i64).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let v = pointer_attribute(&s, name.trim_start_matches("CU_POINTER_ATTRIBUTE_"), ptr)?;
        write_attr(data, &v)
    }

    fn cuPointerGetAttributes(n: c_uint, attributes: *mut c_int, data: *mut *mut c_void, ptr: CUdeviceptr) {
        let s = state::init_lock()?;
        if attributes.is_null() || data.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for k in 0..n as usize {
            let a = get(attributes.wrapping_add(k))?;
            let out = get(data.wrapping_add(k))?;
            let name = enum_name(CUPOINTER_ATTRIBUTE, a as i64).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let name = name.trim_start_matches("CU_POINTER_ATTRIBUTE_");
            // attributes of memory ptxvm does not know read as zero here, as CUDA does
            let v = pointer_attribute(&s, name, ptr).unwrap_or_else(|_| match name {
                "CONTEXT" | "DEVICE_POINTER" | "HOST_POINTER" | "RANGE_START_ADDR"
                | "RANGE_SIZE" | "BUFFER_ID" | "MEMPOOL_HANDLE" | "MAPPING_SIZE"
                | "MAPPING_BASE_ADDR" | "MEMORY_BLOCK_ID" => vec![0; 8],
                "DEVICE_ORDINAL" => (-2i32).to_le_bytes().to_vec(),
                _ => vec![0; 4],
            });
            if !out.is_null() {
                write_attr(out, &v)?;
            }
        }
        Ok(())
    }

    fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) {
        memcpy(dst, src, n, false, false, 0)
    }

    fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: Handle) {
        memcpy(dst, src, n, false, false, h(stream))
    }

    fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) {
        memcpy(dst, src as u64, n, true, false, 0)
    }

    fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) {
        memcpy(dst as u64, src, n, false, true, 0)
    }

    fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) {
        memcpy(dst, src, n, true, true, 0)
    }

    fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, stream: Handle) {
        memcpy(dst, src as u64, n, true, false, h(stream))
    }

    fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, stream: Handle) {
        memcpy(dst as u64, src, n, false, true, h(stream))
    }

    fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: Handle) {
        memcpy(dst, src, n, true, true, h(stream))
    }

    fn cuMemsetD8_v2(dst: CUdeviceptr, v: u8, n: usize) {
        memset(dst, v as u32, 1, n, 0)
    }

    fn cuMemsetD16_v2(dst: CUdeviceptr, v: u16, n: usize) {
        memset(dst, v as u32, 2, n, 0)
    }

    fn cuMemsetD32_v2(dst: CUdeviceptr, v: c_uint, n: usize) {
        memset(dst, v, 4, n, 0)
    }

    fn cuMemsetD8Async(dst: CUdeviceptr, v: u8, n: usize, stream: Handle) {
        memset(dst, v as u32, 1, n, h(stream))
    }

    fn cuMemsetD16Async(dst: CUdeviceptr, v: u16, n: usize, stream: Handle) {
        memset(dst, v as u32, 2, n, h(stream))
    }

    fn cuMemsetD32Async(dst: CUdeviceptr, v: c_uint, n: usize, stream: Handle) {
        memset(dst, v, 4, n, h(stream))
    }

    fn cuMemAdvise(dptr: CUdeviceptr, count: usize, advice: c_int, device: CUdevice) {
        let _ = (advice, device);
        managed_hint(dptr, count, 0)
    }

    fn cuMemAdvise_v2(dptr: CUdeviceptr, count: usize, advice: c_int, location: u64) {
        let _ = (advice, location);
        managed_hint(dptr, count, 0)
    }

    fn cuMemPrefetchAsync(dptr: CUdeviceptr, count: usize, device: CUdevice, stream: Handle) {
        let _ = device;
        managed_hint(dptr, count, h(stream))
    }

    fn cuMemPrefetchAsync_v2(dptr: CUdeviceptr, count: usize, location: u64, flags: c_uint, stream: Handle) {
        let _ = (location, flags);
        managed_hint(dptr, count, h(stream))
    }

    fn cuStreamAttachMemAsync(stream: Handle, dptr: CUdeviceptr, length: usize, flags: c_uint) {
        if !matches!(flags, 1 | 2 | 4) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        managed_hint(dptr, length.max(1), h(stream))
    }
}
