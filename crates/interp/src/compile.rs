//! IR → bytecode: slot allocation, operand resolution and instruction decoding.
//!
//! A kernel is compiled together with every function reachable from it. Each IR instruction
//! becomes exactly one [`Insn`], so a label's IR index plus its function's entry is its code
//! index. Decoding happens once per instruction here — modifiers are parsed into handler choices
//! and packed `aux` bits — so that execution never looks at a string.
//!
//! After decoding, passes rewrite the code in place, keeping one `Insn` per IR instruction (a
//! rewritten instruction becomes [`Op::Nop`], still counted as executed): a register that is a
//! plain copy of a constant, symbol or special register is read from that slot as it is decoded
//! (`Facts::copies`), and a copy nothing reads any more is dead; `invariant::plan` hoists what is
//! the same in every CTA into the prelude; `ifconv` turns short guarded branches and if-else
//! blocks into guards; `fuse` makes superinstructions of pairs and triples (leaving out values
//! that liveness shows are never read); last, every instruction records the no-ops that follow
//! it and that the fast path may step over (`Insn::skip`).

use crate::mem::FUNC_WINDOW;
use crate::program::{
    BarKind, Barrier, CallOperand, CallSite, CallTarget, FuncInfo, Insn, Op, Program, RedOp,
    SregInit,
};
use ptx_ir::{Base, FunctionKind, Imm, Operand};
use ptx_isa::{ScalarType, StateSpace, TypeKind};
use std::collections::HashMap;

/// Where module globals live on the device.
#[derive(Clone, Debug, Default)]
pub struct GlobalAddrs {
    /// Device address of each IR global in `.global`/`.const` (0 for others).
    pub addr: Vec<u64>,
}

/// Why a kernel could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError(pub String);

/// The function whose code address is `addr`.
pub fn func_of_addr(p: &Program, addr: u64) -> Option<u32> {
    if addr < FUNC_WINDOW || (addr - FUNC_WINDOW) % 16 != 0 {
        return None;
    }
    let ir = (addr - FUNC_WINDOW) / 16;
    p.func_of_ir.get(ir as usize).copied().flatten()
}

/// The code address of IR function `f`.
pub fn func_addr(f: u32) -> u64 {
    FUNC_WINDOW + f as u64 * 16
}

pub(crate) struct Builder<'m> {
    pub m: &'m ptx_ir::Module,
    pub nslots: u32,
    pub npreds: u32,
    consts: HashMap<u64, u32>,
    pub const_list: Vec<(u32, u64)>,
    /// Per kernel register: the operand it is a copy of ([`crate::invariant::Facts::copies`]).
    copies: Vec<Option<(&'m Operand, ScalarType)>>,
    /// Per kernel register: read from its own slot somewhere (not through [`Self::copies`]).
    read_direct: Vec<bool>,
    const_preds: [Option<u32>; 2],
    pub const_pred_list: Vec<(u32, u32)>,
    sregs: HashMap<SregInit, u32>,
    pub sreg_list: Vec<(u32, SregInit)>,
    pub fp_slot: u32,
    pub cc_slot: u32,
    /// Per reachable function (program index): IR reg → slot.
    pub reg_slot: Vec<Vec<u32>>,
    pub globals: GlobalAddrs,
    /// Shared-memory offset of each IR global in `.shared` (dynamic: the static size).
    pub shared_off: HashMap<u32, u64>,
    /// Shared-memory offset of function-local shared variables: (IR func, local) → offset.
    pub local_shared_off: HashMap<(u32, u32), u64>,
    pub shared_static: u64,
    pub func_of_ir: Vec<Option<u32>>,
    pub funcs: Vec<FuncInfo>,
    pub tables: Vec<Vec<u32>>,
    pub calls: Vec<CallSite>,
    pub barriers: Vec<Barrier>,
    pub messages: Vec<String>,
}

/// Decoding context of one instruction.
pub(crate) struct Dec<'b, 'm> {
    pub b: &'b mut Builder<'m>,
    /// IR function index.
    pub f: u32,
    /// Program function index.
    pub fi: u32,
    pub func: &'m ptx_ir::Function,
    pub inst: &'m ptx_ir::Inst,
}

type R<T> = Result<T, String>;

impl<'m> Builder<'m> {
    fn new_slot(&mut self) -> u32 {
        self.nslots += 1;
        self.nslots - 1
    }
    /// The value of `slot` when it is a constant slot.
    pub fn const_value(&self, slot: u32) -> Option<u64> {
        self.const_list
            .iter()
            .find(|&&(s, _)| s == slot)
            .map(|&(_, v)| v)
    }

    pub fn konst(&mut self, v: u64) -> u32 {
        if let Some(&s) = self.consts.get(&v) {
            return s;
        }
        let s = self.new_slot();
        self.consts.insert(v, s);
        self.const_list.push((s, v));
        s
    }
    pub fn const_pred(&mut self, v: bool) -> u32 {
        if let Some(s) = self.const_preds[v as usize] {
            return s;
        }
        let s = self.npreds;
        self.npreds += 1;
        self.const_preds[v as usize] = Some(s);
        self.const_pred_list.push((s, if v { u32::MAX } else { 0 }));
        s
    }
    pub fn sreg(&mut self, s: SregInit) -> u32 {
        if let Some(&x) = self.sregs.get(&s) {
            return x;
        }
        let x = self.new_slot();
        self.sregs.insert(s, x);
        self.sreg_list.push((x, s));
        x
    }
    pub fn message(&mut self, m: String) -> u32 {
        self.messages.push(m);
        self.messages.len() as u32 - 1
    }
}

/// The converted bits of an immediate for an operand of type `ty`.
pub(crate) fn imm_bits(imm: Imm, ty: ScalarType) -> u64 {
    use crate::semantics::fp;
    let fmt = match ty {
        ScalarType::F16 | ScalarType::F16x2 => Some(fp::F16),
        ScalarType::Bf16 | ScalarType::Bf16x2 => Some(fp::BF16),
        ScalarType::F32 => Some(fp::F32),
        ScalarType::F64 => Some(fp::F64),
        _ => None,
    };
    match (imm, fmt) {
        (Imm::Int(v), _) => v,
        (Imm::F32(b), Some(f)) if f == fp::F64 => (f32::from_bits(b) as f64).to_bits(),
        (Imm::F32(b), Some(f)) if f == fp::F32 => b as u64,
        (Imm::F32(b), Some(f)) => {
            fp::from_f64(f, f32::from_bits(b) as f64, crate::semantics::Rounding::Rn)
        }
        (Imm::F32(b), None) => b as u64,
        (Imm::F64(x), Some(f)) if f == fp::F64 => x.to_bits(),
        (Imm::F64(x), Some(f)) => fp::from_f64(f, x, crate::semantics::Rounding::Rn),
        (Imm::F64(x), None) => x.to_bits(),
    }
}

/// Sets every instruction's [`Insn::skip`]: the length of the run of no-ops after it within
/// its function that the fast path may step over. A no-op guarded by if-conversion counts only
/// for the lanes whose guard holds, so it is in the run only after an instruction converted
/// with the same guard: the fast path runs that one only when every lane passes the guard,
/// and the guard cannot change in between (a converted instruction does not write its guard).
fn set_skips(code: &mut [Insn]) {
    for k in 0..code.len() {
        let insn = &code[k];
        // (runs are looked at up to 256 long: a longer one continues from its 256th no-op)
        let run = code[k + 1..]
            .iter()
            .take(256)
            .take_while(|n| {
                matches!(n.op, Op::Nop)
                    && n.func == insn.func
                    && (!n.converted
                        || insn.converted && (n.guard, n.neg) == (insn.guard, insn.neg))
            })
            .count();
        code[k].skip = run as u16;
    }
}

/// Whether the interpreter gives special register `name` (with its `%`) a value.
pub fn special_register_executes(name: &str) -> bool {
    sreg_init(name, None).is_some() || crate::ops_move::TIMERS.contains(&name)
}

/// The per-thread special register `sr` reads, if it is one the warp set-up fills in.
pub(crate) fn sreg_of(sr: &ptx_ir::SpecialReg) -> Option<SregInit> {
    sreg_init(&sr.name, sr.comp)
}

fn sreg_init(name: &str, comp: Option<u8>) -> Option<SregInit> {
    let c = comp.unwrap_or(0);
    Some(match name {
        "%tid" => SregInit::Tid(c),
        "%ntid" => SregInit::Ntid(c),
        "%ctaid" => SregInit::Ctaid(c),
        "%nctaid" => SregInit::Nctaid(c),
        "%laneid" => SregInit::Laneid,
        "%warpid" => SregInit::Warpid,
        "%nwarpid" => SregInit::Nwarpid,
        "%lanemask_eq" => SregInit::LanemaskEq,
        "%lanemask_lt" => SregInit::LanemaskLt,
        "%lanemask_le" => SregInit::LanemaskLe,
        "%lanemask_gt" => SregInit::LanemaskGt,
        "%lanemask_ge" => SregInit::LanemaskGe,
        "%smid" => SregInit::Smid,
        "%nsmid" => SregInit::Nsmid,
        "%gridid" => SregInit::Gridid,
        "%dynamic_smem_size" => SregInit::DynSmem,
        "%total_smem_size" => SregInit::TotalSmem,
        "%clusterid" | "%cluster_ctaid" | "%cluster_ctarank" | "%is_explicit_cluster" => {
            if name == "%cluster_ctaid" {
                SregInit::Ctaid(c)
            } else {
                SregInit::Zero
            }
        }
        "%nclusterid" => SregInit::Nctaid(c),
        "%cluster_nctaid" | "%cluster_nctarank" => SregInit::One,
        "%aggr_smem_size" => SregInit::TotalSmem,
        n if n.starts_with("%envreg") => SregInit::Zero,
        n if n.starts_with("%pm") => SregInit::Zero,
        "%reserved_smem_offset_begin"
        | "%reserved_smem_offset_end"
        | "%reserved_smem_offset_cap"
        | "%reserved_smem_offset_0"
        | "%reserved_smem_offset_1" => SregInit::Zero,
        _ => return None,
    })
}

impl<'b, 'm> Dec<'b, 'm> {
    /// The last fundamental type among the modifiers.
    pub fn ty(&self) -> R<ScalarType> {
        self.inst
            .types()
            .last()
            .ok_or_else(|| format!("`{}` has no type", self.inst.full_name()))
    }
    /// All fundamental types among the modifiers, in order.
    pub fn types(&self) -> Vec<ScalarType> {
        self.inst.types().collect()
    }
    /// Whether modifier `m` is present.
    pub fn has(&self, m: &str) -> bool {
        self.inst.has(m)
    }
    /// The operand at `k`.
    pub fn operand(&self, k: usize) -> R<&'m Operand> {
        self.inst
            .operands
            .get(k)
            .ok_or_else(|| format!("`{}` is missing operand {}", self.inst.full_name(), k + 1))
    }
    /// The slot of register `r`, for a read (or a read and write) of it.
    fn reg_slot(&mut self, r: u32) -> u32 {
        if self.fi == 0 {
            if let Some(x) = self.b.read_direct.get_mut(r as usize) {
                *x = true;
            }
        }
        self.b.reg_slot[self.fi as usize][r as usize]
    }
    /// The slot to read register `r` from when it is a copy of an operand whose slot holds
    /// the same bits whenever `r` is read ([`crate::invariant::Facts::copies`], kernel
    /// registers only).
    fn copy_slot(&mut self, r: u32) -> Option<u32> {
        if self.fi != 0 {
            return None;
        }
        let (o, ty) = self.b.copies.get(r as usize).copied().flatten()?;
        self.src_op(o, ty).ok()
    }
    fn is_pred_reg(&self, r: u32) -> bool {
        self.func.regs[r as usize].ty == ScalarType::Pred
    }
    /// Type of register `r`.
    pub fn reg_ty(&self, r: u32) -> ScalarType {
        self.func.regs[r as usize].ty
    }
    /// Value slot written by operand `k` (a register; `_` gets a scratch slot).
    pub fn dst(&mut self, k: usize) -> R<u32> {
        match self.operand(k)? {
            Operand::Reg(r) if !self.is_pred_reg(*r) => {
                Ok(self.b.reg_slot[self.fi as usize][*r as usize])
            }
            Operand::Sink => Ok(self.b.new_slot()),
            o => Err(format!("unsupported destination operand {o:?}")),
        }
    }
    /// Value slot of a source operand `o` read as type `ty`.
    pub fn src_op(&mut self, o: &Operand, ty: ScalarType) -> R<u32> {
        match o {
            Operand::Reg(r) if !self.is_pred_reg(*r) => Ok(match self.copy_slot(*r) {
                Some(s) => s,
                None => self.reg_slot(*r),
            }),
            Operand::Reg(_) => Err("a predicate cannot be used as a value here".into()),
            Operand::Imm(i) => {
                let v = imm_bits(*i, ty);
                Ok(self.b.konst(v))
            }
            Operand::Special(sr) => match sreg_init(&sr.name, sr.comp) {
                Some(s) => Ok(self.b.sreg(s)),
                None => Err(format!(
                    "special register `{}` can only be read with `mov`",
                    sr.name
                )),
            },
            Operand::Symbol(base, k) => match self.symbol_const(*base, *k)? {
                Some(v) => Ok(self.b.konst(v)),
                None => Err("the address of a local variable can only be taken with `mov`".into()),
            },
            Operand::Sink => Ok(self.b.konst(0)),
            o => Err(format!("unsupported source operand {o:?}")),
        }
    }
    /// Value slot of source operand `k`.
    pub fn src(&mut self, k: usize, ty: ScalarType) -> R<u32> {
        let o = self.operand(k)?;
        self.src_op(o, ty)
    }
    /// Predicate slot written by operand `k` (`_` gives `u32::MAX`: no write).
    pub fn pred_dst(&mut self, k: usize) -> R<u32> {
        self.pred_dst_op(self.operand(k)?)
    }
    /// Predicate slot written by `o`.
    pub fn pred_dst_op(&mut self, o: &Operand) -> R<u32> {
        match o {
            Operand::Reg(r) if self.is_pred_reg(*r) => Ok(self.reg_slot(*r)),
            Operand::Sink => Ok(u32::MAX),
            o => Err(format!("expected a predicate destination, found {o:?}")),
        }
    }
    /// Predicate slot read by operand `k`, and whether it is negated (`!p`).
    pub fn pred_src(&mut self, k: usize) -> R<(u32, bool)> {
        match self.operand(k)? {
            Operand::Reg(r) if self.is_pred_reg(*r) => Ok((self.reg_slot(*r), false)),
            Operand::Imm(Imm::Int(v)) => Ok((self.b.const_pred(*v != 0), false)),
            Operand::Not(inner) => match inner.as_ref() {
                Operand::Reg(r) if self.is_pred_reg(*r) => Ok((self.reg_slot(*r), true)),
                o => Err(format!("expected a predicate after `!`, found {o:?}")),
            },
            o => Err(format!("expected a predicate, found {o:?}")),
        }
    }
    /// The constant value of a symbol's address, or `None` for frame-relative symbols.
    pub fn symbol_const(&mut self, base: Base, k: i64) -> R<Option<u64>> {
        Ok(Some(match base {
            Base::Global(g) => {
                let glob = &self.b.m.globals[g as usize];
                let a = match glob.space {
                    StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => {
                        *self.b.shared_off.get(&g).unwrap_or(&0)
                    }
                    _ => self.b.globals.addr.get(g as usize).copied().unwrap_or(0),
                };
                if a == 0 && !matches!(glob.space, StateSpace::Shared | StateSpace::SharedCta) {
                    return Err(format!(
                        "`{}` has no storage (an `.extern` declaration without definition)",
                        glob.name
                    ));
                }
                a.wrapping_add(k as u64)
            }
            Base::Local(l) => {
                let local = &self.func.locals[l as usize];
                if local.space == StateSpace::Shared {
                    let off = *self.b.local_shared_off.get(&(self.f, l)).unwrap_or(&0);
                    off.wrapping_add(k as u64)
                } else {
                    return Ok(None);
                }
            }
            Base::KernelParam(p) => self.func.params[p as usize].offset.wrapping_add(k as u64),
            Base::Function(f) => func_addr(f).wrapping_add(k as u64),
            Base::Absolute => k as u64,
            Base::Reg(_) => return Ok(None),
        }))
    }
}

/// Memory spaces an address can name at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Global,
    Const,
    Shared,
    Local,
    KernelParam,
    Generic,
}

impl<'b, 'm> Dec<'b, 'm> {
    /// Base slot, offset and space of address operand `k`.
    pub fn address(&mut self, k: usize) -> R<(u32, i64, Space)> {
        let written = self.inst.space();
        let (base, off) = match self.operand(k)? {
            Operand::Address(b, o) => (*b, *o),
            o => return Err(format!("expected an address, found {o:?}")),
        };
        let mut space = match written {
            None => Space::Generic,
            Some(StateSpace::Global) => Space::Global,
            Some(StateSpace::Const) => Space::Const,
            Some(StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster) => {
                Space::Shared
            }
            Some(StateSpace::Local) => Space::Local,
            Some(StateSpace::Param) => {
                if self.func.kind == FunctionKind::Entry {
                    Space::KernelParam
                } else {
                    Space::Local
                }
            }
            Some(s) => return Err(format!("`{}` addresses are not supported yet", s.suffix())),
        };
        let zero = self.b.konst(0);
        Ok(match base {
            Base::Reg(r) => (self.reg_slot(r), off, space),
            Base::Local(l) => {
                let local = &self.func.locals[l as usize];
                if local.space == StateSpace::Shared {
                    let o = *self.b.local_shared_off.get(&(self.f, l)).unwrap_or(&0);
                    if space == Space::Generic {
                        (zero, (crate::mem::SHARED_WINDOW + o) as i64 + off, space)
                    } else {
                        (zero, o as i64 + off, space)
                    }
                } else {
                    if space == Space::KernelParam {
                        space = Space::Local; // call arguments declared in a kernel body
                    }
                    let o = local.offset as i64 + off;
                    if space == Space::Generic {
                        return Err("generic access to a frame variable by name".into());
                    }
                    (self.b.fp_slot, o, space)
                }
            }
            Base::KernelParam(p) => {
                let o = self.func.params[p as usize].offset as i64 + off;
                if space == Space::Generic {
                    (zero, (crate::mem::PARAM_WINDOW as i64) + o, space)
                } else {
                    (zero, o, Space::KernelParam)
                }
            }
            Base::Global(g) => {
                let glob = &self.b.m.globals[g as usize];
                let is_shared = matches!(glob.space, StateSpace::Shared | StateSpace::SharedCta);
                let v = self.symbol_const(base, off)?.unwrap_or(0);
                if is_shared && space == Space::Generic {
                    (zero, (crate::mem::SHARED_WINDOW + v) as i64, space)
                } else {
                    (zero, v as i64, space)
                }
            }
            Base::Absolute => (zero, off, space),
            Base::Function(_) => return Err("a function is not a memory address".into()),
        })
    }
}

/// Compiles kernel `kernel` (IR function index) of `m`.
pub fn compile(
    m: &ptx_ir::Module,
    kernel: u32,
    globals: &GlobalAddrs,
) -> Result<Program, CompileError> {
    // reachable functions
    let mut order = vec![kernel];
    let mut seen = vec![false; m.functions.len()];
    seen[kernel as usize] = true;
    // functions whose addresses are stored in module variables (tables of function pointers)
    for g in &m.globals {
        for r in &g.relocs {
            if let ptx_ir::SymbolRef::Function(f) = r.target {
                if m.functions[f as usize].defined && !seen[f as usize] {
                    seen[f as usize] = true;
                    order.push(f);
                }
            }
        }
    }
    let mut i = 0;
    while i < order.len() {
        let f = &m.functions[order[i] as usize];
        for &c in &f.callees {
            if !seen[c as usize] && m.functions[c as usize].defined {
                seen[c as usize] = true;
                order.push(c);
            }
        }
        i += 1;
    }
    let mut func_of_ir = vec![None; m.functions.len()];
    for (pi, &f) in order.iter().enumerate() {
        func_of_ir[f as usize] = Some(pi as u32);
    }
    let mut b = Builder {
        m,
        nslots: 0,
        npreds: 0,
        consts: HashMap::new(),
        const_list: Vec::new(),
        copies: Vec::new(),
        read_direct: Vec::new(),
        const_preds: [None; 2],
        const_pred_list: Vec::new(),
        sregs: HashMap::new(),
        sreg_list: Vec::new(),
        fp_slot: 0,
        cc_slot: 0,
        reg_slot: Vec::new(),
        globals: globals.clone(),
        shared_off: HashMap::new(),
        local_shared_off: HashMap::new(),
        shared_static: 0,
        func_of_ir: func_of_ir.clone(),
        funcs: Vec::new(),
        tables: Vec::new(),
        calls: Vec::new(),
        barriers: Vec::new(),
        messages: Vec::new(),
    };
    b.fp_slot = b.new_slot();
    b.cc_slot = b.new_slot();
    b.konst(0);
    // shared memory layout: module shared variables, then function-local ones, then dynamic
    let mut off = 0u64;
    let mut dynamic = Vec::new();
    for (gi, g) in m.globals.iter().enumerate() {
        if matches!(g.space, StateSpace::Shared | StateSpace::SharedCta) {
            if g.size == 0 || g.external {
                dynamic.push(gi as u32);
                continue;
            }
            // (saturating: a size near 2^64 is refused at launch, not wrapped here)
            off = off.div_ceil(g.align.max(1)).saturating_mul(g.align.max(1));
            b.shared_off.insert(gi as u32, off);
            off = off.saturating_add(g.size);
        }
    }
    for &f in &order {
        for (li, l) in m.functions[f as usize].locals.iter().enumerate() {
            if l.space == StateSpace::Shared {
                off = off.div_ceil(l.align.max(1)).saturating_mul(l.align.max(1));
                b.local_shared_off.insert((f, li as u32), off);
                off = off.saturating_add(l.size);
            }
        }
    }
    let dyn_off = off.div_ceil(16).saturating_mul(16);
    for g in dynamic {
        b.shared_off.insert(g, dyn_off);
    }
    b.shared_static = dyn_off;
    // recursion: f is recursive if it can reach itself
    let recursive: Vec<bool> = order.iter().map(|&f| reaches(m, f, f)).collect();
    // register slots and function info
    let mut entry = 0u32;
    // the kernel's registers that can share slots (see `invariant::Facts::classes`)
    let facts = crate::invariant::Facts::new(&m.functions[kernel as usize]);
    let classes = facts.classes(&m.functions[kernel as usize]);
    b.copies = facts.copies(&m.functions[kernel as usize]);
    b.read_direct = vec![false; m.functions[kernel as usize].regs.len()];
    for (pi, &f) in order.iter().enumerate() {
        let func = &m.functions[f as usize];
        let first = b.nslots;
        let pfirst = b.npreds;
        let mut slots = Vec::with_capacity(func.regs.len());
        let mut class_slot: HashMap<u32, u32> = HashMap::new();
        for (r, info) in func.regs.iter().enumerate() {
            if info.ty == ScalarType::Pred {
                slots.push(b.npreds);
                b.npreds += 1;
            } else if let Some(c) = classes.get(r).copied().flatten().filter(|_| pi == 0) {
                let s = *class_slot.entry(c).or_insert_with(|| {
                    b.nslots += 1;
                    b.nslots - 1
                });
                slots.push(s);
            } else {
                slots.push(b.nslots);
                b.nslots += 1;
            }
        }
        b.reg_slot.push(slots);
        let param_info =
            |p: &ptx_ir::Param, l: Option<&ptx_ir::LocalVar>| -> (u64, u64, Option<u32>) {
                (
                    l.map(|l| l.offset).unwrap_or(0),
                    p.size,
                    p.reg.map(|r| b.reg_slot[pi][r as usize]),
                )
            };
        let find_local = |name: &str| {
            func.locals
                .iter()
                .find(|l| l.name == name && l.space == StateSpace::Param)
        };
        let params = func
            .params
            .iter()
            .map(|p| param_info(p, find_local(&p.name)))
            .collect();
        let returns = func
            .returns
            .iter()
            .map(|p| param_info(p, find_local(&p.name)))
            .collect();
        b.funcs.push(FuncInfo {
            ir_index: f,
            name: func.name.to_string(),
            entry,
            frame_size: func.frame_size,
            slots: (first, b.nslots),
            pred_slots: (pfirst, b.npreds),
            recursive: recursive[pi],
            params,
            returns,
        });
        entry += func.insts.len() as u32;
    }
    // code
    let mut code = Vec::with_capacity(entry as usize);
    for (pi, &f) in order.iter().enumerate() {
        let func = &m.functions[f as usize];
        for (k, inst) in func.insts.iter().enumerate() {
            let mut d = Dec {
                b: &mut b,
                f,
                fi: pi as u32,
                func,
                inst,
            };
            let decoded = match func.unsupported.iter().find(|(at, _)| *at == k as u32) {
                Some((_, why)) => Err(why.clone()),
                None => crate::coverage::check_executes(&inst.opcode, &inst.mods)
                    .and_then(|()| decode(&mut d)),
            };
            let mut insn = match decoded {
                Ok(i) => i,
                Err(msg) => {
                    let id = b.message(msg);
                    Insn::new(Op::Unsupported(id), f, k as u32)
                }
            };
            insn.func = f;
            insn.inst = k as u32;
            if let Some(g) = inst.guard {
                insn.guard = b.reg_slot[pi][g.reg as usize];
                insn.neg = g.negated;
            }
            code.push(insn);
        }
    }
    let mut plan = crate::invariant::plan(&b, kernel, &facts, &mut code);
    // a copy that every reader reads from its source instead is dead (still counted; decided
    // after the plan, which needs the copy decoded to see that its readers can be hoisted)
    for (k, inst) in m.functions[kernel as usize].insts.iter().enumerate() {
        if let (Some(Operand::Reg(r)), true) = (inst.operands.first(), inst.opcode == "mov") {
            let r = *r as usize;
            if b.copies.get(r).is_some_and(|c| c.is_some()) && !b.read_direct[r] {
                code[k].op = Op::Nop;
                plan.prelude.retain(|i| i.inst != k as u32);
            }
        }
    }
    // every pc a branch, a table or a return can reach
    let mut targets: Vec<u32> = b.funcs.iter().map(|f| f.entry).collect();
    targets.extend(b.tables.iter().flatten().copied());
    for (pc, insn) in code.iter().enumerate() {
        match insn.op {
            Op::Bra(t) => targets.push(t),
            Op::Call(_) => targets.push(pc as u32 + 1),
            _ => {}
        }
    }
    crate::ifconv::convert(
        &m.functions[kernel as usize],
        facts.effects(),
        &mut code,
        &targets,
    );
    let funcs: Vec<(u32, u32)> = b.funcs.iter().map(|f| (f.ir_index, f.entry)).collect();
    let unfused = crate::disasm::Unfused::of(&code);
    crate::fuse::fuse(m, &funcs, &mut code, &targets, (kernel, &facts));
    let fused = unfused.fused(&code);
    set_skips(&mut code);
    let kf = &m.functions[kernel as usize];
    let unsupported = code
        .iter()
        .filter_map(|i| match i.op {
            Op::Unsupported(m) => Some((i.func, i.inst, m)),
            _ => None,
        })
        .collect();
    Ok(Program {
        fused,
        unsupported,
        code,
        prelude: plan.prelude,
        reset_slots: plan.reset_slots,
        reset_preds: plan.reset_preds,
        funcs: b.funcs,
        func_of_ir,
        nslots: b.nslots,
        npreds: b.npreds,
        consts: b.const_list,
        const_preds: b.const_pred_list,
        sreg_slots: b.sreg_list,
        fp_slot: b.fp_slot,
        cc_slot: b.cc_slot,
        tables: b.tables,
        calls: b.calls,
        barriers: b.barriers,
        messages: b.messages,
        shared_static: b.shared_static,
        params: kf.params.iter().map(|p| (p.offset, p.size)).collect(),
        param_size: kf.param_size,
        // (conservatively, any function of the module)
        alloca: m
            .functions
            .iter()
            .any(|f| f.insts.iter().any(|i| i.opcode == "alloca")),
    })
}

fn reaches(m: &ptx_ir::Module, from: u32, to: u32) -> bool {
    let mut stack: Vec<u32> = m.functions[from as usize].callees.clone();
    let mut seen = vec![false; m.functions.len()];
    while let Some(f) = stack.pop() {
        if f == to {
            return true;
        }
        if std::mem::replace(&mut seen[f as usize], true) {
            continue;
        }
        stack.extend(m.functions[f as usize].callees.iter().copied());
    }
    false
}

/// Decodes one instruction.
fn decode(d: &mut Dec<'_, '_>) -> R<Insn> {
    let op = d.inst.opcode.as_str();
    let mut insn = Insn::new(Op::Nop, d.f, 0);
    let entry = d.b.funcs[d.fi as usize].entry;
    match op {
        "bra" => {
            let t = match d.operand(0)? {
                Operand::Label(l) => *l,
                o => return Err(format!("unsupported branch target {o:?}")),
            };
            insn.op = Op::Bra(entry + t);
        }
        "brx" => {
            insn.a = d.src(0, ScalarType::U32)?;
            let t = match d.operand(1)? {
                Operand::Targets(t) => t.iter().map(|x| entry + x).collect(),
                o => return Err(format!("unsupported brx.idx target list {o:?}")),
            };
            d.b.tables.push(t);
            insn.op = Op::Brx(d.b.tables.len() as u32 - 1);
        }
        "ret" => insn.op = Op::Ret,
        "exit" => insn.op = Op::Exit,
        "trap" => insn.op = Op::Trap,
        "brkpt" | "nanosleep" | "membar" | "fence" | "prefetch" | "prefetchu" | "pmevent"
        | "discard" | "applypriority" | "createpolicy" => {
            if op == "createpolicy" {
                // a cache policy value: any 64-bit value will do
                insn.d = d.dst(0)?;
                insn.op = crate::alu1!(i, a => 0);
                insn.a = d.b.konst(0);
            } else {
                insn.op = Op::Nop;
            }
        }
        "call" => decode_call(d, &mut insn)?,
        "bar" | "barrier" => decode_bar(d, &mut insn)?,
        _ => {
            if let Some(r) = crate::ops_move::decode(d, &mut insn) {
                r?;
            } else if let Some(r) = crate::ops_int::decode(d, &mut insn) {
                r?;
            } else if let Some(r) = crate::ops_float::decode(d, &mut insn) {
                r?;
            } else if let Some(r) = crate::ops_warp::decode(d, &mut insn) {
                r?;
            } else {
                return Err(format!("ptxvm does not execute `{op}`"));
            }
        }
    }
    Ok(insn)
}

fn decode_call(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    // call{.uni} (rets), target, (args){, proto};
    let ops = &d.inst.operands;
    let mut idx = 0;
    let mut rets = Vec::new();
    if let Some(Operand::List(l)) = ops.first() {
        rets = l.clone();
        idx = 1;
    }
    let target = ops.get(idx).ok_or("call without a target")?;
    let args = match ops.get(idx + 1) {
        Some(Operand::List(l)) => l.clone(),
        _ => Vec::new(),
    };
    let conv = |d: &mut Dec<'_, '_>, o: &Operand| -> R<CallOperand> {
        Ok(match o {
            Operand::Symbol(Base::Local(l), k) => {
                let local = &d.func.locals[*l as usize];
                CallOperand::Frame(local.offset + *k as u64, local.size)
            }
            Operand::Reg(r) => CallOperand::Slot(d.reg_slot(*r)),
            Operand::Imm(i) => CallOperand::Slot(d.b.konst(imm_bits(*i, ScalarType::B64))),
            o => return Err(format!("unsupported call argument {o:?}")),
        })
    };
    let rets = rets.iter().map(|o| conv(d, o)).collect::<R<Vec<_>>>()?;
    let args = args.iter().map(|o| conv(d, o)).collect::<R<Vec<_>>>()?;
    let target = match target {
        Operand::Symbol(Base::Function(f), 0) => {
            let callee = &d.b.m.functions[*f as usize];
            if callee.defined {
                CallTarget::Func(d.b.func_of_ir[*f as usize].ok_or("callee not compiled")?)
            } else {
                match callee.name.as_str() {
                    "vprintf" => CallTarget::Vprintf,
                    "__assertfail" | "__assert_fail" => CallTarget::AssertFail,
                    n => CallTarget::Undefined(n.to_string()),
                }
            }
        }
        Operand::Reg(r) => CallTarget::Indirect(d.reg_slot(*r)),
        o => return Err(format!("unsupported call target {o:?}")),
    };
    d.b.calls.push(CallSite { target, args, rets });
    insn.op = Op::Call(d.b.calls.len() as u32 - 1);
    Ok(())
}

fn decode_bar(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let mods: Vec<&str> = d.inst.mods.iter().map(|m| m.as_str()).collect();
    let has = |m: &str| mods.contains(&m);
    let is_barrier = d.inst.opcode == "barrier";
    if has(".warp") {
        // bar.warp.sync membermask
        insn.b = d.src(0, ScalarType::B32)?;
        fn nop(_: &mut crate::program::Ctx<'_>, _: &Insn, _: u32) -> crate::program::MemResult {
            Ok(())
        }
        insn.op = Op::WarpSync(nop);
        return Ok(());
    }
    let kind = if has(".arrive") {
        BarKind::Arrive
    } else if has(".red") {
        BarKind::Red
    } else {
        BarKind::Sync
    };
    let aligned = !is_barrier || has(".aligned");
    let mut k = 0;
    let mut red = None;
    let mut red_dst = 0;
    if kind == BarKind::Red {
        let op = if has(".popc") {
            RedOp::Popc
        } else if has(".and") {
            RedOp::And
        } else {
            RedOp::Or
        };
        red_dst = match op {
            RedOp::Popc => d.dst(0)?,
            _ => d.pred_dst(0)?,
        };
        red = Some(op);
        k = 1;
    }
    let (id, id_slot) = match d.operand(k)? {
        Operand::Imm(Imm::Int(v)) => (*v as u32, None),
        _ => (0, Some(d.src(k, ScalarType::U32)?)),
    };
    let n = d.inst.operands.len();
    let count_idx = if kind == BarKind::Red {
        n - 1 - 1
    } else {
        n - 1
    };
    let (count, count_slot) =
        if (kind == BarKind::Red && n == 4) || (kind != BarKind::Red && n == 2) {
            match d.operand(count_idx)? {
                Operand::Imm(Imm::Int(v)) => (Some(*v as u32), None),
                _ => (None, Some(d.src(count_idx, ScalarType::U32)?)),
            }
        } else {
            (None, None)
        };
    let red = match red {
        Some(op) => {
            let (src, neg) = d.pred_src(n - 1)?;
            Some((op, red_dst, src, neg))
        }
        None => None,
    };
    d.b.barriers.push(Barrier {
        kind,
        id,
        id_slot,
        count,
        count_slot,
        aligned,
        red,
    });
    insn.op = Op::Bar(d.b.barriers.len() as u32 - 1);
    Ok(())
}

/// Whether `ty` is a floating-point type.
pub(crate) fn is_float(ty: ScalarType) -> bool {
    ty.kind() == TypeKind::Float
}

/// Compiles kernel `k`, with parameters `params` and body `body`, from PTX text (for the tests
/// of the compile-time passes).
#[cfg(test)]
pub(crate) fn test_program(params: &str, body: &str) -> Program {
    let text = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k({params})\n{{\n{body}\n}}\n"
    );
    let parsed = ptx_syntax::parse(&text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let m = ptx_ir::lower(&parsed.module).expect("lowers");
    compile(&m, 0, &GlobalAddrs::default()).expect("compiles")
}
