//! `ptx-isa`: the one instruction table of ptxvm.
//!
//! The table is data. Each [`Entry`] is one section of the PTX ISA reference: an instruction
//! (`add`, `cp.async.bulk.tensor`), a directive (`.entry`) or a special register (`%tid`).
//! An entry keeps the syntax grammar as the ISA writes it, the same grammar parsed into
//! [`Form`]s (the opcode path, then the modifier [`Slot`]s in order, each required or
//! optional with its alternatives, then the operands), the PTX version that introduced it,
//! its target requirement, finer per-feature gates ([`FeatureGate`]), a one-line summary
//! in our own words, a link anchor into the official ISA document, and whether the parser
//! accepts it ([`Coverage`]). Several entries can share an opcode: [`lookup`]`("add")`
//! returns the integer, floating-point, half-precision and extended-precision sections.
//!
//! The table lives in `src/generated.rs`, written by `tools/gen-isa.py` from the reference
//! extract (`shared/spec/isa-reference.json`, outside the repository) merged with the
//! committed supplement `data/supplement.json` (the PTX ISA 9.x instructions and forms the
//! extract lacks: `wmma`, `mma`, `wgmma`, `tcgen05`, `.b128`, `.v8`, the newer `cvt`
//! formats, ...), and committed, so a fresh clone builds without the extract. The generator
//! extracts facts only (grammar, versions, targets) and takes the summaries from its own
//! hand-written `SUMMARIES` table (the supplement's sections carry their own).
//!
//! To add an instruction: add a section to `data/supplement.json` (or an extension that
//! appends forms to an existing section), with examples that ptxas accepts
//! (`python3 tools/validate-supplement.py`), run `python3 tools/gen-isa.py --spec
//! ../shared/spec/isa-reference.json`, and commit the regenerated files;
//! `python3 tools/gen-isa.py --check` verifies they are up to date (without the extract it
//! checks the supplement and the input digests recorded in `generated.rs`).
//!
//! How far the later stages support an entry is not data of the table: the checker and the
//! interpreter depend on this crate, not the other way round, so they report it themselves
//! through a [`Stages`] value (`ptx_check::support` for the checker) that [`render_list`] and
//! [`coverage_markdown`] take as a parameter.
//!
//! Beside the table the crate owns the vocabulary the other crates share: [`ScalarType`],
//! [`StateSpace`], [`PtxVersion`], [`SmTarget`], [`SpecialRegister`]s and [`DIRECTIVES`],
//! plus the text behind `ptxvm doc` ([`render_doc`], [`render_list`], [`coverage_markdown`]).

mod cuda;
mod doc;
#[rustfmt::skip]
mod generated;
#[rustfmt::skip]
mod generated_examples;
#[rustfmt::skip]
mod generated_ops;
#[rustfmt::skip]
mod generated_roles;
pub mod matrix;
mod opcode;
mod roles;
mod sreg;
mod suggest;
mod types;
mod version;

pub use cuda::{cuda_name, CudaName, CUDA_NAMES};
pub use doc::{coverage_markdown, render_doc, render_list, DocError, DOC_BASE_URL};
pub use opcode::{ModSet, Modifier, OpFlags, Opcode};
pub use roles::{role_rules, roles_for, OperandRole, RoleCheck, RoleKind, RoleRule, RoleType};
pub use sreg::{is_directive, special_register, SpecialRegister, DIRECTIVES, SPECIAL_REGISTERS};
pub use suggest::{edit_distance, suggest, suggest_modifier};
pub use types::{ScalarType, StateSpace, TypeKind};
pub use version::{ArchKind, ArchVariant, ParseError, PtxVersion, SmTarget, TargetReq};

/// What a reference section describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// An instruction: `add`, `ld`, `mbarrier.arrive`.
    Instruction,
    /// A directive: `.entry`, `.target`.
    Directive,
    /// A special register: `%tid`.
    SpecialRegister,
}

/// What the table itself says about ptxvm's support of an entry: whether the parser accepts
/// it. The later stages report their support through [`Stages`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Coverage {
    /// The parser accepts it.
    pub parses: bool,
}

/// How far one stage of ptxvm (the checker, the interpreter) supports an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Support {
    /// In full: every form of the entry.
    Yes,
    /// In part: some forms, or some of the rules (what "part" means is the stage's to say).
    Partial,
    /// Not at all.
    No,
}

impl Support {
    /// The word of the coverage columns: `yes`, `partial` or `-`.
    pub fn word(self) -> &'static str {
        match self {
            Support::Yes => "yes",
            Support::Partial => "partial",
            Support::No => "-",
        }
    }
}

/// The per-entry support of the stages after parsing, supplied by the crates that implement
/// them (this crate cannot see them): the columns "check" and "execute" of the coverage
/// table.
#[derive(Clone, Copy)]
pub struct Stages<'a> {
    /// The checker's support of an entry (`ptx_check::support`).
    pub check: &'a dyn Fn(&Entry) -> Support,
    /// The interpreter's support of an entry.
    pub execute: &'a dyn Fn(&Entry) -> Support,
}

/// A stage that supports nothing: the value for a column whose stage is not wired in.
pub fn unsupported(_: &Entry) -> Support {
    Support::No
}

impl Stages<'static> {
    /// Neither the checker nor the interpreter: every entry `-` in both columns.
    pub const PARSE_ONLY: Stages<'static> = Stages {
        check: &unsupported,
        execute: &unsupported,
    };
}

impl std::fmt::Debug for Stages<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stages { .. }")
    }
}

/// One section of the PTX ISA reference.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The opcode without `%` or `.` prefix: `add`, `entry`, `tid`, `membar/fence`.
    pub opcode: &'static str,
    /// Instruction, directive or special register.
    pub kind: EntryKind,
    /// The section title: `Integer Arithmetic Instructions: add`.
    pub title: &'static str,
    /// The chapter part of the title: `Integer Arithmetic Instructions`.
    pub category: &'static str,
    /// The names listed in the title: `["bar", "barrier"]`, `["cp.async.bulk.tensor"]`.
    pub names: &'static [&'static str],
    /// The anchor of the section in the official document (see [`Entry::url`]).
    pub anchor: &'static str,
    /// The syntax grammar as the ISA writes it.
    pub syntax: &'static str,
    /// The grammar parsed into forms (empty for special registers, which have no syntax).
    pub forms: &'static [Form],
    /// The value sets defined under the forms (`.type = { .u16, .u32 }`), deduplicated.
    pub definitions: &'static [Definition],
    /// The PTX version that introduced the entry (its earliest form), if the notes say.
    pub ptx: Option<PtxVersion>,
    /// The notes call the entry a preview feature.
    pub preview: bool,
    /// The target requirement of the entry as a whole.
    pub target: TargetReq,
    /// Versions that introduced particular forms, modifiers or operands.
    pub ptx_gates: &'static [FeatureGate],
    /// Target requirements of particular forms, modifiers or operands. Gates in a row with the
    /// same feature and modifiers are alternatives (any one of their targets will do: ptxas
    /// takes `ldmatrix.m8n16` on the sm_100, sm_110 and sm_120 families); read them with
    /// [`Entry::target_gate_runs`].
    pub target_gates: &'static [FeatureGate],
    /// One line in our own words.
    pub summary: &'static str,
    /// How far ptxvm supports it.
    pub coverage: Coverage,
}

/// One syntax form: `add{.sat}.s32 d, a, b;`.
#[derive(Clone, Copy, Debug)]
pub struct Form {
    /// The form as written (whitespace collapsed, comments removed).
    pub text: &'static str,
    /// The opcode path: `add`, `cp.async.bulk.tensor`, `mbarrier.arrive`.
    pub path: &'static str,
    /// The form is written with a guard predicate (`@p bra tgt;`).
    pub guard: bool,
    /// The form is written with a label (`label: .callprototype ...`).
    pub label: bool,
    /// The modifier slots after the path, in order.
    pub slots: &'static [Slot],
    /// The operands.
    pub operands: &'static [OperandSpec],
}

/// A modifier position in a form: `.type`, `{.ftz}`, `.f32`.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// As written: `.type`, `.f32`, `.shared{::cta}`, `.hi,.lo`.
    pub name: &'static str,
    /// Written in braces (or its value set contains `none`): may be left out.
    pub optional: bool,
    /// The name stands for a value set defined under the form (`.type = {...}`).
    pub placeholder: bool,
    /// The spellings that may fill the slot: `[".u16", ".u32"]`, or the literal itself.
    pub values: &'static [&'static str],
}

/// An operand of a form.
#[derive(Clone, Copy, Debug)]
pub struct OperandSpec {
    /// As written: `[a]`, `{!}c`, `d|p`, `(param-list)`.
    pub text: &'static str,
    /// The first identifier: `a`, `c`, `d`, `param-list`.
    pub name: &'static str,
    /// Written inside `{, ...}`: may be left out.
    pub optional: bool,
    /// Written with `{!}` or `{-}`: may be negated.
    pub negatable: bool,
    /// Written in brackets: a memory address.
    pub address: bool,
}

/// A value set defined under the forms: `.rnd = { .rn, .rz, .rm, .rp }`.
#[derive(Clone, Copy, Debug)]
pub struct Definition {
    /// The name as written: `.rnd`, `cp-size`.
    pub name: &'static str,
    /// The values (a leading `.` is added where the ISA leaves it out, as in `.CmpOp`).
    pub values: &'static [&'static str],
}

/// A version or target statement about part of an entry.
#[derive(Clone, Copy, Debug)]
pub struct FeatureGate {
    /// What the statement is about, as the notes name it: `atom.add.f64`, `.scope qualifier`.
    pub feature: &'static str,
    /// Modifiers mentioned in `feature` (`.add`, `.f64`, `::cta`): a hint for matching the
    /// gate against an instruction, not a precise condition.
    pub modifiers: &'static [&'static str],
    /// The PTX version that introduced the feature.
    pub ptx: Option<PtxVersion>,
    /// The target the feature needs (`None` with an empty `ptx` means all targets); in a run
    /// of target gates on one feature, one of the alternatives (see [`Entry::target_gates`]).
    pub sm: Option<SmTarget>,
}

impl Entry {
    /// The name as written in PTX: `add`, `.entry`, `%tid`.
    pub fn name(&self) -> String {
        match self.kind {
            EntryKind::Instruction => self.opcode.to_string(),
            EntryKind::Directive => format!(".{}", self.opcode),
            EntryKind::SpecialRegister => format!("%{}", self.opcode),
        }
    }

    /// The target gates grouped into their runs of alternatives (see [`Entry::target_gates`]):
    /// each run is met when the target supports any one of its gates' targets.
    pub fn target_gate_runs(&self) -> impl Iterator<Item = &'static [FeatureGate]> {
        let gates = self.target_gates;
        let mut start = 0;
        std::iter::from_fn(move || {
            let first = gates.get(start)?;
            let len = gates[start..]
                .iter()
                .take_while(|g| g.feature == first.feature && g.modifiers == first.modifiers)
                .count();
            let run = &gates[start..start + len];
            start += len;
            Some(run)
        })
    }

    /// The link to the section in the official PTX ISA document.
    pub fn url(&self) -> String {
        format!("{DOC_BASE_URL}{}", self.anchor)
    }

    /// Every modifier spelling that some form of this entry accepts (path segments included).
    pub fn modifiers(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for form in self.forms {
            for slot in form.slots {
                for v in slot.values {
                    if !out.contains(v) {
                        out.push(v);
                    }
                }
            }
        }
        out
    }
}

impl Form {
    /// Whether the form accepts every one of `mods` (`[".f32"]`, `[".async", ".bulk"]`),
    /// either as a segment of its path or in one of its slots (a slot value that holds several
    /// modifiers, `.xorsign.abs`, accepts each of them).
    pub fn accepts_all(&self, mods: &[&str]) -> bool {
        mods.iter().all(|m| {
            let seg = m.trim_start_matches('.');
            self.path.split('.').skip(1).any(|p| p == seg)
                || self.slots.iter().any(|s| {
                    // `contains` first: a cheap filter before splitting the value
                    s.values.iter().any(|v| {
                        v == m
                            || (v.len() > m.len()
                                && v.contains(*m)
                                && modifier_parts(v).any(|p| p == *m))
                    })
                })
        })
    }
}

/// The single modifiers of a slot value as an instruction writes them: `.xorsign.abs` gives
/// `.xorsign` and `.abs`, `.async.shared::cta` gives `.async` and `.shared::cta`; a value of one
/// modifier (`.L2::cache_hint`, `.f32`) gives itself.
pub fn modifier_parts(value: &str) -> impl Iterator<Item = &str> {
    let mut rest = value;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .skip(1)
            .find(|&(_, c)| c == '.')
            .map_or(rest.len(), |(i, _)| i);
        let (part, tail) = rest.split_at(end);
        rest = tail;
        Some(part)
    })
}

/// Every entry of the table, in the order of the reference (sorted by opcode).
pub fn entries() -> &'static [Entry] {
    generated::ENTRIES
}

/// The entries for an opcode: `add` gives four sections. A leading `%` or `.` restricts the
/// result to special registers or directives; anything after the first `.` of an
/// instruction (`add.f32`) is ignored. Unknown names give an empty slice.
pub fn lookup(opcode: &str) -> &'static [Entry] {
    let (kind, bare) = if let Some(r) = opcode.strip_prefix('%') {
        (Some(EntryKind::SpecialRegister), r)
    } else if let Some(r) = opcode.strip_prefix('.') {
        (Some(EntryKind::Directive), r)
    } else {
        (None, opcode.split('.').next().unwrap_or(opcode))
    };
    let run = match generated::INDEX.binary_search_by(|(name, _, _)| (*name).cmp(bare)) {
        Ok(i) => {
            let (_, start, end) = generated::INDEX[i];
            &generated::ENTRIES[start..end]
        }
        Err(_) => return &[],
    };
    match kind {
        None => run,
        Some(k) => {
            let start = run.iter().position(|e| e.kind == k);
            let end = run.iter().rposition(|e| e.kind == k);
            match (start, end) {
                (Some(s), Some(e)) => &run[s..=e],
                _ => &[],
            }
        }
    }
}

/// Whether `name` is an opcode, directive (`.entry`) or special register (`%tid`) of the
/// reference. Modifiers after the opcode are ignored: `add.f32` is known.
pub fn is_known_opcode(name: &str) -> bool {
    !lookup(name).is_empty()
}

/// The example code of every instruction section of the reference, as `(section title,
/// code)`: statements as the ISA document shows them (declarations, labels and comments
/// included), for tests that run each through the parser and the checker.
pub fn examples() -> &'static [(&'static str, &'static str)] {
    generated_examples::EXAMPLES
}

/// All lookup names (no `%`/`.` prefix), sorted.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    generated::INDEX.iter().map(|(name, _, _)| *name)
}

#[cfg(test)]
mod tests;
