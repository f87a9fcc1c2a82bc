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
//! - each skipped instruction is unguarded and lane-wise: an opcode flagged
//!   [`OpFlags::CONVERTIBLE`] in the table (plain arithmetic, moves, conversions, loads,
//!   stores and atomics, none of which looks at which lanes are active), decoded as an ALU or
//!   memory operation (or hoisted: a no-op);
//! - no skipped instruction is the target of a branch, of a `brx.idx` table or the entry of a
//!   function (a lane arriving there from elsewhere would see the guard of lanes that did not);
//! - no skipped instruction may write the guard predicate.
//!
//! The branch becomes a no-op and each skipped instruction takes the branch's guard, negated,
//! and [`Insn::converted`] set: the executor counts such an instruction only for the lanes
//! whose guard holds, so thread-instruction counts (and budgets) are the same as with the
//! branch.
//!
//! If-else takes two shapes: `@%p bra E; A; bra J; E: B; J:` and the one nvcc writes for
//! `v = cond ? load : 0`, `@%p bra T; bra E; T: A; bra J; E: B; J:`. With the same conditions
//! on the blocks `A` and `B` (at most [`MAX_SKIPPED`] instructions each; `T` and `E` entered
//! only through these branches, and no other branch to `bra J` or nvcc's `bra E`, which
//! disappear), each block takes the guard of the lanes that ran it, and so
//! do the unconditional branches that only those lanes ran (`bra J`, nvcc's `bra E`), which
//! become converted no-ops: still counted for exactly those lanes.

use crate::program::{Insn, Op, NO_PRED};
use ptx_ir::dataflow::Effects;
use ptx_ir::OpFlags;

/// Most instructions a converted branch may skip.
pub(crate) const MAX_SKIPPED: u32 = 8;

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
    // how many branches (tables, calls) may jump to each pc
    let mut entries = vec![0u32; n + 1];
    for &t in targets {
        if let Some(x) = entries.get_mut(t as usize) {
            *x += 1;
        }
    }
    let mut converted = 0;
    for k in 0..n {
        let Op::Bra(t) = code[k].op else { continue };
        let (t, guard) = (t as usize, code[k].guard);
        let Some(g) = kf.insts[k].guard else { continue };
        if guard == NO_PRED || t <= k + 1 || t > n {
            continue;
        }
        // what a lane-wise instruction that no lane can jump to (but from `allowed`) must be
        let lane_wise = |j: usize, allowed: &[usize]| {
            let (insn, inst) = (&code[j], &kf.insts[j]);
            insn.guard == NO_PRED
                && (entries[j] == 0 || allowed.contains(&j) && entries[j] == 1)
                && matches!(insn.op, Op::Alu(_) | Op::Mem(_) | Op::Nop)
                && inst.is(OpFlags::CONVERTIBLE)
                && !effects[j].writes.contains(&g.reg)
        };
        let taken = (guard, code[k].neg);
        let fall = (guard, !code[k].neg);
        // `@p bra L; …; L:`: the lanes that do not branch run the skipped instructions
        if t - k - 1 <= MAX_SKIPPED as usize && (k + 1..t).all(|j| lane_wise(j, &[])) {
            code[k].op = Op::Nop;
            mark(&mut code[k + 1..t], fall);
            converted += 1;
            continue;
        }
        // if-else: `@p bra E; A; bra J; E: B; J:`, or nvcc's `@p bra T; bra E; T: A; bra J;
        // E: B; J:`; the branches that only some lanes took become no-ops counted for those
        let (first, jump_over) = match code[k + 1].op {
            Op::Bra(e) if t == k + 2 && code[k + 1].guard == NO_PRED && e as usize > t => {
                (t, Some(e as usize))
            }
            _ => (k + 1, None),
        };
        let e = jump_over.unwrap_or(t);
        let x = e - 1;
        let Op::Bra(j) = code[x].op else { continue };
        let j = j as usize;
        // nothing else jumps to the removed unconditional branches either
        let entered_elsewhere = entries[x] != 0 || jump_over.is_some() && entries[k + 1] != 0;
        if code[x].guard != NO_PRED || j < e || j > n || x < first || entered_elsewhere {
            continue;
        }
        if x - first > MAX_SKIPPED as usize || j - e > MAX_SKIPPED as usize {
            continue;
        }
        // (in nvcc's shape `T` = `first` is entered through the first branch too)
        let allowed = if jump_over.is_some() {
            [first, e]
        } else {
            [e, e]
        };
        let ok =
            (first..x).all(|i| lane_wise(i, &allowed)) && (e..j).all(|i| lane_wise(i, &allowed));
        // the blocks are entered only through these branches
        let entered = entries[e] == 1 && (jump_over.is_none() || entries[first] == 1);
        if !ok || !entered {
            continue;
        }
        let (a, b) = if jump_over.is_some() {
            (taken, fall)
        } else {
            (fall, taken)
        };
        code[k].op = Op::Nop;
        if jump_over.is_some() {
            code[k + 1].op = Op::Nop;
            mark(&mut code[k + 1..k + 2], b);
        }
        code[x].op = Op::Nop;
        mark(&mut code[first..e], a);
        mark(&mut code[e..j], b);
        converted += 1;
    }
    converted
}

/// Guards `insns` by `(guard, neg)` as if-converted instructions.
fn mark(insns: &mut [Insn], (guard, neg): (u32, bool)) {
    for insn in insns {
        insn.guard = guard;
        insn.neg = neg;
        insn.converted = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Program;

    fn program(body: &str) -> Program {
        crate::compile::test_program(".param .u64 out", body)
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

    #[test]
    fn if_else_blocks_are_guarded() {
        let p = program(
            ".reg .pred %p<3>; .reg .b32 %r<8>;
             mov.u32 %r1, %tid.x;
             setp.lt.u32 %p1, %r1, 8;
             @%p1 bra E1;
             add.u32 %r2, %r1, 1;
             bra.uni J1;
             E1: add.u32 %r2, %r1, 2;
             J1: setp.lt.u32 %p2, %r1, 20;
             @%p2 bra T2;
             bra.uni E2;
             T2: add.u32 %r3, %r1, 3;
             bra.uni J2;
             E2: add.u32 %r3, %r1, 4;
             J2: ret;",
        );
        let (c, p1, p2) = (&p.code, p.code[2].guard, p.code[7].guard);
        let is = |k: usize, g: u32, neg: bool| c[k].converted && c[k].guard == g && c[k].neg == neg;
        // `@p bra E; A; bra J; E: B`: A and its `bra J` for the lanes without p, B with p
        assert!(matches!(c[2].op, Op::Nop) && !c[2].converted);
        assert!(is(3, p1, true) && is(4, p1, true) && matches!(c[4].op, Op::Nop));
        assert!(is(5, p1, false));
        // `@p bra T; bra E; T: A; bra J; E: B`: the `bra E` and B without p, A and `bra J` with
        assert!(matches!(c[7].op, Op::Nop) && !c[7].converted);
        assert!(is(8, p2, true) && matches!(c[8].op, Op::Nop));
        assert!(is(9, p2, false) && is(10, p2, false) && matches!(c[10].op, Op::Nop));
        assert!(is(11, p2, true));
        assert!(!c[12].converted);
    }

    #[test]
    fn if_else_blocks_that_stay_branches() {
        let p = program(
            ".reg .pred %p<3>; .reg .b32 %r<8>;
             mov.u32 %r1, %tid.x;
             setp.lt.u32 %p1, %r1, 8;
             @%p1 bra E1;
             add.u32 %r2, %r1, 1;
             bra.uni J1;
             E1: add.u32 %r2, %r1, 2;
             J1: @%p1 bra E2;
             add.u32 %r2, %r1, 1;
             bra.uni J2;
             E2: setp.lt.u32 %p1, %r1, 2;
             J2: @%p1 bra E3;
             add.u32 %r2, %r1, 1;
             bra.uni J3;
             E3: add.u32 %r3, %r1, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             add.u32 %r3, %r3, 2;
             J3: setp.eq.u32 %p2, %r3, 0;
             @%p2 bra E1;
             @%p2 bra E4;
             add.u32 %r2, %r1, 1;
             X4: bra.uni J4;
             E4: add.u32 %r2, %r1, 2;
             J4: @%p1 bra X4;
             @%p2 bra T5;
             Y5: bra.uni E5;
             T5: add.u32 %r2, %r1, 1;
             bra.uni J5;
             E5: add.u32 %r2, %r1, 2;
             J5: @%p1 bra Y5;
             ret;",
        );
        // an else block that another branch enters; one that writes the guard; one longer
        // than MAX_SKIPPED; one whose `bra J` another branch jumps to; one (nvcc's shape) whose
        // `bra E` another branch jumps to: all stay branches
        for k in [2, 6, 10, 24] {
            assert!(matches!(p.code[k].op, Op::Bra(_)), "instruction {k}");
        }
        assert!(p.code.iter().all(|i| !i.converted));
    }
}
