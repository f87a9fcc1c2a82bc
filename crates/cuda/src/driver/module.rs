//! Modules, libraries, kernels and functions, and the JIT linker (cuda.h: "Module Management", "Library Management", "Execution Control" attributes).

use super::*;

api! {
    fn cuModuleLoad(module: *mut Handle, fname: *const c_char) {
        if module.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        state::init_lock()?.current()?;
        let (data, path) = read_file(fname)?;
        put(module, handle(load_image(data.as_ptr().cast(), &path, Some(data.len()), Owner::Current)?))
    }

    fn cuModuleLoadData(module: *mut Handle, image: *const c_void) {
        if module.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(module, handle(load_image(image, "<memory>", None, Owner::Current)?))
    }

    fn cuModuleLoadDataEx(module: *mut Handle, image: *const c_void, n: c_uint, options: *mut c_int, values: *mut *mut c_void) {
        if module.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(module, handle(load_with_options(image, "<memory>", None, Owner::Current, n, options, values)?))
    }

    fn cuModuleLoadFatBinary(module: *mut Handle, fatbin: *const c_void) {
        if module.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(module, handle(load_image(fatbin, "<fatbin>", None, Owner::Current)?))
    }

    fn cuModuleUnload(module: Handle) {
        module_unload(h(module))
    }

    fn cuModuleGetFunction(pf: *mut Handle, module: Handle, name: *const c_char) {
        if pf.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(pf, handle(get_function(h(module), name)?))
    }

    fn cuModuleGetGlobal_v2(dptr: *mut CUdeviceptr, bytes: *mut usize, module: Handle, name: *const c_char) {
        get_global(dptr, bytes, h(module), name)
    }

    fn cuModuleGetLoadingMode(mode: *mut c_int) {
        // CU_MODULE_EAGER_LOADING = 1
        put(mode, 1)
    }

    fn cuLibraryLoadData(library: *mut Handle, code: *const c_void, jit_options: *mut c_int, jit_values: *mut *mut c_void, n_jit: c_uint, lib_options: *mut c_int, lib_values: *mut *mut c_void, n_lib: c_uint) {
        let _ = (lib_options, lib_values, n_lib);
        if library.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(library, handle(load_with_options(code, "<library>", None, Owner::Nobody, n_jit, jit_options, jit_values)?))
    }

    fn cuLibraryLoadFromFile(library: *mut Handle, fname: *const c_char, jit_options: *mut c_int, jit_values: *mut *mut c_void, n_jit: c_uint, lib_options: *mut c_int, lib_values: *mut *mut c_void, n_lib: c_uint) {
        let _ = (lib_options, lib_values, n_lib);
        if library.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        init()?;
        let (data, path) = read_file(fname)?;
        put(library, handle(load_with_options(data.as_ptr().cast(), &path, Some(data.len()), Owner::Nobody, n_jit, jit_options, jit_values)?))
    }

    fn cuLibraryUnload(library: Handle) {
        module_unload(h(library))
    }

    fn cuLibraryGetModule(pmod: *mut Handle, library: Handle) {
        state::init_lock()?.module(h(library))?;
        put(pmod, library)
    }

    fn cuLibraryGetKernel(pk: *mut Handle, library: Handle, name: *const c_char) {
        if pk.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        put(pk, handle(get_function(h(library), name)?))
    }

    fn cuLibraryGetKernelCount(count: *mut c_uint, library: Handle) {
        let m = state::init_lock()?.module(h(library))?;
        put(count, m.module.kernel_names().len() as c_uint)
    }

    fn cuLibraryGetGlobal(dptr: *mut CUdeviceptr, bytes: *mut usize, library: Handle, name: *const c_char) {
        get_global(dptr, bytes, h(library), name)
    }

    fn cuLibraryGetManaged(dptr: *mut CUdeviceptr, bytes: *mut usize, library: Handle, name: *const c_char) {
        get_managed(dptr, bytes, h(library), name)
    }

    fn cuKernelGetFunction(pf: *mut Handle, kernel: Handle) {
        state::init_lock()?.func(h(kernel))?;
        put(pf, kernel)
    }

    fn cuKernelGetName(name: *mut *const c_char, kernel: Handle) {
        let f = state::init_lock()?.func(h(kernel))?;
        put(name, f.cname.as_ptr())
    }

    fn cuFuncGetName(name: *mut *const c_char, func: Handle) {
        let f = state::init_lock()?.func(h(func))?;
        put(name, f.cname.as_ptr())
    }

    fn cuFuncGetModule(pmod: *mut Handle, func: Handle) {
        let f = state::init_lock()?.func(h(func))?;
        put(pmod, handle(f.module_handle))
    }

    fn cuFuncGetParamInfo(func: Handle, index: usize, offset: *mut usize, size: *mut usize) {
        param_info(h(func), index, offset, size)
    }

    fn cuKernelGetParamInfo(kernel: Handle, index: usize, offset: *mut usize, size: *mut usize) {
        param_info(h(kernel), index, offset, size)
    }

    fn cuFuncGetAttribute(pi: *mut c_int, attrib: c_int, func: Handle) {
        let f = state::init_lock()?.func(h(func))?;
        put(pi, func_attribute(&f, attrib as i64)?)
    }

    fn cuKernelGetAttribute(pi: *mut c_int, attrib: c_int, kernel: Handle, dev: CUdevice) {
        check_device(dev)?;
        let f = state::init_lock()?.func(h(kernel))?;
        put(pi, func_attribute(&f, attrib as i64)?)
    }

    fn cuFuncSetAttribute(func: Handle, attrib: c_int, value: c_int) {
        set_func_attribute(h(func), attrib as i64, value)
    }

    fn cuKernelSetAttribute(attrib: c_int, value: c_int, kernel: Handle, dev: CUdevice) {
        check_device(dev)?;
        set_func_attribute(h(kernel), attrib as i64, value)
    }

    fn cuFuncSetCacheConfig(func: Handle, config: c_int) {
        let _ = config;
        state::init_lock()?.func(h(func)).map(|_| ())
    }

    fn cuKernelSetCacheConfig(kernel: Handle, config: c_int, dev: CUdevice) {
        let _ = config;
        check_device(dev)?;
        state::init_lock()?.func(h(kernel)).map(|_| ())
    }

    fn cuFuncSetSharedMemConfig(func: Handle, config: c_int) {
        let _ = config;
        state::init_lock()?.func(h(func)).map(|_| ())
    }

    fn cuLinkCreate_v2(n: c_uint, options: *mut c_int, values: *mut *mut c_void, out: *mut Handle) {
        let mut s = state::init_lock()?;
        s.current()?;
        if out.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut link = Link::default();
        link_options(n, options, values, &mut link)?;
        let l = s.insert(Obj::Link(link));
        put(out, handle(l))
    }

    fn cuLinkAddData_v2(link: Handle, kind: c_uint, data: *mut c_void, size: usize, name: *const c_char, n: c_uint, options: *mut c_int, values: *mut *mut c_void) {
        let _ = (n, options, values);
        if data.is_null() || size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let name = if name.is_null() { "input".to_string() } else { string(name)? };
        link_add(h(link), kind, bytes(data, size)?, &name)
    }

    fn cuLinkAddFile_v2(link: Handle, kind: c_uint, path: *const c_char, n: c_uint, options: *mut c_int, values: *mut *mut c_void) {
        let _ = (n, options, values);
        let (data, path) = read_file(path)?;
        link_add(h(link), kind, data, &path)
    }

    fn cuLinkComplete(link: Handle, out: *mut *mut c_void, size: *mut usize) {
        let mut s = state::init_lock()?;
        let l = s.link_mut(h(link))?;
        if l.inputs.is_empty() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        match link::link(&l.inputs, l.device_runtime) {
            Ok(linked) => {
                if !linked.info.is_empty() {
                    write_log(l.info_log, &linked.info);
                    eprint!("ptxvm: {}", linked.info);
                }
                l.output = Some(image::container(&[linked.ptx]));
            }
            Err(log) => {
                write_log(l.error_log, &log);
                eprint!("ptxvm: {log}");
                return Err(CUDA_ERROR_INVALID_IMAGE);
            }
        }
        let b = l.output.as_ref().ok_or(CUDA_ERROR_UNKNOWN)?;
        put(out, b.as_ptr() as *mut c_void)?;
        put(size, b.len())
    }

    fn cuLinkDestroy(link: Handle) {
        let mut s = state::init_lock()?;
        s.link_mut(h(link))?;
        s.objects.remove(&h(link));
        Ok(())
    }
}
