//! `cuGetExportTable`: the driver's private tables, which the CUDA Runtime (cudart, static or
//! shared) asks for by UUID before its first call does anything.
//!
//! A table is an array of words: most start with their own size in bytes, then function
//! pointers that cudart calls through C; a slot nobody documents is a function that answers
//! `CUDA_ERROR_NOT_SUPPORTED` and, under `PTXVM_TRACE`, names its table and index. Every call
//! through a table is traced like an export (`[ptxvm] {UUID}[slot] table.name(args) = result`).
//! The layouts are NVIDIA's and private; what each slot takes and does was learnt from ZLUDA's
//! `dark_api` notes and checked against what cudart 12.9 and 13.5, static and shared, call
//! (the programs of `tests/cudart`, run with `--trace`). The implementation is ours:
//!
//! - `cudart` (`6bd5fb6c-…`): slot 2, the device's primary context (created if need be, not
//!   retained: cudart retains it itself); slot 12, load the JIT compilers (nothing to load).
//!   Slots 1, 6 and 8 make a module from a registered `__fatBinC_Wrapper_t` or a bare fatbin
//!   in the current context (PTX picked as `cuModuleLoadFatBinary` does; SASS only is
//!   `CUDA_ERROR_NO_BINARY_FOR_GPU` with the one-line hint); cudart 12.9 and 13 load their
//!   fatbins with `cuLibraryLoadData` instead, so these serve older runtimes. Slot 7 is a
//!   notification, a no-op;
//! - `context storage` (`c693336e-…`, no size word): a value per (context, key) in which
//!   cudart keeps its per-context state, the destructor called when the context is destroyed
//!   or reset (cudart starts again after `cudaDeviceReset`);
//! - `integrity` (`d4082055-…`): the keyed checksum cudart computes too and compares
//!   ([`integrity_hash`]; a wrong one is `cudaErrorSoftwareValidityNotEstablished`);
//! - `tools hooks` (`a094798c-…`): two zeroed buffers a profiler would fill;
//! - `context checks` (`263e8860-…`): no context is ever flagged;
//! - `runtime 13` (`21318c60-…`, 95 words): cudart 13 refuses to start without it but calls
//!   none of its slots;
//! - `tools TLS`, `context bypass`, `heap`, `device extended`: sized tables whose slots answer
//!   as a driver without the feature does (cudart asks for `tools TLS` and calls nothing).
//!
//! An unknown UUID is `CUDA_ERROR_INVALID_VALUE` (as the driver answers), traced with its
//! UUID: cudart asks for `{f8cff951-2146-8b4e-b9e2-fb469e7c0dd9}` first and goes on without.

use super::*;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::AtomicU32;

api! {
    fn cuGetExportTable(table: *mut *const c_void, id: *const [u8; 16]) {
        if table.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let uuid = get(id)?;
        let found = TABLES.iter().position(|t| t.uuid == uuid);
        if state::settings().trace {
            let name = found.map_or("unknown table", |k| TABLES[k].name);
            eprintln!("[ptxvm] cuGetExportTable {} ({name})", uuid_text(&uuid));
        }
        match found {
            Some(k) => put(table, TABLES[k].start()),
            None => {
                put(table, std::ptr::null())?;
                Err(CUDA_ERROR_INVALID_VALUE)
            }
        }
    }
}

/// `{6bd5fb6c-5bf4-e74a-8987-d93912fd9df9}`: UUID bytes in the order the caller passes them.
fn uuid_text(u: &[u8; 16]) -> String {
    let hex =
        |r: std::ops::Range<usize>| u[r].iter().map(|b| format!("{b:02x}")).collect::<String>();
    format!(
        "{{{}-{}-{}-{}-{}}}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// One private table: its UUID, a name for traces, and its words.
pub(crate) struct Table {
    pub uuid: [u8; 16],
    pub name: &'static str,
    words: &'static [Word],
}

impl Table {
    fn start(&self) -> *const c_void {
        self.words.as_ptr().cast()
    }
}

/// A word of a table: a size or a function's address, read by C only.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Word(*const c_void);

// SAFETY: a table is immutable after it is built (a size or a function's address per word), so
// sharing it between threads reads constants only.
unsafe impl Sync for Word {}

const fn size(words: usize) -> Word {
    Word(std::ptr::without_provenance(
        words * std::mem::size_of::<usize>(),
    ))
}

/// Index of each table in [`TABLES`] (the `T` of [`unknown`]).
const CUDART: usize = 0;
const TOOLS_TLS: usize = 1;
const TOOLS_HOOKS: usize = 2;
const CONTEXT_STORAGE: usize = 3;
const CONTEXT_BYPASS: usize = 4;
const HEAP: usize = 5;
const DEVICE_EXTENDED: usize = 6;
const INTEGRITY: usize = 7;
const CONTEXT_CHECKS: usize = 8;
const RUNTIME_13: usize = 9;

/// The tables, by UUID.
pub(crate) static TABLES: [Table; 10] = [
    Table {
        uuid: [
            0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd,
            0x9d, 0xf9,
        ],
        name: "cudart",
        words: &CUDART_WORDS,
    },
    Table {
        uuid: [
            0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a,
            0xec, 0xdc,
        ],
        name: "tools TLS",
        words: &TOOLS_TLS_WORDS,
    },
    Table {
        uuid: [
            0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c,
            0x0a, 0x66,
        ],
        name: "tools hooks",
        words: &TOOLS_HOOKS_WORDS,
    },
    Table {
        uuid: [
            0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8,
            0x95, 0x93,
        ],
        name: "context storage",
        words: &CONTEXT_STORAGE_WORDS,
    },
    Table {
        uuid: [
            0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7,
            0x72, 0x86,
        ],
        name: "context bypass",
        words: &CONTEXT_BYPASS_WORDS,
    },
    Table {
        uuid: [
            0x19, 0x5b, 0xcb, 0xf4, 0xd6, 0x7d, 0x02, 0x4a, 0xac, 0xc5, 0x1d, 0x29, 0xce, 0xa6,
            0x31, 0xae,
        ],
        name: "heap",
        words: &HEAP_WORDS,
    },
    Table {
        uuid: [
            0xb1, 0x05, 0x41, 0xe1, 0xf7, 0xc7, 0xc7, 0x4a, 0x9f, 0x64, 0xf2, 0x23, 0xbe, 0x99,
            0xf1, 0xe2,
        ],
        name: "device extended",
        words: &DEVICE_EXTENDED_WORDS,
    },
    Table {
        uuid: [
            0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66,
            0xe1, 0xf2,
        ],
        name: "integrity",
        words: &INTEGRITY_WORDS,
    },
    Table {
        uuid: [
            0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d,
            0xfa, 0x7e,
        ],
        name: "context checks",
        words: &CONTEXT_CHECKS_WORDS,
    },
    Table {
        uuid: [
            0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24,
            0xc8, 0xf2,
        ],
        name: "runtime 13",
        words: &RUNTIME_13_WORDS,
    },
];

/// A slot nobody has described: `CUDA_ERROR_NOT_SUPPORTED`, traced with its table and index.
/// The C calling convention lets it ignore whatever arguments the caller passes.
extern "C" fn unknown<const T: usize, const S: usize>() -> CUresult {
    if state::settings().trace {
        let t = &TABLES[T];
        eprintln!(
            "[ptxvm] {}[{S}] {}.slot{S}(?) = CUDA_ERROR_NOT_SUPPORTED (an undocumented private slot)",
            uuid_text(&t.uuid),
            t.name
        );
    }
    CUDA_ERROR_NOT_SUPPORTED
}

/// `N` words, each slot the [`unknown`] function of table `T` (the first word is the table's
/// size when `sized`); the caller then fills in the slots it knows.
const fn unknowns<const T: usize, const N: usize>(sized: bool) -> [Word; N] {
    macro_rules! all {
        ($($k:literal)*) => { [$(Word(unknown::<T, $k> as *const c_void)),*] };
    }
    let all =
        all!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
    let mut words = [Word(std::ptr::null()); N];
    let mut k = 0;
    while k < N {
        words[k] = all[k];
        k += 1;
    }
    if sized {
        words[0] = size(N);
    }
    words
}

/// [`unknowns`] for the one table longer than 32 words.
const fn unknowns_95<const T: usize>() -> [Word; 95] {
    macro_rules! all {
        ($($k:literal)*) => { [$(Word(unknown::<T, $k> as *const c_void)),*] };
    }
    let mut words = all!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61
        62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91
        92 93 94
    );
    words[0] = size(95);
    words
}

macro_rules! slot {
    ($f:expr) => {
        Word($f as *const c_void)
    };
}

static CUDART_WORDS: [Word; 13] = {
    let mut w = unknowns::<CUDART, 13>(true);
    w[1] = slot!(module_from_wrapper as unsafe extern "C" fn(_, _) -> _);
    w[2] = slot!(primary_context as unsafe extern "C" fn(_, _) -> _);
    w[6] = slot!(module_from_wrapper_ext as unsafe extern "C" fn(_, _, _, _, _) -> _);
    w[7] = slot!(hook_7 as extern "C" fn(_));
    w[8] = slot!(module_from_fatbin_ext as unsafe extern "C" fn(_, _, _, _, _) -> _);
    w[12] = slot!(load_compilers as extern "C" fn() -> _);
    w
};

static TOOLS_TLS_WORDS: [Word; 4] = unknowns::<TOOLS_TLS, 4>(true);

static TOOLS_HOOKS_WORDS: [Word; 7] = {
    let mut w = unknowns::<TOOLS_HOOKS, 7>(true);
    w[2] = slot!(tools_buffer_2 as unsafe extern "C" fn(_, _));
    w[6] = slot!(tools_buffer_6 as unsafe extern "C" fn(_, _));
    w
};

static CONTEXT_STORAGE_WORDS: [Word; 4] = {
    let mut w = unknowns::<CONTEXT_STORAGE, 4>(false);
    w[0] = slot!(storage_put as unsafe extern "C" fn(_, _, _, _) -> _);
    w[1] = slot!(storage_delete as unsafe extern "C" fn(_, _) -> _);
    w[2] = slot!(storage_get as unsafe extern "C" fn(_, _, _) -> _);
    w
};

static CONTEXT_BYPASS_WORDS: [Word; 2] = unknowns::<CONTEXT_BYPASS, 2>(true);

static HEAP_WORDS: [Word; 3] = unknowns::<HEAP, 3>(true);

static DEVICE_EXTENDED_WORDS: [Word; 26] = unknowns::<DEVICE_EXTENDED, 26>(true);

static INTEGRITY_WORDS: [Word; 3] = {
    let mut w = unknowns::<INTEGRITY, 3>(true);
    w[1] = slot!(integrity_check as unsafe extern "C" fn(_, _, _) -> _);
    w
};

static RUNTIME_13_WORDS: [Word; 95] = unknowns_95::<RUNTIME_13>();

static CONTEXT_CHECKS_WORDS: [Word; 4] = {
    let mut w = unknowns::<CONTEXT_CHECKS, 4>(true);
    w[2] = slot!(context_check as unsafe extern "C" fn(_, _, _) -> _);
    w[3] = slot!(context_flags as extern "C" fn() -> _);
    w
};

/// Runs slot `slot` of table `t` under [`crate::guard`] (no panic crosses into C) and traces it
/// like an export.
fn call(
    t: usize,
    slot: usize,
    name: &str,
    args: &[(&str, &dyn Debug)],
    body: impl FnOnce() -> Result<(), CUresult>,
) -> CUresult {
    let r = crate::guard(body);
    if state::settings().trace {
        let table = &TABLES[t];
        let what = format!("{}[{slot}] {}.{name}", uuid_text(&table.uuid), table.name);
        trace(&what, args, r);
    }
    r
}

// --- cudart: modules and the primary context -------------------------------------------------

/// cudart slot 1: a module from a registered `__fatBinC_Wrapper_t`, in the current context.
///
/// # Safety
/// `module` is NULL or writable; `wrapper` is NULL or a wrapper cudart registered (its fatbin
/// readable for the size its header gives).
unsafe extern "C" fn module_from_wrapper(module: *mut Handle, wrapper: *const c_void) -> CUresult {
    call(
        CUDART,
        1,
        "module_from_wrapper",
        &[("module", &module), ("wrapper", &wrapper)],
        || {
            // SAFETY: forwarded under this function's contract.
            unsafe { load_registered(module, wrapper) }
        },
    )
}

/// cudart slot 6: [`module_from_wrapper`] with three more arguments (seen NULL, NULL, 0; what
/// else they may carry is not known, so anything else is refused).
///
/// # Safety
/// As for [`module_from_wrapper`]; the other arguments are not dereferenced.
unsafe extern "C" fn module_from_wrapper_ext(
    module: *mut Handle,
    wrapper: *const c_void,
    a: *mut c_void,
    b: *mut c_void,
    c: c_uint,
) -> CUresult {
    let args: [(&str, &dyn Debug); 5] = [
        ("module", &module),
        ("wrapper", &wrapper),
        ("a", &a),
        ("b", &b),
        ("c", &c),
    ];
    call(CUDART, 6, "module_from_wrapper_ext", &args, || {
        if !a.is_null() || !b.is_null() || c != 0 {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        // SAFETY: forwarded under this function's contract.
        unsafe { load_registered(module, wrapper) }
    })
}

/// cudart slot 8: a module from a bare fatbin (its header first), the output second.
///
/// # Safety
/// As for [`module_from_wrapper`], `fatbin` pointing at a fatbin header.
unsafe extern "C" fn module_from_fatbin_ext(
    fatbin: *const c_void,
    module: *mut Handle,
    a: *mut c_void,
    b: *mut c_void,
    c: c_uint,
) -> CUresult {
    let args: [(&str, &dyn Debug); 5] = [
        ("fatbin", &fatbin),
        ("module", &module),
        ("a", &a),
        ("b", &b),
        ("c", &c),
    ];
    call(CUDART, 8, "module_from_fatbin_ext", &args, || {
        if !a.is_null() || !b.is_null() || c != 0 {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        // SAFETY: forwarded under this function's contract.
        unsafe { load_registered(module, fatbin) }
    })
}

/// Loads the wrapper or fatbin at `image` into the current context; only a wrapper or a
/// fatbin is accepted (cudart registers nothing else).
///
/// # Safety
/// `module` is NULL or writable; `image` is NULL or a wrapper or fatbin readable as its
/// header describes.
unsafe fn load_registered(module: *mut Handle, image: *const c_void) -> Result<(), CUresult> {
    if module.is_null() || image.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `image` is non-null and, by the contract, at least a header's 8 bytes long.
    let head = unsafe { bytes(image, 8)? };
    if !matches!(image::classify(&head), Kind::Wrapper | Kind::Fatbin) {
        return Err(CUDA_ERROR_INVALID_IMAGE);
    }
    // SAFETY: as above; `load_image` reads the header's sizes and no further.
    let m = unsafe { load_image(image, "<cudart fatbin>", None, Owner::Current)? };
    // SAFETY: `module` is non-null and writable by the contract.
    unsafe { put(module, handle(m)) }
}

/// cudart slot 2: the device's primary context, created if need be but not retained (cudart
/// retains it itself when it makes it current).
///
/// # Safety
/// `pctx` is NULL or writable.
unsafe extern "C" fn primary_context(pctx: *mut Handle, dev: CUdevice) -> CUresult {
    call(
        CUDART,
        2,
        "primary_context",
        &[("pctx", &pctx), ("dev", &dev)],
        || {
            let mut s = state::init_lock()?;
            check_device(dev)?;
            if pctx.is_null() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let c = s.primary_ctx();
            // SAFETY: `pctx` is non-null and writable by the contract.
            unsafe { put(pctx, handle(c)) }
        },
    )
}

/// cudart slot 7: a notification taking one word; nothing to do.
extern "C" fn hook_7(arg: usize) {
    call(CUDART, 7, "hook", &[("arg", &arg)], || Ok(()));
}

/// cudart slot 12: load the JIT compilers (ptxas, NVVM); ptxvm needs none.
extern "C" fn load_compilers() -> CUresult {
    call(CUDART, 12, "load_compilers", &[], || Ok(()))
}

// --- tools hooks ----------------------------------------------------------------------------

/// A zeroed buffer that tools (profilers) would fill; cudart only reads it.
struct Buffer<const N: usize>([AtomicU32; N]);

static TOOLS_BUFFER_2: Buffer<1024> = Buffer([const { AtomicU32::new(0) }; 1024]);
static TOOLS_BUFFER_6: Buffer<14> = Buffer([const { AtomicU32::new(0) }; 14]);

/// # Safety
/// Each pointer is NULL or writable.
unsafe fn give_buffer<const N: usize>(
    b: &'static Buffer<N>,
    ptr: *mut *mut c_void,
    len: *mut usize,
) -> Result<(), CUresult> {
    if ptr.is_null() || len.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: both non-null and writable by the contract. The buffer's words are atomics
    // (interior mutability), so a write through the address handed out is no data race.
    unsafe {
        put(ptr, b.0.as_ptr() as *mut c_void)?;
        put(len, N)
    }
}

/// Tools hooks slot 2: a 1024-word buffer and its length.
///
/// # Safety
/// Each pointer is NULL or writable.
unsafe extern "C" fn tools_buffer_2(ptr: *mut *mut c_void, len: *mut usize) {
    call(
        TOOLS_HOOKS,
        2,
        "buffer",
        &[("ptr", &ptr), ("len", &len)],
        || {
            // SAFETY: forwarded under this function's contract.
            unsafe { give_buffer(&TOOLS_BUFFER_2, ptr, len) }
        },
    );
}

/// Tools hooks slot 6: a 14-word buffer and its length.
///
/// # Safety
/// Each pointer is NULL or writable.
unsafe extern "C" fn tools_buffer_6(ptr: *mut *mut c_void, len: *mut usize) {
    call(
        TOOLS_HOOKS,
        6,
        "buffer",
        &[("ptr", &ptr), ("len", &len)],
        || {
            // SAFETY: forwarded under this function's contract.
            unsafe { give_buffer(&TOOLS_BUFFER_6, ptr, len) }
        },
    );
}

// --- context-local storage ------------------------------------------------------------------

/// What cudart stores per context: a value, and the function to call when the context goes.
type Destructor = unsafe extern "C" fn(Handle, *mut c_void, *mut c_void);

#[derive(Clone, Copy)]
struct Stored {
    value: usize,
    destructor: Option<Destructor>,
}

/// (context, key) → what was stored.
static STORAGE: LazyLock<Mutex<HashMap<(u64, usize), Stored>>> = LazyLock::new(Default::default);

use std::sync::LazyLock;

fn storage() -> std::sync::MutexGuard<'static, HashMap<(u64, usize), Stored>> {
    STORAGE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The context a storage call names: `ctx`, or the current one when NULL.
fn storage_ctx(ctx: Handle) -> Result<u64, CUresult> {
    let s = state::init_lock()?;
    if ctx.is_null() {
        return s.current();
    }
    s.ctx(h(ctx))?;
    Ok(h(ctx))
}

/// Context storage slot 0: stores `value` under `key` for `ctx` (NULL: the current context).
///
/// # Safety
/// `destructor` is NULL or a function cudart keeps loaded while the context lives.
unsafe extern "C" fn storage_put(
    ctx: Handle,
    key: *mut c_void,
    value: *mut c_void,
    destructor: Option<Destructor>,
) -> CUresult {
    let d = destructor.map(|f| f as *const c_void);
    let args: [(&str, &dyn Debug); 4] = [
        ("ctx", &ctx),
        ("key", &key),
        ("value", &value),
        ("destructor", &d),
    ];
    call(CONTEXT_STORAGE, 0, "put", &args, || {
        let c = storage_ctx(ctx)?;
        let stored = Stored {
            value: value as usize,
            destructor,
        };
        storage().insert((c, key as usize), stored);
        Ok(())
    })
}

/// Context storage slot 1: forgets `key` of `ctx` (its destructor is not called).
extern "C" fn storage_delete(ctx: Handle, key: *mut c_void) -> CUresult {
    call(
        CONTEXT_STORAGE,
        1,
        "delete",
        &[("ctx", &ctx), ("key", &key)],
        || {
            let c = storage_ctx(ctx)?;
            storage().remove(&(c, key as usize));
            Ok(())
        },
    )
}

/// Context storage slot 2: the value stored under `key` for `ctx`; `CUDA_ERROR_INVALID_HANDLE`
/// when there is none.
///
/// # Safety
/// `value` is NULL or writable.
unsafe extern "C" fn storage_get(
    value: *mut *mut c_void,
    ctx: Handle,
    key: *mut c_void,
) -> CUresult {
    let args: [(&str, &dyn Debug); 3] = [("value", &value), ("ctx", &ctx), ("key", &key)];
    call(CONTEXT_STORAGE, 2, "get", &args, || {
        if value.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let c = storage_ctx(ctx)?;
        let v = storage()
            .get(&(c, key as usize))
            .map(|s| s.value)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        // SAFETY: `value` is non-null and writable by the contract.
        unsafe { put(value, v as *mut c_void) }
    })
}

/// Called when context `ctx` is destroyed or reset, with no driver lock held: each value
/// stored for it is forgotten and its destructor called (cudart frees its per-context state
/// there, and may call the driver).
pub(crate) fn context_gone(ctx: u64) {
    let gone: Vec<(usize, Stored)> = {
        let mut s = storage();
        let keys: Vec<(u64, usize)> = s.keys().filter(|k| k.0 == ctx).copied().collect();
        keys.into_iter()
            .filter_map(|k| s.remove(&k).map(|v| (k.1, v)))
            .collect()
    };
    for (key, stored) in gone {
        if let Some(d) = stored.destructor {
            // SAFETY: the destructor cudart registered with the value, called with the
            // context, the key and the value as it expects, outside every lock of ours.
            unsafe { d(handle(ctx), key as *mut c_void, stored.value as *mut c_void) };
        }
    }
}

// --- integrity ------------------------------------------------------------------------------

/// Integrity slot 1: the keyed checksum of this driver and process that cudart computes too
/// and compares (a mismatch makes it refuse to run). `result` receives 16 bytes.
///
/// # Safety
/// `result` is NULL or 16 writable bytes.
unsafe extern "C" fn integrity_check(
    version: c_uint,
    unix_seconds: u64,
    result: *mut [u8; 16],
) -> CUresult {
    let args: [(&str, &dyn Debug); 3] = [
        ("version", &version),
        ("time", &unix_seconds),
        ("result", &result),
    ];
    call(INTEGRITY, 1, "check", &args, || {
        if result.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let facts = Facts {
            driver_version: DRIVER_VERSION as u32,
            version,
            process: std::process::id(),
            // SAFETY: pthread_self has no preconditions.
            thread: unsafe { libc::pthread_self() } as u32,
            cudart_table: TABLES[CUDART].start() as u64,
            integrity_table: TABLES[INTEGRITY].start() as u64,
            function: INTEGRITY_WORDS[1].0 as u64,
            unix_seconds,
            // the one device: its UUID and PCI domain, bus and device, as the driver reports them
            devices: vec![(
                DEVICE_UUID,
                ["PCI_DOMAIN_ID", "PCI_BUS_ID", "PCI_DEVICE_ID"].map(device_attribute),
            )],
        };
        // SAFETY: `result` is non-null and 16 writable bytes by the contract.
        unsafe { put(result, integrity_hash(&facts)) }
    })
}

/// What the integrity checksum covers.
pub(crate) struct Facts {
    pub driver_version: u32,
    /// What cudart passed (its own version; the last decimal digit selects the scheme).
    pub version: u32,
    pub process: u32,
    /// The calling thread's `pthread_self()`, truncated to 32 bits.
    pub thread: u32,
    /// The addresses of the cudart table, of the integrity table and of its slot 1.
    pub cudart_table: u64,
    pub integrity_table: u64,
    pub function: u64,
    pub unix_seconds: u64,
    /// Per device: UUID and PCI domain, bus and device.
    pub devices: Vec<([u8; 16], [i32; 3])>,
}

/// The integrity checksum: HMAC (RFC 2104) over MD2 (RFC 1319, 16-byte blocks) with a fixed
/// key, of the facts laid out as a C struct (driver version, version, process, thread as u32;
/// the three addresses and the time as u64) followed by each device's UUID and PCI numbers
/// (i32). Versions ending in 0 or 1 use fixed answers instead.
pub(crate) fn integrity_hash(f: &Facts) -> [u8; 16] {
    const KEY: [u8; 16] = [
        0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52, 0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a,
        0x9f,
    ];
    let fixed = |a: u64, b: u64| {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&a.to_le_bytes());
        out[8..].copy_from_slice(&b.to_le_bytes());
        out
    };
    match f.version % 10 {
        0 => return fixed(0x3341_181c_03cb_675c, 0x8ed3_83aa_1f4c_d1e8),
        1 => return fixed(0x1841_181c_03cb_675c, 0x8ed3_83aa_1f4c_d1e8),
        _ => {}
    }
    let mut message = Vec::with_capacity(48 + 28 * f.devices.len());
    for w in [f.driver_version, f.version, f.process, f.thread] {
        message.extend_from_slice(&w.to_le_bytes());
    }
    for w in [
        f.cudart_table,
        f.integrity_table,
        f.function,
        f.unix_seconds,
    ] {
        message.extend_from_slice(&w.to_le_bytes());
    }
    for (uuid, pci) in &f.devices {
        message.extend_from_slice(uuid);
        for n in pci {
            message.extend_from_slice(&n.to_le_bytes());
        }
    }
    let mut inner = Md2::new();
    inner.update(&KEY.map(|b| b ^ 0x36));
    inner.update(&message);
    let inner = inner.digest();
    let mut outer = Md2::new();
    outer.update(&KEY.map(|b| b ^ 0x5c));
    outer.update(&inner);
    outer.digest()
}

/// The MD2 message digest (RFC 1319).
pub(crate) struct Md2 {
    /// The 48-byte state: the digest so far, the block, and their exclusive or.
    x: [u8; 48],
    checksum: [u8; 16],
    block: [u8; 16],
    filled: usize,
}

impl Md2 {
    /// RFC 1319's permutation of 0..=255 (from the digits of pi).
    const S: [u8; 256] = [
        41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6, 19, 98, 167, 5, 243, 192,
        199, 115, 140, 152, 147, 43, 217, 188, 76, 130, 202, 30, 155, 87, 60, 253, 212, 224, 22,
        103, 66, 111, 24, 138, 23, 229, 18, 190, 78, 196, 214, 218, 158, 222, 73, 160, 251, 245,
        142, 187, 47, 238, 122, 169, 104, 121, 145, 21, 178, 7, 63, 148, 194, 16, 137, 11, 34, 95,
        33, 128, 127, 93, 154, 90, 144, 50, 39, 53, 62, 204, 231, 191, 247, 151, 3, 255, 25, 48,
        179, 72, 165, 181, 209, 215, 94, 146, 42, 172, 86, 170, 198, 79, 184, 56, 210, 150, 164,
        125, 182, 118, 252, 107, 226, 156, 116, 4, 241, 69, 157, 112, 89, 100, 113, 135, 32, 134,
        91, 207, 101, 230, 45, 168, 2, 27, 96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52,
        64, 126, 15, 85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197, 234, 38, 44,
        83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65, 129, 77, 82, 106, 220, 55, 200, 108,
        193, 171, 250, 36, 225, 123, 8, 12, 189, 177, 74, 120, 136, 149, 139, 227, 99, 232, 109,
        233, 203, 213, 254, 59, 0, 29, 57, 242, 239, 183, 14, 102, 88, 208, 228, 166, 119, 114,
        248, 235, 117, 75, 10, 49, 68, 80, 180, 143, 237, 31, 26, 219, 153, 141, 51, 159, 17, 131,
        20,
    ];

    pub(crate) fn new() -> Md2 {
        Md2 {
            x: [0; 48],
            checksum: [0; 16],
            block: [0; 16],
            filled: 0,
        }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        for &b in data {
            self.block[self.filled] = b;
            self.filled += 1;
            if self.filled == 16 {
                self.compress();
                self.filled = 0;
            }
        }
    }

    /// One 16-byte block: the checksum, then 18 rounds over the state.
    fn compress(&mut self) {
        let mut last = self.checksum[15];
        for j in 0..16 {
            self.checksum[j] ^= Self::S[(self.block[j] ^ last) as usize];
            last = self.checksum[j];
        }
        for j in 0..16 {
            self.x[16 + j] = self.block[j];
            self.x[32 + j] = self.block[j] ^ self.x[j];
        }
        let mut t = 0u8;
        for round in 0..18u8 {
            for v in self.x.iter_mut() {
                *v ^= Self::S[t as usize];
                t = *v;
            }
            t = t.wrapping_add(round);
        }
    }

    pub(crate) fn digest(mut self) -> [u8; 16] {
        let pad = 16 - self.filled;
        self.update(&vec![pad as u8; pad]);
        let checksum = self.checksum;
        self.update(&checksum);
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.x[..16]);
        out
    }
}

// --- context checks -------------------------------------------------------------------------

/// Context checks slot 2: flags of context `ctx` (NULL: the current one); none is ever set
/// here.
///
/// # Safety
/// `flags` is NULL or writable; `other` is not used.
unsafe extern "C" fn context_check(
    ctx: Handle,
    flags: *mut u32,
    other: *mut *const c_void,
) -> CUresult {
    let args: [(&str, &dyn Debug); 3] = [("ctx", &ctx), ("flags", &flags), ("other", &other)];
    call(CONTEXT_CHECKS, 2, "check", &args, || {
        if flags.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        storage_ctx(ctx)?;
        // SAFETY: `flags` is non-null and writable by the contract.
        unsafe { put(flags, 0) }
    })
}

/// Context checks slot 3: a word of flags; 0.
extern "C" fn context_flags() -> u32 {
    call(CONTEXT_CHECKS, 3, "flags", &[], || Ok(()));
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn md2(data: &[u8]) -> String {
        let mut m = Md2::new();
        m.update(data);
        hex(&m.digest())
    }

    #[test]
    fn md2_gives_the_digests_of_rfc_1319() {
        assert_eq!(md2(b""), "8350e5a3e24c153df2275c9f80692773");
        assert_eq!(md2(b"a"), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
        assert_eq!(md2(b"abc"), "da853b0d3f88d99b30283a69e6ded6bb");
        assert_eq!(md2(b"message digest"), "ab4f496bfb2a530b219ff33031fe06b0");
        assert_eq!(
            md2(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
            ),
            "d5976f79d83d3a0dc9806c3c66f3efd8"
        );
    }

    #[test]
    fn the_integrity_answer_depends_on_every_fact_and_is_fixed_for_versions_ending_0_or_1() {
        let facts = |version, thread| Facts {
            driver_version: 13050,
            version,
            process: 42,
            thread,
            cudart_table: 0x1000,
            integrity_table: 0x2000,
            function: 0x3000,
            unix_seconds: 1_800_000_000,
            devices: vec![(DEVICE_UUID, [0, 0, 0])],
        };
        let a = integrity_hash(&facts(13052, 7));
        assert_ne!(a, integrity_hash(&facts(13052, 8)));
        assert_ne!(a, integrity_hash(&facts(13062, 7)));
        assert_eq!(a, integrity_hash(&facts(13052, 7)));
        // the fixed answers, as cudart expects them
        assert_eq!(
            hex(&integrity_hash(&facts(13050, 7))[..8]),
            "5c67cb031c184133"
        );
        assert_eq!(
            integrity_hash(&facts(13051, 1)),
            integrity_hash(&facts(13061, 2))
        );
    }

    #[test]
    fn uuids_print_as_cudart_names_them() {
        assert_eq!(
            uuid_text(&TABLES[CUDART].uuid),
            "{6bd5fb6c-5bf4-e74a-8987-d93912fd9df9}"
        );
        assert_eq!(
            uuid_text(&TABLES[TOOLS_HOOKS].uuid),
            "{a094798c-2e74-2e74-93f2-0800200c0a66}"
        );
    }
}
