//! Instruction checks: opcode and modifiers against the table, type modifiers against the
//! forms' typed slots, version and target gates, then the operands (by the table's roles in
//! [`roles`], or the hand rules of [`operands`]) and the memory rules of [`memory`].

use crate::codes;
use crate::header::Header;
use crate::scope::{operand_names, FnChecker, Resolved, SymbolKind};
use ptx_diag::{Diagnostic, Span};
use ptx_isa::{
    lookup, modifier_parts, suggest, suggest_modifier, Entry, EntryKind, ModSet, Modifier, OpFlags,
    Opcode, PtxVersion, ScalarType, Slot, SmTarget, TargetReq,
};
use ptx_syntax::ast::{Expr, ExprKind, Instruction, Operand, UnaryOp};

/// Modifiers accepted on any instruction in addition to those of the table.
const COMMON_MODIFIERS: &[Modifier] = &[Modifier::Uni, Modifier::Sync, Modifier::Aligned];

/// Whether the modifier written `t` is one of [`COMMON_MODIFIERS`].
fn is_common(t: &str) -> bool {
    COMMON_MODIFIERS.iter().any(|m| m.text() == t)
}

/// What a spelling of an instruction (`ld.global.v4.f32`) whose opcode, modifier and gate
/// checks passed resolved to, kept per module.
#[derive(Clone, Copy)]
pub(crate) struct Resolution {
    pub op: Opcode,
    pub mods: ModSet,
}

/// An instruction resolved once against the typed instruction set: its [`Opcode`] and the
/// set of its modifiers (those the table spells; an unknown one is left out, and reported by
/// the modifier check). The rules match on these rather than on the words as written; the
/// instruction itself is reached through `Deref`.
pub(crate) struct Insn<'a> {
    pub ins: &'a Instruction,
    pub op: Opcode,
    pub mods: ModSet,
}

impl std::ops::Deref for Insn<'_> {
    type Target = Instruction;
    fn deref(&self) -> &Instruction {
        self.ins
    }
}

impl Insn<'_> {
    /// Whether the instruction is written with modifier `m`.
    pub fn has(&self, m: Modifier) -> bool {
        self.mods.contains(m)
    }
}

fn has(ins: &Insn<'_>, m: Modifier) -> bool {
    ins.has(m)
}

fn types_of(ins: &Insn<'_>) -> Vec<ScalarType> {
    ins.modifiers
        .iter()
        .filter_map(|m| ScalarType::from_suffix(&m.text))
        .collect()
}

/// The vector width of `.v2`, `.v4` or `.v8`, if the instruction has one.
fn vec_width(ins: &Insn<'_>) -> Option<usize> {
    [Modifier::V2, Modifier::V4, Modifier::V8]
        .into_iter()
        .find(|&m| ins.has(m))
        .and_then(Modifier::vector_width)
        .map(|n| n as usize)
}

/// Checks one instruction.
pub(crate) fn check_instruction(c: &mut FnChecker<'_, '_>, ins: &Instruction) {
    if let Some(g) = &ins.guard {
        if c.use_name(&g.pred.text, g.pred.loc.0) {
            if let Resolved::Symbol(s) = c.resolve(&g.pred.text) {
                if s.kind == SymbolKind::Register && s.ty.is_some_and(|t| t != ScalarType::Pred) {
                    let ty = s.ty.map(|t| t.suffix()).unwrap_or("");
                    c.diags.push(
                        Diagnostic::error(
                            codes::PREDICATE_MISUSE,
                            format!("guard `@{}` is not a predicate register", g.pred.text),
                            g.pred.loc.0,
                        )
                        .with_label_message(format!("this register is {ty}"))
                        .with_secondary(s.span, "declared here")
                        .with_help("guards take a `.pred` register; compute one with `setp`"),
                    );
                }
            }
        }
    }
    let op = ins.opcode.text.as_str();
    // a spelling seen before in the module is not resolved again
    let key = ins.full_opcode();
    let seen = c.globals.opcodes_ok.borrow().get(&key).copied();
    let resolved = seen.map(|r| r.op).or_else(|| {
        // an opcode's name has at most 4 segments after its word (`cp.async.bulk.prefetch.tensor`)
        let mut lead = [""; 6];
        for (l, m) in lead.iter_mut().zip(&ins.modifiers) {
            *l = m.text.as_str();
        }
        Opcode::resolve(op, &lead[..ins.modifiers.len().min(lead.len())]).map(|r| r.0)
    });
    let is_call = resolved == Some(Opcode::Call);
    // Resolve every name (the callee of a call is checked by the call rules).
    let mut names = Vec::new();
    for (i, o) in ins.operands.iter().enumerate() {
        if is_call && matches!(o, Operand::Expr(_)) && i <= 1 {
            continue;
        }
        operand_names(o, &mut names);
    }
    for (n, sp) in names {
        // `use_name` records what the name resolved to: no second lookup for the gate
        if c.use_name(&n, sp)
            && matches!(c.table.uses.last(), Some((_, crate::NameRef::Special)))
            && n.starts_with('%')
        {
            check_special_gates(c, &n, sp);
        }
    }

    if !is_call {
        for o in &ins.operands {
            check_register_arithmetic(c, o, op);
        }
    }

    if let Some(r) = seen {
        let ins = &Insn {
            ins,
            op: r.op,
            mods: r.mods,
        };
        return check_operands(c, ins);
    }
    let entries: Vec<&'static Entry> = lookup(op)
        .iter()
        .filter(|e| e.kind == EntryKind::Instruction)
        .collect();
    // a word the table has no instruction entry for is unknown, even where it names an opcode
    let Some(opcode) = resolved.filter(|_| !entries.is_empty()) else {
        let mut d = Diagnostic::error(
            codes::UNKNOWN_OPCODE,
            format!("unknown instruction `{op}`"),
            ins.opcode.loc.0,
        )
        .with_label_message("not a PTX instruction");
        d = match suggest(op) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help("see `ptxvm doc --list` for the instructions PTX has"),
        };
        c.diags.push(d);
        return;
    };
    let mods = ins
        .modifiers
        .iter()
        .filter_map(|m| Modifier::parse(&m.text))
        .collect();
    let ins = &Insn {
        ins,
        op: opcode,
        mods,
    };
    let before = c.diags.len();
    if !check_modifiers(c, ins, &entries) {
        return;
    }
    if !check_types(c, ins, &entries) {
        return;
    }
    if is_core(opcode) && !check_combination(c, ins, &entries) {
        return;
    }
    if opcode == Opcode::Shfl && !ins.has(Modifier::Sync) {
        check_shfl_without_sync(c, ins);
    } else {
        check_gates(c, ins, &entries);
    }
    if c.diags.len() == before {
        c.globals
            .opcodes_ok
            .borrow_mut()
            .insert(key, Resolution { op: opcode, mods });
    }
    check_operands(c, ins);
}

/// The operand and memory rules of an instruction whose opcode and modifiers are known.
fn check_operands(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    crate::insn::asyncvals::check(c, ins);
    crate::insn::operands::check(c, ins);
    memory::check_address_space(c, ins);
    memory::check_wide_vector(c, ins);
    matrix::check(c, ins);
}

fn check_modifiers(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, entries: &[&'static Entry]) -> bool {
    // The modifiers the entries know: the common ones, the segments of the forms' paths and
    // the parts of their slot and definition values. Searched lazily (no list is built): the
    // table's forms are many, and most modifiers match early.
    let matches = |k: &str, t: &str, bare: &str| k == t || k.trim_start_matches('.') == bare;
    let values_know = |values: &[&str], t: &str, bare: &str| {
        values.iter().any(|v| {
            (v.len() >= bare.len() && v.contains(bare))
                && modifier_parts(v).any(|k| matches(k, t, bare))
        })
    };
    let is_known = |t: &str, bare: &str| {
        is_common(t)
            || entries.iter().any(|e| {
                e.forms.iter().any(|f| {
                    f.path.split('.').skip(1).any(|k| matches(k, t, bare))
                        || f.slots.iter().any(|s| values_know(s.values, t, bare))
                }) || e.definitions.iter().any(|d| values_know(d.values, t, bare))
            })
    };
    let mut ok = true;
    for m in &ins.modifiers {
        let t = m.text.as_str();
        let bare = t.trim_start_matches('.');
        if is_known(t, bare) {
            continue;
        }
        let op = ins.opcode.text.as_str();
        if (ins.op == Opcode::Ld || is_st(ins.op))
            && matches!(
                Modifier::parse(t),
                Some(Modifier::ParamEntry | Modifier::ParamFunc)
            )
        {
            // the ISA's `.param{::entry, ::func}`, which the reference extract's value set of
            // `.ss` lacks (ptxas takes `ld.param::entry.u32 %r, [p];`)
            continue;
        }
        if writes_memory(ins.op) && ptx_isa::StateSpace::from_suffix(t).is_some() {
            // A state space the instruction cannot use: reported as E0208 by the operand rules.
            continue;
        }
        if !is_core(ins.op) && known_anywhere(t) {
            // The table's forms of less common instructions are not exhaustive: accept a
            // modifier that PTX uses elsewhere rather than risk rejecting valid code.
            continue;
        }
        ok = false;
        let mut d = Diagnostic::error(
            codes::UNKNOWN_MODIFIER,
            format!("unknown modifier `{t}` for instruction `{op}`"),
            m.loc.0,
        )
        .with_label_message(format!("`{op}` has no such modifier"));
        d = match suggest_modifier(op, t) {
            Some(s) => d.with_help(format!(
                "did you mean `{s}`? (`ptxvm doc {op}` lists the forms)"
            )),
            None => d.with_help(format!(
                "`ptxvm doc {op}` lists the modifiers `{op}` accepts"
            )),
        };
        c.diags.push(d);
    }
    ok
}

/// Whether a slot of the table takes type modifiers (some value is or contains a type):
/// computed once for the whole (static) table, by slot address.
fn typed_slot(slot: &Slot) -> bool {
    use std::sync::OnceLock;
    static TYPED: OnceLock<std::collections::HashSet<usize>> = OnceLock::new();
    let typed = TYPED.get_or_init(|| {
        ptx_isa::entries()
            .iter()
            .flat_map(|e| e.forms.iter())
            .flat_map(|f| f.slots.iter())
            .filter(|s| {
                s.values
                    .iter()
                    .any(|v| modifier_parts(v).any(|p| ScalarType::from_suffix(p).is_some()))
            })
            .map(|s| s as *const Slot as usize)
            .collect()
    });
    typed.contains(&(slot as *const Slot as usize))
}

/// Whether a slot value (`.u32`, `.xorsign.abs`) is or contains the type modifier `t`.
fn slot_takes(slot: &Slot, t: &str) -> bool {
    slot.values
        .iter()
        .any(|v| *v == t || modifier_parts(v).any(|p| p == t))
}

/// Whether the type modifiers `types`, in order, fill the typed slots `slots` of a form in
/// order: every required typed slot gets one, an optional one may be skipped.
fn types_fit(types: &[&str], slots: &[&Slot]) -> bool {
    match (types.split_first(), slots.split_first()) {
        (None, _) => slots.iter().all(|s| s.optional),
        (Some(_), None) => false,
        (Some((t, rest)), Some((s, others))) => {
            (slot_takes(s, t) && types_fit(rest, others))
                || (s.optional && types_fit(types, others))
        }
    }
}

/// The type modifiers of an instruction (`.s32.u64` of `dp4a.s32.u64`), in order, must fill
/// the typed slots of one of its forms (those whose path the instruction spells): ptxas says
/// "Unexpected instruction types specified for 'dp4a'". Forms are matched by position, so
/// `set.u64.u32` (dtype `.u64`) is rejected although `.u64` is a valid source type.
fn check_types(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, entries: &[&'static Entry]) -> bool {
    let types: Vec<&ptx_syntax::ast::Word> = ins
        .modifiers
        .iter()
        .filter(|m| ScalarType::from_suffix(&m.text).is_some())
        .collect();
    if types.is_empty() {
        return true;
    }
    // Where the table leaves an instruction's operands unchecked (textures, surfaces, tensor and
    // matrix forms) its value sets are not reliable either: the reference extract keeps one
    // `.ctype` for both forms of `sured`, so `sured.b.add.2d.u32` would look wrong. Accept.
    let mods: Vec<&str> = ins.modifiers.iter().map(|m| m.text.as_str()).collect();
    if matches!(
        ptx_isa::roles_for(&ins.opcode.text, &mods).map(|r| r.check),
        Some(ptx_isa::RoleCheck::Unchecked(_))
    ) {
        return true;
    }
    let texts: Vec<&str> = types.iter().map(|w| w.text.as_str()).collect();
    let mut applicable = false;
    for f in entries.iter().flat_map(|e| e.forms.iter()) {
        // the form applies when the instruction spells its whole path (`redux.sync`)
        if !f
            .path
            .split('.')
            .skip(1)
            .all(|seg| mods.iter().any(|m| m.trim_start_matches('.') == seg))
        {
            continue;
        }
        let typed: Vec<&Slot> = f.slots.iter().filter(|s| typed_slot(s)).collect();
        if typed.is_empty() {
            continue;
        }
        applicable = true;
        if types_fit(&texts, &typed) {
            return true;
        }
    }
    if !applicable {
        return true;
    }
    let op = ins.opcode.text.as_str();
    let span = types[0].loc.0.to(types[types.len() - 1].loc.0);
    c.diags.push(
        Diagnostic::error(
            codes::INSTRUCTION_TYPES,
            format!(
                "unexpected instruction types `{}` for `{op}`",
                texts.concat()
            ),
            span,
        )
        .with_label_message(format!("no form of `{op}` takes these types in this order"))
        .with_help(format!("`ptxvm doc {op}` lists the types of each form")),
    );
    false
}

/// For the instructions whose forms are complete ([`is_core`]): some form of the table must take
/// all the modifiers together, so `.ftz` with `.f64` or `.sat` with `.u64` is rejected even
/// though each modifier exists. Reports the first modifier without which a form fits.
fn check_combination(
    c: &mut FnChecker<'_, '_>,
    ins: &Insn<'_>,
    entries: &[&'static Entry],
) -> bool {
    let mods: Vec<&str> = ins
        .modifiers
        .iter()
        .map(|m| m.text.as_str())
        .filter(|m| !is_common(m))
        // The state space of `st`/`atom`/`red` is judged by the operand rules (E0208).
        .filter(|m| !(writes_memory(ins.op) && ptx_isa::StateSpace::from_suffix(m).is_some()))
        .filter(|m| {
            ![Modifier::ParamEntry, Modifier::ParamFunc]
                .iter()
                .any(|p| p.text() == *m)
        })
        .collect();
    let fits = |ms: &[&str]| {
        entries
            .iter()
            .flat_map(|e| e.forms.iter())
            .filter(|f| ms.iter().all(|m| f.accepts_all(&[m])))
            .map(|f| f.text)
            .collect::<Vec<_>>()
    };
    if !fits(&mods).is_empty() {
        return true;
    }
    let op = ins.opcode.text.as_str();
    let full = ins.full_opcode();
    for (i, m) in mods.iter().enumerate() {
        let rest: Vec<&str> = mods
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, m)| *m)
            .collect();
        let forms = fits(&rest);
        if forms.is_empty() {
            continue;
        }
        let Some(w) = ins.modifiers.iter().find(|w| w.text == *m) else {
            continue;
        };
        let others = rest.join("");
        let shown: Vec<String> = forms.iter().take(3).map(|f| format!("`{f}`")).collect();
        c.diags.push(
            Diagnostic::error(
                codes::MODIFIER_COMBINATION,
                format!("`{m}` cannot be combined with `{op}{others}`"),
                w.loc.0,
            )
            .with_label_message(format!(
                "no form of `{op}` takes `{m}` together with `{others}`"
            ))
            .with_help(format!(
                "the forms of `{op}{others}` are {}; drop `{m}` or change the other modifiers",
                shown.join(", ")
            )),
        );
        return false;
    }
    c.diags.push(
        Diagnostic::error(
            codes::MODIFIER_COMBINATION,
            format!("no form of `{op}` takes the modifiers of `{full}` together"),
            ins.opcode
                .loc
                .0
                .to(ins.modifiers.last().map_or(ins.opcode.loc.0, |m| m.loc.0)),
        )
        .with_help(format!("`ptxvm doc {op}` lists the forms of `{op}`")),
    );
    false
}

/// The instructions that write memory through an address operand (`st`, `atom`, `red`; the
/// table's `WRITES_MEMORY`): their state space is judged by the operand rules, and they may
/// not write a kernel's input parameters.
pub(crate) fn writes_memory(op: Opcode) -> bool {
    op.is(OpFlags::WRITES_MEMORY)
}

/// The opcodes whose instructions are written with the word `st` (`st.async`, `st.bulk`).
pub(crate) fn is_st(op: Opcode) -> bool {
    matches!(op, Opcode::St | Opcode::StAsync | Opcode::StBulk)
}

/// Instructions whose forms in the table are complete enough to reject any other modifier
/// (the table's `COMPLETE_FORMS`).
fn is_core(op: Opcode) -> bool {
    op.is(OpFlags::COMPLETE_FORMS)
}

/// Whether any entry of the table uses modifier `m`, or it is a type or state space.
fn known_anywhere(m: &str) -> bool {
    use std::sync::OnceLock;
    static ALL: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        let mut s = std::collections::HashSet::new();
        for e in ptx_isa::entries() {
            for f in e.forms {
                let mut rest = f.path;
                while let Some(i) = rest.find('.') {
                    rest = &rest[i..];
                    let end = rest[1..].find('.').map_or(rest.len(), |j| j + 1);
                    s.insert(&rest[..end]);
                    rest = &rest[end..];
                }
                for sl in f.slots {
                    s.extend(sl.values.iter().flat_map(|v| modifier_parts(v)));
                }
            }
            for d in e.definitions {
                s.extend(d.values.iter().flat_map(|v| modifier_parts(v)));
            }
        }
        s
    });
    all.contains(m)
        || ScalarType::from_suffix(m).is_some()
        || ptx_isa::StateSpace::from_suffix(m).is_some()
        || m.split("::")
            .next()
            .is_some_and(|b| all.contains(b) || ptx_isa::StateSpace::from_suffix(b).is_some())
}

fn check_shfl_without_sync(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>) {
    let h: &Header = c.header;
    let new_target = h.target.is_some_and(|t| t.number >= 70);
    let new_version = h.version.is_some_and(|v| v >= PtxVersion::new(6, 4));
    let help = "write `shfl.sync.MODE.b32 d, a, b, c, 0xffffffff;` (the last operand is the mask \
                of participating lanes)";
    if new_target && new_version {
        let (t, v) = (
            h.target.map(|t| t.to_string()),
            h.version.map(|v| v.to_string()),
        );
        c.diags.push(
            Diagnostic::error(
                codes::SHFL_WITHOUT_SYNC,
                format!(
                    "`shfl` without `.sync` is not supported on .target {} with PTX ISA {}",
                    t.unwrap_or_default(),
                    v.unwrap_or_default()
                ),
                ins.opcode.loc.0,
            )
            .with_label_message("needs `.sync` on sm_70 and later from PTX 6.4")
            .with_help(help),
        );
    } else {
        c.diags.push(
            Diagnostic::warning(
                codes::SHFL_DEPRECATED,
                "`shfl` without `.sync` is deprecated",
                ins.opcode.loc.0,
            )
            .with_help(help),
        );
    }
}

/// Whether a gate's modifier hint `m` is present in the instruction (placeholders such as
/// `.scope` stand for any value of the slot with that name).
fn gate_mod_present(m: &str, ins: &Insn<'_>, e: &Entry) -> bool {
    if ins
        .modifiers
        .iter()
        .any(|w| w.text == m || (m.starts_with("::") && w.text.ends_with(m)))
    {
        return true;
    }
    e.forms.iter().any(|f| {
        f.slots.iter().any(|s| {
            s.placeholder
                && s.name == m
                && ins
                    .modifiers
                    .iter()
                    .any(|w| s.values.contains(&w.text.as_str()))
        })
    })
}

fn check_gates(c: &mut FnChecker<'_, '_>, ins: &Insn<'_>, entries: &[&'static Entry]) {
    let mods: Vec<&str> = ins.modifiers.iter().map(|m| m.text.as_str()).collect();
    let mut cands: Vec<&'static Entry> = entries
        .iter()
        .copied()
        .filter(|e| e.forms.iter().any(|f| f.accepts_all(&mods)))
        .collect();
    if cands.is_empty() {
        cands = entries.to_vec();
    }
    let full = ins.full_opcode();
    let span = ins
        .opcode
        .loc
        .0
        .to(ins.modifiers.last().map_or(ins.opcode.loc.0, |m| m.loc.0));
    let h: Header = *c.header;
    // Whole-instruction version requirement: the least of the candidate sections.
    if let Some(v) = h.version {
        let need = cands
            .iter()
            .map(|e| e.ptx)
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().min());
        if let Some(need) = need {
            if v < need {
                c.diags.push(needs_version(
                    &full,
                    ins.opcode.text.as_str(),
                    need,
                    v,
                    span,
                ));
                return;
            }
        }
    }
    if let Some(t) = h.target {
        let reqs: Vec<_> = cands
            .iter()
            .map(|e| match e.target {
                TargetReq::Min(r) => Some(vec![r]),
                TargetReq::AnyOf(rs) => Some(rs.to_vec()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.concat())
            .unwrap_or_default();
        if !reqs.is_empty() && !reqs.iter().any(|r| t.supports(r)) {
            c.diags.push(needs_any_target(
                &full,
                ins.opcode.text.as_str(),
                &reqs,
                &t.to_string(),
                span,
            ));
            return;
        }
    }
    if cands.len() != 1 {
        return;
    }
    let e = cands[0];
    if let Some(v) = h.version {
        for g in e.ptx_gates {
            let Some(need) = g.ptx else { continue };
            if need > v
                && !g.modifiers.is_empty()
                && g.modifiers.iter().all(|m| gate_mod_present(m, ins, e))
            {
                c.diags.push(needs_version(&full, g.feature, need, v, span));
                return;
            }
        }
    }
    if let Some(t) = h.target {
        // A run of gates on one feature (same feature and modifiers, side by side) lists
        // alternatives: any one of its targets will do. The run is only looked at when one of
        // its gates applies to the instruction and fails on its own, so the common case costs
        // what a single-target gate does.
        let gates = e.target_gates;
        let mut i = 0;
        while i < gates.len() {
            let g = &gates[i];
            let fails = g.sm.is_some_and(|need| {
                !t.supports(&need)
                    && !g.modifiers.is_empty()
                    && g.modifiers.iter().all(|m| gate_mod_present(m, ins, e))
            });
            if !fails {
                i += 1;
                continue;
            }
            let same =
                |o: &&ptx_isa::FeatureGate| o.feature == g.feature && o.modifiers == g.modifiers;
            let start = i - gates[..i].iter().rev().take_while(same).count();
            let end = i + gates[i..].iter().take_while(same).count();
            let run = &gates[start..end];
            let needs: Vec<SmTarget> = run.iter().filter_map(|o| o.sm).collect();
            if needs.len() == run.len() && !needs.iter().any(|n| t.supports(n)) {
                c.diags.push(needs_any_target(
                    &full,
                    g.feature,
                    &needs,
                    &t.to_string(),
                    span,
                ));
                return;
            }
            i = end;
        }
    }
}

/// A special register read below the PTX version or target that introduced it (`%clusterid`
/// on sm_80): ptxas says "Feature '%clusterid' requires .target sm_90 or higher".
fn check_special_gates(c: &mut FnChecker<'_, '_>, name: &str, span: Span) {
    let stem = name.split('.').next().unwrap_or(name);
    let Some(e) = lookup(stem)
        .iter()
        .find(|e| e.kind == EntryKind::SpecialRegister)
    else {
        return;
    };
    let h: Header = *c.header;
    if let (Some(v), Some(need)) = (h.version, e.ptx) {
        if v < need {
            c.diags.push(needs_version(name, stem, need, v, span));
            return;
        }
    }
    if let (Some(t), TargetReq::Min(need)) = (h.target, e.target) {
        if !t.supports(&need) {
            c.diags.push(needs_target(
                name,
                stem,
                &need.to_string(),
                &t.to_string(),
                span,
            ));
        }
    }
}

fn needs_version(
    full: &str,
    feature: &str,
    need: PtxVersion,
    have: PtxVersion,
    span: Span,
) -> Diagnostic {
    Diagnostic::error(
        codes::NEEDS_VERSION,
        format!("`{full}` requires PTX ISA .version {need} or later, but the module declares .version {have}"),
        span,
    )
    .with_label_message(format!("'{feature}' was introduced in PTX ISA {need}"))
    .with_help(format!("raise `.version` to {need} or later"))
}

/// A feature that needs any one of `needs` (several targets or families: `ldmatrix.m8n16` on
/// sm_100f, sm_110f or sm_120f); one target reads as [`needs_target`].
fn needs_any_target(
    full: &str,
    feature: &str,
    needs: &[SmTarget],
    have: &str,
    span: Span,
) -> Diagnostic {
    let mut names: Vec<String> = Vec::new();
    for n in needs {
        let n = n.to_string();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    if names.len() == 1 {
        return needs_target(full, feature, &names[0], have, span);
    }
    let (last, rest) = names.split_last().expect("two or more targets");
    let list = format!("{} or {last}", rest.join(", "));
    Diagnostic::error(
        codes::NEEDS_TARGET,
        format!("`{full}` is not supported on .target {have}; it requires one of .target {list}"),
        span,
    )
    .with_label_message(format!("'{feature}' needs {list}"))
    .with_help(format!(
        "compile for one of {list} (`.target {}` or `--target {}`), or avoid this feature",
        names[0], names[0]
    ))
}

fn needs_target(full: &str, feature: &str, need: &str, have: &str, span: Span) -> Diagnostic {
    // an arch-specific target (`sm_90a`) is met by that architecture only, not by higher ones
    let message = if need.ends_with('a') {
        format!("`{full}` is not supported on .target {have}; it requires exactly .target {need}")
    } else {
        format!("`{full}` requires .target {need} or higher, but the module targets {have}")
    };
    let later = if need.ends_with('a') { "" } else { " or later" };
    Diagnostic::error(codes::NEEDS_TARGET, message, span)
    .with_label_message(format!("'{feature}' needs {need}"))
    .with_help(format!("compile for {need}{later} (`.target {need}` or `--target {need}`), or avoid this feature"))
}

pub(crate) mod asyncvals;
pub(crate) mod call;
pub(crate) mod matrix;
pub(crate) mod memory;
pub(crate) mod operands;
pub(crate) mod roles;

/// Helpers shared by the operand rules.
pub(crate) fn is_int_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { .. } => true,
        ExprKind::Unary(UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot, a) => is_int_literal(a),
        ExprKind::Binary(_, a, b) => is_int_literal(a) && is_int_literal(b),
        _ => false,
    }
}

/// Whether `e` is a floating-point literal (possibly negated).
pub(crate) fn is_float_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::F32Bits(_) | ExprKind::F64Bits(_) | ExprKind::Float(_) => true,
        ExprKind::Unary(UnaryOp::Neg | UnaryOp::Plus, a) => is_float_literal(a),
        _ => false,
    }
}

/// A register is an operand by itself (`%r1`, `!%p`, `%r2.b0`) or plus a constant offset
/// (`%rd1+8`, as ptxas 13.5 takes it); any other arithmetic on registers (`%r1-1`, `%r1*2`,
/// `%r1+%r2`, `-%r1`) is not PTX: ptxas stops with a syntax error there ("Parsing error near
/// '-'") or "Illegal argument to unary minus"; only an instruction whose form writes `{-}a`
/// (`vmad`) takes a negated register. Addresses have their own rules.
fn check_register_arithmetic(c: &mut FnChecker<'_, '_>, o: &Operand, op: &str) {
    let e = match o {
        Operand::Expr(e) => e,
        Operand::Vector(items, _) | Operand::List(items, _) => {
            for i in items {
                check_register_arithmetic(c, i, op);
            }
            return;
        }
        Operand::Pair(a, b) => {
            check_register_arithmetic(c, a, op);
            check_register_arithmetic(c, b, op);
            return;
        }
        Operand::Address(_) => return,
    };
    // the common case, a register or a constant alone, settles without any lookup
    if matches!(
        e.kind,
        ExprKind::Symbol(_) | ExprKind::Int { .. } | ExprKind::F32Bits(_) | ExprKind::F64Bits(_)
    ) {
        return;
    }
    let alone = |e: &Expr| match &e.kind {
        ExprKind::Symbol(_) => true,
        ExprKind::Select(inner, _) => matches!(inner.kind, ExprKind::Symbol(_)),
        _ => false,
    };
    let fine = match &e.kind {
        ExprKind::Unary(UnaryOp::Not, inner) => alone(inner) || !has_register(c, inner),
        // a form that writes `{-}a` takes a negated register (`vmad`)
        ExprKind::Unary(UnaryOp::Neg, inner) if alone(inner) && negatable(op) => true,
        ExprKind::Binary(ptx_syntax::ast::BinaryOp::Add, lhs, rhs) if alone(lhs) => {
            !has_register(c, rhs)
        }
        _ => alone(e) || !has_register(c, e),
    };
    if !fine {
        c.diags.push(
            Diagnostic::error(
                codes::OPERAND_SHAPE,
                "a register can only be an operand by itself or plus a constant offset",
                e.loc.0,
            )
            .with_label_message("arithmetic on a register")
            .with_help("compute the value into a register first (`sub.s32 %r2, %r1, 1;`)"),
        );
    }
}

/// Whether a form of `op` writes an operand `{-}a`: a negated register.
fn negatable(op: &str) -> bool {
    lookup(op).iter().any(|e| {
        e.forms
            .iter()
            .any(|f| f.operands.iter().any(|o| o.text.starts_with("{-}")))
    })
}

/// Whether `e` names a register anywhere.
fn has_register(c: &FnChecker<'_, '_>, e: &Expr) -> bool {
    let mut names = Vec::new();
    crate::scope::expr_names(e, &mut names);
    names
        .iter()
        .any(|(n, _)| matches!(c.resolve(n), Resolved::Symbol(s) if s.kind == SymbolKind::Register))
}
