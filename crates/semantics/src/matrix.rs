//! Warp-level matrix multiply-accumulate (`mma.sync.aligned`, PTX ISA "Warp Level Matrix
//! Multiply-Accumulate Instructions"): which lane and register holds which element of each
//! fragment ([`position`], the ISA's fragment figures as formulas), the exact value of each
//! input element ([`Elem::value`]), and the multiply-accumulate itself ([`mma`],
//! [`round_result`]).
//!
//! **Numerics** (what the ISA leaves open, fixed here so that a result never depends on the
//! run, the thread count or the host):
//! - every input element is decoded exactly into an `f64` (`.f16`, `.bf16`, `.tf32`, `.e4m3`,
//!   `.e5m2`, the integer types and `.b1` all fit); `.tf32` operands are `.b32` registers of
//!   which only the top 19 bits take part: the low 13 fraction bits are ignored (truncation,
//!   as the tensor cores read them), so a full `.f32` passed as `.tf32` is truncated, not
//!   rounded;
//! - for every input type narrower than `.f64` each product is exact in `f64`, and
//!   `d = c + a[0]·b[0] + a[1]·b[1] + …` is summed in `f64` in that order (the accumulator
//!   first, then `k` = 0, 1, …), then rounded once, to nearest even, into the destination type;
//! - `.f64` inputs: `d = fma(a[K-1], b[K-1], … fma(a[0], b[0], c))`, each step a correctly
//!   rounded fused multiply-add, in `k` order;
//! - a NaN result is the canonical NaN of the destination type (`0x7FFF_FFFF`, `0x7FFF`,
//!   [`crate::float::CANONICAL_NAN_F64`]); infinities and signed zeros follow IEEE arithmetic;
//!   subnormal inputs and results are kept (no flush);
//! - integer types (`.s8 .u8 .s4 .u4`): the sum is exact (it is an integer far below 2^53);
//!   without `.satfinite` it wraps to 32 bits, with `.satfinite` it is clamped to the `.s32`
//!   range. `.b1`: each product is `a AND b` or `a XOR b` of one bit (`.and.popc`,
//!   `.xor.popc`), so the sum is `c + popc(row AND/XOR column)`, wrapping to 32 bits.

use crate::fp;
use crate::Rounding;

/// An element type of an `mma` fragment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `.f16`
    F16,
    /// `.bf16`
    Bf16,
    /// `.tf32` (a `.b32` register; the low 13 bits are ignored)
    Tf32,
    /// `.e4m3` (OCP FP8)
    E4m3,
    /// `.e5m2` (OCP FP8)
    E5m2,
    /// `.f32` (accumulators)
    F32,
    /// `.f64`
    F64,
    /// `.s8`
    S8,
    /// `.u8`
    U8,
    /// `.s4`
    S4,
    /// `.u4`
    U4,
    /// `.s32` (accumulators)
    S32,
    /// `.b1` (single bits)
    B1,
}

impl Elem {
    /// All element types, in the order of [`Elem::code`].
    pub const ALL: [Elem; 13] = [
        Elem::F16,
        Elem::Bf16,
        Elem::Tf32,
        Elem::E4m3,
        Elem::E5m2,
        Elem::F32,
        Elem::F64,
        Elem::S8,
        Elem::U8,
        Elem::S4,
        Elem::U4,
        Elem::S32,
        Elem::B1,
    ];

    /// A small code for packing (the index in [`Elem::ALL`]).
    #[inline]
    pub fn code(self) -> u64 {
        Elem::ALL.iter().position(|&e| e == self).unwrap_or(0) as u64
    }

    /// The type of [`Elem::code`] `c` (out of range: `.b1`).
    #[inline]
    pub fn from_code(c: u64) -> Elem {
        Elem::ALL.get(c as usize).copied().unwrap_or(Elem::B1)
    }

    /// Width in bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Tf32 | Elem::F32 | Elem::S32 => 32,
            Elem::E4m3 | Elem::E5m2 | Elem::S8 | Elem::U8 => 8,
            Elem::F64 => 64,
            Elem::S4 | Elem::U4 => 4,
            Elem::B1 => 1,
        }
    }

    /// Elements per register: a `.f64` fragment register is a `.f64`, every other one a
    /// 32-bit register packing elements from its low bits up.
    #[inline]
    pub const fn per_reg(self) -> u32 {
        match self {
            Elem::F64 => 1,
            e => 32 / e.bits(),
        }
    }

    /// Whether the type is a floating-point one.
    #[inline]
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Elem::F16 | Elem::Bf16 | Elem::Tf32 | Elem::E4m3 | Elem::E5m2 | Elem::F32 | Elem::F64
        )
    }

    /// The exact value of element bits `b` (the element's low bits; others ignored).
    #[inline]
    pub fn value(self, b: u64) -> f64 {
        match self {
            Elem::F16 => small_float(b & 0xFFFF, 5, 10, Specials::Ieee),
            Elem::Bf16 => f32::from_bits((b as u32 & 0xFFFF) << 16) as f64,
            Elem::Tf32 => f32::from_bits(b as u32 & 0xFFFF_E000) as f64,
            Elem::E4m3 => small_float(b & 0xFF, 4, 3, Specials::AllOnesNan),
            Elem::E5m2 => small_float(b & 0xFF, 5, 2, Specials::Ieee),
            Elem::F32 => f32::from_bits(b as u32) as f64,
            Elem::F64 => f64::from_bits(b),
            Elem::S8 => b as u8 as i8 as f64,
            Elem::U8 => (b & 0xFF) as f64,
            Elem::S4 => ((((b & 0xF) as u8) << 4) as i8 >> 4) as f64,
            Elem::U4 => (b & 0xF) as f64,
            Elem::S32 => b as u32 as i32 as f64,
            Elem::B1 => (b & 1) as f64,
        }
    }
}

/// Which codes of a narrow float format are not finite numbers.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Specials {
    /// IEEE: the top exponent is infinity (fraction 0) or NaN (`.f16`, `.e5m2`).
    Ieee,
    /// Only the all-ones pattern is NaN, and there are no infinities (`.e4m3`).
    AllOnesNan,
    /// Every code is a finite number (the FP6 and FP4 formats).
    None,
}

/// The exact value of a binary format narrower than `.f32` with `ebits` exponent (bias
/// `2^(ebits-1) - 1`) and `mbits` fraction bits, whose codes that are not numbers `sp` says:
/// the same value as [`fp::to_f64`], built directly (it is on `mma`'s hot path).
#[inline]
pub(crate) fn small_float(b: u64, ebits: u32, mbits: u32, sp: Specials) -> f64 {
    let sign = if b >> (ebits + mbits) & 1 != 0 {
        -1.0
    } else {
        1.0
    };
    let e = (b >> mbits) & ((1 << ebits) - 1);
    let m = b & ((1 << mbits) - 1);
    let bias = (1i64 << (ebits - 1)) - 1;
    let emax = (1 << ebits) - 1;
    if e == emax {
        match sp {
            Specials::Ieee if m == 0 => return sign * f64::INFINITY,
            Specials::Ieee => return f64::NAN,
            Specials::AllOnesNan if m == (1 << mbits) - 1 => return f64::NAN,
            _ => {}
        }
    }
    if e == 0 {
        // subnormal (or zero): m · 2^(1 - bias - mbits), exact
        let scale = f64::from_bits(((1023 + 1 - bias - mbits as i64) as u64) << 52);
        return sign * m as f64 * scale;
    }
    let bits = ((e as i64 - bias + 1023) as u64) << 52 | m << (52 - mbits);
    sign * f64::from_bits(bits)
}

/// An `mma` shape `.mMnNkK`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Rows of A, C and D.
    pub m: u32,
    /// Columns of B, C and D.
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
}

/// A fragment: multiplicand A (M×K), multiplicand B (K×N), accumulator C or D (M×N).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Frag {
    /// Multiplicand A.
    A,
    /// Multiplicand B.
    B,
    /// Accumulator C, or the result D.
    C,
}

/// The independent matrix products one `mma` computes: four for `.m8n8k4` with `.f16`
/// multiplicands (one per quad pair), one for every other shape.
#[inline]
pub fn groups(s: Shape, a: Elem) -> u32 {
    if is_quad(s, a) {
        4
    } else {
        1
    }
}

/// `.m8n8k4` with `.f16` multiplicands: the sm_70 quad-pair layout.
#[inline]
fn is_quad(s: Shape, a: Elem) -> bool {
    s.m == 8 && s.n == 8 && s.k == 4 && a == Elem::F16
}

/// Elements of fragment `f` each lane holds.
#[inline]
pub fn elements(s: Shape, a: Elem, f: Frag) -> u32 {
    let g = groups(s, a);
    g * match f {
        Frag::A => s.m * s.k,
        Frag::B => s.k * s.n,
        Frag::C => s.m * s.n,
    } / 32
}

/// What fixes an `mma`'s fragment layouts: its shape, the type of A, and the `.row`/`.col`
/// layouts of A and B (only `.m8n8k4` with `.f16` has others than `.row.col`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The shape.
    pub shape: Shape,
    /// The type of A's elements.
    pub a: Elem,
    /// A is `.row`.
    pub row_a: bool,
    /// B is `.col`.
    pub col_b: bool,
}

/// (product, row, column) of element `i` (counted from the first register's low bits) of lane
/// `lane`'s fragment `f` for the `mma` of layout `l` (the fragment's own type `e` gives how
/// many elements a register packs).
///
/// With `groupID = lane >> 2` and `threadID_in_group = lane % 4`, the ISA's figures for every
/// shape except `.m8n8k4 .f16` follow one rule: A's register `r` holds row
/// `groupID + 8·(r mod 2)` and the `p` consecutive columns (p elements per register) from
/// `(r div 2)·4p + threadID_in_group·p`; B's register `r` holds column `groupID` and the
/// rows from `4p·r + threadID_in_group·p`; accumulator element `i` is at row
/// `groupID + 8·(i div 2)` (M = 16) or `groupID` (M = 8), column `threadID_in_group·2 + i mod 2`.
/// `.m8n8k4 .f16` computes four products, one per quad pair (lanes 4q…4q+3 and 4q+16…4q+19),
/// with the figures' own formulas below.
pub fn position(l: &Layout, e: Elem, f: Frag, lane: u32, i: u32) -> (u32, u32, u32) {
    let Layout {
        shape: s,
        a,
        row_a,
        col_b,
    } = *l;
    let gid = lane >> 2;
    let tig = lane & 3;
    if is_quad(s, a) {
        let q = gid & 3;
        let hi = if lane >= 16 { 4 } else { 0 };
        return match f {
            Frag::A if row_a => (q, tig + hi, i),
            Frag::A => (q, i % 4 + hi, tig),
            Frag::B if col_b => (q, i, tig + hi),
            Frag::B => (q, tig, i + hi),
            Frag::C if e == Elem::F16 => (q, tig + hi, i),
            Frag::C => (q, (tig & 1) + (i & 2) + hi, (tig & 2) + (i & 1) + (i & 4)),
        };
    }
    let p = e.per_reg();
    let (r, sub) = (i / p, i % p);
    match f {
        Frag::A => (0, gid + 8 * (r & 1), (r >> 1) * 4 * p + tig * p + sub),
        Frag::B => (0, r * 4 * p + tig * p + sub, gid),
        Frag::C if s.m == 16 => (0, gid + 8 * (i / 2), tig * 2 + (i & 1)),
        Frag::C => (0, gid, tig * 2 + i),
    }
}

/// How each product term is formed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Product {
    /// `a·b` (exact for every type narrower than `.f64`), summed in order.
    Mul,
    /// `.f64`: a fused multiply-add per term, in order.
    Fma,
    /// `.b1 .and.popc`: `a AND b`.
    And,
    /// `.b1 .xor.popc`: `a XOR b`.
    Xor,
}

/// `d[m][n] = c[m][n] + Σ_k a[m][k]·b[k][n]` for `g` independent products of `s`, with the
/// matrices row-major per product (`a`: g·M·K, `b`: g·K·N, `c` and `d`: g·M·N), the sum in
/// `k` order after `c` (see the module's numerics). Slices too short leave `d` short.
pub fn mma(s: Shape, g: u32, prod: Product, a: &[f64], b: &[f64], c: &[f64], d: &mut [f64]) {
    let (m, n, k, g) = (s.m as usize, s.n as usize, s.k as usize, g as usize);
    if a.len() < g * m * k || b.len() < g * k * n || c.len() < g * m * n || d.len() < g * m * n {
        return;
    }
    for q in 0..g {
        let bq = &b[q * k * n..(q + 1) * k * n];
        for row in 0..m {
            let ar = &a[(q * m + row) * k..(q * m + row + 1) * k];
            for col in 0..n {
                let ci = (q * m + row) * n + col;
                let bc = bq.iter().skip(col).step_by(n);
                let mut acc = c[ci];
                match prod {
                    Product::Mul => ar.iter().zip(bc).for_each(|(x, y)| acc += x * y),
                    Product::Fma => ar
                        .iter()
                        .zip(bc)
                        .for_each(|(x, y)| acc = x.mul_add(*y, acc)),
                    Product::And => ar
                        .iter()
                        .zip(bc)
                        .for_each(|(x, y)| acc += ((*x as u32 & *y as u32) & 1) as f64),
                    Product::Xor => ar
                        .iter()
                        .zip(bc)
                        .for_each(|(x, y)| acc += ((*x as u32 ^ *y as u32) & 1) as f64),
                }
                d[ci] = acc;
            }
        }
    }
}

/// The bits of accumulated value `acc` in destination type `e` (`.f32`, `.f16`, `.f64` or
/// `.s32`): rounded to nearest even once, NaN canonical; `.s32` wraps to 32 bits, or clamps
/// with `satfinite`.
#[inline]
pub fn round_result(e: Elem, acc: f64, satfinite: bool) -> u64 {
    match e {
        Elem::F64 => {
            if acc.is_nan() {
                crate::float::CANONICAL_NAN_F64
            } else {
                acc.to_bits()
            }
        }
        Elem::F16 => {
            if acc.is_nan() {
                fp::F16.canonical_nan()
            } else {
                fp::from_f64(fp::F16, acc, Rounding::Rn)
            }
        }
        Elem::S32 => {
            // an integer sum: exact in f64 (|acc| < 2^53)
            let v = acc as i64;
            if satfinite {
                v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 as u64
            } else {
                v as i32 as u32 as u64
            }
        }
        _ => {
            if acc.is_nan() {
                fp::F32.canonical_nan()
            } else {
                // the conversion rounds to nearest even, as `fp::from_f64(F32, ..)` does
                (acc as f32).to_bits() as u64
            }
        }
    }
}

/// Registers of a `wmma` fragment `f` (A, B, or the accumulator C/D) of shape `s` whose
/// elements have type `e`, as the ISA lists them: `.f16` multiplicands always take eight
/// `.f16x2` registers (an sm_70 legacy: most shapes hold each element twice, see
/// [`wmma_position`]); every other fragment holds each of the matrix's elements once.
pub fn wmma_regs(s: Shape, f: Frag, e: Elem) -> u32 {
    if f != Frag::C && e == Elem::F16 {
        return 8;
    }
    wmma_unique(s, f) / e.per_reg()
}

/// Distinct matrix elements each lane holds in a `wmma` fragment.
fn wmma_unique(s: Shape, f: Frag) -> u32 {
    let n = match f {
        Frag::A => s.m * s.k,
        Frag::B => s.k * s.n,
        Frag::C => s.m * s.n,
    };
    n / 32
}

/// (row, column) of element `i` (from the first register's low bits) of lane `lane`'s `wmma`
/// fragment `f` of shape `s`, element type `e`.
///
/// The ISA leaves `wmma` layouts unspecified. ptxvm uses the layout of the sm_80 generation,
/// where a `wmma` tile is the `mma.m16n8k*`/`m8n8k*` tiles the warp issues for it: with
/// `groupID = lane >> 2`, `threadID_in_group = lane % 4` and `p` elements per register, A's
/// register `r` holds row `groupID + 8·(r mod M/8)` and the `p` columns from
/// `(r div M/8)·4p + threadID_in_group·p` (8-row blocks down M first, then along K); B's
/// register `r` holds column `groupID + 8·(r div K/4p)` and the rows from
/// `(r mod K/4p)·4p + threadID_in_group·p`; accumulator element `i` is at row
/// `groupID + 8·((i/2) mod M/8)`, column `8·((i/2) div M/8) + 2·threadID_in_group + i mod 2`.
/// These are exactly `mma`'s figures for the shapes both have (`.m8n8k4 .f64`,
/// `.m8n8k32 .s4`, `.m8n8k128 .b1`, and each 16×8 half of a 16×16 accumulator). `.f16`
/// multiplicands hold more elements than the matrix has per lane: element `i` is then element
/// `i mod U` (U distinct elements per lane), so the registers repeat.
pub fn wmma_position(s: Shape, f: Frag, e: Elem, lane: u32, i: u32) -> (u32, u32) {
    let gid = lane >> 2;
    let tig = lane & 3;
    let i = i % wmma_unique(s, f).max(1);
    let p = e.per_reg();
    let (r, sub) = (i / p, i % p);
    match f {
        Frag::A => {
            let rb = (s.m / 8).max(1);
            (gid + 8 * (r % rb), (r / rb) * 4 * p + tig * p + sub)
        }
        Frag::B => {
            let kb = (s.k / (4 * p)).max(1);
            ((r % kb) * 4 * p + tig * p + sub, gid + 8 * (r / kb))
        }
        Frag::C => {
            let (j, rb) = (i / 2, (s.m / 8).max(1));
            (gid + 8 * (j % rb), 8 * (j / rb) + 2 * tig + (i & 1))
        }
    }
}

/// `.f64` `d = c + Σ a·b` as [`mma`] with [`Product::Fma`] computes it (fused multiply-adds
/// in `k` order), each step rounded with `rnd` (`wmma.mma`'s `.rn .rz .rm .rp`).
pub fn mma_f64_rounded(s: Shape, rnd: Rounding, a: &[f64], b: &[f64], c: &[f64], d: &mut [f64]) {
    let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
    if a.len() < m * k || b.len() < k * n || c.len() < m * n || d.len() < m * n {
        return;
    }
    for row in 0..m {
        for col in 0..n {
            let mut acc = c[row * n + col];
            for x in 0..k {
                acc = crate::float::fma_f64(a[row * k + x], b[x * n + col], acc, rnd);
            }
            d[row * n + col] = acc;
        }
    }
}

/// [`round_result`] for `wmma.mma .satfinite` with a floating-point destination (PTX ISA
/// before 6.5, `.f16` multiplicands): an infinite result becomes the largest finite value of
/// its sign; NaN stays NaN (canonical).
pub fn round_satfinite(e: Elem, acc: f64) -> u64 {
    let max = match e {
        Elem::F16 => 65504.0,
        _ => f32::MAX as f64,
    };
    let bits = round_result(e, acc, false);
    let v = match e {
        Elem::F16 => fp::to_f64(fp::F16, bits),
        _ => f32::from_bits(bits as u32) as f64,
    };
    if v.is_infinite() {
        round_result(e, max.copysign(v), false)
    } else {
        bits
    }
}

// ---- sparse A (`mma.sp`, `mma.sp::ordered_metadata`) -------------------------------------

/// Width in bits of the unit one 2-bit metadata index of a sparse A selects (ISA "Sparse matrix
/// storage"): an element of `.f16`/`.bf16`, an element of the 8-bit types, a pair of `.s4`/`.u4`
/// elements (their 4:8 "pair-wise" sparsity), and half of a `.tf32` element (its 1:2 sparsity is
/// written as 2:4 over 16-bit halves, so the only meaningful 4-bit groups are `0b0100` and
/// `0b1110`).
#[inline]
pub const fn sparse_unit_bits(a: Elem) -> u32 {
    match a {
        Elem::F16 | Elem::Bf16 | Elem::Tf32 => 16,
        _ => 8,
    }
}

/// Chunks of four units (each described by a 4-bit metadata group, two 2-bit indices) in one
/// 32-bit register of compressed A, which holds two units of each: 1 for 16-bit units, 2 for
/// 8-bit ones.
#[inline]
pub const fn sparse_chunks_per_reg(a: Elem) -> u32 {
    32 / (2 * sparse_unit_bits(a))
}

/// Registers of compressed A each lane holds for `mma.sp` of shape `s` (A is M×K/2 stored).
#[inline]
pub fn sparse_a_regs(s: Shape, a: Elem) -> u32 {
    s.m * s.k / 2 / 32 / a.per_reg()
}

/// How many threads of each group of four consecutive lanes hold metadata (1, 2 or 4); the
/// sparsity selector then takes values below `4 / sparse_meta_threads`.
#[inline]
pub fn sparse_meta_threads(s: Shape, a: Elem) -> u32 {
    // 4 lanes × registers × chunks × 4 bits, 32 bits a thread
    (sparse_a_regs(s, a) * sparse_chunks_per_reg(a) / 2).max(1)
}

/// (row, first column) in the dense M×K matrix A of compressed register `r` of lane `lane`: the
/// register stands for `2·per_reg` consecutive columns of one row (ISA "Matrix fragments for
/// sparse mma": row `groupID + 8·(r mod 2)`, first column
/// `(r div 2)·8p + threadID_in_group·2p`, `p` elements per register) — the dense rule of
/// [`position`] with registers twice as wide.
#[inline]
pub fn sparse_a_origin(a: Elem, lane: u32, r: u32) -> (u32, u32) {
    let w = 2 * a.per_reg();
    ((lane >> 2) + 8 * (r & 1), (r >> 1) * 4 * w + (lane & 3) * w)
}

/// Where the metadata of chunk `j` of compressed register `r` of lane `lane` is: (the lane
/// holding it, the bit of its 4-bit group). Within the lanes of a group of four, the metadata
/// of the quad is one bit string, 32 bits per contributing thread, that lists the 4-bit groups
/// register by register, within a register lane by lane (threadID_in_group 0…3), within a lane
/// chunk by chunk, from the low bits up; the contributing threads are
/// `sel·T … sel·T + T − 1` (`T` = [`sparse_meta_threads`], `sel` the sparsity selector). For
/// example `.m16n8k16 .f16`: bits 0–15 of thread `sel` hold row `groupID`, bits 16–31 row
/// `groupID + 8`, four bits per four columns.
#[inline]
pub fn sparse_meta_at(s: Shape, a: Elem, sel: u32, lane: u32, r: u32, j: u32) -> (u32, u32) {
    let cpr = sparse_chunks_per_reg(a);
    let off = ((r * 4 + (lane & 3)) * cpr + j) * 4;
    let t = sparse_meta_threads(s, a);
    ((lane & !3) + sel * t + off / 32, off % 32)
}

/// Whether 4-bit metadata group `g` (index of the first stored unit in bits 0–1, of the second
/// in bits 2–3) is one the ISA gives a meaning: two different indices (`.sp`), in increasing
/// order (`::ordered_metadata`); for `.tf32` only `0b0100` and `0b1110`.
#[inline]
pub const fn sparse_group_valid(a: Elem, ordered: bool, g: u32) -> bool {
    let (i0, i1) = (g & 3, g >> 2 & 3);
    match a {
        Elem::Tf32 => g == 0b0100 || g == 0b1110,
        _ if ordered => i0 < i1,
        _ => i0 != i1,
    }
}

/// Decompresses one register `w` of sparse A: its chunks' metadata groups `groups` (chunk `j`
/// in bits `4j`…`4j+3`) place the two stored units of chunk `j` (the low one first) at their
/// indices among the chunk's four; the result is the 64 bits of the `2·per_reg` dense elements
/// (low first), zero where nothing is stored. A group the ISA leaves undefined
/// ([`sparse_group_valid`]) is an error (`Err(chunk)`), except in a chunk whose stored units
/// are both zero bits: every reading of the metadata then gives the same zero elements.
pub fn sparse_expand(a: Elem, ordered: bool, w: u32, groups: u32) -> Result<u64, u32> {
    let ub = sparse_unit_bits(a);
    let umask = (1u64 << ub) - 1;
    let mut out = 0u64;
    for j in 0..sparse_chunks_per_reg(a) {
        let g = groups >> (4 * j) & 0xF;
        let u0 = (w as u64) >> (2 * j * ub) & umask;
        let u1 = (w as u64) >> ((2 * j + 1) * ub) & umask;
        if !sparse_group_valid(a, ordered, g) {
            if u0 | u1 != 0 {
                return Err(j);
            }
            continue;
        }
        let base = 4 * j;
        out |= u0 << ((base + (g & 3)) * ub);
        out |= u1 << ((base + (g >> 2 & 3)) * ub);
    }
    Ok(out)
}

#[cfg(test)]
mod sparse_tests {
    use super::*;

    const FORMS: [(u32, Elem); 11] = [
        (16, Elem::F16),
        (32, Elem::F16),
        (16, Elem::Bf16),
        (32, Elem::Bf16),
        (8, Elem::Tf32),
        (16, Elem::Tf32),
        (64, Elem::E4m3),
        (32, Elem::S8),
        (64, Elem::U8),
        (64, Elem::S4),
        (128, Elem::U4),
    ];

    /// The compressed registers of the 32 lanes stand for every column of every row once, and
    /// the metadata of the quad fills exactly its contributing threads' 32 bits.
    #[test]
    fn origins_and_metadata_tile() {
        for (k, a) in FORMS {
            let s = Shape { m: 16, n: 8, k };
            let w = 2 * a.per_reg();
            let mut seen = vec![0u32; (16 * k) as usize];
            let t = sparse_meta_threads(s, a);
            for sel in 0..4 / t {
                let mut bits = [0u32; 32];
                for lane in 0..32 {
                    for r in 0..sparse_a_regs(s, a) {
                        if sel == 0 {
                            let (row, c0) = sparse_a_origin(a, lane, r);
                            for c in c0..c0 + w {
                                seen[(row * k + c) as usize] += 1;
                            }
                        }
                        for j in 0..sparse_chunks_per_reg(a) {
                            let (l, b) = sparse_meta_at(s, a, sel, lane, r, j);
                            assert_eq!(l & !3, lane & !3);
                            assert!((l & 3) / t == sel, "{k} {a:?}");
                            assert_eq!(bits[l as usize] & 0xF << b, 0);
                            bits[l as usize] |= 0xF << b;
                        }
                    }
                }
                let full = bits.iter().filter(|&&x| x == u32::MAX).count() as u32;
                assert_eq!(full, 8 * t, "{k} {a:?}");
            }
            assert!(seen.iter().all(|&n| n == 1), "{k} {a:?}");
        }
    }

    #[test]
    fn expand_places_units() {
        // f16: units 0xAAAA (first) and 0xBBBB at indices 1 and 3
        assert_eq!(
            sparse_expand(Elem::F16, true, 0xBBBB_AAAA, 0b1101),
            Ok(0xBBBB_0000_AAAA_0000)
        );
        // unordered (plain .sp): first stored unit at index 2, second at 0
        assert_eq!(
            sparse_expand(Elem::F16, false, 0xBBBB_AAAA, 0b0010),
            Ok(0x0000_AAAA_0000_BBBB)
        );
        assert_eq!(sparse_expand(Elem::F16, true, 0xBBBB_AAAA, 0b0010), Err(0));
        // equal indices: undefined, unless both stored units are zero
        assert_eq!(sparse_expand(Elem::F16, false, 1, 0b0101), Err(0));
        assert_eq!(sparse_expand(Elem::F16, false, 0, 0b0101), Ok(0));
        // tf32: the element at index 1 of its pair
        assert_eq!(
            sparse_expand(Elem::Tf32, false, 0x3F80_0000, 0b1110),
            Ok(0x3F80_0000 << 32)
        );
        assert_eq!(
            sparse_expand(Elem::Tf32, false, 0x3F80_0000, 0b0001),
            Err(0)
        );
        // s8: two chunks of four bytes
        assert_eq!(
            sparse_expand(Elem::S8, true, 0x4433_2211, 0b1110_0100),
            Ok(0x4433_0000_0000_2211)
        );
        // u4: pairs of nibbles (bytes) at pair indices 0 and 3, then 1 and 2
        assert_eq!(
            sparse_expand(Elem::U4, true, 0x8765_4321, 0b1001_1100),
            Ok(0x0087_6500_4300_0021)
        );
        assert_eq!(
            sparse_expand(Elem::S8, true, 0x4433_2211, 0b0000_0100),
            Err(1)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M16N8K16: Shape = Shape { m: 16, n: 8, k: 16 };

    /// The `.row.col` layout of `shape` with A of type `a`.
    fn rc(shape: Shape, a: Elem) -> Layout {
        Layout {
            shape,
            a,
            row_a: true,
            col_b: true,
        }
    }

    /// Every (row, col) of every fragment is held by exactly one lane and element.
    fn covers(s: Shape, a: Elem, e: Elem, f: Frag) {
        let g = groups(s, a);
        let (rows, cols) = match f {
            Frag::A => (s.m, s.k),
            Frag::B => (s.k, s.n),
            Frag::C => (s.m, s.n),
        };
        let mut seen = vec![0u32; (g * rows * cols) as usize];
        for lane in 0..32 {
            for i in 0..elements(s, a, f) {
                let (q, r, c) = position(&rc(s, a), e, f, lane, i);
                assert!(
                    q < g && r < rows && c < cols,
                    "{s:?} {f:?} lane {lane} i {i}"
                );
                seen[((q * rows + r) * cols + c) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{s:?} {a:?} {f:?}");
    }

    #[test]
    fn layouts_are_permutations() {
        let sh = |m, n, k| Shape { m, n, k };
        for (s, a) in [
            (sh(16, 8, 16), Elem::F16),
            (sh(16, 8, 8), Elem::Bf16),
            (sh(16, 8, 8), Elem::Tf32),
            (sh(16, 8, 4), Elem::Tf32),
            (sh(16, 8, 32), Elem::E4m3),
            (sh(16, 8, 32), Elem::S8),
            (sh(16, 8, 16), Elem::S8),
            (sh(8, 8, 16), Elem::U8),
            (sh(8, 8, 32), Elem::S4),
            (sh(16, 8, 64), Elem::U4),
            (sh(16, 8, 256), Elem::B1),
            (sh(8, 8, 128), Elem::B1),
            (sh(8, 8, 4), Elem::F64),
            (sh(16, 8, 16), Elem::F64),
            (sh(8, 8, 4), Elem::F16),
        ] {
            covers(s, a, a, Frag::A);
            covers(s, a, a, Frag::B);
            let c = match a {
                Elem::F64 => Elem::F64,
                e if e.is_float() => Elem::F32,
                _ => Elem::S32,
            };
            covers(s, a, c, Frag::C);
        }
        covers(sh(8, 8, 4), Elem::F16, Elem::F16, Frag::C);
        covers(M16N8K16, Elem::F16, Elem::F16, Frag::C);
    }

    #[test]
    fn figure_spot_checks() {
        // m16n8k16 .f16 A: lane 5 (groupID 1, thread 1) a5 is row 1, column 11; a6 row 9, col 10
        assert_eq!(
            position(
                &Layout {
                    shape: M16N8K16,
                    a: Elem::F16,
                    row_a: true,
                    col_b: true
                },
                Elem::F16,
                Frag::A,
                5,
                5
            ),
            (0, 1, 11)
        );
        assert_eq!(
            position(
                &Layout {
                    shape: M16N8K16,
                    a: Elem::F16,
                    row_a: true,
                    col_b: true
                },
                Elem::F16,
                Frag::A,
                5,
                6
            ),
            (0, 9, 10)
        );
        // B: b3 of lane 7 is row 6 + 8 + 1 = 15, column 1
        assert_eq!(
            position(
                &Layout {
                    shape: M16N8K16,
                    a: Elem::F16,
                    row_a: true,
                    col_b: true
                },
                Elem::F16,
                Frag::B,
                7,
                3
            ),
            (0, 15, 1)
        );
        // tf32 m16n8k8 A: a1 of lane 2 is row 8, column 2; a2 is row 0, column 6
        let s = Shape { m: 16, n: 8, k: 8 };
        let p = |f, l, i| {
            position(
                &Layout {
                    shape: s,
                    a: Elem::Tf32,
                    row_a: true,
                    col_b: true,
                },
                Elem::Tf32,
                f,
                l,
                i,
            )
        };
        assert_eq!(p(Frag::A, 2, 1), (0, 8, 2));
        assert_eq!(p(Frag::A, 2, 2), (0, 0, 6));
        assert_eq!(p(Frag::B, 2, 1), (0, 6, 0));
    }

    #[test]
    fn small_formats_decode_as_fp() {
        for b in 0..=0xFFFFu64 {
            let (x, y) = (Elem::F16.value(b), fp::to_f64(fp::F16, b));
            assert!(
                x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
                "{b:#x}"
            );
            let (x, y) = (Elem::Bf16.value(b), fp::to_f64(fp::BF16, b));
            assert!(
                x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
                "{b:#x}"
            );
        }
        for b in 0..=0xFFu64 {
            for (e, f) in [(Elem::E4m3, fp::E4M3), (Elem::E5m2, fp::E5M2)] {
                let (x, y) = (e.value(b), fp::to_f64(f, b));
                assert!(
                    x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
                    "{e:?} {b:#x}"
                );
            }
        }
        for acc in [1.0 + 2f64.powi(-24), 3.4e38, 1e-46, -2.5, 7e-39] {
            assert_eq!(
                round_result(Elem::F32, acc, false),
                fp::from_f64(fp::F32, acc, Rounding::Rn)
            );
        }
    }

    #[test]
    fn values_and_rounding() {
        assert_eq!(Elem::Tf32.value(0x3F80_1FFF), 1.0); // low 13 bits ignored
        assert_eq!(Elem::E4m3.value(0x7E), 448.0);
        assert_eq!(Elem::S4.value(0xF), -1.0);
        assert_eq!(Elem::S4.value(0x8), -8.0);
        assert_eq!(Elem::U4.value(0xF), 15.0);
        assert_eq!(Elem::S8.value(0x80), -128.0);
        assert_eq!(round_result(Elem::S32, 2147483648.0, false), 0x8000_0000);
        assert_eq!(round_result(Elem::S32, 2147483648.0, true), 0x7FFF_FFFF);
        assert_eq!(round_result(Elem::S32, -2147483649.0, true), 0x8000_0000);
        assert_eq!(round_result(Elem::F32, f64::NAN, false), 0x7FFF_FFFF);
        assert_eq!(round_result(Elem::F16, 65520.0, false), 0x7C00); // rounds to inf
                                                                     // 1 + 2^-24 rounds to 1.0 in f32 (ties to even)
        assert_eq!(
            round_result(Elem::F32, 1.0 + 2f64.powi(-24), false),
            0x3F80_0000
        );
    }

    #[test]
    fn sums_in_order() {
        // 2^30 - 2^30 + 1 in order gives 1; exact products
        let s = Shape { m: 1, n: 1, k: 2 };
        let mut d = [0.0];
        mma(
            s,
            1,
            Product::Mul,
            &[65504.0, 1.0],
            &[65504.0, 1.0],
            &[-4290774016.0],
            &mut d,
        );
        assert_eq!(d[0], 1.0);
        mma(s, 1, Product::Xor, &[1.0, 0.0], &[1.0, 1.0], &[5.0], &mut d);
        assert_eq!(d[0], 6.0);
        mma(s, 1, Product::And, &[1.0, 0.0], &[1.0, 1.0], &[5.0], &mut d);
        assert_eq!(d[0], 6.0);
    }

    #[test]
    fn wmma_layouts_are_permutations() {
        let sh = |m, n, k| Shape { m, n, k };
        for (s, a, c) in [
            (sh(16, 16, 16), Elem::Bf16, Elem::F32),
            (sh(32, 8, 16), Elem::Bf16, Elem::F32),
            (sh(8, 32, 16), Elem::Bf16, Elem::F32),
            (sh(16, 16, 16), Elem::F16, Elem::F16),
            (sh(32, 8, 16), Elem::F16, Elem::F16),
            (sh(8, 32, 16), Elem::F16, Elem::F32),
            (sh(16, 16, 8), Elem::Tf32, Elem::F32),
            (sh(8, 8, 4), Elem::F64, Elem::F64),
            (sh(16, 16, 16), Elem::S8, Elem::S32),
            (sh(32, 8, 16), Elem::U8, Elem::S32),
            (sh(8, 32, 16), Elem::S8, Elem::S32),
            (sh(8, 8, 32), Elem::S4, Elem::S32),
            (sh(8, 8, 128), Elem::B1, Elem::S32),
        ] {
            for (f, e, rows, cols) in [
                (Frag::A, a, s.m, s.k),
                (Frag::B, a, s.k, s.n),
                (Frag::C, c, s.m, s.n),
            ] {
                let mut seen = vec![0u32; (rows * cols) as usize];
                let per = wmma_regs(s, f, e) * e.per_reg();
                for lane in 0..32 {
                    for i in 0..per {
                        let (r, c) = wmma_position(s, f, e, lane, i);
                        assert!(r < rows && c < cols, "{s:?} {f:?} {lane} {i}");
                        seen[(r * cols + c) as usize] += 1;
                    }
                }
                let k = seen[0];
                assert!(k >= 1 && seen.iter().all(|&x| x == k), "{s:?} {a:?} {f:?}");
            }
        }
        // the 16x16 accumulator is two m16n8 accumulators side by side
        let s = sh(16, 16, 16);
        assert_eq!(wmma_position(s, Frag::C, Elem::F32, 5, 3), (9, 3));
        assert_eq!(wmma_position(s, Frag::C, Elem::F32, 5, 6), (9, 10));
    }

    #[test]
    fn wmma_satfinite_and_directed_f64() {
        assert_eq!(round_satfinite(Elem::F16, 1e6), 0x7BFF);
        assert_eq!(round_satfinite(Elem::F16, -1e6), 0xFBFF);
        assert_eq!(round_satfinite(Elem::F16, 3.0), 0x4200);
        assert_eq!(round_satfinite(Elem::F32, f64::INFINITY), 0x7F7F_FFFF);
        assert_eq!(round_satfinite(Elem::F32, f64::NAN), 0x7FFF_FFFF);
        // 1 + 2^-60 (exact product 1·2^-60 plus c = 1): up rounds away, down/toward zero keep 1
        let s = Shape { m: 1, n: 1, k: 1 };
        let mut d = [0.0];
        let (a, b, c) = ([2f64.powi(-30)], [2f64.powi(-30)], [1.0]);
        mma_f64_rounded(s, Rounding::Rp, &a, &b, &c, &mut d);
        assert_eq!(d[0], 1.0 + f64::EPSILON);
        mma_f64_rounded(s, Rounding::Rz, &a, &b, &c, &mut d);
        assert_eq!(d[0], 1.0);
        mma_f64_rounded(s, Rounding::Rm, &[-a[0]], &b, &c, &mut d);
        assert_eq!(d[0], 1.0 - f64::EPSILON / 2.0);
    }
}
