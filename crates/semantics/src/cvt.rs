//! `cvt` and `cvt.pack` (ISA chapter "Data Movement and Conversion Instructions").
//!
//! Operands and results are raw bits in a `u64`: a source uses its low `n` bits, an integer
//! result comes back sign-extended (signed types) or zero-extended (unsigned), a float result
//! zero-extended — the ISA's rule for registers wider than the type.
//!
//! * int → int: truncate to the destination width (then extend), or clamp with `.sat`.
//! * float → int: round to an integer by `.rni/.rzi/.rmi/.rpi`, then clamp to the destination
//!   range (the ISA says float-to-int saturates by default); NaN gives 0.
//! * int → float and narrowing float → float: one correct rounding by `.rn/.rz/.rm/.rp`
//!   (`.rna` for `.tf32`), through [`super::fp::round_pack`]. Widening is exact.
//! * float → same-size float with an integer rounding: round to an integral value, kept as float.
//! * `.ftz` flushes `.f32` subnormal inputs and results; `.sat` on a float result clamps to
//!   `[0, 1]` with NaN to `+0`; `.relu` makes negative results `+0` and NaN the canonical NaN;
//!   `.satfinite` turns an overflow (or infinite input) into the signed largest finite value and
//!   keeps NaN as NaN.
//! * Any NaN result of a float → float `cvt` is the destination's canonical NaN (all ones but the
//!   sign); the ISA leaves these bits unspecified except under `.relu` where it asks for it.

use super::fp::{self, Format, BF16, E4M3, E5M2, F16, F32, F64, TF32};
use super::{IntRounding, Rounding};

/// An integer `cvt` type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntType {
    /// `.u8`
    U8,
    /// `.u16`
    U16,
    /// `.u32`
    U32,
    /// `.u64`
    U64,
    /// `.s8`
    S8,
    /// `.s16`
    S16,
    /// `.s32`
    S32,
    /// `.s64`
    S64,
}

impl IntType {
    /// Width in bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            IntType::U8 | IntType::S8 => 8,
            IntType::U16 | IntType::S16 => 16,
            IntType::U32 | IntType::S32 => 32,
            IntType::U64 | IntType::S64 => 64,
        }
    }
    /// Whether the type is signed.
    #[inline]
    pub const fn signed(self) -> bool {
        matches!(
            self,
            IntType::S8 | IntType::S16 | IntType::S32 | IntType::S64
        )
    }
    /// Smallest value.
    #[inline]
    pub const fn min(self) -> i128 {
        if self.signed() {
            -(1i128 << (self.bits() - 1))
        } else {
            0
        }
    }
    /// Largest value.
    #[inline]
    pub const fn max(self) -> i128 {
        if self.signed() {
            (1i128 << (self.bits() - 1)) - 1
        } else {
            (1i128 << self.bits()) - 1
        }
    }
    /// The value of the low `bits()` bits of `raw` in this type.
    #[inline]
    pub const fn value(self, raw: u64) -> i128 {
        let sh = 64 - self.bits();
        if self.signed() {
            ((raw << sh) as i64 >> sh) as i128
        } else {
            ((raw << sh) >> sh) as i128
        }
    }
    /// `v` modulo `2^bits()`, then sign- or zero-extended to 64 bits.
    #[inline]
    pub const fn encode(self, v: i128) -> u64 {
        self.value(v as u64) as u64
    }
}

/// A scalar floating-point `cvt` type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatType {
    /// `.f16`
    F16,
    /// `.bf16`
    Bf16,
    /// `.f32`
    F32,
    /// `.f64`
    F64,
}

impl FloatType {
    /// The binary format.
    #[inline]
    pub const fn format(self) -> Format {
        match self {
            FloatType::F16 => F16,
            FloatType::Bf16 => BF16,
            FloatType::F32 => F32,
            FloatType::F64 => F64,
        }
    }
    #[inline]
    const fn mask(self) -> u64 {
        u64::MAX >> (64 - self.format().bits())
    }
}

/// The rounding written on a float-destination `cvt`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CvtRound {
    /// None written: only legal where the conversion is exact (widening, same type).
    None,
    /// `.rn .rz .rm .rp .rna`: round to the destination precision.
    Float(Rounding),
    /// `.rni .rzi .rmi .rpi`: round to an integral value (same-size float conversions).
    Int(IntRounding),
}

/// Saturation-like modifiers of a float-destination `cvt`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CvtMods {
    /// `.ftz`: flush `.f32` subnormal inputs and results.
    pub ftz: bool,
    /// `.sat`: clamp to `[0, 1]`, NaN to `+0`.
    pub sat: bool,
    /// `.relu`: negative to `+0`, NaN to canonical NaN.
    pub relu: bool,
    /// `.satfinite`: overflow and infinities to the signed largest finite value.
    pub satfinite: bool,
}

/// Round `x` to an integral value per `r` (exact in `f64`; signed zeros kept).
#[inline]
pub fn round_integral(x: f64, r: IntRounding) -> f64 {
    match r {
        IntRounding::Rni => x.round_ties_even(),
        IntRounding::Rzi => x.trunc(),
        IntRounding::Rmi => x.floor(),
        IntRounding::Rpi => x.ceil(),
    }
}

#[inline]
fn src_value(src: FloatType, a: u64, ftz: bool) -> f64 {
    let a = a & src.mask();
    let a = if ftz && src == FloatType::F32 {
        F32.flush(a)
    } else {
        a
    };
    fp::to_f64(src.format(), a)
}

/// `cvt{.ftz}{.sat}.dtype.stype` for integer `dst` and `src`: truncation (then sign/zero
/// extension) or, with `.sat`, clamping to the destination range.
#[inline]
pub fn int_to_int(dst: IntType, src: IntType, a: u64, sat: bool) -> u64 {
    let v = src.value(a);
    let v = if sat {
        v.clamp(dst.min(), dst.max())
    } else {
        v
    };
    dst.encode(v)
}

/// `cvt.irnd{.ftz}{.sat}.dtype.ftype`: float to integer. Rounds by `rnd`, clamps to the
/// destination range (saturation is the default for float → int), NaN gives 0; `.ftz` flushes an
/// `.f32` subnormal input first (so `.rpi` of `+2^-149` is 0 under `.ftz`, 1 without).
#[inline]
pub fn float_to_int(dst: IntType, src: FloatType, a: u64, rnd: IntRounding, ftz: bool) -> u64 {
    let x = round_integral(src_value(src, a, ftz), rnd);
    // Rust float -> int casts saturate and map NaN to 0, which is exactly the ISA's rule.
    let v: i128 = match dst {
        IntType::U8 => x as u8 as i128,
        IntType::U16 => x as u16 as i128,
        IntType::U32 => x as u32 as i128,
        IntType::U64 => x as u64 as i128,
        IntType::S8 => x as i8 as i128,
        IntType::S16 => x as i16 as i128,
        IntType::S32 => x as i32 as i128,
        IntType::S64 => x as i64 as i128,
    };
    dst.encode(v)
}

/// `cvt.frnd{.sat}.ftype.itype`: integer to float, rounded once by `rnd`; `.sat` clamps to
/// `[0, 1]`.
#[inline]
pub fn int_to_float(dst: FloatType, src: IntType, a: u64, rnd: Rounding, sat: bool) -> u64 {
    let v = src.value(a);
    let fmt = dst.format();
    let bits = if v == 0 {
        0
    } else {
        fp::round_pack(fmt, v < 0, v.unsigned_abs(), 0, false, rnd).bits
    };
    if sat {
        saturate_bits(fmt, bits)
    } else {
        bits
    }
}

/// `.sat` on encoded float bits: NaN and negatives to `+0`, above 1 to 1.
#[inline]
fn saturate_bits(fmt: Format, bits: u64) -> u64 {
    if fmt.is_nan(bits) || bits & fmt.sign_mask() != 0 {
        0
    } else if fp::to_f64(fmt, bits) > 1.0 {
        fp::from_f64(fmt, 1.0, Rounding::Rn)
    } else {
        bits
    }
}

/// `.relu` on encoded float bits: negatives (and `-0`) to `+0`, NaN to the canonical NaN.
#[inline]
fn relu_bits(fmt: Format, bits: u64) -> u64 {
    if fmt.is_nan(bits) {
        fmt.canonical_nan()
    } else if bits & fmt.sign_mask() != 0 {
        0
    } else {
        bits
    }
}

/// Shared float → float conversion between any two [`Format`]s.
#[inline]
fn convert_fmt(dst: Format, src: Format, a: u64, rnd: CvtRound, m: CvtMods) -> u64 {
    let a = if m.ftz && src == F32 { F32.flush(a) } else { a };
    let r = match rnd {
        CvtRound::Int(ir) => {
            // Same-size conversion: round to integral in f64 (exact), then back (exact).
            let x = round_integral(fp::to_f64(src, a), ir);
            if x.is_nan() {
                dst.canonical_nan()
            } else {
                fp::convert(F64, dst, x.to_bits(), Rounding::Rn, false)
            }
        }
        CvtRound::Float(r) => fp::convert(src, dst, a, r, m.satfinite),
        CvtRound::None => fp::convert(src, dst, a, Rounding::Rn, m.satfinite),
    };
    let r = if m.ftz && dst == F32 { F32.flush(r) } else { r };
    let r = if m.relu { relu_bits(dst, r) } else { r };
    if m.sat {
        saturate_bits(dst, r)
    } else {
        r
    }
}

/// `cvt{.frnd|.irnd}{.ftz}{.sat}{.relu}{.satfinite}.ftype.ftype`: float to float.
#[inline]
pub fn float_to_float(dst: FloatType, src: FloatType, a: u64, rnd: CvtRound, m: CvtMods) -> u64 {
    convert_fmt(dst.format(), src.format(), a & src.mask(), rnd, m)
}

/// `cvt.frnd2{.relu}{.satfinite}.f16x2.f32 d, a, b` (`bf16 = false`) and `.bf16x2.f32`: `a`
/// converted into the upper half, `b` into the lower half.
#[inline]
pub fn f32x2_to_16x2(a: f32, b: f32, bf16: bool, rnd: Rounding, m: CvtMods) -> u32 {
    let dst = if bf16 {
        FloatType::Bf16
    } else {
        FloatType::F16
    };
    let hi = float_to_float(
        dst,
        FloatType::F32,
        a.to_bits() as u64,
        CvtRound::Float(rnd),
        m,
    );
    let lo = float_to_float(
        dst,
        FloatType::F32,
        b.to_bits() as u64,
        CvtRound::Float(rnd),
        m,
    );
    (hi as u32) << 16 | lo as u32
}

/// One `.f32` to `.f16` (`bf16 == false`) or `.bf16` with stochastic rounding (`cvt.rs`):
/// `rnd` holds the random bits (13 for `.f16`, in its low 13 bits; 16 for `.bf16`). The ISA
/// rounds "towards zero or away from zero based on the carry out" of adding the random bits
/// to the mantissa bits the conversion drops: for every `.bf16` result and every normal `.f16`
/// result exactly 13 (`.f16`) or 16 (`.bf16`) bits are dropped and the random bits are added
/// to them. Where more are dropped (an `.f16` subnormal result) the random bits are added to
/// the topmost 13 of them (the ones just below the result's last bit) and the rest are
/// discarded, which keeps the rounding stochastic there too; the ISA text at hand does not
/// describe that case (ptxvm's reading). An overflow gives infinity, or the signed largest
/// finite value with `.satfinite` (also for infinite inputs); NaN gives the canonical NaN;
/// `.relu` makes negative results (and `-0`) `+0`.
#[inline]
pub fn f32_to_16_rs(a: f32, rnd: u32, bf16: bool, m: CvtMods) -> u16 {
    let (fmt, k) = if bf16 { (BF16, 16) } else { (F16, 13) };
    let r = match fp::decode(F32, a.to_bits() as u64) {
        fp::Decoded::NaN => return fmt.canonical_nan() as u16,
        fp::Decoded::Zero(_) | fp::Decoded::Inf(_) => {
            fp::convert(F32, fmt, a.to_bits() as u64, Rounding::Rz, m.satfinite)
        }
        fp::Decoded::Finite { neg, mant, exp } => {
            let emin = 1 - fmt.bias();
            let top = exp + 63 - mant.leading_zeros() as i32;
            let q = top.max(emin) - fmt.frac_bits as i32; // weight of the result's last bit
            let shift = q - exp; // bits dropped: 13 or 16 for a normal result, more below
            let (kept, dropped) = if shift <= 0 {
                (mant as u128, 0u64)
            } else if shift >= 64 {
                (0, 0) // everything below the random bits' reach
            } else if shift >= k {
                (
                    (mant >> shift) as u128,
                    (mant >> (shift - k)) & ((1 << k) - 1),
                )
            } else {
                (
                    (mant >> shift) as u128,
                    (mant & ((1 << shift) - 1)) << (k - shift),
                )
            };
            let carry = (dropped + (rnd as u64 & ((1 << k) - 1))) >> k;
            let v = kept + carry as u128;
            if v == 0 {
                if neg {
                    fmt.sign_mask()
                } else {
                    0
                }
            } else {
                let p = fp::round_pack(fmt, neg, v, shift.max(0) + exp, false, Rounding::Rn);
                if p.overflow && m.satfinite {
                    (p.bits & fmt.sign_mask()) | fmt.max_finite()
                } else {
                    p.bits
                }
            }
        }
    };
    (if m.relu { relu_bits(fmt, r) } else { r }) as u16
}

/// `cvt.rs{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b, rbits` (sm_100a family): `a` into the
/// upper half with the random bits of `rbits`' upper 16 bits, `b` into the lower half with its
/// lower 16 bits (for `.f16x2` the 13 low bits of each half), by [`f32_to_16_rs`].
#[inline]
pub fn f32x2_to_16x2_rs(a: f32, b: f32, rbits: u32, bf16: bool, m: CvtMods) -> u32 {
    let hi = f32_to_16_rs(a, rbits >> 16, bf16, m);
    let lo = f32_to_16_rs(b, rbits & 0xFFFF, bf16, m);
    (hi as u32) << 16 | lo as u32
}

/// `cvt.rna{.satfinite}.tf32.f32` and `cvt.{rn,rz}{.relu}.tf32.f32`: round to 10 fraction bits;
/// the result is an `.f32` bit pattern with the low 13 bits zero (NaN: `0x7FFF_E000`).
#[inline]
pub fn f32_to_tf32(a: f32, rnd: Rounding, m: CvtMods) -> u32 {
    let r = convert_fmt(
        TF32,
        F32,
        a.to_bits() as u64,
        CvtRound::Float(rnd),
        CvtMods {
            ftz: false,
            sat: false,
            ..m
        },
    );
    (r as u32) << 13
}

/// An 8-bit float format of `cvt` (`.e4m3x2`/`.e5m2x2` elements).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fp8 {
    /// `.e4m3`: 4 exponent bits, 3 fraction bits, no infinities, max 448.
    E4m3,
    /// `.e5m2`: 5 exponent bits, 2 fraction bits, IEEE-like, max 57344.
    E5m2,
}

impl Fp8 {
    #[inline]
    const fn format(self) -> Format {
        match self {
            Fp8::E4m3 => E4M3,
            Fp8::E5m2 => E5M2,
        }
    }
}

/// One `.f32` (or `.f16`, via `src`) to one FP8 value, `.rn.satfinite{.relu}`.
#[inline]
fn to_fp8(ty: Fp8, src: Format, a: u64, relu: bool) -> u8 {
    let m = CvtMods {
        relu,
        satfinite: true,
        ..CvtMods::default()
    };
    convert_fmt(ty.format(), src, a, CvtRound::Float(Rounding::Rn), m) as u8
}

/// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`: `a` into the upper byte, `b` into the
/// lower byte; out-of-range values (and infinities) become the signed largest finite value.
#[inline]
pub fn f32x2_to_fp8x2(ty: Fp8, a: f32, b: f32, relu: bool) -> u16 {
    let hi = to_fp8(ty, F32, a.to_bits() as u64, relu);
    let lo = to_fp8(ty, F32, b.to_bits() as u64, relu);
    (hi as u16) << 8 | lo as u16
}

/// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a`: upper `.f16` to the upper byte.
#[inline]
pub fn f16x2_to_fp8x2(ty: Fp8, a: u32, relu: bool) -> u16 {
    let hi = to_fp8(ty, F16, (a >> 16) as u64 & 0xFFFF, relu);
    let lo = to_fp8(ty, F16, a as u64 & 0xFFFF, relu);
    (hi as u16) << 8 | lo as u16
}

/// `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a`: each byte widened exactly to `.f16`, the upper
/// byte into the upper half.
#[inline]
pub fn fp8x2_to_f16x2(ty: Fp8, a: u16, relu: bool) -> u32 {
    let m = CvtMods {
        relu,
        ..CvtMods::default()
    };
    let conv =
        |x: u16| convert_fmt(F16, ty.format(), x as u64, CvtRound::Float(Rounding::Rn), m) as u32;
    conv(a >> 8) << 16 | conv(a & 0xFF)
}

/// A 4- or 6-bit float format of `cvt` (`.e2m1x2`, `.e2m3x2`, `.e3m2x2` elements): sign,
/// exponent (bias `2^(ebits-1) - 1`) and fraction, with neither infinities nor NaN: every code
/// is a finite number (subnormal when the exponent field is 0).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Small {
    /// `.e2m1`: max 6.
    E2m1,
    /// `.e2m3`: max 7.5.
    E2m3,
    /// `.e3m2`: max 28.
    E3m2,
}

impl Small {
    /// Exponent and fraction widths.
    #[inline]
    pub const fn widths(self) -> (u32, u32) {
        match self {
            Small::E2m1 => (2, 1),
            Small::E2m3 => (2, 3),
            Small::E3m2 => (3, 2),
        }
    }
    /// Width of one code in bits (with the sign).
    #[inline]
    pub const fn bits(self) -> u32 {
        let (e, m) = self.widths();
        1 + e + m
    }
}

/// Rounds `(-1)^neg * mant * 2^exp` (`mant` nonzero) to the magnitude code of `ty` per `rnd`,
/// saturating to the largest finite code on overflow (`.satfinite`, which every conversion to
/// these formats carries).
#[inline]
fn round_small(ty: Small, neg: bool, mant: u64, exp: i32, rnd: Rounding) -> u64 {
    let (ebits, mbits) = ty.widths();
    let bias = (1i32 << (ebits - 1)) - 1;
    let emin = 1 - bias;
    let top = exp + 63 - mant.leading_zeros() as i32; // 2^top <= value < 2^(top+1)
    let mut q = top.max(emin) - mbits as i32; // weight of the last fraction bit
    let shift = q - exp;
    let (mut r, rem, half) = if shift <= 0 {
        ((mant as u128) << (-shift).min(64), 0u128, 1u128)
    } else if shift > 100 {
        (0, mant as u128, 1u128 << 100)
    } else {
        let m = mant as u128;
        (m >> shift, m & ((1u128 << shift) - 1), 1u128 << (shift - 1))
    };
    let inexact = rem != 0;
    let up = match rnd {
        Rounding::Rn => rem > half || (rem == half && r & 1 == 1),
        Rounding::Rna => rem >= half,
        Rounding::Rz => false,
        Rounding::Rp => inexact && !neg,
        Rounding::Rm => inexact && neg,
    };
    r += up as u128;
    if r >> (mbits + 1) != 0 {
        r >>= 1;
        q += 1;
    }
    let max_code = (1u64 << (ebits + mbits)) - 1;
    if r >> mbits == 0 {
        return r as u64; // subnormal (or zero)
    }
    let biased = q + mbits as i32 + bias;
    if biased > (1 << ebits) - 1 {
        return max_code;
    }
    (biased as u64) << mbits | (r as u64 & ((1 << mbits) - 1))
}

/// One `.f32` to one code of `ty`, `.rn.satfinite{.relu}`: finite values rounded to nearest
/// even, overflow and infinities to the signed largest finite value; with `.relu` a negative
/// result (and `-0`) becomes `+0`. The formats have no NaN: a NaN input gives the positive
/// largest finite value (the ISA does not say; ptxvm's choice).
#[inline]
pub fn f32_to_small(ty: Small, a: f32, rnd: Rounding, relu: bool) -> u8 {
    let (ebits, mbits) = ty.widths();
    let sign = 1u64 << (ebits + mbits);
    let max_code = sign - 1;
    let code = match fp::decode(F32, a.to_bits() as u64) {
        fp::Decoded::NaN => return max_code as u8,
        fp::Decoded::Zero(neg) => {
            if neg {
                sign
            } else {
                0
            }
        }
        fp::Decoded::Inf(neg) => max_code | if neg { sign } else { 0 },
        fp::Decoded::Finite { neg, mant, exp } => {
            round_small(ty, neg, mant, exp, rnd) | if neg { sign } else { 0 }
        }
    };
    if relu && code & sign != 0 {
        0
    } else {
        code as u8
    }
}

/// `cvt.rn.satfinite{.relu}.e2m1x2.f32 d, a, b`: `a` into bits 7..4, `b` into bits 3..0.
#[inline]
pub fn f32x2_to_e2m1x2(a: f32, b: f32, relu: bool) -> u8 {
    let hi = f32_to_small(Small::E2m1, a, Rounding::Rn, relu);
    let lo = f32_to_small(Small::E2m1, b, Rounding::Rn, relu);
    hi << 4 | lo
}

/// `cvt.rn.satfinite{.relu}.{e2m3x2,e3m2x2}.f32 d, a, b`: `a` into bits 13..8, `b` into bits
/// 5..0, the two top bits of each byte zero.
#[inline]
pub fn f32x2_to_fp6x2(ty: Small, a: f32, b: f32, relu: bool) -> u16 {
    let hi = f32_to_small(ty, a, Rounding::Rn, relu);
    let lo = f32_to_small(ty, b, Rounding::Rn, relu);
    (hi as u16) << 8 | lo as u16
}

/// One code of `ty` (its low `ty.bits()` bits) widened exactly to `.f16`; with `.relu` a
/// negative value (and `-0`) becomes `+0`.
#[inline]
pub fn small_to_f16(ty: Small, code: u64, relu: bool) -> u16 {
    let (ebits, mbits) = ty.widths();
    let x = crate::mma_kind::finite_small(code & ((1 << ty.bits()) - 1), ebits, mbits);
    let h = fp::from_f64(F16, x, Rounding::Rn) as u16;
    if relu && h & 0x8000 != 0 {
        0
    } else {
        h
    }
}

/// `cvt.rn{.relu}.f16x2.e2m1x2 d, a`: bits 7..4 of `a` into the upper `.f16`, bits 3..0 into
/// the lower.
#[inline]
pub fn e2m1x2_to_f16x2(a: u8, relu: bool) -> u32 {
    let hi = small_to_f16(Small::E2m1, (a >> 4) as u64, relu) as u32;
    let lo = small_to_f16(Small::E2m1, (a & 0xF) as u64, relu) as u32;
    hi << 16 | lo
}

/// `cvt.rn{.relu}.f16x2.{e2m3x2,e3m2x2} d, a`: the low 6 bits of each byte of `a` (the upper
/// byte into the upper `.f16`).
#[inline]
pub fn fp6x2_to_f16x2(ty: Small, a: u16, relu: bool) -> u32 {
    let hi = small_to_f16(ty, (a >> 8) as u64, relu) as u32;
    let lo = small_to_f16(ty, (a & 0xFF) as u64, relu) as u32;
    hi << 16 | lo
}

/// One `.f32` (bits `a`) to `.ue8m0` (the value `2^(code - 127)`, code `0xFF` NaN), rounding
/// `.rz` (`up == false`) or `.rp` (`up`): the power of two at or below, or at or above, the
/// magnitude. The format has no sign and no zero: the magnitude is converted, and values below
/// `2^-127` (zero included) give code 0 under `.rz`. NaN gives `0xFF`; infinity and
/// a rounding past `2^127` give `0xFF` (NaN, the format has no infinity) or, with
/// `.satfinite`, `0xFE`.
#[inline]
pub fn f32_to_ue8m0(a: u32, up: bool, satfinite: bool) -> u8 {
    let over = if satfinite { 0xFE } else { 0xFF };
    let mag = a & 0x7FFF_FFFF;
    if mag > 0x7F80_0000 {
        return 0xFF;
    }
    if mag == 0x7F80_0000 {
        return over;
    }
    let (e, frac) = (mag >> 23, mag & 0x7F_FFFF);
    let code = if e == 0 {
        // subnormal or zero: frac · 2^-149 against 2^-127 = 0x40_0000 · 2^-149
        (up && frac > 0x40_0000) as u32
    } else {
        e + (up && frac != 0) as u32
    };
    if code > 0xFE {
        over
    } else {
        code as u8
    }
}

/// `cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b` (`.frnd3` = `.rz`/`.rp`): `a` into the upper
/// byte, `b` into the lower ([`f32_to_ue8m0`]).
#[inline]
pub fn f32x2_to_ue8m0x2(a: f32, b: f32, up: bool, satfinite: bool) -> u16 {
    let hi = f32_to_ue8m0(a.to_bits(), up, satfinite);
    let lo = f32_to_ue8m0(b.to_bits(), up, satfinite);
    (hi as u16) << 8 | lo as u16
}

/// `cvt.frnd3{.satfinite}.ue8m0x2.bf16x2 d, a`: each `.bf16` of `a` (an `.f32` with the low 16
/// bits zero), the upper one into the upper byte.
#[inline]
pub fn bf16x2_to_ue8m0x2(a: u32, up: bool, satfinite: bool) -> u16 {
    let hi = f32_to_ue8m0(a & 0xFFFF_0000, up, satfinite);
    let lo = f32_to_ue8m0(a << 16, up, satfinite);
    (hi as u16) << 8 | lo as u16
}

/// `cvt.rn.bf16x2.ue8m0x2 d, a`: each byte `e` of `a` becomes the `.bf16` `2^(e - 127)` (the
/// upper byte into the upper half): code 0 is the subnormal `0x0040`, `0xFF` the canonical NaN.
#[inline]
pub fn ue8m0x2_to_bf16x2(a: u16) -> u32 {
    let one = |e: u16| -> u32 {
        match e {
            0 => 0x0040,
            0xFF => 0x7FFF,
            e => (e as u32) << 7,
        }
    };
    one(a >> 8) << 16 | one(a & 0xFF)
}

/// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.bf16x2 d, a` (PTX 9.1): as [`f16x2_to_fp8x2`] from
/// two `.bf16` values.
#[inline]
pub fn bf16x2_to_fp8x2(ty: Fp8, a: u32, relu: bool) -> u16 {
    let hi = to_fp8(ty, BF16, (a >> 16) as u64 & 0xFFFF, relu);
    let lo = to_fp8(ty, BF16, a as u64 & 0xFFFF, relu);
    (hi as u16) << 8 | lo as u16
}

/// `cvt.rn{.relu}.bf16x2.{e4m3x2,e5m2x2} d, a` (PTX 9.2): each byte widened exactly to `.bf16`
/// (NaN to the canonical NaN), the upper byte into the upper half.
#[inline]
pub fn fp8x2_to_bf16x2(ty: Fp8, a: u16, relu: bool) -> u32 {
    let m = CvtMods {
        relu,
        ..CvtMods::default()
    };
    let conv = |x: u16| {
        convert_fmt(
            BF16,
            ty.format(),
            x as u64,
            CvtRound::Float(Rounding::Rn),
            m,
        ) as u32
    };
    conv(a >> 8) << 16 | conv(a & 0xFF)
}

/// `cvt.rn.satfinite{.relu}.{e2m1x2,e2m3x2,e3m2x2}.{f16x2,bf16x2} d, a` (PTX 9.1): each half of
/// `a` (the upper one into the upper element) converted as [`f32_to_small`] (every `.f16` and
/// `.bf16` value is an `.f32` value); the result is packed as from two `.f32` operands.
#[inline]
pub fn half2_to_small2(ty: Small, a: u32, bf16: bool, relu: bool) -> u16 {
    let fmt = if bf16 { BF16 } else { F16 };
    let one = |h: u32| {
        let x = fp::to_f64(fmt, h as u64 & 0xFFFF) as f32;
        f32_to_small(ty, x, Rounding::Rn, relu) as u16
    };
    let (hi, lo) = (one(a >> 16), one(a & 0xFFFF));
    if ty == Small::E2m1 {
        hi << 4 | lo
    } else {
        hi << 8 | lo
    }
}

/// `cvt.rn{.relu}.bf16x2.{e2m1x2,e2m3x2,e3m2x2} d, a` (PTX 9.1): as [`e2m1x2_to_f16x2`] and
/// [`fp6x2_to_f16x2`], widening exactly to `.bf16`.
#[inline]
pub fn small2_to_bf16x2(ty: Small, a: u16, relu: bool) -> u32 {
    let (ebits, mbits) = ty.widths();
    let (hi, lo) = if ty == Small::E2m1 {
        ((a >> 4) & 0xF, a & 0xF)
    } else {
        (a >> 8, a & 0xFF)
    };
    let one = |code: u16| -> u32 {
        let x = crate::mma_kind::finite_small(code as u64 & ((1 << ty.bits()) - 1), ebits, mbits);
        let h = fp::from_f64(BF16, x, Rounding::Rn) as u32;
        if relu && h & 0x8000 != 0 {
            0
        } else {
            h
        }
    };
    one(hi) << 16 | one(lo)
}

/// The narrow type of `cvt.pack.sat`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PackType {
    /// `.u2`
    U2,
    /// `.s2`
    S2,
    /// `.u4`
    U4,
    /// `.s4`
    S4,
    /// `.u8`
    U8,
    /// `.s8`
    S8,
    /// `.u16`
    U16,
    /// `.s16`
    S16,
}

impl PackType {
    #[inline]
    const fn bits(self) -> u32 {
        match self {
            PackType::U2 | PackType::S2 => 2,
            PackType::U4 | PackType::S4 => 4,
            PackType::U8 | PackType::S8 => 8,
            PackType::U16 | PackType::S16 => 16,
        }
    }
    #[inline]
    const fn range(self) -> (i32, i32) {
        let n = self.bits();
        match self {
            PackType::U2 | PackType::U4 | PackType::U8 | PackType::U16 => (0, (1 << n) - 1),
            _ => (-(1 << (n - 1)), (1 << (n - 1)) - 1),
        }
    }
}

/// `cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}`: clamp `a` and `b` to the narrow type's
/// range, put `b` in bits `0..n`, `a` in bits `n..2n`, and (for the sub-16-bit types) the low
/// bits of `c` above them. For `.u16/.s16` pass `c = 0`.
#[inline]
pub fn cvt_pack_sat(ty: PackType, a: i32, b: i32, c: u32) -> u32 {
    let n = ty.bits();
    let (lo, hi) = ty.range();
    let mask = (1u32 << n) - 1;
    let ta = a.clamp(lo, hi) as u32 & mask;
    let tb = b.clamp(lo, hi) as u32 & mask;
    let rest = if n == 16 { 0 } else { c << (2 * n) };
    rest | ta << n | tb
}

#[cfg(test)]
mod tests {
    use super::*;
    use FloatType as Ft;
    use IntType as It;

    fn f2i(dst: IntType, x: f32, r: IntRounding) -> i64 {
        float_to_int(dst, Ft::F32, x.to_bits() as u64, r, false) as i64
    }

    #[test]
    fn float_to_int_rounding() {
        use IntRounding::*;
        assert_eq!(f2i(It::S32, 2.5, Rni), 2);
        assert_eq!(f2i(It::S32, -2.5, Rni), -2);
        assert_eq!(f2i(It::S32, 3.5, Rni), 4);
        assert_eq!(f2i(It::S32, 2.5, Rzi), 2);
        assert_eq!(f2i(It::S32, -2.5, Rzi), -2);
        assert_eq!(f2i(It::S32, -2.5, Rmi), -3);
        assert_eq!(f2i(It::S32, 2.1, Rpi), 3);
        assert_eq!(f2i(It::S32, -2.9, Rpi), -2);
        assert_eq!(f2i(It::S32, f32::NAN, Rzi), 0);
        assert_eq!(f2i(It::U64, f32::NAN, Rni), 0);
        assert_eq!(f2i(It::S32, 3e9, Rzi), 0x7FFF_FFFF);
        assert_eq!(f2i(It::S32, -3e9, Rzi), -0x8000_0000);
        assert_eq!(f2i(It::S32, f32::INFINITY, Rni), 0x7FFF_FFFF);
        assert_eq!(f2i(It::U32, -1.0, Rni), 0);
        assert_eq!(f2i(It::U32, 5e9, Rni) as u64, 0xFFFF_FFFF);
        assert_eq!(f2i(It::U8, 300.0, Rni), 255);
        assert_eq!(f2i(It::S8, -300.0, Rni), -128);
        assert_eq!(f2i(It::S8, 127.5, Rni), 127); // 128 saturates to 127
        assert_eq!(f2i(It::S16, -0.5, Rni), 0);
        assert_eq!(f2i(It::U16, 65535.4, Rni), 65535);
        assert_eq!(f2i(It::S64, 9.3e18, Rzi), i64::MAX);
        assert_eq!(
            float_to_int(It::U64, Ft::F32, 1.9e19f32.to_bits() as u64, Rzi, false),
            u64::MAX
        );
        // Negative s8 results are sign-extended to 64 bits.
        assert_eq!(
            float_to_int(It::S8, Ft::F32, (-1.0f32).to_bits() as u64, Rni, false),
            u64::MAX
        );
        assert_eq!(
            float_to_int(It::U8, Ft::F32, 200f32.to_bits() as u64, Rni, false),
            200
        );
        // .ftz and subnormals under directed rounding.
        let sub = f32::from_bits(1).to_bits() as u64;
        assert_eq!(float_to_int(It::S32, Ft::F32, sub, Rpi, false), 1);
        assert_eq!(float_to_int(It::S32, Ft::F32, sub, Rpi, true), 0);
        // f64, f16 and bf16 sources.
        assert_eq!(
            float_to_int(It::S32, Ft::F64, (-7.5f64).to_bits(), Rni, false) as i64,
            -8
        );
        assert_eq!(
            float_to_int(It::S32, Ft::F64, 2147483647.5f64.to_bits(), Rzi, false) as i64,
            2147483647
        );
        assert_eq!(
            float_to_int(It::S32, Ft::F64, 2147483648.0f64.to_bits(), Rzi, false) as i64,
            2147483647
        );
        assert_eq!(float_to_int(It::U32, Ft::F16, 0x4500, Rni, false), 5); // f16 5.0
        assert_eq!(
            float_to_int(It::S32, Ft::F16, 0xFC00, Rni, false) as i64,
            i32::MIN as i64
        ); // -inf
        assert_eq!(
            float_to_int(It::S8, Ft::Bf16, 0xC2F6, Rni, false) as i64,
            -123
        ); // bf16 -123
        assert_eq!(float_to_int(It::S32, Ft::Bf16, 0x7FC0, Rni, false), 0); // NaN
    }

    #[test]
    fn int_to_int_truncate_or_saturate() {
        assert_eq!(int_to_int(It::U8, It::S32, 300, false), 44);
        assert_eq!(int_to_int(It::U8, It::S32, 300, true), 255);
        assert_eq!(int_to_int(It::U8, It::S32, (-5i32) as u32 as u64, true), 0);
        assert_eq!(
            int_to_int(It::U8, It::S32, (-5i32) as u32 as u64, false),
            251
        );
        assert_eq!(int_to_int(It::S8, It::S32, 200, false), (-56i64) as u64);
        assert_eq!(int_to_int(It::S8, It::S32, 200, true), 127);
        assert_eq!(int_to_int(It::S32, It::S8, 0x80, false), (-128i64) as u64);
        assert_eq!(int_to_int(It::U32, It::S8, 0x80, false), 0xFFFF_FF80);
        assert_eq!(int_to_int(It::U32, It::S8, 0x80, true), 0);
        assert_eq!(
            int_to_int(It::S64, It::U32, 0xFFFF_FFFF, false),
            0xFFFF_FFFF
        );
        assert_eq!(int_to_int(It::S32, It::U32, 0xFFFF_FFFF, true), 0x7FFF_FFFF);
        assert_eq!(int_to_int(It::U64, It::S64, u64::MAX, true), 0);
        assert_eq!(
            int_to_int(It::S64, It::U64, u64::MAX, true),
            i64::MAX as u64
        );
        assert_eq!(int_to_int(It::U16, It::U64, 0x1_2345, false), 0x2345);
        assert_eq!(
            int_to_int(It::S16, It::U64, 0x1_8000, false),
            (-32768i64) as u64
        );
        // Only the source's low bits count.
        assert_eq!(int_to_int(It::U32, It::U8, 0xFFFF_FF01, false), 1);
    }

    /// `.sat` clamps below to the signed minimum `-2^(n-1)` of the destination.
    #[test]
    fn int_to_int_saturates_to_signed_minimum() {
        let neg = |v: i64| v as u64;
        assert_eq!(int_to_int(It::S8, It::S32, neg(-1000), true), neg(-128));
        assert_eq!(int_to_int(It::S8, It::S32, neg(-129), true), neg(-128));
        assert_eq!(int_to_int(It::S8, It::S32, neg(-128), true), neg(-128));
        assert_eq!(int_to_int(It::S16, It::S32, neg(-40000), true), neg(-32768));
        assert_eq!(
            int_to_int(It::S32, It::S64, neg(i64::MIN), true),
            neg(i32::MIN as i64)
        );
        assert_eq!(int_to_int(It::S64, It::S64, neg(-5), true), neg(-5));
        assert_eq!(It::S8.min(), -128);
        assert_eq!(It::S64.min(), i64::MIN as i128);
        assert_eq!(It::U16.min(), 0);
    }

    #[test]
    fn int_to_float_rounding() {
        use Rounding::*;
        // 2^24 + 1 is a tie in f32.
        let v = (1u64 << 24) + 1;
        assert_eq!(
            int_to_float(Ft::F32, It::U32, v, Rn, false),
            (16777216.0f32).to_bits() as u64
        );
        assert_eq!(
            int_to_float(Ft::F32, It::U32, v, Rp, false),
            (16777218.0f32).to_bits() as u64
        );
        assert_eq!(
            int_to_float(Ft::F32, It::U32, v + 2, Rn, false),
            (16777220.0f32).to_bits() as u64
        );
        let neg = (-(1i64 << 24) - 1) as u64;
        assert_eq!(
            int_to_float(Ft::F32, It::S64, neg, Rm, false),
            (-16777218.0f32).to_bits() as u64
        );
        assert_eq!(
            int_to_float(Ft::F32, It::S64, neg, Rz, false),
            (-16777216.0f32).to_bits() as u64
        );
        assert_eq!(
            int_to_float(Ft::F64, It::U64, u64::MAX, Rn, false),
            2f64.powi(64).to_bits()
        );
        assert_eq!(
            int_to_float(Ft::F64, It::U64, u64::MAX, Rz, false),
            (2f64.powi(64) - 2048.0).to_bits()
        );
        assert_eq!(
            int_to_float(Ft::F64, It::S64, i64::MIN as u64, Rn, false),
            (-(2f64.powi(63))).to_bits()
        );
        assert_eq!(int_to_float(Ft::F16, It::U32, 65520, Rn, false), 0x7C00);
        assert_eq!(int_to_float(Ft::F16, It::U32, 65520, Rz, false), 0x7BFF);
        assert_eq!(
            int_to_float(Ft::F16, It::S32, (-3i32) as u32 as u64, Rn, false),
            0xC200
        );
        assert_eq!(int_to_float(Ft::Bf16, It::S32, 257, Rn, false), 0x4380); // 256
        assert_eq!(int_to_float(Ft::Bf16, It::S32, 257, Rp, false), 0x4381); // 258
        assert_eq!(
            int_to_float(Ft::F32, It::S32, 5, Rn, true),
            1.0f32.to_bits() as u64
        );
        assert_eq!(
            int_to_float(Ft::F32, It::S32, (-5i32) as u32 as u64, Rn, true),
            0
        );
        assert_eq!(int_to_float(Ft::F32, It::S32, 0, Rn, false), 0);
        assert_eq!(
            int_to_float(Ft::F32, It::S8, 0xFF, Rn, false),
            (-1.0f32).to_bits() as u64
        );
    }

    #[test]
    fn int_to_float_matches_host() {
        // Host `as f32` / `as f64` round to nearest even: an independent model of `.rn`.
        let mut x: u64 = 0xDEAD_BEEF_CAFE_F00D;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let y = x >> (x & 63);
            assert_eq!(
                int_to_float(Ft::F32, It::U64, y, Rounding::Rn, false),
                (y as f32).to_bits() as u64
            );
            assert_eq!(
                int_to_float(Ft::F64, It::S64, y, Rounding::Rn, false),
                ((y as i64) as f64).to_bits()
            );
            assert_eq!(
                int_to_float(Ft::F32, It::S32, y, Rounding::Rn, false),
                ((y as i32) as f32).to_bits() as u64
            );
        }
    }

    fn ff(dst: FloatType, src: FloatType, a: u64, r: Rounding) -> u64 {
        float_to_float(dst, src, a, CvtRound::Float(r), CvtMods::default())
    }

    #[test]
    fn f32_to_f16() {
        use Rounding::*;
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(ff(Ft::F16, Ft::F32, f(1.0), Rn), 0x3C00);
        // 1 + 2^-11 is a tie -> even (1.0); 1 + 3*2^-11 -> 1 + 2^-9.
        assert_eq!(ff(Ft::F16, Ft::F32, f(1.0 + 2f32.powi(-11)), Rn), 0x3C00);
        assert_eq!(
            ff(Ft::F16, Ft::F32, f(1.0 + 3.0 * 2f32.powi(-11)), Rn),
            0x3C02
        );
        assert_eq!(ff(Ft::F16, Ft::F32, f(1.0 + 2f32.powi(-11)), Rp), 0x3C01);
        assert_eq!(ff(Ft::F16, Ft::F32, f(-1.0 - 2f32.powi(-11)), Rm), 0xBC01);
        assert_eq!(ff(Ft::F16, Ft::F32, f(-1.0 - 2f32.powi(-11)), Rz), 0xBC00);
        // Overflow to inf, or max finite with .satfinite or .rz.
        assert_eq!(ff(Ft::F16, Ft::F32, f(70000.0), Rn), 0x7C00);
        assert_eq!(ff(Ft::F16, Ft::F32, f(70000.0), Rz), 0x7BFF);
        let sf = CvtMods {
            satfinite: true,
            ..CvtMods::default()
        };
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(70000.0), CvtRound::Float(Rn), sf),
            0x7BFF
        );
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(-1e30), CvtRound::Float(Rn), sf),
            0xFBFF
        );
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(f32::INFINITY), CvtRound::Float(Rn), sf),
            0x7BFF
        );
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(f32::NAN), CvtRound::Float(Rn), sf),
            0x7FFF
        );
        // Subnormal f16 results; tiny values round to zero or min subnormal.
        assert_eq!(ff(Ft::F16, Ft::F32, f(2f32.powi(-24)), Rn), 0x0001);
        assert_eq!(ff(Ft::F16, Ft::F32, f(2f32.powi(-25)), Rn), 0x0000);
        assert_eq!(ff(Ft::F16, Ft::F32, f(2f32.powi(-25)), Rp), 0x0001);
        assert_eq!(ff(Ft::F16, Ft::F32, f(1.5 * 2f32.powi(-25)), Rn), 0x0001);
        // .relu
        let relu = CvtMods {
            relu: true,
            ..CvtMods::default()
        };
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(-3.0), CvtRound::Float(Rn), relu),
            0
        );
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(3.0), CvtRound::Float(Rn), relu),
            0x4200
        );
        assert_eq!(
            float_to_float(Ft::F16, Ft::F32, f(f32::NAN), CvtRound::Float(Rn), relu),
            0x7FFF
        );
        // f16 -> f32 is exact.
        assert_eq!(
            float_to_float(Ft::F32, Ft::F16, 0x0001, CvtRound::None, CvtMods::default()),
            2f32.powi(-24).to_bits() as u64
        );
        assert_eq!(
            float_to_float(Ft::F32, Ft::F16, 0xFC00, CvtRound::None, CvtMods::default()),
            f(f32::NEG_INFINITY)
        );
    }

    #[test]
    fn f32_to_f16_matches_apfloat() {
        use rustc_apfloat::ieee::{Half, Single};
        use rustc_apfloat::{Float, FloatConvert};
        let mut x: u64 = 0x1357_9BDF_2468_ACE0;
        for i in 0..30000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bits = x as u32;
            if i % 2 == 0 {
                // Exponents around the f16 range.
                bits = (bits & 0x807F_FFFF) | ((((x >> 32) % 50) as u32 + 127 - 30) << 23);
            }
            for r in [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp] {
                let mut loses = false;
                let want: Half = Single::from_bits(bits as u128)
                    .convert_r(r.apfloat(), &mut loses)
                    .value;
                let want = if want.is_nan() {
                    0x7FFF
                } else {
                    want.to_bits() as u64
                };
                assert_eq!(
                    ff(Ft::F16, Ft::F32, bits as u64, r),
                    want,
                    "{bits:#x} {r:?}"
                );
            }
        }
    }

    #[test]
    fn bf16_conversions() {
        use Rounding::*;
        let f = |x: f32| x.to_bits() as u64;
        // bf16 keeps the top 16 bits of f32; 0x3F80_8000 is a tie between 0x3F80 and 0x3F81.
        assert_eq!(ff(Ft::Bf16, Ft::F32, 0x3F80_8000, Rn), 0x3F80);
        assert_eq!(ff(Ft::Bf16, Ft::F32, 0x3F81_8000, Rn), 0x3F82);
        assert_eq!(ff(Ft::Bf16, Ft::F32, 0x3F80_8001, Rn), 0x3F81);
        assert_eq!(ff(Ft::Bf16, Ft::F32, 0x3F80_FFFF, Rz), 0x3F80);
        assert_eq!(ff(Ft::Bf16, Ft::F32, 0x3F80_0001, Rp), 0x3F81);
        assert_eq!(ff(Ft::Bf16, Ft::F32, 0xBF80_0001, Rm), 0xBF81);
        assert_eq!(ff(Ft::Bf16, Ft::F32, f(f32::MAX), Rn), 0x7F80); // rounds up to inf
        assert_eq!(ff(Ft::Bf16, Ft::F32, f(f32::MAX), Rz), 0x7F7F);
        let sf = CvtMods {
            satfinite: true,
            ..CvtMods::default()
        };
        assert_eq!(
            float_to_float(Ft::Bf16, Ft::F32, f(f32::MAX), CvtRound::Float(Rn), sf),
            0x7F7F
        );
        // f64 -> bf16 rounds once (no double rounding through f32):
        // 1 + 2^-8 + 2^-40 is just above the tie -> 0x3F81; via f32 it would tie to 0x3F80.
        let d = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(ff(Ft::Bf16, Ft::F64, d.to_bits(), Rn), 0x3F81);
        assert_eq!(ff(Ft::Bf16, Ft::F16, 0x3C00, Rn), 0x3F80);
        assert_eq!(ff(Ft::F16, Ft::Bf16, 0x4780, Rn), 0x7C00); // 65536 -> inf in f16
        assert_eq!(ff(Ft::F16, Ft::Bf16, 0x4780, Rz), 0x7BFF);
        // bf16 -> bf16 with integer rounding: 2.5 (0x4020) -> 2.0 under .rni.
        assert_eq!(
            float_to_float(
                Ft::Bf16,
                Ft::Bf16,
                0x4020,
                CvtRound::Int(IntRounding::Rni),
                CvtMods::default()
            ),
            0x4000
        );
    }

    #[test]
    fn f64_to_f32_and_integral() {
        use Rounding::*;
        let d = 1.0 + 2f64.powi(-24); // tie in f32
        assert_eq!(
            ff(Ft::F32, Ft::F64, d.to_bits(), Rn),
            1.0f32.to_bits() as u64
        );
        assert_eq!(
            ff(Ft::F32, Ft::F64, d.to_bits(), Rp),
            (1.0f32 + f32::EPSILON).to_bits() as u64
        );
        assert_eq!(
            ff(Ft::F32, Ft::F64, (-d).to_bits(), Rm),
            (-1.0f32 - f32::EPSILON).to_bits() as u64
        );
        assert_eq!(
            ff(Ft::F32, Ft::F64, 1e300f64.to_bits(), Rn),
            f32::INFINITY.to_bits() as u64
        );
        assert_eq!(
            ff(Ft::F32, Ft::F64, 1e300f64.to_bits(), Rz),
            f32::MAX.to_bits() as u64
        );
        assert_eq!(
            ff(Ft::F32, Ft::F64, (-1e300f64).to_bits(), Rp),
            (-f32::MAX).to_bits() as u64
        );
        assert_eq!(ff(Ft::F32, Ft::F64, 1e-50f64.to_bits(), Rn), 0);
        assert_eq!(ff(Ft::F32, Ft::F64, 1e-50f64.to_bits(), Rp), 1);
        // .ftz on an f32 result flushes a subnormal.
        let ftz = CvtMods {
            ftz: true,
            ..CvtMods::default()
        };
        assert_eq!(
            float_to_float(
                Ft::F32,
                Ft::F64,
                1e-40f64.to_bits(),
                CvtRound::Float(Rn),
                ftz
            ),
            0
        );
        assert_eq!(
            float_to_float(
                Ft::F32,
                Ft::F64,
                (-1e-40f64).to_bits(),
                CvtRound::Float(Rn),
                ftz
            ),
            0x8000_0000
        );
        // Widening f32 -> f64 is exact.
        assert_eq!(
            float_to_float(
                Ft::F64,
                Ft::F32,
                0x0000_0001,
                CvtRound::None,
                CvtMods::default()
            ),
            2f64.powi(-149).to_bits()
        );
        // cvt.rni.f32.f32 keeps the value a float; the sign of zero survives.
        let ri = |x: f32, r| {
            f32::from_bits(float_to_float(
                Ft::F32,
                Ft::F32,
                x.to_bits() as u64,
                CvtRound::Int(r),
                CvtMods::default(),
            ) as u32)
        };
        assert_eq!(ri(2.5, IntRounding::Rni), 2.0);
        assert_eq!(ri(-0.4, IntRounding::Rni).to_bits(), (-0.0f32).to_bits());
        assert_eq!(ri(-2.5, IntRounding::Rmi), -3.0);
        assert_eq!(ri(2.1, IntRounding::Rpi), 3.0);
        assert_eq!(ri(-2.9, IntRounding::Rzi), -2.0);
        assert_eq!(ri(1e30, IntRounding::Rni), 1e30);
        assert!(ri(f32::NAN, IntRounding::Rni).is_nan());
        // .sat on floats
        let sat = CvtMods {
            sat: true,
            ..CvtMods::default()
        };
        assert_eq!(
            float_to_float(Ft::F32, Ft::F64, 2.0f64.to_bits(), CvtRound::Float(Rn), sat),
            1.0f32.to_bits() as u64
        );
        assert_eq!(
            float_to_float(
                Ft::F32,
                Ft::F64,
                f64::NAN.to_bits(),
                CvtRound::Float(Rn),
                sat
            ),
            0
        );
        assert_eq!(
            float_to_float(
                Ft::F32,
                Ft::F32,
                (-0.5f32).to_bits() as u64,
                CvtRound::None,
                sat
            ),
            0
        );
        assert_eq!(
            float_to_float(Ft::F64, Ft::F64, 0.25f64.to_bits(), CvtRound::None, sat),
            0.25f64.to_bits()
        );
    }

    /// `.ftz` "applies only to single precision (.f32) inputs and results": an `.f16` subnormal
    /// source is converted exactly, an `.f32` subnormal source is flushed even into `.f64`.
    #[test]
    fn ftz_applies_only_to_f32_operands() {
        let ftz = CvtMods {
            ftz: true,
            ..CvtMods::default()
        };
        // f16 0x0001 = 2^-24, a normal f32: biased exponent 127 - 24 = 103 = 0x67.
        assert_eq!(
            float_to_float(Ft::F32, Ft::F16, 0x0001, CvtRound::None, ftz),
            0x3380_0000
        );
        // f16 1.0 -> f32 1.0.
        assert_eq!(
            float_to_float(Ft::F32, Ft::F16, 0x3C00, CvtRound::None, ftz),
            0x3F80_0000
        );
        // f32 2^-149 (and its negation) -> f64 zero of the same sign under .ftz, exact without.
        assert_eq!(
            float_to_float(Ft::F64, Ft::F32, 0x0000_0001, CvtRound::None, ftz),
            0
        );
        assert_eq!(
            float_to_float(Ft::F64, Ft::F32, 0x8000_0001, CvtRound::None, ftz),
            0x8000_0000_0000_0000
        );
        assert_eq!(
            float_to_float(Ft::F64, Ft::F32, 1, CvtRound::None, CvtMods::default()),
            2f64.powi(-149).to_bits()
        );
    }

    #[test]
    fn packed_16x2() {
        let m = CvtMods::default();
        // a goes to the upper half, b to the lower half.
        assert_eq!(f32x2_to_16x2(1.0, 2.0, false, Rounding::Rn, m), 0x3C00_4000);
        assert_eq!(f32x2_to_16x2(1.0, 2.0, true, Rounding::Rn, m), 0x3F80_4000);
        assert_eq!(
            f32x2_to_16x2(-1.0, 1e6, false, Rounding::Rz, m),
            0xBC00_7BFF
        );
        let relu = CvtMods { relu: true, ..m };
        assert_eq!(
            f32x2_to_16x2(-1.0, 1.0, true, Rounding::Rn, relu),
            0x0000_3F80
        );
    }

    #[test]
    fn tf32() {
        let m = CvtMods::default();
        // 1 + 2^-11 is a tie at 10 fraction bits: .rna rounds away, .rn to even.
        let x = 1.0 + 2f32.powi(-11);
        assert_eq!(f32_to_tf32(x, Rounding::Rna, m), 0x3F80_2000);
        assert_eq!(f32_to_tf32(x, Rounding::Rn, m), 0x3F80_0000);
        assert_eq!(f32_to_tf32(x, Rounding::Rz, m), 0x3F80_0000);
        assert_eq!(f32_to_tf32(-x, Rounding::Rna, m), 0xBF80_2000);
        assert_eq!(f32_to_tf32(f32::MAX, Rounding::Rna, m), 0x7F80_0000);
        let sf = CvtMods {
            satfinite: true,
            ..m
        };
        assert_eq!(f32_to_tf32(f32::MAX, Rounding::Rna, sf), 0x7F7F_E000);
        assert_eq!(f32_to_tf32(f32::NAN, Rounding::Rna, sf), 0x7FFF_E000);
        let relu = CvtMods { relu: true, ..m };
        assert_eq!(f32_to_tf32(-2.0, Rounding::Rn, relu), 0);
        assert_eq!(f32_to_tf32(1.5, Rounding::Rz, relu), 1.5f32.to_bits());
        // The `.tf32` forms have no `.ftz` or `.sat` (and `.sat` "applies to .f16, .f32, and .f64
        // types"): such flags are ignored, so 2.0 is not clamped to 1 and the subnormal
        // 2^-135 (f32 0x0000_4000, exact in tf32) is not flushed.
        let ftz_sat = CvtMods {
            ftz: true,
            sat: true,
            ..m
        };
        assert_eq!(f32_to_tf32(2.0, Rounding::Rn, ftz_sat), 0x4000_0000);
        let sub = f32::from_bits(0x0000_4000);
        assert_eq!(f32_to_tf32(sub, Rounding::Rz, ftz_sat), 0x0000_4000);
    }

    #[test]
    fn fp8() {
        // e4m3: 448 max, no inf; 1.0 = 0x38; 2^-9 min subnormal = 0x01.
        assert_eq!(f32x2_to_fp8x2(Fp8::E4m3, 1.0, 448.0, false), 0x387E);
        assert_eq!(f32x2_to_fp8x2(Fp8::E4m3, 1000.0, -1000.0, false), 0x7EFE);
        assert_eq!(
            f32x2_to_fp8x2(Fp8::E4m3, f32::INFINITY, f32::NAN, false),
            0x7E7F
        );
        assert_eq!(
            f32x2_to_fp8x2(Fp8::E4m3, 2f32.powi(-9), 2f32.powi(-11), false),
            0x0100
        );
        assert_eq!(f32x2_to_fp8x2(Fp8::E4m3, 464.0, 465.0, false), 0x7E7E); // tie to even, then sat
                                                                            // 1 + 1/16 ties to 1.0 (fraction 000); 1 + 3/16 ties between 001 and 010 -> 1.25 (0x3A).
        assert_eq!(f32x2_to_fp8x2(Fp8::E4m3, 1.0625, 1.1875, false), 0x383A);
        assert_eq!(f32x2_to_fp8x2(Fp8::E4m3, -1.0, 1.0, true), 0x0038);
        // e5m2: max 57344 (0x7B), inf 0x7C; 1.0 = 0x3C.
        assert_eq!(f32x2_to_fp8x2(Fp8::E5m2, 1.0, 57344.0, false), 0x3C7B);
        assert_eq!(
            f32x2_to_fp8x2(Fp8::E5m2, 1e9, f32::NEG_INFINITY, false),
            0x7BFB
        );
        assert_eq!(f32x2_to_fp8x2(Fp8::E5m2, 1.125, 1.375, false), 0x3C3E); // ties to even
        assert_eq!(
            f32x2_to_fp8x2(Fp8::E5m2, f32::NAN, 2f32.powi(-16), false),
            0x7F01
        );
        // From f16x2: upper half to upper byte.
        assert_eq!(f16x2_to_fp8x2(Fp8::E4m3, 0x3C00_4000, false), 0x3840);
        assert_eq!(f16x2_to_fp8x2(Fp8::E5m2, 0x3C00_4000, false), 0x3C40);
        assert_eq!(f16x2_to_fp8x2(Fp8::E5m2, 0x7C00_0000, false), 0x7B00);
        // Back to f16x2, exactly.
        assert_eq!(fp8x2_to_f16x2(Fp8::E4m3, 0x387E, false), 0x3C00_5F00); // 1.0, 448
        assert_eq!(fp8x2_to_f16x2(Fp8::E4m3, 0x7F01, false), 0x7FFF_1800); // NaN, 2^-9
        assert_eq!(fp8x2_to_f16x2(Fp8::E5m2, 0x7C3C, false), 0x7C00_3C00);
        assert_eq!(fp8x2_to_f16x2(Fp8::E5m2, 0xBC3C, true), 0x0000_3C00);
        // Every e5m2 value is the top byte of the same f16.
        for b in 0..=255u16 {
            if !E5M2.is_nan(b as u64) {
                assert_eq!(fp8x2_to_f16x2(Fp8::E5m2, b, false), (b as u32) << 8);
            }
        }
    }

    #[test]
    fn pack_sat() {
        assert_eq!(cvt_pack_sat(PackType::S16, 40000, -40000, 0), 0x7FFF_8000);
        assert_eq!(cvt_pack_sat(PackType::U16, -1, 70000, 0), 0x0000_FFFF);
        assert_eq!(cvt_pack_sat(PackType::U8, 300, 5, 0), 0xFF05);
        // The ISA's chaining example: r7 = {r5, r6, r8, r9} bytes, high to low.
        let r4 = cvt_pack_sat(PackType::U8, 1, 2, 0);
        assert_eq!(cvt_pack_sat(PackType::U8, 3, 4, r4), 0x0102_0304);
        assert_eq!(cvt_pack_sat(PackType::S8, -200, 100, 0), 0x8064);
        assert_eq!(cvt_pack_sat(PackType::S4, -9, 8, 0xF), 0xF87);
        assert_eq!(cvt_pack_sat(PackType::U4, 3, 20, 0), 0x3F);
        assert_eq!(
            cvt_pack_sat(PackType::S2, 1, -1, 0xABC),
            (0xABC << 4) | 0b0111
        );
        assert_eq!(cvt_pack_sat(PackType::U2, 7, -7, 0), 0b1100);
    }

    #[test]
    fn fp4_fp6_round_to_nearest_even_and_saturate() {
        // e2m1 values 0 0.5 1 1.5 2 3 4 6: 0.25 ties to 0, 0.75 to 1.0 (code 2), 5 to 4 (6)
        assert_eq!(f32x2_to_e2m1x2(0.25, 0.75, false), 0x02);
        assert_eq!(f32x2_to_e2m1x2(5.0, -7.0, false), 0x6F);
        assert_eq!(f32x2_to_e2m1x2(f32::INFINITY, -0.0, false), 0x78);
        assert_eq!(f32x2_to_e2m1x2(-1.0, 1.25, true), 0x02);
        // e2m3: max 7.5 (0x1F), smallest subnormal 0.125; e3m2: max 28 (0x1F), 26 ties to 24
        assert_eq!(f32x2_to_fp6x2(Small::E2m3, 7.75, 0.0625, false), 0x1F00);
        assert_eq!(f32x2_to_fp6x2(Small::E3m2, 26.0, -1.0, false), 0x1E2C);
        assert_eq!(f32x2_to_fp6x2(Small::E3m2, 26.0, -1.0, true), 0x1E00);
        // back to f16: e2m1 0x7 = 6 (0x4600), 0xF = -6; e3m2 0x1F = 28 (0x4F00)
        assert_eq!(e2m1x2_to_f16x2(0x7F, false), 0x4600_C600);
        assert_eq!(e2m1x2_to_f16x2(0x7F, true), 0x4600_0000);
        assert_eq!(fp6x2_to_f16x2(Small::E3m2, 0x1F01, false), 0x4F00_2C00);
        assert_eq!(fp6x2_to_f16x2(Small::E2m3, 0x0001, false), 0x0000_3000);
    }

    #[test]
    fn ue8m0_powers_of_two() {
        assert_eq!(f32x2_to_ue8m0x2(1.0, 1.5, false, false), 0x7F7F);
        assert_eq!(f32x2_to_ue8m0x2(1.0, 1.5, true, false), 0x7F80);
        // 2^-127 = 0x0040_0000 as an f32 subnormal; a little more rounds up to code 1 under .rp
        assert_eq!(f32_to_ue8m0(0x0040_0000, true, false), 0);
        assert_eq!(f32_to_ue8m0(0x0040_0001, true, false), 1);
        assert_eq!(f32_to_ue8m0(0, false, false), 0);
        assert_eq!(f32_to_ue8m0(0x7F40_0000, true, false), 0xFF);
        assert_eq!(f32_to_ue8m0(0x7F40_0000, true, true), 0xFE);
        assert_eq!(f32_to_ue8m0(0x7F80_0000, false, true), 0xFE);
        assert_eq!(f32_to_ue8m0(0x7FC0_0000, false, true), 0xFF);
        assert_eq!(bf16x2_to_ue8m0x2(0x3FC0_0040, true, false), 0x8000);
        assert_eq!(ue8m0x2_to_bf16x2(0x7F00), 0x3F80_0040);
        assert_eq!(ue8m0x2_to_bf16x2(0xFF80), 0x7FFF_4000);
    }

    #[test]
    fn stochastic_rounding_carries_out_of_the_dropped_bits() {
        let m = CvtMods::default();
        let f = f32::from_bits;
        // bf16: 1 + 2^-8 + 2^-9 drops 0xC000; random 0x3FFF does not carry, 0x4000 does
        assert_eq!(f32_to_16_rs(f(0x3F80_C000), 0x3FFF, true, m), 0x3F80);
        assert_eq!(f32_to_16_rs(f(0x3F80_C000), 0x4000, true, m), 0x3F81);
        // away from zero for a negative value; MAX carries into infinity, or MAX with .satfinite
        assert_eq!(f32_to_16_rs(f(0xBFC0_0001), 0xFFFF, true, m), 0xBFC1);
        assert_eq!(f32_to_16_rs(f(0x7F7F_FFFF), 1, true, m), 0x7F80);
        let sf = CvtMods {
            satfinite: true,
            ..m
        };
        assert_eq!(f32_to_16_rs(f(0x7F7F_FFFF), 1, true, sf), 0x7F7F);
        // f16: 1 + 2^-11 + 2^-12 drops 0x1800 of 13 bits; bits 13..15 of the random half unused
        assert_eq!(f32_to_16_rs(f(0x3F80_1800), 0x07FF, false, m), 0x3C00);
        assert_eq!(f32_to_16_rs(f(0x3F80_1800), 0xE800, false, m), 0x3C01);
        assert_eq!(
            f32x2_to_16x2_rs(f(0x3F80_1800), -3.0, 0x0800_1FFF, false, m),
            0x3C01_C200
        );
        let relu = CvtMods { relu: true, ..m };
        assert_eq!(f32_to_16_rs(-1.0, 0, false, relu), 0);
        assert_eq!(f32_to_16_rs(f32::NAN, 0, false, m), 0x7FFF);
    }

    #[test]
    fn bf16x2_to_and_from_the_narrow_formats() {
        // bf16 5 | -7 into e2m1 (5 ties to 4, -7 saturates to -6) and e4m3 (exact: 1.25*2^2 is
        // 0_1001_010, -1.75*2^2 is 1_1001_110)
        assert_eq!(half2_to_small2(Small::E2m1, 0x40A0_C0E0, true, false), 0x6F);
        assert_eq!(bf16x2_to_fp8x2(Fp8::E4m3, 0x40A0_C0E0, false), 0x4ACE);
        // 448 is e4m3's largest value; 512 saturates to it; e5m2 has 512 exactly (0x60)
        assert_eq!(bf16x2_to_fp8x2(Fp8::E4m3, 0x43E0_4400, false), 0x7E7E);
        assert_eq!(bf16x2_to_fp8x2(Fp8::E5m2, 0x43E0_4400, false), 0x5F60);
        // f16 1.0 | -1.0 into e3m2 (0x0C | 0x2C), .relu zeroes the negative
        assert_eq!(
            half2_to_small2(Small::E3m2, 0x3C00_BC00, false, false),
            0x0C2C
        );
        assert_eq!(
            half2_to_small2(Small::E3m2, 0x3C00_BC00, false, true),
            0x0C00
        );
        // back to bf16: e2m1 6 | -6, e3m2 28 | 0.0625, e4m3 1.0 | e5m2 inf
        assert_eq!(small2_to_bf16x2(Small::E2m1, 0x7F, false), 0x40C0_C0C0);
        assert_eq!(small2_to_bf16x2(Small::E3m2, 0x1F01, false), 0x41E0_3D80);
        assert_eq!(fp8x2_to_bf16x2(Fp8::E4m3, 0x3838, false), 0x3F80_3F80);
        assert_eq!(fp8x2_to_bf16x2(Fp8::E5m2, 0x7CFC, true), 0x7F80_0000);
    }
}
