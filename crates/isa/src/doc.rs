//! The text behind `ptxvm doc`: one entry in detail, the list of all, the coverage table.

use std::fmt::{self, Write as _};

use crate::cuda::{all_cuda_names, cuda_name, CudaName};
use crate::suggest::closest;
use crate::{
    entries, lookup, suggest, suggest_modifier, Entry, EntryKind, Form, Stages, Support, TargetReq,
};

/// Where the official PTX ISA document lives; an entry's anchor is appended.
pub const DOC_BASE_URL: &str = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#";

/// Why [`render_doc`] found nothing to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocError {
    /// The query was empty.
    Empty,
    /// No entry has this opcode, directive or register name.
    Unknown {
        /// The name that was asked for.
        query: String,
        /// The nearest known name, if one is close.
        did_you_mean: Option<String>,
    },
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocError::Empty => f.write_str("no opcode given"),
            DocError::Unknown {
                query,
                did_you_mean: Some(s),
            } => write!(f, "unknown opcode `{query}`; did you mean `{s}`?"),
            DocError::Unknown { query, .. } => write!(f, "unknown opcode `{query}`"),
        }
    }
}

impl std::error::Error for DocError {}

/// Splits `cp.async.bulk.tensor` into (`cp`, [`.async`, `.bulk`, `.tensor`]); `%tid.x` and
/// `.entry` keep their prefix on the name.
fn split_query(query: &str) -> (String, Vec<String>) {
    let (prefix, rest) = match query.chars().next() {
        Some(c @ ('%' | '.')) => (c.to_string(), &query[1..]),
        _ => (String::new(), query),
    };
    let mut parts = rest.split('.');
    let name = format!("{prefix}{}", parts.next().unwrap_or(""));
    let mods = parts
        .filter(|p| !p.is_empty())
        .map(|p| format!(".{p}"))
        .collect();
    (name, mods)
}

/// Renders the documentation of `query`: an opcode with optional modifiers (`add`,
/// `add.f32`, `cp.async.bulk.tensor`), a directive (`.entry`) or a special register
/// (`%tid`). Each matching section shows its title, syntax forms, modifiers with their
/// alternatives, operands, the PTX version and target gates, our summary and the link to the
/// official section. With modifiers, sections whose title names the whole query win; else
/// the sections with a form that takes every modifier; else all sections of the opcode.
pub fn render_doc(query: &str) -> Result<String, DocError> {
    let query = query.trim();
    if query.is_empty() {
        return Err(DocError::Empty);
    }
    let (name, mods) = split_query(query);
    let all = lookup(&name);
    if all.is_empty() {
        if let Some(c) = cuda_name(query) {
            return Ok(render_cuda(query, c));
        }
        // a CUDA-looking name (`__syncthread`, `atomicAd`) is compared with the CUDA names
        let cuda_like = query.starts_with("__") || query.starts_with("atomic");
        if let Some(s) = cuda_like
            .then(|| closest(query, all_cuda_names()))
            .flatten()
        {
            return Err(DocError::Unknown {
                query: query.to_string(),
                did_you_mean: Some(s.to_string()),
            });
        }
        let did_you_mean = suggest(&name).map(|s| {
            let prefix = if name.starts_with(['%', '.']) {
                &name[..1]
            } else {
                ""
            };
            let mut text = format!("{prefix}{s}");
            for m in &mods {
                text.push_str(suggest_modifier(s, m).unwrap_or(m));
            }
            text
        });
        return Err(DocError::Unknown {
            query: query.to_string(),
            did_you_mean,
        });
    }
    let mod_refs: Vec<&str> = mods.iter().map(String::as_str).collect();
    let bare_query = query.trim_start_matches(['%', '.']);
    let titled: Vec<&Entry> = all
        .iter()
        .filter(|e| {
            e.names
                .iter()
                .any(|n| n.trim_start_matches(['%', '.']) == bare_query)
        })
        .collect();
    let matching: Vec<&Entry> = all
        .iter()
        .filter(|e| e.forms.iter().any(|f| f.accepts_all(&mod_refs)))
        .collect();
    let mut out = String::new();
    let chosen: Vec<&Entry> = if !mods.is_empty() && !titled.is_empty() {
        titled
    } else if mods.is_empty() || !matching.is_empty() {
        if mods.is_empty() {
            all.iter().collect()
        } else {
            matching
        }
    } else {
        let unknown: Vec<String> = mods
            .iter()
            .filter(|m| {
                all.iter()
                    .all(|e| !e.forms.iter().any(|f| f.accepts_all(&[m])))
            })
            .map(|m| match suggest_modifier(&name, m) {
                Some(s) => format!("{m} (did you mean {s}?)"),
                None => m.clone(),
            })
            .collect();
        let _ = writeln!(
            out,
            "note: no form of `{name}` takes {}; showing every section.\n",
            if unknown.is_empty() {
                "all of these modifiers together".to_string()
            } else {
                unknown.join(", ")
            }
        );
        all.iter().collect()
    };
    for (i, e) in chosen.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_entry(&mut out, e, &mod_refs);
    }
    Ok(out)
}

/// A CUDA C++ name: what nvcc emits for it, the other queries that document it, then the
/// documentation of the first.
fn render_cuda(query: &str, c: &CudaName) -> String {
    let shown = query.trim();
    let mut out = format!("{shown} (CUDA C++) compiles to {}.\n", c.emits);
    if let [_, more @ ..] = c.doc {
        if !more.is_empty() {
            let also: Vec<String> = more.iter().map(|q| format!("`ptxvm doc {q}`")).collect();
            let _ = writeln!(out, "See also {}.", also.join(", "));
        }
    }
    out.push('\n');
    // the table's queries are all documented (a test)
    if let Some(Ok(text)) = c.doc.first().map(|q| render_doc(q)) {
        out.push_str(&text);
    }
    out
}

fn render_entry(out: &mut String, e: &Entry, mods: &[&str]) {
    let _ = writeln!(out, "{} — {}", e.name(), e.title);
    let _ = writeln!(out, "  {}", e.summary);
    let _ = writeln!(out);
    let intro = e
        .ptx
        .map_or("not stated".to_string(), |v| format!("PTX ISA {v}"));
    let preview = if e.preview { " (preview feature)" } else { "" };
    let _ = writeln!(out, "  introduced: {intro}{preview}");
    let target = match e.target {
        TargetReq::All => "all targets".to_string(),
        TargetReq::Min(t) if t.variant == crate::ArchVariant::Base => format!("{t} or higher"),
        TargetReq::Min(t) => format!("{t} only (architecture-specific)"),
        req @ TargetReq::AnyOf(_) => format!("{req}"),
        TargetReq::Unstated => "see the gates below".to_string(),
    };
    let _ = writeln!(out, "  target:     {target}");
    if !e.forms.is_empty() {
        let _ = writeln!(out, "\n  syntax:");
        for f in e.forms {
            if mods.is_empty() || f.accepts_all(mods) {
                let _ = writeln!(out, "    {}", f.text);
            }
        }
        render_modifiers(out, e.forms);
        render_operands(out, e.forms);
    }
    let others: Vec<_> = e
        .definitions
        .iter()
        .filter(|d| {
            !e.forms
                .iter()
                .any(|f| f.slots.iter().any(|s| s.name == d.name))
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(out, "\n  value sets:");
        for d in others {
            let _ = writeln!(out, "    {} = {{ {} }}", d.name, d.values.join(", "));
        }
    }
    if !e.ptx_gates.is_empty() || !e.target_gates.is_empty() {
        let _ = writeln!(out, "\n  gates:");
        for g in e.ptx_gates {
            if let Some(v) = g.ptx {
                let _ = writeln!(out, "    PTX {v}: {}", g.feature);
            }
        }
        for run in e.target_gate_runs() {
            let targets: Vec<String> = run
                .iter()
                .map(|g| g.sm.map_or("all targets".to_string(), |t| t.to_string()))
                .collect();
            let _ = writeln!(out, "    {}: {}", targets.join(" or "), run[0].feature);
        }
    }
    let _ = writeln!(out, "\n  reference: {}", e.url());
}

fn render_modifiers(out: &mut String, forms: &[Form]) {
    let mut seen: Vec<(&str, &[&str])> = Vec::new();
    for f in forms {
        for s in f.slots {
            if s.values.len() > 1 || s.placeholder {
                let item = (s.name, s.values);
                if !seen.contains(&item) {
                    seen.push(item);
                }
            }
        }
    }
    if seen.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n  modifiers:");
    let width = seen.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, values) in seen {
        let _ = writeln!(out, "    {name:<width$}  {}", values.join(" "));
    }
}

fn render_operands(out: &mut String, forms: &[Form]) {
    let mut names: Vec<&str> = Vec::new();
    for f in forms {
        for o in f.operands {
            if !names.contains(&o.name) {
                names.push(o.name);
            }
        }
    }
    if !names.is_empty() {
        let _ = writeln!(out, "\n  operands: {}", names.join(", "));
    }
}

fn kind_word(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Instruction => "instruction",
        EntryKind::Directive => "directive",
        EntryKind::SpecialRegister => "register",
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "-"
    }
}

/// Lists every entry, one line each: name, category, PTX version, target, summary. With
/// `coverage`, three more columns say whether ptxvm parses, checks and executes it, the last
/// two as `stages` reports.
pub fn render_list(coverage: Option<&Stages<'_>>) -> String {
    let rows: Vec<(String, &Entry)> = entries().iter().map(|e| (e.name(), e)).collect();
    let name_w = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let cat_w = rows
        .iter()
        .map(|(_, e)| e.category.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (name, e) in &rows {
        let ptx = e.ptx.map_or("-".to_string(), |v| v.to_string());
        let _ = write!(
            out,
            "{name:<name_w$}  {:<cat_w$}  {ptx:<4}  {:<11}",
            e.category,
            e.target.to_string()
        );
        if let Some(stages) = coverage {
            let _ = write!(
                out,
                "  parse:{:<3} check:{:<7} exec:{:<7}",
                yes(e.coverage.parses),
                (stages.check)(e).word(),
                (stages.execute)(e).word()
            );
        }
        let _ = writeln!(out, "  {}", e.summary);
    }
    out
}

/// The Markdown page `docs/isa-coverage.md`: a table of every entry with its gates and how
/// far ptxvm supports it, with totals. The "check" and "execute" columns are what `stages`
/// reports for each entry.
pub fn coverage_markdown(stages: &Stages<'_>) -> String {
    let all = entries();
    let check: Vec<Support> = all.iter().map(|e| (stages.check)(e)).collect();
    let exec: Vec<Support> = all.iter().map(|e| (stages.execute)(e)).collect();
    let tally = |col: &[Support], verb: &str| {
        let full = col.iter().filter(|s| **s == Support::Yes).count();
        let part = col.iter().filter(|s| **s == Support::Partial).count();
        if part == 0 {
            format!("{full} {verb}")
        } else {
            format!("{full} {verb} (and {part} in part)")
        }
    };
    let mut out = String::new();
    out.push_str("# PTX ISA coverage\n\n");
    out.push_str("Generated from the `ptx-isa` table (`ptxvm doc --list --coverage`); do not edit by hand.\n\n");
    let _ = writeln!(
        out,
        "{} sections: {} parse, {}, {}.\n",
        all.len(),
        all.iter().filter(|e| e.coverage.parses).count(),
        tally(&check, "check"),
        tally(&exec, "execute")
    );
    out.push_str(
        "`yes`: supported in full; `partial`: in part; `-`: not at all. For the checker, `yes` \
         means every form is checked operand by operand (count, types, shapes) besides the \
         opcode, its modifiers and the version and target gates, and `partial` means only \
         some of that (see `ptx_check::support`).\n\n",
    );
    out.push_str("| name | kind | section | PTX | target | parse | check | execute |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for (i, e) in all.iter().enumerate() {
        let ptx = e.ptx.map_or("-".to_string(), |v| v.to_string());
        let _ = writeln!(
            out,
            "| [`{}`]({}) | {} | {} | {} | {} | {} | {} | {} |",
            e.name(),
            e.url(),
            kind_word(e.kind),
            e.title.split(": ").nth(1).unwrap_or(e.title),
            ptx,
            e.target,
            yes(e.coverage.parses),
            check[i].word(),
            exec[i].word()
        );
    }
    out
}
