//! Register reads and writes of an instruction, and definite assignment over a function's CFG.
//!
//! [`effects`] says which registers an instruction reads and writes. For the opcodes whose first
//! operand is a pure destination (`add d, a, b`, `ld d, [a]`, `setp p|q, a, b`, …) the
//! registers of that operand are writes, and an unguarded such instruction writes them on every
//! lane that runs it. Stores, branches, barriers and the like write no register. For any other
//! opcode every register operand counts as a read and as a possible write, which is the safe
//! reading for a consumer that only trusts writes it is told are certain.
//!
//! [`maybe_uninit`] runs the classic forward "must be assigned" analysis: a register is
//! assigned at a point when every path from the function's entry to that point runs an
//! unguarded, certain write of it. A register read at a point where it may be unassigned can
//! observe its initial value; the interpreter keeps zeroing exactly those registers at the start
//! of every CTA, and treats the others as free to hold anything before their first write. The
//! analysis is per thread: in SIMT execution each lane follows one path of the CFG.

use crate::{Base, Function, Inst, Modifier, OpFlags, Opcode, Operand, RegId};

/// How one instruction touches registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Registers read (the guard predicate included), in operand order; may repeat.
    pub reads: Vec<RegId>,
    /// Registers that may be written.
    pub writes: Vec<RegId>,
    /// Whether every lane that reaches the instruction writes all of `writes` (unguarded, and
    /// an opcode whose destination is known).
    pub certain: bool,
}

/// Whether `inst` writes no register at all: the opcodes flagged [`OpFlags::NO_DEST`] in the
/// table, and barriers other than the reducing ones (`bar.red.popc.u32 d, …` writes `d`).
fn writes_nothing(inst: &Inst) -> bool {
    inst.is(OpFlags::NO_DEST)
        || matches!(inst.op, Opcode::Bar | Opcode::Barrier) && !inst.has(Modifier::Red)
}

/// Whether `op`'s first operand is a pure destination ([`OpFlags::DEST_FIRST`]).
pub fn writes_first_operand(op: Opcode) -> bool {
    op.is(OpFlags::DEST_FIRST)
}

fn regs_of(o: &Operand, out: &mut Vec<RegId>) {
    match o {
        Operand::Reg(r) => out.push(*r),
        Operand::Address(Base::Reg(r), _) | Operand::Symbol(Base::Reg(r), _) => out.push(*r),
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|x| regs_of(x, out)),
        Operand::Pair(a, b) => {
            regs_of(a, out);
            regs_of(b, out);
        }
        Operand::Not(x) => regs_of(x, out),
        _ => {}
    }
}

/// The registers `inst` reads and writes.
pub fn effects(inst: &Inst) -> Effects {
    let mut e = Effects::default();
    if let Some(g) = inst.guard {
        e.reads.push(g.reg);
    }
    let known = writes_first_operand(inst.op)
        && matches!(
            inst.operands.first(),
            Some(Operand::Reg(_) | Operand::Vector(_) | Operand::Pair(..) | Operand::Sink)
        );
    let none = writes_nothing(inst);
    for (k, o) in inst.operands.iter().enumerate() {
        if known && k == 0 {
            regs_of(o, &mut e.writes);
        } else {
            let from = e.reads.len();
            regs_of(o, &mut e.reads);
            if !known && !none {
                let read = e.reads[from..].to_vec();
                e.writes.extend(read);
            }
        }
    }
    e.certain = known && inst.guard.is_none();
    e
}

/// [`effects`] of every instruction of `f`, in order: what [`maybe_uninit`] and
/// [`interference`] take, so that a caller running both computes it once.
pub fn all_effects(f: &Function) -> Vec<Effects> {
    f.insts.iter().map(effects).collect()
}

/// A set of registers as bits, 64 to a word.
fn has(v: &[u64], r: impl Into<usize>) -> bool {
    let r = r.into();
    v[r / 64] >> (r % 64) & 1 != 0
}

fn insert(v: &mut [u64], r: impl Into<usize>) {
    let r = r.into();
    v[r / 64] |= 1 << (r % 64);
}

fn remove(v: &mut [u64], r: impl Into<usize>) {
    let r = r.into();
    v[r / 64] &= !(1 << (r % 64));
}

/// Largest bit matrix (blocks × registers) [`maybe_uninit`] builds before it gives the
/// conservative answer instead.
const MAX_BITS: usize = 1 << 28;

/// For each register of `f`: whether some read of it may happen before any write, on some path
/// from the entry. Reads in blocks that cannot be reached from the entry do not count.
/// `effects` is [`all_effects`]`(f)`.
pub fn maybe_uninit(f: &Function, effects: &[Effects]) -> Vec<bool> {
    let nregs = f.regs.len();
    let nblocks = f.blocks.len();
    let words = nregs.div_ceil(64);
    // no CFG (a hand-built function): assume the worst
    let no_cfg = nblocks == 0 && !f.insts.is_empty();
    if no_cfg || nblocks.saturating_mul(words).saturating_mul(64) > MAX_BITS {
        return vec![true; nregs];
    }
    let block_effects = |b: &crate::Block| &effects[b.start as usize..b.end as usize];
    // certain writes of each block
    let mut gen = vec![0u64; nblocks * words];
    for (b, blk) in f.blocks.iter().enumerate() {
        let g = &mut gen[b * words..(b + 1) * words];
        for e in block_effects(blk).iter().filter(|e| e.certain) {
            e.writes.iter().for_each(|&r| insert(g, r));
        }
    }
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); nblocks];
    for (b, blk) in f.blocks.iter().enumerate() {
        for &s in &blk.succs {
            preds[s.index()].push(b as u32);
        }
    }
    // assigned on entry to each block: the entry block starts empty, the others at "all"
    // (the top of the intersection lattice) until a path reaches them
    let mut reached = vec![false; nblocks];
    let mut input = vec![u64::MAX; nblocks * words];
    if nblocks > 0 {
        reached[0] = true;
        input[..words].fill(0);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..nblocks {
            let mut acc = vec![u64::MAX; words];
            let mut any = false;
            for &p in &preds[b] {
                let p = p as usize;
                if !reached[p] {
                    continue;
                }
                any = true;
                for w in 0..words {
                    acc[w] &= input[p * words + w] | gen[p * words + w];
                }
            }
            if !any {
                continue;
            }
            let cur = &mut input[b * words..(b + 1) * words];
            if !reached[b] || cur != &acc[..] {
                reached[b] = true;
                cur.copy_from_slice(&acc);
                changed = true;
            }
        }
    }
    let mut out = vec![false; nregs];
    for (b, blk) in f.blocks.iter().enumerate() {
        if !reached[b] {
            continue;
        }
        let mut cur = input[b * words..(b + 1) * words].to_vec();
        for e in block_effects(blk) {
            for &r in &e.reads {
                if !has(&cur, r) {
                    out[r.index()] = true;
                }
            }
            if e.certain {
                e.writes.iter().for_each(|&r| insert(&mut cur, r));
            }
        }
    }
    out
}

/// Which registers of a function may not share storage, from per-thread liveness.
pub struct Interference {
    n: usize,
    bits: Vec<u64>,
}

impl Interference {
    /// Whether registers `a` and `b` may not share storage (a register does not interfere
    /// with itself).
    pub fn interferes(&self, a: RegId, b: RegId) -> bool {
        has(&self.bits, a.index() * self.n + b.index())
    }

    fn add(&mut self, a: RegId, b: RegId) {
        if a != b {
            let n = self.n;
            insert(&mut self.bits, a.index() * n + b.index());
            insert(&mut self.bits, b.index() * n + a.index());
        }
    }
}

/// Largest register count [`interference`] handles (its matrix has one bit per pair).
const MAX_INTERFERENCE_REGS: usize = 1 << 13;

/// Liveness across one instruction, backwards: a certain write ends the live ranges of what it
/// writes, and what it reads is live before it.
fn live_before(e: &Effects, live: &mut [u64]) {
    if e.certain {
        e.writes.iter().for_each(|&w| remove(live, w));
    }
    e.reads.iter().for_each(|&r| insert(live, r));
}

/// Per-thread liveness of a function's registers at block boundaries (see [`liveness`]).
pub struct Liveness {
    words: usize,
    live_in: Vec<u64>,
}

impl Liveness {
    /// Registers live on leaving `blk`: live on entering any successor.
    fn live_out(&self, blk: &crate::Block, out: &mut [u64]) {
        out.fill(0);
        for &s in &blk.succs {
            let s = s.index();
            let live = &self.live_in[s * self.words..(s + 1) * self.words];
            for (c, x) in out.iter_mut().zip(live) {
                *c |= x;
            }
        }
    }

    /// Whether no read of `reg` can follow instruction `inst` of `f` before a certain write of
    /// it, on any path: a value `inst` (or an instruction before it) leaves in `reg` is never
    /// read after `inst`. `effects` is [`all_effects`]`(f)`.
    pub fn dead_after(&self, f: &Function, effects: &[Effects], inst: usize, reg: RegId) -> bool {
        let Some(blk) = f
            .blocks
            .iter()
            .find(|b| (b.start as usize..b.end as usize).contains(&inst))
        else {
            return false;
        };
        for e in &effects[inst + 1..blk.end as usize] {
            if e.reads.contains(&reg) {
                return false;
            }
            if e.certain && e.writes.contains(&reg) {
                return true;
            }
        }
        let mut out = vec![0u64; self.words];
        self.live_out(blk, &mut out);
        !has(&out, reg)
    }
}

/// Liveness of `f`'s registers: the backward analysis over the CFG, to a fixed point, where
/// only certain writes ([`Effects::certain`]) end a live range. It is per thread, which is
/// what SIMT execution needs: each lane follows one path, and a lane that does not run an
/// instruction keeps its own copy of every register. `None` when `f` has instructions but no
/// CFG. `effects` is [`all_effects`]`(f)`.
pub fn liveness(f: &Function, effects: &[Effects]) -> Option<Liveness> {
    if f.blocks.is_empty() && !f.insts.is_empty() {
        return None;
    }
    let words = f.regs.len().div_ceil(64);
    let nblocks = f.blocks.len();
    let mut l = Liveness {
        words,
        live_in: vec![0u64; nblocks * words],
    };
    let mut changed = true;
    let mut cur = vec![0u64; words];
    while changed {
        changed = false;
        for b in (0..nblocks).rev() {
            let blk = &f.blocks[b];
            l.live_out(blk, &mut cur);
            for e in effects[blk.start as usize..blk.end as usize].iter().rev() {
                live_before(e, &mut cur);
            }
            let slot = &mut l.live_in[b * words..(b + 1) * words];
            if slot != &cur[..] {
                slot.copy_from_slice(&cur);
                changed = true;
            }
        }
    }
    Some(l)
}

/// The interference of `f`'s registers: two registers interfere when one may be written while
/// the other is live (may still be read on some path, by `live`, [`liveness`]`(f, effects)`),
/// or when one instruction reads or writes both and writes one of them. `None` when the
/// function has more than 8192 registers. `effects` is [`all_effects`]`(f)`.
pub fn interference(f: &Function, effects: &[Effects], live: &Liveness) -> Option<Interference> {
    let nregs = f.regs.len();
    if nregs > MAX_INTERFERENCE_REGS {
        return None;
    }
    let mut cur = vec![0u64; live.words];
    let mut g = Interference {
        n: nregs,
        bits: vec![0u64; (nregs * nregs).div_ceil(64)],
    };
    for blk in &f.blocks {
        live.live_out(blk, &mut cur);
        for e in effects[blk.start as usize..blk.end as usize].iter().rev() {
            for &w in &e.writes {
                for (k, &word) in cur.iter().enumerate() {
                    let mut m = word;
                    while m != 0 {
                        let r = RegId::new((k * 64) as u32 + m.trailing_zeros());
                        m &= m - 1;
                        g.add(w, r);
                    }
                }
                for &x in e.reads.iter().chain(&e.writes) {
                    g.add(w, x);
                }
            }
            live_before(e, &mut cur);
        }
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(src: &str) -> Function {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{src}\n}}\n"
        );
        let parsed = ptx_syntax::parse(&text);
        assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
        let checked = ptx_check::check_module(&parsed.module, &Default::default());
        let m = crate::lower(&parsed.module, &checked).expect("lowers");
        m.functions.into_iter().next().expect("one kernel")
    }

    fn interference_of(f: &Function) -> Interference {
        let e = all_effects(f);
        let live = liveness(f, &e).expect("a CFG");
        interference(f, &e, &live).expect("small function")
    }

    fn uninit_names(f: &Function) -> Vec<String> {
        maybe_uninit(f, &all_effects(f))
            .iter()
            .enumerate()
            .filter(|(_, &u)| u)
            .map(|(r, _)| f.regs[r].name.to_string())
            .collect()
    }

    #[test]
    fn stores_and_barriers_write_nothing() {
        let f = kernel(
            ".reg .b32 %r<4>;\n st.shared.u32 [%r1+4], %r2;\n red.global.add.u32 [%r1], %r2;\n bar.sync 0;\n bar.red.popc.u32 %r3, 0, 1;\n ret;",
        );
        let e: Vec<Effects> = all_effects(&f);
        for (k, e) in e[..3].iter().enumerate() {
            assert!(e.writes.is_empty(), "instruction {k}");
        }
        assert_eq!(e[0].reads, vec![reg(&f, "%r1"), reg(&f, "%r2")]);
        // the reducing barrier writes its destination
        assert_eq!(e[3].writes, vec![reg(&f, "%r3")]);
    }

    #[test]
    fn straight_line_writes_before_reads() {
        let f = kernel(
            ".reg .b32 %r<4>;\n mov.u32 %r1, 5;\n add.s32 %r2, %r1, %r3;\n st.global.u32 [%r2], %r2;\n ret;",
        );
        // %r3 is read without a write
        assert_eq!(uninit_names(&f), vec!["%r3"]);
    }

    #[test]
    fn both_arms_must_write() {
        let f = kernel(
            ".reg .b32 %r<4>;\n .reg .pred %p<2>;\n setp.eq.u32 %p1, %r0, 0;\n @%p1 bra A;\n mov.u32 %r1, 1;\n mov.u32 %r2, 1;\n bra.uni B;\nA:\n mov.u32 %r1, 2;\nB:\n add.u32 %r3, %r1, %r2;\n ret;",
        );
        // %r0 never written; %r2 written on one arm only; %r1 on both
        assert_eq!(uninit_names(&f), vec!["%r0", "%r2"]);
    }

    #[test]
    fn guarded_write_is_not_certain() {
        let f = kernel(
            ".reg .b32 %r<3>;\n .reg .pred %p<2>;\n mov.u32 %r0, 0;\n setp.eq.u32 %p1, %r0, 0;\n @%p1 mov.u32 %r1, 1;\n add.u32 %r2, %r1, 1;\n ret;",
        );
        assert_eq!(uninit_names(&f), vec!["%r1"]);
    }

    #[test]
    fn loop_carried_value_written_before_the_loop() {
        let f = kernel(
            ".reg .b32 %r<3>;\n .reg .pred %p<2>;\n mov.u32 %r1, 0;\nL:\n add.u32 %r1, %r1, 1;\n setp.lt.u32 %p1, %r1, 10;\n @%p1 bra L;\n ret;",
        );
        assert!(uninit_names(&f).is_empty());
    }

    #[test]
    fn unknown_opcodes_only_read() {
        // `st` has no destination: its registers are reads; a `call` result is not a certain
        // write either (family members get registers in the order the body names them)
        let e = effects(&kernel(".reg .b64 %rd<3>;\n st.global.u64 [%rd1], %rd2;\n ret;").insts[0]);
        assert_eq!(e.reads, vec![RegId::new(0), RegId::new(1)]);
        assert!(!e.certain);
        let e = effects(
            &kernel(".reg .b32 %r<3>;\n .reg .pred %p<2>;\n setp.lt.u32 %p0|%p1, %r1, %r2;\n ret;")
                .insts[0],
        );
        assert!(e.certain);
        assert_eq!(e.writes.len(), 2);
        assert_eq!(e.reads.len(), 2);
    }

    fn reg(f: &Function, name: &str) -> RegId {
        f.regs
            .iter()
            .position(|r| r.name == name)
            .map(|k| RegId::new(k as u32))
            .expect("register")
    }

    #[test]
    fn dead_after_looks_past_the_block_and_around_loops() {
        let f = kernel(
            ".reg .pred %p<2>; .reg .b32 %r<8>;
             mov.u32 %r1, 1;
             add.s32 %r2, %r1, 1;
             mov.u32 %r1, 2;
             @%p1 add.s32 %r3, %r2, 1;
             mov.u32 %r4, 0;
             L: add.s32 %r5, %r4, 1;
             add.s32 %r4, %r5, %r1;
             setp.lt.u32 %p1, %r4, 10;
             @%p1 bra L;
             st.global.u32 [%r3], %r4;
             ret;",
        );
        let e = all_effects(&f);
        let l = liveness(&f, &e).expect("has a CFG");
        let dead = |k: usize, name: &str| l.dead_after(&f, &e, k, reg(&f, name));
        // %r1 is written again (certainly) before any read; %r2 is read by a guarded add
        assert!(dead(1, "%r1"));
        assert!(!dead(1, "%r2"));
        assert!(dead(3, "%r2"));
        // %r5 is read once in the loop body; %r4 is read around the back edge and after it;
        // %r1 is read by every iteration
        assert!(dead(6, "%r5"));
        assert!(!dead(6, "%r4"));
        assert!(!dead(6, "%r1"));
        // a guarded write does not end a live range: %r3 keeps its old value in other lanes
        assert!(!dead(2, "%r3"));
    }

    #[test]
    fn interference_follows_live_ranges() {
        let f = kernel(
            ".reg .b32 %r<6>;\n .reg .pred %p<2>;\n mov.u32 %r1, 1;\n add.u32 %r2, %r1, 1;\n add.u32 %r3, %r2, 1;\n mov.u32 %r4, %r1;\n setp.eq.u32 %p1, %r3, 0;\n @%p1 bra A;\n mov.u32 %r5, 3;\n st.global.u32 [%r4], %r5;\nA:\n st.global.u32 [%r4], %r3;\n ret;",
        );
        let g = interference_of(&f);
        let (r1, r2, r3, r4, r5) = (
            reg(&f, "%r1"),
            reg(&f, "%r2"),
            reg(&f, "%r3"),
            reg(&f, "%r4"),
            reg(&f, "%r5"),
        );
        // %r1 lives until `mov %r4, %r1`: across the writes of %r2 and %r3
        assert!(g.interferes(r1, r2) && g.interferes(r1, r3));
        // %r2 dies in the add that writes %r3, but one instruction's operands never share
        assert!(g.interferes(r2, r3));
        // %r2 is dead when %r4 and %r5 are written
        assert!(!g.interferes(r2, r4) && !g.interferes(r2, r5));
        // %r3 is live across the fall-through arm (read at A), where %r5 is written
        assert!(g.interferes(r3, r5));
        assert!(g.interferes(r4, r5));
        assert!(!g.interferes(r1, r5));
        assert!(!g.interferes(r1, r1));
    }

    #[test]
    fn a_guarded_write_does_not_end_a_live_range() {
        // %r1 is read after a guarded write of it: the earlier value may survive, so %r1
        // stays live across the write of %r2 in between
        let f = kernel(
            ".reg .b32 %r<4>;\n .reg .pred %p<2>;\n mov.u32 %r1, 1;\n setp.eq.u32 %p1, %r1, 0;\n mov.u32 %r2, 5;\n @%p1 mov.u32 %r1, %r2;\n st.global.u32 [%r2], %r1;\n ret;",
        );
        let g = interference_of(&f);
        assert!(g.interferes(reg(&f, "%r1"), reg(&f, "%r2")));
    }

    #[test]
    fn loops_keep_carried_values_live() {
        let f = kernel(
            ".reg .b32 %r<4>;\n .reg .pred %p<2>;\n mov.u32 %r1, 0;\n mov.u32 %r3, 9;\nL:\n add.u32 %r2, %r1, 1;\n add.u32 %r1, %r2, 0;\n setp.lt.u32 %p1, %r1, 10;\n @%p1 bra L;\n st.global.u32 [%r3], %r1;\n ret;",
        );
        let g = interference_of(&f);
        // %r3 is live around the whole loop
        assert!(g.interferes(reg(&f, "%r3"), reg(&f, "%r2")));
        assert!(g.interferes(reg(&f, "%r3"), reg(&f, "%r1")));
    }
}
