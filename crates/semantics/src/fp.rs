//! The soft-float core shared by [`super::float`], [`super::half`] and [`super::cvt`]: binary
//! interchange formats described as data, exact decoding into sign/significand/exponent, and one
//! correctly rounded packing routine that honours every [`Rounding`] mode, subnormals and overflow.
//!
//! Any finite value of any PTX float format is exactly `(-1)^neg * mant * 2^exp` with an integer
//! `mant`; an exact intermediate result (a product, a quotient with a sticky remainder, an
//! integer) is rounded into a destination format exactly once by [`round_pack`].

use super::Rounding;

/// A binary floating-point format: exponent width, stored fraction width, and whether the
/// all-ones exponent encodes infinities (IEEE) or only the single NaN pattern (`.e4m3`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Format {
    /// Width of the exponent field in bits.
    pub exp_bits: u32,
    /// Width of the stored fraction (trailing significand) in bits.
    pub frac_bits: u32,
    /// `false` for OCP `E4M3` ("FN"): no infinities; exponent all-ones with fraction all-ones is
    /// NaN, every other all-ones-exponent pattern is a normal number.
    pub has_inf: bool,
}

/// IEEE binary64 (`.f64`).
pub const F64: Format = Format {
    exp_bits: 11,
    frac_bits: 52,
    has_inf: true,
};
/// IEEE binary32 (`.f32`).
pub const F32: Format = Format {
    exp_bits: 8,
    frac_bits: 23,
    has_inf: true,
};
/// IEEE binary16 (`.f16`).
pub const F16: Format = Format {
    exp_bits: 5,
    frac_bits: 10,
    has_inf: true,
};
/// bfloat16 (`.bf16`): binary32's exponent range with 7 fraction bits.
pub const BF16: Format = Format {
    exp_bits: 8,
    frac_bits: 7,
    has_inf: true,
};
/// TensorFloat-32 (`.tf32`) as a 19-bit value: binary32's exponent with 10 fraction bits. In a
/// register it is a `.b32` whose low 13 bits are zero (see [`super::cvt`]).
pub const TF32: Format = Format {
    exp_bits: 8,
    frac_bits: 10,
    has_inf: true,
};
/// OCP FP8 `E5M2` (`.e5m2`): IEEE-like, with infinities.
pub const E5M2: Format = Format {
    exp_bits: 5,
    frac_bits: 2,
    has_inf: true,
};
/// OCP FP8 `E4M3` (`.e4m3`): no infinities, largest finite value 448, NaN is `S.1111.111`.
pub const E4M3: Format = Format {
    exp_bits: 4,
    frac_bits: 3,
    has_inf: false,
};

impl Format {
    /// Total width in bits (sign + exponent + fraction).
    #[inline]
    pub const fn bits(self) -> u32 {
        1 + self.exp_bits + self.frac_bits
    }
    /// Exponent bias.
    #[inline]
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    /// The sign bit.
    #[inline]
    pub const fn sign_mask(self) -> u64 {
        1 << (self.exp_bits + self.frac_bits)
    }
    /// Largest biased exponent of a finite number.
    #[inline]
    const fn max_biased(self) -> i32 {
        if self.has_inf {
            (1 << self.exp_bits) - 2
        } else {
            (1 << self.exp_bits) - 1
        }
    }
    /// Bits of the largest finite positive value.
    #[inline]
    pub const fn max_finite(self) -> u64 {
        let frac = if self.has_inf {
            (1 << self.frac_bits) - 1
        } else {
            (1 << self.frac_bits) - 2
        };
        ((self.max_biased() as u64) << self.frac_bits) | frac
    }
    /// Bits of positive infinity (of the NaN pattern for formats without infinities).
    #[inline]
    pub const fn infinity(self) -> u64 {
        if self.has_inf {
            ((1 << self.exp_bits) - 1) << self.frac_bits
        } else {
            self.canonical_nan()
        }
    }
    /// The canonical NaN: sign clear, exponent and fraction all ones (`0x7FFF_FFFF`, `0x7FFF`,
    /// `0x7F`), which is what NVIDIA hardware produces for single and narrower formats.
    #[inline]
    pub const fn canonical_nan(self) -> u64 {
        self.sign_mask() - 1
    }
    /// Whether `bits` encode a NaN.
    #[inline]
    pub const fn is_nan(self, bits: u64) -> bool {
        let mag = bits & (self.sign_mask() - 1);
        if self.has_inf {
            mag > self.infinity()
        } else {
            mag == self.canonical_nan()
        }
    }
    /// Whether `bits` encode a subnormal (nonzero with a zero exponent field).
    #[inline]
    pub const fn is_subnormal(self, bits: u64) -> bool {
        let mag = bits & (self.sign_mask() - 1);
        mag != 0 && mag < (1 << self.frac_bits)
    }
    /// Sign-preserving flush of a subnormal to zero (`.ftz`); other values pass unchanged.
    #[inline]
    pub const fn flush(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            bits & self.sign_mask()
        } else {
            bits
        }
    }
}

/// An exactly decoded floating-point value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Signed zero (`true` = negative).
    Zero(bool),
    /// A nonzero finite value `(-1)^neg * mant * 2^exp`.
    Finite {
        /// Sign (`true` = negative).
        neg: bool,
        /// Integer significand, nonzero.
        mant: u64,
        /// Power of two scaling `mant`.
        exp: i32,
    },
    /// Signed infinity.
    Inf(bool),
    /// Any NaN.
    NaN,
}

/// Decode the low `fmt.bits()` bits of `bits` as a value of format `fmt`.
#[inline]
pub fn decode(fmt: Format, bits: u64) -> Decoded {
    let neg = bits & fmt.sign_mask() != 0;
    let biased = ((bits >> fmt.frac_bits) & ((1 << fmt.exp_bits) - 1)) as i32;
    let frac = bits & ((1 << fmt.frac_bits) - 1);
    if fmt.is_nan(bits) {
        return Decoded::NaN;
    }
    if fmt.has_inf && biased == (1 << fmt.exp_bits) - 1 {
        return Decoded::Inf(neg);
    }
    let min_exp = 1 - fmt.bias() - fmt.frac_bits as i32;
    if biased == 0 {
        if frac == 0 {
            Decoded::Zero(neg)
        } else {
            Decoded::Finite {
                neg,
                mant: frac,
                exp: min_exp,
            }
        }
    } else {
        Decoded::Finite {
            neg,
            mant: frac | (1 << fmt.frac_bits),
            exp: min_exp + biased - 1,
        }
    }
}

/// The outcome of [`round_pack`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    /// The encoded result (infinity or, per rounding mode, the largest finite value on overflow;
    /// for formats without infinities an overflow to "infinity" gives the NaN pattern).
    pub bits: u64,
    /// The magnitude was rounded beyond the largest finite value (before the overflow rule).
    pub overflow: bool,
    /// The result differs from the exact value.
    pub inexact: bool,
}

/// Round the exact value `(-1)^neg * (mant + t) * 2^exp`, where `t = 0` if `!sticky` and
/// `0 < t < 1` otherwise, into `fmt` with rounding `rnd`, exactly as IEEE 754 prescribes
/// (gradual underflow, overflow to infinity or the largest finite value per direction).
///
/// When `sticky` is set, `mant` must carry at least `fmt.frac_bits + 3` significant bits so that
/// the unknown tail lies strictly below the rounding position.
#[inline]
pub fn round_pack(
    fmt: Format,
    neg: bool,
    mant: u128,
    exp: i32,
    sticky: bool,
    rnd: Rounding,
) -> Packed {
    let sign = if neg { fmt.sign_mask() } else { 0 };
    if mant == 0 {
        // Callers never pass a bare tail; treat it as zero.
        return Packed {
            bits: sign,
            overflow: false,
            inexact: sticky,
        };
    }
    // Normalise so that bit 126 is the leading one: every rounding position is then at least one
    // bit above the least significant bit, and the tail stays below it.
    let (mant, exp, sticky) = if mant >> 127 != 0 {
        // Keep bit 127 free: fold the dropped bit into the sticky tail.
        (mant >> 1, exp + 1, sticky || mant & 1 != 0)
    } else {
        (mant, exp, sticky)
    };
    let lz = mant.leading_zeros() as i32;
    let mant = mant << (lz - 1);
    let exp = exp - (lz - 1);
    let top = exp + 126; // value in [2^top, 2^(top+1))
    let frac_bits = fmt.frac_bits as i32;
    let emin = 1 - fmt.bias();
    let q = if top < emin {
        emin - frac_bits
    } else {
        top - frac_bits
    };
    let shift = q - exp; // >= 126 - frac_bits > 0
    let (mut r, rem, half) = if shift >= 128 {
        (0u128, mant, false)
    } else {
        let r = mant >> shift;
        let rem = mant & ((1u128 << shift) - 1);
        let halfway = 1u128 << (shift - 1);
        (r, rem, rem >= halfway)
    };
    let above_half = if shift >= 128 {
        false
    } else {
        rem > (1u128 << (shift - 1)) || (half && sticky)
    };
    let exact_half = half && !above_half;
    let inexact = rem != 0 || sticky;
    let up = match rnd {
        Rounding::Rn => above_half || (exact_half && r & 1 == 1),
        Rounding::Rna => half,
        Rounding::Rz => false,
        Rounding::Rp => inexact && !neg,
        Rounding::Rm => inexact && neg,
    };
    r += up as u128;
    let mut q = q;
    if r >> (frac_bits + 1) != 0 {
        r >>= 1;
        q += 1;
    }
    if r >> frac_bits == 0 {
        // Subnormal (or zero after rounding down): biased exponent 0.
        return Packed {
            bits: sign | r as u64,
            overflow: false,
            inexact,
        };
    }
    let biased = q + frac_bits + fmt.bias();
    let frac = (r as u64) & ((1 << fmt.frac_bits) - 1);
    let bits_mag = ((biased as u64) << fmt.frac_bits) | frac;
    if biased > fmt.max_biased() || bits_mag > fmt.max_finite() {
        let to_max = match rnd {
            Rounding::Rn | Rounding::Rna => false,
            Rounding::Rz => true,
            Rounding::Rp => neg,
            Rounding::Rm => !neg,
        };
        let mag = if to_max {
            fmt.max_finite()
        } else {
            fmt.infinity()
        };
        return Packed {
            bits: sign | mag,
            overflow: true,
            inexact: true,
        };
    }
    Packed {
        bits: sign | bits_mag,
        overflow: false,
        inexact,
    }
}

/// Convert the value `bits` of format `from` into format `to` with rounding `rnd`. NaN becomes
/// `to`'s canonical NaN; on overflow `satfinite` selects the signed largest finite value instead
/// of the directed-rounding result (which the ISA's `.satfinite` asks for), and `.e4m3` always
/// saturates that way when `satfinite` is set.
#[inline]
pub fn convert(from: Format, to: Format, bits: u64, rnd: Rounding, satfinite: bool) -> u64 {
    match decode(from, bits) {
        Decoded::NaN => to.canonical_nan(),
        Decoded::Zero(neg) => {
            if neg {
                to.sign_mask()
            } else {
                0
            }
        }
        Decoded::Inf(neg) => {
            let sign = if neg { to.sign_mask() } else { 0 };
            if satfinite {
                sign | to.max_finite()
            } else {
                sign | to.infinity()
            }
        }
        Decoded::Finite { neg, mant, exp } => {
            let p = round_pack(to, neg, mant as u128, exp, false, rnd);
            if p.overflow && satfinite {
                (p.bits & to.sign_mask()) | to.max_finite()
            } else {
                p.bits
            }
        }
    }
}

/// `f64` view of any format's value; exact for every format narrower than `.f64`.
#[inline]
pub fn to_f64(fmt: Format, bits: u64) -> f64 {
    f64::from_bits(convert_wide(fmt, bits))
}

/// Exact widening of `bits` in `fmt` to `.f64` bits (NaN becomes the canonical `.f64` NaN).
#[inline]
fn convert_wide(fmt: Format, bits: u64) -> u64 {
    if fmt == F64 {
        return bits;
    }
    match decode(fmt, bits) {
        Decoded::NaN => 0x7FFF_FFFF_FFFF_FFFF,
        _ => convert(fmt, F64, bits, Rounding::Rn, false),
    }
}

/// Round an `f64` into `fmt` with `rnd` (no saturation). Into `.f64` itself this is the
/// identity on the bits, NaN payloads (and signalling NaNs) included: immediates such as
/// `0d7FF0000000000001` are bit patterns, not values to be canonicalised.
#[inline]
pub fn from_f64(fmt: Format, x: f64, rnd: Rounding) -> u64 {
    if fmt == F64 {
        return x.to_bits();
    }
    convert(F64, fmt, x.to_bits(), rnd, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_constants() {
        assert_eq!(F32.max_finite(), 0x7F7F_FFFF);
        assert_eq!(F16.max_finite(), 0x7BFF);
        assert_eq!(BF16.max_finite(), 0x7F7F);
        assert_eq!(E4M3.max_finite(), 0x7E);
        assert_eq!(E5M2.max_finite(), 0x7B);
        assert_eq!(E4M3.canonical_nan(), 0x7F);
        assert_eq!(F16.infinity(), 0x7C00);
        assert_eq!(F32.canonical_nan(), 0x7FFF_FFFF);
        assert!(E4M3.is_nan(0xFF));
        assert!(!E4M3.is_nan(0x78)); // 256.0 is a number in E4M3
        assert!(F16.is_subnormal(0x8001));
        assert!(!F16.is_subnormal(0x0400));
    }

    #[test]
    fn decode_values() {
        // 448 = 1.75 * 2^8 is the largest E4M3 value.
        assert_eq!(to_f64(E4M3, 0x7E), 448.0);
        assert_eq!(to_f64(E5M2, 0x7B), 57344.0);
        assert_eq!(to_f64(F16, 0x0001), 2f64.powi(-24));
        assert_eq!(to_f64(E4M3, 0x01), 2f64.powi(-9));
        assert_eq!(to_f64(E5M2, 0x01), 2f64.powi(-16));
        assert_eq!(to_f64(BF16, 0x3F80), 1.0);
        assert_eq!(to_f64(F32, 0x0000_0001), 2f64.powi(-149));
        assert!(to_f64(F16, 0x7E00).is_nan());
        assert_eq!(to_f64(F16, 0xFC00), f64::NEG_INFINITY);
    }

    #[test]
    fn round_pack_modes() {
        // 1 + 2^-11 is halfway between two f16 values (ulp 2^-10): ties to even gives 1.0.
        let m = (1u128 << 11) + 1;
        assert_eq!(
            round_pack(F16, false, m, -11, false, Rounding::Rn).bits,
            0x3C00
        );
        assert_eq!(
            round_pack(F16, false, m, -11, false, Rounding::Rna).bits,
            0x3C01
        );
        assert_eq!(
            round_pack(F16, false, m, -11, false, Rounding::Rp).bits,
            0x3C01
        );
        assert_eq!(
            round_pack(F16, false, m, -11, false, Rounding::Rz).bits,
            0x3C00
        );
        assert_eq!(
            round_pack(F16, true, m, -11, false, Rounding::Rm).bits,
            0xBC01
        );
        assert_eq!(
            round_pack(F16, true, m, -11, false, Rounding::Rp).bits,
            0xBC00
        );
        // A sticky tail pushes a tie up under .rn.
        assert_eq!(
            round_pack(F16, false, m << 2, -13, true, Rounding::Rn).bits,
            0x3C01
        );
        // 1 + 3*2^-11 is a tie between odd 0x3C01 and even 0x3C02.
        assert_eq!(
            round_pack(F16, false, (1 << 11) + 3, -11, false, Rounding::Rn).bits,
            0x3C02
        );
        // Overflow: 65520 rounds to inf in .rn, to max finite in .rz.
        let p = round_pack(F16, false, 65520, 0, false, Rounding::Rn);
        assert_eq!((p.bits, p.overflow), (0x7C00, true));
        assert_eq!(
            round_pack(F16, false, 65520, 0, false, Rounding::Rz).bits,
            0x7BFF
        );
        assert_eq!(
            round_pack(F16, false, 65519, 0, false, Rounding::Rn).bits,
            0x7BFF
        );
        assert_eq!(
            round_pack(F16, true, 70000, 0, false, Rounding::Rp).bits,
            0xFBFF
        );
        assert_eq!(
            round_pack(F16, true, 70000, 0, false, Rounding::Rm).bits,
            0xFC00
        );
        // Subnormal: 3 * 2^-26 = 0.75 of the f16 min subnormal.
        assert_eq!(
            round_pack(F16, false, 3, -26, false, Rounding::Rn).bits,
            0x0001
        );
        assert_eq!(
            round_pack(F16, false, 1, -25, false, Rounding::Rn).bits,
            0x0000
        );
        assert_eq!(
            round_pack(F16, false, 1, -25, false, Rounding::Rp).bits,
            0x0001
        );
        assert_eq!(
            round_pack(F16, true, 1, -200, false, Rounding::Rm).bits,
            0x8001
        );
        // Rounding up out of the subnormal range gives the smallest normal.
        assert_eq!(
            round_pack(F16, false, 0x3FF * 2 + 1, -25, false, Rounding::Rn).bits,
            0x0400
        );
        // E4M3: 464 is a tie between 448 (fraction 110, even) and 480 (111, the NaN pattern):
        // ties-to-even keeps 448; anything above 464 overflows.
        assert_eq!(
            round_pack(E4M3, false, 464, 0, false, Rounding::Rn).bits,
            0x7E
        );
        assert!(round_pack(E4M3, false, 465, 0, false, Rounding::Rn).overflow);
        assert!(round_pack(E4M3, false, 449, 0, false, Rounding::Rp).overflow);
        assert_eq!(
            round_pack(E4M3, false, 479, 0, false, Rounding::Rz).bits,
            0x7E
        );
        assert_eq!(
            round_pack(E4M3, false, 256, 0, false, Rounding::Rn).bits,
            0x78
        );
    }

    #[test]
    fn round_pack_full_width_mantissa() {
        // 2^127 + 1 (128 significant bits) scaled to ~1.0: just above 1.0.
        let m = (1u128 << 127) | 1;
        assert_eq!(
            round_pack(F32, false, m, -127, false, Rounding::Rn).bits,
            0x3F80_0000
        );
        assert_eq!(
            round_pack(F32, false, m, -127, false, Rounding::Rp).bits,
            0x3F80_0001
        );
        assert_eq!(
            round_pack(F32, true, u128::MAX, -128, false, Rounding::Rz).bits,
            0xBF7F_FFFF
        );
        assert_eq!(
            round_pack(F32, true, u128::MAX, -128, false, Rounding::Rn).bits,
            0xBF80_0000
        );
    }

    #[test]
    fn round_pack_matches_host_f32_conversion() {
        // Host `as f32` rounds f64 to nearest-even; compare on a deterministic sweep.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Keep the exponent in the f32 range and around it.
            let e = ((x >> 52) % 320) + 1023 - 170;
            let v = f64::from_bits((x & 0x800F_FFFF_FFFF_FFFF) | (e << 52));
            let got = from_f64(F32, v, Rounding::Rn) as u32;
            assert_eq!(got, (v as f32).to_bits(), "{v:e}");
        }
    }

    #[test]
    fn from_f64_into_f64_keeps_nan_bits() {
        for bits in [
            0x7FF8_0000_0000_0123u64,
            0x7FF0_0000_0000_0001,
            0xFFF8_0000_0000_0000,
        ] {
            assert_eq!(from_f64(F64, f64::from_bits(bits), Rounding::Rn), bits);
        }
        assert_eq!(from_f64(F64, -0.0, Rounding::Rz), 0x8000_0000_0000_0000);
        // into narrower formats a NaN is still the canonical NaN
        assert_eq!(
            from_f64(F32, f64::from_bits(0x7FF8_0000_0000_0123), Rounding::Rn),
            0x7FFF_FFFF
        );
    }
}
