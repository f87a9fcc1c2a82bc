//! Half-precision instructions on `.f16`, `.bf16` and the packed `.f16x2`, `.bf16x2` (ISA chapter
//! "Half Precision Floating-Point Instructions"). Values are raw bits: a `u16` per scalar, a
//! `u32` per pair with element 0 in bits 15..0 and element 1 in bits 31..16.
//!
//! Arithmetic is `.rn` only (the ISA allows no other mode here) and correctly rounded:
//! * `.f16` sums and products, and `.bf16` products, are exact in `f64` (an `.f16` sum is a
//!   multiple of `2^-24` below `2^17`; products have at most 22 significant bits), so rounding
//!   the host `f64` result once to the format is the exact IEEE result;
//! * `.f16` fma is computed exactly in `i128` (every term is a multiple of `2^-48` below `2^33`)
//!   and rounded once;
//! * `.bf16` sums and fma go through the `rustc_apfloat` soft-float, rounding once.
//!
//! NaN results are the canonical NaN `0x7FFF`. `.ftz` (`.f16` only) flushes subnormal inputs and
//! results; `.sat` clamps to `[+0, 1]` with NaN giving `+0`; `.relu` turns negative results
//! (including `-0`) into `+0` and keeps NaN as the canonical NaN; `.oob` gives `+0` when an
//! operand is the tensor out-of-bounds NaN, which we take to be [`OOB_NAN`] (`0x7FFF`).

use rustc_apfloat::ieee::BFloat;
use rustc_apfloat::Float as _;

use super::float::{minmax_bits, MinMax};
use super::fp::{self, Format, BF16, F16};
use super::Rounding;

/// The canonical 16-bit NaN.
pub const CANONICAL_NAN: u16 = 0x7FFF;
/// The out-of-bounds NaN that `.oob` tests for (the canonical NaN pattern).
pub const OOB_NAN: u16 = 0x7FFF;

/// Modifiers of half-precision `add`/`sub`/`mul`/`fma`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HalfMods {
    /// `.ftz` (`.f16` only): flush subnormal inputs and results.
    pub ftz: bool,
    /// `.sat` (`.f16` only): clamp to `[0, 1]`, NaN to `+0`.
    pub sat: bool,
    /// `.relu` (`fma`): negative results become `+0`, NaN stays NaN.
    pub relu: bool,
    /// `.oob` (`fma`): a [`OOB_NAN`] operand forces `+0`.
    pub oob: bool,
}

#[inline]
fn flush(fmt: Format, x: u16, ftz: bool) -> u16 {
    if ftz {
        fmt.flush(x as u64) as u16
    } else {
        x
    }
}

/// Canonical NaN, `.ftz`, then `.sat` / `.relu` on a rounded result.
#[inline]
fn finish(fmt: Format, r: u16, m: HalfMods) -> u16 {
    if fmt.is_nan(r as u64) {
        return if m.sat { 0 } else { CANONICAL_NAN };
    }
    let r = flush(fmt, r, m.ftz);
    let neg = r & 0x8000 != 0;
    if m.relu && neg {
        return 0;
    }
    if m.sat {
        let one = fp::from_f64(fmt, 1.0, Rounding::Rn) as u16;
        if neg {
            0
        } else if fp::to_f64(fmt, r as u64) > 1.0 {
            one
        } else {
            r
        }
    } else {
        r
    }
}

#[inline]
fn val(fmt: Format, x: u16) -> f64 {
    fp::to_f64(fmt, x as u64)
}

#[inline]
fn round(fmt: Format, x: f64) -> u16 {
    fp::from_f64(fmt, x, Rounding::Rn) as u16
}

/// `add{.rn}{.ftz}{.sat}.f16`.
#[inline]
pub fn add_f16(a: u16, b: u16, m: HalfMods) -> u16 {
    let (a, b) = (flush(F16, a, m.ftz), flush(F16, b, m.ftz));
    finish(F16, round(F16, val(F16, a) + val(F16, b)), m)
}

/// `sub{.rn}{.ftz}{.sat}.f16`.
#[inline]
pub fn sub_f16(a: u16, b: u16, m: HalfMods) -> u16 {
    add_f16(a, b ^ 0x8000, m)
}

/// `mul{.rn}{.ftz}{.sat}.f16`.
#[inline]
pub fn mul_f16(a: u16, b: u16, m: HalfMods) -> u16 {
    let (a, b) = (flush(F16, a, m.ftz), flush(F16, b, m.ftz));
    finish(F16, round(F16, val(F16, a) * val(F16, b)), m)
}

/// `.f16` value as an exact integer multiple of `2^-24` (finite inputs only).
#[inline]
fn f16_units(x: u16) -> i128 {
    let mag = (x & 0x7FFF) as i128;
    let (exp, frac) = (mag >> 10, mag & 0x3FF);
    let m = if exp == 0 {
        frac
    } else {
        (frac | 0x400) << (exp - 1)
    };
    if x & 0x8000 != 0 {
        -m
    } else {
        m
    }
}

/// `fma.rn{.ftz}{.sat|.relu}{.oob}.f16`: `a * b + c` exact, rounded once.
#[inline]
pub fn fma_f16(a: u16, b: u16, c: u16, m: HalfMods) -> u16 {
    if m.oob && (a == OOB_NAN || b == OOB_NAN || c == OOB_NAN) {
        return 0;
    }
    let (a, b, c) = (
        flush(F16, a, m.ftz),
        flush(F16, b, m.ftz),
        flush(F16, c, m.ftz),
    );
    let finite = |x: u16| x & 0x7C00 != 0x7C00;
    let r = if finite(a) && finite(b) && finite(c) {
        // Exact: a*b in units of 2^-48, c scaled to the same units.
        let s = f16_units(a) * f16_units(b) + (f16_units(c) << 24);
        if s == 0 {
            // Exact zero: IEEE sign rule (-0 only if both addends are -0).
            let prod_neg = (a ^ b) & 0x8000 != 0;
            let c_neg = c & 0x8000 != 0;
            if prod_neg && c_neg {
                0x8000
            } else {
                0
            }
        } else {
            fp::round_pack(F16, s < 0, s.unsigned_abs(), -48, false, Rounding::Rn).bits as u16
        }
    } else {
        // Infinities and NaNs: the f64 fma gives the right special value.
        round(F16, val(F16, a).mul_add(val(F16, b), val(F16, c)))
    };
    finish(F16, r, m)
}

#[inline]
fn ap_bf16(x: u16) -> BFloat {
    BFloat::from_bits(x as u128)
}

/// `add{.rn}.bf16`.
#[inline]
pub fn add_bf16(a: u16, b: u16) -> u16 {
    let r = ap_bf16(a)
        .add_r(ap_bf16(b), rustc_apfloat::Round::NearestTiesToEven)
        .value;
    finish(BF16, r.to_bits() as u16, HalfMods::default())
}

/// `sub{.rn}.bf16`.
#[inline]
pub fn sub_bf16(a: u16, b: u16) -> u16 {
    add_bf16(a, b ^ 0x8000)
}

/// `mul{.rn}.bf16`.
#[inline]
pub fn mul_bf16(a: u16, b: u16) -> u16 {
    finish(
        BF16,
        round(BF16, val(BF16, a) * val(BF16, b)),
        HalfMods::default(),
    )
}

/// `fma.rn{.relu}{.oob}.bf16`: `a * b + c` exact, rounded once (`.ftz`/`.sat` are ignored).
#[inline]
pub fn fma_bf16(a: u16, b: u16, c: u16, m: HalfMods) -> u16 {
    if m.oob && (a == OOB_NAN || b == OOB_NAN || c == OOB_NAN) {
        return 0;
    }
    let r = ap_bf16(a)
        .mul_add_r(
            ap_bf16(b),
            ap_bf16(c),
            rustc_apfloat::Round::NearestTiesToEven,
        )
        .value;
    finish(
        BF16,
        r.to_bits() as u16,
        HalfMods {
            ftz: false,
            sat: false,
            ..m
        },
    )
}

/// Apply a scalar operation to both halves of packed operands.
#[inline]
pub fn x2(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    (f((a >> 16) as u16, (b >> 16) as u16) as u32) << 16 | f(a as u16, b as u16) as u32
}

/// Apply a ternary scalar operation to both halves of packed operands.
#[inline]
pub fn x2_3(a: u32, b: u32, c: u32, f: impl Fn(u16, u16, u16) -> u16) -> u32 {
    let hi = f((a >> 16) as u16, (b >> 16) as u16, (c >> 16) as u16);
    (hi as u32) << 16 | f(a as u16, b as u16, c as u16) as u32
}

/// `add{.rn}{.ftz}{.sat}.f16x2`.
#[inline]
pub fn add_f16x2(a: u32, b: u32, m: HalfMods) -> u32 {
    x2(a, b, |x, y| add_f16(x, y, m))
}

/// `sub{.rn}{.ftz}{.sat}.f16x2`.
#[inline]
pub fn sub_f16x2(a: u32, b: u32, m: HalfMods) -> u32 {
    x2(a, b, |x, y| sub_f16(x, y, m))
}

/// `mul{.rn}{.ftz}{.sat}.f16x2`.
#[inline]
pub fn mul_f16x2(a: u32, b: u32, m: HalfMods) -> u32 {
    x2(a, b, |x, y| mul_f16(x, y, m))
}

/// `fma.rn{.ftz}{.sat|.relu}{.oob}.f16x2`.
#[inline]
pub fn fma_f16x2(a: u32, b: u32, c: u32, m: HalfMods) -> u32 {
    x2_3(a, b, c, |x, y, z| fma_f16(x, y, z, m))
}

/// `add{.rn}.bf16x2`.
#[inline]
pub fn add_bf16x2(a: u32, b: u32) -> u32 {
    x2(a, b, add_bf16)
}

/// `sub{.rn}.bf16x2`.
#[inline]
pub fn sub_bf16x2(a: u32, b: u32) -> u32 {
    x2(a, b, sub_bf16)
}

/// `mul{.rn}.bf16x2`.
#[inline]
pub fn mul_bf16x2(a: u32, b: u32) -> u32 {
    x2(a, b, mul_bf16)
}

/// `fma.rn{.relu}{.oob}.bf16x2`.
#[inline]
pub fn fma_bf16x2(a: u32, b: u32, c: u32, m: HalfMods) -> u32 {
    x2_3(a, b, c, |x, y, z| fma_bf16(x, y, z, m))
}

#[inline]
fn minmax16(fmt: Format, a: u16, b: u16, m: MinMax, want_max: bool) -> u16 {
    let (a, b) = (flush(fmt, a, m.ftz), flush(fmt, b, m.ftz));
    let r = minmax_bits(
        fmt,
        a as u64,
        b as u64,
        |x, y| fp::to_f64(fmt, x) < fp::to_f64(fmt, y),
        m,
        want_max,
    );
    flush(fmt, r as u16, m.ftz)
}

/// `min{.ftz}{.NaN}{.xorsign.abs}.f16`: NaN rules and `-0 < +0` as for `.f32`.
#[inline]
pub fn min_f16(a: u16, b: u16, m: MinMax) -> u16 {
    minmax16(F16, a, b, m, false)
}

/// `max{.ftz}{.NaN}{.xorsign.abs}.f16`.
#[inline]
pub fn max_f16(a: u16, b: u16, m: MinMax) -> u16 {
    minmax16(F16, a, b, m, true)
}

/// `min{.NaN}{.xorsign.abs}.bf16` (`.ftz` is not allowed and ignored).
#[inline]
pub fn min_bf16(a: u16, b: u16, m: MinMax) -> u16 {
    minmax16(BF16, a, b, MinMax { ftz: false, ..m }, false)
}

/// `max{.NaN}{.xorsign.abs}.bf16`.
#[inline]
pub fn max_bf16(a: u16, b: u16, m: MinMax) -> u16 {
    minmax16(BF16, a, b, MinMax { ftz: false, ..m }, true)
}

/// `min...f16x2`: [`min_f16`] on each half.
#[inline]
pub fn min_f16x2(a: u32, b: u32, m: MinMax) -> u32 {
    x2(a, b, |x, y| min_f16(x, y, m))
}

/// `max...f16x2`: [`max_f16`] on each half.
#[inline]
pub fn max_f16x2(a: u32, b: u32, m: MinMax) -> u32 {
    x2(a, b, |x, y| max_f16(x, y, m))
}

/// `min...bf16x2`: [`min_bf16`] on each half.
#[inline]
pub fn min_bf16x2(a: u32, b: u32, m: MinMax) -> u32 {
    x2(a, b, |x, y| min_bf16(x, y, m))
}

/// `max...bf16x2`: [`max_bf16`] on each half.
#[inline]
pub fn max_bf16x2(a: u32, b: u32, m: MinMax) -> u32 {
    x2(a, b, |x, y| max_bf16(x, y, m))
}

/// `abs{.ftz}.f16` / `abs.bf16` (pass `ftz = false`): clear the sign bit, NaN payload kept.
#[inline]
pub fn abs16(a: u16, ftz: bool) -> u16 {
    flush(F16, a, ftz) & 0x7FFF
}

/// `neg{.ftz}.f16` / `neg.bf16` (pass `ftz = false`): flip the sign bit.
#[inline]
pub fn neg16(a: u16, ftz: bool) -> u16 {
    flush(F16, a, ftz) ^ 0x8000
}

/// `abs{.ftz}.{f16x2,bf16x2}` on both halves.
#[inline]
pub fn abs16x2(a: u32, ftz: bool) -> u32 {
    x2(a, 0, |x, _| abs16(x, ftz))
}

/// `neg{.ftz}.{f16x2,bf16x2}` on both halves.
#[inline]
pub fn neg16x2(a: u32, ftz: bool) -> u32 {
    x2(a, 0, |x, _| neg16(x, ftz))
}

/// `ex2.approx.f16` (`bf16 = false`) / `ex2.approx.ftz.bf16`: `2^a` computed in `f64` and
/// rounded once (well inside the ISA's relative error bounds `2^-9.9` / `2^-7`). The `.bf16`
/// form flushes subnormal inputs and results, as its `.ftz` says.
#[inline]
pub fn ex2_approx(a: u16, bf16: bool) -> u16 {
    let fmt = if bf16 { BF16 } else { F16 };
    let a = flush(fmt, a, bf16);
    let r = round(fmt, val(fmt, a).exp2());
    finish(
        fmt,
        r,
        HalfMods {
            ftz: bf16,
            ..HalfMods::default()
        },
    )
}

/// `tanh.approx.{f16,bf16}`: computed in `f64` and rounded once (ISA bounds `2^-10.987` /
/// `2^-8` absolute); `±inf → ±1`, signed zeros kept.
#[inline]
pub fn tanh_approx(a: u16, bf16: bool) -> u16 {
    let fmt = if bf16 { BF16 } else { F16 };
    finish(fmt, round(fmt, val(fmt, a).tanh()), HalfMods::default())
}

/// `ex2.approx{.ftz}.{f16x2,bf16x2}` on both halves.
#[inline]
pub fn ex2_approx_x2(a: u32, bf16: bool) -> u32 {
    x2(a, 0, |x, _| ex2_approx(x, bf16))
}

/// `tanh.approx.{f16x2,bf16x2}` on both halves.
#[inline]
pub fn tanh_approx_x2(a: u32, bf16: bool) -> u32 {
    x2(a, 0, |x, _| tanh_approx(x, bf16))
}

/// Reference: `.f16` fma through the APFloat soft-float (used by the tests as an independent
/// model of [`fma_f16`]'s integer path).
#[cfg(test)]
fn fma_f16_apfloat(a: u16, b: u16, c: u16) -> u16 {
    use rustc_apfloat::ieee::Half;
    let h = |x: u16| Half::from_bits(x as u128);
    let r = h(a)
        .mul_add_r(h(b), h(c), rustc_apfloat::Round::NearestTiesToEven)
        .value;
    let bits = r.to_bits() as u16;
    if F16.is_nan(bits as u64) {
        CANONICAL_NAN
    } else {
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_apfloat::ieee::Half;

    const ONE: u16 = 0x3C00;
    const TWO: u16 = 0x4000;
    const NONE: HalfMods = HalfMods {
        ftz: false,
        sat: false,
        relu: false,
        oob: false,
    };

    #[test]
    fn f16_add_rounding() {
        assert_eq!(add_f16(ONE, ONE, NONE), TWO);
        // 1 + 2^-11 (0x0C00... is 2^-11? 2^-11 = 0x1000) is a tie -> 1.0 (even).
        assert_eq!(add_f16(ONE, 0x1000, NONE), ONE);
        // 1 + 3*2^-11 would need 0x1200 (1.5 * 2^-10): 1 + 1.5*2^-10 -> tie between 1+2^-10
        // (odd 0x3C01) and 1+2^-9 (0x3C02): even wins.
        assert_eq!(add_f16(ONE, 0x1600, NONE), 0x3C02);
        // 65504 + 16 = 65520 rounds to inf.
        assert_eq!(add_f16(0x7BFF, 0x4C00, NONE), 0x7C00);
        assert_eq!(add_f16(0x7BFF, 0x4C00, HalfMods { sat: true, ..NONE }), ONE);
        // inf - inf -> canonical NaN; with .sat -> +0.
        assert_eq!(add_f16(0x7C00, 0xFC00, NONE), CANONICAL_NAN);
        assert_eq!(add_f16(0x7C00, 0xFC00, HalfMods { sat: true, ..NONE }), 0);
        // x + (-x) = +0 under .rn
        assert_eq!(sub_f16(ONE, ONE, NONE), 0);
        assert_eq!(add_f16(0x8000, 0x8000, NONE), 0x8000);
        // Subnormals: 2^-24 + 2^-24 = 2^-23, flushed inputs with .ftz.
        assert_eq!(add_f16(0x0001, 0x0001, NONE), 0x0002);
        assert_eq!(add_f16(0x0001, 0x0001, HalfMods { ftz: true, ..NONE }), 0);
        assert_eq!(sub_f16(0x0400, 0x0001, NONE), 0x03FF);
        assert_eq!(
            sub_f16(0x0400, 0x0001, HalfMods { ftz: true, ..NONE }),
            0x0400
        );
        assert_eq!(sub_f16(0x0401, 0x0400, HalfMods { ftz: true, ..NONE }), 0);
        assert_eq!(sub_f16(0x0401, 0x0400, NONE), 0x0001);
    }

    #[test]
    fn f16_mul_sat_relu() {
        assert_eq!(mul_f16(TWO, TWO, NONE), 0x4400);
        assert_eq!(mul_f16(TWO, TWO, HalfMods { sat: true, ..NONE }), ONE);
        assert_eq!(mul_f16(0xC000, TWO, HalfMods { sat: true, ..NONE }), 0);
        assert_eq!(
            mul_f16(0x3800, 0x3800, HalfMods { sat: true, ..NONE }),
            0x3400
        ); // 0.25
           // 2^-14 * 2^-1 = 2^-15: subnormal 0x0200; flushed with .ftz (sign kept).
        assert_eq!(mul_f16(0x0400, 0x3800, NONE), 0x0200);
        assert_eq!(
            mul_f16(0x8400, 0x3800, HalfMods { ftz: true, ..NONE }),
            0x8000
        );
        assert_eq!(mul_f16(0x0000, 0x7C00, NONE), CANONICAL_NAN);
    }

    #[test]
    fn f16_fma_single_rounding() {
        // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20; minus 1 gives 2^-9 + 2^-20 exactly representable?
        // 2^-9 + 2^-20: 11 bits span -> 0x1801 (2^-9 * (1 + 2^-11))? needs 12 bits -> rounds.
        let a = 0x3C01; // 1 + 2^-10
        let r = fma_f16(a, a, 0xBC00, NONE);
        // exact 2^-9 + 2^-20 = 2^-9 (1 + 2^-11): tie between 2^-9 and 2^-9(1+2^-10) -> even
        assert_eq!(r, 0x1800);
        // mul then add rounds twice: (1+2^-10)^2 -> 1 + 2^-9 (0x3C02), minus 1 -> 2^-9.
        assert_eq!(sub_f16(mul_f16(a, a, NONE), ONE, NONE), 0x1800);
        // A case where the fused result differs: (1+2^-10)(1-2^-11) - 1 = 2^-10 - 2^-11 - 2^-21.
        let b = 0x3BFF; // 1 - 2^-11
        let fused = fma_f16(a, b, 0xBC00, NONE);
        let exact = (1.0 + 2f64.powi(-10)) * (1.0 - 2f64.powi(-11)) - 1.0;
        assert_eq!(fp::to_f64(F16, fused as u64), exact); // 2^-11 - 2^-21 fits in 11 bits
        let unfused = sub_f16(mul_f16(a, b, NONE), ONE, NONE);
        assert_ne!(fused, unfused);
        assert_eq!(fma_f16(0x8000, ONE, 0x8000, NONE), 0x8000);
        assert_eq!(fma_f16(0x8000, ONE, 0x0000, NONE), 0x0000);
        assert_eq!(fma_f16(0x7C00, 0, ONE, NONE), CANONICAL_NAN);
        assert_eq!(fma_f16(0x7C00, ONE, ONE, NONE), 0x7C00);
    }

    #[test]
    fn f16_fma_relu_oob() {
        let relu = HalfMods { relu: true, ..NONE };
        assert_eq!(fma_f16(0xBC00, ONE, 0x0000, relu), 0); // -1 -> 0
        assert_eq!(fma_f16(ONE, ONE, ONE, relu), TWO);
        assert_eq!(fma_f16(0x7C00, 0, ONE, relu), CANONICAL_NAN);
        let oob = HalfMods { oob: true, ..NONE };
        assert_eq!(fma_f16(OOB_NAN, ONE, ONE, oob), 0);
        assert_eq!(fma_f16(ONE, ONE, OOB_NAN, oob), 0);
        assert_eq!(fma_f16(OOB_NAN, ONE, ONE, NONE), CANONICAL_NAN);
        // A different NaN is not the OOB value.
        assert_eq!(fma_f16(0x7E00, ONE, ONE, oob), CANONICAL_NAN);
        assert_eq!(fma_bf16(OOB_NAN, 0x3F80, 0x3F80, oob), 0);
        assert_eq!(fma_bf16(0xBF80, 0x3F80, 0, relu), 0);
    }

    #[test]
    fn f16_fma_matches_apfloat() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for i in 0..60000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (mut a, mut b, mut c) = (x as u16, (x >> 16) as u16, (x >> 32) as u16);
            if i % 3 == 0 {
                // Bring the exponents close so cancellation and ties are common.
                a = (a & 0x83FF) | 0x3800;
                b = (b & 0x83FF) | 0x3C00;
                c = (c & 0x83FF) | 0x3800 | ((x >> 48) as u16 & 0x0400);
            }
            let got = fma_f16(a, b, c, NONE);
            assert_eq!(got, fma_f16_apfloat(a, b, c), "{a:#x} {b:#x} {c:#x}");
        }
    }

    #[test]
    fn f16_add_mul_match_apfloat() {
        let h = |x: u16| Half::from_bits(x as u128);
        let canon = |x: u16| {
            if F16.is_nan(x as u64) {
                CANONICAL_NAN
            } else {
                x
            }
        };
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..60000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, b) = (x as u16, (x >> 16) as u16);
            let add = h(a)
                .add_r(h(b), rustc_apfloat::Round::NearestTiesToEven)
                .value
                .to_bits() as u16;
            let mul = h(a)
                .mul_r(h(b), rustc_apfloat::Round::NearestTiesToEven)
                .value
                .to_bits() as u16;
            assert_eq!(add_f16(a, b, NONE), canon(add), "{a:#x}+{b:#x}");
            assert_eq!(mul_f16(a, b, NONE), canon(mul), "{a:#x}*{b:#x}");
            // bf16 products via f64 must match the soft-float too.
            let bf = |x: u16| BFloat::from_bits(x as u128);
            let bmul = bf(a)
                .mul_r(bf(b), rustc_apfloat::Round::NearestTiesToEven)
                .value
                .to_bits() as u16;
            let bmul = if BF16.is_nan(bmul as u64) {
                CANONICAL_NAN
            } else {
                bmul
            };
            assert_eq!(mul_bf16(a, b), bmul, "{a:#x}*{b:#x} bf16");
        }
    }

    #[test]
    fn bf16_arith() {
        // 1 + 2^-8 is a tie in bf16 (ulp 2^-7) -> 1.0; 1 + 3*2^-8 -> 1 + 2^-6.
        assert_eq!(add_bf16(0x3F80, 0x3B80), 0x3F80);
        assert_eq!(add_bf16(0x3F80, 0x3C40), 0x3F82);
        assert_eq!(mul_bf16(0x4000, 0x4040), 0x40C0); // 2 * 3 = 6
        assert_eq!(sub_bf16(0x3F80, 0x3F80), 0);
        assert_eq!(add_bf16(0x7F80, 0xFF80), CANONICAL_NAN);
        // Overflow: max bf16 (0x7F7F) * 2 -> inf.
        assert_eq!(mul_bf16(0x7F7F, 0x4000), 0x7F80);
        // fma single rounding: (1+2^-7)^2 - 1 = 2^-6 + 2^-14 exactly representable in bf16? 2^-6(1+2^-8) -> tie -> 2^-6
        assert_eq!(fma_bf16(0x3F81, 0x3F81, 0xBF80, NONE), 0x3C80);
        // bf16 subnormals are supported: min subnormal 0x0001 = 2^-133.
        assert_eq!(add_bf16(0x0001, 0x0001), 0x0002);
        assert_eq!(add_bf16x2(0x3F80_0001, 0x3F80_0001), 0x4000_0002);
        assert_eq!(mul_bf16x2(0x4000_4000, 0x4040_3F80), 0x40C0_4000);
        assert_eq!(sub_bf16x2(0x4000_4000, 0x3F80_3F80), 0x3F80_3F80);
        assert_eq!(
            fma_bf16x2(0x4000_3F80, 0x4000_3F80, 0x3F80_3F80, NONE),
            0x40A0_4000
        );
    }

    #[test]
    fn packed_halves_are_independent() {
        let a = (TWO as u32) << 16 | ONE as u32;
        assert_eq!(add_f16x2(a, a, NONE), 0x4400_4000);
        assert_eq!(sub_f16x2(a, a, NONE), 0);
        assert_eq!(mul_f16x2(a, a, HalfMods { sat: true, ..NONE }), 0x3C00_3C00);
        assert_eq!(fma_f16x2(a, a, a, NONE), 0x4600_4000); // 2*2+2 = 6, 1*1+1 = 2
                                                           // NaN in one half does not touch the other.
        assert_eq!(add_f16x2(0x7E00_3C00, 0x3C00_3C00, NONE), 0x7FFF_4000);
    }

    #[test]
    fn half_min_max() {
        let m = MinMax::default();
        assert_eq!(min_f16(ONE, TWO, m), ONE);
        assert_eq!(max_f16(ONE, TWO, m), TWO);
        assert_eq!(min_f16(0x7E00, TWO, m), TWO);
        assert_eq!(max_f16(ONE, 0x7E00, m), ONE);
        assert_eq!(min_f16(0x7E00, 0x7E01, m), CANONICAL_NAN);
        assert_eq!(
            min_f16(0x7E00, TWO, MinMax { nan: true, ..m }),
            CANONICAL_NAN
        );
        assert_eq!(min_f16(0x8000, 0x0000, m), 0x8000);
        assert_eq!(max_f16(0x8000, 0x0000, m), 0x0000);
        // xorsign.abs: |-1| vs |2| -> min magnitude 1, sign = 1 ^ 0 -> -1.
        let xa = MinMax {
            xorsign_abs: true,
            ..m
        };
        assert_eq!(min_f16(0xBC00, TWO, xa), 0xBC00);
        assert_eq!(max_f16(0xBC00, TWO, xa), 0xC000);
        assert_eq!(max_f16(0xBC00, 0xC000, xa), 0x4000);
        assert_eq!(min_f16(0x0001, 0x0002, MinMax { ftz: true, ..m }), 0);
        assert_eq!(min_bf16(0x3F80, 0xBF80, m), 0xBF80);
        assert_eq!(max_bf16(0x7FC0, 0xBF80, m), 0xBF80);
        assert_eq!(
            max_bf16(0x7FC0, 0xBF80, MinMax { nan: true, ..m }),
            CANONICAL_NAN
        );
        assert_eq!(min_f16x2(0x4000_3C00, 0x3C00_4000, m), 0x3C00_3C00);
        assert_eq!(max_f16x2(0x4000_3C00, 0x3C00_4000, m), 0x4000_4000);
        assert_eq!(min_bf16x2(0x3F80_BF80, 0xBF80_3F80, m), 0xBF80_BF80);
        assert_eq!(max_bf16x2(0x3F80_BF80, 0xBF80_3F80, m), 0x3F80_3F80);
    }

    #[test]
    fn half_abs_neg() {
        assert_eq!(abs16(0xBC00, false), 0x3C00);
        assert_eq!(neg16(0x3C00, false), 0xBC00);
        assert_eq!(abs16(0xFE00, false), 0x7E00); // NaN payload kept
        assert_eq!(abs16(0x8001, true), 0);
        assert_eq!(neg16(0x0001, true), 0x8000);
        assert_eq!(neg16(0x0001, false), 0x8001);
        assert_eq!(abs16x2(0xBC00_C000, false), 0x3C00_4000);
        assert_eq!(neg16x2(0x3C00_0000, false), 0xBC00_8000);
    }

    #[test]
    fn half_approx() {
        assert_eq!(ex2_approx(0x0000, false), ONE);
        assert_eq!(ex2_approx(0x8000, false), ONE);
        assert_eq!(ex2_approx(0xFC00, false), 0);
        assert_eq!(ex2_approx(0x7C00, false), 0x7C00);
        assert_eq!(ex2_approx(0x4200, false), 0x4800); // 2^3 = 8
        assert_eq!(ex2_approx(0x7E00, false), CANONICAL_NAN);
        assert_eq!(ex2_approx(0xCE00, false), 0x0001); // 2^-24 is the smallest subnormal
        assert_eq!(ex2_approx(0x3F80, true), 0x4000); // bf16 2^1 = 2
        assert_eq!(ex2_approx(0xC300, true), 0x0000); // bf16 2^-128 subnormal -> flushed
        assert_eq!(tanh_approx(0x7C00, false), ONE);
        assert_eq!(tanh_approx(0xFC00, false), 0xBC00);
        assert_eq!(tanh_approx(0x8000, false), 0x8000);
        assert_eq!(tanh_approx(0x0001, false), 0x0001);
        assert_eq!(tanh_approx(0xFF80, true), 0xBF80);
        assert_eq!(ex2_approx_x2(0x4200_0000, false), 0x4800_3C00);
        assert_eq!(tanh_approx_x2(0x7C00_8000, false), 0x3C00_8000);
    }
}
