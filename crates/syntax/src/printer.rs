//! The printer: AST to canonical PTX text (`ptxvm fmt`).
//!
//! The canonical form: one statement per line, bodies indented with one tab per scope level (up to
//! 16 levels),
//! labels one level out, a single space between an opcode and its operands, `, ` between operands,
//! and binary operators without spaces (`[%rd1+4]`). Integer literals keep their base; float
//! literals keep their text. Comments are not part of the AST and are not printed.
//! For every module, `parse(print(m)) == m`.

use crate::ast::*;
use std::fmt::Write;

/// Prints a module as canonical PTX text.
pub fn print_module(m: &Module) -> String {
    let mut p = Printer {
        out: String::with_capacity(4096),
    };
    let mut prev_was_function = false;
    for (i, d) in m.directives.iter().enumerate() {
        let is_function = matches!(d, Directive::Function(_));
        if i > 0 && (is_function || prev_was_function) {
            p.out.push('\n');
        }
        p.directive(d);
        prev_was_function = is_function;
    }
    p.out
}

/// Prints one instruction (without indentation or newline), e.g. `@%p1 bra $L__BB0_2;`.
pub fn print_instruction(i: &Instruction) -> String {
    let mut p = Printer { out: String::new() };
    p.instruction(i);
    p.out
}

/// Prints one expression.
pub fn print_expr(e: &Expr) -> String {
    let mut p = Printer { out: String::new() };
    p.expr(e, 0);
    p.out
}

struct Printer {
    out: String,
}

const UNARY_PREC: u8 = 11;
/// Indentation stops growing at this depth.
const MAX_INDENT: usize = 16;

impl Printer {
    fn indent(&mut self, n: usize) {
        // Deeper scopes share the last indentation level, so output stays linear in the input
        // even for thousands of nested `{ }`.
        for _ in 0..n.min(MAX_INDENT) {
            self.out.push('\t');
        }
    }

    fn directive(&mut self, d: &Directive) {
        match d {
            Directive::Version { major, minor, .. } => {
                let _ = writeln!(self.out, ".version {major}.{minor}");
            }
            Directive::Target { targets, .. } => {
                self.out.push_str(".target ");
                self.words(targets);
                self.out.push('\n');
            }
            Directive::AddressSize { bits, .. } => {
                let _ = writeln!(self.out, ".address_size {bits}");
            }
            Directive::File(f) => {
                let _ = write!(self.out, ".file {} \"{}\"", f.index, f.path.text);
                for x in &f.extra {
                    let _ = write!(self.out, ", {x}");
                }
                self.out.push('\n');
            }
            Directive::Section(s) => self.section(s),
            Directive::Dwarf(w) | Directive::Preprocessor(w) => {
                self.out.push_str(&w.text);
                self.out.push('\n');
            }
            Directive::Pragma(p) => {
                self.pragma(p);
                self.out.push('\n');
            }
            Directive::Variable(v) => {
                self.var_decl(v);
                self.out.push_str(";\n");
            }
            Directive::Function(f) => self.function(f),
            Directive::Alias { alias, aliasee, .. } => {
                let _ = writeln!(self.out, ".alias {}, {};", alias.text, aliasee.text);
            }
            Directive::DebugLoc(l) => {
                self.loc(l);
                self.out.push('\n');
            }
        }
    }

    fn words(&mut self, ws: &[Word]) {
        for (i, w) in ws.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(&w.text);
        }
    }

    fn section(&mut self, s: &Section) {
        let _ = writeln!(self.out, ".section {}\n{{", s.name.text);
        for item in &s.items {
            match item {
                SectionItem::Label(l) => {
                    let _ = writeln!(self.out, "{}:", l.text);
                }
                SectionItem::Data { ty, values, .. } => {
                    self.out.push('\t');
                    self.out.push_str(&ty.text);
                    self.out.push(' ');
                    for (i, v) in values.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.expr(v, 0);
                    }
                    self.out.push('\n');
                }
            }
        }
        self.out.push_str("}\n");
    }

    fn pragma(&mut self, p: &Pragma) {
        self.out.push_str(".pragma ");
        for (i, s) in p.strings.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "\"{}\"", s.text);
        }
        self.out.push(';');
    }

    fn loc(&mut self, l: &LocDirective) {
        let _ = write!(self.out, ".loc {} {} {}", l.file, l.line, l.column);
        if let Some(f) = &l.function_name {
            self.out.push_str(", function_name ");
            self.expr(f, 0);
        }
        if let Some([f, li, c]) = l.inlined_at {
            let _ = write!(self.out, ", inlined_at {f} {li} {c}");
        }
    }

    fn var_decl(&mut self, v: &VarDecl) {
        if let Some(l) = v.linkage {
            self.out.push_str(l.as_str());
            self.out.push(' ');
        }
        self.out.push_str(&v.space.text);
        if let Some(b) = v.bank {
            let _ = write!(self.out, "[{b}]");
        }
        if !v.attributes.is_empty() {
            self.out.push_str(" .attribute(");
            self.words(&v.attributes);
            self.out.push(')');
        }
        if let Some(a) = v.align {
            let _ = write!(self.out, " .align {a}");
        }
        if let Some(vec) = &v.vector {
            self.out.push(' ');
            self.out.push_str(&vec.text);
        }
        self.out.push(' ');
        self.out.push_str(&v.ty.text);
        if let Some(p) = &v.ptr {
            self.out.push_str(" .ptr");
            if let Some(s) = &p.space {
                self.out.push(' ');
                self.out.push_str(&s.text);
            }
            if let Some(a) = p.align {
                let _ = write!(self.out, " .align {a}");
            }
        }
        for (i, d) in v.declarators.iter().enumerate() {
            self.out.push_str(if i == 0 { " " } else { ", " });
            self.out.push_str(&d.name.text);
            if let Some(n) = d.count {
                let _ = write!(self.out, "<{n}>");
            }
            for dim in &d.dims {
                self.out.push('[');
                if let Some(e) = dim {
                    self.expr(e, 0);
                }
                self.out.push(']');
            }
            if let Some(init) = &d.init {
                self.out.push_str(" = ");
                self.initializer(init);
            }
        }
    }

    fn initializer(&mut self, i: &Initializer) {
        match i {
            Initializer::Expr(e) => self.expr(e, 0),
            Initializer::List(items, _) => {
                self.out.push('{');
                for (k, it) in items.iter().enumerate() {
                    if k > 0 {
                        self.out.push_str(", ");
                    }
                    self.initializer(it);
                }
                self.out.push('}');
            }
            Initializer::Field(name, v) => {
                self.out.push_str(&name.text);
                self.out.push_str(" = ");
                self.initializer(v);
            }
        }
    }

    fn params(&mut self, ps: &[VarDecl], multiline: bool) {
        self.out.push('(');
        for (i, p) in ps.iter().enumerate() {
            if multiline {
                self.out.push_str("\n\t");
            } else if i > 0 {
                self.out.push(' ');
            }
            self.var_decl(p);
            if i + 1 < ps.len() {
                self.out.push(',');
            }
        }
        if multiline && !ps.is_empty() {
            self.out.push('\n');
        }
        self.out.push(')');
    }

    fn function(&mut self, f: &Function) {
        if let Some(l) = f.linkage {
            self.out.push_str(l.as_str());
            self.out.push(' ');
        }
        self.out.push_str(match f.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        });
        if let Some(r) = &f.returns {
            self.params(r, false);
            self.out.push(' ');
        }
        self.out.push_str(&f.name.text);
        if let Some(ps) = &f.params {
            self.params(ps, true);
        }
        for a in &f.attrs {
            self.out.push('\n');
            match a {
                FunctionAttr::Directive { name, args } => {
                    self.out.push_str(&name.text);
                    for (i, x) in args.iter().enumerate() {
                        self.out.push_str(if i == 0 { " " } else { ", " });
                        let _ = write!(self.out, "{x}");
                    }
                }
                FunctionAttr::Pragma(p) => self.pragma(p),
            }
        }
        match &f.body {
            None => self.out.push_str(";\n"),
            Some(b) => {
                self.out.push_str("\n{\n");
                self.body(b);
                self.out.push_str("}\n");
            }
        }
    }

    fn body(&mut self, b: &Body) {
        let mut depth = 1usize;
        for s in &b.statements {
            match s {
                Statement::Label(l) => {
                    self.indent(depth - 1);
                    self.out.push_str(&l.text);
                    self.out.push_str(":\n");
                    continue;
                }
                Statement::ScopeEnd(_) => {
                    depth = depth.saturating_sub(1).max(1);
                    self.indent(depth);
                    self.out.push_str("}\n");
                    continue;
                }
                _ => {}
            }
            self.indent(depth);
            match s {
                Statement::Instruction(i) => self.instruction(i),
                Statement::Variable(v) => {
                    self.var_decl(v);
                    self.out.push(';');
                }
                Statement::ScopeBegin(_) => {
                    self.out.push('{');
                    depth += 1;
                }
                Statement::DebugLoc(l) => self.loc(l),
                Statement::Pragma(p) => self.pragma(p),
                Statement::CallPrototype(c) => {
                    let _ = write!(self.out, "{}: .callprototype ", c.name.text);
                    if let Some(r) = &c.returns {
                        self.params(r, false);
                        self.out.push(' ');
                    }
                    self.out.push('_');
                    if let Some(ps) = &c.params {
                        self.out.push(' ');
                        self.params(ps, false);
                    }
                    if c.noreturn {
                        self.out.push_str(" .noreturn");
                    }
                    self.out.push(';');
                }
                Statement::CallTargets { name, targets, .. } => {
                    let _ = write!(self.out, "{}: .calltargets ", name.text);
                    self.words(targets);
                    self.out.push(';');
                }
                Statement::BranchTargets { name, targets, .. } => {
                    let _ = write!(self.out, "{}: .branchtargets ", name.text);
                    for (i, (l, n)) in targets.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.out.push_str(&l.text);
                        if let Some(n) = n {
                            let _ = write!(self.out, "<{n}>");
                        }
                    }
                    self.out.push(';');
                }
                Statement::Preprocessor(w) | Statement::Dwarf(w) => self.out.push_str(&w.text),
                Statement::Other { name, args, .. } => {
                    self.out.push_str(&name.text);
                    for (i, a) in args.iter().enumerate() {
                        self.out.push_str(if i == 0 { " " } else { ", " });
                        self.expr(a, 0);
                    }
                    self.out.push(';');
                }
                Statement::Label(_) | Statement::ScopeEnd(_) => {}
            }
            self.out.push('\n');
        }
    }

    fn instruction(&mut self, i: &Instruction) {
        if let Some(g) = &i.guard {
            self.out.push('@');
            if g.negated {
                self.out.push('!');
            }
            self.out.push_str(&g.pred.text);
            self.out.push(' ');
        }
        self.out.push_str(&i.opcode.text);
        for m in &i.modifiers {
            self.out.push_str(&m.text);
        }
        for (k, op) in i.operands.iter().enumerate() {
            self.out.push_str(if k == 0 { " " } else { ", " });
            self.operand(op);
        }
        self.out.push(';');
    }

    fn operand(&mut self, op: &Operand) {
        match op {
            // Operands are printed above `|`, so that `(a|b)` keeps its parentheses and does not
            // read back as the predicate pair `a|b`.
            Operand::Expr(e) => self.expr(e, BinaryOp::BitXor.precedence()),
            Operand::Vector(items, _) => {
                self.out.push('{');
                self.operand_list(items);
                self.out.push('}');
            }
            Operand::List(items, _) => {
                self.out.push('(');
                self.operand_list(items);
                self.out.push(')');
            }
            Operand::Address(a) => {
                self.out.push('[');
                self.operand_list(&a.items);
                self.out.push(']');
                if let Some(s) = &a.suffix {
                    self.out.push_str(&s.text);
                }
            }
            Operand::Pair(a, b) => {
                self.operand(a);
                self.out.push('|');
                self.operand(b);
            }
        }
    }

    fn operand_list(&mut self, items: &[Operand]) {
        for (k, it) in items.iter().enumerate() {
            if k > 0 {
                self.out.push_str(", ");
            }
            self.operand(it);
        }
    }

    /// Prints `e`, parenthesised if its binding is weaker than `min`.
    fn expr(&mut self, e: &Expr, min: u8) {
        match &e.kind {
            ExprKind::Int {
                value,
                unsigned_suffix,
                radix,
            } => {
                let _ = match radix {
                    Radix::Decimal => write!(self.out, "{value}"),
                    Radix::Hex => write!(self.out, "0x{value:X}"),
                    Radix::Octal => write!(self.out, "0{value:o}"),
                    Radix::Binary => write!(self.out, "0b{value:b}"),
                };
                if *unsigned_suffix {
                    self.out.push('U');
                }
            }
            ExprKind::F32Bits(b) => {
                let _ = write!(self.out, "0f{b:08X}");
            }
            ExprKind::F64Bits(b) => {
                let _ = write!(self.out, "0d{b:016X}");
            }
            ExprKind::Float(t) | ExprKind::Symbol(t) => self.out.push_str(t),
            ExprKind::Sink => self.out.push('_'),
            ExprKind::Unary(op, inner) => {
                let paren = min > UNARY_PREC;
                if paren {
                    self.out.push('(');
                }
                self.out.push(match op {
                    UnaryOp::Neg => '-',
                    UnaryOp::Plus => '+',
                    UnaryOp::Not => '!',
                    UnaryOp::BitNot => '~',
                });
                self.expr(inner, UNARY_PREC);
                if paren {
                    self.out.push(')');
                }
            }
            ExprKind::Binary(op, a, b) => {
                let p = op.precedence();
                let paren = p < min;
                if paren {
                    self.out.push('(');
                }
                self.expr(a, p);
                // `a%b` would lex as `a` followed by the identifier `%b`.
                if *op == BinaryOp::Rem {
                    self.out.push_str(" % ");
                } else {
                    self.out.push_str(op.as_str());
                }
                self.expr(b, p + 1);
                if paren {
                    self.out.push(')');
                }
            }
            ExprKind::Conditional(c, a, b) => {
                let paren = min > 0;
                if paren {
                    self.out.push('(');
                }
                self.expr(c, 1);
                self.out.push('?');
                self.expr(a, 0);
                self.out.push(':');
                self.expr(b, 0);
                if paren {
                    self.out.push(')');
                }
            }
            ExprKind::Cast(ty, inner) => {
                let paren = min > UNARY_PREC;
                if paren {
                    self.out.push('(');
                }
                let _ = write!(self.out, "({ty})");
                self.expr(inner, UNARY_PREC);
                if paren {
                    self.out.push(')');
                }
            }
            ExprKind::Index(a, i) => {
                self.expr(a, UNARY_PREC + 1);
                self.out.push('[');
                self.expr(i, 0);
                self.out.push(']');
            }
            ExprKind::Select(a, sel) => {
                self.expr(a, UNARY_PREC + 1);
                self.out.push_str(sel);
            }
            ExprKind::Generic(inner) => {
                self.out.push_str("generic(");
                self.expr(inner, 0);
                self.out.push(')');
            }
            ExprKind::Mask(m, inner) => {
                let _ = write!(self.out, "0x{m:X}(");
                self.expr(inner, 0);
                self.out.push(')');
            }
        }
    }
}
