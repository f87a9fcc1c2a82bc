//! What a CTA must reset, and what can be computed once per launch.
//!
//! Every CTA used to start by zeroing all of its register slots: 256 bytes per slot and warp, a
//! large share of the run time of short kernels launched over many CTAs. Definite assignment
//! ([`ptx_ir::dataflow::maybe_uninit`]) shows that most registers of real kernels are written
//! before they are read on every path, so their initial value cannot be observed (a
//! `shfl.sync` reads other lanes only when they take part, and a lane that takes part has run
//! the same writes). Only the registers that may be read unassigned, the registers of called
//! functions and the decoder's scratch slots are still zeroed per CTA ([`Plan::reset_slots`]).
//!
//! The same facts allow *hoisting*: a kernel instruction whose sources are all fixed for the
//! whole launch (immediates, kernel parameters read at a constant offset, `%tid`, `%ntid`,
//! `%laneid` and the other special registers that do not depend on the CTA, and results of
//! other hoisted instructions), and whose destinations have that one definition and are never
//! read unassigned, computes the same values in every CTA. Such an instruction runs once per
//! warp when a worker sets up its first CTA ([`Plan::prelude`]) and becomes a no-op in the
//! code; it still counts as executed, so instruction counts and budgets do not change. Only
//! pure lane-wise operations and loads of kernel parameters (read-only for the launch) are
//! hoisted; anything guarded, touching the carry flag or reading other state stays in place.

use crate::decode::{sreg_of, Builder};
use crate::program::{Insn, Op, SregInit};
use ptx_ir::dataflow::{all_effects, interference, liveness, maybe_uninit, Effects, Liveness};
use ptx_ir::{Base, Modifier, OpFlags, Opcode, Operand, RegId};
use ptx_isa::{ScalarType, StateSpace};

/// Result of [`plan`].
#[derive(Default)]
pub(crate) struct Plan {
    /// Instructions to run once per warp when a worker first sets it up, in program order.
    pub prelude: Vec<Insn>,
    /// Value slots to zero at the start of every CTA, as half-open ranges.
    pub reset_slots: Vec<(u32, u32)>,
    /// Predicate slots to clear at the start of every CTA, as half-open ranges.
    pub reset_preds: Vec<(u32, u32)>,
}

/// Whether a special register has the same value in every CTA of a launch.
pub(crate) fn launch_invariant(s: SregInit) -> bool {
    !matches!(
        s,
        SregInit::Ctaid(_)
            | SregInit::Smid
            | SregInit::ClusterId(_)
            | SregInit::ClusterCtaid(_)
            | SregInit::ClusterCtarank
    )
}

/// Half-open ranges of the indices in `0..n` where `keep` is false.
fn ranges(n: u32, keep: &[bool]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for k in 0..n {
        if keep[k as usize] {
            continue;
        }
        match out.last_mut() {
            Some(r) if r.1 == k => r.1 = k + 1,
            _ => out.push((k, k + 1)),
        }
    }
    out
}

/// What the analyses say about the kernel's registers, computed once before decoding (slot
/// assignment needs it) and used again after.
pub(crate) struct Facts {
    effects: Vec<Effects>,
    /// Liveness of the kernel's registers (`None` without a CFG).
    live: Option<Liveness>,
    /// Per register: may be read unassigned.
    uninit: Vec<bool>,
    /// Per register: number of instructions that may write it.
    defs: Vec<u32>,
}

impl Facts {
    /// The registers each kernel instruction reads and writes.
    pub fn effects(&self) -> &[Effects] {
        &self.effects
    }

    /// Liveness of the kernel's registers, when it has a CFG.
    pub fn liveness(&self) -> Option<&Liveness> {
        self.live.as_ref()
    }

    pub fn new(kf: &ptx_ir::Function) -> Facts {
        let effects = all_effects(kf);
        let mut defs = vec![0u32; kf.regs.len()];
        for e in &effects {
            for &r in &e.writes {
                defs[r.index()] += 1;
            }
        }
        Facts {
            uninit: maybe_uninit(kf, &effects),
            live: liveness(kf, &effects),
            effects,
            defs,
        }
    }

    /// Per instruction: whether it is hoisted, given `op_ok(k)`, whether the decoded form of
    /// instruction `k` allows it (see [`pure_or_param_load`]); and per register, whether it
    /// holds a hoisted (launch-invariant) value.
    fn hoisted(
        &self,
        kf: &ptx_ir::Function,
        op_ok: impl Fn(usize, &ptx_ir::Inst) -> bool,
    ) -> (Vec<bool>, Vec<bool>) {
        let mut invariant = vec![false; kf.regs.len()];
        let mut hoist = vec![false; kf.insts.len()];
        for (k, (inst, e)) in kf.insts.iter().zip(&self.effects).enumerate() {
            let h = e.certain
                && !e.writes.is_empty()
                && e.writes
                    .iter()
                    .all(|&r| self.defs[r.index()] == 1 && !self.uninit[r.index()])
                && e.reads.iter().all(|&r| invariant[r.index()])
                && inst.operands[1..].iter().all(|o| source_is_fixed(o, kf))
                && op_ok(k, inst);
            if h {
                hoist[k] = true;
                for &r in &e.writes {
                    invariant[r.index()] = true;
                }
            }
        }
        (hoist, invariant)
    }

    /// Per register: the operand it is a copy of whenever it is read, with the type of the
    /// copy. That is so when its one definition is an unguarded `mov` from an immediate, a
    /// symbol or a special register that is fixed for the thread (all of which keep their value
    /// for the whole CTA), and it is never read unassigned. nvcc copies `%ctaid`, shared
    /// variables' addresses and `shfl` offsets into registers this way; a reader of the
    /// register can read the operand's slot instead, and the decoder then sees constants
    /// (see [`crate::ops_warp`]).
    pub fn copies<'k>(&self, kf: &'k ptx_ir::Function) -> Vec<Option<(&'k Operand, ScalarType)>> {
        let mut out = vec![None; kf.regs.len()];
        for (inst, e) in kf.insts.iter().zip(&self.effects) {
            let (Some(ty), [r], [_, o]) = (
                inst.types().next(),
                e.writes.as_slice(),
                inst.operands.as_slice(),
            ) else {
                continue;
            };
            let r = r.index();
            let copyable = match o {
                Operand::Imm(_) | Operand::Symbol(..) => true,
                Operand::Special(sr) => sreg_of(sr).is_some(),
                _ => false,
            };
            if inst.op == Opcode::Mov
                && ty != ScalarType::Pred
                && copyable
                && e.certain
                && self.defs[r] == 1
                && !self.uninit[r]
            {
                out[r] = Some((o, ty));
            }
        }
        out
    }

    /// Storage classes of the kernel's value registers: registers with the same class share a
    /// slot (`None`: a slot of its own). Only registers that are never read unassigned and do
    /// not hold hoisted values are shared (the others must keep their contents from CTA to
    /// CTA); two share only when they do not interfere ([`ptx_ir::dataflow::interference`]),
    /// assigned greedily in register order. This keeps the slots a warp touches few, so that
    /// they stay in the L1 cache: nvcc writes almost every value to a fresh virtual register.
    pub fn classes(&self, kf: &ptx_ir::Function) -> Vec<Option<u32>> {
        let mut out = vec![None; kf.regs.len()];
        let Some(g) = self
            .live
            .as_ref()
            .and_then(|live| interference(kf, &self.effects, live))
        else {
            return out;
        };
        let (_, invariant) = self.hoisted(kf, |_, inst| pure_or_param_load(inst, kf, None));
        let mut members: Vec<Vec<RegId>> = Vec::new();
        for (r, info) in kf.regs.iter().enumerate() {
            if info.ty == ScalarType::Pred || self.uninit[r] || invariant[r] {
                continue;
            }
            let r = RegId::new(r as u32);
            let c = match members
                .iter()
                .position(|m| m.iter().all(|&x| !g.interferes(r, x)))
            {
                Some(c) => c,
                None => {
                    members.push(Vec::new());
                    members.len() - 1
                }
            };
            members[c].push(r);
            out[r.index()] = Some(c as u32);
        }
        out
    }
}

/// Plans the CTA start of `kernel` (IR function index; program function 0, whose code is
/// `code[..n]`): hoists what can be hoisted out of `code` and lists what must be reset.
/// With `hoist` false nothing is hoisted (the rewrites are off) and only the resets are planned.
pub(crate) fn plan(
    b: &Builder<'_>,
    kernel: u32,
    facts: &Facts,
    code: &mut [Insn],
    hoist: bool,
) -> Plan {
    let kf = &b.m.functions[kernel as usize];
    let slot = &b.reg_slot[0];
    let uninit = &facts.uninit;
    let (hoist, _) = if hoist {
        facts.hoisted(kf, |k, inst| {
            code.get(k)
                .is_some_and(|insn| pure_or_param_load(inst, kf, Some(&insn.op)))
        })
    } else {
        (vec![false; kf.insts.len()], Vec::new())
    };
    let mut prelude = Vec::new();
    for (k, insn) in code.iter_mut().enumerate().take(kf.insts.len()) {
        if hoist[k] {
            prelude.push(insn.clone());
            insn.op = Op::Nop;
        }
    }
    // value slots: constants, launch-invariant special registers and kernel registers that
    // are never read unassigned keep their contents from one CTA to the next
    let mut keep = vec![false; b.nslots as usize];
    for &(s, _) in &b.const_list {
        keep[s as usize] = true;
    }
    // special registers: the CTA-dependent ones are rewritten at every CTA start anyway
    for &(s, _) in &b.sreg_list {
        keep[s as usize] = true;
    }
    let mut keep_pred = vec![false; b.npreds as usize];
    for &(s, _) in &b.const_pred_list {
        keep_pred[s as usize] = true;
    }
    for (r, info) in kf.regs.iter().enumerate() {
        if uninit[r] {
            continue;
        }
        let s = slot[r] as usize;
        if info.ty == ScalarType::Pred {
            keep_pred[s] = true;
        } else {
            keep[s] = true;
        }
    }
    Plan {
        prelude,
        reset_slots: ranges(b.nslots, &keep),
        reset_preds: ranges(b.npreds, &keep_pred),
    }
}

/// Whether `inst` is a pure lane-wise operation the decoder turned into an ALU handler, or a
/// scalar load of a kernel parameter at a constant, in-bounds offset. Without `op` (before
/// decoding), whether it can be one.
fn pure_or_param_load(inst: &ptx_ir::Inst, kf: &ptx_ir::Function, op: Option<&Op>) -> bool {
    if inst.has(Modifier::Cc) {
        return false;
    }
    if inst.op == Opcode::Ld {
        if !matches!(op, None | Some(Op::Mem(_))) || inst.space() != Some(StateSpace::Param) {
            return false;
        }
        let Some(Operand::Address(Base::KernelParam(p), off)) = inst.operands.get(1) else {
            return false;
        };
        let Some(ty) = inst.types().next() else {
            return false;
        };
        let size = (ty.size_bits() / 8).max(1) as i64;
        let Some(param) = kf.params.get(*p as usize) else {
            return false;
        };
        let at = param.offset as i64 + off;
        let vector = inst.vector_width().is_some() || inst.has(Modifier::Volatile);
        return !vector && at >= 0 && at % size == 0 && at + size <= kf.param_size as i64;
    }
    // generic addresses of `.local` and `.param` variables depend on the thread
    if inst.op == Opcode::Cvta && !inst.has(Modifier::Global) {
        return false;
    }
    matches!(op, None | Some(Op::Alu(_))) && inst.is(OpFlags::PURE)
}

/// Whether a source operand has the same value in every CTA, apart from registers (which the
/// caller checks).
fn source_is_fixed(o: &Operand, kf: &ptx_ir::Function) -> bool {
    match o {
        Operand::Reg(_) | Operand::Imm(_) | Operand::Sink => true,
        Operand::Special(sr) => sreg_of(sr).is_some_and(launch_invariant),
        Operand::Symbol(Base::Global(_) | Base::Function(_), _) => true,
        // a `.shared` variable declared in the kernel body: a fixed offset in shared memory
        Operand::Symbol(Base::Local(l), _) => kf
            .locals
            .get(l.index())
            .is_some_and(|l| l.space == StateSpace::Shared),
        Operand::Address(Base::KernelParam(_), _) => true,
        Operand::Vector(v) => v.iter().all(|o| source_is_fixed(o, kf)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::program::{Op, Program, SregInit};

    fn program(body: &str, params: &str) -> Program {
        crate::compile::test_program(params, body)
    }

    /// Kernel instructions run in the prelude; each is a no-op in the code.
    fn hoisted(p: &Program) -> Vec<u32> {
        let k: Vec<u32> = p.prelude.iter().map(|i| i.inst).collect();
        for &i in &k {
            assert!(matches!(p.code[i as usize].op, Op::Nop));
        }
        k
    }

    #[test]
    fn vector_add_hoists_parameters_and_thread_coordinates() {
        let p = program(
            ".reg .pred %p<2>; .reg .f32 %f<4>; .reg .b32 %r<6>; .reg .b64 %rd<11>;
             ld.param.u64 %rd1, [a];
             ld.param.u64 %rd2, [b];
             ld.param.u32 %r2, [n];
             mov.u32 %r3, %ctaid.x;
             mov.u32 %r4, %ntid.x;
             mov.u32 %r5, %tid.x;
             mad.lo.s32 %r1, %r3, %r4, %r5;
             setp.ge.s32 %p1, %r1, %r2;
             @%p1 bra END;
             cvta.to.global.u64 %rd4, %rd1;
             mul.wide.s32 %rd5, %r1, 4;
             add.s64 %rd6, %rd4, %rd5;
             ld.global.f32 %f1, [%rd6];
             cvta.to.global.u64 %rd7, %rd2;
             add.s64 %rd8, %rd7, %rd5;
             st.global.f32 [%rd8], %f1;
             END: ret;",
            ".param .u64 a, .param .u64 b, .param .u32 n",
        );
        // the parameter loads and the address conversions of parameters; not %ctaid or
        // anything computed from it
        assert_eq!(hoisted(&p), vec![0, 1, 2, 9, 13]);
        // `mad` reads %ctaid, %ntid and %tid from their own slots, so the copies of them into
        // %r3, %r4 and %r5 are dead: no-ops that are not in the prelude either
        for k in 3..6 {
            assert!(matches!(p.code[k].op, Op::Nop));
        }
        let sreg = |s| p.sreg_slots.iter().find(|x| x.1 == s).map(|x| x.0);
        let mad = &p.code[6];
        assert_eq!(
            [Some(mad.a), Some(mad.b), Some(mad.c)],
            [SregInit::Ctaid(0), SregInit::Ntid(0), SregInit::Tid(0)].map(sreg)
        );
        // every kernel register is written before it is read: none is reset per CTA
        let kernel = p.funcs[0].slots;
        for &(a, b) in &p.reset_slots {
            assert!(
                b <= kernel.0 || a >= kernel.1,
                "{:?} resets kernel slots",
                (a, b)
            );
        }
    }

    #[test]
    fn short_lived_registers_share_slots() {
        // %r1..%r4 each die at the next instruction; %r9 lives across all of them
        let p = program(
            ".reg .b32 %r<10>; .reg .b64 %rd<3>;
             ld.param.u64 %rd1, [out];
             mov.u32 %r9, %ctaid.x;
             add.u32 %r1, %r9, 1;
             add.u32 %r2, %r1, 2;
             add.u32 %r3, %r2, 3;
             add.u32 %r4, %r3, %r9;
             mul.wide.u32 %rd2, %r9, 4;
             st.global.u32 [%rd1], %r4;
             st.global.u64 [%rd1+8], %rd2;
             ret;",
            ".param .u64 out",
        );
        let f = &p.funcs[0];
        // 13 value registers (%r0..%r9, %rd0..%rd2): %rd1 is hoisted (its own slot); the rest
        // fit in far fewer slots, and %r9 never shares with a value written while it lives
        assert!(f.slots.1 - f.slots.0 <= 5, "{:?}", f.slots);
        let slot_of = |k: usize| p.code[k].d;
        let r9 = slot_of(1);
        for k in 2..=6 {
            assert_ne!(slot_of(k), r9, "instruction {k}");
        }
        // %r2 is written while %r1 is read: never one slot
        assert_ne!(slot_of(2), slot_of(3));
    }

    #[test]
    fn guarded_loops_and_redefinitions_stay() {
        let p = program(
            ".reg .pred %p<3>; .reg .b32 %r<6>;
             mov.u32 %r1, %tid.x;
             setp.eq.u32 %p1, %r1, 0;
             @%p1 mov.u32 %r2, 7;
             mov.u32 %r3, 1;
             mov.u32 %r3, 2;
             mov.u32 %r4, 0;
             L: add.u32 %r4, %r4, %r1;
             setp.lt.u32 %p2, %r4, 100;
             @%p2 bra L;
             add.u32 %r5, %r2, %r3;
             ret;",
            "",
        );
        // the setp on %tid is hoisted (the copy of %tid is dead: its readers read %tid); the
        // guarded mov, the twice-written %r3, the loop counter and whatever reads them are not
        assert_eq!(hoisted(&p), vec![1]);
        assert!(matches!(p.code[0].op, Op::Nop));
        // %r2 may be read unassigned: its slot is reset in every CTA (family members get
        // registers, and slots, in the order the body first names them: %r1, then %r2)
        let kernel = p.funcs[0].slots;
        let r2 = kernel.0 + 1;
        assert!(p.reset_slots.iter().any(|&(a, b)| a <= r2 && r2 < b));
        // the final add reads %r2 and %r3 from their own slots: neither is a plain copy
        let add = &p.code[10];
        assert!(p.consts.iter().all(|&(s, _)| s != add.a && s != add.b));
    }

    #[test]
    fn copies_of_constants_are_read_from_the_constant() {
        let p = program(
            ".reg .b32 %r<6>; .shared .align 4 .b8 buf[128];
             mov.u32 %r1, 4;
             mov.u32 %r2, -1;
             mov.u32 %r3, buf;
             mov.u32 %r4, %tid.x;
             shfl.sync.down.b32 %r5, %r4, %r1, 31, %r2;
             add.u32 %r5, %r5, %r3;
             st.shared.u32 [%r3], %r5;
             ret;",
            "",
        );
        let konst = |slot| p.consts.iter().find(|c| c.0 == slot).map(|c| c.1);
        let shfl = &p.code[4];
        assert_eq!(konst(shfl.v[0]), Some(4));
        assert_eq!(konst(shfl.b).map(|v| v as u32), Some(u32::MAX));
        // `buf` is the only shared variable: offset 0
        assert_eq!(konst(p.code[5].b), Some(0));
        // the address operand of `st` is not a value operand: it reads %r3's own slot, so that
        // copy stays live (and, fixed for the launch, hoisted); the other copies are dead
        assert_eq!(hoisted(&p), vec![2]);
        for k in [0, 1, 3] {
            assert!(matches!(p.code[k].op, Op::Nop));
        }
    }
}
