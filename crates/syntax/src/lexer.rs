//! The lexer: PTX text to tokens. It never fails: bytes that form no token become
//! [`TokenKind::Error`] tokens with their span, and the parser reports them.
//!
//! Tokens follow the ISA's chapter "Syntax": identifiers (`[a-zA-Z][a-zA-Z0-9_$]*` or
//! `[_$%][a-zA-Z0-9_$]+`), dotted words for directives and modifiers (including `::` forms such as
//! `.shared::cta` and `.L2::cache_hint`, and digit-led ones such as `.1d`), numbers (decoded later by
//! [`crate::number`], so that `12abc` is one bad number rather than two tokens), strings, comments,
//! `#` preprocessor lines and legacy `@@DWARF` lines.

use logos::{FilterResult, Logos};
use ptx_diag::Span;

/// Why some bytes form no token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LexError {
    /// A byte or character that starts no PTX token.
    #[default]
    InvalidCharacter,
    /// `/*` without a closing `*/`.
    UnterminatedComment,
    /// `"` without a closing quote on the same line.
    UnterminatedString,
}

/// The kinds of token.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f\v]+")]
pub enum TokenKind {
    /// `/* … */` (never returned by [`Lexer::next_token`]; an unterminated one is an error).
    #[token("/*", block_comment)]
    BlockComment,
    /// A `//` comment, never returned by [`Lexer::next_token`]. Comments are tokens rather than
    /// logos `skip` patterns because logos skips by calling itself again, once per skipped
    /// item: 300,000 comment lines overflowed the stack (issue 23). [`Lexer::next_token`] drops
    /// them in a loop; white space stays a skip pattern (one run of it is one match, so skips
    /// never nest more than one deep).
    #[regex(r"//[^\n]*", allow_greedy = true)]
    Trivia,
    /// An identifier: a name, register, label or opcode.
    #[regex(r"[a-zA-Z][a-zA-Z0-9_$]*|[_$%][a-zA-Z0-9_$]+")]
    Ident,
    /// `_`: the sink operand and the anonymous name in prototypes.
    #[token("_")]
    Underscore,
    /// A dotted word: directive, state space, type or modifier (`.reg`, `.shared::cta`, `.1d`).
    #[regex(r"\.[a-zA-Z0-9_$]+(::[a-zA-Z0-9_$]+)*")]
    DotWord,
    /// An integer or hex-float literal, or a malformed number (decoded by the parser).
    #[regex(r"[0-9][0-9a-zA-Z_]*")]
    Number,
    /// A decimal floating-point literal with a point or a signed exponent.
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|[0-9]+[eE][+-][0-9]+")]
    Float,
    /// A string literal.
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    String,
    /// A string literal that reaches the end of its line.
    #[regex(r#""([^"\\\n]|\\[^\n])*"#, unterminated_string, priority = 1)]
    UnterminatedString,
    /// A preprocessor line (`#define …`), kept whole.
    #[regex(r"#[^\n]*", allow_greedy = true)]
    Preprocessor,
    /// A legacy `@@DWARF` debug line, kept whole.
    #[regex(r"@@DWARF[^\n]*", allow_greedy = true)]
    DwarfLine,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `@`
    #[token("@")]
    At,
    /// `!`
    #[token("!")]
    Bang,
    /// `|`
    #[token("|")]
    Pipe,
    /// `||`
    #[token("||")]
    PipePipe,
    /// `&`
    #[token("&")]
    Amp,
    /// `&&`
    #[token("&&")]
    AmpAmp,
    /// `^`
    #[token("^")]
    Caret,
    /// `~`
    #[token("~")]
    Tilde,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
    /// `%` (as an operator; `%name` is an identifier)
    #[token("%")]
    Percent,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `==`
    #[token("==")]
    EqEq,
    /// `!=`
    #[token("!=")]
    Ne,
    /// `<<`
    #[token("<<")]
    Shl,
    /// `>>`
    #[token(">>")]
    Shr,
    /// `=`
    #[token("=")]
    Eq,
    /// `?`
    #[token("?")]
    Question,
    /// Bytes that form no token (see [`LexError`]); never produced by logos itself.
    Error,
    /// End of input; never produced by logos itself.
    Eof,
}

fn block_comment(lex: &mut logos::Lexer<'_, TokenKind>) -> FilterResult<(), LexError> {
    match lex.remainder().find("*/") {
        Some(i) => {
            lex.bump(i + 2);
            FilterResult::Emit(())
        }
        None => {
            lex.bump(lex.remainder().len());
            FilterResult::Error(LexError::UnterminatedComment)
        }
    }
}

fn unterminated_string(_: &mut logos::Lexer<'_, TokenKind>) -> FilterResult<(), LexError> {
    FilterResult::Error(LexError::UnterminatedString)
}

/// One token: its kind, its span and, for [`TokenKind::Error`], why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What kind of token.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
    /// For error tokens: the reason.
    pub error: Option<LexError>,
}

/// A streaming lexer over one source text. Inputs over 4 GiB are cut by the caller.
pub struct Lexer<'src> {
    inner: logos::Lexer<'src, TokenKind>,
    len: u32,
}

impl<'src> Lexer<'src> {
    /// Lexes `src`.
    pub fn new(src: &'src str) -> Lexer<'src> {
        Lexer {
            inner: TokenKind::lexer(src),
            len: src.len() as u32,
        }
    }

    /// The next item after one or more comments (out of line: most tokens follow none).
    #[cold]
    #[inline(never)]
    fn after_comments(&mut self) -> Option<Result<TokenKind, LexError>> {
        loop {
            match self.inner.next() {
                Some(Ok(TokenKind::Trivia | TokenKind::BlockComment)) => {}
                other => return other,
            }
        }
    }

    /// The next token; [`TokenKind::Eof`] forever at the end. White space and comments are
    /// dropped here, iteratively.
    pub fn next_token(&mut self) -> Token {
        let mut next = self.inner.next();
        if let Some(Ok(TokenKind::Trivia | TokenKind::BlockComment)) = next {
            next = self.after_comments();
        }
        match next {
            None => Token {
                kind: TokenKind::Eof,
                span: Span::at(self.len),
                error: None,
            },
            Some(result) => {
                let r = self.inner.span();
                let span = Span::new(r.start as u32, r.end as u32);
                match result {
                    Ok(kind) => Token {
                        kind,
                        span,
                        error: None,
                    },
                    Err(e) => {
                        // logos reports one error per invalid byte; extend an invalid character
                        // to its whole UTF-8 sequence so spans stay on char boundaries.
                        let mut span = span;
                        if e == LexError::InvalidCharacter {
                            let src = self.inner.source();
                            let mut end = span.end as usize;
                            while end < src.len() && !src.is_char_boundary(end) {
                                end += 1;
                            }
                            if end > span.end as usize {
                                self.inner.bump(end - span.end as usize);
                                span.end = end as u32;
                            }
                        }
                        Token {
                            kind: TokenKind::Error,
                            span,
                            error: Some(e),
                        }
                    }
                }
            }
        }
    }
}

/// All tokens of `src` (up to and excluding [`TokenKind::Eof`]); a convenience for tests and tools.
pub fn tokenize(src: &str) -> Vec<Token> {
    let mut lx = Lexer::new(src);
    let mut out = Vec::new();
    loop {
        let t = lx.next_token();
        if t.kind == TokenKind::Eof {
            return out;
        }
        out.push(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    fn kinds(src: &str) -> Vec<(TokenKind, &str)> {
        tokenize(src)
            .into_iter()
            .map(|t| (t.kind, &src[t.span.range()]))
            .collect()
    }

    #[test]
    fn identifiers_and_modifiers() {
        assert_eq!(
            kinds("ld.global.v4.f32 %r1, $L__BB0_2, _x;"),
            vec![
                (Ident, "ld"),
                (DotWord, ".global"),
                (DotWord, ".v4"),
                (DotWord, ".f32"),
                (Ident, "%r1"),
                (Comma, ","),
                (Ident, "$L__BB0_2"),
                (Comma, ","),
                (Ident, "_x"),
                (Semi, ";")
            ]
        );
        assert_eq!(
            kinds("cp.async.bulk.tensor.1d.shared::cluster.L2::cache_hint .L2::64B"),
            vec![
                (Ident, "cp"),
                (DotWord, ".async"),
                (DotWord, ".bulk"),
                (DotWord, ".tensor"),
                (DotWord, ".1d"),
                (DotWord, ".shared::cluster"),
                (DotWord, ".L2::cache_hint"),
                (DotWord, ".L2::64B"),
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("0x1F 017 0b101 42U 0f3F800000 0D3FF0000000000000 1.5 1e-3 1e5 2. 12abc"),
            vec![
                (Number, "0x1F"),
                (Number, "017"),
                (Number, "0b101"),
                (Number, "42U"),
                (Number, "0f3F800000"),
                (Number, "0D3FF0000000000000"),
                (Float, "1.5"),
                (Float, "1e-3"),
                (Number, "1e5"),
                (Float, "2."),
                (Number, "12abc"),
            ]
        );
    }

    /// Issue 23: 300,000 consecutive comments (each kind) and blank runs lex in constant stack,
    /// on a thread with a 256 KiB stack (logos's own `skip` recursed per comment).
    #[test]
    fn many_comments_in_constant_stack() {
        let mut src = std::string::String::from(".version 8.0\n");
        for _ in 0..100_000 {
            src.push_str("// line\n/* block */\n   \t\n");
        }
        src.push_str(".target sm_80");
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let toks = tokenize(&src);
                let module = crate::parse(&src);
                (toks.len(), module.diagnostics.len())
            })
            .expect("spawn")
            .join()
            .expect("no stack overflow");
        assert_eq!(t, (4, 0), "tokens: .version 8.0 .target sm_80");
    }

    #[test]
    fn comments_strings_and_lines() {
        assert_eq!(
            kinds("a /* x\n y */ b // c\n\"s\\\"t\" #define X 1\n@@DWARF .byte 1\nc"),
            vec![
                (Ident, "a"),
                (Ident, "b"),
                (String, "\"s\\\"t\""),
                (Preprocessor, "#define X 1"),
                (DwarfLine, "@@DWARF .byte 1"),
                (Ident, "c")
            ]
        );
    }

    #[test]
    fn errors_are_tokens() {
        let t = tokenize("a /* never closed");
        assert_eq!(t[1].kind, Error);
        assert_eq!(t[1].error, Some(LexError::UnterminatedComment));
        let t = tokenize("\"open\nx");
        assert_eq!(t[0].error, Some(LexError::UnterminatedString));
        assert_eq!(t[1].kind, Ident);
        let t = tokenize("a \u{201c}k\u{201d} ` b");
        assert_eq!(t[1].kind, Error);
        assert_eq!(t[1].span.len(), 3);
        assert!(t.iter().any(|t| t.kind == Ident && t.span.len() == 1));
    }

    #[test]
    fn operators() {
        assert_eq!(
            kinds("<< >> <= >= == != && || ! ~ ? : % %r"),
            vec![
                (Shl, "<<"),
                (Shr, ">>"),
                (Le, "<="),
                (Ge, ">="),
                (EqEq, "=="),
                (Ne, "!="),
                (AmpAmp, "&&"),
                (PipePipe, "||"),
                (Bang, "!"),
                (Tilde, "~"),
                (Question, "?"),
                (Colon, ":"),
                (Percent, "%"),
                (Ident, "%r")
            ]
        );
    }
}
