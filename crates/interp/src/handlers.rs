//! Macros that turn a per-lane expression into a warp handler.
//!
//! Each macro expands to a fresh `fn` item (so the expression is inlined into a loop over the
//! 32 lanes of the slots named by the instruction) and evaluates to the [`crate::program::Op`]
//! holding it. When every lane is active the loop has no per-lane branch, which lets the compiler
//! vectorise it; otherwise inactive lanes are skipped. Inside the expression, the instruction is
//! available under the name given as the first macro argument (for its `aux` modifiers).

/// `d = f(a)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu1 {
    ($i:ident, $a:ident => $e:expr) => {{
        #[allow(unused_variables)]
        fn h(
            r: &mut [$crate::program::Lanes],
            _p: &mut [u32],
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            let x = r[$i.a as usize];
            let d = &mut r[$i.d as usize];
            if mask == $crate::program::FULL {
                for l in 0..32 {
                    let $a = x[l];
                    d[l] = $e;
                }
            } else {
                for l in 0..32 {
                    if mask >> l & 1 != 0 {
                        let $a = x[l];
                        d[l] = $e;
                    }
                }
            }
        }
        $crate::program::Op::Alu(h)
    }};
}

/// `d = f(a, b)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu2 {
    ($i:ident, $a:ident, $b:ident => $e:expr) => {{
        #[allow(unused_variables)]
        fn h(
            r: &mut [$crate::program::Lanes],
            _p: &mut [u32],
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            let x = r[$i.a as usize];
            let y = r[$i.b as usize];
            let d = &mut r[$i.d as usize];
            if mask == $crate::program::FULL {
                for l in 0..32 {
                    let ($a, $b) = (x[l], y[l]);
                    d[l] = $e;
                }
            } else {
                for l in 0..32 {
                    if mask >> l & 1 != 0 {
                        let ($a, $b) = (x[l], y[l]);
                        d[l] = $e;
                    }
                }
            }
        }
        $crate::program::Op::Alu(h)
    }};
}

/// `d = f(a, b, c)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu3 {
    ($i:ident, $a:ident, $b:ident, $c:ident => $e:expr) => {{
        #[allow(unused_variables)]
        fn h(
            r: &mut [$crate::program::Lanes],
            _p: &mut [u32],
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            let x = r[$i.a as usize];
            let y = r[$i.b as usize];
            let z = r[$i.c as usize];
            let d = &mut r[$i.d as usize];
            if mask == $crate::program::FULL {
                for l in 0..32 {
                    let ($a, $b, $c) = (x[l], y[l], z[l]);
                    d[l] = $e;
                }
            } else {
                for l in 0..32 {
                    if mask >> l & 1 != 0 {
                        let ($a, $b, $c) = (x[l], y[l], z[l]);
                        d[l] = $e;
                    }
                }
            }
        }
        $crate::program::Op::Alu(h)
    }};
}

/// `d = f(a, b, c, e)` with the fourth source in `v[0]`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu4 {
    ($i:ident, $a:ident, $b:ident, $c:ident, $e4:ident => $e:expr) => {{
        #[allow(unused_variables)]
        fn h(
            r: &mut [$crate::program::Lanes],
            _p: &mut [u32],
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            let x = r[$i.a as usize];
            let y = r[$i.b as usize];
            let z = r[$i.c as usize];
            let w = r[$i.v[0] as usize];
            let d = &mut r[$i.d as usize];
            for l in 0..32 {
                if mask >> l & 1 != 0 {
                    let ($a, $b, $c, $e4) = (x[l], y[l], z[l], w[l]);
                    d[l] = $e;
                }
            }
        }
        $crate::program::Op::Alu(h)
    }};
}

/// Predicate destination: `p = f(a, b)` (bits of `mask` only).
#[macro_export]
#[doc(hidden)]
macro_rules! pred2 {
    ($i:ident, $a:ident, $b:ident => $e:expr) => {{
        #[allow(unused_variables)]
        fn h(
            r: &mut [$crate::program::Lanes],
            p: &mut [u32],
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            let x = &r[$i.a as usize];
            let y = &r[$i.b as usize];
            let mut bits = 0u32;
            for l in 0..32 {
                let ($a, $b) = (x[l], y[l]);
                bits |= (($e) as u32) << l;
            }
            $crate::handlers::write_pred_pair(p, $i, bits, mask);
        }
        $crate::program::Op::Alu(h)
    }};
}

/// Predicate destination of one source: `p = f(a)`.
#[macro_export]
#[doc(hidden)]
macro_rules! pred1 {
    ($i:ident, $a:ident => $e:expr) => {{
        #[allow(unused_variables)]
        fn h(
            r: &mut [$crate::program::Lanes],
            p: &mut [u32],
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            let x = &r[$i.a as usize];
            let mut bits = 0u32;
            for l in 0..32 {
                let $a = x[l];
                bits |= (($e) as u32) << l;
            }
            $crate::handlers::write_pred_pair(p, $i, bits, mask);
        }
        $crate::program::Op::Alu(h)
    }};
}

/// Combine layout for predicate results: `aux` bits 56..58 hold the boolean operator (0 none,
/// 1 and, 2 or, 3 xor), `c` the predicate operand slot, bit 59 its negation, and `v[1]` the
/// second destination (`p|q`) or `u32::MAX`.
pub const PRED_BOOL_SHIFT: u32 = 56;
/// Bit of `aux` marking a negated `c` predicate.
pub const PRED_NEG_C: u64 = 1 << 59;

/// Writes `t` (and `!t` into the `|q` destination), combined with the `c` predicate per the
/// instruction's boolean operator, into the lanes of `mask`.
#[inline]
pub fn write_pred_pair(p: &mut [u32], i: &crate::program::Insn, t: u32, mask: u32) {
    let op = (i.aux >> PRED_BOOL_SHIFT) & 3;
    let c = if op == 0 {
        0
    } else {
        let c = p[i.c as usize];
        if i.aux & PRED_NEG_C != 0 {
            !c
        } else {
            c
        }
    };
    let comb = |x: u32| match op {
        1 => x & c,
        2 => x | c,
        3 => x ^ c,
        _ => x,
    };
    if i.d != u32::MAX {
        let d = &mut p[i.d as usize];
        *d = (*d & !mask) | (comb(t) & mask);
    }
    if i.v[1] != u32::MAX {
        let q = &mut p[i.v[1] as usize];
        *q = (*q & !mask) | (comb(!t) & mask);
    }
}
