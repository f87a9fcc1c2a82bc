//! Initialization, version, errors, `cuGetProcAddress` and device management (cuda.h: "Error Handling", "Initialization", "Version Management", "Device Management").

use super::*;

api! {
    fn cuInit(flags: c_uint) {
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut s = state::lock();
        let pid = std::process::id();
        if s.initialized && s.init_pid != pid {
            // forked after cuInit: the parent's contexts and memory are not this process's
            return Err(CUDA_ERROR_NOT_INITIALIZED);
        }
        s.initialized = true;
        s.init_pid = pid;
        Ok(())
    }

    fn cuDriverGetVersion(version: *mut c_int) {
        put(version, DRIVER_VERSION)
    }

    fn cuGetErrorName(error: CUresult, pstr: *mut *const c_char) {
        static NAMES: std::sync::LazyLock<Vec<(CUresult, std::ffi::CString)>> =
            std::sync::LazyLock::new(|| {
                crate::exports::CUDAERROR
                    .iter()
                    .filter_map(|(n, v)| Some((*v as CUresult, std::ffi::CString::new(*n).ok()?)))
                    .collect()
            });
        match NAMES.iter().find(|(c, _)| *c == error) {
            Some((_, n)) => put(pstr, n.as_ptr()),
            None => {
                put(pstr, std::ptr::null())?;
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    }

    fn cuGetErrorString(error: CUresult, pstr: *mut *const c_char) {
        static STRINGS: std::sync::LazyLock<Vec<(CUresult, std::ffi::CString)>> =
            std::sync::LazyLock::new(|| {
                crate::exports::CUDAERROR
                    .iter()
                    .filter_map(|(_, v)| {
                        let s = error_string(*v as CUresult)?;
                        Some((*v as CUresult, std::ffi::CString::new(s).ok()?))
                    })
                    .collect()
            });
        match STRINGS.iter().find(|(c, _)| *c == error) {
            Some((_, n)) => put(pstr, n.as_ptr()),
            None => {
                put(pstr, std::ptr::null())?;
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    }

    fn cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
        proc_address(symbol, pfn, version, flags, std::ptr::null_mut())
    }

    fn cuGetProcAddress_v2(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64, status: *mut c_int) {
        proc_address(symbol, pfn, version, flags, status)
    }

    fn cuDeviceGetCount(count: *mut c_int) {
        init()?;
        put(count, 1)
    }

    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) {
        init()?;
        if device.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        check_device(ordinal)?;
        put(device, 0)
    }

    fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) {
        init()?;
        check_device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let (a, b) = state::settings().cc;
        let text = format!("ptxvm CPU device (sm_{a}{b})");
        let n = text.len().min(len as usize - 1);
        for (k, &c) in text.as_bytes()[..n].iter().enumerate() {
            put(name.wrapping_add(k), c as c_char)?;
        }
        put(name.wrapping_add(n), 0)
    }

    fn cuDeviceGetUuid(uuid: *mut [u8; 16], dev: CUdevice) {
        init()?;
        check_device(dev)?;
        put(uuid, DEVICE_UUID)
    }

    fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], dev: CUdevice) {
        init()?;
        check_device(dev)?;
        put(uuid, DEVICE_UUID)
    }

    fn cuDeviceGetPCIBusId(bus: *mut c_char, len: c_int, dev: CUdevice) {
        init()?;
        check_device(dev)?;
        let text = b"0000:00:00.0\0";
        if bus.is_null() || (len as usize) < text.len() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for (k, &c) in text.iter().enumerate() {
            put(bus.wrapping_add(k), c as c_char)?;
        }
        Ok(())
    }

    fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) {
        init()?;
        check_device(dev)?;
        put(bytes, host_memory() as usize)
    }

    fn cuDeviceTotalMem(bytes: *mut c_uint, dev: CUdevice) {
        init()?;
        check_device(dev)?;
        put(bytes, host_memory().min(u32::MAX as u64) as c_uint)
    }

    fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) {
        init()?;
        check_device(dev)?;
        let name = enum_name(CUDEVICE_ATTRIBUTE, attrib as i64)
            .filter(|n| *n != "CU_DEVICE_ATTRIBUTE_MAX")
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        put(pi, device_attribute(name.trim_start_matches("CU_DEVICE_ATTRIBUTE_")))
    }

    fn cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, dev: CUdevice) {
        init()?;
        check_device(dev)?;
        let (a, b) = state::settings().cc;
        put(major, a)?;
        put(minor, b)
    }

    fn cuDeviceCanAccessPeer(can: *mut c_int, dev: CUdevice, peer: CUdevice) {
        init()?;
        check_device(dev)?;
        check_device(peer)?;
        put(can, 0)
    }
}
