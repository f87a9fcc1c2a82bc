//! Register reads and writes of an instruction, and definite assignment over a function's CFG.
//!
//! [`effects`] says which registers an instruction reads and writes. For the opcodes whose first
//! operand is a pure destination (`add d, a, b`, `ld d, [a]`, `setp p|q, a, b`, …) the
//! registers of that operand are writes, and an unguarded such instruction writes them on every
//! lane that runs it. For any other opcode every register operand counts as a read and as a
//! possible write, which is the safe reading for a consumer that only trusts writes it is told
//! are certain.
//!
//! [`maybe_uninit`] runs the classic forward "must be assigned" analysis: a register is
//! assigned at a point when every path from the function's entry to that point runs an
//! unguarded, certain write of it. A register read at a point where it may be unassigned can
//! observe its initial value; the interpreter keeps zeroing exactly those registers at the start
//! of every CTA, and treats the others as free to hold anything before their first write. The
//! analysis is per thread: in SIMT execution each lane follows one path of the CFG.

use crate::{Base, Function, Inst, Operand, RegId};

/// Opcodes whose first operand is written and never read.
const DEST_FIRST: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "addc",
    "and",
    "atom",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "brev",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cvt",
    "cvta",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "fma",
    "fns",
    "isspacep",
    "ld",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "min",
    "mov",
    "mul",
    "mul24",
    "neg",
    "not",
    "or",
    "popc",
    "prmt",
    "rcp",
    "redux",
    "rem",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "sub",
    "subc",
    "szext",
    "tanh",
    "testp",
    "vote",
    "xor",
];

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

/// Whether `opcode`'s first operand is a pure destination.
pub fn writes_first_operand(opcode: &str) -> bool {
    DEST_FIRST.binary_search(&opcode).is_ok()
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
    let known = writes_first_operand(&inst.opcode)
        && matches!(
            inst.operands.first(),
            Some(Operand::Reg(_) | Operand::Vector(_) | Operand::Pair(..) | Operand::Sink)
        );
    for (k, o) in inst.operands.iter().enumerate() {
        if known && k == 0 {
            regs_of(o, &mut e.writes);
        } else {
            let from = e.reads.len();
            regs_of(o, &mut e.reads);
            if !known {
                let read = e.reads[from..].to_vec();
                e.writes.extend(read);
            }
        }
    }
    e.certain = known && inst.guard.is_none();
    e
}

/// Largest bit matrix (blocks × registers) [`maybe_uninit`] builds before it gives the
/// conservative answer instead.
const MAX_BITS: usize = 1 << 28;

/// For each register of `f`: whether some read of it may happen before any write, on some path
/// from the entry. Reads in blocks that cannot be reached from the entry do not count.
pub fn maybe_uninit(f: &Function) -> Vec<bool> {
    let nregs = f.regs.len();
    let nblocks = f.blocks.len();
    let words = nregs.div_ceil(64);
    // no CFG (a hand-built function): assume the worst
    let no_cfg = nblocks == 0 && !f.insts.is_empty();
    if no_cfg || nblocks.saturating_mul(words).saturating_mul(64) > MAX_BITS {
        return vec![true; nregs];
    }
    let effects: Vec<Effects> = f.insts.iter().map(effects).collect();
    // certain writes of each block
    let mut gen = vec![0u64; nblocks * words];
    for (b, blk) in f.blocks.iter().enumerate() {
        let g = &mut gen[b * words..(b + 1) * words];
        for e in &effects[blk.start as usize..blk.end as usize] {
            if e.certain {
                for &r in &e.writes {
                    g[r as usize / 64] |= 1 << (r % 64);
                }
            }
        }
    }
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); nblocks];
    for (b, blk) in f.blocks.iter().enumerate() {
        for &s in &blk.succs {
            preds[s as usize].push(b as u32);
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
        for e in &effects[blk.start as usize..blk.end as usize] {
            for &r in &e.reads {
                if cur[r as usize / 64] >> (r % 64) & 1 == 0 {
                    out[r as usize] = true;
                }
            }
            if e.certain {
                for &r in &e.writes {
                    cur[r as usize / 64] |= 1 << (r % 64);
                }
            }
        }
    }
    out
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
        let m = crate::lower(&parsed.module).expect("lowers");
        m.functions.into_iter().next().expect("one kernel")
    }

    fn uninit_names(f: &Function) -> Vec<String> {
        maybe_uninit(f)
            .iter()
            .enumerate()
            .filter(|(_, &u)| u)
            .map(|(r, _)| f.regs[r].name.to_string())
            .collect()
    }

    #[test]
    fn dest_table_is_sorted() {
        assert!(DEST_FIRST.windows(2).all(|w| w[0] < w[1]));
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
        // write either
        let e = effects(&kernel(".reg .b64 %rd<3>;\n st.global.u64 [%rd1], %rd2;\n ret;").insts[0]);
        assert_eq!(e.reads, vec![1, 2]);
        assert!(!e.certain);
        let e = effects(
            &kernel(".reg .b32 %r<3>;\n .reg .pred %p<2>;\n setp.lt.u32 %p0|%p1, %r1, %r2;\n ret;")
                .insts[0],
        );
        assert!(e.certain);
        assert_eq!(e.writes.len(), 2);
        assert_eq!(e.reads.len(), 2);
    }
}
