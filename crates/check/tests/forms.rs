//! Every syntax form of the instruction table is accepted by the parser and the checker.
//!
//! For each instruction form of `ptx-isa` (`add{.sat}.s32 d, a, b;`) the test writes concrete
//! instances mechanically:
//!
//! - the opcode path, then every required modifier slot filled with its first alternative;
//! - the required operands, each a register declared with the type the ISA gives that operand
//!   (the instruction type, or a fixed type for operands such as shift amounts and member
//!   masks, or `.pred`), a vector when the form has a `.vN` modifier, an address `[%a0]`,
//!   a label, a variable, a function, or an immediate where the ISA requires one;
//!
//! and then variants of that minimal instance: one with every optional operand added, and one
//! per optional modifier slot with that slot filled with its first alternative (the optional
//! `.level::cache_hint` modifier and `cache-policy` operand go together, as the ISA requires). Each instance
//! is wrapped in a module (variables in each state space, functions with and without
//! parameters, call prototypes, call and branch target lists) and must parse and check with
//! no error under one of a few headers, newest first (`.version 9.1` or 9.0 with `sm_100a`, `sm_90a`
//! or `sm_120a`, then `.version 6.0` with `sm_60` for forms that newer targets dropped).
//!
//! Forms whose instances cannot be written this way — placeholders the table leaves
//! unresolved, combinations the grammar allows but the ISA's prose forbids — are listed in
//! `tests/spec/form-exceptions.txt` as `INSTANCE ## reason`. The list must match exactly: an
//! instance that fails and is not listed fails the test, and so does a listed instance that
//! passes (so the list shrinks as the table or the checker improve). Run with `--nocapture`
//! to see the counts; `FORMS_DUMP=DIR` writes every accepted module to DIR (to run ptxas on
//! them by hand: instances the grammar allows but ptxas rejects are combinations the ISA's
//! prose forbids, or places where the checker is more lenient than ptxas).
//!
//! Directive forms have operands the grammar does not type (names, lists, bodies), so each has
//! a hand-written instance in `DIRECTIVE_INSTANCES`, whose keys must be exactly the table's
//! directive forms; every special register is read with `mov` into a register of its type.

use ptx_check::examples::register_type;
use ptx_check::{check_module, CheckOptions};
use ptx_isa::{entries, Definition, EntryKind, Form, OperandSpec, ScalarType};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// Headers tried in order; an instance passes if one of them gives no error.
const HEADERS: &[(&str, &str)] = &[
    ("9.1", "sm_100a"),
    ("9.0", "sm_100a"),
    ("9.0", "sm_90a"),
    ("9.0", "sm_120a"),
    ("6.0", "sm_60"),
];

/// Declarations every instance may refer to, at module level.
const MODULE_PRELUDE: &str = "\
.global .align 8 .b8 gv[64];
.const .align 8 .b8 cv[64];
.shared .align 8 .b8 sv[64];
.func (.param .b32 fr) f_rp(.param .b32 fa)
{
\tret;
}
.func f_p(.param .b32 fa)
{
\tret;
}
.func f_0()
{
\tret;
}
";

/// Declarations every instance may refer to, at the top of the kernel body.
const BODY_PRELUDE: &str = "\
\t.local .align 8 .b8 lv[64];
\t.param .b32 rv;
\t.param .b32 av;
\t.reg .pred %pg;
\t.reg .b64 %fp;
pr_rp: .callprototype (.param .b32 _) _ (.param .b32 _);
pr_p: .callprototype _ (.param .b32 _);
pr_0: .callprototype _ ;
tl_rp: .calltargets f_rp;
tl_p: .calltargets f_p;
tl_0: .calltargets f_0;
bt: .branchtargets L_end;
";

/// What an operand of a form stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// A destination value: the first type of the form.
    Dst,
    /// A source value: the last type of the form.
    Src,
    /// A register of a fixed type.
    Fixed(ScalarType),
    /// A predicate register.
    Pred,
    /// Literal text (an immediate the ISA requires, a sink, a special register, a label).
    Text(&'static str),
    /// A variable in the state space the form names (`gv`, `sv`, …).
    Var,
    /// A call operand (`func`, `fptr`, `flist`, `fproto`, `(ret-param)`, `(param-list)`).
    Call,
}

/// The role of an operand, from its name as the ISA writes it (and, for a few names that mean
/// different things in different instructions, the opcode). The fixed types are those the
/// operand descriptions of the ISA give.
fn role(op: &str, o: &OperandSpec) -> Role {
    use ScalarType as T;
    match (op, o.name) {
        ("applypriority" | "discard", "size") => Role::Text("128"),
        ("pmevent", "a") => Role::Text("1"),
        ("movmatrix", _) => Role::Fixed(T::B32),
        ("st", "initval") => Role::Text("0"),
        ("fence", "size") => Role::Text("128"),
        ("shl" | "shr", "b") | ("popc" | "clz", "d") | ("bfe", "b" | "c") | ("mapa", "b") => {
            Role::Fixed(T::U32)
        }
        ("getctarank", "d") | ("bar" | "barrier", "a" | "b") => Role::Fixed(T::U32),
        ("selp", "c") | ("cp.async", "ignore-src") => Role::Pred,
        ("cvta", "p") => Role::Dst,
        (_, "d" | "dst" | "ptr") => Role::Dst,
        (_, "a" | "b" | "c" | "src") if o.negatable && o.text.starts_with("{!}") => Role::Pred,
        (_, "a" | "b" | "c" | "src") => Role::Src,
        (_, "p" | "q" | "waitComplete") => Role::Pred,
        (
            _,
            "membermask" | "mask" | "base" | "offset" | "index" | "count" | "txCount" | "tx_count"
            | "phaseParity" | "suspendTimeHint" | "t" | "size" | "primary-size" | "total-size"
            | "src-size" | "lod" | "dPdx" | "dPdy" | "e" | "f",
        ) => Role::Fixed(T::B32),
        (_, "ctaMask") => Role::Fixed(T::B16),
        (_, "state" | "cache-policy" | "access-property" | "im2colOffsets") => Role::Fixed(T::B64),
        (_, "fraction") => Role::Text("0f3F000000"),
        (_, "N") => Role::Text("0"),
        (_, "cp-size" | "16") => Role::Text("16"),
        (_, "imm-reg-count") => Role::Text("32"),
        (_, "immAlign") => Role::Text("8"),
        (_, "immLut") => Role::Text("0x80"),

        (_, "_") => Role::Text("_"),
        (_, "sreg") => Role::Text("%tid.x"),
        (_, "fname") => Role::Text("f_0"),
        (_, "kernel") => Role::Text("form_test"),
        (_, "tgt") => Role::Text("L_end"),
        (_, "tlist") => Role::Text("bt"),
        (_, "avar" | "var" | "sh") => Role::Var,
        (_, "func" | "fptr" | "flist" | "fproto" | "ret-param" | "param-list") => Role::Call,
        _ => Role::Fixed(T::B32),
    }
}

/// Elements of the coordinate vector of a texture, surface or tensor address for a geometry.
fn coords(mods: &[&str]) -> usize {
    for m in mods {
        match *m {
            ".1d" => return 1,
            ".2d" | ".a1d" => return 2,
            ".5d" => return 5,
            ".3d" | ".4d" | ".a2d" | ".cube" | ".acube" | ".2dms" | ".a2dms" => return 4,
            _ => {}
        }
    }
    2
}

/// One concrete instance: register declarations and the instruction line.
struct Instance {
    decls: Vec<String>,
    line: String,
}

struct Builder<'a> {
    op: &'a str,
    defs: &'static [Definition],
    mods: Vec<&'static str>,
    types: Vec<ScalarType>,
    vector: Option<usize>,
    decls: Vec<String>,
    call_shape: &'static str,
}

impl Builder<'_> {
    fn reg(&mut self, name: String, t: ScalarType) -> String {
        self.decls
            .push(format!("\t.reg {} {name};", register_type(t)));
        name
    }

    /// A value operand: a register, or a vector of registers for `.vN` forms.
    fn value(&mut self, i: usize, t: ScalarType) -> String {
        match self.vector {
            Some(n) if t != ScalarType::Pred => {
                let items: Vec<String> =
                    (0..n).map(|k| self.reg(format!("%o{i}_{k}"), t)).collect();
                format!("{{{}}}", items.join(", "))
            }
            _ => self.reg(format!("%o{i}"), t),
        }
    }

    /// `.f32x2` (two packed f32 in a 64-bit register) is no scalar type of the table.
    fn untyped_default(&self) -> ScalarType {
        if self.mods.contains(&".f32x2") {
            ScalarType::B64
        } else {
            ScalarType::B32
        }
    }

    fn dst_type(&self) -> ScalarType {
        self.types
            .first()
            .copied()
            .unwrap_or_else(|| self.untyped_default())
    }

    fn src_type(&self) -> ScalarType {
        self.types
            .last()
            .copied()
            .unwrap_or_else(|| self.untyped_default())
    }

    fn var(&self) -> &'static str {
        for m in &self.mods {
            match *m {
                ".const" => return "cv",
                ".local" => return "lv",
                ".param" => return "kp",
                m if m.starts_with(".shared") => return "sv",
                _ => {}
            }
        }
        "gv"
    }

    fn operand(&mut self, i: usize, o: &OperandSpec) -> Result<String, String> {
        if o.address {
            let inner = o
                .text
                .split_once('[')
                .and_then(|(_, r)| r.split_once(']'))
                .map(|(a, _)| a)
                .unwrap_or("");
            let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
            let addr = self.reg(format!("%a{i}"), ScalarType::B64);
            if parts.len() == 1 {
                return Ok(format!("[{addr}]"));
            }
            // `[tex, coords]`, `[tex, index, coords]`, `[tensorMap, tensorCoords]`: the
            // handle, scalar middle parts, and a coordinate vector last.
            let mut out = vec![addr];
            let last = parts.len() - 1;
            for (k, _) in parts.iter().enumerate().skip(1) {
                if k < last {
                    out.push(self.reg(format!("%c{i}_{k}"), ScalarType::B32));
                } else {
                    let n = coords(&self.mods);
                    let t = self.src_type();
                    let items: Vec<String> = (0..n)
                        .map(|j| self.reg(format!("%c{i}_{k}_{j}"), t))
                        .collect();
                    out.push(format!("{{{}}}", items.join(", ")));
                }
            }
            return Ok(format!("[{}]", out.join(", ")));
        }
        let r = role(self.op, o);
        let plus = o.text.contains('+');
        let mut text = match r {
            Role::Dst => {
                let t = self.dst_type();
                self.value(i, t)
            }
            Role::Src => {
                // mixed precision (`add.f32.f16 d, a, c`, `fma.rn.f32.bf16 d, a, b, c`): the
                // accumulator `c` has the destination's type
                let mixed = matches!(self.op, "add" | "sub" | "fma")
                    && o.name == "c"
                    && self.types.len() == 2
                    && self.types[0] == ScalarType::F32;
                let t = if mixed {
                    self.dst_type()
                } else {
                    self.src_type()
                };
                self.value(i, t)
            }
            Role::Fixed(t) => self.reg(format!("%o{i}"), t),
            Role::Pred => self.reg(format!("%p{i}"), ScalarType::Pred),
            Role::Text(t) => t.to_string(),
            Role::Var => self.var().to_string(),
            Role::Call => match o.name {
                "func" => format!("f_{}", self.call_shape),
                "fptr" => "%fp".to_string(),
                "flist" => format!("tl_{}", self.call_shape),
                "fproto" => format!("pr_{}", self.call_shape),
                "ret-param" => "(rv)".to_string(),
                _ => "(av)".to_string(),
            },
        };
        if plus {
            text.push_str("+4");
        }
        // `d|p`, `p|q`: a predicate joins the destination.
        if o.text.contains('|') && !o.text.contains("[|") {
            let q = self.reg(format!("%q{i}"), ScalarType::Pred);
            text = format!("{text}|{q}");
        }
        // A required selector written after the operand (`d.dsel`): its first value.
        if let Some(rest) = o.text.strip_prefix(o.name) {
            if let Some(sel) = rest.strip_prefix('.') {
                let sel = format!(".{}", sel.split(['{', '|', ' ']).next().unwrap_or(""));
                let value = self
                    .defs
                    .iter()
                    .find(|d| d.name == sel)
                    .and_then(|d| d.values.first())
                    .ok_or(format!("operand selector `{sel}` has no value set"))?;
                text.push_str(value);
            }
        }
        Ok(text)
    }
}

/// The instance of `form` with the optional slots in `with_slot` filled and, when
/// `all_operands`, every optional operand present.
fn instance(
    defs: &'static [Definition],
    form: &Form,
    with_slot: Option<usize>,
    all_operands: bool,
) -> Result<Instance, String> {
    let op = form.path.split('.').next().unwrap_or("");
    // The ISA pairs the optional `.level::cache_hint` modifier with the optional
    // `cache-policy` operand: both or neither.
    let hint = form
        .slots
        .iter()
        .position(|s| s.optional && s.name == ".level::cache_hint");
    let policy = form
        .operands
        .iter()
        .any(|o| o.optional && o.name == "cache-policy");
    let cache_on = hint.is_some() && (with_slot == hint || (all_operands && policy));
    let mut mods: Vec<&'static str> = Vec::new();
    let mut text = form.path.to_string();
    for (k, s) in form.slots.iter().enumerate() {
        if s.optional && with_slot != Some(k) && !(cache_on && hint == Some(k)) {
            continue;
        }
        let v = s.values.first().copied().unwrap_or("");
        text.push_str(v);
        mods.push(v);
    }
    // Slot values can hold several modifiers (`.xorsign.abs`): split for the type scan.
    let split: Vec<&'static str> = mods
        .iter()
        .flat_map(|m| {
            let mut v = Vec::new();
            let mut start = 0;
            for (i, c) in m.char_indices().skip(1) {
                if c == '.' && !m[..i].ends_with(':') {
                    v.push(&m[start..i]);
                    start = i;
                }
            }
            v.push(&m[start..]);
            v
        })
        .collect();
    let types: Vec<ScalarType> = split
        .iter()
        .filter_map(|m| ScalarType::from_suffix(m))
        .collect();
    let vector = split
        .iter()
        .find_map(|m| m.strip_prefix(".v").and_then(|n| n.parse().ok()));
    let has = |n: &str| form.operands.iter().any(|o| o.name == n);
    let call_shape = if has("ret-param") {
        "rp"
    } else if has("param-list") {
        "p"
    } else {
        "0"
    };
    let mut b = Builder {
        op,
        defs,
        mods: split,
        types,
        vector,
        decls: Vec::new(),
        call_shape,
    };
    let mut ops = Vec::new();
    for (i, o) in form.operands.iter().enumerate() {
        let include = match o.name {
            "cache-policy" if hint.is_some() => cache_on,
            _ => all_operands,
        };
        if o.optional && !include {
            continue;
        }
        ops.push(b.operand(i, o)?);
    }
    let guard = if form.guard { "@%pg " } else { "" };
    let line = if ops.is_empty() {
        format!("{guard}{text};")
    } else {
        format!("{guard}{text} {};", ops.join(", "))
    };
    Ok(Instance {
        decls: b.decls,
        line,
    })
}

fn module(version: &str, target: &str, inst: &Instance) -> String {
    let mut s = format!(".version {version}\n.target {target}\n.address_size 64\n{MODULE_PRELUDE}");
    s.push_str(".visible .entry form_test(.param .u64 kp)\n{\n");
    s.push_str(BODY_PRELUDE);
    for d in &inst.decls {
        s.push_str(d);
        s.push('\n');
    }
    let _ = writeln!(s, "\t{}", inst.line);
    s.push_str("L_end:\n\tret;\n}\n");
    s
}

/// Parses and checks the instance under each header; the accepted module, if one gives no
/// error.
fn accepted(inst: &Instance) -> Result<String, String> {
    let mut first_err = None;
    for (v, t) in HEADERS {
        let src = module(v, t, inst);
        let parsed = ptx_syntax::parse(&src);
        let mut diags = parsed.diagnostics.clone();
        if !ptx_diag::has_errors(&diags) {
            diags.extend(check_module(&parsed.module, &CheckOptions::default()).diagnostics);
        }
        if !ptx_diag::has_errors(&diags) {
            return Ok(src);
        }
        if first_err.is_none() {
            let file = ptx_diag::SourceFile::new(format!("{t}.ptx"), src.as_str());
            let errors: Vec<_> = diags.into_iter().filter(|d| d.is_error()).collect();
            first_err = Some(ptx_diag::render_plain(&file, &errors));
        }
    }
    Err(first_err.unwrap_or_default())
}

/// Every instance of every instruction form: instruction line → (declarations, or why the
/// form cannot be instantiated).
fn all_instances() -> BTreeMap<String, Result<Instance, String>> {
    let mut out = BTreeMap::new();
    for e in entries() {
        if e.kind != EntryKind::Instruction {
            continue;
        }
        for f in e.forms {
            let mut variants = vec![(None, false)];
            if f.operands.iter().any(|o| o.optional) {
                variants.push((None, true));
            }
            for (k, s) in f.slots.iter().enumerate() {
                if s.optional {
                    variants.push((Some(k), false));
                }
            }
            for (slot, all_ops) in variants {
                match instance(e.definitions, f, slot, all_ops) {
                    Ok(inst) => {
                        out.insert(inst.line.clone(), Ok(inst));
                    }
                    Err(why) => {
                        out.insert(format!("{} [{}]", f.text, why), Err(why));
                    }
                }
            }
        }
    }
    out
}

fn exceptions_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/spec/form-exceptions.txt")
}

/// `INSTANCE ## reason` lines of the exception list.
fn exceptions() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(exceptions_path()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (inst, why) = l.split_once(" ## ")?;
            Some((inst.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

#[test]
fn every_form_is_accepted() {
    let listed = exceptions();
    let mut failing: BTreeMap<String, String> = BTreeMap::new();
    let all = all_instances();
    for (line, inst) in &all {
        let res = match inst {
            Ok(inst) => accepted(inst),
            Err(why) => Err(format!("cannot instantiate: {why}")),
        };
        match res {
            Err(msg) => {
                failing.insert(line.clone(), msg);
            }
            Ok(src) => {
                // `FORMS_DUMP=DIR` writes the accepted modules, to compare with ptxas.
                if let Some(dir) = std::env::var_os("FORMS_DUMP") {
                    let n = all.keys().position(|k| k == line).unwrap_or(0);
                    let _ = std::fs::write(Path::new(&dir).join(format!("{n:04}.ptx")), src);
                }
            }
        }
    }
    let unexpected: Vec<&String> = failing
        .keys()
        .filter(|k| !listed.contains_key(*k))
        .collect();
    let fixed: BTreeSet<&String> = listed
        .keys()
        .filter(|k| !failing.contains_key(*k))
        .collect();
    println!(
        "table forms: {} instances, {} accepted, {} listed as exceptions",
        all.len(),
        all.len() - failing.len(),
        failing.len()
    );
    let mut msg = String::new();
    for k in &unexpected {
        let _ = writeln!(msg, "instance `{k}` is rejected:\n{}", failing[*k]);
    }
    for k in &fixed {
        let _ = writeln!(
            msg,
            "instance `{k}` is listed in tests/spec/form-exceptions.txt but is accepted: remove it"
        );
    }
    if std::env::var_os("FORMS_LIST").is_some() {
        for k in &unexpected {
            println!("{k} ## ");
        }
    }
    assert!(msg.is_empty(), "{msg}");
}

/// Where a hand-written directive instance goes in the test module.
#[derive(Clone, Copy)]
enum Place {
    /// Replaces the module header (`.version`, `.target`, `.address_size`).
    Header(&'static str),
    /// At module level, before the kernel.
    Module(&'static str),
    /// In the kernel's header, after its parameter list.
    Attr(&'static str),
    /// In the kernel body.
    Body(&'static str),
}

/// One instance per directive form of the table, written by hand (a directive's operands are
/// names, lists and bodies that the grammar does not type). The keys must be exactly the
/// directive forms of the table; `None` marks a form that cannot be instantiated, with the
/// reason.
const DIRECTIVE_INSTANCES: &[(&str, Result<Place, &str>)] = &[
    (".address_size address-size", Ok(Place::Header(".version 9.0\n.target sm_90\n.address_size 64"))),
    (".alias fAlias, fAliasee;", Ok(Place::Module(".visible .func fAliasee()\n{\n\tret;\n}\n.visible .func fAlias();\n.alias fAlias, fAliasee;"))),
    ("Label: .branchtargets list-of-labels ;", Ok(Place::Body("\t.reg .b32 %ri;\n\tmov.u32 %ri, 0;\nts: .branchtargets L1, L2;\n\tbrx.idx %ri, ts;\nL1:\nL2:"))),
    ("label: .callprototype _ .noreturn;", Ok(Place::Body("p1: .callprototype _ .noreturn;"))),
    ("label: .callprototype _ (param-list) .noreturn;", Ok(Place::Body("p2: .callprototype _ (.param .b32 a) .noreturn;"))),
    ("label: .callprototype (ret-param) _ ;", Ok(Place::Body("p3: .callprototype (.param .b32 r) _ ;"))),
    ("label: .callprototype (ret-param) _ (param-list);", Ok(Place::Body("p4: .callprototype (.param .b32 r) _ (.param .b32 a, .param .align 8 .b8 s[16]);"))),
    ("Label: .calltargets list-of-functions ;", Ok(Place::Body("ct: .calltargets f_0, f_0b;"))),
    (".common identifier", Ok(Place::Module(".common .global .align 4 .b32 cg;"))),
    (".entry kernel-name ( param-list ) kernel-body", Ok(Place::Module(".visible .entry k2(.param .u64 p, .param .align 8 .b8 s[16])\n{\n\tret;\n}"))),
    (".entry kernel-name kernel-body", Ok(Place::Module(".visible .entry k3\n{\n\tret;\n}"))),
    (".blocksareclusters", Ok(Place::Attr(".reqntid 32, 1, 1 .reqnctapercluster 2, 1, 1 .blocksareclusters"))),
    (".explicitcluster", Ok(Place::Attr(".explicitcluster"))),
    (".extern identifier", Ok(Place::Module(".extern .global .align 4 .b8 ext[];"))),
    (".file file_index \\\"filename\\\" {, timestamp, file_size}", Ok(Place::Module(".file 1 \"kernel.cu\", 1700000000, 1234"))),
    (".func {.attribute(attr-list)} fname {.noreturn} function-body", Ok(Place::Module(".func fn1 .noreturn\n{\n\ttrap;\n}"))),
    (".func {.attribute(attr-list)} fname (param-list) {.noreturn} function-body", Ok(Place::Module(".func fn2(.param .b32 a, .param .align 8 .b8 s[16])\n{\n\tret;\n}"))),
    (".func {.attribute(attr-list)} (ret-param) fname (param-list) function-body", Ok(Place::Module(".func (.param .b32 r) fn3(.param .b32 a)\n{\n\tst.param.b32 [r], 1;\n\tret;\n}"))),
    (".loc file_index line_number column_position", Ok(Place::Body(".loc 1 10 5"))),
    (".loc file_index line_number column_position,function_name label {+ immediate }, inlined_at file_index2 line_number2 column_position2", Err("`function_name` names a label of a `.debug_str` section, which a module needs DWARF sections to have")),
    (".maxclusterrank n", Ok(Place::Attr(".maxclusterrank 8"))),
    (".maxnreg n", Ok(Place::Attr(".maxnreg 32"))),
    (".maxntid nx", Ok(Place::Attr(".maxntid 128"))),
    (".maxntid nx, ny", Ok(Place::Attr(".maxntid 16, 8"))),
    (".maxntid nx, ny, nz", Ok(Place::Attr(".maxntid 8, 8, 2"))),
    (".minnctapersm ncta", Ok(Place::Attr(".maxntid 256 .minnctapersm 2"))),
    (".noreturn", Ok(Place::Module(".func nr() .noreturn\n{\n\ttrap;\n}"))),
    (".pragma list-of-strings ;", Ok(Place::Body(".pragma \"nounroll\";"))),
    (".reqnctapercluster nx", Ok(Place::Attr(".reqnctapercluster 2"))),
    (".reqnctapercluster nx, ny", Ok(Place::Attr(".reqnctapercluster 2, 1"))),
    (".reqnctapercluster nx, ny, nz", Ok(Place::Attr(".reqnctapercluster 2, 1, 1"))),
    (".reqntid nx", Ok(Place::Attr(".reqntid 128"))),
    (".reqntid nx, ny", Ok(Place::Attr(".reqntid 16, 8"))),
    (".reqntid nx, ny, nz", Ok(Place::Attr(".reqntid 8, 8, 2"))),
    (".target stringlist", Ok(Place::Header(".version 9.0\n.target sm_90, texmode_independent\n.address_size 64"))),
    (".version major.minor", Ok(Place::Header(".version 8.0\n.target sm_90\n.address_size 64"))),
    (".visible identifier", Ok(Place::Module(".visible .global .align 4 .b32 vis;"))),
    (".weak identifier", Ok(Place::Module(".weak .global .align 4 .b32 wk;"))),
];

/// A module around one directive or special-register instance.
fn small_module(header: &str, module: &str, attr: &str, body: &str) -> String {
    format!(
        "{header}\n.func f_0()\n{{\n\tret;\n}}\n.func f_0b()\n{{\n\tret;\n}}\n{module}\n\
         .visible .entry form_test(.param .u64 kp) {attr}\n{{\n{body}\n\tret;\n}}\n"
    )
}

/// Parses and checks `src`: the rendered errors, if any.
fn errors_of(src: &str) -> Option<String> {
    let parsed = ptx_syntax::parse(src);
    let mut diags = parsed.diagnostics.clone();
    if !ptx_diag::has_errors(&diags) {
        diags.extend(check_module(&parsed.module, &CheckOptions::default()).diagnostics);
    }
    let errors: Vec<_> = diags.into_iter().filter(|d| d.is_error()).collect();
    if errors.is_empty() {
        return None;
    }
    let file = ptx_diag::SourceFile::new("directive.ptx", src);
    Some(ptx_diag::render_plain(&file, &errors))
}

/// Every directive form of the table has an instance above (exactly those forms), and every
/// special register can be read with `mov` into a register of its type; each parses and
/// checks with no error.
#[test]
fn every_directive_and_special_register_is_accepted() {
    let forms: BTreeSet<&str> = entries()
        .iter()
        .filter(|e| e.kind == EntryKind::Directive)
        .flat_map(|e| e.forms.iter().map(|f| f.text))
        .collect();
    let listed: BTreeSet<&str> = DIRECTIVE_INSTANCES.iter().map(|(f, _)| *f).collect();
    let mut msg = String::new();
    for f in forms.difference(&listed) {
        let _ = writeln!(
            msg,
            "directive form `{f}` has no instance in DIRECTIVE_INSTANCES"
        );
    }
    for f in listed.difference(&forms) {
        let _ = writeln!(
            msg,
            "DIRECTIVE_INSTANCES lists `{f}`, which is not a form of the table"
        );
    }
    let default_header = ".version 9.0\n.target sm_90a\n.address_size 64";
    let mut count = 0;
    for (form, inst) in DIRECTIVE_INSTANCES {
        let Ok(place) = inst else { continue };
        let src = match *place {
            Place::Header(h) => small_module(h, "", "", ""),
            Place::Module(m) => small_module(default_header, m, "", ""),
            Place::Attr(a) => small_module(default_header, "", a, ""),
            Place::Body(b) => small_module(default_header, "", "", b),
        };
        if let Some(errs) = errors_of(&src) {
            let _ = writeln!(msg, "the instance of `{form}` is rejected:\n{src}\n{errs}");
        }
        if std::env::var_os("FORMS_DUMP").is_some() {
            let dir = std::env::var_os("FORMS_DUMP").unwrap_or_default();
            let _ = std::fs::write(Path::new(&dir).join(format!("d{count:02}.ptx")), &src);
        }
        count += 1;
    }
    let mut registers = 0;
    for e in entries()
        .iter()
        .filter(|e| e.kind == EntryKind::SpecialRegister)
    {
        // `%envreg<32>` and `%reserved_smem_offset_<2>` are families: read member 0.
        let name = match e.opcode.split_once('<') {
            Some((stem, _)) => format!("%{stem}0"),
            None => format!("%{}", e.opcode),
        };
        let Some(sreg) = ptx_isa::special_register(&name) else {
            let _ = writeln!(msg, "special register `{name}` ({}) is unknown", e.title);
            continue;
        };
        let read = if sreg.components.is_empty() {
            name.clone()
        } else {
            format!("{name}.{}", sreg.components[0])
        };
        let ty = sreg.ty;
        let body = format!(
            "\t.reg {} %s;\n\tmov{} %s, {read};",
            register_type(ty),
            if matches!(ty.kind(), ptx_isa::TypeKind::Bit | ptx_isa::TypeKind::Pred)
                || ty.is_integer()
            {
                ty.suffix().to_string()
            } else {
                format!(".b{}", ty.size_bits())
            }
        );
        let ok = HEADERS.iter().any(|(v, t)| {
            let header = format!(".version {v}\n.target {t}\n.address_size 64");
            errors_of(&small_module(&header, "", "", &body)).is_none()
        });
        if !ok {
            let header = format!(
                ".version {}\n.target {}\n.address_size 64",
                HEADERS[0].0, HEADERS[0].1
            );
            let src = small_module(&header, "", "", &body);
            let _ = writeln!(
                msg,
                "reading `{read}` is rejected:\n{}",
                errors_of(&src).unwrap_or_default()
            );
        }
        if let Some(dir) = std::env::var_os("FORMS_DUMP") {
            let header = format!(
                ".version {}\n.target {}\n.address_size 64",
                HEADERS[0].0, HEADERS[0].1
            );
            let _ = std::fs::write(
                Path::new(&dir).join(format!("s{registers:02}.ptx")),
                small_module(&header, "", "", &body),
            );
        }
        registers += 1;
    }
    println!(
        "directives: {} forms, {count} instances; special registers: {registers} read",
        forms.len()
    );
    assert!(msg.is_empty(), "{msg}");
}
