//! Data movement: `mov` (incl. vector pack/unpack and special registers), `ld`, `ldu`, `st`,
//! `cvta`, `isspacep`, `alloca`, `stacksave`, `stackrestore`; and the address resolution every
//! memory instruction shares ([`resolve`], [`read`], [`write`]). The handlers only:
//! `crate::decode::data` decodes these instructions.

use crate::mem::{
    self, Allocation, FUNC_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_BASE,
    WINDOW_SIZE,
};
use crate::program::Space;
use crate::program::{for_lanes, lane_bits, Ctx, Fault, FaultKind, Insn, MemResult, FULL};
use std::sync::atomic::Ordering::Relaxed;

/// A resolved memory location.
pub(crate) enum Target<'a> {
    /// Byte offset in a global allocation.
    Global(&'a Allocation, u64),
    /// Byte offset in shared memory.
    Shared(u64),
    /// Byte offset in the lane's local memory.
    Local(u64),
    /// Byte offset in the kernel parameter buffer.
    Param(u64),
}

pub(crate) fn space_code(s: Space) -> u64 {
    match s {
        Space::Global => 0,
        Space::Const => 1,
        Space::Shared => 2,
        Space::Local => 3,
        Space::KernelParam => 4,
        Space::Generic => 5,
    }
}

pub(crate) fn space_of(code: u64) -> Space {
    match code & 7 {
        0 => Space::Global,
        1 => Space::Const,
        2 => Space::Shared,
        3 => Space::Local,
        4 => Space::KernelParam,
        _ => Space::Generic,
    }
}

pub(crate) fn space_name(s: Space) -> &'static str {
    match s {
        Space::Global => "global",
        Space::Const => "const",
        Space::Shared => "shared",
        Space::Local => "local",
        Space::KernelParam => "param",
        Space::Generic => "generic",
    }
}

pub(crate) fn oob(space: Space, addr: u64, size: u32, lane: usize, detail: String) -> Fault {
    Fault {
        kind: FaultKind::OutOfBounds {
            space: space_name(space),
            addr,
            size,
            detail,
        },
        lane: Some(lane as u32),
    }
}

/// Where an out-of-bounds access of `size` bytes at offset `addr` of a region of `len` bytes
/// (shared, local or parameter memory, `what`) falls: it starts inside and runs past the end,
/// or starts past the end.
#[cold]
pub(crate) fn window_detail(addr: u64, size: u32, len: u64, what: &str) -> String {
    let bytes = |n: u64| {
        if n == 1 {
            "1 byte".to_string()
        } else {
            format!("{n} bytes")
        }
    };
    if addr < len {
        format!(
            "the access starts at byte {addr} of {what} ({}) and runs {} past its end",
            bytes(len),
            bytes(addr.saturating_add(size as u64) - len)
        )
    } else if addr == len {
        format!("just past the end of {what} ({})", bytes(len))
    } else {
        format!(
            "{} past the end of {what} ({})",
            bytes(addr - len),
            bytes(len)
        )
    }
}

/// Resolves `addr` in `space` for an access of `bytes` bytes by lane `lane`.
#[inline]
pub(crate) fn resolve<'a>(
    ctx: &Ctx<'a>,
    space: Space,
    addr: u64,
    bytes: u32,
    lane: usize,
    write: bool,
) -> Result<Target<'a>, Fault> {
    let align = bytes.clamp(1, 16) as u64;
    if addr % align != 0 {
        return Err(Fault {
            kind: FaultKind::Misaligned {
                space: space_name(space),
                addr,
                align: align as u32,
            },
            lane: Some(lane as u32),
        });
    }
    let n = bytes as u64;
    let (space, addr) = match space {
        Space::Generic => {
            if addr >= WINDOW_BASE {
                if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
                    (Space::Shared, addr - SHARED_WINDOW)
                } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
                    (Space::Local, addr - LOCAL_WINDOW)
                } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&addr) {
                    (Space::KernelParam, addr - PARAM_WINDOW)
                } else {
                    let what = if addr < FUNC_WINDOW + WINDOW_SIZE {
                        "a function address, not data"
                    } else {
                        "not a data address: it lies in no global allocation and no window of the generic space (shared, local, param)"
                    };
                    return Err(oob(Space::Generic, addr, bytes, lane, what.into()));
                }
            } else {
                (Space::Global, addr)
            }
        }
        s => (s, addr),
    };
    let mem: &'a mem::MemMap = ctx.env.mem;
    // `target` when the access lies within storage of `len` bytes, else the out-of-bounds
    // fault with `detail`
    let within = |len: u64, target: Target<'a>, detail: &dyn Fn() -> String| {
        if addr.checked_add(n).is_some_and(|e| e <= len) {
            Ok(target)
        } else {
            Err(oob(space, addr, bytes, lane, detail()))
        }
    };
    match space {
        Space::Global | Space::Const => match mem.find(addr, n) {
            Some(a) => {
                if write && a.read_only {
                    return Err(Fault {
                        kind: FaultKind::ReadOnly { addr },
                        lane: Some(lane as u32),
                    });
                }
                Ok(Target::Global(a, addr - a.base))
            }
            None => Err(oob(space, addr, bytes, lane, mem.blame(addr, bytes))),
        },
        Space::Shared => within(ctx.env.shared_size, Target::Shared(addr), &|| {
            window_detail(
                addr,
                bytes,
                ctx.env.shared_size,
                "the block's shared memory",
            )
        }),
        Space::Local => {
            let len = ctx.local[lane].len() as u64 * 4;
            within(len, Target::Local(addr), &|| {
                window_detail(addr, bytes, len, "the thread's local memory (its stack)")
            })
        }
        Space::KernelParam => {
            if write {
                return Err(Fault {
                    kind: FaultKind::Other(format!(
                        "store to kernel parameter memory at offset {addr}: kernel parameters are read-only"
                    )),
                    lane: Some(lane as u32),
                });
            }
            within(ctx.env.param_size, Target::Param(addr), &|| {
                window_detail(addr, bytes, ctx.env.param_size, "the kernel's parameters")
            })
        }
        Space::Generic => unreachable_generic(),
    }
}

#[cold]
pub(crate) fn unreachable_generic() -> Result<Target<'static>, Fault> {
    Err(Fault {
        kind: FaultKind::Other("internal: unresolved generic address".into()),
        lane: None,
    })
}

/// Reads `size` bytes at `extra` past a resolved location.
#[inline]
pub(crate) fn read(ctx: &Ctx<'_>, t: &Target<'_>, lane: usize, extra: u64, size: u32) -> u64 {
    match *t {
        Target::Global(a, off) => mem::load(&a.words, off + extra, size),
        Target::Shared(off) => mem::load(&ctx.shared[..], off + extra, size),
        Target::Local(off) => mem::load(&ctx.local[lane], off + extra, size),
        Target::Param(off) => mem::load(ctx.env.params, off + extra, size),
    }
}

/// Writes `size` bytes at `extra` past a resolved location.
#[inline]
pub(crate) fn write(ctx: &mut Ctx<'_>, t: &Target<'_>, lane: usize, extra: u64, size: u32, v: u64) {
    match *t {
        Target::Global(a, off) => mem::store_atomic(&a.words, off + extra, size, v),
        Target::Shared(off) => mem::store(&mut ctx.shared[..], off + extra, size, v),
        Target::Local(off) => mem::store(&mut ctx.local[lane], off + extra, size, v),
        Target::Param(_) => {}
    }
}

// aux layout of ld/st: space (bits 0..3), element size in bytes (8..16), vector count (16..24),
// sign-extend (bit 24).
#[inline]
pub(crate) fn sext(v: u64, size: u32) -> u64 {
    let sh = 64 - size * 8;
    (((v << sh) as i64) >> sh) as u64
}

/// Where every active lane of a warp access falls: one global allocation, the CTA's shared
/// memory or the kernel parameters; with the address of byte 0 of that region (a window base
/// for generic addresses).
pub(crate) enum WarpTarget<'a> {
    Global(&'a Allocation),
    Shared(u64),
    /// Kernel parameters (reads only).
    Param(u64),
}

/// The fast path of a warp's memory access: when all active lanes are aligned and fall in the
/// region of the first active lane (one global allocation, shared memory or the parameters),
/// one lookup and a range check per lane serve the warp. `None` sends the access down the
/// per-lane path, which also reports the lane that faults.
#[inline(always)]
pub(crate) fn warp_target<'a>(
    ctx: &Ctx<'a>,
    space: Space,
    addrs: &[u64; 32],
    mask: u32,
    bytes: u32,
    write: bool,
) -> Option<WarpTarget<'a>> {
    // no lane, or one (`if (tid == 0) …`): the per-lane path does one lookup either way,
    // without the 32-lane check
    if mask & mask.wrapping_sub(1) == 0 {
        return None;
    }
    let first = addrs[mask.trailing_zeros() as usize];
    let n = bytes as u64;
    let (target, base, len) = region(ctx, space, first, bytes, write)?;
    // every active lane aligned and within [base, base + len - n]
    let last = len.checked_sub(n)?;
    let align = bytes.clamp(1, 16) as u64 - 1;
    let mut bad = 0u64;
    if mask == FULL {
        for &x in addrs {
            bad |= (x.wrapping_sub(base) > last) as u64 | (x & align);
        }
    } else {
        for (l, &x) in addrs.iter().enumerate() {
            let on = (mask >> l & 1) as u64;
            bad |= on * ((x.wrapping_sub(base) > last) as u64 | (x & align));
        }
    }
    (bad == 0).then_some(target)
}

/// The region that address `first` (an access of `bytes`) falls in, with the address of its
/// byte 0 and its length in bytes; `None` when the per-lane path must decide.
#[inline(always)]
pub(crate) fn region<'a>(
    ctx: &Ctx<'a>,
    space: Space,
    first: u64,
    bytes: u32,
    write: bool,
) -> Option<(WarpTarget<'a>, u64, u64)> {
    let n = bytes as u64;
    let (target, base, len) = match space {
        Space::Global | Space::Const => {
            let a = ctx.env.mem.find(first, n)?;
            (WarpTarget::Global(a), a.base, a.size)
        }
        Space::Generic if first < WINDOW_BASE => {
            let a = ctx.env.mem.find(first, n)?;
            (WarpTarget::Global(a), a.base, a.size)
        }
        Space::Shared => (WarpTarget::Shared(0), 0, ctx.env.shared_size),
        Space::Generic if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&first) => (
            WarpTarget::Shared(SHARED_WINDOW),
            SHARED_WINDOW,
            ctx.env.shared_size,
        ),
        Space::KernelParam if !write => (WarpTarget::Param(0), 0, ctx.env.param_size),
        Space::Generic if !write && (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&first) => {
            (
                WarpTarget::Param(PARAM_WINDOW),
                PARAM_WINDOW,
                ctx.env.param_size,
            )
        }
        _ => return None,
    };
    if let WarpTarget::Global(a) = target {
        if write && a.read_only {
            return None;
        }
    }
    Some((target, base, len))
}

/// The word index of every lane's 4-byte access at `r[l] + imm`, in storage of `len` bytes
/// whose byte 0 is at `base`, computed and checked in one pass that touches no memory; `None`
/// when some lane is out of range or misaligned.
#[inline(always)]
pub(crate) fn word_indices4(
    r: &crate::program::Lanes,
    imm: u64,
    base: u64,
    len: u64,
) -> Option<[usize; 32]> {
    let last = len.checked_sub(4)?;
    let mut idx = [0usize; 32];
    let mut bad = 0u64;
    for l in 0..32 {
        let off = r[l].wrapping_add(imm).wrapping_sub(base);
        bad |= (off > last) as u64 | (off & 3);
        idx[l] = (off >> 2) as usize;
    }
    (bad == 0).then_some(idx)
}

/// The word index of lane 0's 4-byte access at `r[0] + imm` in storage of `len` bytes at
/// `base` when lane `l` accesses word `i + l * stride` (`STRIDE` 1: the coalesced pattern
/// `a[tid]`; 0: every lane at one word, `a[blockIdx.x]`) and all of them are in range; `None`
/// otherwise.
#[inline(always)]
pub(crate) fn run4<const STRIDE: u64>(
    r: &crate::program::Lanes,
    imm: u64,
    base: u64,
    len: u64,
) -> Option<usize> {
    // lanes 1 and 31 first: most scattered accesses fail here, before the pass over all lanes
    let stride = 4 * STRIDE;
    if r[1].wrapping_sub(r[0]) != stride || r[31].wrapping_sub(r[0]) != 31 * stride {
        return None;
    }
    let first = r[0].wrapping_add(imm).wrapping_sub(base);
    let span = 4 + 31 * 4 * STRIDE;
    let mut bad = (first & 3) | (len < span || first > len - span) as u64;
    for (l, &x) in r.iter().enumerate() {
        bad |= x ^ r[0].wrapping_add(4 * STRIDE * l as u64);
    }
    (bad == 0).then_some((first >> 2) as usize)
}

/// The commonest store, 4 bytes from every lane of a full warp: one pass computes and checks
/// the offsets, a second stores. False (nothing stored) when some lane fails the check.
#[inline(always)]
pub(crate) fn store4_full(ctx: &mut Ctx<'_>, space: Space, i: &Insn) -> bool {
    let r = &ctx.regs[i.a as usize];
    let imm = i.imm as u64;
    let Some((t, base, len)) = region(ctx, space, r[0].wrapping_add(imm), 4, true) else {
        return false;
    };
    let v = &ctx.regs[i.v[0] as usize];
    // consecutive words: one range check for the warp
    if let Some(i0) = run4::<1>(r, imm, base, len) {
        match t {
            WarpTarget::Global(a) => {
                if let Some(run) = a.words.run32(i0) {
                    for (w, &x) in run.iter().zip(v) {
                        w.store(x as u32, Relaxed);
                    }
                    return true;
                }
            }
            WarpTarget::Shared(_) => {
                if let Some(run) = ctx.shared.get_mut(i0..i0 + 32) {
                    for (w, &x) in run.iter_mut().zip(v) {
                        *w = x as u32;
                    }
                    return true;
                }
            }
            WarpTarget::Param(_) => return false,
        }
    }
    let Some(idx) = word_indices4(r, imm, base, len) else {
        return false;
    };
    match t {
        WarpTarget::Global(a) => {
            for l in 0..32 {
                a.words.cell(idx[l]).store(v[l] as u32, Relaxed);
            }
        }
        WarpTarget::Shared(_) => {
            for l in 0..32 {
                ctx.shared[idx[l]] = v[l] as u32;
            }
        }
        WarpTarget::Param(_) => return false,
    }
    true
}

/// The commonest load, 4 bytes into every lane of a full warp: one pass computes and checks
/// each lane's word index (no memory touched), a second loads straight into destination slot
/// `d` (each lane reads its own address before writing its own lane, so `d` may be `a`).
/// False, with nothing written, when some lane fails the check: the general path then reports
/// it.
#[inline(always)]
pub(crate) fn load4_full<W: mem::Words + ?Sized>(
    w: &W,
    regs: &mut [crate::program::Lanes],
    a: u32,
    d: u32,
    imm: u64,
    base: u64,
    len: u64,
) -> bool {
    // consecutive words, or one word for all: one range check for the warp, and a copy
    if let Some(i0) = run4::<1>(&regs[a as usize], imm, base, len) {
        if w.get32(i0, &mut regs[d as usize]) {
            return true;
        }
    } else if let Some(i) = run4::<0>(&regs[a as usize], imm, base, len) {
        if i < w.words() {
            regs[d as usize] = [w.get(i) as u64; 32];
            return true;
        }
    }
    let Some(idx) = word_indices4(&regs[a as usize], imm, base, len) else {
        return false;
    };
    let dst = &mut regs[d as usize];
    for l in 0..32 {
        dst[l] = w.get(idx[l]) as u64;
    }
    true
}

/// Lane `l`'s location: from the warp's fast-path target when there is one, else resolved on
/// its own (which reports a fault).
#[inline(always)]
pub(crate) fn lane_target<'a>(
    ctx: &Ctx<'a>,
    fast: &Option<WarpTarget<'a>>,
    space: Space,
    addr: u64,
    bytes: u32,
    l: usize,
    write: bool,
) -> Result<Target<'a>, Fault> {
    Ok(match *fast {
        Some(WarpTarget::Global(a)) => Target::Global(a, addr - a.base),
        Some(WarpTarget::Shared(b)) => Target::Shared(addr - b),
        Some(WarpTarget::Param(b)) => Target::Param(addr - b),
        None => resolve(ctx, space, addr, bytes, l, write)?,
    })
}

/// The address of each lane: register `a` plus the offset.
#[inline(always)]
pub(crate) fn lane_addrs(ctx: &Ctx<'_>, i: &Insn) -> [u64; 32] {
    let r = &ctx.regs[i.a as usize];
    let mut addrs = [0u64; 32];
    for l in 0..32 {
        addrs[l] = r[l].wrapping_add(i.imm as u64);
    }
    addrs
}

/// Loads element `k` of every active lane from word storage `w` whose byte 0 is at `base`.
#[inline(always)]
pub(crate) fn gather<W: mem::Words + ?Sized>(
    w: &W,
    d: &mut crate::program::Lanes,
    addrs: &[u64; 32],
    base: u64,
    mask: u32,
    size: u32,
    signed: bool,
) {
    match (size, signed) {
        (4, false) => for_lanes(mask, |l| {
            d[l] = w.get(((addrs[l] - base) >> 2) as usize) as u64;
        }),
        (8, _) => for_lanes(mask, |l| {
            let i = ((addrs[l] - base) >> 2) as usize;
            d[l] = w.get(i) as u64 | (w.get(i + 1) as u64) << 32;
        }),
        _ => for_lanes(mask, |l| {
            let v = mem::load(w, addrs[l] - base, size);
            d[l] = if signed { sext(v, size) } else { v };
        }),
    }
}

crate::with_v3!(pub(crate) fn ld, ld_v3 = ld_impl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult);

/// `ld.s32` into a 64-bit register (the decoder's choice, marked by [`WIDE_S32`] in `aux`):
/// [`ld`], whose full-warp 4-byte path copies the words as they are, then every active lane
/// sign-extended from bit 31 (ISA 9.4.1: a destination wider than a signed type is
/// sign-extended; the other paths already did it, and doing it again changes nothing). A
/// handler of its own, so that other loads pay nothing for it.
pub(crate) fn ld_wide_s32(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    ld(ctx, i, mask)?;
    let d = &mut ctx.regs[i.v[0] as usize];
    for_lanes(mask, |l| d[l] = sext(d[l], 4));
    Ok(())
}

/// The `aux` bit of an `ld.s32` into a 64-bit register ([`ld_wide_s32`]).
pub(crate) const WIDE_S32: u64 = 1 << 25;

#[inline(always)]
pub(crate) fn ld_impl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let space = space_of(i.aux);
    let size = (i.aux >> 8 & 0xFF) as u32;
    let vec = (i.aux >> 16 & 0xFF) as u32;
    let signed = i.aux >> 24 & 1 != 0;
    if mask == FULL && size == 4 && vec == 1 {
        let imm = i.imm as u64;
        let first = ctx.regs[i.a as usize][0].wrapping_add(imm);
        if let Some((t, base, len)) = region(ctx, space, first, 4, false) {
            let (regs, a, d) = (&mut *ctx.regs, i.a, i.v[0]);
            let done = match t {
                WarpTarget::Global(m) => load4_full(&m.words, regs, a, d, imm, base, len),
                WarpTarget::Shared(_) => load4_full(&ctx.shared[..], regs, a, d, imm, base, len),
                WarpTarget::Param(_) => load4_full(ctx.env.params, regs, a, d, imm, base, len),
            };
            if done {
                return Ok(());
            }
        }
    }
    let mut addrs = lane_addrs(ctx, i);
    match warp_target(ctx, space, &addrs, mask, size * vec, false) {
        Some(t) => {
            for k in 0..vec as usize {
                let d = &mut ctx.regs[i.v[k] as usize];
                match t {
                    WarpTarget::Global(a) => {
                        gather(&a.words, d, &addrs, a.base, mask, size, signed)
                    }
                    WarpTarget::Shared(b) => {
                        gather(&ctx.shared[..], d, &addrs, b, mask, size, signed)
                    }
                    WarpTarget::Param(b) => {
                        gather(ctx.env.params, d, &addrs, b, mask, size, signed)
                    }
                }
                for x in addrs.iter_mut() {
                    *x = x.wrapping_add(size as u64);
                }
            }
        }
        None => {
            for l in lane_bits(mask) {
                let t = resolve(ctx, space, addrs[l], size * vec, l, false)?;
                for k in 0..vec as usize {
                    let v = read(ctx, &t, l, (k as u32 * size) as u64, size);
                    ctx.regs[i.v[k] as usize][l] = if signed { sext(v, size) } else { v };
                }
            }
        }
    }
    Ok(())
}

crate::with_v3!(pub(crate) fn st, st_v3 = st_impl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult);

#[inline(always)]
pub(crate) fn st_impl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let space = space_of(i.aux);
    let size = (i.aux >> 8 & 0xFF) as u32;
    let vec = (i.aux >> 16 & 0xFF) as u32;
    // Lanes store in lane order, so that the highest lane wins when several write one address.
    if mask == FULL && size == 4 && vec == 1 && store4_full(ctx, space, i) {
        return Ok(());
    }
    // one lane (`if (lane == 31) smem[warp] = v;`): its own address only
    if mask.is_power_of_two() {
        return store_lane(ctx, i, space, size * vec, mask.trailing_zeros() as usize);
    }
    let addrs = lane_addrs(ctx, i);
    match warp_target(ctx, space, &addrs, mask, size * vec, true) {
        Some(WarpTarget::Global(a)) => {
            for_lanes(mask, |l| {
                for k in 0..vec as usize {
                    let v = ctx.regs[i.v[k] as usize][l];
                    let off = addrs[l] - a.base + (k as u32 * size) as u64;
                    mem::store_atomic(&a.words, off, size, v);
                }
            });
        }
        Some(WarpTarget::Shared(base)) => {
            let (regs, shared) = (&*ctx.regs, &mut ctx.shared[..]);
            for_lanes(mask, |l| {
                for k in 0..vec as usize {
                    let v = regs[i.v[k] as usize][l];
                    let off = addrs[l] - base + (k as u32 * size) as u64;
                    mem::store(shared, off, size, v);
                }
            });
        }
        // never answered for a store: the per-lane path reports a store to parameters
        Some(WarpTarget::Param(_)) | None => {
            for l in lane_bits(mask) {
                store_lane(ctx, i, space, size * vec, l)?;
            }
        }
    }
    Ok(())
}

/// `st` by lane `l` alone (an access of `bytes` in `space`), its address resolved on its own
/// (which reports a fault).
#[inline(always)]
pub(crate) fn store_lane(
    ctx: &mut Ctx<'_>,
    i: &Insn,
    space: Space,
    bytes: u32,
    l: usize,
) -> MemResult {
    let (size, vec) = ((i.aux >> 8 & 0xFF) as u32, (i.aux >> 16 & 0xFF) as u32);
    let addr = ctx.regs[i.a as usize][l].wrapping_add(i.imm as u64);
    let t = resolve(ctx, space, addr, bytes, l, true)?;
    for k in 0..vec as usize {
        let v = ctx.regs[i.v[k] as usize][l];
        write(ctx, &t, l, (k as u32 * size) as u64, size, v);
    }
    Ok(())
}

/// Where a `.v8` access keeps its eight value slots: `aux >> V8_LIST_SHIFT` indexes the
/// program's operand lists (an `Insn` holds four).
pub(crate) const V8_LIST_SHIFT: u32 = 32;

/// The eight value slots of a `.v8` access (see [`V8_LIST_SHIFT`]).
fn v8_slots<'a>(ctx: &Ctx<'a>, i: &Insn) -> Result<&'a [u32], Fault> {
    let lists: &'a [Vec<u32>] = ctx.env.lists;
    match lists.get((i.aux >> V8_LIST_SHIFT) as usize) {
        Some(l) if l.len() == 8 => Ok(&l[..]),
        _ => Err(Fault {
            kind: FaultKind::Other("internal error: a `.v8` access lost its registers".into()),
            lane: None,
        }),
    }
}

/// The 256-bit access of lane `l`: its address, aligned to the whole access (32 bytes; the
/// ISA requires vector accesses aligned to their full size), resolved.
fn v8_target<'a>(
    ctx: &Ctx<'a>,
    i: &Insn,
    space: Space,
    l: usize,
    store: bool,
) -> Result<Target<'a>, Fault> {
    let addr = ctx.regs[i.a as usize][l].wrapping_add(i.imm as u64);
    if addr % 32 != 0 {
        return Err(Fault {
            kind: FaultKind::Misaligned {
                space: space_name(space),
                addr,
                align: 32,
            },
            lane: Some(l as u32),
        });
    }
    resolve(ctx, space, addr, 32, l, store)
}

/// `ld.global{.nc}.v8.b32 {d0, …, d7}, [a]` (sm_100+): eight 4-byte elements per lane, lane
/// by lane through the general path.
pub(crate) fn ld_v8(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let space = space_of(i.aux);
    let size = (i.aux >> 8 & 0xFF) as u32;
    let signed = i.aux >> 24 & 1 != 0;
    let slots = v8_slots(ctx, i)?;
    for l in lane_bits(mask) {
        let t = v8_target(ctx, i, space, l, false)?;
        for (k, &s) in slots.iter().enumerate() {
            let v = read(ctx, &t, l, (k as u32 * size) as u64, size);
            ctx.regs[s as usize][l] = if signed { sext(v, size) } else { v };
        }
    }
    Ok(())
}

/// `st.global.v8.b32 [a], {a0, …, a7}`: lanes in lane order, so that the highest lane wins
/// where several write one address (as [`st`] does).
pub(crate) fn st_v8(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let space = space_of(i.aux);
    let size = (i.aux >> 8 & 0xFF) as u32;
    let slots = v8_slots(ctx, i)?;
    for l in lane_bits(mask) {
        let t = v8_target(ctx, i, space, l, true)?;
        for (k, &s) in slots.iter().enumerate() {
            let v = ctx.regs[s as usize][l];
            write(ctx, &t, l, (k as u32 * size) as u64, size, v);
        }
    }
    Ok(())
}

/// `ld` whose address is the same in every lane (a constant slot plus offset).
pub(crate) fn ld_uniform(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let space = space_of(i.aux);
    let size = (i.aux >> 8 & 0xFF) as u32;
    let vec = (i.aux >> 16 & 0xFF) as u32;
    let signed = i.aux >> 24 & 1 != 0;
    let l = mask.trailing_zeros() as usize;
    let addr = ctx.regs[i.a as usize][l].wrapping_add(i.imm as u64);
    let t = resolve(ctx, space, addr, size * vec, l, false)?;
    for k in 0..vec as usize {
        let v = read(ctx, &t, l, (k as u32 * size) as u64, size);
        let v = if signed { sext(v, size) } else { v };
        let d = &mut ctx.regs[i.v[k] as usize];
        for_lanes(mask, |l| d[l] = v);
    }
    Ok(())
}

/// Special registers read through [`clock`] at the time of the read.
pub(crate) const TIMERS: &[&str] = &[
    "%clock",
    "%clock_hi",
    "%clock64",
    "%globaltimer",
    "%globaltimer_lo",
    "%globaltimer_hi",
];

pub(crate) fn clock(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    // aux: 0 %clock (32 bit), 1 %clock64, 2 %globaltimer, 3 _lo, 4 _hi, 5 %clock_hi
    let t = ctx.env.start.elapsed().as_nanos() as u64;
    let v = match i.aux {
        0 => t & 0xFFFF_FFFF,
        3 => t & 0xFFFF_FFFF,
        4 | 5 => t >> 32,
        _ => t,
    };
    for l in 0..32 {
        if mask >> l & 1 != 0 {
            ctx.regs[i.d as usize][l] = v;
        }
    }
    Ok(())
}

pub(crate) fn activemask(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    for l in 0..32 {
        if mask >> l & 1 != 0 {
            ctx.regs[i.d as usize][l] = mask as u64;
        }
    }
    Ok(())
}

pub(crate) fn alloca(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let align = i.aux.max(1);
    for l in 0..32 {
        if mask >> l & 1 == 0 {
            continue;
        }
        let size = ctx.regs[i.a as usize][l];
        let base = ctx.sp[l].div_ceil(align) * align;
        let top = base.saturating_add(size);
        let limit = ctx.env.local_limit;
        if top > limit {
            return Err(Fault {
                kind: FaultKind::Other(format!(
                    "alloca of {size} bytes overflows the thread's stack of {limit} bytes (raise it with --stack-size, LaunchOptions::stack_size)"
                )),
                lane: Some(l as u32),
            }
            .into());
        }
        ctx.local[l].grow(top.div_ceil(4) as usize);
        ctx.sp[l] = top;
        ctx.regs[i.d as usize][l] = base;
    }
    Ok(())
}

pub(crate) fn stacksave(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    for l in 0..32 {
        if mask >> l & 1 != 0 {
            ctx.regs[i.d as usize][l] = ctx.sp[l];
        }
    }
    Ok(())
}

pub(crate) fn stackrestore(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    for l in 0..32 {
        if mask >> l & 1 != 0 {
            ctx.sp[l] = ctx.regs[i.a as usize][l];
        }
    }
    Ok(())
}

pub(crate) fn isspacep(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let mut bits = 0u32;
    for l in 0..32 {
        if mask >> l & 1 == 0 {
            continue;
        }
        let a = ctx.regs[i.a as usize][l];
        let r = match i.aux {
            0 => a < WINDOW_BASE && ctx.env.mem.find(a, 1).is_some_and(|x| !x.read_only),
            1 => a < WINDOW_BASE && ctx.env.mem.find(a, 1).is_some_and(|x| x.read_only),
            2 => (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a),
            3 => (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&a),
            _ => (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&a),
        };
        bits |= (r as u32) << l;
    }
    let p = &mut ctx.preds[i.d as usize];
    *p = (*p & !mask) | (bits & mask);
    Ok(())
}

pub(crate) fn pred_copy(_r: &mut [crate::program::Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let v = if i.aux != 0 {
        !p[i.a as usize]
    } else {
        p[i.a as usize]
    };
    if i.d != u32::MAX {
        let d = &mut p[i.d as usize];
        *d = (*d & !mask) | (v & mask);
    }
}

pub(crate) fn pack(r: &mut [crate::program::Lanes], _p: &mut [u32], i: &Insn, mask: u32) {
    let w = (i.aux & 0xFF) as u32;
    let n = (i.aux >> 8 & 0xFF) as usize;
    let lowmask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut out = r[i.d as usize];
    for (l, o) in out.iter_mut().enumerate() {
        if mask >> l & 1 == 0 {
            continue;
        }
        let mut v = 0u64;
        for k in 0..n {
            v |= (r[i.v[k] as usize][l] & lowmask) << (w as usize * k);
        }
        *o = v;
    }
    r[i.d as usize] = out;
}

pub(crate) fn unpack(r: &mut [crate::program::Lanes], _p: &mut [u32], i: &Insn, mask: u32) {
    let w = (i.aux & 0xFF) as u32;
    let n = (i.aux >> 8 & 0xFF) as usize;
    let lowmask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    let src = r[i.a as usize];
    for l in 0..32 {
        if mask >> l & 1 == 0 {
            continue;
        }
        for k in 0..n {
            r[i.v[k] as usize][l] = (src[l] >> (w as usize * k)) & lowmask;
        }
    }
}
