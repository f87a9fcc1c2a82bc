//! The hand-written operand rules, for the instructions the table's roles mark `hand`
//! (`mov`, `ld`/`ldu`/`st`, the `.wide` arithmetic, `mad`/`fma`, `setp`, `cvt`, `cvta`, `bra`,
//! `call`, `atom`/`red`, `bar`/`barrier`, `shfl.sync`, `vote.sync`), and the operand checks
//! (`check_operand`, `arity`) the generic roles pass shares with them.

use super::{has, is_float_literal, is_int_literal, types_of, vec_width, Insn};
use crate::codes;
use crate::scope::{FnChecker, Resolved, SymbolKind};
use crate::types::{compatible, widened};
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{Modifier, Opcode, Opcode as O, RoleCheck, ScalarType, TypeKind};
use ptx_syntax::ast::{ExprKind, Operand, UnaryOp};

/// What an operand position wants.
#[derive(Clone, Copy)]
pub(crate) enum Want {
    /// A value of this type (register or immediate).
    Val(ScalarType),
    /// A destination register of this type.
    Dst(ScalarType),
    /// A predicate (possibly negated when `neg`).
    Pred { neg: bool },
    /// A predicate destination, optionally paired `p|q`.
    PredDst,
    /// Anything (not checked).
    Any,
}

/// The comparison operator of `setp`/`set` against the type it compares (the last type
/// modifier): bit types take `eq`/`ne`; signed types also `lt`, `le`, `gt`, `ge`; unsigned
/// types those and `lo`, `ls`, `hi`, `hs`; floating-point types the ordered six and the
/// unordered `equ`…`geu`, `num`, `nan` (as ptxas 13.5 accepts them).
fn check_compare(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) -> bool {
    use Modifier as M;
    const ORDERED: &[Modifier] = &[M::Eq, M::Ne, M::Lt, M::Le, M::Gt, M::Ge];
    const UNSIGNED: &[Modifier] = &[M::Lo, M::Ls, M::Hi, M::Hs];
    const UNORDERED: &[Modifier] = &[
        M::Equ,
        M::Neu,
        M::Ltu,
        M::Leu,
        M::Gtu,
        M::Geu,
        M::Num,
        M::Nan,
    ];
    let Some(t) = types_of(ins).last().copied() else {
        return true;
    };
    let mut present = [ORDERED, UNSIGNED, UNORDERED]
        .into_iter()
        .flatten()
        .copied()
        .filter(|&k| ins.has(k));
    let Some(first) = present.next() else {
        return true;
    };
    // the first comparison as written (the word is looked up to place the diagnostic)
    let found = if present.next().is_none() {
        modifier(ins, first).map(|w| (w, first))
    } else {
        ins.modifiers.iter().find_map(|m| {
            Modifier::parse(&m.text)
                .filter(|k| ORDERED.contains(k) || UNSIGNED.contains(k) || UNORDERED.contains(k))
                .map(|k| (m, k))
        })
    };
    let Some((m, op)) = found else {
        return true;
    };
    let cmp = m.text.as_str();
    let (ok, takes) = match t.kind() {
        TypeKind::Bit => (matches!(op, M::Eq | M::Ne), "`.eq` and `.ne`"),
        TypeKind::Signed => (ORDERED.contains(&op), "`.eq .ne .lt .le .gt .ge`"),
        TypeKind::Unsigned => (
            ORDERED.contains(&op) || UNSIGNED.contains(&op),
            "`.eq .ne .lt .le .gt .ge .lo .ls .hi .hs`",
        ),
        TypeKind::Float => (
            !UNSIGNED.contains(&op),
            "the ordered and unordered comparisons, not `.lo .ls .hi .hs`",
        ),
        TypeKind::Pred => (true, ""),
    };
    if ok {
        return true;
    }
    let help = if t.kind() == TypeKind::Bit {
        format!(
            "compare as signed (`.s{0}`) or unsigned (`.u{0}`) to order values",
            t.size_bits()
        )
    } else {
        format!("{t} comparisons are {takes}")
    };
    c.diags.push(
        Diagnostic::error(
            codes::COMPARE_TYPE,
            format!(
                "mismatch between instruction type and comparison: `{cmp}` does not compare {t} values"
            ),
            m.loc.0,
        )
        .with_label_message(format!("{t} takes {takes}"))
        .with_help(help),
    );
    false
}

pub(crate) fn check(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let op = ins.opcode.text.as_str();
    if matches!(ins.op, O::Setp | O::Set) && !check_compare(c, ins) {
        return;
    }
    // `.sat` belongs to `mad24.hi.s32` alone (ISA "mad24"; ptxas 13.5: "Illegal modifier '.sat'
    // for instruction 'mad24.lo'" and "… 'mul24.hi'")
    if matches!(ins.op, O::Mad24 | O::Mul24) {
        let hi_s32 = ins.op == O::Mad24
            && has(ins, Modifier::Hi)
            && ins.modifiers.iter().any(|m| m.text == ".s32");
        if let Some(m) = modifier(ins, Modifier::Sat).filter(|_| !hi_s32) {
            illegal_modifier(
                c,
                ins,
                m,
                "`.sat` applies only to `mad24.hi.s32`",
                "drop `.sat`",
            );
            return;
        }
    }
    let mods: Vec<&str> = ins.modifiers.iter().map(|m| m.text.as_str()).collect();
    // The table says how the operands are checked: by the generic pass from the roles, by the
    // hand rules below, or (named with a reason) not yet.
    match ptx_isa::roles_for(op, &mods) {
        Some(rule) => match rule.check {
            RoleCheck::Operands(ops) => return super::roles::check(c, ins, rule, ops),
            RoleCheck::Hand(_) => {}
            RoleCheck::Unchecked(_) => return,
        },
        None => return,
    }
    let tys = types_of(ins);
    let ty = tys.last().copied();
    use ScalarType as T;
    match ins.op {
        O::Add | O::Sub | O::Mul | O::Min | O::Max | O::Div | O::Addc | O::Subc => {
            if !arity(c, ins, 3, 3, "d, a, b") {
                return;
            }
            let Some(t) = need_type(c, ins, ty) else {
                return;
            };
            let d = if has(ins, Modifier::Wide) {
                widened(t).unwrap_or(t)
            } else {
                t
            };
            run(c, ins, &[Want::Dst(d), Want::Val(t), Want::Val(t)], false);
        }
        O::Mad | O::Fma | O::Madc => {
            if !arity(c, ins, 4, 4, "d, a, b, c") {
                return;
            }
            let Some(t) = need_type(c, ins, ty) else {
                return;
            };
            if ins.op == O::Mad && matches!(t, T::F32 | T::F64) && !check_mad_rounding(c, ins, t) {
                return;
            }
            let d = if has(ins, Modifier::Wide) {
                widened(t).unwrap_or(t)
            } else {
                t
            };
            run(
                c,
                ins,
                &[Want::Dst(d), Want::Val(t), Want::Val(t), Want::Val(d)],
                false,
            );
        }
        O::Setp => {
            if !arity(c, ins, 3, 4, "p[|q], a, b[, {!}c]") {
                return;
            }
            let Some(t) = need_type(c, ins, ty) else {
                return;
            };
            if !matches!(t, T::F32 | T::F16 | T::F16x2) {
                if let Some(m) = modifier(ins, Modifier::Ftz) {
                    illegal_modifier(
                        c,
                        ins,
                        m,
                        &format!(
                            "`.ftz` applies to `.f32` (and `.f16`, `.f16x2`) comparisons, not {t}"
                        ),
                        "drop `.ftz`",
                    );
                    return;
                }
            }
            run(
                c,
                ins,
                &[
                    Want::PredDst,
                    Want::Val(t),
                    Want::Val(t),
                    Want::Pred { neg: true },
                ],
                false,
            );
        }
        O::Mov => check_mov(c, ins, ty),
        O::Ld | O::Ldu => check_ld_st(c, ins, ty, true),
        O::St | O::StAsync | O::StBulk => check_ld_st(c, ins, ty, false),
        O::Cvt | O::CvtPack => check_cvt(c, ins, &tys),
        O::Cvta => {
            if !arity(c, ins, 2, 2, "d, a") {
                return;
            }
            if let Some(t) = ty {
                run(c, ins, &[Want::Dst(t), Want::Any], false);
            }
        }
        O::Bra => {
            if !arity(c, ins, 1, 1, "target") {
                return;
            }
            check_branch_target(c, &ins.operands[0]);
        }
        O::Call => super::call::check_call(c, ins),
        O::Atom | O::Red | O::RedAsync => check_atom(c, ins, ty, ins.op == O::Atom),
        O::Bar | O::BarWarpSync | O::Barrier | O::BarrierCluster => check_bar(c, ins),
        O::Shfl if has(ins, Modifier::Sync) => {
            if !arity(c, ins, 5, 5, "d[|p], a, b, c, membermask") {
                return;
            }
            run(
                c,
                ins,
                &[
                    Want::Dst(T::B32),
                    Want::Val(T::B32),
                    Want::Val(T::B32),
                    Want::Val(T::B32),
                    Want::Val(T::B32),
                ],
                false,
            );
        }
        O::Vote if has(ins, Modifier::Sync) => {
            if !arity(c, ins, 3, 3, "d, {!}a, membermask") {
                return;
            }
            let d = if has(ins, Modifier::Ballot) {
                Want::Dst(T::B32)
            } else {
                Want::PredDst
            };
            run(
                c,
                ins,
                &[d, Want::Pred { neg: true }, Want::Val(T::B32)],
                false,
            );
        }
        _ => {}
    }
}

/// `bar`/`barrier`: `a` (barrier) and `b` (thread count) are `.u32`; the reductions write a
/// `.u32` count or a predicate and read a predicate `{!}c`; `bar.warp.sync` takes a 32-bit
/// member mask; `barrier.cluster` takes no operand.
fn check_bar(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    use ScalarType as T;
    let n = ins.operands.len();
    if has(ins, Modifier::Cluster) {
        arity(c, ins, 0, 0, "");
    } else if has(ins, Modifier::Warp) {
        if arity(c, ins, 1, 1, "membermask") {
            run(c, ins, &[Want::Val(T::B32)], false);
        }
    } else if has(ins, Modifier::Red) {
        let pred = has(ins, Modifier::Pred);
        if !arity(
            c,
            ins,
            3,
            4,
            if pred {
                "p, a[, b], {!}c"
            } else {
                "d, a[, b], {!}c"
            },
        ) {
            return;
        }
        let d = if pred {
            Want::PredDst
        } else {
            Want::Dst(T::U32)
        };
        let c_pred = Want::Pred { neg: true };
        if n == 3 {
            run(c, ins, &[d, Want::Val(T::U32), c_pred], false);
        } else {
            run(
                c,
                ins,
                &[d, Want::Val(T::U32), Want::Val(T::U32), c_pred],
                false,
            );
        }
    } else if has(ins, Modifier::Arrive) {
        if arity(c, ins, 2, 2, "a, b") {
            run(c, ins, &[Want::Val(T::U32), Want::Val(T::U32)], false);
        }
    } else if n > 0 && arity(c, ins, 1, 2, "a[, b]") {
        run(c, ins, &[Want::Val(T::U32), Want::Val(T::U32)], false);
    }
}

fn instr_span(ins: &Insn<'_>) -> Span {
    ins.opcode
        .loc
        .0
        .to(ins.modifiers.last().map_or(ins.opcode.loc.0, |m| m.loc.0))
}

/// Checks the operand count; returns whether it is within `min..=max`.
pub(crate) fn arity(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    min: usize,
    max: usize,
    shape: &str,
) -> bool {
    let n = ins.operands.len();
    if (min..=max).contains(&n) {
        return true;
    }
    let full = ins.full_opcode();
    let want = if min == max {
        format!("{min}")
    } else {
        format!("{min} to {max}")
    };
    let span = if n > max {
        ins.operands[max].loc().0
    } else {
        ins.operands.last().map_or(instr_span(ins), |o| o.loc().0)
    };
    let plural = if min == max && min == 1 { "" } else { "s" };
    c.diags.push(
        Diagnostic::error(
            codes::OPERAND_COUNT,
            format!("`{full}` takes {want} operand{plural}, found {n}"),
            span,
        )
        .with_label_message(if n > max {
            "unexpected operand"
        } else {
            "operands end here"
        })
        .with_help(if shape.is_empty() {
            format!("write `{full};` without operands")
        } else {
            format!("write `{full} {shape};`")
        }),
    );
    false
}

fn need_type(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    ty: Option<ScalarType>,
) -> Option<ScalarType> {
    if ty.is_none() {
        let full = ins.full_opcode();
        c.diags.push(
            Diagnostic::error(
                codes::MISSING_TYPE,
                format!("`{full}` has no type modifier"),
                instr_span(ins),
            )
            .with_label_message("the operand type is missing")
            .with_help(format!("add the type, e.g. `{full}.s32` or `{full}.f32`")),
        );
    }
    ty
}

fn run(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, wants: &[Want], relaxed: bool) {
    for (o, w) in ins.operands.iter().zip(wants) {
        check_operand(c, ins, o, *w, relaxed);
    }
}

/// The register type of a plain name operand, if it is a declared register.
fn reg_type(c: &FnChecker<'_, '_>, name: &str) -> Option<(ScalarType, Span)> {
    match c.resolve(name) {
        Resolved::Symbol(s) if s.kind == SymbolKind::Register => s.ty.map(|t| (t, s.span)),
        _ => None,
    }
}

pub(crate) fn check_operand(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    o: &Operand,
    w: Want,
    relaxed: bool,
) {
    match (o, w) {
        (Operand::Pair(a, b), Want::PredDst) => {
            check_operand(c, ins, a, Want::PredDst, relaxed);
            check_operand(c, ins, b, Want::PredDst, relaxed);
        }
        (Operand::Pair(a, b), Want::Dst(t)) if ins.op == Opcode::Shfl => {
            check_operand(c, ins, a, Want::Dst(t), relaxed);
            check_operand(c, ins, b, Want::PredDst, relaxed);
        }
        (Operand::Expr(e), _) => {
            let e = match (&e.kind, w) {
                (ExprKind::Unary(UnaryOp::Not, inner), Want::Pred { neg: true }) => inner.as_ref(),
                _ => e,
            };
            if let Some(name) = special_name(c, e) {
                check_special(c, ins, e.loc.0, &name, w);
                return;
            }
            match &e.kind {
                ExprKind::Symbol(name) => {
                    let Some((rt, decl)) = reg_type(c, name) else {
                        not_a_register(c, ins, e.loc.0, name, w);
                        return;
                    };
                    match w {
                        Want::Val(t) | Want::Dst(t) => {
                            if compatible(t, rt, relaxed) {
                                return;
                            }
                            type_mismatch(c, ins, e.loc.0, name, rt, t, decl);
                        }
                        Want::Pred { .. } | Want::PredDst => {
                            if rt != ScalarType::Pred {
                                c.diags.push(
                                    Diagnostic::error(
                                        codes::PREDICATE_MISUSE,
                                        format!(
                                            "`{}` needs a predicate here, but `{name}` is {rt}",
                                            ins.full_opcode()
                                        ),
                                        e.loc.0,
                                    )
                                    .with_label_message(format!("this register is {rt}"))
                                    .with_secondary(decl, "declared here")
                                    .with_help("use a `.pred` register (compute one with `setp`)"),
                                );
                            }
                        }
                        Want::Any => {}
                    }
                }
                _ if is_int_literal(e) => match w {
                    Want::Val(t) if t.kind() == TypeKind::Float => {
                        c.diags.push(
                            Diagnostic::error(
                                codes::IMMEDIATE_KIND,
                                format!(
                                    "integer literal used as a {t} operand of `{}`",
                                    ins.full_opcode()
                                ),
                                e.loc.0,
                            )
                            .with_label_message(
                                "ptxas does not convert integer literals to floating point",
                            )
                            .with_help(float_help(t, e)),
                        );
                    }
                    Want::Dst(_) | Want::PredDst => immediate_dest(c, ins, e.loc.0),
                    _ => {}
                },
                _ if is_float_literal(e) => match w {
                    Want::Val(t) if t.is_integer() || t == ScalarType::Pred => {
                        c.diags.push(
                            Diagnostic::error(
                                codes::IMMEDIATE_KIND,
                                format!("floating-point literal used as a {t} operand of `{}`", ins.full_opcode()),
                                e.loc.0,
                            )
                            .with_label_message("an integer is required here")
                            .with_help(format!("write an integer constant, or use a `.b{}` instruction type to move raw bits", t.size_bits())),
                        );
                    }
                    Want::Dst(_) | Want::PredDst => immediate_dest(c, ins, e.loc.0),
                    _ => {}
                },
                _ => {}
            }
        }
        (Operand::Vector(..), Want::Val(_) | Want::Dst(_))
            if !(matches!(ins.op, Opcode::Mov | Opcode::Ld | Opcode::Ldu)
                || super::is_st(ins.op)) =>
        {
            c.diags.push(
                Diagnostic::error(
                    codes::VECTOR_WIDTH,
                    format!(
                        "`{}` takes a scalar operand here, not a vector",
                        ins.full_opcode()
                    ),
                    o.loc().0,
                )
                .with_help("pass a single register"),
            );
        }
        (Operand::Address(_), Want::Val(_) | Want::Dst(_) | Want::Pred { .. } | Want::PredDst) => {
            c.diags.push(
                Diagnostic::error(
                    codes::OPERAND_SHAPE,
                    format!(
                        "`{}` does not take a memory address here",
                        ins.full_opcode()
                    ),
                    o.loc().0,
                )
                .with_help("load the value into a register with `ld` first"),
            );
        }
        _ => {}
    }
}

/// A variable or parameter named where a register value goes (`add.u32 %r1, p, 1;` with a
/// kernel parameter `p`): only `mov` (and `cvta`) take a variable's address that way.
fn not_a_register(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, span: Span, name: &str, w: Want) {
    if ins.op == Opcode::Mov || matches!(w, Want::Any) {
        return;
    }
    let (what, decl, ty) = match c.resolve(name) {
        // `.reg` parameters of a `.func` are registers
        Resolved::Symbol(s) if s.space == Some(ptx_isa::StateSpace::Reg) => return,
        Resolved::Symbol(s) => match s.kind {
            SymbolKind::Param | SymbolKind::ReturnParam => {
                ("parameter", s.span, s.type_name.clone())
            }
            SymbolKind::Variable => ("variable", s.span, s.type_name.clone()),
            _ => return,
        },
        _ => return,
    };
    let full = ins.full_opcode();
    let help = if what == "parameter" {
        format!("load it first: `ld.param{ty} %r, [{name}];`, then use the register")
    } else {
        format!("load its value with `ld{ty}`, or take its address with `mov.u64 %rd, {name};`")
    };
    c.diags.push(
        Diagnostic::error(
            codes::WRONG_KIND,
            format!("this operand of `{full}` must be a register, but `{name}` is a {what}"),
            span,
        )
        .with_label_message(format!("a {what}, not a register"))
        .with_secondary(decl, "declared here")
        .with_help(help),
    );
}

fn float_help(t: ScalarType, e: &ptx_syntax::ast::Expr) -> String {
    let v = match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        _ => None,
    };
    match (t, v) {
        (ScalarType::F32, Some(v)) => format!(
            "write `{v}.0` or the exact bits `0f{:08X}`",
            (v as f32).to_bits()
        ),
        (ScalarType::F64, Some(v)) => format!(
            "write `{v}.0` or the exact bits `0d{:016X}`",
            (v as f64).to_bits()
        ),
        _ => "write a floating-point literal (`1.0`, `0f3F800000`)".to_string(),
    }
}

fn immediate_dest(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, span: Span) {
    c.diags.push(
        Diagnostic::error(
            codes::OPERAND_SHAPE,
            format!(
                "the destination of `{}` must be a register, not a constant",
                ins.full_opcode()
            ),
            span,
        )
        .with_help("write a register (or `_` where the result is not needed)"),
    );
}

fn type_mismatch(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    span: Span,
    name: &str,
    rt: ScalarType,
    t: ScalarType,
    decl: Span,
) {
    let full = ins.full_opcode();
    if rt == ScalarType::Pred {
        c.diags.push(
            Diagnostic::error(
                codes::PREDICATE_MISUSE,
                format!("predicate register `{name}` used as a {t} operand of `{full}`"),
                span,
            )
            .with_label_message("this register is .pred")
            .with_secondary(decl, "declared here")
            .with_help("convert first: `selp.u32 %r, 1, 0, %p;` gives 1 or 0"),
        );
        return;
    }
    let rule = match t.kind() {
        TypeKind::Bit => format!("any non-predicate register of {} bits", t.size_bits()),
        TypeKind::Unsigned | TypeKind::Signed => {
            format!(".u{0}, .s{0} or .b{0} registers", t.size_bits())
        }
        TypeKind::Float => format!("{t} or .b{} registers", t.size_bits()),
        TypeKind::Pred => ".pred registers".to_string(),
    };
    c.diags.push(
        Diagnostic::error(
            codes::OPERAND_TYPE,
            format!("operand type {rt} does not match instruction type {t}"),
            span,
        )
        .with_label_message(format!("this register is {rt}"))
        .with_secondary(decl, "declared here")
        .with_help(format!(
            "`{full}` accepts {rule}; convert with `cvt` or use a register of a matching type"
        )),
    );
}

fn check_mov(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, ty: Option<ScalarType>) {
    if !arity(c, ins, 2, 2, "d, a") {
        return;
    }
    let Some(t) = need_type(c, ins, ty) else {
        return;
    };
    for (i, o) in ins.operands.iter().enumerate() {
        match o {
            Operand::Vector(items, loc) => {
                // pack/unpack: the elements split the type's bits evenly.
                let n = items.len() as u32;
                if n == 0 || t.size_bits() % n != 0 || t.kind() == TypeKind::Pred {
                    c.diags.push(
                        Diagnostic::error(
                            codes::VECTOR_WIDTH,
                            format!("`{}` cannot split {} bits into {n} elements", ins.full_opcode(), t.size_bits()),
                            loc.0,
                        )
                        .with_help("pack or unpack 2 or 4 registers that together have the instruction's size"),
                    );
                    continue;
                }
                let part = t.size_bits() / n;
                if let Some(et) = ScalarType::from_suffix(&format!(".b{part}")) {
                    for it in items {
                        check_operand(
                            c,
                            ins,
                            it,
                            if i == 0 { Want::Dst(et) } else { Want::Val(et) },
                            false,
                        );
                    }
                }
            }
            _ => check_operand(
                c,
                ins,
                o,
                if i == 0 { Want::Dst(t) } else { Want::Val(t) },
                false,
            ),
        }
    }
}

fn check_ld_st(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, ty: Option<ScalarType>, is_ld: bool) {
    let full = ins.full_opcode();
    if !is_ld && (has(ins, Modifier::Const) || has(ins, Modifier::Tex)) {
        let m = ins.modifiers.iter().find(|m| {
            matches!(
                Modifier::parse(&m.text),
                Some(Modifier::Const | Modifier::Tex)
            )
        });
        let span = m.map_or(instr_span(ins), |m| m.loc.0);
        c.diags.push(
            Diagnostic::error(
                codes::STATE_SPACE,
                format!(
                    "`st` cannot write to the read-only {} state space",
                    m.map_or("", |m| m.text.as_str())
                ),
                span,
            )
            .with_label_message("read-only state space")
            .with_help("store to `.global`, `.shared`, `.local` or `.param` memory instead"),
        );
        return;
    }
    // `st.async` to an mbarrier's CTA takes `[mbar]`; the `.release` (and `.mmio`) forms of PTX
    // 8.7+ do not
    let with_mbar =
        has(ins, Modifier::Async) && !has(ins, Modifier::Release) && !has(ins, Modifier::Mmio);
    let shape = match (is_ld, with_mbar) {
        (true, _) => "d, [a]",
        (false, false) => "[a], b",
        (false, true) => "[a], b, [mbar]",
    };
    if !cache_arity(c, ins, shape) {
        return;
    }
    let Some(t) = need_type(c, ins, ty) else {
        return;
    };
    let (addr, val) = if is_ld {
        (&ins.operands[1], &ins.operands[0])
    } else {
        (&ins.operands[0], &ins.operands[1])
    };
    if !matches!(addr, Operand::Address(_)) {
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_SHAPE,
                format!("`{full}` needs a memory address in brackets"),
                addr.loc().0,
            )
            .with_label_message("not an address")
            .with_help("write the address in brackets, e.g. `[%rd1]`, `[%rd1+8]` or `[var]`"),
        );
    }
    let w = if is_ld { Want::Dst(t) } else { Want::Val(t) };
    match (vec_width(ins), val) {
        (Some(vn), Operand::Vector(items, loc)) => {
            if items.len() != vn {
                c.diags.push(
                    Diagnostic::error(
                        codes::VECTOR_WIDTH,
                        format!("`{full}` needs {vn} vector elements, found {}", items.len()),
                        loc.0,
                    )
                    .with_label_message(format!("{} elements", items.len()))
                    .with_help(format!(
                        "write {vn} registers in the braces, or use `.v{}`",
                        items.len()
                    )),
                );
            }
            for it in items {
                let before = c.diags.len();
                check_operand(c, ins, it, w, true);
                // (looked at only when the element was refused, so taken vectors pay nothing)
                if c.diags.len() == before + 1 && int_element_of_float_vector(c, it, t) {
                    c.diags.pop();
                }
            }
        }
        (Some(vn), Operand::Expr(e)) if matches!(&e.kind, ExprKind::Symbol(n) if vector_register(c, n) == Some(vn)) =>
            {}
        (Some(vn), other) => c.diags.push(
            Diagnostic::error(
                codes::VECTOR_WIDTH,
                format!("`{full}` needs a vector of {vn} registers"),
                other.loc().0,
            )
            .with_label_message("a scalar operand")
            .with_help(format!(
                "write `{{a, b{}}}`, or drop `.v{vn}`",
                if vn > 2 { ", …" } else { "" }
            )),
        ),
        (None, Operand::Vector(items, _)) if items.len() == 1 => {
            check_operand(c, ins, &items[0], w, true)
        }
        (None, Operand::Vector(items, loc)) => c.diags.push(
            Diagnostic::error(
                codes::VECTOR_WIDTH,
                format!(
                    "`{full}` is scalar but the operand is a vector of {}",
                    items.len()
                ),
                loc.0,
            )
            .with_help(format!("add `.v{}` before the type", items.len())),
        ),
        (None, o) => check_operand(c, ins, o, w, true),
    }
}

/// Whether `it`, an element of an `ld`/`st` vector of instruction type `t`, is a signed or
/// unsigned register of `t`'s size where `t` is `.f32` or `.f64`: ptxas 13.5 takes
/// `ld.global.v2.f32 {%r1, %r2}` with `.u32`/`.s32` registers, although it refuses the scalar
/// `ld.global.f32 %r1` (`tests/check/widths`).
fn int_element_of_float_vector(c: &FnChecker<'_, '_>, it: &Operand, t: ScalarType) -> bool {
    let Operand::Expr(e) = it else {
        return false;
    };
    let ExprKind::Symbol(name) = &e.kind else {
        return false;
    };
    matches!(t, ScalarType::F32 | ScalarType::F64)
        && reg_type(c, name).is_some_and(|(rt, _)| {
            matches!(rt.kind(), TypeKind::Signed | TypeKind::Unsigned)
                && rt.size_bits() == t.size_bits()
        })
}

/// The width of a vector register (`.reg .v4 .f32 %v`), if `name` is one.
fn vector_register(c: &FnChecker<'_, '_>, name: &str) -> Option<usize> {
    match c.resolve(name) {
        Resolved::Symbol(s) if s.vector > 1 => Some(s.vector as usize),
        _ => None,
    }
}

fn check_cvt(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, tys: &[ScalarType]) {
    if has(ins, Modifier::Pack) || tys.len() != 2 {
        return;
    }
    let (dt, at) = (tys[0], tys[1]);
    if !check_cvt_modifiers(c, ins, dt, at) {
        return;
    }
    let full = ins.full_opcode();
    let irnd = [Modifier::Rni, Modifier::Rzi, Modifier::Rmi, Modifier::Rpi]
        .iter()
        .any(|&m| has(ins, m));
    let frnd = [
        Modifier::Rn,
        Modifier::Rz,
        Modifier::Rm,
        Modifier::Rp,
        Modifier::Rna,
        Modifier::Rs,
    ]
    .iter()
    .any(|&m| has(ins, m));
    let is_float = |t: ScalarType| t.kind() == TypeKind::Float;
    let need = if is_float(at) && dt.is_integer() {
        (!irnd).then_some((
            "an integer rounding modifier",
            ".rni, .rzi, .rmi or .rpi",
            ".rzi",
        ))
    } else if (at.is_integer() && is_float(dt))
        || (is_float(at) && is_float(dt) && dt.size_bits() < at.size_bits())
    {
        (!frnd).then_some((
            "a floating-point rounding modifier",
            ".rn, .rz, .rm or .rp",
            ".rn",
        ))
    } else {
        None
    };
    if let Some((what, list, example)) = need {
        c.diags.push(
            Diagnostic::error(
                codes::CVT_ROUNDING,
                format!(
                    "rounding modifier required for `{full}`: converting {at} to {dt} needs {what}"
                ),
                instr_span(ins),
            )
            .with_label_message("no rounding modifier")
            .with_help(format!("add one of {list}, e.g. `cvt{example}{dt}{at}`")),
        );
    }
    if ins.operands.len() == 2 {
        check_operand(c, ins, &ins.operands[0], Want::Dst(dt), true);
        check_operand(c, ins, &ins.operands[1], Want::Val(at), true);
    } else if dt.lanes() == 2 {
        arity(c, ins, 2, 3, "d, a[, b]");
    } else {
        arity(c, ins, 2, 2, "d, a");
    }
}

fn check_branch_target(c: &mut FnChecker<'_, '_>, o: &Operand) {
    let Operand::Expr(e) = o else {
        c.diags.push(
            Diagnostic::error(
                codes::BRANCH_TARGET,
                "branch target must be a label",
                o.loc().0,
            )
            .with_help("write `bra LABEL;` with a label of this function"),
        );
        return;
    };
    let ExprKind::Symbol(name) = &e.kind else {
        c.diags.push(
            Diagnostic::error(
                codes::BRANCH_TARGET,
                "branch target must be a label",
                e.loc.0,
            )
            .with_help("write `bra LABEL;` with a label of this function"),
        );
        return;
    };
    if let Resolved::Symbol(s) = c.resolve(name) {
        c.diags.push(
            Diagnostic::error(codes::BRANCH_TARGET, format!("branch target `{name}` is not a label"), e.loc.0)
                .with_secondary(s.span, "declared here as something else")
                .with_help("`bra` jumps to a label of this function; use `brx.idx` with `.branchtargets` for computed jumps"),
        );
    }
}

fn check_atom(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, ty: Option<ScalarType>, is_atom: bool) {
    for bad in [Modifier::Const, Modifier::Local, Modifier::Param] {
        if let Some(m) = modifier(ins, bad) {
            c.diags.push(
                Diagnostic::error(
                    codes::STATE_SPACE,
                    format!(
                        "`{}` cannot operate on the {bad} state space",
                        ins.opcode.text
                    ),
                    m.loc.0,
                )
                .with_help(
                    "atomics operate on `.global` or `.shared` memory (or generic addresses)",
                ),
            );
            return;
        }
    }
    // ptxas also takes a fourth operand (no cache hint) for `.and`, `.or`, `.xor` and `.exch`.
    let four = has(ins, Modifier::Cas)
        || (ins.operands.len() == 4
            && !has(ins, Modifier::L2CacheHint)
            && [Modifier::And, Modifier::Or, Modifier::Xor, Modifier::Exch]
                .iter()
                .any(|&m| has(ins, m)));
    let shape = match (is_atom, four, has(ins, Modifier::Async)) {
        (true, true, _) => "d, [a], b, c",
        (true, false, _) => "d, [a], b",
        (false, _, false) => "[a], b",
        (false, _, true) => "[a], b, [mbar]",
    };
    if !cache_arity(c, ins, shape) {
        return;
    }
    if vec_width(ins).is_some() {
        return;
    }
    let Some(t) = ty else { return };
    if !has(ins, Modifier::Async) && !atom_type_allowed(c, ins, t) {
        return;
    }
    if is_atom {
        let cas = has(ins, Modifier::Cas);
        run(
            c,
            ins,
            &[
                Want::Dst(t),
                Want::Any,
                Want::Val(t),
                if cas { Want::Val(t) } else { Want::Any },
            ],
            false,
        );
    } else {
        run(c, ins, &[Want::Any, Want::Val(t)], false);
    }
}

/// The types each operation of a scalar `atom`/`red` takes, as ptxas 13.5 accepts them (probed
/// for every operation and type on sm_90; `atom.add.s64`, `atom.and.u32`, `atom.inc.s32` and
/// `atom.min.f32` are refused with "Operation .op requires … type"). Reports a refused pair and
/// returns false.
fn atom_type_allowed(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, t: ScalarType) -> bool {
    use ScalarType::*;
    let (op, allowed): (Modifier, &[ScalarType]) = if has(ins, Modifier::And) {
        (Modifier::And, &[B32, B64])
    } else if has(ins, Modifier::Or) {
        (Modifier::Or, &[B32, B64])
    } else if has(ins, Modifier::Xor) {
        (Modifier::Xor, &[B32, B64])
    } else if has(ins, Modifier::Exch) {
        (Modifier::Exch, &[B32, B64, B128])
    } else if has(ins, Modifier::Cas) {
        (Modifier::Cas, &[B16, B32, B64, B128])
    } else if has(ins, Modifier::Add) {
        (
            Modifier::Add,
            &[U32, S32, U64, F64, F16, F16x2, F32, Bf16, Bf16x2],
        )
    } else if has(ins, Modifier::Inc) {
        (Modifier::Inc, &[U32])
    } else if has(ins, Modifier::Dec) {
        (Modifier::Dec, &[U32])
    } else if has(ins, Modifier::Min) {
        (
            Modifier::Min,
            &[U32, S32, U64, S64, F16, F16x2, Bf16, Bf16x2],
        )
    } else if has(ins, Modifier::Max) {
        (
            Modifier::Max,
            &[U32, S32, U64, S64, F16, F16x2, Bf16, Bf16x2],
        )
    } else {
        return true;
    };
    if allowed.contains(&t) {
        return true;
    }
    let names: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
    let at = modifier(ins, op).map_or_else(|| instr_span(ins), |w| w.loc.0);
    c.diags.push(
        Diagnostic::error(
            codes::MODIFIER_COMBINATION,
            format!("`{}` does not take the type {t}", ins.full_opcode()),
            at,
        )
        .with_label_message(format!("{} requires {}", op.text(), names.join(" or ")))
        .with_help(format!(
            "use one of {} (ptxas refuses the others)",
            names.join(", ")
        )),
    );
    false
}

/// The modifier word `m` of the instruction, if written.
/// The word of modifier `m` as the instruction writes it, if it has `m`.
fn modifier<'i>(ins: &'i Insn<'_>, m: Modifier) -> Option<&'i ptx_syntax::ast::Word> {
    if !ins.has(m) {
        return None;
    }
    ins.modifiers.iter().find(|w| w.text == m.text())
}

/// Reports a modifier that exists for the instruction but not with its types.
fn illegal_modifier(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    m: &ptx_syntax::ast::Word,
    why: &str,
    help: &str,
) {
    c.diags.push(
        Diagnostic::error(
            codes::MODIFIER_COMBINATION,
            format!("`{}` is not allowed in `{}`", m.text, ins.full_opcode()),
            m.loc.0,
        )
        .with_label_message(why.to_string())
        .with_help(help.to_string()),
    );
}

/// `mad.f32` needs a rounding modifier from sm_20 on (the form without one is sm_1x only), and
/// `mad.f64` always does.
fn check_mad_rounding(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, t: ScalarType) -> bool {
    if [Modifier::Rn, Modifier::Rz, Modifier::Rm, Modifier::Rp]
        .iter()
        .any(|&m| has(ins, m))
    {
        return true;
    }
    let old_target = c.header.target.is_some_and(|tg| tg.number < 20);
    if t == ScalarType::F32 && (old_target || c.header.target.is_none()) {
        return true;
    }
    let full = ins.full_opcode();
    c.diags.push(
        Diagnostic::error(
            codes::CVT_ROUNDING,
            format!("rounding modifier required for `{full}`"),
            instr_span(ins),
        )
        .with_label_message(if t == ScalarType::F32 {
            "`mad.f32` without rounding is an sm_1x form"
        } else {
            "`mad.f64` always takes a rounding modifier"
        })
        .with_help(format!(
            "add one of .rn, .rz, .rm or .rp, e.g. `mad.rn{t}` (the same as `fma.rn{t}`)"
        )),
    );
    false
}

/// The rounding and `.ftz` rules of `cvt` between integers, `.f16`, `.f32` and `.f64`: integer
/// to integer takes no rounding; float to integer an integer rounding (`.rni`…) and integer to
/// float a float rounding (`.rn`…), not the other kind; narrowing float conversions take a
/// float rounding, same-size ones only an integer rounding, widening ones none; `.ftz` needs an
/// `.f32` source or destination. Returns whether the modifiers are legal.
fn check_cvt_modifiers(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    dt: ScalarType,
    at: ScalarType,
) -> bool {
    use ScalarType as T;
    let plain = |t: ScalarType| t.is_integer() || matches!(t, T::F16 | T::F32 | T::F64);
    if !plain(dt) || !plain(at) {
        return true;
    }
    // `.sat` between integer types where every source value fits the destination: ptxas 13.5
    // refuses it ("Illegal modifier '.sat'"): cvt.sat.u32.u16, cvt.sat.s32.u16, cvt.sat.s8.s8
    if dt.is_integer() && at.is_integer() {
        let (ds, as_) = (dt.kind() == TypeKind::Signed, at.kind() == TypeKind::Signed);
        let (db, ab) = (dt.size_bits(), at.size_bits());
        let fits = (ds == as_ && db >= ab) || (ds && !as_ && db > ab);
        if let Some(w) = fits.then(|| modifier(ins, Modifier::Sat)).flatten() {
            illegal_modifier(
                c,
                ins,
                w,
                &format!("every {at} value fits {dt}: there is nothing to saturate"),
                "drop `.sat`",
            );
            return false;
        }
    }
    let is_f = |t: ScalarType| t.kind() == TypeKind::Float;
    let (int_ok, fp_ok, kind) = match (is_f(at), is_f(dt)) {
        (false, false) => (false, false, "integer-to-integer conversions take none"),
        (true, false) => (true, false, "float-to-integer conversions take .rni, .rzi, .rmi or .rpi"),
        (false, true) => (false, true, "integer-to-float conversions take .rn, .rz, .rm or .rp"),
        (true, true) if dt.size_bits() < at.size_bits() => {
            (false, true, "narrowing float conversions take .rn, .rz, .rm or .rp")
        }
        (true, true) if dt.size_bits() == at.size_bits() => (
            true,
            false,
            "same-size float conversions take only .rni, .rzi, .rmi or .rpi (round to an integral value)",
        ),
        (true, true) => (false, false, "widening float conversions are exact and take none"),
    };
    use Modifier as M;
    const ROUNDINGS: &[Modifier] = &[
        M::Rni,
        M::Rzi,
        M::Rmi,
        M::Rpi,
        M::Rn,
        M::Rz,
        M::Rm,
        M::Rp,
        M::Ftz,
    ];
    if !ROUNDINGS.iter().any(|&m| ins.has(m)) {
        return true;
    }
    for w in &ins.modifiers {
        let Some(k) = Modifier::parse(&w.text) else {
            continue;
        };
        let bad = match k {
            M::Rni | M::Rzi | M::Rmi | M::Rpi => !int_ok,
            M::Rn | M::Rz | M::Rm | M::Rp => !fp_ok,
            M::Ftz => dt != T::F32 && at != T::F32,
            _ => false,
        };
        if bad {
            let (why, help) = if k == M::Ftz {
                (
                    "`.ftz` applies when the source or the destination is `.f32`".to_string(),
                    "drop `.ftz`".to_string(),
                )
            } else {
                (
                    format!("rounding {} is illegal here: {kind}", w.text),
                    format!(
                        "drop `{}` or use the rounding this conversion takes",
                        w.text
                    ),
                )
            };
            illegal_modifier(c, ins, w, &why, &help);
            return false;
        }
    }
    true
}

/// The name of the special register `e` reads (`%tid.x`, `%clock`), if it reads one.
fn special_name(c: &FnChecker<'_, '_>, e: &ptx_syntax::ast::Expr) -> Option<String> {
    let name = match &e.kind {
        ExprKind::Symbol(n) if n.starts_with('%') => n.to_string(),
        ExprKind::Select(inner, comp) => match &inner.kind {
            ExprKind::Symbol(n) if n.starts_with('%') => format!("{n}{comp}"),
            _ => return None,
        },
        _ => return None,
    };
    matches!(c.resolve(&name), Resolved::Special).then_some(name)
}

/// Special registers are read only by `mov` (and `cvt`): into a register of their size (the
/// legacy narrower reads aside), and one component at a time.
fn check_special(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, span: Span, name: &str, w: Want) {
    if !matches!(w, Want::Val(_) | Want::Pred { .. })
        || matches!(ins.op, Opcode::Cvt | Opcode::CvtPack)
    {
        return;
    }
    let full = ins.full_opcode();
    if ins.op != Opcode::Mov {
        let t = match w {
            Want::Val(t) => t.suffix(),
            _ => ".u32",
        };
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_SHAPE,
                format!("`{full}` cannot read the special register `{name}`"),
                span,
            )
            .with_label_message("special registers are operands of `mov` and `cvt` only")
            .with_help(format!(
                "read it into a register first: `mov{t} %r, {name};`, then use `%r`"
            )),
        );
        return;
    }
    let Want::Val(t) = w else { return };
    let stem = name.split('.').next().unwrap_or(name);
    let Some(sreg) = ptx_isa::special_register(stem) else {
        return;
    };
    if !sreg.components.is_empty() && !name.contains('.') {
        c.diags.push(
            Diagnostic::error(
                codes::VECTOR_WIDTH,
                format!("`{name}` is a vector register; `{full}` reads one component"),
                span,
            )
            .with_help(format!(
                "read a component: `{name}.x`, `{name}.y` or `{name}.z`"
            )),
        );
        return;
    }
    let st = sreg.ty;
    // Reads narrower than the register that ptxas still takes from older PTX: 16-bit thread
    // and block indices, and the 32-bit (and 16-bit) `%gridid` of PTX before 3.0.
    let legacy = match stem {
        "%tid" | "%ntid" | "%ctaid" | "%nctaid" => t.size_bits() == 16,
        "%gridid" => matches!(t.size_bits(), 16 | 32),
        _ => false,
    };
    let ok = if st == ScalarType::Pred || t == ScalarType::Pred {
        st == t
    } else {
        t.kind() != TypeKind::Float && (t.size_bits() == st.size_bits() || legacy)
    };
    if ok {
        return;
    }
    c.diags.push(
        Diagnostic::error(
            codes::OPERAND_TYPE,
            format!("special register `{name}` is {st}; `{full}` cannot read it"),
            span,
        )
        .with_label_message(format!("a {}-bit special register", st.size_bits()))
        .with_help(if st == ScalarType::Pred {
            "read it with `mov.pred`".to_string()
        } else {
            format!(
                "read it with `mov{st}` (or `mov.b{}`), then convert with `cvt` if another type is needed",
                st.size_bits()
            )
        }),
    );
}

/// The operand count of a memory instruction whose operands are `shape`, plus the 64-bit
/// cache-policy operand that goes with `.L2::cache_hint` (both or neither).
fn cache_arity(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, shape: &str) -> bool {
    let base = shape.split(", ").count();
    let hint = has(ins, Modifier::L2CacheHint);
    let want = base + usize::from(hint);
    let n = ins.operands.len();
    if n == want {
        return true;
    }
    let full = ins.full_opcode();
    if !hint && n == base + 1 {
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_COUNT,
                format!("`{full}` has a cache-policy operand but no `.L2::cache_hint`"),
                ins.operands[base].loc().0,
            )
            .with_label_message("a cache policy is only taken with `.L2::cache_hint`")
            .with_help(format!(
                "add `.L2::cache_hint` before the type, or drop the operand: `{full} {shape};`"
            )),
        );
        return false;
    }
    if hint && n == base {
        let hint_span = modifier(ins, Modifier::L2CacheHint).map_or(instr_span(ins), |m| m.loc.0);
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_COUNT,
                format!("`{full}` has `.L2::cache_hint` but no cache-policy operand"),
                hint_span,
            )
            .with_label_message("`.L2::cache_hint` needs a 64-bit cache-policy operand")
            .with_help(format!(
                "add the policy (made by `createpolicy`) as the last operand: `{full} {shape}, policy;`, or drop `.L2::cache_hint`"
            )),
        );
        return false;
    }
    let shape = if hint {
        format!("{shape}, cache-policy")
    } else {
        shape.to_string()
    };
    arity(c, ins, want, want, &shape)
}
