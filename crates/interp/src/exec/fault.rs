//! Why a launch stops and where its threads were.
//!
//! [`ExecError`] is every way a launch can stop: a lane's fault, `trap`, a failed assertion, a
//! deadlock, a divergent aligned barrier, the instruction budget, the deadline, an instruction
//! ptxvm does not execute. Each names the thread, block and instruction ([`ThreadPos`]). On a
//! budget or deadline stop, the CTA that noticed it describes what its unfinished threads were
//! doing, grouped by state and instruction ([`Stuck`]).

use super::cta::Cta;
use crate::program::{lane_bits, Fault, FaultKind, Insn, Op};

/// Where a thread is and what stopped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPos {
    /// `%ctaid`.
    pub block: [u32; 3],
    /// `%tid`.
    pub thread: [u32; 3],
    /// IR function index.
    pub func: u32,
    /// Instruction index in the function.
    pub inst: u32,
}

/// What a group of threads of a deadlocked block waits at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// A named barrier (`bar.sync`, `barrier.sync`): `id` is the barrier, `expected` the
    /// threads it counts.
    Barrier,
    /// An mbarrier wait (`mbarrier.test_wait`/`try_wait`): `id` is the mbarrier's shared-memory
    /// offset, `expected` the arrivals pending.
    Mbarrier,
    /// `wgmma.mma_async`, which the 128 threads of a warpgroup run together: `id` is the
    /// warpgroup.
    Warpgroup,
    /// `barrier.cluster.wait`: `expected` is the cluster's live threads.
    Cluster,
}

/// A group of threads of a deadlocked block waiting at one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// What they wait at.
    pub kind: WaitKind,
    /// How many threads wait.
    pub threads: u32,
    /// Threads (or arrivals) the wait needs, by `kind`.
    pub expected: u32,
    /// The barrier, mbarrier offset or warpgroup, by `kind`.
    pub id: u32,
    /// Function and instruction index of the wait.
    pub func: u32,
    /// Instruction index in the function.
    pub inst: u32,
}

/// Why a launch stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecError {
    /// A lane faulted.
    Fault {
        /// What.
        kind: FaultKind,
        /// Where.
        pos: ThreadPos,
    },
    /// `trap`.
    Trap(ThreadPos),
    /// `__assertfail`.
    Assert {
        /// Message, file, line, function.
        message: String,
        /// Where.
        pos: ThreadPos,
    },
    /// A barrier that can never complete.
    Deadlock {
        /// `%ctaid` of the block.
        block: [u32; 3],
        /// Who waits where.
        waits: Vec<Wait>,
        /// Threads of the block.
        threads: u32,
        /// Exited threads.
        exited: u32,
        /// Threads parked at warp-synchronous instructions.
        other: String,
    },
    /// An aligned barrier executed by part of a warp.
    DivergentBarrier {
        /// Where.
        pos: ThreadPos,
        /// Lanes that arrived.
        arrived: u32,
        /// Lanes expected.
        expected: u32,
    },
    /// Instruction budget exhausted.
    Budget {
        /// The budget, in thread instructions.
        limit: u64,
        /// Where the block that ran out of it was (`None`: the grid had finished).
        at: Option<Box<Stuck>>,
    },
    /// Wall-clock limit.
    Timeout {
        /// The limit, in seconds.
        seconds: f64,
        /// Where the block that noticed it was.
        at: Option<Box<Stuck>>,
    },
    /// Valid but unsupported instruction.
    Unsupported {
        /// Message.
        message: String,
        /// Where.
        pos: ThreadPos,
    },
    /// Stopped because another CTA failed.
    Cancelled,
}

/// What a group of threads was doing when a launch stopped on its budget or deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StuckState {
    /// Ready to run the instruction (running, or waiting for its turn in its warp).
    Running,
    /// Waiting at a barrier.
    Barrier {
        /// Barrier id.
        id: u32,
        /// Threads arrived.
        arrived: u32,
        /// Threads the barrier waits for.
        expected: u32,
        /// A barrier for the whole CTA, which exited threads release.
        all: bool,
    },
    /// Waiting at a warp-synchronous instruction for other lanes of its warp.
    WarpSync,
}

/// Threads of one block in the same state at the same instruction: the lanes of one warp, or
/// of consecutive warps (threads numbered linearly in the block, x fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckGroup {
    /// First thread.
    pub first: u32,
    /// Last thread.
    pub last: u32,
    /// Threads in the group (fewer than `last - first + 1` when the lanes are not contiguous).
    pub count: u32,
    /// IR function index of the instruction.
    pub func: u32,
    /// Instruction index in the function.
    pub inst: u32,
    /// What the threads were doing there.
    pub state: StuckState,
}

/// Where a block was when the launch stopped on its instruction budget or deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// `%ctaid` of the block.
    pub block: [u32; 3],
    /// Block size (`%ntid`), to turn thread numbers into coordinates.
    pub ntid: [u32; 3],
    /// Threads that had not finished, by state and instruction (the first [`STUCK_GROUPS`]).
    pub groups: Vec<StuckGroup>,
    /// Groups left out.
    pub more_groups: u32,
    /// Threads in the groups left out.
    pub more_threads: u32,
    /// Threads of the block that had exited.
    pub exited: u32,
    /// What the block's set-up was doing, when the limit passed before its threads started.
    pub setup: Option<String>,
    /// Other blocks that were running (on other OS threads) and were stopped.
    pub other_blocks: u64,
}

/// Groups a [`Stuck`] report lists.
pub const STUCK_GROUPS: usize = 8;

/// Where lane `lane` of warp `w` of CTA `ctaid` (blocks of shape `block`) is, at `insn`.
pub(super) fn thread_pos(
    block: [u32; 3],
    ctaid: [u32; 3],
    w: usize,
    lane: usize,
    insn: &Insn,
) -> ThreadPos {
    let [bx, by, _] = block;
    let t = w as u32 * 32 + lane as u32;
    ThreadPos {
        block: ctaid,
        thread: [t % bx, (t / bx) % by, t / (bx * by)],
        func: insn.func,
        inst: insn.inst,
    }
}

impl<'s, 'a> Cta<'s, 'a> {
    pub(super) fn pos(&self, w: usize, lane: usize, insn: &Insn) -> ThreadPos {
        thread_pos(self.sh.block, self.ctaid, w, lane, insn)
    }

    /// Where the threads of this CTA that have not finished are, and what they are doing:
    /// groups of threads in one state at one instruction, by warp and lane (the lanes of
    /// consecutive warps in the same state at the same instruction make one group).
    #[cold]
    pub(super) fn stuck(&self) -> Stuck {
        let mut st = Stuck {
            block: self.ctaid,
            ntid: self.sh.block,
            groups: Vec::new(),
            more_groups: 0,
            more_threads: 0,
            exited: self.exited,
            setup: None,
            other_blocks: 0,
        };
        for (wi, w) in self.warps.iter().enumerate() {
            // the running group's pc is in `cur`, not yet in `pcs`
            let mut pcs = w.pcs;
            if let Some((pc, m)) = w.cur {
                for l in lane_bits(m) {
                    pcs[l] = pc;
                }
            }
            // each lane's state and pc
            let at = |l: usize| -> (u8, u32) {
                let bit = 1u32 << l;
                if w.barrier & bit != 0 {
                    (1, w.bar_pc[l])
                } else if w.parked & bit != 0 {
                    (2, pcs[l])
                } else {
                    (0, pcs[l])
                }
            };
            let mut left = w.ready | w.parked | w.barrier;
            while left != 0 {
                let l0 = left.trailing_zeros() as usize;
                let key = at(l0);
                let mut lanes = 0u32;
                for l in lane_bits(left) {
                    if at(l) == key {
                        lanes |= 1 << l;
                    }
                }
                left &= !lanes;
                let (kind, pc) = key;
                let Some(insn) = self.sh.prog.code.get(pc as usize) else {
                    continue;
                };
                let state = match kind {
                    1 => self
                        .bars
                        .iter()
                        .enumerate()
                        .find(|(_, b)| b.waiting.iter().any(|&(x, m)| x == wi && m & lanes != 0))
                        .map_or(StuckState::Running, |(id, b)| StuckState::Barrier {
                            id: id as u32,
                            arrived: b.arrived,
                            expected: b.expected,
                            all: b.all,
                        }),
                    2 => StuckState::WarpSync,
                    _ => StuckState::Running,
                };
                let base = wi as u32 * 32;
                let g = StuckGroup {
                    first: base + lanes.trailing_zeros(),
                    last: base + 31 - lanes.leading_zeros(),
                    count: lanes.count_ones(),
                    func: insn.func,
                    inst: insn.inst,
                    state,
                };
                let contiguous = |g: &StuckGroup| g.count == g.last - g.first + 1;
                match st.groups.last_mut() {
                    Some(p)
                        if (p.func, p.inst, &p.state) == (g.func, g.inst, &g.state)
                            && contiguous(p)
                            && contiguous(&g)
                            && g.first == p.last + 1 =>
                    {
                        p.last = g.last;
                        p.count += g.count;
                    }
                    _ => st.groups.push(g),
                }
            }
        }
        if st.groups.len() > STUCK_GROUPS {
            let rest = st.groups.split_off(STUCK_GROUPS);
            st.more_groups = rest.len() as u32;
            st.more_threads = rest.iter().map(|g| g.count).sum();
        }
        st
    }

    pub(super) fn deadlock(&self) -> ExecError {
        let mut waits: Vec<Wait> = Vec::new();
        let mut wait = |kind, threads, expected, id, pc: u32| {
            let insn = &self.sh.prog.code[pc as usize];
            waits.push(Wait {
                kind,
                threads,
                expected,
                id,
                func: insn.func,
                inst: insn.inst,
            });
        };
        for (id, b) in self.bars.iter().enumerate() {
            let n: u32 = b.waiting.iter().map(|(_, m)| m.count_ones()).sum();
            if n > 0 {
                wait(WaitKind::Barrier, n, b.expected, id as u32, b.pc);
            }
        }
        for (n, pending, bar, pc) in self.mbar_waits() {
            wait(WaitKind::Mbarrier, n, pending, bar as u32, pc);
        }
        for (g, n, pc) in self.wg.waiting() {
            wait(WaitKind::Warpgroup, n, 128, g, pc);
        }
        let exited = self.exited_threads();
        let parked: u32 = self.warps.iter().map(|w| w.parked.count_ones()).sum();
        ExecError::Deadlock {
            block: self.ctaid,
            waits,
            threads: self.nthreads,
            exited,
            other: if parked > 0 {
                format!("{parked} threads wait at warp-synchronous instructions")
            } else {
                String::new()
            },
        }
    }

    /// Lanes `mask` of warp `wi` have a pc past the end of the code (an internal error).
    #[cold]
    pub(super) fn past_end(&self, wi: usize, mask: u32) -> ExecError {
        let nop = Insn::new(Op::Nop, 0, 0);
        let last = self.sh.prog.code.last().unwrap_or(&nop);
        ExecError::Fault {
            kind: FaultKind::Other(
                "internal error: control ran past the end of the kernel's code".into(),
            ),
            pos: self.pos(wi, mask.trailing_zeros().min(31) as usize, last),
        }
    }

    pub(super) fn fault(
        &self,
        wi: usize,
        insn: &Insn,
        e: impl Into<Box<Fault>>,
        m: u32,
    ) -> ExecError {
        let e = *e.into();
        let lane = e.lane.unwrap_or(m.trailing_zeros()) as usize;
        ExecError::Fault {
            kind: e.kind,
            pos: self.pos(wi, lane.min(31), insn),
        }
    }
}
