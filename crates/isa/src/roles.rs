//! Operand roles: per instruction (narrowed by modifiers where forms differ), what each operand
//! is — a destination or a source, of which type, or a predicate, an immediate, an address, a
//! label — written once in `tools/gen-isa.py` (its `ROLES` table) and generated into
//! `generated_roles.rs`. The checker applies them to every instruction; the few irregular
//! instructions (`mov`, `ld`, `st`, `call`, `cvt`, the atomics, barriers, …) are marked
//! [`RoleCheck::Hand`] with the reason, and operand lists the checker does not look into yet
//! (texture and tensor addresses, matrix fragments) [`RoleCheck::Unchecked`] with theirs.

use crate::ScalarType;

/// What an operand is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleKind {
    /// A destination register (or the sink `_`).
    Dst,
    /// A source: a register or an immediate.
    Src,
    /// An immediate (a constant expression) only.
    Imm,
    /// A predicate source, `!%p` allowed when `negatable`.
    Pred {
        /// May be written negated.
        negatable: bool,
    },
    /// A predicate destination.
    PredDst,
    /// A memory address in brackets.
    Address,
    /// A label.
    Label,
    /// Not checked (texture handles, vectors, variables where the role is not fixed).
    Any,
}

/// The type an operand must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleType {
    /// No type (predicates, addresses, labels, untyped immediates).
    None,
    /// The instruction's last type modifier (`.s32` of `add.sat.s32`).
    Last,
    /// The instruction's n-th type modifier, from 0 (`.u32` of `set.eq.u32.f32` is 0).
    Nth(u8),
    /// Twice the width of the last type modifier (`mul.wide.s32` writes `.s64`).
    Wide,
    /// An address: `.u64`, or `.u32` under `.address_size 32`.
    Address,
    /// A fixed type.
    Fixed(ScalarType),
}

/// One operand of a rule.
#[derive(Clone, Copy, Debug)]
pub struct OperandRole {
    /// The operand's name, as help lines write the operand list (`d, a, b`).
    pub name: &'static str,
    /// What it is.
    pub kind: RoleKind,
    /// Its type.
    pub ty: RoleType,
    /// For a destination that may be paired with a predicate destination (`d|p`): its name.
    pub pair: Option<&'static str>,
    /// May be left out (optional operands come last).
    pub optional: bool,
}

/// How the operands of the instructions a rule selects are checked.
#[derive(Clone, Copy, Debug)]
pub enum RoleCheck {
    /// Operand by operand against these roles.
    Operands(&'static [OperandRole]),
    /// By a hand-written rule of the checker, for the reason given.
    Hand(&'static str),
    /// Not operand by operand, for the reason given (names are still resolved).
    Unchecked(&'static str),
}

/// The roles of one opcode, or of its forms that write all the modifiers of `when`.
#[derive(Clone, Copy, Debug)]
pub struct RoleRule {
    /// The opcode word: `add`, `cp`, `mbarrier`.
    pub opcode: &'static str,
    /// Modifiers that must all be written for this rule to apply (`.async`, `.bulk`).
    pub when: &'static [&'static str],
    /// How the operands are checked.
    pub check: RoleCheck,
}

impl RoleRule {
    /// The operand list as help lines write it: `d, a, b[, c]`.
    pub fn shape(&self) -> String {
        let RoleCheck::Operands(ops) = self.check else {
            return String::new();
        };
        let mut s = String::new();
        for (i, o) in ops.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let name = match o.pair {
                Some(p) => format!("{}[|{p}]", o.name),
                None => o.name.to_string(),
            };
            if o.optional {
                s.push_str(&format!("[{sep}{name}]"));
            } else {
                s.push_str(&format!("{sep}{name}"));
            }
        }
        s
    }
}

/// Every rule of the table.
pub fn role_rules() -> &'static [RoleRule] {
    crate::generated_roles::ROLE_RULES
}

/// The rule for an instruction with opcode word `opcode` and modifiers `mods`: among the rules
/// of the opcode whose `when` modifiers are all written, the one naming the most.
pub fn roles_for(opcode: &str, mods: &[&str]) -> Option<&'static RoleRule> {
    let rules = role_rules();
    let start = rules.partition_point(|r| r.opcode < opcode);
    rules[start..]
        .iter()
        .take_while(|r| r.opcode == opcode)
        .filter(|r| r.when.iter().all(|w| mods.contains(w)))
        .max_by_key(|r| r.when.len())
}
