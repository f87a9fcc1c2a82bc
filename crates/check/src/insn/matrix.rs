//! The selector immediates of the matrix instructions that ptxas range-checks when it assembles
//! (so a kernel that uses a bad one never loads, rather than failing at launch): the sparsity
//! selector of `mma.sp`/`mma.sp::ordered_metadata` and `wgmma.mma_async.sp`, and the
//! `{byte-id, thread-id}` pairs of block-scaled `mma`. The ranges are ptxas 13.5's, probed per
//! shape and type (they follow the ISA's tables, except that ptxas also takes 2 and 3 for
//! `mma.sp .m16n8k32` `.f16` with `.f32` accumulators); a sparsity selector in a register is an
//! error too. The block-scale selectors in registers are checked when the instruction runs.
//! Also the combinations of the `mma` kinds ptxas refuses and the targets it takes them on
//! (see `kinds`), and the shape and types of `mma`/`mma.sp` without a kind, which must be a
//! form of the one table of forms, `ptx_isa::matrix` (see `table_form`).

use super::Insn;
use crate::codes;
use crate::scope::FnChecker;
use ptx_diag::Diagnostic;
use ptx_isa::matrix::{self as pmx, FormNeeds, FormOrigin, MmaVariant};
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
            if !kinds(c, ins) {
                return;
            }
            mma_sp(c, ins);
            if ins.has(M::BlockScale) {
                block_scale(c, ins, 7);
            }
        }
        // `kinds` reports a bad combination; the selectors are checked on good ones only
        O::Mma if kinds(c, ins) && ins.has(M::BlockScale) => block_scale(c, ins, 5),
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

/// The `.row`/`.col` modifiers in order (A's layout, then B's).
fn layouts<'i>(ins: &'i Insn<'_>) -> Vec<&'i str> {
    ins.modifiers
        .iter()
        .map(|m| m.text.as_str())
        .filter(|t| matches!(*t, ".row" | ".col"))
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
    if immediate(o).is_none() {
        // ptxas: "Arguments mismatch for instruction 'mma'"
        c.diags.push(
            Diagnostic::error(
                codes::IMMEDIATE_KIND,
                format!(
                    "the sparsity selector of `{}` must be an integer constant",
                    ins.full_opcode()
                ),
                o.loc().0,
            )
            .with_label_message("not a constant")
            .with_help("the selector is an immediate (0 to 3, by the shape and types); ptxas refuses a register"),
        );
        return;
    }
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

/// The kinds of `mma` and `mma.sp::ordered_metadata`.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    F8f6f4,
    Mxf8f6f4,
    Mxf4,
    Mxf4nvf4,
}

impl Kind {
    fn of(ins: &Insn<'_>) -> Option<Kind> {
        [
            (M::KindF8f6f4, Kind::F8f6f4),
            (M::KindMxf8f6f4, Kind::Mxf8f6f4),
            (M::KindMxf4, Kind::Mxf4),
            (M::KindMxf4nvf4, Kind::Mxf4nvf4),
        ]
        .into_iter()
        .find(|&(m, _)| ins.has(m))
        .map(|(_, k)| k)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::F8f6f4 => ".kind::f8f6f4",
            Kind::Mxf8f6f4 => ".kind::mxf8f6f4",
            Kind::Mxf4 => ".kind::mxf4",
            Kind::Mxf4nvf4 => ".kind::mxf4nvf4",
        }
    }

    fn block_scaled(self) -> bool {
        self != Kind::F8f6f4
    }
}

const FP8: &[&str] = &[".e4m3", ".e5m2"];
const F8F6F4: &[&str] = &[".e4m3", ".e5m2", ".e3m2", ".e2m3", ".e2m1"];

/// The combinations of kind, shape, types, `.block_scale`, `.scale_vec` and scale type of the
/// sm_100/sm_110/sm_120 `mma` kinds (dense and sparse) that ptxas 13.5 refuses, and the targets
/// it takes them on: `.kind::f8f6f4` on the a/f targets of the sm_100, sm_110 and sm_120
/// families with `.e4m3`/`.e5m2` A and B (the table's gate), on the sm_120 family only with an
/// fp6/fp4 type; the sparse `.kind::mxf4`/`.kind::mxf4nvf4` on sm_120a and sm_121a only. One
/// error per instruction, as the interpreter refuses the same forms at launch. Returns whether
/// the instruction passed (so the selector checks run only on well-formed kinds).
fn kinds(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) -> bool {
    let sparse = ins.has(M::Sp) || ins.has(M::SpOrderedMetadata);
    let tys = types(ins);
    let small = |t: &&str| matches!(*t, ".e3m2" | ".e2m3" | ".e2m1");
    let kind = Kind::of(ins);
    let scale_vec = [(M::ScaleVec1X, 1), (M::ScaleVec2X, 2), (M::ScaleVec4X, 4)]
        .into_iter()
        .find(|&(m, _)| ins.has(m))
        .map(|(_, v)| v);
    let Some(kind) = kind else {
        // the kind modifiers a form needs (ptxas: "... modifier required for instruction 'mma'")
        let need = if ins.has(M::BlockScale) || scale_vec.is_some() {
            Some("`.block_scale` and `.scale_vec` belong to the block-scaled kinds (`.kind::mxf8f6f4`, `.kind::mxf4`, `.kind::mxf4nvf4`)")
        } else if tys.iter().skip(1).take(2).any(small) {
            Some("the fp6/fp4 types `.e3m2`, `.e2m3` and `.e2m1` need `.kind::f8f6f4`")
        } else {
            None
        };
        if let Some(why) = need {
            c.diags.push(kind_error(
                ins,
                codes::MODIFIER_COMBINATION,
                "a `.kind` modifier is required",
                why,
            ));
            return false;
        }
        return if sparse {
            sparse_form(c, ins, &tys)
        } else {
            table_form(c, ins, &tys, MmaVariant::Dense)
        };
    };
    let k = kind.name();
    let shape = ins
        .modifiers
        .iter()
        .map(|m| m.text.as_str())
        .find(|t| t.starts_with(".m") && t.contains('n') && t.contains('k'));
    let (d, a, b, cty) = (
        tys.first().copied(),
        tys.get(1).copied(),
        tys.get(2).copied(),
        tys.get(3).copied(),
    );
    let fp8_only = [a, b].iter().all(|t| t.is_some_and(|t| FP8.contains(&t)));
    let want_shape = match (kind, sparse) {
        (Kind::F8f6f4 | Kind::Mxf8f6f4, false) => ".m16n8k32",
        (Kind::F8f6f4 | Kind::Mxf8f6f4, true) => ".m16n8k64",
        (_, false) => ".m16n8k64",
        (_, true) => ".m16n8k128",
    };
    let stype = if ins.has(M::Ue8m0) {
        Some(".ue8m0")
    } else if ins.has(M::Ue4m3) {
        Some(".ue4m3")
    } else {
        None
    };
    let layout = layouts(ins);
    let err = |code, msg: String, help: &str| Some((code, msg, help.to_string()));
    let problem = if sparse && ins.has(M::Sp) {
        err(
            codes::MODIFIER_COMBINATION,
            format!("`{k}` is not allowed with `mma.sp`"),
            "the sparse `.kind` forms are `mma.sp::ordered_metadata` only (ptxas: \"Illegal modifier '.sp'\")",
        )
    } else if kind == Kind::F8f6f4 && (ins.has(M::BlockScale) || scale_vec.is_some()) {
        err(
            codes::MODIFIER_COMBINATION,
            format!("`{k}` is not allowed with `.block_scale`"),
            "block scaling is `.kind::mxf8f6f4` (for these types), `.kind::mxf4` or `.kind::mxf4nvf4`",
        )
    } else if scale_vec.is_some() && !ins.has(M::BlockScale) {
        err(
            codes::MODIFIER_COMBINATION,
            "`.scale_vec` needs `.block_scale`".to_string(),
            "write `.block_scale` before `.scale_vec`",
        )
    } else if matches!(kind, Kind::Mxf4 | Kind::Mxf4nvf4) && !ins.has(M::BlockScale) {
        err(
            codes::MODIFIER_COMBINATION,
            format!("`{k}` needs `.block_scale`"),
            "this kind is block-scaled: `.block_scale`, a `.scale_vec` and a scale type, and the scale operands",
        )
    } else if layout != [".row", ".col"] {
        err(
            codes::MODIFIER_COMBINATION,
            format!("`{k}` takes `.row.col` only"),
            "A is row-major and B column-major (ptxas: \"Illegal alayout\")",
        )
    } else if ins.has(M::BlockScale) != stype.is_some() {
        let msg = if stype.is_some() {
            format!("a scale type needs `.block_scale` (`{k}` has none)")
        } else {
            "`.block_scale` needs a scale type (`.ue8m0` or `.ue4m3`) after C's type".to_string()
        };
        err(
            codes::MODIFIER_COMBINATION,
            msg,
            "the block-scaled forms end in `.f32.stype` (ptxas: \"Arguments mismatch\")",
        )
    } else if ins.has(M::Satfinite) {
        err(
            codes::INSTRUCTION_TYPES,
            format!("`.satfinite` is not allowed with `{k}`"),
            "`.satfinite` applies to the integer `mma` forms only (ptxas: \"Unexpected instruction types\")",
        )
    } else if shape.is_some_and(|s| s != want_shape)
        && !(kind == Kind::F8f6f4 && !sparse && shape == Some(".m16n8k16") && fp8_only)
    {
        err(
            codes::MODIFIER_COMBINATION,
            format!(
                "the shape of `{k}`{} is `{want_shape}`, not `{}`",
                if sparse { " with `mma.sp`" } else { "" },
                shape.unwrap_or_default()
            ),
            "ptxas: \"Illegal matrix shape\" / \"Incorrect instruction type specified for mma with shape\"",
        )
    } else if [a, b].iter().any(|t| {
        t.is_some_and(|t| {
            if matches!(kind, Kind::Mxf4 | Kind::Mxf4nvf4) {
                t != ".e2m1"
            } else {
                !F8F6F4.contains(&t)
            }
        })
    }) {
        let takes = if matches!(kind, Kind::Mxf4 | Kind::Mxf4nvf4) {
            "`.e2m1`"
        } else {
            "`.e4m3`, `.e5m2`, `.e3m2`, `.e2m3` or `.e2m1`"
        };
        err(
            codes::INSTRUCTION_TYPES,
            format!("`{k}` takes {takes} for A and B"),
            "ptxas: \"Incorrect instruction type specified for mma\"",
        )
    } else if (kind.block_scaled() && (d != Some(".f32") || cty != Some(".f32")))
        || (d.is_some() && cty.is_some() && d != cty)
        || [d, cty]
            .iter()
            .any(|t| t.is_some_and(|t| t != ".f32" && t != ".f16"))
    {
        let rule = if kind.block_scaled() {
            "D and C are `.f32`"
        } else {
            "D and C have the same type, `.f16` or `.f32`"
        };
        err(
            codes::INSTRUCTION_TYPES,
            format!("with `{k}`, {rule}"),
            "ptxas: \"Unexpected instruction types specified for 'mma'\"",
        )
    } else if let Some(msg) = scale_rule(kind, scale_vec, stype, ins.has(M::BlockScale)) {
        err(codes::MODIFIER_COMBINATION, msg, &scale_help(kind))
    } else {
        None
    };
    if let Some((code, msg, help)) = problem {
        c.diags.push(kind_error(ins, code, &msg, &help));
        return false;
    }
    kind_target(c, ins, kind, sparse, fp8_only) && kind_operands(c, ins, kind, sparse)
}

/// `mma.sp` without a kind: `.row.col` only, then a form of the table.
fn sparse_form(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, tys: &[&str]) -> bool {
    if layouts(ins) != [".row", ".col"] {
        c.diags.push(kind_error(
            ins,
            codes::MODIFIER_COMBINATION,
            "`mma.sp` takes `.row.col` only",
            "A is row-major and B column-major (ptxas: \"Illegal alayout\")",
        ));
        return false;
    }
    table_form(c, ins, tys, MmaVariant::Sparse)
}

/// `mma` and `mma.sp` without a kind: the shape and the D, A, B, C types must be a form of
/// [`ptx_isa::matrix::MMA_FORMS`] (ptxas 13.5's forms, which the interpreter's decoder reads
/// too), and a form with further needs must meet them. One error per instruction; none where
/// the instruction has no shape or not four types (the grammar reports those).
fn table_form(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    tys: &[&str],
    variant: MmaVariant,
) -> bool {
    let Some(shape) = ins.modifiers.iter().find_map(|m| pmx::parse_shape(&m.text)) else {
        return true;
    };
    let &[d, a, b, cty] = tys else {
        return true;
    };
    let what = variant.name();
    let sname = pmx::shape_name(shape);
    let Some(form) = pmx::mma_form(variant, shape, [d, a, b, cty]) else {
        let shapes = pmx::mma_shapes_for(variant, a);
        let ptxas_shape = match variant {
            MmaVariant::Dense => format!(
                "\"Incorrect instruction type specified for mma with shape '{sname}'\" or \"Argument vector size mismatch for instruction 'mma'\""
            ),
            MmaVariant::Sparse => format!(
                "\"Illegal instruction types specified for 'Sparse mma' with shape '{sname}'\" or \"Illegal matrix shape '{sname}' for instruction 'Sparse mma'\""
            ),
        };
        let (code, msg, help) = if shapes.is_empty() {
            let takes = pmx::mma_a_types(variant)
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ");
            (
                codes::INSTRUCTION_TYPES,
                format!("`{what}` takes no `{a}` A"),
                format!(
                    "the types of A are {takes} (ptxas: \"Unexpected instruction types specified for 'mma'\")"
                ),
            )
        } else if !shapes.contains(&shape) {
            (
                codes::MODIFIER_COMBINATION,
                format!("`{what}` with `{a}` A does not take the shape `{sname}`"),
                format!("{} (ptxas: {ptxas_shape})", takes_with(variant, a, None)),
            )
        } else {
            (
                codes::INSTRUCTION_TYPES,
                format!("`{what}` `{sname}` has no form `{d}{a}{b}{cty}` (D, A, B, C)"),
                format!(
                    "{} (ptxas: \"Unexpected instruction types specified for 'mma'\" or \"Arguments mismatch for instruction 'mma'\")",
                    takes_with(variant, a, Some(shape))
                ),
            )
        };
        c.diags.push(kind_error(ins, code, &msg, &help));
        return false;
    };
    match form.needs {
        FormNeeds::Nothing => true,
        FormNeeds::OrderedMetadataSm120f => {
            if ins.has(M::Sp) {
                c.diags.push(kind_error(
                    ins,
                    codes::MODIFIER_COMBINATION,
                    &format!("with `{d}` accumulators and `{a}` A, `{sname}` needs `.sp::ordered_metadata`"),
                    "ptxas takes `.f16` accumulators with fp8 A and B on the sm_120 family only, and with `.sp::ordered_metadata` only (ptxas: \"Illegal modifier '.sp' for instruction 'mma'\")",
                ));
                return false;
            }
            use ptx_isa::{ArchVariant as V, SmTarget};
            let Some(t) = c.header.target else {
                return true;
            };
            let fam = SmTarget::sm(120, V::FamilySpecific);
            if t.supports(&fam) {
                return true;
            }
            let span = span_of(ins);
            // a target the table's gates refused already is refused once
            if c.diags
                .iter()
                .any(|x| x.code == codes::NEEDS_TARGET && x.primary_span() == Some(span))
            {
                return false;
            }
            c.diags.push(super::needs_any_target(
                &ins.full_opcode(),
                "mma with F16 accumulator and F8 floating point type",
                &[fam],
                &t.to_string(),
                span,
            ));
            false
        }
    }
}

/// What `variant` takes with A of type `a` (at `shape` only, if given): "with `.f16` A, `mma`
/// takes `.m16n8k8` and `.m16n8k16` with `.f16.f16.f16.f16` or `.f32.f16.f16.f32` (D, A, B,
/// C); `.m8n8k4` with ...".
fn takes_with(variant: MmaVariant, a: &str, shape: Option<pmx::MatrixShape>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for r in pmx::mma_rows_for(variant, a) {
        let shapes: Vec<String> = r
            .shapes
            .iter()
            .filter(|s| shape.is_none_or(|x| x == **s))
            .map(|s| format!("`{}`", pmx::shape_name(*s)))
            .collect();
        if shapes.is_empty() {
            continue;
        }
        let types: Vec<String> = r
            .acc
            .iter()
            .flat_map(|&(d, c)| r.b.iter().map(move |b| format!("`{d}{a}{b}{c}`")))
            .collect();
        let mut part = format!("{} with {}", or_list(&shapes, "and"), or_list(&types, "or"));
        match (r.origin, r.needs) {
            (_, FormNeeds::OrderedMetadataSm120f) => {
                part += " (`.sp::ordered_metadata` on the sm_120 family)"
            }
            (FormOrigin::Ptxas, _) => part += " (ptxas only: not in the ISA, not run by ptxvm)",
            _ => {}
        }
        parts.push(part);
    }
    format!(
        "with `{a}` A, `{}` takes {} (D, A, B, C)",
        variant.name(),
        parts.join("; ")
    )
}

/// `a`, `a and b`, `a, b and c` (or `or`).
fn or_list(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {word} {last}", rest.join(", ")),
    }
}

/// The `.scale_vec` and scale type a block-scaled kind takes.
fn scale_rule(
    kind: Kind,
    vec: Option<u32>,
    stype: Option<&str>,
    block_scale: bool,
) -> Option<String> {
    if !block_scale {
        return None;
    }
    let k = kind.name();
    let bad_vec = |v: u32| Some(format!("`.scale_vec::{v}X` is not allowed with `{k}`"));
    match kind {
        Kind::F8f6f4 => None,
        Kind::Mxf8f6f4 => match (vec, stype) {
            (Some(v), _) if v != 1 => bad_vec(v),
            (_, Some(".ue4m3")) => Some(format!("`{k}` takes the scale type `.ue8m0`")),
            _ => None,
        },
        Kind::Mxf4 => match (vec, stype) {
            (Some(v), _) if v != 2 => bad_vec(v),
            (_, Some(".ue4m3")) => Some(format!("`{k}` takes the scale type `.ue8m0`")),
            _ => None,
        },
        Kind::Mxf4nvf4 => match (vec, stype) {
            (None, _) => Some(format!("`{k}` needs a `.scale_vec` (`::2X` or `::4X`)")),
            (Some(1), _) => bad_vec(1),
            (Some(2), Some(".ue4m3")) => Some(format!(
                "`.scale_vec::2X` is not allowed with `{k}` and the scale type `.ue4m3`"
            )),
            _ => None,
        },
    }
}

fn scale_help(kind: Kind) -> String {
    match kind {
        Kind::Mxf8f6f4 => "`.kind::mxf8f6f4` takes `.scale_vec::1X` (the default) and `.ue8m0`",
        Kind::Mxf4 => "`.kind::mxf4` takes `.scale_vec::2X` (the default) and `.ue8m0`",
        _ => "`.kind::mxf4nvf4` takes `.scale_vec::2X` with `.ue8m0`, or `.scale_vec::4X` with `.ue4m3` or `.ue8m0`",
    }
    .to_string()
}

/// The targets ptxas takes beyond the table's gates (`.kind` on the sm_100f, sm_110f or sm_120f
/// families; `.block_scale` on sm_120f): fp6/fp4 types need the sm_120 family, as does sparse
/// `.kind::f8f6f4` with `.f16` accumulators; the sparse `.kind::mxf4`/`.kind::mxf4nvf4` need
/// sm_120a or sm_121a. Only reported where the table's gate
/// passed, so a target is refused once.
fn kind_target(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    kind: Kind,
    sparse: bool,
    fp8_only: bool,
) -> bool {
    use ptx_isa::{ArchVariant as V, SmTarget};
    let Some(t) = c.header.target else {
        return true;
    };
    let fam = |n| SmTarget::sm(n, V::FamilySpecific);
    let f16 = types(ins).first() == Some(&".f16");
    let (passed, needs, feature): (bool, Vec<SmTarget>, &str) = match kind {
        Kind::F8f6f4 if sparse && f16 && fp8_only => (
            [fam(100), fam(110), fam(120)].iter().any(|n| t.supports(n)),
            vec![fam(120)],
            "sparse mma with F16 accumulator and F8 floating point type",
        ),
        Kind::F8f6f4 if !fp8_only => (
            [fam(100), fam(110), fam(120)].iter().any(|n| t.supports(n)),
            vec![fam(120)],
            "mma with FP6/FP4 floating point type",
        ),
        Kind::Mxf4 | Kind::Mxf4nvf4 if sparse => (
            t.supports(&fam(120)),
            vec![
                SmTarget::sm(120, V::ArchSpecific),
                SmTarget::sm(121, V::ArchSpecific),
            ],
            "sparse mma with .kind::mxf4 or .kind::mxf4nvf4",
        ),
        _ => return true,
    };
    let span = span_of(ins);
    // the table's gates (`.kind`, `.block_scale`, the probed forms) refused the target already
    let refused = c
        .diags
        .iter()
        .any(|d| d.code == codes::NEEDS_TARGET && d.primary_span() == Some(span));
    if !passed || refused || needs.iter().any(|n| t.supports(n)) {
        return true;
    }
    c.diags.push(super::needs_any_target(
        &ins.full_opcode(),
        feature,
        &needs,
        &t.to_string(),
        span,
    ));
    false
}

/// The operands of the kinds: their number (4, or 8 with the block-scale operands; two more
/// for `mma.sp`), the scale data in registers, the sparsity selector an immediate.
fn kind_operands(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, kind: Kind, sparse: bool) -> bool {
    let base = if sparse { 6 } else { 4 };
    let want = if ins.has(M::BlockScale) {
        base + 4
    } else {
        base
    };
    let n = ins.operands.len();
    if n != want {
        let what = if want > base {
            " (D, A, B, C, the metadata and selector of `mma.sp`, then scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b})"
        } else {
            ""
        };
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_COUNT,
                format!("`{}` takes {want} operands, found {n}", ins.full_opcode()),
                span_of(ins),
            )
            .with_label_message(format!("{want} operands"))
            .with_help(format!(
                "ptxas: \"Arguments mismatch for instruction 'mma'\"{}",
                if kind.block_scaled() { what } else { "" }
            )),
        );
        return false;
    }
    if ins.has(M::BlockScale) {
        for k in [base, base + 2] {
            let o = &ins.operands[k];
            let reg = match o {
                Operand::Vector(v, _) => v.len() == 1 && immediate(&v[0]).is_none(),
                _ => immediate(o).is_none(),
            };
            if !reg {
                c.diags.push(
                    Diagnostic::error(
                        codes::IMMEDIATE_KIND,
                        "the scale data must be a `.b32` register".to_string(),
                        o.loc().0,
                    )
                    .with_label_message("not a register")
                    .with_help("ptxas: \"Arguments mismatch for instruction 'mma'\""),
                );
                return false;
            }
        }
    }
    true
}

/// The span of an instruction's opcode and modifiers.
fn span_of(ins: &Insn<'_>) -> ptx_diag::Span {
    ins.opcode
        .loc
        .0
        .to(ins.modifiers.last().map_or(ins.opcode.loc.0, |m| m.loc.0))
}

fn kind_error(ins: &Insn<'_>, code: ptx_diag::Code, msg: &str, help: &str) -> Diagnostic {
    Diagnostic::error(
        code,
        format!("{msg}: `{}`", ins.full_opcode()),
        span_of(ins),
    )
    .with_label_message(msg.to_string())
    .with_help(help.to_string())
}
