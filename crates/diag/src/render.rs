//! The one place where diagnostics become text (via `codespan-reporting`).

use crate::{Diagnostic, Severity, SourceFile};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use std::borrow::Cow;
use std::io::IsTerminal;

/// Whether rendered diagnostics use colour.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ColorMode {
    /// Colour when standard error is a terminal.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Longest source line shown in a snippet; longer lines (minified PTX, fuzz input) are cut so that
/// rendering stays linear in the number of diagnostics.
const MAX_SNIPPET_LINE: usize = 400;

fn to_codespan(diag: &Diagnostic) -> cs::Diagnostic<()> {
    let severity = match diag.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    let labels = diag
        .labels
        .iter()
        .map(|l| {
            let style = if l.primary {
                cs::LabelStyle::Primary
            } else {
                cs::LabelStyle::Secondary
            };
            cs::Label::new(style, (), l.span.range()).with_message(l.message.clone())
        })
        .collect();
    let mut notes = diag.notes.clone();
    if let Some(help) = &diag.help {
        notes.push(format!("help: {help}"));
    }
    cs::Diagnostic::new(severity)
        .with_code(diag.code.0)
        .with_message(diag.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

/// A copy of the file whose very long lines are shortened, and diagnostics re-pointed into it.
/// Only used when the file has such lines; the common case borrows nothing extra.
fn clip_long_lines(file: &SourceFile, diags: &[Diagnostic]) -> Option<(String, Vec<Diagnostic>)> {
    let text = file.text();
    let starts = file.line_starts();
    let long = starts.iter().enumerate().any(|(i, &s)| {
        let end = starts.get(i + 1).map_or(text.len(), |&e| e as usize);
        end - s as usize > MAX_SNIPPET_LINE
    });
    if !long {
        return None;
    }
    // Map each offset to the clipped text: keep a window of each line around the labelled offsets.
    // Simple and linear: keep the first MAX_SNIPPET_LINE bytes of every line and clamp offsets.
    let mut out = String::with_capacity(text.len().min(1 << 20));
    let mut new_starts = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(text.len(), |&e| e as usize);
        let line = &text[s as usize..end];
        new_starts.push(out.len() as u32);
        if line.len() > MAX_SNIPPET_LINE {
            let mut cut = MAX_SNIPPET_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&line[..cut]);
            out.push_str(" …");
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(line);
        }
    }
    let map = |off: u32| -> u32 {
        let line = starts.partition_point(|&s| s <= off) - 1;
        let col = (off - starts[line]).min(MAX_SNIPPET_LINE as u32);
        new_starts[line] + col
    };
    let diags = diags
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if let Some(span) = d.primary_span() {
                if map(span.start) != span.start {
                    d.notes.insert(
                        0,
                        format!("at {} (long line shortened)", file.location(span.start)),
                    );
                }
            }
            for l in &mut d.labels {
                l.span.start = map(l.span.start);
                l.span.end = map(l.span.end).max(l.span.start);
            }
            d
        })
        .collect();
    Some((out, diags))
}

/// The most errors rendered for one file, the parser's own limit (it stops after 1000 errors):
/// the diagnostics up to the 1000th error are shown, then one line counting the rest.
pub const MAX_SHOWN_ERRORS: usize = 1000;

/// The code of the parser's and checker's own "too many errors; stopping" diagnostic (defined
/// in `ptx_syntax::codes`): it is always shown and is not counted.
const STOPPED: &str = "E0018";

/// The diagnostics shown (those up to the [`MAX_SHOWN_ERRORS`]th error) and the line counting
/// the others, if any.
fn cap(diags: &[Diagnostic]) -> (Cow<'_, [Diagnostic]>, Option<cs::Diagnostic<()>>) {
    let mut errors = 0;
    let Some(cut) = diags.iter().position(|d| {
        if d.severity == Severity::Error && d.code.0 != STOPPED {
            errors += 1;
        }
        errors > MAX_SHOWN_ERRORS
    }) else {
        return (Cow::Borrowed(diags), None);
    };
    let (shown, rest) = diags.split_at(cut);
    let mut shown = shown.to_vec();
    shown.extend(rest.iter().filter(|d| d.code.0 == STOPPED).cloned());
    let count = |sev: Severity| {
        rest.iter()
            .filter(|d| d.severity == sev && d.code.0 != STOPPED)
            .count()
    };
    let plural = |n: usize, what: &str| format!("{n} more {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![plural(count(Severity::Error), "error")];
    for (sev, what) in [(Severity::Warning, "warning"), (Severity::Note, "note")] {
        let n = count(sev);
        if n > 0 {
            parts.push(plural(n, what));
        }
    }
    let line = cs::Diagnostic::note().with_message(format!(
        "{} not shown (ptxvm shows the first {MAX_SHOWN_ERRORS} errors of a file)",
        parts.join(" and ")
    ));
    (Cow::Owned(shown), Some(line))
}

fn emit_all(
    file: &SourceFile,
    diags: &[Diagnostic],
    mut emit: impl FnMut(&SimpleFile<&str, &str>, &cs::Diagnostic<()>),
) {
    let (diags, more) = cap(diags);
    let diags = &*diags;
    let clipped = clip_long_lines(file, diags);
    let (text, diags): (&str, &[Diagnostic]) = match &clipped {
        Some((t, d)) => (t, d),
        None => (file.text(), diags),
    };
    let files = SimpleFile::new(file.name(), text);
    for d in diags {
        emit(&files, &to_codespan(d));
    }
    if let Some(more) = more {
        emit(&files, &more);
    }
}

/// Renders diagnostics as plain text (no colour), as the file-driven tests compare them.
pub fn render_plain(file: &SourceFile, diags: &[Diagnostic]) -> String {
    let config = term::Config::default();
    let mut out = String::new();
    emit_all(file, diags, |files, d| {
        // Rendering into a String only fails when a span is outside the file, which the
        // clamping above rules out; fall back to a one-line form rather than losing the message.
        if term::emit_to_string(&mut out, &config, files, d).is_err() {
            out.push_str(&format!("error: {}\n", d.message));
        }
    });
    out
}

/// Renders diagnostics to standard error, coloured per `mode`.
pub fn render_to_stderr(file: &SourceFile, diags: &[Diagnostic], mode: ColorMode) {
    let choice = match mode {
        ColorMode::Always => termcolor::ColorChoice::Always,
        ColorMode::Never => termcolor::ColorChoice::Never,
        ColorMode::Auto if std::io::stderr().is_terminal() => termcolor::ColorChoice::Auto,
        ColorMode::Auto => termcolor::ColorChoice::Never,
    };
    // buffered: the renderer writes many small pieces per diagnostic
    let mut stream = termcolor::BufferedStandardStream::stderr(choice);
    let config = term::Config::default();
    emit_all(file, diags, |files, d| {
        let _ = term::emit_to_write_style(&mut stream, &config, files, d);
    });
    let _ = std::io::Write::flush(&mut stream);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;

    #[test]
    fn plain_rendering_names_file_line_column() {
        let f = SourceFile::new(
            "kernel.ptx",
            "ld.global.f32 %f1, [%rd1];\nadd.u32 %r1, %f1, 1;\n",
        );
        let d = Diagnostic::error(
            crate::codes::check::OPERAND_TYPE,
            "operand type mismatch",
            Span::new(40, 43),
        )
        .with_label_message("this register is .f32")
        .with_help("use a .u32 register");
        let s = render_plain(&f, &[d]);
        assert!(s.contains("error[E0204]: operand type mismatch"), "{s}");
        assert!(s.contains("kernel.ptx:2:14"), "{s}");
        assert!(s.contains("^^^ this register is .f32"), "{s}");
        assert!(s.contains("help: use a .u32 register"), "{s}");
    }

    #[test]
    fn long_lines_are_clipped() {
        let text = format!("{}\n", "x".repeat(100_000));
        let f = SourceFile::new("big.ptx", text);
        let d = Diagnostic::error(
            crate::codes::syntax::INVALID_CHARACTER,
            "bad",
            Span::new(50_000, 50_001),
        );
        let s = render_plain(&f, &[d]);
        assert!(s.len() < 2000, "{}", s.len());
        assert!(s.contains("at big.ptx:1:50001"), "{s}");
    }
}
