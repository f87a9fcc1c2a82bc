//! `ptx-check`: the semantic checks between parsing and lowering.
//!
//! The checker reads a parsed [`ptx_syntax::ast::Module`] without changing it and reports, as
//! [`Diagnostic`]s, everything ptxas would reject that the grammar alone cannot see — with
//! stable codes (see [`codes`] and [`EXPLANATIONS`]), a primary span on the offending token and a
//! help line. It works in three steps: the module header (`.version`, `.target`,
//! `.address_size`, the `--target` override) fixes the PTX version and target that gate
//! everything else; a module-level symbol table (variables, functions) is built in one pass so
//! that module names may be used before their declaration; then each function body — a flat
//! statement list with scope markers — is walked once in order with a stack of scopes, so that
//! registers must be declared before use, inner blocks may shadow outer names, and labels
//! (collected first) may be used before they are defined. Each instruction is checked against
//! the instruction table of `ptx-isa`: opcode, modifiers, the order of its type modifiers
//! against its forms, PTX-version and target gates (special registers included), and operand by
//! operand against the operand roles the table gives it (`ptx_isa::roles_for`: count,
//! destinations and sources under the ISA's type rules, predicates, immediates, addresses),
//! with hand rules for the irregular few the roles name (`mov`, `ld`/`st`, atomics, calls,
//! `cvt`, barriers). Memory operands are checked against the variables they name (state space,
//! read-only input parameters), and constant expressions for division by zero. The result,
//! [`Checked`], carries the
//! diagnostics and the side tables later stages need: the effective version and target, the
//! module symbols, and per function its symbols, labels and the resolution of every name use.
//!
//! The checker never panics on any tree the parser produces, including partial trees after
//! syntax errors; where something is missing it says nothing rather than guess. False
//! positives on real compiler output are treated as bugs: when in doubt, accept.

pub mod codes;
mod consts;
pub mod examples;
pub mod fuzz;
mod header;
mod insn;
mod limits;
mod scope;
mod support;
mod types;

pub use codes::EXPLANATIONS;
pub use scope::{FunctionTable, NameRef, Symbol, SymbolKind};
pub use support::support;

use ptx_diag::Diagnostic;
use ptx_isa::{PtxVersion, SmTarget};
use ptx_syntax::ast::Module;

/// Options of a check run.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// `--target sm_XX`: replaces the module's `.target` for every version and target gate.
    pub target_override: Option<String>,
}

/// The result of checking a module: diagnostics plus side tables for lowering.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// Errors and warnings, in source order per function (header first).
    pub diagnostics: Vec<Diagnostic>,
    /// The module's `.version`, if it had a valid one.
    pub version: Option<PtxVersion>,
    /// The effective target: the override if given and valid, else the module's `.target`.
    pub target: Option<SmTarget>,
    /// `.address_size` (64 when absent, as ptxas assumes for 64-bit hosts).
    pub address_size: u32,
    /// Module-level symbols: variables and functions, in declaration order.
    pub module_symbols: Vec<Symbol>,
    /// One table per function definition (a `.entry`/`.func` with a body), in module order.
    pub functions: Vec<FunctionTable>,
}

impl Checked {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// The checker stops after this many diagnostics (the parser too stops after 1000 errors, and
/// only the first 1000 errors of a file are shown), so that a file with a million errors is
/// checked, and reported, in bounded time and memory; the last one says checking stopped.
pub const MAX_DIAGNOSTICS: usize = 1000;

/// Checks `module`, never mutating it. See the crate documentation for what is checked.
pub fn check_module(module: &Module, opts: &CheckOptions) -> Checked {
    let mut diags = Vec::new();
    let header = header::check_header(module, opts, &mut diags);
    let mut out = Checked {
        version: header.version,
        target: header.target,
        address_size: header.address_size,
        ..Checked::default()
    };
    let globals = scope::ModuleTable::build(module, &mut diags);
    for (index, d) in module.directives.iter().enumerate() {
        if let ptx_syntax::ast::Directive::Function(f) = d {
            if let Some(table) = scope::check_function(f, index, &globals, &header, &mut diags) {
                out.functions.push(table);
            }
            if diags.len() >= MAX_DIAGNOSTICS {
                // as the parser does: stop, and say so once
                let span = diags
                    .last()
                    .and_then(|d| d.primary_span())
                    .unwrap_or_default();
                diags.push(
                    Diagnostic::error(
                        ptx_syntax::codes::TOO_MANY_ERRORS,
                        format!(
                            "too many errors; checking stopped after {MAX_DIAGNOSTICS} diagnostics"
                        ),
                        span,
                    )
                    .with_label_message("checking stopped here"),
                );
                break;
            }
        }
    }
    limits::check_limits(module, &header, &mut diags);
    consts::check_constants(module, &mut diags);
    out.module_symbols = globals.symbols;
    out.diagnostics = diags;
    out
}

#[cfg(test)]
mod tests;

/// Parses `text` and, when its syntax is clean, checks it: every diagnostic, in source order.
/// (Checking a partial tree after syntax errors would only add follow-on errors.)
pub fn check_source(text: &str, opts: &CheckOptions) -> Vec<Diagnostic> {
    let parsed = ptx_syntax::parse(text);
    if ptx_diag::has_errors(&parsed.diagnostics) {
        return parsed.diagnostics;
    }
    let mut diags = parsed.diagnostics;
    diags.extend(check_module(&parsed.module, opts).diagnostics);
    diags.sort_by_key(|d| d.primary_span().map(|s| s.start));
    diags
}
