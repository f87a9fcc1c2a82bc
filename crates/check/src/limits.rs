//! Sizes the hardware bounds and ptxas enforces on the whole module: the 64 KiB constant bank and
//! a kernel's parameter space.

use crate::codes;
use crate::header::Header;
use ptx_diag::Diagnostic;
use ptx_isa::{PtxVersion, ScalarType};
use ptx_syntax::ast::{
    Declarator, Directive, FunctionKind, Initializer, Module, Statement, VarDecl,
};
use ptx_syntax::constexpr::{eval, Value};

/// Bytes of one constant bank: ptxas refuses a file whose `.const` variables need more ("File
/// uses too much global constant data (0x10001 bytes, 0x10000 max)").
pub const CONST_BANK: u64 = 0x10000;
/// Kernel parameter bytes before PTX ISA 8.1.
pub const PARAM_SPACE_OLD: u64 = 0x1100;
/// Kernel parameter bytes from PTX ISA 8.1 on.
pub const PARAM_SPACE: u64 = 0x7ffc;

fn elem_size(v: &VarDecl) -> u64 {
    let e = match ScalarType::from_suffix(&v.ty.text) {
        Some(t) => (t.size_bits() as u64).div_ceil(8),
        None => 8,
    };
    let vec = v
        .vector
        .as_ref()
        .and_then(|w| w.text.strip_prefix(".v"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1u64);
    e * vec
}

/// (size, alignment) of one variable of the declarator (saturating; `[]` takes the
/// initializer's length).
fn layout(v: &VarDecl, d: &Declarator) -> (u64, u64) {
    let elem = elem_size(v);
    let mut n = 1u64;
    for (i, dim) in d.dims.iter().enumerate() {
        let k = match dim {
            Some(e) => match eval(e, &|_| None) {
                Ok(Value::Int { bits, .. }) => bits,
                _ => 0,
            },
            None if i == 0 => match &d.init {
                Some(Initializer::List(items, _)) => items.len() as u64,
                _ => 0,
            },
            None => 0,
        };
        n = n.saturating_mul(k);
    }
    (
        elem.saturating_mul(n),
        v.align.unwrap_or(elem.clamp(1, 16)).max(1),
    )
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a).saturating_mul(a)
}

/// The constant banks and kernel parameter space of `module`.
pub(crate) fn check_limits(module: &Module, header: &Header, diags: &mut Vec<Diagnostic>) {
    // every `.const` variable of the file, module scope or function body, in declaration
    // order, each at its alignment, per bank (`.const[N]`, legacy; 0 without one)
    let mut banks: Vec<(u64, u64, bool)> = Vec::new(); // (bank, bytes, reported)
    let mut constant = |v: &VarDecl, diags: &mut Vec<Diagnostic>| {
        if v.space.text != ".const" {
            return;
        }
        let bank = v.bank.unwrap_or(0);
        let i = match banks.iter().position(|b| b.0 == bank) {
            Some(i) => i,
            None => {
                banks.push((bank, 0, false));
                banks.len() - 1
            }
        };
        for d in &v.declarators {
            let (size, align) = layout(v, d);
            for _ in 0..d.count.unwrap_or(1).min(CONST_BANK + 1) {
                let b = &mut banks[i];
                b.1 = align_up(b.1, align).saturating_add(size);
                if b.1 > CONST_BANK && !b.2 {
                    b.2 = true;
                    diags.push(
                        Diagnostic::error(
                            codes::CONST_BANK,
                            format!(
                                "the file uses too much constant data ({:#x} bytes, {CONST_BANK:#x} max)",
                                b.1
                            ),
                            d.name.loc.0,
                        )
                        .with_label_message(format!(
                            "`{}` ends at byte {}; the bank has {CONST_BANK}",
                            d.name.text, b.1
                        ))
                        .with_help(
                            "a GPU gives a module's `.const` variables one 64 KiB bank; put larger tables in `.global` memory",
                        ),
                    );
                }
                if b.1 > CONST_BANK {
                    break;
                }
            }
        }
    };
    for d in &module.directives {
        match d {
            Directive::Variable(v) => constant(v, diags),
            Directive::Function(f) => {
                for s in f.body.iter().flat_map(|b| &b.statements) {
                    if let Statement::Variable(v) = s {
                        constant(v, diags);
                    }
                }
            }
            _ => {}
        }
    }
    // kernel parameters: ptxas lays them out in order, each at its alignment
    let new = header.version.is_none_or(|v| v >= PtxVersion::new(8, 1));
    let max = if new { PARAM_SPACE } else { PARAM_SPACE_OLD };
    for d in &module.directives {
        let Directive::Function(f) = d else { continue };
        if f.kind != FunctionKind::Entry {
            continue;
        }
        let mut off = 0u64;
        for v in f.params.iter().flatten() {
            for d in &v.declarators {
                let (size, align) = layout(v, d);
                off = align_up(off, align).saturating_add(size);
            }
        }
        if off > max {
            let mut diag = Diagnostic::error(
                codes::PARAM_SPACE,
                format!(
                    "entry function `{}` uses too much parameter space ({off:#x} bytes, {max:#x} max)",
                    f.name.text
                ),
                f.name.loc.0,
            )
            .with_label_message(format!("its parameters take {off} bytes"));
            diag = if new {
                diag.with_help("pass large data through a pointer to global memory")
            } else {
                diag.with_help(
                    "kernel parameters beyond 4352 bytes (up to 32764) need PTX ISA .version 8.1 or later",
                )
            };
            diags.push(diag);
        }
    }
}
