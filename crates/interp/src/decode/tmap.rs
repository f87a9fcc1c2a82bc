//! Decoding of `tensormap.replace`, `tensormap.cp_fenceproxy` and `st.bulk` into
//! [`Op::Async`] instructions (layout: [`crate::ops_async::TMAP_REPLACE`],
//! [`crate::ops_async::TMAP_CP`], [`crate::ops_async::ST_BULK`]); `exec/tmap.rs` runs them.

use super::asyncop::{addr, imm};
use super::{Dec, R};
use crate::ops_async as k;
use crate::program::{Insn, Op, Space};
use crate::semantics::tensormap::Field;
use ptx_ir::{Modifier, Opcode, Operand};
use ptx_isa::ScalarType;

/// The modifier of each [`Field`], in the order of [`Field::ALL`].
const FIELDS: [Modifier; 11] = [
    Modifier::GlobalAddress,
    Modifier::Rank,
    Modifier::BoxDim,
    Modifier::GlobalDim,
    Modifier::GlobalStride,
    Modifier::ElementStride,
    Modifier::Elemtype,
    Modifier::InterleaveLayout,
    Modifier::SwizzleMode,
    Modifier::SwizzleAtomicity,
    Modifier::FillMode,
];

pub(super) fn decode(d: &mut Dec<'_, '_>, i: &mut Insn) -> R<()> {
    i.op = Op::Async;
    let name = d.inst.full_name();
    match d.inst.op {
        // (the table's `tensormap` entry is the family's name, with `replace`'s syntax)
        Opcode::Tensormap | Opcode::TensormapReplace => {
            let code = FIELDS
                .iter()
                .position(|m| d.has(*m))
                .ok_or_else(|| format!("`{name}` names no tensor-map field"))?;
            let field = Field::ALL[code];
            let wide = matches!(field, Field::GlobalAddress | Field::GlobalStride);
            if d.has(Modifier::B64) != wide {
                return Err(format!(
                    "`{name}`: the field takes a .b{} value",
                    if wide { 64 } else { 32 }
                ));
            }
            i.aux = k::TMAP_REPLACE | (code as u64) << 32;
            addr(d, i, 0, 0, None)?;
            let mut next = 1;
            if field.has_ord() {
                let ord = imm(d, 1)?;
                if ord > 4 {
                    return Err(format!("`{name}`: ordinal {ord} is not in 0..=4"));
                }
                i.aux |= ord << 40;
                next = 2;
            }
            i.c = d.src(
                next,
                if wide {
                    ScalarType::B64
                } else {
                    ScalarType::B32
                },
            )?;
        }
        Opcode::TensormapCpFenceproxy => {
            i.aux = k::TMAP_CP;
            addr(d, i, 0, 0, Some(Space::Global))?;
            addr(d, i, 1, 1, Some(Space::Shared))?;
            if imm(d, 2)? != 128 {
                return Err(format!("`{name}`: the size must be 128"));
            }
        }
        Opcode::StBulk => {
            i.aux = k::ST_BULK;
            addr(d, i, 0, 0, None)?;
            // (a 32-bit size register, which PTX 9.0 allows, is read as its 32 bits)
            if let Operand::Reg(r) = d.operand(1)? {
                if d.reg_ty(*r).size_bits() == 32 {
                    i.aux |= k::SIZE32;
                }
            }
            i.c = d.src(1, ScalarType::U64)?;
            if imm(d, 2)? != 0 {
                return Err(format!("`{name}`: initval must be 0"));
            }
        }
        op => return Err(format!("`{}` is not a tensor-map instruction", op.name())),
    }
    Ok(())
}
