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
        return if a.is_infinite() || a.is_nan() {
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
                y.next_up()
            } else {
                y
            }
        } else if sq > x {
            y.next_down()
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
            yy.next_up()
        } else {
            yy
        }
    } else if res > 0.0 {
        yy.next_down()
    } else {
        yy
    };
    if scale {
        r * f64::from_bits(0x39B0_0000_0000_0000) // 2^-100, exact: the root is normal
    } else {
        r
    }
}

/// `abs{.ftz}.f32`: clear the sign bit (after flushing a subnormal input under `.ftz`). The ISA
/// leaves the result of a NaN input unspecified ("an unspecified NaN"); ptxvm's choice is the
/// IEEE 754 one the ISA anticipates: the payload is kept and only the sign bit cleared.
#[inline]
pub fn abs_f32(a: f32, ftz: bool) -> f32 {
    f32::from_bits(flush_f32(a, ftz).to_bits() & 0x7FFF_FFFF)
}

/// `neg{.ftz}.f32`: flip the sign bit (after `.ftz` flushing). NaN inputs: unspecified in the
/// ISA; ptxvm keeps the payload and flips the sign bit (IEEE 754 `negate`).
#[inline]
pub fn neg_f32(a: f32, ftz: bool) -> f32 {
    f32::from_bits(flush_f32(a, ftz).to_bits() ^ 0x8000_0000)
}

/// `abs.f64`: clear the sign bit, except that "for abs.f64, NaN input is passed through
/// unchanged" (the ISA): a NaN keeps every bit, its sign included.
#[inline]
pub fn abs_f64(a: f64) -> f64 {
    let bits = a.to_bits();
    let mag = bits & 0x7FFF_FFFF_FFFF_FFFF;
    f64::from_bits(if mag > 0x7FF0_0000_0000_0000 {
        bits
    } else {
        mag
    })
}

/// `neg.f64`: flip the sign bit. NaN inputs: unspecified in the ISA; ptxvm keeps the payload
/// and flips the sign bit (IEEE 754 `negate`).
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

/// `min{.ftz}{.NaN}{.abs}.f32 d, a, b, c` (three inputs, PTX 8.8): the minimum of the three,
/// by the two-input rules of [`min_f32`] applied as `min(min(a, b), c)` (the order makes no
/// difference: those rules are a total order on non-NaN values with `-0 < +0`, a NaN input is
/// passed over unless `.NaN`, and only all-NaN inputs give NaN without it). `.abs` takes the
/// absolute value of every input first, so the result is never negative (save NaN).
#[inline]
pub fn min3_f32(a: f32, b: f32, c: f32, m: MinMax, abs: bool) -> f32 {
    let f = |x: f32| if abs { abs_f32(x, false) } else { x };
    min_f32(min_f32(f(a), f(b), m), f(c), m)
}

/// `max{.ftz}{.NaN}{.abs}.f32 d, a, b, c`: as [`min3_f32`], the maximum.
#[inline]
pub fn max3_f32(a: f32, b: f32, c: f32, m: MinMax, abs: bool) -> f32 {
    let f = |x: f32| if abs { abs_f32(x, false) } else { x };
    max_f32(max_f32(f(a), f(b), m), f(c), m)
}

/// The two `.f32` elements of a `.f32x2` value (a `.b64` register): element 0 in bits 0..32,
/// element 1 in bits 32..64 (ISA: `fA[0] = a[0:31]; fA[1] = a[32:63]`).
#[inline]
fn f32x2_parts(x: u64) -> [f32; 2] {
    [f32::from_bits(x as u32), f32::from_bits((x >> 32) as u32)]
}

#[inline]
fn f32x2_join(r: [f32; 2]) -> u64 {
    r[0].to_bits() as u64 | (r[1].to_bits() as u64) << 32
}

/// `add{.rnd}{.ftz}.f32x2 d, a, b` (sm_100+): [`add_f32`] on each element (no `.sat` form).
#[inline]
pub fn add_f32x2(a: u64, b: u64, rnd: Rounding, ftz: bool) -> u64 {
    let ([a0, a1], [b0, b1]) = (f32x2_parts(a), f32x2_parts(b));
    f32x2_join([
        add_f32(a0, b0, rnd, ftz, false),
        add_f32(a1, b1, rnd, ftz, false),
    ])
}

/// `sub{.rnd}{.ftz}.f32x2 d, a, b`: [`sub_f32`] on each element.
#[inline]
pub fn sub_f32x2(a: u64, b: u64, rnd: Rounding, ftz: bool) -> u64 {
    let ([a0, a1], [b0, b1]) = (f32x2_parts(a), f32x2_parts(b));
    f32x2_join([
        sub_f32(a0, b0, rnd, ftz, false),
        sub_f32(a1, b1, rnd, ftz, false),
    ])
}

/// `mul{.rnd}{.ftz}.f32x2 d, a, b`: [`mul_f32`] on each element.
#[inline]
pub fn mul_f32x2(a: u64, b: u64, rnd: Rounding, ftz: bool) -> u64 {
    let ([a0, a1], [b0, b1]) = (f32x2_parts(a), f32x2_parts(b));
    f32x2_join([
        mul_f32(a0, b0, rnd, ftz, false),
        mul_f32(a1, b1, rnd, ftz, false),
    ])
}

/// `fma.rnd{.ftz}.f32x2 d, a, b, c`: [`fma_f32`] on each element.
#[inline]
pub fn fma_f32x2(a: u64, b: u64, c: u64, rnd: Rounding, ftz: bool) -> u64 {
    let ([a0, a1], [b0, b1], [c0, c1]) = (f32x2_parts(a), f32x2_parts(b), f32x2_parts(c));
    f32x2_join([
        fma_f32(a0, b0, c0, rnd, ftz, false),
        fma_f32(a1, b1, c1, rnd, ftz, false),
    ])
}

/// The exact `.f32` value of a `.f16` (`bf16 == false`) or `.bf16` operand of the
/// mixed-precision instructions (every such value is an `.f32` value; NaN stays NaN).
#[inline]
pub fn widen_half(x: u16, bf16: bool) -> f32 {
    if bf16 {
        f32::from_bits((x as u32) << 16)
    } else {
        super::fp::to_f64(super::fp::F16, x as u64) as f32
    }
}

/// `add{.rnd}{.sat}.f32.{f16,bf16} d, a, c` (mixed precision, sm_100+): `a` widened exactly to
/// `.f32` ([`widen_half`]), then `a + c` as [`add_f32`] (no `.ftz` form).
#[inline]
pub fn add_mixed_f32(a: u16, bf16: bool, c: f32, rnd: Rounding, sat: bool) -> f32 {
    add_f32(widen_half(a, bf16), c, rnd, false, sat)
}

/// `sub{.rnd}{.sat}.f32.{f16,bf16} d, a, c`: `a - c` with `a` widened exactly.
#[inline]
pub fn sub_mixed_f32(a: u16, bf16: bool, c: f32, rnd: Rounding, sat: bool) -> f32 {
    sub_f32(widen_half(a, bf16), c, rnd, false, sat)
}

/// `fma.rnd{.sat}.f32.{f16,bf16} d, a, b, c`: `a * b + c` with `a`, `b` widened exactly, the
/// product exact and the sum rounded once, as [`fma_f32`].
#[inline]
pub fn fma_mixed_f32(a: u16, b: u16, bf16: bool, c: f32, rnd: Rounding, sat: bool) -> f32 {
    fma_f32(widen_half(a, bf16), widen_half(b, bf16), c, rnd, false, sat)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fp::{self, Decoded};
    use Rounding::*;

    const MODES: [Rounding; 4] = [Rn, Rz, Rm, Rp];

    fn p2(e: i32) -> f32 {
        2f32.powi(e)
    }

    fn bits(x: f32) -> u32 {
        x.to_bits()
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// A finite nonzero f32 with exponent field in `lo..=hi`.
        fn f32_in(&mut self, lo: u32, hi: u32) -> f32 {
            let x = self.next();
            let e = lo + (x >> 40) as u32 % (hi - lo + 1);
            f32::from_bits((x as u32 & 0x807F_FFFF) | e << 23)
        }
        fn f64_in(&mut self, lo: u64, hi: u64) -> f64 {
            let x = self.next();
            let e = lo + (self.next() >> 20) % (hi - lo + 1);
            f64::from_bits((x & 0x800F_FFFF_FFFF_FFFF) | e << 52)
        }
    }

    /// (sign, significand, exponent) of a finite nonzero value.
    fn parts(fmt: fp::Format, b: u64) -> (bool, u128, i32) {
        match fp::decode(fmt, b) {
            Decoded::Finite { neg, mant, exp } => (neg, mant as u128, exp),
            other => panic!("not finite nonzero: {other:?}"),
        }
    }

    /// Exact signed sum of two (sign, mant, exp) triples as (neg, |sum|, exp), or None if the
    /// alignment does not fit in 127 bits.
    fn exact_sum(x: (bool, u128, i32), y: (bool, u128, i32)) -> Option<(bool, u128, i32)> {
        let e = x.2.min(y.2);
        let (sx, sy) = ((x.2 - e) as u32, (y.2 - e) as u32);
        if sx > 70 || sy > 70 {
            return None;
        }
        let vx = (x.1 << sx) as i128 * if x.0 { -1 } else { 1 };
        let vy = (y.1 << sy) as i128 * if y.0 { -1 } else { 1 };
        let s = vx + vy;
        Some((s < 0, s.unsigned_abs(), e))
    }

    fn isqrt(n: u128) -> u128 {
        // Bitwise integer square root: floor(sqrt(n)).
        let mut x = 0u128;
        let mut bit = 1u128 << 126;
        let mut n = n;
        while bit > n {
            bit >>= 2;
        }
        while bit != 0 {
            if n >= x + bit {
                n -= x + bit;
                x = (x >> 1) + bit;
            } else {
                x >>= 1;
            }
            bit >>= 2;
        }
        x
    }

    /// Correctly rounded sqrt of `m * 2^e` by integer square root with a sticky remainder.
    fn sqrt_model(fmt: fp::Format, m: u128, e: i32, rnd: Rounding) -> u64 {
        let (mut m, mut e) = (m, e);
        if e & 1 != 0 {
            m <<= 1;
            e -= 1;
        }
        // Scale to ~124 bits (an even shift) so the root has 62 bits, plenty for the sticky rule.
        let sh = (124 - (128 - m.leading_zeros() as i32)) & !1;
        let n = m << sh;
        let s = isqrt(n);
        fp::round_pack(fmt, false, s, (e - sh) / 2, s * s != n, rnd).bits
    }

    #[test]
    fn add_directed_rounding_examples() {
        // 1 + 2^-24 is exactly half an ulp above 1.0.
        assert_eq!(add_f32(1.0, p2(-24), Rz, false, false), 1.0);
        assert_eq!(add_f32(1.0, p2(-24), Rm, false, false), 1.0);
        assert_eq!(add_f32(1.0, p2(-24), Rp, false, false), 1.0 + p2(-23));
        assert_eq!(add_f32(1.0, p2(-24), Rn, false, false), 1.0); // tie to even
        assert_eq!(
            add_f32(1.0 + p2(-23), p2(-24), Rn, false, false),
            1.0 + p2(-22)
        ); // tie, odd -> up
        assert_eq!(add_f32(-1.0, -p2(-24), Rm, false, false), -1.0 - p2(-23));
        assert_eq!(add_f32(-1.0, -p2(-24), Rp, false, false), -1.0);
        assert_eq!(add_f32(-1.0, -p2(-24), Rz, false, false), -1.0);
        // A tiny addend still moves directed modes.
        assert_eq!(add_f32(1.0, p2(-100), Rp, false, false), 1.0 + p2(-23));
        assert_eq!(add_f32(1.0, -p2(-100), Rz, false, false), 1.0 - p2(-24));
        assert_eq!(add_f32(1.0, -p2(-100), Rn, false, false), 1.0);
        assert_eq!(sub_f32(1.0, p2(-100), Rm, false, false), 1.0 - p2(-24));
        // Exact zero: +0 except under .rm.
        assert_eq!(bits(add_f32(1.0, -1.0, Rn, false, false)), 0);
        assert_eq!(bits(add_f32(1.0, -1.0, Rm, false, false)), 0x8000_0000);
        assert_eq!(bits(sub_f32(2.0, 2.0, Rp, false, false)), 0);
        assert_eq!(bits(add_f32(-0.0, -0.0, Rn, false, false)), 0x8000_0000);
        // Overflow: .rn to inf, .rz to max, .rm/.rp by sign.
        assert_eq!(add_f32(f32::MAX, f32::MAX, Rn, false, false), f32::INFINITY);
        assert_eq!(add_f32(f32::MAX, f32::MAX, Rz, false, false), f32::MAX);
        assert_eq!(add_f32(f32::MAX, f32::MAX, Rm, false, false), f32::MAX);
        assert_eq!(
            add_f32(-f32::MAX, -f32::MAX, Rm, false, false),
            f32::NEG_INFINITY
        );
        assert_eq!(add_f32(-f32::MAX, -f32::MAX, Rp, false, false), -f32::MAX);
        // f64 the same way.
        let e = 2f64.powi(-53);
        assert_eq!(add_f64(1.0, e, Rz), 1.0);
        assert_eq!(add_f64(1.0, e, Rp), 1.0 + 2.0 * e);
        assert_eq!(add_f64(1.0, e, Rn), 1.0);
        assert_eq!(add_f64(-1.0, -e, Rm), -1.0 - 2.0 * e);
        assert_eq!(sub_f64(1.0, 2f64.powi(-300), Rz), 1.0 - e);
        assert_eq!(sub_f64(1.0, 1.0, Rm).to_bits(), 0x8000_0000_0000_0000);
        // .rn: x - x = +0, 1 - 2^-300 rounds back to 1 (the gap below 1 is 2^-53), 5 - 2 = 3.
        assert_eq!(sub_f64(1.0, 1.0, Rn).to_bits(), 0);
        assert_eq!(sub_f64(1.0, 2f64.powi(-300), Rn), 1.0);
        assert_eq!(sub_f64(5.0, 2.0, Rn), 3.0);
        assert_eq!(add_f64(f64::MAX, f64::MAX, Rz), f64::MAX);
    }

    #[test]
    fn mul_directed_rounding_examples() {
        let a = 1.0 + p2(-23);
        // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46
        assert_eq!(mul_f32(a, a, Rn, false, false), 1.0 + p2(-22));
        assert_eq!(mul_f32(a, a, Rz, false, false), 1.0 + p2(-22));
        assert_eq!(mul_f32(a, a, Rp, false, false), 1.0 + 3.0 * p2(-23));
        assert_eq!(mul_f32(-a, a, Rm, false, false), -(1.0 + 3.0 * p2(-23)));
        assert_eq!(mul_f32(-a, a, Rp, false, false), -(1.0 + p2(-22)));
        assert_eq!(mul_f32(-a, a, Rz, false, false), -(1.0 + p2(-22)));
        assert_eq!(mul_f32(-a, a, Rn, false, false), -(1.0 + p2(-22)));
        // Underflow: 2^-100 * 2^-100 is below the smallest subnormal.
        assert_eq!(bits(mul_f32(p2(-100), p2(-100), Rn, false, false)), 0);
        assert_eq!(bits(mul_f32(p2(-100), p2(-100), Rp, false, false)), 1);
        assert_eq!(
            bits(mul_f32(-p2(-100), p2(-100), Rm, false, false)),
            0x8000_0001
        );
        assert_eq!(
            bits(mul_f32(-p2(-100), p2(-100), Rz, false, false)),
            0x8000_0000
        );
        // f64: (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104
        let d = 1.0 + 2f64.powi(-52);
        assert_eq!(mul_f64(d, d, Rn), 1.0 + 2f64.powi(-51));
        assert_eq!(mul_f64(d, d, Rp), 1.0 + 3.0 * 2f64.powi(-52));
        assert_eq!(mul_f64(-d, d, Rm), -(1.0 + 3.0 * 2f64.powi(-52)));
        assert_eq!(mul_f64(-d, d, Rz), -(1.0 + 2f64.powi(-51)));
    }

    #[test]
    fn fma_single_rounding() {
        let a = 1.0 + p2(-23);
        let b = 1.0 - p2(-23);
        // a*b - 1 = -2^-46 exactly; mul then add loses it.
        assert_eq!(fma_f32(a, b, -1.0, Rn, false, false), -p2(-46));
        assert_eq!(
            add_f32(mul_f32(a, b, Rn, false, false), -1.0, Rn, false, false),
            0.0
        );
        // (1+2^-23)^2 + 2^-24... fused: 1 + 2^-22 + 2^-46 + 2^-24 -> above the midpoint of
        // 1+2^-22 and 1+3*2^-23? midpoint is 1 + 2^-22 + 2^-24; we are 2^-46 above -> rounds up.
        assert_eq!(
            fma_f32(a, a, p2(-24), Rn, false, false),
            1.0 + 3.0 * p2(-23)
        );
        // Unfused: 1 + 2^-22 first, then + 2^-24 ties to even 1 + 2^-22.
        assert_eq!(
            add_f32(mul_f32(a, a, Rn, false, false), p2(-24), Rn, false, false),
            1.0 + p2(-22)
        );
        assert_eq!(fma_f32(a, b, -1.0, Rz, false, false), -p2(-46));
        assert_eq!(fma_f32(a, a, -1.0, Rm, false, false), p2(-22) + p2(-46));
        // Directed: 1*1 + 2^-60 under .rp / .rz
        assert_eq!(fma_f32(1.0, 1.0, p2(-60), Rp, false, false), 1.0 + p2(-23));
        assert_eq!(fma_f32(1.0, 1.0, p2(-60), Rz, false, false), 1.0);
        assert_eq!(
            fma_f32(1.0, -1.0, p2(-60), Rz, false, false),
            -1.0 + p2(-24)
        );
        // Signed zero of an exact zero sum.
        assert_eq!(bits(fma_f32(1.0, -1.0, 1.0, Rn, false, false)), 0);
        assert_eq!(bits(fma_f32(1.0, -1.0, 1.0, Rm, false, false)), 0x8000_0000);
        assert_eq!(
            bits(fma_f32(-0.0, 1.0, -0.0, Rn, false, false)),
            0x8000_0000
        );
        // fma is the same as mad.rnd on sm_20+; inf*0 is invalid.
        assert_eq!(
            bits(fma_f32(f32::INFINITY, 0.0, 1.0, Rn, false, false)),
            CANONICAL_NAN_F32
        );
        // f64
        let d = 1.0 + 2f64.powi(-52);
        let e = 1.0 - 2f64.powi(-52);
        assert_eq!(fma_f64(d, e, -1.0, Rn), -2f64.powi(-104));
        assert_eq!(fma_f64(1.0, 1.0, 2f64.powi(-200), Rp), 1.0 + 2f64.powi(-52));
        assert_eq!(
            fma_f64(1.0, 1.0, -2f64.powi(-200), Rm),
            1.0 - 2f64.powi(-53)
        );
        assert_eq!(fma_f64(1.0, 1.0, -2f64.powi(-200), Rn), 1.0);
    }

    #[test]
    fn subnormals_and_ftz() {
        let tiny = f32::from_bits(1); // 2^-149
        assert_eq!(bits(add_f32(tiny, tiny, Rn, false, false)), 2);
        assert_eq!(bits(add_f32(tiny, tiny, Rn, true, false)), 0);
        assert_eq!(bits(add_f32(-tiny, -tiny, Rn, true, false)), 0x8000_0000);
        // 2^-126 * 0.5 = 2^-127: subnormal result; flushed (sign kept) under .ftz.
        assert_eq!(bits(mul_f32(p2(-126), 0.5, Rn, false, false)), 0x0040_0000);
        assert_eq!(bits(mul_f32(p2(-126), 0.5, Rn, true, false)), 0);
        assert_eq!(bits(mul_f32(-p2(-126), 0.5, Rn, true, false)), 0x8000_0000);
        // Subnormal input flushed before the operation: x + 1 where x subnormal under .rp.
        assert_eq!(add_f32(1.0, tiny, Rp, false, false), 1.0 + p2(-23));
        assert_eq!(add_f32(1.0, tiny, Rp, true, false), 1.0);
        // A result that rounds up to the smallest normal is not flushed.
        let max_sub = f32::from_bits(0x007F_FFFF);
        assert_eq!(bits(add_f32(max_sub, tiny, Rn, true, false)), 0); // inputs flushed first
                                                                      // 2^-126 * (1 - 2^-24) = 2^-126 - 2^-150: a tie that .rn rounds up to the smallest normal
                                                                      // (kept under .ftz), while .rz gives the largest subnormal (flushed under .ftz).
        assert_eq!(
            bits(mul_f32(p2(-126), 1.0 - p2(-24), Rn, true, false)),
            0x0080_0000
        );
        assert_eq!(
            bits(mul_f32(p2(-126), 1.0 - p2(-24), Rz, false, false)),
            0x007F_FFFF
        );
        assert_eq!(bits(mul_f32(p2(-126), 1.0 - p2(-24), Rz, true, false)), 0);
        // div, sqrt, rcp honour .ftz too.
        assert_eq!(bits(div_f32(p2(-126), 4.0, Rn, false)), 0x0020_0000);
        assert_eq!(bits(div_f32(p2(-126), 4.0, Rn, true)), 0);
        assert_eq!(rcp_f32(tiny, Rn, true), f32::INFINITY);
        assert_eq!(rcp_f32(-tiny, Rn, true), f32::NEG_INFINITY);
        assert_eq!(rcp_f32(tiny, Rn, false), f32::INFINITY); // 2^149 overflows anyway
        assert_eq!(rcp_f32(tiny, Rz, false), f32::MAX);
        assert_eq!(bits(sqrt_f32(-tiny, Rn, true)), 0x8000_0000);
        assert_eq!(bits(sqrt_f32(-tiny, Rn, false)), CANONICAL_NAN_F32);
        // sqrt(2^-149) = 2^-75 * sqrt(2): the bits of sqrt(2) (0x3FB504F3) with exponent 127 - 75.
        assert_eq!(bits(sqrt_f32(tiny, Rn, false)), 0x1A35_04F3);
        assert_eq!(abs_f32(-tiny, true).to_bits(), 0);
        assert_eq!(neg_f32(tiny, true).to_bits(), 0x8000_0000);
        assert_eq!(neg_f32(tiny, false).to_bits(), 0x8000_0001);
    }

    #[test]
    fn saturation() {
        assert_eq!(add_f32(0.5, 0.7, Rn, false, true), 1.0);
        assert_eq!(add_f32(0.5, 0.25, Rn, false, true), 0.75);
        assert_eq!(bits(add_f32(-1.0, 0.5, Rn, false, true)), 0);
        assert_eq!(bits(add_f32(f32::NAN, 0.5, Rn, false, true)), 0);
        assert_eq!(bits(mul_f32(-0.0, 1.0, Rn, false, true)), 0); // -0 -> +0
        assert_eq!(mul_f32(f32::INFINITY, 1.0, Rn, false, true), 1.0);
        assert_eq!(bits(mul_f32(f32::INFINITY, 0.0, Rn, false, true)), 0);
        assert_eq!(fma_f32(2.0, 2.0, -3.5, Rn, false, true), 0.5);
        assert_eq!(sub_f32(0.0, f32::NEG_INFINITY, Rz, false, true), 1.0);
        assert_eq!(saturate_f64(f64::NAN), 0.0);
        assert_eq!(saturate_f64(7.0), 1.0);
        // Like the f32 form: the range is [+0.0, 1.0], so -0.0 gives +0.0.
        assert_eq!(saturate_f64(-0.0).to_bits(), 0);
        assert_eq!(saturate_f64(0.0).to_bits(), 0);
        assert_eq!(saturate_f64(0.25), 0.25);
        assert_eq!(saturate_f64(-3.0).to_bits(), 0);
    }

    /// `.ftz` on `.f64` (the `.approx.ftz.f64` forms): a subnormal becomes the zero of its sign.
    #[test]
    fn flush_f64_to_signed_zero() {
        let sub = f64::from_bits(1);
        assert_eq!(flush_f64(sub, true).to_bits(), 0);
        assert_eq!(flush_f64(-sub, true).to_bits(), 0x8000_0000_0000_0000);
        assert_eq!(flush_f64(sub, false).to_bits(), 1);
        assert_eq!(flush_f64(f64::MIN_POSITIVE, true), f64::MIN_POSITIVE);
        // rcp.approx.ftz.f64 of a positive subnormal: 1/+0 = +inf.
        assert_eq!(rcp_approx_ftz_f64(f64::from_bits(1 << 40)), f64::INFINITY);
    }

    #[test]
    fn division() {
        let third = 1.0f32 / 3.0;
        assert_eq!(bits(third), 0x3EAA_AAAB);
        assert_eq!(bits(div_f32(1.0, 3.0, Rn, false)), 0x3EAA_AAAB);
        assert_eq!(bits(div_f32(1.0, 3.0, Rp, false)), 0x3EAA_AAAB);
        assert_eq!(bits(div_f32(1.0, 3.0, Rz, false)), 0x3EAA_AAAA);
        assert_eq!(bits(div_f32(1.0, 3.0, Rm, false)), 0x3EAA_AAAA);
        assert_eq!(bits(div_f32(-1.0, 3.0, Rm, false)), 0xBEAA_AAAB);
        assert_eq!(bits(div_f32(-1.0, 3.0, Rp, false)), 0xBEAA_AAAA);
        // 2/3 = 0x3F2AAAAB (rn rounds up), rz down.
        assert_eq!(bits(div_f32(2.0, 3.0, Rn, false)), 0x3F2A_AAAB);
        assert_eq!(bits(div_f32(2.0, 3.0, Rz, false)), 0x3F2A_AAAA);
        // Exact quotients are exact in every mode.
        for r in MODES {
            assert_eq!(div_f32(1.0, 4.0, r, false), 0.25);
            assert_eq!(div_f64(-9.0, 3.0, r), -3.0);
            assert_eq!(rcp_f64(8.0, r), 0.125);
        }
        assert_eq!(div_f32(1.0, 0.0, Rn, false), f32::INFINITY);
        assert_eq!(div_f32(-1.0, 0.0, Rz, false), f32::NEG_INFINITY);
        assert_eq!(div_f32(1.0, -0.0, Rn, false), f32::NEG_INFINITY);
        assert_eq!(bits(div_f32(0.0, 0.0, Rn, false)), CANONICAL_NAN_F32);
        assert_eq!(
            bits(div_f32(f32::INFINITY, f32::INFINITY, Rp, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(div_f32(f32::MAX, 0.5, Rn, false), f32::INFINITY);
        assert_eq!(div_f32(f32::MAX, 0.5, Rz, false), f32::MAX);
        assert_eq!(div_f32(-f32::MAX, 0.5, Rp, false), -f32::MAX);
        assert_eq!(div_f32(1.0, f32::INFINITY, Rn, false), 0.0);
        // f64: 1/3 = 0x3FD5555555555555 (rn rounds down), rp up.
        assert_eq!(div_f64(1.0, 3.0, Rn).to_bits(), 0x3FD5_5555_5555_5555);
        assert_eq!(div_f64(1.0, 3.0, Rz).to_bits(), 0x3FD5_5555_5555_5555);
        assert_eq!(div_f64(1.0, 3.0, Rp).to_bits(), 0x3FD5_5555_5555_5556);
        assert_eq!(div_f64(-1.0, 3.0, Rm).to_bits(), 0xBFD5_5555_5555_5556);
        assert_eq!(rcp_f64(3.0, Rp).to_bits(), 0x3FD5_5555_5555_5556);
        assert_eq!(bits(rcp_f32(3.0, Rz, false)), 0x3EAA_AAAA);
        // Subnormal quotient: 2^-149 / 2 ties to 0 (even) under .rn, up under .rp.
        let tiny = f32::from_bits(1);
        assert_eq!(bits(div_f32(tiny, 2.0, Rn, false)), 0);
        assert_eq!(bits(div_f32(tiny, 2.0, Rp, false)), 1);
        assert_eq!(bits(div_f32(3.0 * tiny, 2.0, Rn, false)), 2); // 1.5 -> 2 (even)
        assert_eq!(bits(div_f32(3.0 * tiny, 2.0, Rz, false)), 1);
    }

    #[test]
    fn approximate_division() {
        assert_eq!(div_approx_f32(1.0, 4.0), 0.25);
        assert_eq!(div_approx_f32(-6.0, 3.0), -2.0);
        // |b| in (2^126, 2^128): 0, or NaN for infinite a.
        assert_eq!(bits(div_approx_f32(1.0, p2(127))), 0);
        assert_eq!(bits(div_approx_f32(-1.0, p2(127))), 0x8000_0000);
        assert_eq!(
            bits(div_approx_f32(f32::INFINITY, p2(127))),
            CANONICAL_NAN_F32
        );
        assert_eq!(div_approx_f32(1.0, 0.0), f32::INFINITY);
        assert_eq!(div_approx_f32(-1.0, 0.0), f32::NEG_INFINITY);
        let q = div_approx_f32(1.0, 3.0);
        assert!((bits(q) as i64 - 0x3EAA_AAAB).abs() <= 2);
        assert_eq!(div_full_f32(1.0, 3.0), 1.0 / 3.0);
        // |b| = 2^126 is still in the accurate range [2^-126, 2^126] (within 2 ulp of the
        // quotient: 2^-126 = 0x0080_0000, 3 * 2^-126 = 1.5 * 2^-125 = 0x0140_0000; not 0).
        for (a, b, q) in [
            (1.0, p2(126), 0x0080_0000i64),
            (-3.0, -p2(126), 0x0140_0000),
        ] {
            let d = bits(div_approx_f32(a, b)) as i64;
            assert!((d - q).abs() <= 2, "{a} / {b}: {d:#x}");
        }
        // In (2^126, 2^128) the result is 0 with the sign of a * (1/b): (-1) * (-0) = +0.
        assert_eq!(bits(div_approx_f32(-1.0, -p2(127))), 0);
        assert_eq!(bits(div_approx_f32(1.0, -p2(127))), 0x8000_0000);
        assert_eq!(bits(div_full_f32(p2(-126), 4.0)), 0); // flushed
    }

    #[test]
    fn square_root() {
        // sqrt(2) lies between 0x3FB504F3 (below) and 0x3FB504F4.
        assert_eq!(bits(sqrt_f32(2.0, Rn, false)), 0x3FB5_04F3);
        assert_eq!(bits(sqrt_f32(2.0, Rz, false)), 0x3FB5_04F3);
        assert_eq!(bits(sqrt_f32(2.0, Rm, false)), 0x3FB5_04F3);
        assert_eq!(bits(sqrt_f32(2.0, Rp, false)), 0x3FB5_04F4);
        // sqrt(3) = 1.7320508075688772: f32 0x3FDDB3D7 = 1.73205077648162841796875 (below)
        assert_eq!(bits(sqrt_f32(3.0, Rn, false)), 0x3FDD_B3D7);
        assert_eq!(bits(sqrt_f32(3.0, Rp, false)), 0x3FDD_B3D8);
        for r in MODES {
            assert_eq!(sqrt_f32(4.0, r, false), 2.0);
            assert_eq!(sqrt_f64(0.25, r), 0.5);
            assert_eq!(bits(sqrt_f32(-0.0, r, false)), 0x8000_0000);
            assert_eq!(sqrt_f32(f32::INFINITY, r, false), f32::INFINITY);
            assert_eq!(bits(sqrt_f32(-1.0, r, false)), CANONICAL_NAN_F32);
            assert_eq!(sqrt_f64(-1.0, r).to_bits(), CANONICAL_NAN_F64);
        }
        // f64: nearest to sqrt(2) is 0x3FF6A09E667F3BCD, which is above the exact root.
        assert_eq!(sqrt_f64(2.0, Rn).to_bits(), 0x3FF6_A09E_667F_3BCD);
        assert_eq!(sqrt_f64(2.0, Rp).to_bits(), 0x3FF6_A09E_667F_3BCD);
        assert_eq!(sqrt_f64(2.0, Rz).to_bits(), 0x3FF6_A09E_667F_3BCC);
        assert_eq!(sqrt_f64(2.0, Rm).to_bits(), 0x3FF6_A09E_667F_3BCC);
        // Subnormal inputs (scaled path).
        assert_eq!(sqrt_f64(f64::from_bits(4), Rz), 2f64.powi(-536));
        assert_eq!(sqrt_f64(f64::from_bits(1), Rn), 2f64.powi(-537));
        assert_eq!(sqrt_approx_f32(16.0, false), 4.0);
    }

    #[test]
    fn nan_results() {
        let payload = f32::from_bits(0x7FC0_1234);
        assert_eq!(
            bits(add_f32(payload, 1.0, Rn, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(
            bits(mul_f32(1.0, payload, Rz, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(
            bits(add_f32(f32::INFINITY, f32::NEG_INFINITY, Rn, false, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(
            bits(fma_f32(1.0, 1.0, payload, Rp, false, false)),
            CANONICAL_NAN_F32
        );
        // f64 keeps the first NaN operand's payload, quieted.
        let snan = f64::from_bits(0x7FF0_0000_0000_0001);
        let qnan = f64::from_bits(0xFFF8_0000_0000_0042);
        assert_eq!(add_f64(snan, 1.0, Rn).to_bits(), 0x7FF8_0000_0000_0001);
        assert_eq!(add_f64(1.0, qnan, Rz).to_bits(), 0xFFF8_0000_0000_0042);
        assert_eq!(mul_f64(qnan, snan, Rn).to_bits(), 0xFFF8_0000_0000_0042);
        assert_eq!(fma_f64(1.0, 2.0, snan, Rm).to_bits(), 0x7FF8_0000_0000_0001);
        assert_eq!(
            sub_f64(f64::INFINITY, f64::INFINITY, Rn).to_bits(),
            CANONICAL_NAN_F64
        );
        assert_eq!(div_f64(0.0, 0.0, Rp).to_bits(), CANONICAL_NAN_F64);
        assert_eq!(mul_f64(0.0, f64::INFINITY, Rn).to_bits(), CANONICAL_NAN_F64);
        // abs.f64 passes a NaN through unchanged, sign included; neg is a sign flip.
        assert_eq!(
            abs_f64(f64::from_bits(0xFFF8_0000_0000_0042)).to_bits(),
            0xFFF8_0000_0000_0042
        );
        assert_eq!(
            abs_f64(f64::from_bits(0xFFF0_0000_0000_0001)).to_bits(),
            0xFFF0_0000_0000_0001
        );
        assert_eq!(abs_f64(f64::NEG_INFINITY).to_bits(), 0x7FF0_0000_0000_0000);
        assert_eq!(neg_f64(snan).to_bits(), 0xFFF0_0000_0000_0001);
        assert_eq!(abs_f32(-payload, false).to_bits(), 0x7FC0_1234);
        assert_eq!(abs_f32(-1.5, false), 1.5);
        assert_eq!(neg_f32(1.5, false), -1.5);
        assert_eq!(neg_f64(0.0).to_bits(), 0x8000_0000_0000_0000);
        // neg flips the sign bit both ways: negative inputs become positive.
        assert_eq!(neg_f32(-1.5, false), 1.5);
        assert_eq!(neg_f32(-0.0, false).to_bits(), 0);
        assert_eq!(neg_f64(-2.5), 2.5);
        assert_eq!(neg_f64(-0.0).to_bits(), 0);
    }

    #[test]
    fn min_max_rules() {
        let m = MinMax::default();
        assert_eq!(min_f32(f32::NAN, 1.0, m), 1.0);
        assert_eq!(min_f32(1.0, f32::NAN, m), 1.0);
        assert_eq!(max_f32(f32::NAN, -1.0, m), -1.0);
        assert_eq!(bits(min_f32(f32::NAN, f32::NAN, m)), CANONICAL_NAN_F32);
        let nm = MinMax { nan: true, ..m };
        assert_eq!(bits(min_f32(f32::NAN, 1.0, nm)), CANONICAL_NAN_F32);
        assert_eq!(bits(max_f32(2.0, f32::NAN, nm)), CANONICAL_NAN_F32);
        assert_eq!(max_f32(2.0, 3.0, nm), 3.0);
        // -0 < +0 in either order.
        assert_eq!(bits(min_f32(0.0, -0.0, m)), 0x8000_0000);
        assert_eq!(bits(min_f32(-0.0, 0.0, m)), 0x8000_0000);
        assert_eq!(bits(max_f32(-0.0, 0.0, m)), 0);
        assert_eq!(bits(max_f32(0.0, -0.0, m)), 0);
        assert_eq!(min_f32(-1.0, f32::NEG_INFINITY, m), f32::NEG_INFINITY);
        assert_eq!(max_f32(f32::INFINITY, 1.0, m), f32::INFINITY);
        // .xorsign.abs: magnitude from |a|,|b|; sign = sign(a) ^ sign(b).
        let xa = MinMax {
            xorsign_abs: true,
            ..m
        };
        assert_eq!(min_f32(-2.0, 3.0, xa), -2.0);
        assert_eq!(max_f32(-2.0, 3.0, xa), -3.0);
        assert_eq!(max_f32(-2.0, -3.0, xa), 3.0);
        assert_eq!(min_f32(2.0, 3.0, xa), 2.0);
        assert_eq!(max_f32(-2.0, f32::NAN, xa), -2.0); // NaN ignored, sign: 1 ^ 0
        assert_eq!(bits(max_f32(f32::NAN, f32::NAN, xa)), CANONICAL_NAN_F32);
        // .ftz flushes inputs: subnormal vs -0.
        let tiny = f32::from_bits(1);
        assert_eq!(min_f32(tiny, 0.0, m), 0.0);
        assert_eq!(
            bits(min_f32(tiny, -0.0, MinMax { ftz: true, ..m })),
            0x8000_0000
        );
        assert_eq!(bits(max_f32(-tiny, 0.0, MinMax { ftz: true, ..m })), 0);
        // f64
        assert_eq!(min_f64(f64::NAN, 2.0), 2.0);
        assert_eq!(max_f64(1.0, f64::NAN), 1.0);
        assert_eq!(min_f64(f64::NAN, f64::NAN).to_bits(), CANONICAL_NAN_F64);
        assert_eq!(min_f64(0.0, -0.0).to_bits(), 0x8000_0000_0000_0000);
        assert_eq!(max_f64(-0.0, 0.0).to_bits(), 0);
        assert_eq!(max_f64(-5.0, -7.0), -5.0);
    }

    #[test]
    fn copysign_operand_order() {
        // copysign d, a, b: sign of a, magnitude of b.
        assert_eq!(copysign_f32(-1.0, 2.0), -2.0);
        assert_eq!(copysign_f32(1.0, -2.0), 2.0);
        assert_eq!(copysign_f64(-0.0, 3.0), -3.0);
        assert_eq!(copysign_f64(1.0, f64::NEG_INFINITY), f64::INFINITY);
    }

    #[test]
    fn testp_properties() {
        use TestOp::*;
        let sub = f32::from_bits(5);
        let cases: [(f32, [bool; 6]); 7] = [
            // finite infinite number notanumber normal subnormal
            (1.0, [true, false, true, false, true, false]),
            (0.0, [true, false, true, false, true, false]),
            (-0.0, [true, false, true, false, true, false]),
            (sub, [true, false, true, false, false, true]),
            (f32::INFINITY, [false, true, true, false, false, false]),
            (f32::NEG_INFINITY, [false, true, true, false, false, false]),
            (f32::NAN, [false, false, false, true, false, false]),
        ];
        let ops = [Finite, Infinite, Number, NotANumber, Normal, Subnormal];
        for (x, want) in cases {
            for (op, w) in ops.iter().zip(want) {
                assert_eq!(testp_f32(*op, x), w, "{op:?} {x}");
                // A subnormal f32 is a normal f64, so only check f64 on the others.
                if x != sub {
                    assert_eq!(testp_f64(*op, x as f64), w, "{op:?} {x} f64");
                }
            }
        }
        assert!(testp_f64(Subnormal, f64::from_bits(1)));
        assert!(!testp_f64(Normal, f64::from_bits(1)));
    }

    #[test]
    fn approximate_functions() {
        // Special values from the ISA's tables.
        assert_eq!(rcp_approx_f32(0.0, false), f32::INFINITY);
        assert_eq!(rcp_approx_f32(-0.0, false), f32::NEG_INFINITY);
        assert_eq!(bits(rcp_approx_f32(f32::NEG_INFINITY, false)), 0x8000_0000);
        assert_eq!(rcp_approx_f32(f32::from_bits(1), true), f32::INFINITY);
        assert_eq!(rcp_approx_f32(4.0, false), 0.25);
        assert_eq!(bits(sqrt_approx_f32(-0.0, false)), 0x8000_0000);
        assert_eq!(bits(sqrt_approx_f32(-f32::from_bits(1), true)), 0x8000_0000);
        assert_eq!(rsqrt_approx_f32(4.0, false), 0.5);
        assert_eq!(rsqrt_approx_f32(0.0, false), f32::INFINITY);
        assert_eq!(rsqrt_approx_f32(-0.0, false), f32::NEG_INFINITY);
        assert_eq!(bits(rsqrt_approx_f32(f32::INFINITY, false)), 0);
        assert_eq!(bits(rsqrt_approx_f32(-1.0, false)), CANONICAL_NAN_F32);
        assert_eq!(
            bits(sin_approx_f32(f32::INFINITY, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(bits(sin_approx_f32(-0.0, false)), 0x8000_0000);
        assert_eq!(cos_approx_f32(0.0, false), 1.0);
        assert_eq!(
            bits(cos_approx_f32(f32::NEG_INFINITY, false)),
            CANONICAL_NAN_F32
        );
        assert_eq!(lg2_approx_f32(0.0, false), f32::NEG_INFINITY);
        assert_eq!(lg2_approx_f32(-0.0, false), f32::NEG_INFINITY);
        assert_eq!(lg2_approx_f32(f32::from_bits(1), true), f32::NEG_INFINITY);
        assert_eq!(lg2_approx_f32(f32::from_bits(1), false), -149.0);
        assert_eq!(lg2_approx_f32(f32::INFINITY, false), f32::INFINITY);
        assert_eq!(bits(lg2_approx_f32(-1.0, false)), CANONICAL_NAN_F32);
        assert_eq!(lg2_approx_f32(8.0, false), 3.0);
        assert_eq!(ex2_approx_f32(f32::NEG_INFINITY, false), 0.0);
        assert_eq!(ex2_approx_f32(-0.0, false), 1.0);
        assert_eq!(ex2_approx_f32(f32::from_bits(1), true), 1.0);
        assert_eq!(ex2_approx_f32(10.0, false), 1024.0);
        assert_eq!(ex2_approx_f32(-149.0, false), f32::from_bits(1));
        assert_eq!(bits(ex2_approx_f32(-149.0, true)), 0);
        assert_eq!(ex2_approx_f32(200.0, false), f32::INFINITY);
        assert_eq!(tanh_approx_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_approx_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh_approx_f32(f32::from_bits(3)), f32::from_bits(3));
        assert_eq!(bits(tanh_approx_f32(-0.0)), 0x8000_0000);
        // Accuracy against the ISA bounds on a sweep of the primary ranges.
        let mut r = Rng(0xA5A5_5A5A_1234_5678);
        for _ in 0..2000 {
            let x = (r.next() >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
            let s = sin_approx_f32(x * 1.5, false) as f64;
            assert!((s - ((x * 1.5) as f64).sin()).abs() <= 2f64.powf(-20.9));
            let e = ex2_approx_f32(x, false) as f64;
            assert!((e - (x as f64).exp2()).abs() <= 2f64.powf(-22.5));
            let l = lg2_approx_f32(1.0 + x, false) as f64;
            assert!((l - (1.0 + x as f64).log2()).abs() <= 2f64.powf(-22.6));
            let q = rsqrt_approx_f32(1.0 + 3.0 * x, false) as f64;
            assert!((q - 1.0 / (1.0 + 3.0 * x as f64).sqrt()).abs() <= 2f64.powf(-22.4));
            let c = rcp_approx_f32(1.0 + x, false) as f64;
            assert!((c - 1.0 / (1.0 + x as f64)).abs() <= 2f64.powi(-23));
        }
    }

    #[test]
    fn approximate_ftz_f64_forms() {
        // rcp.approx.ftz.f64 works on the upper word only and zeroes the lower word.
        let r = rcp_approx_ftz_f64(3.0);
        assert_eq!(r.to_bits() & 0xFFFF_FFFF, 0);
        assert!((r - 1.0 / 3.0).abs() < 2f64.powi(-21));
        assert_eq!(rcp_approx_ftz_f64(2.0), 0.5);
        // Low word of the input is ignored: 2.0 + tiny still reads as 2.0.
        assert_eq!(
            rcp_approx_ftz_f64(f64::from_bits(0x4000_0000_FFFF_FFFF)),
            0.5
        );
        assert_eq!(
            rcp_approx_ftz_f64(f64::NAN).to_bits(),
            0x7FFF_FFFF_0000_0000
        );
        assert_eq!(rcp_approx_ftz_f64(0.0), f64::INFINITY);
        assert_eq!(
            rcp_approx_ftz_f64(-f64::from_bits(1 << 40)),
            f64::NEG_INFINITY
        ); // subnormal
        assert_eq!(
            rcp_approx_ftz_f64(f64::NEG_INFINITY).to_bits(),
            0x8000_0000_0000_0000
        );
        assert_eq!(rsqrt_approx_ftz_f64(4.0), 0.5);
        assert_eq!(rsqrt_approx_ftz_f64(-1.0).to_bits(), 0x7FFF_FFFF_0000_0000);
        assert_eq!(rsqrt_approx_ftz_f64(0.0), f64::INFINITY);
        assert_eq!(rsqrt_approx_ftz_f64(f64::INFINITY), 0.0);
        assert_eq!(rsqrt_approx_f64(0.25), 2.0);
        assert_eq!(rsqrt_approx_f64(-4.0).to_bits(), CANONICAL_NAN_F64);
    }

    /// Directed-rounding f32 add/mul/fma/div/sqrt against exact integer arithmetic rounded by
    /// `fp::round_pack` (independent of the APFloat path used for the directed modes).
    #[test]
    fn f32_sweep_against_exact_arithmetic() {
        let mut r = Rng(0x0DDB_1A5E_5BAD_5EED);
        for i in 0..6000 {
            // Mostly normal values close in exponent, sometimes subnormal/huge.
            let (lo, hi) = if i % 5 == 0 { (0, 254) } else { (110, 140) };
            let a = r.f32_in(lo, hi);
            let b = r.f32_in(lo, hi);
            let c = r.f32_in(lo, hi);
            let pa = parts(fp::F32, bits(a) as u64);
            let pb = parts(fp::F32, bits(b) as u64);
            let pc = parts(fp::F32, bits(c) as u64);
            for rnd in MODES {
                // add
                if let Some((neg, m, e)) = exact_sum(pa, pb) {
                    if m != 0 {
                        let want = fp::round_pack(fp::F32, neg, m, e, false, rnd).bits as u32;
                        assert_eq!(
                            bits(add_f32(a, b, rnd, false, false)),
                            want,
                            "add {a:e} {b:e} {rnd:?}"
                        );
                    }
                }
                // mul: the product of significands is exact in u128.
                let want =
                    fp::round_pack(fp::F32, pa.0 ^ pb.0, pa.1 * pb.1, pa.2 + pb.2, false, rnd).bits
                        as u32;
                assert_eq!(
                    bits(mul_f32(a, b, rnd, false, false)),
                    want,
                    "mul {a:e} {b:e} {rnd:?}"
                );
                // fma
                let prod = (pa.0 ^ pb.0, pa.1 * pb.1, pa.2 + pb.2);
                if let Some((neg, m, e)) = exact_sum(prod, pc) {
                    if m != 0 {
                        let want = fp::round_pack(fp::F32, neg, m, e, false, rnd).bits as u32;
                        assert_eq!(
                            bits(fma_f32(a, b, c, rnd, false, false)),
                            want,
                            "fma {a:e} {b:e} {c:e} {rnd:?}"
                        );
                    }
                }
                // div: long division with a sticky remainder.
                let num = pa.1 << 64;
                let (q, rem) = (num / pb.1, num % pb.1);
                let want = fp::round_pack(fp::F32, pa.0 ^ pb.0, q, pa.2 - pb.2 - 64, rem != 0, rnd)
                    .bits as u32;
                assert_eq!(
                    bits(div_f32(a, b, rnd, false)),
                    want,
                    "div {a:e} {b:e} {rnd:?}"
                );
                // sqrt of |a|
                let want = sqrt_model(fp::F32, pa.1, pa.2, rnd) as u32;
                assert_eq!(
                    bits(sqrt_f32(a.abs(), rnd, false)),
                    want,
                    "sqrt {a:e} {rnd:?}"
                );
            }
        }
    }

    /// The same for f64 (normal operands), with u128/i128 exact arithmetic.
    #[test]
    fn f64_sweep_against_exact_arithmetic() {
        let mut r = Rng(0xFEED_FACE_CAFE_BEEF);
        for i in 0..4000 {
            let (lo, hi) = if i % 5 == 0 { (1, 2046) } else { (1000, 1050) };
            let a = r.f64_in(lo, hi);
            let b = r.f64_in(lo, hi);
            let pa = parts(fp::F64, a.to_bits());
            let pb = parts(fp::F64, b.to_bits());
            for rnd in MODES {
                if let Some((neg, m, e)) = exact_sum(pa, pb) {
                    if m != 0 && m >> 126 == 0 {
                        let want = fp::round_pack(fp::F64, neg, m, e, false, rnd).bits;
                        assert_eq!(
                            add_f64(a, b, rnd).to_bits(),
                            want,
                            "add {a:e} {b:e} {rnd:?}"
                        );
                    }
                }
                let want =
                    fp::round_pack(fp::F64, pa.0 ^ pb.0, pa.1 * pb.1, pa.2 + pb.2, false, rnd).bits;
                assert_eq!(
                    mul_f64(a, b, rnd).to_bits(),
                    want,
                    "mul {a:e} {b:e} {rnd:?}"
                );
                let num = pa.1 << 74;
                let (q, rem) = (num / pb.1, num % pb.1);
                let want =
                    fp::round_pack(fp::F64, pa.0 ^ pb.0, q, pa.2 - pb.2 - 74, rem != 0, rnd).bits;
                assert_eq!(
                    div_f64(a, b, rnd).to_bits(),
                    want,
                    "div {a:e} {b:e} {rnd:?}"
                );
                let want = sqrt_model(fp::F64, pa.1, pa.2, rnd);
                assert_eq!(sqrt_f64(a.abs(), rnd).to_bits(), want, "sqrt {a:e} {rnd:?}");
            }
        }
        // Subnormal f64 square roots in every mode.
        for k in [1u64, 2, 3, 5, 0x000F_FFFF_FFFF_FFFF, 12345] {
            let a = f64::from_bits(k);
            for rnd in MODES {
                let want = sqrt_model(fp::F64, k as u128, -1074, rnd);
                assert_eq!(sqrt_f64(a, rnd).to_bits(), want, "sqrt {k} {rnd:?}");
            }
        }
    }

    /// `.rn` must be exactly the host's IEEE arithmetic (canonical NaN aside).
    #[test]
    fn rn_is_host_arithmetic() {
        let mut r = Rng(0x1234_5678_9ABC_DEF1);
        for _ in 0..20000 {
            let x = r.next();
            let (a, b, c) = (
                f32::from_bits(x as u32),
                f32::from_bits((x >> 32) as u32),
                f32::from_bits(r.next() as u32),
            );
            let canon = |v: f32| {
                if v.is_nan() {
                    CANONICAL_NAN_F32
                } else {
                    bits(v)
                }
            };
            assert_eq!(bits(add_f32(a, b, Rn, false, false)), canon(a + b));
            assert_eq!(bits(mul_f32(a, b, Rn, false, false)), canon(a * b));
            assert_eq!(bits(div_f32(a, b, Rn, false)), canon(a / b));
            assert_eq!(
                bits(fma_f32(a, b, c, Rn, false, false)),
                canon(a.mul_add(b, c))
            );
            assert_eq!(bits(sqrt_f32(a, Rn, false)), canon(a.sqrt()));
        }
    }

    #[test]
    fn f32x2_lanes_round_independently() {
        // element 0: 1 + 1.5*2^-24 (above half an ulp), element 1: -(1 + 1.5*2^-24)
        let a = 0xBF80_0000_3F80_0000u64;
        let b = 0xB3C0_0000_33C0_0000u64;
        assert_eq!(add_f32x2(a, b, Rn, false), 0xBF80_0001_3F80_0001);
        assert_eq!(add_f32x2(a, b, Rz, false), 0xBF80_0000_3F80_0000);
        assert_eq!(add_f32x2(a, b, Rm, false), 0xBF80_0001_3F80_0000);
        assert_eq!(add_f32x2(a, b, Rp, false), 0xBF80_0000_3F80_0001);
        assert_eq!(sub_f32x2(a, a, Rn, false), 0);
        assert_eq!(sub_f32x2(a, a, Rm, false), 0x8000_0000_8000_0000);
        // MAX * 2 overflows in element 1 only: inf under .rn, MAX under .rz
        let (x, y) = (0x7F7F_FFFF_4040_0000u64, 0x4000_0000_4000_0000u64);
        assert_eq!(mul_f32x2(x, y, Rn, false), 0x7F80_0000_40C0_0000);
        assert_eq!(mul_f32x2(x, y, Rz, false), 0x7F7F_FFFF_40C0_0000);
        // .ftz: 2^-126 * 0.5 = 2^-127 kept, or flushed (sign kept)
        let (s, h) = (0x8080_0000_0080_0000u64, 0x3F00_0000_3F00_0000u64);
        assert_eq!(mul_f32x2(s, h, Rn, false), 0x8040_0000_0040_0000);
        assert_eq!(mul_f32x2(s, h, Rn, true), 0x8000_0000_0000_0000);
        // fma: (1+2^-23)(1-2^-24) - 1 = 2^-24 - 2^-47 exactly; inf * 0 + 1 = NaN
        let fa = 0x7F80_0000_3F80_0001u64;
        let fb = 0x0000_0000_3F7F_FFFFu64;
        let fc = 0x3F80_0000_BF80_0000u64;
        assert_eq!(fma_f32x2(fa, fb, fc, Rz, false), 0x7FFF_FFFF_337F_FFFE);
    }

    #[test]
    fn minmax_three_inputs() {
        let m = MinMax::default();
        let nan = f32::from_bits(0x7FC0_0000);
        assert_eq!(max3_f32(1.0, 3.0, 2.0, m, false), 3.0);
        assert_eq!(min3_f32(1.0, 3.0, 2.0, m, false), 1.0);
        assert_eq!(max3_f32(nan, 2.0, nan, m, false), 2.0);
        assert!(min3_f32(nan, nan, nan, m, false).is_nan());
        let with_nan = MinMax { nan: true, ..m };
        assert_eq!(
            max3_f32(nan, 2.0, 3.0, with_nan, false).to_bits(),
            CANONICAL_NAN_F32
        );
        assert_eq!(min3_f32(0.0, -0.0, 0.0, m, false).to_bits(), 0x8000_0000);
        // .abs: |-5| is the largest, |-3| the smallest of {5, 3, 4}
        assert_eq!(max3_f32(-5.0, 3.0, 4.0, m, true), 5.0);
        assert_eq!(min3_f32(-5.0, -3.0, 4.0, m, true), 3.0);
        let ftz = MinMax { ftz: true, ..m };
        assert_eq!(
            min3_f32(f32::from_bits(1), 1.0, 2.0, ftz, false).to_bits(),
            0
        );
        assert_eq!(min3_f32(f32::from_bits(1), 1.0, 2.0, m, false).to_bits(), 1);
    }

    #[test]
    fn mixed_precision_widens_exactly() {
        // f16 2^-24 (subnormal) + 1: a tie at half an f32 ulp of 1
        assert_eq!(add_mixed_f32(0x0001, false, 1.0, Rn, false), 1.0);
        assert_eq!(
            add_mixed_f32(0x0001, false, 1.0, Rp, false).to_bits(),
            0x3F80_0001
        );
        // (1 + 2^-10) + 2^24: f32 ulp 2 there; .rn rounds up, .rz down
        assert_eq!(
            add_mixed_f32(0x3C01, false, p2(24), Rn, false),
            p2(24) + 2.0
        );
        assert_eq!(add_mixed_f32(0x3C01, false, p2(24), Rz, false), p2(24));
        // bf16 -1 - 2^-30: .rz keeps -1, .rm gives the next below
        assert_eq!(sub_mixed_f32(0xBF80, true, p2(-30), Rz, false), -1.0);
        assert_eq!(
            sub_mixed_f32(0xBF80, true, p2(-30), Rm, false).to_bits(),
            0xBF80_0001
        );
        assert_eq!(add_mixed_f32(0x3C00, false, 0.5, Rn, true), 1.0);
        // (1+2^-10)^2 - 1 = 2^-9 + 2^-20 exactly (the product is not rounded to f16)
        assert_eq!(
            fma_mixed_f32(0x3C01, 0x3C01, false, -1.0, Rn, false),
            p2(-9) + p2(-20)
        );
        assert_eq!(fma_mixed_f32(0x4000, 0x4000, true, -1.0, Rn, true), 1.0);
        assert_eq!(
            widen_half(0x7E00, false).to_bits() & 0x7F80_0000,
            0x7F80_0000
        );
    }
}
