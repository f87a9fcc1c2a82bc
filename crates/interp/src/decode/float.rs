//! Decoding of the floating-point instructions, comparisons, selections and conversions
//! (handlers in [`crate::ops_float`]): the typed modifiers become a handler choice and packed
//! `aux` bits.

use super::{Dec, R};
use crate::handlers::{PRED_BOOL_SHIFT, PRED_NEG_C};
use crate::ops_float::*;
use crate::program::{Insn, Op};
use crate::semantics::cmp::{self, BoolOp, CmpOp, SetDst};
use crate::semantics::cvt::{self, FloatType, Fp8, PackType};
use crate::semantics::float::{self as fl, MinMax, TestOp};
use crate::semantics::half::{self};
use crate::semantics::{IntRounding, Rounding};
use ptx_ir::{Modifier, Operand};
use ptx_isa::{ScalarType as T, TypeKind};
/// `div.rnd{.ftz}.f32` in the shape of the other binary operations.
#[inline(always)]
pub(crate) fn div_f32(a: f32, b: f32, r: Rounding, ftz: bool, _sat: bool) -> f32 {
    fl::div_f32(a, b, r, ftz)
}

/// A binary `.f32` operation `f(a, b, rnd, ftz, sat)`: constant modifiers for `.rn` without
/// `.sat` (with and without `.ftz`), modifiers from `aux` otherwise.
macro_rules! f32_2 {
    ($m:expr, $f:path) => {{
        let m: &Mods = $m;
        if m.plain() && !m.ftz {
            crate::alu2!(i, a, b => b32($f(f32_of(a), f32_of(b), Rounding::Rn, false, false)))
        } else if m.plain() {
            crate::alu2!(i, a, b => b32($f(f32_of(a), f32_of(b), Rounding::Rn, true, false)))
        } else {
            crate::alu2!(i, a, b => b32($f(
                f32_of(a),
                f32_of(b),
                rnd(i.aux),
                i.aux & FTZ != 0,
                i.aux & SAT != 0
            )))
        }
    }};
}

/// `fma`/`mad` on `.f32`, like [`f32_2`].
macro_rules! f32_3 {
    ($m:expr, $f:path) => {{
        let m: &Mods = $m;
        if m.plain() && !m.ftz {
            crate::alu3!(i, a, b, c => b32($f(
                f32_of(a), f32_of(b), f32_of(c), Rounding::Rn, false, false
            )))
        } else if m.plain() {
            crate::alu3!(i, a, b, c => b32($f(
                f32_of(a), f32_of(b), f32_of(c), Rounding::Rn, true, false
            )))
        } else {
            crate::alu3!(i, a, b, c => b32($f(
                f32_of(a),
                f32_of(b),
                f32_of(c),
                rnd(i.aux),
                i.aux & FTZ != 0,
                i.aux & SAT != 0
            )))
        }
    }};
}

/// A binary `.f64` operation `f(a, b, rnd)`.
macro_rules! f64_2 {
    ($m:expr, $f:path) => {{
        if $m.rn() {
            crate::alu2!(i, a, b => b64($f(f64_of(a), f64_of(b), Rounding::Rn)))
        } else {
            crate::alu2!(i, a, b => b64($f(f64_of(a), f64_of(b), rnd(i.aux))))
        }
    }};
}

/// A one-operand `.f32` operation `f(a, ftz)`.
macro_rules! f32_1_ftz {
    ($m:expr, $f:path) => {{
        if $m.ftz {
            crate::alu1!(i, a => b32($f(f32_of(a), true)))
        } else {
            crate::alu1!(i, a => b32($f(f32_of(a), false)))
        }
    }};
}

/// A one-operand `.f32` operation `f(a, rnd, ftz)`.
macro_rules! f32_1_rnd {
    ($m:expr, $f:path) => {{
        let m: &Mods = $m;
        if m.rn() && !m.ftz {
            crate::alu1!(i, a => b32($f(f32_of(a), Rounding::Rn, false)))
        } else {
            crate::alu1!(i, a => b32($f(f32_of(a), rnd(i.aux), i.aux & FTZ != 0)))
        }
    }};
}

/// Sets up the `.BoolOp` combination with the predicate operand `k`; returns its `aux` bits.
pub(crate) fn bool_setup(d: &mut Dec<'_, '_>, insn: &mut Insn, m: &Mods, k: usize) -> R<u64> {
    let code = match m.boolop {
        None => return Ok(0),
        Some(BoolOp::And) => 1u64,
        Some(BoolOp::Or) => 2,
        Some(BoolOp::Xor) => 3,
    };
    let (c, neg) = d.pred_src(k)?;
    insn.c = c;
    Ok(code << PRED_BOOL_SHIFT | if neg { PRED_NEG_C } else { 0 })
}

/// Handlers with constant class and operator for the common comparisons.
macro_rules! setp_ops {
    ($class:ident, $ftz:literal, $op:expr) => {
        match $op {
            CmpOp::Eq => Some(crate::pred2!(i, a, b => cmp_val($class, CmpOp::Eq, $ftz, a, b))),
            CmpOp::Ne => Some(crate::pred2!(i, a, b => cmp_val($class, CmpOp::Ne, $ftz, a, b))),
            CmpOp::Lt => Some(crate::pred2!(i, a, b => cmp_val($class, CmpOp::Lt, $ftz, a, b))),
            CmpOp::Le => Some(crate::pred2!(i, a, b => cmp_val($class, CmpOp::Le, $ftz, a, b))),
            CmpOp::Gt => Some(crate::pred2!(i, a, b => cmp_val($class, CmpOp::Gt, $ftz, a, b))),
            CmpOp::Ge => Some(crate::pred2!(i, a, b => cmp_val($class, CmpOp::Ge, $ftz, a, b))),
            _ => None,
        }
    };
}

/// The fast handler of a scalar conversion, if there is one.
pub(crate) fn cvt_fast(dst: Ct, src: Ct, m: &Mods) -> Option<Op> {
    let (dc, sc) = (ct_code(dst), ct_code(src));
    match (dst, src) {
        (Ct::I(_), Ct::I(_)) if !m.sat => Some(match (dc, sc) {
            (U32, U32) => Op::Alu(cvt_ii::<U32, U32>),
            (U32, S32) => Op::Alu(cvt_ii::<U32, S32>),
            (U32, U64) => Op::Alu(cvt_ii::<U32, U64>),
            (U32, S64) => Op::Alu(cvt_ii::<U32, S64>),
            (S32, U32) => Op::Alu(cvt_ii::<S32, U32>),
            (S32, S32) => Op::Alu(cvt_ii::<S32, S32>),
            (S32, U64) => Op::Alu(cvt_ii::<S32, U64>),
            (S32, S64) => Op::Alu(cvt_ii::<S32, S64>),
            (U64, U32) => Op::Alu(cvt_ii::<U64, U32>),
            (U64, S32) => Op::Alu(cvt_ii::<U64, S32>),
            (U64, U64) => Op::Alu(cvt_ii::<U64, U64>),
            (U64, S64) => Op::Alu(cvt_ii::<U64, S64>),
            (S64, U32) => Op::Alu(cvt_ii::<S64, U32>),
            (S64, S32) => Op::Alu(cvt_ii::<S64, S32>),
            (S64, U64) => Op::Alu(cvt_ii::<S64, U64>),
            (S64, S64) => Op::Alu(cvt_ii::<S64, S64>),
            _ => return None,
        }),
        (Ct::F(_), Ct::I(_)) if m.rn() && !m.sat => Some(match (dc, sc) {
            (F32, U32) => Op::Alu(cvt_if::<F32, U32>),
            (F32, S32) => Op::Alu(cvt_if::<F32, S32>),
            (F32, U64) => Op::Alu(cvt_if::<F32, U64>),
            (F32, S64) => Op::Alu(cvt_if::<F32, S64>),
            (F64, U32) => Op::Alu(cvt_if::<F64, U32>),
            (F64, S32) => Op::Alu(cvt_if::<F64, S32>),
            (F64, U64) => Op::Alu(cvt_if::<F64, U64>),
            (F64, S64) => Op::Alu(cvt_if::<F64, S64>),
            _ => return None,
        }),
        (Ct::I(_), Ct::F(_)) if !m.ftz => {
            let ir = m.irnd?;
            Some(match (dc, sc) {
                (U32, F32) => fi_rnd!(U32, F32, ir),
                (S32, F32) => fi_rnd!(S32, F32, ir),
                (U64, F32) => fi_rnd!(U64, F32, ir),
                (S64, F32) => fi_rnd!(S64, F32, ir),
                (U32, F64) => fi_rnd!(U32, F64, ir),
                (S32, F64) => fi_rnd!(S32, F64, ir),
                (U64, F64) => fi_rnd!(U64, F64, ir),
                (S64, F64) => fi_rnd!(S64, F64, ir),
                _ => return None,
            })
        }
        (Ct::F(FloatType::F64), Ct::F(FloatType::F32)) if !m.ftz && !m.sat && m.irnd.is_none() => {
            Some(crate::alu1!(i, a => {
                let x = f32_of(a);
                if x.is_nan() {
                    fl::CANONICAL_NAN_F64
                } else {
                    b64(x as f64)
                }
            }))
        }
        (Ct::F(FloatType::F32), Ct::F(FloatType::F64))
            if m.rn() && !m.ftz && !m.sat && m.irnd.is_none() =>
        {
            Some(crate::alu1!(i, a => {
                let x = f64_of(a) as f32;
                if x.is_nan() {
                    fl::CANONICAL_NAN_F32 as u64
                } else {
                    b32(x)
                }
            }))
        }
        _ => None,
    }
}

/// The register width mask of destination operand `k` (64 bits for `_`).
pub(crate) fn dst_mask(d: &Dec<'_, '_>, k: usize) -> R<u64> {
    Ok(match d.operand(k)? {
        Operand::Reg(r) => width_mask(d.reg_ty(*r).size_bits()),
        _ => u64::MAX,
    })
}

pub(crate) fn setp_fast(class: u64, op: CmpOp, ftz: bool) -> Option<Op> {
    match (class, ftz) {
        (C_U32, _) => setp_ops!(C_U32, false, op),
        (C_S32, _) => setp_ops!(C_S32, false, op),
        (C_U64, _) => setp_ops!(C_U64, false, op),
        (C_S64, _) => setp_ops!(C_S64, false, op),
        (C_F32, false) => setp_ops!(C_F32, false, op),
        (C_F32, true) => setp_ops!(C_F32, true, op),
        (C_F64, _) => setp_ops!(C_F64, false, op),
        _ => None,
    }
}

/// The modifiers of one instruction, parsed once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mods {
    rnd: Option<Rounding>,
    irnd: Option<IntRounding>,
    /// `.rs`: stochastic rounding (`cvt` only).
    rs: bool,
    ftz: bool,
    sat: bool,
    relu: bool,
    nan: bool,
    xorsign_abs: bool,
    oob: bool,
    satfinite: bool,
    approx: bool,
    full: bool,
    cmp: Option<CmpOp>,
    boolop: Option<BoolOp>,
    test: Option<TestOp>,
}

impl Mods {
    fn parse(mods: impl Iterator<Item = Modifier>) -> Mods {
        let mut m = Mods::default();
        for s in mods {
            match s {
                Modifier::Rn => m.rnd = Some(Rounding::Rn),
                Modifier::Rz => m.rnd = Some(Rounding::Rz),
                Modifier::Rm => m.rnd = Some(Rounding::Rm),
                Modifier::Rp => m.rnd = Some(Rounding::Rp),
                Modifier::Rna => m.rnd = Some(Rounding::Rna),
                Modifier::Rs => m.rs = true,
                Modifier::Rni => m.irnd = Some(IntRounding::Rni),
                Modifier::Rzi => m.irnd = Some(IntRounding::Rzi),
                Modifier::Rmi => m.irnd = Some(IntRounding::Rmi),
                Modifier::Rpi => m.irnd = Some(IntRounding::Rpi),
                Modifier::Ftz => m.ftz = true,
                Modifier::Sat => m.sat = true,
                Modifier::Relu => m.relu = true,
                Modifier::NaN => m.nan = true,
                Modifier::Xorsign => m.xorsign_abs = true,
                Modifier::Oob => m.oob = true,
                Modifier::Satfinite => m.satfinite = true,
                Modifier::Approx => m.approx = true,
                Modifier::Full => m.full = true,
                Modifier::And => m.boolop = Some(BoolOp::And),
                Modifier::Or => m.boolop = Some(BoolOp::Or),
                Modifier::Xor => m.boolop = Some(BoolOp::Xor),
                Modifier::Finite => m.test = Some(TestOp::Finite),
                Modifier::Infinite => m.test = Some(TestOp::Infinite),
                Modifier::Number => m.test = Some(TestOp::Number),
                Modifier::Notanumber => m.test = Some(TestOp::NotANumber),
                Modifier::Normal => m.test = Some(TestOp::Normal),
                Modifier::Subnormal => m.test = Some(TestOp::Subnormal),
                _ => {
                    if let Some(k) = CMP_NAMES.iter().position(|n| *n == s) {
                        m.cmp = Some(CMP_OPS[k]);
                    }
                }
            }
        }
        m
    }

    /// `aux` bits of the rounding and flag modifiers.
    fn aux(&self) -> u64 {
        let mut a = self.rnd.map_or(0, rnd_code);
        if self.rnd.is_some() {
            a |= HAS_RND;
        }
        if let Some(r) = self.irnd {
            a |= irnd_code(r) << IRND_SHIFT | HAS_IRND;
        }
        for (on, bit) in [
            (self.ftz, FTZ),
            (self.sat, SAT),
            (self.relu, RELU),
            (self.nan, NAN),
            (self.xorsign_abs, XORSIGN),
            (self.oob, OOB),
            (self.satfinite, SATFINITE),
        ] {
            if on {
                a |= bit;
            }
        }
        a
    }

    /// `.rn` (or no rounding) and no `.sat`: the case native arithmetic serves.
    fn plain(&self) -> bool {
        matches!(self.rnd, None | Some(Rounding::Rn)) && !self.sat
    }

    /// The rounding is `.rn` or absent.
    fn rn(&self) -> bool {
        matches!(self.rnd, None | Some(Rounding::Rn))
    }
}

pub(crate) const CMP_NAMES: [Modifier; 18] = [
    Modifier::Eq,
    Modifier::Ne,
    Modifier::Lt,
    Modifier::Le,
    Modifier::Gt,
    Modifier::Ge,
    Modifier::Lo,
    Modifier::Ls,
    Modifier::Hi,
    Modifier::Hs,
    Modifier::Equ,
    Modifier::Neu,
    Modifier::Ltu,
    Modifier::Leu,
    Modifier::Gtu,
    Modifier::Geu,
    Modifier::Num,
    Modifier::Nan,
];

/// Decodes floating-point arithmetic `ar` (the decoder sends the opcodes shared with the
/// integer family here only for a floating-point type).
pub(crate) fn arith(d: &mut Dec<'_, '_>, insn: &mut Insn, ar: Ar) -> R<()> {
    if d.has(Modifier::F32x2) {
        return decode_f32x2(d, insn, ar);
    }
    if let [T::F32, at @ (T::F16 | T::Bf16)] = d.types().as_slice() {
        return decode_mixed(d, insn, ar, *at == T::Bf16);
    }
    if matches!(ar, Ar::Min | Ar::Max) && d.inst.operands.len() > 3 {
        return decode_minmax3(d, insn, ar == Ar::Max);
    }
    let ty = match d.inst.types().last() {
        Some(t) => t,
        None => return Err(format!("`{}` has no type", d.inst.full_name())),
    };
    if ty.kind() != TypeKind::Float {
        return Err(format!(
            "`{}` needs a floating-point type",
            d.inst.full_name()
        ));
    }
    decode_arith(d, insn, ar, ty)
}

/// The floating-point arithmetic opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ar {
    Add,
    Sub,
    Mul,
    Fma,
    Mad,
    Div,
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
    Abs,
    Neg,
    Min,
    Max,
    Copysign,
    Testp,
}

impl Ar {
    #[cfg(test)]
    fn of(op: &str) -> Option<Ar> {
        Some(match op {
            "add" => Ar::Add,
            "sub" => Ar::Sub,
            "mul" => Ar::Mul,
            "fma" => Ar::Fma,
            "mad" => Ar::Mad,
            "div" => Ar::Div,
            "rcp" => Ar::Rcp,
            "sqrt" => Ar::Sqrt,
            "rsqrt" => Ar::Rsqrt,
            "sin" => Ar::Sin,
            "cos" => Ar::Cos,
            "lg2" => Ar::Lg2,
            "ex2" => Ar::Ex2,
            "tanh" => Ar::Tanh,
            "abs" => Ar::Abs,
            "neg" => Ar::Neg,
            "min" => Ar::Min,
            "max" => Ar::Max,
            "copysign" => Ar::Copysign,
            "testp" => Ar::Testp,
            _ => return None,
        })
    }

    /// Number of source operands.
    fn arity(self) -> usize {
        match self {
            Ar::Fma | Ar::Mad => 3,
            Ar::Add | Ar::Sub | Ar::Mul | Ar::Div | Ar::Min | Ar::Max | Ar::Copysign => 2,
            _ => 1,
        }
    }
}

pub(crate) fn decode_arith(d: &mut Dec<'_, '_>, insn: &mut Insn, ar: Ar, ty: T) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    let n = ar.arity();
    let (op, aux) = select_arith(ar, ty, &m)?;
    if ar == Ar::Testp {
        insn.d = d.pred_dst(0)?;
        insn.v[1] = u32::MAX;
    } else {
        insn.d = d.dst(0)?;
    }
    insn.a = d.src(1, ty)?;
    if n >= 2 {
        insn.b = d.src(2, ty)?;
    }
    if n >= 3 {
        insn.c = d.src(3, ty)?;
    }
    insn.aux = aux;
    insn.op = op;
    Ok(())
}

/// `add/sub/mul{.rnd}{.ftz}.f32x2 d, a, b` and `fma.rnd{.ftz}.f32x2 d, a, b, c` (sm_100+): two
/// `.f32` lanes in each `.b64` operand, each computed as the `.f32` instruction would.
pub(crate) fn decode_f32x2(d: &mut Dec<'_, '_>, insn: &mut Insn, ar: Ar) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    if m.sat || m.relu {
        return Err("`.f32x2` arithmetic has no `.sat` or `.relu` form".into());
    }
    let (op, aux) = select_f32x2(ar, &m)?;
    insn.d = d.dst(0)?;
    insn.a = d.src(1, T::B64)?;
    insn.b = d.src(2, T::B64)?;
    if ar == Ar::Fma {
        insn.c = d.src(3, T::B64)?;
    }
    insn.aux = aux;
    insn.op = op;
    Ok(())
}

/// The handler of an `.f32x2` instruction and its `aux`.
pub(crate) fn select_f32x2(ar: Ar, m: &Mods) -> R<(Op, u64)> {
    use crate::{alu2, alu3};
    let op = match ar {
        Ar::Add => alu2!(i, a, b => fl::add_f32x2(a, b, rnd(i.aux), i.aux & FTZ != 0)),
        Ar::Sub => alu2!(i, a, b => fl::sub_f32x2(a, b, rnd(i.aux), i.aux & FTZ != 0)),
        Ar::Mul => alu2!(i, a, b => fl::mul_f32x2(a, b, rnd(i.aux), i.aux & FTZ != 0)),
        Ar::Fma => {
            if m.rnd.is_none() {
                return Err("`fma.f32x2` needs a rounding modifier".into());
            }
            alu3!(i, a, b, c => fl::fma_f32x2(a, b, c, rnd(i.aux), i.aux & FTZ != 0))
        }
        _ => return Err(format!("`{}` has no `.f32x2` form", ar_name(ar))),
    };
    Ok((op, m.aux()))
}

/// The mixed-precision `add/sub{.rnd}{.sat}.f32.atype d, a, c` and
/// `fma.rnd{.sat}.f32.abtype d, a, b, c` (`.atype`: `.f16`/`.bf16`; sm_100+): the half
/// operands are widened exactly and the `.f32` operation rounds once.
pub(crate) fn decode_mixed(d: &mut Dec<'_, '_>, insn: &mut Insn, ar: Ar, bf16: bool) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    if m.ftz || m.relu {
        return Err("mixed-precision arithmetic has no `.ftz` or `.relu` form".into());
    }
    let (op, mut aux) = select_mixed(ar, &m)?;
    if bf16 {
        aux |= BF16;
    }
    let half = if bf16 { T::Bf16 } else { T::F16 };
    insn.d = d.dst(0)?;
    insn.a = d.src(1, half)?;
    if ar == Ar::Fma {
        insn.b = d.src(2, half)?;
        insn.c = d.src(3, T::F32)?;
    } else {
        insn.b = d.src(2, T::F32)?;
    }
    insn.aux = aux;
    insn.op = op;
    Ok(())
}

/// The handler of a mixed-precision instruction and its `aux` (without [`BF16`]).
pub(crate) fn select_mixed(ar: Ar, m: &Mods) -> R<(Op, u64)> {
    use crate::{alu2, alu3};
    let op = match ar {
        Ar::Add => alu2!(i, a, c => b32(fl::add_mixed_f32(
            a as u16,
            i.aux & BF16 != 0,
            f32_of(c),
            rnd(i.aux),
            i.aux & SAT != 0
        ))),
        Ar::Sub => alu2!(i, a, c => b32(fl::sub_mixed_f32(
            a as u16,
            i.aux & BF16 != 0,
            f32_of(c),
            rnd(i.aux),
            i.aux & SAT != 0
        ))),
        Ar::Fma => {
            if m.rnd.is_none() {
                return Err("mixed-precision `fma` needs a rounding modifier".into());
            }
            alu3!(i, a, b, c => b32(fl::fma_mixed_f32(
                a as u16,
                b as u16,
                i.aux & BF16 != 0,
                f32_of(c),
                rnd(i.aux),
                i.aux & SAT != 0
            )))
        }
        _ => {
            return Err(format!(
                "`{}` has no mixed-precision `.f32` form",
                ar_name(ar)
            ))
        }
    };
    Ok((op, m.aux()))
}

/// `.abs` of three-input `min`/`max` (kept apart from the two-input modifier bits).
pub(crate) const ABS3: u64 = 1 << 37;

/// Three-input `min/max{.ftz}{.NaN}{.abs}.f32 d, a, b, c` (PTX 8.8, sm_100+).
pub(crate) fn decode_minmax3(d: &mut Dec<'_, '_>, insn: &mut Insn, max: bool) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    if d.types().as_slice() != [T::F32] {
        return Err("three-input `min`/`max` exists only for `.f32`".into());
    }
    if m.xorsign_abs {
        return Err("three-input `min`/`max` has no `.xorsign.abs` form".into());
    }
    let mut aux = m.aux();
    if d.has(Modifier::Abs) {
        aux |= ABS3;
    }
    insn.d = d.dst(0)?;
    insn.a = d.src(1, T::F32)?;
    insn.b = d.src(2, T::F32)?;
    insn.c = d.src(3, T::F32)?;
    insn.aux = aux;
    insn.op = select_minmax3(max);
    Ok(())
}

pub(crate) fn select_minmax3(max: bool) -> Op {
    use crate::alu3;
    if max {
        alu3!(i, a, b, c => b32(fl::max3_f32(
            f32_of(a), f32_of(b), f32_of(c), minmax(i.aux), i.aux & ABS3 != 0
        )))
    } else {
        alu3!(i, a, b, c => b32(fl::min3_f32(
            f32_of(a), f32_of(b), f32_of(c), minmax(i.aux), i.aux & ABS3 != 0
        )))
    }
}

/// Picks the handler of a float arithmetic instruction; returns it with its `aux`.
pub(crate) fn select_arith(ar: Ar, ty: T, m: &Mods) -> R<(Op, u64)> {
    let mut aux = m.aux();
    let op = match ty {
        T::F32 => select_f32(ar, m)?,
        T::F64 => select_f64(ar, m)?,
        T::F16 | T::F16x2 | T::Bf16 | T::Bf16x2 => {
            if matches!(ty, T::Bf16 | T::Bf16x2) {
                aux |= BF16;
            }
            select_half(ar, ty, m)?
        }
        _ => {
            return Err(format!(
                "`{}` is not supported on `{}`",
                ar_name(ar),
                ty.suffix()
            ))
        }
    };
    if ar == Ar::Testp {
        let t = m.test.ok_or("`testp` needs a property such as `.finite`")?;
        let k = TEST_OPS.iter().position(|&x| x == t).unwrap_or(0) as u64;
        aux |= k << KIND_SHIFT;
    }
    Ok((op, aux))
}

pub(crate) fn ar_name(ar: Ar) -> String {
    format!("{ar:?}").to_lowercase()
}

pub(crate) fn select_f32(ar: Ar, m: &Mods) -> R<Op> {
    Ok(match ar {
        Ar::Add => f32_2!(m, fl::add_f32),
        Ar::Sub => f32_2!(m, fl::sub_f32),
        Ar::Mul => f32_2!(m, fl::mul_f32),
        Ar::Fma | Ar::Mad => f32_3!(m, fl::fma_f32),
        Ar::Div => {
            if m.full {
                crate::alu2!(i, a, b => b32(fl::div_full_f32(f32_of(a), f32_of(b))))
            } else if m.rnd.is_some() {
                f32_2!(m, div_f32)
            } else {
                // `.approx` (the PTX 1.x default when nothing is written)
                crate::alu2!(i, a, b => b32(fl::div_approx_f32(f32_of(a), f32_of(b))))
            }
        }
        Ar::Rcp => {
            if m.rnd.is_some() {
                f32_1_rnd!(m, fl::rcp_f32)
            } else {
                f32_1_ftz!(m, fl::rcp_approx_f32)
            }
        }
        Ar::Sqrt => {
            if m.rnd.is_some() {
                f32_1_rnd!(m, fl::sqrt_f32)
            } else {
                f32_1_ftz!(m, fl::sqrt_approx_f32)
            }
        }
        Ar::Rsqrt => f32_1_ftz!(m, fl::rsqrt_approx_f32),
        Ar::Sin => f32_1_ftz!(m, fl::sin_approx_f32),
        Ar::Cos => f32_1_ftz!(m, fl::cos_approx_f32),
        Ar::Lg2 => f32_1_ftz!(m, fl::lg2_approx_f32),
        Ar::Ex2 => f32_1_ftz!(m, fl::ex2_approx_f32),
        Ar::Tanh => crate::alu1!(i, a => b32(fl::tanh_approx_f32(f32_of(a)))),
        Ar::Abs => f32_1_ftz!(m, fl::abs_f32),
        Ar::Neg => f32_1_ftz!(m, fl::neg_f32),
        Ar::Min | Ar::Max => {
            let plain = !m.ftz && !m.nan && !m.xorsign_abs;
            match (ar == Ar::Max, plain) {
                (false, true) => {
                    crate::alu2!(i, a, b => b32(fl::min_f32(f32_of(a), f32_of(b), MinMax::default())))
                }
                (true, true) => {
                    crate::alu2!(i, a, b => b32(fl::max_f32(f32_of(a), f32_of(b), MinMax::default())))
                }
                (false, false) => {
                    crate::alu2!(i, a, b => b32(fl::min_f32(f32_of(a), f32_of(b), minmax(i.aux))))
                }
                (true, false) => {
                    crate::alu2!(i, a, b => b32(fl::max_f32(f32_of(a), f32_of(b), minmax(i.aux))))
                }
            }
        }
        Ar::Copysign => crate::alu2!(i, a, b => b32(fl::copysign_f32(f32_of(a), f32_of(b)))),
        Ar::Testp => crate::pred1!(i, a => fl::testp_f32(test_of(i.aux), f32_of(a))),
    })
}

pub(crate) fn select_f64(ar: Ar, m: &Mods) -> R<Op> {
    Ok(match ar {
        Ar::Add => f64_2!(m, fl::add_f64),
        Ar::Sub => f64_2!(m, fl::sub_f64),
        Ar::Mul => f64_2!(m, fl::mul_f64),
        Ar::Div => f64_2!(m, fl::div_f64),
        Ar::Fma | Ar::Mad => {
            if m.rn() {
                crate::alu3!(i, a, b, c => b64(fl::fma_f64(f64_of(a), f64_of(b), f64_of(c), Rounding::Rn)))
            } else {
                crate::alu3!(i, a, b, c => b64(fl::fma_f64(f64_of(a), f64_of(b), f64_of(c), rnd(i.aux))))
            }
        }
        Ar::Rcp => {
            if m.approx {
                if !m.ftz {
                    return Err("`rcp.approx.f64` exists only with `.ftz`".into());
                }
                crate::alu1!(i, a => b64(fl::rcp_approx_ftz_f64(f64_of(a))))
            } else {
                crate::alu1!(i, a => b64(fl::rcp_f64(f64_of(a), rnd(i.aux))))
            }
        }
        Ar::Sqrt => {
            if m.approx {
                return Err("`sqrt.approx` exists only for `.f32`".into());
            }
            crate::alu1!(i, a => b64(fl::sqrt_f64(f64_of(a), rnd(i.aux))))
        }
        Ar::Rsqrt => {
            if m.ftz {
                crate::alu1!(i, a => b64(fl::rsqrt_approx_ftz_f64(f64_of(a))))
            } else {
                crate::alu1!(i, a => b64(fl::rsqrt_approx_f64(f64_of(a))))
            }
        }
        Ar::Abs => crate::alu1!(i, a => b64(fl::abs_f64(f64_of(a)))),
        Ar::Neg => crate::alu1!(i, a => b64(fl::neg_f64(f64_of(a)))),
        Ar::Min => crate::alu2!(i, a, b => b64(fl::min_f64(f64_of(a), f64_of(b)))),
        Ar::Max => crate::alu2!(i, a, b => b64(fl::max_f64(f64_of(a), f64_of(b)))),
        Ar::Copysign => crate::alu2!(i, a, b => b64(fl::copysign_f64(f64_of(a), f64_of(b)))),
        Ar::Testp => crate::pred1!(i, a => fl::testp_f64(test_of(i.aux), f64_of(a))),
        Ar::Sin | Ar::Cos | Ar::Lg2 | Ar::Ex2 | Ar::Tanh => {
            return Err(format!("`{}` exists only for `.f32`", ar_name(ar)))
        }
    })
}

/// `.f16`, `.f16x2`, `.bf16`, `.bf16x2`.
pub(crate) fn select_half(ar: Ar, ty: T, m: &Mods) -> R<Op> {
    let bf = matches!(ty, T::Bf16 | T::Bf16x2);
    let x2 = matches!(ty, T::F16x2 | T::Bf16x2);
    if matches!(ar, Ar::Add | Ar::Sub | Ar::Mul | Ar::Fma) && !m.rn() {
        return Err(format!(
            "`{}` on `{}` rounds only to nearest (`.rn`)",
            ar_name(ar),
            ty.suffix()
        ));
    }
    use crate::{alu1, alu2, alu3};
    Ok(match (ar, bf, x2) {
        (Ar::Add, false, false) => {
            alu2!(i, a, b => half::add_f16(a as u16, b as u16, half_mods(i.aux)) as u64)
        }
        (Ar::Add, false, true) => {
            alu2!(i, a, b => half::add_f16x2(a as u32, b as u32, half_mods(i.aux)) as u64)
        }
        (Ar::Add, true, false) => alu2!(i, a, b => half::add_bf16(a as u16, b as u16) as u64),
        (Ar::Add, true, true) => alu2!(i, a, b => half::add_bf16x2(a as u32, b as u32) as u64),
        (Ar::Sub, false, false) => {
            alu2!(i, a, b => half::sub_f16(a as u16, b as u16, half_mods(i.aux)) as u64)
        }
        (Ar::Sub, false, true) => {
            alu2!(i, a, b => half::sub_f16x2(a as u32, b as u32, half_mods(i.aux)) as u64)
        }
        (Ar::Sub, true, false) => alu2!(i, a, b => half::sub_bf16(a as u16, b as u16) as u64),
        (Ar::Sub, true, true) => alu2!(i, a, b => half::sub_bf16x2(a as u32, b as u32) as u64),
        (Ar::Mul, false, false) => {
            alu2!(i, a, b => half::mul_f16(a as u16, b as u16, half_mods(i.aux)) as u64)
        }
        (Ar::Mul, false, true) => {
            alu2!(i, a, b => half::mul_f16x2(a as u32, b as u32, half_mods(i.aux)) as u64)
        }
        (Ar::Mul, true, false) => alu2!(i, a, b => half::mul_bf16(a as u16, b as u16) as u64),
        (Ar::Mul, true, true) => alu2!(i, a, b => half::mul_bf16x2(a as u32, b as u32) as u64),
        (Ar::Fma, false, false) => {
            alu3!(i, a, b, c => half::fma_f16(a as u16, b as u16, c as u16, half_mods(i.aux)) as u64)
        }
        (Ar::Fma, false, true) => {
            alu3!(i, a, b, c => half::fma_f16x2(a as u32, b as u32, c as u32, half_mods(i.aux)) as u64)
        }
        (Ar::Fma, true, false) => {
            alu3!(i, a, b, c => half::fma_bf16(a as u16, b as u16, c as u16, half_mods(i.aux)) as u64)
        }
        (Ar::Fma, true, true) => {
            alu3!(i, a, b, c => half::fma_bf16x2(a as u32, b as u32, c as u32, half_mods(i.aux)) as u64)
        }
        (Ar::Neg, false, false) => alu1!(i, a => half::neg16(a as u16, i.aux & FTZ != 0) as u64),
        (Ar::Neg, false, true) => alu1!(i, a => half::neg16x2(a as u32, i.aux & FTZ != 0) as u64),
        (Ar::Neg, true, false) => alu1!(i, a => half::neg16(a as u16, false) as u64),
        (Ar::Neg, true, true) => alu1!(i, a => half::neg16x2(a as u32, false) as u64),
        (Ar::Abs, false, false) => alu1!(i, a => half::abs16(a as u16, i.aux & FTZ != 0) as u64),
        (Ar::Abs, false, true) => alu1!(i, a => half::abs16x2(a as u32, i.aux & FTZ != 0) as u64),
        (Ar::Abs, true, false) => alu1!(i, a => half::abs16(a as u16, false) as u64),
        (Ar::Abs, true, true) => alu1!(i, a => half::abs16x2(a as u32, false) as u64),
        (Ar::Min, false, false) => {
            alu2!(i, a, b => half::min_f16(a as u16, b as u16, minmax(i.aux)) as u64)
        }
        (Ar::Min, false, true) => {
            alu2!(i, a, b => half::min_f16x2(a as u32, b as u32, minmax(i.aux)) as u64)
        }
        (Ar::Min, true, false) => {
            alu2!(i, a, b => half::min_bf16(a as u16, b as u16, minmax(i.aux)) as u64)
        }
        (Ar::Min, true, true) => {
            alu2!(i, a, b => half::min_bf16x2(a as u32, b as u32, minmax(i.aux)) as u64)
        }
        (Ar::Max, false, false) => {
            alu2!(i, a, b => half::max_f16(a as u16, b as u16, minmax(i.aux)) as u64)
        }
        (Ar::Max, false, true) => {
            alu2!(i, a, b => half::max_f16x2(a as u32, b as u32, minmax(i.aux)) as u64)
        }
        (Ar::Max, true, false) => {
            alu2!(i, a, b => half::max_bf16(a as u16, b as u16, minmax(i.aux)) as u64)
        }
        (Ar::Max, true, true) => {
            alu2!(i, a, b => half::max_bf16x2(a as u32, b as u32, minmax(i.aux)) as u64)
        }
        (Ar::Ex2, bf, false) => {
            if bf {
                alu1!(i, a => half::ex2_approx(a as u16, true) as u64)
            } else {
                alu1!(i, a => half::ex2_approx(a as u16, false) as u64)
            }
        }
        (Ar::Ex2, bf, true) => {
            if bf {
                alu1!(i, a => half::ex2_approx_x2(a as u32, true) as u64)
            } else {
                alu1!(i, a => half::ex2_approx_x2(a as u32, false) as u64)
            }
        }
        (Ar::Tanh, bf, false) => {
            if bf {
                alu1!(i, a => half::tanh_approx(a as u16, true) as u64)
            } else {
                alu1!(i, a => half::tanh_approx(a as u16, false) as u64)
            }
        }
        (Ar::Tanh, bf, true) => {
            if bf {
                alu1!(i, a => half::tanh_approx_x2(a as u32, true) as u64)
            } else {
                alu1!(i, a => half::tanh_approx_x2(a as u32, false) as u64)
            }
        }
        _ => {
            return Err(format!(
                "`{}` is not supported on `{}`",
                ar_name(ar),
                ty.suffix()
            ))
        }
    })
}

/// The handler of `setp` for compare class `class`.
pub(crate) fn select_setp(class: u64, op: CmpOp, ftz: bool) -> Op {
    if class == C_F16X2 || class == C_BF16X2 {
        return Op::Alu(setp_x2);
    }
    setp_fast(class, op, ftz).unwrap_or_else(|| {
        crate::pred2!(i, a, b => cmp_val(
            i.aux >> CLASS_SHIFT & 15,
            cmp_of(i.aux),
            i.aux & FTZ != 0,
            a,
            b
        ))
    })
}

pub(crate) fn decode_setp(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    let ty = d.ty()?;
    let class = cmp_class(ty)?;
    let op = m.cmp.ok_or("`setp` needs a comparison operator")?;
    match d.operand(0)? {
        Operand::Pair(p, q) => {
            insn.d = d.pred_dst_op(p)?;
            insn.v[1] = d.pred_dst_op(q)?;
        }
        o => {
            insn.d = d.pred_dst_op(o)?;
            insn.v[1] = u32::MAX;
        }
    }
    insn.a = d.src(1, ty)?;
    insn.b = d.src(2, ty)?;
    let comb = bool_setup(d, insn, &m, 3)?;
    insn.aux = m.aux() | class << CLASS_SHIFT | cmp_code(op) << CMP_SHIFT | comb;
    insn.op = select_setp(class, op, m.ftz);
    Ok(())
}

pub(crate) fn decode_set(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    let types = d.types();
    let (dt, st) = match types.as_slice() {
        [dt, st] => (*dt, *st),
        _ => return Err("`set` needs a destination and a source type".into()),
    };
    let class = cmp_class(st)?;
    let packed = class == C_F16X2 || class == C_BF16X2;
    let dst = match (dt, packed) {
        (T::U32 | T::S32 | T::B32, false) => SetDst::Int32,
        (T::U16 | T::S16 | T::B16, false) => SetDst::Int16,
        (T::F32, false) => SetDst::F32,
        (T::F16, false) => SetDst::F16,
        (T::Bf16, false) => SetDst::Bf16,
        (T::F16x2, true) => SetDst::F16,
        (T::Bf16x2, true) => SetDst::Bf16,
        (T::U32 | T::S32 | T::B32, true) => SetDst::Int16,
        _ => {
            return Err(format!(
                "`set` with `{}` results of `{}` comparisons",
                dt.suffix(),
                st.suffix()
            ))
        }
    };
    let op = m.cmp.ok_or("`set` needs a comparison operator")?;
    insn.d = d.dst(0)?;
    insn.a = d.src(1, st)?;
    insn.b = d.src(2, st)?;
    let comb = bool_setup(d, insn, &m, 3)?;
    let k = SET_DSTS.iter().position(|&x| x == dst).unwrap_or(0) as u64;
    insn.aux = m.aux() | class << CLASS_SHIFT | cmp_code(op) << CMP_SHIFT | k << KIND_SHIFT | comb;
    insn.op = Op::Alu(set_h);
    Ok(())
}

pub(crate) fn decode_selp(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    if ty.size_bits() > 64 || ty == T::Pred {
        return Err(format!("`selp` on `{}`", ty.suffix()));
    }
    insn.d = d.dst(0)?;
    insn.a = d.src(1, ty)?;
    insn.b = d.src(2, ty)?;
    let (c, neg) = d.pred_src(3)?;
    insn.c = c;
    insn.aux = neg as u64;
    insn.imm = width_mask(ty.size_bits()) as i64;
    insn.op = Op::Alu(selp_h);
    Ok(())
}

pub(crate) fn decode_slct(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    let types = d.types();
    let (dt, ct) = match types.as_slice() {
        [dt, ct] => (*dt, *ct),
        _ => return Err("`slct` needs a destination and a selector type".into()),
    };
    if dt.size_bits() > 64 {
        return Err(format!("`slct` on `{}`", dt.suffix()));
    }
    insn.d = d.dst(0)?;
    insn.a = d.src(1, dt)?;
    insn.b = d.src(2, dt)?;
    insn.c = d.src(3, ct)?;
    insn.imm = width_mask(dt.size_bits()) as i64;
    insn.op = select_slct(ct, m.ftz)?;
    Ok(())
}

pub(crate) fn select_slct(ct: T, ftz: bool) -> R<Op> {
    Ok(match (ct, ftz) {
        (T::S32, _) => crate::alu3!(i, a, b, c => cmp::slct_s32(a, b, c as i32) & i.imm as u64),
        (T::F32, false) => {
            crate::alu3!(i, a, b, c => cmp::slct_f32(a, b, f32_of(c), false) & i.imm as u64)
        }
        (T::F32, true) => {
            crate::alu3!(i, a, b, c => cmp::slct_f32(a, b, f32_of(c), true) & i.imm as u64)
        }
        (t, _) => return Err(format!("`slct` with a `{}` selector", t.suffix())),
    })
}

/// Why the four-operand stochastic-rounding conversions are refused.
const RS_X4: &str = "`cvt.rs` to the x4 formats (`.e4m3x4 .e5m2x4 .e2m3x4 .e3m2x4 .e2m1x4`) \
    is not executed: the ISA text ptxvm follows says which half of `rbits` serves which pair \
    of the four operands, but not which of its bits each operand adds to its dropped mantissa \
    bits, so no result could be exact";

pub(crate) fn decode_cvt(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let m = Mods::parse(d.inst.mods.iter().copied());
    let types = d.types();
    if m.rs && !matches!(types.as_slice(), [T::F16x2 | T::Bf16x2, T::F32]) {
        return Err(RS_X4.into());
    }
    let (dt, at) = match types.as_slice() {
        [dt, at] => (*dt, *at),
        _ => return Err("`cvt` needs a destination and a source type".into()),
    };
    let mut aux = m.aux();
    insn.d = d.dst(0)?;
    let (op, srcs) = select_cvt(dt, at, &m, &mut aux)?;
    insn.a = d.src(1, if srcs >= 2 { T::F32 } else { at })?;
    if srcs >= 2 {
        insn.b = d.src(2, T::F32)?;
    }
    if srcs == 3 {
        insn.c = d.src(3, T::B32)?;
    }
    insn.imm = dst_mask(d, 0)? as i64;
    insn.aux = aux;
    insn.op = op;
    Ok(())
}

/// The handler of `cvt.dt.at` and its number of sources; completes `aux`.
pub(crate) fn select_cvt(dt: T, at: T, m: &Mods, aux: &mut u64) -> R<(Op, usize)> {
    let need_rn_rz = |what: &str| -> R<Rounding> {
        match m.rnd {
            Some(r @ (Rounding::Rn | Rounding::Rz)) => Ok(r),
            _ => Err(format!("`cvt` to `{what}` needs `.rn` or `.rz`")),
        }
    };
    if m.rs {
        return match (dt, at) {
            (T::F16x2 | T::Bf16x2, T::F32) => {
                if dt == T::Bf16x2 {
                    *aux |= BF16;
                }
                let op = crate::alu3!(i, a, b, c => cvt::f32x2_to_16x2_rs(
                    f32_of(a),
                    f32_of(b),
                    c as u32,
                    i.aux & BF16 != 0,
                    cvt_mods(i.aux)
                ) as u64);
                Ok((op, 3))
            }
            _ => Err(RS_X4.into()),
        };
    }
    // Packed and special formats.
    match (dt, at) {
        (T::F16x2 | T::Bf16x2, T::F32) => {
            need_rn_rz(dt.suffix())?;
            if dt == T::Bf16x2 {
                *aux |= BF16;
            }
            let op = crate::alu2!(i, a, b => cvt::f32x2_to_16x2(
                f32_of(a),
                f32_of(b),
                i.aux & BF16 != 0,
                rnd(i.aux),
                cvt_mods(i.aux)
            ) as u64);
            return Ok((op, 2));
        }
        (T::Tf32, T::F32) => {
            if !matches!(m.rnd, Some(Rounding::Rn | Rounding::Rz | Rounding::Rna)) {
                return Err("`cvt` to `.tf32` needs `.rna`, `.rn` or `.rz`".into());
            }
            let op = crate::alu1!(i, a => cvt::f32_to_tf32(f32_of(a), rnd(i.aux), cvt_mods(i.aux)) as u64);
            return Ok((op, 1));
        }
        _ => {}
    }
    if let Some(r) = select_cvt_mx(dt, at, m, aux)? {
        return Ok(r);
    }
    if let Some(f) = fp8_of(dt) {
        if f == Fp8::E5m2 {
            *aux |= 1 << KIND_SHIFT;
        }
        return match at {
            T::F32 => Ok((
                crate::alu2!(i, a, b => cvt::f32x2_to_fp8x2(
                    fp8(i.aux),
                    f32_of(a),
                    f32_of(b),
                    i.aux & RELU != 0
                ) as u64),
                2,
            )),
            T::F16x2 => Ok((
                crate::alu1!(i, a => cvt::f16x2_to_fp8x2(fp8(i.aux), a as u32, i.aux & RELU != 0) as u64),
                1,
            )),
            _ => Err(format!(
                "`cvt{}{}` is not supported",
                dt.suffix(),
                at.suffix()
            )),
        };
    }
    if let (T::F16x2, Some(f)) = (dt, fp8_of(at)) {
        if f == Fp8::E5m2 {
            *aux |= 1 << KIND_SHIFT;
        }
        return Ok((
            crate::alu1!(i, a => cvt::fp8x2_to_f16x2(fp8(i.aux), a as u16, i.aux & RELU != 0) as u64),
            1,
        ));
    }
    let (dst, src) = match (ct_of(dt), ct_of(at)) {
        (Some(x), Some(y)) => (x, y),
        _ => {
            return Err(format!(
                "`cvt{}{}` is not supported",
                dt.suffix(),
                at.suffix()
            ))
        }
    };
    if let (Ct::I(_), Ct::F(_)) = (dst, src) {
        if m.irnd.is_none() {
            return Err(
                "float-to-integer `cvt` needs an integer rounding (`.rni .rzi .rmi .rpi`)".into(),
            );
        }
    }
    *aux |= (ct_code(src) as u64) << CLASS_SHIFT | (ct_code(dst) as u64) << DST_SHIFT;
    let op = cvt_fast(dst, src, m)
        .unwrap_or_else(|| crate::alu1!(i, a => cvt_any(i.aux, a) & i.imm as u64));
    Ok((op, 1))
}

/// The conversions to and from the 4- and 6-bit formats and `.ue8m0` (sm_100a and later
/// families), or `None` for other types; completes `aux` (the format in the `KIND` bits).
pub(crate) fn select_cvt_mx(dt: T, at: T, m: &Mods, aux: &mut u64) -> R<Option<(Op, usize)>> {
    use crate::{alu1, alu2};
    let small = |t: T| match t {
        T::E2m1x2 => Some(cvt::Small::E2m1),
        T::E2m3x2 => Some(cvt::Small::E2m3),
        T::E3m2x2 => Some(cvt::Small::E3m2),
        _ => None,
    };
    let need_rn = |what: &str| -> R<()> {
        if m.rnd == Some(Rounding::Rn) {
            Ok(())
        } else {
            Err(format!("`cvt` {what} needs `.rn`"))
        }
    };
    let kind = |t: cvt::Small| SMALL_TYPES.iter().position(|&x| x == t).unwrap_or(0) as u64;
    Ok(Some(match (dt, at) {
        (T::E2m1x2, T::F32) => {
            need_rn("to `.e2m1x2`")?;
            (
                alu2!(i, a, b => cvt::f32x2_to_e2m1x2(f32_of(a), f32_of(b), i.aux & RELU != 0) as u64),
                2,
            )
        }
        (T::E2m3x2 | T::E3m2x2, T::F32) => {
            need_rn("to a 6-bit format")?;
            *aux |= kind(small(dt).unwrap_or(cvt::Small::E2m3)) << KIND_SHIFT;
            (
                alu2!(i, a, b => cvt::f32x2_to_fp6x2(
                    small_type(i.aux),
                    f32_of(a),
                    f32_of(b),
                    i.aux & RELU != 0
                ) as u64),
                2,
            )
        }
        (T::F16x2, T::E2m1x2) => {
            need_rn("from `.e2m1x2`")?;
            (
                alu1!(i, a => cvt::e2m1x2_to_f16x2(a as u8, i.aux & RELU != 0) as u64),
                1,
            )
        }
        (T::F16x2, T::E2m3x2 | T::E3m2x2) => {
            need_rn("from a 6-bit format")?;
            *aux |= kind(small(at).unwrap_or(cvt::Small::E2m3)) << KIND_SHIFT;
            (
                alu1!(i, a => cvt::fp6x2_to_f16x2(small_type(i.aux), a as u16, i.aux & RELU != 0) as u64),
                1,
            )
        }
        (T::Ue8m0x2, T::F32 | T::Bf16x2) => {
            if !matches!(m.rnd, Some(Rounding::Rz | Rounding::Rp)) {
                return Err("`cvt` to `.ue8m0x2` needs `.rz` or `.rp`".into());
            }
            if at == T::F32 {
                (
                    alu2!(i, a, b => cvt::f32x2_to_ue8m0x2(
                        f32_of(a),
                        f32_of(b),
                        rnd(i.aux) == Rounding::Rp,
                        i.aux & SATFINITE != 0
                    ) as u64),
                    2,
                )
            } else {
                (
                    alu1!(i, a => cvt::bf16x2_to_ue8m0x2(
                        a as u32,
                        rnd(i.aux) == Rounding::Rp,
                        i.aux & SATFINITE != 0
                    ) as u64),
                    1,
                )
            }
        }
        (T::E2m1x2 | T::E2m3x2 | T::E3m2x2, T::F16x2 | T::Bf16x2) => {
            need_rn("to a 4- or 6-bit format")?;
            if !m.satfinite {
                return Err(format!("`cvt` to `{}` needs `.satfinite`", dt.suffix()));
            }
            *aux |= kind(small(dt).unwrap_or(cvt::Small::E2m1)) << KIND_SHIFT;
            if at == T::Bf16x2 {
                *aux |= BF16;
            }
            (
                alu1!(i, a => cvt::half2_to_small2(
                    small_type(i.aux),
                    a as u32,
                    i.aux & BF16 != 0,
                    i.aux & RELU != 0
                ) as u64),
                1,
            )
        }
        (T::Bf16x2, T::E2m1x2 | T::E2m3x2 | T::E3m2x2) => {
            need_rn("from a 4- or 6-bit format")?;
            *aux |= kind(small(at).unwrap_or(cvt::Small::E2m1)) << KIND_SHIFT;
            (
                alu1!(i, a => cvt::small2_to_bf16x2(small_type(i.aux), a as u16, i.aux & RELU != 0) as u64),
                1,
            )
        }
        (T::E4m3x2 | T::E5m2x2, T::Bf16x2) => {
            need_rn("to an 8-bit format")?;
            if dt == T::E5m2x2 {
                *aux |= 1 << KIND_SHIFT;
            }
            (
                alu1!(i, a => cvt::bf16x2_to_fp8x2(fp8(i.aux), a as u32, i.aux & RELU != 0) as u64),
                1,
            )
        }
        (T::Bf16x2, T::E4m3x2 | T::E5m2x2) => {
            need_rn("from an 8-bit format")?;
            if at == T::E5m2x2 {
                *aux |= 1 << KIND_SHIFT;
            }
            (
                alu1!(i, a => cvt::fp8x2_to_bf16x2(fp8(i.aux), a as u16, i.aux & RELU != 0) as u64),
                1,
            )
        }
        (T::Bf16x2, T::Ue8m0x2) => {
            need_rn("from `.ue8m0x2`")?;
            (alu1!(i, a => cvt::ue8m0x2_to_bf16x2(a as u16) as u64), 1)
        }
        _ => return Ok(None),
    }))
}

/// The 4- and 6-bit formats in the order of their `KIND` codes.
pub(crate) const SMALL_TYPES: [cvt::Small; 3] =
    [cvt::Small::E2m1, cvt::Small::E2m3, cvt::Small::E3m2];

#[inline(always)]
pub(crate) fn small_type(aux: u64) -> cvt::Small {
    SMALL_TYPES[(aux >> KIND_SHIFT & 3) as usize % 3]
}

/// `cvt.pack.sat`.
pub(crate) fn decode_cvt_pack(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let types = d.types();
    let ct = *types.first().ok_or("`cvt.pack` needs a type")?;
    let pt = match ct {
        T::U2 => PackType::U2,
        T::S2 => PackType::S2,
        T::U4 => PackType::U4,
        T::S4 => PackType::S4,
        T::U8 => PackType::U8,
        T::S8 => PackType::S8,
        T::U16 => PackType::U16,
        T::S16 => PackType::S16,
        t => return Err(format!("`cvt.pack` to `{}`", t.suffix())),
    };
    insn.d = d.dst(0)?;
    insn.a = d.src(1, T::S32)?;
    insn.b = d.src(2, T::S32)?;
    insn.c = if d.inst.operands.len() > 3 && !matches!(pt, PackType::U16 | PackType::S16) {
        d.src(3, T::B32)?
    } else {
        d.b.konst(0)
    };
    insn.aux = PACK_TYPES.iter().position(|&x| x == pt).unwrap_or(0) as u64;
    insn.op = crate::alu3!(i, a, b, c => cvt::cvt_pack_sat(
        PACK_TYPES[i.aux as usize % PACK_TYPES.len()],
        a as i32,
        b as i32,
        c as u32
    ) as u64);
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Handler selection and wiring. The scalar semantics have their own tests (with
    //! independently computed values) in `crate::semantics`; here hand-computed values check that
    //! each form reaches the right function with the right modifiers, and the fast handlers are
    //! checked against the general ones on many inputs.
    use super::*;
    use crate::program::FULL;
    use crate::semantics::cmp::BoolOp;
    use crate::semantics::float as fl;
    use ptx_ir::Modifier;

    fn mods(s: &[&str]) -> Mods {
        // (an empty string stands for no modifier)
        Mods::parse(
            s.iter()
                .filter(|x| !x.is_empty())
                .map(|x| Modifier::parse(x).expect("a modifier")),
        )
    }

    /// An instruction over slots d=0, a=1, b=2, c=3; predicate d=0, q=1, c=2.
    fn insn(op: Op, aux: u64) -> Insn {
        let mut i = Insn::new(op, 0, 0);
        i.d = 0;
        i.a = 1;
        i.b = 2;
        i.c = 3;
        i.v = [4, u32::MAX, 0, 0];
        i.aux = aux;
        i.imm = -1;
        i
    }

    /// Runs `i` with every lane holding `srcs` and returns lane 0's result (after checking that
    /// lane 31 agrees and that a lane outside the mask is untouched).
    fn run_insn(i: &Insn, srcs: &[u64]) -> u64 {
        let mut r = vec![[0u64; 32]; 6];
        for (k, &v) in srcs.iter().enumerate() {
            r[1 + k] = [v; 32];
        }
        r[0] = [0xDEAD; 32];
        let mut p = vec![0u32; 4];
        let f = match i.op {
            Op::Alu(f) => f,
            _ => panic!("not an ALU op"),
        };
        f(&mut r, &mut p, i, FULL & !(1 << 5));
        assert_eq!(r[0][0], r[0][31]);
        assert_eq!(r[0][5], 0xDEAD, "inactive lane written");
        r[0][0]
    }

    fn arith(op: &str, ty: T, m: &[&str], srcs: &[u64]) -> u64 {
        let (o, aux) = select_arith(Ar::of(op).unwrap(), ty, &mods(m)).unwrap();
        run_insn(&insn(o, aux), srcs)
    }

    fn f(x: f32) -> u64 {
        b32(x)
    }

    fn g(x: f64) -> u64 {
        b64(x)
    }

    #[test]
    fn f32_arith_modes() {
        // 1 + 1.5*2^-24: .rn rounds up to 1+2^-23, .rz truncates, .rp rounds up.
        let (one, tiny) = (0x3F80_0000, 0x33C0_0000);
        assert_eq!(arith("add", T::F32, &[], &[one, tiny]), 0x3F80_0001);
        assert_eq!(arith("add", T::F32, &[".rz"], &[one, tiny]), 0x3F80_0000);
        assert_eq!(arith("add", T::F32, &[".rm"], &[one, tiny]), 0x3F80_0000);
        assert_eq!(arith("add", T::F32, &[".rp"], &[one, tiny]), 0x3F80_0001);
        assert_eq!(arith("sub", T::F32, &[".rn"], &[f(1.5), f(2.25)]), f(-0.75));
        assert_eq!(arith("mul", T::F32, &[".rn"], &[f(1.5), f(2.25)]), f(3.375));
        // inf - inf: the canonical NaN
        assert_eq!(
            arith(
                "add",
                T::F32,
                &[],
                &[f(f32::INFINITY), f(f32::NEG_INFINITY)]
            ),
            0x7FFF_FFFF
        );
        // .ftz: 2^-149 + 0 flushes to +0; without it the subnormal survives
        assert_eq!(arith("add", T::F32, &[".ftz"], &[1, 0]), 0);
        assert_eq!(arith("add", T::F32, &[], &[1, 0]), 1);
        // .sat: 0.75 + 0.5 clamps to 1, -1 + 0.5 to +0
        assert_eq!(arith("add", T::F32, &[".sat"], &[f(0.75), f(0.5)]), f(1.0));
        assert_eq!(
            arith("add", T::F32, &[".rz", ".sat"], &[f(-1.0), f(0.5)]),
            0
        );
        // fma: 3 * 5 + 0.5 = 15.5; the product is not rounded first:
        // (1+2^-12)^2 - 1 = 2^-11 + 2^-24 exactly: 0x3A000000 plus 1 at fraction bit 10
        assert_eq!(
            arith("fma", T::F32, &[".rn"], &[f(3.0), f(5.0), f(0.5)]),
            f(15.5)
        );
        let x = 0x3F80_0800; // 1 + 2^-12
        assert_eq!(
            arith("fma", T::F32, &[".rn"], &[x, x, f(-1.0)]),
            0x3A00_0400
        );
        assert_eq!(
            arith(
                "mad",
                T::F32,
                &[".rn", ".ftz", ".sat"],
                &[f(2.0), f(2.0), f(-1.0)]
            ),
            f(1.0)
        );
        assert_eq!(
            arith("mad", T::F32, &[".rm"], &[x, x, f(-1.0)]),
            0x3A00_0400
        );
    }

    #[test]
    fn f32_div_rcp_sqrt() {
        // 1/3: .rn 0x3EAAAAAB, .rz 0x3EAAAAAA
        assert_eq!(
            arith("div", T::F32, &[".rn"], &[f(1.0), f(3.0)]),
            0x3EAA_AAAB
        );
        assert_eq!(
            arith("div", T::F32, &[".rz"], &[f(1.0), f(3.0)]),
            0x3EAA_AAAA
        );
        assert_eq!(arith("div", T::F32, &[".full"], &[f(6.0), f(3.0)]), f(2.0));
        assert_eq!(
            arith("div", T::F32, &[".approx"], &[f(6.0), f(4.0)]),
            f(1.5)
        );
        // approx divide by |b| > 2^126 gives 0
        assert_eq!(
            arith("div", T::F32, &[".approx"], &[f(1.0), f(2f32.powi(127))]),
            0
        );
        assert_eq!(arith("rcp", T::F32, &[".rn"], &[f(4.0)]), f(0.25));
        assert_eq!(arith("rcp", T::F32, &[".rp"], &[f(3.0)]), 0x3EAA_AAAB);
        assert_eq!(arith("rcp", T::F32, &[".rm"], &[f(3.0)]), 0x3EAA_AAAA);
        assert_eq!(
            arith("rcp", T::F32, &[".approx"], &[f(-0.0)]),
            f(f32::NEG_INFINITY)
        );
        // sqrt(2) = 1.41421356237..., nearest 0x3FB504F3 (below), .rp gives 0x3FB504F4
        assert_eq!(arith("sqrt", T::F32, &[".rn"], &[f(2.0)]), 0x3FB5_04F3);
        assert_eq!(arith("sqrt", T::F32, &[".rp"], &[f(2.0)]), 0x3FB5_04F4);
        assert_eq!(arith("sqrt", T::F32, &[".approx"], &[f(16.0)]), f(4.0));
        assert_eq!(arith("sqrt", T::F32, &[".rn"], &[f(-1.0)]), 0x7FFF_FFFF);
        assert_eq!(arith("rsqrt", T::F32, &[".approx"], &[f(0.25)]), f(2.0));
        assert_eq!(arith("ex2", T::F32, &[".approx"], &[f(3.0)]), f(8.0));
        assert_eq!(arith("lg2", T::F32, &[".approx"], &[f(0.125)]), f(-3.0));
        assert_eq!(arith("sin", T::F32, &[".approx"], &[f(0.0)]), 0);
        assert_eq!(arith("cos", T::F32, &[".approx"], &[f(0.0)]), f(1.0));
        assert_eq!(
            arith("tanh", T::F32, &[".approx"], &[f(f32::NEG_INFINITY)]),
            f(-1.0)
        );
        // .ftz on the approximations flushes a subnormal input: ex2(±0) = 1
        assert_eq!(
            arith("ex2", T::F32, &[".approx", ".ftz"], &[0x8000_0001]),
            f(1.0)
        );
    }

    #[test]
    fn f32_sign_minmax_testp() {
        assert_eq!(arith("abs", T::F32, &[], &[f(-2.5)]), f(2.5));
        assert_eq!(arith("abs", T::F32, &[".ftz"], &[0x8000_0001]), 0);
        assert_eq!(arith("neg", T::F32, &[], &[f(2.5)]), f(-2.5));
        assert_eq!(arith("neg", T::F32, &[".ftz"], &[0x0000_0001]), 0x8000_0000);
        assert_eq!(arith("copysign", T::F32, &[], &[f(-1.0), f(3.0)]), f(-3.0));
        let nan = 0x7FC0_0000;
        assert_eq!(arith("min", T::F32, &[], &[f(1.0), f(-2.0)]), f(-2.0));
        assert_eq!(arith("max", T::F32, &[], &[nan, f(-2.0)]), f(-2.0));
        assert_eq!(
            arith("max", T::F32, &[".NaN"], &[nan, f(-2.0)]),
            0x7FFF_FFFF
        );
        assert_eq!(arith("min", T::F32, &[], &[f(0.0), f(-0.0)]), f(-0.0));
        // .xorsign.abs: max(|-2|, |3|) = 3 with sign (-) ^ (+) = -3
        assert_eq!(
            arith("max", T::F32, &[".xorsign", ".abs"], &[f(-2.0), f(3.0)]),
            f(-3.0)
        );
        assert_eq!(arith("min", T::F32, &[".ftz"], &[0x0000_0001, f(1.0)]), 0);
        let testp = |m: &str, x: u64| arith_pred("testp", T::F32, &[m], x);
        assert!(testp(".finite", f(1.0)) && !testp(".finite", f(f32::INFINITY)));
        assert!(testp(".infinite", f(f32::NEG_INFINITY)));
        assert!(testp(".notanumber", nan) && !testp(".number", nan));
        assert!(testp(".normal", 0) && !testp(".normal", 1) && testp(".subnormal", 1));
        assert!(arith_pred("testp", T::F64, &[".subnormal"], 1));
        assert!(!arith_pred("testp", T::F64, &[".subnormal"], g(1.0)));
    }

    fn arith_pred(op: &str, ty: T, m: &[&str], a: u64) -> bool {
        let (o, aux) = select_arith(Ar::of(op).unwrap(), ty, &mods(m)).unwrap();
        let i = insn(o, aux);
        let mut r = vec![[0u64; 32]; 6];
        r[1] = [a; 32];
        let mut p = vec![0u32; 4];
        match i.op {
            Op::Alu(h) => h(&mut r, &mut p, &i, FULL),
            _ => panic!(),
        }
        assert!(p[0] == 0 || p[0] == FULL);
        assert_eq!(p[1], 0, "no second destination");
        p[0] == FULL
    }

    #[test]
    fn f64_arith() {
        let one = g(1.0);
        let ulp_half = g(2f64.powi(-53)); // half an ulp of 1.0: a tie
        assert_eq!(arith("add", T::F64, &[".rn"], &[one, ulp_half]), one);
        assert_eq!(arith("add", T::F64, &[".rp"], &[one, ulp_half]), one + 1);
        assert_eq!(
            arith("sub", T::F64, &[".rm"], &[g(-1.0), ulp_half]),
            g(-1.0) + 1
        );
        assert_eq!(arith("mul", T::F64, &[], &[g(1.5), g(-4.0)]), g(-6.0));
        assert_eq!(
            arith("div", T::F64, &[".rz"], &[g(1.0), g(3.0)]),
            0x3FD5_5555_5555_5555
        );
        assert_eq!(
            arith("div", T::F64, &[".rp"], &[g(1.0), g(3.0)]),
            0x3FD5_5555_5555_5556
        );
        assert_eq!(
            arith("fma", T::F64, &[".rn"], &[g(2.0), g(3.0), g(1.0)]),
            g(7.0)
        );
        assert_eq!(arith("rcp", T::F64, &[".rn"], &[g(-4.0)]), g(-0.25));
        assert_eq!(arith("sqrt", T::F64, &[".rn"], &[g(9.0)]), g(3.0));
        assert_eq!(arith("rsqrt", T::F64, &[".approx"], &[g(4.0)]), g(0.5));
        // rcp.approx.ftz.f64 of 4.0: 0.25 in the upper word, low word zero
        assert_eq!(
            arith("rcp", T::F64, &[".approx", ".ftz"], &[g(4.0)]),
            g(0.25)
        );
        assert_eq!(arith("abs", T::F64, &[], &[g(-0.0)]), 0);
        assert_eq!(arith("neg", T::F64, &[], &[g(2.0)]), g(-2.0));
        assert_eq!(arith("min", T::F64, &[], &[g(2.0), g(-3.0)]), g(-3.0));
        assert_eq!(
            arith("max", T::F64, &[], &[0x7FF8_0000_0000_0001, g(-3.0)]),
            g(-3.0)
        );
        assert_eq!(arith("copysign", T::F64, &[], &[g(-1.0), g(2.0)]), g(-2.0));
        // NaN payloads: the first NaN operand, quieted
        assert_eq!(
            arith("add", T::F64, &[], &[0x7FF0_0000_0000_0123, g(1.0)]),
            0x7FF8_0000_0000_0123
        );
        assert!(select_arith(Ar::Sin, T::F64, &mods(&[".approx"])).is_err());
        assert!(select_arith(Ar::Rcp, T::F64, &mods(&[".approx"])).is_err());
    }

    #[test]
    fn half_precision() {
        // f16: 1.0 = 0x3C00, 2.0 = 0x4000, 0.5 = 0x3800; bf16: 1.0 = 0x3F80, 2.0 = 0x4000
        assert_eq!(arith("add", T::F16, &[], &[0x3C00, 0x3C00]), 0x4000);
        assert_eq!(arith("sub", T::F16, &[".rn"], &[0x3C00, 0x4000]), 0xBC00);
        assert_eq!(arith("mul", T::F16, &[".sat"], &[0x3C00, 0x4000]), 0x3C00);
        assert_eq!(
            arith("add", T::F16x2, &[], &[0x3C00_4000, 0x3800_3C00]),
            0x3E00_4200
        );
        assert_eq!(arith("add", T::Bf16, &[], &[0x3F80, 0x3F80]), 0x4000);
        assert_eq!(
            arith("mul", T::Bf16x2, &[".rn"], &[0x4000_3F80, 0x4000_4000]),
            0x4080_4000
        );
        // fma.rn.relu: 1*1 - 2 = -1 -> +0 with .relu
        assert_eq!(
            arith("fma", T::F16, &[".rn"], &[0x3C00, 0x3C00, 0xC000]),
            0xBC00
        );
        assert_eq!(
            arith("fma", T::F16, &[".rn", ".relu"], &[0x3C00, 0x3C00, 0xC000]),
            0
        );
        assert_eq!(
            arith("fma", T::Bf16, &[".rn", ".relu"], &[0x3F80, 0x3F80, 0xC000]),
            0
        );
        assert_eq!(
            arith(
                "fma",
                T::Bf16x2,
                &[".rn"],
                &[0x3F80_3F80, 0x4000_3F80, 0x3F80_C000]
            ),
            0x4040_BF80
        );
        // .ftz on f16: the smallest subnormal 0x0001 flushes
        assert_eq!(arith("add", T::F16, &[".ftz"], &[0x0001, 0]), 0);
        assert_eq!(arith("add", T::F16, &[], &[0x0001, 0]), 1);
        assert_eq!(arith("neg", T::F16x2, &[], &[0x3C00_BC00]), 0xBC00_3C00);
        assert_eq!(arith("abs", T::Bf16, &[], &[0xBF80]), 0x3F80);
        assert_eq!(arith("min", T::F16, &[], &[0x3C00, 0xC000]), 0xC000);
        assert_eq!(
            arith("max", T::Bf16x2, &[], &[0x3F80_C000, 0x4000_7FC0]),
            0x4000_C000
        );
        assert_eq!(arith("max", T::F16, &[".NaN"], &[0x3C00, 0x7E00]), 0x7FFF);
        assert_eq!(arith("ex2", T::F16, &[".approx"], &[0x4000]), 0x4400); // 2^2 = 4
        assert_eq!(
            arith("ex2", T::Bf16x2, &[".approx", ".ftz"], &[0x3F80_0000]),
            0x4000_3F80
        );
        assert_eq!(arith("tanh", T::F16, &[".approx"], &[0x7C00]), 0x3C00);
        assert!(select_arith(Ar::Add, T::F16, &mods(&[".rz"])).is_err());
        assert!(select_arith(Ar::Div, T::F16, &mods(&[".rn"])).is_err());
    }

    /// Fast handlers agree with the general ones (modifiers read from `aux`) on many inputs.
    #[test]
    fn fast_paths_match_general() {
        let mut s = 0x1234_5678_9ABC_DEF1u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let specials: [u32; 8] = [
            0,
            0x8000_0000,
            1,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0001,
            0x3F80_0000,
            0x7F7F_FFFF,
        ];
        for k in 0..4000 {
            let pick = |x: u64| {
                if x % 5 == 0 {
                    specials[(x >> 8) as usize % 8] as u64
                } else {
                    x & 0xFFFF_FFFF
                }
            };
            let (a, b, c) = (pick(next()), pick(next()), pick(next()));
            let (fa, fb, fc) = (f32_of(a), f32_of(b), f32_of(c));
            for ftz in [false, true] {
                let m: &[&str] = if ftz { &[".ftz"] } else { &[] };
                assert_eq!(
                    arith("add", T::F32, m, &[a, b]),
                    f(fl::add_f32(fa, fb, Rounding::Rn, ftz, false))
                );
                assert_eq!(
                    arith("mul", T::F32, m, &[a, b]),
                    f(fl::mul_f32(fa, fb, Rounding::Rn, ftz, false))
                );
                assert_eq!(
                    arith("fma", T::F32, &[&[".rn"], m].concat(), &[a, b, c]),
                    f(fl::fma_f32(fa, fb, fc, Rounding::Rn, ftz, false))
                );
                assert_eq!(
                    arith("div", T::F32, &[&[".rn"], m].concat(), &[a, b]),
                    f(fl::div_f32(fa, fb, Rounding::Rn, ftz))
                );
            }
            // setp fast handlers against the general compare
            for (ci, &op) in CMP_OPS.iter().enumerate().take(6) {
                let _ = ci;
                for class in [C_U32, C_S32, C_F32] {
                    let fast = setp_fast(class, op, false).unwrap();
                    let want = cmp_val(class, op, false, a, b);
                    assert_eq!(setp_run(fast, class, op, a, b), want);
                }
            }
            // cvt fast handlers against the general conversion
            let wide = (a << 32) | b;
            for (dt, at, m) in [
                (T::S32, T::F32, ".rzi"),
                (T::U32, T::F32, ".rni"),
                (T::S64, T::F32, ".rmi"),
                (T::U64, T::F32, ".rpi"),
                (T::S32, T::F64, ".rni"),
                (T::U64, T::F64, ".rzi"),
                (T::F32, T::S32, ".rn"),
                (T::F32, T::U64, ".rn"),
                (T::F64, T::S64, ".rn"),
                (T::F64, T::U32, ".rn"),
                (T::S64, T::S32, ""),
                (T::U32, T::S64, ""),
                (T::F64, T::F32, ""),
                (T::F32, T::F64, ".rn"),
            ] {
                let mm = mods(&[m]);
                let mut aux = mm.aux();
                let (fast, _) = select_cvt(dt, at, &mm, &mut aux).unwrap();
                let src = if at == T::F64 || at.size_bits() == 64 {
                    wide
                } else {
                    a
                };
                let got = run_cvt(fast, aux, src);
                let want = cvt_any(aux, src) & width_mask(dt.size_bits().max(32));
                assert_eq!(
                    got,
                    want,
                    "cvt{m}{}{} of {src:#x} (case {k})",
                    dt.suffix(),
                    at.suffix()
                );
            }
        }
    }

    fn setp_run(op: Op, class: u64, cmp: CmpOp, a: u64, b: u64) -> bool {
        let i = insn(op, class << CLASS_SHIFT | cmp_code(cmp) << CMP_SHIFT);
        let mut r = vec![[0u64; 32]; 6];
        r[1] = [a; 32];
        r[2] = [b; 32];
        let mut p = vec![0u32; 4];
        match i.op {
            Op::Alu(h) => h(&mut r, &mut p, &i, FULL),
            _ => panic!(),
        }
        p[0] == FULL
    }

    fn run_cvt(op: Op, aux: u64, a: u64) -> u64 {
        let mut i = insn(op, aux);
        i.imm = width_mask(32) as i64;
        if aux >> DST_SHIFT & 15 == U64 as u64
            || aux >> DST_SHIFT & 15 == S64 as u64
            || aux >> DST_SHIFT & 15 == F64 as u64
        {
            i.imm = -1;
        }
        run_insn(&i, &[a])
    }

    /// `setp` with the full `p|q` and `.BoolOp` wiring: returns (p, q) lane masks for lanes
    /// whose `c` predicate is `c_bits`.
    fn setp_full(ty: T, m: &[&str], a: &[u64; 32], b: u64, c_bits: u32, neg_c: bool) -> (u32, u32) {
        let mm = mods(m);
        let class = cmp_class(ty).unwrap();
        let op = mm.cmp.unwrap();
        let comb = match mm.boolop {
            None => 0,
            Some(BoolOp::And) => 1,
            Some(BoolOp::Or) => 2,
            Some(BoolOp::Xor) => 3,
        } << PRED_BOOL_SHIFT
            | if neg_c { PRED_NEG_C } else { 0 };
        let mut i = insn(
            select_setp(class, op, mm.ftz),
            mm.aux() | class << CLASS_SHIFT | cmp_code(op) << CMP_SHIFT | comb,
        );
        i.d = 0;
        i.v[1] = 1;
        i.c = 2;
        let mut r = vec![[0u64; 32]; 6];
        r[1] = *a;
        r[2] = [b; 32];
        let mut p = vec![0u32, 0, c_bits, 0];
        match i.op {
            Op::Alu(h) => h(&mut r, &mut p, &i, FULL),
            _ => panic!(),
        }
        (p[0], p[1])
    }

    #[test]
    fn setp_forms() {
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = (l as i64 - 16) as u64; // -16..15, sign-extended bits
        }
        // s32: a < 0 for lanes 0..16; q = !p
        assert_eq!(
            setp_full(T::S32, &[".lt"], &a, 0, 0, false),
            (0xFFFF, 0xFFFF_0000)
        );
        // u32: the negative values are huge, so a < 5 only for 0..5 (lanes 16..21)
        assert_eq!(setp_full(T::U32, &[".lt"], &a, 5, 0, false).0, 0x001F_0000);
        // unsigned operators on signed types compare the bits: lanes 16..21 are lo 5
        assert_eq!(setp_full(T::S32, &[".lo"], &a, 5, 0, false).0, 0x001F_0000);
        // s16 reads only 16 bits: 0x1_0000 + l is l
        let wide: [u64; 32] = std::array::from_fn(|l| 0x1_0000 + l as u64);
        assert_eq!(setp_full(T::S16, &[".le"], &wide, 3, 0, false).0, 0xF);
        assert_eq!(
            setp_full(T::U64, &[".ge"], &wide, 0x1_0000 + 30, 0, false).0,
            0xC000_0000
        );
        // .and with c, and with !c
        let (p, q) = setp_full(T::S32, &[".lt", ".and"], &a, 0, 0x00FF_00FF, false);
        assert_eq!((p, q), (0x00FF, 0x00FF_0000));
        let (p, _) = setp_full(T::S32, &[".lt", ".or"], &a, 0, 0x00FF_00FF, true);
        assert_eq!(p, 0xFFFF | 0xFF00_FF00);
        let (p, _) = setp_full(T::S32, &[".ge", ".xor"], &a, 0, 0xFFFF_FFFF, false);
        assert_eq!(p, 0xFFFF);
        // floats: NaN lanes are unordered
        let fl: [u64; 32] = std::array::from_fn(|l| if l < 4 { 0x7FC0_0000 } else { f(l as f32) });
        assert_eq!(
            setp_full(T::F32, &[".lt"], &fl, f(6.0), 0, false).0,
            0b11_0000
        );
        assert_eq!(
            setp_full(T::F32, &[".ltu"], &fl, f(6.0), 0, false).0,
            0b11_1111
        );
        assert_eq!(
            setp_full(T::F32, &[".nan"], &fl, f(6.0), 0, false).0,
            0b1111
        );
        assert_eq!(
            setp_full(T::F32, &[".num"], &fl, f(6.0), 0, false).0,
            !0b1111
        );
        assert_eq!(
            setp_full(T::F32, &[".neu"], &fl, f(6.0), 0, false).0,
            !(1 << 6)
        );
        assert_eq!(
            setp_full(T::F32, &[".ne"], &fl, f(6.0), 0, false).0,
            !(1 << 6) & !0b1111
        );
        // .ftz: a subnormal equals zero
        let sub = [1u64; 32];
        assert_eq!(
            setp_full(T::F32, &[".eq", ".ftz"], &sub, 0, 0, false).0,
            FULL
        );
        assert_eq!(setp_full(T::F32, &[".eq"], &sub, 0, 0, false).0, 0);
        let d: [u64; 32] = [g(-0.0); 32];
        assert_eq!(setp_full(T::F64, &[".eq"], &d, g(0.0), 0, false).0, FULL);
        // f16: -1.0 (0xBC00) < 0.5 (0x3800); bf16: 2.0 (0x4000) > 1.0 (0x3F80)
        assert_eq!(
            setp_full(T::F16, &[".lt"], &[0xBC00; 32], 0x3800, 0, false).0,
            FULL
        );
        assert_eq!(
            setp_full(T::Bf16, &[".gt"], &[0x4000; 32], 0x3F80, 0, false).0,
            FULL
        );
        // f16x2: p = low halves, q = high halves; here low 1.0 < 2.0, high 2.0 < 1.0 false
        let (p, q) = setp_full(
            T::F16x2,
            &[".lt"],
            &[0x4000_3C00; 32],
            0x3C00_4000,
            0,
            false,
        );
        assert_eq!((p, q), (FULL, 0));
        let (p, q) = setp_full(
            T::Bf16x2,
            &[".ge", ".or"],
            &[0x4000_3F80; 32],
            0x3F80_4000,
            0xF,
            false,
        );
        assert_eq!((p, q), (0xF, FULL));
    }

    #[test]
    fn set_forms() {
        let set = |dt: T, st: T, m: &[&str], a: u64, b: u64| -> u64 {
            let mm = mods(m);
            let class = cmp_class(st).unwrap();
            let dst = match (dt, class == C_F16X2 || class == C_BF16X2) {
                (T::U32 | T::S32, false) => SetDst::Int32,
                (T::F32, _) => SetDst::F32,
                (T::F16 | T::F16x2, _) => SetDst::F16,
                (T::Bf16x2, _) => SetDst::Bf16,
                (T::U16, _) => SetDst::Int16,
                (T::U32, true) => SetDst::Int16,
                _ => panic!(),
            };
            let k = SET_DSTS.iter().position(|&x| x == dst).unwrap() as u64;
            let aux = mm.aux()
                | class << CLASS_SHIFT
                | cmp_code(mm.cmp.unwrap()) << CMP_SHIFT
                | k << KIND_SHIFT;
            run_insn(&insn(Op::Alu(set_h), aux), &[a, b])
        };
        assert_eq!(
            set(T::U32, T::S32, &[".lt"], (-3i64) as u64, 2),
            0xFFFF_FFFF
        );
        assert_eq!(set(T::S32, T::U32, &[".lt"], (-3i64) as u64, 2), 0);
        assert_eq!(set(T::F32, T::F32, &[".gtu"], 0x7FC0_0000, f(1.0)), f(1.0));
        assert_eq!(set(T::F32, T::F64, &[".gt"], g(0.5), g(1.0)), 0);
        assert_eq!(set(T::F16, T::F32, &[".eq"], f(1.0), f(1.0)), 0x3C00);
        assert_eq!(set(T::U16, T::F16, &[".eq"], 0x3C00, 0x3C00), 0xFFFF);
        // packed: low 1.0 < 2.0 true, high 2.0 < 1.0 false
        assert_eq!(
            set(T::F16x2, T::F16x2, &[".lt"], 0x4000_3C00, 0x3C00_4000),
            0x0000_3C00
        );
        assert_eq!(
            set(T::U32, T::F16x2, &[".gt"], 0x4000_3C00, 0x3C00_4000),
            0xFFFF_0000
        );
        assert_eq!(
            set(T::Bf16x2, T::Bf16x2, &[".ne"], 0x4000_3F80, 0x3F80_3F80),
            0x3F80_0000
        );
    }

    #[test]
    fn selp_slct() {
        let mut i = insn(Op::Alu(selp_h), 0);
        i.c = 2;
        i.imm = width_mask(16) as i64;
        let mut r = vec![[0u64; 32]; 6];
        r[1] = [0x1_2345; 32];
        r[2] = [0xFFFF_FFFF_FFFF_8000; 32];
        let mut p = vec![0u32, 0, 0x0000_FFFF, 0];
        match i.op {
            Op::Alu(h) => h(&mut r, &mut p, &i, FULL),
            _ => panic!(),
        }
        assert_eq!((r[0][0], r[0][31]), (0x2345, 0x8000));
        i.aux = 1; // negated predicate
        match i.op {
            Op::Alu(h) => h(&mut r, &mut p, &i, FULL),
            _ => panic!(),
        }
        assert_eq!((r[0][0], r[0][31]), (0x8000, 0x2345));

        let slct = |ct: T, m: &[&str], c: u64| -> u64 {
            let mut i = insn(select_slct(ct, mods(m).ftz).unwrap(), 0);
            i.imm = width_mask(32) as i64;
            run_insn(&i, &[0x1_0000_0007, 9, c])
        };
        assert_eq!(slct(T::S32, &[], 0), 7);
        assert_eq!(slct(T::S32, &[], 0xFFFF_FFFF), 9);
        assert_eq!(slct(T::F32, &[], f(-0.0)), 7);
        assert_eq!(slct(T::F32, &[], 0x7FC0_0000), 9);
        assert_eq!(slct(T::F32, &[], 0x8000_0001), 9);
        assert_eq!(slct(T::F32, &[".ftz"], 0x8000_0001), 7);
    }

    fn cvt1(dt: T, at: T, m: &[&str], reg_bits: u32, a: u64) -> u64 {
        let mm = mods(m);
        let mut aux = mm.aux();
        let (op, n) = select_cvt(dt, at, &mm, &mut aux).unwrap();
        assert_eq!(n, 1);
        let mut i = insn(op, aux);
        i.imm = width_mask(reg_bits) as i64;
        run_insn(&i, &[a])
    }

    fn cvt2(dt: T, at: T, m: &[&str], a: u64, b: u64) -> u64 {
        let mm = mods(m);
        let mut aux = mm.aux();
        let (op, n) = select_cvt(dt, at, &mm, &mut aux).unwrap();
        assert_eq!(n, 2);
        run_insn(&insn(op, aux), &[a, b])
    }

    #[test]
    fn cvt_int_int() {
        // truncation, then sign extension to the register width
        assert_eq!(cvt1(T::S8, T::S32, &[], 16, 0x1FF), 0xFFFF);
        assert_eq!(cvt1(T::S8, T::S32, &[], 32, 0x17F), 0x7F);
        assert_eq!(cvt1(T::U8, T::S32, &[], 32, 0x1FF), 0xFF);
        assert_eq!(cvt1(T::S32, T::S16, &[], 32, 0x8000), 0xFFFF_8000);
        assert_eq!(
            cvt1(T::S64, T::S32, &[], 64, 0x8000_0000),
            0xFFFF_FFFF_8000_0000
        );
        assert_eq!(cvt1(T::U64, T::S32, &[], 64, 0xFFFF_FFFF), u64::MAX);
        assert_eq!(cvt1(T::U64, T::U32, &[], 64, 0xFFFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(cvt1(T::S32, T::S64, &[], 32, 0x1_8000_0000), 0x8000_0000);
        // .sat clamps
        assert_eq!(cvt1(T::U8, T::S32, &[".sat"], 32, 300), 255);
        assert_eq!(cvt1(T::U8, T::S32, &[".sat"], 32, (-5i64) as u64), 0);
        assert_eq!(cvt1(T::S16, T::S32, &[".sat"], 32, 40000), 0x7FFF);
        assert_eq!(
            cvt1(T::S16, T::S32, &[".sat"], 16, (-40000i64) as u64),
            0x8000
        );
        assert_eq!(cvt1(T::U32, T::S64, &[".sat"], 32, (-1i64) as u64), 0);
        assert_eq!(
            cvt1(T::S32, T::U32, &[".sat"], 32, 0xFFFF_FFFF),
            0x7FFF_FFFF
        );
    }

    #[test]
    fn cvt_float_int() {
        let f2i = |dt: T, at: T, m: &str, a: u64| cvt1(dt, at, &[m], dt.size_bits().max(32), a);
        assert_eq!(f2i(T::S32, T::F32, ".rzi", f(-2.7)), 0xFFFF_FFFE);
        assert_eq!(f2i(T::S32, T::F32, ".rni", f(2.5)), 2);
        assert_eq!(f2i(T::S32, T::F32, ".rni", f(3.5)), 4);
        assert_eq!(f2i(T::S32, T::F32, ".rmi", f(-2.1)), (-3i32) as u32 as u64);
        assert_eq!(f2i(T::S32, T::F32, ".rpi", f(2.1)), 3);
        assert_eq!(f2i(T::U32, T::F32, ".rzi", f(-5.0)), 0);
        assert_eq!(f2i(T::S32, T::F32, ".rzi", f(3e9)), 0x7FFF_FFFF);
        assert_eq!(f2i(T::S32, T::F32, ".rzi", 0x7FC0_0000), 0);
        assert_eq!(f2i(T::U8, T::F32, ".rzi", f(300.0)), 255);
        assert_eq!(
            f2i(T::S8, T::F64, ".rni", g(-200.0)),
            (-128i32) as u32 as u64
        );
        assert_eq!(f2i(T::S64, T::F64, ".rzi", g(-1e30)), i64::MIN as u64);
        assert_eq!(f2i(T::U16, T::F16, ".rni", 0x4100), 2); // 2.5 -> 2
        assert_eq!(f2i(T::S32, T::Bf16, ".rmi", 0xBFC0), (-2i32) as u32 as u64); // -1.5
                                                                                 // .ftz: the negative subnormal rounds down to -1 without it, 0 with it
        assert_eq!(f2i(T::S32, T::F32, ".rmi", 0x8000_0001), 0xFFFF_FFFF);
        assert_eq!(cvt1(T::S32, T::F32, &[".rmi", ".ftz"], 32, 0x8000_0001), 0);
        // int -> float
        assert_eq!(cvt1(T::F32, T::S32, &[".rn"], 32, (-3i64) as u64), f(-3.0));
        assert_eq!(cvt1(T::F32, T::U32, &[".rz"], 32, 0xFFFF_FFFF), 0x4F7F_FFFF);
        assert_eq!(cvt1(T::F32, T::U32, &[".rn"], 32, 0xFFFF_FFFF), 0x4F80_0000);
        assert_eq!(
            cvt1(T::F64, T::S64, &[".rn"], 64, i64::MIN as u64),
            g(-(2f64.powi(63)))
        );
        assert_eq!(cvt1(T::F16, T::S32, &[".rn"], 16, 70000), 0x7C00);
        assert_eq!(cvt1(T::F16, T::S32, &[".rz"], 16, 70000), 0x7BFF);
        assert_eq!(cvt1(T::F32, T::S8, &[".rn"], 32, 0xFF), f(-1.0));
        assert_eq!(cvt1(T::F32, T::S32, &[".rn", ".sat"], 32, 5), f(1.0));
        assert!(select_cvt(T::S32, T::F32, &mods(&[]), &mut 0).is_err());
    }

    #[test]
    fn cvt_float_float() {
        assert_eq!(cvt1(T::F64, T::F32, &[], 64, f(1.5)), g(1.5));
        assert_eq!(
            cvt1(T::F32, T::F64, &[".rn"], 32, g(1.0 / 3.0)),
            0x3EAA_AAAB
        );
        assert_eq!(
            cvt1(T::F32, T::F64, &[".rz"], 32, g(1.0 / 3.0)),
            0x3EAA_AAAA
        );
        assert_eq!(cvt1(T::F32, T::F64, &[".rn", ".sat"], 32, g(2.0)), f(1.0));
        assert_eq!(cvt1(T::F32, T::F64, &[".rn", ".ftz"], 32, g(1e-40)), 0);
        assert_eq!(cvt1(T::F16, T::F32, &[".rn"], 16, f(1.0)), 0x3C00);
        assert_eq!(cvt1(T::F16, T::F32, &[".rn"], 16, f(1e6)), 0x7C00);
        assert_eq!(
            cvt1(T::F16, T::F32, &[".rn", ".satfinite"], 16, f(1e6)),
            0x7BFF
        );
        assert_eq!(cvt1(T::F16, T::F32, &[".rn", ".relu"], 16, f(-1.0)), 0);
        assert_eq!(cvt1(T::Bf16, T::F32, &[".rn"], 16, 0x3F80_8000), 0x3F80); // tie to even
        assert_eq!(cvt1(T::Bf16, T::F32, &[".rz"], 16, 0x3F80_FFFF), 0x3F80);
        assert_eq!(cvt1(T::F32, T::F16, &[], 32, 0x3C00), f(1.0));
        assert_eq!(cvt1(T::F32, T::Bf16, &[], 32, 0xC000), f(-2.0));
        assert_eq!(cvt1(T::F32, T::F32, &[".rni"], 32, f(2.5)), f(2.0));
        assert_eq!(cvt1(T::F32, T::F32, &[".rmi"], 32, f(-0.5)), f(-1.0));
        assert_eq!(cvt1(T::F32, T::F32, &[".rpi"], 32, f(-0.5)), f(-0.0));
        assert_eq!(cvt1(T::F64, T::F64, &[".rzi"], 64, g(-7.9)), g(-7.0));
        assert_eq!(
            cvt1(T::F32, T::F32, &[".ftz"], 32, 0x8000_0001),
            0x8000_0000
        );
        // the packed forms: a into the upper half
        assert_eq!(
            cvt2(T::F16x2, T::F32, &[".rn"], f(1.0), f(2.0)),
            0x3C00_4000
        );
        assert_eq!(
            cvt2(T::Bf16x2, T::F32, &[".rz"], f(-1.0), 0x3F80_FFFF),
            0xBF80_3F80
        );
        assert_eq!(
            cvt2(T::F16x2, T::F32, &[".rn", ".relu"], f(-1.0), f(0.5)),
            0x0000_3800
        );
        // tf32: 10 fraction bits, low 13 bits zero; .rna rounds the tie away from zero
        assert_eq!(
            cvt1(T::Tf32, T::F32, &[".rna"], 32, 0x3F80_1000),
            0x3F80_2000
        );
        assert_eq!(
            cvt1(T::Tf32, T::F32, &[".rn"], 32, 0x3F80_1000),
            0x3F80_0000
        );
        assert_eq!(
            cvt1(T::Tf32, T::F32, &[".rz"], 32, 0x3F80_1FFF),
            0x3F80_0000
        );
        // fp8: e4m3 1.0 = 0x38, 448 (max) = 0x7E; e5m2 1.0 = 0x3C, 2.0 = 0x40
        assert_eq!(
            cvt2(T::E4m3x2, T::F32, &[".rn", ".satfinite"], f(1.0), f(1000.0)),
            0x387E
        );
        assert_eq!(
            cvt2(T::E5m2x2, T::F32, &[".rn", ".satfinite"], f(2.0), f(1.0)),
            0x403C
        );
        assert_eq!(
            cvt2(
                T::E5m2x2,
                T::F32,
                &[".rn", ".satfinite", ".relu"],
                f(-2.0),
                f(1.0)
            ),
            0x003C
        );
        assert_eq!(
            cvt1(T::E4m3x2, T::F16x2, &[".rn", ".satfinite"], 16, 0x3C00_4000),
            0x3840
        );
        assert_eq!(cvt1(T::F16x2, T::E4m3x2, &[".rn"], 32, 0x3840), 0x3C00_4000);
        assert_eq!(cvt1(T::F16x2, T::E5m2x2, &[".rn"], 32, 0x3C40), 0x3C00_4000);
    }

    #[test]
    fn cvt_pack() {
        let run = |pt: PackType, a: i32, b: i32, c: u32| {
            let aux = PACK_TYPES.iter().position(|&x| x == pt).unwrap() as u64;
            let op = crate::alu3!(i, a, b, c => cvt::cvt_pack_sat(
                PACK_TYPES[i.aux as usize % PACK_TYPES.len()],
                a as i32,
                b as i32,
                c as u32
            ) as u64);
            run_insn(
                &insn(op, aux),
                &[a as u32 as u64, b as u32 as u64, c as u64],
            )
        };
        // .s16: a (clamped to 32767) in the upper half, b (-5) in the lower
        assert_eq!(run(PackType::S16, 40000, -5, 0), 0x7FFF_FFFB);
        // .u8 with c: b=300->255 in bits 0..8, a=-1->0 in 8..16, c's low 16 bits above
        assert_eq!(run(PackType::U8, -1, 300, 0xABCD), 0xABCD_00FF);
        assert_eq!(run(PackType::S4, 9, -9, 0x0123_4567), 0x2345_6778);
    }

    #[test]
    fn sm100_forms_wiring() {
        // .f32x2: element 0 in the low word; .rz truncates 1 + 1.5*2^-24 in both elements
        let x2 = |op: Ar, m: &[&str], srcs: &[u64]| {
            let (o, aux) = select_f32x2(op, &mods(m)).unwrap();
            run_insn(&insn(o, aux), srcs)
        };
        let (a, b) = (0xBF80_0000_3F80_0000, 0xB3C0_0000_33C0_0000);
        assert_eq!(x2(Ar::Add, &[], &[a, b]), 0xBF80_0001_3F80_0001);
        assert_eq!(x2(Ar::Add, &[".rz"], &[a, b]), 0xBF80_0000_3F80_0000);
        assert_eq!(x2(Ar::Sub, &[".rp"], &[a, a]), 0);
        let two = 0x4000_0000_4000_0000;
        assert_eq!(x2(Ar::Mul, &[".rn"], &[two, two]), 0x4080_0000_4080_0000);
        assert_eq!(
            x2(Ar::Fma, &[".rn"], &[two, two, two]),
            0x40C0_0000_40C0_0000
        );
        assert!(select_f32x2(Ar::Fma, &mods(&[])).is_err());
        assert!(select_f32x2(Ar::Div, &mods(&[".rn"])).is_err());
        // mixed precision: f16 1.5 (0x3E00) + 0.25; bf16 2 * 2 - 1
        let mixed = |op: Ar, m: &[&str], bf16: bool, srcs: &[u64]| {
            let (o, aux) = select_mixed(op, &mods(m)).unwrap();
            run_insn(&insn(o, aux | if bf16 { BF16 } else { 0 }), srcs)
        };
        assert_eq!(mixed(Ar::Add, &[], false, &[0x3E00, f(0.25)]), f(1.75));
        assert_eq!(mixed(Ar::Sub, &[".rn"], true, &[0x4000, f(0.5)]), f(1.5));
        assert_eq!(
            mixed(Ar::Fma, &[".rn"], true, &[0x4000, 0x4000, f(-1.0)]),
            f(3.0)
        );
        assert_eq!(
            mixed(Ar::Fma, &[".rn", ".sat"], true, &[0x4000, 0x4000, f(-1.0)]),
            f(1.0)
        );
        // three-input min/max, with .abs in its own aux bit
        let mm3 =
            |max: bool, aux: u64, srcs: &[u64]| run_insn(&insn(select_minmax3(max), aux), srcs);
        assert_eq!(mm3(true, 0, &[f(1.0), f(3.0), f(2.0)]), f(3.0));
        assert_eq!(mm3(false, 0, &[f(1.0), f(-3.0), f(2.0)]), f(-3.0));
        assert_eq!(mm3(false, ABS3, &[f(1.0), f(-3.0), f(2.0)]), f(1.0));
        assert_eq!(mm3(true, ABS3, &[f(1.0), f(-3.0), f(2.0)]), f(3.0));
        // 4/6-bit and ue8m0 conversions reach their functions with their format
        let mx = |dt: T, at: T, m: &[&str], srcs: &[u64]| {
            let mm = mods(m);
            let mut aux = mm.aux();
            let (op, n) = select_cvt_mx(dt, at, &mm, &mut aux).unwrap().unwrap();
            assert_eq!(n, srcs.len());
            run_insn(&insn(op, aux), srcs)
        };
        let sf = [".rn", ".satfinite"];
        assert_eq!(mx(T::E2m1x2, T::F32, &sf, &[f(6.0), f(-0.5)]), 0x79);
        assert_eq!(mx(T::E3m2x2, T::F32, &sf, &[f(28.0), f(1.0)]), 0x1F0C);
        assert_eq!(mx(T::E2m3x2, T::F32, &sf, &[f(7.5), f(1.0)]), 0x1F08);
        assert_eq!(mx(T::F16x2, T::E2m3x2, &[".rn"], &[0x1F08]), 0x4780_3C00);
        // .rp: 3 rounds up to 2^2 (code 129), 1 is exact (127)
        assert_eq!(mx(T::Ue8m0x2, T::F32, &[".rp"], &[f(3.0), f(1.0)]), 0x817F);
        assert_eq!(mx(T::Bf16x2, T::Ue8m0x2, &[".rn"], &[0x807F]), 0x4000_3F80);
        assert!(select_cvt_mx(T::Ue8m0x2, T::F32, &mods(&[".rn"]), &mut 0).is_err());
        assert!(select_cvt_mx(T::F32, T::F16, &mods(&[]), &mut 0)
            .unwrap()
            .is_none());
        // cvt.rs to .bf16x2: three sources, rbits last
        let mm = mods(&[".rs"]);
        let mut aux = mm.aux();
        let (op, n) = select_cvt(T::Bf16x2, T::F32, &mm, &mut aux).unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            run_insn(&insn(op, aux), &[0x3F80_C000, 0x3F80_C000, 0x4000_3FFF]),
            0x3F81_3F80
        );
    }

    #[test]
    fn mods_parse() {
        let m = mods(&[
            ".rn", ".ftz", ".sat", ".lt", ".and", ".xorsign", ".abs", ".NaN",
        ]);
        assert_eq!(m.rnd, Some(Rounding::Rn));
        assert!(m.ftz && m.sat && m.nan && m.xorsign_abs);
        assert_eq!(m.cmp, Some(CmpOp::Lt));
        assert_eq!(m.boolop, Some(BoolOp::And));
        for (k, n) in CMP_NAMES.iter().enumerate() {
            let m = Mods::parse(std::iter::once(*n));
            assert_eq!(cmp_of(cmp_code(m.cmp.unwrap()) << CMP_SHIFT), CMP_OPS[k]);
        }
        for r in [
            Rounding::Rn,
            Rounding::Rz,
            Rounding::Rm,
            Rounding::Rp,
            Rounding::Rna,
        ] {
            assert_eq!(rnd(rnd_code(r)), r);
        }
        for r in [
            IntRounding::Rni,
            IntRounding::Rzi,
            IntRounding::Rmi,
            IntRounding::Rpi,
        ] {
            assert_eq!(irnd(irnd_code(r) << IRND_SHIFT), r);
        }
        for c in 0..12u8 {
            let t = if c < 8 {
                Ct::I(int_type(c))
            } else {
                Ct::F(float_type(c))
            };
            assert_eq!(ct_code(t), c);
        }
    }
}
