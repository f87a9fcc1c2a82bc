//! Floating-point instructions on `.f32` and `.f64` (ISA chapter "Floating-Point Instructions").
//!
//! * `.rn` uses the host's IEEE arithmetic, which rounds to nearest-even exactly as the ISA asks;
//!   `.rz .rm .rp` go through a correctly rounded soft-float (`rustc_apfloat`, LLVM's APFloat),
//!   or, for `sqrt`, through an exact residual test around the host's nearest result.
//! * `.ftz` flushes subnormal inputs, and subnormal results after rounding, to zero of the same
//!   sign. `.sat` clamps to `[+0.0, 1.0]` with NaN (and `-0.0`) giving `+0.0`.
//! * NaN results: `.f32` gives the canonical NaN `0x7FFF_FFFF` (the ISA leaves single-precision
//!   NaNs unspecified; this is the GPU's pattern). `.f64` keeps the payload of the first NaN
//!   operand, quieted, as the ISA promises payloads for double precision; a NaN produced from
//!   non-NaN operands (`inf - inf`, `0 * inf`, `sqrt(-1)`) is [`CANONICAL_NAN_F64`].
//! * `.approx` functions are computed in `f64` with the host `libm` and rounded once to `f32`;
//!   the result is within one `f32` ulp of the exact value (usually correctly rounded), far inside
//!   the ISA's bounds (e.g. `2^-22.5` absolute for `ex2`, `2^-20.9` for `sin`), with the special
//!   values of the ISA's tables.

use rustc_apfloat::ieee::{Double, Single};
use rustc_apfloat::Float as _;

use super::fp::{Format, F32, F64};
use super::Rounding;

/// Canonical `.f32` NaN, `0x7FFF_FFFF`.
pub const CANONICAL_NAN_F32: u32 = 0x7FFF_FFFF;
/// NaN produced by `.f64` arithmetic when no operand is a NaN (our choice, see the module docs).
pub const CANONICAL_NAN_F64: u64 = 0x7FFF_FFFF_FFFF_FFFF;

/// The canonical `.f32` NaN as a value.
#[inline]
pub fn nan_f32() -> f32 {
    f32::from_bits(CANONICAL_NAN_F32)
}

/// The canonical `.f64` NaN as a value.
#[inline]
pub fn nan_f64() -> f64 {
    f64::from_bits(CANONICAL_NAN_F64)
}

/// `.ftz` on one `.f32` value: a subnormal becomes zero of the same sign.
#[inline]
pub fn flush_f32(x: f32, ftz: bool) -> f32 {
    if ftz && x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// `.ftz` on one `.f64` value (only the `.approx.ftz.f64` forms use it).
#[inline]
pub fn flush_f64(x: f64, ftz: bool) -> f64 {
    if ftz && x.is_subnormal() {
        f64::from_bits(x.to_bits() & 0x8000_0000_0000_0000)
    } else {
        x
    }
}

/// `.sat`: clamp to `[0.0, 1.0]`; NaN and both zeros give `+0.0`.
#[inline]
pub fn saturate_f32(x: f32) -> f32 {
    // `x > 0.0` is false for NaN and for -0.0.
    if x > 0.0 {
        x.min(1.0)
    } else {
        0.0
    }
}

/// `.sat` for `.f64` results (used by `cvt.sat.f64`).
#[inline]
pub fn saturate_f64(x: f64) -> f64 {
    if x > 0.0 {
        x.min(1.0)
    } else {
        0.0
    }
}

/// Common tail of every `.f32` arithmetic instruction: canonical NaN, then `.ftz`, then `.sat`.
#[inline]
fn finish_f32(r: f32, ftz: bool, sat: bool) -> f32 {
    let r = if r.is_nan() {
        nan_f32()
    } else {
        flush_f32(r, ftz)
    };
    if sat {
        saturate_f32(r)
    } else {
        r
    }
}

/// Quiet a `.f64` NaN keeping its sign and payload.
#[inline]
fn quiet_f64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
}

/// The NaN a `.f64` operation returns: the first NaN operand quieted, else the canonical NaN.
#[inline]
fn nan_result_f64(ops: &[f64]) -> f64 {
    for &x in ops {
        if x.is_nan() {
            return quiet_f64(x);
        }
    }
    nan_f64()
}

macro_rules! apfloat_ops {
    ($ty:ty, $ap:ty, $bits:ty, $add:ident, $mul:ident, $div:ident, $fma:ident) => {
        #[inline]
        fn $add(a: $ty, b: $ty, rnd: Rounding) -> $ty {
            let r = <$ap>::from_bits(a.to_bits() as u128)
                .add_r(<$ap>::from_bits(b.to_bits() as u128), rnd.apfloat());
            <$ty>::from_bits(r.value.to_bits() as $bits)
        }
        #[inline]
        fn $mul(a: $ty, b: $ty, rnd: Rounding) -> $ty {
            let r = <$ap>::from_bits(a.to_bits() as u128)
                .mul_r(<$ap>::from_bits(b.to_bits() as u128), rnd.apfloat());
            <$ty>::from_bits(r.value.to_bits() as $bits)
        }
        #[inline]
        fn $div(a: $ty, b: $ty, rnd: Rounding) -> $ty {
            let r = <$ap>::from_bits(a.to_bits() as u128)
                .div_r(<$ap>::from_bits(b.to_bits() as u128), rnd.apfloat());
            <$ty>::from_bits(r.value.to_bits() as $bits)
        }
        #[inline]
        fn $fma(a: $ty, b: $ty, c: $ty, rnd: Rounding) -> $ty {
            let r = <$ap>::from_bits(a.to_bits() as u128).mul_add_r(
                <$ap>::from_bits(b.to_bits() as u128),
                <$ap>::from_bits(c.to_bits() as u128),
                rnd.apfloat(),
            );
            <$ty>::from_bits(r.value.to_bits() as $bits)
        }
    };
}

apfloat_ops!(f32, Single, u32, ap_add32, ap_mul32, ap_div32, ap_fma32);
apfloat_ops!(f64, Double, u64, ap_add64, ap_mul64, ap_div64, ap_fma64);

/// `add{.rnd}{.ftz}{.sat}.f32`: `a + b` rounded once per `rnd` (default `.rn`).
#[inline]
pub fn add_f32(a: f32, b: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    let (a, b) = (flush_f32(a, ftz), flush_f32(b, ftz));
    let r = if rnd == Rounding::Rn {
        a + b
    } else {
        ap_add32(a, b, rnd)
    };
    finish_f32(r, ftz, sat)
}

/// `sub{.rnd}{.ftz}{.sat}.f32`: `a - b` rounded once per `rnd`.
#[inline]
pub fn sub_f32(a: f32, b: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    add_f32(a, -b, rnd, ftz, sat)
}

/// `mul{.rnd}{.ftz}{.sat}.f32`: `a * b` rounded once per `rnd`.
#[inline]
pub fn mul_f32(a: f32, b: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    let (a, b) = (flush_f32(a, ftz), flush_f32(b, ftz));
    let r = if rnd == Rounding::Rn {
        a * b
    } else {
        ap_mul32(a, b, rnd)
    };
    finish_f32(r, ftz, sat)
}

/// `fma.rnd{.ftz}{.sat}.f32`: `a * b + c` computed exactly and rounded once.
/// `mad.rnd.f32` is the same instruction on `sm_20+` (the ISA says so), use this for it too.
#[inline]
pub fn fma_f32(a: f32, b: f32, c: f32, rnd: Rounding, ftz: bool, sat: bool) -> f32 {
    let (a, b, c) = (flush_f32(a, ftz), flush_f32(b, ftz), flush_f32(c, ftz));
    let r = if rnd == Rounding::Rn {
        a.mul_add(b, c)
    } else {
        ap_fma32(a, b, c, rnd)
    };
    finish_f32(r, ftz, sat)
}

/// `div.rnd{.ftz}.f32`: IEEE division rounded per `rnd`.
#[inline]
pub fn div_f32(a: f32, b: f32, rnd: Rounding, ftz: bool) -> f32 {
    let (a, b) = (flush_f32(a, ftz), flush_f32(b, ftz));
    let r = if rnd == Rounding::Rn {
        a / b
    } else {
        ap_div32(a, b, rnd)
    };
    finish_f32(r, ftz, false)
}

/// `div.approx{.ftz}.f32`: `a * (1/b)` with both steps rounded to nearest (at most 2 ulp from
/// the quotient, the ISA's bound). For `2^126 < |b| < 2^128` the ISA specifies 0, or NaN when
/// `a` is infinite. The ISA lists subnormal flushing for the approximate divides
/// unconditionally, so inputs and results are flushed whether or not `.ftz` is written.
#[inline]
pub fn div_approx_f32(a: f32, b: f32) -> f32 {
    let (a, b) = (flush_f32(a, true), flush_f32(b, true));
    let big = b.abs() > f32::from_bits(0x7E80_0000) && b.is_finite(); // 2^126
    if big {
        return if a.is_infinite() {
            nan_f32()
        } else if a.is_nan() {
            nan_f32()
        } else {
            f32::from_bits((a.to_bits() ^ b.to_bits()) & 0x8000_0000)
        };
    }
    let r = flush_f32(1.0 / b, true);
    finish_f32(a * r, true, false)
}

/// `div.full{.ftz}.f32`: full-range approximate divide (ISA bound 2 ulp); we return the correctly
/// rounded quotient, flushing subnormals as the ISA lists for the approximate divides.
#[inline]
pub fn div_full_f32(a: f32, b: f32) -> f32 {
    div_f32(a, b, Rounding::Rn, true)
}

/// `rcp.rnd{.ftz}.f32`: `1 / a` rounded per `rnd`.
#[inline]
pub fn rcp_f32(a: f32, rnd: Rounding, ftz: bool) -> f32 {
    div_f32(1.0, a, rnd, ftz)
}

/// `rcp.approx{.ftz}.f32`: we deliver the correctly rounded reciprocal (ISA: max absolute error
/// `2^-23` on `[1, 2)`); `±0 → ±inf`, `±inf → ±0`.
#[inline]
pub fn rcp_approx_f32(a: f32, ftz: bool) -> f32 {
    div_f32(1.0, a, Rounding::Rn, ftz)
}

/// `sqrt.rnd{.ftz}.f32`: correctly rounded square root; `sqrt(-0) = -0`, negative → NaN.
#[inline]
pub fn sqrt_f32(a: f32, rnd: Rounding, ftz: bool) -> f32 {
    let a = flush_f32(a, ftz);
    let y = a.sqrt();
    let r = if rnd == Rounding::Rn || !y.is_finite() || y == 0.0 {
        y
    } else {
        // y is the nearest f32 to sqrt(a); y*y is exact in f64 (48 significant bits), so comparing
        // it to a tells on which side of y the exact root lies.
        let sq = (y as f64) * (y as f64);
        let x = a as f64;
        if rnd == Rounding::Rp {
            if sq < x {
                next_up_f32(y)
            } else {
                y
            }
        } else if sq > x {
            next_down_f32(y)
        } else {
            y
        }
    };
    finish_f32(r, ftz, false)
}

/// `sqrt.approx{.ftz}.f32`: we deliver the correctly rounded root (well inside the ISA's bound).
#[inline]
pub fn sqrt_approx_f32(a: f32, ftz: bool) -> f32 {
    sqrt_f32(a, Rounding::Rn, ftz)
}

/// `rsqrt.approx{.ftz}.f32`: `1/sqrt(a)` computed in `f64` and rounded once (ISA bound `2^-22.4`
/// absolute on `[1, 4)`); `±0 → ±inf`, negative → NaN, `+inf → +0`.
#[inline]
pub fn rsqrt_approx_f32(a: f32, ftz: bool) -> f32 {
    let a = flush_f32(a, ftz);
    let r = (1.0 / (a as f64).sqrt()) as f32;
    finish_f32(r, ftz, false)
}

/// `sin.approx{.ftz}.f32` (radians): host `f64` sine rounded to `f32`; `±inf → NaN`.
#[inline]
pub fn sin_approx_f32(a: f32, ftz: bool) -> f32 {
    let a = flush_f32(a, ftz);
    finish_f32((a as f64).sin() as f32, ftz, false)
}

/// `cos.approx{.ftz}.f32` (radians): host `f64` cosine rounded to `f32`; `±inf → NaN`.
#[inline]
pub fn cos_approx_f32(a: f32, ftz: bool) -> f32 {
    let a = flush_f32(a, ftz);
    finish_f32((a as f64).cos() as f32, ftz, false)
}

/// `lg2.approx{.ftz}.f32`: `log2(a)`; `±0 → -inf`, negative → NaN, `+inf → +inf`.
#[inline]
pub fn lg2_approx_f32(a: f32, ftz: bool) -> f32 {
    let a = flush_f32(a, ftz);
    // log2(-0.0) is -inf on the host too (IEEE log of a signed zero).
    finish_f32((a as f64).log2() as f32, ftz, false)
}

/// `ex2.approx{.ftz}.f32`: `2^a`; `-inf → +0`, `±0 → 1`, `+inf → +inf`.
#[inline]
pub fn ex2_approx_f32(a: f32, ftz: bool) -> f32 {
    let a = flush_f32(a, ftz);
    finish_f32((a as f64).exp2() as f32, ftz, false)
}

/// `tanh.approx.f32`: hyperbolic tangent; subnormals pass through (the ISA says so, and
/// `tanh(x)` rounds to `x` there anyway), `±inf → ±1`.
#[inline]
pub fn tanh_approx_f32(a: f32) -> f32 {
    finish_f32((a as f64).tanh() as f32, false, false)
}

/// Round `f64` bits to 20 fraction bits in place (the `1.11.20` format of the `.approx.ftz.f64`
/// instructions), flushing subnormals; NaN becomes `0x7FFF_FFFF_0000_0000`.
#[inline]
fn hi_word_result(r: f64) -> f64 {
    if r.is_nan() {
        return f64::from_bits(0x7FFF_FFFF_0000_0000);
    }
    let r = flush_f64(r, true);
    const HI: super::fp::Format = super::fp::Format {
        exp_bits: 11,
        frac_bits: 20,
        has_inf: true,
    };
    let bits = super::fp::from_f64(HI, r, Rounding::Rn);
    flush_f64(f64::from_bits(bits << 32), true)
}

/// The input of the `.approx.ftz.f64` forms: the upper word of `a` as a `1.11.20` number,
/// subnormals flushed.
#[inline]
fn hi_word_input(a: f64) -> f64 {
    flush_f64(f64::from_bits(a.to_bits() & 0xFFFF_FFFF_0000_0000), true)
}

/// `rcp.approx.ftz.f64`: reciprocal of the upper 32 bits of `a` (a `1.11.20` number), result
/// rounded to nearest `1.11.20` in the upper word, low word zero. Input NaNs give
/// `0x7FFF_FFFF_0000_0000` as the ISA states; subnormals are flushed.
#[inline]
pub fn rcp_approx_ftz_f64(a: f64) -> f64 {
    hi_word_result(1.0 / hi_word_input(a))
}

/// `rsqrt.approx.ftz.f64`: like [`rcp_approx_ftz_f64`] for `1/sqrt`.
#[inline]
pub fn rsqrt_approx_ftz_f64(a: f64) -> f64 {
    hi_word_result(1.0 / hi_word_input(a).sqrt())
}

/// `rsqrt.approx.f64`: `1/sqrt(a)` as the host computes it (two roundings, within 1 ulp).
#[inline]
pub fn rsqrt_approx_f64(a: f64) -> f64 {
    let r = 1.0 / a.sqrt();
    if r.is_nan() {
        nan_result_f64(&[a])
    } else {
        r
    }
}

/// Next representable `f32` toward `+inf` (finite, non-NaN input).
#[inline]
fn next_up_f32(x: f32) -> f32 {
    let b = x.to_bits();
    if x == 0.0 {
        f32::from_bits(1)
    } else if b >> 31 == 0 {
        f32::from_bits(b + 1)
    } else {
        f32::from_bits(b - 1)
    }
}

/// Next representable `f32` toward `-inf` (finite, non-NaN input).
#[inline]
fn next_down_f32(x: f32) -> f32 {
    -next_up_f32(-x)
}

#[inline]
fn next_up_f64(x: f64) -> f64 {
    let b = x.to_bits();
    if x == 0.0 {
        f64::from_bits(1)
    } else if b >> 63 == 0 {
        f64::from_bits(b + 1)
    } else {
        f64::from_bits(b - 1)
    }
}

#[inline]
fn next_down_f64(x: f64) -> f64 {
    -next_up_f64(-x)
}

/// `add{.rnd}.f64`.
#[inline]
pub fn add_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    let r = if rnd == Rounding::Rn {
        a + b
    } else {
        ap_add64(a, b, rnd)
    };
    if r.is_nan() {
        nan_result_f64(&[a, b])
    } else {
        r
    }
}

/// `sub{.rnd}.f64`.
#[inline]
pub fn sub_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    let r = if rnd == Rounding::Rn {
        a - b
    } else {
        ap_add64(a, -b, rnd)
    };
    if r.is_nan() {
        nan_result_f64(&[a, b])
    } else {
        r
    }
}

/// `mul{.rnd}.f64`.
#[inline]
pub fn mul_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    let r = if rnd == Rounding::Rn {
        a * b
    } else {
        ap_mul64(a, b, rnd)
    };
    if r.is_nan() {
        nan_result_f64(&[a, b])
    } else {
        r
    }
}

/// `fma.rnd.f64` (and `mad.rnd.f64`): `a * b + c` exact, rounded once.
#[inline]
pub fn fma_f64(a: f64, b: f64, c: f64, rnd: Rounding) -> f64 {
    let r = if rnd == Rounding::Rn {
        a.mul_add(b, c)
    } else {
        ap_fma64(a, b, c, rnd)
    };
    if r.is_nan() {
        nan_result_f64(&[a, b, c])
    } else {
        r
    }
}

/// `div.rnd.f64`.
#[inline]
pub fn div_f64(a: f64, b: f64, rnd: Rounding) -> f64 {
    let r = if rnd == Rounding::Rn {
        a / b
    } else {
        ap_div64(a, b, rnd)
    };
    if r.is_nan() {
        nan_result_f64(&[a, b])
    } else {
        r
    }
}

/// `rcp.rnd.f64`: `1 / a` rounded per `rnd`.
#[inline]
pub fn rcp_f64(a: f64, rnd: Rounding) -> f64 {
    div_f64(1.0, a, rnd)
}

/// `sqrt.rnd.f64`: correctly rounded square root for every mode. The host gives the nearest
/// root `y`; the sign of the exact residual `y*y - a` (one `fma`, exact in sign once `a` is scaled
/// away from the subnormal range) says which neighbour the directed modes need.
#[inline]
pub fn sqrt_f64(a: f64, rnd: Rounding) -> f64 {
    let y = a.sqrt();
    if y.is_nan() {
        return nan_result_f64(&[a]);
    }
    if rnd == Rounding::Rn || !y.is_finite() || y == 0.0 {
        return y;
    }
    // Scale tiny inputs by 2^200 (root by 2^100) so that the residual cannot underflow.
    let (x, yy, scale) = if a < f64::from_bits(0x0830_0000_0000_0000) {
        let x = a * f64::from_bits(0x4C70_0000_0000_0000); // 2^200
        (x, x.sqrt(), true)
    } else {
        (a, y, false)
    };
    let res = yy.mul_add(yy, -x); // sign of yy^2 - x, exact
    let r = if rnd == Rounding::Rp {
        if res < 0.0 {
            next_up_f64(yy)
        } else {
            yy
        }
    } else if res > 0.0 {
        next_down_f64(yy)
    } else {
        yy
    };
    if scale {
        r * f64::from_bits(0x3E30_0000_0000_0000) // 2^-100, exact: the root is normal
    } else {
        r
    }
}

/// `abs{.ftz}.f32`: clear the sign bit (after flushing a subnormal input under `.ftz`); NaN
/// payloads are kept.
#[inline]
pub fn abs_f32(a: f32, ftz: bool) -> f32 {
    f32::from_bits(flush_f32(a, ftz).to_bits() & 0x7FFF_FFFF)
}

/// `neg{.ftz}.f32`: flip the sign bit (after `.ftz` flushing); NaN payloads are kept.
#[inline]
pub fn neg_f32(a: f32, ftz: bool) -> f32 {
    f32::from_bits(flush_f32(a, ftz).to_bits() ^ 0x8000_0000)
}

/// `abs.f64`: clear the sign bit; NaN passes through (the ISA's rule for `.f64`).
#[inline]
pub fn abs_f64(a: f64) -> f64 {
    f64::from_bits(a.to_bits() & 0x7FFF_FFFF_FFFF_FFFF)
}

/// `neg.f64`: flip the sign bit.
#[inline]
pub fn neg_f64(a: f64) -> f64 {
    f64::from_bits(a.to_bits() ^ 0x8000_0000_0000_0000)
}

/// `copysign.f32 d, a, b`: the magnitude of **b** with the sign of **a** (note the PTX operand
/// order).
#[inline]
pub fn copysign_f32(a: f32, b: f32) -> f32 {
    f32::from_bits((b.to_bits() & 0x7FFF_FFFF) | (a.to_bits() & 0x8000_0000))
}

/// `copysign.f64 d, a, b`: the magnitude of `b` with the sign of `a`.
#[inline]
pub fn copysign_f64(a: f64, b: f64) -> f64 {
    f64::from_bits((b.to_bits() & !(1 << 63)) | (a.to_bits() & (1 << 63)))
}

/// Modifiers of floating-point `min`/`max`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    /// `.ftz`: flush subnormal inputs and result.
    pub ftz: bool,
    /// `.NaN`: a NaN input gives the canonical NaN instead of the other operand.
    pub nan: bool,
    /// `.xorsign.abs`: compare magnitudes; the result's sign is the XOR of the input signs.
    pub xorsign_abs: bool,
}

/// Shared min/max rule on raw bits of format `fmt`, ordered by `lt`: one NaN input yields the
/// other input unless `.NaN`; both NaN yields the canonical NaN; `-0 < +0`; `.xorsign.abs`
/// compares magnitudes and gives the result the XOR of the input signs (not for NaN results).
#[inline]
pub(crate) fn minmax_bits(
    fmt: Format,
    a: u64,
    b: u64,
    lt: impl Fn(u64, u64) -> bool,
    m: MinMax,
    want_max: bool,
) -> u64 {
    let sign = fmt.sign_mask();
    let xs = (a ^ b) & sign;
    let (a, b) = if m.xorsign_abs {
        (a & !sign, b & !sign)
    } else {
        (a, b)
    };
    let (na, nb) = (fmt.is_nan(a), fmt.is_nan(b));
    if (na && nb) || (m.nan && (na || nb)) {
        return fmt.canonical_nan();
    }
    let d = if na {
        b
    } else if nb {
        a
    } else {
        let pick_a = if lt(a, b) {
            !want_max
        } else if lt(b, a) {
            want_max
        } else {
            // Equal values differ in bits only for the two zeros: -0 is the smaller.
            (a & sign != 0) != want_max
        };
        if pick_a {
            a
        } else {
            b
        }
    };
    if m.xorsign_abs {
        (d & !sign) | xs
    } else {
        d
    }
}

/// `min{.ftz}{.NaN}{.xorsign.abs}.f32`.
#[inline]
pub fn min_f32(a: f32, b: f32, m: MinMax) -> f32 {
    minmax_f32(a, b, m, false)
}

/// `max{.ftz}{.NaN}{.xorsign.abs}.f32`.
#[inline]
pub fn max_f32(a: f32, b: f32, m: MinMax) -> f32 {
    minmax_f32(a, b, m, true)
}

#[inline]
fn minmax_f32(a: f32, b: f32, m: MinMax, want_max: bool) -> f32 {
    let (a, b) = (flush_f32(a, m.ftz), flush_f32(b, m.ftz));
    let r = minmax_bits(
        F32,
        a.to_bits() as u64,
        b.to_bits() as u64,
        |x, y| f32::from_bits(x as u32) < f32::from_bits(y as u32),
        m,
        want_max,
    );
    flush_f32(f32::from_bits(r as u32), m.ftz)
}

/// `min.f64`: NaN rules as for `.f32` (both NaN gives [`CANONICAL_NAN_F64`]), `-0 < +0`.
#[inline]
pub fn min_f64(a: f64, b: f64) -> f64 {
    minmax_f64(a, b, false)
}

/// `max.f64`.
#[inline]
pub fn max_f64(a: f64, b: f64) -> f64 {
    minmax_f64(a, b, true)
}

#[inline]
fn minmax_f64(a: f64, b: f64, want_max: bool) -> f64 {
    f64::from_bits(minmax_bits(
        F64,
        a.to_bits(),
        b.to_bits(),
        |x, y| f64::from_bits(x) < f64::from_bits(y),
        MinMax::default(),
        want_max,
    ))
}

/// The property tested by `testp`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TestOp {
    /// `.finite`: not infinite and not NaN.
    Finite,
    /// `.infinite`: `±inf`.
    Infinite,
    /// `.number`: not NaN.
    Number,
    /// `.notanumber`: NaN.
    NotANumber,
    /// `.normal`: normal number; the ISA counts `±0` as normal.
    Normal,
    /// `.subnormal`: subnormal number.
    Subnormal,
}

/// `testp.op.f32`.
#[inline]
pub fn testp_f32(op: TestOp, a: f32) -> bool {
    match op {
        TestOp::Finite => a.is_finite(),
        TestOp::Infinite => a.is_infinite(),
        TestOp::Number => !a.is_nan(),
        TestOp::NotANumber => a.is_nan(),
        TestOp::Normal => a.is_normal() || a == 0.0,
        TestOp::Subnormal => a.is_subnormal(),
    }
}

/// `testp.op.f64`.
#[inline]
pub fn testp_f64(op: TestOp, a: f64) -> bool {
    match op {
        TestOp::Finite => a.is_finite(),
        TestOp::Infinite => a.is_infinite(),
        TestOp::Number => !a.is_nan(),
        TestOp::NotANumber => a.is_nan(),
        TestOp::Normal => a.is_normal() || a == 0.0,
        TestOp::Subnormal => a.is_subnormal(),
    }
}
