//! Decoding of `wgmma.mma_async`, `wgmma.commit_group`, `wgmma.wait_group` and `wgmma.fence`
//! (executed by [`crate::exec::wgmma`]).
//!
//! A `wgmma.mma_async` names up to 128 accumulator registers and 4 registers of A: their slots
//! go to a list of [`crate::program::Program::tables`] (D first, then A), whose index is in
//! `Insn::c`; the descriptors of A and B are in `Insn::a` and `Insn::b`, the `scale-d`
//! predicate in `v[0]` (negated when `v[1]` is 1), the sparsity metadata register of
//! `wgmma.mma_async.sp` in `v[2]`, the configuration in `aux`.

use super::{Dec, R};
use crate::exec::wgmma::{WgCfg, A_REGS, KIND_COMMIT, KIND_WAIT};
use crate::program::{Insn, Op};
use ptx_ir::{Imm, Operand};
use ptx_isa::{Opcode, ScalarType};
use ptx_semantics::matrix::Elem;

fn regs(o: &Operand) -> Vec<&Operand> {
    match o {
        Operand::Vector(v) => v.iter().collect(),
        o => vec![o],
    }
}

/// The value of immediate operand `k`.
fn imm(d: &Dec<'_, '_>, k: usize) -> R<i64> {
    match d.operand(k)? {
        Operand::Imm(Imm::Int(v)) => Ok(*v as i64),
        o => Err(format!(
            "`{}`: operand {} must be an integer immediate, found {o:?}",
            d.inst.full_name(),
            k + 1
        )),
    }
}

/// Decodes a `wgmma.*` instruction.
pub(crate) fn decode(d: &mut Dec<'_, '_>, insn: &mut Insn, op: Opcode) -> R<()> {
    let name = d.inst.full_name();
    match op {
        Opcode::WgmmaFence => {
            // operands are read when the operation runs, after every earlier register write
            insn.op = Op::Nop;
            return Ok(());
        }
        Opcode::WgmmaCommitGroup => {
            insn.aux = KIND_COMMIT;
            insn.op = Op::Wgmma;
            return Ok(());
        }
        Opcode::WgmmaWaitGroup => {
            let n = imm(d, 0)?;
            if !(0..=1 << 20).contains(&n) {
                return Err(format!("`{name}`: group count {n} out of range"));
            }
            insn.aux = KIND_WAIT;
            insn.imm = n;
            insn.op = Op::Wgmma;
            return Ok(());
        }
        _ => {}
    }
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    let shape = texts
        .iter()
        .find_map(|t| {
            let t = t.strip_prefix(".m64n")?;
            let (n, k) = t.split_once('k')?;
            Some((n.parse::<u32>().ok()?, k.parse::<u32>().ok()?))
        })
        .ok_or_else(|| format!("`{name}`: no `.m64nNkK` shape"))?;
    let types: Vec<Elem> = texts
        .iter()
        .filter_map(|t| super::matrix::elem_of(t))
        .collect();
    let [dt, at, bt] = match types[..] {
        [a, b, c] => [a, b, c],
        _ => return Err(format!("`{name}`: expected three types (D, A, B)")),
    };
    let (n, k) = shape;
    let sparse = op == Opcode::WgmmaMmaAsyncSp;
    let float_in = |e: Elem| matches!(e, Elem::E4m3 | Elem::E5m2);
    let int_in = |e: Elem| matches!(e, Elem::S8 | Elem::U8);
    // the ISA's N: 8…256 step 8; integer and `.b1` D: 8, 16, 24, then 32…256 step 16
    let n_ok = n % 8 == 0 && (8..=256).contains(&n) && (dt != Elem::S32 || n <= 32 || n % 16 == 0);
    let types_ok = match at {
        Elem::F16 => bt == at && matches!(dt, Elem::F16 | Elem::F32),
        Elem::Bf16 | Elem::Tf32 => bt == at && dt == Elem::F32,
        _ if float_in(at) => float_in(bt) && matches!(dt, Elem::F16 | Elem::F32),
        _ if int_in(at) => int_in(bt) && dt == Elem::S32,
        // `.b1` has only the dense `.and.popc` form
        Elem::B1 => {
            bt == at
                && dt == Elem::S32
                && !sparse
                && texts.contains(&".and")
                && texts.contains(&".popc")
        }
        _ => false,
    };
    // K: 32 bytes of A's type, twice that when A is sparse
    let ok = n_ok && types_ok && k == 256 / at.bits() * if sparse { 2 } else { 1 };
    if !ok {
        return Err(format!(
            "`{name}`: not a shape and type combination of wgmma"
        ));
    }
    // integer and `.b1` forms have no scale or transpose immediates
    let is_int = dt == Elem::S32;
    // only `.f16`/`.bf16` have the transpose immediates
    let has_trans = matches!(at, Elem::F16 | Elem::Bf16);
    let a_regs = matches!(d.operand(1)?, Operand::Vector(_));
    let mut cfg = WgCfg {
        n,
        types: [dt, at, bt],
        a_regs,
        neg_a: false,
        neg_b: false,
        trans_a: false,
        trans_b: false,
        satfinite: texts.contains(&".satfinite"),
        sparse,
        sel: 0,
    };
    let nd = cfg.d_regs() as usize;
    let dregs = regs(d.operand(0)?);
    if dregs.len() != nd {
        return Err(format!(
            "`{name}`: D must be a vector of {nd} registers, found {}",
            dregs.len()
        ));
    }
    let mut slots = Vec::with_capacity(nd + 4);
    for o in dregs {
        match o {
            Operand::Reg(_) => slots.push(d.src_op(o, ScalarType::B64)?),
            o => return Err(format!("`{name}`: expected a register in D, found {o:?}")),
        }
    }
    if a_regs {
        let aregs = regs(d.operand(1)?);
        if aregs.len() != A_REGS as usize {
            return Err(format!(
                "`{name}`: A in registers must be a vector of {A_REGS} registers, found {}",
                aregs.len()
            ));
        }
        for o in aregs {
            slots.push(d.src_op(o, ScalarType::B32)?);
        }
    } else {
        insn.a = d.src(1, ScalarType::B64)?;
    }
    insn.b = d.src(2, ScalarType::B64)?;
    // sparse: sp-meta (a register, as ptxas requires) and sp-sel (an immediate) come next
    let mut next = 3;
    if sparse {
        match d.operand(3)? {
            Operand::Reg(_) => insn.v[2] = d.src(3, ScalarType::B32)?,
            o => return Err(format!("`{name}`: sp-meta must be a register, found {o:?}")),
        }
        let sel = imm(d, 4)?;
        // ptxas: 0 or 1 for `.f16`/`.bf16`/`.tf32` (a pair of threads of each group of
        // four holds the metadata); 0 for the 8-bit types (every thread holds some)
        let max = if at.bits() == 8 { 0 } else { 1 };
        if !(0..=max).contains(&sel) {
            return Err(format!(
                "`{name}`: sp-sel must be {}, found {sel}",
                if max == 0 { "0" } else { "0 or 1" }
            ));
        }
        cfg.sel = sel as u32;
        next = 5;
    }
    let (p, neg) = d.pred_src(next)?;
    insn.v[0] = p;
    insn.v[1] = neg as u32;
    next += 1;
    if !is_int {
        let scale = |k: usize| -> R<bool> {
            match imm(d, k)? {
                1 => Ok(false),
                -1 => Ok(true),
                v => Err(format!("`{name}`: imm-scale must be 1 or -1, found {v}")),
            }
        };
        cfg.neg_a = scale(next)?;
        cfg.neg_b = scale(next + 1)?;
        next += 2;
        if has_trans {
            let trans = |k: usize| -> R<bool> {
                match imm(d, k)? {
                    0 => Ok(false),
                    1 => Ok(true),
                    v => Err(format!("`{name}`: imm-trans must be 0 or 1, found {v}")),
                }
            };
            if !a_regs {
                cfg.trans_a = trans(next)?;
                next += 1;
            }
            cfg.trans_b = trans(next)?;
            next += 1;
        }
    }
    if d.inst.operands.len() != next {
        return Err(format!(
            "`{name}`: expected {next} operands, found {}",
            d.inst.operands.len()
        ));
    }
    d.b.tables.push(slots.into_iter().collect());
    insn.c = d.b.tables.len() as u32 - 1;
    insn.aux = cfg.pack();
    insn.op = Op::Wgmma;
    Ok(())
}
