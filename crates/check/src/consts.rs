//! Constant expressions that have no value: an integer division or remainder by zero, in an
//! instruction operand, a variable's initializer or an array size, anywhere in the module
//! (ptxas: "Constant expression has division by zero", on the expression's line).

use crate::codes;
use ptx_diag::Diagnostic;
use ptx_syntax::ast::{Directive, Expr, Initializer, Module, Operand, Statement, VarDecl};
use ptx_syntax::constexpr::division_by_zero;

fn expr(e: &Expr, diags: &mut Vec<Diagnostic>) {
    // bounded like the other passes: a file of a million bad expressions is not a million errors
    if diags.len() >= crate::MAX_DIAGNOSTICS {
        return;
    }
    if let Some(d) = division_by_zero(e) {
        diags.push(
            Diagnostic::error(
                codes::CONST_DIV_ZERO,
                "constant expression has division by zero",
                d.loc.0,
            )
            .with_label_message("the divisor is a constant zero")
            .with_help(
                "integer division and remainder by zero have no value in PTX; fix the divisor",
            ),
        );
    }
}

fn operand(o: &Operand, diags: &mut Vec<Diagnostic>) {
    match o {
        Operand::Expr(e) => expr(e, diags),
        Operand::Vector(items, _) | Operand::List(items, _) => {
            items.iter().for_each(|i| operand(i, diags))
        }
        Operand::Address(a) => a.items.iter().for_each(|i| operand(i, diags)),
        Operand::Pair(a, b) => {
            operand(a, diags);
            operand(b, diags);
        }
    }
}

fn initializer(i: &Initializer, diags: &mut Vec<Diagnostic>) {
    match i {
        Initializer::Expr(e) => expr(e, diags),
        Initializer::List(items, _) => items.iter().for_each(|i| initializer(i, diags)),
        Initializer::Field(_, v) => initializer(v, diags),
    }
}

fn variable(v: &VarDecl, diags: &mut Vec<Diagnostic>) {
    for d in &v.declarators {
        d.dims.iter().flatten().for_each(|e| expr(e, diags));
        if let Some(i) = &d.init {
            initializer(i, diags);
        }
    }
}

/// Reports every division by a constant zero of `module`.
pub(crate) fn check_constants(module: &Module, diags: &mut Vec<Diagnostic>) {
    for d in &module.directives {
        match d {
            Directive::Variable(v) => variable(v, diags),
            Directive::Function(f) => {
                for s in f.body.iter().flat_map(|b| &b.statements) {
                    match s {
                        Statement::Variable(v) => variable(v, diags),
                        Statement::Instruction(ins) => {
                            ins.operands.iter().for_each(|o| operand(o, diags))
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}
