//! Memory exports beyond 1D copies: 2D and 3D copies, peer copies (one device: a plain copy
//! between two contexts), registered host memory and interprocess memory and event handles.

use crate::abi::*;
use crate::api;
use crate::driver::{CUdeviceptr, Handle};
use crate::shm;
use crate::state::{self, *};
use std::collections::HashMap;
use std::ffi::{c_uint, c_void};
use std::sync::{LazyLock, Mutex};

const CUDA_ERROR_MAP_FAILED: CUresult = 205;
const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;

/// The buffer behind a `cuMemAlloc*`/`cuMemHostAlloc` allocation of `len` bytes: device memory
/// comes from the shared arena (so that `cuIpcGetMemHandle` can export it), the rest from the
/// global allocator.
pub(crate) fn new_buffer(
    device: &ptxvm::Device,
    len: usize,
    kind: MemKind,
    label: &str,
) -> Result<ptxvm::DeviceBuffer<u8>, CUresult> {
    if kind == MemKind::Device {
        if let Some(words) = shm::alloc(len) {
            return device
                .adopt_bytes(len, words, false, label)
                .map_err(|_| CUDA_ERROR_OUT_OF_MEMORY);
        }
    }
    device
        .alloc_bytes(len, label)
        .map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)
}

fn why(name: &str, reason: &str) {
    if state::settings().trace {
        eprintln!("[ptxvm] {name}: {reason}");
    }
}

// ---- cuGetProcAddress flags ------------------------------------------------------------------

/// The `cuGetProcAddress` table entries of `name` for `flags`: with
/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` (2) the `_ptds`/`_ptsz` variants where the
/// name has them, else (`DEFAULT` 0, `LEGACY_STREAM` 1) the legacy-stream ones.
pub(crate) fn proc_entries(
    name: &str,
    flags: u64,
) -> Vec<&'static (&'static str, u32, bool, &'static str)> {
    let table = crate::exports::PROC_TABLE;
    let per_thread = flags & 2 != 0;
    let pick = |pt: bool| -> Vec<_> {
        table
            .iter()
            .filter(|(n, _, p, _)| *n == name && *p == pt)
            .collect()
    };
    let found = pick(per_thread);
    if per_thread && found.is_empty() {
        return pick(false);
    }
    found
}

// ---- 2D and 3D copies ----------------------------------------------------------------------

/// `CUDA_MEMCPY2D`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy2D {
    src_x: usize,
    src_y: usize,
    src_type: u32,
    src_host: u64,
    src_device: u64,
    src_array: u64,
    src_pitch: usize,
    dst_x: usize,
    dst_y: usize,
    dst_type: u32,
    dst_host: u64,
    dst_device: u64,
    dst_array: u64,
    dst_pitch: usize,
    width: usize,
    height: usize,
}

/// `CUDA_MEMCPY3D` (`reserved` is `CUDA_MEMCPY3D_PEER`'s context).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3D {
    src_x: usize,
    src_y: usize,
    src_z: usize,
    src_lod: usize,
    src_type: u32,
    src_host: u64,
    src_device: u64,
    src_array: u64,
    src_ctx: u64,
    src_pitch: usize,
    src_height: usize,
    dst_x: usize,
    dst_y: usize,
    dst_z: usize,
    dst_lod: usize,
    dst_type: u32,
    dst_host: u64,
    dst_device: u64,
    dst_array: u64,
    dst_ctx: u64,
    dst_pitch: usize,
    dst_height: usize,
    width: usize,
    height: usize,
    depth: usize,
}

/// One side of a copy.
struct Side {
    ty: u32,
    host: u64,
    device: u64,
    x: usize,
    y: usize,
    z: usize,
    pitch: usize,
    height: usize,
}

/// The first byte of `side`'s region of `width` x `rows` x `depth` and the bytes from it to the
/// end of the region's last row, its range checked: device memory against the allocation map,
/// pitches against the region (`CUDA_ERROR_INVALID_VALUE`).
fn region(
    s: &State,
    name: &str,
    side: &Side,
    width: usize,
    rows: usize,
    depth: usize,
) -> Result<(u64, u64), CUresult> {
    let bad = || CUDA_ERROR_INVALID_VALUE;
    // CU_MEMORYTYPE_HOST 1, DEVICE 2, ARRAY 3, UNIFIED 4
    let (addr, device) = match side.ty {
        1 => (side.host, false),
        2 => (side.device, true),
        4 => (side.device, s.find(side.device, 1).is_some()),
        3 => {
            why(
                name,
                "CUDA arrays (CU_MEMORYTYPE_ARRAY) are not supported by ptxvm",
            );
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        _ => return Err(bad()),
    };
    if addr == 0 {
        return Err(bad());
    }
    if side.pitch > i32::MAX as usize {
        return Err(bad());
    }
    let row_end = side.x.checked_add(width).ok_or_else(bad)?;
    if (rows > 1 || depth > 1) && row_end > side.pitch {
        why(
            name,
            "a pitch is smaller than WidthInBytes plus its XInBytes",
        );
        return Err(bad());
    }
    if depth > 1 && side.y.checked_add(rows).ok_or_else(bad)? > side.height {
        why(name, "a height is smaller than Height plus its Y");
        return Err(bad());
    }
    let slice = side.pitch.checked_mul(side.height).ok_or_else(bad)?;
    let start = side
        .z
        .checked_mul(slice)
        .and_then(|v| v.checked_add(side.y.checked_mul(side.pitch)?))
        .and_then(|v| v.checked_add(side.x))
        .and_then(|v| (addr as usize).checked_add(v))
        .ok_or_else(bad)? as u64;
    // from the first byte to the end of the last row
    let span = (depth - 1)
        .checked_mul(slice)
        .and_then(|v| v.checked_add((rows - 1).checked_mul(side.pitch)?))
        .and_then(|v| v.checked_add(width))
        .ok_or_else(bad)?;
    if device {
        s.check_range(start, span as u64)?;
    } else {
        start.checked_add(span as u64).ok_or_else(bad)?;
    }
    Ok((start, span as u64))
}

/// A 3D copy (2D: depth 1), in the stream's order (at once: work is synchronous).
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn copy3d(
    name: &str,
    src: &Side,
    dst: &Side,
    extent: [usize; 3],
    stream: u64,
) -> Result<(), CUresult> {
    let [width, rows, depth] = extent;
    let s = state::init_lock()?;
    s.stream_ctx(stream)?;
    if width == 0 || rows == 0 || depth == 0 {
        return Ok(());
    }
    let (from, from_span) = region(&s, name, src, width, rows, depth)?;
    let (to, to_span) = region(&s, name, dst, width, rows, depth)?;
    // (held through the copy: another thread may free either end meanwhile)
    let ends = Ends::claim(&s, &[(from, from_span), (to, to_span)]);
    drop(s);
    let _held = ends.hold(name)?;
    for z in 0..depth {
        for y in 0..rows {
            let so = (z * src.pitch * src.height + y * src.pitch) as u64;
            let d_o = (z * dst.pitch * dst.height + y * dst.pitch) as u64;
            copy(to + d_o, from + so, width)?;
        }
    }
    Ok(())
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn copy2d(name: &str, p: *const Memcpy2D, stream: u64) -> Result<(), CUresult> {
    let c = get(p)?;
    let side = |ty, host, device, x, y, pitch| Side {
        ty,
        host,
        device,
        x,
        y,
        z: 0,
        pitch,
        height: 0,
    };
    copy3d(
        name,
        &side(
            c.src_type,
            c.src_host,
            c.src_device,
            c.src_x,
            c.src_y,
            c.src_pitch,
        ),
        &side(
            c.dst_type,
            c.dst_host,
            c.dst_device,
            c.dst_x,
            c.dst_y,
            c.dst_pitch,
        ),
        [c.width, c.height, 1],
        stream,
    )
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn copy3d_desc(
    name: &str,
    p: *const Memcpy3D,
    stream: u64,
    peer: bool,
) -> Result<(), CUresult> {
    let c = get(p)?;
    if c.src_lod != 0 || c.dst_lod != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if peer {
        let s = state::init_lock()?;
        s.ctx(c.src_ctx)?;
        s.ctx(c.dst_ctx)?;
    }
    let src = Side {
        ty: c.src_type,
        host: c.src_host,
        device: c.src_device,
        x: c.src_x,
        y: c.src_y,
        z: c.src_z,
        pitch: c.src_pitch,
        height: c.src_height,
    };
    let dst = Side {
        ty: c.dst_type,
        host: c.dst_host,
        device: c.dst_device,
        x: c.dst_x,
        y: c.dst_y,
        z: c.dst_z,
        pitch: c.dst_pitch,
        height: c.dst_height,
    };
    copy3d(name, &src, &dst, [c.width, c.height, c.depth], stream)
}

/// `cuMemcpyPeer`: both contexts are on the one device, so a device-to-device copy.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn copy_peer(
    dst: u64,
    dst_ctx: u64,
    src: u64,
    src_ctx: u64,
    n: usize,
    stream: u64,
) -> Result<(), CUresult> {
    let s = state::init_lock()?;
    s.ctx(dst_ctx)?;
    s.ctx(src_ctx)?;
    s.stream_ctx(stream)?;
    if n == 0 {
        return Ok(());
    }
    s.check_range(dst, n as u64)?;
    s.check_range(src, n as u64)?;
    let ends = Ends::claim(&s, &[(dst, n as u64), (src, n as u64)]);
    drop(s);
    let _held = ends.hold("cuMemcpyPeer")?;
    copy(dst, src, n)
}

// ---- registered host memory ------------------------------------------------------------------

fn host_register(p: *mut c_void, size: usize, flags: c_uint) -> Result<(), CUresult> {
    const READ_ONLY: c_uint = 8;
    let mut s = state::init_lock()?;
    let ctx = s.current()?;
    let p = p as u64;
    if p == 0 || size == 0 || flags & !0xF != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let end = p.checked_add(size as u64).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    // already registered, or one of the driver's own (pinned) allocations
    let below = s.allocs.range(..end).next_back();
    if below.is_some_and(|(&b, a)| b + (a.buf.len() as u64).max(a.size) > p) {
        return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    }
    let read_only = flags & READ_ONLY != 0;
    match shm::check_host_range(p, size as u64, read_only) {
        Ok(()) => {}
        Err(true) => {
            why(
                "cuMemHostRegister",
                "the memory is mapped read-only: register it with CU_MEMHOSTREGISTER_READ_ONLY",
            );
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Err(false) => {
            why("cuMemHostRegister", "the range is not mapped host memory");
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
    }
    // words start at the 4-byte boundary at or below `p` (within the same page)
    let base = p & !3;
    let len = (end - base) as usize;
    // SAFETY: `[base, base + 4 * words)` is mapped readable and writable (or only read by
    // kernels: `read_only` makes their stores fault) as checked above, and the caller keeps it
    // so until `cuMemHostUnregister`, by the driver API's contract; rounding to whole words
    // stays within the pages of the range.
    let words = unsafe { shm::adopt(base, len.div_ceil(4)) }.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let buf = s
        .device
        .adopt_bytes(len, words, read_only, "cuMemHostRegister memory")
        .map_err(|_| CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)?;
    s.allocs.insert(
        p,
        Alloc {
            buf,
            size: size as u64,
            kind: MemKind::Registered,
            ctx,
            flags,
        },
    );
    Ok(())
}

fn host_unregister(p: *mut c_void) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    s.current()?;
    match s.allocs.get(&(p as u64)) {
        Some(a) if a.kind == MemKind::Registered => {
            s.allocs.remove(&(p as u64));
            Ok(())
        }
        _ if p.is_null() => Err(CUDA_ERROR_INVALID_VALUE),
        _ => Err(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    }
}

// ---- interprocess memory and events ---------------------------------------------------------

/// `CUipcMemHandle` / `CUipcEventHandle` (64 opaque bytes, passed by value).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IpcHandle {
    reserved: [u8; 64],
}

impl std::fmt::Debug for IpcHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match shm::Exported::from_bytes(&self.reserved) {
            Some(e) => write!(f, "{e:?}"),
            None => write!(f, "IpcHandle({:02x?}…)", &self.reserved[..8]),
        }
    }
}

/// Imported blocks of this process: handle → (address, open count).
static IMPORTED: LazyLock<Mutex<HashMap<shm::Exported, (u64, u32)>>> =
    LazyLock::new(Default::default);

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn ipc_get_mem(out: *mut IpcHandle, dptr: u64) -> Result<(), CUresult> {
    let s = state::init_lock()?;
    s.current()?;
    if out.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let a = match s.allocs.get(&dptr) {
        Some(a) if a.kind == MemKind::Device => a,
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    let e = shm::export(a.buf.addr(), a.buf.len() as u64).ok_or_else(|| {
        why(
            "cuIpcGetMemHandle",
            "the allocation is not in shared memory (no memfd arena in this process)",
        );
        CUDA_ERROR_NOT_SUPPORTED
    })?;
    put(
        out,
        IpcHandle {
            reserved: e.to_bytes(),
        },
    )
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn ipc_open_mem(
    pdptr: *mut CUdeviceptr,
    handle: IpcHandle,
    flags: c_uint,
) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    let ctx = s.current()?;
    if pdptr.is_null() || flags > 1 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let e = shm::Exported::from_bytes(&handle.reserved).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let mut imported = IMPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((addr, n)) = imported.get_mut(&e) {
        if s.allocs
            .get(addr)
            .is_some_and(|a| a.kind == MemKind::Imported)
        {
            *n += 1;
            return put(pdptr, *addr);
        }
    }
    let (words, len) = match shm::import(e) {
        Ok(w) => w,
        Err(shm::ImportError::Refused) => {
            why(
                "cuIpcOpenMemHandle",
                "the exporter has no such export (the handle was altered, or its memory freed)",
            );
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Err(shm::ImportError::SameProcess) => {
            why(
                "cuIpcOpenMemHandle",
                "the handle was exported by this process (CUDA refuses that too)",
            );
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        Err(shm::ImportError::Map(m)) => {
            why("cuIpcOpenMemHandle", &m);
            return Err(CUDA_ERROR_MAP_FAILED);
        }
    };
    let buf = s
        .device
        .adopt_bytes(len as usize, words, false, "cuIpcOpenMemHandle memory")
        .map_err(|_| CUDA_ERROR_MAP_FAILED)?;
    let addr = buf.addr();
    s.allocs.insert(
        addr,
        Alloc {
            buf,
            size: len,
            kind: MemKind::Imported,
            ctx,
            flags: 0,
        },
    );
    imported.insert(e, (addr, 1));
    put(pdptr, addr)
}

fn ipc_close_mem(dptr: u64) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    s.current()?;
    let mut imported = IMPORTED.lock().unwrap_or_else(|e| e.into_inner());
    let key = imported
        .iter()
        .find(|(_, (a, _))| *a == dptr)
        .map(|(k, _)| *k)
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let last = match imported.get_mut(&key) {
        Some((_, n)) => {
            *n -= 1;
            *n == 0
        }
        None => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    if last {
        imported.remove(&key);
        if s.allocs
            .get(&dptr)
            .is_some_and(|a| a.kind == MemKind::Imported)
        {
            s.allocs.remove(&dptr);
        }
    }
    Ok(())
}

const EVENT_MAGIC: &[u8; 8] = b"ptxvmEVT";
/// `CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS`.
const IPC_EVENT_FLAGS: u32 = 0x2 | 0x4;

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn ipc_get_event(out: *mut IpcHandle, event: Handle) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    if out.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let e = s.event_mut(event as u64)?;
    if e.flags & IPC_EVENT_FLAGS != IPC_EVENT_FLAGS {
        why(
            "cuIpcGetEventHandle",
            "the event was not created with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING",
        );
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut b = [0u8; 64];
    b[..8].copy_from_slice(EVENT_MAGIC);
    b[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    b[16..24].copy_from_slice(&(event as u64).to_le_bytes());
    put(out, IpcHandle { reserved: b })
}

/// An imported event: all work is synchronous, so whatever the exporter recorded has
/// completed by the time another process can wait on it.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn ipc_open_event(out: *mut Handle, handle: IpcHandle) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    let ctx = s.current()?;
    if out.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let b = &handle.reserved;
    if &b[..8] != EVENT_MAGIC {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let pid = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    if pid == std::process::id() {
        why(
            "cuIpcOpenEventHandle",
            "the handle was exported by this process (CUDA refuses that too)",
        );
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    let e = s.insert(Obj::Event(Event {
        ctx,
        flags: IPC_EVENT_FLAGS,
    }));
    put(out, e as Handle)
}

api! {
    fn cuMemcpy2D_v2(copy: *const Memcpy2D) {
        copy2d("cuMemcpy2D", copy, 0)
    }

    fn cuMemcpy2DUnaligned_v2(copy: *const Memcpy2D) {
        copy2d("cuMemcpy2DUnaligned", copy, 0)
    }

    fn cuMemcpy2DAsync_v2(copy: *const Memcpy2D, stream: Handle) {
        copy2d("cuMemcpy2DAsync", copy, stream as u64)
    }

    fn cuMemcpy3D_v2(copy: *const Memcpy3D) {
        copy3d_desc("cuMemcpy3D", copy, 0, false)
    }

    fn cuMemcpy3DAsync_v2(copy: *const Memcpy3D, stream: Handle) {
        copy3d_desc("cuMemcpy3DAsync", copy, stream as u64, false)
    }

    fn cuMemcpy3DPeer(copy: *const Memcpy3D) {
        copy3d_desc("cuMemcpy3DPeer", copy, 0, true)
    }

    fn cuMemcpy3DPeerAsync(copy: *const Memcpy3D, stream: Handle) {
        copy3d_desc("cuMemcpy3DPeerAsync", copy, stream as u64, true)
    }

    fn cuMemcpyPeer(dst: CUdeviceptr, dst_ctx: Handle, src: CUdeviceptr, src_ctx: Handle, n: usize) {
        copy_peer(dst, dst_ctx as u64, src, src_ctx as u64, n, 0)
    }

    fn cuMemcpyPeerAsync(dst: CUdeviceptr, dst_ctx: Handle, src: CUdeviceptr, src_ctx: Handle, n: usize, stream: Handle) {
        copy_peer(dst, dst_ctx as u64, src, src_ctx as u64, n, stream as u64)
    }

    fn cuMemHostRegister(p: *mut c_void, size: usize, flags: c_uint) {
        host_register(p, size, flags)
    }

    fn cuMemHostRegister_v2(p: *mut c_void, size: usize, flags: c_uint) {
        host_register(p, size, flags)
    }

    fn cuMemHostUnregister(p: *mut c_void) {
        host_unregister(p)
    }

    fn cuIpcGetMemHandle(handle: *mut IpcHandle, dptr: CUdeviceptr) {
        ipc_get_mem(handle, dptr)
    }

    fn cuIpcOpenMemHandle(pdptr: *mut CUdeviceptr, handle: IpcHandle, flags: c_uint) {
        ipc_open_mem(pdptr, handle, flags)
    }

    fn cuIpcOpenMemHandle_v2(pdptr: *mut CUdeviceptr, handle: IpcHandle, flags: c_uint) {
        ipc_open_mem(pdptr, handle, flags)
    }

    fn cuIpcCloseMemHandle(dptr: CUdeviceptr) {
        ipc_close_mem(dptr)
    }

    fn cuIpcGetEventHandle(handle: *mut IpcHandle, event: Handle) {
        ipc_get_event(handle, event)
    }

    fn cuIpcOpenEventHandle(event: *mut Handle, handle: IpcHandle) {
        ipc_open_event(event, handle)
    }
}
