//! Decoding: one IR instruction into one bytecode [`Insn`].
//!
//! [`decode`] is one `match` on the instruction's [`Opcode`] with an arm per opcode of the
//! table and no catch-all: an opcode added to the table without a decoder arm (or an entry in
//! [`crate::coverage::NOT_EXECUTED`]) does not compile. Each arm resolves operands to slots
//! through [`Dec`] and picks the handler (in `crate::ops_*`, which hold the handlers only) and
//! its packed `aux` bits from the typed modifiers, so that execution never looks at a
//! modifier. [`Builder`] is the state decoding shares across a kernel's instructions: slots,
//! constants, special registers, jump tables, call sites and barriers.

mod asyncop;
mod cluster;
mod ctrl;
mod data;
pub(crate) mod float;
mod int;
mod matrix;
mod matrix_kind;
mod tmap;
mod warp;
mod wgmma;

use crate::program::{
    func_addr, Barrier, CallSite, FuncInfo, GlobalAddrs, Insn, Op, Space, SregInit,
};
use ptx_ir::{Base, FunctionKind, Imm, Modifier, Opcode, Operand, RegId};
use ptx_isa::{ScalarType, StateSpace, TypeKind};
use std::collections::HashMap;

/// What decoding builds across a kernel's instructions (slots, constants, tables, call sites,
/// barriers), which [`crate::compile::compile`] turns into the [`crate::program::Program`].
pub(crate) struct Builder<'m> {
    pub m: &'m ptx_ir::Module,
    pub nslots: u32,
    pub npreds: u32,
    pub consts: HashMap<u64, u32>,
    pub const_list: Vec<(u32, u64)>,
    /// Per kernel register: the operand it is a copy of ([`crate::rewrite::invariant::Facts::copies`]).
    pub copies: Vec<Option<(&'m Operand, ScalarType)>>,
    /// Per kernel register: read from its own slot somewhere (not through [`Self::copies`]).
    pub read_direct: Vec<bool>,
    pub const_preds: [Option<u32>; 2],
    pub const_pred_list: Vec<(u32, u32)>,
    pub sregs: HashMap<SregInit, u32>,
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
    /// Operand slot lists of instructions with more operands than an `Insn` holds.
    pub lists: Vec<Vec<u32>>,
    pub calls: Vec<CallSite>,
    pub barriers: Vec<Barrier>,
    pub messages: Vec<String>,
    /// See [`crate::program::Program::cluster_mem`].
    pub cluster_mem: Vec<(Insn, [u32; 5])>,
    /// Whether the module has a generic `mapa` (computed at its first memory access).
    pub generic_mapa: Option<bool>,
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

pub(crate) type R<T> = Result<T, String>;

impl<'m> Builder<'m> {
    pub(crate) fn new_slot(&mut self) -> u32 {
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
        "%clusterid" => SregInit::ClusterId(c),
        "%nclusterid" => SregInit::NClusterId(c),
        "%cluster_ctaid" => SregInit::ClusterCtaid(c),
        "%cluster_nctaid" => SregInit::ClusterNctaid(c),
        "%cluster_ctarank" => SregInit::ClusterCtarank,
        "%cluster_nctarank" => SregInit::ClusterNctarank,
        "%is_explicit_cluster" => SregInit::IsExplicitCluster,
        // graphs are not modelled: a kernel never runs in one
        "%current_graph_exec" => SregInit::Zero,
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
    pub fn has(&self, m: Modifier) -> bool {
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
    fn reg_slot(&mut self, r: RegId) -> u32 {
        if self.fi == 0 {
            if let Some(x) = self.b.read_direct.get_mut(r.index()) {
                *x = true;
            }
        }
        self.b.reg_slot[self.fi as usize][r.index()]
    }
    /// The slot to read register `r` from when it is a copy of an operand whose slot holds
    /// the same bits whenever `r` is read ([`crate::rewrite::invariant::Facts::copies`], kernel
    /// registers only).
    fn copy_slot(&mut self, r: RegId) -> Option<u32> {
        if self.fi != 0 {
            return None;
        }
        let (o, ty) = self.b.copies.get(r.index()).copied().flatten()?;
        self.src_op(o, ty).ok()
    }
    fn is_pred_reg(&self, r: RegId) -> bool {
        self.func.regs[r].ty == ScalarType::Pred
    }
    /// Type of register `r`.
    pub fn reg_ty(&self, r: RegId) -> ScalarType {
        self.func.regs[r].ty
    }
    /// Value slot written by operand `k` (a register; `_` gets a scratch slot).
    pub fn dst(&mut self, k: usize) -> R<u32> {
        match self.operand(k)? {
            Operand::Reg(r) if !self.is_pred_reg(*r) => {
                Ok(self.b.reg_slot[self.fi as usize][r.index()])
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
                let glob = &self.b.m.globals[g.index()];
                let a = match glob.space {
                    StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => {
                        *self.b.shared_off.get(&g.raw()).unwrap_or(&0)
                    }
                    _ => self.b.globals.addr.get(g.index()).copied().unwrap_or(0),
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
                let local = &self.func.locals[l.index()];
                if local.space == StateSpace::Shared {
                    let off = *self
                        .b
                        .local_shared_off
                        .get(&(self.f, l.raw()))
                        .unwrap_or(&0);
                    off.wrapping_add(k as u64)
                } else {
                    return Ok(None);
                }
            }
            Base::KernelParam(p) => self.func.params[p as usize].offset.wrapping_add(k as u64),
            Base::Function(f) => func_addr(f.raw()).wrapping_add(k as u64),
            Base::Absolute => k as u64,
            Base::Reg(_) => return Ok(None),
        }))
    }
}

impl<'b, 'm> Dec<'b, 'm> {
    /// Base slot, offset and space of address operand `k`.
    pub fn address(&mut self, k: usize) -> R<(u32, i64, Space)> {
        let o = self.operand(k)?;
        self.address_op(o)
    }
    /// [`Dec::address`] of the operand `o`.
    pub fn address_op(&mut self, o: &Operand) -> R<(u32, i64, Space)> {
        let written = self.inst.space();
        let (base, off) = match o {
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
                let local = &self.func.locals[l.index()];
                if local.space == StateSpace::Shared {
                    let o = *self
                        .b
                        .local_shared_off
                        .get(&(self.f, l.raw()))
                        .unwrap_or(&0);
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
                let glob = &self.b.m.globals[g.index()];
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

/// Decodes one instruction: one arm per opcode of the table, so that an opcode added to the
/// table without a handler (or an entry in [`crate::coverage::NOT_EXECUTED`]) does not compile.
pub(crate) fn decode(d: &mut Dec<'_, '_>) -> R<Insn> {
    use crate::coverage::not_executed;
    use data as mv;
    use float::{self as fl, Ar};
    let op = d.inst.op;
    let mut insn = Insn::new(Op::Nop, d.f, 0);
    let i = &mut insn;
    let entry = d.b.funcs[d.fi as usize].entry;
    // the opcodes of both families are floating-point arithmetic on a floating-point type
    let float = d.inst.types().last().is_some_and(is_float) || d.has(Modifier::F32x2);
    match op {
        Opcode::Bra => {
            let t = match d.operand(0)? {
                Operand::Label(l) => l.raw(),
                o => return Err(format!("unsupported branch target {o:?}")),
            };
            i.op = Op::Bra(entry + t);
        }
        Opcode::Brx => {
            i.a = d.src(0, ScalarType::U32)?;
            let t = match d.operand(1)? {
                Operand::Targets(t) => t.iter().map(|x| entry + x.raw()).collect(),
                o => return Err(format!("unsupported brx.idx target list {o:?}")),
            };
            d.b.tables.push(t);
            i.op = Op::Brx(d.b.tables.len() as u32 - 1);
        }
        Opcode::Ret => i.op = Op::Ret,
        Opcode::Exit => i.op = Op::Exit,
        Opcode::Trap => i.op = Op::Trap,
        // hints and orderings with no effect in an interpreter that runs memory operations in
        // program order
        Opcode::Brkpt
        | Opcode::Nanosleep
        | Opcode::Membar
        | Opcode::Fence
        | Opcode::Prefetch
        | Opcode::Prefetchu
        | Opcode::Pmevent
        | Opcode::Discard
        | Opcode::Applypriority => i.op = Op::Nop,
        Opcode::Createpolicy => {
            // a cache policy value: any 64-bit value will do
            i.d = d.dst(0)?;
            i.op = crate::alu1!(i, a => 0);
            i.a = d.b.konst(0);
        }
        Opcode::Call => ctrl::decode_call(d, i)?,
        Opcode::Bar | Opcode::Barrier | Opcode::BarWarpSync => ctrl::decode_bar(d, i)?,
        // data movement
        Opcode::Mov => mv::decode_mov(d, i)?,
        Opcode::Ld | Opcode::Ldu => mv::decode_ld_st(d, i, false)?,
        Opcode::St => mv::decode_ld_st(d, i, true)?,
        Opcode::Cvta => mv::decode_cvta(d, i)?,
        Opcode::Isspacep => mv::decode_isspacep(d, i)?,
        Opcode::Alloca => mv::decode_alloca(d, i)?,
        Opcode::Stacksave => mv::decode_stacksave(d, i)?,
        Opcode::Stackrestore => mv::decode_stackrestore(d, i)?,
        Opcode::Activemask => mv::decode_activemask(d, i)?,
        // floating-point forms of the opcodes shared with the integer family
        Opcode::Add if float => fl::arith(d, i, Ar::Add)?,
        Opcode::Sub if float => fl::arith(d, i, Ar::Sub)?,
        Opcode::Mul if float => fl::arith(d, i, Ar::Mul)?,
        Opcode::Mad if float => fl::arith(d, i, Ar::Mad)?,
        Opcode::Div if float => fl::arith(d, i, Ar::Div)?,
        Opcode::Min if float => fl::arith(d, i, Ar::Min)?,
        Opcode::Max if float => fl::arith(d, i, Ar::Max)?,
        Opcode::Abs if float => fl::arith(d, i, Ar::Abs)?,
        Opcode::Neg if float => fl::arith(d, i, Ar::Neg)?,
        // integer arithmetic and logic
        Opcode::Add | Opcode::Sub if d.has(Modifier::Cc) => {
            int::carry(d, i, op == Opcode::Sub, false)?
        }
        Opcode::Add => int::add_sub(d, i, false)?,
        Opcode::Sub => int::add_sub(d, i, true)?,
        Opcode::Addc => int::carry(d, i, false, true)?,
        Opcode::Subc => int::carry(d, i, true, true)?,
        Opcode::Mul => int::mul(d, i)?,
        Opcode::Mad if d.has(Modifier::Cc) => int::mad_carry(d, i, false)?,
        Opcode::Mad => int::mad(d, i)?,
        Opcode::Madc => int::mad_carry(d, i, true)?,
        Opcode::Mul24 => int::mul24(d, i, false)?,
        Opcode::Mad24 => int::mul24(d, i, true)?,
        Opcode::Sad => int::sad(d, i)?,
        Opcode::Div => int::div(d, i)?,
        Opcode::Rem => int::rem(d, i)?,
        Opcode::Abs => int::abs(d, i)?,
        Opcode::Neg => int::neg(d, i)?,
        Opcode::Min => int::min_max(d, i, false)?,
        Opcode::Max => int::min_max(d, i, true)?,
        Opcode::Popc | Opcode::Clz | Opcode::Brev => int::bits1(d, i, op)?,
        Opcode::Bfind => int::bfind(d, i)?,
        Opcode::Fns => int::fns(d, i)?,
        Opcode::Bfe => int::bfe(d, i)?,
        Opcode::Bfi => int::bfi(d, i)?,
        Opcode::Bmsk => int::bmsk(d, i)?,
        Opcode::Szext => int::szext(d, i)?,
        Opcode::Dp4a => int::dot(d, i, false)?,
        Opcode::Vabsdiff4 => int::vop4(d, i)?,
        Opcode::Dp2a => int::dot(d, i, true)?,
        Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not | Opcode::Cnot => {
            int::logic(d, i, op)?
        }
        Opcode::Lop3 => int::lop3(d, i)?,
        Opcode::Shf => int::shf(d, i)?,
        Opcode::Shl => int::shift(d, i, false)?,
        Opcode::Shr => int::shift(d, i, true)?,
        Opcode::Prmt => int::prmt(d, i)?,
        // floating point, comparisons and conversions
        Opcode::Fma => fl::arith(d, i, Ar::Fma)?,
        Opcode::Rcp => fl::arith(d, i, Ar::Rcp)?,
        Opcode::Sqrt => fl::arith(d, i, Ar::Sqrt)?,
        Opcode::Rsqrt => fl::arith(d, i, Ar::Rsqrt)?,
        Opcode::Sin => fl::arith(d, i, Ar::Sin)?,
        Opcode::Cos => fl::arith(d, i, Ar::Cos)?,
        Opcode::Lg2 => fl::arith(d, i, Ar::Lg2)?,
        Opcode::Ex2 => fl::arith(d, i, Ar::Ex2)?,
        Opcode::Tanh => fl::arith(d, i, Ar::Tanh)?,
        Opcode::Copysign => fl::arith(d, i, Ar::Copysign)?,
        Opcode::Testp => fl::arith(d, i, Ar::Testp)?,
        Opcode::Set => fl::decode_set(d, i)?,
        Opcode::Setp => fl::decode_setp(d, i)?,
        Opcode::Selp => fl::decode_selp(d, i)?,
        Opcode::Slct => fl::decode_slct(d, i)?,
        Opcode::Cvt => fl::decode_cvt(d, i)?,
        Opcode::CvtPack => fl::decode_cvt_pack(d, i)?,
        // warp-level and atomic
        Opcode::Shfl => warp::decode_shfl(d, i)?,
        Opcode::Vote => warp::decode_vote(d, i)?,
        Opcode::Match => warp::decode_match(d, i)?,
        Opcode::Redux => warp::decode_redux(d, i)?,
        Opcode::Elect => warp::decode_elect(d, i)?,
        Opcode::Atom => warp::decode_atom(d, i, false)?,
        Opcode::Red => warp::decode_atom(d, i, true)?,
        // warp-level matrix instructions
        Opcode::Mma => matrix::decode_mma(d, i)?,
        Opcode::MmaSp => matrix::decode_mma_sp(d, i)?,
        Opcode::Ldmatrix => matrix::decode_ldst_matrix(d, i, false)?,
        Opcode::Stmatrix => matrix::decode_ldst_matrix(d, i, true)?,
        Opcode::Movmatrix => matrix::decode_movmatrix(d, i)?,
        Opcode::WmmaLoad => matrix::decode_wmma_ldst(d, i, false)?,
        Opcode::WmmaStore => matrix::decode_wmma_ldst(d, i, true)?,
        Opcode::WmmaMma => matrix::decode_wmma_mma(d, i)?,
        Opcode::Wmma => matrix::decode_wmma(d, i)?,
        Opcode::WgmmaMmaAsync
        | Opcode::WgmmaMmaAsyncSp
        | Opcode::WgmmaFence
        | Opcode::WgmmaCommitGroup
        | Opcode::WgmmaWaitGroup => wgmma::decode(d, i, op)?,
        // asynchronous copies and mbarriers
        Opcode::CpAsync
        | Opcode::CpAsyncCommitGroup
        | Opcode::CpAsyncWaitGroup
        | Opcode::CpAsyncWaitAll
        | Opcode::CpAsyncMbarrierArrive
        | Opcode::CpAsyncBulk
        | Opcode::CpReduceAsyncBulk
        | Opcode::CpAsyncBulkPrefetch
        | Opcode::CpAsyncBulkCommitGroup
        | Opcode::CpAsyncBulkWaitGroup
        | Opcode::CpAsyncBulkTensor
        | Opcode::CpReduceAsyncBulkTensor
        | Opcode::CpAsyncBulkPrefetchTensor
        | Opcode::Mbarrier
        | Opcode::MbarrierInit
        | Opcode::MbarrierInval
        | Opcode::MbarrierArrive
        | Opcode::MbarrierArriveDrop
        | Opcode::MbarrierExpectTx
        | Opcode::MbarrierCompleteTx
        | Opcode::MbarrierTestWait
        | Opcode::MbarrierTryWait
        | Opcode::StAsync
        | Opcode::RedAsync => asyncop::decode(d, i)?,
        Opcode::MbarrierPendingCount => {
            i.d = d.dst(0)?;
            i.a = d.src(1, ScalarType::B64)?;
            i.op = Op::Alu(crate::ops_async::pending_count);
        }
        Opcode::Tensormap
        | Opcode::TensormapReplace
        | Opcode::TensormapCpFenceproxy
        | Opcode::StBulk => tmap::decode(d, i)?,
        // clusters
        Opcode::BarrierCluster | Opcode::Mapa | Opcode::Getctarank => cluster::decode(d, i)?,
        // no dependent launch exists: both complete at once; no registers are allocated
        Opcode::Griddepcontrol | Opcode::Setmaxnreg => i.op = Op::Nop,
        not_executed!() => return Err(crate::coverage::refusal(op)),
    }
    if matches!(op, Opcode::Ld | Opcode::St | Opcode::Atom | Opcode::Red) {
        cluster::remote_access(d, &mut insn);
    }
    Ok(insn)
}

/// Whether `ty` is a floating-point type.
pub(crate) fn is_float(ty: ScalarType) -> bool {
    ty.kind() == TypeKind::Float
}
