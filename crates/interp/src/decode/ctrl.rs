//! Decoding of control flow: calls and barriers.

use super::{imm_bits, Dec, R};
use crate::program::{BarKind, Barrier, CallOperand, CallSite, CallTarget, Insn, Op, RedOp};
use ptx_ir::{Base, Imm, Modifier, Opcode, Operand};
use ptx_isa::ScalarType;

pub(super) fn decode_call(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // call{.uni} (rets), target, (args){, proto};
    let ops = &d.inst.operands;
    let mut idx = 0;
    let mut rets = Vec::new();
    if let Some(Operand::List(l)) = ops.first() {
        rets = l.clone();
        idx = 1;
    }
    let target = ops.get(idx).ok_or("call without a target")?;
    let args = match ops.get(idx + 1) {
        Some(Operand::List(l)) => l.clone(),
        _ => Vec::new(),
    };
    let conv = |d: &mut Dec<'_, '_>, o: &Operand| -> R<CallOperand> {
        Ok(match o {
            Operand::Symbol(Base::Local(l), k) => {
                let local = &d.func.locals[l.index()];
                CallOperand::Frame(local.offset + *k as u64, local.size)
            }
            Operand::Reg(r) => CallOperand::Slot(d.reg_slot(*r)),
            Operand::Imm(i) => CallOperand::Slot(d.b.konst(imm_bits(*i, ScalarType::B64))),
            o => return Err(format!("unsupported call argument {o:?}")),
        })
    };
    let rets = rets.iter().map(|o| conv(d, o)).collect::<R<Vec<_>>>()?;
    let args = args.iter().map(|o| conv(d, o)).collect::<R<Vec<_>>>()?;
    let target = match target {
        Operand::Symbol(Base::Function(f), 0) => {
            let callee = &d.b.m.functions[f.index()];
            if callee.defined {
                CallTarget::Func(d.b.func_of_ir[f.index()].ok_or("callee not compiled")?)
            } else {
                match callee.name.as_str() {
                    "vprintf" => CallTarget::Vprintf,
                    "__assertfail" | "__assert_fail" => CallTarget::AssertFail,
                    "malloc" => CallTarget::Malloc,
                    "free" => CallTarget::Free,
                    n => CallTarget::Undefined(n.to_string()),
                }
            }
        }
        Operand::Reg(r) => CallTarget::Indirect(d.reg_slot(*r)),
        o => return Err(format!("unsupported call target {o:?}")),
    };
    d.b.calls.push(CallSite { target, args, rets });
    insn.op = Op::Call(d.b.calls.len() as u32 - 1);
    Ok(())
}

pub(super) fn decode_bar(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let has = |m: Modifier| d.inst.has(m);
    let is_barrier = d.inst.op == Opcode::Barrier;
    if d.inst.op == Opcode::BarWarpSync {
        // bar.warp.sync membermask
        insn.b = d.src(0, ScalarType::B32)?;
        fn nop(_: &mut crate::program::Ctx<'_>, _: &Insn, _: u32) -> crate::program::MemResult {
            Ok(())
        }
        insn.op = Op::WarpSync(nop);
        return Ok(());
    }
    let kind = if has(Modifier::Arrive) {
        BarKind::Arrive
    } else if has(Modifier::Red) {
        BarKind::Red
    } else {
        BarKind::Sync
    };
    let aligned = !is_barrier || has(Modifier::Aligned);
    let mut k = 0;
    let mut red = None;
    let mut red_dst = 0;
    if kind == BarKind::Red {
        let op = if has(Modifier::Popc) {
            RedOp::Popc
        } else if has(Modifier::And) {
            RedOp::And
        } else {
            RedOp::Or
        };
        red_dst = match op {
            RedOp::Popc => d.dst(0)?,
            _ => d.pred_dst(0)?,
        };
        red = Some(op);
        k = 1;
    }
    let (id, id_slot) = match d.operand(k)? {
        Operand::Imm(Imm::Int(v)) => (*v as u32, None),
        _ => (0, Some(d.src(k, ScalarType::U32)?)),
    };
    let n = d.inst.operands.len();
    let count_idx = if kind == BarKind::Red {
        n - 1 - 1
    } else {
        n - 1
    };
    let (count, count_slot) =
        if (kind == BarKind::Red && n == 4) || (kind != BarKind::Red && n == 2) {
            match d.operand(count_idx)? {
                Operand::Imm(Imm::Int(v)) => (Some(*v as u32), None),
                _ => (None, Some(d.src(count_idx, ScalarType::U32)?)),
            }
        } else {
            (None, None)
        };
    let red = match red {
        Some(op) => {
            let (src, neg) = d.pred_src(n - 1)?;
            Some((op, red_dst, src, neg))
        }
        None => None,
    };
    d.b.barriers.push(Barrier {
        kind,
        id,
        id_slot,
        count,
        count_slot,
        aligned,
        red,
    });
    insn.op = Op::Bar(d.b.barriers.len() as u32 - 1);
    Ok(())
}
