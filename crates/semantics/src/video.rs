//! SIMD video instructions (`vadd4`, `vsub4`, `vavrg4`, `vabsdiff4`, `vmin4`, `vmax4` and their
//! two-lane forms): lane-wise operations on the bytes or halfwords of 32-bit registers, with a
//! secondary merge or accumulate step.

/// How one four-lane SIMD video instruction picks and extends its lanes and combines them
/// (`vop4.dtype.atype.btype{.sat|.add} d{.mask}, a{.asel}, b{.bsel}, c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Vop4 {
    /// `.asel`: for lane `i`, bits `4i..4i+3` hold the index (0-7) of the byte of `{b, a}` it
    /// takes (`a` is bytes 0-3, `b` bytes 4-7). The default `.b3210` is `0x3210`.
    pub asel: u16,
    /// `.bsel`, the same for `b` (default `.b7654`: `0x7654`).
    pub bsel: u16,
    /// `.atype` is `.s32`: `a`'s bytes are sign-extended.
    pub a_signed: bool,
    /// `.btype` is `.s32`.
    pub b_signed: bool,
    /// `.dtype` is `.s32` (the clamping range of `.sat`).
    pub d_signed: bool,
    /// `.sat`: each lane's result is clamped to the destination type's byte range.
    pub sat: bool,
    /// `.add`: `d` is `c` plus the sum of the masked lanes (else the masked lanes' low bytes are
    /// merged over `c`'s bytes).
    pub add: bool,
    /// `.mask`: bit `i` set when lane `i` takes part (default `.b3210`: `0b1111`).
    pub mask: u8,
}

impl Vop4 {
    /// The default selectors and mask with these types and secondary operation.
    pub const fn new(d_signed: bool, a_signed: bool, b_signed: bool, sat: bool, add: bool) -> Vop4 {
        Vop4 {
            asel: 0x3210,
            bsel: 0x7654,
            a_signed,
            b_signed,
            d_signed,
            sat,
            add,
            mask: 0b1111,
        }
    }

    /// The fields packed into one word (a bytecode instruction's `aux`); [`Vop4::unpack`]
    /// inverts it.
    pub const fn pack(self) -> u64 {
        self.asel as u64
            | (self.bsel as u64) << 16
            | (self.mask as u64 & 0xF) << 32
            | (self.a_signed as u64) << 36
            | (self.b_signed as u64) << 37
            | (self.d_signed as u64) << 38
            | (self.sat as u64) << 39
            | (self.add as u64) << 40
    }

    /// The fields of a [`Vop4::pack`]ed word.
    #[inline]
    pub const fn unpack(w: u64) -> Vop4 {
        Vop4 {
            asel: w as u16,
            bsel: (w >> 16) as u16,
            mask: (w >> 32) as u8 & 0xF,
            a_signed: w >> 36 & 1 == 1,
            b_signed: w >> 37 & 1 == 1,
            d_signed: w >> 38 & 1 == 1,
            sat: w >> 39 & 1 == 1,
            add: w >> 40 & 1 == 1,
        }
    }
}

/// `extractAndSignExt_4(a, b, sel, type)`: lane `i`'s byte of `{b, a}` chosen by `sel`,
/// sign- or zero-extended.
#[inline]
fn lane(a: u32, b: u32, sel: u16, i: u32, signed: bool) -> i32 {
    let src = (b as u64) << 32 | a as u64;
    let byte = (src >> (8 * ((sel >> (4 * i)) & 7))) as u8;
    if signed {
        byte as i8 as i32
    } else {
        byte as i32
    }
}

/// `vabsdiff4`: per lane `|Va[i] - Vb[i]|`, then the secondary operation of `m`.
#[inline]
pub fn vabsdiff4(a: u32, b: u32, c: u32, m: Vop4) -> u32 {
    let mut d = if m.add { c } else { 0 };
    for i in 0..4 {
        let mut t = (lane(a, b, m.asel, i, m.a_signed) - lane(a, b, m.bsel, i, m.b_signed)).abs();
        if m.sat {
            t = if m.d_signed {
                t.clamp(-128, 127)
            } else {
                t.clamp(0, 255)
            };
        }
        let on = m.mask >> i & 1 == 1;
        if m.add {
            if on {
                d = d.wrapping_add(t as u32);
            }
        } else {
            let byte = if on {
                t as u32 & 0xFF
            } else {
                c >> (8 * i) & 0xFF
            };
            d |= byte << (8 * i);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vabsdiff4_by_hand() {
        // |4-8| |3-7| |2-6| |1-5| = 4 in every byte
        let u = Vop4::new(false, false, false, false, false);
        assert_eq!(vabsdiff4(0x0102_0304, 0x0506_0708, 0, u), 0x0404_0404);
        let add = Vop4::new(false, false, false, false, true);
        assert_eq!(vabsdiff4(0x0102_0304, 0x0506_0708, 10, add), 26);
        // signed: |-128 - 127| = 255, clamped to 127 for an .s32 destination
        let s = Vop4::new(true, true, true, true, false);
        assert_eq!(vabsdiff4(0x80, 0x7F, 0, s), 0x7F);
        // a mask of lane 1 only keeps c's other bytes
        let m = Vop4 { mask: 0b0010, ..u };
        assert_eq!(
            vabsdiff4(0x0102_0304, 0x0506_0708, 0xAABB_CCDD, m),
            0xAABB_04DD
        );
        assert_eq!(Vop4::unpack(m.pack()), m);
        assert_eq!(Vop4::unpack(s.pack()), s);
    }
}
