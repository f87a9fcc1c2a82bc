//! The compiled form of a kernel: pre-decoded bytecode over register slots.
//!
//! Every operand of an [`Insn`] is a slot index: registers of every function reachable from
//! the kernel, immediates (materialised once per warp into constant slots), special registers
//! that are fixed for a thread (`%tid`, `%ctaid`, …, filled when the warp is created), and the
//! per-thread frame pointer. A slot holds 32 lanes of `u64` ([`Lanes`]), stored lane-major, so
//! one dispatch of an instruction serves the whole warp in a tight loop that the compiler can
//! vectorise. Predicates live apart, one `u32` lane mask per predicate slot, so guards and
//! branch conditions are single mask operations.

use crate::mem::{MemMap, FUNC_WINDOW};

/// 32 lanes of one register slot.
pub type Lanes = [u64; 32];
/// All lanes active.
pub const FULL: u32 = u32::MAX;
/// The lanes set in a mask, lowest first ([`lane_bits`]).
#[derive(Clone, Copy)]
pub struct LaneBits(u32);

impl Iterator for LaneBits {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let l = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(l as usize)
    }
}

/// The lanes set in `mask`, lowest first.
#[inline]
pub fn lane_bits(mask: u32) -> LaneBits {
    LaneBits(mask)
}

/// Runs `f` for each lane of `mask`, lowest first (a plain loop when the warp is full, which
/// the compiler can vectorise).
#[inline(always)]
pub fn for_lanes(mask: u32, mut f: impl FnMut(usize)) {
    if mask == FULL {
        for l in 0..32 {
            f(l);
        }
    } else {
        for l in lane_bits(mask) {
            f(l);
        }
    }
}

/// `1 << l` for each lane `l`: lane loops test mask bits against this table instead of
/// shifting by the lane index, so that they vectorise (baseline x86-64 has no per-element
/// variable shifts).
pub const LANE_BIT: [u32; 32] = {
    let mut b = [0; 32];
    let mut l = 0;
    while l < 32 {
        b[l] = 1 << l;
        l += 1;
    }
    b
};

/// [`LANE_BIT`] as 64-bit masks, for lane loops over 64-bit lanes (a vector compare of a lane
/// mask against this table needs no widening).
pub const LANE_BIT64: [u64; 32] = {
    let mut b = [0; 32];
    let mut l = 0;
    while l < 32 {
        b[l] = 1 << l;
        l += 1;
    }
    b
};

/// No guard predicate.
pub const NO_PRED: u32 = u32::MAX;

/// An ALU handler: computes the instruction for the lanes in `mask`.
pub type AluFn = fn(&mut [Lanes], &mut [u32], &Insn, u32);
/// What a memory handler returns: its fault, boxed so that the common `Ok` is one register.
pub type MemResult = Result<(), Box<Fault>>;
/// A handler that touches memory or warp state.
pub type MemFn = fn(&mut Ctx<'_>, &Insn, u32) -> MemResult;

/// How an instruction executes.
#[derive(Clone, Copy)]
pub enum Op {
    /// Pure lane-wise computation.
    Alu(AluFn),
    /// Memory, special registers, warp-wide data exchange.
    Mem(MemFn),
    /// A warp-synchronous instruction (`shfl.sync`, `vote.sync`, …): every lane of the member
    /// mask (in `Insn::b`'s slot or the full warp) must be present before it runs.
    WarpSync(MemFn),
    /// `bra`.
    Bra(u32),
    /// `brx.idx`: index into [`Program::tables`].
    Brx(u32),
    /// `call`: index into [`Program::calls`].
    Call(u32),
    /// `ret`.
    Ret,
    /// `exit`.
    Exit,
    /// `trap`.
    Trap,
    /// `bar.sync` & co.: index into [`Program::barriers`].
    Bar(u32),
    /// An asynchronous-copy or mbarrier instruction (`cp.async*`, `mbarrier.*`): what it
    /// does is in `Insn::aux` (`crate::ops_async`); it reads and changes the CTA's pending
    /// copies and may suspend its lanes.
    Async,
    /// `wgmma.mma_async`, `wgmma.commit_group`, `wgmma.wait_group` (`crate::exec::wgmma`):
    /// warpgroup-collective, with results pending until a wait.
    Wgmma,
    /// No effect (`membar`, `prefetch`, `nanosleep`, …).
    Nop,
    /// Valid PTX that this version cannot execute: index into [`Program::messages`].
    Unsupported(u32),
    /// An instruction watched by a sanitizer check: index into [`Program::probes`], which
    /// keeps the operation it runs (only in programs that `crate::exec::instrument` rewrote
    /// for a checked launch; the dispatch loop hands it to the warp's control path).
    Probe(u32),
}

/// One pre-decoded instruction.
#[derive(Clone)]
pub struct Insn {
    /// What to do.
    pub op: Op,
    /// Destination slot (or predicate slot).
    pub d: u32,
    /// Source slots.
    pub a: u32,
    /// Second source.
    pub b: u32,
    /// Third source.
    pub c: u32,
    /// Vector operand slots, second destinations, fourth sources.
    pub v: [u32; 4],
    /// Address offset or small immediate.
    pub imm: i64,
    /// Decoded modifiers, packed per handler.
    pub aux: u64,
    /// Guard predicate slot or [`NO_PRED`].
    pub guard: u32,
    /// `@!p`.
    pub neg: bool,
    /// How many no-ops ([`Op::Nop`]: hoisted or dead instructions) directly follow this one in
    /// the same function: the executor's dispatch loop steps over them (counting them as
    /// executed) when it falls through.
    pub skip: u16,
    /// Guarded by if-conversion (module `ifconv`): counted as executed only by the lanes
    /// whose guard holds, as if the branch it replaced had skipped it for the others.
    pub converted: bool,
    /// Function index of the source instruction.
    pub func: u32,
    /// Instruction index within that function.
    pub inst: u32,
}

impl Insn {
    /// Slot of source operand `k` of a lane-wise instruction: `a`, `b`, `c`, then `v[0]`.
    #[inline(always)]
    pub fn src(&self, k: usize) -> u32 {
        match k {
            0 => self.a,
            1 => self.b,
            2 => self.c,
            _ => self.v[0],
        }
    }

    /// An instruction with only its operation and source position set.
    pub fn new(op: Op, func: u32, inst: u32) -> Insn {
        Insn {
            op,
            d: 0,
            a: 0,
            b: 0,
            c: 0,
            v: [0; 4],
            imm: 0,
            aux: 0,
            guard: NO_PRED,
            neg: false,
            skip: 0,
            converted: false,
            func,
            inst,
        }
    }
}

/// How a call passes one argument or result.
#[derive(Clone, Debug)]
pub enum ArgMove {
    /// Copy `size` bytes between frame offsets (`.param` variables).
    Frame {
        /// Offset in the caller's frame.
        caller: u64,
        /// Offset in the callee's frame.
        callee: u64,
        /// Bytes.
        size: u64,
    },
    /// A register or immediate slot stored into the callee frame (`size` bytes).
    SlotToFrame {
        /// Source slot.
        slot: u32,
        /// Callee frame offset.
        callee: u64,
        /// Bytes.
        size: u64,
    },
    /// Slot to slot (`.reg` parameters).
    Slot {
        /// Source slot.
        from: u32,
        /// Destination slot.
        to: u32,
    },
    /// Callee frame bytes into a register (return value into a `.reg`).
    FrameToSlot {
        /// Callee frame offset.
        callee: u64,
        /// Destination slot.
        slot: u32,
        /// Bytes.
        size: u64,
    },
}

/// What a call goes to.
#[derive(Clone, Debug)]
pub enum CallTarget {
    /// A defined function: index into [`Program::funcs`].
    Func(u32),
    /// Through a register holding a code address.
    Indirect(u32),
    /// `vprintf`.
    Vprintf,
    /// `__assertfail`.
    AssertFail,
    /// Device-side `malloc` (the device heap, [`crate::mem::DeviceHeap`]).
    Malloc,
    /// Device-side `free`.
    Free,
    /// A function without a body that we do not provide.
    Undefined(String),
}

/// A call site.
#[derive(Clone, Debug)]
pub struct CallSite {
    /// Callee.
    pub target: CallTarget,
    /// Argument operands: (slot or frame offset, size) as written.
    pub args: Vec<CallOperand>,
    /// Result operands.
    pub rets: Vec<CallOperand>,
}

/// One operand of a call's argument or result list.
#[derive(Clone, Debug)]
pub enum CallOperand {
    /// A `.param` variable at this offset of the caller's frame.
    Frame(u64, u64),
    /// A register or immediate slot.
    Slot(u32),
}

/// A compiled function.
#[derive(Clone, Debug)]
pub struct FuncInfo {
    /// Index in the IR module.
    pub ir_index: u32,
    /// Name.
    pub name: String,
    /// First instruction in [`Program::code`].
    pub entry: u32,
    /// Frame size in bytes.
    pub frame_size: u64,
    /// Register slots of this function (`first..end`), saved around recursive calls.
    pub slots: (u32, u32),
    /// Predicate slots of this function.
    pub pred_slots: (u32, u32),
    /// Whether it can be active twice in one thread (part of a call-graph cycle).
    pub recursive: bool,
    /// Parameters: (frame offset, size, register slot for `.reg` params).
    pub params: Vec<(u64, u64, Option<u32>)>,
    /// Return parameters, same shape.
    pub returns: Vec<(u64, u64, Option<u32>)>,
}

/// A barrier instruction.
#[derive(Clone, Debug)]
pub struct Barrier {
    /// Kind.
    pub kind: BarKind,
    /// Barrier id: immediate, or a register slot when `id_slot` is set.
    pub id: u32,
    /// The id comes from this slot.
    pub id_slot: Option<u32>,
    /// Thread count: immediate, slot, or all threads of the CTA.
    pub count: Option<u32>,
    /// The count comes from this slot.
    pub count_slot: Option<u32>,
    /// `.aligned` (all lanes of the warp must execute it together).
    pub aligned: bool,
    /// The reduction of `bar.red` and its destination.
    pub red: Option<(RedOp, u32, u32, bool)>,
}

impl Barrier {
    /// `bar.sync id` with a constant id in range, for every thread of the CTA, no reduction:
    /// the executor's short path when a whole group arrives.
    pub fn whole_cta(&self) -> bool {
        self.kind == BarKind::Sync
            && self.id_slot.is_none()
            && self.id < 16
            && self.count.is_none()
            && self.count_slot.is_none()
            && self.red.is_none()
    }
}

/// Barrier flavours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarKind {
    /// `bar.sync` / `barrier.sync`: arrive and wait.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red`: arrive, wait, reduce a predicate.
    Red,
    /// `bar.warp.sync`.
    Warp,
}

/// `bar.red` reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    /// `.popc.u32`
    Popc,
    /// `.and.pred`
    And,
    /// `.or.pred`
    Or,
}

/// A compiled kernel with everything reachable from it.
pub struct Program {
    /// Instructions hoisted out of the kernel's code (their places hold [`Op::Nop`]): run once
    /// per warp when a worker first sets the warp up (see `invariant`).
    pub prelude: Vec<Insn>,
    /// Value slots zeroed at the start of every CTA (half-open ranges); the others keep
    /// constants, launch-invariant special registers and values no read can see stale.
    pub reset_slots: Vec<(u32, u32)>,
    /// Predicate slots cleared at the start of every CTA (half-open ranges).
    pub reset_preds: Vec<(u32, u32)>,
    /// The instructions of every reachable function.
    pub code: Vec<Insn>,
    /// Functions (the kernel first).
    pub funcs: Vec<FuncInfo>,
    /// IR function index → index in `funcs`.
    pub func_of_ir: Vec<Option<u32>>,
    /// Number of value slots.
    pub nslots: u32,
    /// Number of predicate slots.
    pub npreds: u32,
    /// Constant slots and their values.
    pub consts: Vec<(u32, u64)>,
    /// Constant predicate slots (all-true, all-false).
    pub const_preds: Vec<(u32, u32)>,
    /// Special-register slots filled when a warp starts.
    pub sreg_slots: Vec<(u32, SregInit)>,
    /// The frame pointer slot.
    pub fp_slot: u32,
    /// The carry flag slot (`.cc`).
    pub cc_slot: u32,
    /// `brx.idx` tables (code indices).
    pub tables: Vec<Vec<u32>>,
    /// Operand slot lists (the coordinates of tensor copies, `wmma.mma`'s registers), by
    /// `Insn::imm`.
    pub lists: Vec<Vec<u32>>,
    /// Call sites.
    pub calls: Vec<CallSite>,
    /// Barriers.
    pub barriers: Vec<Barrier>,
    /// Messages of unsupported instructions.
    pub messages: Vec<String>,
    /// Memory accesses that may reach another CTA of the cluster (`ld`/`st`/`atom`/`red` on
    /// `.shared::cluster`, or generic ones in a module that maps generic addresses with
    /// `mapa`): the access as decoded, and the slots it writes (`u32::MAX`: none). Their
    /// place in the code holds an [`Op::Async`] of kind `CL_MEM` with this list's index.
    pub cluster_mem: Vec<(Insn, [u32; 5])>,
    /// Static shared memory bytes.
    pub shared_static: u64,
    /// The shared variables: (offset, size, name); dynamic shared memory (`extern .shared`)
    /// with size 0 (it runs to the end), for sanitizer reports.
    pub shared_vars: Vec<(u64, u64, String)>,
    /// The probes of a checked launch's program (see [`Op::Probe`]); empty otherwise.
    pub probes: Vec<crate::exec::Probe>,
    /// Kernel parameter layout: (offset, size) per parameter.
    pub params: Vec<(u64, u64)>,
    /// Size of the parameter buffer.
    pub param_size: u64,
    /// The instructions ptxvm does not execute yet, as (function, instruction, message index):
    /// a launch is refused when any is listed (collected once, when the kernel is compiled).
    pub unsupported: Vec<(u32, u32, u32)>,
    /// The superinstructions that `fuse` made (for the disassembler, [`crate::disasm`]; the
    /// executor does not read it).
    pub fused: Vec<crate::disasm::Fused>,
    /// Whether the code holds a cluster instruction (`barrier.cluster`, `mapa`, `getctarank`, a
    /// `.shared::cluster` access): its launches then run the CTAs of each cluster together.
    pub cluster_insts: bool,
    /// Whether the code may `alloca`: local memory can then grow past the kernel's frame
    /// without a call, and a CTA must clear what the last one left.
    pub alloca: bool,
}

impl Program {
    /// Whether the kernel calls device-side `malloc` or `free` (its launch needs the device
    /// heap, [`crate::mem::GlobalMemory::heap`]).
    pub fn uses_heap(&self) -> bool {
        self.calls
            .iter()
            .any(|c| matches!(c.target, CallTarget::Malloc | CallTarget::Free))
    }
}

/// Per-thread values of special registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SregInit {
    /// `%tid.c`
    Tid(u8),
    /// `%ntid.c`
    Ntid(u8),
    /// `%ctaid.c`
    Ctaid(u8),
    /// `%nctaid.c`
    Nctaid(u8),
    /// `%laneid`
    Laneid,
    /// `%warpid`
    Warpid,
    /// `%nwarpid`
    Nwarpid,
    /// `%lanemask_eq`
    LanemaskEq,
    /// `%lanemask_lt`
    LanemaskLt,
    /// `%lanemask_le`
    LanemaskLe,
    /// `%lanemask_gt`
    LanemaskGt,
    /// `%lanemask_ge`
    LanemaskGe,
    /// `%smid`
    Smid,
    /// `%nsmid`
    Nsmid,
    /// `%gridid`
    Gridid,
    /// `%dynamic_smem_size`
    DynSmem,
    /// `%total_smem_size`
    TotalSmem,
    /// `%clusterid`, `%cluster_ctaid`… and other registers that are 0 here.
    Zero,
    /// `%cluster_nctaid`, `%nclusterid`... fixed at 1.
    One,
    /// `%clusterid.c`
    ClusterId(u8),
    /// `%nclusterid.c`
    NClusterId(u8),
    /// `%cluster_ctaid.c`
    ClusterCtaid(u8),
    /// `%cluster_nctaid.c`
    ClusterNctaid(u8),
    /// `%cluster_ctarank`
    ClusterCtarank,
    /// `%cluster_nctarank`
    ClusterNctarank,
    /// `%is_explicit_cluster`
    IsExplicitCluster,
}

/// A memory or execution fault of one lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The lane (0..32) that faulted, when one did.
    pub lane: Option<u32>,
}

/// Kinds of faults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// An access outside every allocation of its space.
    OutOfBounds {
        /// `global`, `shared`, `local`, `param`, `const`, `generic`.
        space: &'static str,
        /// The address.
        addr: u64,
        /// Access size in bytes.
        size: u32,
        /// Extra context (nearest allocation).
        detail: String,
    },
    /// An address not aligned to the access size.
    Misaligned {
        /// Space.
        space: &'static str,
        /// Address.
        addr: u64,
        /// Required alignment.
        align: u32,
    },
    /// A store to `.const` memory.
    ReadOnly {
        /// Address.
        addr: u64,
    },
    /// Other faults with a message.
    Other(String),
}

/// What every handler of a launch sees the same: built once per launch, so that building a
/// [`Ctx`] for each memory instruction copies one reference instead of all of it.
pub struct Env<'a> {
    /// Global memory.
    pub mem: &'a MemMap,
    /// Shared memory size in bytes of each CTA.
    pub shared_size: u64,
    /// Kernel parameter buffer.
    pub params: &'a [u32],
    /// Parameter buffer size.
    pub param_size: u64,
    /// Local memory (stack) bytes each thread may use: its `.local` frame, call frames, `alloca`.
    pub local_limit: u64,
    /// Launch start, for `%globaltimer` and `%clock` (read only by the handler of those).
    pub start: std::time::Instant,
    /// The program's operand slot lists ([`Program::lists`]), for handlers of instructions with
    /// more operands than an [`Insn`] holds (`wmma.mma`).
    pub lists: &'a [Vec<u32>],
}

/// Execution context of the warp running a handler.
pub struct Ctx<'a> {
    /// Register slots of the warp.
    pub regs: &'a mut [Lanes],
    /// Predicate slots of the warp.
    pub preds: &'a mut [u32],
    /// The CTA's shared memory.
    pub shared: &'a mut Vec<u32>,
    /// Local memory of each lane of the warp.
    pub local: &'a mut [crate::mem::LocalMem],
    /// Per-lane stack top (for `alloca`).
    pub sp: &'a mut [u64; 32],
    /// Lanes of the warp that have not exited (for `activemask`).
    pub live: u32,
    /// The launch's constants.
    pub env: &'a Env<'a>,
}

/// Memory spaces an address can name at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Global,
    Const,
    Shared,
    Local,
    KernelParam,
    Generic,
}

/// Where module globals live on the device.
#[derive(Clone, Debug, Default)]
pub struct GlobalAddrs {
    /// Device address of each IR global in `.global`/`.const` (0 for others).
    pub addr: Vec<u64>,
}

/// The code address of IR function `f`.
pub fn func_addr(f: u32) -> u64 {
    FUNC_WINDOW + f as u64 * 16
}
