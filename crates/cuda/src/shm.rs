//! Device memory that other processes can map (`cuIpc*`), and host memory the driver adopts.
//!
//! `cuMemAlloc` memory comes from one arena: a `memfd` mapped `MAP_SHARED` once, at a fixed
//! host address (the identity mapping: a device pointer stays a host address). A block is a
//! 256-aligned range of it. An IPC handle names the owner's pid, the descriptor of its export
//! registry (a second `memfd` of fixed-size records: token, offset, size, arena descriptor),
//! a record's index and that record's unguessable 128-bit token; nothing else. The importer
//! reads the record through `/proc/<pid>/fd/<fd>`, opens the export only when the token
//! matches, and maps the range the *exporter's record* gives: a handle edited to name a larger
//! or another range opens nothing. A block's record is erased when the block is freed, so a
//! handle outlives neither its allocation nor a reuse of its memory. One
//! descriptor and one mapping serve every allocation, so an allocation costs what a `malloc`
//! does (a best-fit lookup in two ordered maps, no system call); freed blocks are zeroed (pages
//! of large ones handed back to the kernel with `MADV_REMOVE`), so a new block reads as zero
//! like the runtime's other buffers. Where the arena cannot be set up (no `memfd_create`, a
//! small address-space limit) allocations fall back to the global allocator, without IPC.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{LazyLock, Mutex};

/// Blocks are multiples of this and aligned to it (CUDA's allocation alignment).
pub const GRAIN: usize = 256;
/// Blocks of at least this size give their pages back to the kernel when freed.
const PUNCH: usize = 64 << 10;
/// The host's page size (what `madvise` and `mmap` offsets work in).
fn page() -> usize {
    static PAGE: LazyLock<usize> = LazyLock::new(|| {
        // SAFETY: `sysconf` reads a configuration value; no memory is involved.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(p)
            .ok()
            .filter(|p| p.is_power_of_two())
            .unwrap_or(4096)
    });
    *PAGE
}

struct Arena {
    fd: i32,
    base: usize,
    cap: usize,
    /// Never handed out yet: `[top, cap)`.
    top: usize,
    /// Free blocks (zeroed): offset → length, and (length, offset) for best fit.
    by_off: BTreeMap<usize, usize>,
    by_len: BTreeSet<(usize, usize)>,
    /// The export registry, created by the first `cuIpcGetMemHandle`.
    exports: Option<Registry>,
}

/// The exporter's records of its IPC exports: a `memfd` of [`RECORD`]-byte records (token 16,
/// offset 8, length 8, arena descriptor 4, zeros), one per exported block, read by importers.
struct Registry {
    fd: i32,
    /// Block offset → (record index, token).
    live: BTreeMap<usize, (u32, [u8; 16])>,
    /// Erased records, reused before the file grows.
    free: Vec<u32>,
    next: u32,
}

/// Bytes of one export record.
const RECORD: usize = 48;
/// The most export records (a registry of 48 MiB at most, sparse: only written pages count).
const MAX_EXPORTS: u32 = 1 << 20;

fn pwrite_all(fd: i32, b: &[u8], at: usize) -> bool {
    // SAFETY: `b` is a live buffer of `b.len()` bytes; `fd` is the registry's descriptor.
    let n = unsafe { libc::pwrite(fd, b.as_ptr().cast(), b.len(), at as libc::off_t) };
    n == b.len() as isize
}

/// 16 bytes from the system's random source (`None` if it cannot be read).
fn token() -> Option<[u8; 16]> {
    use std::io::Read as _;
    let mut t = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut t))
        .ok()?;
    Some(t)
}

impl Registry {
    fn new() -> Option<Registry> {
        // SAFETY: `memfd_create` with a NUL-terminated name; it returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c"ptxvm-ipc-exports".as_ptr(), libc::MFD_CLOEXEC) };
        (fd >= 0).then(|| Registry {
            fd,
            live: BTreeMap::new(),
            free: Vec::new(),
            next: 0,
        })
    }

    /// The record of block `off`/`len` (an existing one when the block was exported before).
    fn export(&mut self, off: usize, len: usize, arena_fd: i32) -> Option<(u32, [u8; 16])> {
        if let Some(&r) = self.live.get(&off) {
            return Some(r);
        }
        let index = match self.free.pop() {
            Some(k) => k,
            None if self.next < MAX_EXPORTS => {
                self.next += 1;
                self.next - 1
            }
            None => return None,
        };
        let token = token()?;
        let mut rec = [0u8; RECORD];
        rec[..16].copy_from_slice(&token);
        rec[16..24].copy_from_slice(&(off as u64).to_le_bytes());
        rec[24..32].copy_from_slice(&(len as u64).to_le_bytes());
        rec[32..36].copy_from_slice(&arena_fd.to_le_bytes());
        if !pwrite_all(self.fd, &rec, index as usize * RECORD) {
            self.free.push(index);
            return None;
        }
        self.live.insert(off, (index, token));
        Some((index, token))
    }

    /// Erases the record of block `off`, if it was exported.
    fn erase(&mut self, off: usize) {
        if let Some((index, _)) = self.live.remove(&off) {
            if pwrite_all(self.fd, &[0u8; RECORD], index as usize * RECORD) {
                self.free.push(index);
            }
        }
    }
}

// SAFETY: `Arena` holds plain numbers (a descriptor and an address); the mapping it describes
// lives for the process.
unsafe impl Send for Arena {}

static ARENA: LazyLock<Option<Mutex<Arena>>> = LazyLock::new(|| Arena::new().map(Mutex::new));

impl Arena {
    fn new() -> Option<Arena> {
        if std::env::var_os("PTXVM_NO_SHARED_MEMORY").is_some_and(|v| v != "0") {
            return None;
        }
        // SAFETY: `memfd_create` with a NUL-terminated name; it returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c"ptxvm-device-memory".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // The largest sparse size the host accepts: pages are committed on first touch only
        // (a memfd is not charged against overcommit), so this is address space, not memory.
        for shift in [40u32, 38, 36, 34, 32] {
            let cap = 1usize << shift;
            // SAFETY: `fd` is our memfd; growing it allocates nothing.
            if unsafe { libc::ftruncate(fd, cap as libc::off_t) } != 0 {
                continue;
            }
            // SAFETY: a fresh shared mapping of the whole file at an address the kernel picks;
            // nothing else is mapped there.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    cap,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_NORESERVE,
                    fd,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                return Some(Arena {
                    fd,
                    base: p as usize,
                    cap,
                    top: 0,
                    by_off: BTreeMap::new(),
                    by_len: BTreeSet::new(),
                    exports: None,
                });
            }
        }
        // SAFETY: our descriptor, closed once.
        unsafe { libc::close(fd) };
        None
    }

    fn take(&mut self, len: usize) -> Option<usize> {
        if let Some(&(flen, off)) = self.by_len.range((len, 0)..).next() {
            self.by_len.remove(&(flen, off));
            self.by_off.remove(&off);
            if flen > len {
                self.insert_free(off + len, flen - len);
            }
            return Some(off);
        }
        let end = self.top.checked_add(len).filter(|&e| e <= self.cap)?;
        let off = self.top;
        self.top = end;
        Some(off)
    }

    fn insert_free(&mut self, off: usize, len: usize) {
        self.by_off.insert(off, len);
        self.by_len.insert((len, off));
    }

    /// Returns a block (zeroing it) and merges it with its free neighbours.
    fn give(&mut self, mut off: usize, mut len: usize) {
        if let Some(r) = &mut self.exports {
            r.erase(off);
        }
        let p = self.base + off;
        // the whole pages inside the block go back to the kernel (they then read as zero); the
        // ragged ends, and small blocks, are zeroed by hand
        let page = page();
        let (first, last) = (p.next_multiple_of(page), (p + len) / page * page);
        let punched = len >= PUNCH && first < last && {
            // SAFETY: `[first, last)` lies inside a block of our shared mapping that nothing
            // uses any more (its last user dropped it), and is page-aligned.
            let r = unsafe {
                libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_REMOVE)
            };
            r == 0
        };
        let zero = |from: usize, to: usize| {
            // SAFETY: `[from, to)` lies inside the unused block, in our mapping.
            unsafe { std::ptr::write_bytes(from as *mut u8, 0, to - from) }
        };
        if punched {
            zero(p, first);
            zero(last, p + len);
        } else {
            zero(p, p + len);
        }
        if let Some((&poff, &plen)) = self.by_off.range(..off).next_back() {
            if poff + plen == off {
                self.by_off.remove(&poff);
                self.by_len.remove(&(plen, poff));
                off = poff;
                len += plen;
            }
        }
        if let Some(&nlen) = self.by_off.get(&(off + len)) {
            self.by_off.remove(&(off + len));
            self.by_len.remove(&(nlen, off + len));
            len += nlen;
        }
        if off + len == self.top {
            self.top = off;
        } else {
            self.insert_free(off, len);
        }
    }
}

/// A block of the arena; dropping it returns it.
pub struct Block {
    off: usize,
    len: usize,
}

impl Drop for Block {
    fn drop(&mut self) {
        if let Some(a) = ARENA.as_ref() {
            a.lock()
                .unwrap_or_else(|e| e.into_inner())
                .give(self.off, self.len);
        }
    }
}

/// `len` zeroed bytes (a multiple of [`GRAIN`]) of shared device memory, as the words of a
/// device buffer; `None` when there is no arena or it is full.
pub fn alloc(len: usize) -> Option<ptx_interp::mem::AtomicWords> {
    let arena = ARENA.as_ref()?;
    let len = len.checked_next_multiple_of(GRAIN)?.max(GRAIN);
    let (off, p) = {
        let mut a = arena.lock().unwrap_or_else(|e| e.into_inner());
        let off = a.take(len)?;
        (off, a.base + off)
    };
    let block = Block { off, len };
    // SAFETY: `[p, p + len)` is a block of the arena's mapping (256-aligned, readable and
    // writable, zeroed) that only these words use until `block` is dropped with them.
    unsafe { ptx_interp::mem::AtomicWords::external(p as *mut u8, len / 4, Box::new(block)) }
}

/// What an IPC handle says: the exporting process, its registry's descriptor, the record's
/// index and token. The range is not in it: the importer takes it from the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exported {
    pub pid: u32,
    pub fd: i32,
    pub index: u32,
    pub token: [u8; 16],
}

const MAGIC: &[u8; 8] = b"ptxvmIPC";

impl Exported {
    /// The 64-byte `CUipcMemHandle`: magic, pid, descriptor, index, 4 zero bytes, token, zeros.
    pub fn to_bytes(self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..20].copy_from_slice(&self.index.to_le_bytes());
        b[24..40].copy_from_slice(&self.token);
        b
    }

    /// The handle `b` holds, when it has our layout (reserved bytes zero).
    pub fn from_bytes(b: &[u8; 64]) -> Option<Exported> {
        if &b[..8] != MAGIC || b[20..24] != [0; 4] || b[40..] != [0; 24] {
            return None;
        }
        let u32_at = |k: usize| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
        let mut token = [0u8; 16];
        token.copy_from_slice(&b[24..40]);
        Some(Exported {
            pid: u32_at(8),
            fd: u32_at(12) as i32,
            index: u32_at(16),
            token,
        })
    }
}

/// The handle of the arena block at host address `addr` of `len` bytes, when it is one (and
/// its record could be written).
pub fn export(addr: u64, len: u64) -> Option<Exported> {
    let mut a = ARENA.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
    let off = usize::try_from(addr.checked_sub(a.base as u64)?).ok()?;
    if off.checked_add(usize::try_from(len).ok()?)? > a.top {
        return None;
    }
    let arena_fd = a.fd;
    if a.exports.is_none() {
        a.exports = Some(Registry::new()?);
    }
    let r = a.exports.as_mut()?;
    let (index, token) = r.export(off, len as usize, arena_fd)?;
    Some(Exported {
        pid: std::process::id(),
        fd: r.fd,
        index,
        token,
    })
}

/// Another process's exported block mapped here; unmapped when dropped.
pub struct Mapping {
    addr: usize,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping of `len` bytes at `addr`, unmapped once, after its last user.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}

/// Why an import failed.
pub enum ImportError {
    /// The handle names this process.
    SameProcess,
    /// The exporting process or its memory cannot be reached.
    Map(String),
    /// The exporter has no such export: the handle was altered, or its memory freed.
    Refused,
}

/// The range the exporter's record `e.index` gives, when its token is `e.token`: (arena
/// descriptor, offset, length).
fn record(e: &Exported) -> Result<(i32, u64, u64), ImportError> {
    use std::os::unix::fs::FileExt as _;
    let refused = || ImportError::Refused;
    let path = format!("/proc/{}/fd/{}", e.pid, e.fd);
    let reg = std::fs::File::open(&path).map_err(|_| refused())?;
    let mut rec = [0u8; RECORD];
    reg.read_exact_at(&mut rec, u64::from(e.index) * RECORD as u64)
        .map_err(|_| refused())?;
    if rec[..16] != e.token || e.token == [0; 16] {
        return Err(refused());
    }
    let u64_at = |k: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&rec[k..k + 8]);
        u64::from_le_bytes(w)
    };
    let fd = i32::from_le_bytes([rec[32], rec[33], rec[34], rec[35]]);
    let (off, len) = (u64_at(16), u64_at(24));
    if len == 0 || off % GRAIN as u64 != 0 {
        return Err(refused());
    }
    Ok((fd, off, len))
}

/// Maps the block `e` names, as the exporter's record of it gives it; returns its words (at the
/// block's first byte) and its size in bytes.
pub fn import(e: Exported) -> Result<(ptx_interp::mem::AtomicWords, u64), ImportError> {
    if e.pid == std::process::id() {
        return Err(ImportError::SameProcess);
    }
    let (fd, off, block_len) = record(&e)?;
    let path = format!("/proc/{}/fd/{fd}", e.pid);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|err| ImportError::Map(format!("{path}: {err}")))?;
    let page = page() as u64;
    let start = off / page * page;
    let lead = (off - start) as usize;
    let len = (lead as u64)
        .checked_add(block_len)
        .map(|n| n.div_ceil(page) * page)
        .ok_or(ImportError::Refused)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if start.checked_add(len).is_none_or(|end| end > size) {
        return Err(ImportError::Map(format!(
            "{path}: the block ({block_len} bytes at {off}) lies outside the exporter's memory"
        )));
    }
    use std::os::fd::AsRawFd as _;
    // SAFETY: a fresh shared mapping of a range of the exporter's memfd that lies inside the
    // file (checked above); the kernel picks the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            start as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(ImportError::Map(format!(
            "{path}: mmap: {}",
            std::io::Error::last_os_error()
        )));
    }
    let map = Mapping {
        addr: p as usize,
        len: len as usize,
    };
    let words = (block_len as usize).div_ceil(4).max(1);
    // SAFETY: the block starts `lead` bytes (a multiple of 256) into our fresh mapping, which
    // stays mapped until `map` is dropped with the words; it covers `4 * words` bytes (the
    // mapping is whole pages).
    unsafe {
        ptx_interp::mem::AtomicWords::external((map.addr + lead) as *mut u8, words, Box::new(map))
    }
    .map(|w| (w, block_len))
    .ok_or_else(|| ImportError::Map("the mapping is misaligned".into()))
}

/// Adopted host memory: nothing to release (the host owns it).
pub struct Borrowed;

/// Checks that `[p, p + len)` is mapped readable (and writable unless `read_only`) in this
/// process, from `/proc/self/maps`, so that a kernel touching registered memory cannot crash
/// the process. `Err(true)`: mapped but read-only.
pub fn check_host_range(p: u64, len: u64, read_only: bool) -> Result<(), bool> {
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|_| false)?;
    let end = p.checked_add(len).ok_or(false)?;
    let mut at = p;
    let mut ranges: Vec<(u64, u64, bool, bool)> = maps
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (a, b) = w.next()?.split_once('-')?;
            let perms = w.next()?.as_bytes();
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
                perms.first() == Some(&b'r'),
                perms.get(1) == Some(&b'w'),
            ))
        })
        .collect();
    ranges.sort_unstable();
    for (a, b, r, w) in ranges {
        if b <= at || a > at {
            continue;
        }
        if !r {
            return Err(false);
        }
        if !w && !read_only {
            return Err(true);
        }
        at = b;
        if at >= end {
            return Ok(());
        }
    }
    Err(false)
}

/// Words over host memory the caller registers (4-aligned start).
///
/// # Safety
/// `[p, p + 4 * words)` stays mapped (readable, and writable unless only loads reach it) while
/// the words live: `cuMemHostRegister`'s contract until `cuMemHostUnregister`.
pub unsafe fn adopt(p: u64, words: usize) -> Option<ptx_interp::mem::AtomicWords> {
    // SAFETY: forwarded to our caller.
    unsafe { ptx_interp::mem::AtomicWords::external(p as *mut u8, words, Box::new(Borrowed)) }
}
