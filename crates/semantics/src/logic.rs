//! Logic and shift instructions, and the bit-manipulation instructions of the integer chapter
//! (`popc clz bfind fns brev bfe bfi bmsk szext`), plus `prmt` from the data-movement chapter.
//!
//! Shift amounts are unsigned 32-bit values; amounts at or past the operand width do not wrap
//! (unlike Rust's `<<`): `shl` gives 0, `shr.u`/`shr.b` give 0, `shr.s` fills with the sign bit.

use super::ClampMode;

macro_rules! bitwise {
    ($t:ty, $and:ident, $or:ident, $xor:ident, $not:ident, $cnot:ident, $name:literal) => {
        #[doc = concat!("`and.", $name, "`.")]
        #[inline]
        pub fn $and(a: $t, b: $t) -> $t {
            a & b
        }
        #[doc = concat!("`or.", $name, "`.")]
        #[inline]
        pub fn $or(a: $t, b: $t) -> $t {
            a | b
        }
        #[doc = concat!("`xor.", $name, "`.")]
        #[inline]
        pub fn $xor(a: $t, b: $t) -> $t {
            a ^ b
        }
        #[doc = concat!("`not.", $name, "`: one's complement.")]
        #[inline]
        pub fn $not(a: $t) -> $t {
            !a
        }
        #[doc = concat!("`cnot.", $name, "`: C logical not, 1 if `a == 0` else 0.")]
        #[inline]
        pub fn $cnot(a: $t) -> $t {
            (a == 0) as $t
        }
    };
}

bitwise!(u16, and_b16, or_b16, xor_b16, not_b16, cnot_b16, "b16");
bitwise!(u32, and_b32, or_b32, xor_b32, not_b32, cnot_b32, "b32");
bitwise!(u64, and_b64, or_b64, xor_b64, not_b64, cnot_b64, "b64");

macro_rules! shifts {
    ($u:ty, $s:ty, $bits:expr, $shl:ident, $shr_u:ident, $shr_s:ident, $n:literal) => {
        #[doc = concat!("`shl.b", $n, "`: shift left; amounts `>= ", $n, "` give 0.")]
        #[inline]
        pub fn $shl(a: $u, b: u32) -> $u {
            a.checked_shl(b).unwrap_or(0)
        }
        #[doc = concat!("`shr.u", $n, "` / `shr.b", $n, "`: logical shift right; amounts `>= ", $n, "` give 0.")]
        #[inline]
        pub fn $shr_u(a: $u, b: u32) -> $u {
            a.checked_shr(b).unwrap_or(0)
        }
        #[doc = concat!("`shr.s", $n, "`: arithmetic shift right; amounts `>= ", $n, "` fill with the sign bit.")]
        #[inline]
        pub fn $shr_s(a: $s, b: u32) -> $s {
            a >> b.min($bits - 1)
        }
    };
}

shifts!(u16, i16, 16, shl_b16, shr_u16, shr_s16, "16");
shifts!(u32, i32, 32, shl_b32, shr_u32, shr_s32, "32");
shifts!(u64, i64, 64, shl_b64, shr_u64, shr_s64, "64");

/// Direction of the funnel shift `shf`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShfDir {
    /// `shf.l`: shift `{b, a}` left and keep the upper 32 bits.
    L,
    /// `shf.r`: shift `{b, a}` right and keep the lower 32 bits.
    R,
}

/// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`: funnel shift of the 64-bit `{b, a}` (`b` high) by
/// `min(c, 32)` (`.clamp`) or `c & 31` (`.wrap`).
#[inline]
pub fn shf(dir: ShfDir, mode: ClampMode, a: u32, b: u32, c: u32) -> u32 {
    let n = match mode {
        ClampMode::Clamp => c.min(32),
        ClampMode::Wrap => c & 31,
    };
    let v = (b as u64) << 32 | a as u64;
    match dir {
        ShfDir::L => ((v << n) >> 32) as u32,
        ShfDir::R => (v >> n) as u32,
    }
}

/// `lop3.b32 d, a, b, c, immLut`: bit `i` of `d` is bit `(a_i << 2 | b_i << 1 | c_i)` of
/// `immLut`, i.e. `immLut = F(0xF0, 0xCC, 0xAA)` for the function `F` wanted.
#[inline]
pub fn lop3(a: u32, b: u32, c: u32, imm_lut: u8) -> u32 {
    let mut d = 0;
    for i in 0..8u32 {
        let ma = if i & 4 != 0 { a } else { !a };
        let mb = if i & 2 != 0 { b } else { !b };
        let mc = if i & 1 != 0 { c } else { !c };
        let on = 0u32.wrapping_sub((imm_lut as u32 >> i) & 1);
        d |= ma & mb & mc & on;
    }
    d
}

/// Mode of `prmt`; `None` in [`prmt`] is the generic (default) form.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    /// `.f4e`: forward 4 extract.
    F4e,
    /// `.b4e`: backward 4 extract.
    B4e,
    /// `.rc8`: replicate 8.
    Rc8,
    /// `.ecl`: edge clamp left.
    Ecl,
    /// `.ecr`: edge clamp right.
    Ecr,
    /// `.rc16`: replicate 16.
    Rc16,
}

/// Source byte for `d.b0, d.b1, d.b2, d.b3` per mode and selector `c[1:0]` (the ISA's table).
const PRMT_TABLE: [[[u8; 4]; 4]; 6] = [
    // f4e
    [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    // b4e
    [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    // rc8
    [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    // ecl
    [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    // ecr
    [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    // rc16
    [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
];

/// `prmt.b32{.mode} d, a, b, c`: pick bytes of `{b, a}` (bytes 0..3 from `a`, 4..7 from `b`).
/// Generic form: nibble `i` of `c` selects `d`'s byte `i`; its bit 3 replicates the selected
/// byte's sign bit instead of copying it. Modes use `c[1:0]` with the ISA's fixed patterns.
#[inline]
pub fn prmt(a: u32, b: u32, c: u32, mode: Option<PrmtMode>) -> u32 {
    let src = (b as u64) << 32 | a as u64;
    let byte = |i: u32| ((src >> (8 * (i & 7))) & 0xFF) as u32;
    let mut d = 0;
    match mode {
        None => {
            for i in 0..4 {
                let ctl = (c >> (4 * i)) & 0xF;
                let v = byte(ctl);
                let v = if ctl & 8 != 0 {
                    0u32.wrapping_sub(v >> 7) & 0xFF
                } else {
                    v
                };
                d |= v << (8 * i);
            }
        }
        Some(m) => {
            let sel = &PRMT_TABLE[m as usize][(c & 3) as usize];
            for (i, &s) in sel.iter().enumerate() {
                d |= byte(s as u32) << (8 * i);
            }
        }
    }
    d
}

/// `popc.b32`: number of set bits.
#[inline]
pub fn popc_b32(a: u32) -> u32 {
    a.count_ones()
}

/// `popc.b64`: number of set bits (a `.u32` result).
#[inline]
pub fn popc_b64(a: u64) -> u32 {
    a.count_ones()
}

/// `clz.b32`: leading zeros; 32 for 0.
#[inline]
pub fn clz_b32(a: u32) -> u32 {
    a.leading_zeros()
}

/// `clz.b64`: leading zeros; 64 for 0.
#[inline]
pub fn clz_b64(a: u64) -> u32 {
    a.leading_zeros()
}

/// `brev.b32`: bit reversal.
#[inline]
pub fn brev_b32(a: u32) -> u32 {
    a.reverse_bits()
}

/// `brev.b64`: bit reversal.
#[inline]
pub fn brev_b64(a: u64) -> u64 {
    a.reverse_bits()
}

/// `bfind{.shiftamt}.{u32,s32,u64,s64}`: bit position of the most significant non-sign bit
/// (for negative signed inputs, the most significant 0), or `0xFFFF_FFFF` when there is none.
/// `.shiftamt` returns `msb - position` instead (the left shift that normalises the value).
/// `a` holds the operand zero-extended; `width` is 32 or 64.
#[inline]
pub fn bfind(a: u64, width: u32, signed: bool, shiftamt: bool) -> u32 {
    let msb = width - 1;
    let a = if width == 32 { a & 0xFFFF_FFFF } else { a };
    let a = if signed && (a >> msb) & 1 == 1 {
        !a & (u64::MAX >> (64 - width))
    } else {
        a
    };
    if a == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - a.leading_zeros();
    if shiftamt {
        msb - pos
    } else {
        pos
    }
}

/// `fns.b32 d, mask, base, offset`: position of the `offset`-th set bit of `mask` counting
/// from bit `base` upward (`offset > 0`) or downward (`offset < 0`), `base` itself included;
/// with `offset == 0`, `base` if that bit is set. `0xFFFF_FFFF` when not found. A `base` above 31
/// is undefined in the ISA; we return `0xFFFF_FFFF`.
#[inline]
pub fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    if base > 31 {
        return 0xFFFF_FFFF;
    }
    if offset == 0 {
        return if (mask >> base) & 1 == 1 {
            base
        } else {
            0xFFFF_FFFF
        };
    }
    let n = offset.unsigned_abs();
    if offset > 0 {
        let mut m = mask & (u32::MAX << base);
        if m.count_ones() < n {
            return 0xFFFF_FFFF;
        }
        for _ in 1..n {
            m &= m - 1; // drop the lowest set bit
        }
        m.trailing_zeros()
    } else {
        let mut m = mask & (u32::MAX >> (31 - base));
        if m.count_ones() < n {
            return 0xFFFF_FFFF;
        }
        for _ in 1..n {
            m &= !(1u32 << (31 - m.leading_zeros())); // drop the highest set bit
        }
        31 - m.leading_zeros()
    }
}

/// All-ones in the low `n` bits (`n <= 64`).
#[inline]
fn low_mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// `bfe.{u32,s32,u64,s64} d, a, b, c`: extract `c & 0xFF` bits starting at bit `b & 0xFF`,
/// zero- or sign-extended, following the ISA's pseudo-code exactly: bits of the field past the
/// msb of `a` read as the sign bit, which for signed types is `a[min(pos+len-1, msb)]` and for
/// unsigned types (and `len == 0`) is 0. `a` is zero-extended, `width` is 32 or 64; the result is
/// in the low `width` bits.
#[inline]
pub fn bfe(a: u64, b: u32, c: u32, width: u32, signed: bool) -> u64 {
    let msb = width - 1;
    let (pos, len) = (b & 0xFF, c & 0xFF);
    let sbit = if !signed || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let avail = if pos > msb { 0 } else { len.min(width - pos) };
    let field = if avail == 0 {
        0
    } else {
        (a >> pos) & low_mask(avail)
    };
    let fill = if sbit == 1 { !low_mask(avail) } else { 0 };
    (field | fill) & low_mask(width)
}

/// `bfi.{b32,b64} f, a, b, c, d`: `b` with the low `d & 0xFF` bits of `a` inserted at bit
/// `c & 0xFF`; field bits past the msb are dropped. `width` is 32 or 64.
#[inline]
pub fn bfi(a: u64, b: u64, c: u32, d: u32, width: u32) -> u64 {
    let (pos, len) = (c & 0xFF, d & 0xFF);
    if pos >= width || len == 0 {
        return b & low_mask(width);
    }
    let m = low_mask(len.min(width - pos)) << pos;
    ((b & !m) | ((a << pos) & m)) & low_mask(width)
}

/// `bmsk.{clamp,wrap}.b32 d, a, b`: a mask of `b` ones starting at bit `a`. Per the ISA:
/// `.wrap` takes both operands modulo 32; `.clamp` gives 0 for `a >= 32` and lets `b >= 32` mean
/// "to the top"; a (wrapped) width of 0 gives 0, and bits past 31 are dropped.
#[inline]
pub fn bmsk(mode: ClampMode, a: u32, b: u32) -> u32 {
    let a1 = a & 0x1F;
    let b1 = b & 0x1F;
    let mut mask0 = u32::MAX << a1;
    let sum = a1 + b1;
    let mut overflow = sum >= 32;
    if mode == ClampMode::Clamp {
        if a >= 32 {
            mask0 = 0;
            overflow = true;
        }
        if b >= 32 {
            overflow = true;
        }
    }
    let mask1 = if overflow {
        0
    } else if b1 == 0 {
        u32::MAX
    } else {
        u32::MAX << sum
    };
    mask0 & !mask1
}

/// `szext.{clamp,wrap}.{u32,s32} d, a, b`: treat the low `N = b` bits of `a` as an `N`-bit
/// value and zero- (`.u32`) or sign-extend (`.s32`) it. `N = 0` gives 0; `N >= 32` gives `a`
/// under `.clamp` and uses `N & 31` under `.wrap` (the ISA's pseudo-code).
#[inline]
pub fn szext(mode: ClampMode, a: u32, b: u32, signed: bool) -> u32 {
    let b1 = b & 0x1F;
    let too_large = b >= 32 && mode == ClampMode::Clamp;
    let mask = if too_large { 0 } else { u32::MAX << b1 };
    let sign_pos = b1.wrapping_sub(1) & 0x1F;
    let sign_bit = !(b1 == 0 || too_large || !signed) && (a >> sign_pos) & 1 == 1;
    (a & !mask) | if sign_bit { mask } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_clamp_at_width() {
        assert_eq!(shl_b32(1, 31), 0x8000_0000);
        assert_eq!(shl_b32(1, 32), 0);
        assert_eq!(shl_b32(1, 0xFFFF_FFFF), 0);
        assert_eq!(shl_b16(1, 16), 0);
        assert_eq!(shl_b64(1, 63), 1 << 63);
        assert_eq!(shl_b64(1, 64), 0);
        assert_eq!(shr_u32(0x8000_0000, 31), 1);
        assert_eq!(shr_u32(0x8000_0000, 32), 0);
        assert_eq!(shr_u64(u64::MAX, 100), 0);
        assert_eq!(shr_u16(0x8000, 15), 1);
        assert_eq!(shr_s32(i32::MIN, 31), -1);
        assert_eq!(shr_s32(i32::MIN, 32), -1);
        assert_eq!(shr_s32(i32::MIN, 1000), -1);
        assert_eq!(shr_s32(0x4000_0000, 40), 0);
        assert_eq!(shr_s16(-2, 1), -1);
        assert_eq!(shr_s16(-32768, 99), -1);
        assert_eq!(shr_s64(i64::MIN, 64), -1);
        assert_eq!(shr_s64(-8, 2), -2);
    }

    #[test]
    fn bitwise_ops() {
        assert_eq!(cnot_b32(0), 1);
        assert_eq!(cnot_b32(5), 0);
        assert_eq!(cnot_b16(0), 1);
        assert_eq!(cnot_b64(1 << 40), 0);
        assert_eq!(not_b32(0), 0xFFFF_FFFF);
        assert_eq!(not_b16(0x00FF), 0xFF00);
        assert_eq!(and_b32(0xF0F0, 0xFF00), 0xF000);
        assert_eq!(or_b64(1, 2), 3);
        assert_eq!(xor_b16(0xFFFF, 0x0F0F), 0xF0F0);
    }

    #[test]
    fn funnel_shift() {
        // rotate left by 8 using a == b
        assert_eq!(
            shf(ShfDir::L, ClampMode::Wrap, 0x1234_5678, 0x1234_5678, 8),
            0x3456_7812
        );
        assert_eq!(
            shf(ShfDir::R, ClampMode::Wrap, 0x1234_5678, 0x1234_5678, 8),
            0x7812_3456
        );
        // clamp: 40 -> 32: left gives a, right gives b.
        assert_eq!(
            shf(ShfDir::L, ClampMode::Clamp, 0xAAAA_AAAA, 0xBBBB_BBBB, 40),
            0xAAAA_AAAA
        );
        assert_eq!(
            shf(ShfDir::R, ClampMode::Clamp, 0xAAAA_AAAA, 0xBBBB_BBBB, 40),
            0xBBBB_BBBB
        );
        // wrap: 40 -> 8
        assert_eq!(
            shf(ShfDir::L, ClampMode::Wrap, 0xAA00_0000, 0x0000_00BB, 40),
            0x0000_BBAA
        );
        assert_eq!(
            shf(ShfDir::R, ClampMode::Wrap, 0x0000_00AA, 0x0000_00BB, 40),
            0xBB00_0000
        );
        assert_eq!(shf(ShfDir::L, ClampMode::Clamp, 1, 2, 0), 2);
        assert_eq!(shf(ShfDir::R, ClampMode::Clamp, 1, 2, 0), 1);
        assert_eq!(shf(ShfDir::L, ClampMode::Wrap, 0xFFFF_FFFF, 0, 32), 0); // wrap 32 -> 0
    }

    #[test]
    fn lop3_truth_tables() {
        let (a, b, c) = (0xF0u32, 0xCCu32, 0xAAu32);
        // The ISA's construction: immLut = F(0xF0, 0xCC, 0xAA).
        for lut in 0..=255u8 {
            // Bits 8..31 of the operands are all zero: they take lut bit 0 (minterm !a!b!c).
            let high = if lut & 1 == 1 { 0xFFFF_FF00 } else { 0 };
            assert_eq!(lop3(a, b, c, lut), high | lut as u32);
        }
        // majority(a, b, c) = 0xE8
        assert_eq!(lop3(0b1100, 0b1010, 0b0110, 0xE8), 0b1110);
        assert_eq!(
            lop3(0xFFFF_0000, 0xFF00_FF00, 0xF0F0_F0F0, 0xE8),
            0xFFF0_F000
        );
        // a ^ b ^ c = 0x96, a & b & c = 0x80, (a & b) | c = 0xC0 | 0xAA = 0xEA, a | (b & c) = 0xF8
        assert_eq!(
            lop3(0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F, 0x96),
            0x1234_5678 ^ 0x9ABC_DEF0 ^ 0x0F0F_0F0F
        );
        assert_eq!(
            lop3(0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F, 0x80),
            0x1234_5678 & 0x9ABC_DEF0 & 0x0F0F_0F0F
        );
        assert_eq!(
            lop3(0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F, 0xEA),
            (0x1234_5678 & 0x9ABC_DEF0) | 0x0F0F_0F0F
        );
        assert_eq!(
            lop3(0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F, 0xF8),
            0x1234_5678 | (0x9ABC_DEF0 & 0x0F0F_0F0F)
        );
        assert_eq!(lop3(1, 2, 3, 0), 0);
        assert_eq!(lop3(1, 2, 3, 0xFF), 0xFFFF_FFFF);
    }

    #[test]
    fn prmt_generic() {
        let (a, b) = (0x4433_2211u32, 0x8877_6655u32);
        assert_eq!(prmt(a, b, 0x3210, None), a);
        assert_eq!(prmt(a, b, 0x7654, None), b);
        assert_eq!(prmt(a, b, 0x0123, None), 0x1122_3344); // byte swap of a
        assert_eq!(prmt(a, b, 0x4444, None), 0x5555_5555);
        // Bit 3 replicates the sign of the selected byte: byte 7 (0x88) -> 0xFF, byte 0 -> 0x00.
        assert_eq!(prmt(a, b, 0x8F00, None), 0x00FF_1111);
        assert_eq!(prmt(a, b, 0xFFFF, None), 0xFFFF_FFFF);
        // Only the low 16 bits of c matter in the generic form.
        assert_eq!(prmt(a, b, 0xABCD_3210, None), a);
    }

    #[test]
    fn prmt_modes() {
        let (a, b) = (0x0302_0100u32, 0x0706_0504u32); // byte i holds i
        let bytes = |d: u32| [(d >> 24) as u8, (d >> 16) as u8, (d >> 8) as u8, d as u8];
        // Rows of the ISA's table: d.b3 d.b2 d.b1 d.b0 for selectors 0..3.
        let table: [(PrmtMode, [[u8; 4]; 4]); 6] = [
            (
                PrmtMode::F4e,
                [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]],
            ),
            (
                PrmtMode::B4e,
                [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]],
            ),
            (
                PrmtMode::Rc8,
                [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
            ),
            (
                PrmtMode::Ecl,
                [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]],
            ),
            (
                PrmtMode::Ecr,
                [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]],
            ),
            (
                PrmtMode::Rc16,
                [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]],
            ),
        ];
        for (mode, rows) in table {
            for (sel, row) in rows.iter().enumerate() {
                // Upper bits of c are ignored in the special modes.
                assert_eq!(
                    bytes(prmt(a, b, 0xFFF0 | sel as u32, Some(mode))),
                    *row,
                    "{mode:?} {sel}"
                );
            }
        }
        // Modes copy bytes literally (no sign replication).
        assert_eq!(prmt(0x80, 0, 0, Some(PrmtMode::Rc8)), 0x8080_8080);
    }

    #[test]
    fn counts() {
        assert_eq!(popc_b32(0), 0);
        assert_eq!(popc_b32(0xFFFF_FFFF), 32);
        assert_eq!(popc_b32(0xAAAA_AAAA), 16);
        assert_eq!(popc_b64(u64::MAX), 64);
        assert_eq!(clz_b32(0), 32);
        assert_eq!(clz_b32(1), 31);
        assert_eq!(clz_b32(0x8000_0000), 0);
        assert_eq!(clz_b64(0), 64);
        assert_eq!(clz_b64(1 << 40), 23);
        assert_eq!(brev_b32(1), 0x8000_0000);
        assert_eq!(brev_b32(0x0000_00F1), 0x8F00_0000);
        assert_eq!(brev_b64(0x3), 0xC000_0000_0000_0000);
    }

    #[test]
    fn bfind_cases() {
        assert_eq!(bfind(0, 32, false, false), 0xFFFF_FFFF);
        assert_eq!(bfind(0, 32, false, true), 0xFFFF_FFFF);
        assert_eq!(bfind(1, 32, false, false), 0);
        assert_eq!(bfind(1, 32, false, true), 31);
        assert_eq!(bfind(0x8000_0000, 32, false, false), 31);
        assert_eq!(bfind(0x0001_0000, 32, false, true), 15);
        // Signed: -1 has no non-sign bit; -2 = ...1110 -> bit 0 is the top zero.
        assert_eq!(bfind(0xFFFF_FFFF, 32, true, false), 0xFFFF_FFFF);
        assert_eq!(bfind(0xFFFF_FFFE, 32, true, false), 0);
        assert_eq!(bfind(0x8000_0000, 32, true, false), 30);
        assert_eq!(bfind(0x8000_0000, 32, true, true), 1);
        assert_eq!(bfind(0x7FFF_FFFF, 32, true, false), 30);
        assert_eq!(bfind(u64::MAX, 64, true, false), 0xFFFF_FFFF);
        assert_eq!(bfind(1 << 63, 64, false, false), 63);
        assert_eq!(bfind(1 << 63, 64, true, false), 62);
        assert_eq!(bfind(1 << 40, 64, false, true), 23);
        // Upper bits of a 64-bit carrier are ignored for 32-bit types.
        assert_eq!(bfind(0xFFFF_FFFF_0000_0000, 32, false, false), 0xFFFF_FFFF);
    }

    #[test]
    fn fns_examples_from_spec() {
        assert_eq!(fns(0xAAAA_AAAA, 3, 1), 3);
        assert_eq!(fns(0xAAAA_AAAA, 3, -1), 3);
        assert_eq!(fns(0xAAAA_AAAA, 2, 1), 3);
        assert_eq!(fns(0xAAAA_AAAA, 2, -1), 1);
    }

    #[test]
    fn fns_more() {
        assert_eq!(fns(0xAAAA_AAAA, 2, 0), 0xFFFF_FFFF);
        assert_eq!(fns(0xAAAA_AAAA, 3, 0), 3);
        assert_eq!(fns(0xAAAA_AAAA, 0, 2), 3);
        assert_eq!(fns(0xAAAA_AAAA, 0, 16), 31);
        assert_eq!(fns(0xAAAA_AAAA, 0, 17), 0xFFFF_FFFF);
        assert_eq!(fns(0xAAAA_AAAA, 31, -16), 1);
        assert_eq!(fns(0xAAAA_AAAA, 31, -17), 0xFFFF_FFFF);
        assert_eq!(fns(0xFFFF_FFFF, 31, 1), 31);
        assert_eq!(fns(0xFFFF_FFFF, 31, 2), 0xFFFF_FFFF);
        assert_eq!(fns(0xFFFF_FFFF, 0, -1), 0);
        assert_eq!(fns(0xFFFF_FFFF, 0, -2), 0xFFFF_FFFF);
        assert_eq!(fns(0, 5, 1), 0xFFFF_FFFF);
        assert_eq!(fns(0xFFFF_FFFF, 5, i32::MIN), 0xFFFF_FFFF);
        assert_eq!(fns(0x8000_0001, 10, -1), 0);
    }

    /// The ISA's bfe pseudo-code, bit by bit, as the reference model.
    fn bfe_model(a: u64, b: u32, c: u32, width: u32, signed: bool) -> u64 {
        let msb = width - 1;
        let pos = b & 0xFF;
        let len = c & 0xFF;
        let sbit = if !signed || len == 0 {
            0
        } else {
            (a >> (pos + len - 1).min(msb)) & 1
        };
        let mut d = 0u64;
        for i in 0..=msb {
            let bit = if i < len && pos + i <= msb {
                (a >> (pos + i)) & 1
            } else {
                sbit
            };
            d |= bit << i;
        }
        d
    }

    #[test]
    fn bfe_cases() {
        assert_eq!(bfe(0x1234_5678, 8, 8, 32, false), 0x56);
        assert_eq!(bfe(0x1234_5678, 0, 0, 32, true), 0);
        assert_eq!(bfe(0x0000_8000, 8, 8, 32, true), 0xFFFF_FF80);
        assert_eq!(bfe(0x0000_8000, 8, 8, 32, false), 0x80);
        // pos + len past the msb: the field is the top bits, sign from bit 31.
        assert_eq!(bfe(0x8000_0000, 28, 8, 32, true), 0xFFFF_FFF8);
        assert_eq!(bfe(0x8000_0000, 28, 8, 32, false), 0x8);
        // pos past the msb: all sign bits (bit 31 for signed).
        assert_eq!(bfe(0x8000_0000, 40, 4, 32, true), 0xFFFF_FFFF);
        assert_eq!(bfe(0x8000_0000, 40, 4, 32, false), 0);
        // Only the low 8 bits of pos/len count: 0x108 is 8.
        assert_eq!(bfe(0x1234_5678, 0x108, 0x104, 32, false), 0x6);
        assert_eq!(bfe(0x1234_5678, 0, 32, 32, false), 0x1234_5678);
        assert_eq!(bfe(0x1234_5678, 0, 255, 32, true), 0x1234_5678);
        assert_eq!(bfe(u64::MAX, 60, 8, 64, true), u64::MAX);
        assert_eq!(bfe(0xF << 60, 60, 4, 64, false), 0xF);
        let mut x: u64 = 0x0123_4567_89AB_CDEF;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (b, c) = ((x >> 8) as u32 & 0x1FF, (x >> 20) as u32 & 0x1FF);
            for (w, s) in [(32, false), (32, true), (64, false), (64, true)] {
                let a = if w == 32 { x & 0xFFFF_FFFF } else { x };
                let (b, c) = if x & 1 == 0 {
                    (b & 0x3F, c & 0x3F)
                } else {
                    (b, c)
                };
                assert_eq!(
                    bfe(a, b, c, w, s),
                    bfe_model(a, b, c, w, s),
                    "{a:#x} {b} {c} {w} {s}"
                );
            }
        }
    }

    #[test]
    fn bfi_cases() {
        assert_eq!(bfi(0xFF, 0, 8, 4, 32), 0xF00);
        assert_eq!(bfi(0xFF, 0xFFFF_FFFF, 8, 0, 32), 0xFFFF_FFFF);
        assert_eq!(bfi(0, 0xFFFF_FFFF, 28, 8, 32), 0x0FFF_FFFF);
        assert_eq!(bfi(0xFFFF, 0, 40, 8, 32), 0);
        assert_eq!(bfi(0xABCD, 0x1111_1111, 0x110, 0x108, 32), 0x11CD_1111);
        assert_eq!(bfi(u64::MAX, 0, 32, 64, 64), 0xFFFF_FFFF_0000_0000);
        assert_eq!(bfi(1, 0, 63, 1, 64), 1 << 63);
    }

    #[test]
    fn bmsk_cases() {
        assert_eq!(bmsk(ClampMode::Wrap, 1, 2), 0x6); // the ISA's example
        assert_eq!(bmsk(ClampMode::Clamp, 0, 32), 0xFFFF_FFFF);
        assert_eq!(bmsk(ClampMode::Clamp, 4, 40), 0xFFFF_FFF0);
        assert_eq!(bmsk(ClampMode::Clamp, 32, 4), 0);
        assert_eq!(bmsk(ClampMode::Wrap, 32, 4), 0xF); // a wraps to 0
        assert_eq!(bmsk(ClampMode::Wrap, 0, 32), 0); // b wraps to 0
        assert_eq!(bmsk(ClampMode::Wrap, 4, 0), 0);
        assert_eq!(bmsk(ClampMode::Clamp, 28, 8), 0xF000_0000);
        assert_eq!(bmsk(ClampMode::Wrap, 31, 1), 0x8000_0000);
        assert_eq!(bmsk(ClampMode::Clamp, 0, 31), 0x7FFF_FFFF);
    }

    #[test]
    fn szext_cases() {
        assert_eq!(szext(ClampMode::Wrap, 0xFFFF_FFFF, 0, false), 0); // the ISA's example
        assert_eq!(szext(ClampMode::Clamp, 0xFFFF_FFFF, 0, true), 0);
        assert_eq!(szext(ClampMode::Clamp, 0x0000_0080, 8, true), 0xFFFF_FF80);
        assert_eq!(szext(ClampMode::Clamp, 0xFFFF_FF7F, 8, true), 0x7F);
        assert_eq!(szext(ClampMode::Clamp, 0xFFFF_FF80, 8, false), 0x80);
        assert_eq!(szext(ClampMode::Clamp, 0x8000_1234, 32, true), 0x8000_1234);
        assert_eq!(
            szext(ClampMode::Clamp, 0x8000_1234, 100, false),
            0x8000_1234
        );
        assert_eq!(szext(ClampMode::Wrap, 0x8000_1234, 32, false), 0); // N wraps to 0
        assert_eq!(szext(ClampMode::Wrap, 0x0000_0008, 36, true), 0xFFFF_FFF8); // N = 4
        assert_eq!(szext(ClampMode::Wrap, 0x1, 1, true), 0xFFFF_FFFF);
        assert_eq!(szext(ClampMode::Wrap, 0x1, 1, false), 1);
    }
}
