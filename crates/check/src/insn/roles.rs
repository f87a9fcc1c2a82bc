//! The generic operand pass: an instruction's operands against the roles the table gives its
//! form (`ptx_isa::roles_for`): count, destinations and sources with their types under the
//! operand-type rules, predicates, immediates, addresses. Every instruction whose rule is a role
//! list goes through here; the hand rules of [`super::operands`] cover the irregular rest.

use super::operands::{arity, check_operand, Want};
use super::types_of;
use super::Insn;
use crate::codes;
use crate::scope::{FnChecker, Resolved, SymbolKind};
use crate::types::widened;
use ptx_diag::Diagnostic;
use ptx_isa::{OperandRole, RoleKind, RoleRule, RoleType, ScalarType};
use ptx_syntax::ast::{ExprKind, Operand};

/// The type a role names for this instruction, if it can be told.
fn resolve(c: &FnChecker<'_, '_>, ty: RoleType, types: &[ScalarType]) -> Option<ScalarType> {
    match ty {
        RoleType::None => None,
        RoleType::Last => types.last().copied(),
        RoleType::Nth(n) => types.get(n as usize).copied(),
        RoleType::Wide => types.last().copied().and_then(widened),
        RoleType::Address => Some(if c.header.address_size == 32 {
            ScalarType::U32
        } else {
            ScalarType::U64
        }),
        RoleType::Fixed(t) => Some(t),
    }
}

/// Checks `ins` against the role list `ops` of `rule`.
pub(crate) fn check(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    rule: &RoleRule,
    ops: &[OperandRole],
) {
    let max = ops.len();
    let min = ops.iter().filter(|o| !o.optional).count();
    if !arity(c, ins, min, max, &rule.shape()) {
        return;
    }
    let types = types_of(ins);
    for (o, role) in ins.operands.iter().zip(ops) {
        let t = resolve(c, role.ty, &types);
        match role.kind {
            RoleKind::Dst => match (o, role.pair) {
                (Operand::Pair(a, b), Some(_)) => {
                    if let Some(t) = t {
                        check_operand(c, ins, a, Want::Dst(t), false);
                    }
                    check_operand(c, ins, b, Want::PredDst, false);
                }
                _ => {
                    if let Some(t) = t {
                        check_operand(c, ins, o, Want::Dst(t), false);
                    }
                }
            },
            RoleKind::Src => {
                if let Some(t) = t {
                    check_operand(c, ins, o, Want::Val(t), false);
                }
            }
            RoleKind::Pred { negatable } => {
                check_operand(c, ins, o, Want::Pred { neg: negatable }, false)
            }
            RoleKind::PredDst => check_operand(c, ins, o, Want::PredDst, false),
            RoleKind::Imm => immediate(c, ins, o, role),
            RoleKind::Address => {
                if !matches!(o, Operand::Address(_)) {
                    c.diags.push(
                        Diagnostic::error(
                            codes::OPERAND_SHAPE,
                            format!(
                                "operand `{}` of `{}` is a memory address in brackets",
                                role.name,
                                ins.full_opcode()
                            ),
                            o.loc().0,
                        )
                        .with_label_message("not an address")
                        .with_help("write the address in brackets, e.g. `[%rd1]` or `[var]`"),
                    );
                }
            }
            RoleKind::Label => target_list(c, ins, o, role),
            RoleKind::Any => {}
        }
    }
}

/// The target list of `brx.idx`: the label of a `.branchtargets` directive (ptxas: "Arguments
/// mismatch for instruction 'brx.idx'" for a plain label or a register).
fn target_list(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, o: &Operand, role: &OperandRole) {
    let ok = match o {
        Operand::Expr(e) => match &e.kind {
            ExprKind::Symbol(n) => match c.resolve(n) {
                Resolved::Symbol(s) => s.kind == SymbolKind::BranchTargets,
                Resolved::Label | Resolved::Special => false,
                // an undeclared name is reported where names are resolved
                Resolved::Unknown => true,
            },
            _ => false,
        },
        _ => false,
    };
    if !ok {
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_SHAPE,
                format!(
                    "operand `{}` of `{}` must name a `.branchtargets` list",
                    role.name,
                    ins.full_opcode()
                ),
                o.loc().0,
            )
            .with_label_message("not a `.branchtargets` label")
            .with_help(
                "declare the targets: `ts: .branchtargets L0, L1, L2;` and write `brx.idx %r, ts;`",
            ),
        );
    }
}

/// An operand that must be a constant (`immLut` of `lop3`, `N` of `cp.async.wait_group`).
fn immediate(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, o: &Operand, role: &OperandRole) {
    let is_constant = match o {
        Operand::Expr(e) => {
            !matches!(&e.kind, ExprKind::Symbol(n) if n.starts_with('%'))
                && ptx_syntax::constexpr::eval(e, &|_| None).is_ok()
        }
        _ => false,
    };
    if is_constant {
        return;
    }
    c.diags.push(
        Diagnostic::error(
            codes::OPERAND_SHAPE,
            format!(
                "operand `{}` of `{}` must be a constant",
                role.name,
                ins.full_opcode()
            ),
            o.loc().0,
        )
        .with_label_message("not an immediate")
        .with_help(format!(
            "write an integer constant for `{}`: `{}` takes it as an immediate, not a register",
            role.name,
            ins.full_opcode()
        )),
    );
}
