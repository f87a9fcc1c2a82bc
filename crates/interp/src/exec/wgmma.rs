//! Warpgroup matrix multiply-accumulate (sm_90a): `wgmma.mma_async`, `wgmma.commit_group`,
//! `wgmma.wait_group` ([`Op::Wgmma`](crate::program::Op::Wgmma); `wgmma.fence` is a no-op,
//! since the operands are read when the operation runs, after every register write before it).
//!
//! **The warpgroup.** A warpgroup is four consecutive warps (warps `4g`…`4g+3`, 128 threads);
//! `wgmma.mma_async` is `.sync.aligned` across it. A warp that reaches it with any lane missing
//! (guarded off, on another path, exited) is reported as divergent. Otherwise it waits, like at
//! a barrier, until all four warps have reached the same instruction; a warp that reaches a
//! different `wgmma.mma_async` meanwhile is reported; a warp that never comes (it exited, or
//! waits elsewhere) makes the CTA's deadlock report; a CTA whose last warpgroup has fewer than
//! four warps faults at the instruction.
//!
//! **When results appear.** The last warp to arrive computes the product, reading A and B from
//! shared memory (through the descriptors) and the register operands of all 128 threads, and
//! writes the accumulators of all four warps at once: the operation completes when the
//! warpgroup has issued it. The ISA makes the accumulators undefined from `wgmma.mma_async` to
//! the `wgmma.wait_group` that covers it, but ptxas (13.x) settles that: where a program reads
//! or writes those registers before the wait, it inserts the wait itself ("wgmma.wait_group is
//! injected … to allow use of registers defined by GMMA", info C7517), so on a GPU such a read
//! sees the product, as here, and a later write wins, as here. Operations chained into the same
//! accumulators without a wait see each other's results, as the ISA specifies.
//! `wgmma.commit_group` and `wgmma.wait_group` therefore only check that the whole warp
//! executes them. Shared memory is read at issue: a program that overwrites an operand before
//! the wait (a race on a GPU) gets the product of the old contents.
//!
//! **Numerics**: those of `mma` ([`ptx_semantics::matrix`]: exact inputs, exact products, an
//! `f64` sum of C then `k` = 0, 1, … rounded once to nearest even; integers exact, wrapping or
//! with `.satfinite` clamping). `imm-scale-a/b = -1` negate A or B exactly; `scale-d` false
//! (per thread) takes C as +0.
//!
//! **Descriptors** (64 bits): start address bits 0–13, leading-dimension byte offset (LBO)
//! bits 16–29, stride-dimension byte offset (SBO) bits 32–45, all in units of 16 bytes; base
//! offset bits 49–51; swizzle bits 62–63 (0 none, 1 128B, 2 64B, 3 32B). A matrix is made of
//! core matrices of 8 rows of 16 bytes. K-major (the default; A `.row`, B `.col`): without
//! swizzle, byte `kb` of row `r` is at `start + (r%8)·16 + (r/8)·SBO + (kb%16) + (kb/16)·LBO`;
//! with a swizzle of width `W` at `start + (r%8)·W + (r/8)·SBO + kb`. MN-major (`imm-trans`):
//! without swizzle, byte `b` along M/N of row `k` at `start + (b%16) + (b/16)·SBO + (k%8)·16 +
//! (k/8)·LBO`; with a swizzle at `start + (b%W) + (b/W)·LBO + (k%8)·W + (k/8)·SBO`. The swizzle
//! then XORs address bits 7… into bits 4… (1, 2 or 3 bits for 32B, 64B, 128B), on the
//! shared-memory address itself, so the pattern repeats every 256, 512 or 1024 bytes; a
//! nonzero base offset (a pattern that starts `base` 128-byte rows into its block) takes the
//! row within the pattern as `(address >> 7) - base`. A K-major swizzled operand holds at most
//! `W` bytes of K (`LBO` is unused there); a sparse form whose B needs more (64 bytes of K
//! with a 32-byte swizzle) faults.
//!
//! **Sparse A** (`wgmma.mma_async.sp`): A is stored compressed, 64 × K/2 elements laid out
//! (in registers or through its descriptor) exactly like a dense A of K/2 columns; the
//! metadata register of the threads that the selector names places each stored element in
//! its chunk of four (`.tf32`: two) columns ([`meta_position`], [`sparse_columns`]). The
//! product sums C and then the stored elements in K order; pruned elements take no part.
//! `.b1` (`.m64nNk256 .and.popc`): each product is `a AND b`, the sum a population count.

use super::cta::Cta;
use super::fault::ExecError;
use crate::mem;
use crate::program::{for_lanes, Fault, FaultKind, Insn, FULL};
use ptx_semantics::matrix::{self, Elem, Frag, Layout, Product, Shape};

/// What an [`Op::Wgmma`](crate::program::Op::Wgmma) does (`aux & 3`).
pub(crate) const KIND_MMA: u64 = 0;
/// `wgmma.commit_group`.
pub(crate) const KIND_COMMIT: u64 = 1;
/// `wgmma.wait_group N` (`N` in `imm`).
pub(crate) const KIND_WAIT: u64 = 2;

/// The name of an `Op::Wgmma` for disassembly.
pub(crate) fn kind_name(aux: u64) -> &'static str {
    match aux & 3 {
        KIND_MMA => "wgmma.mma_async",
        KIND_COMMIT => "wgmma.commit_group",
        _ => "wgmma.wait_group",
    }
}

/// The configuration of a `wgmma.mma_async`, packed into its `aux`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WgCfg {
    /// N (8…256, a multiple of 8).
    pub n: u32,
    /// d, a, b.
    pub types: [Elem; 3],
    /// A from registers (else from a descriptor in `Insn::a`).
    pub a_regs: bool,
    pub neg_a: bool,
    pub neg_b: bool,
    /// A is M-major (`imm-trans-a` = 1).
    pub trans_a: bool,
    /// B is N-major (`imm-trans-b` = 1).
    pub trans_b: bool,
    pub satfinite: bool,
    /// `wgmma.mma_async.sp`: A is 2:4 (`.tf32` 1:2) structured sparse, stored compressed,
    /// with its metadata register in `Insn::v[2]`.
    pub sparse: bool,
    /// The sparsity selector (`sp-sel`, 0 or 1).
    pub sel: u32,
}

impl WgCfg {
    pub(crate) fn pack(&self) -> u64 {
        let [d, a, b] = self.types;
        KIND_MMA
            | ((self.n / 8) as u64) << 2
            | d.code() << 8
            | a.code() << 12
            | b.code() << 16
            | (self.a_regs as u64) << 20
            | (self.neg_a as u64) << 21
            | (self.neg_b as u64) << 22
            | (self.trans_a as u64) << 23
            | (self.trans_b as u64) << 24
            | (self.satfinite as u64) << 25
            | (self.sparse as u64) << 26
            | ((self.sel & 3) as u64) << 27
    }

    pub(crate) fn unpack(aux: u64) -> WgCfg {
        WgCfg {
            n: ((aux >> 2) & 63) as u32 * 8,
            types: [
                Elem::from_code(aux >> 8 & 15),
                Elem::from_code(aux >> 12 & 15),
                Elem::from_code(aux >> 16 & 15),
            ],
            a_regs: aux >> 20 & 1 != 0,
            neg_a: aux >> 21 & 1 != 0,
            neg_b: aux >> 22 & 1 != 0,
            trans_a: aux >> 23 & 1 != 0,
            trans_b: aux >> 24 & 1 != 0,
            satfinite: aux >> 25 & 1 != 0,
            sparse: aux >> 26 & 1 != 0,
            sel: (aux >> 27 & 3) as u32,
        }
    }

    /// K: 32 bytes of A's type (`.f16`/`.bf16` 16, `.tf32` 8, 8-bit types 32, `.b1` 256),
    /// twice that for the sparse forms.
    pub(crate) fn k(&self) -> u32 {
        self.ka() * if self.sparse { 2 } else { 1 }
    }

    /// The columns of A as stored (32 bytes of A's type): K, or K/2 when A is sparse.
    pub(crate) fn ka(&self) -> u32 {
        256 / self.types[1].bits()
    }

    /// Registers of D per thread.
    pub(crate) fn d_regs(&self) -> u32 {
        64 * self.n / 128 / self.types[0].per_reg()
    }
}

/// Registers of A per thread when A is in registers (16 rows × 32 bytes per warp).
pub(crate) const A_REGS: u32 = 4;

/// A CTA's warpgroup state.
#[derive(Default)]
pub(crate) struct WgState {
    /// Per warpgroup: the warps (bits 0–3) waiting at the `wgmma.mma_async` at `pc`.
    arrived: Vec<(u8, u32)>,
}

impl WgState {
    /// Per warpgroup with waiting warps (for deadlock reports): its index, the threads
    /// waiting, and the instruction.
    pub(super) fn waiting(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.arrived
            .iter()
            .enumerate()
            .filter(|(_, (bits, _))| *bits != 0)
            .map(|(g, &(bits, pc))| (g as u32, 32 * bits.count_ones(), pc))
    }
}

fn other(msg: String) -> Box<Fault> {
    Box::new(Fault {
        kind: FaultKind::Other(msg),
        lane: None,
    })
}

/// The byte offset in shared memory of element (`mn`, `k`) of an operand whose elements have
/// `eb` bytes, from descriptor `desc`; `mn_major`: the operand is M/N-major (transposed).
pub(crate) fn desc_addr(desc: u64, mn_major: bool, mn: u32, k: u32, eb: u32) -> u64 {
    let start = (desc & 0x3FFF) << 4;
    let lbo = (desc >> 16 & 0x3FFF) << 4;
    let sbo = (desc >> 32 & 0x3FFF) << 4;
    let width: u64 = match desc >> 62 {
        1 => 128,
        2 => 64,
        3 => 32,
        _ => 0,
    };
    let (mn, k) = (mn as u64, k as u64);
    let off = if !mn_major {
        let kb = k * eb as u64;
        if width == 0 {
            (mn % 8) * 16 + (mn / 8) * sbo + kb % 16 + (kb / 16) * lbo
        } else {
            (mn % 8) * width + (mn / 8) * sbo + kb
        }
    } else {
        let b = mn * eb as u64;
        if width == 0 {
            b % 16 + (b / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo
        } else {
            b % width + (b / width) * lbo + (k % 8) * width + (k / 8) * sbo
        }
    };
    swizzle(start + off, width, desc >> 49 & 7)
}

/// The swizzle of width `width` bytes (0: none) applied to shared address `a` of a matrix
/// whose repeating pattern starts at 128-byte row `base` (the descriptor's base offset, the
/// pattern's start address bits 7–9): the row within the pattern, `(a >> 7) - base`, XORs
/// into the 16-byte chunk index (bits 4…). With `base` 0 the pattern is aligned to its
/// 256/512/1024 bytes and the row is the address's own bits 7…; a base offset has no effect
/// without a swizzle.
#[inline]
pub(crate) fn swizzle(a: u64, width: u64, base: u64) -> u64 {
    let bits = match width {
        128 => 7,
        64 => 3,
        32 => 1,
        _ => 0,
    };
    a ^ (((a >> 7).wrapping_sub(base) & bits) << 4)
}

/// (row, column) of element `i` of a thread's D fragment in warp `j` of the warpgroup, lane
/// `lane`: the `mma` `.m16n8` accumulator layout of rows `16j`…`16j+15`, repeated every 8
/// columns (4 elements).
pub(crate) fn d_position(j: u32, lane: u32, i: u32) -> (u32, u32) {
    let (gid, tig) = (lane >> 2, lane & 3);
    let ii = i % 4;
    (
        16 * j + gid + 8 * (ii / 2),
        8 * (i / 4) + 2 * tig + (ii & 1),
    )
}

/// (row, column) of element `i` of a thread's A fragment (A in registers) in warp `j`: the
/// `mma` `.m16nXk` A layout of rows `16j`…`16j+15`.
pub(crate) fn a_position(at: Elem, j: u32, lane: u32, i: u32) -> (u32, u32) {
    let k = 256 / at.bits();
    let l = Layout {
        shape: Shape { m: 16, n: 8, k },
        a: at,
        row_a: true,
        col_b: true,
    };
    let (_, r, c) = matrix::position(&l, at, Frag::A, lane, i);
    (16 * j + r, c)
}

impl<'s, 'a> Cta<'s, 'a> {
    /// Runs an [`Op::Wgmma`](crate::program::Op::Wgmma) for lanes `m` of group `mask` of
    /// warp `wi`. (Cold and out of line: `control`, which dispatches it, stays small enough
    /// to be inlined into the dispatch loop.)
    #[cold]
    #[inline(never)]
    pub(super) fn wgmma(&mut self, wi: usize, pc: u32, mask: u32, m: u32) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let nw = self.warps.len();
        if self.wg.arrived.len() != nw.div_ceil(4) {
            self.wg.arrived = vec![(0, 0); nw.div_ceil(4)];
        }
        if m == 0 {
            self.warps[wi].cur = Some((pc + 1, mask));
            return Ok(());
        }
        let name = kind_name(insn.aux);
        if m != FULL {
            let e = other(format!(
                "divergent `{name}`: it is `.sync.aligned`, so all 32 threads of each warp of \
                 the warpgroup must execute it together, but lanes {:#010x} (a bit per lane) of \
                 this warp did not",
                !m
            ));
            return Err(self.fault(wi, insn, e, m));
        }
        match insn.aux & 3 {
            KIND_COMMIT | KIND_WAIT => {
                self.warps[wi].cur = Some((pc + 1, mask));
                Ok(())
            }
            _ => self.wgmma_arrive(wi, pc, mask),
        }
    }

    fn wgmma_arrive(&mut self, wi: usize, pc: u32, mask: u32) -> Result<(), ExecError> {
        let insn = &self.sh.prog.code[pc as usize];
        let g = wi / 4;
        if 4 * g + 4 > self.warps.len() {
            let e = other(format!(
                "`wgmma.mma_async` needs the four warps of a warpgroup (128 threads), but this \
                 block of {} threads has only {} warp(s) in warpgroup {g}",
                self.nthreads,
                self.warps.len() - 4 * g
            ));
            return Err(self.fault(wi, insn, e, mask));
        }
        let (bits, at) = self.wg.arrived[g];
        if bits != 0 && at != pc {
            let other_insn = &self.sh.prog.code[at as usize];
            let e = other(format!(
                "divergent `wgmma.mma_async`: warps of warpgroup {g} reached different \
                 instances (this one and instruction {} of the same function); all 128 threads \
                 must execute the same one",
                other_insn.inst
            ));
            return Err(self.fault(wi, insn, e, mask));
        }
        let bits = bits | 1 << (wi % 4);
        self.wg.arrived[g] = (bits, pc);
        // wait, like at a barrier
        let w = &mut self.warps[wi];
        w.barrier |= FULL;
        w.ready &= !FULL;
        for_lanes(FULL, |l| {
            w.bar_pc[l] = pc;
            w.pcs[l] = pc + 1;
        });
        w.cur = None;
        if bits != 0xF {
            return Ok(());
        }
        self.wg.arrived[g] = (0, 0);
        if let Err(e) = self.wgmma_compute(g, insn) {
            return Err(self.fault(wi, insn, e, FULL));
        }
        for wj in 4 * g..4 * g + 4 {
            let w = &mut self.warps[wj];
            w.barrier &= !FULL;
            w.ready |= FULL;
            w.cur = Some((pc + 1, FULL));
            w.others_min = u32::MAX;
            w.run_len = 0;
        }
        Ok(())
    }

    /// The product of warpgroup `g` for `insn`, written into each warp's accumulators.
    fn wgmma_compute(&mut self, g: usize, insn: &Insn) -> Result<(), Box<Fault>> {
        let cfg = WgCfg::unpack(insn.aux);
        let [dt, at, bt] = cfg.types;
        let (mm, n, k, ka) = (64u32, cfg.n, cfg.k(), cfg.ka());
        let slots = &self.sh.prog.tables[insn.c as usize];
        let nd = cfg.d_regs() as usize;
        let warps = &self.warps[4 * g..4 * g + 4];
        // a descriptor operand: the same in all 128 threads
        let desc = |slot: u32, what: &str| -> Result<u64, Box<Fault>> {
            let v = warps[0].regs[slot as usize][0];
            if warps
                .iter()
                .any(|w| w.regs[slot as usize].iter().any(|&x| x != v))
            {
                return Err(other(format!(
                    "the matrix descriptor of {what} differs between threads of the \
                     warpgroup; it must be the same in all 128"
                )));
            }
            Ok(v)
        };
        let shared_size = self.sh.env.shared_size;
        let shared = &self.shared;
        // element (`mn`, `kk`) of an operand; a `.b1` element is bit `kk mod 8` of byte
        // `kk div 8` of the row
        let load = |desc: u64, mn_major: bool, mn: u32, kk: u32, e: Elem, what: &str| {
            let (ek, eb, bit) = if e == Elem::B1 {
                (kk / 8, 1, kk % 8)
            } else {
                (kk, e.bits() / 8, 0)
            };
            let width = desc_width(desc);
            if !mn_major && width != 0 && ek * eb >= width as u32 {
                return Err(other(format!(
                    "{what} is K-major with a {width}-byte swizzle, but this operation reads \
                     byte {} of K of each row: the ISA places no more than {width} bytes of K \
                     in a swizzled K-major operand (descriptor {desc:#x})",
                    ek * eb
                )));
            }
            let addr = desc_addr(desc, mn_major, mn, ek, eb);
            if addr + eb as u64 > shared_size {
                return Err(other(format!(
                    "{what} element ({mn}, {kk}) is at shared-memory address {addr:#x}, past \
                     the end of the CTA's {shared_size} bytes (descriptor {desc:#x})"
                )));
            }
            Ok(e.value(mem::load(&shared[..], addr, eb) >> bit))
        };
        let (sa, sb) = (
            if cfg.neg_a { -1.0 } else { 1.0 },
            if cfg.neg_b { -1.0 } else { 1.0 },
        );
        // A as stored: 64 × ka (the compressed matrix when sparse)
        let mut av = vec![0.0f64; (mm * ka) as usize];
        if cfg.a_regs {
            let per = at.per_reg();
            let emask = (1u64 << at.bits()) - 1;
            for (j, w) in warps.iter().enumerate() {
                for r in 0..A_REGS {
                    let lanes = &w.regs[slots[nd + r as usize] as usize];
                    for (lane, &v) in lanes.iter().enumerate() {
                        for sub in 0..per {
                            let (row, col) = a_position(at, j as u32, lane as u32, r * per + sub);
                            let b = v >> (sub * at.bits()) & emask;
                            av[(row * ka + col) as usize] = sa * at.value(b);
                        }
                    }
                }
            }
        } else {
            let d = desc(insn.a, "A")?;
            for row in 0..mm {
                for kk in 0..ka {
                    av[(row * ka + kk) as usize] = sa * load(d, cfg.trans_a, row, kk, at, "A")?;
                }
            }
        }
        // sparse: where each stored element of A sits in its row of K columns
        let acols = if cfg.sparse {
            Some(sparse_columns(&cfg, warps, insn.v[2])?)
        } else {
            None
        };
        let mut bv = vec![0.0f64; (k * n) as usize];
        let d = desc(insn.b, "B")?;
        for kk in 0..k {
            for col in 0..n {
                bv[(kk * n + col) as usize] = sb * load(d, cfg.trans_b, col, kk, bt, "B")?;
            }
        }
        // C: the accumulators; +0 where scale-d is false
        let mut cv = vec![0.0f64; (mm * n) as usize];
        let per = dt.per_reg();
        let emask = if dt.bits() >= 64 {
            u64::MAX
        } else {
            (1u64 << dt.bits()) - 1
        };
        let (sd_slot, sd_neg) = (insn.v[0], insn.v[1] != 0);
        for (j, w) in warps.iter().enumerate() {
            let scale = w.preds[sd_slot as usize] ^ if sd_neg { u32::MAX } else { 0 };
            for (r, &slot) in slots.iter().enumerate().take(nd) {
                let lanes = &w.regs[slot as usize];
                for (lane, &v) in lanes.iter().enumerate() {
                    if scale >> lane & 1 == 0 {
                        continue;
                    }
                    for sub in 0..per {
                        let (row, col) = d_position(j as u32, lane as u32, r as u32 * per + sub);
                        let b = v >> (sub * dt.bits()) & emask;
                        cv[(row * n + col) as usize] = dt.value(b);
                    }
                }
            }
        }
        let mut dv = vec![0.0f64; (mm * n) as usize];
        match &acols {
            None => {
                let prod = if at == Elem::B1 {
                    Product::And
                } else {
                    Product::Mul
                };
                matrix::mma(Shape { m: mm, n, k }, 1, prod, &av, &bv, &cv, &mut dv);
            }
            Some(cols) => {
                // the stored elements only (the pruned ones take no part), in K order
                for row in 0..mm as usize {
                    let (ar, cr) = (
                        &av[row * ka as usize..(row + 1) * ka as usize],
                        &cols[row * ka as usize..(row + 1) * ka as usize],
                    );
                    let mut order: Vec<usize> = (0..ka as usize).collect();
                    order.sort_by_key(|&i| cr[i]);
                    for col in 0..n as usize {
                        let mut acc = cv[row * n as usize + col];
                        for &i in &order {
                            acc += ar[i] * bv[cr[i] as usize * n as usize + col];
                        }
                        dv[row * n as usize + col] = acc;
                    }
                }
            }
        }
        for j in 0..4 {
            let wj = 4 * g + j;
            for (r, &slot) in slots.iter().enumerate().take(nd) {
                let mut vals = [0u64; 32];
                for (lane, o) in vals.iter_mut().enumerate() {
                    for sub in 0..per {
                        let (row, col) = d_position(j as u32, lane as u32, r as u32 * per + sub);
                        let x = dv[(row * n + col) as usize];
                        *o |= matrix::round_result(dt, x, cfg.satfinite) << (sub * dt.bits());
                    }
                }
                self.warps[wj].regs[slot as usize] = vals;
            }
        }
        Ok(())
    }
}

/// The swizzle width in bytes of descriptor `desc` (0: none).
fn desc_width(desc: u64) -> u64 {
    match desc >> 62 {
        1 => 128,
        2 => 64,
        3 => 32,
        _ => 0,
    }
}

/// Where the metadata of chunk `c` of row `r` (0…15) of a warp's 16 rows of a sparse A sits:
/// the lane whose metadata register holds it, and the bit of its 4-bit field. The ISA's
/// metadata figures (`mma.sp` `.m16n8k32` `.f16`/`.bf16` and `.m16n8k16` `.tf32`, which the
/// `wgmma` sections reuse): a pair of lanes `2·sel`, `2·sel + 1` of each group of four holds
/// the group's rows `r` (bits 0–15) and `r + 8` (bits 16–31), the first lane chunks 0–3,
/// the second chunks 4–7, four bits a chunk. 8-bit types (`.m16n8k64`): every lane holds
/// metadata, lane `4·(r mod 8) + r div 8 + 2·(c div 8)`, chunk `c` at bit `4·(c mod 8)`.
pub(crate) fn meta_position(at: Elem, sel: u32, r: u32, c: u32) -> (u32, u32) {
    if at.bits() == 8 {
        (4 * (r % 8) + r / 8 + 2 * (c / 8), 4 * (c % 8))
    } else {
        (4 * (r % 8) + 2 * sel + c / 4, 16 * (r / 8) + 4 * (c % 4))
    }
}

/// The column (in K) of every stored element of a sparse A (64 × K/2, row-major), from the
/// metadata registers (slot `meta`) of the warpgroup's threads. A chunk of four columns
/// (`.tf32`: two) holds two stored elements (one), whose positions the chunk's 4-bit field
/// gives: two 2-bit indices, the first element's in the low bits (`.tf32`: 0b0100 for the
/// first column, 0b1110 for the second, as the pair of 16-bit halves they cover). The ISA
/// leaves other fields undefined (both indices equal; `.tf32` any other value): a fault.
fn sparse_columns(
    cfg: &WgCfg,
    warps: &[super::warp::Warp],
    meta: u32,
) -> Result<Vec<u32>, Box<Fault>> {
    let at = cfg.types[1];
    let ka = cfg.ka();
    let tf32 = at == Elem::Tf32;
    let mut cols = vec![0u32; (64 * ka) as usize];
    for (j, w) in warps.iter().enumerate() {
        let m = &w.regs[meta as usize];
        for r in 0..16 {
            let row = 16 * j as u32 + r;
            // chunks per row: 8 (16-bit, tf32), 16 (8-bit)
            let chunks = if tf32 { ka } else { ka / 2 };
            for c in 0..chunks {
                let (lane, bit) = meta_position(at, cfg.sel, r, c);
                let f = (m[lane as usize] >> bit & 15) as u32;
                let bad = |why: &str| {
                    other(format!(
                        "invalid sparsity metadata {f:#06b} for chunk {c} of row {row} of A (bits \
                         {}–{bit} of the metadata register of lane {lane} of warp {j} of the \
                         warpgroup): {why}; the ISA leaves the result undefined",
                        bit + 3
                    ))
                };
                let base = (row * ka) as usize;
                if tf32 {
                    let pos = match f {
                        0b0100 => 0,
                        0b1110 => 1,
                        _ => return Err(bad(".tf32 takes 0b0100 or 0b1110")),
                    };
                    cols[base + c as usize] = 2 * c + pos;
                } else {
                    let (i0, i1) = (f & 3, f >> 2);
                    if i0 == i1 {
                        return Err(bad("both elements of the chunk have the same index"));
                    }
                    cols[base + 2 * c as usize] = 4 * c + i0;
                    cols[base + 2 * c as usize + 1] = 4 * c + i1;
                }
            }
        }
    }
    Ok(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_round_trips() {
        let c = WgCfg {
            n: 256,
            types: [Elem::F32, Elem::E4m3, Elem::E5m2],
            a_regs: true,
            neg_a: true,
            neg_b: false,
            trans_a: false,
            trans_b: true,
            satfinite: true,
            sparse: true,
            sel: 1,
        };
        assert_eq!(WgCfg::unpack(c.pack()), c);
        assert_eq!(c.k(), 64);
        assert_eq!(c.ka(), 32);
        assert_eq!(c.d_regs(), 128);
    }

    #[test]
    fn swizzles() {
        // the 16-byte chunk index XOR the 128-byte row (mod 8, 4, 2)
        assert_eq!(swizzle(128, 128, 0), 128 + 16);
        assert_eq!(swizzle(7 * 128 + 16, 128, 0), 7 * 128 + 6 * 16);
        assert_eq!(swizzle(3 * 128, 64, 0), 3 * 128 + 3 * 16);
        assert_eq!(swizzle(3 * 128 + 16, 32, 0), 3 * 128);
        assert_eq!(swizzle(2 * 128, 32, 0), 2 * 128);
        assert_eq!(swizzle(5 * 128, 0, 0), 5 * 128);
    }

    #[test]
    fn metadata_fields_cover_the_registers_once() {
        // 8-bit types: the 16 rows × 16 chunks fill all 32 lanes' 32 bits exactly once
        let mut seen = [0u32; 32];
        for r in 0..16 {
            for c in 0..16 {
                let (lane, bit) = meta_position(Elem::S8, 0, r, c);
                assert_eq!(seen[lane as usize] >> bit & 15, 0);
                seen[lane as usize] |= 15 << bit;
            }
        }
        assert!(seen.iter().all(|&m| m == u32::MAX));
        // 16-bit types and .tf32: 16 rows × 8 chunks fill lanes 2s, 2s + 1 of each quad
        for sel in 0..2 {
            let mut seen = [0u32; 32];
            for r in 0..16 {
                for c in 0..8 {
                    let (lane, bit) = meta_position(Elem::F16, sel, r, c);
                    assert_eq!(lane % 4 / 2, sel);
                    assert_eq!(seen[lane as usize] >> bit & 15, 0);
                    seen[lane as usize] |= 15 << bit;
                }
            }
            let full = seen.iter().filter(|&&m| m == u32::MAX).count();
            assert_eq!(full, 16);
        }
        // the ISA's figures: row 0 chunks 0-3 in T0 bits 0-15, row 8 in T0 bits 16-31, row 1
        // in T4 (selector 1: T6, T7); 8-bit: row 8 columns 0-31 in T1, row 0 columns 32-63 in T2
        assert_eq!(meta_position(Elem::F16, 0, 8, 1), (0, 20));
        assert_eq!(meta_position(Elem::Bf16, 1, 1, 4), (7, 0));
        assert_eq!(meta_position(Elem::U8, 0, 8, 7), (1, 28));
        assert_eq!(meta_position(Elem::E4m3, 0, 0, 8), (2, 0));
    }

    #[test]
    fn base_offsets() {
        // a pattern starting at 0x180 (row 3 of a 1024-byte block): its first row is
        // not permuted, its second row swaps chunks 0 and 1
        assert_eq!(swizzle(0x180, 128, 3), 0x180);
        assert_eq!(swizzle(0x200 + 16, 128, 3), 0x200);
        assert_eq!(swizzle(0x180 + 7 * 128, 128, 3), 0x180 + 7 * 128 + 7 * 16);
        assert_eq!(swizzle(0x280, 64, 5), 0x280);
        assert_eq!(swizzle(0x300, 64, 5), 0x310);
        assert_eq!(swizzle(0x80, 32, 1), 0x80);
        assert_eq!(swizzle(0x100, 32, 1), 0x110);
        // no swizzle: no effect
        assert_eq!(swizzle(0x100, 0, 5), 0x100);
    }
}
