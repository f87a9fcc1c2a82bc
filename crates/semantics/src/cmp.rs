//! Comparison and selection: `setp`, `set`, `selp`, `slct` (ISA chapter "Comparison and
//! Selection Instructions", with the half-precision forms).
//!
//! A comparison first computes `t = a CmpOp b`, then combines it with the optional predicate `c`
//! by `.and/.or/.xor` ([`combine`]). Float comparisons: the ordered operators are false when
//! either operand is NaN, the unordered ones (`equ`, `ltu`, ...) are true; `num`/`nan` test for
//! NaN; `-0 == +0`.

use super::fp::{self, BF16, F16};

/// The comparison operator of `setp`/`set`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `eq`
    Eq,
    /// `ne`
    Ne,
    /// `lt`
    Lt,
    /// `le`
    Le,
    /// `gt`
    Gt,
    /// `ge`
    Ge,
    /// `lo`: unsigned lower.
    Lo,
    /// `ls`: unsigned lower or same.
    Ls,
    /// `hi`: unsigned higher.
    Hi,
    /// `hs`: unsigned higher or same.
    Hs,
    /// `equ`: equal or unordered.
    Equ,
    /// `neu`: not equal or unordered.
    Neu,
    /// `ltu`: less than or unordered.
    Ltu,
    /// `leu`: less or equal or unordered.
    Leu,
    /// `gtu`: greater than or unordered.
    Gtu,
    /// `geu`: greater or equal or unordered.
    Geu,
    /// `num`: both operands are numbers.
    Num,
    /// `nan`: either operand is NaN.
    Nan,
}

impl CmpOp {
    /// Every operator, in declaration order (the order of the instruction encodings that
    /// index it).
    pub const ALL: [CmpOp; 18] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Lo,
        CmpOp::Ls,
        CmpOp::Hi,
        CmpOp::Hs,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];
}

/// The Boolean operator combining a comparison with the predicate operand `c`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    /// `.and`
    And,
    /// `.or`
    Or,
    /// `.xor`
    Xor,
}

/// `BoolOp(t, c)`; `None` (no BoolOp written) returns `t`. A negated `{!}c` is passed negated.
#[inline]
pub fn combine(t: bool, op: Option<BoolOp>, c: bool) -> bool {
    match op {
        None => t,
        Some(BoolOp::And) => t & c,
        Some(BoolOp::Or) => t | c,
        Some(BoolOp::Xor) => t ^ c,
    }
}

/// Integer comparison of signed values (`.s16 .s32 .s64`, sign-extended to 64 bits).
/// `lo ls hi hs` compare the same bits as unsigned; the float-only operators (`equ`...`nan`)
/// are rejected by the checker and give `false` here.
#[inline]
pub fn cmp_s64(op: CmpOp, a: i64, b: i64) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs => cmp_u64(op, a as u64, b as u64),
        _ => false,
    }
}

/// Integer comparison of unsigned or bit-size values (zero-extended to 64 bits); `lt le gt ge`
/// mean the same as `lo ls hi hs` here.
#[inline]
pub fn cmp_u64(op: CmpOp, a: u64, b: u64) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        _ => false,
    }
}

/// Float comparison on `f64` (exact for every narrower format). `lo ls hi hs` are not float
/// operators; they act as `lt le gt ge`.
#[inline]
pub fn cmp_f64(op: CmpOp, a: f64, b: f64) -> bool {
    let unordered = a.is_nan() || b.is_nan();
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => !unordered && a != b,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        CmpOp::Equ => unordered || a == b,
        CmpOp::Neu => a != b,
        CmpOp::Ltu => unordered || a < b,
        CmpOp::Leu => unordered || a <= b,
        CmpOp::Gtu => unordered || a > b,
        CmpOp::Geu => unordered || a >= b,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

/// `setp.CmpOp{.ftz}.f32`: `.ftz` flushes subnormal inputs to signed zero first.
#[inline]
pub fn cmp_f32(op: CmpOp, a: f32, b: f32, ftz: bool) -> bool {
    let (a, b) = (
        super::float::flush_f32(a, ftz),
        super::float::flush_f32(b, ftz),
    );
    cmp_f64(op, a as f64, b as f64)
}

/// `setp.CmpOp{.ftz}.f16` on raw `.f16` bits.
#[inline]
pub fn cmp_f16(op: CmpOp, a: u16, b: u16, ftz: bool) -> bool {
    let f = |x: u16| {
        let x = if ftz { F16.flush(x as u64) } else { x as u64 };
        fp::to_f64(F16, x)
    };
    cmp_f64(op, f(a), f(b))
}

/// `setp.CmpOp.bf16` on raw `.bf16` bits.
#[inline]
pub fn cmp_bf16(op: CmpOp, a: u16, b: u16) -> bool {
    cmp_f64(op, fp::to_f64(BF16, a as u64), fp::to_f64(BF16, b as u64))
}

/// `setp.CmpOp{.ftz}.f16x2`: `(p, q)` = comparison of the low halves, of the high halves.
#[inline]
pub fn cmp_f16x2(op: CmpOp, a: u32, b: u32, ftz: bool) -> (bool, bool) {
    (
        cmp_f16(op, a as u16, b as u16, ftz),
        cmp_f16(op, (a >> 16) as u16, (b >> 16) as u16, ftz),
    )
}

/// `setp.CmpOp.bf16x2`: `(p, q)` = comparison of the low halves, of the high halves.
#[inline]
pub fn cmp_bf16x2(op: CmpOp, a: u32, b: u32) -> (bool, bool) {
    (
        cmp_bf16(op, a as u16, b as u16),
        cmp_bf16(op, (a >> 16) as u16, (b >> 16) as u16),
    )
}

/// The value `set` writes for a true/false outcome, by destination type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetDst {
    /// `.u32`/`.s32`: `0xFFFF_FFFF` or 0.
    Int32,
    /// `.u16`/`.s16`: `0xFFFF` or 0.
    Int16,
    /// `.f32`: `1.0f` (`0x3F80_0000`) or 0.
    F32,
    /// `.f16`: `1.0` (`0x3C00`) or 0.
    F16,
    /// `.bf16`: `1.0` (`0x3F80`) or 0.
    Bf16,
}

/// The bits `set` writes for outcome `t` in a destination of kind `dst`.
#[inline]
pub fn set_value(dst: SetDst, t: bool) -> u32 {
    let v = match dst {
        SetDst::Int32 => 0xFFFF_FFFF,
        SetDst::Int16 => 0xFFFF,
        SetDst::F32 => 0x3F80_0000,
        SetDst::F16 => 0x3C00,
        SetDst::Bf16 => 0x3F80,
    };
    if t {
        v
    } else {
        0
    }
}

/// Packed `set` for `.f16x2`/`.bf16x2` sources: each half gets [`set_value`] of its own outcome
/// (`dst` is [`SetDst::F16`], [`SetDst::Bf16`] or [`SetDst::Int16`] for `.u32/.s32`).
#[inline]
pub fn set_x2(dst: SetDst, lo: bool, hi: bool) -> u32 {
    set_value(dst, hi) << 16 | set_value(dst, lo)
}

/// `selp.type d, a, b, c`: `c ? a : b`.
#[inline]
pub fn selp<T>(a: T, b: T, c: bool) -> T {
    if c {
        a
    } else {
        b
    }
}

/// `slct.dtype.s32 d, a, b, c`: `c >= 0 ? a : b`.
#[inline]
pub fn slct_s32<T>(a: T, b: T, c: i32) -> T {
    selp(a, b, c >= 0)
}

/// `slct{.ftz}.dtype.f32 d, a, b, c`: `c >= 0 ? a : b`; `-0.0 >= 0`, NaN selects `b`, and with
/// `.ftz` a subnormal `c` counts as zero (so `a` is selected).
#[inline]
pub fn slct_f32<T>(a: T, b: T, c: f32, ftz: bool) -> T {
    selp(a, b, super::float::flush_f32(c, ftz) >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_ordered_and_unordered() {
        let nan = f64::NAN;
        // Ordered ops are false and unordered ops true when a NaN is involved.
        for op in [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
            CmpOp::Num,
        ] {
            assert!(!cmp_f64(op, nan, 1.0), "{op:?}");
            assert!(!cmp_f64(op, 1.0, nan), "{op:?}");
        }
        for op in [
            CmpOp::Equ,
            CmpOp::Neu,
            CmpOp::Ltu,
            CmpOp::Leu,
            CmpOp::Gtu,
            CmpOp::Geu,
            CmpOp::Nan,
        ] {
            assert!(cmp_f64(op, nan, 1.0), "{op:?}");
            assert!(cmp_f64(op, nan, nan), "{op:?}");
        }
        // On numbers, unordered ops equal their ordered counterparts.
        let vals = [-1.0, -0.0, 0.0, 1.0, f64::INFINITY, f64::NEG_INFINITY];
        for &a in &vals {
            for &b in &vals {
                assert_eq!(cmp_f64(CmpOp::Equ, a, b), a == b);
                assert_eq!(cmp_f64(CmpOp::Neu, a, b), a != b);
                assert_eq!(cmp_f64(CmpOp::Ltu, a, b), a < b);
                assert_eq!(cmp_f64(CmpOp::Leu, a, b), a <= b);
                assert_eq!(cmp_f64(CmpOp::Gtu, a, b), a > b);
                assert_eq!(cmp_f64(CmpOp::Geu, a, b), a >= b);
                assert!(cmp_f64(CmpOp::Num, a, b));
                assert!(!cmp_f64(CmpOp::Nan, a, b));
            }
        }
        assert!(cmp_f64(CmpOp::Eq, -0.0, 0.0));
        assert!(!cmp_f64(CmpOp::Lt, -0.0, 0.0));
    }

    #[test]
    fn f32_ftz_compare() {
        let sub = f32::from_bits(1);
        assert!(cmp_f32(CmpOp::Gt, sub, 0.0, false));
        assert!(!cmp_f32(CmpOp::Gt, sub, 0.0, true));
        assert!(cmp_f32(CmpOp::Eq, sub, -0.0, true));
    }

    #[test]
    fn integer_compares() {
        assert!(cmp_s64(CmpOp::Lt, -1, 0));
        assert!(!cmp_s64(CmpOp::Lo, -1, 0)); // unsigned view of -1 is the largest
        assert!(cmp_s64(CmpOp::Hi, -1, 0));
        assert!(cmp_u64(CmpOp::Lt, 0, u64::MAX));
        assert!(cmp_u64(CmpOp::Hs, 5, 5));
        assert!(cmp_u64(CmpOp::Ls, 4, 5));
        assert!(!cmp_u64(CmpOp::Ne, 5, 5));
        assert!(cmp_s64(CmpOp::Ge, 5, 5));
        assert!(!cmp_s64(CmpOp::Nan, 5, 5));
    }

    /// Every integer operator on pairs ordered `a < b`, `a == b`, `a > b` (signed order), chosen
    /// so the unsigned order of the same bits is the opposite where it can be.
    #[test]
    fn integer_compares_every_operator() {
        use CmpOp::*;
        // Expected outcome for (a < b, a == b, a > b).
        let ordered = [
            (Eq, [false, true, false]),
            (Ne, [true, false, true]),
            (Lt, [true, false, false]),
            (Le, [true, true, false]),
            (Gt, [false, false, true]),
            (Ge, [false, true, true]),
        ];
        let signed: [[(i64, i64); 3]; 2] = [
            [(-1, 0), (-7, -7), (0, -1)],
            [
                (i64::MIN, i64::MAX),
                (i64::MIN, i64::MIN),
                (i64::MAX, i64::MIN),
            ],
        ];
        let unsigned: [[(u64, u64); 3]; 2] = [
            [(0, u64::MAX), (5, 5), (u64::MAX, 0)],
            [(1, 1 << 63), (1 << 63, 1 << 63), (1 << 63, 1)],
        ];
        for (op, want) in ordered {
            for k in 0..3 {
                for row in &signed {
                    let (a, b) = row[k];
                    assert_eq!(cmp_s64(op, a, b), want[k], "{op:?} s64 {a} {b}");
                }
                for row in &unsigned {
                    let (a, b) = row[k];
                    assert_eq!(cmp_u64(op, a, b), want[k], "{op:?} u64 {a} {b}");
                }
            }
        }
        // lo/ls/hi/hs are the unsigned order, also on signed operands: as unsigned,
        // -1 is the largest value and i64::MIN (0x8000...) is above i64::MAX.
        let unsigned_ops = [
            (Lo, [true, false, false]),
            (Ls, [true, true, false]),
            (Hi, [false, false, true]),
            (Hs, [false, true, true]),
        ];
        for (op, want) in unsigned_ops {
            for (k, (a, b)) in [(0i64, -1i64), (-1, -1), (-1, 0)].into_iter().enumerate() {
                assert_eq!(cmp_s64(op, a, b), want[k], "{op:?} s64 {a} {b}");
            }
            for (k, (a, b)) in [(i64::MAX, i64::MIN), (3, 3), (i64::MIN, i64::MAX)]
                .into_iter()
                .enumerate()
            {
                assert_eq!(cmp_s64(op, a, b), want[k], "{op:?} s64 {a} {b}");
            }
            for (k, (a, b)) in [(0u64, u64::MAX), (9, 9), (u64::MAX, 0)]
                .into_iter()
                .enumerate()
            {
                assert_eq!(cmp_u64(op, a, b), want[k], "{op:?} u64 {a} {b}");
            }
        }
        // Float-only operators are not integer comparisons.
        for op in [Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan] {
            assert!(!cmp_s64(op, 1, 1) && !cmp_s64(op, 0, 1), "{op:?}");
            assert!(!cmp_u64(op, 1, 1) && !cmp_u64(op, 0, 1), "{op:?}");
        }
    }

    /// Ordered operators (and their `lo ls hi hs` aliases) on non-NaN floats; `-0 == +0`.
    #[test]
    fn float_compares_on_numbers() {
        use CmpOp::*;
        // Pairs: a < b, a == b, a > b, and -0 vs +0 (equal).
        let pairs = [(1.0, 2.0), (2.0, 2.0), (2.0, 1.0), (-0.0, 0.0)];
        let table: [(&[CmpOp], _); 6] = [
            (&[Eq], [false, true, false, true]),
            (&[Ne], [true, false, true, false]),
            (&[Lt, Lo], [true, false, false, false]),
            (&[Le, Ls], [true, true, false, true]),
            (&[Gt, Hi], [false, false, true, false]),
            (&[Ge, Hs], [false, true, true, true]),
        ];
        for (ops, want) in table {
            for &op in ops {
                for (k, &(a, b)) in pairs.iter().enumerate() {
                    assert_eq!(cmp_f64(op, a, b), want[k], "{op:?} {a} {b}");
                }
            }
        }
        // Same through the 16-bit formats. bf16: 1.0 = 0x3F80, -1.0 = 0xBF80; f16: 1.0 = 0x3C00.
        assert!(!cmp_bf16(Lt, 0x3F80, 0xBF80));
        assert!(!cmp_bf16(Eq, 0x3F80, 0xBF80));
        assert!(cmp_bf16(Ne, 0x3F80, 0xBF80));
        assert!(!cmp_f16(Ne, 0x3C00, 0x3C00, false));
    }

    /// Each half of a packed comparison compares that half of `a` with that half of `b`.
    #[test]
    fn packed_compares_use_matching_halves() {
        // f16: 1.0 = 0x3C00, 2.0 = 0x4000. Low halves 2 < 1 false, high halves 1 < 2 true.
        assert_eq!(
            cmp_f16x2(CmpOp::Lt, 0x3C00_4000, 0x4000_3C00, false),
            (false, true)
        );
        // Low halves 2 > 2 false, high halves 2 > 1 true.
        assert_eq!(
            cmp_f16x2(CmpOp::Gt, 0x4000_4000, 0x3C00_4000, false),
            (false, true)
        );
        // bf16: 1.0 = 0x3F80, 2.0 = 0x4000.
        // lo 1 < 2 true, hi 2 < 1 false.
        assert_eq!(
            cmp_bf16x2(CmpOp::Lt, 0x4000_3F80, 0x3F80_4000),
            (true, false)
        );
        // lo 2 < 1 false, hi 1 < 2 true.
        assert_eq!(
            cmp_bf16x2(CmpOp::Lt, 0x3F80_4000, 0x4000_3F80),
            (false, true)
        );
    }

    #[test]
    fn half_compares() {
        // f16: 1.0 = 0x3C00, 2.0 = 0x4000, NaN = 0x7E00, -0 = 0x8000, min subnormal 0x0001
        assert!(cmp_f16(CmpOp::Lt, 0x3C00, 0x4000, false));
        assert!(!cmp_f16(CmpOp::Lt, 0x7E00, 0x4000, false));
        assert!(cmp_f16(CmpOp::Ltu, 0x7E00, 0x4000, false));
        assert!(cmp_f16(CmpOp::Eq, 0x8000, 0x0000, false));
        assert!(cmp_f16(CmpOp::Gt, 0x0001, 0x0000, false));
        assert!(cmp_f16(CmpOp::Eq, 0x0001, 0x8000, true));
        // bf16: 1.0 = 0x3F80, -1.0 = 0xBF80
        assert!(cmp_bf16(CmpOp::Gt, 0x3F80, 0xBF80));
        assert!(cmp_bf16(CmpOp::Nan, 0x7FC0, 0x3F80));
        // Packed: low half 1<2 true, high half 2<1 false.
        assert_eq!(
            cmp_f16x2(CmpOp::Lt, 0x4000_3C00, 0x3C00_4000, false),
            (true, false)
        );
        assert_eq!(
            cmp_bf16x2(CmpOp::Ge, 0x3F80_3F80, 0xBF80_3F80),
            (true, true)
        );
    }

    #[test]
    fn bool_combine_and_set() {
        for t in [false, true] {
            for c in [false, true] {
                assert_eq!(combine(t, Some(BoolOp::And), c), t && c);
                assert_eq!(combine(t, Some(BoolOp::Or), c), t || c);
                assert_eq!(combine(t, Some(BoolOp::Xor), c), t != c);
                assert_eq!(combine(t, None, c), t);
            }
        }
        assert_eq!(set_value(SetDst::Int32, true), 0xFFFF_FFFF);
        assert_eq!(set_value(SetDst::F32, true), 1.0f32.to_bits());
        assert_eq!(set_value(SetDst::F32, false), 0);
        assert_eq!(set_value(SetDst::F16, true), 0x3C00);
        assert_eq!(set_value(SetDst::Bf16, true), 0x3F80);
        assert_eq!(set_value(SetDst::Int16, true), 0xFFFF);
        assert_eq!(set_x2(SetDst::F16, true, false), 0x0000_3C00);
        assert_eq!(set_x2(SetDst::Int16, false, true), 0xFFFF_0000);
    }

    #[test]
    fn select() {
        assert_eq!(selp(1u32, 2, true), 1);
        assert_eq!(selp(1u32, 2, false), 2);
        assert_eq!(slct_s32(1u32, 2, 0), 1);
        assert_eq!(slct_s32(1u32, 2, -1), 2);
        assert_eq!(slct_f32(1u32, 2, -0.0, false), 1);
        assert_eq!(slct_f32(1u32, 2, f32::NAN, false), 2);
        assert_eq!(slct_f32(1u32, 2, -f32::from_bits(1), false), 2);
        assert_eq!(slct_f32(1u32, 2, -f32::from_bits(1), true), 1);
        assert_eq!(slct_f32(1u64, 2, f32::NEG_INFINITY, true), 2);
    }

    #[test]
    fn every_operator_is_total() {
        // No operator panics, and `nan` is the negation of `num` for every pair.
        let vals = [f64::NAN, -1.0, 0.0, 1.0];
        for op in CmpOp::ALL {
            for &a in &vals {
                for &b in &vals {
                    let _ = cmp_f64(op, a, b);
                    let _ = cmp_s64(op, a as i64, b as i64);
                }
            }
        }
        for &a in &vals {
            for &b in &vals {
                assert_eq!(cmp_f64(CmpOp::Nan, a, b), !cmp_f64(CmpOp::Num, a, b));
            }
        }
    }
}
