//! Decoding of data movement: `mov`, `ld`, `st`, `cvta`, `isspacep` and the stack
//! instructions (handlers in [`crate::ops_move`]).

use super::{Dec, R};
use crate::mem::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};
use crate::ops_move::*;
use crate::program::Space;
use crate::program::{Insn, Op};
use ptx_ir::{Base, Modifier, Operand};
use ptx_isa::{ScalarType, TypeKind};

fn mem_aux(space: Space, size: u32, vec: u32, signed: bool) -> u64 {
    space_code(space) | (size as u64) << 8 | (vec as u64) << 16 | (signed as u64) << 24
}

fn type_bytes(ty: ScalarType) -> R<u32> {
    let bits = ty.size_bits();
    if bits > 64 {
        return Err(format!("{}-bit accesses are not supported yet", bits));
    }
    Ok(bits.div_ceil(8))
}

pub(crate) fn decode_ld_st(d: &mut Dec<'_, '_>, insn: &mut Insn, store: bool) -> R<()> {
    let ty = d.ty()?;
    let size = type_bytes(ty)?;
    let vec: u32 = d.inst.vector_width().unwrap_or(1);
    if vec > 4 && (vec != 8 || size != 4) {
        return Err(format!(
            "`.v{vec}` accesses of {size}-byte elements are not supported"
        ));
    }
    let (val_idx, addr_idx) = if store { (1, 0) } else { (0, 1) };
    let (base, imm, space) = d.address(addr_idx)?;
    insn.a = base;
    insn.imm = imm;
    let vals: Vec<&Operand> = match d.operand(val_idx)? {
        Operand::Vector(v) => v.iter().collect(),
        o => vec![o],
    };
    if vals.len() as u32 != vec {
        return Err(format!("expected {vec} values, found {}", vals.len()));
    }
    let mut slots = Vec::with_capacity(vals.len());
    for o in vals.iter() {
        let slot = if store {
            d.src_op(o, ty)?
        } else {
            match o {
                Operand::Reg(r) => {
                    if d.reg_ty(*r) == ScalarType::Pred {
                        return Err("loads into predicates are not supported".into());
                    }
                    d.src_op(o, ty)?
                }
                Operand::Sink => d.dst_sink(),
                o => return Err(format!("unsupported load destination {o:?}")),
            }
        };
        slots.push(slot);
    }
    if vec == 8 {
        // `.v8` (256-bit, sm_100+): the eight slots go in the program's operand lists
        insn.v[0] = slots[0];
        insn.d = slots[0];
        d.b.lists.push(slots);
        insn.aux = mem_aux(space, size, vec, ty.kind() == TypeKind::Signed)
            | ((d.b.lists.len() as u64 - 1) << V8_LIST_SHIFT);
        insn.op = Op::Mem(if store { st_v8 } else { ld_v8 });
        return Ok(());
    }
    insn.v[..slots.len()].copy_from_slice(&slots);
    insn.d = insn.v[0];
    let signed = ty.kind() == TypeKind::Signed && size < 8;
    // a 64-bit destination of `ld.s32`: the value must be sign-extended into all 64 bits
    // (readers of a 32-bit register look at its low 32 bits only, so there it need not be)
    let wide_dst =
        !store && matches!(vals.as_slice(), [Operand::Reg(r)] if d.reg_ty(*r).size_bits() > 32);
    insn.aux = mem_aux(space, size, vec, signed);
    // A load from a constant address (a parameter, a `.const`/`.shared`/`.global` variable by
    // name) reads the same bytes in every lane: once per warp, then broadcast.
    let uniform = !store
        && d.b.const_value(base).is_some()
        && matches!(
            space,
            Space::KernelParam | Space::Const | Space::Global | Space::Shared
        );
    insn.op = Op::Mem(if store {
        st
    } else if uniform {
        ld_uniform
    } else if signed && size == 4 && wide_dst {
        insn.aux |= WIDE_S32;
        ld_wide_s32
    } else {
        ld
    });
    Ok(())
}

impl Dec<'_, '_> {
    /// A scratch slot for a `_` destination.
    pub(crate) fn dst_sink(&mut self) -> u32 {
        self.b.nslots += 1;
        self.b.nslots - 1
    }
}

/// `isspacep.space p, a`.
pub(crate) fn decode_isspacep(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    insn.d = d.pred_dst(0)?;
    insn.a = d.src(1, ScalarType::U64)?;
    insn.aux = match d.inst.space() {
        Some(ptx_isa::StateSpace::Global) => 0,
        Some(ptx_isa::StateSpace::Const) => 1,
        Some(
            ptx_isa::StateSpace::Shared
            | ptx_isa::StateSpace::SharedCta
            | ptx_isa::StateSpace::SharedCluster,
        ) => 2,
        Some(ptx_isa::StateSpace::Local) => 3,
        _ => 4,
    };
    insn.op = Op::Mem(isspacep);
    Ok(())
}

/// `alloca d, size{, align}`.
pub(crate) fn decode_alloca(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    insn.d = d.dst(0)?;
    insn.a = d.src(1, ScalarType::U64)?;
    insn.aux = match d.inst.operands.get(2) {
        Some(Operand::Imm(ptx_ir::Imm::Int(a))) => *a,
        _ => 8,
    };
    insn.op = Op::Mem(alloca);
    Ok(())
}

/// `stacksave d`.
pub(crate) fn decode_stacksave(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    insn.d = d.dst(0)?;
    insn.op = Op::Mem(stacksave);
    Ok(())
}

/// `stackrestore a`.
pub(crate) fn decode_stackrestore(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    insn.a = d.src(0, ScalarType::U64)?;
    insn.op = Op::Mem(stackrestore);
    Ok(())
}

/// `activemask d`.
pub(crate) fn decode_activemask(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    insn.d = d.dst(0)?;
    insn.op = Op::Mem(activemask);
    Ok(())
}

pub(crate) fn decode_mov(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    if ty == ScalarType::Pred {
        insn.d = d.pred_dst(0)?;
        if let Operand::Special(_) = d.operand(1)? {
            // a predicate special register (`%is_explicit_cluster`): held as 0 or 1
            insn.a = d.src(1, ScalarType::U32)?;
            insn.op = Op::Alu(super::cluster::pred_of_value);
            return Ok(());
        }
        let (a, neg) = d.pred_src(1)?;
        insn.a = a;
        insn.aux = neg as u64;
        insn.op = Op::Alu(pred_copy);
        return Ok(());
    }
    let dst = d.operand(0)?;
    let src = d.operand(1)?;
    match (dst, src) {
        (Operand::Vector(parts), _) => {
            // unpack
            let n = parts.len() as u32;
            let w = ty.size_bits() / n;
            insn.a = d.src(1, ty)?;
            for (k, p) in parts.iter().enumerate() {
                insn.v[k] = match p {
                    Operand::Reg(_) => d.src_op(p, ty)?,
                    _ => d.dst_sink(),
                };
            }
            insn.aux = (w as u64) | (n as u64) << 8;
            insn.op = Op::Alu(unpack);
            Ok(())
        }
        (_, Operand::Vector(parts)) => {
            let n = parts.len() as u32;
            let w = ty.size_bits() / n;
            insn.d = d.dst(0)?;
            for (k, p) in parts.iter().enumerate() {
                insn.v[k] = d.src_op(p, ScalarType::B64)?;
            }
            insn.aux = (w as u64) | (n as u64) << 8;
            insn.op = Op::Alu(pack);
            Ok(())
        }
        (_, Operand::Special(sr)) if TIMERS.contains(&sr.name.as_str()) => {
            insn.d = d.dst(0)?;
            insn.aux = match sr.name.as_str() {
                "%clock" => 0,
                "%clock64" => 1,
                "%globaltimer" => 2,
                "%globaltimer_lo" => 3,
                "%clock_hi" => 5,
                _ => 4,
            };
            insn.op = Op::Mem(clock);
            Ok(())
        }
        (_, Operand::Symbol(Base::Local(l), k)) => {
            insn.d = d.dst(0)?;
            match d.symbol_const(Base::Local(*l), *k)? {
                Some(v) => {
                    insn.a = d.b.konst(v);
                    insn.op = crate::alu1!(i, a => a);
                }
                None => {
                    // frame variable: fp + offset (a local-space address)
                    insn.a = d.b.fp_slot;
                    insn.imm = d.func.locals[l.index()].offset as i64 + k;
                    insn.op = crate::alu1!(i, a => a.wrapping_add(i.imm as u64));
                }
            }
            Ok(())
        }
        _ => {
            insn.d = d.dst(0)?;
            insn.a = d.src(1, ty)?;
            insn.op = crate::alu1!(i, a => a);
            Ok(())
        }
    }
}

pub(crate) fn decode_cvta(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let to = d.has(Modifier::To);
    let window = match d.inst.space() {
        Some(
            ptx_isa::StateSpace::Shared
            | ptx_isa::StateSpace::SharedCta
            | ptx_isa::StateSpace::SharedCluster,
        ) => SHARED_WINDOW,
        Some(ptx_isa::StateSpace::Local) => LOCAL_WINDOW,
        Some(ptx_isa::StateSpace::Param) => PARAM_WINDOW,
        _ => 0,
    };
    insn.d = d.dst(0)?;
    let ty = d.ty()?;
    match d.operand(1)? {
        Operand::Symbol(base @ Base::Local(l), k) if d.symbol_const(*base, *k)?.is_none() => {
            insn.a = d.b.fp_slot;
            insn.imm = d.func.locals[l.index()].offset as i64 + k;
        }
        _ => {
            insn.a = d.src(1, ty)?;
        }
    }
    let bits32 = ty.size_bits() == 32;
    insn.aux = window;
    insn.op = match (to, bits32) {
        (false, false) => crate::alu1!(i, a => a.wrapping_add(i.imm as u64).wrapping_add(i.aux)),
        (true, false) => crate::alu1!(i, a => a.wrapping_add(i.imm as u64).wrapping_sub(i.aux)),
        (false, true) => {
            crate::alu1!(i, a => (a.wrapping_add(i.imm as u64).wrapping_add(i.aux)) & 0xFFFF_FFFF)
        }
        (true, true) => {
            crate::alu1!(i, a => (a.wrapping_add(i.imm as u64).wrapping_sub(i.aux)) & 0xFFFF_FFFF)
        }
    };
    Ok(())
}
