//! The selector immediates of the matrix instructions that ptxas range-checks when it assembles
//! (so a kernel that uses a bad one never loads, rather than failing at launch): the sparsity
//! selector of `mma.sp`/`mma.sp::ordered_metadata` and `wgmma.mma_async.sp`, and the
//! `{byte-id, thread-id}` pairs of block-scaled `mma`. The ranges are ptxas 13.5's, probed per
//! shape and type (they follow the ISA's tables, except that ptxas also takes 2 and 3 for
//! `mma.sp .m16n8k32` `.f16` with `.f32` accumulators). Selectors in registers are checked when
//! the instruction runs.

use super::Insn;
use crate::codes;
use crate::scope::FnChecker;
use ptx_diag::Diagnostic;
use ptx_isa::{Modifier as M, Opcode as O};
use ptx_syntax::ast::{Expr, Operand};

/// The values a selector may take.
#[derive(Clone, Copy)]
enum Allowed {
    /// `0..=n`.
    UpTo(i128),
    /// 0 or 2 (block-scale byte-id with `.scale_vec::2X`).
    ZeroOrTwo,
}

impl Allowed {
    fn contains(self, v: i128) -> bool {
        match self {
            Allowed::UpTo(n) => (0..=n).contains(&v),
            Allowed::ZeroOrTwo => v == 0 || v == 2,
        }
    }

    fn describe(self) -> String {
        match self {
            Allowed::UpTo(0) => "0".into(),
            Allowed::UpTo(1) => "0 or 1".into(),
            Allowed::UpTo(n) => format!("0 to {n}"),
            Allowed::ZeroOrTwo => "0 or 2".into(),
        }
    }
}

/// Checks the selector immediates of `mma.sp`, block-scaled `mma` and `wgmma.mma_async.sp`.
pub(crate) fn check(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    match ins.op {
        O::Mma | O::MmaSp if ins.has(M::Sp) || ins.has(M::SpOrderedMetadata) => {
            mma_sp(c, ins);
            if ins.has(M::BlockScale) {
                block_scale(c, ins, 7);
            }
        }
        O::Mma if ins.has(M::BlockScale) => block_scale(c, ins, 5),
        O::Wgmma | O::WgmmaMmaAsync | O::WgmmaMmaAsyncSp if ins.has(M::Sp) => wgmma_sp(c, ins),
        _ => {}
    }
}

/// The data-type modifiers in order (`.f32 .bf16 .bf16 .f32`: D, A, B, C).
fn types<'i>(ins: &'i Insn<'_>) -> Vec<&'i str> {
    const TYPES: &[&str] = &[
        ".f16", ".f32", ".f64", ".bf16", ".tf32", ".e4m3", ".e5m2", ".e3m2", ".e2m3", ".e2m1",
        ".s8", ".u8", ".s4", ".u4", ".b1", ".s32",
    ];
    ins.modifiers
        .iter()
        .map(|m| m.text.as_str())
        .filter(|t| TYPES.contains(t))
        .collect()
}

/// The value of an immediate operand (a constant expression); `None` for a register.
fn immediate(o: &Operand) -> Option<(i128, &Expr)> {
    let Operand::Expr(e) = o else {
        return None;
    };
    let v = ptx_syntax::constexpr::eval(e, &|_| None).ok()?.as_i128()?;
    Some((v, e))
}

fn check_value(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    o: &Operand,
    what: &str,
    allowed: Allowed,
    help: &str,
) {
    let Some((v, e)) = immediate(o) else {
        return;
    };
    if allowed.contains(v) {
        return;
    }
    let expected = allowed.describe();
    c.diags.push(
        Diagnostic::error(
            codes::IMMEDIATE_VALUE,
            format!(
                "{what} {v} is out of range for `{}`: expected {expected}",
                ins.full_opcode()
            ),
            e.loc.0,
        )
        .with_label_message(format!("expected {expected}"))
        .with_help(help.to_string()),
    );
}

/// `mma.sp`: the sparsity selector (operand 6, `f`) by A's type and the shape (0 with a
/// `.kind`).
fn mma_sp(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let tys = types(ins);
    let (Some(&d), Some(&a)) = (tys.first(), tys.get(1)) else {
        return;
    };
    let kind = [M::KindF8f6f4, M::KindMxf8f6f4, M::KindMxf4, M::KindMxf4nvf4];
    let max = if kind.iter().any(|&k| ins.has(k)) {
        0
    } else {
        match a {
            ".e4m3" | ".e5m2" => 0,
            // ptxas 13.5 takes 0 to 3 for .m16n8k32 .f16 with .f32 accumulators too
            ".f16" if ins.has(M::M16n8k16) || d == ".f32" => 3,
            ".bf16" if ins.has(M::M16n8k16) => 3,
            ".tf32" if ins.has(M::M16n8k8) => 3,
            ".f16" | ".bf16" | ".tf32" => 1,
            ".s8" | ".u8" if ins.has(M::M16n8k32) => 1,
            ".s4" | ".u4" if ins.has(M::M16n8k64) => 1,
            ".s8" | ".u8" | ".s4" | ".u4" => 0,
            _ => return,
        }
    };
    let Some(o) = ins.operands.get(5) else {
        return;
    };
    let allowed = Allowed::UpTo(max);
    let help = format!(
        "the sparsity selector says which threads of each group of four supply the metadata; \
         with these shape and types ptxas takes {}",
        allowed.describe()
    );
    check_value(c, ins, o, "sparsity selector", allowed, &help);
}

/// `wgmma.mma_async.sp`: the sparsity selector (operand 5, `sp-sel`): 0 or 1 for 16-bit types
/// and `.tf32`, 0 for 8-bit types.
fn wgmma_sp(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let tys = types(ins);
    let Some(&a) = tys.get(1) else {
        return;
    };
    let max = match a {
        ".f16" | ".bf16" | ".tf32" => 1,
        ".e4m3" | ".e5m2" | ".s8" | ".u8" => 0,
        _ => return,
    };
    let Some(o) = ins.operands.get(4) else {
        return;
    };
    let help = "the sparsity selector says which pair of threads of each group of four \
                supplies the metadata: 0 or 1 for 16-bit types and `.tf32`, 0 for 8-bit types";
    check_value(c, ins, o, "sparsity selector", Allowed::UpTo(max), help);
}

/// Block-scaled `mma`: `{byte-id-a, thread-id-a}` (operand index `first`: 5, or 7 for
/// `mma.sp`) and `{byte-id-b, thread-id-b}` (two further on). byte-id: 0 to 3 with `.scale_vec::1X`, 0 or 2 with `2X`, 0 with `4X` (the
/// default is 1X for `.kind::mxf8f6f4`, 2X for `.kind::mxf4`); thread-id: 0 or 1 for A, 0 to 3
/// for B.
fn block_scale(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, first: usize) {
    let vec = if ins.has(M::ScaleVec1X) {
        1
    } else if ins.has(M::ScaleVec2X) {
        2
    } else if ins.has(M::ScaleVec4X) {
        4
    } else if ins.has(M::KindMxf8f6f4) {
        1
    } else if ins.has(M::KindMxf4) {
        2
    } else {
        return; // `.kind::mxf4nvf4` must name its `.scale_vec`
    };
    let byte = match vec {
        1 => Allowed::UpTo(3),
        2 => Allowed::ZeroOrTwo,
        _ => Allowed::UpTo(0),
    };
    let help = format!(
        "with `.scale_vec::{vec}X` byte-id (the byte of the scale register) is {}; thread-id (the \
         threads that supply the scale factors) is 0 or 1 for A and 0 to 3 for B",
        byte.describe()
    );
    for (k, which, thread) in [
        (first, "a", Allowed::UpTo(1)),
        (first + 2, "b", Allowed::UpTo(3)),
    ] {
        let Some(Operand::Vector(sel, _)) = ins.operands.get(k) else {
            continue;
        };
        if sel.len() != 2 {
            continue;
        }
        check_value(c, ins, &sel[0], &format!("byte-id-{which}"), byte, &help);
        check_value(
            c,
            ins,
            &sel[1],
            &format!("thread-id-{which}"),
            thread,
            &help,
        );
    }
}
