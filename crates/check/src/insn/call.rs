//! `call`: the callee, then the result and argument lists against the callee's declaration —
//! for an indirect call, against its `.callprototype` or every function of its `.calltargets`
//! list (a `.global`/`.const` table of function addresses may also stand for the list).
//!
//! The rules are those ptxas applies (checked against it on small modules): the counts must
//! match; a `.param` variable passed for a scalar parameter must have a compatible type under
//! the ISA's operand-type rules (bit types match any type of their size, signed and unsigned
//! integers match each other, floating-point types only themselves) and the same alignment; a
//! register needs only the parameter's size (and predicates only predicates); an array
//! parameter takes a `.param` array of the same byte size and alignment; integer constants do
//! not go to floating-point or array parameters, floating-point constants not to integer ones;
//! variables of other state spaces and the caller's own `.param` parameters cannot be passed.

use super::Insn;
use super::{is_float_literal, is_int_literal};
use crate::codes;
use crate::scope::{constant_elements, FnChecker, Resolved, Symbol, SymbolKind};
use crate::types::compatible;
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{ScalarType, StateSpace, TypeKind};
use ptx_syntax::ast::{ExprKind, Function, Name, Operand, VarDecl, Word};

/// What declares a signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Callee {
    /// A `.func` declaration or definition.
    Function,
    /// A `.callprototype` label.
    Prototype,
}

/// How a formal parameter, or a `.param` variable passed to one, is laid out: what the call
/// rules compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// A scalar: its type, its alignment in bytes (written or natural), and whether it is a
    /// `.reg` parameter (which has no alignment).
    Scalar {
        ty: ScalarType,
        align: u64,
        reg: bool,
    },
    /// An array: its size and alignment in bytes.
    Array { bytes: u64, align: u64 },
}

fn bytes_of(t: ScalarType) -> u64 {
    u64::from(t.size_bits().div_ceil(8))
}

impl Layout {
    /// The layout of a declarator, or `None` where the rules do not apply (vector or opaque
    /// types, arrays without constant dimensions).
    fn of_decl(v: &VarDecl, dims: &[Option<ptx_syntax::ast::Expr>]) -> Option<Layout> {
        let ty = ScalarType::from_suffix(&v.ty.text)?;
        if v.vector.is_some() {
            return None;
        }
        let size = bytes_of(ty);
        if dims.is_empty() {
            return Some(Layout::Scalar {
                ty,
                align: v.align.unwrap_or(size),
                reg: v.space.text == ".reg",
            });
        }
        Some(Layout::Array {
            bytes: size.checked_mul(constant_elements(dims)?)?,
            align: v.align.unwrap_or(size),
        })
    }

    /// The layout of a declared `.param` variable.
    fn of_symbol(s: &Symbol) -> Option<Layout> {
        let ty = s.ty?;
        if s.vector > 1 {
            return None;
        }
        let size = bytes_of(ty);
        if !s.array {
            return Some(Layout::Scalar {
                ty,
                align: s.align.unwrap_or(size),
                reg: false,
            });
        }
        Some(Layout::Array {
            bytes: size.checked_mul(s.elements?)?,
            align: s.align.unwrap_or(size),
        })
    }

    fn describe(self) -> String {
        match self {
            Layout::Scalar { ty, reg: true, .. } => format!(".reg {ty}"),
            Layout::Scalar { ty, align, .. } if align == bytes_of(ty) => {
                format!(".param {ty} ({} bytes)", bytes_of(ty))
            }
            Layout::Scalar { ty, align, .. } => {
                format!(".param .align {align} {ty} ({} bytes)", bytes_of(ty))
            }
            Layout::Array { bytes, align } => {
                format!(".param array of {bytes} bytes with .align {align}")
            }
        }
    }
}

/// A formal parameter (or return parameter) of a signature.
#[derive(Clone, Debug)]
struct Formal {
    name: Name,
    span: Span,
    layout: Option<Layout>,
}

/// The parameter lists of a function or prototype.
#[derive(Clone, Debug)]
pub(crate) struct Signature {
    name: Name,
    span: Span,
    callee: Callee,
    rets: Vec<Formal>,
    params: Vec<Formal>,
}

impl Signature {
    /// The signature declared by `name` with these lists.
    pub(crate) fn new(
        rets: &Option<Vec<VarDecl>>,
        params: &Option<Vec<VarDecl>>,
        name: &Word,
        callee: Callee,
    ) -> Signature {
        let formals = |l: &Option<Vec<VarDecl>>| {
            l.iter()
                .flatten()
                .flat_map(|v| {
                    v.declarators.iter().map(move |d| Formal {
                        name: d.name.text.clone(),
                        span: d.name.loc.0,
                        layout: Layout::of_decl(v, &d.dims),
                    })
                })
                .collect::<Vec<_>>()
        };
        Signature {
            name: name.text.clone(),
            span: name.loc.0,
            callee,
            rets: formals(rets),
            params: formals(params),
        }
    }

    fn of_function(f: &Function) -> Signature {
        Signature::new(&f.returns, &f.params, &f.name, Callee::Function)
    }

    /// `` `f` `` or `` prototype `p` ``.
    fn what(&self) -> String {
        match self.callee {
            Callee::Function => format!("`{}`", self.name),
            Callee::Prototype => format!("prototype `{}`", self.name),
        }
    }
}

/// What is passed in one position of a call.
enum Actual {
    /// A `.param` variable of the caller.
    Param(Layout),
    /// A register (or a `.reg` parameter) of this type.
    Register(ScalarType),
    /// An integer constant.
    Int,
    /// A floating-point constant.
    Float,
    /// A variable of another state space.
    Space(StateSpace),
    /// A `.param` parameter of the calling function itself.
    OwnParam,
    /// Anything the rules do not judge.
    Unknown,
}

fn classify(c: &FnChecker<'_, '_>, o: &Operand) -> (Actual, Option<Span>) {
    let Operand::Expr(e) = o else {
        return (Actual::Unknown, None);
    };
    let actual = match &e.kind {
        ExprKind::Symbol(name) => match c.resolve(name) {
            Resolved::Symbol(s) => match (s.kind, s.space) {
                (_, Some(StateSpace::Reg)) | (SymbolKind::Register, _) => match s.ty {
                    Some(t) if s.vector <= 1 => Actual::Register(t),
                    _ => Actual::Unknown,
                },
                (SymbolKind::Param, Some(StateSpace::Param)) if s.scope == 0 => Actual::OwnParam,
                (SymbolKind::Param, Some(StateSpace::Param)) => {
                    Layout::of_symbol(s).map_or(Actual::Unknown, Actual::Param)
                }
                (SymbolKind::Variable, Some(sp)) if sp != StateSpace::Param => Actual::Space(sp),
                _ => Actual::Unknown,
            },
            _ => Actual::Unknown,
        },
        _ if is_int_literal(e) => Actual::Int,
        _ if is_float_literal(e) => Actual::Float,
        _ => Actual::Unknown,
    };
    (actual, Some(e.loc.0))
}

/// Why `actual` cannot be passed for a formal of layout `formal`: the label on the operand
/// and the help line; `None` when it can.
fn mismatch(formal: Layout, actual: &Actual) -> Option<(String, String)> {
    let want = formal.describe();
    let same_size = |t: ScalarType, u: ScalarType| {
        (t == ScalarType::Pred) == (u == ScalarType::Pred) && bytes_of(t) == bytes_of(u)
    };
    match (formal, actual) {
        (_, Actual::Unknown) => None,
        (_, Actual::Space(sp)) => Some((
            format!("a {sp} variable"),
            "call arguments are `.param` variables, registers or constants: load the value \
             into a register first"
                .to_string(),
        )),
        (_, Actual::OwnParam) => Some((
            "a parameter of the calling function".to_string(),
            "a function's own `.param` parameters cannot be passed on: load the value with \
             `ld.param` and pass the register"
                .to_string(),
        )),
        (Layout::Scalar { ty, reg, align }, Actual::Param(Layout::Scalar { ty: at, align: aa, .. })) => {
            let type_ok = if reg {
                same_size(ty, *at)
            } else {
                compatible(ty, *at, false)
            };
            if !type_ok {
                Some((
                    format!("this is .param {at} ({} bytes)", bytes_of(*at)),
                    format!(
                        "pass a .param variable of a type {ty} accepts (the same size; integer \
                         and floating-point types do not mix), or a {}-bit register",
                        ty.size_bits()
                    ),
                ))
            } else if !reg && *aa != align {
                Some((
                    format!("this is aligned to {aa} bytes"),
                    format!("declare the argument with `.align {align}`, as the parameter is"),
                ))
            } else {
                None
            }
        }
        (Layout::Scalar { .. }, Actual::Param(Layout::Array { bytes, .. })) => Some((
            format!("this is a .param array of {bytes} bytes"),
            format!("pass a scalar: declare the argument as {want}"),
        )),
        (Layout::Scalar { ty, .. }, Actual::Register(rt)) => (!same_size(ty, *rt)).then(|| {
            (
                format!("this register is {rt}"),
                format!("pass a register of {} bits (or a .param variable of the parameter's type)", ty.size_bits()),
            )
        }),
        (Layout::Scalar { ty, .. }, Actual::Int) => (ty.kind() == TypeKind::Float).then(|| {
            (
                "an integer constant".to_string(),
                "write a floating-point constant (`1.0`, `0f3F800000`) for a floating-point parameter".to_string(),
            )
        }),
        (Layout::Scalar { ty, .. }, Actual::Float) => ty.is_integer().then(|| {
            (
                "a floating-point constant".to_string(),
                "write an integer constant for an integer parameter".to_string(),
            )
        }),
        (Layout::Array { bytes, align }, Actual::Param(Layout::Array { bytes: ab, align: aa })) => {
            if *ab != bytes {
                Some((
                    format!("this is a .param array of {ab} bytes"),
                    format!("declare the argument as a .param array of {bytes} bytes"),
                ))
            } else if *aa != align {
                Some((
                    format!("this is aligned to {aa} bytes"),
                    format!("declare the argument with `.align {align}`, as the parameter is"),
                ))
            } else {
                None
            }
        }
        (Layout::Array { bytes, align }, _) => Some((
            "not a .param array".to_string(),
            format!("the parameter is an array: pass a `.param .align {align} .b8 name[{bytes}]` variable"),
        )),
    }
}

/// Checks the operands of a list against the formals; `results` for the result list.
fn check_list(
    c: &mut FnChecker<'_, '_>,
    sig: &Signature,
    items: &[Operand],
    formals: &[Formal],
    results: bool,
) {
    for (k, (o, f)) in items.iter().zip(formals).enumerate() {
        let Some(layout) = f.layout else { continue };
        let (actual, span) = classify(c, o);
        let (Some((label, help)), Some(span)) = (mismatch(layout, &actual), span) else {
            continue;
        };
        let (code, role, formal_role) = if results {
            (codes::CALL_RET_TYPE, "result", "return parameter")
        } else {
            (codes::CALL_ARG_TYPE, "argument", "parameter")
        };
        let shown = match o {
            Operand::Expr(e) => match &e.kind {
                ExprKind::Symbol(n) => format!("`{n}`"),
                _ => "the constant".to_string(),
            },
            _ => "it".to_string(),
        };
        // Prototype parameters are usually all named `_`: name them by position.
        let formal = if f.name.as_str() == "_" {
            format!("{formal_role} {}", k + 1)
        } else {
            format!("{formal_role} `{}`", f.name)
        };
        c.diags.push(
            Diagnostic::error(
                code,
                format!(
                    "call {role} {shown} does not match {formal} of {}",
                    sig.what()
                ),
                span,
            )
            .with_label_message(label)
            .with_secondary(f.span, format!("{formal} is {}", layout.describe()))
            .with_help(help),
        );
    }
}

/// The operands of a call, split up.
struct CallParts<'i> {
    rets: Option<(&'i [Operand], Span)>,
    args: Option<(&'i [Operand], Span)>,
    callee_span: Span,
}

/// Checks counts and then each operand of `parts` against `sig`.
fn check_against(c: &mut FnChecker<'_, '_>, parts: &CallParts<'_>, sig: &Signature) {
    let name = sig.what();
    let decl = sig.span;
    let what_decl = match sig.callee {
        Callee::Function => format!("`{}` declared here", sig.name),
        Callee::Prototype => format!("prototype `{}` declared here", sig.name),
    };
    let (want_rets, want_args) = (sig.rets.len(), sig.params.len());
    let got_rets = parts.rets.map_or(0, |r| r.0.len());
    let mut counts_ok = true;
    if got_rets != want_rets {
        counts_ok = false;
        let span = parts.rets.map_or(parts.callee_span, |r| r.1);
        c.diags.push(
            Diagnostic::error(
                codes::CALL_RET_COUNT,
                format!("call has wrong number of return values: {name} returns {want_rets}, the call expects {got_rets}"),
                span,
            )
            .with_secondary(decl, what_decl.clone())
            .with_help(match (want_rets, sig.callee) {
                (0, Callee::Function) => format!("drop the result list: `call {}, (…);`", sig.name),
                (0, Callee::Prototype) => {
                    format!("drop the result list: `call %fptr, (…), {};`", sig.name)
                }
                (n, Callee::Function) => {
                    format!("list {n} result parameter(s): `call (r), {}, (…);`", sig.name)
                }
                (n, Callee::Prototype) => {
                    format!("list {n} result parameter(s): `call (r), %fptr, (…), {};`", sig.name)
                }
            }),
        );
    }
    let got_args = parts.args.map_or(0, |a| a.0.len());
    if got_args != want_args {
        counts_ok = false;
        let span = parts.args.map_or(parts.callee_span, |a| a.1);
        c.diags.push(
            Diagnostic::error(
                codes::CALL_ARG_COUNT,
                format!("call has wrong number of arguments: {name} takes {want_args}, the call passes {got_args}"),
                span,
            )
            .with_secondary(decl, what_decl)
            .with_help(format!("pass exactly {want_args} argument(s)")),
        );
    }
    if !counts_ok {
        return;
    }
    if let Some((items, _)) = parts.rets {
        check_list(c, sig, items, &sig.rets, true);
    }
    if let Some((items, _)) = parts.args {
        check_list(c, sig, items, &sig.params, false);
    }
}

fn instr_span(ins: &Insn<'_>) -> Span {
    ins.opcode
        .loc
        .0
        .to(ins.modifiers.last().map_or(ins.opcode.loc.0, |m| m.loc.0))
}

/// `call{.uni} (results), callee, (arguments){, prototype-or-targets};`
pub(crate) fn check_call(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let ops = &ins.operands;
    let mut i = 0;
    let mut rets = None;
    if let Some(Operand::List(items, loc)) = ops.first() {
        if ops.len() > 1 {
            rets = Some((items.as_slice(), loc.0));
            i = 1;
        }
    }
    let Some(callee) = ops.get(i) else {
        c.diags.push(
            Diagnostic::error(codes::CALL_SHAPE, "`call` has no callee", instr_span(ins))
                .with_help("write `call (results), function, (arguments);`"),
        );
        return;
    };
    let args = match ops.get(i + 1) {
        Some(Operand::List(items, loc)) => Some((items.as_slice(), loc.0)),
        _ => None,
    };
    let Operand::Expr(e) = callee else {
        c.diags.push(
            Diagnostic::error(
                codes::CALL_SHAPE,
                "the callee must be a function name or a register",
                callee.loc().0,
            )
            .with_help("write `call (results), function, (arguments);`"),
        );
        return;
    };
    let ExprKind::Symbol(name) = &e.kind else {
        return;
    };
    let parts = CallParts {
        rets,
        args,
        callee_span: e.loc.0,
    };
    if name.starts_with('%')
        || matches!(c.resolve(name), Resolved::Symbol(s) if s.kind != SymbolKind::Function)
    {
        c.use_name(name, e.loc.0);
        check_indirect(c, ins, i, &parts);
        return;
    }
    let f: Option<&Function> = c.globals.functions.get(name.as_str()).copied();
    let Some(f) = f else {
        let mut d = Diagnostic::error(
            codes::UNDECLARED_FUNCTION,
            format!("call to undeclared function `{name}`"),
            e.loc.0,
        )
        .with_label_message("no function of this name is declared in the module");
        let best = c
            .globals
            .functions
            .keys()
            .map(|k| (ptx_isa::edit_distance(name, k), k.to_string()))
            .filter(|(dd, _)| *dd <= (name.len() / 3).max(1))
            .min();
        d = match best {
            Some((_, k)) => d.with_help(format!("did you mean `{k}`?")),
            None => d.with_help(format!(
                "declare it before the call, e.g. `.extern .func {name}(.param .b32 a);`, or define it"
            )),
        };
        c.diags.push(d);
        return;
    };
    c.use_name(name, e.loc.0);
    let sig = Signature::of_function(f);
    check_against(c, &parts, &sig);
}

/// An indirect call `call (r), %fptr, (a), proto;`: the last operand names a `.callprototype`
/// (the signature) or a `.calltargets` list (every function of it is a possible callee).
fn check_indirect(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    callee_at: usize,
    parts: &CallParts<'_>,
) {
    let last = ins.operands.iter().skip(callee_at + 1).last();
    let proto = match last {
        Some(Operand::Expr(pe)) => match &pe.kind {
            ExprKind::Symbol(n) => Some((n.clone(), pe.loc.0)),
            _ => None,
        },
        _ => None,
    };
    let Some((proto, span)) = proto else {
        c.diags.push(
            Diagnostic::error(
                codes::CALL_SHAPE,
                "indirect call without a `.callprototype` or `.calltargets` operand",
                ins.operands.last().map_or(instr_span(ins), |o| o.loc().0),
            )
            .with_label_message("the call ends here")
            .with_help("declare `proto: .callprototype (.param .b32 _) _ (.param .b32 _);` in the function and end the call with `, proto`"),
        );
        return;
    };
    // The name itself was resolved (and reported if unknown) with the other operands.
    if matches!(c.resolve(&proto), Resolved::Unknown) {
        return;
    }
    if let Some(sig) = c.prototypes.get(&proto).cloned() {
        check_against(c, parts, &sig);
        return;
    }
    // A `.global` or `.const` table of function addresses may stand for the target list; its
    // initializer is not followed here.
    if matches!(c.resolve(&proto), Resolved::Symbol(s) if s.kind == SymbolKind::Variable) {
        return;
    }
    if let Some(targets) = c.call_targets.get(&proto).cloned() {
        for t in targets {
            if let Some(f) = c.globals.functions.get(t.text.as_str()).copied() {
                let sig = Signature::of_function(f);
                check_against(c, parts, &sig);
            }
        }
        return;
    }
    c.diags.push(
        Diagnostic::error(
            codes::CALL_SHAPE,
            format!("`{proto}` is not a `.callprototype` or `.calltargets` label"),
            span,
        )
        .with_label_message("the signature of an indirect call comes from here")
        .with_help("end an indirect call with the label of a `.callprototype` or `.calltargets` directive of this function"),
    );
}
