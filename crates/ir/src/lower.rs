//! Lowering: checked AST → IR.
//!
//! Lowering trusts the checker for everything it verifies (declared names, operand shapes) and
//! reports, as diagnostics, only what the IR cannot represent: constructs a checked module may
//! contain that execution does not support (vector registers, `mask()` initializers…), and
//! names the checker did not resolve.
//!
//! There is one name resolver in the project, the checker's: lowering takes its
//! [`ptx_check::Checked`] and, for every name a function body uses, reads what the checker
//! resolved it to (its side table of uses, keyed by the span of the use) instead of looking
//! the name up again; it only maps the checker's symbols to the IR's handles as it declares them.

use crate::{
    build_cfg, post_dominators, Base, Function, FunctionKind, Global, Guard, Handle, Imm, Inst,
    InstId, LocalVar, Module, Operand, Param, RegId, RegInfo, Reloc, SpecialReg, SrcLoc, SymbolRef,
};
use ptx_check::{Checked, FunctionTable, NameRef, SymbolKind};
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{special_register, Modifier, Opcode, ScalarType, StateSpace};
use ptx_syntax::ast::{self, Expr, ExprKind, Initializer, Name, Statement, VarDecl};
use ptx_syntax::constexpr::{eval, Value};
use std::collections::HashMap;

// the codes of lowering, defined in the one registry of the tool (`ptx_diag::codes`)
pub use ptx_diag::codes::lower::{UNRESOLVED, UNSUPPORTED};

/// The predefined constant of PTX: the warp size, 32.
const WARP_SZ: &str = "WARP_SZ";

/// Lowers a module that `checked` (the result of [`ptx_check::check_module`] on it) checked,
/// resolving every name of a function body as the checker did. Errors are diagnostics pointing
/// at the construct.
pub fn lower(module: &ast::Module, checked: &Checked) -> Result<Module, Vec<Diagnostic>> {
    let mut cx = ModuleCx::default();
    cx.collect(module);
    cx.module_refs = checked
        .module_symbols
        .iter()
        .map(|s| cx.decl_at.get(&s.span.start).copied())
        .collect();
    cx.lower_globals(module);
    cx.lower_functions(module, checked);
    if cx.diags.is_empty() {
        Ok(cx.out)
    } else {
        Err(cx.diags)
    }
}

#[derive(Default)]
struct ModuleCx {
    out: Module,
    globals: HashMap<Name, Handle<Global>>,
    /// Module-scope families (`.global .b32 g<N>`): (stem, count, stride, global). A family is
    /// one variable of `count` members `stride` bytes apart, so its cost follows its size, not
    /// its member count.
    families: Vec<(Name, u64, u64, Handle<Global>)>,
    functions: HashMap<Name, Handle<Function>>,
    /// What each module-level declaration (by the start of its name's span) became.
    decl_at: HashMap<u32, ModRef>,
    /// What each of the checker's module symbols became (indexed as `Checked::module_symbols`).
    module_refs: Vec<Option<ModRef>>,
    /// The element size in bytes of each global (indexed as `out.globals`): `A[i]` in an
    /// address is `A + i * size`.
    global_elem: Vec<u64>,
    diags: Vec<Diagnostic>,
}

/// What a module-level declaration lowered to.
#[derive(Clone, Copy, Debug)]
enum ModRef {
    Global(Handle<Global>),
    /// A family: its index in `ModuleCx::families`.
    Family(usize),
    Function(Handle<Function>),
}

fn unsupported(what: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::error(UNSUPPORTED, what, span)
        .with_help("this construct is valid PTX but ptxvm cannot execute it yet")
}

/// Size in bytes of one element of a declared type (`.pred` counts 1).
pub(crate) fn elem_size(ty: &str) -> u64 {
    match ScalarType::from_suffix(ty) {
        Some(t) => (t.size_bits() as u64).div_ceil(8),
        None => 8, // .texref/.samplerref/.surfref handles
    }
}

fn vector_width(v: &VarDecl) -> u64 {
    v.vector
        .as_ref()
        .and_then(|w| w.text.strip_prefix(".v"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

fn const_u64(e: &Expr) -> Option<u64> {
    match eval(e, &|_| None).ok()? {
        Value::Int { bits, .. } => Some(bits),
        _ => None,
    }
}

/// Number of elements of a declarator (product of its dimensions; `[]` takes the initializer's
/// length).
fn element_count(d: &ast::Declarator) -> u64 {
    let mut n = 1u64;
    for (i, dim) in d.dims.iter().enumerate() {
        let k = match dim {
            Some(e) => const_u64(e).unwrap_or(0),
            None if i == 0 => match &d.init {
                Some(Initializer::List(items, _)) => items.len() as u64,
                _ => 0,
            },
            None => 0,
        };
        n = n.saturating_mul(k);
    }
    n
}

fn var_layout(v: &VarDecl, d: &ast::Declarator) -> (u64, u64) {
    let elem = elem_size(&v.ty.text) * vector_width(v);
    let size = elem.saturating_mul(element_count(d));
    let natural = elem.clamp(1, 16);
    (size, v.align.unwrap_or(natural).max(1))
}

/// `x` rounded up to a multiple of `a` (saturating: sizes come from the program, and one near
/// 2^64 is refused at launch, never wrapped).
fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

impl ModuleCx {
    fn collect(&mut self, module: &ast::Module) {
        for d in &module.directives {
            match d {
                ast::Directive::File(f) => {
                    self.out.files.push((f.index, f.path.text.to_string()));
                }
                ast::Directive::AddressSize { bits, .. } => self.out.address_size = *bits,
                ast::Directive::Variable(v) => {
                    for decl in &v.declarators {
                        let (size, align) = var_layout(v, decl);
                        let idx = self.out.globals.len() as u32;
                        let (name, size) = match decl.count {
                            Some(n) => {
                                let stride = align_up(size, align);
                                let stem = decl.name.text.clone();
                                self.decl_at.insert(
                                    decl.name.loc.0.start,
                                    ModRef::Family(self.families.len()),
                                );
                                self.families.push((stem, n, stride, Handle::new(idx)));
                                (
                                    Name::from(format!("{}<{n}>", decl.name.text)),
                                    stride.saturating_mul(n),
                                )
                            }
                            None => {
                                let name = decl.name.text.clone();
                                if self.globals.contains_key(&name) {
                                    continue;
                                }
                                self.globals.insert(name.clone(), Handle::new(idx));
                                self.decl_at.insert(
                                    decl.name.loc.0.start,
                                    ModRef::Global(Handle::new(idx)),
                                );
                                (name, size)
                            }
                        };
                        {
                            self.global_elem
                                .push(elem_size(&v.ty.text).saturating_mul(vector_width(v)));
                            self.out.globals.push(Global {
                                name,
                                space: StateSpace::from_suffix(&v.space.text)
                                    .unwrap_or(StateSpace::Global),
                                ty: ScalarType::from_suffix(&v.ty.text),
                                size,
                                align,
                                init: Vec::new(),
                                relocs: Vec::new(),
                                external: v.linkage == Some(ast::Linkage::Extern),
                                span: decl.name.loc.0,
                            });
                        }
                    }
                }
                ast::Directive::Function(f) => {
                    if let Some(&i) = self.functions.get(&f.name.text) {
                        if f.body.is_some() {
                            self.out.functions[i] = header(f);
                        }
                        continue;
                    }
                    let i = self.out.functions.len() as u32;
                    self.functions.insert(f.name.text.clone(), Handle::new(i));
                    self.decl_at
                        .insert(f.name.loc.0.start, ModRef::Function(Handle::new(i)));
                    self.out.functions.push(header(f));
                }
                _ => {}
            }
        }
        if self.out.address_size == 0 {
            self.out.address_size = 64;
        }
    }

    fn lower_globals(&mut self, module: &ast::Module) {
        for d in &module.directives {
            let ast::Directive::Variable(v) = d else {
                continue;
            };
            for decl in &v.declarators {
                let Some(init) = &decl.init else { continue };
                let Some(&idx) = self.globals.get(&decl.name.text) else {
                    continue;
                };
                let g = &self.out.globals[idx];
                let mut data = InitData {
                    bytes: Vec::new(),
                    size: g.size,
                    relocs: Vec::new(),
                    elem: elem_size(&v.ty.text),
                    ty: ScalarType::from_suffix(&v.ty.text),
                    pos: 0,
                };
                if let Err(d) = self.fill(&mut data, init) {
                    self.diags.push(d);
                    continue;
                }
                let g = &mut self.out.globals[idx];
                g.init = data.bytes;
                g.relocs = data.relocs;
            }
        }
    }

    fn fill(&self, data: &mut InitData, init: &Initializer) -> Result<(), Diagnostic> {
        match init {
            Initializer::List(items, _) => {
                for i in items {
                    self.fill(data, i)?;
                }
                Ok(())
            }
            // `.texref t = { filter_mode = … }`: the handle's fields configure texture
            // instructions, which ptxvm does not execute (a kernel that uses them is refused at
            // launch); the variable itself loads as an opaque zero handle
            Initializer::Field(_, _) => {
                data.pos += data.elem;
                Ok(())
            }
            Initializer::Expr(e) => {
                let at = data.pos;
                data.pos += data.elem;
                if at.saturating_add(data.elem) > data.size {
                    return Ok(()); // the checker reports excess initializers
                }
                let generic = contains_generic(e);
                if let Some((name, addend, _)) = symbol_plus_offset(e) {
                    let target = if let Some(&g) = self.globals.get(&name) {
                        SymbolRef::Global(g)
                    } else if let Some(&f) = self.functions.get(&name) {
                        SymbolRef::Function(f)
                    } else {
                        return Err(Diagnostic::error(
                            UNRESOLVED,
                            format!("cannot resolve `{name}` in an initializer"),
                            e.loc.0,
                        ));
                    };
                    let end = (at + data.elem) as usize;
                    if data.bytes.len() < end {
                        data.bytes.resize(end, 0);
                    }
                    data.relocs.push(Reloc {
                        offset: at,
                        size: data.elem as u8,
                        target,
                        addend,
                        generic,
                    });
                    return Ok(());
                }
                let bits = match eval(e, &|_| None) {
                    Ok(v) => value_bits(v, data.ty),
                    Err(_) => {
                        return Err(unsupported(
                            "this initializer expression is not supported",
                            e.loc.0,
                        ))
                    }
                };
                let bytes = bits.to_le_bytes();
                let n = data.elem.min(8) as usize;
                let end = (at + data.elem) as usize;
                if data.bytes.len() < end {
                    data.bytes.resize(end, 0);
                }
                data.bytes[at as usize..at as usize + n].copy_from_slice(&bytes[..n]);
                Ok(())
            }
        }
    }

    fn lower_functions(&mut self, module: &ast::Module, checked: &Checked) {
        // the checker's tables come in module order, one per function with a body
        let mut tables = checked.functions.iter().peekable();
        let none = FunctionTable::default();
        for (index, d) in module.directives.iter().enumerate() {
            let ast::Directive::Function(f) = d else {
                continue;
            };
            let Some(body) = &f.body else { continue };
            while tables.next_if(|t| t.directive < index).is_some() {}
            let table = tables.next_if(|t| t.directive == index).unwrap_or(&none);
            let idx = self.functions[&f.name.text];
            let mut fx = FuncCx::new(self, f, table);
            fx.lower_body(body);
            let FuncCx {
                mut func, diags, ..
            } = fx;
            self.diags.extend(diags);
            func.blocks = build_cfg(&func);
            func.ipdom = post_dominators(&func.blocks);
            self.out.functions[idx] = func;
        }
    }
}

/// The initial bytes of a variable, as long as its initializer reaches (the rest is zero): their
/// length follows the initializer's text, never the declared size.
struct InitData {
    bytes: Vec<u8>,
    size: u64,
    relocs: Vec<Reloc>,
    elem: u64,
    ty: Option<ScalarType>,
    pos: u64,
}

/// The bits of a constant stored as `ty`.
fn value_bits(v: Value, ty: Option<ScalarType>) -> u64 {
    use ptx_isa::TypeKind;
    let float_ty = ty.filter(|t| t.kind() == TypeKind::Float);
    match (v, float_ty) {
        (Value::Int { bits, unsigned }, Some(t)) => {
            let x = if unsigned {
                bits as f64
            } else {
                bits as i64 as f64
            };
            float_bits(x, t)
        }
        (Value::Int { bits, .. }, None) => bits,
        (Value::Float(x), Some(t)) => float_bits(x, t),
        (Value::Float(x), None) => x.to_bits(),
        (Value::F32(b), Some(ScalarType::F64)) => (f32::from_bits(b) as f64).to_bits(),
        (Value::F32(b), _) => b as u64,
    }
}

fn float_bits(x: f64, t: ScalarType) -> u64 {
    match t {
        ScalarType::F64 => x.to_bits(),
        ScalarType::F32 => (x as f32).to_bits() as u64,
        ScalarType::F16 => f64_to_half(x, 5, 10),
        ScalarType::Bf16 => f64_to_half(x, 8, 7),
        _ => x.to_bits(),
    }
}

/// Round-to-nearest-even narrowing of an f64 to a 16-bit float with `e` exponent and `m`
/// mantissa bits (initializers only; execution uses the interpreter's soft-float).
fn f64_to_half(x: f64, e: u32, m: u32) -> u64 {
    let sign = if x.is_sign_negative() { 1u64 << 15 } else { 0 };
    let bias = (1i64 << (e - 1)) - 1;
    let maxexp = (1u64 << e) - 1;
    if x.is_nan() {
        return sign | (maxexp << m) | (1 << (m - 1));
    }
    let a = x.abs();
    if a.is_infinite() {
        return sign | (maxexp << m);
    }
    if a == 0.0 {
        return sign;
    }
    // scale into an integer significand with m fraction bits
    let exp = a.log2().floor() as i64;
    let exp = exp.max(1 - bias);
    let scaled = a / 2f64.powi((exp - m as i64) as i32);
    let mut sig = scaled.round_ties_even() as u64;
    let mut exp = exp;
    if sig >= (2u64 << m) {
        sig >>= 1;
        exp += 1;
    }
    if exp + bias >= maxexp as i64 {
        return sign | (maxexp << m);
    }
    if sig < (1u64 << m) {
        return sign | sig; // subnormal
    }
    sign | (((exp + bias) as u64) << m) | (sig & ((1 << m) - 1))
}

/// `name`, `name+K`, `name-K`, `K+name` (and `generic(name)` in place of `name`), with the
/// span of the name.
fn symbol_plus_offset(e: &Expr) -> Option<(Name, i64, Span)> {
    match &e.kind {
        // `WARP_SZ` is the predefined constant 32, not an address: constant evaluation has it
        ExprKind::Symbol(n) if n.as_str() == WARP_SZ => None,
        ExprKind::Symbol(n) => Some((n.clone(), 0, e.loc.0)),
        ExprKind::Generic(inner) => symbol_plus_offset(inner),
        ExprKind::Binary(ast::BinaryOp::Add, a, b) => {
            if let Some((n, k, sp)) = symbol_plus_offset(a) {
                Some((n, k.wrapping_add(const_u64(b)? as i64), sp))
            } else {
                let (n, k, sp) = symbol_plus_offset(b)?;
                Some((n, k.wrapping_add(const_u64(a)? as i64), sp))
            }
        }
        ExprKind::Binary(ast::BinaryOp::Sub, a, b) => {
            let (n, k, sp) = symbol_plus_offset(a)?;
            Some((n, k.wrapping_sub(const_u64(b)? as i64), sp))
        }
        _ => None,
    }
}

fn contains_generic(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Generic(_) => true,
        ExprKind::Binary(_, a, b) => contains_generic(a) || contains_generic(b),
        _ => false,
    }
}

/// The parameter that declarator `d` of `v` declares, of layout `(size, align)`
/// ([`var_layout`]), at byte `offset` of its list.
fn param(v: &VarDecl, d: &ast::Declarator, (size, align): (u64, u64), offset: u64) -> Param {
    Param {
        name: d.name.text.clone(),
        ty: ScalarType::from_suffix(&v.ty.text),
        type_name: v.ty.text.clone(),
        size,
        align,
        array: !d.dims.is_empty(),
        offset,
        reg: None,
    }
}

fn header(f: &ast::Function) -> Function {
    let mut params = Vec::new();
    let mut offset = 0;
    for v in f.params.iter().flatten() {
        for d in &v.declarators {
            let (size, align) = var_layout(v, d);
            offset = align_up(offset, align);
            params.push(param(v, d, (size, align), offset));
            offset = offset.saturating_add(size);
        }
    }
    let returns = f
        .returns
        .iter()
        .flatten()
        .flat_map(|v| {
            v.declarators
                .iter()
                .map(move |d| param(v, d, var_layout(v, d), 0))
        })
        .collect();
    Function {
        name: f.name.text.clone(),
        kind: match f.kind {
            ast::FunctionKind::Entry => FunctionKind::Entry,
            ast::FunctionKind::Func => FunctionKind::Func,
        },
        defined: f.body.is_some(),
        params,
        returns,
        regs: Vec::new(),
        locals: Vec::new(),
        frame_size: 0,
        frame_align: 1,
        param_size: offset,
        insts: Vec::new(),
        labels: Vec::new(),
        blocks: Vec::new(),
        ipdom: Vec::new(),
        uses_globals: Vec::new(),
        callees: Vec::new(),
        unsupported: Vec::new(),
        attrs: f
            .attrs
            .iter()
            .filter_map(|a| match a {
                ast::FunctionAttr::Directive { name, args } => {
                    Some((name.text.clone(), args.clone()))
                }
                ast::FunctionAttr::Pragma(_) => None,
            })
            .collect(),
        span: f.name.loc.0,
    }
}

/// What a name in a function body refers to.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Reg(RegId),
    Local(Handle<LocalVar>),
    KernelParam(u32),
}

/// A parameterized register family `%r<N>`: its members get a register (and later a slot) only
/// when the body names them, so storage follows the registers a kernel uses, not the count it
/// declares (`.reg .b32 %r<100000000>` with one register used costs one register).
struct Family {
    stem: Name,
    ty: ScalarType,
    members: HashMap<u64, RegId>,
}

/// What one of the checker's function symbols lowered to.
#[derive(Clone, Copy, Debug)]
enum Sym {
    Bound(Binding),
    /// A register family: its index in `FuncCx::families`.
    Family(usize),
}

struct FuncCx<'a> {
    m: &'a ModuleCx,
    func: Function,
    /// The checker's table of this function: its symbols.
    table: &'a FunctionTable,
    /// The checker's resolution of every name use, sorted by span.
    uses: std::borrow::Cow<'a, [(Span, NameRef)]>,
    /// The index in `table.symbols` of the symbol declared at each name span (by its start).
    decl_index: HashMap<u32, usize>,
    /// What each symbol of `table` lowered to, once declared.
    syms: Vec<Option<Sym>>,
    families: Vec<Family>,
    /// The instruction index of each label, by the index of its statement.
    label_at: HashMap<usize, u32>,
    /// The label list of each `.branchtargets`, by its symbol's index in `table`.
    targets: HashMap<usize, Vec<u32>>,
    /// The element size in bytes of each local variable (indexed as `func.locals`).
    local_elem: Vec<u64>,
    diags: Vec<Diagnostic>,
    src: Option<SrcLoc>,
}

impl<'a> FuncCx<'a> {
    fn new(m: &'a ModuleCx, f: &ast::Function, table: &'a FunctionTable) -> FuncCx<'a> {
        let mut func = header(f);
        let mut scope: Vec<(Span, Binding)> = Vec::new();
        match func.kind {
            FunctionKind::Entry => {
                let decls = f.params.iter().flatten().flat_map(|v| &v.declarators);
                for (i, d) in decls.enumerate() {
                    scope.push((d.name.loc.0, Binding::KernelParam(i as u32)));
                }
            }
            FunctionKind::Func => {
                // Parameters live in the function's frame (or in registers for `.reg` params).
                let decls: Vec<(&VarDecl, bool)> = f
                    .params
                    .iter()
                    .flatten()
                    .map(|v| (v, false))
                    .chain(f.returns.iter().flatten().map(|v| (v, true)))
                    .collect();
                let (mut pi, mut ri) = (0usize, 0usize);
                for (v, is_ret) in decls {
                    let is_reg = v.space.text == ".reg";
                    for d in &v.declarators {
                        let p = if is_ret {
                            ri += 1;
                            &mut func.returns[ri - 1]
                        } else {
                            pi += 1;
                            &mut func.params[pi - 1]
                        };
                        if is_reg {
                            let r = RegId::new(func.regs.len() as u32);
                            func.regs.push(RegInfo {
                                name: d.name.text.clone(),
                                ty: p.ty.unwrap_or(ScalarType::B32),
                            });
                            p.reg = Some(r);
                            scope.push((d.name.loc.0, Binding::Reg(r)));
                        } else {
                            let l = func.locals.len() as u32;
                            func.locals.push(LocalVar {
                                name: d.name.text.clone(),
                                space: StateSpace::Param,
                                size: p.size,
                                align: p.align,
                                offset: 0,
                                init: Vec::new(),
                                span: d.name.loc.0,
                            });
                            scope.push((d.name.loc.0, Binding::Local(Handle::new(l))));
                        }
                    }
                }
            }
        }
        // the checker records uses in source order, so they are sorted but for a few (a `call`
        // checks its callee after its operands); stable: the uses one span names several
        // times (`.branchtargets L<4>`) keep their order
        let key = |(s, _): &(Span, NameRef)| (s.start, s.end);
        let uses = if table.uses.is_sorted_by_key(key) {
            std::borrow::Cow::Borrowed(&table.uses[..])
        } else {
            let mut v = table.uses.clone();
            v.sort_by_key(key);
            std::borrow::Cow::Owned(v)
        };
        let decl_index = table
            .symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (s.span.start, i))
            .collect();
        let mut cx = FuncCx {
            m,
            func,
            table,
            uses,
            decl_index,
            syms: vec![None; table.symbols.len()],
            families: Vec::new(),
            label_at: HashMap::new(),
            targets: HashMap::new(),
            local_elem: Vec::new(),
            diags: Vec::new(),
            src: None,
        };
        for (span, b) in scope {
            cx.bind(span, Sym::Bound(b));
        }
        cx
    }

    /// The uses the checker recorded at `span` (several for `.branchtargets L<4>`).
    fn uses_at(&self, span: Span) -> &[(Span, NameRef)] {
        let key = (span.start, span.end);
        let lo = self.uses.partition_point(|(s, _)| (s.start, s.end) < key);
        let hi = lo + self.uses[lo..].partition_point(|(s, _)| (s.start, s.end) == key);
        &self.uses[lo..hi]
    }

    /// What the checker resolved the name used at `span` to.
    fn use_at(&self, span: Span) -> Option<NameRef> {
        self.uses_at(span).first().map(|&(_, r)| r)
    }

    fn lower_body(&mut self, body: &ast::Body) {
        // Pass 1: label positions and target lists.
        let mut n = 0u32;
        for (si, s) in body.statements.iter().enumerate() {
            match s {
                Statement::Label(_) => {
                    self.label_at.insert(si, n);
                }
                Statement::Instruction(_) => n += 1,
                _ => {}
            }
        }
        for s in &body.statements {
            if let Statement::BranchTargets { name, targets, .. } = s {
                let mut list = Vec::new();
                for (w, count) in targets {
                    let names = match count {
                        Some(k) => (0..*k)
                            .map(|i| Name::from(format!("{}{}", w.text, i)))
                            .collect(),
                        None => vec![w.text.clone()],
                    };
                    let uses = self.uses_at(w.loc.0).to_vec();
                    for (k, nm) in names.into_iter().enumerate() {
                        let label = match uses.get(k) {
                            Some(&(_, NameRef::Label(si))) => self.label_at.get(&si).copied(),
                            _ => None,
                        };
                        match label {
                            Some(i) => list.push(i),
                            None => self.diags.push(Diagnostic::error(
                                UNRESOLVED,
                                format!("unknown label `{nm}`"),
                                w.loc.0,
                            )),
                        }
                    }
                }
                if let Some(&i) = self.decl_index.get(&name.loc.0.start) {
                    self.targets.insert(i, list);
                }
            }
        }
        // Pass 2: declarations and instructions (the checker resolved the names of each
        // block, so lowering needs no scopes).
        for s in &body.statements {
            match s {
                Statement::Variable(v) => self.declare(v),
                // nvcc writes `.loc 1 0 0` for code it cannot tie to a source line; such code
                // keeps the last real line of the function (or none, before the first)
                Statement::DebugLoc(l) if l.line > 0 => {
                    self.src = Some(SrcLoc {
                        file: l.file as u32,
                        line: l.line as u32,
                        col: l.column as u32,
                    })
                }
                Statement::Instruction(i) => {
                    // a construct lowering cannot represent makes this one instruction
                    // unsupported, not the module: the interpreter refuses to launch the
                    // kernels that can reach it, and the others run
                    let before = self.diags.len();
                    let inst = self.lower_inst(i);
                    let at = self.func.insts.len() as u32;
                    let mut k = before;
                    while k < self.diags.len() {
                        if self.diags[k].code == UNSUPPORTED {
                            let d = self.diags.remove(k);
                            self.func.unsupported.push((at, d.message));
                        } else {
                            k += 1;
                        }
                    }
                    self.func.insts.push(inst);
                }
                Statement::Label(w) => {
                    let at = InstId::new(self.func.insts.len() as u32);
                    self.func.labels.push((w.text.clone(), at));
                }
                _ => {}
            }
        }
        self.implicit_ret(body.close.0);
        // Frame layout.
        let mut off = 0u64;
        let mut align = 1u64;
        for l in &mut self.func.locals {
            if l.space == StateSpace::Local || l.space == StateSpace::Param {
                off = align_up(off, l.align);
                l.offset = off;
                off = off.saturating_add(l.size);
                align = align.max(l.align);
            }
        }
        self.func.frame_size = align_up(off, align);
        self.func.frame_align = align;
        self.func.uses_globals.sort_unstable();
        self.func.uses_globals.dedup();
        self.func.callees.sort_unstable();
        self.func.callees.dedup();
    }

    /// Reaching the closing brace of a body is an implicit `ret` (ptxas accepts a body that
    /// ends without `ret`, `exit` or an unconditional branch, an empty body, and a label as
    /// the last statement): a `ret` at the brace is appended whenever control can get there:
    /// the body is empty, its last instruction can fall through (any guarded one, or one that
    /// does not transfer control), or a label marks the end. Every defined function thus ends
    /// with an instruction that does not fall through, and every label marks an instruction,
    /// so the CFG and the post-dominators see the return and no executor runs off the end.
    fn implicit_ret(&mut self, close: Span) {
        let n = self.func.insts.len() as u32;
        let label_at_end = self.func.labels.iter().any(|(_, at)| at.raw() >= n);
        let falls = match self.func.insts.last() {
            None => true,
            Some(i) => {
                i.guard.is_some()
                    || !matches!(
                        i.op,
                        Opcode::Ret | Opcode::Exit | Opcode::Bra | Opcode::Brx | Opcode::Trap
                    )
            }
        };
        if falls || label_at_end {
            let mut ret = Inst::new(Opcode::Ret, Vec::new(), Vec::new(), close);
            ret.src = self.src;
            self.func.insts.push(ret);
        }
    }

    fn declare(&mut self, v: &VarDecl) {
        let space = StateSpace::from_suffix(&v.space.text).unwrap_or(StateSpace::Reg);
        for d in &v.declarators {
            if space == StateSpace::Reg {
                if v.vector.is_some() {
                    self.diags.push(unsupported(
                        "vector registers (`.reg .v4 …`) are not supported yet",
                        d.name.loc.0,
                    ));
                    continue;
                }
                let ty = ScalarType::from_suffix(&v.ty.text).unwrap_or(ScalarType::B32);
                match d.count {
                    Some(_) => {
                        self.bind(d.name.loc.0, Sym::Family(self.families.len()));
                        self.families.push(Family {
                            stem: d.name.text.clone(),
                            ty,
                            members: HashMap::new(),
                        });
                    }
                    None => {
                        let r = self.new_reg(d.name.text.clone(), ty);
                        self.bind(d.name.loc.0, Sym::Bound(Binding::Reg(r)));
                    }
                }
                continue;
            }
            let (size, align) = var_layout(v, d);
            let space = match space {
                StateSpace::SharedCta => StateSpace::Shared,
                s => s,
            };
            let mut init = Vec::new();
            if let Some(i) = &d.init {
                let mut data = InitData {
                    bytes: Vec::new(),
                    size,
                    relocs: Vec::new(),
                    elem: elem_size(&v.ty.text),
                    ty: ScalarType::from_suffix(&v.ty.text),
                    pos: 0,
                };
                match self.m.fill(&mut data, i) {
                    Ok(()) if data.relocs.is_empty() => init = data.bytes,
                    Ok(()) => self.diags.push(unsupported(
                        "addresses in function-local initializers are not supported yet",
                        d.name.loc.0,
                    )),
                    Err(e) => self.diags.push(e),
                }
            }
            if space == StateSpace::Global || space == StateSpace::Const {
                self.diags.push(unsupported(
                    "`.global`/`.const` variables declared inside a function are not supported yet",
                    d.name.loc.0,
                ));
                continue;
            }
            let l = self.func.locals.len() as u32;
            self.local_elem
                .push(elem_size(&v.ty.text).saturating_mul(vector_width(v)));
            self.func.locals.push(LocalVar {
                name: d.name.text.clone(),
                space,
                size,
                align,
                offset: 0,
                init,
                span: d.name.loc.0,
            });
            self.bind(d.name.loc.0, Sym::Bound(Binding::Local(Handle::new(l))));
        }
    }

    /// Records what the checker's symbol declared at `span` lowered to.
    fn bind(&mut self, span: Span, s: Sym) {
        if let Some(&i) = self.decl_index.get(&span.start) {
            if let Some(slot) = self.syms.get_mut(i) {
                *slot = Some(s);
            }
        }
    }

    fn new_reg(&mut self, name: Name, ty: ScalarType) -> RegId {
        let r = RegId::new(self.func.regs.len() as u32);
        self.func.regs.push(RegInfo { name, ty });
        r
    }

    /// The function-local binding of `name`, used at `span`, as the checker resolved it (a
    /// family member gets its register on first use); `None` when it is not a local the IR
    /// binds.
    fn local(&mut self, span: Span, name: &str) -> Option<Binding> {
        let Some(NameRef::Local(i)) = self.use_at(span) else {
            return None;
        };
        match (*self.syms.get(i)?)? {
            Sym::Bound(b) => Some(b),
            Sym::Family(fi) => {
                let f = &self.families[fi];
                let (_, n) =
                    ptx_syntax::ast::family_splits(name).find(|&(stem, _)| stem == &*f.stem)?;
                if let Some(&r) = f.members.get(&n) {
                    return Some(Binding::Reg(r));
                }
                let ty = f.ty;
                let r = self.new_reg(Name::from(name), ty);
                self.families[fi].members.insert(n, r);
                Some(Binding::Reg(r))
            }
        }
    }

    fn lower_inst(&mut self, i: &ast::Instruction) -> Inst {
        let guard = i
            .guard
            .as_ref()
            .and_then(|g| match self.local(g.pred.loc.0, &g.pred.text) {
                Some(Binding::Reg(r)) => Some(Guard {
                    reg: r,
                    negated: g.negated,
                }),
                _ => {
                    self.diags.push(Diagnostic::error(
                        UNRESOLVED,
                        format!("unknown predicate `{}`", g.pred.text),
                        g.pred.loc.0,
                    ));
                    None
                }
            });
        let operands = i.operands.iter().map(|o| self.operand(o)).collect();
        let (op, mods) = self.resolve_opcode(i);
        let mut inst = Inst::new(op, mods, operands, i.loc.0);
        inst.guard = guard;
        inst.src = self.src;
        inst
    }

    /// The typed opcode and modifiers of `i`, resolved once for every later stage. A modifier
    /// the typed instruction set does not know (an instruction the table does not describe
    /// yet) makes the instruction unsupported (the diagnostic is collected per instruction);
    /// an opcode word it does not know, which the checker rejects, is an error.
    fn resolve_opcode(&mut self, i: &ast::Instruction) -> (Opcode, Vec<Modifier>) {
        // an opcode's name has at most a few path segments: the leading modifiers suffice, on
        // the stack
        let mut lead = [""; 8];
        let n = i.modifiers.len().min(lead.len());
        for (t, m) in lead.iter_mut().zip(&i.modifiers) {
            *t = m.text.as_str();
        }
        let Some((op, consumed)) = Opcode::resolve(&i.opcode.text, &lead[..n]) else {
            self.diags.push(Diagnostic::error(
                UNRESOLVED,
                format!("unknown instruction `{}`", i.opcode.text),
                i.opcode.loc.0,
            ));
            return (Opcode::Trap, Vec::new());
        };
        let mut mods = Vec::with_capacity(i.modifiers.len() - consumed);
        for m in &i.modifiers[consumed..] {
            match Modifier::parse(&m.text) {
                Some(x) => mods.push(x),
                None => self.diags.push(unsupported(
                    format!(
                        "modifier `{}` of `{}` is not one ptxvm knows",
                        m.text,
                        i.full_opcode()
                    ),
                    m.loc.0,
                )),
            }
        }
        (op, mods)
    }

    fn operand(&mut self, o: &ast::Operand) -> Operand {
        match o {
            ast::Operand::Expr(e) => self.expr(e),
            ast::Operand::Vector(v, _) => {
                Operand::Vector(v.iter().map(|x| self.operand(x)).collect())
            }
            ast::Operand::List(v, _) => Operand::List(v.iter().map(|x| self.operand(x)).collect()),
            ast::Operand::Pair(a, b) => {
                Operand::Pair(Box::new(self.operand(a)), Box::new(self.operand(b)))
            }
            ast::Operand::Address(a) => {
                // `[tensorMap, {coords}]` (the tensor copies): the address and the coordinates
                if let [map, coords @ ast::Operand::Vector(..)] = &a.items[..] {
                    let one = ast::Address {
                        items: vec![map.clone()],
                        suffix: None,
                        loc: a.loc,
                    };
                    let map = self.operand(&ast::Operand::Address(Box::new(one)));
                    return Operand::List(vec![map, self.operand(coords)]);
                }
                if a.items.len() != 1 {
                    self.diags.push(unsupported(
                        "texture and surface addresses are not supported yet",
                        a.loc.0,
                    ));
                    return Operand::Sink;
                }
                match &a.items[0] {
                    ast::Operand::Expr(e) => match self.expr(e) {
                        Operand::Reg(r) => Operand::Address(Base::Reg(r), 0),
                        Operand::Symbol(b, k) => Operand::Address(b, k),
                        Operand::Imm(Imm::Int(v)) => Operand::Address(Base::Absolute, v as i64),
                        _ => {
                            self.diags
                                .push(unsupported("unsupported address expression", e.loc.0));
                            Operand::Sink
                        }
                    },
                    other => {
                        self.diags
                            .push(unsupported("unsupported address operand", other.loc().0));
                        Operand::Sink
                    }
                }
            }
        }
    }

    /// The operand for name `n` used at `span` (the use the checker resolved), reported at
    /// `at` when it did not resolve.
    fn name(&mut self, n: &Name, span: Span, at: Span) -> Operand {
        match self.use_at(span) {
            Some(NameRef::Local(i)) => {
                if let Some(b) = self.local(span, n) {
                    return match b {
                        Binding::Reg(r) => Operand::Reg(r),
                        Binding::Local(l) => Operand::Symbol(Base::Local(l), 0),
                        Binding::KernelParam(p) => Operand::Symbol(Base::KernelParam(p), 0),
                    };
                }
                match self.table.symbols.get(i).map(|s| s.kind) {
                    Some(SymbolKind::BranchTargets) => {
                        if let Some(t) = self.targets.get(&i) {
                            return Operand::Targets(t.iter().map(|&x| InstId::new(x)).collect());
                        }
                    }
                    Some(SymbolKind::Prototype | SymbolKind::CallTargets) => {
                        return Operand::Prototype(n.clone());
                    }
                    _ => {}
                }
            }
            Some(NameRef::Label(si)) => {
                if let Some(&l) = self.label_at.get(&si) {
                    return Operand::Label(InstId::new(l));
                }
            }
            Some(NameRef::Module(i)) => match self.m.module_refs.get(i).copied().flatten() {
                Some(ModRef::Global(g)) => {
                    self.func.uses_globals.push(g);
                    return Operand::Symbol(Base::Global(g), 0);
                }
                Some(ModRef::Family(fi)) => {
                    let (stem, count, stride, g) = &self.m.families[fi];
                    let member = ptx_syntax::ast::family_splits(n)
                        .find(|&(s, k)| s == &**stem && k < *count)
                        .map(|(_, k)| (*g, k.saturating_mul(*stride)));
                    if let Some((g, off)) = member {
                        self.func.uses_globals.push(g);
                        return Operand::Symbol(Base::Global(g), off as i64);
                    }
                }
                Some(ModRef::Function(f)) => {
                    self.func.callees.push(f);
                    return Operand::Symbol(Base::Function(f), 0);
                }
                None => {}
            },
            Some(NameRef::Special) | None => {}
        }
        // special registers and `WARP_SZ` (which the checker resolves as such)
        if let Some((stem, c)) = n.rsplit_once('.') {
            let comp = match c {
                "x" => Some(0),
                "y" => Some(1),
                "z" => Some(2),
                "w" => Some(3),
                _ => None,
            };
            if let (Some(comp), Some(sr)) = (comp, special_register(stem)) {
                return Operand::Special(SpecialReg {
                    name: Name::from(sr.name),
                    comp: Some(comp),
                });
            }
        }
        if let Some(sr) = special_register(n) {
            return Operand::Special(SpecialReg {
                name: Name::from(sr.name),
                comp: None,
            });
        }
        if n.as_str() == WARP_SZ {
            // the predefined constant (the checker resolves it when nothing else has the name)
            return Operand::Imm(Imm::Int(32));
        }
        if n.starts_with('%') {
            // family members like %envreg3 or scalar special registers
            return Operand::Special(SpecialReg {
                name: n.clone(),
                comp: None,
            });
        }
        self.diags.push(Diagnostic::error(
            UNRESOLVED,
            format!("cannot resolve `{n}`"),
            at,
        ));
        Operand::Sink
    }

    fn expr(&mut self, e: &Expr) -> Operand {
        match &e.kind {
            ExprKind::Symbol(n) => self.name(n, e.loc.0, e.loc.0),
            ExprKind::Sink => Operand::Sink,
            ExprKind::F32Bits(b) => Operand::Imm(Imm::F32(*b)),
            ExprKind::Unary(ast::UnaryOp::Not, inner) if matches!(&inner.kind, ExprKind::Symbol(n) if matches!(self.local(inner.loc.0, n), Some(Binding::Reg(_)))) => {
                Operand::Not(Box::new(self.expr(inner)))
            }
            ExprKind::F64Bits(b) => Operand::Imm(Imm::F64(f64::from_bits(*b))),
            ExprKind::Float(t) => Operand::Imm(Imm::F64(ExprKind::float_value(t))),
            ExprKind::Select(inner, comp) => {
                if let ExprKind::Symbol(n) = &inner.kind {
                    if n.starts_with('%') && self.local(inner.loc.0, n).is_none() {
                        let c = match comp.trim_start_matches('.') {
                            "x" => 0,
                            "y" => 1,
                            "z" => 2,
                            "w" => 3,
                            _ => 0,
                        };
                        return Operand::Special(SpecialReg {
                            name: n.clone(),
                            comp: Some(c),
                        });
                    }
                }
                self.diags.push(unsupported(
                    "register component selectors are not supported yet",
                    e.loc.0,
                ));
                Operand::Sink
            }
            // `A[i]`: the address of element `i` of variable `A` (ptxas scales by the element
            // size: `mov.u64 r, A[5]` of a `.b32` array is `A+20`)
            ExprKind::Index(arr, idx) => {
                let ExprKind::Symbol(n) = &arr.kind else {
                    self.diags
                        .push(unsupported("unsupported operand expression", e.loc.0));
                    return Operand::Sink;
                };
                let elem = match self.name(n, arr.loc.0, e.loc.0) {
                    Operand::Symbol(b @ Base::Global(g), k) => {
                        self.m.global_elem.get(g.index()).map(|&s| (b, k, s))
                    }
                    Operand::Symbol(b @ Base::Local(l), k) => {
                        self.local_elem.get(l.index()).map(|&s| (b, k, s))
                    }
                    _ => None,
                };
                match (elem, const_u64(idx)) {
                    (Some((b, k, size)), Some(i)) => {
                        Operand::Symbol(b, k.wrapping_add(i.wrapping_mul(size) as i64))
                    }
                    _ => {
                        self.diags
                            .push(unsupported("unsupported operand expression", e.loc.0));
                        Operand::Sink
                    }
                }
            }
            _ => {
                if let Some((n, k, sp)) = symbol_plus_offset(e) {
                    return match self.name(&n, sp, e.loc.0) {
                        Operand::Reg(r) => Operand::Symbol(Base::Reg(r), k),
                        Operand::Symbol(b, k0) => Operand::Symbol(b, k0.wrapping_add(k)),
                        Operand::Label(l) if k == 0 => Operand::Label(l),
                        _ => {
                            self.diags
                                .push(unsupported("unsupported operand expression", e.loc.0));
                            Operand::Sink
                        }
                    };
                }
                match eval(e, &|_| None) {
                    Ok(Value::Int { bits, .. }) => Operand::Imm(Imm::Int(bits)),
                    Ok(Value::Float(f)) => Operand::Imm(Imm::F64(f)),
                    Ok(Value::F32(b)) => Operand::Imm(Imm::F32(b)),
                    Err(_) => {
                        self.diags
                            .push(unsupported("unsupported operand expression", e.loc.0));
                        Operand::Sink
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{lower, verify, Function};

    fn body(b: &str) -> Function {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n{b}\n}}\n"
        );
        let parsed = ptx_syntax::parse(&text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let checked = ptx_check::check_module(&parsed.module, &Default::default());
        assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
        let m = lower(&parsed.module, &checked).expect("lowers");
        assert_eq!(verify(&m), Vec::<String>::new());
        m.functions[0].clone()
    }

    fn opcodes(f: &Function) -> Vec<&str> {
        f.insts.iter().map(|i| i.op.name()).collect()
    }

    #[test]
    fn reaching_the_closing_brace_is_an_implicit_ret() {
        // an empty body
        let f = body("");
        assert_eq!(opcodes(&f), ["ret"]);
        assert_eq!(f.blocks.len(), 1);
        assert!(f.blocks[0].succs.is_empty());
        // a last instruction that falls through
        let f = body(".reg .b32 %r<2>;\nmov.u32 %r1, 1;");
        assert_eq!(opcodes(&f), ["mov", "ret"]);
        // a label as the last statement: it marks the implicit ret
        let f = body(".reg .b32 %r<2>;\nmov.u32 %r1, 1;\nL:");
        assert_eq!(opcodes(&f), ["mov", "ret"]);
        assert_eq!(f.labels[0].1.raw(), 1);
        // a guarded branch may fall through; the join point is the implicit ret
        let f = body(".reg .pred %p<2>;\nsetp.eq.u32 %p1, 1, 1;\nL:\n@%p1 bra L;");
        assert_eq!(opcodes(&f), ["setp", "bra", "ret"]);
        assert_eq!(f.blocks.last().map(|b| b.start), Some(2));
        // a branch to a label at the end reaches the ret, which post-dominates it
        let f = body(
            ".reg .pred %p<2>;\n.reg .b32 %r<2>;\nsetp.eq.u32 %p1, 1, 1;\n@%p1 bra E;\nmov.u32 %r1, 1;\nE:",
        );
        assert_eq!(opcodes(&f), ["setp", "bra", "mov", "ret"]);
        assert_eq!(f.ipdom[0], Some(crate::Handle::new(2)));
    }

    #[test]
    fn names_resolve_as_the_checker_resolved_them() {
        // an inner block's register shadows the outer one of the same name, and after the
        // block the name is the outer register again; family members get registers on use
        let f = body(
            ".reg .b32 %a;\n.reg .b32 %r<4>;\nmov.u32 %a, 1;\n{\n.reg .b32 %a;\nmov.u32 %a, 2;\n\
             mov.u32 %r3, %a;\n}\nmov.u32 %r1, %a;",
        );
        let regs: Vec<&str> = f.regs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(regs, ["%a", "%a", "%r3", "%r1"]);
        let dst = |i: usize| match &f.insts[i].operands[..] {
            [crate::Operand::Reg(d), ..] => d.index(),
            _ => usize::MAX,
        };
        let src = |i: usize| match &f.insts[i].operands[..] {
            [_, crate::Operand::Reg(s)] => s.index(),
            _ => usize::MAX,
        };
        assert_eq!(
            (dst(0), dst(1), dst(2), src(2), dst(3), src(3)),
            (0, 1, 2, 1, 3, 0)
        );
    }

    #[test]
    fn no_implicit_ret_where_control_cannot_reach_the_brace() {
        assert_eq!(opcodes(&body("ret;")), ["ret"]);
        assert_eq!(opcodes(&body("exit;")), ["exit"]);
        assert_eq!(opcodes(&body("trap;")), ["trap"]);
        assert_eq!(opcodes(&body("L:\nbra L;")), ["bra"]);
    }
}
