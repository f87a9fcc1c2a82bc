//! Per-lane models of the warp-collective instructions, written from the ISA's descriptions
//! (`shfl.sync`'s pseudo-code, `vote`, `match`, `redux`, `activemask`, `elect`), independent of
//! the interpreter. A lane's inputs are its input record; its group is the member mask of the
//! configuration (the lanes of its warp that run the instruction with it).

use super::{out_slot, record, Instance, Op, Outcome, Tail, Variant, N};
use ptx_isa::ScalarType;

/// The sources of an instance in kernel order: each `Src`/`Pred` takes the next input slot, an
/// immediate its value.
enum Val {
    Slot(usize, ScalarType),
    Pred(usize, bool),
    Imm(u64),
}

fn sources(inst: &Instance) -> Vec<Val> {
    let mut v = Vec::new();
    let mut slot = 0;
    fn walk(op: &Op, v: &mut Vec<Val>, slot: &mut usize) {
        match op {
            Op::Src(t) => {
                v.push(Val::Slot(*slot, *t));
                *slot += 1;
            }
            Op::Pred(neg) => {
                v.push(Val::Pred(*slot, *neg));
                *slot += 1;
            }
            Op::Imm(s) => v.push(Val::Imm(parse_imm(s))),
            Op::Vec(items) => items.iter().for_each(|o| walk(o, v, slot)),
            _ => {}
        }
    }
    for op in &inst.ops {
        walk(op, &mut v, &mut slot);
    }
    v
}

fn parse_imm(s: &str) -> u64 {
    if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0d")) {
        return u64::from_str_radix(h, 16).unwrap_or(0);
    }
    s.parse::<i64>()
        .map(|x| x as u64)
        .or_else(|_| s.parse::<u64>())
        .unwrap_or(0)
}

fn value(input: &[u64], i: usize, v: &Val) -> u64 {
    match *v {
        Val::Slot(k, t) => {
            let x = record(input, i)[k];
            if t.size_bits() >= 64 {
                x
            } else {
                x & ((1u64 << t.size_bits()) - 1)
            }
        }
        Val::Pred(k, neg) => ((record(input, i)[k] as u32 & 1 != 0) != neg) as u64,
        Val::Imm(x) => x,
    }
}

/// Expected output slots of lane `i` (None: undefined by the ISA, not compared).
type Expect = Vec<Option<u64>>;

fn has(inst: &Instance, m: &str) -> bool {
    inst.text_op
        .split('.')
        .any(|p| p == m.trim_start_matches('.'))
}

/// Compares every lane of `got` with the model; the first disagreement, if any.
pub fn verify(
    inst: &Instance,
    input: &[u64],
    block: u32,
    masks: &[u32],
    guard: &[bool],
    v: Variant,
    got: &Outcome,
) -> Option<String> {
    let src = sources(inst);
    let name = inst.opcode.name();
    let runs = |i: usize| match v {
        Variant::Guard => guard[i],
        _ => true,
    };
    for (i, &mask) in masks.iter().enumerate().take(N as usize) {
        if !runs(i) {
            continue; // keeps its sentinels, as every configuration does
        }
        let me = (i as u32 % block) % 32;
        let mut want = model(inst, name, &src, input, i, me, mask);
        if inst.tail == Tail::Scan {
            // t2 = (p ? d : 0) + a
            let a = value(input, i, &src[0]) as u32;
            let t2 = match (
                want.first().copied().flatten(),
                want.get(1).copied().flatten(),
            ) {
                (_, Some(0)) => Some(a as u64),
                (Some(d), Some(_)) => Some((d as u32).wrapping_add(a) as u64),
                _ => None,
            };
            want = vec![t2];
        }
        want.truncate(outputs(inst));
        for (k, w) in want.iter().enumerate() {
            if let Some(w) = w {
                let g = out_slot(got, i, k);
                let width = out_width(inst, k);
                let m = if width >= 64 {
                    u64::MAX
                } else {
                    (1u64 << width) - 1
                };
                if g & m != w & m {
                    return Some(format!(
                        "thread {i} (mask {mask:#010x}) output {k}: got {g:#x}, model {w:#x}"
                    ));
                }
            }
        }
    }
    None
}

/// How many output slots an instance writes.
fn outputs(inst: &Instance) -> usize {
    if inst.tail == Tail::Scan {
        return 1;
    }
    inst.ops
        .iter()
        .map(|op| match op {
            Op::Dst(_) | Op::PredDst => 1,
            Op::DstPair(_) => 2,
            _ => 0,
        })
        .sum()
}

/// The bit width of output slot `k` (destinations first, then predicate destinations as 0/1).
fn out_width(inst: &Instance, k: usize) -> u32 {
    let mut d = Vec::new();
    let mut p = 0;
    for op in &inst.ops {
        match op {
            Op::Dst(t) => d.push(t.size_bits().max(8)),
            Op::DstPair(t) => {
                d.push(t.size_bits().max(8));
                p += 1;
            }
            Op::PredDst => p += 1,
            _ => {}
        }
    }
    let _ = p;
    d.get(k).copied().unwrap_or(32)
}

/// The logical thread of lane `l` of the warp whose lane `me` is thread `i`.
fn lane_thread(i: usize, me: u32, l: u32) -> usize {
    i - me as usize + l as usize
}

fn model(
    inst: &Instance,
    name: &str,
    src: &[Val],
    input: &[u64],
    i: usize,
    me: u32,
    mask: u32,
) -> Expect {
    let val = |l: u32, k: usize| value(input, lane_thread(i, me, l), &src[k]);
    let lanes: Vec<u32> = (0..32).filter(|l| mask >> l & 1 != 0).collect();
    match name {
        "activemask" => vec![Some(mask as u64)],
        "elect" | "elect.sync" => {
            // d|p: d = the leader's lane id (the lowest lane of membermask), p = whether this lane
            let leader = mask.trailing_zeros() as u64;
            vec![Some(leader), Some((me as u64 == leader) as u64)]
        }
        "vote" | "vote.sync" => {
            let bits: Vec<bool> = lanes.iter().map(|&l| val(l, 0) != 0).collect();
            if has(inst, "ballot") {
                let b = lanes
                    .iter()
                    .zip(&bits)
                    .fold(0u64, |acc, (&l, &x)| acc | ((x as u64) << l));
                vec![Some(b)]
            } else {
                let r = if has(inst, "all") {
                    bits.iter().all(|&x| x)
                } else if has(inst, "any") {
                    bits.iter().any(|&x| x)
                } else {
                    bits.iter().all(|&x| x == bits[0])
                };
                vec![Some(r as u64)]
            }
        }
        "match" | "match.sync" => {
            let a = val(me, 0);
            if has(inst, "any") {
                let m = lanes
                    .iter()
                    .filter(|&&l| val(l, 0) == a)
                    .fold(0u64, |acc, &l| acc | 1 << l);
                vec![Some(m), Some(1)]
            } else {
                let all = lanes.iter().all(|&l| val(l, 0) == a);
                vec![Some(if all { mask as u64 } else { 0 }), Some(all as u64)]
            }
        }
        "redux" | "redux.sync" => {
            let xs: Vec<u64> = lanes.iter().map(|&l| val(l, 0)).collect();
            let signed = has(inst, "s32");
            let r = if has(inst, "f32") {
                return vec![redux_f32(inst, &xs)];
            } else if has(inst, "add") {
                xs.iter().fold(0u32, |a, &x| a.wrapping_add(x as u32)) as u64
            } else if has(inst, "and") {
                xs.iter().fold(u32::MAX, |a, &x| a & x as u32) as u64
            } else if has(inst, "or") {
                xs.iter().fold(0, |a, &x| a | x as u32) as u64
            } else if has(inst, "xor") {
                xs.iter().fold(0, |a, &x| a ^ x as u32) as u64
            } else if has(inst, "min") {
                if signed {
                    xs.iter().map(|&x| x as u32 as i32).min().unwrap_or(0) as u32 as u64
                } else {
                    xs.iter().map(|&x| x as u32).min().unwrap_or(0) as u64
                }
            } else if signed {
                xs.iter().map(|&x| x as u32 as i32).max().unwrap_or(0) as u32 as u64
            } else {
                xs.iter().map(|&x| x as u32).max().unwrap_or(0) as u64
            };
            vec![Some(r)]
        }
        "shfl" | "shfl.sync" => {
            // the ISA's pseudo-code
            let (b, c) = (val(me, 1) as u32, val(me, 2) as u32);
            let bval = (b & 0x1f) as i32;
            let cval = (c & 0x1f) as i32;
            let segmask = ((c >> 8) & 0x1f) as i32;
            let lane = me as i32;
            let max_lane = (lane & segmask) | (cval & !segmask);
            let min_lane = lane & segmask;
            let (mut j, pval) = if has(inst, "up") {
                let j = lane - bval;
                (j, j >= max_lane)
            } else if has(inst, "down") {
                let j = lane + bval;
                (j, j <= max_lane)
            } else if has(inst, "bfly") {
                let j = lane ^ bval;
                (j, j <= max_lane)
            } else {
                let j = min_lane | (bval & !segmask);
                (j, j <= max_lane)
            };
            if !pval {
                j = lane;
            }
            // a source lane outside the member mask gives an undefined value
            let d = (mask >> j & 1 != 0).then(|| val(j as u32, 0));
            vec![d, Some(pval as u64)]
        }
        _ => vec![],
    }
}

fn redux_f32(inst: &Instance, xs: &[u64]) -> Option<u64> {
    let nan = has(inst, "NaN");
    let abs = has(inst, "abs");
    let mut acc: Option<f32> = None;
    let mut any_nan = false;
    for &x in xs {
        let mut f = f32::from_bits(x as u32);
        if abs {
            f = f.abs();
        }
        if f.is_nan() {
            any_nan = true;
            continue;
        }
        acc = Some(match acc {
            None => f,
            Some(a) => {
                let take = if has(inst, "min") {
                    f < a || (f == a && f.is_sign_negative())
                } else {
                    f > a || (f == a && f.is_sign_positive())
                };
                if take {
                    f
                } else {
                    a
                }
            }
        });
    }
    if any_nan && (nan || acc.is_none()) {
        return Some(0x7fff_ffff);
    }
    acc.map(|a| a.to_bits() as u64)
}
