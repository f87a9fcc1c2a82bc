//! PTX syntax: the lexer, the parser, the AST and the printer.
//!
//! Text flows `lexer` → `parser` → [`ast::Module`] → `printer`. The lexer is total (bad bytes become
//! error tokens); the parser is hand-written recursive descent that reports every error with a
//! span and recovers at `;`, `}` and module directives; the printer writes canonical text such that
//! `parse(print(m)) == m`. The AST keeps instructions as written (opcode, modifiers in order,
//! operands): their meaning belongs to `ptx-isa` and `ptx-check`.
//!
//! ```
//! let parsed = ptx_syntax::parse(".version 8.0\n.target sm_80\n.address_size 64\n");
//! assert!(parsed.diagnostics.is_empty());
//! assert_eq!(ptx_syntax::print_module(&parsed.module), ".version 8.0\n.target sm_80\n.address_size 64\n");
//! ```

pub mod ast;
pub mod codes;
pub mod constexpr;
pub mod lexer;
pub mod number;
pub mod parser;
pub mod printer;

pub use parser::{parse, Parsed};
pub use printer::{print_expr, print_instruction, print_module};

use ptx_diag::{Diagnostic, SourceFile, Span};

/// Reads PTX from raw bytes: invalid UTF-8 is reported (at the first bad byte) and replaced, so
/// that the rest of the file is still checked.
pub fn decode_source(name: &str, bytes: &[u8]) -> (SourceFile, Vec<Diagnostic>) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (SourceFile::new(name, s), Vec::new()),
        Err(e) => {
            let at = e.valid_up_to() as u32;
            let text = String::from_utf8_lossy(bytes).into_owned();
            // The span is in the decoded text, where the bad bytes became one U+FFFD (3 bytes):
            // `at + 1` would end inside it.
            let d = Diagnostic::error(
                codes::NOT_UTF8,
                "file is not valid UTF-8 text",
                Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8() as u32),
            )
            .with_label_message("invalid byte here");
            (SourceFile::new(name, text), vec![d])
        }
    }
}

/// Lex + parse + print + re-parse `src` and check the round trip; the body of the fuzz target.
/// Returns `Err` with a description when `parse(print(parse(src))) != parse(src)` or when printing
/// is not idempotent. Never panics for any input.
pub fn roundtrip_check(src: &str) -> Result<(), String> {
    let first = parse(src);
    let text = print_module(&first.module);
    let second = parse(&text);
    if !second.diagnostics.is_empty() {
        return Err(format!(
            "printed text does not parse: {:?}\n--- printed ---\n{text}",
            second
                .diagnostics
                .iter()
                .map(|d| &d.message)
                .collect::<Vec<_>>()
        ));
    }
    if second.module != first.module {
        return Err(format!(
            "AST changed after print/parse\n--- printed ---\n{text}"
        ));
    }
    let again = print_module(&second.module);
    if again != text {
        return Err("printing is not idempotent".into());
    }
    Ok(())
}
