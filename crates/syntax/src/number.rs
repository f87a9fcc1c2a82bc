//! Decoding of numeric literals (ISA "Constants"): decimal, hexadecimal (`0x`), octal (`0…`), binary
//! (`0b`) integers with an optional `U` suffix; exact single (`0f` + 8 hex digits) and double
//! (`0d` + 16 hex digits) floats; decimal floats.

use crate::ast::{ExprKind, Radix};

/// Why a number token is not a valid literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberError {
    /// The characters do not form a literal of any base.
    Malformed(&'static str),
    /// The value does not fit in 64 bits.
    Overflow,
}

/// Decodes a [`crate::lexer::TokenKind::Number`] token's text.
pub fn decode_number(text: &str) -> Result<ExprKind, NumberError> {
    let b = text.as_bytes();
    if b.len() >= 2 && b[0] == b'0' {
        match b[1] {
            b'x' | b'X' => return int(&text[2..], 16, Radix::Hex, "hexadecimal"),
            b'b' | b'B' => return int(&text[2..], 2, Radix::Binary, "binary"),
            b'f' | b'F' => {
                let digits = &text[2..];
                if digits.len() != 8 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return Err(NumberError::Malformed(
                        "`0f` must be followed by exactly 8 hexadecimal digits",
                    ));
                }
                return Ok(ExprKind::F32Bits(
                    u32::from_str_radix(digits, 16).unwrap_or(0),
                ));
            }
            b'd' | b'D' => {
                let digits = &text[2..];
                if digits.len() != 16 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return Err(NumberError::Malformed(
                        "`0d` must be followed by exactly 16 hexadecimal digits",
                    ));
                }
                return Ok(ExprKind::F64Bits(
                    u64::from_str_radix(digits, 16).unwrap_or(0),
                ));
            }
            b'0'..=b'9' | b'U' => return int(&text[1..], 8, Radix::Octal, "octal"),
            _ => {}
        }
    }
    // `1e5`: a float with an unsigned exponent (signed ones lex as Float directly).
    if let Some(e) = text.find(['e', 'E']) {
        let (m, x) = (&text[..e], &text[e + 1..]);
        if !m.is_empty()
            && !x.is_empty()
            && m.bytes().all(|c| c.is_ascii_digit())
            && x.bytes().all(|c| c.is_ascii_digit())
        {
            return Ok(ExprKind::Float(text.into()));
        }
    }
    int(text, 10, Radix::Decimal, "decimal")
}

fn int(digits: &str, radix: u32, r: Radix, what: &'static str) -> Result<ExprKind, NumberError> {
    let (digits, unsigned_suffix) = match digits.strip_suffix('U') {
        Some(d) => (d, true),
        None => (digits, false),
    };
    if digits.is_empty() && r != Radix::Octal {
        return Err(NumberError::Malformed(match r {
            Radix::Hex => "`0x` must be followed by hexadecimal digits",
            _ => "`0b` must be followed by binary digits",
        }));
    }
    let mut value: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or(NumberError::Malformed(match what {
            "hexadecimal" => "invalid digit in hexadecimal literal",
            "binary" => "invalid digit in binary literal",
            "octal" => "invalid digit in octal literal",
            _ => "invalid character in decimal literal",
        }))?;
        value = value
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or(NumberError::Overflow)?;
    }
    Ok(ExprKind::Int {
        value,
        unsigned_suffix,
        radix: r,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_of(t: &str) -> (u64, bool) {
        match decode_number(t) {
            Ok(ExprKind::Int {
                value,
                unsigned_suffix,
                ..
            }) => (value, unsigned_suffix),
            other => panic!("{t}: {other:?}"),
        }
    }

    #[test]
    fn integers() {
        assert_eq!(int_of("0"), (0, false));
        assert_eq!(int_of("42"), (42, false));
        assert_eq!(int_of("42U"), (42, true));
        assert_eq!(int_of("0x1234"), (0x1234, false));
        assert_eq!(int_of("0XfabcU"), (0xfabc, true));
        assert_eq!(int_of("0123"), (0o123, false));
        assert_eq!(int_of("0b1011"), (11, false));
        assert_eq!(int_of("18446744073709551615"), (u64::MAX, false));
        assert_eq!(int_of("0xffffffffffffffff"), (u64::MAX, false));
    }

    #[test]
    fn floats() {
        assert_eq!(
            decode_number("0f3F800000"),
            Ok(ExprKind::F32Bits(0x3F80_0000))
        );
        assert_eq!(
            decode_number("0D3FF0000000000000"),
            Ok(ExprKind::F64Bits(0x3FF0_0000_0000_0000))
        );
        assert_eq!(decode_number("1e5"), Ok(ExprKind::Float("1e5".into())));
    }

    #[test]
    fn malformed() {
        for t in [
            "0x",
            "0xZZ",
            "12abc",
            "0b102",
            "089",
            "0f3F80",
            "0fXYZ12345",
            "1e",
            "0b",
        ] {
            assert!(
                matches!(decode_number(t), Err(NumberError::Malformed(_))),
                "{t}"
            );
        }
        assert_eq!(
            decode_number("18446744073709551616"),
            Err(NumberError::Overflow)
        );
    }
}
