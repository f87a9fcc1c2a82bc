//! Integer arithmetic, the extended-precision carry chain, bit manipulation and logic:
//! `add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi bmsk
//! szext dp4a dp2a`, `add.cc addc sub.cc subc mad.cc madc`, `and or xor not cnot lop3 shf shl shr
//! prmt` (and `and or xor not` on predicates).
//!
//! This module holds the handlers; `crate::decode::int` picks them. Every modifier is resolved
//! at decode time: a handler is a generic function instantiated per
//! instruction type (`add_h::<i16>`) and per modifier combination (const parameters), so the lane
//! loops test nothing per lane. What a lane computes comes from [`crate::semantics::int`] and
//! [`crate::semantics::logic`]. Results are written zero-extended above the instruction type's
//! width.

use crate::handlers::{cells, slot, store_lanes, CellLanes};
use crate::program::{lane_bits, Insn, Lanes, FULL};
use crate::semantics::int::{self as si, CarryOps, IntOps, SignedOps, WideOps};
use crate::semantics::logic::{self as sl, PrmtMode};
use crate::semantics::video::{self as sv, Vop4};

// ---- lanes -----------------------------------------------------------------------------------

/// An instruction-type value held in the low bits of a register lane.
pub(crate) trait Lane: Copy {
    /// The value in the low bits of `v`.
    fn get(v: u64) -> Self;
    /// The value zero-extended to a lane.
    fn put(self) -> u64;
}

macro_rules! lane {
    ($t:ty, $u:ty) => {
        impl Lane for $t {
            #[inline(always)]
            fn get(v: u64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn put(self) -> u64 {
                self as $u as u64
            }
        }
    };
}

lane!(u16, u16);
lane!(i16, u16);
lane!(u32, u32);
lane!(i32, u32);
lane!(u64, u64);
lane!(i64, u64);

/// Defines `$name`, the full-warp loop `d[l] = f(sources[l])`, and `$v3`, the same loop
/// compiled for AVX2 (the closure is inlined into both), and `$map`, which runs `f` over the
/// lanes of a mask: the loop of the best copy the CPU allows for a full warp, lane by lane
/// otherwise.
macro_rules! int_map {
    ($map:ident, $name:ident, $v3:ident, $($x:ident : $k:literal),+) => {
        #[inline(always)]
        fn $name<F: Fn($(int_map!(@u64 $x)),+) -> u64>(
            d: &CellLanes,
            $($x: &CellLanes,)+
            f: F,
        ) {
            store_lanes(d, |l| f($($x[l].get()),+));
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $v3<F: Fn($(int_map!(@u64 $x)),+) -> u64>(
            d: &CellLanes,
            $($x: &CellLanes,)+
            f: F,
        ) {
            $name(d, $($x,)+ f)
        }

        /// `d = f(sources)` over the lanes of `mask`.
        #[inline(always)]
        pub(crate) fn $map(
            r: &mut [Lanes],
            i: &Insn,
            mask: u32,
            f: impl Fn($(int_map!(@u64 $x)),+) -> u64,
        ) {
            let c = cells(r);
            let d = slot(c, i.d);
            $(let $x = slot(c, i.src($k));)+
            if mask == FULL {
                #[cfg(target_arch = "x86_64")]
                if crate::handlers::v3() {
                    // SAFETY: the AVX2 copy of the loop runs only after `v3()` has confirmed
                    // that the CPU has AVX2 and FMA.
                    #[allow(unsafe_code)]
                    unsafe {
                        $v3(d, $($x,)+ f)
                    };
                    return;
                }
                $name(d, $($x,)+ f);
            } else {
                for l in lane_bits(mask) {
                    d[l].set(f($($x[l].get()),+));
                }
            }
        }
    };
    (@u64 $x:ident) => { u64 };
}

int_map!(map1, full1, full1_v3, x: 0);
int_map!(map2, full2, full2_v3, x: 0, y: 1);
int_map!(map3, full3, full3_v3, x: 0, y: 1, z: 2);
int_map!(map4, full4, full4_v3, x: 0, y: 1, z: 2, w: 3);

/// Writes `v` into predicate slot `d` (unless it is `_`) for the lanes of `mask`.
#[inline(always)]
pub(crate) fn write_pred(p: &mut [u32], d: u32, v: u32, mask: u32) {
    if d != u32::MAX {
        let x = &mut p[d as usize];
        *x = (*x & !mask) | (v & mask);
    }
}

/// The low `W` bits of `v`.
#[inline(always)]
pub(crate) fn low<const W: u32>(v: u64) -> u64 {
    if W >= 64 {
        v
    } else {
        v & ((1u64 << W) - 1)
    }
}

// ---- handlers generic over the integer type --------------------------------------------------

macro_rules! gen1 {
    ($name:ident, $tr:ident, $f:ident) => {
        pub(crate) fn $name<T: Lane + $tr>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
            map1(r, i, m, |a| T::$f(T::get(a)).put())
        }
    };
}

macro_rules! gen2 {
    ($name:ident, $tr:ident, $f:ident) => {
        pub(crate) fn $name<T: Lane + $tr>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
            map2(r, i, m, |a, b| T::$f(T::get(a), T::get(b)).put())
        }
    };
}

macro_rules! gen3 {
    ($name:ident, $tr:ident, $f:ident) => {
        pub(crate) fn $name<T: Lane + $tr>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
            map3(r, i, m, |a, b, c| {
                T::$f(T::get(a), T::get(b), T::get(c)).put()
            })
        }
    };
}

gen2!(add_h, IntOps, iadd);
gen2!(sub_h, IntOps, isub);
gen2!(mul_lo_h, IntOps, mul_lo);
gen2!(mul_hi_h, IntOps, mul_hi);
gen2!(min_h, IntOps, imin);
gen2!(max_h, IntOps, imax);
gen2!(div_h, IntOps, idiv);
gen2!(rem_h, IntOps, irem);
gen3!(mad_lo_h, IntOps, mad_lo);
gen3!(mad_hi_h, IntOps, mad_hi);
gen3!(sad_h, IntOps, isad);
gen1!(abs_h, SignedOps, iabs);
gen1!(neg_h, SignedOps, ineg);

pub(crate) fn mul_wide_h<T: Lane + WideOps>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32)
where
    T::Wide: Lane,
{
    map2(r, i, m, |a, b| T::mul_wide(T::get(a), T::get(b)).put())
}

pub(crate) fn mad_wide_h<T: Lane + WideOps>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32)
where
    T::Wide: Lane,
{
    map3(r, i, m, |a, b, c| {
        T::mad_wide(T::get(a), T::get(b), <T::Wide as Lane>::get(c)).put()
    })
}

// aux bits of the carry-chain handlers
pub(crate) const CC_IN: u64 = 1;
pub(crate) const CC_OUT: u64 = 2;
pub(crate) const CC_HI: u64 = 4;
pub(crate) const CC_SIGNED: u64 = 8;
pub(crate) const CC_SUB: u64 = 16;

/// `add.cc`, `addc{.cc}`, `sub.cc`, `subc{.cc}`: CC.CF is the lane's value in slot `v[0]`.
pub(crate) fn addc_h<T: Lane + CarryOps>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, mask: u32) {
    let cc = i.v[0] as usize;
    let (cin, cout, sub) = (i.aux & CC_IN != 0, i.aux & CC_OUT != 0, i.aux & CC_SUB != 0);
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = T::get(r[i.a as usize][l]);
        let b = T::get(r[i.b as usize][l]);
        let cf = cin && r[cc][l] & 1 != 0;
        let (s, co) = if sub {
            T::subc(a, b, cf)
        } else {
            T::addc(a, b, cf)
        };
        r[i.d as usize][l] = s.put();
        if cout {
            r[cc][l] = co as u64;
        }
    }
}

/// `mad{.lo,.hi}.cc`, `madc{.lo,.hi}{.cc}`.
pub(crate) fn madc_h<T: Lane + CarryOps>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, mask: u32) {
    let cc = i.v[0] as usize;
    let (cin, cout) = (i.aux & CC_IN != 0, i.aux & CC_OUT != 0);
    let (hi, signed) = (i.aux & CC_HI != 0, i.aux & CC_SIGNED != 0);
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = T::get(r[i.a as usize][l]);
        let b = T::get(r[i.b as usize][l]);
        let c = T::get(r[i.c as usize][l]);
        let cf = cin && r[cc][l] & 1 != 0;
        let (s, co) = T::madc(a, b, c, hi, signed, cf);
        r[i.d as usize][l] = s.put();
        if cout {
            r[cc][l] = co as u64;
        }
    }
}

// ---- handlers with modifiers as const parameters ----------------------------------------------

pub(crate) fn mul24_h<const HI: bool, const S: bool>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map2(r, i, m, |a, b| si::mul24(a as u32, b as u32, HI, S) as u64)
}

pub(crate) fn mad24_h<const HI: bool, const S: bool, const SAT: bool>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map3(r, i, m, |a, b, c| {
        si::mad24(a as u32, b as u32, c as u32, HI, S, SAT) as u64
    })
}

pub(crate) fn bfind_h<const W: u32, const S: bool, const SH: bool>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map1(r, i, m, |a| sl::bfind(a, W, S, SH) as u64)
}

pub(crate) fn bfe_h<const W: u32, const S: bool>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map3(r, i, m, |a, b, c| sl::bfe(a, b as u32, c as u32, W, S))
}

pub(crate) fn bfi_h<const W: u32>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
    map4(r, i, m, |a, b, c, e| sl::bfi(a, b, c as u32, e as u32, W))
}

pub(crate) fn dp4a_h<const AS: bool, const BS: bool>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map3(r, i, m, |a, b, c| {
        si::dp4a(a as u32, b as u32, c as u32, AS, BS) as u64
    })
}

/// `vabsdiff4`, its lane types and secondary operation in `aux` ([`Vop4::pack`]).
pub(crate) fn vabsdiff4_h(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
    let v = Vop4::unpack(i.aux);
    map3(r, i, m, |a, b, c| {
        sv::vabsdiff4(a as u32, b as u32, c as u32, v) as u64
    })
}

pub(crate) fn dp2a_h<const HI: bool, const AS: bool, const BS: bool>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map3(r, i, m, |a, b, c| {
        si::dp2a(a as u32, b as u32, c as u32, HI, AS, BS) as u64
    })
}

// bitwise operators of the value forms of and/or/xor/not/cnot
pub(crate) const AND: u8 = 0;
pub(crate) const OR: u8 = 1;
pub(crate) const XOR: u8 = 2;
pub(crate) const NOT: u8 = 3;

pub(crate) fn logic2_h<const OP: u8, const W: u32>(
    r: &mut [Lanes],
    _p: &mut [u32],
    i: &Insn,
    m: u32,
) {
    map2(r, i, m, |a, b| {
        low::<W>(match OP {
            AND => a & b,
            OR => a | b,
            _ => a ^ b,
        })
    })
}

pub(crate) fn not_h<const W: u32>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
    map1(r, i, m, |a| low::<W>(!a))
}

pub(crate) fn cnot_h<const W: u32>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
    map1(r, i, m, |a| (low::<W>(a) == 0) as u64)
}

/// `and/or/xor/not.pred`: `aux` bit 0 negates `a`, bit 1 negates `b` (`!p` operands).
pub(crate) fn pred_logic_h<const OP: u8>(_r: &mut [Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let a = p[i.a as usize] ^ 0u32.wrapping_sub((i.aux & 1) as u32);
    let b = p[i.b as usize] ^ 0u32.wrapping_sub((i.aux >> 1 & 1) as u32);
    let v = match OP {
        AND => a & b,
        OR => a | b,
        XOR => a ^ b,
        _ => !a,
    };
    write_pred(p, i.d, v, mask);
}

pub(crate) fn lop3_h(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
    map3(r, i, m, |a, b, c| {
        sl::lop3(a as u32, b as u32, c as u32, i.aux as u8) as u64
    })
}

// aux bits of lop3.BoolOp: immLut in bits 0..8, then these
pub(crate) const LOP3_OR: u64 = 1 << 8;
pub(crate) const LOP3_NEG_Q: u64 = 1 << 9;

/// `lop3.{and,or}.b32 d|p, a, b, c, immLut, q`: `p = (d != 0) BoolOp q`, `p` in `v[0]`, `q` in
/// `v[1]`.
pub(crate) fn lop3_pred_h(r: &mut [Lanes], p: &mut [u32], i: &Insn, mask: u32) {
    let lut = i.aux as u8;
    let mut nonzero = 0u32;
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let v = sl::lop3(
            r[i.a as usize][l] as u32,
            r[i.b as usize][l] as u32,
            r[i.c as usize][l] as u32,
            lut,
        );
        r[i.d as usize][l] = v as u64;
        nonzero |= ((v != 0) as u32) << l;
    }
    let q = p[i.v[1] as usize] ^ if i.aux & LOP3_NEG_Q != 0 { u32::MAX } else { 0 };
    let t = if i.aux & LOP3_OR != 0 {
        nonzero | q
    } else {
        nonzero & q
    };
    write_pred(p, i.v[0], t, mask);
}

pub(crate) const fn prmt_mode(m: u8) -> Option<PrmtMode> {
    match m {
        1 => Some(PrmtMode::F4e),
        2 => Some(PrmtMode::B4e),
        3 => Some(PrmtMode::Rc8),
        4 => Some(PrmtMode::Ecl),
        5 => Some(PrmtMode::Ecr),
        6 => Some(PrmtMode::Rc16),
        _ => None,
    }
}

pub(crate) fn prmt_h<const M: u8>(r: &mut [Lanes], _p: &mut [u32], i: &Insn, m: u32) {
    map3(r, i, m, |a, b, c| {
        sl::prmt(a as u32, b as u32, c as u32, prmt_mode(M)) as u64
    })
}

#[cfg(test)]
mod tests {
    //! Each test compiles a small kernel (IR built by hand) and runs its handlers on a register
    //! file. Expected values are worked out by hand from the ISA text or with native Rust
    //! integer arithmetic (`u128` products, `u64` sums), not with the semantics module.
    use super::*;
    use crate::compile::{compile, GlobalAddrs};
    use crate::program::{Op, Program, FULL};
    use ptx_ir::{Function, FunctionKind, Imm, Inst, Module, Operand, RegInfo};
    use ptx_isa::ScalarType::{self, *};

    fn r(k: u32) -> Operand {
        Operand::Reg(ptx_ir::RegId::new(k))
    }

    fn imm(v: i64) -> Operand {
        Operand::Imm(Imm::Int(v as u64))
    }

    fn pair(a: Operand, b: Operand) -> Operand {
        Operand::Pair(Box::new(a), Box::new(b))
    }

    /// A one-function program; registers `%r0..` have the types in `regs`.
    struct Machine {
        p: Program,
        types: Vec<ScalarType>,
        regs: Vec<Lanes>,
        preds: Vec<u32>,
    }

    impl Machine {
        fn new(regs: &[ScalarType], insts: Vec<(&str, Vec<Operand>)>) -> Machine {
            let insts = insts
                .into_iter()
                .map(|(text, operands)| {
                    Inst::named(text, operands, Default::default()).expect("a known instruction")
                })
                .collect();
            let f = Function {
                name: "k".into(),
                kind: FunctionKind::Entry,
                defined: true,
                params: vec![],
                returns: vec![],
                regs: regs
                    .iter()
                    .enumerate()
                    .map(|(k, &ty)| RegInfo {
                        name: format!("%r{k}").into(),
                        ty,
                    })
                    .collect(),
                locals: vec![],
                frame_size: 0,
                frame_align: 1,
                param_size: 0,
                insts,
                labels: vec![],
                blocks: vec![],
                ipdom: vec![],
                uses_globals: vec![],
                callees: vec![],
                unsupported: vec![],
                attrs: vec![],
                span: Default::default(),
            };
            let m = Module {
                address_size: 64,
                globals: vec![],
                functions: vec![f],
                files: vec![],
            };
            let p = compile(&m, 0, &GlobalAddrs::default()).expect("compiles");
            let mut regs_v = vec![[0u64; 32]; p.nslots as usize];
            for &(s, v) in &p.consts {
                regs_v[s as usize] = [v; 32];
            }
            let mut preds = vec![0u32; p.npreds as usize];
            for &(s, v) in &p.const_preds {
                preds[s as usize] = v;
            }
            Machine {
                p,
                types: regs.to_vec(),
                regs: regs_v,
                preds,
            }
        }

        /// The slot of register `k` (value or predicate slot).
        fn slot(&self, k: u32) -> usize {
            let pred = self.types[k as usize] == Pred;
            let before = self.types[..k as usize]
                .iter()
                .filter(|&&t| (t == Pred) == pred)
                .count() as u32;
            let f = &self.p.funcs[0];
            (if pred { f.pred_slots.0 } else { f.slots.0 } + before) as usize
        }

        /// Sets lane `l` of register `k` to `v[l]` (lanes past `v.len()` get the last value).
        fn set(&mut self, k: u32, v: &[u64]) {
            let s = self.slot(k);
            for l in 0..32 {
                self.regs[s][l] = v[l.min(v.len() - 1)];
            }
        }

        fn set_pred(&mut self, k: u32, mask: u32) {
            let s = self.slot(k);
            self.preds[s] = mask;
        }

        fn get(&self, k: u32) -> Lanes {
            self.regs[self.slot(k)]
        }

        fn pred(&self, k: u32) -> u32 {
            self.preds[self.slot(k)]
        }

        /// Runs every instruction in order for the lanes of `mask`.
        fn run(&mut self, mask: u32) {
            for insn in &self.p.code {
                match insn.op {
                    Op::Alu(f) => f(&mut self.regs, &mut self.preds, insn, mask),
                    Op::Unsupported(m) => panic!("{}", self.p.messages[m as usize]),
                    _ => panic!("not an ALU instruction"),
                }
            }
        }

        /// The unsupported-instruction message of instruction `k`, if it has one.
        fn message(&self, k: usize) -> Option<&str> {
            match self.p.code[k].op {
                Op::Unsupported(m) => Some(&self.p.messages[m as usize]),
                _ => None,
            }
        }
    }

    /// `text d, s1, s2, …` with `d` and each source a register of the given types, on lane 0.
    fn eval(text: &str, types: &[ScalarType], srcs: &[u64]) -> u64 {
        let ops = (0..types.len() as u32).map(r).collect();
        let mut m = Machine::new(types, vec![(text, ops)]);
        for (k, &v) in srcs.iter().enumerate() {
            m.set(k as u32 + 1, &[v]);
        }
        m.run(FULL);
        m.get(0)[0]
    }

    #[test]
    fn add_sub_wrap_and_zero_extend() {
        assert_eq!(eval("add.s16", &[S16, S16, S16], &[0x7FFF, 1]), 0x8000);
        assert_eq!(eval("add.u32", &[U32; 3], &[0xFFFF_FFFF, 1]), 0);
        assert_eq!(eval("add.u64", &[U64; 3], &[u64::MAX, 2]), 1);
        assert_eq!(eval("sub.s32", &[S32; 3], &[0, 1]), 0xFFFF_FFFF);
        assert_eq!(eval("sub.u16", &[U16; 3], &[0, 1]), 0xFFFF);
        assert_eq!(
            eval("add.sat.s32", &[S32; 3], &[0x7FFF_FFFF, 1]),
            0x7FFF_FFFF
        );
        assert_eq!(
            eval("add.sat.s32", &[S32; 3], &[0x8000_0000, 0xFFFF_FFFF]),
            0x8000_0000
        );
        assert_eq!(
            eval("sub.sat.s32", &[S32; 3], &[0x8000_0000, 1]),
            0x8000_0000
        );
        // halves wrap independently: 0xFFFF + 1 = 0, 1 + 1 = 2
        assert_eq!(eval("add.u16x2", &[B32; 3], &[0xFFFF_0001, 0x0001_0001]), 2);
        assert_eq!(
            eval("add.s16x2", &[B32; 3], &[0x7FFF_8000, 0x0001_FFFF]),
            0x8000_7FFF
        );
    }

    #[test]
    fn immediates_are_truncated_to_the_type() {
        let mut m = Machine::new(&[U32, U32], vec![("add.u32", vec![r(0), r(1), imm(-1)])]);
        m.set(1, &[5]);
        m.run(FULL);
        assert_eq!(m.get(0)[0], 4);
        let mut m = Machine::new(&[B32, B32], vec![("or.b32", vec![r(0), r(1), imm(-1)])]);
        m.run(FULL);
        assert_eq!(m.get(0)[0], 0xFFFF_FFFF);
    }

    #[test]
    fn inactive_lanes_are_untouched() {
        let mut m = Machine::new(&[U32; 3], vec![("add.u32", vec![r(0), r(1), r(2)])]);
        m.set(0, &[99]);
        m.set(1, &[1]);
        m.set(2, &[2]);
        m.run(0b0101);
        let d = m.get(0);
        assert_eq!(&d[..4], &[3, 99, 3, 99]);
    }

    #[test]
    fn multiply_modes() {
        assert_eq!(
            eval("mul.lo.u32", &[U32; 3], &[0x1_0001, 0x1_0001]),
            0x0002_0001
        );
        assert_eq!(
            eval("mul.hi.s32", &[S32; 3], &[0xFFFF_FFFF, 1]),
            0xFFFF_FFFF
        );
        assert_eq!(
            eval("mul.hi.u32", &[U32; 3], &[0xFFFF_FFFF, 0xFFFF_FFFF]),
            0xFFFF_FFFE
        );
        assert_eq!(
            eval("mul.wide.s32", &[S64, S32, S32], &[0xFFFF_FFFE, 3]),
            (-6i64) as u64
        );
        assert_eq!(
            eval("mul.wide.u16", &[U32, U16, U16], &[0xFFFF, 0xFFFF]),
            0xFFFE_0001
        );
        assert_eq!(
            eval("mul.wide.s16", &[S32, S16, S16], &[0xFFFF, 2]),
            0xFFFF_FFFE
        );
        let (x, y) = (0x1234_5678_9ABC_DEF0u64, 0x0FED_CBA9_8765_4321u64);
        let p = x as u128 * y as u128;
        assert_eq!(eval("mul.lo.u64", &[U64; 3], &[x, y]), p as u64);
        assert_eq!(eval("mul.hi.u64", &[U64; 3], &[x, y]), (p >> 64) as u64);
        let p = (-5i64 as i128) * (x as i64 as i128);
        assert_eq!(
            eval("mul.hi.s64", &[S64; 3], &[-5i64 as u64, x]),
            (p >> 64) as u64
        );
        // mul with no mode is .lo
        assert_eq!(eval("mul.u16", &[U16; 3], &[0x100, 0x100]), 0);
    }

    #[test]
    fn multiply_add_modes() {
        assert_eq!(eval("mad.lo.s32", &[S32; 4], &[3, 0xFFFF_FFFC, 20]), 8);
        assert_eq!(
            eval("mad.hi.u32", &[U32; 4], &[0xFFFF_FFFF, 0xFFFF_FFFF, 2]),
            0
        );
        // hi(2^30 * 2^30) = 2^28, + MAX saturates
        assert_eq!(
            eval(
                "mad.hi.sat.s32",
                &[S32; 4],
                &[1 << 30, 1 << 30, 0x7FFF_FFFF]
            ),
            0x7FFF_FFFF
        );
        // (2^32-1)^2 + 0x1_FFFF_FFFF = 2^64 wraps to 0
        assert_eq!(
            eval(
                "mad.wide.u32",
                &[U64, U32, U32, U64],
                &[0xFFFF_FFFF, 0xFFFF_FFFF, 0x1_FFFF_FFFF]
            ),
            0
        );
        assert_eq!(
            eval(
                "mad.wide.s16",
                &[S32, S16, S16, S32],
                &[0xFFFF, 0xFFFF, 0xFFFF_FFFF]
            ),
            0
        );
        assert_eq!(
            eval("sad.s32", &[S32; 4], &[(-5i32) as u32 as u64, 5, 1]),
            11
        );
        assert_eq!(eval("sad.u16", &[U16; 4], &[0, 0xFFFF, 1]), 0);
    }

    #[test]
    fn mul24_mad24() {
        // 0xFFFFFF^2 = 0xFFFFFE000001
        assert_eq!(
            eval("mul24.lo.u32", &[U32; 3], &[0xFFFF_FFFF, 0xFFFF_FFFF]),
            0xFE00_0001
        );
        assert_eq!(
            eval("mul24.hi.u32", &[U32; 3], &[0xFFFF_FFFF, 0xFFFF_FFFF]),
            0xFFFF_FE00
        );
        // signed 24-bit: 0xFFFFFF is -1, so -1 * 2 = -2 and bits 47..16 are all ones
        assert_eq!(
            eval("mul24.hi.s32", &[S32; 3], &[0xFF_FFFF, 2]),
            0xFFFF_FFFF
        );
        assert_eq!(eval("mad24.lo.u32", &[U32; 4], &[3, 4, 5]), 17);
        // (2^23-1)^2 = 0x3FFFFF000001; bits 47..16 = 0x3FFFFF00; + MAX saturates
        assert_eq!(
            eval(
                "mad24.hi.sat.s32",
                &[S32; 4],
                &[0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF]
            ),
            0x7FFF_FFFF
        );
        assert_eq!(
            eval(
                "mad24.hi.s32",
                &[S32; 4],
                &[0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF]
            ),
            0xBFFF_FEFF
        );
    }

    #[test]
    fn division_by_zero_and_overflow() {
        assert_eq!(eval("div.u32", &[U32; 3], &[7, 0]), 0xFFFF_FFFF);
        assert_eq!(eval("rem.u32", &[U32; 3], &[7, 0]), 7);
        assert_eq!(eval("div.s32", &[S32; 3], &[7, 0]), 0xFFFF_FFFF);
        assert_eq!(eval("div.s32", &[S32; 3], &[(-7i32) as u32 as u64, 0]), 1);
        assert_eq!(
            eval("rem.s32", &[S32; 3], &[(-7i32) as u32 as u64, 0]),
            0xFFFF_FFF9
        );
        assert_eq!(
            eval("div.s32", &[S32; 3], &[(-7i32) as u32 as u64, 2]),
            0xFFFF_FFFD
        );
        assert_eq!(
            eval("rem.s32", &[S32; 3], &[(-7i32) as u32 as u64, 2]),
            0xFFFF_FFFF
        );
        assert_eq!(eval("div.s16", &[S16; 3], &[0x8000, 0xFFFF]), 0x8000);
        assert_eq!(eval("div.u64", &[U64; 3], &[1, 0]), u64::MAX);
        assert_eq!(eval("rem.u64", &[U64; 3], &[u64::MAX, 10]), 5);
    }

    #[test]
    fn abs_neg_min_max() {
        assert_eq!(eval("abs.s16", &[S16; 2], &[0x8000]), 0x8000);
        assert_eq!(eval("abs.s32", &[S32; 2], &[0xFFFF_FFFB]), 5);
        assert_eq!(eval("neg.s64", &[S64; 2], &[5]), (-5i64) as u64);
        assert_eq!(eval("neg.s16", &[S16; 2], &[1]), 0xFFFF);
        assert_eq!(eval("min.s16", &[S16; 3], &[0xFFFF, 1]), 0xFFFF);
        assert_eq!(eval("min.u16", &[U16; 3], &[0xFFFF, 1]), 1);
        assert_eq!(eval("max.s64", &[S64; 3], &[u64::MAX, 1]), 1);
        assert_eq!(eval("max.u32", &[U32; 3], &[0xFFFF_FFFF, 1]), 0xFFFF_FFFF);
        assert_eq!(eval("min.relu.s32", &[S32; 3], &[0xFFFF_FFFB, 3]), 0);
        assert_eq!(eval("max.relu.s32", &[S32; 3], &[0xFFFF_FFFB, 3]), 3);
        assert_eq!(eval("min.s32", &[S32; 3], &[0xFFFF_FFFB, 3]), 0xFFFF_FFFB);
        assert_eq!(
            eval("min.u16x2", &[B32; 3], &[0x0001_FFFF, 0x0002_0003]),
            0x0001_0003
        );
        assert_eq!(
            eval("max.u16x2", &[B32; 3], &[0x0001_FFFF, 0x0002_0003]),
            0x0002_FFFF
        );
        assert_eq!(
            eval("min.s16x2", &[B32; 3], &[0x0001_FFFF, 0x0002_0003]),
            0x0001_FFFF
        );
        assert_eq!(
            eval("min.relu.s16x2", &[B32; 3], &[0x0001_FFFF, 0x0002_0003]),
            0x0001_0000
        );
        assert_eq!(
            eval("max.s16x2", &[B32; 3], &[0x8000_FFFF, 0xFFFF_FFFE]),
            0xFFFF_FFFF
        );
        assert_eq!(
            eval("max.relu.s16x2", &[B32; 3], &[0x8000_FFFF, 0xFFFF_FFFE]),
            0
        );
    }

    #[test]
    fn bit_counting() {
        assert_eq!(eval("popc.b32", &[U32, B32], &[0xF0F0_0001]), 9);
        assert_eq!(eval("popc.b64", &[U32, B64], &[u64::MAX]), 64);
        assert_eq!(eval("clz.b32", &[U32, B32], &[0]), 32);
        assert_eq!(eval("clz.b32", &[U32, B32], &[0x0001_0000]), 15);
        assert_eq!(eval("clz.b64", &[U32, B64], &[1]), 63);
        assert_eq!(eval("brev.b32", &[B32, B32], &[1]), 0x8000_0000);
        assert_eq!(eval("brev.b64", &[B64, B64], &[0x3]), 0xC000_0000_0000_0000);
        assert_eq!(eval("bfind.u32", &[U32, U32], &[0]), 0xFFFF_FFFF);
        assert_eq!(eval("bfind.u32", &[U32, U32], &[0x0010_0000]), 20);
        assert_eq!(eval("bfind.shiftamt.u32", &[U32, U32], &[1]), 31);
        assert_eq!(eval("bfind.s32", &[U32, S32], &[0xFFFF_FFFF]), 0xFFFF_FFFF);
        // -256 = 0xFFFFFF00: the most significant 0 is bit 7
        assert_eq!(eval("bfind.s32", &[U32, S32], &[0xFFFF_FF00]), 7);
        assert_eq!(eval("bfind.shiftamt.s32", &[U32, S32], &[0xFFFF_FF00]), 24);
        assert_eq!(eval("bfind.u64", &[U32, U64], &[1 << 40]), 40);
        assert_eq!(eval("bfind.shiftamt.s64", &[U32, S64], &[1 << 40]), 23);
    }

    #[test]
    fn fns_spec_examples() {
        // the four examples of the ISA text
        for (base, off, want) in [(3, 1, 3), (3, -1, 3), (2, 1, 3), (2, -1, 1)] {
            let mut m = Machine::new(
                &[B32],
                vec![("fns.b32", vec![r(0), imm(0xAAAA_AAAA), imm(base), imm(off)])],
            );
            m.run(FULL);
            assert_eq!(m.get(0)[0], want, "base {base} offset {off}");
        }
        assert_eq!(
            eval("fns.b32", &[B32, B32, U32, S32], &[0xAAAA_AAAA, 1, 3]),
            5
        );
        assert_eq!(
            eval("fns.b32", &[B32, B32, U32, S32], &[0xAAAA_AAAA, 1, 17]),
            0xFFFF_FFFF
        );
    }

    #[test]
    fn bit_fields() {
        // bits 7..4 of 0x80 are 0b1000: sign bit set
        assert_eq!(
            eval("bfe.s32", &[S32, S32, U32, U32], &[0x80, 4, 4]),
            0xFFFF_FFF8
        );
        assert_eq!(eval("bfe.u32", &[U32, U32, U32, U32], &[0x80, 4, 4]), 8);
        assert_eq!(eval("bfe.u32", &[U32, U32, U32, U32], &[0x80, 4, 0]), 0);
        // the field runs past bit 63: bits 63..60 are 0b1000 and the sign is bit 63
        assert_eq!(
            eval(
                "bfe.s64",
                &[S64, S64, U32, U32],
                &[0x8000_0000_0000_0000, 60, 10]
            ),
            0xFFFF_FFFF_FFFF_FFF8
        );
        assert_eq!(
            eval(
                "bfe.u64",
                &[U64, U64, U32, U32],
                &[0xABCD_0000_0000_0000, 48, 16]
            ),
            0xABCD
        );
        assert_eq!(
            eval(
                "bfi.b32",
                &[B32, B32, B32, U32, U32],
                &[0xF, 0xFFFF_0000, 4, 8]
            ),
            0xFFFF_00F0
        );
        assert_eq!(
            eval("bfi.b64", &[B64, B64, B64, U32, U32], &[0xFF, 0, 60, 8]),
            0xF000_0000_0000_0000
        );
        assert_eq!(
            eval("bfi.b32", &[B32, B32, B32, U32, U32], &[0xF, 7, 32, 8]),
            7
        );
        // `bmsk.wrap.b32 rd, 1, 2` creates 0x6 (ISA example)
        assert_eq!(eval("bmsk.wrap.b32", &[B32, U32, U32], &[1, 2]), 6);
        assert_eq!(
            eval("bmsk.clamp.b32", &[B32, U32, U32], &[4, 32]),
            0xFFFF_FFF0
        );
        assert_eq!(eval("bmsk.clamp.b32", &[B32, U32, U32], &[32, 4]), 0);
        assert_eq!(eval("bmsk.wrap.b32", &[B32, U32, U32], &[33, 4]), 0x1E);
        // `szext.wrap.u32 rd, 0xffffffff, 0` is 0 (ISA example)
        assert_eq!(
            eval("szext.wrap.u32", &[U32, U32, U32], &[0xFFFF_FFFF, 0]),
            0
        );
        assert_eq!(
            eval("szext.clamp.s32", &[S32, S32, U32], &[0x80, 8]),
            0xFFFF_FF80
        );
        assert_eq!(eval("szext.clamp.u32", &[U32, U32, U32], &[0x1FF, 8]), 0xFF);
        assert_eq!(eval("szext.clamp.s32", &[S32, S32, U32], &[0x80, 40]), 0x80);
        assert_eq!(
            eval("szext.wrap.s32", &[S32, S32, U32], &[0x80, 40]),
            0xFFFF_FF80
        );
    }

    #[test]
    fn dot_products() {
        // bytes (4, 3, 2, 1) . (1, 1, 1, 1) = 10
        assert_eq!(
            eval("dp4a.u32.u32", &[U32; 4], &[0x0102_0304, 0x0101_0101, 0]),
            10
        );
        assert_eq!(
            eval(
                "dp4a.s32.u32",
                &[S32, S32, U32, S32],
                &[0xFFFF_FFFF, 0x0101_0101, 0]
            ),
            (-4i32) as u32 as u64
        );
        assert_eq!(
            eval(
                "dp4a.u32.s32",
                &[S32, U32, S32, S32],
                &[0x0101_0101, 0xFFFF_FFFF, 5]
            ),
            1
        );
        // halves (1, 2) with bytes (3, 4) or (5, 6)
        assert_eq!(
            eval(
                "dp2a.lo.u32.u32",
                &[U32; 4],
                &[0x0002_0001, 0x0605_0403, 10]
            ),
            21
        );
        assert_eq!(
            eval(
                "dp2a.hi.u32.u32",
                &[U32; 4],
                &[0x0002_0001, 0x0605_0403, 10]
            ),
            27
        );
        assert_eq!(
            eval("dp2a.lo.s32.s32", &[S32; 4], &[0xFFFF_FFFF, 0x0000_FFFF, 0]),
            2
        );
    }

    #[test]
    fn bitwise_values() {
        assert_eq!(eval("and.b32", &[B32; 3], &[0xF0F0, 0xFF00]), 0xF000);
        assert_eq!(eval("or.b64", &[B64; 3], &[1 << 63, 1]), (1 << 63) | 1);
        assert_eq!(eval("xor.b16", &[B16; 3], &[0xFFFF, 0x0F0F]), 0xF0F0);
        assert_eq!(eval("not.b16", &[B16; 2], &[0x00FF]), 0xFF00);
        assert_eq!(eval("not.b32", &[B32; 2], &[0]), 0xFFFF_FFFF);
        assert_eq!(eval("not.b64", &[B64; 2], &[0]), u64::MAX);
        assert_eq!(eval("cnot.b32", &[B32; 2], &[0]), 1);
        assert_eq!(eval("cnot.b32", &[B32; 2], &[0x100]), 0);
        assert_eq!(eval("cnot.b16", &[B16; 2], &[0]), 1);
        assert_eq!(eval("cnot.b64", &[B64; 2], &[1 << 40]), 0);
    }

    #[test]
    fn predicate_logic() {
        let ops = |op: &str| -> Machine {
            let unary = op == "not.pred";
            let operands = if unary {
                vec![r(0), r(1)]
            } else {
                vec![r(0), r(1), r(2)]
            };
            let mut m = Machine::new(&[Pred, Pred, Pred], vec![(op, operands)]);
            m.set_pred(0, 0xFFFF_0000);
            m.set_pred(1, 0b1010);
            m.set_pred(2, 0b1100);
            m.run(0xF);
            m
        };
        // only lanes 0..4 are written; lanes 16.. keep their old value
        assert_eq!(ops("and.pred").pred(0), 0xFFFF_0000 | 0b1000);
        assert_eq!(ops("or.pred").pred(0), 0xFFFF_0000 | 0b1110);
        assert_eq!(ops("xor.pred").pred(0), 0xFFFF_0000 | 0b0110);
        assert_eq!(ops("not.pred").pred(0), 0xFFFF_0000 | 0b0101);
        // constant predicate operands
        let mut m = Machine::new(&[Pred, Pred], vec![("and.pred", vec![r(0), r(1), imm(1)])]);
        m.set_pred(1, 0x1234_5678);
        m.run(FULL);
        assert_eq!(m.pred(0), 0x1234_5678);
    }

    #[test]
    fn lop3_forms() {
        let (a, b, c) = (0x1234_5678u64, 0x9ABC_DEF0u64, 0x0F0F_0F0Fu64);
        assert_eq!(eval_lut(0x96, a, b, c), a ^ b ^ c);
        assert_eq!(eval_lut(0x80, a, b, c), a & b & c);
        assert_eq!(eval_lut(0xEA, a, b, c), (a & b) | c);
        assert_eq!(eval_lut(0x1A, a, b, c), ((a & b) | c) ^ a);
        assert_eq!(eval_lut(0x0F, a, b, c), !a & 0xFFFF_FFFF);
        // lop3.or / lop3.and with a predicate result: p = (d != 0) op q
        for (text, q, want) in [
            ("lop3.or.b32", 0u32, 0b10u32),
            ("lop3.or.b32", 0b01, 0b11),
            ("lop3.and.b32", 0b11, 0b10),
            ("lop3.and.b32", 0b01, 0b00),
        ] {
            let mut m = Machine::new(
                &[B32, Pred, B32, B32, B32, Pred],
                vec![(
                    text,
                    vec![pair(r(0), r(1)), r(2), r(3), r(4), imm(0x80), r(5)],
                )],
            );
            // lane 0: a & b & c = 0; lane 1: = 0x0F
            m.set(2, &[0xF0, 0xFF]);
            m.set(3, &[0x0F, 0x0F]);
            m.set(4, &[0xFF, 0xFF]);
            m.set_pred(5, q);
            m.run(0b11);
            assert_eq!(&m.get(0)[..2], &[0, 0x0F]);
            assert_eq!(m.pred(1), want, "{text} q={q:#b}");
        }
    }

    fn eval_lut(lut: i64, a: u64, b: u64, c: u64) -> u64 {
        let mut m = Machine::new(
            &[B32; 4],
            vec![("lop3.b32", vec![r(0), r(1), r(2), r(3), imm(lut)])],
        );
        m.set(1, &[a]);
        m.set(2, &[b]);
        m.set(3, &[c]);
        m.run(FULL);
        m.get(0)[0]
    }

    #[test]
    fn shifts() {
        assert_eq!(eval("shl.b16", &[B16, B16, U32], &[0x8001, 1]), 2);
        assert_eq!(eval("shl.b32", &[B32, B32, U32], &[1, 32]), 0);
        assert_eq!(eval("shl.b64", &[B64, B64, U32], &[1, 63]), 1 << 63);
        assert_eq!(eval("shr.u16", &[U16, U16, U32], &[0x8000, 15]), 1);
        assert_eq!(eval("shr.s16", &[S16, S16, U32], &[0xFFFE, 1]), 0xFFFF);
        assert_eq!(
            eval("shr.s32", &[S32, S32, U32], &[0x8000_0000, 40]),
            0xFFFF_FFFF
        );
        assert_eq!(eval("shr.b32", &[B32, B32, U32], &[0x8000_0000, 31]), 1);
        assert_eq!(
            eval("shr.s64", &[S64, S64, U32], &[(-8i64) as u64, 2]),
            (-2i64) as u64
        );
        assert_eq!(eval("shr.u64", &[U64, U64, U32], &[u64::MAX, 64]), 0);
        let shf = |t: &str, a: u64, b: u64, c: u64| eval(t, &[B32, B32, B32, U32], &[a, b, c]);
        assert_eq!(
            shf("shf.l.wrap.b32", 0x1234_5678, 0x9ABC_DEF0, 8),
            0xBCDE_F012
        );
        assert_eq!(
            shf("shf.r.wrap.b32", 0x1234_5678, 0x9ABC_DEF0, 8),
            0xF012_3456
        );
        assert_eq!(
            shf("shf.l.clamp.b32", 0xAAAA_AAAA, 0xBBBB_BBBB, 40),
            0xAAAA_AAAA
        );
        assert_eq!(
            shf("shf.r.clamp.b32", 0xAAAA_AAAA, 0xBBBB_BBBB, 40),
            0xBBBB_BBBB
        );
        assert_eq!(shf("shf.l.wrap.b32", 0xAA00_0000, 0xBB, 40), 0xBBAA);
    }

    #[test]
    fn prmt_modes() {
        let (a, b) = (0x0302_0100u64, 0x0706_0504u64);
        let p = |t: &str, c: u64| eval(t, &[B32; 4], &[a, b, c]);
        assert_eq!(p("prmt.b32", 0x3210), a);
        assert_eq!(p("prmt.b32", 0x7654), b);
        assert_eq!(p("prmt.b32", 0x0123), 0x0001_0203);
        // selector 8 replicates the sign of byte 0
        assert_eq!(eval("prmt.b32", &[B32; 4], &[0x80, 0, 0x0008]), 0x8080_80FF);
        // b4e, c = 1: d.b3..d.b0 = bytes 6 7 0 1
        assert_eq!(p("prmt.b32.b4e", 1), 0x0607_0001);
        // f4e, c = 2: bytes 5 4 3 2
        assert_eq!(p("prmt.b32.f4e", 2), 0x0504_0302);
        assert_eq!(p("prmt.b32.rc8", 3), 0x0303_0303);
        // ecl, c = 1: bytes 3 2 1 1; ecr, c = 2: bytes 2 2 1 0
        assert_eq!(p("prmt.b32.ecl", 1), 0x0302_0101);
        assert_eq!(p("prmt.b32.ecr", 2), 0x0202_0100);
        // rc16, c = 1: bytes 3 2 3 2
        assert_eq!(p("prmt.b32.rc16", 1), 0x0302_0302);
    }

    /// Runs a carry-chain program over 32 lanes of operand pairs.
    fn chain(
        regs: &[ScalarType],
        insts: Vec<(&str, Vec<Operand>)>,
        inputs: &[(u32, Vec<u64>)],
    ) -> Machine {
        let mut m = Machine::new(regs, insts);
        for (k, v) in inputs {
            m.set(*k, v);
        }
        m.run(FULL);
        m
    }

    fn samples() -> Vec<(u64, u64)> {
        let mut v = vec![
            (u64::MAX, 1),
            (u64::MAX, u64::MAX),
            (0, 0),
            (0xFFFF_FFFF, 1),
            (0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321),
            (1 << 63, 1 << 63),
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        while v.len() < 32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let y = x.rotate_left(29) ^ 0xA5A5_A5A5_5A5A_5A5A;
            v.push((x, y));
        }
        v
    }

    #[test]
    fn carry_chain_add_sub_64_from_32() {
        let s = samples();
        let lo =
            |f: fn(&(u64, u64)) -> u64| s.iter().map(|p| f(p) & 0xFFFF_FFFF).collect::<Vec<_>>();
        let hi = |f: fn(&(u64, u64)) -> u64| s.iter().map(|p| f(p) >> 32).collect::<Vec<_>>();
        let inputs = vec![
            (2, lo(|p| p.0)),
            (3, hi(|p| p.0)),
            (4, lo(|p| p.1)),
            (5, hi(|p| p.1)),
        ];
        // r0:r1 = a + b; then r6 = carry out of the high word (addc of zeros)
        let m = chain(
            &[U32; 7],
            vec![
                ("add.cc.u32", vec![r(0), r(2), r(4)]),
                ("addc.cc.u32", vec![r(1), r(3), r(5)]),
                ("addc.u32", vec![r(6), imm(0), imm(0)]),
            ],
            &inputs,
        );
        for (l, &(a, b)) in s.iter().enumerate() {
            let sum = a as u128 + b as u128;
            let got = m.get(0)[l] | m.get(1)[l] << 32;
            assert_eq!(got, sum as u64, "lane {l}");
            assert_eq!(m.get(6)[l], (sum >> 64) as u64, "carry lane {l}");
        }
        // r0:r1 = a - b; r6 = 0 - 0 - borrow = all ones when a < b
        let m = chain(
            &[U32; 7],
            vec![
                ("sub.cc.u32", vec![r(0), r(2), r(4)]),
                ("subc.cc.u32", vec![r(1), r(3), r(5)]),
                ("subc.u32", vec![r(6), imm(0), imm(0)]),
            ],
            &inputs,
        );
        for (l, &(a, b)) in s.iter().enumerate() {
            assert_eq!(
                m.get(0)[l] | m.get(1)[l] << 32,
                a.wrapping_sub(b),
                "lane {l}"
            );
            let borrow = if a < b { 0xFFFF_FFFF } else { 0 };
            assert_eq!(m.get(6)[l], borrow, "borrow lane {l}");
        }
    }

    #[test]
    fn carry_chain_128_from_64() {
        let s = samples();
        // (a, a) + (b, b) as 128-bit numbers with 64-bit limbs
        let a: Vec<u64> = s.iter().map(|p| p.0).collect();
        let b: Vec<u64> = s.iter().map(|p| p.1).collect();
        let m = chain(
            &[U64; 4],
            vec![
                ("add.cc.s64", vec![r(0), r(2), r(3)]),
                ("addc.s64", vec![r(1), r(2), r(3)]),
            ],
            &[(2, a.clone()), (3, b.clone())],
        );
        for l in 0..32 {
            let x = (a[l] as u128) << 64 | a[l] as u128;
            let y = (b[l] as u128) << 64 | b[l] as u128;
            let want = x.wrapping_add(y);
            assert_eq!(
                (m.get(1)[l] as u128) << 64 | m.get(0)[l] as u128,
                want,
                "lane {l}"
            );
        }
    }

    #[test]
    fn carry_chain_multiply_64x64_to_128() {
        // The schoolbook product with 32-bit limbs a = a1:a0, b = b1:b0:
        //   r0 = lo(a0 b0)
        //   r1 = hi(a0 b0) + lo(a1 b0) + lo(a0 b1)      (carries into r2)
        //   r2 = hi(a1 b0) + hi(a0 b1) + lo(a1 b1) + carries
        //   r3 = hi(a1 b1) + carries
        let s = samples();
        let lo = |v: u64| v & 0xFFFF_FFFF;
        let inputs = vec![
            (4, s.iter().map(|p| lo(p.0)).collect::<Vec<_>>()),
            (5, s.iter().map(|p| p.0 >> 32).collect()),
            (6, s.iter().map(|p| lo(p.1)).collect()),
            (7, s.iter().map(|p| p.1 >> 32).collect()),
        ];
        let (a0, a1, b0, b1) = (r(4), r(5), r(6), r(7));
        let m = chain(
            &[U32; 8],
            vec![
                ("mul.lo.u32", vec![r(0), a0.clone(), b0.clone()]),
                ("mul.hi.u32", vec![r(1), a0.clone(), b0.clone()]),
                ("mad.lo.cc.u32", vec![r(1), a1.clone(), b0.clone(), r(1)]),
                ("madc.hi.u32", vec![r(2), a1.clone(), b0.clone(), imm(0)]),
                ("mad.lo.cc.u32", vec![r(1), a0.clone(), b1.clone(), r(1)]),
                ("madc.hi.cc.u32", vec![r(2), a0.clone(), b1.clone(), r(2)]),
                ("addc.u32", vec![r(3), imm(0), imm(0)]),
                ("mad.lo.cc.u32", vec![r(2), a1.clone(), b1.clone(), r(2)]),
                ("madc.hi.u32", vec![r(3), a1, b1, r(3)]),
            ],
            &inputs,
        );
        for (l, &(a, b)) in s.iter().enumerate() {
            let want = a as u128 * b as u128;
            let got = (0..4).fold(0u128, |acc, k| acc | (m.get(k)[l] as u128) << (32 * k));
            assert_eq!(got, want, "{a:#x} * {b:#x}");
        }
    }

    #[test]
    fn signed_mad_hi_carry() {
        // hi(-1 * 1) = -1 (all ones); + 1 gives 0 with a carry out
        let m = chain(
            &[S32; 5],
            vec![
                ("mad.hi.cc.s32", vec![r(0), r(2), r(3), r(4)]),
                ("addc.u32", vec![r(1), imm(0), imm(0)]),
            ],
            &[(2, vec![0xFFFF_FFFF]), (3, vec![1]), (4, vec![1])],
        );
        assert_eq!((m.get(0)[0], m.get(1)[0]), (0, 1));
    }

    #[test]
    fn carry_flag_only_changes_in_active_lanes() {
        let mut m = Machine::new(
            &[U32; 4],
            vec![
                ("add.cc.u32", vec![r(0), r(1), r(2)]),
                ("addc.u32", vec![r(3), imm(0), imm(0)]),
            ],
        );
        m.set(1, &[0xFFFF_FFFF]);
        m.set(2, &[1]);
        // lane 0 carries; lane 1 is inactive for add.cc and keeps CF = 0
        let code = m.p.code.clone();
        for (k, mask) in [(0usize, 0b01u32), (1, 0b11)] {
            if let Op::Alu(f) = code[k].op {
                f(&mut m.regs, &mut m.preds, &code[k], mask);
            }
        }
        assert_eq!(&m.get(3)[..2], &[1, 0]);
    }

    #[test]
    fn invalid_forms_are_reported() {
        let cases: [(&str, &[ScalarType], &str); 5] = [
            ("add.sat.u32", &[U32; 3], ".sat applies only to .s32"),
            ("mul.wide.u64", &[U64; 3], ".wide applies"),
            ("abs.u32", &[U32; 2], ".s16, .s32 or .s64"),
            ("min.relu.u32", &[U32; 3], ".relu"),
            ("cnot.pred", &[Pred; 2], "cnot"),
        ];
        for (text, types, msg) in cases {
            let ops = (0..types.len() as u32).map(r).collect();
            let m = Machine::new(types, vec![(text, ops)]);
            let got = m.message(0).unwrap_or("");
            assert!(got.contains(msg), "{text}: {got}");
        }
    }
}
