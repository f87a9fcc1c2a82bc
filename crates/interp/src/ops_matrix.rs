//! The warp-level matrix instructions — `mma.sync.aligned`, `ldmatrix`, `stmatrix`,
//! `movmatrix` — as [`crate::program::Op::WarpSync`] handlers (`crate::decode::matrix` decodes
//! them).
//!
//! **The whole warp.** These are `.sync.aligned`: the ISA requires every thread of the warp to
//! execute the same instruction together. The executor runs the handler once every lane that
//! has not exited has arrived; a handler that then finds a lane missing (exited, past the end
//! of the block, predicated off, or merged out by divergence) reports a fault naming the
//! instruction, a thread and block that executed it, and the lanes that did not, instead of
//! computing with registers nobody supplied.
//!
//! **`mma`.** The handler gathers A, B and C from all 32 lanes' registers with the ISA's
//! fragment layouts ([`ptx_semantics::matrix::position`]), multiplies with the numerics that
//! module documents (exact products, `f64` sums in `k` order after C, one rounding to the
//! destination type; `.f64` by fused multiply-adds in `k` order; integer sums exact, wrapping
//! or saturating with `.satfinite`; `.tf32` inputs truncated to their 19 bits; canonical NaN),
//! and scatters D back. The result depends on the inputs only: never on the run or on how many
//! OS threads run the launch.
//!
//! **`mma.sp`** (and `::ordered_metadata`) first rebuilds the dense A: each compressed register
//! stands for `2·p` consecutive columns of one row, and the 4-bit metadata groups of the threads
//! the sparsity selector names place its stored elements in their chunks
//! ([`ptx_semantics::matrix::sparse_expand`]); metadata the ISA leaves undefined is a fault
//! unless the chunk's stored values are zero. B, C, D and the arithmetic are `mma`'s.
//!
//! **`ldmatrix`/`stmatrix` (`.m8n8 .b16`).** Matrix `j` (of 1, 2 or 4) has its eight rows at the
//! addresses held by lanes `8j`…`8j+7` (16 contiguous bytes each, 16-byte aligned); in
//! registers, lane `l`'s register `j` holds row `l/4`, columns `2(l%4)` and `2(l%4)+1` (low
//! half first), or with `.trans` the same two elements of the transposed matrix.
//! `movmatrix.trans` transposes one such matrix held in registers.
//!
//! **`wmma`.** `wmma.load`/`wmma.store` move each lane's fragment elements
//! ([`ptx_semantics::matrix::wmma_position`], sm_80's layout) between registers and a `.row` or
//! `.col` matrix in memory; `wmma.mma` gathers the fragments into plain matrices and uses
//! `mma`'s arithmetic, so load–multiply–store programs do not depend on the layout.

use crate::ops_move::{read, resolve, space_of, write};
use crate::program::{Ctx, Fault, FaultKind, Insn, MemResult, FULL};
use ptx_semantics::matrix::{self, Elem, Frag, Product, Shape};

/// `Insn::b` of these instructions: no member-mask operand (the whole warp).
pub(crate) const NO_MEMBER: u32 = u32::MAX;

/// Registers an `mma` can name: its slots are 16-bit indices, two in each of `d`, `a`, `c`,
/// `v[0..4]`, four in `imm` and two in the high half of `aux`.
const MAX_SLOTS: usize = 20;

/// The configuration of an `mma`, packed into the low 32 bits of its `aux`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MmaCfg {
    pub shape: Shape,
    /// d, a, b, c.
    pub types: [Elem; 4],
    pub row_a: bool,
    pub col_b: bool,
    pub satfinite: bool,
    pub prod: Product,
    /// Registers of d, a, b, c.
    pub counts: [u32; 4],
}

impl MmaCfg {
    pub(crate) fn pack(&self) -> u64 {
        let mut x = 0u64;
        for (k, t) in self.types.iter().enumerate() {
            x |= t.code() << (4 * k);
        }
        x |= ((self.shape.m == 16) as u64) << 16;
        x |= (self.shape.k.trailing_zeros() as u64) << 17;
        x |= (self.row_a as u64) << 21 | (self.col_b as u64) << 22;
        x |= (self.satfinite as u64) << 23;
        x |= match self.prod {
            Product::Mul => 0,
            Product::Fma => 1,
            Product::And => 2,
            Product::Xor => 3,
        } << 24;
        x
    }

    pub(crate) fn unpack(aux: u64) -> MmaCfg {
        let types: [Elem; 4] = std::array::from_fn(|k| Elem::from_code((aux >> (4 * k)) & 15));
        let shape = Shape {
            m: if aux >> 16 & 1 != 0 { 16 } else { 8 },
            n: 8,
            k: 1 << ((aux >> 17) & 15),
        };
        let a = types[1];
        let regs = |f: Frag, e: Elem| matrix::elements(shape, a, f) / e.per_reg();
        MmaCfg {
            shape,
            types,
            row_a: aux >> 21 & 1 != 0,
            col_b: aux >> 22 & 1 != 0,
            satfinite: aux >> 23 & 1 != 0,
            prod: match aux >> 24 & 3 {
                0 => Product::Mul,
                1 => Product::Fma,
                2 => Product::And,
                _ => Product::Xor,
            },
            counts: [
                regs(Frag::C, types[0]),
                regs(Frag::A, a),
                regs(Frag::B, types[2]),
                regs(Frag::C, types[3]),
            ],
        }
    }
}

/// Packs `slots` (at most [`MAX_SLOTS`], each below 2^16) into `insn`'s slot fields and the
/// high half of `aux` (set `aux`'s low half afterwards with `|=` or before with care).
pub(crate) fn pack_slots(insn: &mut Insn, slots: &[u32]) -> Result<(), String> {
    if slots.len() > MAX_SLOTS {
        return Err(format!("more than {MAX_SLOTS} registers"));
    }
    if slots.iter().any(|&s| s > 0xFFFF) {
        return Err("too many registers in this kernel for a matrix instruction".into());
    }
    let mut w = [0u32; MAX_SLOTS / 2];
    for (k, &s) in slots.iter().enumerate() {
        w[k / 2] |= s << (16 * (k % 2));
    }
    insn.d = w[0];
    insn.a = w[1];
    insn.c = w[2];
    insn.v = [w[3], w[4], w[5], w[6]];
    insn.imm = (w[7] as u64 | (w[8] as u64) << 32) as i64;
    insn.aux = (w[9] as u64) << 32;
    Ok(())
}

/// Slot `k` of those [`pack_slots`] packed.
#[inline]
fn slot(i: &Insn, k: usize) -> usize {
    let w = match k / 2 {
        0 => i.d,
        1 => i.a,
        2 => i.c,
        3 => i.v[0],
        4 => i.v[1],
        5 => i.v[2],
        6 => i.v[3],
        7 => i.imm as u64 as u32,
        8 => (i.imm as u64 >> 32) as u32,
        _ => (i.aux >> 32) as u32,
    };
    (w >> (16 * (k % 2)) & 0xFFFF) as usize
}

/// The fault of a `.sync.aligned` instruction that not all 32 lanes execute (`mask`: those
/// that do).
#[cold]
pub(crate) fn not_whole_warp(name: &str, mask: u32) -> Box<Fault> {
    // the missing lanes as ranges: "16-31", "3,7-9"
    let mut parts = Vec::new();
    let mut l = 0;
    while l < 32 {
        if mask & (1 << l) != 0 {
            l += 1;
            continue;
        }
        let start = l;
        while l < 32 && mask & (1 << l) == 0 {
            l += 1;
        }
        parts.push(if l - 1 == start {
            start.to_string()
        } else {
            format!("{start}-{}", l - 1)
        });
    }
    Box::new(Fault {
        kind: FaultKind::Other(format!(
            "divergent `{name}`: it is `.sync.aligned`, so all 32 threads of the warp must \
             execute it together, but lanes {} of this warp did not (exited, past the end of \
             the block, predicated off or on another path)",
            parts.join(",")
        )),
        lane: None,
    })
}

/// Where each element of each lane's fragments goes in the row-major matrices of [`mma`]: per
/// fragment, the index of element `el` of lane `l` at `l · (elements per lane) + el`.
struct Tables {
    a: Vec<u16>,
    b: Vec<u16>,
    c: Vec<u16>,
    d: Vec<u16>,
}

thread_local! {
    /// [`Tables`] per `mma` configuration (the low half of its `aux`) met by this OS thread:
    /// a kernel has a handful, and there are a few hundred possible at most.
    static TABLES: std::cell::RefCell<Vec<(u64, std::rc::Rc<Tables>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The [`Tables`] of configuration `key` (`cfg`, `layout`), computed on first use.
fn position_tables(key: u64, cfg: &MmaCfg, layout: &matrix::Layout) -> std::rc::Rc<Tables> {
    TABLES.with(|t| {
        if let Some((_, tab)) = t.borrow().iter().find(|(k, _)| *k == key) {
            return tab.clone();
        }
        let s = cfg.shape;
        let (m, n, k) = (s.m, s.n, s.k);
        let [dt, at, bt, ct] = cfg.types;
        let table = |f: Frag, e: Elem, cols: u32, rows: u32| {
            let per_lane = matrix::elements(s, at, f);
            let mut v = Vec::with_capacity(32 * per_lane as usize);
            for lane in 0..32 {
                for el in 0..per_lane {
                    let (q, r, c) = matrix::position(layout, e, f, lane, el);
                    v.push(((q * rows + r) * cols + c) as u16);
                }
            }
            v
        };
        let tab = std::rc::Rc::new(Tables {
            a: table(Frag::A, at, k, m),
            b: table(Frag::B, bt, n, k),
            c: table(Frag::C, ct, n, m),
            d: table(Frag::C, dt, n, m),
        });
        t.borrow_mut().push((key, tab.clone()));
        tab
    })
}

/// `mma.sync.aligned` (see the module documentation).
pub(crate) fn mma(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("mma", mask));
    }
    let cfg = MmaCfg::unpack(i.aux & 0xFFFF_FFFF);
    let s = cfg.shape;
    let [dt, at, bt, ct] = cfg.types;
    let g = matrix::groups(s, at);
    let layout = matrix::Layout {
        shape: s,
        a: at,
        row_a: cfg.row_a,
        col_b: cfg.col_b,
    };
    let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
    let g_us = g as usize;
    // A, B, C and D, on the stack for the shapes of real kernels (f16/bf16/tf32/fp8/f64 and
    // 8-bit integers), on the heap for the wide integer and `.b1` ones
    let (la, lb, lc) = (g_us * m * k, g_us * k * n, g_us * m * n);
    let mut small = [0.0f64; 512 + 256 + 256 + 256];
    let mut heap;
    let buf: &mut [f64] = if la <= 512 && lb <= 256 && lc <= 256 {
        &mut small[..]
    } else {
        heap = vec![0.0f64; la + lb + 2 * lc];
        &mut heap[..]
    };
    let (av, rest) = buf.split_at_mut(la);
    let (bv, rest) = rest.split_at_mut(lb);
    let (cv, rest) = rest.split_at_mut(lc);
    let dv = &mut rest[..lc];
    let [nd, na, nb, nc] = cfg.counts.map(|c| c as usize);
    let first = [na + nd, nd + na + nb];
    let tables = position_tables(i.aux & 0xFFFF_FFFF, &cfg, &layout);
    gather(i, ctx.regs, &tables.a, at, nd, na, av);
    gather(i, ctx.regs, &tables.b, bt, first[0], nb, bv);
    gather(i, ctx.regs, &tables.c, ct, first[1], nc, cv);
    matrix::mma(s, g, cfg.prod, av, bv, cv, dv);
    scatter_d(ctx, i, &tables.d, dt, nd, cfg.satfinite, dv);
    Ok(())
}

/// Gathers a fragment of type `e` whose registers start at slot index `base` of `i`: element
/// `el` of register `r` of lane `l` goes to `out[tab[l · per-lane elements + el]]`.
#[inline(always)]
fn gather(
    i: &Insn,
    regs: &[crate::program::Lanes],
    tab: &[u16],
    e: Elem,
    base: usize,
    nregs: usize,
    out: &mut [f64],
) {
    let per = e.per_reg() as usize;
    let bits = e.bits();
    let emask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let per_lane = per * nregs;
    for r in 0..nregs {
        let lanes = &regs[slot(i, base + r)];
        for (lane, &v) in lanes.iter().enumerate() {
            let row = &tab[lane * per_lane + r * per..][..per];
            for (sub, &idx) in row.iter().enumerate() {
                let b = (v >> (sub as u32 * bits)) & emask;
                if let Some(x) = out.get_mut(idx as usize) {
                    *x = e.value(b);
                }
            }
        }
    }
}

/// Rounds D (`dv`, row-major) into type `dt` and writes it to the `nd` registers in slots
/// `0..nd` of `i` (table `tab` as for [`gather`]); every register of every lane is written.
#[inline(always)]
fn scatter_d(
    ctx: &mut Ctx<'_>,
    i: &Insn,
    tab: &[u16],
    dt: Elem,
    nd: usize,
    satfinite: bool,
    dv: &[f64],
) {
    let per = dt.per_reg() as usize;
    let bits = dt.bits();
    let mut out = [[0u64; 32]; 8];
    let per_lane = per * nd;
    for (r, reg) in out.iter_mut().enumerate().take(nd) {
        for (lane, o) in reg.iter_mut().enumerate() {
            let row = &tab[lane * per_lane + r * per..][..per];
            for (sub, &idx) in row.iter().enumerate() {
                let v = dv.get(idx as usize).copied().unwrap_or(0.0);
                *o |= matrix::round_result(dt, v, satfinite) << (sub as u32 * bits);
            }
        }
    }
    for (r, vals) in out.iter().enumerate().take(nd) {
        ctx.regs[slot(i, r)] = *vals;
    }
}

/// The bits `mma.sp` adds to the low half of its `aux`, above [`MmaCfg::pack`]'s (bits 0–25):
/// `::ordered_metadata` (bit 26) and the sparsity selector (bits 27–28).
pub(crate) fn sparse_bits(ordered: bool, sel: u64) -> u64 {
    (ordered as u64) << 26 | (sel & 3) << 27
}

/// `mma.sp{::ordered_metadata}.sync.aligned` (see the module documentation): A is gathered
/// from its compressed registers and the metadata of the threads the sparsity selector names
/// into a dense M×K matrix (zeros where nothing is stored), then multiplied like `mma`.
pub(crate) fn mma_sp(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("mma.sp", mask));
    }
    let key = i.aux & 0xFFFF_FFFF;
    let cfg = MmaCfg::unpack(key & 0x03FF_FFFF);
    let ordered = key >> 26 & 1 != 0;
    let sel = (key >> 27 & 3) as u32;
    let s = cfg.shape;
    let [dt, at, bt, ct] = cfg.types;
    let [nd, _, nb, nc] = cfg.counts.map(|c| c as usize);
    let na = matrix::sparse_a_regs(s, at) as usize;
    let layout = matrix::Layout {
        shape: s,
        a: at,
        row_a: true,
        col_b: true,
    };
    // B, C and D are laid out as for the dense `mma` of the same shape
    let tables = position_tables(key & 0x03FF_FFFF, &cfg, &layout);
    let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
    // A (at most 16×128), B (128×8), C and D
    let mut buf = [0.0f64; 2048 + 1024 + 128 + 128];
    let (av, rest) = buf.split_at_mut(m * k);
    let (bv, rest) = rest.split_at_mut(k * n);
    let (cv, rest) = rest.split_at_mut(m * n);
    let dv = &mut rest[..m * n];
    let meta = &ctx.regs[slot(i, nd + na + nb + nc)];
    // the compressed registers (2 or 4)
    let a: [&crate::program::Lanes; 4] =
        std::array::from_fn(|r| &ctx.regs[slot(i, nd + r.min(na - 1))]);
    sparse_a_expand(s, at, ordered, sel, meta, &a[..na], |row, col, b| {
        if let Some(v) = av.get_mut(row * k + col) {
            *v = at.value(b);
        }
    })?;
    gather(i, ctx.regs, &tables.b, bt, nd + na, nb, bv);
    gather(i, ctx.regs, &tables.c, ct, nd + na + nb, nc, cv);
    matrix::mma(s, 1, Product::Mul, av, bv, cv, dv);
    scatter_d(ctx, i, &tables.d, dt, nd, cfg.satfinite, dv);
    Ok(())
}

/// Rebuilds the dense M×K matrix A of an `mma.sp` of shape `s` whose compressed A holds
/// elements of type `at` (for the sm_120a kinds, the type whose layout and sparsity they share:
/// `.e4m3` for 8-bit containers, `.u4` for packed `.e2m1`): `a` holds the compressed registers
/// (of the 32 lanes), `meta` the metadata operand. `put(row, col, bits)`
/// receives every element the compressed registers stand for (zero bits where nothing is
/// stored); metadata the ISA leaves undefined over nonzero values is a fault.
#[inline]
pub(crate) fn sparse_a_expand(
    s: Shape,
    at: Elem,
    ordered: bool,
    sel: u32,
    meta: &crate::program::Lanes,
    a: &[&crate::program::Lanes],
    mut put: impl FnMut(usize, usize, u64),
) -> Result<(), Box<Fault>> {
    let w = 2 * at.per_reg();
    let bits = at.bits();
    let emask = (1u64 << bits) - 1;
    for lane in 0..32u32 {
        for (r, reg) in (0u32..).zip(a) {
            let word = reg[lane as usize] as u32;
            let mut groups = 0u32;
            for j in 0..matrix::sparse_chunks_per_reg(at) {
                let (ml, bit) = matrix::sparse_meta_at(s, at, sel, lane, r, j);
                groups |= (meta[ml as usize] as u32 >> bit & 0xF) << (4 * j);
            }
            let (row, c0) = matrix::sparse_a_origin(at, lane, r);
            let dense = matrix::sparse_expand(at, ordered, word, groups)
                .map_err(|j| bad_metadata(s, at, ordered, sel, lane, r, j, groups))?;
            for x in 0..w {
                put(row as usize, (c0 + x) as usize, dense >> (x * bits) & emask);
            }
        }
    }
    Ok(())
}

/// The fault of an `mma.sp` whose metadata group for chunk `j` of lane `lane`'s compressed A
/// register `r` is one the ISA leaves undefined while the chunk holds nonzero values.
#[cold]
#[allow(clippy::too_many_arguments)]
fn bad_metadata(
    s: Shape,
    at: Elem,
    ordered: bool,
    sel: u32,
    lane: u32,
    r: u32,
    j: u32,
    groups: u32,
) -> Box<Fault> {
    let g = groups >> (4 * j) & 0xF;
    let (ml, bit) = matrix::sparse_meta_at(s, at, sel, lane, r, j);
    let (row, c0) = matrix::sparse_a_origin(at, lane, r);
    let cols = 4 * matrix::sparse_unit_bits(at) / at.bits();
    let c0 = c0 + j * cols;
    let name = if ordered {
        "mma.sp::ordered_metadata"
    } else {
        "mma.sp"
    };
    let rule = match at {
        Elem::Tf32 => "for `.tf32` only 0b0100 and 0b1110 have a meaning",
        _ if ordered => "`::ordered_metadata` needs two different indices in increasing order",
        _ => "the two indices must differ",
    };
    Box::new(Fault {
        kind: FaultKind::Other(format!(
            "`{name}`: sparsity metadata 0b{g:04b} (bits {}..{} of lane {ml}'s metadata operand) \
             for row {row}, columns {c0}..{} of A is undefined in the PTX ISA ({rule}), and \
             lane {lane}'s register a{r} holds nonzero values for that chunk",
            bit + 3,
            bit,
            c0 + cols - 1
        )),
        lane: Some(lane),
    })
}

/// The 16-bit element `(row, col)` of an 8×8 matrix held in fragment `reg` (lane `l` holds row
/// `l/4`, columns `2(l%4)` and `2(l%4)+1`).
#[inline]
fn frag_elem(reg: &crate::program::Lanes, row: usize, col: usize) -> u64 {
    (reg[row * 4 + col / 2] >> (16 * (col % 2))) & 0xFFFF
}

/// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.b16`.
pub(crate) fn ldmatrix(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("ldmatrix", mask));
    }
    let num = (i.aux & 7) as usize;
    let trans = i.aux >> 3 & 1 != 0;
    let space = space_of(i.aux >> 8);
    let mut regs = [[0u64; 32]; 4];
    for (j, reg) in regs.iter_mut().enumerate().take(num) {
        // rows[r][c] of matrix j
        let mut rows = [[0u64; 8]; 8];
        for (r, row) in rows.iter_mut().enumerate() {
            let lane = 8 * j + r;
            let addr = ctx.regs[i.a as usize][lane].wrapping_add(i.imm as u64);
            let t = resolve(ctx, space, addr, 16, lane, false)?;
            for (c, x) in row.iter_mut().enumerate() {
                *x = read(ctx, &t, lane, 2 * c as u64, 2);
            }
        }
        for (l, out) in reg.iter_mut().enumerate() {
            let (r, c) = (l / 4, 2 * (l % 4));
            *out = if trans {
                rows[c][r] | rows[c + 1][r] << 16
            } else {
                rows[r][c] | rows[r][c + 1] << 16
            };
        }
    }
    for (j, reg) in regs.iter().enumerate().take(num) {
        ctx.regs[i.v[j] as usize] = *reg;
    }
    Ok(())
}

/// The number of matrices (`aux` bits 0–2) of a `stmatrix` and the 16-byte row each of its
/// first `8·num` lanes addresses, all resolved before anything is written (a fault leaves
/// memory untouched).
pub(crate) fn stmatrix_rows<'a>(
    ctx: &Ctx<'a>,
    i: &Insn,
) -> Result<(usize, Vec<crate::ops_move::Target<'a>>), Box<Fault>> {
    let num = (i.aux & 7) as usize;
    let space = space_of(i.aux >> 8);
    let mut targets = Vec::with_capacity(8 * num);
    for lane in 0..8 * num {
        let addr = ctx.regs[i.a as usize][lane].wrapping_add(i.imm as u64);
        targets.push(resolve(ctx, space, addr, 16, lane, true)?);
    }
    Ok((num, targets))
}

/// `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.b16`.
pub(crate) fn stmatrix(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("stmatrix", mask));
    }
    let trans = i.aux >> 3 & 1 != 0;
    let (num, targets) = stmatrix_rows(ctx, i)?;
    for j in 0..num {
        let reg = ctx.regs[i.v[j] as usize];
        for r in 0..8 {
            let lane = 8 * j + r;
            for c in 0..8 {
                let v = if trans {
                    frag_elem(&reg, c, r)
                } else {
                    frag_elem(&reg, r, c)
                };
                write(ctx, &targets[lane], lane, 2 * c as u64, 2, v);
            }
        }
    }
    Ok(())
}

/// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`: lane `l`'s `d` holds row `l/4`, columns
/// `2(l%4)`, `2(l%4)+1` of the transpose of the matrix the lanes' `a` hold.
pub(crate) fn movmatrix(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("movmatrix", mask));
    }
    let src = ctx.regs[i.a as usize];
    let mut out = [0u64; 32];
    for (l, o) in out.iter_mut().enumerate() {
        let (r, c) = (l / 4, 2 * (l % 4));
        *o = frag_elem(&src, c, r) | frag_elem(&src, c + 1, r) << 16;
    }
    ctx.regs[i.d as usize] = out;
    Ok(())
}

/// The `wmma` shapes, in the order of their 3-bit code.
pub(crate) const WMMA_SHAPES: [Shape; 6] = [
    Shape {
        m: 16,
        n: 16,
        k: 16,
    },
    Shape { m: 32, n: 8, k: 16 },
    Shape { m: 8, n: 32, k: 16 },
    Shape { m: 16, n: 16, k: 8 },
    Shape { m: 8, n: 8, k: 4 },
    Shape { m: 8, n: 8, k: 32 },
];
/// `.m8n8k128` (code 6).
const M8N8K128: Shape = Shape { m: 8, n: 8, k: 128 };

/// The shape of `wmma` shape code `c`.
pub(crate) fn wmma_shape(c: u64) -> Shape {
    WMMA_SHAPES.get(c as usize).copied().unwrap_or(M8N8K128)
}

/// The code of `wmma` shape `s`.
pub(crate) fn wmma_shape_code(s: Shape) -> u64 {
    WMMA_SHAPES.iter().position(|&x| x == s).unwrap_or(6) as u64
}

/// The fragment a `wmma.load`/`wmma.store` configuration names (bits 0–1 of `aux`).
fn frag_of(code: u64) -> Frag {
    match code & 3 {
        0 => Frag::A,
        1 => Frag::B,
        _ => Frag::C,
    }
}

/// Packs a `wmma.load`/`wmma.store` configuration: fragment, element type, shape, `.row`,
/// state space, whether a stride operand is present, register count.
pub(crate) fn wmma_ldst_cfg(
    f: Frag,
    e: Elem,
    s: Shape,
    row: bool,
    space: u64,
    stride: bool,
    nregs: u32,
) -> u64 {
    let fc = match f {
        Frag::A => 0,
        Frag::B => 1,
        Frag::C => 2,
    };
    fc | e.code() << 2
        | wmma_shape_code(s) << 6
        | (row as u64) << 9
        | (stride as u64) << 10
        | (nregs as u64) << 11
        | space << 16
}

/// The element `(row, col)` of a `rows`×`cols` matrix stored `.row` (or `.col`) with `stride`
/// elements between rows (columns): its index in elements.
#[inline]
fn elem_index(row: u32, col: u32, row_major: bool, stride: u64) -> u64 {
    if row_major {
        row as u64 * stride + col as u64
    } else {
        col as u64 * stride + row as u64
    }
}

/// `wmma.load.{a,b,c}` and `wmma.store.d` (`store`): each lane moves the elements of its
/// fragment ([`matrix::wmma_position`]) between its registers and the matrix at the address
/// in the instruction's `v[1]` slot, with the stride (in elements) of slot `v[2]` or, without
/// one, the matrix's own width (`.row`) or height (`.col`).
fn wmma_ldst(ctx: &mut Ctx<'_>, i: &Insn, mask: u32, store: bool) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp(
            if store { "wmma.store" } else { "wmma.load" },
            mask,
        ));
    }
    let f = frag_of(i.aux);
    let e = Elem::from_code(i.aux >> 2 & 15);
    let s = wmma_shape(i.aux >> 6 & 7);
    let row = i.aux >> 9 & 1 != 0;
    let nregs = (i.aux >> 11 & 31) as usize;
    let space = space_of(i.aux >> 16);
    let (rows, cols) = match f {
        Frag::A => (s.m, s.k),
        Frag::B => (s.k, s.n),
        Frag::C => (s.m, s.n),
    };
    let per = e.per_reg();
    let bits = e.bits();
    let mut out = [[0u64; 32]; 8];
    // a store resolves every element first: a fault leaves memory untouched
    let mut pending = Vec::with_capacity(if store { 32 * 8 * per as usize } else { 0 });
    for lane in 0..32 {
        let base = ctx.regs[i.v[1] as usize][lane].wrapping_add(i.imm as u64);
        let stride = if i.aux >> 10 & 1 != 0 {
            ctx.regs[i.v[2] as usize][lane] as u32 as u64
        } else if row {
            cols as u64
        } else {
            rows as u64
        };
        for (r, reg) in out.iter_mut().enumerate().take(nregs) {
            let mut v = if store { ctx.regs[slot(i, r)][lane] } else { 0 };
            for sub in 0..per {
                let (er, ec) = matrix::wmma_position(s, f, e, lane as u32, r as u32 * per + sub);
                let idx = elem_index(er, ec, row, stride);
                // sub-byte elements (`.s4 .u4 .b1`, loads only) are read from their byte
                let (off, size) = if bits >= 8 {
                    (idx.wrapping_mul(bits as u64 / 8), bits / 8)
                } else {
                    (idx / (8 / bits as u64), 1)
                };
                let t = resolve(ctx, space, base.wrapping_add(off), size, lane, store)?;
                let shift = if bits >= 8 {
                    0
                } else {
                    (idx % (8 / bits as u64)) as u32 * bits
                };
                let emask = if bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                if store {
                    pending.push((t, lane, size, v >> (sub * bits) & emask));
                } else {
                    let x = read(ctx, &t, lane, 0, size) >> shift & emask;
                    v |= x << (sub * bits);
                }
            }
            reg[lane] = v;
        }
    }
    for (t, lane, size, x) in pending {
        write(ctx, &t, lane, 0, size, x);
    }
    if !store {
        for (r, vals) in out.iter().enumerate().take(nregs) {
            ctx.regs[slot(i, r)] = *vals;
        }
    }
    Ok(())
}

/// `wmma.load.{a,b,c}.sync.aligned` (see [`wmma_ldst`]).
pub(crate) fn wmma_load(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    wmma_ldst(ctx, i, mask, false)
}

/// `wmma.store.d.sync.aligned` (see [`wmma_ldst`]).
pub(crate) fn wmma_store(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    wmma_ldst(ctx, i, mask, true)
}

/// Packs a `wmma.mma` configuration: types d, a, b, c, shape, `.satfinite`, product, `.rnd`.
pub(crate) fn wmma_mma_cfg(
    types: [Elem; 4],
    s: Shape,
    satfinite: bool,
    prod: Product,
    rnd: u64,
) -> u64 {
    let mut x = 0u64;
    for (k, t) in types.iter().enumerate() {
        x |= t.code() << (4 * k);
    }
    x | wmma_shape_code(s) << 16
        | (satfinite as u64) << 19
        | match prod {
            Product::Mul => 0,
            Product::Fma => 1,
            Product::And => 2,
            Product::Xor => 3,
        } << 20
        | rnd << 22
}

/// `wmma.mma.sync.aligned`: gathers A, B and C from the fragments (each matrix element from
/// its first copy, [`matrix::wmma_position`]), multiplies with `mma`'s numerics
/// ([`matrix::mma`], [`matrix::round_result`]) and scatters D. The fragments hold plain
/// matrices whatever `.row`/`.col` they were loaded with (the load did the transposing), so
/// the layouts `wmma.mma` names do not change its result.
pub(crate) fn wmma_mma(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("wmma.mma", mask));
    }
    let types: [Elem; 4] = std::array::from_fn(|k| Elem::from_code((i.aux >> (4 * k)) & 15));
    let [dt, at, bt, ct] = types;
    let s = wmma_shape(i.aux >> 16 & 7);
    let satfinite = i.aux >> 19 & 1 != 0;
    let prod = match i.aux >> 20 & 3 {
        0 => Product::Mul,
        1 => Product::Fma,
        2 => Product::And,
        _ => Product::Xor,
    };
    let rnd = match i.aux >> 22 & 3 {
        0 => ptx_semantics::Rounding::Rn,
        1 => ptx_semantics::Rounding::Rz,
        2 => ptx_semantics::Rounding::Rm,
        _ => ptx_semantics::Rounding::Rp,
    };
    // D, A, B, C: up to 32 registers, more than an `Insn` holds, so the decoder keeps them in
    // the program's operand lists (`Program::lists`) and the instruction their index
    let lists: &[Vec<u32>] = ctx.env.lists;
    let Some(slots) = lists.get(i.imm as usize) else {
        return Err(Box::new(Fault {
            kind: FaultKind::Other("internal error: `wmma.mma` lost its registers".into()),
            lane: None,
        }));
    };
    let counts = [
        matrix::wmma_regs(s, Frag::C, dt),
        matrix::wmma_regs(s, Frag::A, at),
        matrix::wmma_regs(s, Frag::B, bt),
        matrix::wmma_regs(s, Frag::C, ct),
    ]
    .map(|c| c as usize);
    let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
    let mut av = vec![0.0f64; m * k];
    let mut bv = vec![0.0f64; k * n];
    let mut cv = vec![0.0f64; m * n];
    let mut dv = vec![0.0f64; m * n];
    let mut first = 0;
    let starts: [usize; 4] = std::array::from_fn(|q| {
        let st = first;
        first += counts[q];
        st
    });
    for (f, e, cols, out, q) in [
        (Frag::A, at, k, &mut av, 1),
        (Frag::B, bt, n, &mut bv, 2),
        (Frag::C, ct, n, &mut cv, 3),
    ] {
        let per = e.per_reg();
        let bits = e.bits();
        let emask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let total = counts[q] as u32 * per;
        // the distinct elements come first: later copies are not read
        let unique = (out.len() / 32) as u32;
        for lane in 0..32u32 {
            for el in 0..total.min(unique) {
                let v = ctx.regs[slots[starts[q] + (el / per) as usize] as usize][lane as usize];
                let b = v >> ((el % per) * bits) & emask;
                let (r, c) = matrix::wmma_position(s, f, e, lane, el);
                out[r as usize * cols + c as usize] = e.value(b);
            }
        }
    }
    if prod == Product::Fma && rnd != ptx_semantics::Rounding::Rn {
        matrix::mma_f64_rounded(s, rnd, &av, &bv, &cv, &mut dv);
    } else {
        matrix::mma(s, 1, prod, &av, &bv, &cv, &mut dv);
    }
    let per = dt.per_reg();
    let bits = dt.bits();
    let mut out = [[0u64; 32]; 8];
    for (r, reg) in out.iter_mut().enumerate().take(counts[0]) {
        for (lane, o) in reg.iter_mut().enumerate() {
            for sub in 0..per {
                let (row, col) =
                    matrix::wmma_position(s, Frag::C, dt, lane as u32, r as u32 * per + sub);
                let v = dv[row as usize * n + col as usize];
                let x = if satfinite && dt.is_float() {
                    matrix::round_satfinite(dt, v)
                } else {
                    matrix::round_result(dt, v, satfinite)
                };
                *o |= x << (sub * bits);
            }
        }
    }
    for (r, vals) in out.iter().enumerate().take(counts[0]) {
        ctx.regs[slots[r] as usize] = *vals;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_round_trips() {
        let cfg = MmaCfg {
            shape: Shape {
                m: 16,
                n: 8,
                k: 256,
            },
            types: [Elem::S32, Elem::B1, Elem::B1, Elem::S32],
            row_a: true,
            col_b: true,
            satfinite: false,
            prod: Product::Xor,
            counts: [4, 4, 2, 4],
        };
        assert_eq!(MmaCfg::unpack(cfg.pack()), cfg);
        let quad = MmaCfg {
            shape: Shape { m: 8, n: 8, k: 4 },
            types: [Elem::F32, Elem::F16, Elem::F16, Elem::F16],
            row_a: false,
            col_b: false,
            satfinite: true,
            prod: Product::Mul,
            counts: [8, 2, 2, 4],
        };
        assert_eq!(MmaCfg::unpack(quad.pack()), quad);
    }

    #[test]
    fn slots_round_trip() {
        let mut insn = Insn::new(crate::program::Op::Nop, 0, 0);
        let slots: Vec<u32> = (0..20).map(|k| 1000 + 3 * k).collect();
        pack_slots(&mut insn, &slots).unwrap();
        for (k, &s) in slots.iter().enumerate() {
            assert_eq!(slot(&insn, k), s as usize);
        }
        assert!(pack_slots(&mut insn, &[0x10000]).is_err());
    }
}
