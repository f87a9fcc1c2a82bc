//! Decoding of the warp-level instructions (`shfl`, `vote`, `match`, `redux`, `elect`) and of
//! `atom`/`red` (handlers in [`crate::ops_warp`]).

use super::{Dec, R};
use crate::ops_move::space_code;
use crate::ops_warp::*;
use crate::program::Space;
use crate::program::{Insn, MemFn, Op};
use ptx_ir::{Modifier, Operand};
use ptx_isa::ScalarType;

/// Value slot written by destination operand `o` (`_` gets a scratch slot).
fn value_dst(d: &mut Dec<'_, '_>, o: &Operand) -> R<u32> {
    match o {
        Operand::Sink => Ok(d.dst_sink()),
        Operand::Reg(_) => d.src_op(o, ScalarType::B64),
        o => Err(format!("expected a register destination, found {o:?}")),
    }
}

/// Destination `d` or `d|p` at operand `k`: (value slot, predicate slot or [`NONE`]).
fn dst_pair(d: &mut Dec<'_, '_>, k: usize) -> R<(u32, u32)> {
    match d.operand(k)? {
        Operand::Pair(v, p) => {
            let vs = value_dst(d, v)?;
            let ps = d.pred_dst_op(p)?;
            Ok((vs, ps))
        }
        o => Ok((value_dst(d, o)?, NONE)),
    }
}

/// The first of `names` among the instruction's modifiers, as its index.
fn which(d: &Dec<'_, '_>, names: &[Modifier]) -> Option<u64> {
    names.iter().position(|&n| d.has(n)).map(|k| k as u64)
}

pub(crate) fn decode_shfl(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // shfl{.sync}.mode.b32 d[|p], a, b, c{, membermask}
    let mode = which(
        d,
        &[Modifier::Up, Modifier::Down, Modifier::Bfly, Modifier::Idx],
    )
    .ok_or("`shfl` without a mode")?;
    if d.ty()?.size_bits() != 32 {
        return Err("`shfl` moves 32-bit values only".into());
    }
    let (dv, dp) = dst_pair(d, 0)?;
    insn.d = dv;
    insn.v[1] = dp;
    insn.a = d.src(1, ScalarType::B32)?;
    insn.v[0] = d.src(2, ScalarType::U32)?;
    insn.c = d.src(3, ScalarType::U32)?;
    insn.aux = mode;
    // `b` and `c` known at compile time: the usual shapes get a handler of their own
    let known = (d.b.const_value(insn.v[0]), d.b.const_value(insn.c));
    let mut f: MemFn = shfl;
    if let (Some(b), Some(c)) = known {
        insn.aux |= SHFL_UNIFORM;
        if let Some(h) = shfl_fixed_handler(mode, b as u32, c as u32) {
            // the shape, for a superinstruction built on it later ([`scan_step_handler`])
            insn.aux |= SHFL_FIXED | (b & 31) << SHFL_FIXED_B;
            f = h;
        }
    }
    if d.has(Modifier::Sync) {
        insn.b = d.src(4, ScalarType::B32)?;
        insn.op = Op::WarpSync(f);
    } else {
        insn.b = NONE;
        insn.op = Op::Mem(f);
    }
    Ok(())
}

pub(crate) fn decode_vote(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // vote{.sync}.mode.pred d, {!}a{, membermask}; vote{.sync}.ballot.b32 d, {!}a{, membermask}
    let mode = which(
        d,
        &[
            Modifier::All,
            Modifier::Any,
            Modifier::Uni,
            Modifier::Ballot,
        ],
    )
    .ok_or("`vote` without a mode")?;
    let (a, neg) = d.pred_src(1)?;
    insn.a = a;
    insn.d = if mode == VOTE_BALLOT {
        let o = d.operand(0)?;
        value_dst(d, o)?
    } else {
        d.pred_dst(0)?
    };
    insn.aux = mode | if neg { VOTE_NEG } else { 0 };
    if d.has(Modifier::Sync) {
        insn.b = d.src(2, ScalarType::B32)?;
        insn.op = Op::WarpSync(vote);
    } else {
        insn.b = NONE;
        insn.op = Op::Mem(vote);
    }
    Ok(())
}

pub(crate) fn decode_match(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // match.any.sync.type d, a, membermask; match.all.sync.type d[|p], a, membermask
    if !d.has(Modifier::Sync) {
        return Err("`match` needs `.sync`".into());
    }
    let all = match which(d, &[Modifier::Any, Modifier::All]) {
        Some(k) => k == 1,
        None => return Err("`match.sync` without `.any` or `.all`".into()),
    };
    let ty = d.ty()?;
    let wide = match ty.size_bits() {
        32 => false,
        64 => true,
        _ => return Err(format!("`match.sync` on `{}`", ty.suffix())),
    };
    let (dv, dp) = dst_pair(d, 0)?;
    insn.d = dv;
    insn.v[1] = dp;
    insn.a = d.src(1, ty)?;
    insn.b = d.src(2, ScalarType::B32)?;
    insn.aux = if all { MATCH_ALL } else { 0 } | if wide { MATCH_B64 } else { 0 };
    insn.op = Op::WarpSync(match_sync);
    Ok(())
}

pub(crate) fn decode_redux(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // redux.sync.op{.abs}{.NaN}.type dst, src, membermask
    if !d.has(Modifier::Sync) {
        return Err("`redux` needs `.sync`".into());
    }
    let op = which(
        d,
        &[
            Modifier::Add,
            Modifier::Min,
            Modifier::Max,
            Modifier::And,
            Modifier::Or,
            Modifier::Xor,
        ],
    )
    .ok_or("`redux.sync` without an operation")?;
    let ty = d.ty()?;
    let mut aux = op;
    match ty {
        ScalarType::U32 | ScalarType::B32 => {}
        ScalarType::S32 => aux |= REDUX_SIGNED,
        ScalarType::F32 if op == REDUX_MIN || op == REDUX_MAX => {
            aux |= REDUX_F32;
            if d.has(Modifier::Abs) {
                aux |= REDUX_ABS;
            }
            if d.has(Modifier::NaN) {
                aux |= REDUX_NAN;
            }
        }
        t => return Err(format!("`redux.sync` on `{}`", t.suffix())),
    }
    let o = d.operand(0)?;
    insn.d = value_dst(d, o)?;
    insn.a = d.src(1, ty)?;
    insn.b = d.src(2, ScalarType::B32)?;
    insn.aux = aux;
    insn.op = Op::WarpSync(redux);
    Ok(())
}

pub(crate) fn decode_elect(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // elect.sync d|p, membermask
    if !d.has(Modifier::Sync) {
        return Err("`elect` needs `.sync`".into());
    }
    let (dv, dp) = dst_pair(d, 0)?;
    insn.d = dv;
    insn.v[1] = dp;
    insn.b = d.src(1, ScalarType::B32)?;
    insn.op = Op::WarpSync(elect);
    Ok(())
}

const ATOM_OPS: [Modifier; 10] = [
    Modifier::And,
    Modifier::Or,
    Modifier::Xor,
    Modifier::Cas,
    Modifier::Exch,
    Modifier::Add,
    Modifier::Inc,
    Modifier::Dec,
    Modifier::Min,
    Modifier::Max,
];

fn atom_type(ty: ScalarType) -> Option<u64> {
    Some(match ty {
        ScalarType::B16 | ScalarType::U16 => T_U16,
        ScalarType::B32 | ScalarType::U32 => T_U32,
        ScalarType::S32 => T_S32,
        ScalarType::B64 | ScalarType::U64 => T_U64,
        ScalarType::S64 => T_S64,
        ScalarType::F32 => T_F32,
        ScalarType::F64 => T_F64,
        ScalarType::F16 => T_F16,
        ScalarType::Bf16 => T_BF16,
        ScalarType::F16x2 => T_F16X2,
        ScalarType::Bf16x2 => T_BF16X2,
        _ => return None,
    })
}

pub(crate) fn decode_atom(d: &mut Dec<'_, '_>, insn: &mut Insn, is_red: bool) -> R<()> {
    // atom{.sem}{.scope}{.space}.op{.hint}{.vN}.type d, [a], b{, c}{, cache-policy}
    // red {.sem}{.scope}{.space}.op{.hint}{.vN}.type [a], b{, cache-policy}
    let name = if is_red { "red" } else { "atom" };
    if d.has(Modifier::Async) {
        return Err(format!("`{name}.async` is not supported yet"));
    }
    let op = which(d, &ATOM_OPS).ok_or_else(|| format!("`{name}` without an operation"))?;
    let sty = d.ty()?;
    let ty = atom_type(sty).ok_or_else(|| format!("`{name}` on `{}`", sty.suffix()))?;
    let ok = match op {
        A_AND | A_OR | A_XOR | A_INC | A_DEC => !is_float(ty) && ty != T_U16,
        A_ADD | A_MIN | A_MAX => ty != T_U16,
        _ => true, // cas, exch: bits of any width
    };
    if !ok || (is_red && op == A_CAS) {
        return Err(format!(
            "`{name}{}{}` is not a valid combination",
            ATOM_OPS[op as usize],
            sty.suffix()
        ));
    }
    let n: u32 = d.inst.vector_width().unwrap_or(1);
    if !matches!(n, 1 | 2 | 4 | 8) || (n == 8 && type_bytes(ty) != 2) {
        return Err(format!("`{name}.v{n}{}` is not supported", sty.suffix()));
    }
    let operands = &d.inst.operands;
    let ai = operands
        .iter()
        .position(|o| matches!(o, Operand::Address(..)))
        .ok_or_else(|| format!("`{name}` without an address operand"))?;
    let (base, imm, space) = d.address(ai)?;
    if matches!(space, Space::Const | Space::KernelParam) {
        return Err(format!("`{name}` on read-only memory"));
    }
    insn.a = base;
    insn.imm = imm;
    // `red` has no destination (a vector before the address, as in some ISA examples, is
    // ignored); `atom`'s is operand 0.
    let has_dst = !is_red && ai >= 1;
    let mut aux = op | ty << 4 | space_code(space) << 8 | (n as u64) << 12;
    if has_dst {
        aux |= A_HAS_DST;
    }
    let bi = ai + 1;
    if n == 1 {
        insn.d = if has_dst {
            let o = d.operand(0)?;
            value_dst(d, o)?
        } else {
            0
        };
        insn.b = d.src(bi, sty)?;
        insn.c = if op == A_CAS {
            d.src(bi + 1, sty)?
        } else {
            d.b.konst(0)
        };
        insn.aux = aux;
        insn.op = Op::Mem(atom_scalar);
        return Ok(());
    }
    // Vector form: 2n slots, packed as 16-bit indices (sources 0..8, destinations 8..16).
    let srcs = match d.operand(bi)? {
        Operand::Vector(v) if v.len() == n as usize => v,
        _ => return Err(format!("`{name}.v{n}` needs a vector of {n} sources")),
    };
    let mut packed = [0u32; 16];
    for (k, o) in srcs.iter().enumerate() {
        packed[k] = d.src_op(o, sty)?;
    }
    if has_dst {
        let dsts = match d.operand(0)? {
            Operand::Vector(v) if v.len() == n as usize => v,
            _ => return Err(format!("`{name}.v{n}` needs a vector of {n} destinations")),
        };
        for (k, o) in dsts.iter().enumerate() {
            packed[8 + k] = value_dst(d, o)?;
        }
    } else {
        let sink = d.dst_sink();
        for p in &mut packed[8..] {
            *p = sink;
        }
    }
    if packed.iter().any(|&s| s > 0xFFFF) {
        return Err(format!("`{name}.v{n}`: too many registers in this kernel"));
    }
    let w = |k: usize| packed[2 * k] | packed[2 * k + 1] << 16;
    insn.d = w(0);
    insn.b = w(1);
    insn.c = w(2);
    insn.v = [w(3), w(4), w(5), w(6)];
    insn.aux = aux | (w(7) as u64) << 32;
    insn.op = Op::Mem(atom_vec);
    Ok(())
}
