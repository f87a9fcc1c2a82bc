//! Every example of the instruction table that the checker accepts, and whose instruction the
//! interpreter executes, goes through lowering, decoding and one launch: none may be refused as
//! "not supported" or fail to decode. These are the statements and kernels of `ptx-check`'s
//! `examples` test (`ptx_check::examples`). Registers start at zero, so a load or store may
//! fault on its address: that is the kernel's fault, not a gap of the interpreter, and allowed.
//! An example of an instruction in `NOT_EXECUTED` must be refused before it starts (E0609).

use ptx_check::examples::{accepted_kernel, instruction_statements};
use ptx_interp::coverage::not_executed_reason;
use ptx_isa::Opcode;
use ptxvm::{Device, Error, LaunchOptions, Module};
use std::time::Duration;

/// The opcode of an example statement (`@p add.s32 …` → `add`).
fn opcode_of(stmt: &str) -> Option<Opcode> {
    let mut words = stmt.split_whitespace();
    let mut head = words.next()?.trim_end_matches(';');
    if head.starts_with('@') {
        head = words.next()?.trim_end_matches(';');
    }
    let mut parts = head.split('.');
    let word = parts.next()?;
    let mods: Vec<String> = parts.map(|p| format!(".{p}")).collect();
    Opcode::resolve(word, &mods).map(|(o, _)| o)
}

/// Example statements that check but that ptxvm refuses for a construct of their operands,
/// not of their instruction, with the reason. The list must be exact.
const OPERAND_GAPS: &[(&str, &str)] = &[
    (
        "ld.shared.v4.b32 Q,[p];",
        "the test declares `Q` as a vector register (`.reg .v4 .b32`), which lowering refuses (E0501)",
    ),
    (
        "ldu.global.v4.f32 Q,[p];",
        "the test declares `Q` as a vector register (`.reg .v4 .f32`), which lowering refuses (E0501)",
    ),
    (
        "st.global.v4.s32 [p],Q;",
        "the test declares `Q` as a vector register (`.reg .v4 .s32`), which lowering refuses (E0501)",
    ),
    (
        "cvta.shared::cta.u32 p,As+4;",
        "a register plus a constant as a value operand (ptxas takes it) is not lowered yet",
    ),
];

#[test]
fn every_executed_example_decodes_and_runs() {
    let device = Device::new();
    let opts = LaunchOptions {
        threads: 1,
        max_instructions: 100_000,
        timeout: Some(Duration::from_secs(10)),
        ..LaunchOptions::default()
    };
    let (mut ran, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for stmt in instruction_statements() {
        let Some(src) = accepted_kernel(&stmt) else {
            continue;
        };
        let Some(op) = opcode_of(&stmt) else {
            failures.push(format!("`{stmt}`: no opcode"));
            continue;
        };
        let executes = not_executed_reason(op).is_none();
        let result = Module::from_ptx(&device, "example.ptx", &src).and_then(|m| {
            let k = m.kernel("k")?;
            k.launch([1, 1, 1], [32, 1, 1], 0, &[], &opts)
        });
        let gap = OPERAND_GAPS.iter().any(|(s, _)| *s == stmt);
        match result {
            Ok(_) | Err(Error::Kernel { .. }) if gap => {
                failures.push(format!("`{stmt}` runs: remove it from OPERAND_GAPS"))
            }
            Ok(_) | Err(Error::Kernel { .. }) if executes => ran += 1,
            // refused before it starts: E0609, or E0501 for a construct lowering lacks
            Err(Error::Invalid { .. }) if !executes || gap => refused += 1,
            Ok(_) | Err(Error::Kernel { .. }) => failures.push(format!(
                "`{stmt}` ran although `{op}` is listed in NOT_EXECUTED"
            )),
            Err(e) => failures.push(format!("`{stmt}` ({op}):\n{}", e.render())),
        }
    }
    for (s, _) in OPERAND_GAPS {
        if !instruction_statements().contains(*s) {
            failures.push(format!("`{s}` is listed in OPERAND_GAPS but is no example"));
        }
    }
    println!("table examples: {ran} ran, {refused} refused as not executed");
    assert!(ran > 300, "only {ran} examples ran");
    assert!(
        failures.is_empty(),
        "{}\n{} failures",
        failures.join("\n"),
        failures.len()
    );
}
