//! `tensormap.replace`, `tensormap.cp_fenceproxy` and `st.bulk` (kinds
//! [`k::TMAP_REPLACE`], [`k::TMAP_CP`], [`k::ST_BULK`] of [`crate::program::Op::Async`]).
//!
//! They act at once, in program order, like the plain stores they are to ptxvm (which has one
//! memory proxy: the fences they imply have nothing to order). A tensor map is the 128 bytes
//! of ptxvm's encoding ([`crate::semantics::tensormap`]), 64-byte aligned as `CUtensorMap` is,
//! in global or shared::cta memory; `tensormap.replace` writes one field of it, and the copy
//! that later reads the map checks it.

use super::cta::Cta;
use super::warp::warp_ctx;
use crate::mem;
use crate::ops_async as k;
use crate::ops_move::{oob, resolve, space_of, window_detail, Target};
use crate::program::{Fault, FaultKind, Space};
use crate::semantics::tensormap::{self as tm, Field};

impl<'s, 'a> Cta<'s, 'a> {
    /// Runs the tensor-map instruction or `st.bulk` at `pc` for lane `l` of warp `wi`.
    pub(super) fn tmap_op(&mut self, wi: usize, pc: u32, l: usize) -> Result<(), Fault> {
        let insn = &self.sh.prog.code[pc as usize];
        let aux = insn.aux;
        let reg = |this: &Self, slot: u32| this.warps[wi].regs[slot as usize][l];
        let fault = |msg: String| Fault {
            kind: FaultKind::Other(msg),
            lane: Some(l as u32),
        };
        let addr = |this: &Self, which: u32| {
            let (b, o) = if which == 0 {
                (insn.a, insn.v[0])
            } else {
                (insn.b, insn.v[1])
            };
            reg(this, b).wrapping_add(reg(this, o))
        };
        // address `which` resolved for `bytes` bytes: (global allocation and offset) or
        // (shared offset); `what` names the operand in a fault
        let place = |this: &mut Self, which: u32, bytes: u32, align: u64, what: &str| {
            let a = addr(this, which);
            if a % align != 0 {
                return Err(fault(format!(
                    "{what} at {a:#x} is not {align}-byte aligned"
                )));
            }
            let space = space_of(k::space(aux, which));
            let (warps, shared, sh) = (&mut this.warps, &mut this.shared, this.sh);
            let ctx = warp_ctx(&mut warps[wi], shared, sh);
            match resolve(&ctx, space, a, bytes, l, true)? {
                Target::Global(..) => Ok((Some(a), 0)),
                Target::Shared(off) => Ok((None, off)),
                _ => Err(fault(format!(
                    "{what} at {a:#x} is neither in global nor in shared::cta memory"
                ))),
            }
        };
        match k::kind(aux) {
            k::TMAP_REPLACE => {
                let field = Field::ALL[((aux >> 32) & 0xFF) as usize % Field::ALL.len()];
                let ord = ((aux >> 40) & 0xFF) as u32;
                let mut v = reg(self, insn.c);
                if !matches!(field, Field::GlobalAddress | Field::GlobalStride) {
                    v &= 0xFFFF_FFFF;
                }
                let (g, soff) = place(self, 0, 128, 64, "the tensor map")?;
                let mut b = [0u8; 128];
                match g.and_then(|a| self.sh.env.mem.find(a, 128).map(|al| (al, a))) {
                    Some((al, a)) => b.copy_from_slice(&al.read_bytes(a - al.base, 128)),
                    None => b.copy_from_slice(&shared_bytes(&self.shared, soff, 128)),
                }
                tm::replace(&mut b, field, ord, v).map_err(fault)?;
                self.put_map(g, soff, &b);
            }
            k::TMAP_CP => {
                let (_, src) = place(self, 1, 128, 64, "the source tensor map")?;
                let b = shared_bytes(&self.shared, src, 128);
                let (g, soff) = place(self, 0, 128, 64, "the destination tensor map")?;
                self.put_map(g, soff, &b);
            }
            _ => {
                // st.bulk
                let mut size = reg(self, insn.c);
                if aux & k::SIZE32 != 0 {
                    size &= 0xFFFF_FFFF;
                }
                if size % 8 != 0 {
                    return Err(fault(format!(
                        "the size {size} of st.bulk is not a multiple of 8"
                    )));
                }
                if size == 0 {
                    return Ok(());
                }
                match place(self, 0, 8, 8, "the destination of st.bulk")? {
                    (None, off) => {
                        let len = self.sh.env.shared_size;
                        if off.checked_add(size).is_none_or(|e| e > len) {
                            let n = u32::try_from(size).unwrap_or(u32::MAX);
                            let detail = window_detail(off, n, len, "the block's shared memory");
                            return Err(oob(Space::Shared, off, n, l, detail));
                        }
                        for k in (0..size).step_by(8) {
                            mem::store(&mut self.shared[..], off + k, 8, 0);
                        }
                    }
                    _ => {
                        return Err(fault(
                            "the destination of st.bulk is not in shared::cta memory".into(),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes the 128 bytes of a tensor map at global address `g` (resolved before), or at
    /// shared-memory offset `soff` when `g` is `None`.
    fn put_map(&mut self, g: Option<u64>, soff: u64, b: &[u8]) {
        match g {
            Some(a) => {
                if let Some(al) = self.sh.env.mem.find(a, 128) {
                    al.write_bytes(a - al.base, b);
                }
            }
            None => put_shared(&mut self.shared, soff, b),
        }
    }
}

fn shared_bytes(shared: &[u32], off: u64, len: u64) -> Vec<u8> {
    (0..len)
        .map(|k| mem::load(shared, off + k, 1) as u8)
        .collect()
}

fn put_shared(shared: &mut [u32], off: u64, bytes: &[u8]) {
    for (k, b) in bytes.iter().enumerate() {
        mem::store(shared, off + k as u64, 1, *b as u64);
    }
}
