//! Barriers (`bar.sync`, `bar.arrive`, `bar.red`, `barrier.*`, `bar.warp.sync`) and exits.
//!
//! A barrier counts arriving threads against its expected count (the whole CTA or an explicit
//! count); waiting lanes leave the ready set of their warp until the barrier is released, and
//! `bar.red` combines a predicate over the arrivals. Aligned barriers reached by part of a
//! warp are reported as divergent. Exited threads are never waited for: an exit may release a
//! barrier of the whole CTA.

use super::cta::Cta;
use super::fault::ExecError;
use crate::program::{for_lanes, lane_bits, BarKind, Fault, FaultKind, RedOp};

/// The state of one of a CTA's 16 barriers.
#[derive(Clone, Default)]
pub(super) struct BarState {
    /// Threads arrived.
    pub(super) arrived: u32,
    /// Threads it waits for (set by the first arrival).
    pub(super) expected: u32,
    /// Counts every thread of the CTA (no explicit count): exited threads release it.
    pub(super) all: bool,
    /// The reduction of a `bar.red`.
    pub(super) red_op: Option<RedOp>,
    /// The lanes waiting: (warp, lanes).
    pub(super) waiting: Vec<(usize, u32)>,
    /// The instruction of the first arrival (for deadlock reports).
    pub(super) pc: u32,
    /// `bar.red.popc` so far.
    pub(super) red_popc: u32,
    /// `bar.red.and` so far.
    pub(super) red_and: bool,
    /// `bar.red.or` so far.
    pub(super) red_or: bool,
    /// Where the reduction goes: (warp, lanes, destination slot).
    pub(super) red_dest: Vec<(usize, u32, u32)>,
}

impl BarState {
    /// The state of a barrier nobody has arrived at; the lists keep their capacity.
    pub(super) fn reset(&mut self) {
        let (mut waiting, mut red_dest) = (
            std::mem::take(&mut self.waiting),
            std::mem::take(&mut self.red_dest),
        );
        waiting.clear();
        red_dest.clear();
        *self = BarState {
            waiting,
            red_dest,
            ..BarState::default()
        };
    }
}

impl<'s, 'a> Cta<'s, 'a> {
    pub(super) fn exit_lanes(&mut self, wi: usize, m: u32) -> Result<(), ExecError> {
        let w = &mut self.warps[wi];
        self.exited += (m & !w.exited).count_ones();
        w.exited |= m;
        w.ready &= !m;
        if m != 0 {
            let mut armed = self.armed;
            while armed != 0 {
                self.release_if_complete(armed.trailing_zeros() as usize, wi);
                armed &= armed - 1;
            }
        }
        // Lanes of this warp may be waiting at an aligned barrier while these exit: that is
        // not divergence. An exited thread is no longer expected at any barrier ("since
        // Volta, bar.sync and its derivatives wait for every thread of the block that has not
        // exited"), so `if (i >= n) return; … __syncthreads();` is well-defined wherever the
        // early return splits a warp. (Divergence is a live lane of the warp reaching another
        // barrier, or skipping this one under a guard: see `barrier`.)
        Ok(())
    }

    pub(super) fn barrier(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
        k: u32,
    ) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let bar = &prog.barriers[k as usize];
        let w = &mut self.warps[wi];
        let rest = mask & !m;
        if m == 0 {
            w.cur = Some((pc + 1, mask));
            return Ok(());
        }
        // the common case, the whole group at a `bar.sync` of the whole CTA with nobody of the
        // warp waiting elsewhere, cannot fail any of the checks
        let (id, expected) = if rest == 0 && w.barrier == 0 && bar.whole_cta() {
            (bar.id, self.nthreads)
        } else {
            if bar.kind == BarKind::Warp {
                w.cur = Some((pc + 1, mask));
                return Ok(());
            }
            let first = m.trailing_zeros() as usize;
            let id = match bar.id_slot {
                Some(s) => w.regs[s as usize][first] as u32,
                None => bar.id,
            };
            if id >= 16 {
                let e = Fault {
                    kind: FaultKind::Other(format!("barrier id {id} is out of range (0..15)")),
                    lane: Some(first as u32),
                };
                return Err(self.fault(wi, insn, e, m));
            }
            let expected = match (bar.count_slot, bar.count) {
                (Some(s), _) => w.regs[s as usize][first] as u32,
                (None, Some(c)) => c,
                (None, None) => self.nthreads,
            };
            // aligned barriers: every live lane of the warp must arrive together
            let live = !w.exited;
            if bar.aligned && bar.kind != BarKind::Arrive {
                let others_waiting = w.barrier;
                if others_waiting != 0 {
                    let other_pc = w.bar_pc[others_waiting.trailing_zeros() as usize];
                    if other_pc != pc {
                        // report the barrier the warp reached first
                        let waiting = others_waiting.trailing_zeros() as usize;
                        let first_bar = &prog.code[other_pc as usize];
                        return Err(ExecError::DivergentBarrier {
                            pos: self.pos(wi, waiting, first_bar),
                            arrived: others_waiting.count_ones(),
                            expected: live.count_ones(),
                        });
                    }
                }
                if rest != 0 {
                    // part of the group is guarded off: divergent use of an aligned barrier
                    return Err(ExecError::DivergentBarrier {
                        pos: self.pos(wi, first, insn),
                        arrived: m.count_ones(),
                        expected: live.count_ones(),
                    });
                }
            }
            (id, expected)
        };
        // (sync check: barriers of the whole block that threads wait at)
        if self.san.is_some()
            && bar.aligned
            && bar.kind != BarKind::Arrive
            && bar.count.is_none()
            && bar.count_slot.is_none()
        {
            self.san_arrive(wi, pc, m, id);
        }
        let w = &mut self.warps[wi];
        let b = &mut self.bars[id as usize];
        if b.arrived == 0 {
            b.expected = expected;
            b.all = bar.count.is_none() && bar.count_slot.is_none();
            b.red_op = bar.red.map(|r| r.0);
            b.pc = pc;
            b.red_popc = 0;
            b.red_and = true;
            b.red_or = false;
        }
        b.arrived += m.count_ones();
        if b.all && b.arrived > 0 {
            self.armed |= 1 << id;
        }
        if let Some((_, _, src, neg)) = bar.red {
            let p = w.preds[src as usize];
            let p = if neg { !p } else { p };
            let vals = p & m;
            b.red_popc += vals.count_ones();
            if vals != m {
                b.red_and = false;
            }
            if vals != 0 {
                b.red_or = true;
            }
        }
        match bar.kind {
            BarKind::Arrive => {
                w.cur = Some((pc + 1, mask));
            }
            _ => {
                w.barrier |= m;
                w.ready &= !m;
                for_lanes(m, |l| {
                    w.bar_pc[l] = pc;
                    w.pcs[l] = pc + 1;
                });
                b.waiting.push((wi, m));
                if let Some((_, dst, _, _)) = bar.red {
                    b.red_dest.push((wi, m, dst));
                }
                w.cur = if rest != 0 {
                    Some((pc + 1, rest))
                } else {
                    None
                };
            }
        }
        self.release_if_complete(id as usize, wi);
        Ok(())
    }

    /// Threads of the CTA that have exited.
    pub(super) fn exited_threads(&self) -> u32 {
        self.exited
    }

    /// Releases barrier `id` when every thread it counts has arrived — or, for a barrier of the
    /// whole CTA, when the only threads missing have exited ("barriers exclusively waiting on
    /// arrivals from exited threads are always released", PTX ISA, `exit`).
    #[inline]
    pub(super) fn release_if_complete(&mut self, id: usize, current: usize) {
        let exited = if self.bars[id].all {
            self.exited_threads()
        } else {
            0
        };
        let b = &self.bars[id];
        if b.arrived != 0 && b.arrived + exited >= b.expected {
            self.release(id, current);
        }
    }

    /// Releases barrier `id`, complete: its waiting lanes are ready again, its reduction
    /// results written, its state back to nobody arrived.
    pub(super) fn release(&mut self, id: usize, current: usize) {
        let b = &mut self.bars[id];
        let mut waiting = std::mem::take(&mut b.waiting);
        let mut dests = std::mem::take(&mut b.red_dest);
        let (popc, and, or) = (b.red_popc, b.red_and, b.red_or);
        let red_op = b.red_op;
        b.arrived = 0;
        if let Some(san) = self.san.as_mut() {
            san.released(id);
        }
        self.armed &= !(1 << id);
        for &(wj, lanes) in &waiting {
            let w = &mut self.warps[wj];
            w.barrier &= !lanes;
            w.ready |= lanes;
            if wj == current {
                if let Some((cpc, cm)) = w.cur {
                    Self::save(w, cpc, cm);
                }
            }
            w.cur = None;
            if w.ready == lanes {
                // the lanes of one arrival, all at the instruction after it, are the only
                // ready ones: the group `pick` would choose
                w.cur = Some((w.pcs[lanes.trailing_zeros() as usize], lanes));
                w.others_min = u32::MAX;
                w.run_len = 0;
            }
        }
        for &(wj, lanes, dst) in &dests {
            let w = &mut self.warps[wj];
            match red_op {
                Some(RedOp::Popc) => {
                    for l in lane_bits(lanes) {
                        w.regs[dst as usize][l] = popc as u64;
                    }
                }
                Some(op) => {
                    let v = if op == RedOp::And { and } else { or };
                    if dst != u32::MAX {
                        let p = &mut w.preds[dst as usize];
                        *p = if v { *p | lanes } else { *p & !lanes };
                    }
                }
                None => {}
            }
        }
        // the lists go back empty, keeping their capacity for the next arrivals
        waiting.clear();
        dests.clear();
        let b = &mut self.bars[id];
        b.waiting = waiting;
        b.red_dest = dests;
    }
}
