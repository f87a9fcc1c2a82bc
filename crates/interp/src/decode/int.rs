//! Decoding of the integer arithmetic, bit and logic instructions (handlers in
//! [`crate::ops_int`]).

use super::{Dec, R};
use crate::ops_int::*;
use crate::program::{AluFn, Insn, Op};
use crate::semantics::int::{self as si};
use crate::semantics::logic::{self as sl, ShfDir};
use crate::semantics::video::Vop4;
use crate::semantics::ClampMode;
use ptx_ir::{Imm, Modifier, Opcode, Operand};
use ptx_isa::{ScalarType, TypeKind};

/// The integer instruction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IntTy {
    U16,
    S16,
    U32,
    S32,
    U64,
    S64,
}

/// The integer type of `ty` (bit types count as unsigned).
fn int_ty(ty: ScalarType) -> R<IntTy> {
    let signed = match ty.kind() {
        TypeKind::Signed => true,
        TypeKind::Unsigned | TypeKind::Bit => false,
        _ => return Err(format!("`{}` is not an integer type", ty.suffix())),
    };
    if matches!(ty, ScalarType::U16x2 | ScalarType::S16x2) {
        return Err(format!("`{}` is not allowed here", ty.suffix()));
    }
    Ok(match (ty.size_bits(), signed) {
        (16, false) => IntTy::U16,
        (16, true) => IntTy::S16,
        (32, false) => IntTy::U32,
        (32, true) => IntTy::S32,
        (64, false) => IntTy::U64,
        (64, true) => IntTy::S64,
        _ => {
            return Err(format!(
                "`{}` is not a 16-, 32- or 64-bit type",
                ty.suffix()
            ))
        }
    })
}

/// `$f` instantiated for integer type `$k`.
macro_rules! int_op {
    ($k:expr, $f:ident) => {
        match $k {
            IntTy::U16 => Op::Alu($f::<u16>),
            IntTy::S16 => Op::Alu($f::<i16>),
            IntTy::U32 => Op::Alu($f::<u32>),
            IntTy::S32 => Op::Alu($f::<i32>),
            IntTy::U64 => Op::Alu($f::<u64>),
            IntTy::S64 => Op::Alu($f::<i64>),
        }
    };
}

/// `$f` for a signed type `$k`.
macro_rules! signed_op {
    ($k:expr, $f:ident) => {
        match $k {
            IntTy::S16 => Op::Alu($f::<i16>),
            IntTy::S32 => Op::Alu($f::<i32>),
            IntTy::S64 => Op::Alu($f::<i64>),
            _ => return Err("the type must be .s16, .s32 or .s64".into()),
        }
    };
}

/// `$f` for a 16- or 32-bit type `$k` (`.wide` forms).
macro_rules! wide_op {
    ($k:expr, $f:ident) => {
        match $k {
            IntTy::U16 => Op::Alu($f::<u16>),
            IntTy::S16 => Op::Alu($f::<i16>),
            IntTy::U32 => Op::Alu($f::<u32>),
            IntTy::S32 => Op::Alu($f::<i32>),
            _ => return Err(".wide applies to 16- and 32-bit types only".into()),
        }
    };
}

/// `$f` for a 32- or 64-bit type `$k` (the carry chain).
macro_rules! carry_op {
    ($k:expr, $f:ident) => {
        match $k {
            IntTy::U32 | IntTy::S32 => Op::Alu($f::<u32>),
            IntTy::U64 | IntTy::S64 => Op::Alu($f::<u64>),
            _ => return Err("the carry chain takes 32- and 64-bit types only".into()),
        }
    };
}

/// `sad d, a, b, c`.
pub(crate) fn sad(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    int3(d, insn, |k| Ok(int_op!(k, sad_h)))
}

/// Integer `div d, a, b`.
pub(crate) fn div(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    int2(d, insn, |k| Ok(int_op!(k, div_h)))
}

/// `rem d, a, b`.
pub(crate) fn rem(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    int2(d, insn, |k| Ok(int_op!(k, rem_h)))
}

/// Integer `abs d, a`.
pub(crate) fn abs(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    int1(d, insn, |k| Ok(signed_op!(k, abs_h)))
}

/// Integer `neg d, a`.
pub(crate) fn neg(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    int1(d, insn, |k| Ok(signed_op!(k, neg_h)))
}

/// `d, a` with `a` of type `ty`.
fn ops1(d: &mut Dec<'_, '_>, insn: &mut Insn, ty: ScalarType) -> R<()> {
    insn.d = d.dst(0)?;
    insn.a = d.src(1, ty)?;
    Ok(())
}

/// `d, a, b`.
fn ops2(d: &mut Dec<'_, '_>, insn: &mut Insn, ta: ScalarType, tb: ScalarType) -> R<()> {
    insn.d = d.dst(0)?;
    insn.a = d.src(1, ta)?;
    insn.b = d.src(2, tb)?;
    Ok(())
}

/// `d, a, b, c`.
fn ops3(
    d: &mut Dec<'_, '_>,
    insn: &mut Insn,
    ta: ScalarType,
    tb: ScalarType,
    tc: ScalarType,
) -> R<()> {
    ops2(d, insn, ta, tb)?;
    insn.c = d.src(3, tc)?;
    Ok(())
}

fn int1(d: &mut Dec<'_, '_>, insn: &mut Insn, f: impl Fn(IntTy) -> R<Op>) -> R<()> {
    let ty = d.ty()?;
    ops1(d, insn, ty)?;
    insn.op = f(int_ty(ty)?)?;
    Ok(())
}

fn int2(d: &mut Dec<'_, '_>, insn: &mut Insn, f: impl Fn(IntTy) -> R<Op>) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ty)?;
    insn.op = f(int_ty(ty)?)?;
    Ok(())
}

fn int3(d: &mut Dec<'_, '_>, insn: &mut Insn, f: impl Fn(IntTy) -> R<Op>) -> R<()> {
    let ty = d.ty()?;
    ops3(d, insn, ty, ty, ty)?;
    insn.op = f(int_ty(ty)?)?;
    Ok(())
}

pub(crate) fn add_sub(d: &mut Dec<'_, '_>, insn: &mut Insn, sub: bool) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ty)?;
    let sat = d.has(Modifier::Sat);
    insn.op = match ty {
        ScalarType::U16x2 | ScalarType::S16x2 if !sub && !sat => {
            crate::alu2!(i, a, b => si::add_u16x2(a as u32, b as u32) as u64)
        }
        ScalarType::U16x2 | ScalarType::S16x2 => {
            return Err(format!(
                "`{}` takes `.u16x2`/`.s16x2` only as plain `add`",
                d.inst.op
            ))
        }
        ScalarType::S32 if sat && sub => {
            crate::alu2!(i, a, b => si::sub_sat_s32(a as i32, b as i32) as u32 as u64)
        }
        ScalarType::S32 if sat => {
            crate::alu2!(i, a, b => si::add_sat_s32(a as i32, b as i32) as u32 as u64)
        }
        _ if sat => return Err(".sat applies only to .s32".into()),
        _ if sub => int_op!(int_ty(ty)?, sub_h),
        _ => int_op!(int_ty(ty)?, add_h),
    };
    Ok(())
}

/// The `.lo`/`.hi`/`.wide` mode of `mul` and `mad` (`.lo` when none is written).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Lo,
    Hi,
    Wide,
}

fn mode(d: &Dec<'_, '_>) -> Mode {
    if d.has(Modifier::Hi) {
        Mode::Hi
    } else if d.has(Modifier::Wide) {
        Mode::Wide
    } else {
        Mode::Lo
    }
}

pub(crate) fn mul(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ty)?;
    let k = int_ty(ty)?;
    insn.op = match mode(d) {
        Mode::Lo => int_op!(k, mul_lo_h),
        Mode::Hi => int_op!(k, mul_hi_h),
        Mode::Wide => wide_op!(k, mul_wide_h),
    };
    Ok(())
}

pub(crate) fn mad(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    let k = int_ty(ty)?;
    let mode = mode(d);
    let tc = if mode == Mode::Wide {
        ScalarType::B64
    } else {
        ty
    };
    ops3(d, insn, ty, ty, tc)?;
    insn.op = match (mode, d.has(Modifier::Sat)) {
        (Mode::Hi, true) if k == IntTy::S32 => crate::alu3!(i, a, b, c =>
            si::mad_hi_sat_s32(a as i32, b as i32, c as i32) as u32 as u64),
        (_, true) => return Err(".sat applies only to mad.hi.s32".into()),
        (Mode::Lo, false) => int_op!(k, mad_lo_h),
        (Mode::Hi, false) => int_op!(k, mad_hi_h),
        (Mode::Wide, false) => wide_op!(k, mad_wide_h),
    };
    Ok(())
}

/// `add.cc`, `sub.cc` (`cin = false`), `addc{.cc}`, `subc{.cc}` (`cin = true`).
pub(crate) fn carry(d: &mut Dec<'_, '_>, insn: &mut Insn, sub: bool, cin: bool) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ty)?;
    insn.v[0] = d.b.cc_slot;
    insn.aux = if cin { CC_IN } else { 0 }
        | if d.has(Modifier::Cc) { CC_OUT } else { 0 }
        | if sub { CC_SUB } else { 0 };
    insn.op = carry_op!(int_ty(ty)?, addc_h);
    Ok(())
}

/// `mad{.lo,.hi}.cc` (`cin = false`) and `madc{.lo,.hi}{.cc}` (`cin = true`).
pub(crate) fn mad_carry(d: &mut Dec<'_, '_>, insn: &mut Insn, cin: bool) -> R<()> {
    let ty = d.ty()?;
    let k = int_ty(ty)?;
    let mode = mode(d);
    if mode == Mode::Wide || d.has(Modifier::Sat) {
        return Err("the carry-chain `mad` takes `.lo` or `.hi` only".into());
    }
    ops3(d, insn, ty, ty, ty)?;
    insn.v[0] = d.b.cc_slot;
    insn.aux = if cin { CC_IN } else { 0 }
        | if d.has(Modifier::Cc) { CC_OUT } else { 0 }
        | if mode == Mode::Hi { CC_HI } else { 0 }
        | if ty.kind() == TypeKind::Signed {
            CC_SIGNED
        } else {
            0
        };
    insn.op = carry_op!(k, madc_h);
    Ok(())
}

pub(crate) fn mul24(d: &mut Dec<'_, '_>, insn: &mut Insn, mad: bool) -> R<()> {
    let ty = d.ty()?;
    let k = int_ty(ty)?;
    if !matches!(k, IntTy::U32 | IntTy::S32) {
        return Err("the type must be .u32 or .s32".into());
    }
    if mad {
        ops3(d, insn, ty, ty, ty)?;
    } else {
        ops2(d, insn, ty, ty)?;
    }
    let (hi, s, sat) = (mode(d) == Mode::Hi, k == IntTy::S32, d.has(Modifier::Sat));
    if sat && !(mad && hi && s) {
        return Err(".sat applies only to mad24.hi.s32".into());
    }
    let f: AluFn = match (mad, hi, s, sat) {
        (false, false, false, _) => mul24_h::<false, false>,
        (false, false, true, _) => mul24_h::<false, true>,
        (false, true, false, _) => mul24_h::<true, false>,
        (false, true, true, _) => mul24_h::<true, true>,
        (true, false, false, _) => mad24_h::<false, false, false>,
        (true, false, true, _) => mad24_h::<false, true, false>,
        (true, true, false, _) => mad24_h::<true, false, false>,
        (true, true, true, false) => mad24_h::<true, true, false>,
        (true, true, true, true) => mad24_h::<true, true, true>,
    };
    insn.op = Op::Alu(f);
    Ok(())
}

pub(crate) fn min_max(d: &mut Dec<'_, '_>, insn: &mut Insn, max: bool) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ty)?;
    let relu = d.has(Modifier::Relu);
    insn.op = match (ty, relu, max) {
        (ScalarType::U16x2, false, false) => {
            crate::alu2!(i, a, b => si::min_u16x2(a as u32, b as u32) as u64)
        }
        (ScalarType::U16x2, false, true) => {
            crate::alu2!(i, a, b => si::max_u16x2(a as u32, b as u32) as u64)
        }
        (ScalarType::S16x2, false, false) => {
            crate::alu2!(i, a, b => si::min_s16x2(a as u32, b as u32, false) as u64)
        }
        (ScalarType::S16x2, false, true) => {
            crate::alu2!(i, a, b => si::max_s16x2(a as u32, b as u32, false) as u64)
        }
        (ScalarType::S16x2, true, false) => {
            crate::alu2!(i, a, b => si::min_s16x2(a as u32, b as u32, true) as u64)
        }
        (ScalarType::S16x2, true, true) => {
            crate::alu2!(i, a, b => si::max_s16x2(a as u32, b as u32, true) as u64)
        }
        (ScalarType::S32, true, false) => {
            crate::alu2!(i, a, b => si::min_relu_s32(a as i32, b as i32) as u32 as u64)
        }
        (ScalarType::S32, true, true) => {
            crate::alu2!(i, a, b => si::max_relu_s32(a as i32, b as i32) as u32 as u64)
        }
        (_, true, _) => return Err(".relu applies only to .s32 and .s16x2".into()),
        (_, false, false) => int_op!(int_ty(ty)?, min_h),
        (_, false, true) => int_op!(int_ty(ty)?, max_h),
    };
    Ok(())
}

/// `popc`, `clz`, `brev` on `.b32`/`.b64`.
pub(crate) fn bits1(d: &mut Dec<'_, '_>, insn: &mut Insn, op: Opcode) -> R<()> {
    let ty = d.ty()?;
    ops1(d, insn, ty)?;
    insn.op = match (op, int_ty(ty)?) {
        (Opcode::Popc, IntTy::U32 | IntTy::S32) => {
            crate::alu1!(i, a => sl::popc_b32(a as u32) as u64)
        }
        (Opcode::Popc, IntTy::U64 | IntTy::S64) => crate::alu1!(i, a => sl::popc_b64(a) as u64),
        (Opcode::Clz, IntTy::U32 | IntTy::S32) => {
            crate::alu1!(i, a => sl::clz_b32(a as u32) as u64)
        }
        (Opcode::Clz, IntTy::U64 | IntTy::S64) => crate::alu1!(i, a => sl::clz_b64(a) as u64),
        (Opcode::Brev, IntTy::U32 | IntTy::S32) => {
            crate::alu1!(i, a => sl::brev_b32(a as u32) as u64)
        }
        (Opcode::Brev, IntTy::U64 | IntTy::S64) => crate::alu1!(i, a => sl::brev_b64(a)),
        _ => return Err("the type must be .b32 or .b64".into()),
    };
    Ok(())
}

pub(crate) fn bfind(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    ops1(d, insn, ty)?;
    let sh = d.has(Modifier::Shiftamt);
    let f: AluFn = match (int_ty(ty)?, sh) {
        (IntTy::U32, false) => bfind_h::<32, false, false>,
        (IntTy::U32, true) => bfind_h::<32, false, true>,
        (IntTy::S32, false) => bfind_h::<32, true, false>,
        (IntTy::S32, true) => bfind_h::<32, true, true>,
        (IntTy::U64, false) => bfind_h::<64, false, false>,
        (IntTy::U64, true) => bfind_h::<64, false, true>,
        (IntTy::S64, false) => bfind_h::<64, true, false>,
        (IntTy::S64, true) => bfind_h::<64, true, true>,
        _ => return Err("the type must be .u32, .s32, .u64 or .s64".into()),
    };
    insn.op = Op::Alu(f);
    Ok(())
}

/// `fns.b32 d, mask, base, offset`.
pub(crate) fn fns(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    ops3(d, insn, ScalarType::B32, ScalarType::U32, ScalarType::S32)?;
    insn.op = crate::alu3!(i, a, b, c => sl::fns(a as u32, b as u32, c as u32 as i32) as u64);
    Ok(())
}

pub(crate) fn bfe(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    ops3(d, insn, ty, ScalarType::U32, ScalarType::U32)?;
    let f: AluFn = match int_ty(ty)? {
        IntTy::U32 => bfe_h::<32, false>,
        IntTy::S32 => bfe_h::<32, true>,
        IntTy::U64 => bfe_h::<64, false>,
        IntTy::S64 => bfe_h::<64, true>,
        _ => return Err("the type must be .u32, .s32, .u64 or .s64".into()),
    };
    insn.op = Op::Alu(f);
    Ok(())
}

/// `bfi.type f, a, b, c, d` (`d`, the length, in `v[0]`).
pub(crate) fn bfi(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    ops3(d, insn, ty, ty, ScalarType::U32)?;
    insn.v[0] = d.src(4, ScalarType::U32)?;
    let f: AluFn = match int_ty(ty)? {
        IntTy::U32 | IntTy::S32 => bfi_h::<32>,
        IntTy::U64 | IntTy::S64 => bfi_h::<64>,
        _ => return Err("the type must be .b32 or .b64".into()),
    };
    insn.op = Op::Alu(f);
    Ok(())
}

/// The `.clamp`/`.wrap` mode (required by `bmsk`, `szext`, `shf`).
fn clamp_mode(d: &Dec<'_, '_>) -> R<ClampMode> {
    if d.has(Modifier::Clamp) {
        Ok(ClampMode::Clamp)
    } else if d.has(Modifier::Wrap) {
        Ok(ClampMode::Wrap)
    } else {
        Err("missing `.clamp` or `.wrap`".into())
    }
}

pub(crate) fn bmsk(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    ops2(d, insn, ScalarType::U32, ScalarType::U32)?;
    insn.op = match clamp_mode(d)? {
        ClampMode::Clamp => {
            crate::alu2!(i, a, b => sl::bmsk(ClampMode::Clamp, a as u32, b as u32) as u64)
        }
        ClampMode::Wrap => {
            crate::alu2!(i, a, b => sl::bmsk(ClampMode::Wrap, a as u32, b as u32) as u64)
        }
    };
    Ok(())
}

pub(crate) fn szext(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ScalarType::U32)?;
    insn.op = match (clamp_mode(d)?, int_ty(ty)?) {
        (ClampMode::Clamp, IntTy::U32) => crate::alu2!(i, a, b =>
            sl::szext(ClampMode::Clamp, a as u32, b as u32, false) as u64),
        (ClampMode::Clamp, IntTy::S32) => crate::alu2!(i, a, b =>
            sl::szext(ClampMode::Clamp, a as u32, b as u32, true) as u64),
        (ClampMode::Wrap, IntTy::U32) => crate::alu2!(i, a, b =>
            sl::szext(ClampMode::Wrap, a as u32, b as u32, false) as u64),
        (ClampMode::Wrap, IntTy::S32) => crate::alu2!(i, a, b =>
            sl::szext(ClampMode::Wrap, a as u32, b as u32, true) as u64),
        _ => return Err("the type must be .u32 or .s32".into()),
    };
    Ok(())
}

/// Whether a `.u32`/`.s32` operand type of `dp4a`, `dp2a` or a SIMD video instruction is
/// signed.
fn signed32(t: ScalarType) -> R<bool> {
    match int_ty(t)? {
        IntTy::U32 => Ok(false),
        IntTy::S32 => Ok(true),
        _ => Err("the operand types must be .u32 or .s32".into()),
    }
}

/// `dp4a.atype.btype` and `dp2a.{lo,hi}.atype.btype`.
pub(crate) fn dot(d: &mut Dec<'_, '_>, insn: &mut Insn, dp2a: bool) -> R<()> {
    let types = d.types();
    let [ta, tb] = types[..] else {
        return Err("expected two types (`.atype.btype`)".into());
    };
    let (sa, sb) = (signed32(ta)?, signed32(tb)?);
    let tc = if sa || sb {
        ScalarType::S32
    } else {
        ScalarType::U32
    };
    ops3(d, insn, ta, tb, tc)?;
    let f: AluFn = if dp2a {
        let hi = d.has(Modifier::Hi);
        if !hi && !d.has(Modifier::Lo) {
            return Err("missing `.lo` or `.hi`".into());
        }
        match (hi, sa, sb) {
            (false, false, false) => dp2a_h::<false, false, false>,
            (false, false, true) => dp2a_h::<false, false, true>,
            (false, true, false) => dp2a_h::<false, true, false>,
            (false, true, true) => dp2a_h::<false, true, true>,
            (true, false, false) => dp2a_h::<true, false, false>,
            (true, false, true) => dp2a_h::<true, false, true>,
            (true, true, false) => dp2a_h::<true, true, false>,
            (true, true, true) => dp2a_h::<true, true, true>,
        }
    } else {
        match (sa, sb) {
            (false, false) => dp4a_h::<false, false>,
            (false, true) => dp4a_h::<false, true>,
            (true, false) => dp4a_h::<true, false>,
            (true, true) => dp4a_h::<true, true>,
        }
    };
    insn.op = Op::Alu(f);
    Ok(())
}

/// `and or xor not cnot`, on values and (but `cnot`) on predicates.
pub(crate) fn logic(d: &mut Dec<'_, '_>, insn: &mut Insn, op: Opcode) -> R<()> {
    let ty = d.ty()?;
    let unary = matches!(op, Opcode::Not | Opcode::Cnot);
    if ty == ScalarType::Pred {
        if op == Opcode::Cnot {
            return Err("`cnot` does not take `.pred`".into());
        }
        insn.d = d.pred_dst(0)?;
        let (a, na) = d.pred_src(1)?;
        let (b, nb) = if unary { (a, na) } else { d.pred_src(2)? };
        insn.a = a;
        insn.b = b;
        insn.aux = na as u64 | (nb as u64) << 1;
        let f: AluFn = match op {
            Opcode::And => pred_logic_h::<AND>,
            Opcode::Or => pred_logic_h::<OR>,
            Opcode::Xor => pred_logic_h::<XOR>,
            _ => pred_logic_h::<NOT>,
        };
        insn.op = Op::Alu(f);
        return Ok(());
    }
    if unary {
        ops1(d, insn, ty)?;
    } else {
        ops2(d, insn, ty, ty)?;
    }
    let w = match int_ty(ty)? {
        IntTy::U16 | IntTy::S16 => 16,
        IntTy::U32 | IntTy::S32 => 32,
        IntTy::U64 | IntTy::S64 => 64,
    };
    let f: AluFn = match (op, w) {
        (Opcode::And, 16) => logic2_h::<AND, 16>,
        (Opcode::And, 32) => logic2_h::<AND, 32>,
        (Opcode::And, _) => logic2_h::<AND, 64>,
        (Opcode::Or, 16) => logic2_h::<OR, 16>,
        (Opcode::Or, 32) => logic2_h::<OR, 32>,
        (Opcode::Or, _) => logic2_h::<OR, 64>,
        (Opcode::Xor, 16) => logic2_h::<XOR, 16>,
        (Opcode::Xor, 32) => logic2_h::<XOR, 32>,
        (Opcode::Xor, _) => logic2_h::<XOR, 64>,
        (Opcode::Not, 16) => not_h::<16>,
        (Opcode::Not, 32) => not_h::<32>,
        (Opcode::Not, _) => not_h::<64>,
        (_, 16) => cnot_h::<16>,
        (_, 32) => cnot_h::<32>,
        _ => cnot_h::<64>,
    };
    insn.op = Op::Alu(f);
    Ok(())
}

/// A value destination given as an operand (`d` of a `d|p` pair).
fn value_dst(d: &mut Dec<'_, '_>, o: &Operand) -> R<u32> {
    match o {
        Operand::Sink => Ok(d.dst_sink()),
        Operand::Reg(_) => d.src_op(o, ScalarType::B32),
        o => Err(format!("unsupported destination operand {o:?}")),
    }
}

/// `lop3.b32 d, a, b, c, immLut` and `lop3.{and,or}.b32 d|p, a, b, c, immLut, q`.
pub(crate) fn lop3(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let lut = match d.operand(4)? {
        Operand::Imm(Imm::Int(v)) if *v <= 0xFF => *v,
        _ => return Err("immLut must be an integer constant in 0..=255".into()),
    };
    insn.a = d.src(1, ScalarType::B32)?;
    insn.b = d.src(2, ScalarType::B32)?;
    insn.c = d.src(3, ScalarType::B32)?;
    insn.aux = lut;
    let bool_op = if d.has(Modifier::Or) {
        Some(true)
    } else if d.has(Modifier::And) {
        Some(false)
    } else {
        None
    };
    match (bool_op, d.operand(0)?) {
        (None, _) => {
            insn.d = d.dst(0)?;
            insn.op = Op::Alu(lop3_h);
        }
        (Some(or), Operand::Pair(dv, pv)) => {
            insn.d = value_dst(d, dv)?;
            insn.v[0] = d.pred_dst_op(pv)?;
            let (q, neg) = d.pred_src(5)?;
            insn.v[1] = q;
            insn.aux |= if or { LOP3_OR } else { 0 } | if neg { LOP3_NEG_Q } else { 0 };
            insn.op = Op::Alu(lop3_pred_h);
        }
        (Some(_), _) => return Err("`lop3.and`/`lop3.or` need a `d|p` destination".into()),
    }
    Ok(())
}

/// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`.
pub(crate) fn shf(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    ops3(d, insn, ScalarType::B32, ScalarType::B32, ScalarType::U32)?;
    let dir = if d.has(Modifier::L) {
        ShfDir::L
    } else if d.has(Modifier::R) {
        ShfDir::R
    } else {
        return Err("missing `.l` or `.r`".into());
    };
    insn.op = match (dir, clamp_mode(d)?) {
        (ShfDir::L, ClampMode::Clamp) => crate::alu3!(i, a, b, c =>
            sl::shf(ShfDir::L, ClampMode::Clamp, a as u32, b as u32, c as u32) as u64),
        (ShfDir::L, ClampMode::Wrap) => crate::alu3!(i, a, b, c =>
            sl::shf(ShfDir::L, ClampMode::Wrap, a as u32, b as u32, c as u32) as u64),
        (ShfDir::R, ClampMode::Clamp) => crate::alu3!(i, a, b, c =>
            sl::shf(ShfDir::R, ClampMode::Clamp, a as u32, b as u32, c as u32) as u64),
        (ShfDir::R, ClampMode::Wrap) => crate::alu3!(i, a, b, c =>
            sl::shf(ShfDir::R, ClampMode::Wrap, a as u32, b as u32, c as u32) as u64),
    };
    Ok(())
}

/// `shl.bN` and `shr.{b,u,s}N`; the amount is `.u32`.
pub(crate) fn shift(d: &mut Dec<'_, '_>, insn: &mut Insn, right: bool) -> R<()> {
    let ty = d.ty()?;
    ops2(d, insn, ty, ScalarType::U32)?;
    insn.op = match (right, int_ty(ty)?) {
        (false, IntTy::U16 | IntTy::S16) => {
            crate::alu2!(i, a, b => sl::shl_b16(a as u16, b as u32) as u64)
        }
        (false, IntTy::U32 | IntTy::S32) => {
            crate::alu2!(i, a, b => sl::shl_b32(a as u32, b as u32) as u64)
        }
        (false, IntTy::U64 | IntTy::S64) => crate::alu2!(i, a, b => sl::shl_b64(a, b as u32)),
        (true, IntTy::U16) => crate::alu2!(i, a, b => sl::shr_u16(a as u16, b as u32) as u64),
        (true, IntTy::U32) => crate::alu2!(i, a, b => sl::shr_u32(a as u32, b as u32) as u64),
        (true, IntTy::U64) => crate::alu2!(i, a, b => sl::shr_u64(a, b as u32)),
        (true, IntTy::S16) => {
            crate::alu2!(i, a, b => sl::shr_s16(a as i16, b as u32) as u16 as u64)
        }
        (true, IntTy::S32) => {
            crate::alu2!(i, a, b => sl::shr_s32(a as i32, b as u32) as u32 as u64)
        }
        (true, IntTy::S64) => crate::alu2!(i, a, b => sl::shr_s64(a as i64, b as u32) as u64),
    };
    Ok(())
}

/// `vabsdiff4.dtype.atype.btype{.sat|.add} d, a, b, c`: the lane types, saturation and
/// secondary operation packed into `aux` ([`crate::semantics::video::Vop4`]). Operands with
/// byte selectors or a destination mask (`d.b10`, `a.b3210`) are refused when lowering.
pub(crate) fn vop4(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let types = d.types();
    let [td, ta, tb] = types[..] else {
        return Err("expected three types (`.dtype.atype.btype`)".into());
    };
    let (sat, add) = (d.has(Modifier::Sat), d.has(Modifier::Add));
    if sat && add {
        return Err("`.sat` cannot be used with `.add`".into());
    }
    let v = Vop4::new(signed32(td)?, signed32(ta)?, signed32(tb)?, sat, add);
    ops3(d, insn, ta, tb, td)?;
    insn.aux = v.pack();
    insn.op = Op::Alu(vabsdiff4_h);
    Ok(())
}

/// `prmt.b32{.mode} d, a, b, c`.
pub(crate) fn prmt(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    ops3(d, insn, ScalarType::B32, ScalarType::B32, ScalarType::B32)?;
    let modes = [
        Modifier::F4e,
        Modifier::B4e,
        Modifier::Rc8,
        Modifier::Ecl,
        Modifier::Ecr,
        Modifier::Rc16,
    ];
    let m = modes.iter().position(|&m| d.has(m)).map_or(0, |k| k + 1);
    let f: AluFn = match m {
        1 => prmt_h::<1>,
        2 => prmt_h::<2>,
        3 => prmt_h::<3>,
        4 => prmt_h::<4>,
        5 => prmt_h::<5>,
        6 => prmt_h::<6>,
        _ => prmt_h::<0>,
    };
    insn.op = Op::Alu(f);
    Ok(())
}
