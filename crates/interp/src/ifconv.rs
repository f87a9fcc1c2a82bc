//! If-conversion: a guarded forward branch over a few instructions becomes a guard on them.
//!
//! `@%p bra L; st.shared [a], v; L:` is how nvcc writes `if (lane == 31) smem[w] = v;`. When
//! the lanes of a warp disagree on `%p`, the branch splits the warp into two groups that the
//! executor runs one after the other and merges again at `L`: about 700 x86 instructions per
//! warp for a one-instruction detour (measured on such a kernel). Guarding the skipped
//! instructions with the negated branch condition (`@!%p st.shared [a], v`) runs exactly the
//! same lanes through them without splitting the warp.
//!
//! A branch is converted when all of this holds:
//! - it is a guarded `bra` of the kernel's own code, forward, over at most [`MAX_SKIPPED`]
//!   instructions;
//! - each skipped instruction is unguarded and lane-wise: an opcode of [`CONVERTIBLE`] (plain
//!   arithmetic, moves, conversions, loads, stores and atomics, none of which looks at which
//!   lanes are active), decoded as an ALU or memory operation (or hoisted: a no-op);
//! - no skipped instruction is the target of a branch, of a `brx.idx` table or the entry of a
//!   function (a lane arriving there from elsewhere would see the guard of lanes that did not);
//! - no skipped instruction may write the guard predicate.
//!
//! The branch becomes a no-op and each skipped instruction takes the branch's guard, negated,
//! and [`Insn::converted`] set: the executor counts such an instruction only for the lanes
//! whose guard holds, so thread-instruction counts (and budgets) are the same as with the
//! branch.

use crate::program::{Insn, Op, NO_PRED};
use ptx_ir::dataflow::Effects;

/// Most instructions a converted branch may skip.
pub(crate) const MAX_SKIPPED: u32 = 8;

/// Opcodes that do the same for each lane with or without the other lanes present.
const CONVERTIBLE: &[&str] = &[
    "abs", "add", "and", "atom", "bfe", "bfi", "bfind", "brev", "clz", "cnot", "cvt", "cvta", "ld",
    "mad", "mad24", "max", "min", "mov", "mul", "mul24", "neg", "not", "or", "popc", "prmt", "red",
    "selp", "setp", "shl", "shr", "slct", "st", "sub", "xor",
];

/// Converts the branches of the kernel's code `code[..kf.insts.len()]` that qualify (see the
/// module docs). `effects` are the kernel's instruction effects, `targets` every pc that some
/// branch, table or call can jump to.
pub(crate) fn convert(
    kf: &ptx_ir::Function,
    effects: &[Effects],
    code: &mut [Insn],
    targets: &[u32],
) -> usize {
    let n = kf.insts.len().min(code.len());
    let mut is_target = vec![false; n + 1];
    for &t in targets {
        if let Some(x) = is_target.get_mut(t as usize) {
            *x = true;
        }
    }
    let mut converted = 0;
    for k in 0..n {
        let Op::Bra(t) = code[k].op else { continue };
        let (t, guard) = (t as usize, code[k].guard);
        let Some(g) = kf.insts[k].guard else { continue };
        if guard == NO_PRED || t <= k + 1 || t > n || t - k - 1 > MAX_SKIPPED as usize {
            continue;
        }
        let region = k + 1..t;
        let ok = region.clone().all(|j| {
            let (insn, inst) = (&code[j], &kf.insts[j]);
            insn.guard == NO_PRED
                && !is_target[j]
                && matches!(insn.op, Op::Alu(_) | Op::Mem(_) | Op::Nop)
                && CONVERTIBLE.binary_search(&inst.opcode.as_str()).is_ok()
                && !effects[j].writes.contains(&g.reg)
        });
        if !ok {
            continue;
        }
        let neg = !code[k].neg;
        code[k].op = Op::Nop;
        for insn in &mut code[region] {
            insn.guard = guard;
            insn.neg = neg;
            insn.converted = true;
        }
        converted += 1;
    }
    converted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Program;

    fn program(body: &str) -> Program {
        crate::compile::test_program(".param .u64 out", body)
    }

    #[test]
    fn table_is_sorted() {
        assert!(CONVERTIBLE.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_store_skipped_by_lane_is_guarded() {
        let p = program(
            ".reg .pred %p<2>; .reg .b32 %r<4>; .shared .align 4 .b8 buf[128];
             mov.u32 %r1, %tid.x;
             and.b32 %r2, %r1, 31;
             setp.ne.s32 %p1, %r2, 31;
             @%p1 bra L;
             st.shared.u32 [buf], %r1;
             L: bar.sync 0;
             ret;",
        );
        assert!(matches!(p.code[3].op, Op::Nop));
        let st = &p.code[4];
        assert!(st.converted && st.neg && st.guard == p.code[3].guard);
        // the bra's own guard is kept (it still names %p1), only the branch is gone
        assert!(!p.code[3].neg);
    }

    #[test]
    fn branches_that_must_stay() {
        let p = program(
            ".reg .pred %p<3>; .reg .b32 %r<4>;
             mov.u32 %r1, %tid.x;
             setp.ne.s32 %p1, %r1, 0;
             @%p1 bra A;
             bar.sync 0;
             A: @%p1 bra B;
             @%p1 add.u32 %r2, %r1, 1;
             B: @%p1 bra C;
             setp.eq.s32 %p1, %r1, 5;
             C: @%p1 bra D;
             add.u32 %r2, %r1, 2;
             E: add.u32 %r2, %r1, 3;
             D: setp.eq.s32 %p2, %r1, 7;
             @%p2 bra E;
             bra.uni F;
             add.u32 %r2, %r1, 4;
             F: ret;",
        );
        // over a barrier; over a guarded add; over a write of the guard; over a branch target;
        // and an unconditional branch: all stay branches
        for k in [2, 4, 6, 8, 12] {
            assert!(matches!(p.code[k].op, Op::Bra(_)), "instruction {k}");
        }
        assert!(p.code.iter().all(|i| !i.converted));
    }

    #[test]
    fn converted_no_ops_are_stepped_over_only_after_their_own_guard() {
        let p = program(
            ".reg .pred %p<3>; .reg .b32 %r<6>; .reg .b64 %rd<8>;
             ld.param.u64 %rd6, [out];
             mov.u32 %r1, %tid.x;
             mov.u32 %r2, %ctaid.x;
             add.s32 %r3, %r1, %r2;
             setp.ge.s32 %p1, %r3, 100;
             setp.ge.s32 %p2, %r3, 50;
             @%p1 bra A;
             cvta.to.global.u64 %rd7, %rd6;
             mul.wide.s32 %rd1, %r3, 4;
             add.s64 %rd2, %rd1, %rd7;
             A: @%p2 bra B;
             mul.wide.s32 %rd3, %r3, 8;
             add.s64 %rd4, %rd3, 16;
             B: st.global.u64 [%rd2], %rd4;
             ret;",
        );
        // the first region starts with a hoisted cvta, a converted no-op: the setp before the
        // branch steps over the branch (an unconverted no-op) but not over it
        assert!(matches!((p.code[6].op, p.code[7].op), (Op::Nop, Op::Nop)));
        assert!(!p.code[6].converted && p.code[7].converted);
        assert_eq!((p.code[5].skip, p.code[6].skip), (1, 0));
        // each region's mul.wide fuses with its add, which becomes a converted no-op: stepped
        // over after its own mul.wide (and the next region's branch, an unconverted no-op,
        // with it), but not into the next region, whose guard differs
        let (m1, m2) = (&p.code[8], &p.code[11]);
        assert!(m1.converted && m2.converted && m1.guard != m2.guard);
        assert!(matches!((p.code[9].op, p.code[10].op), (Op::Nop, Op::Nop)));
        assert_eq!((m1.skip, m2.skip), (2, 1));
    }
}
