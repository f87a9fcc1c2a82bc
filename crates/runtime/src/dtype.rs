//! [`Dtype`]: the element type of a host buffer, with the numeric conversions of its values.
//!
//! One enum for every tool that moves typed data between the host and a kernel: `ptxvm run`'s
//! `DTYPE[N]` argument specs and `.npy` files, the printing of buffers, and the run tests'
//! expected values. Its float conversions are exact or correctly rounded (ties to even) and come
//! from one place each: the widening of `.f16`/`.bf16` and the rounding of an `f64` into them from
//! the instruction semantics (`ptx-semantics`, what `cvt` does), the parsing of decimal text from
//! `rustc_apfloat` (which rounds the exact decimal value once, where going through `f64` would
//! round twice).

use ptx_isa::ScalarType;
use ptx_semantics::fp::{self, Format};
use ptx_semantics::Rounding;
use rustc_apfloat::ieee::{BFloat, Half};
use rustc_apfloat::{Float, Round};
use std::borrow::Cow;

/// Element type of a host buffer (`ptxvm run`'s `DTYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// 8-bit unsigned integer.
    U8,
    /// 8-bit signed integer.
    I8,
    /// 16-bit unsigned integer.
    U16,
    /// 16-bit signed integer.
    I16,
    /// 32-bit unsigned integer.
    U32,
    /// 32-bit signed integer.
    I32,
    /// 64-bit unsigned integer.
    U64,
    /// 64-bit signed integer.
    I64,
    /// IEEE 754 binary16.
    F16,
    /// bfloat16 (the top half of an `f32`).
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl Dtype {
    /// Every dtype, in the order `ptxvm run`'s documentation lists them.
    pub const ALL: [Dtype; 12] = [
        Dtype::U8,
        Dtype::I8,
        Dtype::U16,
        Dtype::I16,
        Dtype::U32,
        Dtype::I32,
        Dtype::U64,
        Dtype::I64,
        Dtype::F16,
        Dtype::BF16,
        Dtype::F32,
        Dtype::F64,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::F16 | Dtype::BF16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::U64 | Dtype::I64 | Dtype::F64 => 8,
        }
    }

    /// The name used in specs: `u8`, `bf16`, `f32`, …
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::U64 => "u64",
            Dtype::I64 => "i64",
            Dtype::F16 => "f16",
            Dtype::BF16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    /// The dtype of a spec name (`f32`), if it is one.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The PTX type of an element (`.s8` for `i8`, `.bf16` for `bf16`).
    pub fn scalar_type(self) -> ScalarType {
        match self {
            Dtype::U8 => ScalarType::U8,
            Dtype::I8 => ScalarType::S8,
            Dtype::U16 => ScalarType::U16,
            Dtype::I16 => ScalarType::S16,
            Dtype::U32 => ScalarType::U32,
            Dtype::I32 => ScalarType::S32,
            Dtype::U64 => ScalarType::U64,
            Dtype::I64 => ScalarType::S64,
            Dtype::F16 => ScalarType::F16,
            Dtype::BF16 => ScalarType::Bf16,
            Dtype::F32 => ScalarType::F32,
            Dtype::F64 => ScalarType::F64,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        self.format().is_some()
    }

    /// Whether it is a signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64)
    }

    /// The binary format of a floating-point type.
    fn format(self) -> Option<Format> {
        match self {
            Dtype::F16 => Some(fp::F16),
            Dtype::BF16 => Some(fp::BF16),
            Dtype::F32 => Some(fp::F32),
            Dtype::F64 => Some(fp::F64),
            _ => None,
        }
    }

    /// The value of a floating-point element's `bits` (the low `8 * size()` bits), exactly;
    /// `None` for an integer type.
    pub fn float_value(self, bits: u64) -> Option<f64> {
        match self {
            Dtype::F64 => Some(f64::from_bits(bits)),
            Dtype::F32 => Some(f64::from(f32::from_bits(bits as u32))),
            _ => Some(fp::to_f64(self.format()?, bits & 0xFFFF)),
        }
    }

    /// `x` rounded to nearest, ties to even, into a floating-point type: its bits, as `cvt.rn`
    /// gives them; `None` for an integer type.
    pub fn float_bits(self, x: f64) -> Option<u64> {
        Some(fp::from_f64(self.format()?, x, Rounding::Rn))
    }

    /// Parses a float's text into a floating-point type's bits, correctly rounded (ties to even)
    /// from the exact decimal value: whatever Rust's `f64` parser reads (`2.5`, `-1e-3`, `.5`,
    /// `inf`, `-infinity`, `nan`). A NaN is the type's default quiet NaN with the text's sign.
    /// `None` for other text or an integer type.
    pub fn parse_float(self, text: &str) -> Option<u64> {
        let x = text.parse::<f64>().ok()?;
        match self {
            Dtype::F64 => Some(x.to_bits()),
            Dtype::F32 => Some(u64::from(text.parse::<f32>().ok()?.to_bits())),
            Dtype::F16 => parse_apfloat::<Half>(text, x),
            Dtype::BF16 => parse_apfloat::<BFloat>(text, x),
            _ => None,
        }
    }

    /// The shortest text that reads back as the element `bits` (the low `8 * size()` bits):
    /// integers in decimal, floats as `1.5`, `0.1`, `1e-45`, `-0`, `inf`, `nan` (`f16`/`bf16`
    /// through their `f32` value, which holds them exactly).
    pub fn format_bits(self, bits: u64) -> String {
        match self {
            Dtype::U8 => (bits as u8).to_string(),
            Dtype::U16 => (bits as u16).to_string(),
            Dtype::U32 => (bits as u32).to_string(),
            Dtype::U64 => bits.to_string(),
            Dtype::I8 => (bits as i8).to_string(),
            Dtype::I16 => (bits as i16).to_string(),
            Dtype::I32 => (bits as i32).to_string(),
            Dtype::I64 => (bits as i64).to_string(),
            Dtype::F64 => format_float(f64::from_bits(bits)),
            _ => format_float(self.float_value(bits).unwrap_or(f64::NAN) as f32),
        }
    }
}

/// `text` (which Rust's parser read as `x`) in the 16-bit format `F`, rounded once from the
/// exact decimal value.
fn parse_apfloat<F: Float>(text: &str, x: f64) -> Option<u64> {
    let r = if x.is_nan() {
        F::NAN
    } else if x.is_infinite() {
        F::INFINITY
    } else {
        // apfloat reads the digits of a finite number Rust accepted; its own spellings of the
        // special values differ, so those are taken from `x`
        F::from_str_r(
            &sticky_digits(text.trim_start_matches(['+', '-'])),
            Round::NearestTiesToEven,
        )
        .ok()?
        .value
    };
    let r = if x.is_sign_negative() { -r } else { r };
    u64::try_from(r.to_bits()).ok()
}

/// Significant digits of a decimal that decide its rounding into `.f16` or `.bf16`: every value
/// halfway between two neighbours of those formats has fewer than 200 (the smallest, 2^-134,
/// has 94), so digits past 800 matter only by whether one of them is not zero.
const DECIDING_DIGITS: usize = 800;

/// `text` (a decimal Rust's parser accepted, without its sign) with the significant digits past
/// [`DECIDING_DIGITS`] replaced by zeros, the first of them by `1` when any was not zero: the
/// same rounding, at a cost that does not grow with the square of the digits (apfloat's does).
fn sticky_digits(text: &str) -> Cow<'_, str> {
    let mantissa_end = text.find(['e', 'E']).unwrap_or(text.len());
    let (mantissa, exponent) = text.split_at(mantissa_end);
    // the byte offset of the first significant digit past DECIDING_DIGITS, if there is one
    let mut seen = 0;
    let Some(first_dropped) = mantissa.bytes().position(|b| {
        if b.is_ascii_digit() && (seen > 0 || b != b'0') {
            seen += 1;
        }
        seen > DECIDING_DIGITS
    }) else {
        return Cow::Borrowed(text);
    };
    let dropped = &mantissa[first_dropped..];
    let sticky = dropped.bytes().any(|b| (b'1'..=b'9').contains(&b));
    let mut out = String::with_capacity(text.len());
    out.push_str(&mantissa[..first_dropped]);
    for (k, c) in dropped.char_indices() {
        out.push(match c {
            '0'..='9' if k == 0 && sticky => '1',
            '0'..='9' => '0',
            point => point,
        });
    }
    out.push_str(exponent);
    Cow::Owned(out)
}

/// Shortest round-trip text of a float, without Rust's `.0` on whole numbers: `1`, `-0`, `1e-45`.
fn format_float<T: std::fmt::Debug>(x: T) -> String {
    let text = format!("{x:?}");
    match text.as_str() {
        "NaN" => "nan".to_string(),
        _ => text.strip_suffix(".0").unwrap_or(&text).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sizes_and_types() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
            assert_eq!(d.size() * 8, d.scalar_type().size_bits() as usize);
        }
        assert_eq!(Dtype::from_name("s32"), None);
        assert_eq!(Dtype::I8.scalar_type(), ScalarType::S8);
        assert!(Dtype::BF16.is_float() && !Dtype::U64.is_float());
        assert!(Dtype::I16.is_signed() && !Dtype::U16.is_signed() && !Dtype::F32.is_signed());
    }

    #[test]
    fn float_values_and_rounding() {
        assert_eq!(Dtype::F16.float_value(0x3c00), Some(1.0));
        assert_eq!(Dtype::F16.float_value(0x0001), Some(2f64.powi(-24)));
        assert_eq!(Dtype::F16.float_value(0xfc00), Some(f64::NEG_INFINITY));
        assert_eq!(Dtype::BF16.float_value(0x3fc0), Some(1.5));
        assert!(Dtype::BF16.float_value(0x7fc1).unwrap().is_nan());
        assert_eq!(Dtype::F32.float_value(0x3e00_0000), Some(0.125));
        assert_eq!(Dtype::U32.float_value(1), None);
        // 2049 lies halfway between the f16 values 2048 and 2050: to even, 2048 (0x6800)
        assert_eq!(Dtype::F16.float_bits(2049.0), Some(0x6800));
        assert_eq!(Dtype::F16.float_bits(2051.0), Some(0x6802));
        assert_eq!(Dtype::BF16.float_bits(257.0), Some(0x4380));
        assert_eq!(Dtype::F32.float_bits(0.1), Some(0x3dcc_cccd));
        assert_eq!(Dtype::I32.float_bits(1.0), None);
    }

    #[test]
    fn parses_decimal_text_rounding_once() {
        // 1 + 2^-11 is halfway between f16 1 and 1 + 2^-10; a decimal a hair above it rounds up,
        // which rounding through the nearest f64 (the tie itself) would miss
        assert_eq!(Dtype::F16.parse_float("1.00048828125"), Some(0x3c00));
        assert_eq!(
            Dtype::F16.parse_float("1.000488281250000000000000000001"),
            Some(0x3c01)
        );
        assert_eq!(Dtype::F16.parse_float("-0"), Some(0x8000));
        assert_eq!(Dtype::F16.parse_float("nan"), Some(0x7e00));
        assert_eq!(Dtype::F16.parse_float("-nan"), Some(0xfe00));
        assert_eq!(Dtype::F16.parse_float("-infinity"), Some(0xfc00));
        assert_eq!(Dtype::F16.parse_float("+.5"), Some(0x3800));
        assert_eq!(Dtype::BF16.parse_float("1.00390625"), Some(0x3f80));
        assert_eq!(Dtype::BF16.parse_float("nan"), Some(0x7fc0));
        assert_eq!(Dtype::F32.parse_float("0.1"), Some(0x3dcc_cccd));
        assert_eq!(Dtype::F16.parse_float("1,5"), None);
        assert_eq!(Dtype::F16.parse_float("0x3c00"), None);
        assert_eq!(Dtype::U8.parse_float("1"), None);
    }

    #[test]
    fn long_decimals_keep_their_rounding() {
        let tie = "1.00048828125"; // 1 + 2^-11, halfway between two f16 values
        let zeros = "0".repeat(100_000);
        // far past the deciding digits: a 1 still lifts the tie, trailing zeros do not
        assert_eq!(
            Dtype::F16.parse_float(&format!("{tie}{zeros}1")),
            Some(0x3c01)
        );
        assert_eq!(
            Dtype::F16.parse_float(&format!("{tie}{zeros}")),
            Some(0x3c00)
        );
        assert_eq!(
            Dtype::F16.parse_float(&format!("-{tie}{zeros}1e0")),
            Some(0xbc01)
        );
        // a long integer part keeps its place value: 2049 followed by 100000 digits, times
        // 10^-100000, is just above the f16 tie 2049, so it rounds up to 2050 (0x6801)
        assert_eq!(
            Dtype::F16.parse_float(&format!("2049{}e-100000", "3".repeat(100_000))),
            Some(0x6801)
        );
        assert_eq!(sticky_digits("1.5"), "1.5");
        let long = format!("{}.{}E7", "9".repeat(500), "9".repeat(500));
        let short = sticky_digits(&long);
        assert_eq!(short.len(), long.len());
        assert_eq!(
            short,
            format!(
                "{}.{}1{}E7",
                "9".repeat(500),
                "9".repeat(300),
                "0".repeat(199)
            )
        );
    }

    #[test]
    fn formats_shortest() {
        assert_eq!(Dtype::I8.format_bits(0xff), "-1");
        assert_eq!(Dtype::U16.format_bits(0xffff), "65535");
        assert_eq!(Dtype::I64.format_bits(u64::MAX), "-1");
        assert_eq!(Dtype::F16.format_bits(0x2e66), "0.099975586");
        assert_eq!(Dtype::F32.format_bits(0x8000_0000), "-0");
        assert_eq!(Dtype::F64.format_bits(0x7ff8_0000_0000_0000), "nan");
        assert_eq!(Dtype::F64.format_bits(1), "5e-324");
    }
}
