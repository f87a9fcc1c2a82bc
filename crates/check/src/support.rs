//! What the checker validates, per entry of the instruction table: the "check" column of the
//! coverage table (`docs/isa-coverage.md`, `ptxvm doc --list --coverage`).

use ptx_isa::{roles_for, Entry, EntryKind, RoleCheck, RoleKind, Support};

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
///   immediates, vector widths, address shapes) on top of the opcode, modifier, type and
///   version/target-gate checks every instruction of the table gets: when the operand roles of
///   the table (`ptx_isa::roles_for`) give each form a role list without unchecked operands, or
///   send it to a hand rule; otherwise [`Support::Partial`] (opcode, modifiers, types and gates,
///   and every name resolved);
/// - a directive is `Yes` when the checker applies its rules, `Partial` for the linkage
///   directives (only their effect on duplicate definitions), and [`Support::No`] for the
///   rest, which are parsed but not checked (performance-tuning, debugging, `.alias`,
///   `.pragma`);
/// - a special register is `Yes`: its name is resolved (families within their count), its
///   type checked where `mov` reads it, and its version and target requirements checked.
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
                    match roles_for(op, &mods).map(|r| r.check) {
                        Some(RoleCheck::Hand(_)) => true,
                        Some(RoleCheck::Operands(ops)) => {
                            ops.iter().all(|o| o.kind != RoleKind::Any)
                        }
                        Some(RoleCheck::Unchecked(_)) | None => false,
                    }
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
        EntryKind::SpecialRegister => Support::Yes,
    }
}
