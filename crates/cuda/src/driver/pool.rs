//! Stream-ordered allocation and memory pools (cuda.h: "Stream Ordered Memory Allocator"):
//! `cuMemAllocAsync`/`cuMemAllocFromPoolAsync`/`cuMemFreeAsync`, the device's default and
//! current pool, created pools, their attributes, access and trimming.
//!
//! ptxvm's pools keep no memory of their own: an allocation is made when it is asked for (so
//! the pointer is valid for the work queued after it, as CUDA promises, and for earlier work
//! too, which CUDA leaves undefined), and a stream-ordered free returns the memory when the
//! stream reaches it. So a pool's reserved memory is its used memory (`RESERVED_MEM_*` equal
//! `USED_MEM_*`), the release threshold is kept and reported but nothing is held back, and
//! `cuMemPoolTrimTo` has nothing to release. Allocation inside a stream capture (graph memory
//! nodes) is `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`; shareable handles and pointer export
//! are not supported (pools have no handle types).

use super::*;
use std::collections::HashMap;

/// Handles of pools: the default pool of device 0, then created ones.
const DEFAULT_POOL: u64 = 0x9001_0000_0000;

/// `CU_MEM_ALLOCATION_TYPE_PINNED`, `CU_MEM_LOCATION_TYPE_DEVICE`, `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
const ALLOCATION_PINNED: c_int = 1;
const LOCATION_DEVICE: c_int = 1;
const ACCESS_READWRITE: c_int = 3;
const CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: CUresult = 900;

/// One pool.
struct Pool {
    /// `CU_MEMPOOL_ATTR_REUSE_*` (1-3), kept and reported.
    reuse: [c_int; 3],
    release_threshold: u64,
    used: u64,
    used_high: u64,
    reserved_high: u64,
    /// `CUmemPoolProps::maxSize` (0: no limit).
    max_size: u64,
}

impl Pool {
    fn new(max_size: u64) -> Pool {
        Pool {
            reuse: [1, 1, 1],
            release_threshold: 0,
            used: 0,
            used_high: 0,
            reserved_high: 0,
            max_size,
        }
    }
}

struct Pools {
    pools: HashMap<u64, Pool>,
    /// The device's current pool (`cuDeviceSetMemPool`).
    current: u64,
    next: u64,
    /// Live pool allocations: address -> (pool, bytes).
    allocs: HashMap<u64, (u64, u64)>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Pools) -> R) -> R {
    let mut g = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    let p = g.get_or_insert_with(|| Pools {
        pools: HashMap::from([(DEFAULT_POOL, Pool::new(0))]),
        current: DEFAULT_POOL,
        next: DEFAULT_POOL + 1,
        allocs: HashMap::new(),
    });
    f(p)
}

/// Forgets a pool allocation freed by `cuMemFree` (its bytes leave the pool's figures).
pub(super) fn forget(addr: u64) {
    with(|p| {
        if let Some((pool, size)) = p.allocs.remove(&addr) {
            if let Some(pl) = p.pools.get_mut(&pool) {
                pl.used -= size;
            }
        }
    });
}

/// The pool an address was allocated from (`CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`), if any.
pub(super) fn pool_of(addr: u64) -> Option<u64> {
    with(|p| p.allocs.get(&addr).map(|&(pool, _)| pool))
}

/// `CUDA_ERROR_INVALID_VALUE` unless `pool` is a live pool.
fn live_pool(pool: u64) -> Result<(), CUresult> {
    with(|p| p.pools.contains_key(&pool))
        .then_some(())
        .ok_or(CUDA_ERROR_INVALID_VALUE)
}

fn device_zero(dev: CUdevice) -> Result<(), CUresult> {
    drop(state::init_lock()?);
    if dev != 0 {
        return Err(CUDA_ERROR_INVALID_DEVICE);
    }
    Ok(())
}

/// Allocates `size` bytes from `pool` in the order of `stream`.
/// # Safety
/// `dptr` is NULL or valid for a write, as `cuMemAllocAsync` documents.
unsafe fn alloc_async(
    dptr: *mut CUdeviceptr,
    size: usize,
    pool: u64,
    stream: u64,
) -> Result<(), CUresult> {
    if dptr.is_null() || size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    state::init_lock()?.stream_ctx(stream)?;
    if stream::capture_info(stream)?.0 != 0 {
        return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    with(|p| {
        let pl = p.pools.get(&pool).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if pl.max_size != 0 && pl.used.saturating_add(size as u64) > pl.max_size {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        Ok(())
    })?;
    let addr = alloc(size, MemKind::Device, 0)?;
    // SAFETY: `dptr` was checked non-NULL and is valid for a write (this function's contract)
    if let Err(e) = unsafe { put(dptr, addr) } {
        let _ = free_now(addr);
        return Err(e);
    }
    with(|p| {
        p.allocs.insert(addr, (pool, size as u64));
        if let Some(pl) = p.pools.get_mut(&pool) {
            pl.used += size as u64;
            pl.used_high = pl.used_high.max(pl.used);
            pl.reserved_high = pl.reserved_high.max(pl.used);
        }
    });
    Ok(())
}

/// Frees device memory now, without waiting for work in flight (a stream-ordered free runs
/// when its stream reaches it: the work before it on that stream is done).
fn free_now(addr: u64) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    match s.allocs.get(&addr) {
        Some(a) if matches!(a.kind, MemKind::Device | MemKind::Managed) => {
            s.allocs.remove(&addr);
            Ok(())
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

api! {
    fn cuDeviceGetDefaultMemPool(pool: *mut Handle, dev: CUdevice) {
        device_zero(dev)?;
        put(pool, handle(DEFAULT_POOL))
    }

    fn cuDeviceGetMemPool(pool: *mut Handle, dev: CUdevice) {
        device_zero(dev)?;
        put(pool, handle(with(|p| p.current)))
    }

    fn cuDeviceSetMemPool(dev: CUdevice, pool: Handle) {
        device_zero(dev)?;
        with(|p| {
            if !p.pools.contains_key(&h(pool)) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            p.current = h(pool);
            Ok(())
        })
    }

    fn cuMemPoolCreate(pool: *mut Handle, props: *const PoolProps) {
        drop(state::init_lock()?);
        if pool.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let pr = get(props)?;
        if pr.alloc_type != ALLOCATION_PINNED || pr.location_type != LOCATION_DEVICE {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if pr.location_id != 0 {
            return Err(CUDA_ERROR_INVALID_DEVICE);
        }
        // no shareable handle types (POSIX fd, fabric): ptxvm's pools cannot be exported
        if pr.handle_types != 0 {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        let hnd = with(|p| {
            let hnd = p.next;
            p.next += 1;
            p.pools.insert(hnd, Pool::new(pr.max_size as u64));
            hnd
        });
        put(pool, handle(hnd))
    }

    fn cuMemPoolDestroy(pool: Handle) {
        drop(state::init_lock()?);
        with(|p| {
            let hp = h(pool);
            if hp == DEFAULT_POOL || p.pools.remove(&hp).is_none() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // its outstanding allocations stay valid until freed (cuda.h); the device's
            // current pool falls back to the default one
            if p.current == hp {
                p.current = DEFAULT_POOL;
            }
            Ok(())
        })
    }

    fn cuMemPoolSetAttribute(pool: Handle, attr: c_int, value: *mut c_void) {
        drop(state::init_lock()?);
        if value.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let v32 = || get(value.cast::<c_int>());
        let v64 = || get(value.cast::<u64>());
        let new32 = if (1..=3).contains(&attr) { Some(v32()?) } else { None };
        let new64 = if matches!(attr, 4 | 6 | 8) { Some(v64()?) } else { None };
        with(|p| {
            let pl = p.pools.get_mut(&h(pool)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            match (attr, new32, new64) {
                (1..=3, Some(v), _) => pl.reuse[attr as usize - 1] = c_int::from(v != 0),
                (4, _, Some(v)) => pl.release_threshold = v,
                // the high watermarks can only be reset (to the current value), with 0
                (6, _, Some(0)) => pl.reserved_high = pl.used,
                (8, _, Some(0)) => pl.used_high = pl.used,
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
            Ok(())
        })
    }

    fn cuMemPoolGetAttribute(pool: Handle, attr: c_int, value: *mut c_void) {
        drop(state::init_lock()?);
        if value.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        enum V {
            I(c_int),
            U(u64),
        }
        let v = with(|p| {
            let pl = p.pools.get(&h(pool)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            Ok(match attr {
                1..=3 => V::I(pl.reuse[attr as usize - 1]),
                4 => V::U(pl.release_threshold),
                // reserved = used: freed memory goes back at once
                5 | 7 => V::U(pl.used),
                6 => V::U(pl.reserved_high),
                8 => V::U(pl.used_high),
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            })
        })?;
        match v {
            V::I(i) => put(value.cast::<c_int>(), i),
            V::U(u) => put(value.cast::<u64>(), u),
        }
    }

    fn cuMemPoolTrimTo(pool: Handle, min_bytes_to_keep: usize) {
        let _ = min_bytes_to_keep;
        drop(state::init_lock()?);
        // nothing is held beyond the outstanding allocations, which cannot be released
        live_pool(h(pool))
    }

    fn cuMemPoolSetAccess(pool: Handle, map: *const AccessDesc, count: usize) {
        drop(state::init_lock()?);
        live_pool(h(pool))?;
        if count > 0 && map.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        for k in 0..count {
            let d = get(map.wrapping_add(k))?;
            if d.location_type != LOCATION_DEVICE {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if d.location_id != 0 {
                return Err(CUDA_ERROR_INVALID_DEVICE);
            }
            // the pool's own device always has read-write access
            if d.flags != ACCESS_READWRITE {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        Ok(())
    }

    fn cuMemPoolGetAccess(flags: *mut c_int, pool: Handle, location: *const Location) {
        drop(state::init_lock()?);
        live_pool(h(pool))?;
        let l = get(location)?;
        if l.location_type != LOCATION_DEVICE {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if l.id != 0 {
            return Err(CUDA_ERROR_INVALID_DEVICE);
        }
        put(flags, ACCESS_READWRITE)
    }

    fn cuMemAllocAsync(dptr: *mut CUdeviceptr, size: usize, stream: Handle) {
        let pool = with(|p| p.current);
        alloc_async(dptr, size, pool, h(stream))
    }

    fn cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, size: usize, pool: Handle, stream: Handle) {
        alloc_async(dptr, size, h(pool), h(stream))
    }

    fn cuMemFreeAsync(dptr: CUdeviceptr, stream: Handle) {
        let ctx = state::init_lock()?.stream_ctx(h(stream))?;
        if stream::capture_info(h(stream))?.0 != 0 {
            return Err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        }
        {
            let s = state::init_lock()?;
            match s.allocs.get(&dptr) {
                Some(a) if matches!(a.kind, MemKind::Device | MemKind::Managed) => {}
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
        }
        // accounted when queued: the pool's memory is no longer the caller's
        forget(dptr);
        let op: stream::Op = Arc::new(move || free_now(dptr));
        stream::submit(ctx, h(stream), stream::NodeKind::Host, op)
    }
}

/// `CUmemPoolProps` (the fields read; the rest is reserved).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PoolProps {
    alloc_type: c_int,
    handle_types: c_int,
    location_type: c_int,
    location_id: c_int,
    win32_security_attributes: *mut c_void,
    max_size: usize,
    usage: u16,
    reserved: [u8; 54],
}

/// `CUmemLocation`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Location {
    location_type: c_int,
    id: c_int,
}

/// `CUmemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AccessDesc {
    location_type: c_int,
    location_id: c_int,
    flags: c_int,
}
