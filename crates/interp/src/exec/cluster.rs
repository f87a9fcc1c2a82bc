//! Clusters: the CTAs of one cluster run together on one worker thread, a round of each CTA's
//! warps in turn, so that `barrier.cluster` can wait for the other CTAs of the cluster.
//!
//! A launch runs this way when its cluster has more than one CTA or its kernel uses a cluster
//! instruction; other launches run each CTA alone ([`super::run_cta`]), unchanged.
//!
//! `barrier.cluster.arrive` counts the arriving thread in the cluster's current phase; the
//! phase completes when every thread of the cluster that has not exited has arrived (checked
//! after each CTA's round). `barrier.cluster.wait` passes once the phase its thread arrived in
//! has completed, and otherwise suspends the thread at the wait until it has. A round in which
//! no CTA of the cluster moves is a deadlock, reported for the first CTA that has not finished.
//!
//! Shared-memory addresses of the cluster (`.shared::cluster`): the offset of the executing
//! CTA's own shared memory is one; `mapa` to another rank `r` gives the offset plus
//! `(r + 1) << 24` ([`RANK_SHIFT`]).

use super::cta::{Cta, CtaOutput, CtaScratch, LaunchShared};
use super::fault::ExecError;
use super::warp::warp_ctx;
use crate::mem::{SHARED_WINDOW, WINDOW_SIZE};
use crate::ops_async as k;
use crate::program::{lane_bits, Fault, FaultKind, Op};

/// Where the rank of another CTA sits in a `.shared::cluster` address (see the module text).
pub const RANK_SHIFT: u32 = 24;

/// What a cluster launch's CTA needs of its cluster.
#[derive(Default)]
pub(super) struct ClusterPart {
    /// `%cluster_ctarank`.
    pub(super) rank: u32,
    /// CTAs in the cluster.
    pub(super) size: u32,
    /// The cluster barrier's phase (completed phases), as of this CTA's round.
    pub(super) phase: u64,
    /// Arrivals in the current phase, as of this CTA's round.
    pub(super) arrived: u32,
    /// Per thread: 1 + the phase it arrived in, 0 when it has not arrived.
    pub(super) arrivals: Vec<u64>,
    /// Lanes suspended at a `barrier.cluster.wait`: (warp, lanes).
    pub(super) waits: Vec<(usize, u32)>,
    /// The pc of the last wait that suspended lanes (for deadlock reports).
    pub(super) wait_pc: u32,
    /// During this CTA's round: the shared memory of the cluster's other CTAs, by rank (its
    /// own place is empty).
    pub(super) others: Vec<Vec<u32>>,
    /// Copies and asynchronous stores this CTA issued into other CTAs' shared memory during its
    /// round, by destination rank: they join the destination's pending copies before its next
    /// round ([`Cta::async_receive`]).
    pub(super) outbox: Vec<(u32, super::asyncop::Remote)>,
    /// Bit `r`: this CTA changed an mbarrier of rank `r` during its round (its suspended waits
    /// retry before its next round).
    pub(super) woken: u32,
    /// Bit `r`: the CTA of rank `r` has finished (as of the start of this CTA's round).
    pub(super) finished: u32,
}

/// How a round of a CTA's warps went.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Round {
    /// Every thread exited.
    Done,
    /// Something moved.
    Moved,
    /// Nothing moved.
    Stuck,
}

impl<'s, 'a> Cta<'s, 'a> {
    /// One round over the warps: [`Cta::run`] repeats it until every thread exits; a cluster
    /// interleaves the rounds of its CTAs, since what one waits for only another may release.
    /// Outside clusters a stuck round is a deadlock.
    #[inline]
    pub(super) fn round(&mut self) -> Result<Round, ExecError> {
        let mut progress = false;
        let mut all_done = true;
        for w in 0..self.warps.len() {
            if self.warps[w].ready != 0 || self.warps[w].parked != 0 {
                all_done = false;
            }
            if self.warps[w].ready == 0 && self.warps[w].parked == 0 {
                continue;
            }
            if self.run_warp(w)? {
                progress = true;
            }
            if self.pending_insts >= self.sh.flush_every {
                self.flush_budget()?;
            }
        }
        if (all_done || !progress) && !self.asy.idle() && self.async_unstick()? {
            return Ok(Round::Moved);
        }
        let cluster_waits = self.clu.as_ref().is_some_and(|c| !c.waits.is_empty());
        if all_done {
            let waiting: u32 = self.warps.iter().map(|w| w.barrier.count_ones()).sum();
            if waiting == 0 && self.asy.waits.is_empty() && !cluster_waits {
                if !self.asy.idle() {
                    self.async_finish()?;
                }
                // the rest is counted with the worker's next CTAs, or when it stops
                if self.pending_insts >= self.sh.flush_every {
                    self.flush_budget()?;
                }
                return Ok(Round::Done);
            }
            return Ok(Round::Stuck);
        }
        Ok(if progress { Round::Moved } else { Round::Stuck })
    }

    /// Resumes the lanes suspended at `barrier.cluster.wait` (they run the wait again).
    fn cluster_wake(&mut self) {
        let Some(c) = self.clu.as_mut() else {
            return;
        };
        for (wi, lanes) in std::mem::take(&mut c.waits) {
            let w = &mut self.warps[wi];
            w.ready |= lanes;
            w.cur = None;
        }
    }

    /// `barrier.cluster`, `mapa`, `getctarank` (an [`crate::program::Op::Async`] of a cluster
    /// kind).
    pub(super) fn cluster_op(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
    ) -> Result<(), ExecError> {
        let insn = &self.sh.prog.code[pc as usize];
        let Some(mut c) = self.clu.take() else {
            let e = Fault {
                kind: FaultKind::Other(
                    "internal error: a cluster instruction outside a cluster launch".into(),
                ),
                lane: None,
            };
            return Err(self.fault(wi, insn, e, m));
        };
        let r = self.cluster_op_in(&mut c, wi, pc, mask, m);
        self.clu = Some(c);
        r
    }

    fn cluster_op_in(
        &mut self,
        c: &mut ClusterPart,
        wi: usize,
        pc: u32,
        mask: u32,
        m: u32,
    ) -> Result<(), ExecError> {
        let insn = &self.sh.prog.code[pc as usize];
        let aux = insn.aux;
        let nthreads = self.nthreads as usize;
        if c.arrivals.len() < nthreads {
            c.arrivals.resize(nthreads, 0);
        }
        let fault = |this: &Self, l: usize, msg: String| {
            this.fault(
                wi,
                insn,
                Fault {
                    kind: FaultKind::Other(msg),
                    lane: Some(l as u32),
                },
                m,
            )
        };
        let shared = aux & k::CL_SHARED != 0;
        let mut failed = 0u32;
        match k::kind(aux) {
            k::CL_ARRIVE => {
                for l in lane_bits(m) {
                    let t = wi * 32 + l;
                    if c.arrivals[t] != 0 {
                        return Err(fault(
                            self,
                            l,
                            "barrier.cluster.arrive again before the thread's barrier.cluster.wait"
                                .into(),
                        ));
                    }
                    c.arrivals[t] = c.phase + 1;
                    c.arrived += 1;
                }
            }
            k::CL_WAIT => {
                for l in lane_bits(m) {
                    let t = wi * 32 + l;
                    match c.arrivals[t] {
                        0 => {
                            return Err(fault(
                                self,
                                l,
                                "barrier.cluster.wait without a barrier.cluster.arrive before it"
                                    .into(),
                            ))
                        }
                        p if c.phase >= p => c.arrivals[t] = 0,
                        _ => failed |= 1 << l,
                    }
                }
            }
            k::CL_MEM => {
                let (orig, dests) = &self.sh.prog.cluster_mem[(aux >> 32) as usize];
                let Op::Mem(f) = orig.op else {
                    return Err(fault(self, 0, "internal error: a cluster access".into()));
                };
                let generic = !shared;
                // lanes by the rank they reach (`c.size`: not a shared address)
                let mut by_rank = [0u32; 17];
                let mut stripped = [0u64; 32];
                let regs = &self.warps[wi].regs[orig.a as usize];
                for l in lane_bits(m) {
                    let a = regs[l].wrapping_add(orig.imm as u64);
                    let (base, off) = if !generic {
                        (0, a)
                    } else if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a) {
                        (SHARED_WINDOW, a - SHARED_WINDOW)
                    } else {
                        // not shared memory: the access as it is
                        stripped[l] = a;
                        by_rank[16] |= 1 << l;
                        continue;
                    };
                    let r = match off >> RANK_SHIFT {
                        0 => c.rank,
                        r if r <= 16 => r as u32 - 1,
                        _ => c.size,
                    };
                    if r >= c.size {
                        return Err(fault(
                            self,
                            l,
                            format!(
                                "{a:#x} is in the shared memory of rank {r}, outside the cluster of {} CTAs",
                                c.size
                            ),
                        ));
                    }
                    stripped[l] = base + (off & ((1 << RANK_SHIFT) - 1));
                    by_rank[r as usize] |= 1 << l;
                }
                let own = by_rank[c.rank as usize] | by_rank[16];
                let run = |this: &mut Self, shared: &mut Vec<u32>, lanes: u32| {
                    // the base register holds the rank-free address for the access
                    let slot = orig.a as usize;
                    let saved = this.warps[wi].regs[slot];
                    for l in lane_bits(lanes) {
                        this.warps[wi].regs[slot][l] = stripped[l].wrapping_sub(orig.imm as u64);
                    }
                    let r = f(
                        &mut warp_ctx(&mut this.warps[wi], shared, this.sh),
                        orig,
                        lanes,
                    );
                    if !dests.contains(&orig.a) {
                        this.warps[wi].regs[slot] = saved;
                    } else {
                        for l in lane_bits(!lanes) {
                            this.warps[wi].regs[slot][l] = saved[l];
                        }
                    }
                    r.map_err(|e| this.fault(wi, orig, e, lanes))
                };
                if own != 0 {
                    let mut shared = std::mem::take(&mut self.shared);
                    let r = run(self, &mut shared, own);
                    self.shared = shared;
                    r?;
                }
                for (r, &lanes) in by_rank.iter().enumerate().take(c.size as usize) {
                    if r == c.rank as usize || lanes == 0 {
                        continue;
                    }
                    let mut shared = std::mem::take(&mut c.others[r]);
                    let res = run(self, &mut shared, lanes);
                    c.others[r] = shared;
                    res?;
                }
            }
            kind @ (k::CL_MAPA | k::CL_GETCTARANK) => {
                let mut out = [0u64; 32];
                for l in lane_bits(m) {
                    let a = self.warps[wi].regs[insn.a as usize][l].wrapping_add(insn.imm as u64);
                    // the shared::cluster offset, and the window base of a generic address
                    let (base, off) = if shared {
                        (0, a & 0xFFFF_FFFF)
                    } else if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a) {
                        (SHARED_WINDOW, a - SHARED_WINDOW)
                    } else {
                        return Err(fault(
                            self,
                            l,
                            format!("{a:#x} is not a shared-memory address of the cluster"),
                        ));
                    };
                    let owner = match off >> RANK_SHIFT {
                        0 => c.rank,
                        r => r as u32 - 1,
                    };
                    let local = off & ((1 << RANK_SHIFT) - 1);
                    if owner >= c.size || local >= self.sh.env.shared_size.max(1) {
                        return Err(fault(
                            self,
                            l,
                            format!(
                                "{a:#x} is not a shared-memory address of the cluster of {} CTAs ({} bytes each)",
                                c.size, self.sh.env.shared_size
                            ),
                        ));
                    }
                    out[l] = if kind == k::CL_GETCTARANK {
                        owner as u64
                    } else {
                        let r = self.warps[wi].regs[insn.b as usize][l] as u32;
                        if r >= c.size {
                            return Err(fault(
                                self,
                                l,
                                format!("mapa to rank {r} in a cluster of {} CTAs", c.size),
                            ));
                        }
                        let tag = if r == c.rank {
                            0
                        } else {
                            (r as u64 + 1) << RANK_SHIFT
                        };
                        base + (local | tag)
                    };
                }
                let d = &mut self.warps[wi].regs[insn.d as usize];
                for l in lane_bits(m) {
                    d[l] = out[l];
                }
            }
            _ => {
                let e = Fault {
                    kind: FaultKind::Other("internal error: unknown cluster instruction".into()),
                    lane: None,
                };
                return Err(self.fault(wi, insn, e, m));
            }
        }
        let w = &mut self.warps[wi];
        if let Some((cpc, cm)) = w.cur.take() {
            Self::save(w, cpc, cm);
        }
        Self::save(w, pc + 1, mask & !failed);
        if failed != 0 {
            // suspended at the wait, which they run again when the phase completes
            Self::save(w, pc, failed);
            w.ready &= !failed;
            c.waits.push((wi, failed));
            c.wait_pc = pc;
        }
        Ok(())
    }
}

/// Runs the cluster whose CTAs are `ctas` (`%ctaid`, linear index), in rank order, to
/// completion, with the storage of `scratch` (one per rank, kept from cluster to cluster).
/// `unit` is the cluster's index: its place in the printf output, which a cluster launch
/// keeps in cluster order (the records of one cluster in the order its CTAs ran them: its CTAs
/// run interleaved on one worker, so none of them may wait for another's turn).
pub(crate) fn run_cluster(
    sh: &LaunchShared<'_>,
    ctas: &[([u32; 3], u64)],
    unit: u64,
    scratch: &mut Vec<CtaScratch>,
) -> Result<CtaOutput, ExecError> {
    let n = ctas.len();
    if scratch.len() < n {
        scratch.resize_with(n, CtaScratch::default);
    }
    let mut run: Vec<Cta<'_, '_>> = Vec::with_capacity(n);
    let mut pending = 0;
    for (s, _) in scratch.iter_mut().zip(ctas) {
        pending += std::mem::take(&mut s.pending);
    }
    let mut result = Ok(());
    for (r, (&(ctaid, linear), s)) in ctas.iter().zip(scratch.iter_mut()).enumerate() {
        match Cta::new(sh, ctaid, linear, s) {
            Ok(mut c) => {
                c.linear = unit;
                c.clu = Some(Box::new(ClusterPart {
                    rank: r as u32,
                    size: n as u32,
                    ..Default::default()
                }));
                run.push(c);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    if let Some(c) = run.first_mut() {
        c.pending_insts = pending;
    }
    let result = result.and_then(|()| cluster_loop(&mut run));
    let mut out = CtaOutput::default();
    let mut left = 0;
    for (c, s) in run.iter_mut().zip(scratch.iter_mut()) {
        c.flush_san();
        s.warps = std::mem::take(&mut c.warps);
        s.shared = std::mem::take(&mut c.shared);
        s.bars = std::mem::take(&mut c.bars);
        left += c.pending_insts;
        out.thread_insts += c.out.thread_insts;
        out.warp_insts += c.out.warp_insts;
    }
    if let Some(s) = scratch.first_mut() {
        s.pending += left;
    }
    result.map(|()| out)
}

fn cluster_loop(run: &mut [Cta<'_, '_>]) -> Result<(), ExecError> {
    let n = run.len();
    let mut done = vec![false; n];
    let (mut phase, mut arrived) = (0u64, 0u32);
    // what the CTAs sent each other: copies into their shared memory, changed mbarriers
    let mut inbox: Vec<Vec<super::asyncop::Remote>> = (0..n).map(|_| Vec::new()).collect();
    let mut wake = vec![false; n];
    let mut finished = 0u32;
    loop {
        let mut moved = false;
        for i in 0..n {
            if done[i] {
                continue;
            }
            let c = &mut run[i];
            let woke = c.clu.as_ref().is_some_and(|p| p.phase != phase);
            if let Some(p) = c.clu.as_mut() {
                (p.phase, p.arrived) = (phase, arrived);
                p.finished = finished;
            }
            if woke {
                c.cluster_wake();
            }
            // lend the other CTAs' shared memory to this one for its round
            let mut others: Vec<Vec<u32>> = Vec::with_capacity(n);
            for (j, o) in run.iter_mut().enumerate() {
                others.push(if j == i {
                    Vec::new()
                } else {
                    std::mem::take(&mut o.shared)
                });
            }
            let c = &mut run[i];
            if let Some(p) = c.clu.as_mut() {
                p.others = others;
            }
            let received = std::mem::take(&mut inbox[i]);
            let r = match c.async_receive(received, std::mem::take(&mut wake[i])) {
                Ok(()) => c.round(),
                Err(e) => Err(e),
            };
            let others = c
                .clu
                .as_mut()
                .map(|p| std::mem::take(&mut p.others))
                .unwrap_or_default();
            if let Some(p) = c.clu.as_mut() {
                arrived = p.arrived;
                for (j, op) in p.outbox.drain(..) {
                    inbox[j as usize].push(op);
                    moved = true;
                }
                for (j, w) in wake.iter_mut().enumerate() {
                    if p.woken >> j & 1 != 0 {
                        *w = true;
                        moved = true;
                    }
                }
                p.woken = 0;
            }
            for (j, o) in others.into_iter().enumerate() {
                if j != i {
                    run[j].shared = o;
                }
            }
            let r = r?;
            match r {
                Round::Done => {
                    done[i] = true;
                    finished |= 1 << i;
                    moved = true;
                }
                Round::Moved => moved = true,
                Round::Stuck => {}
            }
            let live: u32 = run.iter().map(|c| c.nthreads - c.exited).sum();
            if arrived > 0 && arrived >= live {
                phase += 1;
                arrived = 0;
                moved = true;
            }
        }
        if done.iter().all(|&d| d) {
            return Ok(());
        }
        if !moved {
            let i = done.iter().position(|&d| !d).unwrap_or(0);
            let mut e = run[i].deadlock();
            let waiting: u32 = run
                .iter()
                .filter_map(|c| c.clu.as_ref())
                .flat_map(|p| p.waits.iter().map(|(_, m)| m.count_ones()))
                .sum();
            if waiting > 0 {
                if let ExecError::Deadlock { other, waits, .. } = &mut e {
                    let live: u32 = run.iter().map(|c| c.nthreads - c.exited).sum();
                    if let Some(p) = run[i].clu.as_ref().filter(|p| !p.waits.is_empty()) {
                        let insn = &run[i].sh.prog.code[p.wait_pc as usize];
                        let here: u32 = p.waits.iter().map(|(_, m)| m.count_ones()).sum();
                        waits.push(super::fault::Wait {
                            kind: super::fault::WaitKind::Cluster,
                            threads: here,
                            expected: live,
                            id: u32::MAX,
                            func: insn.func,
                            inst: insn.inst,
                        });
                    }
                    let msg = format!(
                        "{waiting} threads of its cluster of {n} CTAs wait at barrier.cluster.wait ({arrived} of {live} arrived)"
                    );
                    *other = if other.is_empty() {
                        msg
                    } else {
                        format!("{other}; {msg}")
                    };
                }
            }
            return Err(e);
        }
    }
}
