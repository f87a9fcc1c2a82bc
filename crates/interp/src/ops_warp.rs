//! Warp-collective instructions — `shfl`, `vote`, `match`, `redux`, `elect` — and the atomics
//! `atom` and `red`: the handlers (`crate::decode::warp` decodes them).
//!
//! **Collectives.** The `.sync` forms are [`Op::WarpSync`] handlers: the executor runs one once
//! every non-exited lane of the member mask has arrived, with `mask` = the lanes taking part,
//! and the handler reads the other lanes' registers straight from the warp's slots. Each lane
//! combines the lanes of `mask` that are also in *its own* `membermask` operand, so groups of
//! lanes with different member masks that execute together (`__shfl_sync(0xff << 8*g, …)`) still
//! get one result per group. The deprecated forms without `.sync` (`shfl`, `vote`; sm < 70, no
//! independent thread scheduling) are [`Op::Mem`] handlers over the active lanes, which is what
//! those targets do: inactive lanes do not take part and contribute nothing.
//!
//! `shfl` follows the ISA pseudo-code: operand `c` packs the clamp value (bits 0–4) and the
//! segment mask (bits 8–12), `b` is taken modulo 32. Reading from a lane that does not take
//! part (inactive, exited, predicated off) gives an undefined `d` in the ISA; here the lane
//! keeps its own value. Its `p` is still the pseudo-code's `pval` (whether the computed source
//! lane is in range), which does not depend on the source lane's state (the warp-shape harness
//! of `crates/runtime/tests/warp_shapes.rs` compares every lane with that pseudo-code).
//!
//! **Atomics.** Global memory is shared by the OS threads running other CTAs: a 32-bit (or
//! narrower) read-modify-write on it is an acquire-release compare-and-swap loop on its word,
//! and a 64-bit one holds the stripe lock of its address ([`mem::lock64`]) around its two word
//! accesses — so a 64-bit atomic and a concurrent 32-bit atomic on the same bytes are not
//! atomic with respect to each other. Shared and local memory belong to the one OS thread
//! running the CTA: plain read-modify-write. `.sem` and `.scope` qualifiers, `.L2::cache_hint`
//! and its operand are accepted and change nothing beyond that. Vector forms (`.v2 .v4 .v8`)
//! are atomic per element, as the ISA specifies. `atom.add.f32`/`red.add.f32` on *global*
//! memory flush subnormal inputs and results to zero (the ISA's "current implementation"); on
//! shared memory they do not.

use crate::handlers::CellLanes;
use crate::mem;
use crate::ops_move::{
    lane_addrs, lane_target, read, resolve, space_of, warp_target, write, Target, WarpTarget,
};
use crate::program::{lane_bits, Ctx, Insn, Lanes, MemFn, MemResult, FULL};
use crate::semantics::float::{self, MinMax};
use crate::semantics::half::{self, HalfMods};
use crate::semantics::Rounding;
use std::sync::atomic::Ordering;

/// "No slot": no predicate destination, or (in `Insn::b`) no member mask operand.
pub(crate) const NONE: u32 = u32::MAX;

// ---------------------------------------------------------------------------------------------
// Shared helpers

/// Lane `l`'s member mask (the whole warp for the forms without one).
#[inline]
pub(crate) fn member(regs: &[Lanes], i: &Insn, l: usize) -> u32 {
    if i.b == NONE {
        FULL
    } else {
        regs[i.b as usize][l] as u32
    }
}

/// Writes predicate bits into the lanes of `mask` (no-op for `_`).
#[inline]
pub(crate) fn set_pred(preds: &mut [u32], slot: u32, bits: u32, mask: u32) {
    if slot != NONE {
        let p = &mut preds[slot as usize];
        *p = (*p & !mask) | (bits & mask);
    }
}

// ---------------------------------------------------------------------------------------------
// shfl

pub(crate) const SHFL_UP: u64 = 0;
pub(crate) const SHFL_DOWN: u64 = 1;
pub(crate) const SHFL_BFLY: u64 = 2;

/// The bits of a `shfl`'s `aux` that hold its mode.
pub(crate) const SHFL_MODE: u64 = 3;
/// `aux` bit of a `shfl` whose `b` and `c` are constants (the same in every lane).
pub(crate) const SHFL_UNIFORM: u64 = 1 << 8;

/// `aux` bit of a `shfl` with a handler of its own shape ([`fixed_handler!`]); its `b` is in
/// the bits from [`SHFL_FIXED_B`].
pub(crate) const SHFL_FIXED: u64 = 1 << 9;
pub(crate) const SHFL_FIXED_B: u64 = 16;

/// Handler `$h::<MODE, B>` for a `shfl` in `mode` with constant operands `b` and `c`, for the
/// shapes of warp scans and reductions: `.up` by a power of two with `c` = 0, `.down` and
/// `.bfly` by a power of two with `c` = 31. `None` for other shapes.
macro_rules! fixed_handler {
    ($h:ident, $mode:expr, $b:expr, $c:expr) => {
        match ($mode, $c) {
            (SHFL_UP, 0) => fixed_handler!(@by $h, SHFL_UP, $b),
            (SHFL_DOWN, 0x1f) => fixed_handler!(@by $h, SHFL_DOWN, $b),
            (SHFL_BFLY, 0x1f) => fixed_handler!(@by $h, SHFL_BFLY, $b),
            _ => None,
        }
    };
    (@by $h:ident, $m:expr, $b:expr) => {
        match $b {
            1 => Some($h::<$m, 1> as MemFn),
            2 => Some($h::<$m, 2> as MemFn),
            4 => Some($h::<$m, 4> as MemFn),
            8 => Some($h::<$m, 8> as MemFn),
            16 => Some($h::<$m, 16> as MemFn),
            _ => None,
        }
    };
}
/// [`shfl_fixed`] for the shape `mode`, `b`, `c`, if it is one of [`fixed_handler!`]'s.
pub(crate) fn shfl_fixed_handler(mode: u64, b: u32, c: u32) -> Option<MemFn> {
    fixed_handler!(shfl_fixed, mode, b, c)
}

/// The lanes of a full warp whose source lane is in range (`pval`) for the shape `MODE`, `B`.
pub(crate) const fn fixed_pval<const MODE: u64, const B: usize>() -> u32 {
    match MODE {
        SHFL_UP => FULL << B,
        SHFL_DOWN => FULL >> B,
        _ => FULL,
    }
}

/// The source lane of lane `l` for the shape `MODE`, `B` (out of range: `l` itself).
#[inline(always)]
pub(crate) const fn fixed_source<const MODE: u64, const B: usize>(l: usize) -> usize {
    match MODE {
        SHFL_UP if l >= B => l - B,
        SHFL_DOWN if l + B < 32 => l + B,
        SHFL_BFLY => l ^ B,
        _ => l,
    }
}

/// `shfl` in `MODE` by the constant `B` with the clamp of [`fixed_handler!`]: for a full
/// warp into a destination that is not the source, each lane's source lane is known at compile
/// time, so the whole shuffle is a few vector loads and stores; anything else goes to [`shfl`].
pub(crate) fn shfl_fixed<const MODE: u64, const B: usize>(
    ctx: &mut Ctx<'_>,
    i: &Insn,
    mask: u32,
) -> MemResult {
    if mask != FULL || i.d == i.a {
        return shfl(ctx, i, mask);
    }
    let c = crate::handlers::cells(ctx.regs);
    let (src, out) = (crate::handlers::slot(c, i.a), crate::handlers::slot(c, i.d));
    crate::v3_call!(
        shfl_fixed_lanes::<MODE, B>,
        shfl_fixed_lanes_v3::<MODE, B>,
        (src, out)
    );
    set_pred(ctx.preds, i.v[1], fixed_pval::<MODE, B>(), FULL);
    Ok(())
}

/// The lane loop of [`shfl_fixed`]; `out` must not be `src`.
#[inline(always)]
pub(crate) fn shfl_fixed_lanes<const MODE: u64, const B: usize>(src: &CellLanes, out: &CellLanes) {
    crate::handlers::store_lanes(out, |l| src[fixed_source::<MODE, B>(l)].get() & 0xFFFF_FFFF)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn shfl_fixed_lanes_v3<const MODE: u64, const B: usize>(
    src: &CellLanes,
    out: &CellLanes,
) {
    shfl_fixed_lanes::<MODE, B>(src, out)
}

/// `aux` bit of a fused scan step: the step takes `t` where the predicate register `q` is
/// false (without it, where `q` holds). Set when `t` is the `selp`'s second source or the
/// `selp` negates its predicate, but not both.
pub(crate) const SCAN_FLIP: u64 = 1 << 10;

/// The handler of the scan step ([`scan_step`]) over `shfl`'s shape, when `shfl` has a
/// handler of its own shape.
pub(crate) fn scan_step_handler(shfl: &Insn) -> Option<MemFn> {
    if shfl.aux & SHFL_FIXED == 0 {
        return None;
    }
    let b = (shfl.aux >> SHFL_FIXED_B) as u32 & 31;
    let c = match shfl.aux & SHFL_MODE {
        SHFL_UP => 0,
        _ => 0x1f,
    };
    fixed_handler!(scan_step, shfl.aux & SHFL_MODE, b, c)
}

crate::with_v3!(
    /// The scan step of module `fuse`: `shfl` (this instruction's own operands, the shape
    /// `MODE`, `B`) into `t`, then `selp.b32 s, t, y, q` (`selp s, y, t, q` with [`SCAN_FLIP`]),
    /// then `add.s32 d, s, z`, where nothing reads `t` or `s` afterwards. `imm` holds `q` (low
    /// half) and `y` (high half), `v[2]` `z` and `v[3]` `d`. A full warp computes the shuffled
    /// values in registers and writes `d` (and the `shfl`'s predicate) only, all of it in the
    /// AVX2 copy when the CPU has it; any other group runs the three instructions one after
    /// the other ([`scan_step_parts`]).
    fn scan_step<const MODE: u64, const B: usize>, scan_step_v3 =
        scan_step_impl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult
);

#[inline(always)]
pub(crate) fn scan_step_impl<const MODE: u64, const B: usize>(
    ctx: &mut Ctx<'_>,
    i: &Insn,
    mask: u32,
) -> MemResult {
    if mask != FULL || (MODE == SHFL_BFLY && B >= 4 && i.v[3] == i.a) {
        return scan_step_parts(ctx, i, mask);
    }
    let (q, y) = (i.imm as u64 as u32, (i.imm as u64 >> 32) as u32);
    let flip = if i.aux & SCAN_FLIP != 0 { FULL } else { 0 };
    let take = ctx.preds[q as usize] ^ flip;
    let c = crate::handlers::cells(ctx.regs);
    let slot = |s: u32| crate::handlers::slot(c, s);
    let (v, y, z, d) = (slot(i.a), slot(y), slot(i.v[2]), slot(i.v[3]));
    scan_step_lanes::<MODE, B>(v, y, z, d, take as u64);
    set_pred(ctx.preds, i.v[1], fixed_pval::<MODE, B>(), FULL);
    Ok(())
}

/// [`scan_step`] for any group: the `shfl`, then the `selp` and the `add` lane by lane.
#[inline(never)]
pub(crate) fn scan_step_parts(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let (q, y) = (i.imm as u64 as u32, (i.imm as u64 >> 32) as u32);
    let flip = if i.aux & SCAN_FLIP != 0 { FULL } else { 0 };
    shfl(ctx, i, mask)?;
    let take = ctx.preds[q as usize] ^ flip;
    let r = &mut *ctx.regs;
    for l in lane_bits(mask) {
        let s = if take >> l & 1 != 0 {
            r[i.d as usize][l]
        } else {
            r[y as usize][l]
        };
        r[i.v[3] as usize][l] = (s as u32).wrapping_add(r[i.v[2] as usize][l] as u32) as u64;
    }
    Ok(())
}

/// The lane loop of [`scan_step`] for a full warp, branch-free. `d` may be any of the sources:
/// a shuffle up reads lanes below the one it writes, so it runs from the top; a shuffle down
/// from the bottom; a butterfly stays within groups of four (`B` < 4) or `d` is not `v`.
#[inline(always)]
pub(crate) fn scan_step_lanes<const MODE: u64, const B: usize>(
    v: &CellLanes,
    y: &CellLanes,
    z: &CellLanes,
    d: &CellLanes,
    take: u64,
) {
    let lane = |l: usize| {
        let s = if take & crate::program::LANE_BIT64[l] != 0 {
            u64::MAX
        } else {
            0
        };
        let x = (v[fixed_source::<MODE, B>(l)].get() & s) | (y[l].get() & !s);
        (x as u32).wrapping_add(z[l].get() as u32) as u64
    };
    if MODE == SHFL_UP {
        crate::handlers::store_lanes_down(d, lane)
    } else {
        crate::handlers::store_lanes(d, lane)
    }
}

/// The source lane of `shfl` in `mode` for lane `lane` with operands `b` and `c`, and whether
/// it is in range (the ISA's `pval`); out of range the lane reads itself.
#[inline]
pub(crate) fn shfl_source(mode: u64, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 31;
    let cval = c & 31;
    let segmask = (c >> 8) & 31;
    let max_lane = ((lane & segmask) | (cval & !segmask)) as i32;
    let min_lane = lane & segmask;
    let lane_i = lane as i32;
    let (j, pval) = match mode {
        SHFL_UP => {
            let j = lane_i - bval as i32;
            (j, j >= max_lane)
        }
        SHFL_DOWN => {
            let j = lane_i + bval as i32;
            (j, j <= max_lane)
        }
        SHFL_BFLY => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane)
        }
        _ => {
            let j = (min_lane | (bval & !segmask)) as i32;
            (j, j <= max_lane)
        }
    };
    if pval {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

pub(crate) fn shfl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask == FULL && shfl_whole_warp(ctx.regs, ctx.preds, i) {
        return Ok(());
    }
    let (src, bv, cv) = (
        &ctx.regs[i.a as usize],
        &ctx.regs[i.v[0] as usize],
        &ctx.regs[i.c as usize],
    );
    // computed in full before the destination (which may be a source) is written
    let mut out = [0u64; 32];
    let mut p = 0u32;
    for l in lane_bits(mask) {
        let (j, pval) = shfl_source(i.aux & SHFL_MODE, l as u32, bv[l] as u32, cv[l] as u32);
        let ok = pval && mask >> j & 1 != 0;
        out[l] = (if ok { src[j as usize] } else { src[l] }) as u32 as u64;
        p |= (pval as u32) << l;
    }
    let d = &mut ctx.regs[i.d as usize];
    for l in lane_bits(mask) {
        d[l] = out[l];
    }
    set_pred(ctx.preds, i.v[1], p, mask);
    Ok(())
}

/// Whether all 32 lanes of a slot hold the same value.
#[inline(always)]
pub(crate) fn uniform(v: &Lanes) -> bool {
    v.iter().fold(0, |acc, &x| acc | (x ^ v[0])) == 0
}

crate::with_v3!(
    /// `shfl` for a full warp whose `b` and `c` are the same in every lane ([`shfl_full`]),
    /// in its AVX2 copy when the CPU has it. False, with nothing done, when `b` or `c` differ
    /// between lanes.
    fn shfl_whole_warp, shfl_whole_warp_v3 =
        shfl_whole_warp_impl(regs: &mut [Lanes], preds: &mut [u32], i: &Insn) -> bool
);

#[inline(always)]
pub(crate) fn shfl_whole_warp_impl(regs: &mut [Lanes], preds: &mut [u32], i: &Insn) -> bool {
    let (bv, cv) = (&regs[i.v[0] as usize], &regs[i.c as usize]);
    if i.aux & SHFL_UNIFORM == 0 && (!uniform(bv) || !uniform(cv)) {
        return false;
    }
    let (b, c) = (bv[0] as u32, cv[0] as u32);
    let (d, srcs) = crate::handlers::split(regs, i.d);
    let cur = std::cell::OnceCell::new();
    let src = srcs.or_dest(i.a, d, &cur);
    let p = shfl_full(i.aux & SHFL_MODE, src, d, b, c);
    set_pred(preds, i.v[1], p, FULL);
    true
}

/// `shfl` with every lane taking part and the same `b` and `c` in every lane (the usual case:
/// immediates or registers set once): the source lane of each lane is a simple function of
/// its index for `.up` and `.down` without segments; other shapes use [`shfl_source`] lane by
/// lane. Writes `out` (which must not be `src`); returns `pval` per lane.
#[inline(always)]
pub(crate) fn shfl_full(mode: u64, src: &Lanes, out: &mut Lanes, b: u32, c: u32) -> u32 {
    let (b, cval, segmask) = ((b & 31) as usize, (c & 31) as usize, (c >> 8) & 31);
    const LOW: u64 = 0xFFFF_FFFF;
    match mode {
        // lane l reads l - b when l - b >= cval (segmask 0: max_lane is cval)
        SHFL_UP if segmask == 0 => {
            let start = (b + cval).min(32);
            // two contiguous copies (vector loops), no per-lane choice
            for (o, &x) in out[..start].iter_mut().zip(&src[..start]) {
                *o = x & LOW;
            }
            for (o, &x) in out[start..].iter_mut().zip(&src[start - b..]) {
                *o = x & LOW;
            }
            if start < 32 {
                FULL << start
            } else {
                0
            }
        }
        // lane l reads l + b when l + b <= cval
        SHFL_DOWN if segmask == 0 => {
            let n = (cval + 1).saturating_sub(b);
            for (o, &x) in out[..n].iter_mut().zip(&src[b..]) {
                *o = x & LOW;
            }
            for (o, &x) in out[n..].iter_mut().zip(&src[n..]) {
                *o = x & LOW;
            }
            if n == 32 {
                FULL
            } else {
                (1u32 << n) - 1
            }
        }
        _ => {
            let mut p = 0u32;
            for (l, o) in out.iter_mut().enumerate() {
                let (j, pval) = shfl_source(mode, l as u32, b as u32, c);
                *o = src[j as usize] & LOW;
                p |= (pval as u32) << l;
            }
            p
        }
    }
}

// ---------------------------------------------------------------------------------------------
// vote

pub(crate) const VOTE_ALL: u64 = 0;
pub(crate) const VOTE_ANY: u64 = 1;
pub(crate) const VOTE_UNI: u64 = 2;
pub(crate) const VOTE_BALLOT: u64 = 3;
pub(crate) const VOTE_NEG: u64 = 1 << 8;

pub(crate) fn vote(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let p = ctx.preds[i.a as usize];
    let pv = if i.aux & VOTE_NEG != 0 { !p } else { p };
    let mode = i.aux & 3;
    if mode == VOTE_BALLOT {
        let mut out = ctx.regs[i.d as usize];
        for l in lane_bits(mask) {
            out[l] = (pv & mask & member(ctx.regs, i, l)) as u64;
        }
        ctx.regs[i.d as usize] = out;
    } else {
        let mut bits = 0u32;
        for l in lane_bits(mask) {
            let set = mask & member(ctx.regs, i, l);
            let t = pv & set;
            let r = match mode {
                VOTE_ALL => t == set,
                VOTE_ANY => t != 0,
                VOTE_UNI => t == 0 || t == set,
                _ => false, // ballot, handled above
            };
            bits |= (r as u32) << l;
        }
        set_pred(ctx.preds, i.d, bits, mask);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// match

pub(crate) const MATCH_ALL: u64 = 1;
pub(crate) const MATCH_B64: u64 = 2;

pub(crate) fn match_sync(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let vals = ctx.regs[i.a as usize];
    let wide = i.aux & MATCH_B64 != 0;
    let key = |l: usize| if wide { vals[l] } else { vals[l] as u32 as u64 };
    let mut out = ctx.regs[i.d as usize];
    let mut bits = 0u32;
    for l in lane_bits(mask) {
        let set = mask & member(ctx.regs, i, l);
        if i.aux & MATCH_ALL != 0 {
            let first = key(set.trailing_zeros().min(31) as usize);
            let same = lane_bits(set).all(|k| key(k) == first);
            out[l] = if same { set as u64 } else { 0 };
            bits |= (same as u32) << l;
        } else {
            let mine = key(l);
            let eq = lane_bits(set).fold(0u32, |m, k| m | ((key(k) == mine) as u32) << k);
            out[l] = eq as u64;
        }
    }
    ctx.regs[i.d as usize] = out;
    set_pred(ctx.preds, i.v[1], bits, mask);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// redux

pub(crate) const REDUX_ADD: u64 = 0;
pub(crate) const REDUX_MIN: u64 = 1;
pub(crate) const REDUX_MAX: u64 = 2;
pub(crate) const REDUX_AND: u64 = 3;
pub(crate) const REDUX_OR: u64 = 4;
pub(crate) const REDUX_SIGNED: u64 = 1 << 8;
pub(crate) const REDUX_F32: u64 = 1 << 9;
pub(crate) const REDUX_ABS: u64 = 1 << 10;
pub(crate) const REDUX_NAN: u64 = 1 << 11;

/// The reduction of `redux.sync` (`aux` as decoded) over the lanes `set` of `vals`.
pub(crate) fn redux_reduce(aux: u64, vals: &Lanes, set: u32) -> u32 {
    let op = aux & 0xFF;
    if aux & REDUX_F32 != 0 {
        let m = MinMax {
            nan: aux & REDUX_NAN != 0,
            ..MinMax::default()
        };
        let mut acc: Option<f32> = None;
        for k in lane_bits(set) {
            let mut x = f32::from_bits(vals[k] as u32);
            if aux & REDUX_ABS != 0 {
                x = f32::from_bits(x.to_bits() & 0x7FFF_FFFF);
            }
            acc = Some(match acc {
                None if m.nan && x.is_nan() => float::nan_f32(),
                None => x,
                Some(a) if op == REDUX_MIN => float::min_f32(a, x, m),
                Some(a) => float::max_f32(a, x, m),
            });
        }
        let r = acc.unwrap_or(0.0);
        return if r.is_nan() {
            float::CANONICAL_NAN_F32
        } else {
            r.to_bits()
        };
    }
    let signed = aux & REDUX_SIGNED != 0;
    let it = lane_bits(set).map(|k| vals[k] as u32);
    match op {
        REDUX_ADD => it.fold(0u32, u32::wrapping_add),
        REDUX_MIN if signed => it.map(|x| x as i32).min().unwrap_or(i32::MAX) as u32,
        REDUX_MIN => it.min().unwrap_or(u32::MAX),
        REDUX_MAX if signed => it.map(|x| x as i32).max().unwrap_or(i32::MIN) as u32,
        REDUX_MAX => it.max().unwrap_or(0),
        REDUX_AND => it.fold(u32::MAX, |a, x| a & x),
        REDUX_OR => it.fold(0, |a, x| a | x),
        _ => it.fold(0, |a, x| a ^ x),
    }
}

pub(crate) fn redux(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let vals = ctx.regs[i.a as usize];
    let mut out = ctx.regs[i.d as usize];
    // Lanes usually share one member mask: reduce once per distinct set.
    let mut last: Option<(u32, u32)> = None;
    for l in lane_bits(mask) {
        let set = mask & member(ctx.regs, i, l);
        let r = match last {
            Some((s, r)) if s == set => r,
            _ => {
                let r = redux_reduce(i.aux, &vals, set);
                last = Some((set, r));
                r
            }
        };
        out[l] = r as u64;
    }
    ctx.regs[i.d as usize] = out;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// elect

pub(crate) fn elect(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let mut out = ctx.regs[i.d as usize];
    let mut bits = 0u32;
    for l in lane_bits(mask) {
        let set = mask & member(ctx.regs, i, l);
        // The lowest participating lane: deterministic for a given member mask.
        let leader = if set == 0 {
            l as u32
        } else {
            set.trailing_zeros()
        };
        out[l] = leader as u64;
        bits |= ((leader == l as u32) as u32) << l;
    }
    ctx.regs[i.d as usize] = out;
    set_pred(ctx.preds, i.v[1], bits, mask);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// atom / red

// Operations (aux bits 0..4).
pub(crate) const A_AND: u64 = 0;
pub(crate) const A_OR: u64 = 1;
pub(crate) const A_XOR: u64 = 2;
pub(crate) const A_CAS: u64 = 3;
pub(crate) const A_EXCH: u64 = 4;
pub(crate) const A_ADD: u64 = 5;
pub(crate) const A_INC: u64 = 6;
pub(crate) const A_DEC: u64 = 7;
pub(crate) const A_MIN: u64 = 8;
pub(crate) const A_MAX: u64 = 9;
// Types (aux bits 4..8).
pub(crate) const T_U16: u64 = 0;
pub(crate) const T_U32: u64 = 1;
pub(crate) const T_S32: u64 = 2;
pub(crate) const T_U64: u64 = 3;
pub(crate) const T_S64: u64 = 4;
pub(crate) const T_F32: u64 = 5;
pub(crate) const T_F64: u64 = 6;
pub(crate) const T_F16: u64 = 7;
pub(crate) const T_BF16: u64 = 8;
pub(crate) const T_F16X2: u64 = 9;
pub(crate) const T_BF16X2: u64 = 10;

// aux layout: op 0..4, type 4..8, space 8..11, vector length 12..16, has a destination bit 16;
// bits 32..64 hold two packed slots of the vector form.
pub(crate) const A_HAS_DST: u64 = 1 << 16;

/// Size in bytes of an atomic type.
#[inline]
pub(crate) fn type_bytes(t: u64) -> u32 {
    match t {
        T_U16 | T_F16 | T_BF16 => 2,
        T_U64 | T_S64 | T_F64 => 8,
        _ => 4,
    }
}

pub(crate) fn is_float(t: u64) -> bool {
    t >= T_F32
}

/// Slot `e` (0..16) of a vector atomic's packed slot list.
#[inline]
pub(crate) fn vslot(i: &Insn, e: usize) -> usize {
    let f = match e / 2 {
        0 => i.d,
        1 => i.b,
        2 => i.c,
        3 => i.v[0],
        4 => i.v[1],
        5 => i.v[2],
        6 => i.v[3],
        _ => (i.aux >> 32) as u32,
    };
    ((f >> ((e & 1) * 16)) & 0xFFFF) as usize
}

/// What an atomic stores: `op(old, b[, c])` on values of type `ty` (raw bits, zero-extended);
/// `ftz32` flushes `.f32` additions (global memory).
pub(crate) fn atom_apply(op: u64, ty: u64, old: u64, b: u64, c: u64, ftz32: bool) -> u64 {
    let bytes = type_bytes(ty);
    let m = if bytes == 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    };
    let (old, b, c) = (old & m, b & m, c & m);
    let r = match op {
        A_AND => old & b,
        A_OR => old | b,
        A_XOR => old ^ b,
        A_CAS => {
            if old == b {
                c
            } else {
                old
            }
        }
        A_EXCH => b,
        A_ADD => atom_add(ty, old, b, ftz32),
        A_INC => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        A_DEC => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        A_MIN => atom_minmax(ty, old, b, false),
        _ => atom_minmax(ty, old, b, true),
    };
    r & m
}

pub(crate) fn atom_add(ty: u64, a: u64, b: u64, ftz32: bool) -> u64 {
    let f32b = |x: u64| f32::from_bits(x as u32);
    match ty {
        T_F32 => float::add_f32(f32b(a), f32b(b), Rounding::Rn, ftz32, false).to_bits() as u64,
        T_F64 => float::add_f64(f64::from_bits(a), f64::from_bits(b), Rounding::Rn).to_bits(),
        T_F16 => half::add_f16(a as u16, b as u16, HalfMods::default()) as u64,
        T_BF16 => half::add_bf16(a as u16, b as u16) as u64,
        T_F16X2 => half::add_f16x2(a as u32, b as u32, HalfMods::default()) as u64,
        T_BF16X2 => half::add_bf16x2(a as u32, b as u32) as u64,
        _ => a.wrapping_add(b),
    }
}

pub(crate) fn atom_minmax(ty: u64, a: u64, b: u64, max: bool) -> u64 {
    let m = MinMax::default();
    let f32b = |x: u64| f32::from_bits(x as u32);
    let pick = |a_less: bool| if a_less != max { a } else { b };
    match ty {
        T_S32 => pick((a as u32 as i32) < (b as u32 as i32)),
        T_S64 => pick((a as i64) < (b as i64)),
        T_F32 if max => float::max_f32(f32b(a), f32b(b), m).to_bits() as u64,
        T_F32 => float::min_f32(f32b(a), f32b(b), m).to_bits() as u64,
        T_F64 if max => float::max_f64(f64::from_bits(a), f64::from_bits(b)).to_bits(),
        T_F64 => float::min_f64(f64::from_bits(a), f64::from_bits(b)).to_bits(),
        T_F16 if max => half::max_f16(a as u16, b as u16, m) as u64,
        T_F16 => half::min_f16(a as u16, b as u16, m) as u64,
        T_BF16 if max => half::max_bf16(a as u16, b as u16, m) as u64,
        T_BF16 => half::min_bf16(a as u16, b as u16, m) as u64,
        T_F16X2 if max => half::max_f16x2(a as u32, b as u32, m) as u64,
        T_F16X2 => half::min_f16x2(a as u32, b as u32, m) as u64,
        T_BF16X2 if max => half::max_bf16x2(a as u32, b as u32, m) as u64,
        T_BF16X2 => half::min_bf16x2(a as u32, b as u32, m) as u64,
        _ => pick(a < b),
    }
}

/// Compare-and-swap loop on a global word (acquire-release, so atomics order the plain
/// accesses around them); returns the old word.
#[inline]
pub(crate) fn cas_word(words: &mem::AtomicWords, i: usize, f: impl Fn(u32) -> u32) -> u32 {
    let cell = words.cell(i);
    let mut old = cell.load(Ordering::Acquire);
    loop {
        match cell.compare_exchange_weak(old, f(old), Ordering::AcqRel, Ordering::Acquire) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

/// Atomically replaces the `size` bytes at `extra` past `t` by `f(old)`; returns `old`.
#[inline]
pub(crate) fn rmw(
    ctx: &mut Ctx<'_>,
    t: &Target<'_>,
    lane: usize,
    extra: u64,
    size: u32,
    f: impl Fn(u64) -> u64,
) -> u64 {
    match *t {
        Target::Global(a, base) => {
            let off = base + extra;
            let i = (off >> 2) as usize;
            match size {
                8 => {
                    let _guard = mem::lock64(a.base + off);
                    let old = mem::load(&a.words, off, 8);
                    mem::store_atomic(&a.words, off, 8, f(old));
                    old
                }
                4 => cas_word(&a.words, i, |w| f(w as u64) as u32) as u64,
                _ => {
                    let sh = (off & 3) * 8;
                    let fm: u32 = if size == 2 { 0xFFFF } else { 0xFF };
                    let wm = fm << sh;
                    let old = cas_word(&a.words, i, |w| {
                        let new = f(((w >> sh) & fm) as u64) as u32 & fm;
                        (w & !wm) | new << sh
                    });
                    ((old >> sh) & fm) as u64
                }
            }
        }
        _ => {
            let old = read(ctx, t, lane, extra, size);
            write(ctx, t, lane, extra, size, f(old));
            old
        }
    }
}

pub(crate) fn atom_scalar(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let op = i.aux & 0xF;
    let ty = i.aux >> 4 & 0xF;
    let space = space_of(i.aux >> 8);
    let size = type_bytes(ty);
    let has_dst = i.aux & A_HAS_DST != 0;
    let addrs = lane_addrs(ctx, i);
    let fast = warp_target(ctx, space, &addrs, mask, size, true);
    // 32-bit integer add in shared memory (a CTA-private histogram, a counter): lane by lane in
    // lane order without the general read-modify-write machinery
    if let (Some(WarpTarget::Shared(base)), A_ADD, T_U32 | T_S32) = (&fast, op, ty) {
        let base = *base;
        for l in lane_bits(mask) {
            let k = ((addrs[l] - base) >> 2) as usize;
            let old = ctx.shared[k];
            ctx.shared[k] = old.wrapping_add(ctx.regs[i.b as usize][l] as u32);
            if has_dst {
                ctx.regs[i.d as usize][l] = old as u64;
            }
        }
        return Ok(());
    }
    for l in lane_bits(mask) {
        let b = ctx.regs[i.b as usize][l];
        let c = ctx.regs[i.c as usize][l];
        let t = lane_target(ctx, &fast, space, addrs[l], size, l, true)?;
        let ftz = matches!(t, Target::Global(..));
        let old = rmw(ctx, &t, l, 0, size, |old| {
            atom_apply(op, ty, old, b, c, ftz)
        });
        if has_dst {
            ctx.regs[i.d as usize][l] = old;
        }
    }
    Ok(())
}

pub(crate) fn atom_vec(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    let op = i.aux & 0xF;
    let ty = i.aux >> 4 & 0xF;
    let space = space_of(i.aux >> 8);
    let n = ((i.aux >> 12 & 0xF) as usize).min(8);
    let size = type_bytes(ty);
    let has_dst = i.aux & A_HAS_DST != 0;
    for l in lane_bits(mask) {
        let addr = ctx.regs[i.a as usize][l].wrapping_add(i.imm as u64);
        // read every source first: destinations may be the same registers
        let mut b = [0u64; 8];
        for (k, x) in b.iter_mut().enumerate().take(n) {
            *x = ctx.regs[vslot(i, k)][l];
        }
        let t = resolve(ctx, space, addr, size * n as u32, l, true)?;
        let ftz = matches!(t, Target::Global(..));
        for (k, &bk) in b.iter().enumerate().take(n) {
            let extra = (k as u32 * size) as u64;
            let old = rmw(ctx, &t, l, extra, size, |old| {
                atom_apply(op, ty, old, bk, 0, ftz)
            });
            if has_dst {
                ctx.regs[vslot(i, 8 + k)][l] = old;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::{GlobalMemory, MemMap};
    use crate::ops_move::space_code;
    use crate::program::{Op, Space};

    /// A warp's state without an executor: registers, predicates, memory.
    struct Warp {
        regs: Vec<Lanes>,
        preds: Vec<u32>,
        mem: MemMap,
        shared: Vec<u32>,
        local: Vec<crate::mem::LocalMem>,
        sp: [u64; 32],
    }

    impl Warp {
        fn new(mem: MemMap) -> Warp {
            Warp {
                regs: vec![[0u64; 32]; 40],
                preds: vec![0u32; 8],
                mem,
                shared: vec![0u32; 64],
                local: (0..32)
                    .map(|_| {
                        let mut l = crate::mem::LocalMem::default();
                        l.reset(16);
                        l
                    })
                    .collect(),
                sp: [0; 32],
            }
        }
        fn run(
            &mut self,
            f: fn(&mut Ctx<'_>, &Insn, u32) -> MemResult,
            i: &Insn,
            mask: u32,
        ) -> MemResult {
            let env = crate::program::Env {
                mem: &self.mem,
                shared_size: self.shared.len() as u64 * 4,
                params: &[],
                param_size: 0,
                local_limit: crate::exec::LOCAL_MAX,
                start: std::time::Instant::now(),
                lists: &[],
            };
            let mut ctx = Ctx {
                regs: &mut self.regs,
                preds: &mut self.preds,
                shared: &mut self.shared,
                local: &mut self.local,
                sp: &mut self.sp,
                live: FULL,
                env: &env,
            };
            f(&mut ctx, i, mask)
        }
    }

    fn insn() -> Insn {
        let mut i = Insn::new(Op::Nop, 0, 0);
        i.b = NONE;
        i.v = [0, NONE, 0, 0];
        i
    }

    const A: u32 = 1; // source values: 100 + lane
    const B: u32 = 2;
    const C: u32 = 3;
    const D: u32 = 4;
    const MM: u32 = 5;

    fn shfl_warp(mode: u64, b: u32, c: u32) -> (Warp, Insn) {
        let mut w = Warp::new(MemMap::default());
        for l in 0..32 {
            w.regs[A as usize][l] = 100 + l as u64;
            w.regs[B as usize][l] = b as u64;
            w.regs[C as usize][l] = c as u64;
            w.regs[D as usize][l] = 7;
            w.regs[MM as usize][l] = 0xFFFF_FFFF;
        }
        let mut i = insn();
        i.d = D;
        i.a = A;
        i.v[0] = B;
        i.c = C;
        i.v[1] = 0;
        i.b = MM;
        i.aux = mode;
        (w, i)
    }

    /// The handlers for constant `b` and `c` agree with the lane-by-lane port of the ISA
    /// pseudo-code ([`shfl_source`]) for every shape they take, on a full warp, a partial one
    /// (which they hand to the general path) and with the destination equal to the source.
    #[test]
    fn shfl_fixed_matches_pseudo_code() {
        let mut shapes = 0;
        for (mode, c) in [
            (SHFL_UP, 0),
            (SHFL_DOWN, 0x1f),
            (SHFL_BFLY, 0x1f),
            (SHFL_UP, 0x1f),
        ] {
            for b in 0..40 {
                let Some(f) = shfl_fixed_handler(mode, b, c) else {
                    assert!(mode == SHFL_UP && c == 0x1f || ![1, 2, 4, 8, 16].contains(&b));
                    continue;
                };
                shapes += 1;
                for (mask, same) in [(FULL, false), (0x7FFF_FFFE, false), (FULL, true)] {
                    let (mut w, mut i) = shfl_warp(mode, b, c);
                    i.aux |= SHFL_UNIFORM;
                    if same {
                        i.d = A;
                    }
                    w.run(f, &i, mask).unwrap();
                    for l in 0..32u32 {
                        let at = format!("mode {mode} b {b} c {c:#x} mask {mask:#x} lane {l}");
                        let dst = w.regs[i.d as usize][l as usize];
                        let p = w.preds[0] >> l & 1 != 0;
                        if mask >> l & 1 == 0 {
                            let old = if same { 100 + l as u64 } else { 7 };
                            assert_eq!(dst, old, "{at}");
                            continue;
                        }
                        let (j, pval) = shfl_source(mode, l, b, c);
                        let ok = pval && mask >> j & 1 != 0;
                        let want = 100 + if ok { j } else { l } as u64;
                        assert_eq!((dst, p), (want, pval), "{at}");
                    }
                }
            }
        }
        assert_eq!(shapes, 15);
    }

    /// The whole-warp fast path agrees with the lane-by-lane port of the ISA pseudo-code
    /// ([`shfl_source`]) for every mode, every `b` and clamp/segment values of `c`.
    #[test]
    fn shfl_full_matches_pseudo_code() {
        let src: Lanes = std::array::from_fn(|l| 0xABCD_0000_0000_0000 | (100 + l as u64));
        for mode in [SHFL_UP, SHFL_DOWN, SHFL_BFLY, 3] {
            for b in 0..40 {
                for c in [0, 1, 7, 0x10, 0x1f, 0x181f, 0x1c1f, 0x1e00, 0x1f1f, 0x0403] {
                    let mut out = [0; 32];
                    let p = shfl_full(mode, &src, &mut out, b, c);
                    for l in 0..32u32 {
                        let (j, pval) = shfl_source(mode, l, b, c);
                        let want = src[j as usize] & 0xFFFF_FFFF;
                        let at = format!("mode {mode} b {b} c {c:#x} lane {l}");
                        assert_eq!(out[l as usize], want, "{at}");
                        assert_eq!(p >> l & 1 != 0, pval, "{at}");
                    }
                }
            }
        }
    }

    // Expected values below are worked out by hand from the ISA pseudo-code.
    #[test]
    fn shfl_modes_whole_warp() {
        // bfly 1, c = 0x1f: lane ^ 1, always in range
        let (mut w, i) = shfl_warp(SHFL_BFLY, 1, 0x1f);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            assert_eq!(w.regs[D as usize][l], 100 + (l ^ 1) as u64);
        }
        assert_eq!(w.preds[0], FULL);
        // down 4, c = 0x1f: lanes 28..31 out of range keep their own value
        let (mut w, i) = shfl_warp(SHFL_DOWN, 4, 0x1f);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            let want = if l < 28 { l + 4 } else { l };
            assert_eq!(w.regs[D as usize][l], 100 + want as u64, "lane {l}");
        }
        assert_eq!(w.preds[0], 0x0FFF_FFFF);
        // up 3, c = 0: lanes 0..2 keep their own
        let (mut w, i) = shfl_warp(SHFL_UP, 3, 0);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            let want = if l >= 3 { l - 3 } else { l };
            assert_eq!(w.regs[D as usize][l], 100 + want as u64);
        }
        assert_eq!(w.preds[0], !0b111);
        // idx 5, c = 0x1f: broadcast lane 5; idx 37 is lane 5 too (b taken mod 32)
        for b in [5, 37] {
            let (mut w, i) = shfl_warp(3, b, 0x1f);
            w.run(shfl, &i, FULL).unwrap();
            assert!(w.regs[D as usize].iter().all(|&v| v == 105));
            assert_eq!(w.preds[0], FULL);
        }
    }

    #[test]
    fn shfl_segments() {
        // width 8 (c = ((32-8)<<8) | 0x1f = 0x181f): idx 2 reads lane 2 of each 8-lane segment
        let (mut w, i) = shfl_warp(3, 2, 0x181f);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            assert_eq!(w.regs[D as usize][l], 100 + ((l & !7) + 2) as u64);
        }
        // down 1 within segments of 8: the last lane of each segment keeps its own value
        let (mut w, i) = shfl_warp(SHFL_DOWN, 1, 0x181f);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            let want = if l % 8 == 7 { l } else { l + 1 };
            assert_eq!(w.regs[D as usize][l], 100 + want as u64);
        }
        assert_eq!(w.preds[0], 0x7F7F_7F7F);
        // up 2 with width 16 (c = (32-16)<<8 = 0x1000): segment starts are the clamp
        let (mut w, i) = shfl_warp(SHFL_UP, 2, 0x1000);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            let want = if l % 16 < 2 { l } else { l - 2 };
            assert_eq!(w.regs[D as usize][l], 100 + want as u64);
        }
        assert_eq!(w.preds[0], !0x0003_0003);
        // bfly 8 with width 8: the pseudo-code only bounds j from above (j <= maxLane =
        // segment start | 7), so lanes 0..7 (j = 8..15 > 7) keep their value while lanes 8..15
        // (j = 0..7 <= 15) do read the segment below
        let (mut w, i) = shfl_warp(SHFL_BFLY, 8, 0x181f);
        w.run(shfl, &i, FULL).unwrap();
        assert_eq!(w.preds[0], 0xFF00_FF00);
        assert_eq!(w.regs[D as usize][3], 103);
        assert_eq!(w.regs[D as usize][9], 101);
        // clamp 15, no segments, bfly 16: lanes 0..15 would read 16..31 (> 15): own value;
        // lanes 16..31 read 0..15 (<= 15): in range
        let (mut w, i) = shfl_warp(SHFL_BFLY, 16, 15);
        w.run(shfl, &i, FULL).unwrap();
        for l in 0..32 {
            let want = if l < 16 { l } else { l - 16 };
            assert_eq!(w.regs[D as usize][l], 100 + want as u64);
        }
        assert_eq!(w.preds[0], 0xFFFF_0000);
    }

    #[test]
    fn shfl_inactive_source_keeps_own_value() {
        let (mut w, i) = shfl_warp(SHFL_DOWN, 16, 0x1f);
        let mask = 0x0000_FFFF; // lanes 16..31 do not take part
        w.preds[0] = 0xFFFF_FFFF;
        w.run(shfl, &i, mask).unwrap();
        for l in 0..16 {
            assert_eq!(w.regs[D as usize][l], 100 + l as u64);
        }
        for l in 16..32 {
            assert_eq!(w.regs[D as usize][l], 7, "inactive lanes are not written");
        }
        // lanes 0..15: the source lane l + 16 is in range (p = pval), though it does not take
        // part; lanes 16..31 are not written
        w.preds[0] = 0;
        w.run(shfl, &i, mask).unwrap();
        assert_eq!(w.preds[0], 0x0000_FFFF);
    }

    #[test]
    fn shfl_source_formula() {
        // .up with c = 0: j = lane - b, in range when j >= 0
        assert_eq!(shfl_source(SHFL_UP, 0, 1, 0), (0, false));
        assert_eq!(shfl_source(SHFL_UP, 1, 1, 0), (0, true));
        // .idx with segment mask 0x18 (width 8) and clamp 7: lane 13 idx 3 -> 8|3 = 11
        assert_eq!(shfl_source(3, 13, 3, 0x1807), (11, true));
        // .idx clamp 3, no segments: idx 5 > 3 out of range
        assert_eq!(shfl_source(3, 2, 5, 3), (2, false));
    }

    fn vote_warp(mode: u64, neg: bool, pred: u32, members: u32) -> (Warp, Insn) {
        let mut w = Warp::new(MemMap::default());
        w.preds[1] = pred;
        for l in 0..32 {
            w.regs[MM as usize][l] = members as u64;
            w.regs[D as usize][l] = 7;
        }
        let mut i = insn();
        i.a = 1;
        i.d = if mode == VOTE_BALLOT { D } else { 2 };
        i.b = MM;
        i.aux = mode | if neg { VOTE_NEG } else { 0 };
        (w, i)
    }

    #[test]
    fn vote_modes() {
        let p = 0x0000_FFFF;
        let cases = [
            (VOTE_ALL, false, FULL, 0u32),
            (VOTE_ALL, false, 0x0000_00FF, FULL), // only lanes 0..7 take part
            (VOTE_ANY, false, FULL, FULL),
            (VOTE_ANY, false, 0xFF00_0000, 0),
            (VOTE_ANY, true, 0x0000_00FF, 0), // none of 0..7 has !p
            (VOTE_UNI, false, FULL, 0),
            (VOTE_UNI, false, 0x00FF_0000, FULL),
            (VOTE_UNI, true, 0x0000_FF00, FULL),
        ];
        for (mode, neg, mask, want) in cases {
            let (mut w, i) = vote_warp(mode, neg, p, FULL);
            w.preds[2] = 0x5555_5555;
            w.run(vote, &i, mask).unwrap();
            let expect = (0x5555_5555 & !mask) | (want & mask);
            assert_eq!(w.preds[2], expect, "mode {mode} neg {neg} mask {mask:#x}");
        }
    }

    #[test]
    fn vote_ballot_and_member_groups() {
        let (mut w, i) = vote_warp(VOTE_BALLOT, false, 0x1234_5678, FULL);
        w.run(vote, &i, 0x0FFF_FFFF).unwrap();
        assert_eq!(w.regs[D as usize][0], 0x0234_5678);
        assert_eq!(w.regs[D as usize][31], 7);
        let (mut w, i) = vote_warp(VOTE_BALLOT, true, 0x1234_5678, FULL);
        w.run(vote, &i, FULL).unwrap();
        assert_eq!(w.regs[D as usize][5], !0x1234_5678u32 as u64);
        // two groups of 16 with their own member masks
        let (mut w, i) = vote_warp(VOTE_BALLOT, false, 0x00F0_000F, 0);
        for l in 0..32 {
            w.regs[MM as usize][l] = if l < 16 { 0xFFFF } else { 0xFFFF_0000 };
        }
        w.run(vote, &i, FULL).unwrap();
        assert_eq!(w.regs[D as usize][3], 0x000F);
        assert_eq!(w.regs[D as usize][20], 0x00F0_0000);
    }

    #[test]
    fn match_any_all() {
        let mut w = Warp::new(MemMap::default());
        for l in 0..32 {
            w.regs[A as usize][l] = (l % 3) as u64;
            w.regs[MM as usize][l] = 0xFFFF_FFFF;
        }
        let mut i = insn();
        i.a = A;
        i.d = D;
        i.b = MM;
        i.v[1] = 0;
        i.aux = 0;
        w.run(match_sync, &i, FULL).unwrap();
        let class = |r: u32| (0..32).filter(|l| l % 3 == r).fold(0u32, |m, l| m | 1 << l);
        for l in 0..32 {
            assert_eq!(w.regs[D as usize][l], class((l % 3) as u32) as u64);
        }
        // .all over lanes 0,3,6,... (all equal) and over everything (not equal)
        i.aux = MATCH_ALL;
        let m = class(0);
        w.preds[0] = 0;
        w.run(match_sync, &i, m).unwrap();
        assert_eq!(w.regs[D as usize][3], m as u64);
        assert_eq!(w.preds[0], m);
        w.run(match_sync, &i, FULL).unwrap();
        assert_eq!(w.regs[D as usize][3], 0);
        assert_eq!(w.preds[0], 0);
        // .b64 sees the high half
        for l in 0..32 {
            w.regs[A as usize][l] = (l as u64 & 1) << 40;
        }
        i.aux = 0;
        w.run(match_sync, &i, FULL).unwrap();
        assert_eq!(
            w.regs[D as usize][0], FULL as u64,
            "b32 ignores the high half"
        );
        i.aux = MATCH_B64;
        w.run(match_sync, &i, FULL).unwrap();
        assert_eq!(w.regs[D as usize][0], 0x5555_5555);
        assert_eq!(w.regs[D as usize][1], 0xAAAA_AAAA);
    }

    #[test]
    fn redux_ops() {
        let mut vals = [0u64; 32];
        for (l, v) in vals.iter_mut().enumerate() {
            *v = (l as i32 - 10) as u32 as u64; // -10 .. 21
        }
        // sum of -10..=21 = 176
        assert_eq!(redux_reduce(REDUX_ADD, &vals, FULL), 176);
        assert_eq!(
            redux_reduce(REDUX_MIN | REDUX_SIGNED, &vals, FULL),
            -10i32 as u32
        );
        assert_eq!(redux_reduce(REDUX_MIN, &vals, FULL), 0);
        assert_eq!(redux_reduce(REDUX_MAX, &vals, FULL), -1i32 as u32);
        assert_eq!(redux_reduce(REDUX_MAX | REDUX_SIGNED, &vals, FULL), 21);
        // lanes 10..13 hold 0,1,2,3
        assert_eq!(redux_reduce(REDUX_OR, &vals, 0x3C00), 3);
        assert_eq!(redux_reduce(REDUX_AND, &vals, 0x3800), 0);
        assert_eq!(redux_reduce(5, &vals, 0x3C00), 0); // 0^1^2^3
        assert_eq!(redux_reduce(5, &vals, 0x1C00), 3); // 0^1^2
                                                       // f32 min/max
        let f = |x: f32| x.to_bits() as u64;
        let mut fv = [f(1.0); 32];
        fv[3] = f(-4.0);
        fv[9] = f(f32::NAN);
        let fmin = REDUX_MIN | REDUX_F32;
        assert_eq!(redux_reduce(fmin, &fv, FULL), (-4.0f32).to_bits());
        assert_eq!(redux_reduce(fmin | REDUX_ABS, &fv, FULL), 1.0f32.to_bits());
        assert_eq!(
            redux_reduce(REDUX_MAX | REDUX_F32 | REDUX_ABS, &fv, FULL),
            4.0f32.to_bits()
        );
        assert_eq!(redux_reduce(fmin | REDUX_NAN, &fv, FULL), 0x7FFF_FFFF);
        assert_eq!(redux_reduce(fmin | REDUX_NAN, &fv, 1 << 9), 0x7FFF_FFFF);
        assert_eq!(redux_reduce(fmin, &fv, 1 << 9), 0x7FFF_FFFF);
    }

    #[test]
    fn elect_lowest_member() {
        let mut w = Warp::new(MemMap::default());
        for l in 0..32 {
            w.regs[MM as usize][l] = 0xFFFF_FFF0;
        }
        let mut i = insn();
        i.d = D;
        i.b = MM;
        i.v[1] = 0;
        w.run(elect, &i, 0xFFFF_FFF0).unwrap();
        assert_eq!(w.regs[D as usize][4], 4);
        assert_eq!(w.regs[D as usize][31], 4);
        assert_eq!(w.preds[0], 1 << 4);
        // lane 4 exited: lane 5 is elected among those that take part
        w.run(elect, &i, 0xFFFF_FFE0).unwrap();
        assert_eq!(w.regs[D as usize][9], 5);
        assert_eq!(w.preds[0] & 0xFFFF_FFE0, 1 << 5);
    }

    #[test]
    fn atom_apply_formulas() {
        // inc(r, s) = r >= s ? 0 : r + 1; dec(r, s) = (r == 0 || r > s) ? s : r - 1
        assert_eq!(atom_apply(A_INC, T_U32, 4, 5, 0, false), 5);
        assert_eq!(atom_apply(A_INC, T_U32, 5, 5, 0, false), 0);
        assert_eq!(atom_apply(A_INC, T_U32, 9, 5, 0, false), 0);
        assert_eq!(atom_apply(A_DEC, T_U32, 0, 5, 0, false), 5);
        assert_eq!(atom_apply(A_DEC, T_U32, 9, 5, 0, false), 5);
        assert_eq!(atom_apply(A_DEC, T_U32, 3, 5, 0, false), 2);
        assert_eq!(atom_apply(A_CAS, T_U32, 3, 3, 9, false), 9);
        assert_eq!(atom_apply(A_CAS, T_U32, 3, 4, 9, false), 3);
        assert_eq!(
            atom_apply(A_CAS, T_U16, 0x1234, 0xFFFF_1234, 0xBEEF, false),
            0xBEEF
        );
        assert_eq!(atom_apply(A_ADD, T_U32, 0xFFFF_FFFF, 2, 0, false), 1);
        assert_eq!(atom_apply(A_ADD, T_U64, u64::MAX, 2, 0, false), 1);
        assert_eq!(
            atom_apply(A_MIN, T_S32, 5, (-3i32) as u32 as u64, 0, false),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            atom_apply(A_MIN, T_U32, 5, (-3i32) as u32 as u64, 0, false),
            5
        );
        assert_eq!(atom_apply(A_MAX, T_S64, 5, (-3i64) as u64, 0, false), 5);
        assert_eq!(
            atom_apply(A_MAX, T_U64, 5, (-3i64) as u64, 0, false),
            (-3i64) as u64
        );
        assert_eq!(atom_apply(A_EXCH, T_U64, 5, 6, 0, false), 6);
        assert_eq!(atom_apply(A_XOR, T_U32, 0xF0, 0xFF, 0, false), 0x0F);
        // f32 add: 1 + 2^-24 rounds to even (1.0); subnormals flushed only with ftz
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(
            atom_apply(A_ADD, T_F32, f(1.0), f(2f32.powi(-24)), 0, false),
            f(1.0)
        );
        assert_eq!(atom_apply(A_ADD, T_F32, f(1.5), f(2.25), 0, true), f(3.75));
        let tiny = f32::from_bits(1); // smallest subnormal
        assert_eq!(atom_apply(A_ADD, T_F32, f(tiny), f(tiny), 0, false), 2);
        assert_eq!(atom_apply(A_ADD, T_F32, f(tiny), f(tiny), 0, true), 0);
        assert_eq!(
            atom_apply(A_ADD, T_F32, f(-tiny), 0x8000_0000, 0, true),
            0x8000_0000
        );
        // f16 add: 1.0 (0x3C00) + 0.5 (0x3800) = 1.5 (0x3E00); f16x2 per half
        assert_eq!(atom_apply(A_ADD, T_F16, 0x3C00, 0x3800, 0, false), 0x3E00);
        assert_eq!(
            atom_apply(A_ADD, T_F16X2, 0x3C00_3800, 0x3800_3800, 0, false),
            0x3E00_3C00
        );
        // bf16 add: 1.0 (0x3F80) + 1.0 = 2.0 (0x4000)
        assert_eq!(atom_apply(A_ADD, T_BF16, 0x3F80, 0x3F80, 0, false), 0x4000);
        // f64 add
        assert_eq!(
            atom_apply(A_ADD, T_F64, 1.5f64.to_bits(), 0.25f64.to_bits(), 0, false),
            1.75f64.to_bits()
        );
        // float min/max
        assert_eq!(atom_apply(A_MIN, T_F32, f(-1.0), f(2.0), 0, false), f(-1.0));
        assert_eq!(atom_apply(A_MAX, T_F16, 0x3C00, 0xBC00, 0, false), 0x3C00);
    }

    fn global(bytes: u64) -> (MemMap, u64) {
        let mut g = GlobalMemory::default();
        let a = g.alloc(bytes, false, "buffer #0".into()).unwrap();
        (g.snapshot(), a.base)
    }

    fn atom_insn(op: u64, ty: u64, space: Space, has_dst: bool) -> Insn {
        let mut i = insn();
        i.d = D;
        i.a = A;
        i.b = B;
        i.c = C;
        i.aux =
            op | ty << 4 | space_code(space) << 8 | 1 << 12 | if has_dst { A_HAS_DST } else { 0 };
        i
    }

    #[test]
    fn atom_global_add_all_lanes() {
        let (mem, base) = global(64);
        let mut w = Warp::new(mem.clone());
        for l in 0..32 {
            w.regs[A as usize][l] = base;
            w.regs[B as usize][l] = l as u64 + 1;
        }
        let i = atom_insn(A_ADD, T_U32, Space::Global, true);
        w.run(atom_scalar, &i, FULL).unwrap();
        // lanes go in order: lane l sees 1 + 2 + … + l
        for l in 0..32u64 {
            assert_eq!(w.regs[D as usize][l as usize], l * (l + 1) / 2);
        }
        let a = mem.find(base, 4).unwrap();
        assert_eq!(mem::load(&a.words, 0, 4), 528);
        // generic address, 64-bit, red (no destination)
        for l in 0..32 {
            w.regs[A as usize][l] = base + 8;
            w.regs[B as usize][l] = 1 << 33;
            w.regs[D as usize][l] = 7;
        }
        let i = atom_insn(A_ADD, T_U64, Space::Generic, false);
        w.run(atom_scalar, &i, FULL).unwrap();
        assert_eq!(mem::load(&a.words, 8, 8), 32 << 33);
        assert_eq!(w.regs[D as usize][0], 7);
    }

    #[test]
    fn atom_f32_add_flushes_on_global_only() {
        let (mem, base) = global(16);
        let mut w = Warp::new(mem.clone());
        w.regs[A as usize][0] = base;
        w.regs[B as usize][0] = 1; // smallest subnormal
        let i = atom_insn(A_ADD, T_F32, Space::Global, true);
        w.run(atom_scalar, &i, 1).unwrap();
        let a = mem.find(base, 4).unwrap();
        assert_eq!(mem::load(&a.words, 0, 4), 0);
        // shared: kept
        w.regs[A as usize][0] = 8;
        let i = atom_insn(A_ADD, T_F32, Space::Shared, true);
        w.run(atom_scalar, &i, 1).unwrap();
        w.run(atom_scalar, &i, 1).unwrap();
        assert_eq!(w.shared[2], 2);
        assert_eq!(w.regs[D as usize][0], 1);
    }

    #[test]
    fn atom_cas_b16_and_shared_64() {
        let (mem, base) = global(16);
        let mut w = Warp::new(mem.clone());
        {
            let a = mem.find(base, 4).unwrap();
            mem::store_atomic(&a.words, 0, 4, 0xAAAA_5555);
        }
        // cas.b16 on the high half: compare 0xAAAA, store 0x1234
        w.regs[A as usize][0] = base + 2;
        w.regs[B as usize][0] = 0xAAAA;
        w.regs[C as usize][0] = 0x1234;
        let i = atom_insn(A_CAS, T_U16, Space::Global, true);
        w.run(atom_scalar, &i, 1).unwrap();
        assert_eq!(w.regs[D as usize][0], 0xAAAA);
        let a = mem.find(base, 4).unwrap();
        assert_eq!(mem::load(&a.words, 0, 4), 0x1234_5555);
        // 64-bit min on shared, signed
        w.shared[4] = 5;
        w.shared[5] = 0;
        w.regs[A as usize][0] = 16;
        w.regs[B as usize][0] = (-2i64) as u64;
        let i = atom_insn(A_MIN, T_S64, Space::Shared, true);
        w.run(atom_scalar, &i, 1).unwrap();
        assert_eq!(w.regs[D as usize][0], 5);
        assert_eq!((w.shared[4], w.shared[5]), (0xFFFF_FFFE, 0xFFFF_FFFF));
    }

    #[test]
    fn atom_faults() {
        let (mem, base) = global(16);
        let mut w = Warp::new(mem.clone());
        w.regs[A as usize][3] = base + 2;
        let i = atom_insn(A_ADD, T_U32, Space::Global, true);
        let e = w.run(atom_scalar, &i, 1 << 3).unwrap_err();
        assert!(matches!(
            e.kind,
            crate::program::FaultKind::Misaligned { .. }
        ));
        assert_eq!(e.lane, Some(3));
        w.regs[A as usize][3] = base + 16;
        let e = w.run(atom_scalar, &i, 1 << 3).unwrap_err();
        assert!(matches!(
            e.kind,
            crate::program::FaultKind::OutOfBounds { .. }
        ));
        // read-only allocation
        let mut g = GlobalMemory::default();
        let c = g.alloc(16, true, ".const c".into()).unwrap();
        let mut w = Warp::new(g.snapshot());
        w.regs[A as usize][0] = c.base;
        let e = w.run(atom_scalar, &i, 1).unwrap_err();
        assert!(matches!(e.kind, crate::program::FaultKind::ReadOnly { .. }));
    }

    #[test]
    fn atom_vector_f32_add() {
        let (mem, base) = global(32);
        let mut w = Warp::new(mem.clone());
        // sources in slots 10..14, destinations the same registers
        let mut i = insn();
        let srcs = [10u32, 11, 12, 13];
        let mut packed = [0u32; 16];
        packed[..4].copy_from_slice(&srcs);
        packed[8..12].copy_from_slice(&srcs);
        let wd = |k: usize| packed[2 * k] | packed[2 * k + 1] << 16;
        i.a = A;
        i.d = wd(0);
        i.b = wd(1);
        i.c = wd(2);
        i.v = [wd(3), wd(4), wd(5), wd(6)];
        i.aux = A_ADD
            | T_F32 << 4
            | space_code(Space::Global) << 8
            | 4 << 12
            | A_HAS_DST
            | (wd(7) as u64) << 32;
        for l in 0..2 {
            w.regs[A as usize][l] = base + 16;
            for (k, s) in srcs.iter().enumerate() {
                w.regs[*s as usize][l] = (k as f32 + 1.0).to_bits() as u64;
            }
        }
        w.run(atom_vec, &i, 0b11).unwrap();
        let a = mem.find(base, 4).unwrap();
        for k in 0..4u64 {
            let got = f32::from_bits(mem::load(&a.words, 16 + 4 * k, 4) as u32);
            assert_eq!(got, 2.0 * (k as f32 + 1.0));
            // lane 1 ran second: it saw lane 0's sum
            assert_eq!(
                w.regs[srcs[k as usize] as usize][1],
                (k as f32 + 1.0).to_bits() as u64
            );
            assert_eq!(w.regs[srcs[k as usize] as usize][0], 0);
        }
        // misaligned vector (needs 16-byte alignment)
        w.regs[A as usize][0] = base + 8;
        assert!(w.run(atom_vec, &i, 1).is_err());
    }

    #[test]
    fn atom_global_concurrent() {
        // 8 OS threads hammer one 32-bit and one 64-bit counter (which starts just below 2^32,
        // so the sums carry into the high word)
        let (mem, base) = global(16);
        let start = 0xFFFF_FF00u64;
        mem::store_atomic(&mem.find(base, 4).unwrap().words, 8, 8, start);
        std::thread::scope(|s| {
            for _ in 0..8 {
                let mem = mem.clone();
                s.spawn(move || {
                    let mut w = Warp::new(mem.clone());
                    for l in 0..32 {
                        w.regs[B as usize][l] = 1;
                    }
                    let i32_ = atom_insn(A_ADD, T_U32, Space::Global, true);
                    let i64_ = atom_insn(A_ADD, T_U64, Space::Global, true);
                    for _ in 0..200 {
                        for l in 0..32 {
                            w.regs[A as usize][l] = base;
                        }
                        w.run(atom_scalar, &i32_, FULL).unwrap();
                        for l in 0..32 {
                            w.regs[A as usize][l] = base + 8;
                        }
                        w.run(atom_scalar, &i64_, FULL).unwrap();
                    }
                });
            }
        });
        let a = mem.find(base, 4).unwrap();
        assert_eq!(mem::load(&a.words, 0, 4), 8 * 200 * 32);
        assert_eq!(mem::load(&a.words, 8, 8), start + 8 * 200 * 32);
    }
}
