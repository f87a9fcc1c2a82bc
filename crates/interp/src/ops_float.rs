//! Floating point, half precision, comparison/selection and conversion.
//!
//! * `add sub mul fma mad div rcp sqrt rsqrt sin cos lg2 ex2 tanh abs neg min max copysign testp`
//!   on `.f32` and `.f64` with every rounding mode, `.ftz`, `.sat`, `.approx`/`.full` and the
//!   NaN rules of `min`/`max` (`.NaN`, `.xorsign.abs`), three-input `min`/`max.f32`
//!   (`.ftz .NaN .abs`), `add sub mul fma` on the packed `.f32x2` and the mixed-precision
//!   `add sub fma .f32.{f16,bf16}`;
//! * the half-precision forms (`.f16 .f16x2 .bf16 .bf16x2`) of `add sub mul fma neg abs min max
//!   ex2 tanh` with `.ftz .sat .relu .oob`;
//! * `set setp selp slct` on every integer and float type, with the unordered comparisons and the
//!   Boolean combination with a predicate operand;
//! * `cvt` between every integer and float type (`.f16 .bf16 .tf32 .e4m3x2 .e5m2x2`, the packed
//!   `.f16x2/.bf16x2` forms, `.e2m1x2 .e2m3x2 .e3m2x2 .ue8m0x2`, each narrow format to and
//!   from `.bf16x2`) with every rounding and
//!   saturation modifier, stochastic rounding (`.rs`) to `.f16x2/.bf16x2`, and `cvt.pack.sat`.
//!
//! What each instruction computes lives in [`crate::semantics`]; this module holds the
//! handlers, and `crate::decode::float` picks one per instruction and packs its modifiers into
//! `aux`. The common forms get their own handler in which the modifiers are compile-time
//! constants (`add.f32` with `.rn` and no `.ftz/.sat` is a native `a + b` plus the
//! canonical-NaN select); the rest read them from `aux`.

use crate::handlers::{CellLanes, PRED_BOOL_SHIFT, PRED_NEG_C};
use crate::program::{Insn, Lanes, FULL, LANE_BIT64};
use crate::semantics::cmp::{self, CmpOp, SetDst};
use crate::semantics::cvt::{self, CvtMods, CvtRound, FloatType, Fp8, IntType, PackType};
use crate::semantics::float::{MinMax, TestOp};
use crate::semantics::half::HalfMods;
use crate::semantics::{IntRounding, Rounding};
use ptx_isa::ScalarType as T;

pub(crate) type R<T> = Result<T, String>;

// ---------------------------------------------------------------------------------------------
// `aux` layout shared by the handlers of this file.

/// Bits 0..3: the rounding mode ([`rnd`]).
pub(crate) const RND_MASK: u64 = 7;
/// `.ftz`.
pub(crate) const FTZ: u64 = 1 << 3;
/// `.sat`.
pub(crate) const SAT: u64 = 1 << 4;
/// `.relu`.
pub(crate) const RELU: u64 = 1 << 5;
/// `.NaN` (min/max).
pub(crate) const NAN: u64 = 1 << 6;
/// `.xorsign.abs` (min/max).
pub(crate) const XORSIGN: u64 = 1 << 7;
/// `.oob` (half-precision fma).
pub(crate) const OOB: u64 = 1 << 8;
/// `.satfinite`.
pub(crate) const SATFINITE: u64 = 1 << 9;
/// Bits 10..12: the integer rounding of `cvt` ([`irnd`]).
pub(crate) const IRND_SHIFT: u32 = 10;
/// An integer rounding was written.
pub(crate) const HAS_IRND: u64 = 1 << 12;
/// A float rounding was written.
pub(crate) const HAS_RND: u64 = 1 << 13;
/// Bits 16..21: the comparison operator ([`cmp_of`]).
pub(crate) const CMP_SHIFT: u32 = 16;
/// Bits 24..28: the compare class of `set`/`setp` ([`cmp_val`]), or the `cvt` source type.
pub(crate) const CLASS_SHIFT: u32 = 24;
/// Bits 28..32: the `cvt` destination type.
pub(crate) const DST_SHIFT: u32 = 28;
/// Bits 32..35: what `set` writes ([`set_dst`]), the `testp` property, the FP8 format, the
/// `cvt.pack` type.
pub(crate) const KIND_SHIFT: u32 = 32;
/// `.bf16`/`.bf16x2` variant of a shared handler.
pub(crate) const BF16: u64 = 1 << 36;

/// The rounding mode in `aux` (absent means `.rn`).
#[inline(always)]
pub(crate) fn rnd(aux: u64) -> Rounding {
    match aux & RND_MASK {
        0 => Rounding::Rn,
        1 => Rounding::Rz,
        2 => Rounding::Rm,
        3 => Rounding::Rp,
        _ => Rounding::Rna,
    }
}

pub(crate) fn rnd_code(r: Rounding) -> u64 {
    match r {
        Rounding::Rn => 0,
        Rounding::Rz => 1,
        Rounding::Rm => 2,
        Rounding::Rp => 3,
        Rounding::Rna => 4,
    }
}

/// The integer rounding in `aux`.
#[inline(always)]
pub(crate) fn irnd(aux: u64) -> IntRounding {
    irnd_of_code(aux >> IRND_SHIFT & 3)
}

#[inline(always)]
pub(crate) const fn irnd_of_code(c: u64) -> IntRounding {
    match c {
        0 => IntRounding::Rni,
        1 => IntRounding::Rzi,
        2 => IntRounding::Rmi,
        _ => IntRounding::Rpi,
    }
}

pub(crate) fn irnd_code(r: IntRounding) -> u64 {
    match r {
        IntRounding::Rni => 0,
        IntRounding::Rzi => 1,
        IntRounding::Rmi => 2,
        IntRounding::Rpi => 3,
    }
}

#[inline(always)]
pub(crate) fn f32_of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
pub(crate) fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}

#[inline(always)]
pub(crate) fn f64_of(x: u64) -> f64 {
    f64::from_bits(x)
}

#[inline(always)]
pub(crate) fn b64(x: f64) -> u64 {
    x.to_bits()
}

/// The min/max modifiers in `aux`.
#[inline(always)]
pub(crate) fn minmax(aux: u64) -> MinMax {
    MinMax {
        ftz: aux & FTZ != 0,
        nan: aux & NAN != 0,
        xorsign_abs: aux & XORSIGN != 0,
    }
}

/// The half-precision arithmetic modifiers in `aux`.
#[inline(always)]
pub(crate) fn half_mods(aux: u64) -> HalfMods {
    HalfMods {
        ftz: aux & FTZ != 0,
        sat: aux & SAT != 0,
        relu: aux & RELU != 0,
        oob: aux & OOB != 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Modifiers.

/// The operators in the order of their `aux` codes.
pub(crate) const CMP_OPS: [CmpOp; 18] = CmpOp::ALL;

pub(crate) fn cmp_code(op: CmpOp) -> u64 {
    CMP_OPS.iter().position(|&o| o == op).unwrap_or(0) as u64
}

/// The comparison operator in `aux`.
#[inline(always)]
pub(crate) fn cmp_of(aux: u64) -> CmpOp {
    CMP_OPS[(aux >> CMP_SHIFT & 31) as usize % CMP_OPS.len()]
}

pub(crate) const TEST_OPS: [TestOp; 6] = [
    TestOp::Finite,
    TestOp::Infinite,
    TestOp::Number,
    TestOp::NotANumber,
    TestOp::Normal,
    TestOp::Subnormal,
];

#[inline(always)]
pub(crate) fn test_of(aux: u64) -> TestOp {
    TEST_OPS[(aux >> KIND_SHIFT & 7) as usize % TEST_OPS.len()]
}

// ---------------------------------------------------------------------------------------------
// Entry point.

// ---------------------------------------------------------------------------------------------
// f32 / f64 arithmetic.

// ---------------------------------------------------------------------------------------------
// Comparison and selection.

/// Compare classes: how `set`/`setp` read their sources.
// (class 0 and 4 were the 8-bit classes: `setp`/`set` take no 8-bit type, as ptxas and the
// checker refuse them, so the decoder refuses them too instead of keeping unreachable arms)
pub(crate) const C_U16: u64 = 1;
pub(crate) const C_U32: u64 = 2;
pub(crate) const C_U64: u64 = 3;
pub(crate) const C_S16: u64 = 5;
pub(crate) const C_S32: u64 = 6;
pub(crate) const C_S64: u64 = 7;
pub(crate) const C_F32: u64 = 8;
pub(crate) const C_F64: u64 = 9;
pub(crate) const C_F16: u64 = 10;
pub(crate) const C_BF16: u64 = 11;
pub(crate) const C_F16X2: u64 = 12;
pub(crate) const C_BF16X2: u64 = 13;

pub(crate) fn cmp_class(ty: T) -> R<u64> {
    Ok(match ty {
        T::B16 | T::U16 => C_U16,
        T::B32 | T::U32 => C_U32,
        T::B64 | T::U64 => C_U64,
        T::S16 => C_S16,
        T::S32 => C_S32,
        T::S64 => C_S64,
        T::F32 => C_F32,
        T::F64 => C_F64,
        T::F16 => C_F16,
        T::Bf16 => C_BF16,
        T::F16x2 => C_F16X2,
        T::Bf16x2 => C_BF16X2,
        t => return Err(format!("comparisons of `{}` are not supported", t.suffix())),
    })
}

/// `a op b` for the scalar compare classes (the low bits of the sources, per class).
#[inline(always)]
pub(crate) fn cmp_val(class: u64, op: CmpOp, ftz: bool, a: u64, b: u64) -> bool {
    match class {
        C_U16 => cmp::cmp_u64(op, a as u16 as u64, b as u16 as u64),
        C_U32 => cmp::cmp_u64(op, a as u32 as u64, b as u32 as u64),
        C_U64 => cmp::cmp_u64(op, a, b),
        C_S16 => cmp::cmp_s64(op, a as i16 as i64, b as i16 as i64),
        C_S32 => cmp::cmp_s64(op, a as i32 as i64, b as i32 as i64),
        C_S64 => cmp::cmp_s64(op, a as i64, b as i64),
        C_F32 => cmp::cmp_f32(op, f32_of(a), f32_of(b), ftz),
        C_F64 => cmp::cmp_f64(op, f64_of(a), f64_of(b)),
        C_F16 => cmp::cmp_f16(op, a as u16, b as u16, ftz),
        _ => cmp::cmp_bf16(op, a as u16, b as u16),
    }
}

/// `(low, high)` outcomes of a packed comparison.
#[inline(always)]
pub(crate) fn cmp_x2(class: u64, op: CmpOp, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    if class == C_BF16X2 {
        cmp::cmp_bf16x2(op, a as u32, b as u32)
    } else {
        cmp::cmp_f16x2(op, a as u32, b as u32, ftz)
    }
}

/// `t` combined with the instruction's predicate operand (see [`crate::handlers`]).
#[inline]
pub(crate) fn combine_bits(p: &[u32], i: &Insn, t: u32) -> u32 {
    let op = (i.aux >> PRED_BOOL_SHIFT) & 3;
    if op == 0 {
        return t;
    }
    let c = p[i.c as usize];
    let c = if i.aux & PRED_NEG_C != 0 { !c } else { c };
    match op {
        1 => t & c,
        2 => t | c,
        _ => t ^ c,
    }
}

/// Writes `bits` into predicate `slot` for the lanes of `mask` (`u32::MAX`: no destination).
#[inline]
pub(crate) fn write_pred(p: &mut [u32], slot: u32, bits: u32, mask: u32) {
    if slot != u32::MAX {
        let d = &mut p[slot as usize];
        *d = (*d & !mask) | (bits & mask);
    }
}

/// `setp` on `.f16x2/.bf16x2`: `p` gets the low halves' outcome, `q` the high halves'.
pub(crate) fn setp_x2(r: &mut [Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let (x, y) = (&r[i.a as usize], &r[i.b as usize]);
    let (class, op, ftz) = (i.aux >> CLASS_SHIFT & 15, cmp_of(i.aux), i.aux & FTZ != 0);
    let (mut lo, mut hi) = (0u32, 0u32);
    for (l, (&a, &b)) in x.iter().zip(y.iter()).enumerate() {
        let (t0, t1) = cmp_x2(class, op, ftz, a, b);
        lo |= (t0 as u32) << l;
        hi |= (t1 as u32) << l;
    }
    let (lo, hi) = (combine_bits(p, i, lo), combine_bits(p, i, hi));
    write_pred(p, i.d, lo, mask);
    write_pred(p, i.v[1], hi, mask);
}

/// `set` destination kinds in `aux`.
pub(crate) const SET_DSTS: [SetDst; 5] = [
    SetDst::Int32,
    SetDst::Int16,
    SetDst::F32,
    SetDst::F16,
    SetDst::Bf16,
];

#[inline(always)]
pub(crate) fn set_dst(aux: u64) -> SetDst {
    SET_DSTS[(aux >> KIND_SHIFT & 7) as usize % SET_DSTS.len()]
}

/// `set`: the comparison (combined with `c`) as an all-ones integer or `1.0`.
pub(crate) fn set_h(r: &mut [Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let (class, op, ftz) = (i.aux >> CLASS_SHIFT & 15, cmp_of(i.aux), i.aux & FTZ != 0);
    let dst = set_dst(i.aux);
    let (x, y) = (r[i.a as usize], r[i.b as usize]);
    let (mut lo, mut hi) = (0u32, 0u32);
    let packed = class == C_F16X2 || class == C_BF16X2;
    for (l, (&a, &b)) in x.iter().zip(y.iter()).enumerate() {
        if packed {
            let (t0, t1) = cmp_x2(class, op, ftz, a, b);
            lo |= (t0 as u32) << l;
            hi |= (t1 as u32) << l;
        } else {
            lo |= (cmp_val(class, op, ftz, a, b) as u32) << l;
        }
    }
    let (lo, hi) = (combine_bits(p, i, lo), combine_bits(p, i, hi));
    let d = &mut r[i.d as usize];
    for (l, o) in d.iter_mut().enumerate() {
        if mask >> l & 1 != 0 {
            let (t0, t1) = (lo >> l & 1 != 0, hi >> l & 1 != 0);
            *o = if packed {
                cmp::set_x2(dst, t0, t1)
            } else {
                cmp::set_value(dst, t0)
            } as u64;
        }
    }
}

/// The mask of a `bits`-wide value.
pub(crate) fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `selp`: `c ? a : b` (the predicate `c` is negated when `aux` bit 0 is set); the result is
/// masked to the type width (`imm`).
pub(crate) fn selp_h(r: &mut [Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let c = p[i.c as usize] ^ if i.aux & 1 != 0 { u32::MAX } else { 0 };
    let w = i.imm as u64;
    let cl = crate::handlers::cells(r);
    let slot = |k| crate::handlers::slot(cl, k);
    selp_best(slot(i.d), slot(i.a), slot(i.b), c & mask, mask, w)
}

crate::with_v3!(
    /// [`selp_lanes`], in its AVX2 copy when the CPU has it.
    fn selp_best, selp_lanes_v3 = selp_lanes(
        d: &CellLanes,
        x: &CellLanes,
        y: &CellLanes,
        pick: u32,
        mask: u32,
        w: u64
    ) -> ()
);

/// The lane loop of `selp`, branch-free (lane bits from a table of 64-bit masks, not variable
/// shifts) so that it vectorises; a full warp writes every lane without reading `d`.
#[inline(always)]
pub(crate) fn selp_lanes(
    d: &CellLanes,
    x: &CellLanes,
    y: &CellLanes,
    pick: u32,
    mask: u32,
    w: u64,
) {
    let (pick, mask) = (pick as u64, mask as u64);
    let choose = |l: usize| {
        let sel = if pick & LANE_BIT64[l] != 0 {
            u64::MAX
        } else {
            0
        };
        ((x[l].get() & sel) | (y[l].get() & !sel)) & w
    };
    if mask == FULL as u64 {
        crate::handlers::store_lanes(d, choose);
    } else {
        crate::handlers::store_lanes(d, |l| {
            let keep = if mask & LANE_BIT64[l] != 0 {
                0
            } else {
                u64::MAX
            };
            (d[l].get() & keep) | (choose(l) & !keep)
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions.

/// A scalar `cvt` type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ct {
    I(IntType),
    F(FloatType),
}

pub(crate) const INT_TYPES: [IntType; 8] = [
    IntType::U8,
    IntType::U16,
    IntType::U32,
    IntType::U64,
    IntType::S8,
    IntType::S16,
    IntType::S32,
    IntType::S64,
];
pub(crate) const FLOAT_TYPES: [FloatType; 4] = [
    FloatType::F16,
    FloatType::Bf16,
    FloatType::F32,
    FloatType::F64,
];

// Codes of the scalar cvt types in `aux` (and in the const parameters of the fast handlers).
pub(crate) const U32: u8 = 2;
pub(crate) const U64: u8 = 3;
pub(crate) const S32: u8 = 6;
pub(crate) const S64: u8 = 7;
pub(crate) const F32: u8 = 10;
pub(crate) const F64: u8 = 11;

pub(crate) fn ct_of(t: T) -> Option<Ct> {
    Some(match t {
        T::U8 | T::B8 => Ct::I(IntType::U8),
        T::U16 | T::B16 => Ct::I(IntType::U16),
        T::U32 | T::B32 => Ct::I(IntType::U32),
        T::U64 | T::B64 => Ct::I(IntType::U64),
        T::S8 => Ct::I(IntType::S8),
        T::S16 => Ct::I(IntType::S16),
        T::S32 => Ct::I(IntType::S32),
        T::S64 => Ct::I(IntType::S64),
        T::F16 => Ct::F(FloatType::F16),
        T::Bf16 => Ct::F(FloatType::Bf16),
        T::F32 => Ct::F(FloatType::F32),
        T::F64 => Ct::F(FloatType::F64),
        _ => return None,
    })
}

pub(crate) fn ct_code(c: Ct) -> u8 {
    match c {
        Ct::I(t) => INT_TYPES.iter().position(|&x| x == t).unwrap_or(0) as u8,
        Ct::F(t) => 8 + FLOAT_TYPES.iter().position(|&x| x == t).unwrap_or(0) as u8,
    }
}

#[inline(always)]
pub(crate) const fn int_type(code: u8) -> IntType {
    INT_TYPES[(code & 7) as usize]
}

#[inline(always)]
pub(crate) const fn float_type(code: u8) -> FloatType {
    FLOAT_TYPES[(code & 3) as usize]
}

#[inline(always)]
pub(crate) fn cvt_mods(aux: u64) -> CvtMods {
    CvtMods {
        ftz: aux & FTZ != 0,
        sat: aux & SAT != 0,
        relu: aux & RELU != 0,
        satfinite: aux & SATFINITE != 0,
    }
}

#[inline(always)]
pub(crate) fn cvt_round(aux: u64) -> CvtRound {
    if aux & HAS_IRND != 0 {
        CvtRound::Int(irnd(aux))
    } else if aux & HAS_RND != 0 {
        CvtRound::Float(rnd(aux))
    } else {
        CvtRound::None
    }
}

/// Any scalar conversion, types and modifiers from `aux`.
#[inline]
pub(crate) fn cvt_any(aux: u64, a: u64) -> u64 {
    let src = (aux >> CLASS_SHIFT & 15) as u8;
    let dst = (aux >> DST_SHIFT & 15) as u8;
    match (dst >= 8, src >= 8) {
        (false, false) => cvt::int_to_int(int_type(dst), int_type(src), a, aux & SAT != 0),
        (false, true) => {
            cvt::float_to_int(int_type(dst), float_type(src), a, irnd(aux), aux & FTZ != 0)
        }
        (true, false) => {
            cvt::int_to_float(float_type(dst), int_type(src), a, rnd(aux), aux & SAT != 0)
        }
        (true, true) => cvt::float_to_float(
            float_type(dst),
            float_type(src),
            a,
            cvt_round(aux),
            cvt_mods(aux),
        ),
    }
}

use crate::ops_int::map1;

/// int → int without `.sat`, constant types; the result masked to the register (`imm`).
pub(crate) fn cvt_ii<const D: u8, const S: u8>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    mask: u32,
) {
    let w = i.imm as u64;
    map1(r, i, mask, |a| {
        cvt::int_to_int(int_type(D), int_type(S), a, false) & w
    });
}

/// int → `.f32/.f64` with `.rn` and no `.sat`: the host's conversion rounds to nearest even.
pub(crate) fn cvt_if<const D: u8, const S: u8>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    mask: u32,
) {
    map1(r, i, mask, |a| {
        let t = int_type(S);
        let v = t.value(a);
        if D == F64 {
            b64(if t.signed() {
                v as i64 as f64
            } else {
                v as u64 as f64
            })
        } else {
            b32(if t.signed() {
                v as i64 as f32
            } else {
                v as u64 as f32
            })
        }
    });
}

/// `.f32/.f64` → 32/64-bit int without `.ftz`: round to integral, then the saturating cast
/// (NaN gives 0), which is the ISA's rule.
pub(crate) fn cvt_fi<const D: u8, const S: u8, const IR: u8>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    mask: u32,
) {
    let w = i.imm as u64;
    map1(r, i, mask, |a| {
        let x = if S == F64 {
            f64_of(a)
        } else {
            f32_of(a) as f64
        };
        let x = cvt::round_integral(x, irnd_of_code(IR as u64));
        let v = match D {
            U32 => x as u32 as u64,
            S32 => x as i32 as i64 as u64,
            U64 => x as u64,
            _ => x as i64 as u64,
        };
        v & w
    });
}

macro_rules! fi_rnd {
    ($d:ident, $s:ident, $ir:expr) => {
        match $ir {
            IntRounding::Rni => Op::Alu(cvt_fi::<$d, $s, 0>),
            IntRounding::Rzi => Op::Alu(cvt_fi::<$d, $s, 1>),
            IntRounding::Rmi => Op::Alu(cvt_fi::<$d, $s, 2>),
            IntRounding::Rpi => Op::Alu(cvt_fi::<$d, $s, 3>),
        }
    };
}
pub(crate) use fi_rnd;

pub(crate) fn fp8_of(t: T) -> Option<Fp8> {
    match t {
        T::E4m3x2 => Some(Fp8::E4m3),
        T::E5m2x2 => Some(Fp8::E5m2),
        _ => None,
    }
}

#[inline(always)]
pub(crate) fn fp8(aux: u64) -> Fp8 {
    if aux >> KIND_SHIFT & 1 != 0 {
        Fp8::E5m2
    } else {
        Fp8::E4m3
    }
}

pub(crate) const PACK_TYPES: [PackType; 8] = [
    PackType::U2,
    PackType::S2,
    PackType::U4,
    PackType::S4,
    PackType::U8,
    PackType::S8,
    PackType::U16,
    PackType::S16,
];
