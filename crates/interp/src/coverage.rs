//! What the interpreter executes, per entry of the ISA table: the "execute" column of
//! `ptxvm doc --list --coverage` and `docs/isa-coverage.md`.
//!
//! [`EXECUTED`] lists every instruction name that [`crate::compile`] turns into bytecode; the
//! `coverage` test of `ptxvm-cli` checks that each of them is exercised, with expected values, by
//! a run test under `tests/run/`. Special registers go through the same function that gives them
//! their values.

use ptx_isa::{Entry, EntryKind, Support};

/// Instruction names (as the table's entries name them) that the interpreter executes in every
/// form the table lists.
pub const EXECUTED: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "add.cc",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "bar.warp.sync",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx.idx",
    "call",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "createpolicy",
    "cvt",
    "cvt.pack",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect.sync",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "isspacep",
    "ld",
    "ld.global.nc",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad.cc",
    "mad24",
    "madc",
    "match.sync",
    "max",
    "membar",
    "min",
    "mov",
    "mul",
    "mul24",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "rcp.approx.ftz.f64",
    "red",
    "redux.sync",
    "rem",
    "ret",
    "rsqrt",
    "rsqrt.approx.ftz.f64",
    "sad",
    "selp",
    "set",
    "setp",
    "shf",
    "shfl.sync",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "sub",
    "sub.cc",
    "subc",
    "szext",
    "tanh",
    "testp",
    "trap",
    "vote.sync",
    "xor",
];

/// The table name that instruction `opcode` with modifiers `mods` (each with its leading dot,
/// as the IR keeps them) is an instance of: among the names of the table's entries for the
/// opcode, the longest whose every part after the opcode is among the modifiers
/// (`barrier.cluster.arrive` is `barrier.cluster`, `bar.warp.sync` is `bar.warp.sync`,
/// `ld.global.nc.f32` is `ld.global.nc`, `ld.global.f32` is `ld`). `None` when the table has
/// no name for it.
pub fn table_name<S: AsRef<str>>(opcode: &str, mods: &[S]) -> Option<&'static str> {
    let has = |part: &str| {
        mods.iter().any(|m| {
            m.as_ref()
                .trim_start_matches('.')
                .split('.')
                .any(|x| x == part)
        })
    };
    ptx_isa::lookup(opcode)
        .iter()
        .filter(|e| e.kind == EntryKind::Instruction)
        .flat_map(|e| e.names.iter().copied())
        .filter(|n| {
            let mut parts = n.split('.');
            parts.next() == Some(opcode) && parts.all(has)
        })
        .max_by_key(|n| n.split('.').count())
}

/// Whether the interpreter executes instruction `opcode` with modifiers `mods`, by [`EXECUTED`]
/// (the one list of what executes): `Err` with the reason when it does not. An instruction the
/// table has no name for is left to the decoder.
pub fn check_executes<S: AsRef<str>>(opcode: &str, mods: &[S]) -> Result<(), String> {
    match table_name(opcode, mods) {
        Some(n) if !EXECUTED.contains(&n) => {
            Err(format!("ptxvm does not execute `{n}` instructions yet"))
        }
        _ => Ok(()),
    }
}

/// Directives of cluster launches, which ptxvm does not model (every CTA is a cluster of one).
/// All other directives are honoured: declarations and initialisers by the loader, `.reqntid`
/// and `.maxntid` by the launch (which refuses a block that breaks them), and the rest are debug
/// information or performance hints with no effect on results.
const CLUSTER_DIRECTIVES: &[&str] = &["explicitcluster", "maxclusterrank", "reqnctapercluster"];

/// How far the interpreter executes `e`.
pub fn executes(e: &Entry) -> Support {
    match e.kind {
        EntryKind::Instruction => {
            let n = e.names.iter().filter(|n| EXECUTED.contains(n)).count();
            if n == 0 {
                Support::No
            } else if n == e.names.len() {
                Support::Yes
            } else {
                Support::Partial
            }
        }
        EntryKind::SpecialRegister => {
            // `%envreg<32>` stands for `%envreg0` .. `%envreg31`
            let name = match e.opcode.split_once('<') {
                Some((stem, _)) => format!("%{stem}0"),
                None => format!("%{}", e.opcode),
            };
            if crate::compile::special_register_executes(&name) {
                Support::Yes
            } else {
                Support::No
            }
        }
        EntryKind::Directive => {
            if CLUSTER_DIRECTIVES.contains(&e.opcode) {
                Support::Partial
            } else {
                Support::Yes
            }
        }
    }
}
