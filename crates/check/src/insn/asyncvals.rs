//! The values ptxas allows for the immediates and the operation/type pairs of the
//! asynchronous-copy and tensor-map instructions, which the table's forms do not encode
//! (probed with ptxas 13.5): `cp.async.cg` copies 16 bytes; `cp.reduce.async.bulk` takes per
//! destination only some operation/type pairs; `tensormap.replace` takes the field's type, an
//! ordinal 0..=4 and, for the enumerated fields, a constant code of the ISA's tables;
//! `tensormap.cp_fenceproxy` and `fence.proxy.tensormap::generic.acquire` take the size 128;
//! `st.bulk` a size that is a multiple of 8 and the initial value 0.

use super::{has, is_int_literal, types_of, Insn};
use crate::codes;
use crate::scope::{FnChecker, Resolved, SymbolKind};
use ptx_diag::Diagnostic;
use ptx_isa::{Modifier as M, Opcode as O, PtxVersion, ScalarType, StateSpace};
use ptx_syntax::ast::Operand;
use ptx_syntax::constexpr::{eval, Value};

pub(crate) fn check(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    // the state space of each address operand, where the instruction fixes one
    let space = |m: M, s: StateSpace| has(ins, m).then_some(s);
    match ins.op {
        O::Tensormap | O::TensormapReplace => {
            let s =
                space(M::Global, StateSpace::Global).or(space(M::SharedCta, StateSpace::Shared));
            address_spaces(c, ins, &[s]);
        }
        O::TensormapCpFenceproxy => {
            address_spaces(
                c,
                ins,
                &[Some(StateSpace::Global), Some(StateSpace::Shared)],
            );
        }
        _ => {}
    }
    match ins.op {
        O::CpAsync => {
            let cg = has(ins, M::Cg);
            let legal: &[u64] = if cg { &[16] } else { &[4, 8, 16] };
            value(
                c,
                ins,
                2,
                "cp-size",
                |v| legal.contains(&v),
                if cg {
                    "`cp.async.cg` copies 16 bytes"
                } else {
                    "`cp.async.ca` copies 4, 8 or 16 bytes"
                },
            );
        }
        O::CpReduceAsyncBulk => cp_reduce(c, ins),
        O::Tensormap | O::TensormapReplace => replace(c, ins),
        O::TensormapCpFenceproxy => {
            if let Some(o) = ins.operands.get(2) {
                if int_value(o).is_none() {
                    let rule = "the size of a tensor map is 128 bytes";
                    bad_value(c, ins, o, "the size must be the constant 128", rule);
                }
            }
            value(
                c,
                ins,
                2,
                "size",
                |v| v == 128,
                "the size of a tensor map is 128 bytes",
            );
        }
        O::Fence if has(ins, M::TensormapGeneric) && has(ins, M::Acquire) => {
            value(
                c,
                ins,
                1,
                "size",
                |v| v == 128,
                "the size of a tensor map is 128 bytes",
            );
        }
        O::StBulk => {
            let space = ins.modifiers.iter().find(|m| {
                StateSpace::from_suffix(&m.text).is_some_and(|s| s != StateSpace::SharedCta)
            });
            if let Some(m) = space {
                c.diags.push(
                    Diagnostic::error(
                        codes::STATE_SPACE,
                        format!("`{}` is not a state space of `st.bulk`", m.text),
                        m.loc.0,
                    )
                    .with_label_message("`st.bulk` writes shared::cta memory")
                    .with_help("write `.shared::cta` or no state space (a generic address)"),
                );
                return;
            }
            value(
                c,
                ins,
                1,
                "size",
                |v| v % 8 == 0,
                "the size of `st.bulk` is a multiple of 8",
            );
            value(
                c,
                ins,
                2,
                "initval",
                |v| v == 0,
                "the only initial value is 0",
            );
        }
        _ => {}
    }
}

/// The address operands named by a variable (`[sm]`, `[sm+8]`) against the state space each
/// takes (`None`: generic), in order (ptxas: "State space mismatch between instruction and
/// address").
fn address_spaces(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, want: &[Option<StateSpace>]) {
    let addrs = ins.operands.iter().filter_map(|o| match o {
        Operand::Address(a) => Some(a),
        _ => None,
    });
    for (a, &w) in addrs.zip(want) {
        let Some(Operand::Expr(e)) = a.items.first() else {
            continue;
        };
        let Some((name, span)) = super::memory::base_name(e) else {
            continue;
        };
        let Resolved::Symbol(sym) = c.resolve(name) else {
            continue;
        };
        let Some(var) = sym.space.filter(|s| s.is_memory()) else {
            continue;
        };
        if !matches!(sym.kind, SymbolKind::Variable | SymbolKind::Param)
            || super::memory::space_fits(w, var)
        {
            continue;
        }
        let decl = sym.span;
        let what = match w {
            Some(s) => format!("this operand of `{}` is in {s} memory", ins.full_opcode()),
            None => format!(
                "this operand of `{}` is a generic address",
                ins.full_opcode()
            ),
        };
        c.diags.push(
            Diagnostic::error(
                codes::STATE_SPACE,
                format!(
                    "state space mismatch between instruction and address: {what}, `{name}` is a {var} variable"
                ),
                span,
            )
            .with_label_message(format!("a {var} variable"))
            .with_secondary(decl, "declared here")
            .with_help("name a variable of the operand's state space, or pass its address in a register"),
        );
    }
}

/// The value of operand `k` when it is an integer constant.
fn int_value(o: &Operand) -> Option<u64> {
    match o {
        Operand::Expr(e) if is_int_literal(e) => match eval(e, &|_| None) {
            Ok(Value::Int { bits, .. }) => Some(bits),
            _ => None,
        },
        _ => None,
    }
}

/// Reports operand `k` when it is a constant that `ok` rejects (registers are judged by the
/// operand rules).
fn value(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    k: usize,
    what: &str,
    ok: impl Fn(u64) -> bool,
    rule: &str,
) {
    let Some(o) = ins.operands.get(k) else {
        return;
    };
    if let Some(v) = int_value(o) {
        if !ok(v) {
            bad_value(c, ins, o, &format!("{what} {v} is not allowed"), rule);
        }
    }
}

fn bad_value(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, o: &Operand, label: &str, rule: &str) {
    c.diags.push(
        Diagnostic::error(
            codes::IMMEDIATE_VALUE,
            format!("unexpected operand value for `{}`", ins.full_opcode()),
            o.loc().0,
        )
        .with_label_message(label.to_string())
        .with_help(rule.to_string()),
    );
}

/// The operation/type pairs ptxas 13.5 takes for `cp.reduce.async.bulk`: to global memory,
/// and (fewer) to shared::cluster memory.
fn cp_reduce(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    use ScalarType as T;
    let to_global = ins
        .modifiers
        .iter()
        .find_map(|m| StateSpace::from_suffix(&m.text))
        == Some(StateSpace::Global);
    let ops = [
        (M::And, "and"),
        (M::Or, "or"),
        (M::Xor, "xor"),
        (M::Add, "add"),
        (M::Inc, "inc"),
        (M::Dec, "dec"),
        (M::Min, "min"),
        (M::Max, "max"),
    ];
    let Some(&(_, op)) = ops.iter().find(|(m, _)| has(ins, *m)) else {
        return;
    };
    let Some(&ty) = types_of(ins).last() else {
        return;
    };
    let legal: &[T] = match (op, to_global) {
        ("and" | "or" | "xor", true) => &[T::B32, T::B64],
        ("and" | "or" | "xor", false) => &[T::B32],
        ("add", true) => &[T::U32, T::S32, T::U64, T::F32, T::F64, T::F16, T::Bf16],
        ("add", false) => &[T::U32, T::S32, T::U64],
        ("inc" | "dec", _) => &[T::U32],
        ("min" | "max", true) => &[T::U32, T::S32, T::U64, T::S64, T::F16, T::Bf16],
        _ => &[T::U32, T::S32],
    };
    // `.noftz` goes with the f16/bf16 additions, which need it
    let half_add = op == "add" && matches!(ty, T::F16 | T::Bf16);
    let noftz_ok = has(ins, M::Noftz) == half_add;
    if legal.contains(&ty) && noftz_ok {
        return;
    }
    let Some(w) = ins.modifiers.iter().find(|m| m.text == ty.suffix()) else {
        return;
    };
    let dst = if to_global {
        "to global memory"
    } else {
        "to shared::cluster memory"
    };
    let takes: Vec<String> = legal
        .iter()
        .map(|t| {
            if op == "add" && matches!(t, T::F16 | T::Bf16) {
                format!("`.noftz{}`", t.suffix())
            } else {
                format!("`{}`", t.suffix())
            }
        })
        .collect();
    let message = if !legal.contains(&ty) {
        format!(
            "`{}` cannot be combined with `.{op}` in `{}`",
            ty.suffix(),
            ins.full_opcode()
        )
    } else if half_add {
        format!(
            "`.{op}{}` needs `.noftz` in `{}`",
            ty.suffix(),
            ins.full_opcode()
        )
    } else {
        format!(
            "`.noftz` cannot be combined with `.{op}{}` in `{}`",
            ty.suffix(),
            ins.full_opcode()
        )
    };
    c.diags.push(
        Diagnostic::error(codes::MODIFIER_COMBINATION, message, w.loc.0)
            .with_label_message(format!("`.{op}` {dst} does not take this type"))
            .with_help(format!("`.{op}` {dst} takes {}", takes.join(", "))),
    );
}

/// `tensormap.replace`: the field's value type, the ordinal, the enumerated values.
fn replace(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let fields = [
        (M::GlobalAddress, true, false, 0),
        (M::Rank, false, false, 0),
        (M::BoxDim, false, true, 0),
        (M::GlobalDim, false, true, 0),
        (M::GlobalStride, true, true, 0),
        (M::ElementStride, false, true, 0),
        (M::Elemtype, false, false, 12),
        (M::InterleaveLayout, false, false, 2),
        (M::SwizzleMode, false, false, 3),
        (M::SwizzleAtomicity, false, false, 3),
        (M::FillMode, false, false, 1),
    ];
    let Some(&(field, wide, ord, mut max)) = fields.iter().find(|f| has(ins, f.0)) else {
        return;
    };
    let name = field.text();
    let Some(fw) = ins.modifiers.iter().find(|m| m.text == name) else {
        return;
    };
    let target = c.header.target.map(|t| t.number);
    let version = c.header.version;
    let below = |need: PtxVersion| version.filter(|&v| v < need);
    if field == M::SwizzleAtomicity {
        let feature = "tensormap.replace.swizzle_atomicity";
        let need = PtxVersion::new(8, 6);
        if let Some(have) = below(need) {
            let full = ins.full_opcode();
            let d = super::needs_version(&full, feature, need, have, fw.loc.0);
            c.diags.push(d);
        }
        if target.is_some_and(|n| n < 100) {
            let have = c.header.target.map(|t| t.to_string()).unwrap_or_default();
            let full = ins.full_opcode();
            let d = super::needs_target(&full, feature, "sm_100a", &have, fw.loc.0);
            c.diags.push(d);
            return;
        }
    }
    if field == M::Elemtype && target.is_some_and(|n| n >= 100) {
        max = 15; // the packed 4- and 6-bit types
    }
    let want = if wide {
        ScalarType::B64
    } else {
        ScalarType::B32
    };
    if let Some(&t) = types_of(ins).last() {
        if t != want {
            c.diags.push(
                Diagnostic::error(
                    codes::MODIFIER_COMBINATION,
                    format!(
                        "`{name}` cannot be combined with `{}` in `tensormap.replace`",
                        t.suffix()
                    ),
                    fw.loc.0,
                )
                .with_label_message(format!("`{name}` takes a {} value", want.suffix()))
                .with_help(format!("write `{}`", want.suffix())),
            );
            return;
        }
    }
    let n = if ord { 3 } else { 2 };
    let shape = if ord {
        "[addr], ord, new_val"
    } else {
        "[addr], new_val"
    };
    if !super::operands::arity(c, ins, n, n, shape) {
        return;
    }
    if max == 0 {
        if let Some(o) = ins.operands.get(n - 1) {
            super::operands::check_operand(c, ins, o, super::operands::Want::Val(want), false);
        }
    }
    let mut k = 1;
    if ord {
        let Some(o) = ins.operands.get(1) else {
            return;
        };
        match int_value(o) {
            Some(v) if v <= 4 => {}
            Some(v) => bad_value(
                c,
                ins,
                o,
                &format!("ordinal {v} is not in 0..=4"),
                "the ordinal names one of the 5 dimensions, 0..=4",
            ),
            None => bad_value(
                c,
                ins,
                o,
                "the ordinal must be an integer constant",
                "the ordinal names one of the 5 dimensions, 0..=4",
            ),
        }
        k = 2;
    }
    if max > 0 {
        let Some(o) = ins.operands.get(k) else {
            return;
        };
        let rule = format!("`{name}` takes one of the ISA's codes 0..={max}, as a constant");
        let need = PtxVersion::new(8, 7);
        match int_value(o) {
            Some(v) if v >= 13 && field == M::Elemtype && below(need).is_some() => {
                let have = below(need).unwrap_or(need);
                let feature = "tensormap.replace.elemtype with a value of 13 or more";
                let d = super::needs_version(&ins.full_opcode(), feature, need, have, o.loc().0);
                c.diags.push(d);
            }
            Some(v) if v <= max as u64 => {}
            Some(v) => bad_value(c, ins, o, &format!("{v} is not in 0..={max}"), &rule),
            None => bad_value(
                c,
                ins,
                o,
                "the new value must be an integer constant",
                &rule,
            ),
        }
    }
}
