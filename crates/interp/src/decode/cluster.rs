//! Decoding of the cluster instructions (`barrier.cluster`, `mapa`, `getctarank`) into
//! [`Op::Async`] instructions run by `exec/cluster.rs` (kinds in [`crate::ops_async`]).

use super::{Dec, R};
use crate::ops_async as k;
use crate::program::{Insn, Op};
use ptx_ir::{Base, Modifier, Opcode, Operand};
use ptx_isa::{ScalarType, StateSpace};

/// Turns a decoded `ld`/`st`/`atom`/`red` that may reach another CTA of the cluster (one on
/// `.shared::cluster`, or a generic one in a module with a generic `mapa`) into a `CL_MEM`
/// instruction that runs it on the memory of the CTA its address names.
pub(super) fn remote_access(d: &mut Dec<'_, '_>, i: &mut Insn) {
    let Op::Mem(_) = i.op else {
        return;
    };
    let explicit = d.inst.space() == Some(StateSpace::SharedCluster);
    let remote = match d.inst.space() {
        Some(StateSpace::SharedCluster) => true,
        None => *d.b.generic_mapa.get_or_insert_with(|| {
            d.b.m.functions.iter().any(|f| {
                f.insts
                    .iter()
                    .any(|x| x.op == Opcode::Mapa && x.space().is_none())
            })
        }),
        _ => false,
    };
    if !remote {
        return;
    }
    let mut dests = [u32::MAX; 5];
    match d.inst.op {
        Opcode::Ld => {
            let n = d.inst.vector_width().unwrap_or(1).min(4) as usize;
            dests[..n].copy_from_slice(&i.v[..n]);
        }
        Opcode::Atom => dests[0] = i.d,
        _ => {}
    }
    let k = d.b.cluster_mem.len() as u64;
    d.b.cluster_mem.push((i.clone(), dests));
    i.op = Op::Async;
    i.aux = k::CL_MEM | k << 32 | if explicit { k::CL_SHARED } else { 0 };
}

pub(super) fn decode(d: &mut Dec<'_, '_>, i: &mut Insn) -> R<()> {
    i.op = Op::Async;
    // `.shared::cluster` addresses (32-bit offsets) or generic ones
    let shared = matches!(
        d.inst.space(),
        Some(StateSpace::SharedCluster | StateSpace::Shared | StateSpace::SharedCta)
    );
    let flag = if shared { k::CL_SHARED } else { 0 };
    match d.inst.op {
        Opcode::BarrierCluster => {
            i.aux = if d.has(Modifier::Arrive) {
                k::CL_ARRIVE
            } else {
                k::CL_WAIT
            };
        }
        Opcode::Mapa => {
            i.aux = k::CL_MAPA | flag;
            i.d = d.dst(0)?;
            addr_src(d, i)?;
            i.b = d.src(2, ScalarType::U32)?;
        }
        Opcode::Getctarank => {
            i.aux = k::CL_GETCTARANK | flag;
            i.d = d.dst(0)?;
            addr_src(d, i)?;
        }
        op => {
            return Err(format!(
                "internal error: `{op:?}` is not a cluster instruction"
            ))
        }
    }
    Ok(())
}

/// The address operand 1 of `mapa`/`getctarank` into `a` + `imm`: a register, a constant, or
/// a register plus an offset (`sh + 4`), a variable's address ( a frame-relative one from the frame pointer, as `cvta`).
fn addr_src(d: &mut Dec<'_, '_>, i: &mut Insn) -> R<()> {
    let ty = d.ty()?;
    match d.operand(1)? {
        Operand::Symbol(base @ Base::Local(l), k) if d.symbol_const(*base, *k)?.is_none() => {
            i.a = d.b.fp_slot;
            i.imm = d.func.locals[l.index()].offset as i64 + k;
        }
        Operand::Symbol(Base::Reg(r), k) => {
            let (r, k) = (*r, *k);
            i.a = d.reg_slot(r);
            i.imm = k;
        }
        _ => i.a = d.src(1, ty)?,
    }
    Ok(())
}

/// `mov.pred p, %special`: `p` is true where the register's value is not zero.
pub(crate) fn pred_of_value(r: &mut [crate::program::Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let a = &r[i.a as usize];
    let mut v = 0u32;
    for (l, x) in a.iter().enumerate() {
        v |= ((*x != 0) as u32) << l;
    }
    if i.d != u32::MAX {
        let d = &mut p[i.d as usize];
        *d = (*d & !mask) | (v & mask);
    }
}
