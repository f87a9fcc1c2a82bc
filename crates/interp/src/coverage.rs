//! What the interpreter executes, per entry of the ISA table: the "execute" column of
//! `ptxvm doc --list --coverage` and `docs/isa-coverage.md`.
//!
//! [`NOT_EXECUTED`] is the one list of the opcodes the interpreter does not execute, each with
//! its reason; every other [`Opcode`] has a decoder arm (the decoder matches every opcode, so
//! an opcode added to the table without a handler or an entry here does not compile). The list
//! feeds the decoder's refusal, the coverage column, and the `coverage` test of `ptxvm-cli`,
//! which checks that every executed table name is exercised, with expected values, by a run
//! test under `tests/run/`. Special registers go through the same function that gives them
//! their values.

use ptx_isa::{Entry, EntryKind, Opcode, Support};

/// Declares [`NOT_EXECUTED`] and the pattern `not_executed!()` that matches its opcodes (the
/// decoder's arm for them), from one list.
macro_rules! not_executed_list {
    ($($op:ident: $why:expr,)*) => {
        /// The opcodes the interpreter does not execute yet, with the reason.
        pub const NOT_EXECUTED: &[(Opcode, &str)] = &[$((Opcode::$op, $why),)*];

        /// The pattern matching the opcodes of [`NOT_EXECUTED`].
        macro_rules! not_executed {
            () => { $(Opcode::$op)|* };
        }
        pub(crate) use not_executed;
    };
}

const CLUSTER: &str = "ptxvm does not execute cluster launch control yet";
const MATRIX: &str = "ptxvm does not execute the warp-level matrix instructions yet";
const TEXTURE: &str = "ptxvm models no textures or surfaces";
const TMEM: &str = "ptxvm models no tensor memory (tcgen05)";
const MULTIMEM: &str = "multimem addresses need NVLink multicast objects (cuMulticastCreate), \
                        which ptxvm does not model: a kernel using them is refused at launch";
const VIDEO: &str = "ptxvm does not execute the video instructions yet";

not_executed_list! {
    Clusterlaunchcontrol: CLUSTER,
    ClusterlaunchcontrolQueryCancel: CLUSTER,
    ClusterlaunchcontrolTryCancel: CLUSTER,
    Istypep: TEXTURE,
    MultimemCpAsyncBulk: MULTIMEM,
    MultimemCpReduceAsyncBulk: MULTIMEM,
    MultimemLdReduce: MULTIMEM,
    MultimemRed: MULTIMEM,
    MultimemSt: MULTIMEM,
    Suld: TEXTURE,
    Suq: TEXTURE,
    Sured: TEXTURE,
    Sust: TEXTURE,
    Tcgen05: TMEM,
    Tcgen05Alloc: TMEM,
    Tcgen05Commit: TMEM,
    Tcgen05Cp: TMEM,
    Tcgen05Dealloc: TMEM,
    Tcgen05Ld: TMEM,
    Tcgen05Mma: TMEM,
    Tcgen05RelinquishAllocPermit: TMEM,
    Tcgen05Shift: TMEM,
    Tcgen05St: TMEM,
    Tex: TEXTURE,
    Tld4: TEXTURE,
    Txq: TEXTURE,
    Vabsdiff: VIDEO,
    Vabsdiff2: VIDEO,
    Vadd: VIDEO,
    Vadd2: VIDEO,
    Vadd4: VIDEO,
    Vavrg2: VIDEO,
    Vavrg4: VIDEO,
    Vmad: VIDEO,
    Vmax: VIDEO,
    Vmax2: VIDEO,
    Vmax4: VIDEO,
    Vmin: VIDEO,
    Vmin2: VIDEO,
    Vmin4: VIDEO,
    Vset: VIDEO,
    Vset2: VIDEO,
    Vset4: VIDEO,
    Vshl: VIDEO,
    Vshr: VIDEO,
    Vsub: VIDEO,
    Vsub2: VIDEO,
    Vsub4: VIDEO,
    Wgmma: MATRIX,
}

/// Why the interpreter does not execute `op`, or `None` when it does.
pub fn not_executed_reason(op: Opcode) -> Option<&'static str> {
    NOT_EXECUTED
        .iter()
        .find(|(o, _)| *o == op)
        .map(|(_, why)| *why)
}

/// Whether the interpreter executes `op` (every form of it the checker accepts).
pub fn opcode_executes(op: Opcode) -> bool {
    not_executed_reason(op).is_none()
}

/// The refusal of the decoder for an opcode of [`NOT_EXECUTED`].
pub(crate) fn refusal(op: Opcode) -> String {
    let why = not_executed_reason(op).unwrap_or("not executed yet");
    format!(
        "ptxvm does not execute `{}` instructions yet ({why})",
        op.name()
    )
}

/// The opcode a table name (`ld.global.nc`, `cp.async.bulk`) is an instance of.
pub fn opcode_of_name(name: &str) -> Option<Opcode> {
    let mut parts = name.split('.');
    let word = parts.next()?;
    let mods: Vec<String> = parts.map(|p| format!(".{p}")).collect();
    Opcode::resolve(word, &mods).map(|(op, _)| op)
}

/// Every instruction name of the table whose opcode the interpreter executes (`add.cc`,
/// `ld.global.nc`), sorted and without repeats.
pub fn executed_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = ptx_isa::entries()
        .iter()
        .filter(|e| e.kind == EntryKind::Instruction)
        .flat_map(|e| e.names.iter().copied())
        .filter(|n| opcode_of_name(n).is_some_and(opcode_executes))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// How far the interpreter executes `e`.
pub fn executes(e: &Entry) -> Support {
    match e.kind {
        EntryKind::Instruction => {
            let n = e
                .names
                .iter()
                .filter(|n| opcode_of_name(n).is_some_and(opcode_executes))
                .count();
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
            if crate::decode::special_register_executes(&name) {
                Support::Yes
            } else {
                Support::No
            }
        }
        // all are honoured: declarations and initialisers by the loader, `.reqntid`,
        // `.maxntid` and the cluster directives by the launch (which refuses a launch that
        // breaks them); the rest are debug information or hints with no effect on results
        EntryKind::Directive => Support::Yes,
    }
}
