//! Memory operands against the variables they name: the instruction's state space must be the
//! variable's (`ld.shared` of a `.global` variable; a generic access cannot reach `.const` or
//! `.param` variables), and a function's input parameters are read-only (`st.param` to a
//! kernel parameter). ptxas: "State space mismatch between instruction and address", "Illegal
//! to write to function input parameter".

use super::Insn;
use crate::codes;
use crate::scope::{FnChecker, Resolved, SymbolKind};
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{Modifier, Opcode, StateSpace};
use ptx_syntax::ast::{BinaryOp, Expr, ExprKind, Operand};

/// The variable an address names (`[g]`, `[g+8]`, `[arr+4-2]`), with the span of the name.
pub(crate) fn base_name(e: &Expr) -> Option<(&str, Span)> {
    match &e.kind {
        ExprKind::Symbol(n) => Some((n.as_str(), e.loc.0)),
        ExprKind::Binary(BinaryOp::Add | BinaryOp::Sub, a, _) => base_name(a),
        _ => None,
    }
}

/// The space a memory space modifier selects, sub-spaces folded (`.shared::cta` is `.shared`,
/// `.param::entry` is `.param`).
fn space_of_modifier(m: &str) -> Option<StateSpace> {
    let base = m.split("::").next().unwrap_or(m);
    let s = StateSpace::from_suffix(base)?;
    matches!(
        s,
        StateSpace::Global
            | StateSpace::Shared
            | StateSpace::Local
            | StateSpace::Const
            | StateSpace::Param
    )
    .then_some(s)
}

/// Whether an instruction of space `insn` (None: generic) may access a variable of space `var`.
pub(crate) fn space_fits(insn: Option<StateSpace>, var: StateSpace) -> bool {
    use StateSpace as S;
    let var = match var {
        S::SharedCta | S::SharedCluster => S::Shared,
        v => v,
    };
    match insn {
        // generic addressing covers .global, .shared and .local windows, not .const or .param
        None => matches!(var, S::Global | S::Shared | S::Local),
        Some(s) => s == var,
    }
}

/// Checks the address operand of `ld`, `ldu`, `st`, `atom`, `red`, `prefetch`, `prefetchu`
/// against the variable it names.
pub(crate) fn check_address_space(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let op = ins.opcode.text.as_str();
    let writes = super::writes_memory(ins.op);
    if !(writes
        || matches!(
            ins.op,
            Opcode::Ld | Opcode::Ldu | Opcode::Prefetch | Opcode::Prefetchu
        ))
    {
        return;
    }
    let Some(addr) = ins.operands.iter().find_map(|o| match o {
        Operand::Address(a) => Some(a),
        _ => None,
    }) else {
        return;
    };
    let Some(Operand::Expr(e)) = addr.items.first() else {
        return;
    };
    let Some((name, span)) = base_name(e) else {
        return;
    };
    let (kind, scope, decl, space) = match c.resolve(name) {
        Resolved::Symbol(s)
            if matches!(
                s.kind,
                SymbolKind::Variable | SymbolKind::Param | SymbolKind::ReturnParam
            ) =>
        {
            (s.kind, s.scope, s.span, s.space)
        }
        _ => return,
    };
    // only memory variables (a `.reg` parameter of a `.func` is a register)
    let Some(var_space) = space.filter(|s| s.is_memory()) else {
        return;
    };
    let modifier = ins
        .modifiers
        .iter()
        .find(|m| space_of_modifier(&m.text).is_some());
    let insn_space = modifier.and_then(|m| space_of_modifier(&m.text));
    let full = ins.full_opcode();
    if !space_fits(insn_space, var_space) {
        let what = match insn_space {
            Some(s) => format!("`{full}` accesses {s} memory"),
            None => format!("`{full}` is a generic access"),
        };
        let help = match var_space {
            StateSpace::Const | StateSpace::Param => format!(
                "write `{op}{var_space}`: generic addresses do not reach {var_space} variables"
            ),
            _ => format!("write `{op}{var_space}` (or leave the space out for a generic access)"),
        };
        c.diags.push(
            Diagnostic::error(
                codes::STATE_SPACE,
                format!(
                    "state space mismatch between instruction and address: {what}, `{name}` is a {var_space} variable"
                ),
                span,
            )
            .with_label_message(format!("a {var_space} variable"))
            .with_secondary(decl, "declared here")
            .with_help(help),
        );
        return;
    }
    if writes && kind == SymbolKind::Param && scope == 0 {
        c.diags.push(
            Diagnostic::error(
                codes::INPUT_PARAM_WRITE,
                format!("illegal to write to function input parameter `{name}`"),
                span,
            )
            .with_label_message("input parameters are read-only")
            .with_secondary(decl, "declared here")
            .with_help(format!(
                "load it with `ld.param` into a register and change the register instead of `{name}`"
            )),
        );
    }
}

/// Vectors of `ld`/`st` wider than 128 bits (`.v4.b64`, `.v8.b32`): PTX ISA 8.8 and sm_100 on,
/// global (or generic) memory only, `.v8` with 32-bit element types only, never a vector of
/// `.b128` (ptxas: "Feature '256 bit wide load/store' requires PTX ISA .version 8.8 or later",
/// "... requires .target sm_100 or higher", "global state space expected", "Vector type too
/// large, exceeds 128 bit limit").
pub(crate) fn check_wide_vector(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let op = ins.opcode.text.as_str();
    if !(ins.op == Opcode::Ld || super::is_st(ins.op)) {
        return;
    }
    let Some(v) = [Modifier::V2, Modifier::V4, Modifier::V8]
        .into_iter()
        .find(|&m| ins.has(m))
    else {
        return;
    };
    let n = v.vector_width().unwrap_or(0);
    let Some(vm) = ins.modifiers.iter().find(|m| m.text == v.text()) else {
        return;
    };
    let Some((tw, t)) = ins
        .modifiers
        .iter()
        .rev()
        .find_map(|m| Some((m, ptx_isa::ScalarType::from_suffix(&m.text)?)))
    else {
        return;
    };
    let bits = n * t.size_bits();
    let full = ins.full_opcode();
    let span = vm.loc.0.to(tw.loc.0);
    let error = |code, message: String, label: &str, help: &str| {
        Diagnostic::error(code, message, span)
            .with_label_message(label.to_string())
            .with_help(help.to_string())
    };
    if t.size_bits() == 128 && n > 1 {
        c.diags.push(error(
            codes::VECTOR_WIDTH,
            format!("vector type of `{full}` too large: {bits} bits exceed the 128-bit limit"),
            "`.b128` values are not vectorised",
            "load or store each `.b128` value on its own",
        ));
        return;
    }
    if n == 8 && (t.size_bits() != 32 || t.lanes() != 1) {
        c.diags.push(error(
            codes::INSTRUCTION_TYPES,
            format!("unexpected instruction types `.v8{t}` for `{op}`"),
            "`.v8` takes 32-bit element types (`.b32`, `.u32`, `.s32`, `.f32`)",
            "use `.v8.b32` to move the same bits",
        ));
        return;
    }
    if bits <= 128 {
        return;
    }
    let h = *c.header;
    let need_v = ptx_isa::PtxVersion::new(8, 8);
    let need_t = ptx_isa::SmTarget::sm(100, ptx_isa::ArchVariant::Base);
    let feature = "256 bit wide load/store";
    if let Some(v) = h.version.filter(|v| *v < need_v) {
        c.diags.push(error(
            codes::NEEDS_VERSION,
            format!("`{full}` requires PTX ISA .version {need_v} or later, but the module declares .version {v}"),
            &format!("'{feature}' was introduced in PTX ISA {need_v}"),
            "raise `.version` to 8.8 or later, or split the access into two of 128 bits",
        ));
    }
    if let Some(t) = h.target.filter(|t| !t.supports(&need_t)) {
        c.diags.push(error(
            codes::NEEDS_TARGET,
            format!("`{full}` requires .target {need_t} or higher, but the module targets {t}"),
            &format!("'{feature}' needs {need_t}"),
            "compile for sm_100 or later, or split the access into two of 128 bits",
        ));
    }
    if let Some(m) = ins
        .modifiers
        .iter()
        .find(|m| space_of_modifier(&m.text).is_some_and(|s| s != StateSpace::Global))
    {
        c.diags.push(
            Diagnostic::error(
                codes::STATE_SPACE,
                format!("`{full}`: 256-bit loads and stores need global memory, not {}", m.text),
                m.loc.0,
            )
            .with_label_message("global state space expected")
            .with_help(format!("write `{op}.global` (or a generic address), or split the access into two of 128 bits")),
        );
    }
}
