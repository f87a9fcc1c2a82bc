//! The diagnostics of sanitizer reports ([`LaunchOptions::checks`](crate::LaunchOptions)):
//! one [`Diagnostic`] per [`Hazard`], naming both accesses of a race with their thread, block,
//! PTX line (and CUDA line when the PTX has `.loc`) and the value written.

use crate::codes;
use crate::module::Kernel;
use ptx_diag::{Diagnostic, Span};
use ptx_interp::exec::{Hazard, HazardKind, SanAccess, ThreadPos};

fn coords(v: [u32; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}

impl Kernel<'_> {
    fn inst_of(&self, p: &ThreadPos) -> Option<&ptx_ir::Inst> {
        self.module
            .ir
            .functions
            .get(p.func as usize)?
            .insts
            .get(p.inst as usize)
    }

    fn span_at(&self, p: &ThreadPos) -> Span {
        self.inst_of(p).map(|i| i.span).unwrap_or_default()
    }

    /// `file.ptx:12:5` and, when the PTX has `.loc`, `(CUDA source file.cu:7)`.
    fn place(&self, p: &ThreadPos) -> String {
        let span = self.span_at(p);
        let mut s = self.module.file.location(span.start);
        if let Some(src) = self.inst_of(p).and_then(|i| i.src).filter(|s| s.line > 0) {
            let file = self.module.ir.file(src.file as u64).unwrap_or("?");
            s.push_str(&format!(" (CUDA source {file}:{})", src.line));
        }
        s
    }

    fn text_at(&self, p: &ThreadPos) -> String {
        let span = self.span_at(p);
        self.module
            .file
            .text()
            .get(span.range())
            .unwrap_or("")
            .trim()
            .to_string()
    }

    fn who(p: &ThreadPos) -> String {
        format!("thread {} of block {}", coords(p.thread), coords(p.block))
    }

    /// One side of a report, for a note: what the thread did, where, and the value written.
    fn side(&self, a: &SanAccess, what: &str) -> String {
        let value = a.value.map_or(String::new(), |v| format!(", value {v:#x}"));
        format!(
            "{what}: {} by {} at {}: `{}`{value}",
            if a.atomic {
                "atomic"
            } else if a.write {
                "write"
            } else {
                "read"
            },
            Self::who(&a.pos),
            self.place(&a.pos),
            self.text_at(&a.pos)
        )
    }

    /// The diagnostic of a sanitizer report of this kernel's launch.
    pub fn hazard_diagnostic(&self, h: &Hazard) -> Diagnostic {
        let at = &h.at;
        let var = match &h.var {
            Some((name, off)) => format!("`{name}` + {off} (shared offset {})", h.offset),
            None => format!("shared offset {}", h.offset),
        };
        let bytes = if h.size == 1 {
            "1 byte".to_string()
        } else {
            format!("{} bytes", h.size)
        };
        let mut d = match h.kind {
            k if k.is_race() => {
                let (name, verb) = match k {
                    HazardKind::ReadAfterWrite => ("read after write", "reads"),
                    HazardKind::WriteAfterRead => ("write after read", "writes"),
                    _ => ("write after write", "writes"),
                };
                let other = h.other.as_ref();
                let other_who = other.map_or(String::new(), |o| Self::who(&o.pos));
                let other_did = other.map_or("", |o| if o.write { "wrote" } else { "read" });
                let mut d = Diagnostic::error(
                    codes::DATA_RACE,
                    format!(
                        "data race on shared memory ({name}): {} {verb} {bytes} at {var} that {other_who} {other_did} with no barrier between",
                        Self::who(&at.pos)
                    ),
                    self.span_at(&at.pos),
                )
                .with_label_message(format!("{} {verb} here", Self::who(&at.pos)));
                if let Some(o) = other {
                    let span = self.span_at(&o.pos);
                    if !span.is_empty() && span != self.span_at(&at.pos) {
                        d = d.with_secondary(span, format!("{} {other_did} here", Self::who(&o.pos)));
                    }
                    d = d.with_note(self.side(o, "first access"));
                }
                d.with_note(self.side(at, "second access")).with_help(
                    "order the two accesses with a barrier (`bar.sync 0;`, `__syncthreads()`) or make them atomic",
                )
            }
            HazardKind::Uninitialized => Diagnostic::error(
                codes::UNINITIALIZED,
                format!(
                    "read of uninitialised shared memory: {} reads {bytes} at {var}, which no thread of the block has written",
                    Self::who(&at.pos)
                ),
                self.span_at(&at.pos),
            )
            .with_label_message(format!("{} reads here", Self::who(&at.pos)))
            .with_note(self.side(at, "the read"))
            .with_help("write the bytes before reading them (shared memory starts with garbage on a GPU; ptxvm zeroes it)"),
            HazardKind::BarrierSkipped | HazardKind::BarrierMismatch => {
                let o = h.other.as_ref();
                let msg = if h.kind == HazardKind::BarrierSkipped {
                    format!(
                        "barrier not reached by every thread: {} waits at this barrier, {} jumped over it",
                        Self::who(&at.pos),
                        o.map_or("another thread".into(), |o| Self::who(&o.pos))
                    )
                } else {
                    format!(
                        "barrier reached at different instructions: {} arrived here, {} at another barrier of the same generation",
                        Self::who(&at.pos),
                        o.map_or("another thread".into(), |o| Self::who(&o.pos))
                    )
                };
                let mut d = Diagnostic::error(codes::BARRIER_DIVERGENCE, msg, self.span_at(&at.pos))
                    .with_label_message(format!("{} arrived here", Self::who(&at.pos)));
                if let Some(o) = o {
                    let what = if h.kind == HazardKind::BarrierSkipped {
                        "jumped over the barrier here"
                    } else {
                        "arrived here"
                    };
                    let span = self.span_at(&o.pos);
                    if !span.is_empty() {
                        d = d.with_secondary(span, format!("{} {what}", Self::who(&o.pos)));
                    }
                    d = d.with_note(format!(
                        "{} {what}: {}: `{}`",
                        Self::who(&o.pos),
                        self.place(&o.pos),
                        self.text_at(&o.pos)
                    ));
                }
                d.with_note(format!(
                    "{} arrived at {}: `{}`",
                    Self::who(&at.pos),
                    self.place(&at.pos),
                    self.text_at(&at.pos)
                ))
                .with_help("every thread of the block must reach the same barriers: move `__syncthreads()` out of the condition")
            }
            _ => unreachable!("every kind is handled above"),
        };
        if let Some(c) = self
            .inst_of(&at.pos)
            .and_then(|i| i.src)
            .filter(|s| s.line > 0)
        {
            let file = self.module.ir.file(c.file as u64).unwrap_or("?");
            d = d.with_note(format!("CUDA source: {file}:{}", c.line));
        }
        d
    }
}
