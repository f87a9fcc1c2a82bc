//! Diagnostics for ptxvm: spans, source files and the messages every stage reports.
//!
//! Every stage of ptxvm (lexer, parser, checker, lowering, the interpreter's traps) reports problems
//! as plain data: a [`Diagnostic`] with a stable [`Code`], a [`Severity`], a message, labelled
//! [`Span`]s into one source file, notes and an optional help line. Nothing here knows about PTX.
//! Diagnostics stay data until the very end; the [`render`] module is the one place that turns
//! them into text (through `codespan-reporting`), either plain (tests, pipes) or coloured
//! (terminals). Positions are byte offsets; [`SourceFile`] maps them to `file:line:column`.

pub mod codes;
mod render;
mod source;

pub use render::{render_plain, render_to_stderr, ColorMode, MAX_SHOWN_ERRORS};
pub use source::{LineCol, SourceFile};

use std::fmt;

/// A half-open byte range `start..end` in one source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    #[inline]
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }
    /// An empty span at `offset` (used for "expected X here" at the end of input).
    #[inline]
    pub const fn at(offset: u32) -> Span {
        Span {
            start: offset,
            end: offset,
        }
    }
    /// The smallest span covering both `self` and `other`.
    #[inline]
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
    /// Length in bytes.
    #[inline]
    pub fn len(self) -> u32 {
        self.end - self.start
    }
    /// Whether the span covers no byte.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }
    /// The range as `usize`s, for slicing the source text.
    #[inline]
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A stable diagnostic code such as `E0101`. Codes never change meaning once published;
/// `ptxvm explain CODE` prints the paragraph registered for each.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Code(pub &'static str);

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Severity {
    /// Supplementary information.
    Note,
    /// Accepted, but probably not what was meant (e.g. a deprecated form).
    Warning,
    /// The input is rejected.
    Error,
}

/// One labelled span of a diagnostic.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Label {
    /// The source range the label points at.
    pub span: Span,
    /// Text shown under the caret line (may be empty).
    pub message: String,
    /// The primary label is the cause (`^^^`); secondary ones give context (`---`).
    pub primary: bool,
}

/// A problem report: data until rendered.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// Stable code, e.g. `E0101`.
    pub code: Code,
    /// Error, warning or note.
    pub severity: Severity,
    /// The one-line headline.
    pub message: String,
    /// Labelled spans; the first primary label is the location reported as `file:line:col`.
    pub labels: Vec<Label>,
    /// Extra explanation lines.
    pub notes: Vec<String>,
    /// What would be legal instead.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A new error with a headline and a primary label at `span`.
    pub fn error(code: Code, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, message, span)
    }
    /// A new warning with a headline and a primary label at `span`.
    pub fn warning(code: Code, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, message, span)
    }
    fn new(severity: Severity, code: Code, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            labels: vec![Label {
                span,
                message: String::new(),
                primary: true,
            }],
            notes: Vec::new(),
            help: None,
        }
    }
    /// Sets the text under the primary label.
    pub fn with_label_message(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = message.into();
        }
        self
    }
    /// Adds a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }
    /// Adds a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    /// Sets the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
    /// The primary span (the first primary label), if any.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }
    /// Whether this diagnostic rejects the input.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Whether any of `diags` is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_basics() {
        let a = Span::new(3, 7);
        assert_eq!(a.len(), 4);
        assert_eq!(a.to(Span::new(10, 12)), Span::new(3, 12));
        assert!(Span::at(5).is_empty());
        assert_eq!(std::mem::size_of::<Span>(), 8);
    }

    #[test]
    fn builder() {
        let d = Diagnostic::error(
            crate::codes::syntax::INVALID_CHARACTER,
            "bad",
            Span::new(1, 2),
        )
        .with_label_message("here")
        .with_help("do this");
        assert_eq!(d.primary_span(), Some(Span::new(1, 2)));
        assert_eq!(d.labels[0].message, "here");
        assert!(has_errors(&[d]));
    }
}
