//! Launches, occupancy and the profiler (cuda.h: "Execution Control", "Occupancy", "Profiler Control").

use super::*;

api! {
    fn cuLaunchKernel(f: Handle, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, stream: Handle, params: *mut *mut c_void, extra: *mut *mut c_void) {
        let a = LaunchArgs { grid: [gx, gy, gz], block: [bx, by, bz], shared, stream: h(stream), coop: false, cluster: None, shared_memory_mode: None };
        launch(h(f), a, params, extra)
    }

    fn cuLaunchCooperativeKernel(f: Handle, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, stream: Handle, params: *mut *mut c_void) {
        let a = LaunchArgs { grid: [gx, gy, gz], block: [bx, by, bz], shared, stream: h(stream), coop: true, cluster: None, shared_memory_mode: None };
        launch(h(f), a, params, std::ptr::null_mut())
    }

    fn cuLaunchKernelEx(config: *const LaunchConfig, f: Handle, params: *mut *mut c_void, extra: *mut *mut c_void) {
        let c = get(config)?;
        let a = LaunchArgs {
            grid: [c.grid_x, c.grid_y, c.grid_z],
            block: [c.block_x, c.block_y, c.block_z],
            shared: c.shared,
            stream: h(c.stream),
            coop: false,
            cluster: None,
            shared_memory_mode: None,
        };
        if c.num_attrs > 0 && c.attrs.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let mut a = a;
        let attrs = c.attrs.cast::<crate::coop::LaunchAttribute>();
        for k in 0..c.num_attrs as usize {
            let at = get(attrs.wrapping_add(k))?;
            if at.id == crate::coop::ATTRIBUTE_COOPERATIVE {
                a.coop = at.value[0] != 0;
            }
            // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: value.clusterDim {x, y, z}
            if at.id == 4 {
                let [x, y, z, ..] = at.value;
                if x == 0 || y == 0 || z == 0 {
                    return Err(CUDA_ERROR_INVALID_CLUSTER_SIZE);
                }
                a.cluster = Some([x, y, z]);
            }
            // CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE: value.sharedMemoryMode
            if at.id == 18 {
                let mode = at.value[0] as i32;
                if !(0..=4).contains(&mode) {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                a.shared_memory_mode = Some(mode);
            }
        }
        launch(h(f), a, params, extra)
    }

    fn cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut c_int, func: Handle, block: c_int, dynamic: usize) {
        let f = state::init_lock()?.func(h(func))?;
        put(n, occupancy(&f, block, dynamic))
    }

    fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut c_int, func: Handle, block: c_int, dynamic: usize, flags: c_uint) {
        let _ = flags;
        let f = state::init_lock()?.func(h(func))?;
        put(n, occupancy(&f, block, dynamic))
    }

    fn cuOccupancyMaxPotentialBlockSize(min_grid: *mut c_int, block: *mut c_int, func: Handle, to_smem: Option<unsafe extern "C" fn(c_int) -> usize>, dynamic: usize, limit: c_int) {
        potential_block_size(min_grid, block, h(func), to_smem, dynamic, limit)
    }

    fn cuOccupancyMaxPotentialBlockSizeWithFlags(min_grid: *mut c_int, block: *mut c_int, func: Handle, to_smem: Option<unsafe extern "C" fn(c_int) -> usize>, dynamic: usize, limit: c_int, flags: c_uint) {
        let _ = flags;
        potential_block_size(min_grid, block, h(func), to_smem, dynamic, limit)
    }

    fn cuOccupancyAvailableDynamicSMemPerBlock(size: *mut usize, func: Handle, blocks: c_int, block: c_int) {
        let _ = (blocks, block);
        let f = state::init_lock()?.func(h(func))?;
        put(size, device_attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN") as usize - f.resources.shared_static as usize)
    }

    fn cuProfilerInitialize(config: *const c_char, output: *const c_char, mode: c_int) {
        let _ = (config, output, mode);
        Ok(())
    }

    fn cuProfilerStart() {
        Ok(())
    }

    fn cuProfilerStop() {
        Ok(())
    }
}
