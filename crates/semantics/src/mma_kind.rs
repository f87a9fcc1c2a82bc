//! The `mma.sync.aligned` kinds of sm_120a (PTX ISA 8.7): `.kind::f8f6f4` (fp8, fp6 and fp4
//! multiplicands in any mix) and the block-scaled `.kind::mxf8f6f4`, `.kind::mxf4` and
//! `.kind::mxf4nvf4` with their scale factors, plus the 4-bit and 6-bit unpacking of the
//! sm_100a `ldmatrix` `.b8x16` source formats. The fragment layouts are those of
//! [`crate::matrix::position`] and the sums those of [`crate::matrix::mma`]; this module gives
//! the exact value of each input element and scale factor ([`KindType::value`],
//! [`ScaleType::value`]) and which lane and byte supplies each scale factor
//! ([`scale_a_source`], [`scale_b_source`]).
//!
//! **Formats** (PTX ISA "Alternate Floating Point Data Formats"; none of the 6- and 4-bit
//! formats has infinities or NaN):
//! - `.e3m2`: 1 sign, 3 exponent (bias 3), 2 fraction bits; largest 28, smallest subnormal 2^-4;
//! - `.e2m3`: 1 sign, 2 exponent (bias 1), 3 fraction bits; largest 7.5, smallest subnormal 2^-3;
//! - `.e2m1`: 1 sign, 2 exponent (bias 1), 1 fraction bit; the values 0, 0.5, 1, 1.5, 2, 3, 4,
//!   6 and their negatives;
//! - `.ue8m0` (scale): 8 exponent bits, value 2^(e-127); `0xFF` is NaN;
//! - `.ue4m3` (scale): `.e4m3` without its sign bit (bits 0–6; bit 7 is ignored): 0 to 448,
//!   `0x7F` is NaN.
//!
//! **Containers.** With `.kind::f8f6f4` and `.kind::mxf8f6f4` every element takes one byte of
//! its register, four per register as `.e4m3` does: an `.e2m1` element sits in bits 2–5 of its
//! byte, an `.e3m2`/`.e2m3` element in bits 0–5, and the other bits are padding, ignored.
//! `.kind::mxf4` and `.kind::mxf4nvf4` pack `.e2m1` elements eight per register (4 bits each,
//! low bits first) as `.s4` does.
//!
//! **Numerics.** `D = (A·scale_A)·(B·scale_B) + C`. Every scaled element
//! `a·SF_A` and `b·SF_B` is exact in `f64` (a power of two times a value of at most 8
//! significant bits, or a 4-bit-significand `ue4m3` times a 4-bit one), so every product is
//! exact; the sum is formed as for every narrow type: `c` first, then `k` = 0, 1, … in `f64`,
//! rounded once to nearest even into `.f32` (or `.f16` for `.kind::f8f6f4`). A NaN scale
//! factor makes its row's (column's) products NaN; a zero `ue4m3` scale makes them zero.

/// A multiplicand element type of the `.kind::` forms.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KindType {
    /// `.e4m3` (OCP FP8, no infinities).
    E4m3,
    /// `.e5m2` (OCP FP8, IEEE-like).
    E5m2,
    /// `.e3m2` (FP6).
    E3m2,
    /// `.e2m3` (FP6).
    E2m3,
    /// `.e2m1` (FP4).
    E2m1,
}

impl KindType {
    /// All of them, in the order of [`KindType::code`].
    pub const ALL: [KindType; 5] = [
        KindType::E4m3,
        KindType::E5m2,
        KindType::E3m2,
        KindType::E2m3,
        KindType::E2m1,
    ];

    /// A 3-bit code for packing (the index in [`KindType::ALL`]).
    pub fn code(self) -> u64 {
        KindType::ALL.iter().position(|&t| t == self).unwrap_or(0) as u64
    }

    /// The type of [`KindType::code`] `c` (out of range: `.e2m1`).
    pub fn from_code(c: u64) -> KindType {
        KindType::ALL
            .get(c as usize)
            .copied()
            .unwrap_or(KindType::E2m1)
    }

    /// The type a modifier spells (`.e3m2`).
    pub fn of(text: &str) -> Option<KindType> {
        Some(match text {
            ".e4m3" => KindType::E4m3,
            ".e5m2" => KindType::E5m2,
            ".e3m2" => KindType::E3m2,
            ".e2m3" => KindType::E2m3,
            ".e2m1" => KindType::E2m1,
            _ => return None,
        })
    }

    /// The exact value of an element held in an 8-bit container (`.kind::f8f6f4`,
    /// `.kind::mxf8f6f4`): `.e2m1` in bits 2–5, `.e3m2`/`.e2m3` in bits 0–5, padding ignored.
    pub fn value(self, byte: u64) -> f64 {
        match self {
            KindType::E4m3 => crate::matrix::Elem::E4m3.value(byte & 0xFF),
            KindType::E5m2 => crate::matrix::Elem::E5m2.value(byte & 0xFF),
            KindType::E3m2 => finite_small(byte & 0x3F, 3, 2),
            KindType::E2m3 => finite_small(byte & 0x3F, 2, 3),
            KindType::E2m1 => e2m1(byte >> 2),
        }
    }
}

/// The exact value of a 4-bit `.e2m1` code (its low 4 bits).
pub fn e2m1(code: u64) -> f64 {
    finite_small(code & 0xF, 2, 1)
}

/// The exact value of a sign/exponent/fraction format with `ebits` exponent (bias
/// `2^(ebits-1) - 1`) and `mbits` fraction bits that has neither infinities nor NaN (the FP6
/// and FP4 formats): every code is a finite number, subnormal when the exponent field is 0.
pub fn finite_small(b: u64, ebits: u32, mbits: u32) -> f64 {
    crate::matrix::small_float(b, ebits, mbits, crate::matrix::Specials::None)
}

/// The type of the scale factors of a block-scaled kind (`.stype`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScaleType {
    /// `.ue8m0`: `2^(e-127)`, `0xFF` NaN.
    Ue8m0,
    /// `.ue4m3`: unsigned `.e4m3` (bits 0–6), `0x7F` NaN.
    Ue4m3,
}

impl ScaleType {
    /// The exact value of scale byte `b` (its low 8 bits).
    pub fn value(self, b: u64) -> f64 {
        let b = b & 0xFF;
        match self {
            ScaleType::Ue8m0 if b == 0xFF => f64::NAN,
            ScaleType::Ue8m0 => 2f64.powi(b as i32 - 127),
            ScaleType::Ue4m3 => crate::matrix::Elem::E4m3.value(b & 0x7F),
        }
    }
}

/// `.scale_vec::NX`: the number of scale factors per row of A (per column of B), each covering
/// `K / N` consecutive `k`.
pub fn chunk_of(k: u32, kdim: u32, vec: u32) -> u32 {
    k / (kdim / vec.max(1)).max(1)
}

/// Which lane and which byte of its `scale-a-data` supply `SF_A` for row `row` (of 16) and
/// chunk `chunk`, given the selectors `byte-id-a` and `thread-id-a`: within each quad
/// (`groupID = %laneid >> 2`), the thread pair picked by `thread-id-a` (lanes `4g + 2t` and
/// `4g + 2t + 1`) holds the rows `g` and `g + 8` respectively; byte `byte-id-a + chunk` of its
/// register is the factor of that chunk (`.scale_vec::1X`: the one byte named, `2X`: the byte
/// pair from 0 or 2, `4X`: all four bytes).
pub fn scale_a_source(row: u32, chunk: u32, byte_id: u32, thread_id: u32) -> (u32, u32) {
    let lane = 4 * (row % 8) + 2 * thread_id + row / 8;
    (lane, byte_id + chunk)
}

/// Which lane and which byte of its `scale-b-data` supply `SF_B` for column `col` (of 8) and
/// chunk `chunk`: the thread `thread-id-b` of quad `col` (lane `4·col + thread-id-b`), byte
/// `byte-id-b + chunk`.
pub fn scale_b_source(col: u32, chunk: u32, byte_id: u32, thread_id: u32) -> (u32, u32) {
    (4 * col + thread_id, byte_id + chunk)
}

/// Whether the selectors are among the values the ISA allows for `.scale_vec::NX` (Table
/// "Valid values for various selector components"; any other value is undefined behaviour):
/// `byte-id` 0–3 (1X), 0 or 2 (2X), 0 (4X); `thread-id-a` 0–1; `thread-id-b` 0–3.
pub fn selectors_valid(vec: u32, byte_id: u64, thread_id: u64, is_a: bool) -> bool {
    let byte_ok = match vec {
        1 => byte_id <= 3,
        2 => byte_id == 0 || byte_id == 2,
        _ => byte_id == 0,
    };
    byte_ok && thread_id <= if is_a { 1 } else { 3 }
}

/// A 6-bit or 4-bit `ldmatrix` source format (`.src_fmt`), or plain bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SrcFmt {
    /// `.b8`: 16 bytes.
    B8,
    /// `.b6x16_p32`: 16 unsigned 6-bit elements in the first 12 bytes (element `i` at bits
    /// `6i`…`6i+5`, little-endian), then 4 bytes of padding.
    B6x16P32,
    /// `.b4x16_p64`: 16 unsigned 4-bit elements in the first 8 bytes (element `i` at bits
    /// `4i`…`4i+3`), then 8 bytes of padding.
    B4x16P64,
}

/// The 16 bytes `.b8x16` makes of one 16-byte source row: each 6-bit or 4-bit element in the
/// low bits of its byte, the upper bits zero (CUTLASS's SM120 kernels shift the 4-bit ones left
/// by two before an `.e2m1` `mma`, whose container wants them in bits 2–5).
pub fn unpack_row(fmt: SrcFmt, row: [u8; 16]) -> [u8; 16] {
    let (bits, data) = match fmt {
        SrcFmt::B8 => return row,
        SrcFmt::B6x16P32 => (6, 12),
        SrcFmt::B4x16P64 => (4, 8),
    };
    let mut v: u128 = 0;
    for (i, &b) in row.iter().take(data).enumerate() {
        v |= (b as u128) << (8 * i);
    }
    let mask = (1u128 << bits) - 1;
    std::array::from_fn(|i| ((v >> (bits * i)) & mask) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp6_fp4_values() {
        // e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6
        let v: Vec<f64> = (0..8).map(e2m1).collect();
        assert_eq!(v, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(e2m1(0xF), -6.0);
        assert_eq!(e2m1(0x8).to_bits(), (-0.0f64).to_bits());
        // in a container: bits 2..5, padding ignored
        assert_eq!(KindType::E2m1.value(0b1011_1111), -6.0);
        assert_eq!(KindType::E2m1.value(0b0000_0100), 0.5);
        // e3m2: largest 28, smallest subnormal 1/16; e2m3: largest 7.5, smallest 1/8
        assert_eq!(KindType::E3m2.value(0x1F), 28.0);
        assert_eq!(KindType::E3m2.value(0x01), 0.0625);
        assert_eq!(KindType::E3m2.value(0xC1), 0.0625);
        assert_eq!(KindType::E3m2.value(0x3F), -28.0);
        assert_eq!(KindType::E2m3.value(0x1F), 7.5);
        assert_eq!(KindType::E2m3.value(0x01), 0.125);
        assert_eq!(KindType::E2m3.value(0x08), 1.0);
        assert_eq!(KindType::E4m3.value(0x7E), 448.0);
        assert!(KindType::E4m3.value(0x7F).is_nan());
        assert_eq!(KindType::E5m2.value(0x7C), f64::INFINITY);
    }

    #[test]
    fn scales() {
        assert_eq!(ScaleType::Ue8m0.value(127), 1.0);
        assert_eq!(ScaleType::Ue8m0.value(0), 2f64.powi(-127));
        assert_eq!(ScaleType::Ue8m0.value(254), 2f64.powi(127));
        assert!(ScaleType::Ue8m0.value(255).is_nan());
        assert_eq!(ScaleType::Ue4m3.value(0x38), 1.0);
        assert_eq!(ScaleType::Ue4m3.value(0xB8), 1.0);
        assert_eq!(ScaleType::Ue4m3.value(0x7E), 448.0);
        assert_eq!(ScaleType::Ue4m3.value(0), 0.0);
        assert!(ScaleType::Ue4m3.value(0x7F).is_nan());
    }

    #[test]
    fn selectors() {
        assert_eq!(scale_a_source(3, 0, 1, 0), (12, 1));
        assert_eq!(scale_a_source(11, 1, 2, 1), (15, 3));
        assert_eq!(scale_b_source(7, 3, 0, 2), (30, 3));
        assert!(selectors_valid(1, 3, 1, true));
        assert!(!selectors_valid(1, 3, 2, true));
        assert!(selectors_valid(1, 3, 3, false));
        assert!(!selectors_valid(2, 1, 0, true));
        assert!(!selectors_valid(4, 2, 0, false));
        assert_eq!(chunk_of(31, 64, 2), 0);
        assert_eq!(chunk_of(32, 64, 2), 1);
        assert_eq!(chunk_of(47, 64, 4), 2);
    }

    #[test]
    fn unpacking() {
        let mut row = [0u8; 16];
        // 4-bit: elements 0..15 = 0..15
        for (i, b) in row.iter_mut().take(8).enumerate() {
            *b = (2 * i as u8) | (2 * i as u8 + 1) << 4;
        }
        row[12] = 0xFF; // padding
        let out = unpack_row(SrcFmt::B4x16P64, row);
        assert_eq!(out, std::array::from_fn(|i| i as u8));
        // 6-bit: element i = 63 - i
        let mut v: u128 = 0;
        for i in 0..16u128 {
            v |= (63 - i) << (6 * i);
        }
        let mut row = [0xAAu8; 16];
        for (i, b) in row.iter_mut().take(12).enumerate() {
            *b = (v >> (8 * i)) as u8;
        }
        let out = unpack_row(SrcFmt::B6x16P32, row);
        assert_eq!(out, std::array::from_fn(|i| 63 - i as u8));
    }
}
