//! Superinstructions: two or three instructions that nvcc emits together, run by one handler.
//!
//! Every warp instruction costs a dispatch (guard, handler call, operand lookup) besides its
//! lane loop. Two triples and two pairs are frequent enough to be worth one dispatch:
//! - the warp-scan step `shfl.up t, v, d; selp.b32 s, 0, t, p; add.s32 v', s, v` ([`scan_step`],
//!   handler in `ops_warp`), when nothing reads `t` or `s` afterwards: a full warp computes the
//!   sums in registers without writing `t` and `s`;
//! - an access at `base + i * c`: `mul.wide.s32 t, i, c; add.s64 a, base, t; ld/st [a+imm]`
//!   ([`indexed`]), when nothing reads `t` afterwards: the access computes `a` (which it writes,
//!   as later instructions may read it) and goes on as the plain `ld`/`st`;
//! - `selp.b32 t, x, y, p; add.s32 d, t, z` (either order of the add's sources): the
//!   branch-free `if (cond) v += t` of scans and reductions;
//! - `mul.wide.s32 t, i, c; add.s64 d, base, t` (or `.u32`/`.u64`): the address of `a[i]`.
//!
//! The first instruction's [`Insn`] becomes the fused one, the others become no-ops that the
//! executor steps over and counts, so instruction counts do not change. A pair's handler writes
//! both destinations, `t` first, lane by lane, exactly as the two instructions would (it keeps
//! its own operands and takes the add's in `v[0]` (sources) and `v[1]` (destination)); a
//! triple's leaves out only values that liveness (`ptx_ir::dataflow::Liveness`) shows are never
//! read. The instructions of a triple may have no-ops (hoisted or dead instructions) between
//! them. Instructions are fused only within one function, under the same guard (none, or the
//! same if-conversion: the same lanes run all of them; a scan step only unguarded), and when
//! none but the first is a branch target (a lane arriving there would skip the first).

use crate::handlers::{cells, slot, store_lanes, CellLanes};
use crate::program::{Ctx, Insn, Lanes, MemResult, Op, FULL, LANE_BIT64, NO_PRED};
use ptx_ir::{Modifier, Opcode, Operand, RegId};
use ptx_isa::ScalarType;

/// Fuses the pairs and triples of `code` that qualify; `funcs` gives each program function's
/// IR function and first pc, `targets` every pc a branch, table, call or return can reach,
/// `kernel` the kernel's IR function and the analyses of it already made (for the other
/// functions they are made here).
pub(crate) fn fuse(
    m: &ptx_ir::Module,
    funcs: &[(u32, u32)],
    code: &mut [Insn],
    targets: &[u32],
    (kernel, facts): (u32, &super::invariant::Facts),
) -> usize {
    let mut is_target = vec![false; code.len() + 1];
    for &t in targets {
        if let Some(x) = is_target.get_mut(t as usize) {
            *x = true;
        }
    }
    let mut fused = 0;
    for &(ir, entry) in funcs {
        let Some(f) = m.functions.get(ir as usize) else {
            continue;
        };
        let own;
        let (effects, live) = if ir == kernel {
            (facts.effects(), facts.liveness())
        } else {
            let effects = ptx_ir::dataflow::all_effects(f);
            let live = ptx_ir::dataflow::liveness(f, &effects);
            own = (effects, live);
            (&own.0[..], own.1.as_ref())
        };
        // whether register `r` is never read after instruction `k`
        let dead = |k: usize, r: RegId| live.is_some_and(|l| l.dead_after(f, effects, k, r));
        let mut k = 0;
        while k + 1 < f.insts.len() {
            let pc = entry as usize + k;
            if pc + 1 >= code.len() || is_target[pc + 1] {
                k += 1;
                continue;
            }
            // a triple: this instruction and the next two that are not no-ops (hoisted or
            // dead instructions, which do nothing where they stand), none a branch target
            let mut at = [k; 3];
            let (mut n, mut j) = (1, k + 1);
            while n < 3 && j < f.insts.len().min(k + 8) && !is_target[entry as usize + j] {
                if !matches!(code[entry as usize + j].op, Op::Nop) {
                    at[n] = j;
                    n += 1;
                }
                j += 1;
            }
            if n == 3 {
                let insts = at.map(|j| &f.insts[j]);
                let insns = at.map(|j| &code[entry as usize + j]);
                let dead_at = |j: usize, r| dead(at[j], r);
                let triple =
                    scan_step(insts, insns, dead_at).or_else(|| indexed(insts, insns, dead_at));
                if let Some(step) = triple {
                    code[pc] = step;
                    code[entry as usize + at[1]].op = Op::Nop;
                    code[entry as usize + at[2]].op = Op::Nop;
                    fused += 1;
                    k = at[2] + 1;
                    continue;
                }
            }
            let (first, add) = (&code[pc], &code[pc + 1]);
            // both ALU instructions under the same guard (none, or the same if-conversion)
            let same_guard =
                (first.guard, first.neg, first.converted) == (add.guard, add.neg, add.converted);
            let alu = |i: &Insn| matches!(i.op, Op::Alu(_));
            let kind = if alu(first) && alu(add) && same_guard {
                pair_kind(&f.insts[k], &f.insts[k + 1])
            } else {
                None
            };
            // the add reads the first instruction's result
            let reads_t = add.a == first.d || add.b == first.d;
            match kind {
                Some(h) if reads_t => {
                    let (a, b, d) = (add.a, add.b, add.d);
                    let first = &mut code[pc];
                    first.op = Op::Alu(h);
                    first.v[0] = if a == first.d { b } else { a };
                    first.v[1] = d;
                    code[pc + 1].op = Op::Nop;
                    fused += 1;
                    k += 2;
                }
                _ => k += 1,
            }
        }
    }
    fused
}

/// The scan step `shfl t, v, b, c, m; selp.b32 s, t, y, q; add.s32 d, s, z` (either order of
/// the `selp`'s and the `add`'s sources; see [`crate::ops_warp::scan_step_handler`]) as one
/// instruction, when `shfl` has a handler of its own shape, the three are unguarded, and
/// nothing reads `t` after the `selp` or `s` after the `add` (the fused handler does not write
/// them): `dead(j, r)` says whether register `r` is never read after instruction `j` of the
/// three.
fn scan_step(
    insts: [&ptx_ir::Inst; 3],
    code: [&Insn; 3],
    dead: impl Fn(usize, RegId) -> bool,
) -> Option<Insn> {
    let ([sh, se, ad], [ci, cs, ca]) = (insts, code);
    if sh.op != Opcode::Shfl || !plain(se, Opcode::Selp, BITS32) || !plain(ad, Opcode::Add, INT32) {
        return None;
    }
    if [ci, cs, ca]
        .iter()
        .any(|i| i.guard != NO_PRED || i.converted)
    {
        return None;
    }
    let h = crate::ops_warp::scan_step_handler(ci)?;
    let t = match sh.operands.first()? {
        Operand::Reg(t) => *t,
        Operand::Pair(t, _) => match **t {
            Operand::Reg(t) => t,
            _ => return None,
        },
        _ => return None,
    };
    let Some(Operand::Reg(s)) = se.operands.first() else {
        return None;
    };
    if !dead(1, t) || !dead(2, *s) {
        return None;
    }
    let is = |o: Option<&Operand>, r: RegId| o == Some(&Operand::Reg(r));
    // `selp s, a, b, q` takes `a` where the predicate holds
    let (y, t_is_b) = if is(se.operands.get(1), t) {
        (cs.b, false)
    } else if is(se.operands.get(2), t) {
        (cs.a, true)
    } else {
        return None;
    };
    let z = if is(ad.operands.get(1), *s) {
        ca.b
    } else if is(ad.operands.get(2), *s) {
        ca.a
    } else {
        return None;
    };
    // the predicate is read after the `shfl` writes its own, and the sources after `t`
    if ci.v[1] == cs.c || ci.d == y || ci.d == z || cs.d == z {
        return None;
    }
    let mut step = ci.clone();
    step.op = match ci.op {
        Op::WarpSync(_) => Op::WarpSync(h),
        Op::Mem(_) => Op::Mem(h),
        _ => return None,
    };
    step.v[2] = z;
    step.v[3] = ca.d;
    step.imm = (cs.c as u64 | (y as u64) << 32) as i64;
    if (cs.aux & 1 != 0) != t_is_b {
        step.aux |= crate::ops_warp::SCAN_FLIP;
    }
    Some(step)
}

/// `mul.wide.s32 t, x, c; add.s64 a, base, t; ld/st [a+imm]` (`.u32`/`.u64`, either order of
/// the add's sources, one value of any type) as one instruction, when the three have the same
/// guard and nothing reads `t` after the add: the access takes `base`, `x` and `c` in `v[1]`,
/// `v[2]` and `v[3]`, computes `a` and goes on as the plain `ld`/`st`. It keeps the access's
/// own position for its faults.
fn indexed(
    insts: [&ptx_ir::Inst; 3],
    code: [&Insn; 3],
    dead: impl Fn(usize, RegId) -> bool,
) -> Option<Insn> {
    let ([mw, ad, mem], [cm, ca, cx]) = (insts, code);
    let guard = |i: &Insn| (i.guard, i.neg, i.converted);
    let signed = wide_then_add64(mw, ad)?;
    if guard(cm) != guard(ca)
        || guard(cm) != guard(cx)
        || !matches!((cm.op, ca.op, cx.op), (Op::Alu(_), Op::Alu(_), Op::Mem(_)))
    {
        return None;
    }
    let Some(Operand::Reg(t)) = mw.operands.first() else {
        return None;
    };
    let Some(Operand::Reg(a)) = ad.operands.first() else {
        return None;
    };
    let base = if ca.a == cm.d && ca.b != cm.d {
        ca.b
    } else if ca.b == cm.d && ca.a != cm.d {
        ca.a
    } else {
        return None;
    };
    // one value, addressed by `a` plus an offset
    let (store, addr) = match mem.op {
        Opcode::St => (true, mem.operands.first()),
        Opcode::Ld => (false, mem.operands.get(1)),
        _ => return None,
    };
    if !matches!(addr, Some(Operand::Address(ptx_ir::Base::Reg(r), _)) if r == a)
        || mem.vector_width().is_some()
        || mem.has(Modifier::Volatile)
        || cx.a != ca.d
        || !dead(1, *t)
    {
        return None;
    }
    // an `ld.s32` into a 64-bit register has a handler of its own (`ops_move::ld_wide_s32`)
    if cx.aux & crate::ops_move::WIDE_S32 != 0 {
        return None;
    }
    let mut access = cx.clone();
    access.op = Op::Mem(match (signed, store) {
        (true, false) => indexed_access::<true, false>,
        (false, false) => indexed_access::<false, false>,
        (true, true) => indexed_access::<true, true>,
        (false, true) => indexed_access::<false, true>,
    });
    access.v[1] = base;
    access.v[2] = cm.a;
    access.v[3] = cm.b;
    Some(access)
}

crate::with_v3!(
    /// The `ld` (`st` with `STORE`) of [`indexed`]: its address register first, then the
    /// access, all of it in the AVX2 copy when the CPU has it.
    fn indexed_access<const SIGNED: bool, const STORE: bool>, indexed_access_v3 =
        indexed_access_impl(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult
);

#[inline(always)]
fn indexed_access_impl<const SIGNED: bool, const STORE: bool>(
    ctx: &mut Ctx<'_>,
    i: &Insn,
    mask: u32,
) -> MemResult {
    index_lanes::<SIGNED>(ctx.regs, i, mask);
    if STORE {
        crate::ops_move::st_impl(ctx, i, mask)
    } else {
        crate::ops_move::ld_impl(ctx, i, mask)
    }
}

/// `a = base + wide(x * c)` into the access's address slot `a`, from `v[1]`, `v[2]`, `v[3]`.
#[inline(always)]
fn index_lanes<const SIGNED: bool>(r: &mut [Lanes], i: &Insn, mask: u32) {
    let c = cells(r);
    let [a, base, x, y] = [
        slot(c, i.a),
        slot(c, i.v[1]),
        slot(c, i.v[2]),
        slot(c, i.v[3]),
    ];
    let lane = |l: usize| {
        base[l]
            .get()
            .wrapping_add(wide::<SIGNED>(x[l].get(), y[l].get()))
    };
    if mask == FULL {
        store_lanes(a, lane);
    } else {
        for l in crate::program::lane_bits(mask) {
            a[l].set(lane(l));
        }
    }
}

/// `mul.wide.s32` (`.u32` without `SIGNED`) of two lanes.
#[inline(always)]
fn wide<const SIGNED: bool>(a: u64, b: u64) -> u64 {
    if SIGNED {
        (a as i32 as i64).wrapping_mul(b as i32 as i64) as u64
    } else {
        (a as u32 as u64) * (b as u32 as u64)
    }
}

/// Whether `i` is `opcode` with one modifier, its type, among `types` (`add.s32`, not
/// `add.sat.s32` or `add.cc.s32`).
fn plain(i: &ptx_ir::Inst, op: Opcode, types: &[ScalarType]) -> bool {
    i.op == op && i.mods.len() == 1 && i.types().last().is_some_and(|t| types.contains(&t))
}

const INT32: &[ScalarType] = &[ScalarType::S32, ScalarType::U32];
const INT64: &[ScalarType] = &[ScalarType::S64, ScalarType::U64];
const BITS32: &[ScalarType] = &[ScalarType::B32, ScalarType::S32, ScalarType::U32];

/// The fused handler for IR instructions `a` then `b`, when they are one of the pairs.
fn pair_kind(a: &ptx_ir::Inst, b: &ptx_ir::Inst) -> Option<crate::program::AluFn> {
    if plain(a, Opcode::Selp, BITS32) && plain(b, Opcode::Add, INT32) {
        return Some(selp_add);
    }
    match wide_then_add64(a, b)? {
        true => Some(mul_wide_add::<true>),
        false => Some(mul_wide_add::<false>),
    }
}

/// Whether `a`, `b` are `mul.wide.s32` (true) or `mul.wide.u32` (false) then a plain 64-bit
/// `add`; `None` for anything else.
fn wide_then_add64(a: &ptx_ir::Inst, b: &ptx_ir::Inst) -> Option<bool> {
    if a.op != Opcode::Mul
        || !a.has(Modifier::Wide)
        || a.mods.len() != 2
        || !plain(b, Opcode::Add, INT64)
    {
        return None;
    }
    match a.types().last() {
        Some(ScalarType::S32) => Some(true),
        Some(ScalarType::U32) => Some(false),
        _ => None,
    }
}

/// The slots of a fused pair: the first instruction's destination `t` and sources `a`, `b`,
/// then the add's other source and its destination.
#[inline(always)]
fn pair_slots<'c>(c: &'c [std::cell::Cell<u64>], i: &Insn) -> [&'c CellLanes; 5] {
    [
        slot(c, i.d),
        slot(c, i.a),
        slot(c, i.b),
        slot(c, i.v[0]),
        slot(c, i.v[1]),
    ]
}

/// `selp.b32 t, a, b, c; add.s32 d, t, v[0]` with `t` in `d`, the add's destination in
/// `v[1]` (as `ops_float::decode_selp` lays them out: `aux` bit 0 negates `c`, `imm` is the
/// width mask).
fn selp_add(r: &mut [Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let pick = (p[i.c as usize] ^ if i.aux & 1 != 0 { u32::MAX } else { 0 }) as u64;
    crate::v3_call!(selp_add_lanes, selp_add_lanes_v3, (r, i, pick, mask))
}

#[inline(always)]
fn selp_add_lanes(r: &mut [Lanes], i: &Insn, pick: u64, mask: u32) {
    let [t, x, y, z, d] = pair_slots(cells(r), i);
    let w = i.imm as u64;
    let sel = |l: usize| {
        let s = if pick & LANE_BIT64[l] != 0 {
            u64::MAX
        } else {
            0
        };
        ((x[l].get() & s) | (y[l].get() & !s)) & w
    };
    if mask == FULL {
        store_lanes(t, sel);
        store_lanes(d, |l| {
            (t[l].get() as u32).wrapping_add(z[l].get() as u32) as u64
        });
    } else {
        for l in crate::program::lane_bits(mask) {
            t[l].set(sel(l));
            d[l].set((t[l].get() as u32).wrapping_add(z[l].get() as u32) as u64);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn selp_add_lanes_v3(r: &mut [Lanes], i: &Insn, pick: u64, mask: u32) {
    selp_add_lanes(r, i, pick, mask)
}

/// `mul.wide.s32 t, a, b; add.s64 d, base, t` (`.u32` without `SIGNED`) with `t` in `d`, the
/// add's other source in `v[0]` and its destination in `v[1]`.
fn mul_wide_add<const SIGNED: bool>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, mask: u32) {
    crate::v3_call!(
        mul_wide_add_lanes::<SIGNED>,
        mul_wide_add_lanes_v3::<SIGNED>,
        (r, i, mask)
    )
}

#[inline(always)]
fn mul_wide_add_lanes<const SIGNED: bool>(r: &mut [Lanes], i: &Insn, mask: u32) {
    let [t, x, y, base, d] = pair_slots(cells(r), i);
    let wide = |l: usize| wide::<SIGNED>(x[l].get(), y[l].get());
    if mask == FULL {
        store_lanes(t, wide);
        store_lanes(d, |l| base[l].get().wrapping_add(t[l].get()));
    } else {
        for l in crate::program::lane_bits(mask) {
            t[l].set(wide(l));
            d[l].set(base[l].get().wrapping_add(t[l].get()));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mul_wide_add_lanes_v3<const SIGNED: bool>(r: &mut [Lanes], i: &Insn, mask: u32) {
    mul_wide_add_lanes::<SIGNED>(r, i, mask)
}

#[cfg(test)]
mod tests {
    use crate::program::{Op, Program};

    fn program(body: &str) -> Program {
        crate::compile::test_program(".param .u64 out", body)
    }

    fn fused_at(p: &Program) -> Vec<u32> {
        (0..p.code.len() - 1)
            .filter(|&k| {
                let (a, b) = (&p.code[k], &p.code[k + 1]);
                matches!(a.op, Op::Alu(_)) && matches!(b.op, Op::Nop) && a.v[1] == b.d
            })
            .map(|k| k as u32)
            .collect()
    }

    #[test]
    fn pairs_that_fuse_and_pairs_that_do_not() {
        let p = program(
            ".reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<12>;
             ld.param.u64 %rd9, [out];
             mov.u32 %r1, %ctaid.x;
             setp.eq.u32 %p1, %r1, 3;
             selp.b32 %r2, 1, 2, %p1;
             add.s32 %r3, %r1, %r2;
             mul.wide.s32 %rd1, %r3, 4;
             add.s64 %rd2, %rd9, %rd1;
             selp.b32 %r4, 1, 2, %p1;
             add.s32 %r5, %r1, %r3;
             mul.wide.s32 %rd3, %r5, 4;
             @%p1 add.s64 %rd4, %rd9, %rd3;
             selp.b32 %r6, 1, 2, %p1;
             L: add.s32 %r7, %r6, %r1;
             add.sat.s32 %r8, %r7, %r4;
             setp.lt.u32 %p2, %r8, 100;
             @%p2 bra L;
             st.global.u32 [%rd2], %r8;
             st.global.u32 [%rd4], %r5;
             ret;",
        );
        // (values from %ctaid: nothing is hoisted) selp + add and mul.wide + add fuse; an add
        // not reading the selp's result, a guarded add and an add that is a branch target do not
        assert_eq!(fused_at(&p), vec![3, 5]);
    }

    /// Where scan steps were fused: a `shfl` followed by two no-ops that carries the add's
    /// destination.
    fn steps_at(p: &Program) -> Vec<u32> {
        (0..p.code.len() - 2)
            .filter(|&k| {
                let [a, b, c] = [&p.code[k], &p.code[k + 1], &p.code[k + 2]];
                matches!(a.op, Op::WarpSync(_) | Op::Mem(_))
                    && matches!((b.op, c.op), (Op::Nop, Op::Nop))
                    && a.v[3] == c.d
                    && a.v[3] != 0
            })
            .map(|k| k as u32)
            .collect()
    }

    #[test]
    fn scan_steps_that_fuse_and_scan_steps_that_do_not() {
        let p = program(
            ".reg .pred %p<9>; .reg .b32 %r<40>; .reg .b64 %rd<3>;
             ld.param.u64 %rd1, [out];
             mov.u32 %r1, %tid.x;
             and.b32 %r2, %r1, 31;
             mov.u32 %r3, %ctaid.x;
             add.s32 %r4, %r3, %r1;
             setp.lt.u32 %p1, %r2, 1;
             shfl.sync.up.b32 %r5|%p2, %r4, 1, 0, -1;
             selp.b32 %r6, 0, %r5, %p1;
             add.s32 %r7, %r6, %r4;
             setp.ge.u32 %p3, %r2, 2;
             shfl.sync.up.b32 %r8, %r7, 2, 0, -1;
             selp.b32 %r9, %r8, 0, %p3;
             add.u32 %r10, %r7, %r9;
             shfl.sync.up.b32 %r11, %r10, 4, 0, -1;
             selp.b32 %r12, 0, %r11, %p1;
             add.s32 %r13, %r12, %r10;
             add.s32 %r14, %r13, %r11;
             shfl.sync.up.b32 %r15, %r14, 3, 0, -1;
             selp.b32 %r16, 0, %r15, %p1;
             add.s32 %r17, %r16, %r14;
             shfl.sync.down.b32 %r18, %r17, %r2, 31, -1;
             selp.b32 %r19, 0, %r18, %p1;
             add.s32 %r20, %r19, %r17;
             shfl.sync.bfly.b32 %r21, %r20, 16, 31, -1;
             selp.b32 %r22, 0, %r21, %p1;
             add.s32 %r23, %r22, %r20;
             add.s32 %r24, %r23, %r22;
             shfl.sync.down.b32 %r25, %r24, 8, 31, -1;
             selp.b32 %r26, 0, %r25, %p1;
             @%p3 add.s32 %r27, %r26, %r24;
             st.global.u32 [%rd1], %r27;
             ret;",
        );
        // fused: the first two steps (either order of sources); not fused: a `shfl` result read
        // twice, a shift that has no handler of its own (3), a lane-dependent shift, a `selp`
        // result read twice, a guarded add
        assert_eq!(steps_at(&p), vec![6, 10]);
    }
}
