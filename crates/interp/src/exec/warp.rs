//! Warps: groups, reconvergence and the dispatch loop.
//!
//! A warp keeps a pc per lane and runs one group at a time, the lanes at the lowest pc
//! ([`Cta::pick`]); a group that starves others for [`STARVE_LIMIT`] steps yields to the next
//! group by address ([`Cta::pick_after`]). [`Cta::run_warp`] is the one dispatch loop: it runs
//! the group through computation, memory accesses, uniform branches and warp-synchronous
//! instructions that need no waiting, with pc and mask in locals, and stops at an instruction
//! that may change the group, which [`Cta::control`] executes (divergent branches,
//! `brx.idx`, parking at a warp-synchronous instruction, calls, returns, barriers, `exit`,
//! `trap`).

use super::call::Frame;
use super::cta::Cta;
use super::fault::ExecError;
use super::LaunchShared;
use crate::program::{lane_bits, Ctx, Fault, FaultKind, Insn, Lanes, Op, FULL, LANE_BIT, NO_PRED};

/// Steps a group may run while other lanes of its warp wait before it is preempted.
pub const STARVE_LIMIT: u32 = 4096;
/// Warp steps per scheduling slice (also how often budgets are checked).
pub(super) const SLICE: u32 = 16384;

/// One warp of a CTA: its registers, the pc of each lane, and which lanes can run.
pub(super) struct Warp {
    /// Register slots, 32 lanes each.
    pub(super) regs: Vec<Lanes>,
    /// Predicate slots, one lane mask each.
    pub(super) preds: Vec<u32>,
    /// Each lane's pc (the running group's is in `cur` while it runs).
    pub(super) pcs: [u32; 32],
    /// Lanes that can run.
    pub(super) ready: u32,
    /// Lanes that have exited (and lanes past the end of the block).
    pub(super) exited: u32,
    /// Lanes waiting at a warp-synchronous instruction for the rest of its members.
    pub(super) parked: u32,
    /// Lanes waiting at a barrier.
    pub(super) barrier: u32,
    /// The barrier instruction each waiting lane arrived at.
    pub(super) bar_pc: [u32; 32],
    /// Per lane, its call frames.
    pub(super) stacks: Vec<Vec<Frame>>,
    /// Per lane, the registers and predicates (one word each) of the recursive calls in
    /// progress, saved at the call and restored at its return, in call order.
    pub(super) saves: Vec<Vec<u64>>,
    /// Per lane, the stack bytes its calls in progress count besides their frames
    /// ([`super::call::call_cost`]).
    pub(super) booked: [u64; 32],
    pub(super) local: Vec<crate::mem::LocalMem>,
    pub(super) sp: [u64; 32],
    /// Function (index in `Program::funcs`) each lane is executing.
    pub(super) func: [u32; 32],
    /// The running group: its pc and lanes (`None`: pick one).
    pub(super) cur: Option<(u32, u32)>,
    /// The lowest pc of the other ready lanes, where the running group must stop to let them
    /// catch up (`u32::MAX`: none, or a preempting group that runs regardless).
    pub(super) others_min: u32,
    /// Steps the running group has run since it was picked.
    pub(super) run_len: u32,
    /// Run the next warp-synchronous instruction with the lanes that are there: the missing
    /// members can no longer arrive.
    pub(super) force_sync: bool,
}

impl Warp {
    pub(super) fn empty() -> Warp {
        Warp {
            regs: Vec::new(),
            preds: Vec::new(),
            pcs: [0; 32],
            ready: 0,
            exited: 0,
            parked: 0,
            barrier: 0,
            bar_pc: [0; 32],
            stacks: Vec::new(),
            saves: Vec::new(),
            booked: [0; 32],
            local: Vec::new(),
            sp: [0; 32],
            func: [0; 32],
            cur: None,
            others_min: u32::MAX,
            run_len: 0,
            force_sync: false,
        }
    }
}

/// The lanes whose guard predicate lets `insn` run (all of them for an unguarded one).
#[inline(always)]
pub(super) fn guard_lanes(preds: &[u32], insn: &Insn) -> u32 {
    if insn.guard == NO_PRED {
        u32::MAX
    } else {
        let p = preds[insn.guard as usize];
        if insn.neg {
            !p
        } else {
            p
        }
    }
}

/// The handler context of warp `w`.
pub(super) fn warp_ctx<'c>(
    w: &'c mut Warp,
    shared: &'c mut Vec<u32>,
    sh: &'c LaunchShared<'_>,
) -> Ctx<'c> {
    Ctx {
        regs: &mut w.regs,
        preds: &mut w.preds,
        shared,
        local: &mut w.local,
        sp: &mut w.sp,
        live: !w.exited,
        env: &sh.env,
    }
}

impl<'s, 'a> Cta<'s, 'a> {
    /// Picks the group with the lowest pc among ready lanes. The loops run over all 32 lanes
    /// without branches and compare as `i32` (a pc is below 2^31), so that even baseline
    /// x86-64 (SSE2) code does them four lanes at a time.
    pub(super) fn pick(w: &mut Warp) {
        if w.ready == 0 {
            w.cur = None;
            return;
        }
        let ready = w.ready;
        let pcs: [i32; 32] = std::array::from_fn(|l| {
            if ready & LANE_BIT[l] != 0 {
                w.pcs[l] as i32
            } else {
                i32::MAX
            }
        });
        let min = pcs.iter().fold(i32::MAX, |a, &b| a.min(b));
        let mut mask = 0;
        let mut others = i32::MAX;
        for l in 0..32 {
            let at = pcs[l] == min;
            mask |= if at { LANE_BIT[l] } else { 0 };
            others = others.min(if at { i32::MAX } else { pcs[l] });
        }
        w.cur = Some((min as u32, mask));
        w.others_min = others as u32;
        w.run_len = 0;
    }

    /// Preempts a starving warp: the next group by address after `pc` runs.
    pub(super) fn pick_after(w: &mut Warp, pc: u32) {
        let mut best = u32::MAX;
        for l in lane_bits(w.ready) {
            if w.pcs[l] > pc {
                best = best.min(w.pcs[l]);
            }
        }
        if best == u32::MAX {
            Self::pick(w);
            return;
        }
        let mut mask = 0;
        for l in lane_bits(w.ready) {
            if w.pcs[l] == best {
                mask |= 1 << l;
            }
        }
        w.cur = Some((best, mask));
        // run it for a while regardless of lower groups
        w.others_min = u32::MAX;
        w.run_len = 0;
    }

    /// Sets the pc of the lanes of `mask` (a branch-free blend over all 32 lanes: vector
    /// stores, which the vector loads of `pick` can read without waiting).
    pub(super) fn save(w: &mut Warp, pc: u32, mask: u32) {
        for (l, p) in w.pcs.iter_mut().enumerate() {
            *p = if mask & LANE_BIT[l] != 0 { pc } else { *p };
        }
    }

    /// Warp `wi` has lanes parked at a warp-synchronous instruction and none ready: unless
    /// some lane sleeps in an mbarrier `test_wait`/`try_wait` or at `barrier.cluster.wait`
    /// (it resumes when what it waits for changes), the parked lanes run the instruction with
    /// the lanes that are there.
    #[cold]
    #[inline(never)]
    fn force_parked(&mut self, wi: usize) {
        let mbar = self.asy.waits.iter().any(|mw| mw.wi == wi);
        let cluster = self
            .clu
            .as_deref()
            .is_some_and(|c| c.waits.iter().any(|&(w, _)| w == wi));
        if mbar || cluster {
            return;
        }
        let w = &mut self.warps[wi];
        w.ready |= w.parked;
        w.parked = 0;
        w.cur = None;
        w.force_sync = true;
    }

    /// Runs warp `wi` for one slice. Returns whether it made progress.
    ///
    /// One dispatch loop runs every instruction. The group's pc and mask stay in locals while
    /// it runs computation, memory accesses and branches that the whole group takes (or none
    /// of it), no-ops stepped over with [`Insn::skip`]. An instruction that may change the
    /// group (a branch that splits it, a warp-synchronous instruction with lanes to wait for
    /// or merge, `brx.idx`, calls, returns, barriers, `exit`, `trap`) ends the run:
    /// [`Self::control`] executes it and sets the warp's next group. A run also ends at a
    /// reconvergence point (the lowest pc of the other groups, `others_min`), at the end of
    /// the slice, and when a starving group has used its [`STARVE_LIMIT`] steps (it runs one
    /// more instruction, then yields).
    pub(super) fn run_warp(&mut self, wi: usize) -> Result<bool, ExecError> {
        let prog = self.sh.prog;
        let code = &prog.code[..];
        let mut steps = 0u32;
        // converted instructions no lane ran (`ifconv`): not counted as warp instructions
        let mut warp_steps_skipped = 0u32;
        let mut thread_insts = 0u64;
        let mut progress = false;
        // Unpark lanes whose partners can no longer arrive: they run the warp-synchronous
        // instruction with the lanes that are there. A lane suspended in an mbarrier or
        // cluster-barrier wait can still arrive (once its phase completes, or its wait times
        // out), so lanes parked for it keep waiting, as on a GPU: CUTLASS's producer warp has
        // lane 0 drain the pipeline (`producer_tail`, an mbarrier wait loop) while the other
        // lanes wait at the `bar.warp.sync`/`elect.sync` after it.
        {
            let w = &self.warps[wi];
            if w.ready == 0 && w.parked != 0 {
                self.force_parked(wi);
            }
        }
        loop {
            let w = &mut self.warps[wi];
            let (mut pc, mask) = match w.cur {
                Some(c) => c,
                None => {
                    Self::pick(w);
                    match w.cur {
                        Some(c) => c,
                        None => break,
                    }
                }
            };
            if pc >= w.others_min || (w.others_min != u32::MAX && w.run_len > STARVE_LIMIT) {
                Self::save(w, pc, mask);
                if pc < w.others_min {
                    Self::pick_after(w, pc);
                } else {
                    Self::pick(w);
                }
                continue;
            }
            if steps >= SLICE {
                Self::save(w, pc, mask);
                w.cur = None;
                break;
            }
            let limit = w.others_min;
            // dispatches this run may make: at least one (a group at its starvation limit runs
            // one more instruction before it yields)
            let budget = if limit == u32::MAX {
                SLICE - steps
            } else {
                (SLICE - steps)
                    .min(STARVE_LIMIT.saturating_sub(w.run_len))
                    .max(1)
            };
            // dispatches, and instructions run (no-ops stepped over included); thread
            // instructions of those that lanes skipped (if-converted ones)
            let (mut n, mut count, mut short) = (0u32, 0u32, 0u32);
            // set when the run stops at an instruction for `control`
            let mut other = false;
            // `code.len()` bounds the loop too, so that indexing it needs no check
            let limit = limit.min(code.len() as u32);
            while n < budget && pc < limit {
                let insn = &code[pc as usize];
                let m = mask & guard_lanes(&w.preds, insn);
                // an instruction guarded by if-conversion that some lanes skip counts for
                // the lanes that run it only (a warp instruction if any does), and the
                // no-ops after it are not stepped over (they count for some lanes each)
                if insn.converted && m != mask {
                    match insn.op {
                        Op::Alu(f) if m != 0 => f(&mut w.regs, &mut w.preds, insn, m),
                        Op::Mem(f) if m != 0 => {
                            let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                            if let Err(e) = f(&mut ctx, insn, m) {
                                self.warps[wi].cur = Some((pc, mask));
                                return Err(self.fault(wi, insn, e, m));
                            }
                        }
                        Op::Alu(_) | Op::Mem(_) | Op::Nop => {}
                        _ => {
                            other = true;
                            break;
                        }
                    }
                    short += (mask & !m).count_ones();
                    warp_steps_skipped += (m == 0) as u32;
                    n += 1;
                    count += 1;
                    pc += 1;
                    continue;
                }
                // whether the group falls through (over the no-ops after the instruction)
                let fall = match insn.op {
                    Op::Alu(f) => {
                        if m != 0 {
                            f(&mut w.regs, &mut w.preds, insn, m);
                        }
                        true
                    }
                    // memory, and a warp-synchronous instruction whose members are all in
                    // the group (nobody parked, no forced run: nothing to wait for or merge)
                    Op::Mem(f) | Op::WarpSync(f) => {
                        if let Op::WarpSync(_) = insn.op {
                            if w.parked != 0 || w.force_sync {
                                other = true;
                                break;
                            }
                            let member = if insn.b == u32::MAX {
                                FULL
                            } else {
                                let l = m.trailing_zeros().min(31) as usize;
                                w.regs[insn.b as usize][l] as u32
                            };
                            if member & !w.exited & !mask != 0 {
                                other = true;
                                break;
                            }
                        }
                        if m != 0 {
                            let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                            if let Err(e) = f(&mut ctx, insn, m) {
                                self.warps[wi].cur = Some((pc, mask));
                                return Err(self.fault(wi, insn, e, m));
                            }
                        }
                        true
                    }
                    Op::Nop => true,
                    Op::Bra(t) if m == mask => {
                        pc = t;
                        false
                    }
                    Op::Bra(_) if m == 0 => true,
                    _ => {
                        other = true;
                        break;
                    }
                };
                n += 1;
                count += 1;
                if fall {
                    pc += 1 + insn.skip as u32;
                    count += insn.skip as u32;
                }
            }
            steps += count;
            w.run_len = w.run_len.saturating_add(n);
            thread_insts += (count * mask.count_ones() - short) as u64;
            w.cur = Some((pc, mask));
            if n > 0 {
                progress = true;
            }
            // a run that stopped at its budget or limit, or at an instruction for `control`
            // once the slice is used up (no-ops stepped over may pass its end): the next
            // round picks, preempts or ends the slice
            if !other && n > 0 || other && steps >= SLICE {
                continue;
            }
            // (lowering ends every function with an instruction that does not fall through,
            // so a pc is always inside the code; should that ever fail, the launch stops with
            // an error instead of a panic)
            let Some(insn) = code.get(pc as usize) else {
                self.warps[wi].cur = None;
                return Err(self.past_end(wi, mask));
            };
            let m = mask & guard_lanes(&w.preds, insn);
            steps += 1;
            w.run_len = w.run_len.saturating_add(1);
            progress = true;
            thread_insts += if insn.converted {
                warp_steps_skipped += (m == 0) as u32;
                m.count_ones() as u64
            } else {
                mask.count_ones() as u64
            };
            self.control(wi, pc, mask, m)?;
        }
        self.pending_insts += thread_insts;
        self.out.thread_insts += thread_insts;
        self.out.warp_insts += (steps - warp_steps_skipped) as u64;
        Ok(progress)
    }

    /// Executes the instruction at `pc` for the group `mask` of warp `wi` (`m`: the lanes whose
    /// guard holds) where the run of [`Self::run_warp`] stopped: an instruction that may change
    /// the group. Sets the warp's next group (`cur`, or `None` to pick one). (Inlined into the
    /// dispatch loop, its one caller, as the compiler chose before it grew a probe arm.)
    #[inline(always)]
    pub(super) fn control(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
    ) -> Result<(), ExecError> {
        let prog = self.sh.prog;
        let insn = &prog.code[pc as usize];
        let w = &mut self.warps[wi];
        match insn.op {
            // (the run executes these itself and never stops at them)
            Op::Alu(_) | Op::Mem(_) | Op::Nop => {
                let e = Fault {
                    kind: FaultKind::Other(
                        "internal error: a lane-wise instruction was dispatched as a control one"
                            .into(),
                    ),
                    lane: None,
                };
                return Err(self.fault(wi, insn, e, m));
            }
            Op::WarpSync(f) => {
                let member = if insn.b == u32::MAX {
                    FULL
                } else {
                    w.regs[insn.b as usize][m.trailing_zeros().min(31) as usize] as u32
                };
                let need = member & !w.exited;
                // merge lanes parked at this instruction
                let mut group = mask;
                for l in lane_bits(w.parked) {
                    if w.pcs[l] == pc {
                        group |= 1 << l;
                    }
                }
                let forced = std::mem::take(&mut w.force_sync);
                if need & !group & !w.parked != 0 && !forced && m != 0 {
                    // wait for the missing lanes
                    w.parked |= mask;
                    w.ready &= !mask;
                    Self::save(w, pc, mask);
                    w.cur = None;
                    return Ok(());
                }
                w.parked &= !group;
                w.ready |= group;
                // merged lanes take part only where the guard holds for them too
                let guard = guard_lanes(&w.preds, insn);
                let m = m | (group & !mask & guard);
                if m != 0 {
                    let mut ctx = warp_ctx(w, &mut self.shared, self.sh);
                    if let Err(e) = f(&mut ctx, insn, m) {
                        return Err(self.fault(wi, insn, e, m));
                    }
                }
                let w = &mut self.warps[wi];
                w.cur = Some((pc + 1, group));
                Self::pick_keep(w);
            }
            Op::Bra(t) => self.branch(wi, pc, mask, m, t),
            Op::Probe(k) => {
                self.probe(wi, pc, mask, m, k)?;
            }
            Op::Brx(tab) => {
                let table = &prog.tables[tab as usize];
                let mut bad = None;
                for l in lane_bits(m) {
                    let idx = w.regs[insn.a as usize][l] as u32;
                    match table.get(idx as usize) {
                        Some(&t) => w.pcs[l] = t,
                        None => {
                            bad = Some((l, idx));
                            break;
                        }
                    }
                }
                if let Some((l, idx)) = bad {
                    let e = Fault {
                        kind: FaultKind::Other(format!(
                            "brx.idx index {idx} is outside its target list of {} labels",
                            table.len()
                        )),
                        lane: Some(l as u32),
                    };
                    return Err(self.fault(wi, insn, e, m));
                }
                Self::save(w, pc + 1, mask & !m);
                w.cur = None;
            }
            Op::Exit => {
                self.exit_lanes(wi, m)?;
                let w = &mut self.warps[wi];
                let rest = mask & !m;
                w.cur = if rest != 0 {
                    Some((pc + 1, rest))
                } else {
                    None
                };
            }
            Op::Trap => {
                if m != 0 {
                    let l = m.trailing_zeros() as usize;
                    return Err(ExecError::Trap(self.pos(wi, l, insn)));
                }
                w.cur = Some((pc + 1, mask));
            }
            Op::Unsupported(k) => {
                if m != 0 {
                    let l = m.trailing_zeros() as usize;
                    return Err(ExecError::Unsupported {
                        message: prog.messages[k as usize].clone(),
                        pos: self.pos(wi, l, insn),
                    });
                }
                w.cur = Some((pc + 1, mask));
            }
            Op::Call(k) => {
                self.call(wi, pc, mask, m, k)?;
            }
            Op::Ret => {
                self.ret(wi, pc, mask, m)?;
            }
            Op::Bar(k) => {
                self.barrier(wi, pc, mask, m, k)?;
            }
            Op::Async => {
                self.async_op(wi, pc, mask, m)?;
            }
            Op::Wgmma => {
                self.wgmma(wi, pc, mask, m)?;
            }
        }
        Ok(())
    }

    /// `bra` to `t` at `pc` for the group `mask` of warp `wi`, taken by the lanes of `m`.
    #[inline(always)]
    pub(super) fn branch(&mut self, wi: usize, pc: u32, mask: u32, m: u32, t: u32) {
        let w = &mut self.warps[wi];
        if m == mask {
            w.cur = Some((t, mask));
        } else if m == 0 {
            w.cur = Some((pc + 1, mask));
        } else {
            Self::save(w, t, m);
            Self::save(w, pc + 1, mask & !m);
            // the two halves and the groups already waiting (whose lowest pc is
            // `others_min`, exact unless a preempting group runs): the lower half
            // runs next when no waiting group is at or below it
            let (lo, lo_mask, hi) = if t < pc + 1 {
                (t, m, pc + 1)
            } else {
                (pc + 1, mask & !m, t)
            };
            let exact = w.others_min != u32::MAX || w.ready & !mask == 0;
            w.cur = if exact && lo < w.others_min {
                w.others_min = w.others_min.min(hi);
                w.run_len = 0;
                Some((lo, lo_mask))
            } else {
                None
            };
        }
    }

    /// After a warp-sync instruction: keep the group unless lower lanes are ready.
    pub(super) fn pick_keep(w: &mut Warp) {
        if let Some((_, mask)) = w.cur {
            let mut others = u32::MAX;
            for l in lane_bits(w.ready & !mask) {
                others = others.min(w.pcs[l]);
            }
            w.others_min = others;
        }
    }
}
