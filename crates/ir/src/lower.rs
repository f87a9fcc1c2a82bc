//! Lowering: checked AST → IR.
//!
//! Lowering trusts the checker for everything it verifies (declared names, operand shapes) and
//! reports, as diagnostics, only what the IR cannot represent: constructs a checked module may
//! contain that execution does not support (vector registers, `mask()` initializers…), and
//! names it cannot resolve when it is given an unchecked tree.

use crate::{
    build_cfg, post_dominators, Base, Function, FunctionKind, Global, Guard, Handle, Imm, Inst,
    LocalVar, Module, Operand, Param, RegId, RegInfo, Reloc, SpecialReg, SrcLoc, SymbolRef,
};
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{special_register, Modifier, Opcode, ScalarType, StateSpace};
use ptx_syntax::ast::{self, Expr, ExprKind, Initializer, Name, Statement, VarDecl};
use ptx_syntax::constexpr::{eval, Value};
use std::collections::HashMap;

// the codes of lowering, defined in the one registry of the tool (`ptx_diag::codes`)
pub use ptx_diag::codes::lower::{UNRESOLVED, UNSUPPORTED};

/// The predefined constant of PTX: the warp size, 32.
const WARP_SZ: &str = "WARP_SZ";

/// Lowers a checked module. Errors are diagnostics pointing at the construct.
pub fn lower(module: &ast::Module) -> Result<Module, Vec<Diagnostic>> {
    let mut cx = ModuleCx::default();
    cx.collect(module);
    cx.lower_globals(module);
    cx.lower_functions(module);
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
    diags: Vec<Diagnostic>,
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
                                (name, size)
                            }
                        };
                        {
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
                if let Some((name, addend)) = symbol_plus_offset(e) {
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

    fn lower_functions(&mut self, module: &ast::Module) {
        for d in &module.directives {
            let ast::Directive::Function(f) = d else {
                continue;
            };
            let Some(body) = &f.body else { continue };
            let idx = self.functions[&f.name.text];
            let mut fx = FuncCx::new(self, f);
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

/// `name`, `name+K`, `name-K`, `K+name` (and `generic(name)` in place of `name`).
fn symbol_plus_offset(e: &Expr) -> Option<(Name, i64)> {
    match &e.kind {
        // `WARP_SZ` is the predefined constant 32, not an address: constant evaluation has it
        ExprKind::Symbol(n) if n.as_str() == WARP_SZ => None,
        ExprKind::Symbol(n) => Some((n.clone(), 0)),
        ExprKind::Generic(inner) => symbol_plus_offset(inner),
        ExprKind::Binary(ast::BinaryOp::Add, a, b) => {
            if let Some((n, k)) = symbol_plus_offset(a) {
                Some((n, k.wrapping_add(const_u64(b)? as i64)))
            } else {
                let (n, k) = symbol_plus_offset(b)?;
                Some((n, k.wrapping_add(const_u64(a)? as i64)))
            }
        }
        ExprKind::Binary(ast::BinaryOp::Sub, a, b) => {
            let (n, k) = symbol_plus_offset(a)?;
            Some((n, k.wrapping_sub(const_u64(b)? as i64)))
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
    count: u64,
    ty: ScalarType,
    members: HashMap<u64, RegId>,
}

/// The names one block (`{ … }`) declares.
#[derive(Default)]
struct Scope {
    names: HashMap<Name, Binding>,
    families: Vec<Family>,
}

struct FuncCx<'a> {
    m: &'a ModuleCx,
    func: Function,
    scopes: Vec<Scope>,
    labels: HashMap<Name, u32>,
    targets: HashMap<Name, Vec<u32>>,
    prototypes: HashMap<Name, ()>,
    diags: Vec<Diagnostic>,
    src: Option<SrcLoc>,
}

impl<'a> FuncCx<'a> {
    fn new(m: &'a ModuleCx, f: &ast::Function) -> FuncCx<'a> {
        let mut func = header(f);
        let mut scope = HashMap::new();
        match func.kind {
            FunctionKind::Entry => {
                for (i, p) in func.params.iter().enumerate() {
                    scope.insert(p.name.clone(), Binding::KernelParam(i as u32));
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
                            scope.insert(d.name.text.clone(), Binding::Reg(r));
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
                            scope.insert(d.name.text.clone(), Binding::Local(Handle::new(l)));
                        }
                    }
                }
            }
        }
        FuncCx {
            m,
            func,
            scopes: vec![Scope {
                names: scope,
                families: Vec::new(),
            }],
            labels: HashMap::new(),
            targets: HashMap::new(),
            prototypes: HashMap::new(),
            diags: Vec::new(),
            src: None,
        }
    }

    fn lower_body(&mut self, body: &ast::Body) {
        // Pass 1: label positions and target lists.
        let mut n = 0u32;
        for s in &body.statements {
            match s {
                Statement::Label(w) => {
                    self.labels.insert(w.text.clone(), n);
                }
                Statement::Instruction(_) => n += 1,
                Statement::CallPrototype(p) => {
                    self.prototypes.insert(p.name.text.clone(), ());
                }
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
                    for nm in names {
                        match self.labels.get(&nm) {
                            Some(&i) => list.push(i),
                            None => self.diags.push(Diagnostic::error(
                                UNRESOLVED,
                                format!("unknown label `{nm}`"),
                                w.loc.0,
                            )),
                        }
                    }
                }
                self.targets.insert(name.text.clone(), list);
            }
            if let Statement::CallTargets { name, .. } = s {
                self.prototypes.insert(name.text.clone(), ());
            }
        }
        // Pass 2: declarations and instructions.
        for s in &body.statements {
            match s {
                Statement::ScopeBegin(_) => self.scopes.push(Scope::default()),
                Statement::ScopeEnd(_) if self.scopes.len() > 1 => {
                    self.scopes.pop();
                }
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
                    let at = self.func.insts.len() as u32;
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
        let label_at_end = self.func.labels.iter().any(|(_, at)| *at >= n);
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
                    Some(count) => {
                        if let Some(s) = self.scopes.last_mut() {
                            s.families.push(Family {
                                stem: d.name.text.clone(),
                                count,
                                ty,
                                members: HashMap::new(),
                            });
                        }
                    }
                    None => {
                        let r = self.new_reg(d.name.text.clone(), ty);
                        self.bind(d.name.text.clone(), Binding::Reg(r));
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
            self.func.locals.push(LocalVar {
                name: d.name.text.clone(),
                space,
                size,
                align,
                offset: 0,
                init,
                span: d.name.loc.0,
            });
            self.bind(d.name.text.clone(), Binding::Local(Handle::new(l)));
        }
    }

    fn bind(&mut self, name: Name, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.names.insert(name, b);
        }
    }

    fn new_reg(&mut self, name: Name, ty: ScalarType) -> RegId {
        let r = RegId::new(self.func.regs.len() as u32);
        self.func.regs.push(RegInfo { name, ty });
        r
    }

    /// What `name` refers to: the innermost block's exact names, then its families (a family
    /// member gets its register on first use), then the enclosing blocks'.
    fn lookup(&mut self, name: &str) -> Option<Binding> {
        for si in (0..self.scopes.len()).rev() {
            if let Some(&b) = self.scopes[si].names.get(name) {
                return Some(b);
            }
            let found = self.scopes[si]
                .families
                .iter()
                .enumerate()
                .find_map(|(fi, f)| {
                    ptx_syntax::ast::family_splits(name)
                        .find(|&(stem, n)| stem == &*f.stem && n < f.count)
                        .map(|(_, n)| (fi, n))
                });
            if let Some((fi, n)) = found {
                if let Some(&r) = self.scopes[si].families[fi].members.get(&n) {
                    return Some(Binding::Reg(r));
                }
                let ty = self.scopes[si].families[fi].ty;
                let r = self.new_reg(Name::from(name), ty);
                self.scopes[si].families[fi].members.insert(n, r);
                return Some(Binding::Reg(r));
            }
        }
        None
    }

    fn lower_inst(&mut self, i: &ast::Instruction) -> Inst {
        let guard = i
            .guard
            .as_ref()
            .and_then(|g| match self.lookup(&g.pred.text) {
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

    fn name(&mut self, n: &Name, span: Span) -> Operand {
        if let Some(b) = self.lookup(n) {
            return match b {
                Binding::Reg(r) => Operand::Reg(r),
                Binding::Local(l) => Operand::Symbol(Base::Local(l), 0),
                Binding::KernelParam(p) => Operand::Symbol(Base::KernelParam(p), 0),
            };
        }
        if let Some(&l) = self.labels.get(n) {
            return Operand::Label(l);
        }
        if let Some(t) = self.targets.get(n) {
            return Operand::Targets(t.clone());
        }
        if self.prototypes.contains_key(n) {
            return Operand::Prototype(n.clone());
        }
        if let Some(&g) = self.m.globals.get(n) {
            self.func.uses_globals.push(g);
            return Operand::Symbol(Base::Global(g), 0);
        }
        let member = self.m.families.iter().find_map(|(stem, count, stride, g)| {
            ptx_syntax::ast::family_splits(n)
                .find(|&(s, k)| s == &**stem && k < *count)
                .map(|(_, k)| (*g, k.saturating_mul(*stride)))
        });
        if let Some((g, off)) = member {
            self.func.uses_globals.push(g);
            return Operand::Symbol(Base::Global(g), off as i64);
        }
        if let Some(&f) = self.m.functions.get(n) {
            self.func.callees.push(f);
            return Operand::Symbol(Base::Function(f), 0);
        }
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
            span,
        ));
        Operand::Sink
    }

    fn expr(&mut self, e: &Expr) -> Operand {
        match &e.kind {
            ExprKind::Symbol(n) => self.name(n, e.loc.0),
            ExprKind::Sink => Operand::Sink,
            ExprKind::F32Bits(b) => Operand::Imm(Imm::F32(*b)),
            ExprKind::Unary(ast::UnaryOp::Not, inner) if matches!(&inner.kind, ExprKind::Symbol(n) if matches!(self.lookup(n), Some(Binding::Reg(_)))) => {
                Operand::Not(Box::new(self.expr(inner)))
            }
            ExprKind::F64Bits(b) => Operand::Imm(Imm::F64(f64::from_bits(*b))),
            ExprKind::Float(t) => Operand::Imm(Imm::F64(ExprKind::float_value(t))),
            ExprKind::Select(inner, comp) => {
                if let ExprKind::Symbol(n) = &inner.kind {
                    if n.starts_with('%') && self.lookup(n).is_none() {
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
            _ => {
                if let Some((n, k)) = symbol_plus_offset(e) {
                    return match self.name(&n, e.loc.0) {
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
        let m = lower(&parsed.module).expect("lowers");
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
        assert_eq!(f.labels[0].1, 1);
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
    fn no_implicit_ret_where_control_cannot_reach_the_brace() {
        assert_eq!(opcodes(&body("ret;")), ["ret"]);
        assert_eq!(opcodes(&body("exit;")), ["exit"]);
        assert_eq!(opcodes(&body("trap;")), ["trap"]);
        assert_eq!(opcodes(&body("L:\nbra L;")), ["bra"]);
    }
}
