//! Device memory: the global allocation map, per-CTA shared memory, per-thread local memory.
//!
//! One 64-bit device address space. Global allocations (device buffers, module `.global` and
//! `.const` variables) live below [`WINDOW_BASE`], each at its own address with a guard gap after
//! it, so an access one past the end is reported, never lands in a neighbour. Addresses are
//! never reused. Shared, local and kernel-parameter memory are reached through windows of the
//! generic address space (`cvta`), each 4 GiB wide: generic `SHARED_WINDOW + off` is shared-space
//! address `off` of the executing CTA, and likewise for local (per thread) and param.
//!
//! Global memory is shared by CTAs running on several OS threads, so it is stored as
//! `AtomicU32` words and accessed with relaxed atomics: sound in Rust, and plain loads and
//! stores on x86 and ARM. A 64-bit access is two word accesses (it can tear only if the program
//! itself races); 8- and 16-bit stores update their word with a compare-and-swap loop so that
//! neighbouring bytes written by other threads are never lost. Shared and local memory belong
//! to one CTA, run by one OS thread, and are plain `u32` words.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

/// Start of the generic-address windows; global allocations are all below it.
/// It is above every host user-space address (x86-64 and AArch64 user space ends below 2^57), so
/// that a device in identity mode ([`GlobalMemory::identity`]), whose allocations sit at their
/// host addresses, never overlaps it.
pub const WINDOW_BASE: u64 = 0x00FC_0000_0000_0000;
/// Generic window of code addresses (`mov.u64 %rd, function`).
pub const FUNC_WINDOW: u64 = 0x00FC_0000_0000_0000;
/// Generic window of the kernel parameter buffer.
pub const PARAM_WINDOW: u64 = 0x00FD_0000_0000_0000;
/// Generic window of the executing thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x00FE_0000_0000_0000;
/// Generic window of the executing CTA's shared memory.
pub const SHARED_WINDOW: u64 = 0x00FF_0000_0000_0000;
/// Width of each window.
pub const WINDOW_SIZE: u64 = 1 << 32;
/// First global address handed out.
pub const GLOBAL_BASE: u64 = 0x0000_0010_0000_0000;

/// Word storage that loads and stores can go through.
pub trait Words {
    /// Loads word `i`.
    fn get(&self, i: usize) -> u32;
    /// Number of words.
    fn words(&self) -> usize;
    /// Loads words `i0..i0 + 32` into `out`, zero-extended (a full warp reading consecutive
    /// words); `false`, with nothing loaded, when they are not all in the storage.
    fn get32(&self, i0: usize, out: &mut [u64; 32]) -> bool {
        if i0.checked_add(32).is_none_or(|e| e > self.words()) {
            return false;
        }
        for (l, o) in out.iter_mut().enumerate() {
            *o = self.get(i0 + l) as u64;
        }
        true
    }
}

/// Mutable word storage.
pub trait WordsMut: Words {
    /// Stores word `i`.
    fn set(&mut self, i: usize, v: u32);
    /// Replaces the bytes selected by `mask` in word `i` with those of `v`.
    fn merge(&mut self, i: usize, v: u32, mask: u32) {
        let old = self.get(i);
        self.set(i, (old & !mask) | (v & mask));
    }
}

impl Words for [u32] {
    #[inline]
    fn get(&self, i: usize) -> u32 {
        self[i]
    }
    #[inline]
    fn words(&self) -> usize {
        self.len()
    }
    #[inline]
    fn get32(&self, i0: usize, out: &mut [u64; 32]) -> bool {
        let Some(run) = i0.checked_add(32).and_then(|e| self.get(i0..e)) else {
            return false;
        };
        for (o, &w) in out.iter_mut().zip(run) {
            *o = w as u64;
        }
        true
    }
}
impl WordsMut for [u32] {
    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        self[i] = v;
    }
}
impl Words for Vec<u32> {
    #[inline]
    fn get(&self, i: usize) -> u32 {
        self[i]
    }
    #[inline]
    fn words(&self) -> usize {
        self.len()
    }
    #[inline]
    fn get32(&self, i0: usize, out: &mut [u64; 32]) -> bool {
        self.as_slice().get32(i0, out)
    }
}
impl WordsMut for Vec<u32> {
    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        self[i] = v;
    }
}

/// One thread's local memory: `len` words are addressable, but only the words up to the highest
/// one the thread has written are stored; the rest read as zero. A kernel that declares a large
/// `.local` array, or a thread whose stack may grow deep, costs host memory only for what it
/// touches, and a new block's threads start with nothing to zero.
#[derive(Default)]
pub struct LocalMem {
    words: Vec<u32>,
    len: usize,
}

impl LocalMem {
    /// Addressable words.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether nothing is addressable.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Empties the memory (keeping the host allocation) and makes `len` zeroed words addressable.
    pub fn reset(&mut self, len: usize) {
        self.words.clear();
        self.len = len;
    }
    /// Makes at least `len` words addressable (the new ones read zero).
    #[inline]
    pub fn grow(&mut self, len: usize) {
        self.len = self.len.max(len);
    }
    #[cold]
    #[inline(never)]
    fn set_past_end(&mut self, i: usize, v: u32) {
        // within `len`, which the launch bounds by the thread's local memory limit
        self.words.resize(i + 1, 0);
        self.words[i] = v;
    }
}

impl Words for LocalMem {
    #[inline]
    fn get(&self, i: usize) -> u32 {
        if i < self.words.len() {
            self.words[i]
        } else {
            0
        }
    }
    #[inline]
    fn words(&self) -> usize {
        self.len
    }
    #[inline]
    fn get32(&self, i0: usize, out: &mut [u64; 32]) -> bool {
        if self.words.as_slice().get32(i0, out) {
            return true;
        }
        if i0.checked_add(32).is_none_or(|e| e > self.len) {
            return false;
        }
        for (l, o) in out.iter_mut().enumerate() {
            *o = self.get(i0 + l) as u64;
        }
        true
    }
}

impl WordsMut for LocalMem {
    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        if i < self.words.len() {
            self.words[i] = v;
        } else {
            self.set_past_end(i, v);
        }
    }
}

/// Loads `size` (1, 2, 4 or 8) bytes at byte offset `off` (aligned to `size`).
#[inline]
pub fn load<W: Words + ?Sized>(w: &W, off: u64, size: u32) -> u64 {
    let i = (off >> 2) as usize;
    match size {
        4 => w.get(i) as u64,
        8 => w.get(i) as u64 | (w.get(i + 1) as u64) << 32,
        2 => (w.get(i) >> ((off & 2) * 8)) as u64 & 0xFFFF,
        _ => (w.get(i) >> ((off & 3) * 8)) as u64 & 0xFF,
    }
}

/// Stores the low `size` bytes of `v` at byte offset `off` (aligned to `size`).
#[inline]
pub fn store<W: WordsMut + ?Sized>(w: &mut W, off: u64, size: u32, v: u64) {
    let i = (off >> 2) as usize;
    match size {
        4 => w.set(i, v as u32),
        8 => {
            w.set(i, v as u32);
            w.set(i + 1, (v >> 32) as u32);
        }
        2 => {
            let sh = (off & 2) * 8;
            w.merge(i, (v as u32) << sh, 0xFFFF << sh)
        }
        _ => {
            let sh = (off & 3) * 8;
            w.merge(i, (v as u32 & 0xFF) << sh, 0xFF << sh)
        }
    }
}

/// Global memory words: shared between OS threads.
pub struct AtomicWords(pub WordBuf);

/// Keeps memory that is not the global allocator's alive while [`AtomicWords`] use it (host
/// memory registered with the driver, a shared mapping); dropped when they are.
pub type Keep = Box<dyn std::any::Any + Send + Sync>;

/// The storage of [`AtomicWords`]: `len` words at `ptr`, either allocated (zeroed) by the
/// global allocator and freed by it, or someone else's memory that `keep` keeps alive.
pub struct WordBuf {
    ptr: std::ptr::NonNull<AtomicU32>,
    len: usize,
    keep: Option<Keep>,
}

// SAFETY: a `WordBuf` is a `[AtomicU32]` (which is `Send` and `Sync`) that it owns or that `keep`
// (itself `Send + Sync`) keeps alive; it hands out only shared references to atomics.
#[allow(unsafe_code)]
unsafe impl Send for WordBuf {}
// SAFETY: as for `Send`: shared access goes through atomics only.
#[allow(unsafe_code)]
unsafe impl Sync for WordBuf {}

impl std::ops::Deref for WordBuf {
    type Target = [AtomicU32];
    #[inline]
    fn deref(&self) -> &[AtomicU32] {
        // SAFETY: `ptr` is non-null, aligned and valid for `len` initialised words for as long
        // as `self` lives (allocated by `try_zeroed`, dangling with `len == 0`, or vouched for
        // by the caller of `AtomicWords::external`).
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.ptr.as_ptr(), self.len)
        }
    }
}

impl Drop for WordBuf {
    fn drop(&mut self) {
        if self.keep.is_none() && self.len > 0 {
            if let Ok(layout) = std::alloc::Layout::array::<AtomicU32>(self.len) {
                // SAFETY: without `keep`, a non-empty `WordBuf` comes from `try_zeroed`, which
                // allocated it with this layout; it is freed once, here.
                #[allow(unsafe_code)]
                unsafe {
                    std::alloc::dealloc(self.ptr.as_ptr().cast(), layout)
                }
            }
        }
    }
}

impl AtomicWords {
    /// `n` zeroed words.
    pub fn zeroed(n: usize) -> AtomicWords {
        AtomicWords::try_zeroed(n).expect("out of host memory")
    }
    /// `n` zeroed words, or `None` when the host cannot allocate them. The memory comes zeroed
    /// from the allocator, so a large allocation's pages are only committed when first touched:
    /// a buffer costs host memory for what the kernel (or the host) writes or reads of it.
    pub fn try_zeroed(n: usize) -> Option<AtomicWords> {
        if n == 0 {
            return Some(AtomicWords(WordBuf {
                ptr: std::ptr::NonNull::dangling(),
                len: 0,
                keep: None,
            }));
        }
        let layout = std::alloc::Layout::array::<AtomicU32>(n).ok()?;
        // SAFETY: the layout's size is non-zero (n > 0). A non-null result is a fresh allocation
        // of the global allocator with the layout of `[AtomicU32; n]`, all bytes zero, and zero
        // bits are a valid `AtomicU32` (it has the same in-memory representation as `u32`), so it
        // is a valid initialised `[AtomicU32]` of length `n`, which `WordBuf` frees with that
        // layout.
        #[allow(unsafe_code)]
        let p = unsafe { std::alloc::alloc_zeroed(layout).cast::<AtomicU32>() };
        Some(AtomicWords(WordBuf {
            ptr: std::ptr::NonNull::new(p)?,
            len: n,
            keep: None,
        }))
    }
    /// The `n` words of someone else's memory at `ptr` (host memory registered with the CUDA
    /// driver layer, a shared mapping), kept alive by `keep` until the words are dropped.
    ///
    /// # Safety
    /// `ptr` is non-null, 4-byte aligned and valid for reads and writes of `4 * n` bytes until
    /// `keep` is dropped; other accesses to that memory while the words live are atomic or
    /// happen while no kernel runs (as for the host's copies into identity-mapped buffers).
    #[allow(unsafe_code)]
    pub unsafe fn external(ptr: *mut u8, n: usize, keep: Keep) -> Option<AtomicWords> {
        if ptr.align_offset(4) != 0 {
            return None;
        }
        Some(AtomicWords(WordBuf {
            ptr: std::ptr::NonNull::new(ptr.cast::<AtomicU32>())?,
            len: n,
            keep: Some(keep),
        }))
    }
    /// Atomically applies `f` to word `i`, returning the old value.
    #[inline]
    pub fn update(&self, i: usize, f: impl Fn(u32) -> u32) -> u32 {
        let cell = &self.0[i];
        let mut old = cell.load(Relaxed);
        loop {
            match cell.compare_exchange_weak(old, f(old), Relaxed, Relaxed) {
                Ok(v) => return v,
                Err(v) => old = v,
            }
        }
    }
    /// The word cell.
    #[inline]
    pub fn cell(&self, i: usize) -> &AtomicU32 {
        &self.0[i]
    }
    /// Words `i0..i0 + 32`, when they exist.
    #[inline]
    pub fn run32(&self, i0: usize) -> Option<&[AtomicU32; 32]> {
        let run = self.0.get(i0..i0.checked_add(32)?)?;
        run.try_into().ok()
    }
}

impl Words for AtomicWords {
    #[inline]
    fn get(&self, i: usize) -> u32 {
        self.0[i].load(Relaxed)
    }
    #[inline]
    fn words(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn get32(&self, i0: usize, out: &mut [u64; 32]) -> bool {
        let Some(run) = self.run32(i0) else {
            return false;
        };
        for (o, w) in out.iter_mut().zip(run) {
            *o = w.load(Relaxed) as u64;
        }
        true
    }
}

/// A store into shared global memory (through `&self`: atomics).
#[inline]
pub fn store_atomic(w: &AtomicWords, off: u64, size: u32, v: u64) {
    let i = (off >> 2) as usize;
    match size {
        4 => w.0[i].store(v as u32, Relaxed),
        8 => {
            w.0[i].store(v as u32, Relaxed);
            w.0[i + 1].store((v >> 32) as u32, Relaxed);
        }
        2 => {
            let sh = (off & 2) * 8;
            let m = 0xFFFFu32 << sh;
            let x = (v as u32) << sh;
            w.update(i, |o| (o & !m) | (x & m));
        }
        _ => {
            let sh = (off & 3) * 8;
            let m = 0xFFu32 << sh;
            let x = (v as u32 & 0xFF) << sh;
            w.update(i, |o| (o & !m) | (x & m));
        }
    }
}

/// One global allocation.
pub struct Allocation {
    /// Device address of the first byte.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Contents (rounded up to whole words).
    pub words: AtomicWords,
    /// `.const` data: stores fault.
    pub read_only: bool,
    /// What it is, for messages (`buffer #2`, `.global x`).
    pub label: String,
}

impl Allocation {
    /// Copies `bytes` in at byte offset `off` (host side; bounds already checked): whole words
    /// where the range covers them, bytes at the ragged ends.
    pub fn write_bytes(&self, off: u64, bytes: &[u8]) {
        let head = ((4 - off % 4) % 4).min(bytes.len() as u64) as usize;
        let (first, rest) = bytes.split_at(head);
        for (k, b) in first.iter().enumerate() {
            store_atomic(&self.words, off + k as u64, 1, *b as u64);
        }
        let start = off + head as u64;
        let mut words = rest.chunks_exact(4);
        for (k, w) in words.by_ref().enumerate() {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            self.words.0[(start / 4) as usize + k].store(v, Relaxed);
        }
        let tail = words.remainder();
        let tail_off = off + (bytes.len() - tail.len()) as u64;
        for (k, b) in tail.iter().enumerate() {
            store_atomic(&self.words, tail_off + k as u64, 1, *b as u64);
        }
    }
    /// Reads `len` bytes at `off` (host side).
    pub fn read_bytes(&self, off: u64, len: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(len as usize);
        let mut a = off;
        while a < off + len {
            if a % 4 == 0 && off + len - a >= 4 {
                out.extend_from_slice(&self.words.0[(a / 4) as usize].load(Relaxed).to_le_bytes());
                a += 4;
            } else {
                out.push(load(&self.words, a, 1) as u8);
                a += 1;
            }
        }
        out
    }
}

/// The default size of the device heap (`malloc` in kernels): 8 MiB, as CUDA's
/// `cudaLimitMallocHeapSize`.
pub const DEFAULT_HEAP_SIZE: u64 = 8 << 20;

/// The heap of device-side `malloc`/`free`: one global allocation (labelled `device heap
/// (malloc)`) carved into blocks by a first-fit free list. It is created when the first kernel
/// that calls `malloc` or `free` is launched, and lives as long as the device, so that memory
/// allocated by one kernel can be used and freed by later ones, as in CUDA. Blocks are 16-byte
/// aligned; `malloc` returns 0 when no block fits (as CUDA's does), `malloc(0)` returns 0, and
/// `free(0)` does nothing. Kernel accesses are checked against the heap as a whole (as a GPU's
/// would be), so an overflow from one block into the next is not reported.
pub struct DeviceHeap {
    /// The heap's memory.
    pub alloc: Arc<Allocation>,
    state: std::sync::Mutex<HeapState>,
}

#[derive(Default)]
struct HeapState {
    /// Free ranges (offset, size), sorted by offset, never adjacent.
    free: Vec<(u64, u64)>,
    /// Live blocks: offset → size.
    live: std::collections::BTreeMap<u64, u64>,
}

/// Why a device-side `free` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FreeError {
    /// The address is not in the heap.
    NotInHeap,
    /// In the heap, but not the start of a live block (a double free, or a pointer into a
    /// block).
    NotLive,
}

impl DeviceHeap {
    /// Alignment of the blocks `malloc` returns.
    pub const ALIGN: u64 = 16;

    fn new(alloc: Arc<Allocation>) -> DeviceHeap {
        let size = alloc.size & !(Self::ALIGN - 1);
        let free = if size > 0 { vec![(0, size)] } else { vec![] };
        DeviceHeap {
            alloc,
            state: std::sync::Mutex::new(HeapState {
                free,
                live: Default::default(),
            }),
        }
    }

    /// Allocates `size` bytes: the block's device address, or 0 when none fits.
    pub fn malloc(&self, size: u64) -> u64 {
        if size == 0 || size > self.alloc.size {
            return 0;
        }
        let need = size.div_ceil(Self::ALIGN) * Self::ALIGN;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = st.free.iter().position(|&(_, n)| n >= need) else {
            return 0;
        };
        let (off, n) = st.free[i];
        if n == need {
            st.free.remove(i);
        } else {
            st.free[i] = (off + need, n - need);
        }
        st.live.insert(off, need);
        self.alloc.base + off
    }

    /// Frees the block at device address `addr` (0 does nothing).
    pub fn free(&self, addr: u64) -> Result<(), FreeError> {
        if addr == 0 {
            return Ok(());
        }
        let off = addr
            .checked_sub(self.alloc.base)
            .filter(|&o| o < self.alloc.size)
            .ok_or(FreeError::NotInHeap)?;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let size = st.live.remove(&off).ok_or(FreeError::NotLive)?;
        let i = st.free.partition_point(|&(o, _)| o < off);
        st.free.insert(i, (off, size));
        // coalesce with the next range, then with the previous one
        if i + 1 < st.free.len() && st.free[i].0 + st.free[i].1 == st.free[i + 1].0 {
            st.free[i].1 += st.free[i + 1].1;
            st.free.remove(i + 1);
        }
        if i > 0 && st.free[i - 1].0 + st.free[i - 1].1 == st.free[i].0 {
            st.free[i - 1].1 += st.free[i].1;
            st.free.remove(i);
        }
        Ok(())
    }

    /// Bytes in live blocks.
    pub fn in_use(&self) -> u64 {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.live.values().sum()
    }
}

/// Entries of one chunk of an [`AllocMap`] at most: a chunk splits in two when it grows past.
const CHUNK_MAX: usize = 256;

/// The live allocations, sorted by base address, in chunks of at most [`CHUNK_MAX`].
///
/// Launches take a snapshot of the map, and the CUDA driver layer keeps up to hundreds of
/// thousands of allocations live, so neither a snapshot nor a change may cost O(n): a
/// snapshot is one `Arc` clone (the chunks are shared), and a change copies only what a live
/// snapshot still shares — the chunk list (n / 256 pointers) and the one chunk it touches —
/// and nothing when no snapshot is alive (the usual case after a synchronous launch). A lookup
/// is two binary searches: over the chunks' first bases, then within one chunk.
#[derive(Clone, Default)]
pub struct AllocMap {
    top: Arc<Chunks>,
}

#[derive(Clone, Default)]
struct Chunks {
    /// The first base of each chunk (`firsts[k] == chunks[k][0].base`).
    firsts: Vec<u64>,
    /// Non-empty chunks, in address order.
    chunks: Vec<Arc<Vec<Arc<Allocation>>>>,
    len: usize,
}

impl AllocMap {
    /// How many allocations are live.
    pub fn len(&self) -> usize {
        self.top.len
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.top.len == 0
    }

    /// The chunk that holds, or would hold, base `addr`: the last whose first base is at most
    /// `addr` (the first chunk when `addr` is below them all); `None` when the map is empty.
    #[inline(always)]
    fn chunk_of(&self, addr: u64) -> Option<usize> {
        let t = &*self.top;
        if t.chunks.is_empty() {
            return None;
        }
        Some(t.firsts.partition_point(|&f| f <= addr).saturating_sub(1))
    }

    /// The last allocation whose base is at most `addr`, and the first above `addr`.
    pub fn around(&self, addr: u64) -> (Option<&Arc<Allocation>>, Option<&Arc<Allocation>>) {
        let Some(ci) = self.chunk_of(addr) else {
            return (None, None);
        };
        let t = &*self.top;
        let c = &t.chunks[ci];
        let i = c.partition_point(|a| a.base <= addr);
        let below = i.checked_sub(1).map(|k| &c[k]);
        let above = c.get(i).or_else(|| t.chunks.get(ci + 1).map(|n| &n[0]));
        (below, above)
    }

    /// The allocation containing `[addr, addr+len)`.
    #[inline(always)]
    pub fn find(&self, addr: u64, len: u64) -> Option<&Arc<Allocation>> {
        let ci = self.chunk_of(addr)?;
        let c = &self.top.chunks[ci];
        let i = c.partition_point(|a| a.base <= addr);
        let a = c.get(i.checked_sub(1)?)?;
        (addr - a.base).checked_add(len).filter(|&e| e <= a.size)?;
        Some(a)
    }

    /// Adds `a` (whose base no live allocation has).
    pub fn insert(&mut self, a: Arc<Allocation>) {
        let t = Arc::make_mut(&mut self.top);
        t.len += 1;
        if t.chunks.is_empty() {
            t.firsts.push(a.base);
            t.chunks.push(Arc::new(vec![a]));
            return;
        }
        let ci = t.firsts.partition_point(|&f| f <= a.base).saturating_sub(1);
        let c = Arc::make_mut(&mut t.chunks[ci]);
        let i = c.partition_point(|x| x.base < a.base);
        c.insert(i, a);
        t.firsts[ci] = c[0].base;
        if c.len() > CHUNK_MAX {
            let upper = c.split_off(c.len() / 2);
            t.firsts.insert(ci + 1, upper[0].base);
            t.chunks.insert(ci + 1, Arc::new(upper));
        }
    }

    /// Removes the allocation at `base`; whether there was one.
    pub fn remove(&mut self, base: u64) -> bool {
        let Some(ci) = self.chunk_of(base) else {
            return false;
        };
        let Ok(i) = self.top.chunks[ci].binary_search_by_key(&base, |a| a.base) else {
            return false;
        };
        let t = Arc::make_mut(&mut self.top);
        t.len -= 1;
        let c = Arc::make_mut(&mut t.chunks[ci]);
        c.remove(i);
        if let Some(first) = c.first() {
            t.firsts[ci] = first.base;
        } else {
            t.firsts.remove(ci);
            t.chunks.remove(ci);
        }
        true
    }

    /// The allocations in address order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Allocation>> {
        self.top.chunks.iter().flat_map(|c| c.iter())
    }
}

/// The global allocation map of a device.
pub struct GlobalMemory {
    allocs: AllocMap,
    /// `allocs` as one slice for [`MemMap`] (small maps only), made by the first snapshot
    /// after a change.
    flat: std::sync::OnceLock<Arc<[Arc<Allocation>]>>,
    next: u64,
    identity: bool,
    heap: Option<Arc<DeviceHeap>>,
    heap_size: u64,
}

impl Default for GlobalMemory {
    fn default() -> GlobalMemory {
        GlobalMemory {
            allocs: AllocMap::default(),
            flat: std::sync::OnceLock::new(),
            next: 0,
            identity: false,
            heap: None,
            heap_size: DEFAULT_HEAP_SIZE,
        }
    }
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocError(pub String);

impl GlobalMemory {
    /// An allocation map in identity mode: each allocation's device address is the host address
    /// of its storage (as the CUDA driver API layer needs, so that host code can use device
    /// pointers of pinned and managed memory directly). Addresses then depend on the host
    /// allocator, are 16-byte aligned, and a freed address may be handed out again.
    pub fn identity() -> GlobalMemory {
        GlobalMemory {
            identity: true,
            ..GlobalMemory::default()
        }
    }

    /// Whether allocations sit at their host addresses ([`GlobalMemory::identity`]).
    pub fn is_identity(&self) -> bool {
        self.identity
    }

    /// Allocates `size` zeroed bytes aligned to 256.
    pub fn alloc(
        &mut self,
        size: u64,
        read_only: bool,
        label: String,
    ) -> Result<Arc<Allocation>, AllocError> {
        const LIMIT: u64 = 1 << 40;
        if size > LIMIT {
            return Err(AllocError(format!(
                "cannot allocate {size} bytes for {label}: the limit is {LIMIT} bytes"
            )));
        }
        if self.identity {
            // at least one word, so that the storage has an address of its own
            let words = usize::try_from(size.div_ceil(4).max(1))
                .ok()
                .and_then(AtomicWords::try_zeroed)
                .ok_or_else(|| {
                    AllocError(format!(
                        "out of host memory allocating {size} bytes for {label}"
                    ))
                })?;
            // fresh host storage overlaps nothing live: placed in the map as registered memory is
            return self.insert(size, words, read_only, label);
        }
        if self.next == 0 {
            self.next = GLOBAL_BASE;
        }
        let base = self.next;
        // guard gap of at least 4 KiB, next allocation 256-aligned
        self.next = (base + size + 4096 + 255) & !255;
        if self.next >= WINDOW_BASE {
            return Err(AllocError("device address space exhausted".into()));
        }
        let words = usize::try_from(size.div_ceil(4))
            .ok()
            .and_then(AtomicWords::try_zeroed)
            .ok_or_else(|| {
                AllocError(format!(
                    "out of host memory allocating {size} bytes for {label}"
                ))
            })?;
        let a = Arc::new(Allocation {
            base,
            size,
            words,
            read_only,
            label,
        });
        self.allocs.insert(a.clone());
        self.flat = std::sync::OnceLock::new();
        Ok(a)
    }

    /// Adds an allocation of `size` bytes whose words already exist at their host address
    /// ([`AtomicWords::external`]; identity mode only): host memory registered with the CUDA
    /// driver layer, or memory shared with another process. Refused when it overlaps a live
    /// allocation or its words are fewer than `size` bytes.
    pub fn insert(
        &mut self,
        size: u64,
        words: AtomicWords,
        read_only: bool,
        label: String,
    ) -> Result<Arc<Allocation>, AllocError> {
        let base = words.0.as_ptr() as u64;
        if !self.identity {
            return Err(AllocError(format!(
                "cannot add {label} at its host address: the device is not in identity mode"
            )));
        }
        if size > words.0.len() as u64 * 4 || base.checked_add(size.max(1)).is_none() {
            return Err(AllocError(format!(
                "{label}: {size} bytes do not fit its storage"
            )));
        }
        // the last allocation at or below `base`, and the first above it
        let (below, above) = self.allocs.around(base);
        let overlaps_below = below.is_some_and(|b| b.base + b.size.max(1) > base);
        let overlaps_above = above.is_some_and(|a| a.base < base + size.max(1));
        if overlaps_below || overlaps_above {
            return Err(AllocError(format!(
                "{label} ({base:#x}, {size} bytes) overlaps a live allocation"
            )));
        }
        let a = Arc::new(Allocation {
            base,
            size,
            words,
            read_only,
            label,
        });
        self.allocs.insert(a.clone());
        self.flat = std::sync::OnceLock::new();
        Ok(a)
    }

    /// Removes an allocation (its addresses are never handed out again).
    pub fn free(&mut self, base: u64) -> bool {
        self.flat = std::sync::OnceLock::new();
        self.allocs.remove(base)
    }

    /// A snapshot of the map for one launch.
    pub fn snapshot(&self) -> MemMap {
        let flat = (self.allocs.len() <= FLAT_MAX).then(|| {
            self.flat
                .get_or_init(|| self.allocs.iter().cloned().collect())
                .clone()
        });
        MemMap {
            allocs: self.allocs.clone(),
            flat,
            heap: self.heap.clone(),
        }
    }

    /// The size the device heap has or will have ([`DEFAULT_HEAP_SIZE`] unless set).
    pub fn heap_size(&self) -> u64 {
        self.heap.as_ref().map_or(self.heap_size, |h| h.alloc.size)
    }

    /// Sets the size of the device heap. Refused once the heap exists (a kernel that calls
    /// `malloc` or `free` has been launched), as CUDA refuses `cudaLimitMallocHeapSize` then.
    pub fn set_heap_size(&mut self, bytes: u64) -> Result<(), AllocError> {
        if self.heap.is_some() {
            return Err(AllocError(
                "the device heap size cannot change after a kernel that calls malloc or free \
                 has been launched"
                    .into(),
            ));
        }
        self.heap_size = bytes;
        Ok(())
    }

    /// The device heap, created (and added to the map) on first use.
    pub fn heap(&mut self) -> Result<Arc<DeviceHeap>, AllocError> {
        if let Some(h) = &self.heap {
            return Ok(h.clone());
        }
        let a = self.alloc(self.heap_size, false, "device heap (malloc)".into())?;
        let h = Arc::new(DeviceHeap::new(a));
        self.heap = Some(h.clone());
        Ok(h)
    }

    /// The allocation containing `[addr, addr+len)`.
    pub fn find(&self, addr: u64, len: u64) -> Option<&Arc<Allocation>> {
        self.allocs.find(addr, len)
    }
}

/// The allocation map as seen by one launch (immutable while kernels run).
#[derive(Clone, Default)]
pub struct MemMap {
    /// The allocations (a snapshot shares the device's map until it changes).
    pub allocs: AllocMap,
    /// The same allocations as one sorted slice, when there are at most [`FLAT_MAX`]: a lookup
    /// then costs what a plain binary search does, which matters on the interpreter's memory
    /// paths (the chunked map costs three more dependent loads a lookup).
    flat: Option<Arc<[Arc<Allocation>]>>,
    /// The device heap, when it exists.
    pub heap: Option<Arc<DeviceHeap>>,
}

/// Maps of at most this many allocations are also handed to launches as one slice.
const FLAT_MAX: usize = 256;

impl MemMap {
    /// The allocation containing `[addr, addr+len)`.
    #[inline]
    pub fn find(&self, addr: u64, len: u64) -> Option<&Allocation> {
        match &self.flat {
            Some(f) => {
                let i = f.partition_point(|a| a.base <= addr);
                let a = f.get(i.checked_sub(1)?)?;
                (addr - a.base).checked_add(len).filter(|&e| e <= a.size)?;
                Some(a)
            }
            None => self.allocs.find(addr, len).map(|a| &**a),
        }
    }
    /// Says where an out-of-bounds access of `size` bytes at global address `addr` falls (for
    /// messages): in the allocation it starts in and runs past the end of, past the end of
    /// the allocation below it or before the start of the one above it (whichever is nearer),
    /// or in the null page.
    pub fn blame(&self, addr: u64, size: u32) -> String {
        blame_in(&self.allocs, addr, size)
    }
}

/// Addresses below this are reported as null-pointer accesses: nothing is ever allocated
/// there ([`GLOBAL_BASE`] is far above), and a small address is almost always a null pointer
/// plus an offset.
pub const NULL_PAGE: u64 = 1 << 20;

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn describe(a: &Allocation) -> String {
    format!("{} ({:#x}, {})", a.label, a.base, plural(a.size, "byte"))
}

fn blame_in(allocs: &AllocMap, addr: u64, size: u32) -> String {
    if addr < NULL_PAGE {
        return if addr == 0 {
            "a null-pointer access (address 0)".into()
        } else {
            format!(
                "a null-pointer access ({} past address 0; nothing is ever allocated below {GLOBAL_BASE:#x})",
                plural(addr, "byte")
            )
        };
    }
    if addr < GLOBAL_BASE {
        return format!(
            "the address is below every allocation (nothing is ever allocated below \
             {GLOBAL_BASE:#x}): a null pointer plus a large offset, or an integer used as an address"
        );
    }
    let (below, above) = allocs.around(addr);
    if let Some(b) = below {
        let end = b.base.saturating_add(b.size);
        if addr < end {
            // starts inside `b`, runs past its end
            let over = addr.saturating_add(size as u64) - end;
            return format!(
                "the access starts at byte {} of {} and runs {} past its end",
                addr - b.base,
                describe(b),
                plural(over, "byte")
            );
        }
    }
    let past = |b: &Allocation| {
        let k = addr - b.base.saturating_add(b.size);
        if k == 0 {
            format!("just past the end of {}", describe(b))
        } else {
            format!("{} past the end of {}", plural(k, "byte"), describe(b))
        }
    };
    let before = |a: &Allocation| {
        format!(
            "{} before the start of {}",
            plural(a.base - addr, "byte"),
            describe(a)
        )
    };
    match (below, above) {
        (Some(b), Some(a)) => {
            if addr - (b.base + b.size) <= a.base - addr {
                past(b)
            } else {
                before(a)
            }
        }
        (Some(b), None) => past(b),
        (None, Some(a)) => before(a),
        (None, None) => "no device memory is allocated".into(),
    }
}

/// Stripes of the 64-bit atomic lock table ([`lock64`]).
const LOCK64_STRIPES: usize = 64;

static LOCK64: [std::sync::Mutex<()>; LOCK64_STRIPES] =
    [const { std::sync::Mutex::new(()) }; LOCK64_STRIPES];

/// Locks the stripe of the 64-bit global word at device address `addr`.
///
/// Global words are 32-bit atomics, so a 64-bit read-modify-write (`atom.global.add.u64`, …)
/// is two word accesses; every 64-bit atomic holds the lock of its address's stripe (the
/// address's 8-byte index modulo 64) around them, which makes 64-bit atomics on the same
/// address atomic with respect to each other. A 64-bit atomic and a concurrent 32-bit atomic
/// on the same bytes are *not* atomic with respect to each other (the 32-bit one takes no
/// lock); PTX programs do not mix widths on one location. A poisoned stripe (a panic while
/// held, which the handlers never do) is taken over rather than propagated.
pub fn lock64(addr: u64) -> std::sync::MutexGuard<'static, ()> {
    let k = (addr >> 3) as usize % LOCK64_STRIPES;
    LOCK64[k]
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked map against a `BTreeMap` model: random inserts, removals and lookups over
    /// enough allocations to split and empty chunks, with snapshots taken along the way that
    /// must never change afterwards.
    #[test]
    fn alloc_map_matches_an_ordered_map() {
        use std::collections::BTreeMap;
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mk = |base: u64, size: u64| {
            Arc::new(Allocation {
                base,
                size,
                words: AtomicWords::zeroed(1),
                read_only: false,
                label: String::new(),
            })
        };
        let mut map = AllocMap::default();
        let mut model: BTreeMap<u64, u64> = BTreeMap::new();
        let mut snaps: Vec<(AllocMap, Vec<(u64, u64)>)> = Vec::new();
        for step in 0..20_000u64 {
            // bases on a 64-byte grid, sizes below it: allocations never overlap
            let base = 64 * (1 + rnd(3_000));
            if rnd(3) > 0 || model.is_empty() {
                if let std::collections::btree_map::Entry::Vacant(e) = model.entry(base) {
                    let size = 1 + rnd(63);
                    e.insert(size);
                    map.insert(mk(base, size));
                }
            } else {
                assert_eq!(
                    map.remove(base),
                    model.remove(&base).is_some(),
                    "remove {base}"
                );
            }
            assert_eq!(map.len(), model.len());
            // lookups at, inside, at the end of and past allocations
            for _ in 0..4 {
                let addr = rnd(64 * 3_002);
                let len = rnd(70);
                let want = model
                    .range(..=addr)
                    .next_back()
                    .filter(|&(&b, &sz)| addr - b + len <= sz)
                    .map(|(&b, _)| b);
                assert_eq!(
                    map.find(addr, len).map(|a| a.base),
                    want,
                    "find {addr} {len}"
                );
                let (below, above) = map.around(addr);
                assert_eq!(
                    below.map(|a| a.base),
                    model.range(..=addr).next_back().map(|x| *x.0)
                );
                assert_eq!(
                    above.map(|a| a.base),
                    model.range(addr + 1..).next().map(|x| *x.0)
                );
            }
            if step % 2_000 == 0 {
                snaps.push((map.clone(), model.iter().map(|(&b, &s)| (b, s)).collect()));
            }
        }
        assert!(model.len() > 4 * CHUNK_MAX, "the test must split chunks");
        for (snap, want) in &snaps {
            let got: Vec<(u64, u64)> = snap.iter().map(|a| (a.base, a.size)).collect();
            assert_eq!(&got, want);
        }
        // emptied completely
        for b in model.keys() {
            assert!(map.remove(*b));
        }
        assert!(map.is_empty() && map.find(64, 1).is_none());
        assert!(matches!(map.around(64), (None, None)));
    }

    /// Launch snapshots of small maps search one slice, of large ones the chunks: both find
    /// the same allocations, and a change after a snapshot shows in the next one only.
    #[test]
    fn snapshots_flat_and_chunked_find_the_same() {
        let mut g = GlobalMemory::default();
        let mut bufs = Vec::new();
        for n in 0..2 * FLAT_MAX {
            let before = g.snapshot();
            let a = g.alloc(100 + n as u64, false, format!("b{n}")).unwrap();
            let after = g.snapshot();
            assert_eq!(after.flat.is_some(), n < FLAT_MAX);
            assert!(before.find(a.base, 1).is_none() && after.find(a.base, 1).is_some());
            bufs.push(a);
            for b in bufs.iter().step_by(17) {
                assert_eq!(
                    after.find(b.base + b.size - 4, 4).map(|x| x.base),
                    Some(b.base)
                );
                assert!(after.find(b.base + b.size - 3, 4).is_none());
            }
        }
        let before = g.snapshot();
        assert!(g.free(bufs[5].base));
        assert!(before.find(bufs[5].base, 1).is_some());
        assert!(g.snapshot().find(bufs[5].base, 1).is_none());
    }

    #[test]
    fn heap_size_before_and_after_the_heap_exists() {
        let mut g = GlobalMemory::default();
        assert_eq!(g.heap_size(), 8 << 20);
        g.set_heap_size(1 << 20).unwrap();
        assert_eq!(g.heap_size(), 1 << 20);
        let h = g.heap().unwrap();
        assert_eq!(h.alloc.size, 1 << 20);
        assert_eq!(g.heap_size(), 1 << 20);
        // fixed once a kernel has used it
        assert!(g.set_heap_size(2 << 20).is_err());
        assert_eq!(g.heap_size(), 1 << 20);
    }

    #[test]
    fn device_heap_first_fit_and_coalescing() {
        let mut g = GlobalMemory::default();
        g.set_heap_size(64).unwrap();
        let h = g.heap().unwrap();
        assert!(
            g.set_heap_size(128).is_err(),
            "the size is fixed once the heap exists"
        );
        let base = h.alloc.base;
        // 16-byte blocks, first fit: 0, 16, 32 (a 1-byte request takes a whole block)
        assert_eq!(h.malloc(1), base);
        assert_eq!(h.malloc(16), base + 16);
        assert_eq!(h.malloc(17), base + 32); // 32 bytes: 32..64, the heap is full
        assert_eq!(h.malloc(1), 0);
        assert_eq!(h.malloc(0), 0);
        assert_eq!(h.in_use(), 64);
        // free the middle, then the first: they merge into one 32-byte range
        h.free(base + 16).unwrap();
        h.free(base).unwrap();
        assert_eq!(h.malloc(32), base);
        assert_eq!(h.free(base + 8), Err(FreeError::NotLive));
        assert_eq!(h.free(base + 64), Err(FreeError::NotInHeap));
        h.free(base + 32).unwrap();
        assert_eq!(h.free(base + 32), Err(FreeError::NotLive));
        h.free(base).unwrap();
        h.free(0).unwrap();
        assert_eq!(h.in_use(), 0);
        assert_eq!(h.malloc(64), base, "everything merged back into one range");
        assert_eq!(g.snapshot().find(base, 64).map(|a| a.base), Some(base));
    }

    #[test]
    fn identity_allocations_sit_at_their_host_addresses() {
        let mut m = GlobalMemory::identity();
        let a = m.alloc(100, false, "a".into()).unwrap();
        let b = m.alloc(3, false, "b".into()).unwrap();
        assert_eq!(a.base, a.words.0.as_ptr() as u64);
        assert_eq!(b.base, b.words.0.as_ptr() as u64);
        assert_eq!(a.base % 16, 0);
        assert!(a.base < WINDOW_BASE && b.base < WINDOW_BASE);
        assert_eq!(m.find(a.base + 96, 4).map(|x| x.base), Some(a.base));
        assert!(m.find(a.base + 97, 4).is_none());
        assert_eq!(m.find(b.base, 3).map(|x| x.base), Some(b.base));
        let snap = m.snapshot();
        let bases: Vec<u64> = snap.allocs.iter().map(|a| a.base).collect();
        assert!(bases.windows(2).all(|w| w[0] < w[1]));
        assert!(m.free(a.base));
        assert!(m.find(a.base, 1).is_none());
    }

    #[test]
    fn blame_names_the_buffer_an_access_starts_in() {
        let mut g = GlobalMemory::default();
        let a = g.alloc(250, false, "argument 0".into()).unwrap();
        let b = g.alloc(4, false, "argument 1".into()).unwrap();
        let m = g.snapshot();
        // a 4-byte access at byte 248 of a 250-byte buffer covers 248..251
        assert_eq!(
            m.blame(a.base + 248, 4),
            format!(
                "the access starts at byte 248 of argument 0 ({:#x}, 250 bytes) and runs 2 bytes past its end",
                a.base
            )
        );
        assert_eq!(
            m.blame(a.base + 251, 1),
            format!(
                "1 byte past the end of argument 0 ({:#x}, 250 bytes)",
                a.base
            )
        );
        assert_eq!(
            m.blame(a.base + 250, 1),
            format!("just past the end of argument 0 ({:#x}, 250 bytes)", a.base)
        );
        // nearer to the start of the next buffer than to the end of the previous one
        assert_eq!(
            m.blame(b.base - 8, 4),
            format!(
                "8 bytes before the start of argument 1 ({:#x}, 4 bytes)",
                b.base
            )
        );
        assert_eq!(
            m.blame(b.base + 100, 4),
            format!(
                "96 bytes past the end of argument 1 ({:#x}, 4 bytes)",
                b.base
            )
        );
        assert_eq!(m.blame(0, 4), "a null-pointer access (address 0)");
        assert!(m
            .blame(0x40, 4)
            .starts_with("a null-pointer access (64 bytes past address 0;"));
        assert!(m
            .blame(GLOBAL_BASE - 4096, 4)
            .starts_with("the address is below every allocation"));
        assert_eq!(
            GlobalMemory::default().snapshot().blame(GLOBAL_BASE, 4),
            "no device memory is allocated"
        );
    }

    #[test]
    fn host_copies_at_every_offset_and_length() {
        let mut g = GlobalMemory::default();
        let a = g.alloc(24, false, "t".into()).unwrap();
        for off in 0..8u64 {
            for len in 0..=(16 - off as usize) {
                // a known background, then `len` bytes written at `off`
                let background: Vec<u8> = (0..24).map(|k| 0xA0 + k as u8).collect();
                a.write_bytes(0, &background);
                let data: Vec<u8> = (0..len).map(|k| k as u8 + 1).collect();
                a.write_bytes(off, &data);
                let mut want = background.clone();
                want[off as usize..off as usize + len].copy_from_slice(&data);
                assert_eq!(a.read_bytes(0, 24), want, "off {off} len {len}");
                assert_eq!(a.read_bytes(off, len as u64), data, "off {off} len {len}");
            }
        }
    }
}
