//! Macros that turn a per-lane expression into a warp handler.
//!
//! Each macro expands to a fresh `fn` item (so the expression is inlined into a loop over the
//! 32 lanes of the slots named by the instruction) and evaluates to the [`crate::program::Op`]
//! holding it. When every lane is active the loop has no per-lane branch, which lets the compiler
//! vectorise it; otherwise inactive lanes are skipped. Inside the expression, the instruction is
//! available under the name given as the first macro argument (for its `aux` modifiers).

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Whether handlers run their AVX2/FMA copies: [`SIMD_UNKNOWN`] until the first [`v3`] call or
/// [`set_simd`] settles it once, so that the per-instruction check is a single load and compare.
static SIMD: AtomicU8 = AtomicU8::new(SIMD_UNKNOWN);
const SIMD_UNKNOWN: u8 = 0;
const SIMD_PORTABLE: u8 = 1;
const SIMD_V3: u8 = 2;

/// Turns the AVX2/FMA copies of the handlers off (`false`) or back on where the CPU has them.
/// Both copies compute the same results; the switch exists so that tests can run the portable
/// copy on machines that would otherwise never use it (`PTXVM_SIMD=0` for the `ptxvm` binary).
pub fn set_simd(enabled: bool) {
    let on = enabled && cpu_has_v3();
    SIMD.store(if on { SIMD_V3 } else { SIMD_PORTABLE }, Relaxed);
}

/// Whether the CPU has AVX2 and FMA.
fn cpu_has_v3() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether handlers run a copy of their lane loop compiled for AVX2 and FMA (x86-64-v3): four
/// 64-bit lanes per vector instead of two, and `mul_add` as one instruction instead of a
/// library call per lane. True when the CPU has them, unless [`set_simd`] turned them off. The
/// answer is settled on the first call, so the check is one load and compare per warp
/// instruction.
#[inline(always)]
pub fn v3() -> bool {
    match SIMD.load(Relaxed) {
        SIMD_V3 => true,
        SIMD_PORTABLE => false,
        _ => settle_simd(),
    }
}

#[cold]
fn settle_simd() -> bool {
    let on = cpu_has_v3();
    // a concurrent `set_simd` wins over this first-use default
    let _ = SIMD.compare_exchange(
        SIMD_UNKNOWN,
        if on { SIMD_V3 } else { SIMD_PORTABLE },
        Relaxed,
        Relaxed,
    );
    SIMD.load(Relaxed) == SIMD_V3
}

/// Read access to every slot but one (the destination, borrowed mutably beside it).
pub struct Srcs<'a> {
    lo: &'a [crate::program::Lanes],
    hi: &'a [crate::program::Lanes],
    d: u32,
}

impl<'a> Srcs<'a> {
    /// Slot `k`, or `None` when `k` is the destination.
    #[inline(always)]
    pub fn get(&self, k: u32) -> Option<&'a crate::program::Lanes> {
        match k.cmp(&self.d) {
            std::cmp::Ordering::Less => Some(&self.lo[k as usize]),
            std::cmp::Ordering::Greater => Some(&self.hi[(k - self.d - 1) as usize]),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// Source slot `k`; when it is the destination `d` itself, a copy of `d`'s value taken
    /// once into `cur` (shared by every source that names the destination), so that the
    /// handler reads the old value while it writes the new one.
    #[inline(always)]
    pub fn or_dest<'c>(
        &self,
        k: u32,
        d: &crate::program::Lanes,
        cur: &'c std::cell::OnceCell<crate::program::Lanes>,
    ) -> &'c crate::program::Lanes
    where
        'a: 'c,
    {
        match self.get(k) {
            Some(x) => x,
            None => cur.get_or_init(|| *d),
        }
    }
}

/// One register slot viewed as cells: 32 lanes that several operands of one instruction may
/// name at once (a destination that is also a source), read and written without copies.
pub type CellLanes = [std::cell::Cell<u64>; 32];

/// The register file as cells ([`slot`] picks one slot).
#[inline(always)]
pub fn cells(r: &mut [crate::program::Lanes]) -> &[std::cell::Cell<u64>] {
    std::cell::Cell::from_mut(r.as_flattened_mut()).as_slice_of_cells()
}

/// Slot `k` of a register file viewed by [`cells`].
#[inline(always)]
pub fn slot(c: &[std::cell::Cell<u64>], k: u32) -> &CellLanes {
    let k = k as usize * 32;
    match c.get(k..k + 32) {
        Some(s) => s.try_into().unwrap_or_else(|_| unreachable!()),
        None => panic!("register slot {} outside the register file", k / 32),
    }
}

/// `d[l] = f(l)` for the 32 lanes, four at a time: each group's sources are read before any
/// of its lanes is written, so `f` may read `d` itself (a destination that is also a source),
/// and the groups of four become vector loads and stores.
#[inline(always)]
pub fn store_lanes(d: &CellLanes, f: impl Fn(usize) -> u64) {
    for k in 0..8 {
        store_group(d, k, &f);
    }
}

/// [`store_lanes`] from the last group of four to the first: `f` may read lanes of `d` below
/// the lane it computes (a shuffle up into its own source).
#[inline(always)]
pub fn store_lanes_down(d: &CellLanes, f: impl Fn(usize) -> u64) {
    for k in (0..8).rev() {
        store_group(d, k, &f);
    }
}

#[inline(always)]
fn store_group(d: &CellLanes, k: usize, f: &impl Fn(usize) -> u64) {
    let v: [u64; 4] = std::array::from_fn(|j| f(4 * k + j));
    for j in 0..4 {
        d[4 * k + j].set(v[j]);
    }
}

/// Splits the register file into destination slot `d` and the others, so that a handler reads
/// its sources in place instead of copying them (a copy of 32 lanes is 256 bytes).
#[inline(always)]
pub fn split(r: &mut [crate::program::Lanes], d: u32) -> (&mut crate::program::Lanes, Srcs<'_>) {
    let (lo, rest) = r.split_at_mut(d as usize);
    let (dd, hi) = rest.split_at_mut(1);
    (&mut dd[0], Srcs { lo, hi, d })
}

/// Defines `$name`, the lane loop `d[l] = $e` over `mask` for sources `$src` (slots of 32
/// lanes bound to the names `$x`), `$v3`, the same loop compiled with AVX2 and FMA, and
/// `$portable`, the loop as a function of its own (for handlers to call without it inlined).
#[macro_export]
#[doc(hidden)]
macro_rules! lane_loop {
    ($name:ident, $v3:ident, $portable:ident, $i:ident, ($($x:ident => $a:ident),*) => $e:expr) => {
        #[inline(always)]
        #[allow(unused_variables)]
        fn $name(
            d: &$crate::handlers::CellLanes,
            $($x: &$crate::handlers::CellLanes,)*
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            if mask == $crate::program::FULL {
                $crate::handlers::store_lanes(d, |l| {
                    $(let $a = $x[l].get();)*
                    $e
                });
            } else {
                for l in 0..32 {
                    if mask >> l & 1 != 0 {
                        $(let $a = $x[l].get();)*
                        d[l].set($e);
                    }
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $v3(
            d: &$crate::handlers::CellLanes,
            $($x: &$crate::handlers::CellLanes,)*
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            $name(d, $($x,)* $i, mask)
        }
        /// The portable copy, out of line so that the handler calling it stays small.
        #[inline(never)]
        fn $portable(
            d: &$crate::handlers::CellLanes,
            $($x: &$crate::handlers::CellLanes,)*
            $i: &$crate::program::Insn,
            mask: u32,
        ) {
            $name(d, $($x,)* $i, mask)
        }
    };
}

/// Defines `$name(args) -> ret` (optionally with const generic parameters), which runs `$imp`
/// (an `#[inline(always)]` function) in a copy compiled for AVX2 and FMA, `$v3`, when the CPU
/// has them, and as it is otherwise, in a copy kept out of line.
#[macro_export]
#[doc(hidden)]
macro_rules! with_v3 {
    ($(#[$m:meta])* $vis:vis fn $name:ident, $v3:ident = $imp:ident($($a:ident: $t:ty),*) -> $r:ty) => {
        $crate::with_v3!($(#[$m])* $vis fn $name<>, $v3 = $imp($($a: $t),*) -> $r);
    };
    ($(#[$m:meta])* $vis:vis fn $name:ident<$(const $g:ident: $gt:ty),*>, $v3:ident =
        $imp:ident($($a:ident: $t:ty),*) -> $r:ty) => {
        $(#[$m])*
        $vis fn $name<$(const $g: $gt),*>($($a: $t),*) -> $r {
            // the portable copy out of line: this stays a test and a jump, without the
            // prologue (saved registers, stack frame) of an inlined body
            #[inline(never)]
            fn portable<$(const $g: $gt),*>($($a: $t),*) -> $r {
                $imp::<$($g),*>($($a),*)
            }
            #[cfg(target_arch = "x86_64")]
            if $crate::handlers::v3() {
                // SAFETY: `$v3` is `$imp` compiled for AVX2 and FMA, which `v3()` has just
                // confirmed the CPU has.
                #[allow(unsafe_code)]
                return unsafe { $v3::<$($g),*>($($a),*) };
            }
            portable::<$($g),*>($($a),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $v3<$(const $g: $gt),*>($($a: $t),*) -> $r {
            $imp::<$($g),*>($($a),*)
        }
    };
}

/// Calls `$name(args)`, or its copy `$v3` compiled for AVX2 and FMA when the CPU has them
/// (the loops of [`lane_loop!`] and the predicate macros); evaluates to the call's value.
#[macro_export]
#[doc(hidden)]
macro_rules! v3_call {
    ($name:path, $v3:path, ($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        let r = if $crate::handlers::v3() {
            // SAFETY: `$v3` only differs from `$name` in being compiled for AVX2 and FMA, which
            // `v3()` has just confirmed the CPU has.
            #[allow(unsafe_code)]
            unsafe {
                $v3($($arg),*)
            }
        } else {
            $name($($arg),*)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let r = $name($($arg),*);
        r
    }};
}

/// Defines the handler `h` of an ALU instruction whose lane expression `$e` reads the named
/// sources (`$x` the slot of source operand `$k`, see [`crate::program::Insn::src`], and `$a`
/// its lane value), and evaluates to `Op::Alu(h)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu_n {
    ($i:ident, ($($x:ident => $a:ident = $k:literal),+) => $e:expr) => {{
        $crate::lane_loop!(body, body_v3, body_portable, $i, ($($x => $a),+) => $e);
        fn h(
            r: &mut [$crate::program::Lanes],
            _p: &mut [u32],
            i: &$crate::program::Insn,
            mask: u32,
        ) {
            let c = $crate::handlers::cells(r);
            let d = $crate::handlers::slot(c, i.d);
            $(let $x = $crate::handlers::slot(c, i.src($k));)+
            $crate::v3_call!(body_portable, body_v3, (d, $($x,)+ i, mask))
        }
        $crate::program::Op::Alu(h)
    }};
}

/// `d = f(a)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu1 {
    ($i:ident, $a:ident => $e:expr) => {
        $crate::alu_n!($i, (x => $a = 0) => $e)
    };
}

/// `d = f(a, b)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu2 {
    ($i:ident, $a:ident, $b:ident => $e:expr) => {
        $crate::alu_n!($i, (x => $a = 0, y => $b = 1) => $e)
    };
}

/// `d = f(a, b, c)`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu3 {
    ($i:ident, $a:ident, $b:ident, $c:ident => $e:expr) => {
        $crate::alu_n!($i, (x => $a = 0, y => $b = 1, z => $c = 2) => $e)
    };
}

/// `d = f(a, b, c, e)` with the fourth source in `v[0]`.
#[macro_export]
#[doc(hidden)]
macro_rules! alu4 {
    ($i:ident, $a:ident, $b:ident, $c:ident, $e4:ident => $e:expr) => {
        $crate::alu_n!($i, (x => $a = 0, y => $b = 1, z => $c = 2, w => $e4 = 3) => $e)
    };
}

/// Predicate destination: `p = f(a, b)` (bits of `mask` only).
#[macro_export]
#[doc(hidden)]
macro_rules! pred2 {
    ($i:ident, $a:ident, $b:ident => $e:expr) => {
        $crate::pred_n!($i, (x => $a = 0, y => $b = 1) => $e)
    };
}

/// Predicate destination of one source: `p = f(a)`.
#[macro_export]
#[doc(hidden)]
macro_rules! pred1 {
    ($i:ident, $a:ident => $e:expr) => {
        $crate::pred_n!($i, (x => $a = 0) => $e)
    };
}

/// Defines the handler of an instruction whose predicate result is the lane expression `$e`
/// over the named sources (as [`alu_n!`]), computed for all 32 lanes (in the AVX2 copy when
/// the CPU has it: compares and mask extraction four lanes at a time) and written to the lanes
/// of the mask by [`write_pred_pair`].
#[macro_export]
#[doc(hidden)]
macro_rules! pred_n {
    ($i:ident, ($($x:ident => $a:ident = $k:literal),+) => $e:expr) => {{
        #[inline(always)]
        #[allow(unused_variables)]
        fn body($($x: &$crate::program::Lanes,)+ $i: &$crate::program::Insn) -> u32 {
            let mut bits = 0u32;
            for l in 0..32 {
                $(let $a = $x[l];)+
                bits |= (($e) as u32) << l;
            }
            bits
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn body_v3($($x: &$crate::program::Lanes,)+ $i: &$crate::program::Insn) -> u32 {
            body($($x,)+ $i)
        }
        #[inline(never)]
        fn body_portable($($x: &$crate::program::Lanes,)+ $i: &$crate::program::Insn) -> u32 {
            body($($x,)+ $i)
        }
        fn h(
            r: &mut [$crate::program::Lanes],
            p: &mut [u32],
            i: &$crate::program::Insn,
            mask: u32,
        ) {
            $(let $x = &r[i.src($k) as usize];)+
            let bits = $crate::v3_call!(body_portable, body_v3, ($($x,)+ i));
            $crate::handlers::write_pred_pair(p, i, bits, mask);
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
