//! What the checker validates, per entry of the instruction table: the "check" column of the
//! coverage table (`docs/isa-coverage.md`, `ptxvm doc --list --coverage`).

use crate::insn::operands::has_operand_rule;
use ptx_isa::{Entry, EntryKind, Support};

/// Directives the checker has rules for in full: the module header, function definitions
/// and declarations (parameters, duplicates, the signatures calls are checked against), and
/// the labelled lists of calls and branches.
const DIRECTIVES_CHECKED: &[&str] = &[
    "version",
    "target",
    "address_size",
    "entry",
    "func",
    "callprototype",
    "calltargets",
    "branchtargets",
];

/// Directives the checker applies some rules of: the linkage directives decide which
/// duplicate definitions are allowed, nothing more.
const DIRECTIVES_PARTLY: &[&str] = &["extern", "visible", "weak", "common"];

/// How far the checker supports `e`:
///
/// - an instruction is [`Support::Yes`] when every one of its forms is checked operand by
///   operand (operand count, register types against the instruction type, predicates,
///   immediates, vector widths, address shapes) on top of the opcode, modifier and
///   version/target-gate checks every instruction of the table gets; otherwise
///   [`Support::Partial`] (opcode, modifiers and gates only, and every name resolved);
/// - a directive is `Yes` when the checker applies its rules, `Partial` for the linkage
///   directives (only their effect on duplicate definitions), and [`Support::No`] for the
///   rest, which are parsed but not checked (performance-tuning, debugging, `.alias`,
///   `.pragma`);
/// - a special register is `Partial`: its name is resolved (families within their count),
///   but its version and target requirements are not checked.
pub fn support(e: &Entry) -> Support {
    match e.kind {
        EntryKind::Instruction => {
            let strict = !e.forms.is_empty()
                && e.forms.iter().all(|f| {
                    let mut segs = f.path.split('.');
                    let op = segs.next().unwrap_or("");
                    let mut mods: Vec<String> = segs.map(|s| format!(".{s}")).collect();
                    for s in f.slots {
                        if !s.optional && s.values.len() == 1 {
                            mods.push(s.values[0].to_string());
                        }
                    }
                    let mods: Vec<&str> = mods.iter().map(String::as_str).collect();
                    has_operand_rule(op, &mods)
                });
            if strict {
                Support::Yes
            } else {
                Support::Partial
            }
        }
        EntryKind::Directive if DIRECTIVES_CHECKED.contains(&e.opcode) => Support::Yes,
        EntryKind::Directive if DIRECTIVES_PARTLY.contains(&e.opcode) => Support::Partial,
        EntryKind::Directive => Support::No,
        EntryKind::SpecialRegister => Support::Partial,
    }
}
