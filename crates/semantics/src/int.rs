//! Integer arithmetic (ISA chapters "Integer Arithmetic Instructions" and "Extended-Precision
//! Integer Arithmetic Instructions").
//!
//! Function names follow the instruction: `add_s32` is `add.s32`, `mul_hi_u64` is
//! `mul.hi.u64`, `mad_wide_s16` is `mad.wide.s16`. Arithmetic wraps modulo `2^n` unless the
//! instruction has `.sat`. Signed and unsigned `add`/`sub`/`mul.lo` are the same bits; both names
//! exist so that callers can map opcodes one to one.
//!
//! Division by zero is "unspecified, machine-specific" in the ISA. We return what NVIDIA GPUs
//! compute (their division is an unsigned reciprocal sequence followed by a sign fix-up):
//! unsigned `x / 0` is all ones and `x % 0` is `x`; signed `x / 0` is `-1` for `x >= 0` and `1`
//! for `x < 0`, and `x % 0` is `x`. Signed `MIN / -1` wraps to `MIN` with remainder `0`. The
//! remainder has the sign of the dividend (division truncates toward zero), as in C.

macro_rules! int_common {
    ($t:ty, $wide:ty, $bits:expr, $add:ident, $sub:ident, $mul_lo:ident, $mul_hi:ident,
     $mad_lo:ident, $mad_hi:ident, $min:ident, $max:ident, $sad:ident, $tname:literal) => {
        #[doc = concat!("`add.", $tname, "`: wrapping addition.")]
        #[inline]
        pub fn $add(a: $t, b: $t) -> $t {
            a.wrapping_add(b)
        }
        #[doc = concat!("`sub.", $tname, "`: wrapping subtraction.")]
        #[inline]
        pub fn $sub(a: $t, b: $t) -> $t {
            a.wrapping_sub(b)
        }
        #[doc = concat!("`mul.lo.", $tname, "`: low half of the double-width product.")]
        #[inline]
        pub fn $mul_lo(a: $t, b: $t) -> $t {
            a.wrapping_mul(b)
        }
        #[doc = concat!("`mul.hi.", $tname, "`: high half of the double-width product.")]
        #[inline]
        pub fn $mul_hi(a: $t, b: $t) -> $t {
            ((a as $wide * b as $wide) >> $bits) as $t
        }
        #[doc = concat!("`mad.lo.", $tname, "`: low half of `a * b`, plus `c`, wrapping.")]
        #[inline]
        pub fn $mad_lo(a: $t, b: $t, c: $t) -> $t {
            a.wrapping_mul(b).wrapping_add(c)
        }
        #[doc = concat!("`mad.hi.", $tname, "`: high half of `a * b`, plus `c`, wrapping.")]
        #[inline]
        pub fn $mad_hi(a: $t, b: $t, c: $t) -> $t {
            $mul_hi(a, b).wrapping_add(c)
        }
        #[doc = concat!("`min.", $tname, "`.")]
        #[inline]
        pub fn $min(a: $t, b: $t) -> $t {
            a.min(b)
        }
        #[doc = concat!("`max.", $tname, "`.")]
        #[inline]
        pub fn $max(a: $t, b: $t) -> $t {
            a.max(b)
        }
        #[doc = concat!("`sad.", $tname, "`: `c + |a - b|`, the difference taken without overflow, the sum wrapping.")]
        #[inline]
        pub fn $sad(a: $t, b: $t, c: $t) -> $t {
            let d = if a < b { b.wrapping_sub(a) } else { a.wrapping_sub(b) };
            c.wrapping_add(d)
        }
    };
}

int_common!(
    u16, u32, 16, add_u16, sub_u16, mul_lo_u16, mul_hi_u16, mad_lo_u16, mad_hi_u16, min_u16,
    max_u16, sad_u16, "u16"
);
int_common!(
    i16, i32, 16, add_s16, sub_s16, mul_lo_s16, mul_hi_s16, mad_lo_s16, mad_hi_s16, min_s16,
    max_s16, sad_s16, "s16"
);
int_common!(
    u32, u64, 32, add_u32, sub_u32, mul_lo_u32, mul_hi_u32, mad_lo_u32, mad_hi_u32, min_u32,
    max_u32, sad_u32, "u32"
);
int_common!(
    i32, i64, 32, add_s32, sub_s32, mul_lo_s32, mul_hi_s32, mad_lo_s32, mad_hi_s32, min_s32,
    max_s32, sad_s32, "s32"
);
int_common!(
    u64, u128, 64, add_u64, sub_u64, mul_lo_u64, mul_hi_u64, mad_lo_u64, mad_hi_u64, min_u64,
    max_u64, sad_u64, "u64"
);
int_common!(
    i64, i128, 64, add_s64, sub_s64, mul_lo_s64, mul_hi_s64, mad_lo_s64, mad_hi_s64, min_s64,
    max_s64, sad_s64, "s64"
);

macro_rules! int_wide {
    ($t:ty, $wide:ty, $mul_wide:ident, $mad_wide:ident, $tname:literal) => {
        #[doc = concat!("`mul.wide.", $tname, "`: the full double-width product.")]
        #[inline]
        pub fn $mul_wide(a: $t, b: $t) -> $wide {
            a as $wide * b as $wide
        }
        #[doc = concat!("`mad.wide.", $tname, "`: the full product plus the double-width `c`, wrapping.")]
        #[inline]
        pub fn $mad_wide(a: $t, b: $t, c: $wide) -> $wide {
            (a as $wide * b as $wide).wrapping_add(c)
        }
    };
}

int_wide!(u16, u32, mul_wide_u16, mad_wide_u16, "u16");
int_wide!(i16, i32, mul_wide_s16, mad_wide_s16, "s16");
int_wide!(u32, u64, mul_wide_u32, mad_wide_u32, "u32");
int_wide!(i32, i64, mul_wide_s32, mad_wide_s32, "s32");

macro_rules! int_div_unsigned {
    ($t:ty, $div:ident, $rem:ident, $tname:literal) => {
        #[doc = concat!("`div.", $tname, "`: truncating division; `x / 0` is all ones (GPU behaviour, see the module docs).")]
        #[inline]
        pub fn $div(a: $t, b: $t) -> $t {
            a.checked_div(b).unwrap_or(<$t>::MAX)
        }
        #[doc = concat!("`rem.", $tname, "`: remainder; `x % 0` is `x` (GPU behaviour).")]
        #[inline]
        pub fn $rem(a: $t, b: $t) -> $t {
            a.checked_rem(b).unwrap_or(a)
        }
    };
}

macro_rules! int_div_signed {
    ($t:ty, $div:ident, $rem:ident, $abs:ident, $neg:ident, $tname:literal) => {
        #[doc = concat!("`div.", $tname, "`: division truncating toward zero; `MIN / -1` wraps to `MIN`; `x / 0` is `-1` for `x >= 0` and `1` for `x < 0` (GPU behaviour).")]
        #[inline]
        pub fn $div(a: $t, b: $t) -> $t {
            if b == 0 {
                if a < 0 {
                    1
                } else {
                    -1
                }
            } else {
                a.wrapping_div(b)
            }
        }
        #[doc = concat!("`rem.", $tname, "`: remainder with the dividend's sign; `x % 0` is `x`, `MIN % -1` is 0.")]
        #[inline]
        pub fn $rem(a: $t, b: $t) -> $t {
            if b == 0 {
                a
            } else {
                a.wrapping_rem(b)
            }
        }
        #[doc = concat!("`abs.", $tname, "`: absolute value, `|MIN|` wraps to `MIN`.")]
        #[inline]
        pub fn $abs(a: $t) -> $t {
            a.wrapping_abs()
        }
        #[doc = concat!("`neg.", $tname, "`: two's complement negation, `-MIN` wraps to `MIN`.")]
        #[inline]
        pub fn $neg(a: $t) -> $t {
            a.wrapping_neg()
        }
    };
}

int_div_unsigned!(u16, div_u16, rem_u16, "u16");
int_div_unsigned!(u32, div_u32, rem_u32, "u32");
int_div_unsigned!(u64, div_u64, rem_u64, "u64");
int_div_signed!(i16, div_s16, rem_s16, abs_s16, neg_s16, "s16");
int_div_signed!(i32, div_s32, rem_s32, abs_s32, neg_s32, "s32");
int_div_signed!(i64, div_s64, rem_s64, abs_s64, neg_s64, "s64");

/// `add.sat.s32`: addition clamped to `i32::MIN..=i32::MAX`.
#[inline]
pub fn add_sat_s32(a: i32, b: i32) -> i32 {
    a.saturating_add(b)
}

/// `sub.sat.s32`: subtraction clamped to `i32::MIN..=i32::MAX`.
#[inline]
pub fn sub_sat_s32(a: i32, b: i32) -> i32 {
    a.saturating_sub(b)
}

/// `mad.hi.sat.s32`: high 32 bits of the 64-bit product, plus `c`, the addition clamped to the
/// `.s32` range.
#[inline]
pub fn mad_hi_sat_s32(a: i32, b: i32, c: i32) -> i32 {
    mul_hi_s32(a, b).saturating_add(c)
}

/// `min.relu.s32`: minimum, then negative results clamp to 0.
#[inline]
pub fn min_relu_s32(a: i32, b: i32) -> i32 {
    a.min(b).max(0)
}

/// `max.relu.s32`: maximum, then negative results clamp to 0.
#[inline]
pub fn max_relu_s32(a: i32, b: i32) -> i32 {
    a.max(b).max(0)
}

/// Apply `f` to both 16-bit halves of two packed `.b32` operands (`.u16x2`/`.s16x2`).
#[inline]
fn packed16(a: u32, b: u32, f: impl Fn(u16, u16) -> u16) -> u32 {
    let lo = f(a as u16, b as u16);
    let hi = f((a >> 16) as u16, (b >> 16) as u16);
    (hi as u32) << 16 | lo as u32
}

/// `min.u16x2`: per-halfword unsigned minimum.
#[inline]
pub fn min_u16x2(a: u32, b: u32) -> u32 {
    packed16(a, b, |x, y| x.min(y))
}

/// `max.u16x2`: per-halfword unsigned maximum.
#[inline]
pub fn max_u16x2(a: u32, b: u32) -> u32 {
    packed16(a, b, |x, y| x.max(y))
}

/// `min{.relu}.s16x2`: per-halfword signed minimum, `.relu` clamping negatives to 0.
#[inline]
pub fn min_s16x2(a: u32, b: u32, relu: bool) -> u32 {
    packed16(a, b, |x, y| {
        let m = (x as i16).min(y as i16);
        (if relu { m.max(0) } else { m }) as u16
    })
}

/// `max{.relu}.s16x2`: per-halfword signed maximum, `.relu` clamping negatives to 0.
#[inline]
pub fn max_s16x2(a: u32, b: u32, relu: bool) -> u32 {
    packed16(a, b, |x, y| {
        let m = (x as i16).max(y as i16);
        (if relu { m.max(0) } else { m }) as u16
    })
}

/// `add.u16x2` / `add.s16x2`: per-halfword wrapping addition (the bits are the same for both).
#[inline]
pub fn add_u16x2(a: u32, b: u32) -> u32 {
    packed16(a, b, |x, y| x.wrapping_add(y))
}

/// The 24-bit operand of `mul24`/`mad24`: the low 24 bits, sign-extended for `.s32`.
#[inline]
fn low24(a: u32, signed: bool) -> i64 {
    if signed {
        ((a << 8) as i32 >> 8) as i64
    } else {
        (a & 0x00FF_FFFF) as i64
    }
}

/// `mul24.lo.{u32,s32}` (`hi = false`) and `mul24.hi` (`hi = true`): the 48-bit product of the
/// low 24 bits of `a` and `b` (sign-extended from bit 23 for `.s32`); `.lo` returns bits 31..0,
/// `.hi` bits 47..16.
#[inline]
pub fn mul24(a: u32, b: u32, hi: bool, signed: bool) -> u32 {
    let t = low24(a, signed) * low24(b, signed);
    if hi {
        (t >> 16) as u32
    } else {
        t as u32
    }
}

/// `mad24.{lo,hi}.{u32,s32}`: [`mul24`] plus `c`, wrapping; `sat` (only `.hi.sat.s32`) clamps
/// the signed addition to the `.s32` range.
#[inline]
pub fn mad24(a: u32, b: u32, c: u32, hi: bool, signed: bool, sat: bool) -> u32 {
    let p = mul24(a, b, hi, signed);
    if sat {
        (p as i32).saturating_add(c as i32) as u32
    } else {
        p.wrapping_add(c)
    }
}

/// `dp4a.atype.btype`: `c` plus the sum of the four byte-wise products of `a` and `b`, each byte
/// sign- or zero-extended per its type; wraps modulo `2^32`.
#[inline]
pub fn dp4a(a: u32, b: u32, c: u32, a_signed: bool, b_signed: bool) -> u32 {
    let mut d = c;
    for i in 0..4 {
        let x = byte_ext(a, i, a_signed);
        let y = byte_ext(b, i, b_signed);
        d = d.wrapping_add((x * y) as u32);
    }
    d
}

/// `dp2a.{lo,hi}.atype.btype`: `c` plus the two products of `a`'s halfwords with bytes 0,1
/// (`.lo`) or 2,3 (`.hi`, `hi = true`) of `b`; wraps modulo `2^32`.
#[inline]
pub fn dp2a(a: u32, b: u32, c: u32, hi: bool, a_signed: bool, b_signed: bool) -> u32 {
    let sel = if hi { 2 } else { 0 };
    let mut d = c;
    for i in 0..2 {
        let h = (a >> (16 * i)) as u16;
        let x = if a_signed { h as i16 as i64 } else { h as i64 };
        let y = byte_ext(b, sel + i, b_signed);
        d = d.wrapping_add((x * y) as u32);
    }
    d
}

#[inline]
fn byte_ext(v: u32, i: u32, signed: bool) -> i64 {
    let byte = (v >> (8 * i)) as u8;
    if signed {
        byte as i8 as i64
    } else {
        byte as i64
    }
}

// ---- extended precision: the CC.CF carry chain ----------------------------------------------

macro_rules! carry_chain {
    ($t:ty, $st:ty, $wide:ty, $swide:ty, $bits:expr, $add_cc:ident, $addc:ident, $sub_cc:ident, $subc:ident,
     $mad_cc:ident, $madc:ident, $tname:literal) => {
        #[doc = concat!("`add.cc.", $tname, "`: `a + b`, returning the sum and the carry-out for `CC.CF`.")]
        #[inline]
        pub fn $add_cc(a: $t, b: $t) -> ($t, bool) {
            a.overflowing_add(b)
        }
        #[doc = concat!("`addc{.cc}.", $tname, "`: `a + b + CC.CF`, returning the sum and carry-out.")]
        #[inline]
        pub fn $addc(a: $t, b: $t, cf: bool) -> ($t, bool) {
            let s = a as $wide + b as $wide + cf as $wide;
            (s as $t, s >> $bits != 0)
        }
        #[doc = concat!("`sub.cc.", $tname, "`: `a - b`, returning the difference and the borrow-out for `CC.CF`.")]
        #[inline]
        pub fn $sub_cc(a: $t, b: $t) -> ($t, bool) {
            a.overflowing_sub(b)
        }
        #[doc = concat!("`subc{.cc}.", $tname, "`: `a - (b + CC.CF)`, returning the difference and borrow-out.")]
        #[inline]
        pub fn $subc(a: $t, b: $t, cf: bool) -> ($t, bool) {
            let need = b as $wide + cf as $wide;
            ((a as $wide).wrapping_sub(need) as $t, need > a as $wide)
        }
        #[doc = concat!("`mad{.lo,.hi}.cc.", $tname, "` / `madc{.lo,.hi}{.cc}.", $tname,
            "`: the low (`hi = false`) or high half of `a * b` (signed product when `signed`), plus `c`, plus `cf` ",
            "(pass `false` for `mad.cc`); returns the sum and the carry-out of the addition.")]
        #[inline]
        pub fn $madc(a: $t, b: $t, c: $t, hi: bool, signed: bool, cf: bool) -> ($t, bool) {
            let part: $t = if !hi {
                a.wrapping_mul(b)
            } else if signed {
                (((a as $st as $swide) * (b as $st as $swide)) >> $bits) as $t
            } else {
                ((a as $wide * b as $wide) >> $bits) as $t
            };
            $addc(part, c, cf)
        }
        #[doc = concat!("`mad{.lo,.hi}.cc.", $tname, "`: [`", stringify!($madc), "`] without carry-in.")]
        #[inline]
        pub fn $mad_cc(a: $t, b: $t, c: $t, hi: bool, signed: bool) -> ($t, bool) {
            $madc(a, b, c, hi, signed, false)
        }
    };
}

carry_chain!(
    u32, i32, u64, i64, 32, add_cc_u32, addc_u32, sub_cc_u32, subc_u32, mad_cc_u32, madc_u32, "u32"
);
carry_chain!(
    u64, i64, u128, i128, 64, add_cc_u64, addc_u64, sub_cc_u64, subc_u64, mad_cc_u64, madc_u64,
    "u64"
);

// ---- the same operations behind traits, for callers generic over the type -------------------

/// The arithmetic every PTX integer type (`.u16 .s16 .u32 .s32 .u64 .s64`) has, for code that is
/// generic over the instruction type. Each method is the free function of that type
/// (`<u32 as IntOps>::idiv` is [`div_u32`]).
pub trait IntOps: Copy {
    /// `add`: wrapping.
    fn iadd(a: Self, b: Self) -> Self;
    /// `sub`: wrapping.
    fn isub(a: Self, b: Self) -> Self;
    /// `mul.lo`.
    fn mul_lo(a: Self, b: Self) -> Self;
    /// `mul.hi`.
    fn mul_hi(a: Self, b: Self) -> Self;
    /// `mad.lo`.
    fn mad_lo(a: Self, b: Self, c: Self) -> Self;
    /// `mad.hi`.
    fn mad_hi(a: Self, b: Self, c: Self) -> Self;
    /// `min`.
    fn imin(a: Self, b: Self) -> Self;
    /// `max`.
    fn imax(a: Self, b: Self) -> Self;
    /// `sad`.
    fn isad(a: Self, b: Self, c: Self) -> Self;
    /// `div` (GPU results for division by zero).
    fn idiv(a: Self, b: Self) -> Self;
    /// `rem` (GPU results for division by zero).
    fn irem(a: Self, b: Self) -> Self;
}

macro_rules! int_ops_impl {
    ($t:ty, $add:ident, $sub:ident, $mul_lo:ident, $mul_hi:ident, $mad_lo:ident, $mad_hi:ident,
     $min:ident, $max:ident, $sad:ident, $div:ident, $rem:ident) => {
        impl IntOps for $t {
            #[inline(always)]
            fn iadd(a: $t, b: $t) -> $t {
                $add(a, b)
            }
            #[inline(always)]
            fn isub(a: $t, b: $t) -> $t {
                $sub(a, b)
            }
            #[inline(always)]
            fn mul_lo(a: $t, b: $t) -> $t {
                $mul_lo(a, b)
            }
            #[inline(always)]
            fn mul_hi(a: $t, b: $t) -> $t {
                $mul_hi(a, b)
            }
            #[inline(always)]
            fn mad_lo(a: $t, b: $t, c: $t) -> $t {
                $mad_lo(a, b, c)
            }
            #[inline(always)]
            fn mad_hi(a: $t, b: $t, c: $t) -> $t {
                $mad_hi(a, b, c)
            }
            #[inline(always)]
            fn imin(a: $t, b: $t) -> $t {
                $min(a, b)
            }
            #[inline(always)]
            fn imax(a: $t, b: $t) -> $t {
                $max(a, b)
            }
            #[inline(always)]
            fn isad(a: $t, b: $t, c: $t) -> $t {
                $sad(a, b, c)
            }
            #[inline(always)]
            fn idiv(a: $t, b: $t) -> $t {
                $div(a, b)
            }
            #[inline(always)]
            fn irem(a: $t, b: $t) -> $t {
                $rem(a, b)
            }
        }
    };
}

int_ops_impl!(
    u16, add_u16, sub_u16, mul_lo_u16, mul_hi_u16, mad_lo_u16, mad_hi_u16, min_u16, max_u16,
    sad_u16, div_u16, rem_u16
);
int_ops_impl!(
    i16, add_s16, sub_s16, mul_lo_s16, mul_hi_s16, mad_lo_s16, mad_hi_s16, min_s16, max_s16,
    sad_s16, div_s16, rem_s16
);
int_ops_impl!(
    u32, add_u32, sub_u32, mul_lo_u32, mul_hi_u32, mad_lo_u32, mad_hi_u32, min_u32, max_u32,
    sad_u32, div_u32, rem_u32
);
int_ops_impl!(
    i32, add_s32, sub_s32, mul_lo_s32, mul_hi_s32, mad_lo_s32, mad_hi_s32, min_s32, max_s32,
    sad_s32, div_s32, rem_s32
);
int_ops_impl!(
    u64, add_u64, sub_u64, mul_lo_u64, mul_hi_u64, mad_lo_u64, mad_hi_u64, min_u64, max_u64,
    sad_u64, div_u64, rem_u64
);
int_ops_impl!(
    i64, add_s64, sub_s64, mul_lo_s64, mul_hi_s64, mad_lo_s64, mad_hi_s64, min_s64, max_s64,
    sad_s64, div_s64, rem_s64
);

/// `abs` and `neg` of the signed types.
pub trait SignedOps: Copy {
    /// `abs`: `|MIN|` wraps to `MIN`.
    fn iabs(a: Self) -> Self;
    /// `neg`: `-MIN` wraps to `MIN`.
    fn ineg(a: Self) -> Self;
}

macro_rules! signed_ops_impl {
    ($t:ty, $abs:ident, $neg:ident) => {
        impl SignedOps for $t {
            #[inline(always)]
            fn iabs(a: $t) -> $t {
                $abs(a)
            }
            #[inline(always)]
            fn ineg(a: $t) -> $t {
                $neg(a)
            }
        }
    };
}

signed_ops_impl!(i16, abs_s16, neg_s16);
signed_ops_impl!(i32, abs_s32, neg_s32);
signed_ops_impl!(i64, abs_s64, neg_s64);

/// `mul.wide` and `mad.wide` of the 16- and 32-bit types.
pub trait WideOps: Copy {
    /// The double-width type of the result.
    type Wide: Copy;
    /// `mul.wide`.
    fn mul_wide(a: Self, b: Self) -> Self::Wide;
    /// `mad.wide`.
    fn mad_wide(a: Self, b: Self, c: Self::Wide) -> Self::Wide;
}

macro_rules! wide_ops_impl {
    ($t:ty, $w:ty, $mul:ident, $mad:ident) => {
        impl WideOps for $t {
            type Wide = $w;
            #[inline(always)]
            fn mul_wide(a: $t, b: $t) -> $w {
                $mul(a, b)
            }
            #[inline(always)]
            fn mad_wide(a: $t, b: $t, c: $w) -> $w {
                $mad(a, b, c)
            }
        }
    };
}

wide_ops_impl!(u16, u32, mul_wide_u16, mad_wide_u16);
wide_ops_impl!(i16, i32, mul_wide_s16, mad_wide_s16);
wide_ops_impl!(u32, u64, mul_wide_u32, mad_wide_u32);
wide_ops_impl!(i32, i64, mul_wide_s32, mad_wide_s32);

/// The carry-chain instructions of the 32- and 64-bit types (signed and unsigned share bits).
pub trait CarryOps: Copy {
    /// `addc` (`add.cc` with `cf = false`): sum and carry-out.
    fn addc(a: Self, b: Self, cf: bool) -> (Self, bool);
    /// `subc` (`sub.cc` with `cf = false`): difference and borrow-out.
    fn subc(a: Self, b: Self, cf: bool) -> (Self, bool);
    /// `madc` (`mad.cc` with `cf = false`): see [`madc_u32`].
    fn madc(a: Self, b: Self, c: Self, hi: bool, signed: bool, cf: bool) -> (Self, bool);
}

macro_rules! carry_ops_impl {
    ($t:ty, $addc:ident, $subc:ident, $madc:ident) => {
        impl CarryOps for $t {
            #[inline(always)]
            fn addc(a: $t, b: $t, cf: bool) -> ($t, bool) {
                $addc(a, b, cf)
            }
            #[inline(always)]
            fn subc(a: $t, b: $t, cf: bool) -> ($t, bool) {
                $subc(a, b, cf)
            }
            #[inline(always)]
            fn madc(a: $t, b: $t, c: $t, hi: bool, signed: bool, cf: bool) -> ($t, bool) {
                $madc(a, b, c, hi, signed, cf)
            }
        }
    };
}

carry_ops_impl!(u32, addc_u32, subc_u32, madc_u32);
carry_ops_impl!(u64, addc_u64, subc_u64, madc_u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_add_sub() {
        assert_eq!(add_u32(u32::MAX, 1), 0);
        assert_eq!(add_s32(i32::MAX, 1), i32::MIN);
        assert_eq!(sub_u16(0, 1), 0xFFFF);
        assert_eq!(sub_s64(i64::MIN, 1), i64::MAX);
        assert_eq!(add_s16(-1, -1), -2);
        assert_eq!(add_u64(u64::MAX, u64::MAX), u64::MAX - 1);
    }

    #[test]
    fn saturating() {
        assert_eq!(add_sat_s32(i32::MAX, 1), i32::MAX);
        assert_eq!(add_sat_s32(i32::MIN, -1), i32::MIN);
        assert_eq!(add_sat_s32(0x4000_0000, 0x4000_0000), i32::MAX);
        assert_eq!(add_sat_s32(5, -7), -2);
        assert_eq!(sub_sat_s32(i32::MIN, 1), i32::MIN);
        assert_eq!(sub_sat_s32(i32::MAX, -1), i32::MAX);
        assert_eq!(sub_sat_s32(0, i32::MIN), i32::MAX);
        // mad.hi.sat.s32: hi(2^30 * 2^30) = 2^28; + MAX saturates.
        assert_eq!(mad_hi_sat_s32(1 << 30, 1 << 30, i32::MAX), i32::MAX);
        assert_eq!(mad_hi_sat_s32(1 << 30, 1 << 30, 1), (1 << 28) + 1);
        assert_eq!(mad_hi_sat_s32(-(1 << 30), 1 << 30, i32::MIN), i32::MIN);
    }

    #[test]
    fn multiply_halves() {
        // 0xFFFF_FFFF^2 = 0xFFFF_FFFE_0000_0001
        assert_eq!(mul_lo_u32(0xFFFF_FFFF, 0xFFFF_FFFF), 1);
        assert_eq!(mul_hi_u32(0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFE);
        assert_eq!(
            mul_wide_u32(0xFFFF_FFFF, 0xFFFF_FFFF),
            0xFFFF_FFFE_0000_0001
        );
        // (-1)*(-1) = 1: high word 0 when signed.
        assert_eq!(mul_hi_s32(-1, -1), 0);
        assert_eq!(mul_hi_s32(-1, 1), -1);
        assert_eq!(mul_wide_s32(-2, 3), -6);
        assert_eq!(mul_wide_s16(-32768, -32768), 1 << 30);
        assert_eq!(mul_wide_u16(0xFFFF, 0xFFFF), 0xFFFE_0001);
        assert_eq!(mul_hi_u16(0xFFFF, 0xFFFF), 0xFFFE);
        assert_eq!(mul_hi_s16(-32768, 2), -1);
        // mul.hi.s64 of extremes: MIN*MIN = 2^126 -> high 64 bits 2^62.
        assert_eq!(mul_hi_s64(i64::MIN, i64::MIN), 1 << 62);
        // MIN*MAX = -2^126 + 2^63 -> high = -2^62 (floor), low = 2^63.
        assert_eq!(mul_hi_s64(i64::MIN, i64::MAX), -(1 << 62));
        assert_eq!(mul_lo_s64(i64::MIN, i64::MAX), i64::MIN);
        assert_eq!(mul_hi_s64(-1, -1), 0);
        assert_eq!(mul_hi_s64(-1, 1), -1);
        assert_eq!(mul_hi_u64(u64::MAX, u64::MAX), u64::MAX - 1);
        assert_eq!(mul_hi_u64(1 << 32, 1 << 32), 1);
        assert_eq!(mul_lo_u64(u64::MAX, u64::MAX), 1);
    }

    #[test]
    fn multiply_add() {
        assert_eq!(mad_lo_u32(0x1_0001, 0x1_0001, 5), 0x0002_0006);
        assert_eq!(mad_hi_u32(0xFFFF_FFFF, 0xFFFF_FFFF, 2), 0);
        assert_eq!(mad_wide_s32(-1, 1, 10), 9);
        // 0xFFFF_FFFE_0000_0001 + 0x1_FFFF_FFFF = 2^64, wraps to 0.
        assert_eq!(mad_wide_u32(0xFFFF_FFFF, 0xFFFF_FFFF, 0x1_FFFF_FFFF), 0);
        assert_eq!(mad_lo_s16(300, 300, 0), (90000i32 as i16));
        assert_eq!(mad_hi_s64(i64::MIN, i64::MIN, 1), (1 << 62) + 1);
        assert_eq!(mad_wide_u16(0xFFFF, 2, 3), 0x2_0001);
        assert_eq!(mad_wide_s16(-1, -1, -1), 0);
    }

    #[test]
    fn mul24_mad24() {
        // 0xFFFFFF as u24 squared = 0xFFFFFE000001 (48 bits).
        assert_eq!(mul24(0xFFFFFF, 0xFFFFFF, false, false), 0xFE00_0001);
        assert_eq!(mul24(0xFFFFFF, 0xFFFFFF, true, false), 0xFFFF_FE00);
        // Bits above 23 are ignored.
        assert_eq!(mul24(0xFF00_0002, 0x0100_0003, false, false), 6);
        // Signed: 0xFFFFFF is -1 in 24 bits.
        assert_eq!(mul24(0xFFFFFF, 0xFFFFFF, false, true), 1);
        assert_eq!(mul24(0xFFFFFF, 2, true, true), 0xFFFF_FFFF);
        assert_eq!(mul24(0x800000, 0x800000, true, true), 0x4000_0000); // (-2^23)^2 = 2^46
        assert_eq!(mad24(3, 4, 5, false, false, false), 17);
        assert_eq!(
            mad24(0x7FFFFF, 0x7FFFFF, 0x7FFF_FFFF, true, true, true),
            0x7FFF_FFFF
        );
        assert_eq!(
            mad24(0x7FFFFF, 0x7FFFFF, 0x7FFF_FFFF, true, true, false),
            0x7FFF_FFFFu32.wrapping_add(0x3FFF_FF00)
        );
    }

    #[test]
    fn sad_values() {
        assert_eq!(sad_u32(3, 10, 100), 107);
        assert_eq!(sad_u32(10, 3, 100), 107);
        assert_eq!(sad_s32(-5, 5, 0), 10);
        assert_eq!(sad_s32(i32::MIN, i32::MAX, 0), -1); // |diff| = 2^32-1 wraps
        assert_eq!(sad_u16(0, 0xFFFF, 1), 0);
        assert_eq!(sad_s64(-1, 1, -2), 0);
    }

    #[test]
    fn division_and_remainder() {
        assert_eq!(div_u32(7, 2), 3);
        assert_eq!(rem_u32(7, 2), 1);
        assert_eq!(div_u32(7, 0), 0xFFFF_FFFF);
        assert_eq!(rem_u32(7, 0), 7);
        assert_eq!(div_u16(1, 0), 0xFFFF);
        assert_eq!(div_u64(1, 0), u64::MAX);
        assert_eq!(div_s32(7, 0), -1);
        assert_eq!(div_s32(0, 0), -1);
        assert_eq!(div_s32(-7, 0), 1);
        assert_eq!(rem_s32(-7, 0), -7);
        assert_eq!(div_s64(-1, 0), 1);
        assert_eq!(div_s16(5, 0), -1);
        assert_eq!(div_s32(-7, 2), -3);
        assert_eq!(rem_s32(-7, 2), -1);
        assert_eq!(rem_s32(7, -2), 1);
        assert_eq!(div_s32(i32::MIN, -1), i32::MIN);
        assert_eq!(rem_s32(i32::MIN, -1), 0);
        assert_eq!(div_s64(i64::MIN, -1), i64::MIN);
        assert_eq!(div_s16(i16::MIN, -1), i16::MIN);
        assert_eq!(rem_u64(u64::MAX, 10), 5);
    }

    #[test]
    fn abs_neg_min_max() {
        assert_eq!(abs_s32(i32::MIN), i32::MIN);
        assert_eq!(abs_s32(-5), 5);
        assert_eq!(neg_s32(i32::MIN), i32::MIN);
        assert_eq!(neg_s16(5), -5);
        assert_eq!(abs_s64(-1), 1);
        assert_eq!(min_s32(-1, 1), -1);
        assert_eq!(min_u32(0xFFFF_FFFF, 1), 1);
        assert_eq!(max_s64(-1, 1), 1);
        assert_eq!(max_u16(0xFFFF, 1), 0xFFFF);
        assert_eq!(min_relu_s32(-5, 3), 0);
        assert_eq!(max_relu_s32(-5, -3), 0);
        assert_eq!(max_relu_s32(-5, 3), 3);
        // Packed: halves are independent.
        assert_eq!(min_u16x2(0x0001_FFFF, 0x0002_0003), 0x0001_0003);
        assert_eq!(max_u16x2(0x0001_FFFF, 0x0002_0003), 0x0002_FFFF);
        assert_eq!(min_s16x2(0x0001_FFFF, 0x0002_0003, false), 0x0001_FFFF);
        assert_eq!(min_s16x2(0x0001_FFFF, 0x0002_0003, true), 0x0001_0000);
        assert_eq!(max_s16x2(0x8000_FFFF, 0xFFFF_FFFE, false), 0xFFFF_FFFF);
        assert_eq!(max_s16x2(0x8000_FFFF, 0xFFFF_FFFE, true), 0);
        // add.u16x2: each half wraps on its own, no carry between halves.
        assert_eq!(add_u16x2(0xFFFF_0001, 0x0001_0001), 0x0000_0002);
        assert_eq!(add_u16x2(0x7FFF_FFFF, 0x0001_0001), 0x8000_0000);
    }

    #[test]
    fn dot_products() {
        assert_eq!(dp4a(0x0102_0304, 0x0101_0101, 0, false, false), 10);
        // Signed bytes: 0xFF = -1.
        assert_eq!(
            dp4a(0xFFFF_FFFF, 0x0101_0101, 0, true, false),
            (-4i32) as u32
        );
        assert_eq!(dp4a(0xFFFF_FFFF, 0x0101_0101, 0, false, false), 4 * 255);
        assert_eq!(dp4a(0x8080_8080, 0x8080_8080, 1, true, true), 1 + 4 * 16384);
        assert_eq!(
            dp4a(0x8080_8080, 0xFFFF_FFFF, 0, true, false),
            (-4 * 128 * 255i32) as u32
        );
        // dp2a: a halves (1, 2); b bytes (lo: 3, 4; hi: 5, 6)
        assert_eq!(
            dp2a(0x0002_0001, 0x0605_0403, 10, false, false, false),
            10 + 3 + 8
        );
        assert_eq!(
            dp2a(0x0002_0001, 0x0605_0403, 10, true, false, false),
            10 + 5 + 12
        );
        assert_eq!(
            dp2a(0xFFFF_FFFF, 0x0000_0101, 0, false, true, false),
            (-2i32) as u32
        );
        assert_eq!(
            dp2a(0xFFFF_FFFF, 0x0000_FFFF, 0, false, false, true),
            (-2 * 65535i32) as u32
        );
    }

    #[test]
    fn carry_chain_128bit_add() {
        // (2^64 - 1) + 1 over two 64-bit limbs, or four 32-bit limbs.
        let (l0, c) = add_cc_u32(0xFFFF_FFFF, 1);
        let (l1, c) = addc_u32(0xFFFF_FFFF, 0, c);
        let (l2, c) = addc_u32(0, 0, c);
        assert_eq!((l0, l1, l2, c), (0, 0, 1, false));
        assert_eq!(
            addc_u32(0xFFFF_FFFF, 0xFFFF_FFFF, true),
            (0xFFFF_FFFF, true)
        );
        assert_eq!(add_cc_u64(u64::MAX, 2), (1, true));
        assert_eq!(addc_u64(u64::MAX, 0, true), (0, true));
        // Borrow chain: 0x1_0000_0000 - 1.
        let (l0, b) = sub_cc_u32(0, 1);
        let (l1, b) = subc_u32(1, 0, b);
        assert_eq!((l0, l1, b), (0xFFFF_FFFF, 0, false));
        assert_eq!(subc_u32(0, 0xFFFF_FFFF, true), (0, true));
        assert_eq!(subc_u32(5, 5, false), (0, false));
        assert_eq!(subc_u32(5, 5, true), (0xFFFF_FFFF, true));
        assert_eq!(sub_cc_u64(0, 1), (u64::MAX, true));
        assert_eq!(subc_u64(u64::MAX, u64::MAX, true), (u64::MAX, true));
    }

    #[test]
    fn carry_chain_multiword_multiply() {
        // 64x64 -> 128 with 32-bit limbs, as the ISA's madc example does, against u128.
        let samples = [
            (u64::MAX, u64::MAX),
            (0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321),
            (1 << 63, 3),
        ];
        for (x, y) in samples {
            let (a0, a1) = (x as u32, (x >> 32) as u32);
            let (b0, b1) = (y as u32, (y >> 32) as u32);
            // r = a0*b0 + (a0*b1 + a1*b0) << 32 + a1*b1 << 64
            let r0 = mul_lo_u32(a0, b0);
            let (r1, c) = mad_cc_u32(a0, b0, 0, true, false);
            let (r1, c1) = {
                let (s, c2) = mad_cc_u32(a0, b1, r1, false, false);
                (s, c as u32 + c2 as u32)
            };
            let (r1, c3) = mad_cc_u32(a1, b0, r1, false, false);
            let carry_into_r2 = c1 + c3 as u32;
            let (r2, c) = mad_cc_u32(a0, b1, carry_into_r2, true, false);
            let (r2, c4) = madc_u32(a1, b0, r2, true, false, false);
            let (r2, c5) = madc_u32(a1, b1, r2, false, false, false);
            let (r3, _) = madc_u32(a1, b1, c as u32 + c4 as u32 + c5 as u32, true, false, false);
            let got = (r3 as u128) << 96 | (r2 as u128) << 64 | (r1 as u128) << 32 | r0 as u128;
            assert_eq!(got, x as u128 * y as u128, "{x:#x} * {y:#x}");
        }
        // Signed high half: hi(-1 * 1) = -1.
        assert_eq!(
            mad_cc_u32(0xFFFF_FFFF, 1, 0, true, true),
            (0xFFFF_FFFF, false)
        );
        assert_eq!(mad_cc_u32(0xFFFF_FFFF, 1, 1, true, true), (0, true));
        assert_eq!(
            madc_u64(u64::MAX, u64::MAX, 0, true, false, true),
            (u64::MAX - 1 + 1, false)
        );
        assert_eq!(
            madc_u64(u64::MAX, u64::MAX, 0, false, false, true),
            (2, false)
        );
        assert_eq!(madc_u64(u64::MAX, 1, 1, true, true, false), (0, true));
    }
}
