//! Device memory that other processes can map (`cuIpc*`), and host memory the driver adopts.
//!
//! `cuMemAlloc` memory comes from one arena: a `memfd` mapped `MAP_SHARED` once, at a fixed
//! host address (the identity mapping: a device pointer stays a host address). A block is a
//! 256-aligned range of it; an IPC handle names the owner's pid, the arena's descriptor, the
//! block's offset and size, and the importer maps `/proc/<pid>/fd/<fd>` at that offset. One
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

/// What an IPC handle says: the exporting process, its arena descriptor, the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exported {
    pub pid: u32,
    pub fd: i32,
    pub off: u64,
    pub len: u64,
}

const MAGIC: &[u8; 8] = b"ptxvmIPC";

impl Exported {
    /// The 64-byte `CUipcMemHandle`.
    pub fn to_bytes(self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.off.to_le_bytes());
        b[24..32].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; 64]) -> Option<Exported> {
        if &b[..8] != MAGIC {
            return None;
        }
        let u32_at = |k: usize| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
        let u64_at = |k: usize| u64::from(u32_at(k)) | (u64::from(u32_at(k + 4)) << 32);
        Some(Exported {
            pid: u32_at(8),
            fd: u32_at(12) as i32,
            off: u64_at(16),
            len: u64_at(24),
        })
    }
}

/// The handle of the arena block at host address `addr` of `len` bytes, when it is one.
pub fn export(addr: u64, len: u64) -> Option<Exported> {
    let a = ARENA.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
    let off = addr.checked_sub(a.base as u64)?;
    if off.checked_add(len)? > a.top as u64 {
        return None;
    }
    Some(Exported {
        pid: std::process::id(),
        fd: a.fd,
        off,
        len,
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
}

/// Maps the block `e` names; returns the words (at the block's first byte) and the block's size.
pub fn import(e: Exported) -> Result<ptx_interp::mem::AtomicWords, ImportError> {
    if e.pid == std::process::id() {
        return Err(ImportError::SameProcess);
    }
    let path = format!("/proc/{}/fd/{}", e.pid, e.fd);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|err| ImportError::Map(format!("{path}: {err}")))?;
    let page = page() as u64;
    let start = e.off / page * page;
    let lead = (e.off - start) as usize;
    let len = (lead as u64 + e.len.max(1)).div_ceil(page) * page;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if start + len > size {
        return Err(ImportError::Map(format!(
            "{path}: the block ({} bytes at {}) lies outside the exporter's memory",
            e.len, e.off
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
    let words = (e.len as usize).div_ceil(4).max(1);
    // SAFETY: the block starts `lead` bytes (a multiple of 256) into our fresh mapping, which
    // stays mapped until `map` is dropped with the words; it covers `4 * words` bytes (the
    // mapping is whole pages).
    unsafe {
        ptx_interp::mem::AtomicWords::external((map.addr + lead) as *mut u8, words, Box::new(map))
    }
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
