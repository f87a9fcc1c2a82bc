//! Stable codes of the syntax diagnostics (`E00xx`) and their explanations for `ptxvm explain`.

use ptx_diag::Code;

/// A character that starts no PTX token.
pub const INVALID_CHARACTER: Code = Code("E0001");
/// `/*` without `*/`.
pub const UNTERMINATED_COMMENT: Code = Code("E0002");
/// A string without its closing quote.
pub const UNTERMINATED_STRING: Code = Code("E0003");
/// A malformed number literal.
pub const BAD_NUMBER: Code = Code("E0004");
/// An integer literal over 64 bits.
pub const NUMBER_OVERFLOW: Code = Code("E0005");
/// Something other than what the grammar allows here.
pub const EXPECTED: Code = Code("E0010");
/// A `{` never closed.
pub const UNCLOSED_BRACE: Code = Code("E0011");
/// A `}` with no `{`.
pub const UNMATCHED_BRACE: Code = Code("E0012");
/// A directive unknown or out of place.
pub const UNKNOWN_DIRECTIVE: Code = Code("E0013");
/// An instruction outside any function body.
pub const OUTSIDE_FUNCTION: Code = Code("E0014");
/// A malformed variable declaration.
pub const BAD_DECLARATION: Code = Code("E0015");
/// A lone `;`.
pub const EMPTY_STATEMENT: Code = Code("E0016");
/// Nesting beyond the parser's limit.
pub const TOO_DEEP: Code = Code("E0017");
/// Parsing stopped after too many errors.
pub const TOO_MANY_ERRORS: Code = Code("E0018");
/// Input over 4 GiB.
pub const INPUT_TOO_LARGE: Code = Code("E0019");
/// A file that is not UTF-8 text.
pub const NOT_UTF8: Code = Code("E0020");

/// Every syntax code with a title and an explanation paragraph.
pub const EXPLANATIONS: &[(Code, &str, &str)] = &[
    (INVALID_CHARACTER, "invalid character",
     "The input contains a character that begins no PTX token. PTX source is ASCII: identifiers, \
      dotted directives and modifiers, numbers, strings, punctuation and comments. Typographic \
      quotes (“ ”), stray backticks and control characters often come from copying text out of \
      documents. Remove or replace the character."),
    (UNTERMINATED_COMMENT, "unterminated block comment",
     "A `/*` comment runs to the end of the file without its closing `*/`. PTX block comments do \
      not nest. Close the comment."),
    (UNTERMINATED_STRING, "unterminated string",
     "A string literal (as in `.file 1 \"a.cu\"` or `.pragma \"nounroll\";`) has no closing \
      quote on the same line. Strings cannot span lines."),
    (BAD_NUMBER, "invalid number literal",
     "Integer literals are decimal (`42`), hexadecimal (`0x2A`), octal (`052`) or binary \
      (`0b101010`), optionally followed by `U`. Exact floats are `0f` followed by exactly 8 hex \
      digits (single precision) or `0d` followed by exactly 16 (double precision); decimal floats \
      have a point or an exponent (`1.5`, `1e-3`). Letters glued to a number (`12abc`) make the \
      whole token invalid."),
    (NUMBER_OVERFLOW, "integer literal too large",
     "PTX integer constants are 64 bits wide; a literal above 18446744073709551615 cannot be \
      represented."),
    (EXPECTED, "unexpected token",
     "The parser found a token the PTX grammar does not allow at this point, such as a missing \
      `;` after an instruction, a missing operand after a comma, or an unclosed `[`. The message \
      says what was expected. The parser skips to the end of the statement and carries on, so \
      later errors are reported too."),
    (UNCLOSED_BRACE, "unclosed brace",
     "A `{` opening a function body, a nested scope or a section is never closed before the end \
      of the file. The label points at the innermost unclosed `{`."),
    (UNMATCHED_BRACE, "unmatched closing brace",
     "A `}` appears at module level where no `{` is open; usually a function body was closed \
      twice."),
    (UNKNOWN_DIRECTIVE, "unknown or misplaced directive",
     "The dotted word is not a directive allowed here. Module level allows `.version`, `.target`, \
      `.address_size`, `.file`, `.section`, `.pragma`, `.alias`, variable declarations and \
      `.entry`/`.func`; function headers allow the performance-tuning directives; bodies allow \
      declarations, `.loc`, `.pragma` and labelled `.callprototype`, `.calltargets` and \
      `.branchtargets`."),
    (OUTSIDE_FUNCTION, "instruction outside a function",
     "Instructions may only appear inside the body of an `.entry` or `.func`. A missing `{` or an \
      extra `}` before this line can also cause this."),
    (BAD_DECLARATION, "malformed declaration",
     "A variable declaration is `SPACE [.align N] [.vN] TYPE name[<count>][dims] [= init]`, e.g. \
      `.reg .b32 %r<4>;` or `.shared .align 16 .b8 buf[1024];`. The type is missing or a second \
      type or unknown attribute follows it."),
    (EMPTY_STATEMENT, "empty statement",
     "A `;` with nothing before it. PTX statements are directives or instructions; remove the \
      extra `;`."),
    (TOO_DEEP, "nesting too deep",
     "Expressions, vector operands and initializers may nest at most 256 levels. (Scopes `{ }` in \
      bodies have no limit.)"),
    (TOO_MANY_ERRORS, "too many errors",
     "After 1000 errors the parser stops: the input is probably not PTX at all."),
    (INPUT_TOO_LARGE, "input too large",
     "ptxvm reads PTX modules of up to 4 GiB."),
    (NOT_UTF8, "not UTF-8 text",
     "PTX is ASCII text; the file contains bytes that are not valid UTF-8. The diagnostic points \
      at the first such byte; other invalid bytes are reported as invalid characters."),
];
