//! Symbol tables: module symbols, function scopes, labels, and name resolution.

use crate::codes;
use crate::header::Header;
use crate::insn;
use crate::insn::call::{Callee, Signature};
use crate::types::is_register_type;
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{edit_distance, special_register, ScalarType, StateSpace};
use ptx_syntax::ast::{
    Directive, Expr, ExprKind, Function, FunctionAttr, Linkage, Module, Name, Operand, Statement,
    VarDecl, Word,
};
use std::collections::HashMap;

/// What a declared name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A `.reg` register (or a parameterized family `%r<N>`).
    Register,
    /// A variable in a memory state space (`.global`, `.shared`, `.local`, `.const`, …).
    Variable,
    /// A function or kernel parameter.
    Param,
    /// A return parameter of a `.func`.
    ReturnParam,
    /// A `.func` or `.entry`.
    Function,
    /// A `.callprototype` label.
    Prototype,
    /// A `.calltargets` list label.
    CallTargets,
    /// A `.branchtargets` list label.
    BranchTargets,
}

/// A declared name with what later stages need to know about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The name as declared (for a family `%r<N>`, the stem `%r`).
    pub name: Name,
    /// What it is.
    pub kind: SymbolKind,
    /// The state space, when it has one.
    pub space: Option<StateSpace>,
    /// The element type, when it is a fundamental type.
    pub ty: Option<ScalarType>,
    /// The type word as written (`.u32`, `.texref`, `.b8`).
    pub type_name: Name,
    /// Vector width (1 for scalars, 2/4/8 for `.v2`/`.v4`/`.v8`).
    pub vector: u32,
    /// For a parameterized family `%r<N>`, the count `N`.
    pub count: Option<u64>,
    /// Declared with array dimensions.
    pub array: bool,
    /// For an array whose dimensions are all constants, the number of elements (the product
    /// of the dimensions).
    pub elements: Option<u64>,
    /// The `.align N` of the declaration, in bytes.
    pub align: Option<u64>,
    /// The scope it was declared in (0: function parameters, 1: the body, deeper for blocks;
    /// module symbols use 0).
    pub scope: u32,
    /// Where the name was declared.
    pub span: Span,
}

/// What a use of a name resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRef {
    /// A symbol of the function's table (index into [`FunctionTable::symbols`]).
    Local(usize),
    /// A module symbol (index into [`crate::Checked::module_symbols`]).
    Module(usize),
    /// A label: the index of its [`Statement::Label`] in the body.
    Label(usize),
    /// A special register such as `%tid.x`.
    Special,
}

/// The side table of one function definition.
#[derive(Clone, Debug, Default)]
pub struct FunctionTable {
    /// The function's name.
    pub name: Name,
    /// Index of the function in `Module::directives`.
    pub directive: usize,
    /// Parameters, return parameters and every local declaration, in order.
    pub symbols: Vec<Symbol>,
    /// Labels and the index of the statement that defines each.
    pub labels: HashMap<Name, usize>,
    /// Every resolved use of a name: the span of the use and what it names.
    pub uses: Vec<(Span, NameRef)>,
}

/// Module-level names.
pub(crate) struct ModuleTable<'m> {
    pub symbols: Vec<Symbol>,
    pub by_name: HashMap<Name, usize>,
    /// For functions: the AST declaration with its parameter lists (the definition if any).
    pub functions: HashMap<Name, &'m Function>,
    /// Opcodes with modifiers (`ld.global.nc.v4.f32`) whose opcode, modifier and gate checks
    /// passed, with what they resolved to: those checks depend on nothing else (the header is
    /// fixed for the module), so a repeated spelling skips them and is not resolved again.
    pub opcodes_ok: std::cell::RefCell<HashMap<String, crate::insn::Resolution>>,
}

fn vector_width(v: &VarDecl) -> u32 {
    v.vector
        .as_ref()
        .and_then(|w| w.text.strip_prefix(".v"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

fn symbols_of(v: &VarDecl, kind: SymbolKind, scope: u32) -> impl Iterator<Item = Symbol> + '_ {
    let space = StateSpace::from_suffix(&v.space.text);
    let ty = ScalarType::from_suffix(&v.ty.text);
    v.declarators.iter().map(move |d| Symbol {
        name: d.name.text.clone(),
        kind,
        space,
        ty,
        type_name: v.ty.text.clone(),
        vector: vector_width(v),
        count: d.count,
        array: !d.dims.is_empty(),
        elements: constant_elements(&d.dims),
        align: v.align,
        scope,
        span: d.name.loc.0,
    })
}

/// The number of elements of an array declared with constant dimensions (`[4][2]` gives 8);
/// `None` for a scalar or when a dimension is left out or not a plain integer.
pub(crate) fn constant_elements(dims: &[Option<Expr>]) -> Option<u64> {
    if dims.is_empty() {
        return None;
    }
    dims.iter()
        .try_fold(1u64, |acc, d| match d.as_ref().map(|e| &e.kind) {
            Some(ExprKind::Int { value, .. }) => acc.checked_mul(*value),
            _ => None,
        })
}

/// The `{ }` block (numbered as the checker numbers them) that statement `at` of `statements`
/// lies in. Only called for a label defined twice, so the rescan is rare.
fn label_block(statements: &[Statement], at: usize) -> usize {
    let mut blocks = vec![0usize];
    let mut next = 0usize;
    for st in &statements[..at] {
        match st {
            Statement::ScopeBegin(_) => {
                next += 1;
                blocks.push(next);
            }
            Statement::ScopeEnd(_) if blocks.len() > 1 => {
                blocks.pop();
            }
            _ => {}
        }
    }
    blocks.last().copied().unwrap_or(0)
}

fn duplicate(name: &str, span: Span, prev: Span, what: &str) -> Diagnostic {
    Diagnostic::error(
        codes::DUPLICATE,
        format!("duplicate definition of {what} `{name}`"),
        span,
    )
    .with_label_message("declared again here")
    .with_secondary(prev, "first declared here")
    .with_help("rename one of them, or declare it in a nested `{ }` block to shadow the outer one")
}

impl Symbol {
    /// A symbol without a storage type (function, prototype, target list), in the outermost scope.
    fn untyped(name: &ptx_syntax::ast::Word, kind: SymbolKind) -> Symbol {
        Symbol {
            name: name.text.clone(),
            kind,
            space: None,
            ty: None,
            type_name: Name::default(),
            vector: 1,
            count: None,
            array: false,
            elements: None,
            align: None,
            scope: 0,
            span: name.loc.0,
        }
    }
}

impl<'m> ModuleTable<'m> {
    pub(crate) fn build(module: &'m Module, diags: &mut Vec<Diagnostic>) -> ModuleTable<'m> {
        let mut t = ModuleTable {
            symbols: Vec::new(),
            by_name: HashMap::new(),
            functions: HashMap::new(),
            opcodes_ok: Default::default(),
        };
        // Whether each symbol is a definition (not `.extern`, or a function with a body) and
        // whether it may be defined more than once (`.weak`, `.common`).
        let mut defined: Vec<(bool, bool)> = Vec::new();
        for d in &module.directives {
            match d {
                Directive::Variable(v) => {
                    let is_def = v.linkage != Some(Linkage::Extern);
                    let weak = matches!(v.linkage, Some(Linkage::Weak | Linkage::Common));
                    for s in symbols_of(v, SymbolKind::Variable, 0).collect::<Vec<_>>() {
                        t.add(s, is_def, weak, &mut defined, diags);
                    }
                }
                Directive::Function(f) => {
                    let is_def = f.body.is_some();
                    let weak = matches!(f.linkage, Some(Linkage::Weak | Linkage::Common));
                    let s = Symbol::untyped(&f.name, SymbolKind::Function);
                    if let Some(&i) = t.by_name.get(&f.name.text) {
                        if t.symbols[i].kind == SymbolKind::Function {
                            if is_def && defined[i].0 && !(weak || defined[i].1) {
                                // ptxas names the line of the second body's opening brace
                                let at = f.body.as_ref().map_or(s.span, |b| b.open.0);
                                diags.push(
                                    Diagnostic::error(
                                        codes::DUPLICATE,
                                        format!("duplicate definition of function `{}`", f.name.text),
                                        at,
                                    )
                                    .with_label_message("a second body")
                                    .with_secondary(s.span, "for this function")
                                    .with_secondary(t.symbols[i].span, "first declared here")
                                    .with_help("a function has one definition: remove one body, or rename one function"),
                                );
                            }
                            if is_def {
                                defined[i].0 = true;
                                t.functions.insert(f.name.text.clone(), f);
                            }
                            continue;
                        }
                    }
                    t.functions.entry(f.name.text.clone()).or_insert(f);
                    t.add(s, is_def, weak, &mut defined, diags);
                }
                _ => {}
            }
        }
        t
    }

    fn add(
        &mut self,
        s: Symbol,
        is_def: bool,
        weak: bool,
        defined: &mut Vec<(bool, bool)>,
        diags: &mut Vec<Diagnostic>,
    ) {
        if let Some(&i) = self.by_name.get(&s.name) {
            let prev = &self.symbols[i];
            let clash = prev.kind != s.kind || (is_def && defined[i].0 && !(weak || defined[i].1));
            if clash {
                let what = if s.kind == SymbolKind::Function {
                    "function"
                } else {
                    "variable"
                };
                diags.push(duplicate(&s.name, s.span, prev.span, what));
            } else if is_def {
                defined[i].0 = true;
            }
            return;
        }
        self.by_name.insert(s.name.clone(), self.symbols.len());
        self.symbols.push(s);
        defined.push((is_def, weak));
    }
}

/// One block's names: exact names and parameterized families.
#[derive(Default)]
struct Frame {
    names: HashMap<Name, usize>,
    families: Vec<usize>,
    /// The `{ }` block this frame is (0: the function body; blocks are numbered in order of
    /// their opening brace).
    block: usize,
}

/// The checker of one function body.
pub(crate) struct FnChecker<'a, 'm> {
    pub globals: &'a ModuleTable<'m>,
    pub header: &'a Header,
    pub table: FunctionTable,
    frames: Vec<Frame>,
    pub diags: &'a mut Vec<Diagnostic>,
    label_spans: HashMap<Name, Span>,
    /// Labels defined more than once, each in a different `{ }` block (inline-asm bodies such
    /// as CUTLASS's `LAB_WAIT:`/`DONE:` loops repeat their labels in every copy): the block and
    /// statement of each definition. A use resolves to the one of the innermost enclosing block.
    label_sites: HashMap<Name, Vec<(usize, usize)>>,
    protos: HashMap<Name, usize>,
    /// The signature of each `.callprototype`, by label.
    pub prototypes: HashMap<Name, Signature>,
    /// The functions of each `.calltargets` list, by label.
    pub call_targets: HashMap<Name, Vec<Word>>,
}

/// What a name resolved to, with the declaration when it is a symbol.
pub(crate) enum Resolved<'s> {
    Symbol(&'s Symbol),
    Label,
    Special,
    Unknown,
}

impl<'a, 'm> FnChecker<'a, 'm> {
    fn lookup_local(&self, name: &str) -> Option<usize> {
        // the ways `name` splits into a family stem and a number (`%r12`: `%r1` 2, `%r` 12),
        // worked out once rather than once per family in scope
        let mut splits = [("", 0u64); 20];
        let mut n_splits = 0;
        for split in ptx_syntax::ast::family_splits(name) {
            if n_splits == splits.len() {
                break;
            }
            splits[n_splits] = split;
            n_splits += 1;
        }
        let splits = &splits[..n_splits];
        for f in self.frames.iter().rev() {
            if let Some(&i) = f.names.get(name) {
                return Some(i);
            }
            if splits.is_empty() {
                continue;
            }
            for &i in &f.families {
                let s = &self.table.symbols[i];
                if splits
                    .iter()
                    .any(|&(stem, n)| stem == s.name && Some(n) < s.count)
                {
                    return Some(i);
                }
            }
        }
        None
    }

    /// The statement defining label `name` as seen from the current block: for a label defined
    /// in several blocks, the definition of the innermost enclosing one (none when no enclosing
    /// block defines it).
    fn label(&self, name: &str) -> Option<usize> {
        match self.label_sites.get(name) {
            None => self.table.labels.get(name).copied(),
            Some(sites) => self.frames.iter().rev().find_map(|f| {
                sites
                    .iter()
                    .find(|&&(block, _)| block == f.block)
                    .map(|&(_, i)| i)
            }),
        }
    }

    /// Resolves a name without reporting anything.
    pub(crate) fn resolve(&self, name: &str) -> Resolved<'_> {
        if let Some(i) = self.lookup_local(name) {
            return Resolved::Symbol(&self.table.symbols[i]);
        }
        if name.starts_with('%') && special_register(name).is_some() {
            return Resolved::Special;
        }
        if self.label(name).is_some() {
            return Resolved::Label;
        }
        if let Some(&i) = self.protos.get(name) {
            return Resolved::Symbol(&self.table.symbols[i]);
        }
        if let Some(&i) = self.globals.by_name.get(name) {
            return Resolved::Symbol(&self.globals.symbols[i]);
        }
        Resolved::Unknown
    }

    /// Resolves a use, records it, and reports undeclared names. Returns whether it resolved.
    pub(crate) fn use_name(&mut self, name: &str, span: Span) -> bool {
        let r = if let Some(i) = self.lookup_local(name) {
            NameRef::Local(i)
        } else if name.starts_with('%') && special_register(name).is_some() {
            NameRef::Special
        } else if let Some(i) = self.label(name) {
            NameRef::Label(i)
        } else if let Some(&i) = self.protos.get(name) {
            NameRef::Local(i)
        } else if let Some(&i) = self.globals.by_name.get(name) {
            NameRef::Module(i)
        } else if name == "WARP_SZ" {
            NameRef::Special
        } else {
            self.report_undeclared(name, span);
            return false;
        };
        self.table.uses.push((span, r));
        true
    }

    fn visible_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in &self.frames {
            out.extend(f.names.keys().map(|n| n.to_string()));
            for &i in &f.families {
                let s = &self.table.symbols[i];
                if let Some(c) = s.count {
                    for n in 0..c.min(64) {
                        out.push(format!("{}{n}", s.name));
                    }
                }
            }
        }
        // a label of several blocks is visible only inside them: not a suggestion out here
        out.extend(
            self.table
                .labels
                .keys()
                .filter(|n| self.label(n).is_some())
                .map(|n| n.to_string()),
        );
        out.extend(self.globals.by_name.keys().map(|n| n.to_string()));
        out
    }

    fn report_undeclared(&mut self, name: &str, span: Span) {
        let is_reg = name.starts_with('%');
        let (code, what) = if is_reg {
            (codes::UNDECLARED_REGISTER, "register")
        } else {
            (codes::UNDECLARED_SYMBOL, "label or symbol")
        };
        let mut d = Diagnostic::error(code, format!("unknown {what} `{name}`"), span)
            .with_label_message("not declared in this scope");
        // A family declared too small: `%r<2>` and a use of `%r7`.
        let mut family_hint = None;
        for f in &self.frames {
            for &i in &f.families {
                let s = &self.table.symbols[i];
                if ptx_syntax::ast::family_splits(name).any(|(stem, _)| stem == s.name) {
                    let c = s.count.unwrap_or(0);
                    family_hint = Some((
                        s.span,
                        format!(
                            "`{}<{c}>` declares only {}0 to {}{}",
                            s.name,
                            s.name,
                            s.name,
                            c.saturating_sub(1)
                        ),
                    ));
                }
            }
        }
        if let Some((sp, msg)) = family_hint {
            d = d
                .with_secondary(sp, msg)
                .with_help("declare more registers in the family, e.g. raise the `<N>` count");
        } else {
            let limit = (name.chars().count() / 3).max(1);
            let best = self
                .visible_names()
                .into_iter()
                .filter(|c| c.starts_with('%') == is_reg)
                .map(|c| (edit_distance(name, &c), c))
                .filter(|(dist, _)| *dist <= limit)
                .min();
            d = match best {
                Some((_, c)) => d.with_help(format!("did you mean `{c}`?")),
                None if is_reg => {
                    d.with_help(format!("declare it before use, e.g. `.reg .b32 {name};`"))
                }
                None => d.with_help(
                    "define the label in this function, or declare the variable or function",
                ),
            };
        }
        self.diags.push(d);
    }

    fn declare(&mut self, s: Symbol) {
        let Some(frame) = self.frames.last() else {
            return;
        };
        let mut prev: Option<Span> = frame
            .names
            .get(&s.name)
            .map(|&i| self.table.symbols[i].span);
        if prev.is_none() {
            for &i in &frame.families {
                let f = &self.table.symbols[i];
                let clash = match s.count {
                    Some(_) => f.name == s.name,
                    None => ptx_syntax::ast::family_splits(&s.name)
                        .any(|(stem, n)| stem == f.name && Some(n) < f.count),
                };
                if clash {
                    prev = Some(f.span);
                }
            }
        }
        if prev.is_none() {
            if let Some(c) = s.count {
                for (n, &i) in &frame.names {
                    if ptx_syntax::ast::family_splits(n).any(|(stem, k)| stem == s.name && k < c) {
                        prev = Some(self.table.symbols[i].span);
                    }
                }
            }
        }
        if let Some(p) = prev {
            let what = match s.kind {
                SymbolKind::Register => "register",
                SymbolKind::Param | SymbolKind::ReturnParam => "parameter",
                _ => "variable",
            };
            self.diags.push(duplicate(&s.name, s.span, p, what));
            return;
        }
        let i = self.table.symbols.len();
        let is_family = s.count.is_some();
        let name = s.name.clone();
        self.table.symbols.push(s);
        let Some(frame) = self.frames.last_mut() else {
            return;
        };
        if is_family {
            frame.families.push(i);
        } else {
            frame.names.insert(name, i);
        }
    }

    fn declare_var(&mut self, v: &VarDecl, kind: SymbolKind) {
        let depth = self.frames.len().saturating_sub(1) as u32;
        if v.space.text == ".reg" {
            if let Some(t) = ScalarType::from_suffix(&v.ty.text) {
                if !is_register_type(t) {
                    let bits = t.size_bits();
                    self.diags.push(
                        Diagnostic::error(
                            codes::BAD_REGISTER_TYPE,
                            format!("`{}` is not a register type", v.ty.text),
                            v.ty.loc.0,
                        )
                        .with_label_message("registers cannot have this type")
                        .with_help(format!(
                            "declare the register as `.b{bits}`; `{}` instructions \
                             interpret its bits",
                            v.ty.text
                        )),
                    );
                }
            }
        }
        let syms: Vec<Symbol> = symbols_of(v, kind, depth).collect();
        for s in syms {
            self.declare(s);
        }
    }
}

/// Every name an expression mentions, with its span (a special register with its component).
pub(crate) fn expr_names(e: &Expr, out: &mut Vec<(Name, Span)>) {
    match &e.kind {
        ExprKind::Symbol(n) => out.push((n.clone(), e.loc.0)),
        ExprKind::Select(inner, comp) => {
            if let ExprKind::Symbol(n) = &inner.kind {
                if n.starts_with('%') {
                    let full = format!("{n}{comp}");
                    if special_register(&full).is_some() {
                        out.push((Name::from(full), e.loc.0));
                        return;
                    }
                }
            }
            expr_names(inner, out);
        }
        ExprKind::Unary(_, a)
        | ExprKind::Cast(_, a)
        | ExprKind::Generic(a)
        | ExprKind::Mask(_, a) => expr_names(a, out),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            expr_names(a, out);
            expr_names(b, out);
        }
        ExprKind::Conditional(a, b, c) => {
            expr_names(a, out);
            expr_names(b, out);
            expr_names(c, out);
        }
        ExprKind::Int { .. }
        | ExprKind::F32Bits(_)
        | ExprKind::F64Bits(_)
        | ExprKind::Float(_)
        | ExprKind::Sink => {}
    }
}

/// Every name an operand mentions, with its span.
pub(crate) fn operand_names(op: &Operand, out: &mut Vec<(Name, Span)>) {
    match op {
        Operand::Expr(e) => expr_names(e, out),
        Operand::Vector(items, _) | Operand::List(items, _) => {
            for i in items {
                operand_names(i, out);
            }
        }
        Operand::Address(a) => {
            for i in &a.items {
                operand_names(i, out);
            }
        }
        Operand::Pair(a, b) => {
            operand_names(a, out);
            operand_names(b, out);
        }
    }
}

/// Checks one function; returns its table when it has a body.
pub(crate) fn check_function(
    f: &Function,
    index: usize,
    globals: &ModuleTable<'_>,
    header: &Header,
    diags: &mut Vec<Diagnostic>,
) -> Option<FunctionTable> {
    for a in &f.attrs {
        if let FunctionAttr::Directive { name, .. } = a {
            if name.text == ".maxnctapersm" {
                diags.push(
                    Diagnostic::warning(
                        codes::DEPRECATED_DIRECTIVE,
                        "`.maxnctapersm` is deprecated since PTX ISA 2.1",
                        name.loc.0,
                    )
                    .with_help("use `.minnctapersm` instead"),
                );
            }
        }
    }
    let body = f.body.as_ref()?;
    let mut c = FnChecker {
        globals,
        header,
        table: FunctionTable {
            name: f.name.text.clone(),
            directive: index,
            ..FunctionTable::default()
        },
        frames: vec![Frame::default()],
        diags,
        label_spans: HashMap::new(),
        label_sites: HashMap::new(),
        protos: HashMap::new(),
        prototypes: HashMap::new(),
        call_targets: HashMap::new(),
    };
    for p in f.returns.iter().flatten() {
        c.declare_var(p, SymbolKind::ReturnParam);
    }
    for p in f.params.iter().flatten() {
        c.declare_var(p, SymbolKind::Param);
    }
    // Labels and prototype/target-list names are visible in the whole function; a label may be
    // defined again in another `{ }` block (as ptxas allows), and then is visible in its block.
    let mut blocks = vec![0usize];
    let mut next_block = 0usize;
    for (i, st) in body.statements.iter().enumerate() {
        let (name, kind) = match st {
            Statement::ScopeBegin(_) => {
                next_block += 1;
                blocks.push(next_block);
                continue;
            }
            Statement::ScopeEnd(_) => {
                if blocks.len() > 1 {
                    blocks.pop();
                }
                continue;
            }
            Statement::Label(w) => (w, None),
            Statement::CallPrototype(p) => (&p.name, Some(SymbolKind::Prototype)),
            Statement::CallTargets { name, .. } => (name, Some(SymbolKind::CallTargets)),
            Statement::BranchTargets { name, .. } => (name, Some(SymbolKind::BranchTargets)),
            _ => continue,
        };
        let block = blocks.last().copied().unwrap_or(0);
        if let Some(&prev) = c.label_spans.get(&name.text) {
            if let (None, Some(&first)) = (kind, c.table.labels.get(&name.text)) {
                let sites = c
                    .label_sites
                    .entry(name.text.clone())
                    .or_insert_with(|| vec![(label_block(&body.statements, first), first)]);
                if !sites.iter().any(|&(b, _)| b == block) {
                    sites.push((block, i));
                    continue;
                }
            }
            c.diags
                .push(duplicate(&name.text, name.loc.0, prev, "label"));
            continue;
        }
        c.label_spans.insert(name.text.clone(), name.loc.0);
        match kind {
            None => {
                c.table.labels.insert(name.text.clone(), i);
            }
            Some(k) => {
                c.protos.insert(name.text.clone(), c.table.symbols.len());
                c.table.symbols.push(Symbol::untyped(name, k));
            }
        }
        match st {
            Statement::CallPrototype(p) => {
                let sig = Signature::new(&p.returns, &p.params, &p.name, Callee::Prototype);
                c.prototypes.insert(name.text.clone(), sig);
            }
            Statement::CallTargets { targets, .. } => {
                c.call_targets.insert(name.text.clone(), targets.clone());
            }
            _ => {}
        }
    }
    c.frames.push(Frame::default());
    let mut block_count = 0usize;
    for st in &body.statements {
        if c.diags.len() >= crate::MAX_DIAGNOSTICS {
            // too many: check_module says so and stops
            break;
        }
        match st {
            Statement::ScopeBegin(_) => {
                block_count += 1;
                c.frames.push(Frame {
                    block: block_count,
                    ..Frame::default()
                });
            }
            Statement::ScopeEnd(_) if c.frames.len() > 2 => {
                c.frames.pop();
            }
            Statement::Variable(v) => {
                let kind = match v.space.text.as_str() {
                    ".reg" => SymbolKind::Register,
                    ".param" => SymbolKind::Param,
                    _ => SymbolKind::Variable,
                };
                c.declare_var(v, kind);
            }
            Statement::Instruction(ins) => insn::check_instruction(&mut c, ins),
            Statement::CallTargets { targets, .. } => {
                for t in targets {
                    c.use_name(&t.text, t.loc.0);
                }
            }
            Statement::BranchTargets { targets, .. } => {
                for (t, count) in targets {
                    match count {
                        None => {
                            c.use_name(&t.text, t.loc.0);
                        }
                        Some(n) => {
                            for k in 0..*n {
                                c.use_name(&format!("{}{k}", t.text), t.loc.0);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(c.table)
}
