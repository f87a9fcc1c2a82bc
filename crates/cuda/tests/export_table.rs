//! The private tables of `cuGetExportTable`, called as cudart calls them, without nvcc or
//! cudart: the registration cudart 13 performs (tables, integrity check, a library from the
//! fatbin wrapper before any context exists, kernels, `__device__`/`__constant__`/`__managed__`
//! variables, context storage, a launch) on the committed `tests/fatbin/registration.fatbin`;
//! the module slots of the `cudart` table; and every slot of every table called with NULL and
//! garbage arguments, which must answer an error (or nothing, for the slots returning none),
//! never crash.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::path::Path;
use std::sync::Mutex;

const SUCCESS: u32 = 0;
const INVALID_VALUE: u32 = 1;
const NO_BINARY_FOR_GPU: u32 = 209;
const INVALID_HANDLE: u32 = 400;
const NOT_FOUND: u32 = 500;
const NOT_SUPPORTED: u32 = 801;

/// The tables served: UUID, length in words, whether word 0 is the size.
const TABLES: &[([u8; 16], usize, bool)] = &[
    (uuid("6bd5fb6c5bf4e74a8987d93912fd9df9"), 13, true), // cudart
    (uuid("42d85a8123f6cb478298f6e78a3aecdc"), 4, true),  // tools TLS
    (uuid("a094798c2e742e7493f20800200c0a66"), 7, true),  // tools hooks
    (uuid("c693336e1121df11a8c368f355d89593"), 4, false), // context storage
    (uuid("0ca50b8c1004929a89a7d0df10e77286"), 2, true),  // context bypass
    (uuid("195bcbf4d67d024aacc51d29cea631ae"), 3, true),  // heap
    (uuid("b10541e1f7c7c74a9f64f223be99f1e2"), 26, true), // device extended
    (uuid("d4082055bde6704b8d34ba123c66e1f2"), 3, true),  // integrity
    (uuid("263e88607cd2614392f6bbd5006dfa7e"), 4, true),  // context checks
    (uuid("21318c60971432488ca641ff7324c8f2"), 95, true), // runtime 13
];

const CUDART: usize = 0;
const TOOLS_HOOKS: usize = 2;
const CONTEXT_STORAGE: usize = 3;
const INTEGRITY: usize = 7;
const CONTEXT_CHECKS: usize = 8;

const fn uuid(hex: &str) -> [u8; 16] {
    const fn digit(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            _ => c - b'a' + 10,
        }
    }
    let h = hex.as_bytes();
    let mut out = [0u8; 16];
    let mut k = 0;
    while k < 16 {
        out[k] = digit(h[2 * k]) * 16 + digit(h[2 * k + 1]);
        k += 1;
    }
    out
}

/// The tests share the driver's one state (contexts, the current context of a thread): one at
/// a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The words of table `k` (looked up by UUID).
fn table(k: usize) -> &'static [*const c_void] {
    let (id, len, _) = TABLES[k];
    let mut t: *const c_void = std::ptr::null();
    // SAFETY: out-pointer to a local, a 16-byte UUID.
    assert_eq!(unsafe { cuda::cuGetExportTable(&mut t, &id) }, SUCCESS);
    assert!(!t.is_null());
    // SAFETY: the driver's tables are static arrays of `len` words.
    unsafe { std::slice::from_raw_parts(t.cast::<*const c_void>(), len) }
}

/// Slot `s` of table `k` as a C function of five word-sized arguments returning a `CUresult`.
/// The x86-64 and AArch64 C conventions pass them in registers and let a callee ignore those it
/// does not take, as cudart's calls rely on; for a slot returning nothing the result is noise.
fn slot(k: usize, s: usize) -> unsafe extern "C" fn(usize, usize, usize, usize, usize) -> u32 {
    let p = table(k)[s];
    assert!(!p.is_null(), "table {k} slot {s} is NULL");
    // SAFETY: every slot past a size word is the address of an `extern "C"` function.
    unsafe { std::mem::transmute::<*const c_void, _>(p) }
}

fn init() {
    // SAFETY: cuInit has no pointer arguments.
    assert_eq!(unsafe { cuda::cuInit(0) }, SUCCESS);
}

/// `data` behind a `__fatBinC_Wrapper_t` { magic, version, data, filename }.
#[repr(C)]
struct Wrapper {
    magic: u32,
    version: u32,
    data: *const u8,
    filename: *const c_void,
}

fn wrapper(data: &[u8]) -> Wrapper {
    Wrapper {
        magic: 0x4662_43b1,
        version: 1,
        data: data.as_ptr(),
        filename: std::ptr::null(),
    }
}

/// A fatbin file of tests/fatbin, 8-byte aligned as nvcc places them.
fn fatbin(name: &str) -> Vec<u64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fatbin")
        .join(name);
    let bytes = std::fs::read(&path).expect("fatbin");
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    // SAFETY: `words` holds at least `bytes.len()` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr().cast(), bytes.len())
    };
    words
}

fn bytes_of(words: &[u64]) -> &[u8] {
    // SAFETY: the words' own storage, viewed as bytes.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), words.len() * 8) }
}

#[test]
fn registration_as_cudart_13_performs_it() {
    let _g = serial();
    init();
    let image = fatbin("registration.fatbin");
    let w = wrapper(bytes_of(&image));
    // SAFETY: the driver API used as cudart uses it: out-pointers to locals, NUL-terminated
    // names, the wrapper and its fatbin alive throughout.
    unsafe {
        // the integrity check: fixed answers for versions ending in 0 and 1, a checksum else
        let check = slot(INTEGRITY, 1);
        let mut a = [0u64; 2];
        let mut b = [0u64; 2];
        assert_eq!(
            check(13050, 1_800_000_000, a.as_mut_ptr() as usize, 0, 0),
            SUCCESS
        );
        assert_eq!(a, [0x3341_181c_03cb_675c, 0x8ed3_83aa_1f4c_d1e8]);
        assert_eq!(
            check(13052, 1_800_000_000, a.as_mut_ptr() as usize, 0, 0),
            SUCCESS
        );
        assert_eq!(
            check(13052, 1_800_000_001, b.as_mut_ptr() as usize, 0, 0),
            SUCCESS
        );
        assert_ne!(a, b);

        // a library from the wrapper while no context is current (cudart loads at start-up)
        let mut none: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuda::cuCtxSetCurrent(none), SUCCESS);
        let mut lib: *mut c_void = std::ptr::null_mut();
        let mut option = 1i32; // CU_LIBRARY_BINARY_IS_PRESERVED
        let mut value: *mut c_void = std::ptr::without_provenance_mut(1);
        let r = cuda::cuLibraryLoadData(
            &mut lib,
            (&w as *const Wrapper).cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            &mut option,
            &mut value,
            1,
        );
        assert_eq!(r, SUCCESS);
        let mut kernel: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            cuda::cuLibraryGetKernel(&mut kernel, lib, c"accumulate".as_ptr()),
            SUCCESS
        );
        let (mut total, mut bias, mut table_addr, mut size) = (0u64, 0u64, 0u64, 0usize);
        assert_eq!(
            cuda::cuLibraryGetManaged(&mut total, &mut size, lib, c"total".as_ptr()),
            SUCCESS
        );
        assert_eq!(size, 4);
        // only __managed__ variables are managed
        assert_eq!(
            cuda::cuLibraryGetManaged(&mut bias, &mut size, lib, c"table".as_ptr()),
            NOT_FOUND
        );
        assert_eq!(
            cuda::cuLibraryGetGlobal(&mut bias, &mut size, lib, c"bias".as_ptr()),
            SUCCESS
        );
        assert_eq!(size, 4);
        assert_eq!(
            cuda::cuLibraryGetGlobal(&mut table_addr, &mut size, lib, c"table".as_ptr()),
            SUCCESS
        );
        assert_eq!(size, 16);

        // the primary context from the cudart table (not retained), then retained and current
        let mut pctx: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            slot(CUDART, 2)(&mut pctx as *mut _ as usize, 0, 0, 0, 0),
            SUCCESS
        );
        let mut retained: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuda::cuDevicePrimaryCtxRetain(&mut retained, 0), SUCCESS);
        assert_eq!(pctx, retained);
        assert_eq!(cuda::cuCtxSetCurrent(pctx), SUCCESS);

        // cudart keeps its per-context state in context storage (NULL: the current context)
        let put = slot(CONTEXT_STORAGE, 0);
        let delete = slot(CONTEXT_STORAGE, 1);
        let get = slot(CONTEXT_STORAGE, 2);
        let key = 0x5151usize;
        let mut v: usize = 0;
        assert_eq!(get(&mut v as *mut _ as usize, 0, key, 0, 0), INVALID_HANDLE);
        assert_eq!(put(0, key, 0xabcd, 0, 0), SUCCESS);
        assert_eq!(
            get(&mut v as *mut _ as usize, pctx as usize, key, 0, 0),
            SUCCESS
        );
        assert_eq!(v, 0xabcd);
        assert_eq!(delete(0, key, 0, 0, 0), SUCCESS);
        assert_eq!(get(&mut v as *mut _ as usize, 0, key, 0, 0), INVALID_HANDLE);
        let mut flags = 7u32;
        let mut other: *const c_void = std::ptr::null();
        let r = slot(CONTEXT_CHECKS, 2)(
            pctx as usize,
            &mut flags as *mut _ as usize,
            &mut other as *mut _ as usize,
            0,
            0,
        );
        assert_eq!((r, flags), (SUCCESS, 0));

        // the variables as cudaMemcpyToSymbol and host code reach them, then a launch
        let b = 100i32;
        assert_eq!(
            cuda::cuMemcpyHtoD_v2(bias, (&b as *const i32).cast(), 4),
            SUCCESS
        );
        *(total as *mut i32) = 5;
        let mut out = 0u64;
        assert_eq!(cuda::cuMemAlloc_v2(&mut out, 32 * 4), SUCCESS);
        let mut params = [(&mut out as *mut u64).cast::<c_void>()];
        let r = cuda::cuLaunchKernel(
            kernel,
            1,
            1,
            1,
            32,
            1,
            1,
            0,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, SUCCESS);
        assert_eq!(cuda::cuCtxSynchronize(), SUCCESS);
        let mut host = [0i32; 32];
        assert_eq!(
            cuda::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), out, 32 * 4),
            SUCCESS
        );
        for (i, v) in host.iter().enumerate() {
            assert_eq!(*v, [1, 2, 3, 4][i % 4] + 100);
        }
        assert_eq!(*(total as *const i32), 5 + host.iter().sum::<i32>());
        assert_eq!(cuda::cuMemFree_v2(out), SUCCESS);

        // a library outlives a reset of the context; the primary context keeps its handle,
        // inactive until retained again (cudart makes it current again after cudaDeviceReset)
        assert_eq!(cuda::cuDevicePrimaryCtxReset_v2(0), SUCCESS);
        let (mut flags, mut active) = (0u32, 1i32);
        assert_eq!(
            cuda::cuDevicePrimaryCtxGetState(0, &mut flags, &mut active),
            SUCCESS
        );
        assert_eq!(active, 0);
        assert_eq!(cuda::cuCtxSetCurrent(pctx), SUCCESS);
        assert_eq!(cuda::cuDevicePrimaryCtxRetain(&mut retained, 0), SUCCESS);
        assert_eq!(retained, pctx);
        assert_eq!(cuda::cuDevicePrimaryCtxRelease_v2(0), SUCCESS);
        assert_eq!(
            cuda::cuLibraryGetKernel(&mut kernel, lib, c"accumulate".as_ptr()),
            SUCCESS
        );
        assert_eq!(cuda::cuLibraryUnload(lib), SUCCESS);
        none = std::ptr::null_mut();
        assert_eq!(cuda::cuCtxSetCurrent(none), SUCCESS);
    }
}

/// Context storage: a destructor registered with a value runs when its context goes.
#[test]
fn context_storage_destructors_run_when_the_context_is_destroyed() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn destructor(_ctx: *mut c_void, key: *mut c_void, value: *mut c_void) {
        SEEN.store(key as usize + value as usize, Ordering::SeqCst);
    }
    let _g = serial();
    init();
    // SAFETY: out-pointers to locals; the destructor is a static function.
    unsafe {
        let mut ctx: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuda::cuCtxCreate_v2(&mut ctx, 0, 0), SUCCESS);
        let put = slot(CONTEXT_STORAGE, 0);
        assert_eq!(
            put(
                ctx as usize,
                0x100,
                0x23,
                destructor as *const () as usize,
                0
            ),
            SUCCESS
        );
        assert_eq!(cuda::cuCtxDestroy_v2(ctx), SUCCESS);
        assert_eq!(SEEN.load(Ordering::SeqCst), 0x123);
        // the value went with it
        let mut v = 0usize;
        let get = slot(CONTEXT_STORAGE, 2);
        assert_ne!(
            get(&mut v as *mut _ as usize, ctx as usize, 0x100, 0, 0),
            SUCCESS
        );
    }
}

/// The module slots of the cudart table (cudart 12 loads its fatbins through them): a
/// wrapper (slots 1 and 6) or a bare fatbin (slot 8) into the current context; SASS only is
/// CUDA_ERROR_NO_BINARY_FOR_GPU.
#[test]
fn modules_from_the_cudart_slots_run() {
    let _g = serial();
    init();
    let image = fatbin("zstd.fatbin");
    let sass = fatbin("sass.fatbin");
    let w = wrapper(bytes_of(&image));
    let ws = wrapper(bytes_of(&sass));
    // SAFETY: out-pointers to locals; the wrappers and fatbins alive throughout.
    unsafe {
        let mut ctx: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuda::cuCtxCreate_v2(&mut ctx, 0, 0), SUCCESS);
        let wp = &w as *const Wrapper as usize;
        let fat = image.as_ptr() as usize;
        for (s, call) in [
            (1, [0, wp, 0, 0, 0]),
            (6, [0, wp, 0, 0, 0]),
            (8, [fat, 0, 0, 0, 0]),
        ] {
            let mut m: *mut c_void = std::ptr::null_mut();
            let mut args = call;
            args[if s == 8 { 1 } else { 0 }] = &mut m as *mut _ as usize;
            let r = slot(CUDART, s)(args[0], args[1], args[2], args[3], args[4]);
            assert_eq!(r, SUCCESS, "slot {s}");
            let mut f: *mut c_void = std::ptr::null_mut();
            assert_eq!(cuda::cuModuleGetFunction(&mut f, m, c"k".as_ptr()), SUCCESS);
            let mut out = 0u64;
            assert_eq!(cuda::cuMemAlloc_v2(&mut out, 32 * 4), SUCCESS);
            let mut params = [(&mut out as *mut u64).cast::<c_void>()];
            let r = cuda::cuLaunchKernel(
                f,
                1,
                1,
                1,
                32,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            );
            assert_eq!(r, SUCCESS);
            let mut host = [0u32; 32];
            assert_eq!(
                cuda::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), out, 32 * 4),
                SUCCESS
            );
            for (i, v) in host.iter().enumerate() {
                assert_eq!(*v, 3 * i as u32 + 80, "slot {s}");
            }
            assert_eq!(cuda::cuMemFree_v2(out), SUCCESS);
            assert_eq!(cuda::cuModuleUnload(m), SUCCESS);
        }
        // arguments whose meaning is not known are refused, not guessed
        let mut m: *mut c_void = std::ptr::null_mut();
        let r = slot(CUDART, 6)(&mut m as *mut _ as usize, wp, 0, 0, 1);
        assert_eq!(r, NOT_SUPPORTED);
        // SASS only: no binary for the device (and the hint on stderr)
        let r = slot(CUDART, 1)(
            &mut m as *mut _ as usize,
            &ws as *const Wrapper as usize,
            0,
            0,
            0,
        );
        assert_eq!(r, NO_BINARY_FOR_GPU);
        let mut lib: *mut c_void = std::ptr::null_mut();
        let r = cuda::cuLibraryLoadData(
            &mut lib,
            (&ws as *const Wrapper).cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
        assert_eq!(r, NO_BINARY_FOR_GPU);
        assert_eq!(cuda::cuCtxDestroy_v2(ctx), SUCCESS);
    }
}

/// A version-2 wrapper (`nvcc -rdc=true`): nvlink's fatbin holds SASS only, the PTX is in the
/// NULL-terminated list of fatbins it linked (here one with PTX and a SASS-only one, as
/// libcudadevrt's is).
#[test]
fn a_relocatable_wrappers_prelinked_ptx_is_linked() {
    let _g = serial();
    init();
    let sass = fatbin("sass.fatbin");
    let ptx = fatbin("zstd.fatbin");
    let prelinked = [
        sass.as_ptr().cast::<c_void>(),
        ptx.as_ptr().cast(),
        std::ptr::null(),
    ];
    let mut w = wrapper(bytes_of(&sass));
    w.version = 2;
    w.filename = prelinked.as_ptr().cast();
    // SAFETY: out-pointers to locals; the wrapper, its list and the fatbins alive throughout.
    unsafe {
        let mut lib: *mut c_void = std::ptr::null_mut();
        let none = std::ptr::null_mut();
        let r = cuda::cuLibraryLoadData(
            &mut lib,
            (&w as *const Wrapper).cast(),
            none,
            none.cast(),
            0,
            none,
            none.cast(),
            0,
        );
        assert_eq!(r, SUCCESS);
        let mut k: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            cuda::cuLibraryGetKernel(&mut k, lib, c"k".as_ptr()),
            SUCCESS
        );
        assert_eq!(cuda::cuLibraryUnload(lib), SUCCESS);
        // no PTX anywhere: no binary for the device
        let only_sass = [sass.as_ptr().cast::<c_void>(), std::ptr::null()];
        w.filename = only_sass.as_ptr().cast();
        let r = cuda::cuLibraryLoadData(
            &mut lib,
            (&w as *const Wrapper).cast(),
            none,
            none.cast(),
            0,
            none,
            none.cast(),
            0,
        );
        assert_eq!(r, NO_BINARY_FOR_GPU);
    }
}

#[test]
fn unknown_tables_are_invalid_value() {
    let mut t: *const c_void = std::ptr::without_provenance(1);
    // SAFETY: out-pointer to a local, a 16-byte UUID; NULL arguments are refused.
    unsafe {
        assert_eq!(cuda::cuGetExportTable(&mut t, &[0u8; 16]), INVALID_VALUE);
        assert!(t.is_null());
        assert_eq!(
            cuda::cuGetExportTable(std::ptr::null_mut(), &[0u8; 16]),
            INVALID_VALUE
        );
        assert_eq!(
            cuda::cuGetExportTable(&mut t, std::ptr::null()),
            INVALID_VALUE
        );
    }
}

#[test]
fn tables_have_the_sizes_cudart_reads() {
    for (k, &(_, len, sized)) in TABLES.iter().enumerate() {
        let t = table(k);
        if sized {
            assert_eq!(t[0] as usize, len * 8, "table {k}");
        }
        for (s, w) in t.iter().enumerate().skip(usize::from(sized)) {
            assert!(!w.is_null(), "table {k} slot {s} is NULL");
        }
    }
}

/// Every slot of every table, called with NULL arguments and then with garbage — every
/// argument the address of a buffer of 0xAB bytes: a garbage pointer, and a handle, device
/// or function that names nothing (host pointers other than NULL cannot be checked, so the
/// garbage is readable and writable memory) — answers an error code; the slots that take no
/// pointer or handle, or return nothing, must only not crash.
#[test]
fn every_slot_answers_null_and_garbage_with_an_error() {
    let _g = serial();
    init();
    let exempt = |k: usize, s: usize| {
        matches!(
            (k, s),
            (CUDART, 7) | (CUDART, 12) | (TOOLS_HOOKS, 2) | (TOOLS_HOOKS, 6) | (CONTEXT_CHECKS, 3)
        ) || (k == INTEGRITY && s == 1)
    };
    let mut garbage = vec![0u8; 4096];
    for (k, &(_, len, sized)) in TABLES.iter().enumerate() {
        for s in usize::from(sized)..len {
            let f = slot(k, s);
            // SAFETY: each slot is a C function; NULL is refused by those that take pointers.
            let r = unsafe { f(0, 0, 0, 0, 0) };
            if !exempt(k, s) {
                assert_ne!(r, SUCCESS, "table {k} slot {s} with NULLs");
            }
            for base in [0usize, 1024] {
                garbage.fill(0xAB);
                let g = garbage.as_mut_ptr() as usize + base;
                // odd offsets: as a device number, never 0
                // SAFETY: every argument points into `garbage` (4 KiB, readable and writable,
                // at least 2 KiB past each address); none names a handle or a function.
                let r = unsafe { f(g, g + 65, g + 129, g + 193, 1) };
                if !exempt(k, s) {
                    assert_ne!(r, SUCCESS, "table {k} slot {s} with garbage");
                }
            }
        }
    }
    // the integrity check refuses NULL for its result
    // SAFETY: NULL is refused before anything is written.
    let r = unsafe { slot(INTEGRITY, 1)(13052, 0, 0, 0, 0) };
    assert_eq!(r, INVALID_VALUE);
}
