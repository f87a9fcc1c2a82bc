//! The sm_120a `mma.sync.aligned` kinds (`.kind::f8f6f4`, and the block-scaled
//! `.kind::mxf8f6f4`, `.kind::mxf4`, `.kind::mxf4nvf4`) and the sm_100a `.b8` shapes of
//! `ldmatrix` (`.m16n16`, `.m8n16`, with the `.b8x16` unpacking of 6- and 4-bit data) and
//! `stmatrix` (`.m16n8`), as [`crate::program::Op::WarpSync`] handlers (decoded in
//! `crate::decode::matrix_kind`).
//!
//! **`mma` kinds.** The fragment layouts are those of `mma` with 8-bit multiplicands
//! (`.m16n8k32`: one element per byte, [`ptx_semantics::matrix::position`]) or with 4-bit
//! ones (`.m16n8k64` `.e2m1` of `.kind::mxf4`/`.kind::mxf4nvf4`, eight per register as `.s4`).
//! Each element is decoded exactly ([`ptx_semantics::mma_kind`]), multiplied by its scale
//! factor (block-scaled kinds: the byte of `scale-a-data`/`scale-b-data` that the selectors
//! `{byte-id, thread-id}` pick for its row or column and `k` chunk), and the products are
//! summed as for every narrow type ([`ptx_semantics::matrix::mma`]: C first, then `k` in
//! order, in `f64`, one rounding). The selectors must be the same in all 32 threads and among
//! the values the ISA allows; otherwise the launch stops with a fault (the ISA leaves both
//! undefined).
//!
//! **Sparse kinds** (`mma.sp::ordered_metadata`, K doubled): A is rebuilt from its compressed
//! registers and metadata by [`crate::ops_matrix::sparse_a_expand`] with the layout and
//! sparsity of `.e4m3` `.m16n8k64` (8-bit containers, 2:4) or `.u4` `.m16n8k128` (packed
//! `.e2m1`, pair-wise 4:8); B has four registers; the scale factors cut the dense K.
//!
//! **`ldmatrix .m16n16 .trans`** (one or two 16×16 byte matrices, rows at the addresses of
//! lanes `16j`…`16j+15`): lane `t`'s registers `2j` and `2j+1` hold bytes `t/4` and `t/4 + 8`
//! of rows `4(t%4)`…`4(t%4)+3` (low byte first) — rows `t/4` and `t/4 + 8`, four consecutive
//! columns each, of the transposed matrix. **`ldmatrix .m8n16`** (8×16, rows at lanes
//! `8j`…`8j+7`): register `j` of lane `t` holds bytes `4(t%4)`…`4(t%4)+3` of row `t/4`. With
//! `.b8x16.b6x16_p32`/`.b4x16_p64` each row's 6-bit/4-bit elements are first unpacked into the
//! low bits of 16 bytes. **`stmatrix .m16n8 .trans .b8`**: lane `t`'s register `j` holds the
//! 16×8 matrix's rows `t/4` (bytes 0–1) and `t/4 + 8` (bytes 2–3), columns `2(t%4)` and
//! `2(t%4)+1`; its transpose, 8 rows of 16 bytes, is stored at the addresses of lanes
//! `8j`…`8j+7`. Every row is 16 bytes and must be 16-byte aligned.

use crate::ops_matrix::not_whole_warp;
use crate::ops_move::{read, resolve, space_of, write};
use crate::program::{Ctx, Fault, FaultKind, Insn, MemResult, FULL};
use ptx_semantics::matrix::{self, Elem, Frag, Layout, Product, Shape};
use ptx_semantics::mma_kind::{self as mk, KindType, ScaleType, SrcFmt};

/// The `.kind` of an `mma`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    F8f6f4,
    Mxf8f6f4,
    Mxf4,
    Mxf4nvf4,
}

/// The configuration of an `mma` with a `.kind`, packed into its `aux`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct KindCfg {
    pub kind: Kind,
    pub a: KindType,
    pub b: KindType,
    /// D and C are `.f16` (else `.f32`); only `.kind::f8f6f4` has `.f16`.
    pub f16_acc: bool,
    /// `.block_scale`: the `.scale_vec::NX` (1, 2 or 4) and `.stype`.
    pub scale: Option<(u32, ScaleType)>,
    /// `mma.sp::ordered_metadata`: A is sparse (K doubled, B four registers, metadata `e` after
    /// C; the sparsity selector is 0, the only value ptxas takes).
    pub sparse: bool,
}

impl KindCfg {
    pub(crate) fn pack(&self) -> u64 {
        let kind = match self.kind {
            Kind::F8f6f4 => 0,
            Kind::Mxf8f6f4 => 1,
            Kind::Mxf4 => 2,
            Kind::Mxf4nvf4 => 3,
        };
        let mut x = kind | self.a.code() << 2 | self.b.code() << 5 | (self.f16_acc as u64) << 8;
        if let Some((vec, st)) = self.scale {
            x |= 1 << 9 | (vec as u64) << 10 | ((st == ScaleType::Ue4m3) as u64) << 13;
        }
        x | (self.sparse as u64) << 14
    }

    pub(crate) fn unpack(aux: u64) -> KindCfg {
        KindCfg {
            kind: match aux & 3 {
                0 => Kind::F8f6f4,
                1 => Kind::Mxf8f6f4,
                2 => Kind::Mxf4,
                _ => Kind::Mxf4nvf4,
            },
            a: KindType::from_code(aux >> 2 & 7),
            b: KindType::from_code(aux >> 5 & 7),
            f16_acc: aux >> 8 & 1 != 0,
            scale: (aux >> 9 & 1 != 0).then(|| {
                let st = if aux >> 13 & 1 != 0 {
                    ScaleType::Ue4m3
                } else {
                    ScaleType::Ue8m0
                };
                ((aux >> 10 & 7) as u32, st)
            }),
            sparse: aux >> 14 & 1 != 0,
        }
    }

    /// `.kind::mxf4`/`.kind::mxf4nvf4`: `.e2m1` packed eight per register (`.m16n8k64`).
    pub(crate) fn packed(&self) -> bool {
        matches!(self.kind, Kind::Mxf4 | Kind::Mxf4nvf4)
    }

    pub(crate) fn shape(&self) -> Shape {
        let k = if self.packed() { 64 } else { 32 };
        Shape {
            m: 16,
            n: 8,
            k: if self.sparse { 2 * k } else { k },
        }
    }

    /// The accumulator type.
    pub(crate) fn acc(&self) -> Elem {
        if self.f16_acc {
            Elem::F16
        } else {
            Elem::F32
        }
    }

    /// Registers of D, A, B, C.
    pub(crate) fn counts(&self) -> [usize; 4] {
        let c = if self.f16_acc { 2 } else { 4 };
        [c, 4, if self.sparse { 4 } else { 2 }, c]
    }
}

#[cold]
fn fault(msg: String) -> Box<Fault> {
    Box::new(Fault {
        kind: FaultKind::Other(msg),
        lane: None,
    })
}

/// The value of a selector operand (`.u16`) in slot `s`, which must be the same in every lane.
fn uniform(ctx: &Ctx<'_>, s: u32, what: &str) -> Result<u64, Box<Fault>> {
    let lanes = &ctx.regs[s as usize];
    let v = lanes[0] & 0xFFFF;
    if let Some(l) = lanes.iter().position(|x| x & 0xFFFF != v) {
        return Err(fault(format!(
            "`mma` block scaling: `{what}` must be the same in all 32 threads of the warp, but \
             lane 0 has {v} and lane {l} has {}",
            lanes[l] & 0xFFFF
        )));
    }
    Ok(v)
}

/// `mma.sync.aligned` with a `.kind` (see the module documentation).
pub(crate) fn mma_kind(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("mma", mask));
    }
    let cfg = KindCfg::unpack(i.aux);
    let lists: &[Vec<u32>] = ctx.env.lists;
    let Some(slots) = lists.get(i.imm as usize) else {
        return Err(fault("internal error: `mma` lost its registers".into()));
    };
    let s = cfg.shape();
    let (m, n, k) = (s.m as usize, s.n as usize, s.k as usize);
    let [nd, na, nb, nc] = cfg.counts();
    // the layout of 8-bit (one element per byte) or 4-bit multiplicands
    let proxy = if cfg.packed() { Elem::U4 } else { Elem::E4m3 };
    let layout = Layout {
        shape: s,
        a: proxy,
        row_a: true,
        col_b: true,
    };
    let mut av = [0.0f64; 16 * 128];
    let mut bv = [0.0f64; 128 * 8];
    let mut cv = [0.0f64; 16 * 8];
    let mut dv = [0.0f64; 16 * 8];
    let per = proxy.per_reg();
    let w = proxy.bits();
    let elem = |t: KindType, bits: u64| {
        if cfg.packed() {
            mk::e2m1(bits)
        } else {
            t.value(bits)
        }
    };
    // sparse A: `mma.sp`'s decompression with the layout and sparsity of the proxy type
    // (`.e4m3` 2:4 over 8-bit containers, `.u4` pair-wise 4:8 over packed `.e2m1`)
    let meta_slots = cfg.sparse as usize;
    if cfg.sparse {
        let meta = &ctx.regs[slots[nd + na + nb + nc] as usize];
        let a: [&crate::program::Lanes; 4] =
            std::array::from_fn(|r| &ctx.regs[slots[nd + r] as usize]);
        crate::ops_matrix::sparse_a_expand(s, proxy, true, 0, meta, &a, |row, col, bits| {
            if let Some(v) = av.get_mut(row * k + col) {
                *v = elem(cfg.a, bits);
            }
        })?;
    }
    let dense_a = (!cfg.sparse).then_some((Frag::A, cfg.a, nd, na, k, &mut av[..]));
    for (f, t, first, count, cols, out) in
        dense_a
            .into_iter()
            .chain([(Frag::B, cfg.b, nd + na, nb, n, &mut bv[..])])
    {
        for r in 0..count {
            let lanes = &ctx.regs[slots[first + r] as usize];
            for (lane, &v) in lanes.iter().enumerate() {
                for sub in 0..per {
                    let bits = v >> (sub * w) & ((1 << w) - 1);
                    let (_, row, col) =
                        matrix::position(&layout, proxy, f, lane as u32, r as u32 * per + sub);
                    out[row as usize * cols + col as usize] = elem(t, bits);
                }
            }
        }
    }
    let acc = cfg.acc();
    let (cper, cbits) = (acc.per_reg(), acc.bits());
    for r in 0..nc {
        let lanes = &ctx.regs[slots[nd + na + nb + r] as usize];
        for (lane, &v) in lanes.iter().enumerate() {
            for sub in 0..cper {
                let b = v >> (sub * cbits) & ((1 << cbits) - 1);
                let (_, row, col) =
                    matrix::position(&layout, acc, Frag::C, lane as u32, r as u32 * cper + sub);
                cv[row as usize * n + col as usize] = acc.value(b);
            }
        }
    }
    if let Some((vec, st)) = cfg.scale {
        let base = nd + na + nb + nc + meta_slots;
        let [sfa, bida, tida, sfb, bidb, tidb] = [0, 1, 2, 3, 4, 5].map(|q| slots[base + q]);
        let sel = [
            uniform(ctx, bida, "byte-id-a")?,
            uniform(ctx, tida, "thread-id-a")?,
            uniform(ctx, bidb, "byte-id-b")?,
            uniform(ctx, tidb, "thread-id-b")?,
        ];
        if !mk::selectors_valid(vec, sel[0], sel[1], true)
            || !mk::selectors_valid(vec, sel[2], sel[3], false)
        {
            let bytes = match vec {
                1 => "0 to 3",
                2 => "0 or 2",
                _ => "0",
            };
            return Err(fault(format!(
                "`mma` block scaling with `.scale_vec::{vec}X`: selectors {{byte-id-a, \
                 thread-id-a}} = {{{}, {}}} and {{byte-id-b, thread-id-b}} = {{{}, {}}} are \
                 out of range (byte-id {bytes}, thread-id-a 0 or 1, thread-id-b 0 to 3)",
                sel[0], sel[1], sel[2], sel[3]
            )));
        }
        let (ba, ta, bb, tb) = (sel[0] as u32, sel[1] as u32, sel[2] as u32, sel[3] as u32);
        let sfa = &ctx.regs[sfa as usize];
        let sfb = &ctx.regs[sfb as usize];
        for kk in 0..k {
            let chunk = mk::chunk_of(kk as u32, k as u32, vec);
            for row in 0..m {
                let (lane, byte) = mk::scale_a_source(row as u32, chunk, ba, ta);
                av[row * k + kk] *= st.value(sfa[lane as usize] >> (8 * byte));
            }
            for col in 0..n {
                let (lane, byte) = mk::scale_b_source(col as u32, chunk, bb, tb);
                bv[kk * n + col] *= st.value(sfb[lane as usize] >> (8 * byte));
            }
        }
    }
    matrix::mma(s, 1, Product::Mul, &av, &bv, &cv, &mut dv);
    let mut out = [[0u64; 32]; 4];
    for (r, reg) in out.iter_mut().enumerate().take(nd) {
        for (lane, o) in reg.iter_mut().enumerate() {
            for sub in 0..cper {
                let (_, row, col) =
                    matrix::position(&layout, acc, Frag::C, lane as u32, r as u32 * cper + sub);
                let v = dv[row as usize * n + col as usize];
                *o |= matrix::round_result(acc, v, false) << (sub * cbits);
            }
        }
    }
    for (r, vals) in out.iter().enumerate().take(nd) {
        ctx.regs[slots[r] as usize] = *vals;
    }
    Ok(())
}

/// The `.b8` shapes of `ldmatrix`/`stmatrix`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum B8Shape {
    /// `ldmatrix .m16n16 .trans`.
    M16n16,
    /// `ldmatrix .m8n16`.
    M8n16,
    /// `stmatrix .m16n8 .trans`.
    M16n8,
}

/// Packs a `.b8` `ldmatrix`/`stmatrix` configuration: matrices, shape, source format, space.
pub(crate) fn b8_cfg(num: u32, shape: B8Shape, fmt: SrcFmt, space: u64) -> u64 {
    let sh = match shape {
        B8Shape::M16n16 => 0,
        B8Shape::M8n16 => 1,
        B8Shape::M16n8 => 2,
    };
    let f = match fmt {
        SrcFmt::B8 => 0,
        SrcFmt::B6x16P32 => 1,
        SrcFmt::B4x16P64 => 2,
    };
    num as u64 | sh << 3 | f << 5 | space << 8
}

/// The 16-byte row at the address lane `lane` holds.
fn load_row(
    ctx: &Ctx<'_>,
    i: &Insn,
    space: crate::program::Space,
    lane: usize,
) -> Result<[u8; 16], Box<Fault>> {
    let addr = ctx.regs[i.a as usize][lane].wrapping_add(i.imm as u64);
    let t = resolve(ctx, space, addr, 16, lane, false)?;
    let (lo, hi) = (read(ctx, &t, lane, 0, 8), read(ctx, &t, lane, 8, 8));
    Ok(std::array::from_fn(|b| {
        (if b < 8 {
            lo >> (8 * b)
        } else {
            hi >> (8 * (b - 8))
        }) as u8
    }))
}

/// `ldmatrix.sync.aligned.m16n16.{x1,x2}.trans` and `.m8n16.{x1,x2,x4}`, `.b8` or
/// `.b8x16.{b6x16_p32,b4x16_p64}` (see the module documentation).
pub(crate) fn ldmatrix_b8(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("ldmatrix", mask));
    }
    let num = (i.aux & 7) as usize;
    let wide = i.aux >> 3 & 3 == 0;
    let fmt = match i.aux >> 5 & 3 {
        0 => SrcFmt::B8,
        1 => SrcFmt::B6x16P32,
        _ => SrcFmt::B4x16P64,
    };
    let space = space_of(i.aux >> 8);
    let mut regs = [[0u64; 32]; 4];
    if wide {
        for j in 0..num {
            let mut rows = [[0u8; 16]; 16];
            for (r, row) in rows.iter_mut().enumerate() {
                *row = mk::unpack_row(fmt, load_row(ctx, i, space, 16 * j + r)?);
            }
            for t in 0..32 {
                for half in 0..2 {
                    let col = t / 4 + 8 * half;
                    regs[2 * j + half][t] = (0..4)
                        .map(|b| (rows[4 * (t % 4) + b][col] as u64) << (8 * b))
                        .sum();
                }
            }
        }
    } else {
        for (j, reg) in regs.iter_mut().enumerate().take(num) {
            let mut rows = [[0u8; 16]; 8];
            for (r, row) in rows.iter_mut().enumerate() {
                *row = mk::unpack_row(fmt, load_row(ctx, i, space, 8 * j + r)?);
            }
            for (t, o) in reg.iter_mut().enumerate() {
                *o = (0..4)
                    .map(|b| (rows[t / 4][4 * (t % 4) + b] as u64) << (8 * b))
                    .sum();
            }
        }
    }
    let nregs = if wide { 2 * num } else { num };
    for (j, reg) in regs.iter().enumerate().take(nregs) {
        ctx.regs[i.v[j] as usize] = *reg;
    }
    Ok(())
}

/// `stmatrix.sync.aligned.m16n8.{x1,x2,x4}.trans.b8` (see the module documentation).
pub(crate) fn stmatrix_b8(ctx: &mut Ctx<'_>, i: &Insn, mask: u32) -> MemResult {
    if mask != FULL {
        return Err(not_whole_warp("stmatrix", mask));
    }
    let (num, targets) = crate::ops_matrix::stmatrix_rows(ctx, i)?;
    for j in 0..num {
        let reg = ctx.regs[i.v[j] as usize];
        for r in 0..8 {
            let lane = 8 * j + r;
            // byte c of row r: element (c, r) of the 16x8 matrix the registers hold
            let byte =
                |c: usize| (reg[4 * (c % 8) + r / 2] >> (8 * ((r % 2) + 2 * (c / 8)))) & 0xFF;
            let lo: u64 = (0..8).map(|c| byte(c) << (8 * c)).sum();
            let hi: u64 = (8..16).map(|c| byte(c) << (8 * (c - 8))).sum();
            write(ctx, &targets[lane], lane, 0, 8, lo);
            write(ctx, &targets[lane], lane, 8, 8, hi);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_cfg_round_trips() {
        for cfg in [
            KindCfg {
                kind: Kind::F8f6f4,
                a: KindType::E2m1,
                b: KindType::E3m2,
                f16_acc: true,
                scale: None,
                sparse: false,
            },
            KindCfg {
                kind: Kind::Mxf4nvf4,
                a: KindType::E2m1,
                b: KindType::E2m1,
                f16_acc: false,
                scale: Some((4, ScaleType::Ue4m3)),
                sparse: true,
            },
            KindCfg {
                kind: Kind::Mxf8f6f4,
                a: KindType::E5m2,
                b: KindType::E2m3,
                f16_acc: false,
                scale: Some((1, ScaleType::Ue8m0)),
                sparse: true,
            },
            KindCfg {
                kind: Kind::F8f6f4,
                a: KindType::E4m3,
                b: KindType::E2m1,
                f16_acc: true,
                scale: None,
                sparse: true,
            },
        ] {
            assert_eq!(KindCfg::unpack(cfg.pack()), cfg);
        }
    }
}
