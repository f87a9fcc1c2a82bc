//! The warp-shape metamorphic harness (issue 22): a thread's result depends only on its inputs,
//! its IDs and the instruction's defined inter-lane semantics, so running the same per-thread
//! computation at any block size, under a guard, in a divergent branch, on one OS thread or
//! many, through the SIMD or the portable handlers and with the bytecode rewrites on or off
//! must give the same bits.
//!
//! Instances come from the instruction table, not from a hand list: every syntax form of every
//! executed opcode is instantiated with random modifiers (each slot's value set), operands typed
//! from the table's operand roles (a greedy search that the checker judges for the forms whose
//! roles are hand-checked), random registers and immediates. An instance the checker refuses is
//! dropped (it is not PTX); one the interpreter refuses at launch is counted as refused.
//!
//! Three templates:
//! - lane-wise instructions: sources loaded from the thread's input record, destinations stored
//!   to its output record; every configuration must agree with the reference (blocks of one
//!   thread, one OS thread, portable handlers, no rewrites) bit for bit;
//! - memory instructions (`ld`, `st`, `atom`, `red`, …): the address is the thread's own 32-byte
//!   cell (global, shared, local or generic), filled from its input and copied out afterwards;
//! - warp-collective instructions (`shfl`, `vote`, `match`, `redux`, `activemask`, `elect`):
//!   the member mask is the group of lanes that really run together in that configuration, and
//!   every lane's result is compared with a per-lane model of the ISA text ([`collective`]).
//!
//! Opcodes the templates cannot express (control flow, barriers, asynchronous copies, tensor
//! cores …) are listed in [`EXEMPT`] with the run tests that cover them; a test fails when an
//! executed opcode is neither exercised nor listed.

use ptx_isa::{EntryKind, Form, Opcode, ScalarType, TypeKind};
use ptx_isa::{RoleCheck, RoleKind, RoleType};
use ptxvm::{Arg, CompileOptions, Device, LaunchOptions, Module};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

pub mod collective;

/// Threads per launch (every shape runs the same logical threads; a block of 1024 leaves a
/// partial second block of 16).
pub const N: u32 = 1040;
/// The block sizes of the issue.
pub const BLOCKS: [u32; 7] = [1, 7, 31, 32, 33, 64, 1024];
/// 8-byte input slots per thread.
const NS: u32 = 8;
/// 8-byte output slots per thread.
const NOUT: u32 = 8;
/// Bytes of each thread's memory cell.
const CELL: u32 = 32;

/// Opcodes the templates do not instantiate, with the reason and where they are tested.
pub const EXEMPT: &[(&str, &str)] = &[
    (
        "bra",
        "control flow: the harness's own branch variant runs it; tests/run/ctrl",
    ),
    (
        "brx",
        "control flow over a label list (brx.idx): tests/run/ctrl",
    ),
    ("call", "calls: tests/run/ctrl (call, recursion, indirect)"),
    ("ret", "ends every harness kernel"),
    ("exit", "ends the harness's out-of-range threads"),
    ("trap", "stops the kernel: tests/run/fault"),
    ("brkpt", "stops the kernel: tests/run/fault"),
    ("nanosleep", "timing only: tests/run/sreg"),
    ("pmevent", "no effect: tests/run/ctrl"),
    (
        "bar",
        "barrier: needs every thread of the block: tests/run/ctrl, tests/run/fault",
    ),
    ("barrier", "barrier: tests/run/ctrl"),
    ("bar.warp.sync", "warp barrier: tests/run/ctrl"),
    ("barrier.cluster", "cluster barrier: tests/run/cluster"),
    ("membar", "ordering only (no value): tests/run/mem"),
    (
        "fence",
        "ordering only (no value): tests/run/mem, tests/run/async",
    ),
    ("alloca", "stack: tests/run/mem/alloca_stack.ptx"),
    ("stacksave", "stack: tests/run/mem/alloca_stack.ptx"),
    ("stackrestore", "stack: tests/run/mem/alloca_stack.ptx"),
    ("prefetch", "no value: tests/run/mem/prefetch.ptx"),
    ("prefetchu", "no value: tests/run/mem/prefetch.ptx"),
    (
        "applypriority",
        "no value: tests/run/mem/cache_qualifiers.ptx",
    ),
    ("discard", "undefined contents by definition: tests/run/mem"),
    (
        "createpolicy",
        "an opaque cache policy: tests/run/mem/cache_qualifiers.ptx",
    ),
    ("mapa", "cluster addresses: tests/run/cluster"),
    ("getctarank", "cluster addresses: tests/run/cluster"),
    ("griddepcontrol", "no value: tests/run/async"),
    ("setmaxnreg", "no value: tests/run/matrix"),
    (
        "cp.async",
        "asynchronous copies: tests/run/async (async_ref.py)",
    ),
    ("cp.async.commit_group", "tests/run/async"),
    ("cp.async.wait_group", "tests/run/async"),
    ("cp.async.wait_all", "tests/run/async"),
    ("cp.async.mbarrier.arrive", "tests/run/async"),
    ("cp.async.bulk", "tests/run/async"),
    ("cp.async.bulk.commit_group", "tests/run/async"),
    ("cp.async.bulk.wait_group", "tests/run/async"),
    ("cp.async.bulk.prefetch", "tests/run/async"),
    ("cp.async.bulk.prefetch.tensor", "tests/run/async"),
    ("cp.async.bulk.tensor", "tests/run/async (tensor_ref.py)"),
    ("cp.reduce.async.bulk", "tests/run/async"),
    ("cp.reduce.async.bulk.tensor", "tests/run/async"),
    ("st.async", "tests/run/cluster"),
    ("red.async", "tests/run/cluster"),
    ("st.bulk", "tests/run/async"),
    ("mbarrier", "tests/run/async, tests/run/cluster"),
    ("mbarrier.init", "tests/run/async"),
    ("mbarrier.inval", "tests/run/async"),
    ("mbarrier.arrive", "tests/run/async"),
    ("mbarrier.arrive_drop", "tests/run/async"),
    ("mbarrier.expect_tx", "tests/run/async"),
    ("mbarrier.complete_tx", "tests/run/async"),
    ("mbarrier.test_wait", "tests/run/async"),
    ("mbarrier.try_wait", "tests/run/async"),
    ("mbarrier.pending_count", "tests/run/async"),
    ("tensormap", "tests/run/async (tensor_ref.py)"),
    ("tensormap.replace", "tests/run/async (tensor_ref.py)"),
    ("tensormap.cp_fenceproxy", "tests/run/async"),
    (
        "mma",
        "warp-level matrix: tests/run/matrix (mma_model.py, mma_kind_model.py)",
    ),
    ("mma.sp", "tests/run/matrix (mma_model.py)"),
    ("wmma", "tests/run/matrix (wmma_model.py)"),
    ("wmma.load", "tests/run/matrix (wmma_model.py)"),
    ("wmma.store", "tests/run/matrix (wmma_model.py)"),
    ("wmma.mma", "tests/run/matrix (wmma_model.py)"),
    ("ldmatrix", "tests/run/matrix (mma_model.py)"),
    ("stmatrix", "tests/run/matrix"),
    ("movmatrix", "tests/run/matrix"),
    (
        "wgmma.mma_async",
        "warpgroup matrix: tests/run/matrix (wgmma_model.py)",
    ),
    ("wgmma.mma_async.sp", "tests/run/matrix (wgmma_model.py)"),
    ("wgmma.fence", "tests/run/matrix"),
    ("wgmma.commit_group", "tests/run/matrix"),
    ("wgmma.wait_group", "tests/run/matrix"),
    ("suld", "not executed"),
    ("ld.global.nc", "its forms are ld instances"),
];

/// SplitMix64: the same numbers on every platform.
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// A random 64-bit input: extremes of every width and kind half of the time.
pub fn operand_bits(r: &mut Rng) -> u64 {
    const EDGES: &[u64] = &[
        0,
        1,
        u64::MAX,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x7fff,
        0x8000,
        0xffff,
        0x7f,
        0x80,
        0xff,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0x3f80_0000,           // 1.0f
        0xbf80_0000,           // -1.0f
        0x7f80_0000,           // inf
        0xff80_0000,           // -inf
        0x7fc0_0000,           // NaN
        0x7f80_0001,           // sNaN
        0x0000_0001,           // f32 denormal
        0x807f_ffff,           // -denormal
        0x7f7f_ffff,           // FLT_MAX
        0x3c00_3c00,           // 1.0h x2
        0x7c00_fc00,           // inf/-inf halves
        0x7e00_0001,           // NaN half, denormal half
        0x3ff0_0000_0000_0000, // 1.0
        0x7ff0_0000_0000_0000, // inf
        0x7ff8_0000_0000_0000, // NaN
        0x0000_0000_0000_0001, // denormal
        0x4330_0000_0000_0000, // 2^52
        31,
        32,
        33,
        63,
        64,
        16,
        8,
    ];
    match r.below(4) {
        0 | 1 => *r.pick(EDGES),
        2 => r.next() & r.next(), // sparse bits
        _ => r.next(),
    }
}

/// What an operand of an instance is.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A destination register (output slot).
    Dst(ScalarType),
    /// A predicate destination.
    PredDst,
    /// A source register loaded from the input record.
    Src(ScalarType),
    /// An immediate, written as given.
    Imm(String),
    /// A predicate source (maybe negated).
    Pred(bool),
    /// The thread's memory cell at this offset.
    Addr(u32),
    /// A vector of destinations or sources.
    Vec(Vec<Op>),
    /// A destination paired with a predicate destination (`d|p`).
    DstPair(ScalarType),
    /// The member mask of the lanes that run together (collectives).
    Mask,
}

/// Where a memory instance's cell lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Local,
    Generic,
}

/// How a memory instance addresses its thread's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrMode {
    /// The thread's own 32-byte cell (strided accesses: the per-lane and gather paths).
    Own,
    /// Element `index` of a packed array of `bytes`-byte elements, the address computed by
    /// `mul.wide.u32` + `add.s64` right before the access (coalesced accesses: the full-warp
    /// 4-byte paths, and the fused indexed access with the rewrites on).
    Dense(u32),
    /// A module variable by name (`[gsym+off]`, the same address in every lane: the uniform
    /// load path); loads only.
    Symbol,
}

/// Instructions after the instance that make a pattern the rewrites fuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    None,
    /// `add.s32 t2, d, v` after a 32-bit `selp d, …`: the fused selp+add pair.
    SelpAdd,
    /// `selp.b32 s, d, 0, q; add.s32 t2, s, a` after `shfl.sync.up.b32 d|p, a, B, 0, m`, with
    /// `q` = (lane >= B): the fused warp-scan step; only `t2` is stored (`d`, `p` and `s` are
    /// dead, as the fusion requires).
    Scan,
}

/// One generated instruction.
#[derive(Clone, Debug)]
pub struct Instance {
    pub opcode: Opcode,
    pub text_op: String,
    pub ops: Vec<Op>,
    pub space: Option<Space>,
    pub addr_mode: AddrMode,
    pub target: &'static str,
    pub collective: bool,
    pub tail: Tail,
}

/// The kind of template an opcode takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Template {
    Lane,
    Memory,
    Collective,
}

pub fn template_of(name: &str) -> Option<Template> {
    if EXEMPT.iter().any(|(n, _)| *n == name) {
        return None;
    }
    Some(match name {
        "shfl" | "shfl.sync" | "vote" | "vote.sync" | "match" | "match.sync" | "redux"
        | "redux.sync" | "activemask" | "elect" | "elect.sync" => Template::Collective,
        "ld" | "ldu" | "st" | "atom" | "red" => Template::Memory,
        _ => Template::Lane,
    })
}

const TARGETS: &[&str] = &["sm_90a", "sm_100a", "sm_120a"];

fn type_mods(mods: &[String]) -> Vec<ScalarType> {
    mods.iter()
        .filter_map(|m| ScalarType::from_suffix(m))
        .collect()
}

fn resolve_role_type(t: RoleType, types: &[ScalarType]) -> Option<ScalarType> {
    Some(match t {
        RoleType::None => return None,
        RoleType::Last => *types.last()?,
        RoleType::Nth(n) => *types.get(n as usize)?,
        RoleType::Wide => wide(*types.last()?)?,
        RoleType::Address => ScalarType::U64,
        RoleType::Fixed(t) => t,
    })
}

fn wide(t: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match t {
        U16 => U32,
        S16 => S32,
        U32 => U64,
        S32 => S64,
        B16 => B32,
        B32 => B64,
        F16 => F32,
        F32 => F64,
        _ => return None,
    })
}

/// The register type that holds a value of `t` (`.u8` values live in 16-bit registers, packed
/// small floats in bit registers).
pub fn reg_type(t: ScalarType) -> ScalarType {
    use ScalarType::*;
    match t {
        U8 => U16,
        S8 => S16,
        B8 => B16,
        Bf16 => B16,
        Bf16x2 | F16x2 => B32,
        t if matches!(t.kind(), TypeKind::Float) && !matches!(t, F16 | F32 | F64) => {
            match t.size_bits() {
                0..=16 => B16,
                17..=32 => B32,
                _ => B64,
            }
        }
        t => t,
    }
}

/// A random immediate of type `t`, as PTX writes it.
fn immediate(r: &mut Rng, t: ScalarType) -> String {
    let v = operand_bits(r);
    match t {
        ScalarType::F32 => format!("0f{:08X}", v as u32),
        ScalarType::F64 => format!("0d{:016X}", v),
        t if t.kind() == TypeKind::Signed => {
            let n = t.size_bits().clamp(8, 64);
            let x = ((v << (64 - n)) as i64) >> (64 - n);
            format!("{x}")
        }
        t => {
            let n = t.size_bits().clamp(8, 64);
            let x = if n == 64 { v } else { v & ((1u64 << n) - 1) };
            format!("{x}")
        }
    }
}

/// Candidate operand kinds for an operand whose roles are hand-checked, most likely first.
fn fallback_candidates(k: usize, text: &str, types: &[ScalarType]) -> Vec<Op> {
    let last = types.last().copied().unwrap_or(ScalarType::B32);
    let mut v = Vec::new();
    let predish = matches!(
        text.trim_start_matches(['{', '!', '-', '}']),
        "p" | "q" | "c" | "pred"
    );
    if k == 0 {
        if text.contains('|') {
            v.push(Op::DstPair(last));
            v.push(Op::PredDst);
        }
        v.push(Op::Dst(last));
        if let Some(w) = wide(last) {
            v.push(Op::Dst(w));
        }
        v.push(Op::PredDst);
        v.push(Op::Dst(ScalarType::U32));
        for &t in types {
            v.push(Op::Dst(t));
        }
    } else {
        if predish {
            v.push(Op::Pred(false));
        }
        v.push(Op::Src(last));
        for &t in types {
            v.push(Op::Src(t));
        }
        v.push(Op::Src(ScalarType::U32));
        if let Some(w) = wide(last) {
            v.push(Op::Src(w));
        }
        v.push(Op::Pred(false));
    }
    v.dedup();
    v
}

/// Draws one instance of `form` (of the entry whose opcode word is `word`), typed and checked;
/// `None` when the draw is not PTX the checker accepts.
pub fn instance(r: &mut Rng, form: &Form, word: &str) -> Option<Instance> {
    // modifiers
    let mut mods: Vec<String> = form
        .path
        .split('.')
        .skip(1)
        .map(|s| format!(".{s}"))
        .collect();
    for slot in form.slots {
        if slot.optional && r.chance(1, 2) {
            continue;
        }
        let vals: Vec<&str> = slot
            .values
            .iter()
            .copied()
            .filter(|v| *v != "none")
            .collect();
        if vals.is_empty() {
            continue;
        }
        let v = *r.pick(&vals);
        for part in ptx_isa::modifier_parts(v) {
            mods.push(part.to_string());
        }
    }
    let path_word = form.path.split('.').next().unwrap_or(word);
    let (opcode, _) = Opcode::resolve(path_word, &mods)?;
    let tmpl = template_of(opcode.name())?;
    let types = type_mods(&mods);
    // 128-bit operands (b128 atomics and loads) have no register the output records hold
    if types.iter().any(|t| t.size_bits() > 64) {
        return None;
    }
    let text_op = format!("{path_word}{}", mods.concat());
    let mod_refs: Vec<&str> = mods.iter().map(|s| s.as_str()).collect();
    let space = if tmpl == Template::Memory {
        Some(if mods.iter().any(|m| m.starts_with(".shared")) {
            Space::Shared
        } else if mods.iter().any(|m| m == ".local") {
            Space::Local
        } else if mods.iter().any(|m| m == ".global") {
            Space::Global
        } else if mods
            .iter()
            .any(|m| m == ".const" || m == ".param" || m.starts_with(".shared::cluster"))
        {
            return None;
        } else {
            Space::Generic
        })
    } else {
        None
    };
    // operands: from the roles where the table has them, else candidates the checker judges
    let specs: Vec<&ptx_isa::OperandSpec> = form
        .operands
        .iter()
        .filter(|o| !o.optional || r.chance(1, 3))
        .filter(|o| !o.name.contains("cache") && !o.name.contains("policy"))
        .collect();
    if specs
        .iter()
        .any(|o| o.text.contains('(') || o.name == "label" || o.name == "tgt")
    {
        return None;
    }
    let roles = match ptx_isa::roles_for(word, &mod_refs).map(|r| r.check) {
        Some(RoleCheck::Operands(rs)) => Some(rs),
        _ => None,
    };
    let vec_n: usize = mods
        .iter()
        .find_map(|m| m.strip_prefix(".v").and_then(|n| n.parse().ok()))
        .unwrap_or(1);
    let mut cands: Vec<Vec<Op>> = Vec::new();
    for (k, spec) in specs.iter().enumerate() {
        if spec.address {
            let bytes = types.last().map_or(16, |t| t.size_bits() / 8) as usize * vec_n;
            let off = if bytes <= 16 && r.chance(1, 4) { 16 } else { 0 };
            cands.push(vec![Op::Addr(off)]);
            continue;
        }
        if tmpl == Template::Collective && spec.name == "membermask" {
            cands.push(vec![Op::Mask]);
            continue;
        }
        if tmpl == Template::Memory {
            let t = *types.last()?;
            // `ld`/`st` take registers wider than an integer type (ISA 9.4.1): a third of the
            // draws use a 64-bit one (extended on loads, truncated on stores)
            let rt = if matches!(word, "ld" | "ldu" | "st")
                && t.is_integer()
                && t.size_bits() < 64
                && r.chance(1, 3)
            {
                match t.kind() {
                    TypeKind::Signed => ScalarType::S64,
                    TypeKind::Unsigned => ScalarType::U64,
                    _ => ScalarType::B64,
                }
            } else {
                reg_type(t)
            };
            let one = if k == 0 && matches!(word, "ld" | "ldu" | "atom") {
                Op::Dst(rt)
            } else {
                Op::Src(rt)
            };
            cands.push(vec![if vec_n > 1 {
                Op::Vec(vec![one; vec_n])
            } else {
                one
            }]);
            continue;
        }
        let role = roles.and_then(|rs| rs.iter().find(|x| x.name == spec.name).or(rs.get(k)));
        let from_role = role.and_then(|ro| {
            let t = resolve_role_type(ro.ty, &types);
            Some(match ro.kind {
                RoleKind::Dst if ro.pair.is_some() && spec.text.contains('|') => Op::DstPair(t?),
                RoleKind::Dst => Op::Dst(t?),
                RoleKind::Src => Op::Src(t?),
                RoleKind::Imm => Op::Imm(format!("{}", r.below(8))),
                RoleKind::Pred { .. } => Op::Pred(spec.negatable && r.chance(1, 2)),
                RoleKind::PredDst => Op::PredDst,
                _ => return None,
            })
        });
        let any = role.is_some_and(|ro| ro.kind == RoleKind::Any);
        match from_role {
            Some(op) => cands.push(vec![op]),
            None if roles.is_some() && !any => return None,
            None => {
                let mut c = fallback_candidates(k, spec.text, &types);
                if any {
                    c.insert(0, Op::Src(ScalarType::U64));
                }
                cands.push(c)
            }
        }
    }
    let access = types.last().map_or(16, |t| t.size_bits() / 8) * vec_n as u32;
    let offset0 = !cands
        .iter()
        .any(|c| c.iter().any(|o| matches!(o, Op::Addr(x) if *x != 0)));
    let addr_mode = match space {
        Some(Space::Global | Space::Generic) if offset0 && access <= 16 => match r.below(3) {
            0 => AddrMode::Own,
            1 => AddrMode::Dense(access),
            _ if matches!(word, "ld" | "ldu") && space == Some(Space::Global) => AddrMode::Symbol,
            _ => AddrMode::Dense(access),
        },
        _ => AddrMode::Own,
    };
    let mut inst = Instance {
        opcode,
        text_op,
        ops: cands.iter().map(|c| c[0].clone()).collect(),
        space,
        addr_mode,
        target: TARGETS[0],
        collective: tmpl == Template::Collective,
        tail: Tail::None,
    };
    // the target: the first that takes the modifiers
    let target = TARGETS
        .iter()
        .find(|t| {
            inst.target = t;
            checker_errors(&inst).iter().all(|e| !e.contains("E030"))
        })
        .copied()?;
    inst.target = target;
    // greedy typing: each operand takes its first candidate the checker does not blame
    for (k, cand) in cands.iter().enumerate() {
        if cand.len() == 1 {
            continue;
        }
        for c in cand {
            inst.ops[k] = c.clone();
            if !checker_errors(&inst)
                .iter()
                .any(|e| e.starts_with(&format!("op{k}:")))
            {
                break;
            }
        }
    }
    // immediates for some sources; for a quarter of the lane-wise draws all of them (an
    // instruction with constant sources is hoisted out of the CTA by the rewrites)
    let all_imm = tmpl == Template::Lane && r.chance(1, 4);
    for k in 0..inst.ops.len() {
        if let Op::Src(t) = inst.ops[k] {
            if tmpl == Template::Lane && (all_imm || r.chance(1, 4)) && t.size_bits() <= 64 {
                let before = inst.ops[k].clone();
                inst.ops[k] = Op::Imm(immediate(r, t));
                if !checker_errors(&inst).is_empty() {
                    inst.ops[k] = before;
                }
            }
        }
    }
    // shuffles: constant lane offsets and clamps, often in the shapes of warp scans and
    // reductions (their own handlers: `.up` by a power of two with c = 0, `.down`/`.bfly`
    // with c = 31)
    if opcode == Opcode::Shfl && inst.ops.len() >= 4 && r.chance(3, 4) {
        let up = has_mod(&inst.text_op, "up");
        inst.ops[2] = Op::Imm(format!("{}", 1u32 << r.below(5)));
        inst.ops[3] = Op::Imm(if up { "0".into() } else { "31".into() });
        if up && matches!(inst.ops[0], Op::DstPair(_)) {
            inst.tail = Tail::Scan;
        }
    }
    if opcode == Opcode::Selp
        && matches!(inst.ops[0], Op::Dst(t) if t.size_bits() == 32 && t.is_integer() || t == ScalarType::B32)
    {
        inst.tail = Tail::SelpAdd;
    }
    checker_errors(&inst).is_empty().then_some(inst)
}

/// Whether the dotted instruction `text` has the modifier `m` (without its dot).
pub fn has_mod(text: &str, m: &str) -> bool {
    text.split('.').any(|p| p == m)
}

/// The checker's errors for the plain kernel of `inst`, each as `opK: message` when it points
/// into operand K, else `E0xxx: message`.
pub fn checker_errors(inst: &Instance) -> Vec<String> {
    let k = kernel(inst, Variant::Plain);
    let diags = ptx_check::check_source(&k.text, &ptx_check::CheckOptions::default());
    diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            let at = d.primary_span().map_or(0, |s| s.start as usize);
            match k.operand_spans.iter().position(|&(a, b)| at >= a && at < b) {
                Some(i) => format!("op{i}: {}", d.message),
                None => format!("{}: {}", d.code.0, d.message),
            }
        })
        .collect()
}

/// How the instance is placed in the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Every thread runs it.
    Plain,
    /// `@%pg` true in about half the threads (from the thread's input); the others keep the
    /// sentinels their destinations were given.
    Guard,
    /// A divergent branch: threads with `index % 3 == 0` run it on one path, the others on the
    /// other (both paths are the same instruction).
    Branch,
}

pub struct KernelText {
    pub text: String,
    /// Byte ranges of the instance's operands in the plain instruction.
    pub operand_spans: Vec<(usize, usize)>,
}

fn bits_of(t: ScalarType) -> u32 {
    t.size_bits().max(8)
}

/// Registers, loads and outputs of a kernel being written.
#[derive(Default)]
struct Gen {
    decl: String,
    pre: String,
    nsrc: u32,
    nreg: u32,
    dsts: Vec<(String, ScalarType)>,
    pdsts: Vec<String>,
    /// Addresses name the module variable `gsym` ([`AddrMode::Symbol`]).
    symbol: bool,
}

impl Gen {
    fn load_src(&mut self, t: ScalarType) -> String {
        self.nreg += 1;
        let name = format!("%v{}", self.nreg);
        let rt = reg_type(t);
        let _ = writeln!(self.decl, "\t.reg .{} {name};", &rt.suffix()[1..]);
        let off = (self.nsrc % NS) * 8;
        self.nsrc += 1;
        let _ = writeln!(
            self.pre,
            "\tld.global.b{} {name}, [%rin+{off}];",
            bits_of(rt)
        );
        name
    }

    fn new_pred(&mut self) -> String {
        self.nreg += 1;
        let name = format!("%q{}", self.nreg);
        let _ = writeln!(self.decl, "\t.reg .pred {name};");
        name
    }

    fn render(&mut self, op: &Op) -> String {
        match op {
            Op::Dst(t) => {
                let rt = reg_type(*t);
                let name = format!("%d{}", self.dsts.len());
                let _ = writeln!(self.decl, "\t.reg .{} {name};", &rt.suffix()[1..]);
                self.dsts.push((name.clone(), rt));
                name
            }
            Op::DstPair(t) => {
                let d = self.render(&Op::Dst(*t));
                let p = self.render(&Op::PredDst);
                format!("{d}|{p}")
            }
            Op::PredDst => {
                let p = self.new_pred();
                self.pdsts.push(p.clone());
                p
            }
            Op::Src(t) => self.load_src(*t),
            Op::Imm(s) => s.clone(),
            Op::Pred(neg) => {
                let p = self.new_pred();
                let r = self.load_src(ScalarType::U32);
                let _ = writeln!(self.pre, "\tand.b32 {r}, {r}, 1;");
                let _ = writeln!(self.pre, "\tsetp.ne.b32 {p}, {r}, 0;");
                if *neg {
                    format!("!{p}")
                } else {
                    p
                }
            }
            Op::Addr(off) => {
                let base = if self.symbol { "gsym" } else { "%rcell" };
                if *off == 0 {
                    format!("[{base}]")
                } else {
                    format!("[{base}+{off}]")
                }
            }
            Op::Vec(items) => {
                let parts: Vec<String> = items.iter().map(|o| self.render(o)).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Op::Mask => "%rmask".to_string(),
        }
    }
}

/// The kernel of an instance: `k(in, out, cells, n)`.
pub fn kernel(inst: &Instance, v: Variant) -> KernelText {
    let mut g = Gen {
        symbol: inst.addr_mode == AddrMode::Symbol,
        ..Gen::default()
    };
    let operand_text: Vec<String> = inst.ops.iter().map(|op| g.render(op)).collect();
    let Gen {
        decl,
        pre,
        dsts,
        pdsts,
        ..
    } = g;
    let mut post = String::new();
    let mut nout = 0u32;
    // sentinels, and the stores of every destination (for a scan step, only its sum)
    let mut init = String::new();
    let mut tail = Vec::new();
    let mut decl = decl;
    let mut pre = pre;
    match inst.tail {
        Tail::None => {}
        Tail::SelpAdd => {
            let _ = writeln!(decl, "\t.reg .b32 %tv, %t2;");
            let _ = writeln!(pre, "\tld.global.b32 %tv, [%rin+{}];", (NS - 1) * 8);
            tail.push(format!("add.s32 %t2, {}, %tv;", dsts[0].0));
        }
        Tail::Scan => {
            // the scan's own predicate, lane >= B (the shfl's pval for .up with c = 0), as
            // nvcc computes it: the fusion takes a predicate the shfl does not write
            let _ = writeln!(decl, "\t.reg .b32 %ts, %t2, %tlane;\n\t.reg .pred %tq;");
            let _ = writeln!(pre, "\tmov.u32 %tlane, %laneid;");
            let _ = writeln!(pre, "\tsetp.ge.u32 %tq, %tlane, {};", operand_text[2]);
            tail.push(format!("selp.b32 %ts, {}, 0, %tq;", dsts[0].0));
            tail.push(format!("add.s32 %t2, %ts, {};", operand_text[1]));
        }
    }
    let stored = if inst.tail == Tail::Scan {
        0
    } else {
        dsts.len()
    };
    for (name, t) in &dsts[..stored] {
        let b = bits_of(*t);
        let sentinel = 0x5A5A_5A5A_5A5A_5A5Au64 >> (64 - b);
        // (plain: the instruction writes it in every thread; a destination assigned once
        // lets the rewrites hoist an instance whose sources are all constant)
        if v != Variant::Plain {
            let _ = writeln!(init, "\tmov.b{b} {name}, {sentinel:#x};");
        }
        let _ = writeln!(
            post,
            "\tst.global.b{b} [%rout+{}], {name};",
            (nout % NOUT) * 8
        );
        nout += 1;
    }
    if inst.tail != Tail::None {
        let _ = writeln!(init, "\tmov.b32 %t2, 0x5a5a5a5a;");
        let _ = writeln!(post, "\tst.global.b32 [%rout+{}], %t2;", (nout % NOUT) * 8);
        nout += 1;
    }
    let pstored = if inst.tail == Tail::Scan {
        0
    } else {
        pdsts.len()
    };
    for (name, t) in &dsts[stored..] {
        let _ = writeln!(init, "\tmov.b{0} {name}, 0;", bits_of(*t));
    }
    for p in &pdsts {
        let _ = writeln!(init, "\tsetp.ne.b32 {p}, %rzero, 0;");
    }
    for p in &pdsts[..pstored] {
        let _ = writeln!(post, "\tselp.u32 %rsel, 1, 0, {p};");
        let _ = writeln!(
            post,
            "\tst.global.u32 [%rout+{}], %rsel;",
            (nout % NOUT) * 8
        );
        nout += 1;
    }
    // the instruction, and the byte ranges of its operands
    let mut insn = format!("{} ", inst.text_op);
    let mut spans = Vec::new();
    for (i, s) in operand_text.iter().enumerate() {
        if i > 0 {
            insn.push_str(", ");
        }
        spans.push((insn.len(), insn.len() + s.len()));
        insn.push_str(s);
    }
    insn.push(';');
    // the cell
    let (cell_setup, cell_out) = cell_code(inst.space);
    let addr = match (inst.addr_mode, inst.space) {
        (AddrMode::Dense(bytes), Some(Space::Global)) => {
            format!("\tmul.wide.u32 %rc1, %rindex, {bytes};\n\tadd.s64 %rcell, %rbase, %rc1;\n")
        }
        (AddrMode::Dense(bytes), _) => {
            format!("\tmul.wide.u32 %rc1, %rindex, {bytes};\n\tadd.s64 %rcell, %rgbase, %rc1;\n")
        }
        _ => String::new(),
    };
    let lines: Vec<&str> = std::iter::once(insn.as_str())
        .chain(tail.iter().map(|s| s.as_str()))
        .collect();
    let block =
        |guard: &str| -> String { lines.iter().map(|l| format!("\t{guard}{l}\n")).collect() };
    let body = match v {
        Variant::Plain => block(""),
        Variant::Guard => block("@%pg "),
        Variant::Branch => format!(
            "\t@%pb bra $L_other;\n{}\tbra.uni $L_join;\n$L_other:\n{}$L_join:\n",
            block(""),
            block("")
        ),
    };
    let head = format!(
        ".version 9.0\n.target {}\n.address_size 64\n\n.global .align 16 .b8 gsym[32] = {{1, 128, 255, 127, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 0, 0, 0, 128, 255, 255, 255, 255, 0, 0, 128, 127, 0, 0, 248, 255}};\n\n.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 pcells, .param .u32 pn)\n{{\n",
        inst.target
    );
    let prologue = format!(
        "\t.reg .b32 %rtid, %rctaid, %rntid, %rindex, %rn, %rmask, %rzero, %rsel, %rgb, %rcell32;\n\
         \t.reg .b64 %rin, %rout, %rcell, %rcells, %rt, %rc0, %rc1, %rc2, %rc3, %rshared, %rbase, %rgbase;\n\
         \t.reg .pred %pexit, %pg, %pb;\n\
         \t.shared .align 16 .b8 scell[{shared}];\n\
         \t.local .align 16 .b8 lcell[{CELL}];\n{decl}\
         \tmov.u32 %rtid, %tid.x;\n\tmov.u32 %rctaid, %ctaid.x;\n\tmov.u32 %rntid, %ntid.x;\n\
         \tmad.lo.s32 %rindex, %rctaid, %rntid, %rtid;\n\tld.param.u32 %rn, [pn];\n\
         \tsetp.ge.u32 %pexit, %rindex, %rn;\n\t@%pexit exit;\n\
         \tmov.u32 %rzero, 0;\n\
         \tld.param.u64 %rin, [pin];\n\tld.param.u64 %rout, [pout];\n\tld.param.u64 %rcells, [pcells];\n\
         \tcvta.to.global.u64 %rin, %rin;\n\tcvta.to.global.u64 %rout, %rout;\n\tmov.u64 %rgbase, %rcells;\n\tcvta.to.global.u64 %rcells, %rcells;\n\tmov.u64 %rbase, %rcells;\n\
         \tmul.wide.u32 %rt, %rindex, {inbytes};\n\tadd.s64 %rin, %rin, %rt;\n\
         \tmul.wide.u32 %rt, %rindex, {outbytes};\n\tadd.s64 %rout, %rout, %rt;\n\
         \tmul.wide.u32 %rt, %rindex, {CELL};\n\tadd.s64 %rcells, %rcells, %rt;\n\
         \tld.global.u32 %rmask, [%rin+{maskoff}];\n\
         \tld.global.u32 %rgb, [%rin+{guardoff}];\n\
         \tand.b32 %rgb, %rgb, 1;\n\tsetp.ne.b32 %pg, %rgb, 0;\n\
         \trem.u32 %rgb, %rindex, 3;\n\tsetp.eq.u32 %pb, %rgb, 0;\n",
        shared = CELL * 1024,
        inbytes = (NS + 2) * 8,
        outbytes = NOUT * 8,
        maskoff = NS * 8,
        guardoff = (NS + 1) * 8,
    );
    let text =
        format!("{head}{prologue}{cell_setup}{pre}{init}{addr}{body}{post}{cell_out}\tret;\n}}\n");
    let start = text.find(&format!("\t{insn}")).map_or(0, |p| p + 1);
    let operand_spans = spans.iter().map(|&(a, b)| (start + a, start + b)).collect();
    KernelText {
        text,
        operand_spans,
    }
}

/// Code that points `%rcell` at the thread's cell, filled with its 32 input bytes (the cells
/// buffer), and the code that copies the cell back into that buffer.
fn cell_code(space: Option<Space>) -> (String, String) {
    let Some(space) = space else {
        return (String::new(), String::new());
    };
    let fill = |dst_space: &str| {
        let mut s = String::new();
        for k in 0..4 {
            let _ = writeln!(s, "\tld.global.b64 %rc{k}, [%rcells+{}];", k * 8);
            let _ = writeln!(s, "\tst{dst_space}.b64 [%rcell+{}], %rc{k};", k * 8);
        }
        s
    };
    let back = |src_space: &str| {
        let mut s = String::new();
        for k in 0..4 {
            let _ = writeln!(s, "\tld{src_space}.b64 %rc{k}, [%rcell+{}];", k * 8);
            let _ = writeln!(s, "\tst.global.b64 [%rcells+{}], %rc{k};", k * 8);
        }
        s
    };
    match space {
        Space::Global => ("\tmov.u64 %rcell, %rcells;\n".into(), String::new()),
        // the generic address of the global cell: through the fused index pattern
        Space::Generic => (
            "\tld.param.u64 %rt, [pcells];\n\tmul.wide.u32 %rc0, %rindex, 32;\n\tadd.s64 %rcell, %rt, %rc0;\n".into(),
            String::new(),
        ),
        Space::Shared => (
            format!(
                "\tmov.u64 %rshared, scell;\n\tmul.wide.u32 %rt, %rtid, {CELL};\n\tadd.s64 %rcell, %rshared, %rt;\n{}",
                fill(".shared")
            ),
            back(".shared"),
        ),
        Space::Local => (
            format!("\tmov.u64 %rcell, lcell;\n{}", fill(".local")),
            back(".local"),
        ),
    }
}

/// One launch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub block: u32,
    pub threads: usize,
    pub simd: bool,
    pub rewrites: bool,
}

/// The reference: blocks of one thread, one OS thread, the portable handlers, no rewrites.
pub const REFERENCE: Config = Config {
    block: 1,
    threads: 1,
    simd: false,
    rewrites: false,
};

pub fn all_configs() -> Vec<Config> {
    let mut v = Vec::new();
    for &block in &BLOCKS {
        for threads in [1, 0] {
            for simd in [false, true] {
                for rewrites in [false, true] {
                    let c = Config {
                        block,
                        threads,
                        simd,
                        rewrites,
                    };
                    if c != REFERENCE {
                        v.push(c);
                    }
                }
            }
        }
    }
    v
}

/// The member mask of each logical thread: the lanes of its warp that run the instance with it
/// in this configuration and variant.
pub fn masks(block: u32, v: Variant, guard: &[bool]) -> Vec<u32> {
    let mut out = vec![0u32; N as usize];
    for i in 0..N {
        let (cta, tid) = (i / block, i % block);
        let warp0 = cta * block + (tid / 32) * 32;
        let mut m = 0u32;
        for lane in 0..32 {
            let j = warp0 + lane;
            if j >= N || j >= cta * block + block {
                continue;
            }
            let together = match v {
                Variant::Plain => true,
                Variant::Guard => guard[j as usize] && guard[i as usize],
                Variant::Branch => (j % 3 == 0) == (i % 3 == 0),
            };
            if together {
                m |= 1 << lane;
            }
        }
        out[i as usize] = m;
    }
    out
}

/// What one launch gave: the output records and the cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub out: Vec<u64>,
    pub cells: Vec<u64>,
}

/// The input of an instance: per thread NS operand slots, then the mask and guard words.
pub fn inputs(r: &mut Rng) -> (Vec<u64>, Vec<u64>, Vec<bool>) {
    let mut input = vec![0u64; (N * (NS + 2)) as usize];
    let mut guard = vec![false; N as usize];
    for i in 0..N as usize {
        for k in 0..NS as usize {
            input[i * (NS as usize + 2) + k] = operand_bits(r);
        }
        guard[i] = r.chance(1, 2);
        input[i * (NS as usize + 2) + NS as usize + 1] = guard[i] as u64;
    }
    let cells = (0..N * CELL / 8).map(|_| operand_bits(r)).collect();
    (input, cells, guard)
}

/// Runs `text` in configuration `c` with the member masks written into the inputs.
pub fn run(
    device: &Device,
    module: &mut Module,
    c: Config,
    v: Variant,
    input: &[u64],
    cells: &[u64],
    guard: &[bool],
) -> Result<Outcome, String> {
    let mut input = input.to_vec();
    for (i, m) in masks(c.block, v, guard).into_iter().enumerate() {
        let at = i * (NS as usize + 2) + NS as usize;
        input[at] = m as u64;
        input[at + 1] = guard[i] as u64;
    }
    module.set_compile_options(CompileOptions {
        rewrites: c.rewrites,
        ..Default::default()
    });
    let k = module.kernel("k").map_err(|e| e.to_string())?;
    let inb = device.from_slice(&input).map_err(|e| e.to_string())?;
    let outb = device
        .alloc::<u64>((N * NOUT) as usize)
        .map_err(|e| e.to_string())?;
    let cellb = device.from_slice(cells).map_err(|e| e.to_string())?;
    ptxvm::set_simd(c.simd);
    let opts = LaunchOptions {
        threads: c.threads,
        max_instructions: 1 << 26,
        ..LaunchOptions::default()
    };
    k.launch(
        [N.div_ceil(c.block), 1, 1],
        [c.block, 1, 1],
        0,
        &[
            Arg::buffer(&inb),
            Arg::buffer(&outb),
            Arg::buffer(&cellb),
            Arg::u32(N),
        ],
        &opts,
    )
    .map_err(|e| e.to_string())?;
    Ok(Outcome {
        out: outb.to_vec(),
        cells: cellb.to_vec(),
    })
}

/// Totals of a campaign.
#[derive(Default, Debug)]
pub struct Tally {
    pub instances: u64,
    pub launches: u64,
    pub thread_results: u64,
    pub refused: BTreeMap<String, u64>,
    pub exercised: BTreeSet<&'static str>,
    /// How often each optimised path was compiled into a compared kernel (see
    /// [`paths_reached`]).
    pub paths: BTreeMap<&'static str, u64>,
    pub mismatches: Vec<String>,
}

/// The optimised paths the fixed-seed slice must reach (see [`paths_reached`]).
pub const REQUIRED_PATHS: &[&str] = &[
    "fused warp-scan step (shfl.up + selp + add)",
    "fused selp + add",
    "fused indexed access (mul.wide + add + ld/st)",
    "fused address (mul.wide + add)",
    "hoisted instance (all sources constant)",
    "if-converted branch",
    "uniform load (constant address)",
];

/// Records which optimised paths the kernel's bytecode (rewrites on) uses: superinstructions,
/// hoisting, if-conversion, the uniform and fixed-shape handlers. The test requires each to be
/// reached, so that every fast path is compared with the reference.
fn paths_reached(module: &Module, source: &str, v: Variant, tally: &mut Tally) {
    let Some((k, _)) = module.ir().function("k") else {
        return;
    };
    let Ok(code) = ptx_interp::disasm::disassemble(module.ir(), k, source) else {
        return;
    };
    let mut hit = |p: &'static str| *tally.paths.entry(p).or_default() += 1;
    for line in code.lines() {
        if line.contains("fused shfl") {
            hit("fused warp-scan step (shfl.up + selp + add)");
        } else if line.contains("fused selp") {
            hit("fused selp + add");
        } else if line.contains("fused mul.wide")
            && (line.contains("+ ld") || line.contains("+ st"))
        {
            hit("fused indexed access (mul.wide + add + ld/st)");
        } else if line.contains("fused mul.wide") {
            hit("fused address (mul.wide + add)");
        }
        if line.contains("nop (hoisted)") && !line.contains("ld.param") {
            hit("hoisted instance (all sources constant)");
        }
        if v == Variant::Branch
            && (line.contains(" @p") || line.contains(" @!p"))
            && !line.contains(" bra ")
        {
            hit("if-converted branch");
        }
        if line.contains("ld_uniform") || (line.contains("mem ld") && line.contains("&gsym")) {
            hit("uniform load (constant address)");
        }
    }
}

/// Every executed instruction form of the table: `(opcode word, form)`.
pub fn forms() -> Vec<(&'static str, &'static Form)> {
    let mut v = Vec::new();
    for e in ptx_isa::entries() {
        if e.kind != EntryKind::Instruction {
            continue;
        }
        for f in e.forms {
            v.push((e.opcode, f));
        }
    }
    v
}

/// Whether an opcode is executed by the interpreter.
pub fn executed(op: Opcode) -> bool {
    !ptxvm::coverage::NOT_EXECUTED.iter().any(|(o, _)| *o == op)
}

/// Runs one instance in `configs` (the reference first) under every variant and compares.
pub fn check_instance(
    device: &Device,
    inst: &Instance,
    r: &mut Rng,
    configs: &[Config],
    tally: &mut Tally,
) {
    for v in [Variant::Plain, Variant::Guard, Variant::Branch] {
        let k = kernel(inst, v);
        if let Ok(dir) = std::env::var("PTXVM_SHAPES_DUMP") {
            let name = format!("{dir}/{:04}-{}-{v:?}.ptx", tally.instances, inst.text_op);
            let _ = std::fs::write(name, &k.text);
        }
        let (input, cells, guard) = inputs(r);
        let mut module = match Module::from_ptx(device, "shape.ptx", &k.text) {
            Ok(m) => m,
            Err(e) => {
                tally
                    .mismatches
                    .push(format!("{}: does not load: {e}\n{}", inst.text_op, k.text));
                return;
            }
        };
        paths_reached(&module, &k.text, v, tally);
        let reference = match run(device, &mut module, REFERENCE, v, &input, &cells, &guard) {
            Ok(o) => o,
            Err(e) => {
                let why = e.lines().next().unwrap_or("").to_string();
                *tally
                    .refused
                    .entry(format!("{}: {why}", inst.opcode.name()))
                    .or_default() += 1;
                return;
            }
        };
        tally.exercised.insert(inst.opcode.name());
        if inst.collective {
            let ref_masks = masks(REFERENCE.block, v, &guard);
            if let Some(msg) = collective::verify(
                inst,
                &input,
                REFERENCE.block,
                &ref_masks,
                &guard,
                v,
                &reference,
            ) {
                tally.mismatches.push(format!(
                    "{} [{v:?}, reference]: {msg}\n{}",
                    inst.text_op, k.text
                ));
            }
        }
        for &c in configs {
            tally.launches += 1;
            let got = match run(device, &mut module, c, v, &input, &cells, &guard) {
                Ok(o) => o,
                Err(e) => {
                    tally.mismatches.push(format!(
                        "{} [{v:?}, {c:?}]: failed where the reference ran: {e}\n{}",
                        inst.text_op, k.text
                    ));
                    continue;
                }
            };
            tally.thread_results += N as u64;
            if inst.collective {
                let m = masks(c.block, v, &guard);
                if let Some(msg) = collective::verify(inst, &input, c.block, &m, &guard, v, &got) {
                    tally.mismatches.push(format!(
                        "{} [{v:?}, {c:?}]: {msg}\n{}",
                        inst.text_op, k.text
                    ));
                }
            } else if got != reference {
                let i = (0..N as usize)
                    .find(|&i| {
                        got.out[i * NOUT as usize..(i + 1) * NOUT as usize]
                            != reference.out[i * NOUT as usize..(i + 1) * NOUT as usize]
                            || got.cells[i * 4..i * 4 + 4] != reference.cells[i * 4..i * 4 + 4]
                    })
                    .unwrap_or(0);
                tally.mismatches.push(format!(
                    "{} [{v:?}, {c:?}]: thread {i}: got out {:x?} cells {:x?}, reference out {:x?} cells {:x?}\n{}",
                    inst.text_op,
                    &got.out[i * NOUT as usize..(i + 1) * NOUT as usize],
                    &got.cells[i * 4..i * 4 + 4],
                    &reference.out[i * NOUT as usize..(i + 1) * NOUT as usize],
                    &reference.cells[i * 4..i * 4 + 4],
                    k.text
                ));
            }
        }
    }
    tally.instances += 1;
}

/// The input record of thread `i`: its NS operand slots.
pub fn record(input: &[u64], i: usize) -> &[u64] {
    &input[i * (NS as usize + 2)..i * (NS as usize + 2) + NS as usize]
}

/// Output slot `k` of thread `i`.
pub fn out_slot(o: &Outcome, i: usize, k: usize) -> u64 {
    o.out[i * NOUT as usize + k]
}
