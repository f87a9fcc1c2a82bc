//! The PTX linker: several PTX inputs become one PTX module, resolved by name as nvlink
//! resolves relocatable objects. libcuda's JIT linker (`cuLinkCreate/AddData/AddFile/Complete`)
//! and `ptxvm run --link FILE` use it.
//!
//! # Design
//! ptxvm runs one checked PTX module per `Module`, so linking happens on the PTX text, before
//! the runtime sees it, and the result is ordinary PTX that every load path accepts:
//! 1. **Each input is checked on its own** when it is added ([`check_input`]): parse and check
//!    errors name the input (`name:line:column`), as the driver's JIT compiles each input when
//!    it is added.
//! 2. **Symbols are resolved by name** ([`link`]) from each input's parsed declarations:
//!    `.visible`, `.weak` and `.common` definitions are exported; two `.visible` definitions
//!    of one name are a link error naming both places; a `.weak` or second `.common`
//!    definition gives way to the first strong one. A `.extern` declaration is dropped when
//!    another input defines its name. One that nothing defines is an *undefined reference*
//!    (a link error) when the input uses it, unless the GPU supplies it (`vprintf`, `malloc`,
//!    `free`, `__assertfail`) or the CUDA device runtime (`libcudadevrt.a`) was added to the
//!    link and the name is one of its `cuda…` functions: those stay declarations, and the
//!    interpreter handles or refuses the call when it runs.
//! 3. **Names private to an input** (no linkage directive) that another input also uses are
//!    renamed (`name$lkN`) so inputs cannot capture each other's helpers.
//! 4. **Prototype mismatches** between a `.extern .func` and its definition are what the
//!    driver's JIT linker (and nvJitLink) accepts with a warning — `Prototype doesn't match`
//!    — where offline `nvlink` refuses. numba's C-ABI declarations rely on it (a `void`
//!    function declared as returning `.b64`). The warning goes to the info log, and the
//!    input's calls go through an adapter function with the declared prototype that passes
//!    each scalar argument (zero-extended or truncated to the definition's size, missing ones
//!    as zero; byte arrays, i.e. by-value structs, by their common prefix) and returns the
//!    definition's result the same way (zero when it has none). A mismatch the adapter cannot
//!    express (a scalar against an array, vectors, several return values) is a link error
//!    naming both places. Two strong definitions of one name are an error too (nvJitLink logs
//!    `Multiple definition` as an error; nvlink fails).
//! 5. The output starts with the highest `.version` and `.target` of the inputs, then each
//!    input's text with its header, resolved declarations and renames edited in place, and is
//!    parsed and checked once more as a whole.
#![deny(unsafe_code)]

use ptx_diag::{Diagnostic, SourceFile};
use ptx_syntax::ast::{Directive, Function, FunctionKind, Linkage, VarDecl};
use ptx_syntax::lexer::{tokenize, TokenKind};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// One input to the link.
#[derive(Clone, Debug)]
pub struct Input {
    /// The name the host gave it (file name or `cuLinkAddData`'s name).
    pub name: String,
    /// The PTX text.
    pub text: String,
}

/// A successful link: the PTX module and the info log (warnings).
#[derive(Debug)]
pub struct Linked {
    /// One PTX module.
    pub ptx: String,
    /// Warnings, one a line.
    pub info: String,
}

/// Functions the GPU (and ptxvm's interpreter) supply without a definition in any input.
const SYSTEM: &[&str] = &["vprintf", "malloc", "free", "__assertfail", "__assert_fail"];

/// Parses and checks one input on its own; the error is the rendered diagnostics.
pub fn check_input(name: &str, text: &str) -> Result<(), String> {
    let file = SourceFile::new(name, text);
    let parsed = ptx_syntax::parse(text);
    if ptx_diag::has_errors(&parsed.diagnostics) {
        return Err(ptx_diag::render_plain(&file, &parsed.diagnostics));
    }
    let checked = ptx_check::check_module(&parsed.module, &ptx_check::CheckOptions::default());
    if checked.has_errors() {
        let mut d = checked.diagnostics;
        d.retain(Diagnostic::is_error);
        return Err(ptx_diag::render_plain(&file, &d));
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SymKind {
    Func,
    Entry,
    Var,
}

/// A module-scope name one input declares or defines.
#[derive(Clone, Debug)]
struct Sym {
    input: usize,
    name: String,
    kind: SymKind,
    linkage: Option<Linkage>,
    defined: bool,
    /// Byte range of the whole directive (through its `;` or closing brace).
    range: (usize, usize),
    /// Byte offset of the name (for messages and splicing).
    name_at: (usize, usize),
    /// Byte offset where the header starts after the linkage word.
    after_linkage: usize,
    /// Header end (the `;` or `{` follows).
    header_end: usize,
    /// For functions: return and parameter shapes.
    proto: Option<Proto>,
}

/// A function's prototype as the linker compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Proto {
    rets: Vec<Param>,
    params: Vec<Param>,
}

/// One parameter: its name, type word, byte size, and whether it is a plain scalar.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Param {
    name: String,
    ty: String,
    size: u64,
    scalar: bool,
    align: Option<u64>,
}

fn param_of(v: &VarDecl) -> Vec<Param> {
    let elem = type_size(&v.ty.text);
    let lanes = match v.vector.as_ref().map(|w| w.text.as_ref()) {
        Some(".v2") => 2,
        Some(".v4") => 4,
        Some(".v8") => 8,
        _ => 1,
    };
    v.declarators
        .iter()
        .map(|d| {
            let mut size = elem.unwrap_or(0) * lanes;
            let mut scalar = elem.is_some() && lanes == 1;
            for dim in &d.dims {
                scalar = false;
                let n = dim
                    .as_ref()
                    .and_then(|e| ptx_syntax::constexpr::eval(e, &|_| None).ok())
                    .and_then(|v| v.as_i128())
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(0);
                size = size.saturating_mul(n);
            }
            Param {
                name: d.name.text.to_string(),
                ty: v.ty.text.to_string(),
                size,
                scalar,
                align: v.align,
            }
        })
        .collect()
}

fn type_size(ty: &str) -> Option<u64> {
    Some(match ty {
        ".b8" | ".u8" | ".s8" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        _ => return None,
    })
}

fn proto_of(f: &Function) -> Proto {
    let list = |l: &Option<Vec<VarDecl>>| l.iter().flatten().flat_map(param_of).collect::<Vec<_>>();
    Proto {
        rets: list(&f.returns),
        params: list(&f.params),
    }
}

/// Two prototypes that nvJitLink takes as the same: equal counts and sizes.
fn same_shape(a: &Proto, b: &Proto) -> bool {
    let sizes = |p: &[Param]| p.iter().map(|x| (x.size, x.scalar)).collect::<Vec<_>>();
    sizes(&a.rets) == sizes(&b.rets) && sizes(&a.params) == sizes(&b.params)
}

/// Index of the `;` ending a declaration whose header ends at `from`.
fn end_of_decl(text: &str, from: usize) -> usize {
    text[from..]
        .find(';')
        .map(|k| from + k + 1)
        .unwrap_or(text.len())
}

struct Parsed {
    syms: Vec<Sym>,
    version: (u32, u32),
    target: Option<String>,
    address_size: Option<u32>,
    /// Byte ranges of `.version`/`.target`/`.address_size` to drop.
    header: Vec<(usize, usize)>,
    /// Identifier token uses: name -> number of occurrences.
    uses: HashMap<String, usize>,
}

fn analyse(k: usize, text: &str) -> Result<Parsed, String> {
    let parsed = ptx_syntax::parse(text);
    if ptx_diag::has_errors(&parsed.diagnostics) {
        return Err(String::new());
    }
    let mut p = Parsed {
        syms: Vec::new(),
        version: (0, 0),
        target: None,
        address_size: None,
        header: Vec::new(),
        uses: HashMap::new(),
    };
    let span = |l: &ptx_syntax::ast::Loc| (l.0.start as usize, l.0.end as usize);
    for d in &parsed.module.directives {
        match d {
            Directive::Version { major, minor, loc } => {
                p.version = (*major, *minor);
                p.header.push(span(loc));
            }
            Directive::Target { targets, loc } => {
                let t: Vec<&str> = targets.iter().map(|w| w.text.as_ref()).collect();
                p.target = Some(t.join(", "));
                p.header.push(span(loc));
            }
            Directive::AddressSize { bits, loc } => {
                p.address_size = Some(*bits);
                p.header.push(span(loc));
            }
            Directive::Function(f) => {
                let (start, header_end) = span(&f.loc);
                let end = match &f.body {
                    Some(b) => b.close.0.end as usize,
                    None => end_of_decl(text, header_end),
                };
                let after_linkage = if f.linkage.is_some() {
                    // the linkage word is the first token
                    start + text[start..].find(char::is_whitespace).unwrap_or(0)
                } else {
                    start
                };
                p.syms.push(Sym {
                    input: k,
                    name: f.name.text.to_string(),
                    kind: match f.kind {
                        FunctionKind::Entry => SymKind::Entry,
                        FunctionKind::Func => SymKind::Func,
                    },
                    linkage: f.linkage,
                    defined: f.body.is_some(),
                    range: (start, end),
                    name_at: span(&f.name.loc),
                    after_linkage,
                    header_end,
                    proto: Some(proto_of(f)),
                });
            }
            Directive::Variable(v) => {
                // only .global and .const names link; `.extern .shared` is dynamic shared
                // memory, and the other spaces hold no linkable storage
                if !matches!(v.space.text.as_ref(), ".global" | ".const") {
                    continue;
                }
                let (start, header_end) = span(&v.loc);
                for dcl in &v.declarators {
                    p.syms.push(Sym {
                        input: k,
                        name: dcl.name.text.to_string(),
                        kind: SymKind::Var,
                        linkage: v.linkage,
                        defined: v.linkage != Some(Linkage::Extern),
                        range: (start, end_of_decl(text, header_end)),
                        name_at: span(&dcl.name.loc),
                        after_linkage: start,
                        header_end,
                        proto: None,
                    });
                }
            }
            _ => {}
        }
    }
    for t in tokenize(text) {
        if t.kind == TokenKind::Ident {
            let s = &text[t.span.start as usize..t.span.end as usize];
            *p.uses.entry(s.to_string()).or_default() += 1;
        }
    }
    Ok(p)
}

/// Links `inputs` into one PTX module. `device_runtime`: `libcudadevrt.a` was added, so its
/// `cuda…` functions may stay unresolved. The error is the link's error log.
pub fn link(inputs: &[Input], device_runtime: bool) -> Result<Linked, String> {
    let files: Vec<SourceFile> = inputs
        .iter()
        .map(|i| SourceFile::new(i.name.as_str(), i.text.as_str()))
        .collect();
    let mut parsed = Vec::new();
    for (k, i) in inputs.iter().enumerate() {
        parsed.push(analyse(k, &i.text).map_err(|_| {
            check_input(&i.name, &i.text)
                .err()
                .unwrap_or_else(|| format!("error: {}: cannot be parsed", i.name))
        })?);
    }
    let at = |s: &Sym| files[s.input].location(s.name_at.0 as u32);
    let mut errors = String::new();
    let mut info = String::new();

    // exported definitions by name: the first strong one wins
    let mut exported: HashMap<&str, &Sym> = HashMap::new();
    // directives to drop (input, range)
    let mut drop: Vec<(usize, (usize, usize))> = Vec::new();
    for s in parsed.iter().flat_map(|p| &p.syms) {
        let exports = s.defined
            && (matches!(
                s.linkage,
                Some(Linkage::Visible | Linkage::Weak | Linkage::Common)
            ) || s.kind == SymKind::Entry);
        if !exports {
            continue;
        }
        match exported.get(s.name.as_str()) {
            None => {
                exported.insert(&s.name, s);
            }
            Some(&first) if first.input == s.input => {}
            Some(&first) => {
                let strong = |x: &Sym| !matches!(x.linkage, Some(Linkage::Weak | Linkage::Common));
                if strong(first) && strong(s) {
                    let _ = writeln!(
                        errors,
                        "error: multiple definition of `{}`: {} and {}",
                        s.name,
                        at(first),
                        at(s)
                    );
                } else if strong(s) {
                    // the strong definition replaces the weak/common one
                    drop.push((first.input, first.range));
                    exported.insert(&s.name, s);
                } else {
                    drop.push((s.input, s.range));
                }
            }
        }
    }

    // renames: (input, old) -> new
    let mut renames: Vec<HashMap<String, String>> = vec![HashMap::new(); inputs.len()];
    // replacements: (input, range, text)
    let mut replace: Vec<(usize, (usize, usize), String)> = Vec::new();
    for p in &parsed {
        for s in &p.syms {
            // a private name that another input also uses
            if s.linkage.is_none() && s.kind != SymKind::Entry && s.defined {
                let clash = parsed
                    .iter()
                    .any(|q| !std::ptr::eq(q, p) && q.uses.contains_key(&s.name));
                if clash {
                    renames[s.input].insert(s.name.clone(), format!("{}$lk{}", s.name, s.input));
                }
            }
            if s.linkage != Some(Linkage::Extern) || s.defined && s.kind == SymKind::Var {
                continue;
            }
            let used = p.uses.get(&s.name).copied().unwrap_or(0) > 1;
            let Some(&def) = exported.get(s.name.as_str()) else {
                let supplied = SYSTEM.contains(&s.name.as_str())
                    || device_runtime && s.name.starts_with("cuda");
                if used && !supplied {
                    let _ = writeln!(
                        errors,
                        "error: undefined reference to `{}` in {} (declared `.extern` at {}, defined by no input)",
                        s.name,
                        inputs[s.input].name,
                        at(s)
                    );
                }
                continue;
            };
            if s.kind == SymKind::Var || def.kind == SymKind::Var {
                if (s.kind == SymKind::Var) != (def.kind == SymKind::Var) {
                    let _ = writeln!(
                        errors,
                        "error: `{}` is declared as a {} at {} but defined as a {} at {}",
                        s.name,
                        what(s.kind),
                        at(s),
                        what(def.kind),
                        at(def)
                    );
                } else {
                    drop.push((s.input, s.range));
                }
                continue;
            }
            let (Some(want), Some(have)) = (&s.proto, &def.proto) else {
                continue;
            };
            if same_shape(want, have) {
                drop.push((s.input, s.range));
                continue;
            }
            let _ = writeln!(
                info,
                "warning: prototype doesn't match for `{}`: declared at {} as {}, defined at {} as {}; calls pass through an adapter",
                s.name,
                at(s),
                show(want),
                at(def),
                show(have)
            );
            let shim = format!("{}$lk{}", s.name, s.input);
            match adapter(&inputs[s.input].text, s, &shim, want, have) {
                Some(text) => {
                    renames[s.input].insert(s.name.clone(), shim);
                    replace.push((s.input, s.range, text));
                }
                None => {
                    let _ = writeln!(
                        errors,
                        "error: prototype doesn't match for `{}`: declared at {} as {}, defined at {} as {}",
                        s.name,
                        at(s),
                        show(want),
                        at(def),
                        show(have)
                    );
                }
            }
        }
    }
    // address sizes must agree
    let sizes: HashSet<u32> = parsed.iter().filter_map(|p| p.address_size).collect();
    if sizes.len() > 1 {
        let _ = writeln!(
            errors,
            "error: the inputs mix `.address_size 32` and `.address_size 64`"
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // the header: the highest version and target
    let version = parsed.iter().map(|p| p.version).max().unwrap_or((8, 0));
    let target = parsed
        .iter()
        .filter_map(|p| p.target.clone())
        .max_by_key(|t| sm_number(t))
        .unwrap_or_else(|| "sm_80".to_string());
    let mut out = format!(
        ".version {}.{}\n.target {}\n.address_size {}\n",
        version.0,
        version.1,
        target,
        sizes.iter().next().copied().unwrap_or(64)
    );
    for (k, i) in inputs.iter().enumerate() {
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        for &r in &parsed[k].header {
            edits.push((r.0, r.1, String::new()));
        }
        for (_, r) in drop.iter().filter(|(d, _)| *d == k) {
            edits.push((r.0, r.1, String::new()));
        }
        for (_, r, t) in replace.iter().filter(|(d, _, _)| *d == k) {
            edits.push((r.0, r.1, t.clone()));
        }
        if !renames[k].is_empty() {
            for t in tokenize(&i.text) {
                let (a, b) = (t.span.start as usize, t.span.end as usize);
                if t.kind == TokenKind::Ident {
                    if let Some(n) = renames[k].get(&i.text[a..b]) {
                        edits.push((a, b, n.clone()));
                    }
                }
            }
        }
        // apply, outermost first; an edit inside an earlier one is dropped
        edits.sort_by_key(|e| (e.0, std::cmp::Reverse(e.1)));
        let mut pos = 0;
        let _ = writeln!(
            out,
            "// ptxvm link input {k}: {}",
            i.name.replace('\n', " ")
        );
        for (a, b, t) in edits {
            if a < pos {
                continue;
            }
            out.push_str(&i.text[pos..a]);
            out.push_str(&t);
            pos = b;
        }
        out.push_str(&i.text[pos..]);
        out.push('\n');
    }
    // the whole must check too (a failure here is ptxvm's, but is reported, not hidden)
    if let Err(log) = check_input("linked module", &out) {
        return Err(format!(
            "error: the linked module does not check (a ptxvm linker limitation):\n{log}"
        ));
    }
    Ok(Linked { ptx: out, info })
}

fn what(k: SymKind) -> &'static str {
    match k {
        SymKind::Var => "variable",
        SymKind::Func => "function",
        SymKind::Entry => "kernel",
    }
}

fn sm_number(t: &str) -> u32 {
    t.split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|w| w.strip_prefix("sm_"))
        .filter_map(|w| {
            w.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

fn show(p: &Proto) -> String {
    let list = |v: &[Param]| {
        v.iter()
            .map(|x| format!("{}{}", x.ty, if x.scalar { "" } else { "[]" }))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("({}) ({})", list(&p.rets), list(&p.params))
}

/// A function named `shim` with the prototype `s` declares, calling the definition's prototype
/// `have`. Scalars of 1, 2, 4 or 8 bytes pass zero-extended or truncated; byte arrays
/// (by-value structs) pass their common prefix, the rest zero. `None` for anything else (a
/// scalar against an array, several return values).
fn adapter(text: &str, s: &Sym, shim: &str, want: &Proto, have: &Proto) -> Option<String> {
    let scalar = |x: &Param| x.scalar && matches!(x.size, 1 | 2 | 4 | 8);
    let bytes = |x: &Param| !x.scalar && matches!(x.ty.as_str(), ".b8" | ".u8" | ".s8");
    let pair = |w: &Param, h: &Param| {
        (scalar(w) && scalar(h)) || (bytes(w) && bytes(h) && h.size <= MAX_ADAPTED_BYTES)
    };
    let fits = |w: &[Param], h: &[Param]| {
        h.iter()
            .all(|x| scalar(x) || bytes(x) && x.size <= MAX_ADAPTED_BYTES)
            && w.iter().zip(h).all(|(a, b)| pair(a, b))
    };
    if !fits(&want.params, &have.params) || !fits(&want.rets, &have.rets) {
        return None;
    }
    if want.rets.len() > 1 || have.rets.len() > 1 {
        return None;
    }
    let mut out = String::new();
    // the declared header, without `.extern` and under the adapter's name
    out.push_str(text.get(s.after_linkage..s.name_at.0)?.trim_start());
    out.push_str(shim);
    out.push_str(text.get(s.name_at.1..s.header_end)?);
    out.push_str("\n{\n\t.reg .b16 %lk_h;\n\t.reg .b32 %lk_r;\n\t.reg .b64 %lk_d;\n\t{\n");
    let decl = |p: &Param, name: &str| match p.scalar {
        true => format!("\t.param {} {name};\n", p.ty),
        false => format!(
            "\t.param .align {} {} {name}[{}];\n",
            p.align.unwrap_or(1),
            p.ty,
            p.size
        ),
    };
    for (k, p) in have.params.iter().enumerate() {
        out.push_str(&decl(p, &format!("%lk_p{k}")));
    }
    if let Some(r) = have.rets.first() {
        out.push_str(&decl(r, "%lk_q"));
    }
    for (k, p) in have.params.iter().enumerate() {
        pass(&mut out, want.params.get(k), p, &format!("%lk_p{k}"));
    }
    let args: Vec<String> = (0..have.params.len())
        .map(|k| format!("%lk_p{k}"))
        .collect();
    let name = &text[s.name_at.0..s.name_at.1];
    let ret = if have.rets.is_empty() {
        ""
    } else {
        "(%lk_q), "
    };
    let _ = writeln!(out, "\tcall {ret}{name}, ({});", args.join(", "));
    if let Some(w) = want.rets.first() {
        let from = have.rets.first().map(|r| Param {
            name: "%lk_q".to_string(),
            ..r.clone()
        });
        pass(&mut out, from.as_ref(), w, &w.name);
    }
    out.push_str("\t}\n\tret;\n}\n");
    Some(out)
}

/// The most bytes of a by-value array an adapter copies (one load and store each).
const MAX_ADAPTED_BYTES: u64 = 4096;

/// Copies parameter `from` (absent: zero) into `to`, named `dst`.
fn pass(out: &mut String, from: Option<&Param>, to: &Param, dst: &str) {
    if to.scalar {
        match from {
            Some(f) => load(out, &f.name, f.size),
            None => out.push_str("\tmov.u64 %lk_d, 0;\n"),
        }
        store(out, dst, to.size);
        return;
    }
    let n = from.map_or(0, |f| f.size.min(to.size));
    for k in 0..to.size {
        let _ = match from {
            Some(f) if k < n => writeln!(
                out,
                "\tld.param.u8 %lk_h, [{}+{k}];\n\tst.param.u8 [{dst}+{k}], %lk_h;",
                f.name
            ),
            _ => writeln!(
                out,
                "\tmov.u16 %lk_h, 0;\n\tst.param.u8 [{dst}+{k}], %lk_h;"
            ),
        };
    }
}

/// `%lk_d` = the `size`-byte parameter `p`, zero-extended.
fn load(out: &mut String, p: &str, size: u64) {
    let _ = match size {
        1 => writeln!(
            out,
            "\tld.param.u8 %lk_h, [{p}];\n\tcvt.u64.u16 %lk_d, %lk_h;"
        ),
        2 => writeln!(
            out,
            "\tld.param.u16 %lk_h, [{p}];\n\tcvt.u64.u16 %lk_d, %lk_h;"
        ),
        4 => writeln!(
            out,
            "\tld.param.u32 %lk_r, [{p}];\n\tcvt.u64.u32 %lk_d, %lk_r;"
        ),
        _ => writeln!(out, "\tld.param.u64 %lk_d, [{p}];"),
    };
}

/// The parameter `p` of `size` bytes = `%lk_d`, truncated.
fn store(out: &mut String, p: &str, size: u64) {
    let _ = match size {
        1 => writeln!(
            out,
            "\tcvt.u16.u64 %lk_h, %lk_d;\n\tst.param.u8 [{p}], %lk_h;"
        ),
        2 => writeln!(
            out,
            "\tcvt.u16.u64 %lk_h, %lk_d;\n\tst.param.u16 [{p}], %lk_h;"
        ),
        4 => writeln!(
            out,
            "\tcvt.u32.u64 %lk_r, %lk_d;\n\tst.param.u32 [{p}], %lk_r;"
        ),
        _ => writeln!(out, "\tst.param.u64 [{p}], %lk_d;"),
    };
}
