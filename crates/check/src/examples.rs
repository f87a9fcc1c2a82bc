//! Test support: the instruction examples of the table as small kernels.
//!
//! The examples of the ISA reference (kept by the table: [`ptx_isa::examples`]) are fragments:
//! they use registers without declaring them (`add.u32 x,y,z;`), branch to labels defined
//! elsewhere, and mix declarations and prose. [`instruction_statements`] takes every statement
//! of every example that is an instruction (declarations, labels, comments and the `...` of
//! elided code dropped; a statement spanning lines joined); [`kernel_for`] declares each name a
//! statement uses as the instruction's operand roles want it (a register of the role's type, a
//! `.pred` for predicates, a 64-bit register inside an address, a label at the end of the
//! kernel) and wraps it in a kernel; [`accepted_kernel`] tries a few headers, newest first, and
//! returns the first kernel the checker accepts. `ptx-check`'s `examples` test requires every
//! statement to be accepted (or listed with a reason), and the runtime's `examples_run` test runs
//! every accepted one whose instruction the interpreter executes.

use crate::{check_module, CheckOptions};
use ptx_isa::{roles_for, Opcode, RoleCheck, RoleKind, RoleType, ScalarType};
use ptx_syntax::ast::{Directive, Expr, ExprKind, Instruction, Operand, Statement};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The headers tried, newest first: `(.version, .target)`.
pub const HEADERS: &[(&str, &str)] = &[
    ("9.0", "sm_100a"),
    ("9.0", "sm_90a"),
    ("9.0", "sm_120a"),
    ("6.0", "sm_60"),
];

/// The instruction statements of an example: comments stripped, declarations, labels, elided
/// code and prose dropped, statements that span lines joined.
pub fn statements(example: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    // block comments removed first (they span lines)
    let mut text = String::new();
    let mut rest = example;
    while let Some(i) = rest.find("/*") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    text.push_str(rest);
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        let prose = first.starts_with('.')
            || first.starts_with('#')
            || first.starts_with("..")
            || first.chars().next().is_some_and(|c| c.is_ascii_digit())
            || first.ends_with(':')
            || line == "{"
            || line == "}";
        if pending.is_empty() && prose {
            continue;
        }
        pending.push(' ');
        pending.push_str(line);
        while let Some(i) = pending.find(';') {
            let stmt = pending[..=i].trim().to_string();
            pending = pending[i + 1..].to_string();
            if !stmt.is_empty() && stmt != ";" {
                out.push(stmt.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        if pending.trim().is_empty() {
            pending.clear();
        }
    }
    out
}

/// A register type a `.reg` may have, for an instruction type (`.bf16` lives in a `.b16`).
pub fn register_type(t: ScalarType) -> String {
    use ScalarType as T;
    match t {
        T::B8
        | T::B16
        | T::B32
        | T::B64
        | T::B128
        | T::U8
        | T::U16
        | T::U32
        | T::U64
        | T::S8
        | T::S16
        | T::S32
        | T::S64
        | T::F16
        | T::F16x2
        | T::F32
        | T::F64
        | T::Pred => t.suffix().to_string(),
        _ => format!(".b{}", t.size_bits().next_power_of_two().max(8)),
    }
}

/// What a name must be declared as.
#[derive(Clone, Debug, PartialEq)]
enum Decl {
    Reg(String),
    Label,
}

struct Namer {
    decls: BTreeMap<String, Decl>,
}

impl Namer {
    fn add(&mut self, name: &str, d: Decl) {
        if name == "_" || name == "WARP_SZ" || is_special(name) {
            return;
        }
        self.decls.entry(name.to_string()).or_insert(d);
    }

    fn expr(&mut self, e: &Expr, d: &Decl) {
        match &e.kind {
            ExprKind::Symbol(n) => self.add(n, d.clone()),
            ExprKind::Unary(_, a) => self.expr(a, d),
            ExprKind::Select(a, _) => self.expr(a, d),
            ExprKind::Binary(_, a, b) => {
                self.expr(a, d);
                self.expr(b, d);
            }
            _ => {}
        }
    }

    fn operand(&mut self, o: &Operand, d: &Decl) {
        match o {
            Operand::Expr(e) => self.expr(e, d),
            Operand::Vector(items, _) | Operand::List(items, _) => {
                for i in items {
                    self.operand(i, d);
                }
            }
            Operand::Address(a) => {
                let addr = Decl::Reg(".b64".into());
                for (k, i) in a.items.iter().enumerate() {
                    // `[tex, {coords}]`: the handle first, then 32-bit coordinates
                    let d = if k == 0 {
                        addr.clone()
                    } else {
                        Decl::Reg(".b32".into())
                    };
                    self.operand(i, &d);
                }
            }
            Operand::Pair(a, b) => {
                self.operand(a, d);
                self.operand(b, &Decl::Reg(".pred".into()));
            }
        }
    }
}

fn is_special(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    name.starts_with('%') && ptx_isa::special_register(stem).is_some()
}

/// What each operand of `ins` is declared as, from the instruction's roles (or, for the
/// instructions with hand rules, from their usual operand order).
fn operand_decls(ins: &Instruction) -> Vec<Decl> {
    let types: Vec<ScalarType> = ins
        .modifiers
        .iter()
        .filter_map(|m| ScalarType::from_suffix(&m.text))
        .collect();
    let last = types.last().copied().unwrap_or(ScalarType::B32);
    let reg = |t: ScalarType| Decl::Reg(register_type(t));
    let mods: Vec<&str> = ins.modifiers.iter().map(|m| m.text.as_str()).collect();
    let op = ins.opcode.text.as_str();
    let n = ins.operands.len();
    let rule = roles_for(op, &mods);
    if let Some(RoleCheck::Operands(ops)) = rule.map(|r| r.check) {
        return ops
            .iter()
            .map(|r| match r.kind {
                RoleKind::Pred { .. } | RoleKind::PredDst => reg(ScalarType::Pred),
                RoleKind::Label => Decl::Label,
                _ => {
                    let t = match r.ty {
                        RoleType::Last => Some(last),
                        RoleType::Nth(k) => types.get(k as usize).copied(),
                        RoleType::Wide => Some(
                            ScalarType::from_suffix(&format!(".b{}", last.size_bits() * 2))
                                .unwrap_or(last),
                        ),
                        RoleType::Address => Some(ScalarType::U64),
                        RoleType::Fixed(t) => Some(t),
                        RoleType::None => None,
                    };
                    reg(t.unwrap_or(ScalarType::B32))
                }
            })
            .collect();
    }
    let first = types.first().copied().unwrap_or(last);
    let wide = mods.contains(&".wide");
    let opcode = Opcode::resolve(op, &mods).map(|(o, _)| o);
    use Opcode as O;
    (0..n)
        .map(|i| match opcode {
            Some(O::Setp) => {
                if i == 0 || i == 3 {
                    reg(ScalarType::Pred)
                } else {
                    reg(last)
                }
            }
            Some(O::Selp) if i == 3 => reg(ScalarType::Pred),
            Some(O::Cvt) if i == 0 => reg(first),
            Some(O::Bra | O::Brx) => Decl::Label,
            Some(O::Bar | O::Barrier) if mods.contains(&".red") && (i == n - 1) => {
                reg(ScalarType::Pred)
            }
            Some(O::Bar | O::Barrier) if mods.contains(&".pred") && i == 0 => reg(ScalarType::Pred),
            Some(O::Bar | O::Barrier) => reg(ScalarType::U32),
            Some(O::Vote) if i == 1 => reg(ScalarType::Pred),
            Some(O::Vote) if i == 0 && !mods.contains(&".ballot") => reg(ScalarType::Pred),
            Some(O::Shfl | O::Vote) if i >= 1 => reg(ScalarType::B32),
            Some(O::Add | O::Sub | O::Mul | O::Mad) if wide && i == 0 => {
                reg(ScalarType::from_suffix(&format!(".b{}", last.size_bits() * 2)).unwrap_or(last))
            }
            Some(O::Mad) if wide && i == 3 => {
                reg(ScalarType::from_suffix(&format!(".b{}", last.size_bits() * 2)).unwrap_or(last))
            }
            _ => reg(last),
        })
        .collect()
}

/// The kernel for `stmt`, or why there is none.
pub fn kernel_for(stmt: &str, version: &str, target: &str) -> Result<String, String> {
    let probe = format!(
        ".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\t{stmt}\n}}\n"
    );
    let parsed = ptx_syntax::parse(&probe);
    if ptx_diag::has_errors(&parsed.diagnostics) {
        return Err(format!("parse: {}", parsed.diagnostics[0].message));
    }
    let ins = parsed
        .module
        .directives
        .iter()
        .find_map(|d| match d {
            Directive::Function(f) => f.body.as_ref()?.statements.iter().find_map(|s| match s {
                Statement::Instruction(i) => Some(i.clone()),
                _ => None,
            }),
            _ => None,
        })
        .ok_or("no instruction")?;
    if Opcode::resolve(
        &ins.opcode.text,
        &ins.modifiers
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>(),
    )
    .is_some_and(|(o, _)| o == Opcode::Call)
    {
        return Err("calls need a callee with its parameters".into());
    }
    let mut namer = Namer {
        decls: BTreeMap::new(),
    };
    if let Some(g) = &ins.guard {
        namer.add(&g.pred.text, Decl::Reg(".pred".into()));
    }
    let decls = operand_decls(&ins);
    let vector = ins.modifiers.iter().find_map(|m| {
        m.text
            .strip_prefix(".v")
            .filter(|n| n.parse::<u32>().is_ok())
    });
    for (i, o) in ins.operands.iter().enumerate() {
        let mut d = decls.get(i).cloned().unwrap_or(Decl::Reg(".b32".into()));
        match (o, &d) {
            // `mov.b32 %r, {a, b}`: the elements split the instruction's bits
            (Operand::Vector(items, _), Decl::Reg(t)) if ins.opcode.text == Opcode::Mov.name() => {
                let bits = ScalarType::from_suffix(t).map_or(32, |t| t.size_bits());
                let n = items.len().max(1) as u32;
                d = Decl::Reg(format!(".b{}", (bits / n).max(8)));
            }
            // `ld.v4.b32 Q, [p]`: a vector register
            (Operand::Expr(_), Decl::Reg(t)) if vector.is_some() && t != ".pred" => {
                d = Decl::Reg(format!(".v{} {t}", vector.unwrap_or("2")));
            }
            _ => {}
        }
        namer.operand(o, &d);
    }
    let mut body = String::new();
    let mut labels = String::new();
    for (name, d) in &namer.decls {
        match d {
            Decl::Reg(t) => {
                let _ = writeln!(body, "\t.reg {t} {name};");
            }
            Decl::Label => {
                let _ = writeln!(labels, "{name}:");
            }
        }
    }
    Ok(format!(
        ".version {version}\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n{body}\t{stmt}\n{labels}\tret;\n}}\n"
    ))
}

/// The errors of parsing and checking `src`, as `CODE: message`.
fn diagnostics_of(src: &str) -> Vec<String> {
    let parsed = ptx_syntax::parse(src);
    let errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code.0, d.message))
        .collect();
    if !errors.is_empty() {
        return errors;
    }
    check_module(&parsed.module, &CheckOptions::default())
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code.0, d.message))
        .collect()
}

/// `Ok` if some header accepts the statement, else the first header's errors.
pub fn accepted(stmt: &str) -> Result<(), String> {
    let mut first = None;
    for (v, t) in HEADERS {
        let errors = diagnostics_of(&kernel_for(stmt, v, t)?);
        if errors.is_empty() {
            return Ok(());
        }
        first.get_or_insert(errors.join("; "));
    }
    Err(first.unwrap_or_default())
}

/// Every instruction statement of every example of the table, deduplicated and sorted.
pub fn instruction_statements() -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for (_, ex) in ptx_isa::examples() {
        all.extend(statements(ex));
    }
    all
}

/// The first kernel for `stmt` (under [`HEADERS`], newest first) that parses and checks
/// without error, or `None`.
pub fn accepted_kernel(stmt: &str) -> Option<String> {
    HEADERS.iter().find_map(|(v, t)| {
        let src = kernel_for(stmt, v, t).ok()?;
        diagnostics_of(&src).is_empty().then_some(src)
    })
}
