//! The implemented exports of the driver API: one submodule per API area as cuda.h groups them
//! (`device`, `context`, `mem`, `pool` (stream-ordered allocation), `stream_event`, `module`,
//! `launch`, `legacy` (the deprecated launch and context calls); `export_table` holds the
//! private tables cudart asks for), and here the helpers they share. 2D/3D, peer, registered
//! and IPC memory are in `crate::memory`, graphs in `crate::graph`, tensor maps in
//! `crate::tensormap`.

use crate::abi::*;
use crate::api;
use crate::exports::{CUDEVICE_ATTRIBUTE, CUFUNCTION_ATTRIBUTE, CUPOINTER_ATTRIBUTE};
use crate::image::{self, ElfImage, Kind};
use crate::link;
use crate::state::{self, *};
use crate::stream;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};

// The exports, by API area as cuda.h groups them; the helpers they share are below.
mod context;
mod device;
pub(crate) mod export_table;
mod launch;
mod legacy;
mod mem;
mod module;
mod pool;
mod stream_event;
pub use self::{
    context::*, device::*, export_table::*, launch::*, legacy::*, mem::*, module::*, pool::*,
    stream_event::*,
};

pub(crate) type Handle = *mut c_void;
pub(crate) type CUdevice = c_int;
pub(crate) type CUdeviceptr = u64;

/// The driver version reported: that of the headers the exports come from (at least 13.0:
/// cudart 13 refuses less; NVRTC and NVVM of that version warn about an older driver).
const DRIVER_VERSION: c_int = crate::exports::HEADER_VERSION as c_int;

/// The device's UUID (`cuDeviceGetUuid`).
const DEVICE_UUID: [u8; 16] = *b"ptxvm-cpu-device";

fn h(p: Handle) -> u64 {
    p as u64
}

fn handle(v: u64) -> Handle {
    v as Handle
}

fn init() -> Result<(), CUresult> {
    state::init_lock().map(|_| ())
}

fn check_device(dev: CUdevice) -> Result<(), CUresult> {
    if dev != 0 {
        return Err(CUDA_ERROR_INVALID_DEVICE);
    }
    Ok(())
}

fn host_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(16 << 30)
}

fn cores() -> i32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as i32)
        .unwrap_or(1)
}

/// The value of device attribute `name` (without its `CU_DEVICE_ATTRIBUTE_` prefix): a
/// plausible sm_80/sm_90 GPU with one multiprocessor per host core.
fn device_attribute(name: &str) -> i32 {
    let (major, minor) = state::settings().cc;
    let hopper = major >= 9;
    let smem_optin = if hopper { 232_448 } else { 166_912 };
    match name {
        "MAX_THREADS_PER_BLOCK" => 1024,
        "MAX_BLOCK_DIM_X" | "MAX_BLOCK_DIM_Y" => 1024,
        "MAX_BLOCK_DIM_Z" => 64,
        "MAX_GRID_DIM_X" => i32::MAX,
        "MAX_GRID_DIM_Y" | "MAX_GRID_DIM_Z" => 65535,
        "MAX_SHARED_MEMORY_PER_BLOCK" => 49152,
        "TOTAL_CONSTANT_MEMORY" => 65536,
        "WARP_SIZE" => 32,
        "MAX_PITCH" => i32::MAX,
        "MAX_REGISTERS_PER_BLOCK" | "MAX_REGISTERS_PER_MULTIPROCESSOR" => 65536,
        "CLOCK_RATE" => 1_410_000,
        "TEXTURE_ALIGNMENT" => 512,
        "TEXTURE_PITCH_ALIGNMENT" => 32,
        "GPU_OVERLAP" | "ASYNC_ENGINE_COUNT" => 2,
        "MULTIPROCESSOR_COUNT" => cores(),
        "KERNEL_EXEC_TIMEOUT" | "INTEGRATED" | "TCC_DRIVER" | "MULTI_GPU_BOARD" => 0,
        "CAN_MAP_HOST_MEMORY" => 1,
        "COMPUTE_MODE" => 0,
        "CONCURRENT_KERNELS" => 1,
        "ECC_ENABLED" => 0,
        "PCI_BUS_ID" | "PCI_DEVICE_ID" | "PCI_DOMAIN_ID" => 0,
        "MEMORY_CLOCK_RATE" => 1_215_000,
        "GLOBAL_MEMORY_BUS_WIDTH" => 5120,
        "L2_CACHE_SIZE" => 40 << 20,
        "MAX_THREADS_PER_MULTIPROCESSOR" => 2048,
        "UNIFIED_ADDRESSING" => 1,
        "COMPUTE_CAPABILITY_MAJOR" => major,
        "COMPUTE_CAPABILITY_MINOR" => minor,
        "STREAM_PRIORITIES_SUPPORTED" => 1,
        "GLOBAL_L1_CACHE_SUPPORTED" | "LOCAL_L1_CACHE_SUPPORTED" => 1,
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR" => smem_optin + 1024,
        "MANAGED_MEMORY" => 1,
        "MULTI_GPU_BOARD_GROUP_ID" => 0,
        "HOST_NATIVE_ATOMIC_SUPPORTED" => 1,
        "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO" => 2,
        "PAGEABLE_MEMORY_ACCESS" | "CONCURRENT_MANAGED_ACCESS" => 1,
        "COMPUTE_PREEMPTION_SUPPORTED" => 1,
        "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM" => 1,
        "COOPERATIVE_LAUNCH" | "COOPERATIVE_MULTI_DEVICE_LAUNCH" => 1,
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN" => smem_optin,
        "CAN_FLUSH_REMOTE_WRITES" => 0,
        "HOST_REGISTER_SUPPORTED" => 1,
        "IPC_EVENT_SUPPORTED" => 1,
        "PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES" => 1,
        "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST" => 1,
        "MAX_BLOCKS_PER_MULTIPROCESSOR" => 32,
        "MAX_PERSISTING_L2_CACHE_SIZE" => 0,
        "MAX_ACCESS_POLICY_WINDOW_SIZE" => 0,
        "RESERVED_SHARED_MEMORY_PER_BLOCK" => 1024,
        "SPARSE_CUDA_ARRAY_SUPPORTED" => 0,
        "READ_ONLY_HOST_REGISTER_SUPPORTED" => 1,
        "MEMORY_POOLS_SUPPORTED" => 1,
        "CLUSTER_LAUNCH" => i32::from(hopper),
        "DMA_BUF_SUPPORTED" => 0,
        "NUMA_CONFIG" => 0,
        "NUMA_ID" | "HOST_NUMA_ID" => -1,
        n if n.starts_with("MAXIMUM_TEXTURE") || n.starts_with("MAXIMUM_SURFACE") => 0,
        _ => 0,
    }
}

fn enum_name(table: &'static [(&'static str, i64)], v: i64) -> Option<&'static str> {
    table.iter().find(|(_, x)| *x == v).map(|(n, _)| *n)
}

/// The CUDA error a kernel's failure stands for, and whether it is sticky.
fn kernel_error(e: &ptxvm::Error) -> (CUresult, bool) {
    use ptxvm::Failure as F;
    match e {
        ptxvm::Error::Kernel { failure, .. } => match failure {
            // a store to read-only memory is the MMU's fault on a GPU too
            F::OutOfBounds { .. } | F::ReadOnly => (CUDA_ERROR_ILLEGAL_ADDRESS, true),
            F::Misaligned => (CUDA_ERROR_MISALIGNED_ADDRESS, true),
            F::Budget | F::Timeout => (CUDA_ERROR_LAUNCH_TIMEOUT, true),
            F::Assert => (CUDA_ERROR_ASSERT, true),
            F::Unsupported => (CUDA_ERROR_NOT_SUPPORTED, false),
            _ => (CUDA_ERROR_LAUNCH_FAILED, true),
        },
        ptxvm::Error::Memory(_) => (CUDA_ERROR_OUT_OF_MEMORY, false),
        ptxvm::Error::Invalid { .. } => (CUDA_ERROR_INVALID_PTX, false),
        // a cluster shape the grid, the kernel's directives or the size limit refuse
        ptxvm::Error::Cluster(_) => (CUDA_ERROR_INVALID_CLUSTER_SIZE, false),
        ptxvm::Error::Usage(_) => (CUDA_ERROR_INVALID_VALUE, false),
    }
}

fn report(e: &ptxvm::Error) {
    e.render_to_stderr(ptx_diag::ColorMode::Auto);
}

/// Loads the image at `p` (PTX text, fatbin, fatbin wrapper, ptxvm container; a cubin is
/// refused) into the current context.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn load_image(
    p: *const c_void,
    name: &str,
    limit: Option<usize>,
    owner: Owner,
) -> Result<u64, CUresult> {
    let texts = read_image(p, limit)?;
    load_ptx(texts, name, owner)
}

/// Who owns a loaded image.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// The current context (a module): it goes when the context is destroyed.
    Current,
    /// No context (a library): libraries are context-independent, loaded before any context
    /// exists (cudart loads its fatbins so) and kept through context resets.
    Nobody,
}

/// The PTX texts of the image at `p`; `limit`: how many bytes the caller knows are there
/// (a file's or a linker input's size), which a header may not claim to exceed.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn read_image(p: *const c_void, limit: Option<usize>) -> Result<Vec<String>, CUresult> {
    if p.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // the first bytes, up to a NUL (reading no further than a C string would)
    let mut head = Vec::new();
    for k in 0..limit.unwrap_or(8).min(8) {
        let b = get(p.cast::<u8>().wrapping_add(k))?;
        head.push(b);
        if b == 0 {
            break;
        }
    }
    match image::classify(&head) {
        // an ELF header has no NUL in its first 7 bytes (class, data, version are non-zero)
        Kind::Elf if head.len() < 7 || limit.is_some_and(|l| l < 64) => {
            Err(CUDA_ERROR_INVALID_IMAGE)
        }
        Kind::Elf => {
            let len = image::elf_len(&bytes(p, 64)?).ok_or(CUDA_ERROR_INVALID_IMAGE)?;
            if limit.is_some_and(|l| len > l as u64) {
                return Err(CUDA_ERROR_INVALID_IMAGE);
            }
            match image::read_elf(&bytes(p, len as usize)?) {
                Ok(ElfImage::Cubin(c)) => {
                    let (major, minor) = state::settings().cc;
                    let cc = (major * 10 + minor).max(0) as u32;
                    if !image::cubin_runs_on(&c.target, cc) {
                        use std::io::Write as _;
                        let _ = writeln!(
                            std::io::stderr(),
                            "ptxvm: the cubin was assembled for {}, which a device of compute capability {major}.{minor} cannot run; assemble it for sm_{cc} or run with --cc",
                            c.target
                        );
                        return Err(CUDA_ERROR_NO_BINARY_FOR_GPU);
                    }
                    Ok(vec![c.ptx])
                }
                Ok(ElfImage::Sass) => {
                    image::no_ptx_hint("cubin (ELF image)");
                    Err(CUDA_ERROR_NO_BINARY_FOR_GPU)
                }
                Ok(ElfImage::Host) | Err(_) => Err(CUDA_ERROR_INVALID_IMAGE),
            }
        }
        // bytes from a file or a linker input cannot hold a host pointer, nor be shorter
        // than the header they start
        Kind::Wrapper if limit.is_some() => Err(CUDA_ERROR_INVALID_IMAGE),
        Kind::Fatbin | Kind::Container if limit.is_some_and(|l| l < 16) => {
            Err(CUDA_ERROR_INVALID_IMAGE)
        }
        Kind::Wrapper => {
            // { int magic; int version; const unsigned long long *data;
            //   void *filename_or_fatbins }
            let data = get(p.cast::<u8>().wrapping_add(8).cast::<*const c_void>())?;
            let version = get(p.cast::<u8>().wrapping_add(4).cast::<u32>())?;
            let prelinked = get(p
                .cast::<u8>()
                .wrapping_add(16)
                .cast::<*const *const c_void>())?;
            // relocatable device code (`nvcc -rdc=true`): `data` is nvlink's output, without
            // PTX (nvlink links SASS only); version 2 lists the fatbins nvlink linked, whose
            // PTX the JIT linker links instead
            if version == 2
                && !prelinked.is_null()
                && fatbin_entries(data, None).is_ok_and(|e| e.is_empty())
            {
                return prelinked_ptx(prelinked);
            }
            read_image(data, None)
        }
        Kind::Fatbin => {
            let entries = fatbin_entries(p, limit)?;
            let (major, minor) = state::settings().cc;
            let cc = (major * 10 + minor).max(0) as u32;
            let archs: Vec<u32> = entries.iter().map(|e| e.arch).collect();
            match image::pick(entries, cc) {
                Some(e) => Ok(vec![e.text]),
                None if archs.is_empty() => {
                    image::no_ptx_hint("fatbin");
                    Err(CUDA_ERROR_NO_BINARY_FOR_GPU)
                }
                None => {
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr(),
                        "ptxvm: the fatbin's PTX is for compute_{} only, newer than the device (compute capability {major}.{minor}); build for an older virtual architecture or run with --cc",
                        archs.iter().min().copied().unwrap_or(0)
                    );
                    Err(CUDA_ERROR_NO_BINARY_FOR_GPU)
                }
            }
        }
        Kind::Container => {
            let head = bytes(p, 16)?;
            let len = image::container_len(&head).ok_or(CUDA_ERROR_INVALID_IMAGE)?;
            if len > 1 << 34 || limit.is_some_and(|l| len > l as u64) {
                return Err(CUDA_ERROR_INVALID_IMAGE);
            }
            image::container_ptx(&bytes(p, len as usize)?)
        }
        Kind::Text => {
            let text = cstr_bytes(p, ptxvm::MAX_SOURCE_BYTES as usize)?;
            let text = String::from_utf8(text).map_err(|_| CUDA_ERROR_INVALID_IMAGE)?;
            if !text.contains(".version") && !text.contains(".entry") && !text.contains(".target") {
                return Err(CUDA_ERROR_INVALID_IMAGE);
            }
            Ok(vec![text])
        }
    }
}

/// The PTX entries of the fatbin at `p` (`limit`: as for [`read_image`]).
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn fatbin_entries(
    p: *const c_void,
    limit: Option<usize>,
) -> Result<Vec<image::PtxEntry>, CUresult> {
    let header = bytes(p, 16)?;
    if image::classify(&header) != Kind::Fatbin {
        return Err(CUDA_ERROR_INVALID_IMAGE);
    }
    let hsize = u16::from_le_bytes([header[6], header[7]]) as u64;
    let size = u64::from_le_bytes(header[8..16].try_into().unwrap_or([0; 8]));
    let total = hsize.saturating_add(size);
    if total > image::MAX_PTX_BYTES * 4 || limit.is_some_and(|l| total > l as u64) {
        return Err(CUDA_ERROR_INVALID_IMAGE);
    }
    image::fatbin_ptx(&bytes(p, total as usize)?)
}

/// The PTX of a program built with relocatable device code: of each fatbin of the
/// NULL-terminated list `fatbins` (one per translation unit, and libcudadevrt's, SASS only),
/// the PTX the device runs, linked into one module (calls into the device runtime may stay
/// unresolved, as with `libcudadevrt.a` given to the linker).
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn prelinked_ptx(fatbins: *const *const c_void) -> Result<Vec<String>, CUresult> {
    const MAX_FATBINS: usize = 1 << 16;
    let (major, minor) = state::settings().cc;
    let cc = (major * 10 + minor).max(0) as u32;
    let mut inputs = Vec::new();
    for k in 0..MAX_FATBINS {
        let f = get(fatbins.wrapping_add(k))?;
        if f.is_null() {
            break;
        }
        if let Some(e) = image::pick(fatbin_entries(f, None)?, cc) {
            inputs.push(link::Input {
                name: format!("<rdc fatbin {k}>"),
                text: e.text,
            });
        }
    }
    if inputs.is_empty() {
        image::no_ptx_hint("fatbin");
        return Err(CUDA_ERROR_NO_BINARY_FOR_GPU);
    }
    match link::link(&inputs, true) {
        Ok(linked) => {
            if !linked.info.is_empty() {
                eprint!("ptxvm: {}", linked.info);
            }
            Ok(vec![linked.ptx])
        }
        Err(log) => {
            eprint!("ptxvm: {log}");
            Err(CUDA_ERROR_INVALID_IMAGE)
        }
    }
}

/// The first 32 bits of the FNV-1a hash of `text` (a name for modules loaded from memory).
fn text_hash(text: &str) -> u32 {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (h >> 32) as u32
}

thread_local! {
    /// The report of this thread's last failed module load, for the JIT error log of
    /// `cuModuleLoadDataEx`/`cuLibraryLoadData` ([`load_with_options`]).
    static LOAD_ERROR: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// `CU_JIT_MAX_REGISTERS` of the module each handle was loaded with (`cuModuleLoadDataEx`,
/// `cuLibraryLoadData`): `NUM_REGS` reports no more.
static MAX_REGISTERS: Mutex<Option<std::collections::HashMap<u64, u32>>> = Mutex::new(None);

/// Loads an image as `cuModuleLoadDataEx` does with its JIT options: `CU_JIT_MAX_REGISTERS`
/// (0) caps the functions' `NUM_REGS`; `CU_JIT_ERROR_LOG_BUFFER` (5/6) receives the report of
/// a PTX that does not load, `CU_JIT_INFO_LOG_BUFFER` (3/4) is emptied; the others (levels,
/// targets, caches) do not apply to an interpreter.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn load_with_options(
    image: *const c_void,
    name: &str,
    limit: Option<usize>,
    owner: Owner,
    n: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
) -> Result<u64, CUresult> {
    let mut logs = Link::default();
    link_options(n, options, values, &mut logs)?;
    let mut max_regs = None;
    for k in 0..n as usize {
        if get(options.wrapping_add(k))? == 0 {
            max_regs = Some(get(values.wrapping_add(k))? as usize as u32);
        }
    }
    write_log(logs.info_log, "");
    LOAD_ERROR.with(|e| e.borrow_mut().clear());
    let r = load_image(image, name, limit, owner);
    match r {
        Ok(m) => {
            if let Some(cap) = max_regs.filter(|&c| c > 0) {
                let mut g = MAX_REGISTERS.lock().unwrap_or_else(|e| e.into_inner());
                g.get_or_insert_with(Default::default).insert(m, cap);
            }
            Ok(m)
        }
        Err(e) => {
            let text = LOAD_ERROR.with(|t| t.borrow().clone());
            write_log(logs.error_log, &text);
            Err(e)
        }
    }
}

fn load_ptx(texts: Vec<String>, name: &str, owner: Owner) -> Result<u64, CUresult> {
    let (ctx, device) = {
        let s = state::init_lock()?;
        let ctx = match owner {
            Owner::Current => s.current()?,
            Owner::Nobody => 0,
        };
        (ctx, s.device.clone())
    };
    let text = match texts.len() {
        1 => texts.into_iter().next().unwrap_or_default(),
        _ => {
            let inputs: Vec<link::Input> = texts
                .into_iter()
                .enumerate()
                .map(|(k, text)| link::Input {
                    name: format!("{name}#{k}"),
                    text,
                })
                .collect();
            link::link(&inputs, false).map(|l| l.ptx).map_err(|log| {
                eprint!("ptxvm: {log}");
                CUDA_ERROR_INVALID_IMAGE
            })?
        }
    };
    // an image from memory is named by what it was and a hash of its text, so that reports
    // tell two modules apart (`<memory 9c1e3f2a>`); a file keeps its path
    let name = match name.strip_suffix('>') {
        Some(kind) if name.starts_with('<') => format!("{kind} {:08x}>", text_hash(&text)),
        _ => name.to_string(),
    };
    let module = ptxvm::Module::from_ptx(&device, &name, &text).map_err(|e| {
        report(&e);
        LOAD_ERROR.with(|t| *t.borrow_mut() = e.render());
        match e {
            ptxvm::Error::Memory(_) => CUDA_ERROR_OUT_OF_MEMORY,
            _ => CUDA_ERROR_INVALID_PTX,
        }
    })?;
    let loaded = Arc::new(Loaded {
        module,
        ctx,
        funcs: Mutex::new(Default::default()),
    });
    Ok(state::lock().insert(Obj::Module(loaded)))
}

/// The bytes of the file at `path` (NUL-terminated), at most [`ptxvm::MAX_SOURCE_BYTES`]
/// read: a larger file (or `/dev/zero`) is CUDA_ERROR_INVALID_VALUE, not read to its end.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn read_file(path: *const c_char) -> Result<(Vec<u8>, String), CUresult> {
    use std::io::Read as _;
    let path = string(path)?;
    let file = std::fs::File::open(&path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
    let mut data = Vec::new();
    file.take(ptxvm::MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
    if data.len() as u64 > ptxvm::MAX_SOURCE_BYTES {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "ptxvm: {path}: more than 256 MiB, the most ptxvm reads as a module"
        );
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    data.push(0);
    Ok((data, path))
}

/// The function handle of kernel `name` of module `m` (the same handle every time).
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn get_function(m: u64, name: *const c_char) -> Result<u64, CUresult> {
    let name = string(name)?;
    let loaded = {
        let s = state::init_lock()?;
        s.module(m)?
    };
    if let Some(&f) = loaded
        .funcs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&name)
    {
        return Ok(f);
    }
    let (layout, param_size, resources) = {
        let k = loaded
            .module
            .kernel(&name)
            .map_err(|_| CUDA_ERROR_NOT_FOUND)?;
        // compiled here, under the launch time limit (PTXVM_TIMEOUT): a kernel too large to
        // compile in that time is CUDA_ERROR_LAUNCH_TIMEOUT, reported on stderr
        k.compile_within(state::settings().timeout).map_err(|e| {
            report(&e);
            kernel_error(&e).0
        })?;
        let (layout, size) = k.param_layout().map_err(|e| {
            report(&e);
            CUDA_ERROR_INVALID_PTX
        })?;
        let res = k.resources().map_err(|_| CUDA_ERROR_INVALID_PTX)?;
        (layout, size, res)
    };
    let func = Func {
        module: loaded.clone(),
        module_handle: m,
        cname: std::ffi::CString::new(name.clone()).map_err(|_| CUDA_ERROR_INVALID_VALUE)?,
        name: name.clone(),
        layout,
        param_size,
        resources,
        max_dynamic_shared: 48 << 10,
        carveout: -1,
        non_portable_cluster: false,
        required_cluster: [0; 3],
        cluster_scheduling: 0,
        shared_memory_mode: 0,
    };
    let fh = state::lock().insert(Obj::Func(Arc::new(func)));
    loaded
        .funcs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name, fh);
    Ok(fh)
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn get_global(
    dptr: *mut CUdeviceptr,
    bytes_out: *mut usize,
    m: u64,
    name: *const c_char,
) -> Result<(), CUresult> {
    let name = string(name)?;
    let loaded = state::init_lock()?.module(m)?;
    let (addr, size) = loaded.module.global(&name).ok_or(CUDA_ERROR_NOT_FOUND)?;
    if !dptr.is_null() {
        put(dptr, addr)?;
    }
    if !bytes_out.is_null() {
        put(bytes_out, size as usize)?;
    }
    Ok(())
}

/// `cuLibraryGetManaged`: the address and size of `__managed__` variable `name` (a `.global`
/// declared `.attribute(.managed)`); another variable is `CUDA_ERROR_NOT_FOUND`. Managed memory
/// is host memory here, so the address is the one host code reads and writes too.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn get_managed(
    dptr: *mut CUdeviceptr,
    bytes_out: *mut usize,
    m: u64,
    name: *const c_char,
) -> Result<(), CUresult> {
    let wanted = string(name)?;
    let loaded = state::init_lock()?.module(m)?;
    let module = &loaded.module;
    let decl = module
        .ir()
        .globals
        .iter()
        .find(|g| *g.name == wanted)
        .ok_or(CUDA_ERROR_NOT_FOUND)?;
    // the declaration's line, up to its name: `.visible .global .attribute(.managed) .align 4 …`
    let source = module.source().text();
    let end = (decl.span.end as usize).min(source.len());
    let start = source[..end].rfind(['\n', ';', '}']).map_or(0, |k| k + 1);
    if !source
        .get(start..end)
        .is_some_and(|d| d.contains(".managed"))
    {
        return Err(CUDA_ERROR_NOT_FOUND);
    }
    get_global(dptr, bytes_out, m, name)
}

fn func_attribute(f: &Func, attrib: i64) -> Result<i32, CUresult> {
    let name = enum_name(CUFUNCTION_ATTRIBUTE, attrib).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let target = image::ptx_target(f.module.module.source().text()).and_then(image::sm_number);
    let r = &f.resources;
    Ok(match name.trim_start_matches("CU_FUNC_ATTRIBUTE_") {
        "MAX_THREADS_PER_BLOCK" => r.max_threads.unwrap_or(1024).min(1024) as i32,
        "SHARED_SIZE_BYTES" => r.shared_static as i32,
        "CONST_SIZE_BYTES" => r.const_bytes.min(i32::MAX as u64) as i32,
        "LOCAL_SIZE_BYTES" => r.local_bytes.min(i32::MAX as u64) as i32,
        "NUM_REGS" => {
            let g = MAX_REGISTERS.lock().unwrap_or_else(|e| e.into_inner());
            let cap = g.as_ref().and_then(|m| m.get(&f.module_handle)).copied();
            r.registers.min(cap.unwrap_or(255)).min(255) as i32
        }
        // cuda.h: "the PTX virtual architecture version for which the function was compiled"
        // (a kernel of `.target sm_80` PTX: 80, as a GPU reports it and CUB reads it to pick
        // its tuning), not the PTX ISA version of `.version`
        "PTX_VERSION" => {
            let (a, b) = state::settings().cc;
            target.map_or(a * 10 + b, |t| t as i32)
        }
        // the PTX is compiled for the device, as the driver's JIT compiles it
        "BINARY_VERSION" => {
            let (a, b) = state::settings().cc;
            a * 10 + b
        }
        "CACHE_MODE_CA" => 0,
        "MAX_DYNAMIC_SHARED_SIZE_BYTES" => f.max_dynamic_shared,
        "PREFERRED_SHARED_MEMORY_CARVEOUT" => f.carveout,
        "NON_PORTABLE_CLUSTER_SIZE_ALLOWED" => f.non_portable_cluster as i32,
        "CLUSTER_SIZE_MUST_BE_SET" => compile_time_cluster(f).is_some() as i32,
        "REQUIRED_CLUSTER_WIDTH" | "REQUIRED_CLUSTER_HEIGHT" | "REQUIRED_CLUSTER_DEPTH" => {
            let d = cluster_dim(name);
            match compile_time_cluster(f) {
                Some(c) => c[d] as i32,
                None => f.required_cluster[d],
            }
        }
        "CLUSTER_SCHEDULING_POLICY_PREFERENCE" => f.cluster_scheduling,
        "SHARED_MEMORY_MODE" => f.shared_memory_mode,
        _ => 0,
    })
}

/// The cluster shape `f`'s kernel gives itself (`.reqnctapercluster`), if any.
fn compile_time_cluster(f: &Func) -> Option<[u32; 3]> {
    f.module.module.kernel(&f.name).ok()?.required_cluster()
}

/// 0, 1 or 2 for `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH`, `_HEIGHT`, `_DEPTH`.
fn cluster_dim(name: &str) -> usize {
    if name.ends_with("WIDTH") {
        0
    } else if name.ends_with("HEIGHT") {
        1
    } else {
        2
    }
}

fn set_func_attribute(fh: u64, attrib: i64, value: i32) -> Result<(), CUresult> {
    let name = enum_name(CUFUNCTION_ATTRIBUTE, attrib).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let mut s = state::init_lock()?;
    let f = s.func_mut(fh)?;
    let mut new = Func {
        module: f.module.clone(),
        module_handle: f.module_handle,
        name: f.name.clone(),
        layout: f.layout.clone(),
        param_size: f.param_size,
        resources: f.resources.clone(),
        max_dynamic_shared: f.max_dynamic_shared,
        carveout: f.carveout,
        non_portable_cluster: f.non_portable_cluster,
        required_cluster: f.required_cluster,
        cluster_scheduling: f.cluster_scheduling,
        shared_memory_mode: f.shared_memory_mode,
        cname: f.cname.clone(),
    };
    // Every settable attribute is honoured or kept and reported; the read-only ones are
    // CUDA_ERROR_INVALID_VALUE, as the driver documents ("Attempting to set a value on a
    // read-only attribute will result in an error").
    match name.trim_start_matches("CU_FUNC_ATTRIBUTE_") {
        "MAX_DYNAMIC_SHARED_SIZE_BYTES" => {
            let limit = device_attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN") as i64
                - new.resources.shared_static as i64;
            if value < 0 || value as i64 > limit {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            new.max_dynamic_shared = value;
        }
        "PREFERRED_SHARED_MEMORY_CARVEOUT" => new.carveout = value,
        "NON_PORTABLE_CLUSTER_SIZE_ALLOWED" => {
            if !(0..=1).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            new.non_portable_cluster = value == 1;
        }
        "REQUIRED_CLUSTER_WIDTH" | "REQUIRED_CLUSTER_HEIGHT" | "REQUIRED_CLUSTER_DEPTH" => {
            // a shape given at compile time (.reqnctapercluster) cannot be changed
            if compile_time_cluster(&new).is_some() {
                return Err(CUDA_ERROR_NOT_PERMITTED);
            }
            if value < 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            new.required_cluster[cluster_dim(name)] = value;
        }
        "CLUSTER_SCHEDULING_POLICY_PREFERENCE" => {
            // CU_CLUSTER_SCHEDULING_POLICY_DEFAULT, _SPREAD, _LOAD_BALANCING
            if !(0..=2).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            new.cluster_scheduling = value;
        }
        "SHARED_MEMORY_MODE" => {
            // CUsharedMemoryMode: DEFAULT, REQUIRE_PORTABLE, ALLOW_NON_PORTABLE,
            // ALLOW_OVERSIZED_SHARED_MEMORY, PREFER_OVERSIZED_SHARED_MEMORY
            if !(0..=4).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            new.shared_memory_mode = value;
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    *f = Arc::new(new);
    Ok(())
}

struct LaunchArgs {
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: u64,
    /// A cooperative launch (all CTAs resident at once: grid synchronization works).
    coop: bool,
    /// The cluster shape (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` of `cuLaunchKernelEx`).
    cluster: Option<[u32; 3]>,
    /// `CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE` of `cuLaunchKernelEx`, over the function's.
    shared_memory_mode: Option<i32>,
}

/// The most dynamic shared memory a launch of `f` may ask for in shared memory mode `mode`
/// (`CUsharedMemoryMode`, as `cuda.h` documents it): the function's
/// `MAX_DYNAMIC_SHARED_SIZE_BYTES` by default; what is left of the portable 48 KiB block limit
/// when portable sizes are required; what is left of the opt-in limit when non-portable or
/// oversized sizes are allowed (ptxvm's device has no oversized configuration beyond the
/// opt-in limit: `MAX_OVERSIZED_SHARED_MEMORY_PER_BLOCK` reports the same).
fn dynamic_shared_limit(f: &Func, mode: i32) -> i64 {
    let static_bytes = f.resources.shared_static as i64;
    match mode {
        1 => (48 << 10) - static_bytes,
        2..=4 => device_attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN") as i64 - static_bytes,
        _ => f.max_dynamic_shared.max(48 << 10) as i64,
    }
}

/// The largest `gridDim.x` a launch may have (`CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X`).
const GRID_X_MAX: u32 = i32::MAX as u32;

/// Runs a launch: the parameters from `kernel_params` (one pointer per parameter, each read
/// for the parameter's size) or `extra` (`CU_LAUNCH_PARAM_BUFFER_POINTER`/`_SIZE` pairs).
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn launch(
    fh: u64,
    a: LaunchArgs,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<(), CUresult> {
    let (f, ctx) = {
        let s = state::init_lock()?;
        let f = s.func(fh)?;
        let ctx = s.stream_ctx(a.stream)?;
        (f, ctx)
    };
    if a.grid.contains(&0) || a.block.contains(&0) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let threads = a.block.iter().map(|&b| b as u64).product::<u64>();
    // the device's limits: gridDim.x < 2^31, y and z at most 65535
    if threads > 1024
        || a.block[2] > 64
        || a.grid[0] > GRID_X_MAX
        || a.grid[1] > 65535
        || a.grid[2] > 65535
    {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mode = a.shared_memory_mode.unwrap_or(f.shared_memory_mode);
    if a.shared as i64 > dynamic_shared_limit(&f, mode) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // the parameter buffer as the kernel sees it, each parameter at its offset (launched as it
    // is: nothing split into arguments and packed again)
    // both ways of passing parameters at once is an error (cuLaunchKernel's documentation)
    if !kernel_params.is_null() && !extra.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut params = vec![0u8; f.param_size as usize];
    if !kernel_params.is_null() {
        for (k, &(off, size)) in f.layout.iter().enumerate() {
            let p = get(kernel_params.wrapping_add(k))?;
            read_into(p, &mut params[off as usize..(off + size) as usize])?;
        }
    } else if !extra.is_null() {
        let (mut buf, mut size) = (std::ptr::null::<c_void>(), None::<usize>);
        for k in (0..64).step_by(2) {
            let key = get(extra.wrapping_add(k))? as usize;
            match key {
                0 => break,
                1 => buf = get(extra.wrapping_add(k + 1))?,
                2 => size = Some(get(get(extra.wrapping_add(k + 1))?.cast::<usize>())?),
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
        }
        let size = size.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        // The buffer holds the parameters at their offsets: at least the kernel's parameter
        // bytes, at most those rounded up to 16 (a C struct's tail padding). A larger size
        // cannot describe the parameter buffer (1 MiB, 2^63 - 1 and 2^64 - 1 used to be read
        // from the buffer as they were: issue 23); only the parameter bytes are read.
        let need = f.param_size;
        if (size as u64) < need || size as u64 > need.next_multiple_of(16) || buf.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        read_into(buf, &mut params)?;
    } else if !f.layout.is_empty() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (stack, fifo) = {
        let s = state::lock();
        let c = s.ctx(ctx)?;
        (c.stack_size, c.printf_fifo)
    };
    let set = state::settings();
    let mut threads = set.threads;
    if a.coop {
        // every CTA resident at once, each on its own OS thread
        let ctas = a.grid.iter().map(|&g| g as u64).product::<u64>();
        let per_sm = occupancy(&f, threads_per_block(&a) as i32, a.shared as usize) as u64;
        if ctas > per_sm * device_attribute("MULTIPROCESSOR_COUNT") as u64 {
            return Err(crate::coop::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
        }
        threads = ctas as usize;
    }
    let opts = ptxvm::LaunchOptions {
        threads,
        max_instructions: set.max_instructions,
        timeout: set.timeout,
        stack_size: stack.max(ptxvm::DEFAULT_STACK_SIZE),
        printf_fifo: fifo as usize,
        // a launch without a cluster shape takes the one cuFuncSetAttribute required
        cluster: a.cluster.or_else(|| {
            let r = f.required_cluster;
            r.iter().all(|&d| d > 0).then(|| r.map(|d| d as u32))
        }),
        non_portable_cluster: f.non_portable_cluster,
        ..Default::default()
    };
    f.module
        .module
        .kernel(&f.name)
        .map_err(|_| CUDA_ERROR_INVALID_HANDLE)?;
    let on = a.stream;
    let op: stream::Op = Arc::new(move || run_kernel(&f, &a, &params, &opts, ctx));
    stream::submit(ctx, on, stream::NodeKind::Kernel, op)
}

/// Runs a checked launch (in stream order); a fault is reported and made sticky.
fn run_kernel(
    f: &Func,
    a: &LaunchArgs,
    params: &[u8],
    opts: &ptxvm::LaunchOptions,
    ctx: u64,
) -> Result<(), CUresult> {
    let kernel = f
        .module
        .module
        .kernel(&f.name)
        .map_err(|_| CUDA_ERROR_INVALID_HANDLE)?;
    let mut out = std::io::stdout();
    let line = ProgressLine::new(&f.name);
    let show = |p: &ptxvm::Progress| line.update(p);
    let progress: Option<&(dyn Fn(&ptxvm::Progress) + Sync)> = match line.after {
        Some(_) => Some(&show),
        None => None,
    };
    let r = kernel.launch_raw_streaming(
        a.grid,
        a.block,
        a.shared as u64,
        params,
        opts,
        progress,
        &mut out,
    );
    line.clear();
    use std::io::Write as _;
    let _ = out.flush();
    match r {
        Ok(_) => Ok(()),
        Err(e) => {
            let (code, sticky) = kernel_error(&e);
            if code != CUDA_ERROR_INVALID_VALUE {
                // the kernel and where its module came from, then ptxvm's report
                let _ = writeln!(
                    std::io::stderr(),
                    "ptxvm: kernel `{}` ({}, grid {:?}, block {:?}) stopped:",
                    f.name,
                    f.module.module.source().name(),
                    a.grid,
                    a.block
                );
                report(&e);
            }
            if sticky {
                if let Ok(c) = state::lock().ctx_mut(ctx) {
                    c.sticky = Some(code);
                }
            }
            Err(code)
        }
    }
}

/// The progress line of a long launch on stderr (`PTXVM_PROGRESS`, see [`state::Settings`]),
/// as `ptxvm run` shows one: blocks done, thread instructions, seconds; rewritten in place at
/// most four times a second and erased when the launch ends.
struct ProgressLine<'n> {
    name: &'n str,
    after: Option<std::time::Duration>,
    tty: bool,
    started: std::time::Instant,
    /// When the line was last written (`None`: never).
    last: Mutex<Option<std::time::Instant>>,
}

impl<'n> ProgressLine<'n> {
    fn new(name: &'n str) -> Self {
        ProgressLine {
            name,
            after: state::settings().progress,
            tty: state::settings().stderr_tty,
            started: std::time::Instant::now(),
            last: Mutex::new(None),
        }
    }

    fn update(&self, p: &ptxvm::Progress) {
        let (Some(after), now) = (self.after, std::time::Instant::now()) else {
            return;
        };
        let ran = now.duration_since(self.started);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let due = last.is_none_or(|t| now.duration_since(t).as_millis() >= 250);
        if ran < after || !due {
            return;
        }
        if !self.tty && last.is_some_and(|t| now.duration_since(t).as_secs() < 1) {
            return;
        }
        *last = Some(now);
        use std::io::Write as _;
        let text = format!(
            "[ptxvm] kernel `{}`: {}/{} blocks, {} thread instructions, {:.1} s",
            self.name,
            p.blocks_done,
            p.blocks_total,
            p.thread_instructions,
            ran.as_secs_f64()
        );
        // on a terminal one line rewritten in place; in a log one line a second
        let _ = if self.tty {
            write!(std::io::stderr(), "\r\x1b[2K{text}")
        } else {
            writeln!(std::io::stderr(), "{text}")
        };
    }

    fn clear(&self) {
        let shown = self
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if shown && self.tty {
            use std::io::Write as _;
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

fn threads_per_block(a: &LaunchArgs) -> u64 {
    a.block.iter().map(|&b| b as u64).product()
}

fn occupancy(f: &Func, block: i32, dynamic: usize) -> i32 {
    if block <= 0 {
        return 0;
    }
    let warps = (block as i64 + 31) / 32;
    let by_threads = 64 / warps.max(1);
    let shared = f.resources.shared_static as i64 + dynamic as i64;
    let by_shared = if shared > 0 {
        device_attribute("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR") as i64 / shared
    } else {
        32
    };
    by_threads.min(by_shared).min(32) as i32
}

fn alloc(size: usize, kind: MemKind, flags: u32) -> Result<u64, CUresult> {
    let mut s = state::init_lock()?;
    let ctx = s.current()?;
    if size == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let label = match kind {
        MemKind::Device => "cuMemAlloc buffer",
        MemKind::Host => "cuMemHostAlloc buffer",
        MemKind::Managed => "cuMemAllocManaged buffer",
        MemKind::Registered | MemKind::Imported => return Err(CUDA_ERROR_INVALID_VALUE),
    };
    let granular = if state::settings().exact_bounds {
        size
    } else {
        size.checked_next_multiple_of(256)
            .ok_or(CUDA_ERROR_OUT_OF_MEMORY)?
    };
    let buf = crate::memory::new_buffer(&s.device, granular, kind, label)?;
    let addr = buf.addr();
    s.allocs.insert(
        addr,
        Alloc {
            buf,
            size: size as u64,
            kind,
            ctx,
            flags,
        },
    );
    drop(s);
    // a pool's record of an earlier allocation at this address (freed with its context) is
    // stale: the address is this allocation's now
    pool::forget(addr);
    Ok(addr)
}

fn free(addr: u64, kind: MemKind) -> Result<(), CUresult> {
    if addr == 0 {
        return init();
    }
    // work in flight may still use the memory: freeing synchronizes, as on a GPU. (The lock is
    // released first: the streams' workers need it, and a guard in the `if let` would live
    // through the wait, which then never ended.)
    let owner = state::init_lock()?.allocs.get(&addr).map(|a| a.ctx);
    if let Some(ctx) = owner {
        stream::wait_ctx(ctx, false);
    }
    let mut s = state::init_lock()?;
    match s.allocs.get(&addr) {
        Some(a) if a.kind == kind || (kind == MemKind::Device && a.kind == MemKind::Managed) => {
            s.allocs.remove(&addr);
            drop(s);
            pool::forget(addr);
            Ok(())
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// A copy between device (or host) ranges, each checked against the allocation map when it
/// must be device memory.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn memcpy(
    dst: u64,
    src: u64,
    n: usize,
    dst_dev: bool,
    src_dev: bool,
    stream: u64,
) -> Result<(), CUresult> {
    let s = state::init_lock()?;
    s.stream_ctx(stream)?;
    if n == 0 {
        return Ok(());
    }
    if dst_dev {
        s.check_range(dst, n as u64)?;
    }
    if src_dev {
        s.check_range(src, n as u64)?;
    }
    let ctx = s.stream_ctx(stream)?;
    let ends = Ends::claim(&s, &[(dst, n as u64), (src, n as u64)]);
    drop(s);
    memcpy_ordered(ctx, stream, dst, src, n, ends)
}

/// A checked copy in stream order. Pageable host memory (not the driver's) behaves as CUDA
/// documents: a source is read when the call is made, a destination written before it returns.
/// The device ends stay claimed ([`Ends`]) until the copy runs, however late.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn memcpy_ordered(
    ctx: u64,
    stream: u64,
    dst: u64,
    src: u64,
    n: usize,
    ends: Ends,
) -> Result<(), CUresult> {
    use stream::NodeKind::Memcpy;
    let op = move |src: u64| -> stream::Op {
        Arc::new(move || {
            let _held = ends.hold("a copy")?;
            copy(dst, src, n)
        })
    };
    if stream <= 2 {
        return stream::submit(ctx, stream, Memcpy, op(src));
    }
    if !stream::driver_memory(dst) {
        return stream::submit_wait(ctx, stream, Memcpy, op(src));
    }
    if !stream::driver_memory(src) {
        let data = bytes(src as *const c_void, n)?;
        let at = data.as_ptr() as u64;
        let op = op(at);
        // the snapshot lives as long as the operation
        let op: stream::Op = Arc::new(move || {
            let _data = &data;
            op()
        });
        return stream::submit(ctx, stream, Memcpy, op);
    }
    stream::submit(ctx, stream, Memcpy, op(src))
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn memset(
    dst: u64,
    value: u32,
    width: usize,
    count: usize,
    stream: u64,
) -> Result<(), CUresult> {
    let s = state::init_lock()?;
    s.stream_ctx(stream)?;
    if count == 0 {
        return Ok(());
    }
    let bytes = (count as u64)
        .checked_mul(width as u64)
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    s.check_range(dst, bytes)?;
    if dst % width as u64 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let ctx = s.stream_ctx(stream)?;
    let ends = Ends::claim(&s, &[(dst, bytes)]);
    drop(s);
    let op: stream::Op = Arc::new(move || {
        let _held = ends.hold("a memset")?;
        fill(dst, value, width, count);
        Ok(())
    });
    stream::submit(ctx, stream, stream::NodeKind::Memset, op)
}

fn new_stream(flags: u32, priority: i32) -> Result<u64, CUresult> {
    let mut s = state::init_lock()?;
    let ctx = s.current()?;
    let id = s.fresh_id();
    let h = s.insert(Obj::Stream(Stream {
        ctx,
        flags,
        priority: priority.clamp(-5, 0),
        id,
    }));
    stream::created(h, ctx, flags);
    Ok(h)
}

fn pointer_attribute(s: &State, name: &str, ptr: u64) -> Result<Vec<u8>, CUresult> {
    let found = s.find(ptr, 1);
    let module_var = s.device.allocation(ptr, 1);
    if found.is_none() && module_var.is_none() {
        return match name {
            "MEMORY_TYPE" | "CONTEXT" | "DEVICE_POINTER" | "HOST_POINTER" => {
                Err(CUDA_ERROR_INVALID_VALUE)
            }
            "IS_MANAGED" | "MAPPED" => Ok(0u32.to_le_bytes().to_vec()),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        };
    }
    let (base, size, kind, ctx) = match found {
        Some((b, a)) => (b, a.size, a.kind, a.ctx),
        None => {
            let m = module_var.ok_or(CUDA_ERROR_INVALID_VALUE)?;
            (
                m.base,
                m.size,
                MemKind::Device,
                state::stack_top().unwrap_or(0),
            )
        }
    };
    let u32v = |v: u32| Ok(v.to_le_bytes().to_vec());
    let u64v = |v: u64| Ok(v.to_le_bytes().to_vec());
    match name {
        // CU_MEMORYTYPE_HOST = 1, DEVICE = 2, UNIFIED = 4
        "MEMORY_TYPE" => u32v(match kind {
            MemKind::Host | MemKind::Registered => 1,
            _ => 2,
        }),
        "CONTEXT" => u64v(ctx),
        "DEVICE_POINTER" | "HOST_POINTER" => u64v(ptr),
        "IS_MANAGED" => u32v((kind == MemKind::Managed) as u32),
        "DEVICE_ORDINAL" => u32v(0),
        "RANGE_START_ADDR" => u64v(base),
        "RANGE_SIZE" => u64v(size),
        "MAPPED" => u32v(1),
        "BUFFER_ID" => u64v(base),
        "SYNC_MEMOPS" => u32v(1),
        "ALLOWED_HANDLE_TYPES" | "IS_LEGACY_CUDA_IPC_CAPABLE" | "IS_GPU_DIRECT_RDMA_CAPABLE" => {
            u32v(0)
        }
        "ACCESS_FLAGS" => u32v(3),
        "MEMPOOL_HANDLE" => u64v(pool::pool_of(base).unwrap_or(0)),
        "MAPPING_SIZE" => u64v(size),
        "MAPPING_BASE_ADDR" => u64v(base),
        "MEMORY_BLOCK_ID" => u64v(base),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn write_attr(data: *mut c_void, v: &[u8]) -> Result<(), CUresult> {
    if data.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if v.len() == 8 {
        put(
            data.cast::<u64>(),
            u64::from_le_bytes(v.try_into().unwrap_or([0; 8])),
        )
    } else {
        put(
            data.cast::<u32>(),
            u32::from_le_bytes(v.try_into().unwrap_or([0; 4])),
        )
    }
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn proc_address(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> Result<(), CUresult> {
    let name = string(symbol)?;
    if state::settings().trace {
        // the call's own trace line shows the symbol as an address: name it first
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "[ptxvm] cuGetProcAddress: symbol \"{name}\", version {version}, flags {flags}"
        );
    }
    if pfn.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    put(pfn, std::ptr::null_mut())?;
    // cuda.h: "If the specified CUDA version is greater than the driver version, the API will
    // return CUDA_ERROR_INVALID_VALUE."
    if version > DRIVER_VERSION {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let entries = crate::memory::proc_entries(&name, flags);
    let set_status = |v: c_int| {
        if !status.is_null() {
            let _ = put(status, v);
        }
    };
    // CU_GET_PROC_ADDRESS_SUCCESS = 0, SYMBOL_NOT_FOUND = 1, VERSION_NOT_SUFFICIENT = 2
    let found = entries
        .iter()
        .filter(|(_, v, _, _)| *v as i64 <= version as i64)
        .max_by_key(|(_, v, _, _)| *v);
    let symbol = match found {
        Some((_, _, _, sym)) => *sym,
        None if entries.is_empty() => {
            // a name without a typedef (new or private): the export of that name, if any
            match crate::symbol(&name) {
                Some(_) => name.as_str(),
                None => {
                    set_status(1);
                    return Err(CUDA_ERROR_NOT_FOUND);
                }
            }
        }
        None => {
            set_status(2);
            return Err(CUDA_ERROR_NOT_FOUND);
        }
    };
    let f = crate::symbol(symbol).ok_or_else(|| {
        set_status(1);
        CUDA_ERROR_NOT_FOUND
    })?;
    put(pfn, f as *mut c_void)?;
    set_status(0);
    Ok(())
}

/// Adds one input to a link. PTX is checked on its own now (as the driver compiles each input
/// when it is added); a fatbin gives its PTX; the CUDA device runtime library is noted (its
/// functions are ptxvm's to supply); other machine code is refused with a hint.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn link_add(state_h: u64, kind: c_uint, data: Vec<u8>, name: &str) -> Result<(), CUresult> {
    state::init_lock()?.link_mut(state_h)?;
    // CU_JIT_INPUT_CUBIN 0, PTX 1, FATBINARY 2, OBJECT 3, LIBRARY 4, NVVM 5
    let texts = match kind {
        1 => {
            let t = String::from_utf8_lossy(&data);
            vec![t.trim_end_matches('\0').to_string()]
        }
        2 => {
            // NUL-terminated, so that text given as a fatbin reads no further
            let mut data = data;
            data.push(0);
            read_image(data.as_ptr().cast(), Some(data.len()))?
        }
        4 if image::is_device_runtime(&data) => {
            state::lock().link_mut(state_h)?.device_runtime = true;
            // its grid-synchronization entry points, in PTX (see `coop`)
            vec![crate::coop::CUDADEVRT_PTX.to_string()]
        }
        // `ptxvm ptxas`'s cubins (whole-program or `-c`) hold their PTX
        0 | 3 if image::classify(&data) == Kind::Elf => {
            read_image(data.as_ptr().cast(), Some(data.len()))?
        }
        0 | 3 | 4 => {
            let what = ["cubin", "", "", "object", "library"][kind as usize];
            image::no_ptx_hint(&format!("{what} `{name}` given to the linker"));
            return Err(CUDA_ERROR_NO_BINARY_FOR_GPU);
        }
        _ => {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "ptxvm: the linker takes PTX, fatbins holding PTX and libcudadevrt; NVVM IR (LTO) input `{name}` is not supported"
            );
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
    };
    for (k, text) in texts.into_iter().enumerate() {
        let name = if k == 0 {
            name.to_string()
        } else {
            format!("{name}#{k}")
        };
        if let Err(log) = link::check_input(&name, &text) {
            let mut s = state::lock();
            let l = s.link_mut(state_h)?;
            write_log(l.error_log, &log);
            eprint!("{log}");
            return Err(CUDA_ERROR_INVALID_PTX);
        }
        state::lock()
            .link_mut(state_h)?
            .inputs
            .push(link::Input { name, text });
    }
    Ok(())
}

/// The JIT options of `cuLinkCreate` that ptxvm reads: the info and error log buffers
/// (`CU_JIT_INFO_LOG_BUFFER` 3 / `_SIZE_BYTES` 4, `CU_JIT_ERROR_LOG_BUFFER` 5 / 6); the rest
/// (optimisation level, register limits, …) do not apply to an interpreter.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn link_options(
    n: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
    l: &mut Link,
) -> Result<(), CUresult> {
    if n == 0 {
        return Ok(());
    }
    if options.is_null() || values.is_null() || n > 1024 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut buf = [0u64; 2];
    let mut cap = [(0usize, 0u64); 2];
    for k in 0..n as usize {
        let o = get(options.wrapping_add(k))?;
        let slot = values.wrapping_add(k);
        let v = get(slot)? as u64;
        match o {
            3 => buf[0] = v,
            5 => buf[1] = v,
            4 => cap[0] = (v as usize, slot as u64),
            6 => cap[1] = (v as usize, slot as u64),
            _ => {}
        }
    }
    let pick = |b: u64, (c, slot): (usize, u64)| (b != 0 && c > 0).then_some((b, c, slot));
    l.info_log = pick(buf[0], cap[0]);
    l.error_log = pick(buf[1], cap[1]);
    Ok(())
}

/// Writes `text` (cut to the capacity, NUL-terminated) into a host log buffer and the bytes
/// used into its size option's slot.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn write_log(log: Option<(u64, usize, u64)>, text: &str) {
    let Some((buf, cap, slot)) = log else {
        return;
    };
    let n = text.len().min(cap - 1);
    let _ = copy(buf, text.as_ptr() as u64, n);
    let _ = put((buf + n as u64) as *mut u8, 0);
    let _ = put(slot as *mut usize, n + 1);
}

/// `CUlaunchConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig {
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared: c_uint,
    stream: Handle,
    attrs: *mut c_void,
    num_attrs: c_uint,
}

fn primary_release(dev: CUdevice) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    check_device(dev)?;
    if s.primary_refs == 0 {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    s.primary_refs -= 1;
    Ok(())
}

fn primary_reset(dev: CUdevice) -> Result<(), CUresult> {
    check_device(dev)?;
    // (the lock released before waiting for the context's streams, as in `free`)
    let primary = state::init_lock()?.primary;
    if let Some(c) = primary {
        stream::ctx_gone(c);
    }
    let mut s = state::init_lock()?;
    if let Some(c) = s.primary {
        s.reset_primary(c);
        drop(s);
        // cudart's per-context state goes with it (its destructor may call the driver)
        export_table::context_gone(c);
    }
    Ok(())
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn ctx_create(pctx: *mut Handle, flags: c_uint, dev: CUdevice) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    check_device(dev)?;
    if pctx.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let c = s.new_ctx(false, flags);
    state::stack_push(c);
    put(pctx, handle(c))
}

fn ctx_destroy(c: u64) -> Result<(), CUresult> {
    let s = state::init_lock()?;
    let ctx = s.ctx(c)?;
    if ctx.primary {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    drop(s);
    stream::ctx_gone(c);
    let mut s = state::init_lock()?;
    s.destroy_ctx(c);
    if state::stack_top() == Some(c) {
        state::stack_pop();
    }
    drop(s);
    export_table::context_gone(c);
    Ok(())
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn ctx_pop(pctx: *mut Handle) -> Result<(), CUresult> {
    let _s = state::init_lock()?;
    let c = state::stack_pop().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    if !pctx.is_null() {
        put(pctx, handle(c))?;
    }
    Ok(())
}

fn stream_destroy(st: u64) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    match s.objects.get(&st) {
        Some(Obj::Stream(_)) => {
            s.objects.remove(&st);
            drop(s);
            stream::destroyed(st);
            Ok(())
        }
        _ => Err(CUDA_ERROR_INVALID_HANDLE),
    }
}

fn event_destroy(e: u64) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    s.event_mut(e)?;
    s.objects.remove(&e);
    stream::event_destroyed(e);
    Ok(())
}

fn module_unload(m: u64) -> Result<(), CUresult> {
    let mut s = state::init_lock()?;
    let loaded = s.module(m)?;
    s.objects.remove(&m);
    s.objects.retain(|_, o| match o {
        Obj::Func(f) => !Arc::ptr_eq(&f.module, &loaded),
        _ => true,
    });
    Ok(())
}

/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn param_info(
    f: u64,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> Result<(), CUresult> {
    let f = state::init_lock()?.func(f)?;
    let &(o, n) = f.layout.get(index).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if !offset.is_null() {
        put(offset, o as usize)?;
    }
    if !size.is_null() {
        put(size, n as usize)?;
    }
    Ok(())
}

/// `cuOccupancyMaxPotentialBlockSize`: the block size (a multiple of 32) with the most resident
/// threads per multiprocessor, and the grid that fills every multiprocessor with it.
/// # Safety
/// Pointer arguments come from the driver API's caller: NULL or valid for what this reads or
/// writes through them, as the export that calls it documents; device ranges are checked.
unsafe fn potential_block_size(
    min_grid: *mut c_int,
    block: *mut c_int,
    func: u64,
    to_smem: Option<unsafe extern "C" fn(c_int) -> usize>,
    dynamic: usize,
    limit: c_int,
) -> Result<(), CUresult> {
    let f = state::init_lock()?.func(func)?;
    if min_grid.is_null() || block.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let max = f.resources.max_threads.unwrap_or(1024).min(1024) as c_int;
    let max = if limit > 0 { max.min(limit) } else { max };
    let mut best = (0, 32.min(max.max(1)));
    let mut b = max - max % 32;
    while b >= 32 {
        let smem = match to_smem {
            // SAFETY: the host's callback, called as the driver API specifies (block size in,
            // dynamic shared bytes out), with no lock held.
            Some(g) => unsafe { g(b) },
            None => dynamic,
        };
        let occ = occupancy(&f, b, smem) * b;
        if occ > best.0 {
            best = (occ, b);
        }
        b -= 32;
    }
    put(min_grid, (best.0 / best.1.max(1)).max(1) * cores())?;
    put(block, best.1)
}

/// Advice, prefetches and stream attachment of managed memory: checked, then nothing to do
/// (host and kernels share the memory).
fn managed_hint(dptr: u64, count: usize, stream: u64) -> Result<(), CUresult> {
    let s = state::init_lock()?;
    s.stream_ctx(stream)?;
    s.check_range(dptr, count as u64)
}
