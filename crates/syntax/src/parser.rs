//! The parser: tokens to [`Module`], by hand-written recursive descent.
//!
//! The parser reports every error it finds in one run. After an error it skips to a
//! synchronisation point: the end of the statement (`;`), the `}` closing the current body, or
//! (at module level) the next module directive. Lexer errors are reported once, and further errors
//! in the same statement are suppressed, so one bad byte gives one message.
//!
//! Nothing recurses on the depth of `{ }` scopes (bodies are flat); parentheses, vector operands
//! and initializers are limited to [`MAX_NESTING`] levels, and the expression tree as a whole
//! (operator chains such as a flat `1+1+…+1`, which build a tree as deep as the chain, included)
//! to [`MAX_EXPR_DEPTH`] levels, so later passes that recurse on it stay within the stack. Work is
//! linear in the input size.

use crate::ast::*;
use crate::codes;
use crate::lexer::{LexError, Lexer, Token, TokenKind as T};
use crate::number::{decode_number, NumberError};
use ptx_diag::{Diagnostic, Span};

/// Deepest nesting of parentheses, vector braces and initializer braces accepted.
pub const MAX_NESTING: u32 = 256;
/// Deepest expression tree accepted: brackets (each also counted against [`MAX_NESTING`]) plus
/// the operators of left-leaning chains (`1+1+…`, `a[0][0]…`). ptxas takes a flat sum of 100 000
/// terms; this bound keeps the recursive walks of later passes (drop, print, evaluate, check)
/// well inside a 2 MiB thread stack in a debug build while admitting long flat sums.
pub const MAX_EXPR_DEPTH: u32 = 1024;
/// Number of errors after which parsing stops.
pub const MAX_ERRORS: usize = 1000;

/// The result of parsing: a (possibly partial) module and the diagnostics.
#[derive(Debug)]
pub struct Parsed {
    /// The module; statements with errors are left out.
    pub module: Module,
    /// Every problem found, in source order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// Whether any error was reported.
    pub fn has_errors(&self) -> bool {
        ptx_diag::has_errors(&self.diagnostics)
    }
}

/// Parses a whole module. Never panics; inputs over 4 GiB are rejected with a diagnostic.
pub fn parse(src: &str) -> Parsed {
    if src.len() > u32::MAX as usize - 1 {
        return Parsed {
            module: Module::default(),
            diagnostics: vec![Diagnostic::error(
                codes::INPUT_TOO_LARGE,
                "input is larger than 4 GiB",
                Span::at(0),
            )],
        };
    }
    let mut p = Parser::new(src);
    let module = p.module();
    Parsed {
        module,
        diagnostics: p.diags,
    }
}

/// Stop parsing: too many errors.
struct Abort;

type PResult<T> = Result<T, Abort>;

/// An error in the current statement, already reported (or suppressed): the caller recovers.
enum Fail {
    Recover,
    Abort,
}

impl From<Abort> for Fail {
    fn from(_: Abort) -> Fail {
        Fail::Abort
    }
}

type SResult<T> = Result<T, Fail>;

struct Parser<'s> {
    src: &'s str,
    lexer: Lexer<'s>,
    tok: Token,
    peeked: Option<Token>,
    prev_end: u32,
    diags: Vec<Diagnostic>,
    errors: usize,
    /// A lexer error was reported in the current statement: suppress follow-on errors.
    suppress: bool,
    /// Unclosed `{` of vector operands/initializers in the current statement.
    stmt_braces: u32,
    nesting: u32,
    /// Depth of the expression tree being built: [`Parser::nesting`] plus open operator chains.
    depth: u32,
}

fn describe(kind: T) -> &'static str {
    match kind {
        T::Ident => "an identifier",
        T::DotWord => "a directive or modifier",
        T::Number | T::Float => "a number",
        T::String | T::UnterminatedString => "a string",
        T::Underscore => "`_`",
        T::Preprocessor => "a preprocessor line",
        T::DwarfLine => "an @@DWARF line",
        T::LBrace => "`{`",
        T::RBrace => "`}`",
        T::LParen => "`(`",
        T::RParen => "`)`",
        T::LBracket => "`[`",
        T::RBracket => "`]`",
        T::Comma => "`,`",
        T::Semi => "`;`",
        T::Colon => "`:`",
        T::At => "`@`",
        T::Bang => "`!`",
        T::Pipe => "`|`",
        T::PipePipe => "`||`",
        T::Amp => "`&`",
        T::AmpAmp => "`&&`",
        T::Caret => "`^`",
        T::Tilde => "`~`",
        T::Plus => "`+`",
        T::Minus => "`-`",
        T::Star => "`*`",
        T::Slash => "`/`",
        T::Percent => "`%`",
        T::Lt => "`<`",
        T::Gt => "`>`",
        T::Le => "`<=`",
        T::Ge => "`>=`",
        T::EqEq => "`==`",
        T::Ne => "`!=`",
        T::Shl => "`<<`",
        T::Shr => "`>>`",
        T::Eq => "`=`",
        T::Question => "`?`",
        T::BlockComment | T::Trivia | T::Error => "invalid input",
        T::Eof => "end of file",
    }
}

/// `.5`, `.125`, `.5e3`: a float literal without integer digits (lexed as a dotted word).
fn is_dot_float(w: &str) -> bool {
    let digits = &w[1..];
    let (mantissa, exp) = match digits.find(['e', 'E']) {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits, None),
    };
    !mantissa.is_empty()
        && mantissa.bytes().all(|c| c.is_ascii_digit())
        && exp.is_none_or(|x| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit()))
}

/// Words that begin a variable declaration (state spaces, optionally with a `::` sub-space).
fn is_state_space(w: &str) -> bool {
    let base = w.split("::").next().unwrap_or(w);
    matches!(
        base,
        ".reg" | ".sreg" | ".const" | ".global" | ".local" | ".param" | ".shared" | ".tex"
    )
}

fn is_function_attr(w: &str) -> bool {
    matches!(
        w,
        ".noreturn"
            | ".maxnreg"
            | ".maxntid"
            | ".reqntid"
            | ".minnctapersm"
            | ".maxnctapersm"
            | ".reqnctapercluster"
            | ".explicitcluster"
            | ".maxclusterrank"
            | ".blocksareclusters"
            | ".abi_preserve"
            | ".abi_preserve_control"
    )
}

/// Words at which module-level recovery resumes.
fn starts_module_directive(w: &str) -> bool {
    matches!(
        w,
        ".version"
            | ".target"
            | ".address_size"
            | ".file"
            | ".section"
            | ".entry"
            | ".func"
            | ".function"
            | ".visible"
            | ".extern"
            | ".weak"
            | ".common"
            | ".alias"
            | ".global"
            | ".const"
    )
}

impl<'s> Parser<'s> {
    fn new(src: &'s str) -> Parser<'s> {
        let mut p = Parser {
            src,
            lexer: Lexer::new(src),
            tok: Token {
                kind: T::Eof,
                span: Span::at(0),
                error: None,
            },
            peeked: None,
            prev_end: 0,
            diags: Vec::new(),
            errors: 0,
            suppress: false,
            stmt_braces: 0,
            nesting: 0,
            depth: 0,
        };
        // Errors at the very start are reported by fetch().
        p.tok = p.fetch().unwrap_or(Token {
            kind: T::Eof,
            span: Span::at(0),
            error: None,
        });
        p
    }

    // ---- tokens -------------------------------------------------------------------------

    /// Next non-error token from the lexer; lexer errors are reported here, once.
    fn fetch(&mut self) -> PResult<Token> {
        loop {
            let t = self.lexer.next_token();
            if t.kind != T::Error {
                return Ok(t);
            }
            let (code, msg, label) = match t.error.unwrap_or_default() {
                LexError::InvalidCharacter => {
                    let c = self.src[t.span.range()].chars().next().unwrap_or('?');
                    (
                        codes::INVALID_CHARACTER,
                        format!("invalid character {c:?} (U+{:04X})", c as u32),
                        "not part of any PTX token",
                    )
                }
                LexError::UnterminatedComment => (
                    codes::UNTERMINATED_COMMENT,
                    "unterminated block comment".to_string(),
                    "this `/*` has no closing `*/`",
                ),
                LexError::UnterminatedString => (
                    codes::UNTERMINATED_STRING,
                    "unterminated string literal".to_string(),
                    "this string has no closing quote on its line",
                ),
            };
            let span = if t.error == Some(LexError::UnterminatedComment) {
                Span::new(t.span.start, t.span.start + 2)
            } else {
                t.span
            };
            self.report_always(Diagnostic::error(code, msg, span).with_label_message(label))?;
            self.suppress = true;
        }
    }

    fn bump(&mut self) -> PResult<Token> {
        let t = self.tok;
        self.prev_end = t.span.end;
        self.tok = match self.peeked.take() {
            Some(p) => p,
            None => self.fetch()?,
        };
        Ok(t)
    }

    fn peek(&mut self) -> PResult<Token> {
        if self.peeked.is_none() {
            self.peeked = Some(self.fetch()?);
        }
        Ok(self.peeked.unwrap_or(self.tok))
    }

    fn text(&self, t: Token) -> &'s str {
        &self.src[t.span.range()]
    }

    fn at(&self, k: T) -> bool {
        self.tok.kind == k
    }

    fn at_word(&self, w: &str) -> bool {
        self.tok.kind == T::DotWord && self.text(self.tok) == w
    }

    fn eat(&mut self, k: T) -> PResult<bool> {
        if self.at(k) {
            self.bump()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn word(&mut self) -> PResult<Word> {
        let t = self.bump()?;
        Ok(Word {
            text: self.text(t).into(),
            loc: Loc(t.span),
        })
    }

    /// Adjacent: the current token starts where the previous one ended (no space between).
    fn adjacent(&self) -> bool {
        self.tok.span.start == self.prev_end
    }

    // ---- diagnostics --------------------------------------------------------------------

    fn report_always(&mut self, d: Diagnostic) -> PResult<()> {
        self.errors += 1;
        if self.errors > MAX_ERRORS {
            let span = d.primary_span().unwrap_or_default();
            self.diags.push(
                Diagnostic::error(
                    codes::TOO_MANY_ERRORS,
                    format!("too many errors; stopping after {MAX_ERRORS}"),
                    span,
                )
                .with_label_message("parsing stopped here"),
            );
            return Err(Abort);
        }
        self.diags.push(d);
        Ok(())
    }

    /// Reports `d` unless a lexer error in this statement already explains it; then recover.
    fn fail<X>(&mut self, d: Diagnostic) -> SResult<X> {
        if !self.suppress {
            self.report_always(d)?;
        }
        Err(Fail::Recover)
    }

    fn expected<X>(&mut self, what: &str) -> SResult<X> {
        let t = self.tok;
        let found = describe(t.kind);
        let span = if t.kind == T::Eof {
            Span::at(self.prev_end)
        } else {
            t.span
        };
        let mut d = Diagnostic::error(
            codes::EXPECTED,
            format!("expected {what}, found {found}"),
            span,
        )
        .with_label_message(format!("expected {what}"));
        if what.contains("`;`") && t.kind != T::Eof && t.span.start > self.prev_end {
            d = d.with_secondary(Span::at(self.prev_end), "the statement may end here");
        }
        self.fail(d)
    }

    fn expect(&mut self, k: T, what: &str) -> SResult<Token> {
        if self.at(k) {
            Ok(self.bump()?)
        } else {
            self.expected(what)
        }
    }

    fn expect_ident(&mut self, what: &str) -> SResult<Word> {
        if self.at(T::Ident) {
            Ok(self.word()?)
        } else {
            self.expected(what)
        }
    }

    fn expect_u64(&mut self, what: &str) -> SResult<u64> {
        if !self.at(T::Number) {
            return self.expected(what);
        }
        let t = self.bump()?;
        match decode_number(self.text(t)) {
            Ok(ExprKind::Int { value, .. }) => Ok(value),
            Ok(_) => self.fail(
                Diagnostic::error(codes::EXPECTED, format!("expected {what}"), t.span)
                    .with_label_message("an integer is needed here"),
            ),
            Err(e) => self.number_error(t.span, e),
        }
    }

    fn number_error<X>(&mut self, span: Span, e: NumberError) -> SResult<X> {
        let d = match e {
            NumberError::Malformed(why) => {
                Diagnostic::error(codes::BAD_NUMBER, "invalid number literal", span)
                    .with_label_message(why)
            }
            NumberError::Overflow => Diagnostic::error(
                codes::NUMBER_OVERFLOW,
                "integer literal does not fit in 64 bits",
                span,
            )
            .with_label_message("larger than 18446744073709551615"),
        };
        self.fail(d)
    }

    fn nest(&mut self, span: Span) -> SResult<()> {
        self.nesting += 1;
        self.deepen(span)?;
        if self.nesting > MAX_NESTING {
            return self.fail(
                Diagnostic::error(
                    codes::TOO_DEEP,
                    format!("nesting deeper than {MAX_NESTING} levels"),
                    span,
                )
                .with_label_message("too deeply nested"),
            );
        }
        Ok(())
    }

    fn unnest(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
        self.depth = self.depth.saturating_sub(1);
    }

    /// One more level of expression tree (a chained operator, or a bracket through `nest`).
    fn deepen(&mut self, span: Span) -> SResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return self.fail(
                Diagnostic::error(
                    codes::TOO_DEEP,
                    format!("expression deeper than {MAX_EXPR_DEPTH} levels"),
                    span,
                )
                .with_label_message("too deeply nested")
                .with_help("split the expression, or name a part of it"),
            );
        }
        Ok(())
    }

    // ---- recovery -----------------------------------------------------------------------

    fn begin_statement(&mut self) {
        self.suppress = false;
        self.stmt_braces = 0;
        self.nesting = 0;
        self.depth = 0;
    }

    /// Skips to the end of the current statement: past the next `;` at brace depth 0, or up to
    /// (not past) a `}` that closes an enclosing body, or to a module directive when `module`.
    fn recover(&mut self, module: bool) -> PResult<()> {
        let mut depth = self.stmt_braces;
        loop {
            match self.tok.kind {
                T::Eof => break,
                // The statement's `;`, also when it sits inside a vector operand left unclosed.
                T::Semi if depth <= self.stmt_braces => {
                    self.bump()?;
                    break;
                }
                T::LBrace => {
                    depth += 1;
                    self.bump()?;
                }
                T::RBrace => {
                    if depth == 0 {
                        if module {
                            self.bump()?;
                            continue;
                        }
                        break;
                    }
                    depth -= 1;
                    self.bump()?;
                }
                // A directive glued to the previous token (`ld.global`) is a modifier, not the
                // start of a new statement.
                T::DotWord
                    if module
                        && depth == 0
                        && !self.adjacent()
                        && starts_module_directive(self.text(self.tok)) =>
                {
                    break
                }
                _ => {
                    self.bump()?;
                }
            }
        }
        self.suppress = false;
        self.stmt_braces = 0;
        self.nesting = 0;
        self.depth = 0;
        Ok(())
    }

    // ---- module -------------------------------------------------------------------------

    fn module(&mut self) -> Module {
        let mut m = Module::default();
        loop {
            self.begin_statement();
            if self.at(T::Eof) {
                break;
            }
            match self.module_item(&mut m) {
                Ok(()) => {}
                Err(Fail::Recover) => {
                    if self.recover(true).is_err() {
                        break;
                    }
                }
                Err(Fail::Abort) => break,
            }
        }
        m
    }

    fn module_item(&mut self, m: &mut Module) -> SResult<()> {
        let t = self.tok;
        match t.kind {
            T::Preprocessor => m.directives.push(Directive::Preprocessor(self.word()?)),
            T::DwarfLine => m.directives.push(Directive::Dwarf(self.word()?)),
            T::DotWord => {
                let d = self.module_directive()?;
                m.directives.push(d);
            }
            T::Ident | T::At => {
                return self.fail(
                    Diagnostic::error(
                        codes::OUTSIDE_FUNCTION,
                        "instruction outside of a function body",
                        t.span,
                    )
                    .with_label_message(
                        "instructions may only appear inside `.entry` or `.func` bodies",
                    ),
                )
            }
            T::RBrace => {
                self.bump()?;
                return self.fail(
                    Diagnostic::error(codes::UNMATCHED_BRACE, "unmatched `}`", t.span)
                        .with_label_message("no `{` is open here"),
                );
            }
            _ => return self.expected("a directive such as `.version`, `.entry` or `.global`"),
        }
        Ok(())
    }

    fn module_directive(&mut self) -> SResult<Directive> {
        let t = self.tok;
        let w = self.text(t);
        match w {
            ".version" => {
                self.bump()?;
                let v = self.tok;
                let (major, minor) = match v.kind {
                    T::Float => {
                        let s = self.text(v);
                        let mut it = s.splitn(2, '.');
                        let ma = it.next().and_then(|x| x.parse().ok());
                        let mi = it.next().and_then(|x| x.parse().ok());
                        match (ma, mi) {
                            (Some(a), Some(b)) => (a, b),
                            _ => return self.expected("a version `MAJOR.MINOR`"),
                        }
                    }
                    _ => return self.expected("a version `MAJOR.MINOR`"),
                };
                self.bump()?;
                Ok(Directive::Version {
                    major,
                    minor,
                    loc: Loc(t.span.to(v.span)),
                })
            }
            ".target" => {
                self.bump()?;
                let mut targets = vec![self.expect_ident("a target such as `sm_80`")?];
                while self.eat(T::Comma)? {
                    targets.push(self.expect_ident("a target such as `sm_80`")?);
                }
                Ok(Directive::Target {
                    targets,
                    loc: Loc(t.span.to(Span::at(self.prev_end))),
                })
            }
            ".address_size" => {
                self.bump()?;
                let bits = self.expect_u64("an address size (32 or 64)")? as u32;
                Ok(Directive::AddressSize {
                    bits,
                    loc: Loc(t.span.to(Span::at(self.prev_end))),
                })
            }
            ".file" => Ok(Directive::File(self.file_directive()?)),
            ".loc" => Ok(Directive::DebugLoc(self.loc_directive()?)),
            ".section" => Ok(Directive::Section(self.section()?)),
            ".pragma" => Ok(Directive::Pragma(self.pragma()?)),
            ".alias" => {
                self.bump()?;
                let alias = self.expect_ident("the alias name")?;
                self.expect(T::Comma, "`,`")?;
                let aliasee = self.expect_ident("the aliased function's name")?;
                self.expect(T::Semi, "`;`")?;
                Ok(Directive::Alias {
                    alias,
                    aliasee,
                    loc: Loc(t.span.to(Span::at(self.prev_end))),
                })
            }
            _ => {
                let linkage = Linkage::from_word(w);
                if linkage.is_some() {
                    self.bump()?;
                }
                if self.at_word(".entry") || self.at_word(".func") {
                    Ok(Directive::Function(Box::new(
                        self.function(linkage, t.span)?,
                    )))
                } else if self.at(T::DotWord) && is_state_space(self.text(self.tok)) {
                    let v = self.var_decl(linkage, t.span, false)?;
                    self.expect(T::Semi, "`;` after the declaration")?;
                    Ok(Directive::Variable(v))
                } else if linkage.is_some() {
                    self.expected("`.entry`, `.func` or a state space after the linkage directive")
                } else {
                    let d = Diagnostic::error(
                        codes::UNKNOWN_DIRECTIVE,
                        format!("unknown or misplaced directive `{w}`"),
                        t.span,
                    )
                    .with_label_message("not a module-level directive")
                    .with_help(
                        "module level allows .version, .target, .address_size, .file, .section, \
                         .pragma, .alias, variable declarations and .entry/.func",
                    );
                    self.bump()?;
                    self.fail(d)
                }
            }
        }
    }

    fn file_directive(&mut self) -> SResult<FileDirective> {
        let start = self.bump()?.span;
        let index = self.expect_u64("a file number")?;
        let s = self.expect(T::String, "a file name string")?;
        let path = self.str_lit(s);
        let mut extra = Vec::new();
        while self.eat(T::Comma)? {
            extra.push(self.expect_u64("a timestamp or size")?);
        }
        Ok(FileDirective {
            index,
            path,
            extra,
            loc: Loc(start.to(Span::at(self.prev_end))),
        })
    }

    fn str_lit(&self, t: Token) -> StrLit {
        let s = self.text(t);
        StrLit {
            text: s[1..s.len() - 1].into(),
            loc: Loc(t.span),
        }
    }

    fn loc_directive(&mut self) -> SResult<LocDirective> {
        let start = self.bump()?.span;
        let file = self.expect_u64("a file number")?;
        let line = self.expect_u64("a line number")?;
        let column = self.expect_u64("a column number")?;
        let mut function_name = None;
        let mut inlined_at = None;
        while self.eat(T::Comma)? {
            let key = self.expect_ident("`function_name` or `inlined_at`")?;
            match key.text.as_str() {
                "function_name" => function_name = Some(self.expr_with(true)?),
                "inlined_at" => {
                    let f = self.expect_u64("a file number")?;
                    let l = self.expect_u64("a line number")?;
                    let c = self.expect_u64("a column number")?;
                    inlined_at = Some([f, l, c]);
                }
                _ => {
                    return self.fail(
                        Diagnostic::error(codes::EXPECTED, "unknown `.loc` attribute", key.loc.0)
                            .with_label_message("expected `function_name` or `inlined_at`"),
                    )
                }
            }
        }
        Ok(LocDirective {
            file,
            line,
            column,
            function_name,
            inlined_at,
            loc: Loc(start.to(Span::at(self.prev_end))),
        })
    }

    fn pragma(&mut self) -> SResult<Pragma> {
        let start = self.bump()?.span;
        let mut strings = Vec::new();
        loop {
            let s = self.expect(T::String, "a string")?;
            strings.push(self.str_lit(s));
            if !self.eat(T::Comma)? {
                break;
            }
        }
        self.expect(T::Semi, "`;` after `.pragma`")?;
        Ok(Pragma {
            strings,
            loc: Loc(start.to(Span::at(self.prev_end))),
        })
    }

    fn section(&mut self) -> SResult<Section> {
        let start = self.bump()?.span;
        if !self.at(T::DotWord) && !self.at(T::Ident) {
            return self.expected("a section name such as `.debug_info`");
        }
        let name = self.word()?;
        let open = self.expect(T::LBrace, "`{` opening the section")?;
        let mut items = Vec::new();
        loop {
            let kind = self.tok.kind;
            let label = kind == T::Ident && self.peek()?.kind == T::Colon;
            match kind {
                T::RBrace => {
                    self.bump()?;
                    break;
                }
                T::Ident if label => {
                    let l = self.word()?;
                    self.bump()?;
                    items.push(SectionItem::Label(l));
                }
                T::DotWord => {
                    let ty = self.word()?;
                    let mut values = vec![self.expr_with(true)?];
                    while self.eat(T::Comma)? {
                        values.push(self.expr_with(true)?);
                    }
                    self.eat(T::Semi)?;
                    let loc = Loc(ty.loc.0.to(Span::at(self.prev_end)));
                    items.push(SectionItem::Data { ty, values, loc });
                }
                T::Eof => {
                    return self.fail(
                        Diagnostic::error(
                            codes::UNCLOSED_BRACE,
                            "unclosed `{` of a section",
                            open.span,
                        )
                        .with_label_message("this `{` is never closed"),
                    )
                }
                _ => return self.expected("a label, a data directive such as `.b8`, or `}`"),
            }
        }
        Ok(Section {
            name,
            items,
            loc: Loc(start.to(Span::at(self.prev_end))),
        })
    }

    // ---- declarations -------------------------------------------------------------------

    /// `SPACE [attrs] TYPE [.ptr …] declarators` (without the `;`). In `param` mode, only one
    /// declarator is read (commas separate parameters).
    fn var_decl(&mut self, linkage: Option<Linkage>, start: Span, param: bool) -> SResult<VarDecl> {
        if !self.at(T::DotWord) {
            return self.expected("a state space such as `.reg` or `.param`");
        }
        let space = self.word()?;
        // Legacy constant banks: `.const[2]`.
        let bank = if space.text == ".const" && self.at(T::LBracket) && self.adjacent() {
            self.bump()?;
            let n = self.expect_u64("a constant bank number")?;
            self.expect(T::RBracket, "`]`")?;
            Some(n)
        } else {
            None
        };
        let mut attributes = Vec::new();
        let mut align = None;
        let mut vector = None;
        let mut ty: Option<Word> = None;
        let mut ptr: Option<PtrAttr> = None;
        while self.at(T::DotWord) {
            let w = self.text(self.tok);
            match w {
                ".attribute" => {
                    self.bump()?;
                    self.expect(T::LParen, "`(` after `.attribute`")?;
                    loop {
                        if !self.at(T::DotWord) {
                            return self.expected("an attribute such as `.managed`");
                        }
                        attributes.push(self.word()?);
                        if !self.eat(T::Comma)? {
                            break;
                        }
                    }
                    self.expect(T::RParen, "`)`")?;
                }
                ".align" => {
                    self.bump()?;
                    let n = self.expect_u64("an alignment in bytes")?;
                    match &mut ptr {
                        Some(p) => p.align = Some(n),
                        None => align = Some(n),
                    }
                }
                ".v2" | ".v4" | ".v8" | ".v16" if ty.is_none() => vector = Some(self.word()?),
                ".ptr" if ty.is_some() && ptr.is_none() => {
                    self.bump()?;
                    ptr = Some(PtrAttr {
                        space: None,
                        align: None,
                    });
                }
                _ => {
                    if let Some(p) = &mut ptr {
                        if p.space.is_none() && is_state_space(w) {
                            p.space = Some(self.word()?);
                            continue;
                        }
                    }
                    if ty.is_some() {
                        let t = self.tok;
                        return self.fail(
                            Diagnostic::error(
                                codes::BAD_DECLARATION,
                                format!(
                                    "unexpected `{w}` in a declaration that already has a type"
                                ),
                                t.span,
                            )
                            .with_label_message("a second type or unknown attribute"),
                        );
                    }
                    ty = Some(self.word()?);
                }
            }
        }
        let Some(ty) = ty else {
            let t = self.tok;
            return self.fail(
                Diagnostic::error(codes::BAD_DECLARATION, "declaration without a type", t.span)
                    .with_secondary(space.loc.0, "this declaration")
                    .with_label_message("expected a type such as `.b32` here")
                    .with_help("write e.g. `.reg .b32 %r<4>;`"),
            );
        };
        let mut declarators = vec![self.declarator()?];
        if !param {
            while self.eat(T::Comma)? {
                declarators.push(self.declarator()?);
            }
        }
        Ok(VarDecl {
            linkage,
            space,
            bank,
            attributes,
            align,
            vector,
            ty,
            ptr,
            declarators,
            loc: Loc(start.to(Span::at(self.prev_end))),
        })
    }

    fn declarator(&mut self) -> SResult<Declarator> {
        let name = if self.at(T::Underscore) {
            self.word()?
        } else {
            self.expect_ident("a name")?
        };
        let mut count = None;
        if self.at(T::Lt) {
            self.bump()?;
            count = Some(self.expect_u64("a register count")?);
            self.expect(T::Gt, "`>`")?;
        }
        let mut dims = Vec::new();
        while self.at(T::LBracket) {
            self.bump()?;
            if self.eat(T::RBracket)? {
                dims.push(None);
            } else {
                let e = self.expr()?;
                self.expect(T::RBracket, "`]`")?;
                dims.push(Some(e));
            }
        }
        let init = if self.eat(T::Eq)? {
            Some(self.initializer()?)
        } else {
            None
        };
        Ok(Declarator {
            name,
            count,
            dims,
            init,
        })
    }

    fn initializer(&mut self) -> SResult<Initializer> {
        if self.at(T::LBrace) {
            let open = self.bump()?.span;
            self.stmt_braces += 1;
            self.nest(open)?;
            let mut items = Vec::new();
            if !self.at(T::RBrace) {
                loop {
                    items.push(self.initializer()?);
                    if !self.eat(T::Comma)? {
                        break;
                    }
                }
            }
            self.expect(T::RBrace, "`,` or `}` in the initializer")?;
            self.stmt_braces -= 1;
            self.unnest();
            return Ok(Initializer::List(
                items,
                Loc(open.to(Span::at(self.prev_end))),
            ));
        }
        if self.at(T::Ident) && self.peek()?.kind == T::Eq {
            let name = self.word()?;
            self.bump()?;
            let v = self.initializer()?;
            return Ok(Initializer::Field(name, Box::new(v)));
        }
        Ok(Initializer::Expr(self.expr()?))
    }

    fn param_list(&mut self) -> SResult<Vec<VarDecl>> {
        self.expect(T::LParen, "`(`")?;
        let mut params = Vec::new();
        if !self.at(T::RParen) {
            loop {
                let start = self.tok.span;
                params.push(self.var_decl(None, start, true)?);
                if !self.eat(T::Comma)? {
                    break;
                }
            }
        }
        self.expect(T::RParen, "`,` or `)` after a parameter")?;
        Ok(params)
    }

    fn function(&mut self, linkage: Option<Linkage>, start: Span) -> SResult<Function> {
        let kw = self.bump()?;
        let kind = if self.text(kw) == ".entry" {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        let returns = if kind == FunctionKind::Func && self.at(T::LParen) {
            Some(self.param_list()?)
        } else {
            None
        };
        let name = self.expect_ident("the function's name")?;
        let params = if self.at(T::LParen) {
            Some(self.param_list()?)
        } else {
            None
        };
        let mut attrs = Vec::new();
        while self.at(T::DotWord) {
            if self.at_word(".pragma") {
                attrs.push(FunctionAttr::Pragma(self.pragma()?));
                continue;
            }
            let w = self.text(self.tok);
            if starts_module_directive(w) {
                let d = Diagnostic::error(
                    codes::EXPECTED,
                    format!("expected `{{` starting the body, or `;`, found `{w}`"),
                    Span::at(self.prev_end),
                )
                .with_label_message("the header of this function ends here")
                .with_help("end a function declaration with `;`, or give it a body `{ … }`");
                return self.fail(d);
            }
            if !is_function_attr(w) {
                let t = self.tok;
                return self.fail(
                    Diagnostic::error(
                        codes::UNKNOWN_DIRECTIVE,
                        format!("`{w}` is not a function attribute"),
                        t.span,
                    )
                    .with_label_message("expected a performance-tuning directive, `{` or `;`")
                    .with_help(
                        "function headers allow .noreturn, .maxnreg, .maxntid, .reqntid, \
                         .minnctapersm, .maxnctapersm, .reqnctapercluster, .explicitcluster, \
                         .maxclusterrank, .blocksareclusters and .pragma",
                    ),
                );
            }
            let name = self.word()?;
            let mut args = Vec::new();
            if self.at(T::Number) {
                args.push(self.expect_u64("a number")?);
                while self.eat(T::Comma)? {
                    args.push(self.expect_u64("a number")?);
                }
            }
            attrs.push(FunctionAttr::Directive { name, args });
        }
        let loc = Loc(start.to(Span::at(self.prev_end)));
        let body = match self.tok.kind {
            T::Semi => {
                self.bump()?;
                None
            }
            T::LBrace => Some(self.body()?),
            _ => return self.expected("`{` starting the body, or `;`"),
        };
        Ok(Function {
            linkage,
            kind,
            returns,
            name,
            params,
            attrs,
            body,
            loc,
        })
    }

    // ---- bodies -------------------------------------------------------------------------

    /// A function body, flat. Errors inside are recovered here; only `Abort` escapes.
    fn body(&mut self) -> SResult<Body> {
        let open = self.bump()?.span;
        let mut body = Body {
            statements: Vec::new(),
            open: Loc(open),
            close: Loc(open),
        };
        // Spans of the `{` still open (the body's own first).
        let mut open_scopes: Vec<Span> = vec![open];
        loop {
            self.begin_statement();
            match self.tok.kind {
                T::RBrace => {
                    let t = self.bump()?;
                    open_scopes.pop();
                    if open_scopes.is_empty() {
                        body.close = Loc(t.span);
                        return Ok(body);
                    }
                    body.statements.push(Statement::ScopeEnd(Loc(t.span)));
                }
                T::LBrace => {
                    let t = self.bump()?;
                    open_scopes.push(t.span);
                    body.statements.push(Statement::ScopeBegin(Loc(t.span)));
                }
                T::Eof => {
                    let innermost = *open_scopes.last().unwrap_or(&open);
                    let mut d = Diagnostic::error(
                        codes::UNCLOSED_BRACE,
                        "unexpected end of file: unclosed `{`",
                        innermost,
                    )
                    .with_label_message("this `{` is never closed")
                    .with_secondary(Span::at(self.prev_end), "file ends here");
                    if open_scopes.len() > 1 {
                        d = d.with_note(format!(
                            "{} scopes are open at the end of the file",
                            open_scopes.len()
                        ));
                    }
                    if !self.suppress {
                        self.report_always(d)?;
                    }
                    // Close the nested scopes left open, so the body stays balanced.
                    for _ in 1..open_scopes.len() {
                        body.statements
                            .push(Statement::ScopeEnd(Loc(Span::at(self.prev_end))));
                    }
                    return Ok(body);
                }
                _ => match self.statement(&mut body.statements) {
                    Ok(()) => {}
                    Err(Fail::Recover) => self.recover(false)?,
                    Err(Fail::Abort) => return Err(Fail::Abort),
                },
            }
        }
    }

    fn statement(&mut self, out: &mut Vec<Statement>) -> SResult<()> {
        let t = self.tok;
        match t.kind {
            T::Preprocessor => out.push(Statement::Preprocessor(self.word()?)),
            T::DwarfLine => out.push(Statement::Dwarf(self.word()?)),
            T::Ident if self.peek()?.kind == T::Colon => {
                let name = self.word()?;
                self.bump()?;
                if self.at(T::DotWord) {
                    match self.text(self.tok) {
                        ".callprototype" => {
                            out.push(Statement::CallPrototype(Box::new(
                                self.call_prototype(name)?,
                            )));
                            return Ok(());
                        }
                        ".calltargets" => {
                            self.bump()?;
                            let mut targets = vec![self.expect_ident("a function name")?];
                            while self.eat(T::Comma)? {
                                targets.push(self.expect_ident("a function name")?);
                            }
                            self.expect(T::Semi, "`;`")?;
                            let loc = Loc(name.loc.0.to(Span::at(self.prev_end)));
                            out.push(Statement::CallTargets { name, targets, loc });
                            return Ok(());
                        }
                        ".branchtargets" => {
                            self.bump()?;
                            let mut targets = Vec::new();
                            loop {
                                let l = self.expect_ident("a label")?;
                                let n = if self.eat(T::Lt)? {
                                    let n = self.expect_u64("a count")?;
                                    self.expect(T::Gt, "`>`")?;
                                    Some(n)
                                } else {
                                    None
                                };
                                targets.push((l, n));
                                if !self.eat(T::Comma)? {
                                    break;
                                }
                            }
                            self.expect(T::Semi, "`;`")?;
                            let loc = Loc(name.loc.0.to(Span::at(self.prev_end)));
                            out.push(Statement::BranchTargets { name, targets, loc });
                            return Ok(());
                        }
                        _ => {}
                    }
                }
                out.push(Statement::Label(name));
            }
            T::Ident | T::At => out.push(Statement::Instruction(Box::new(self.instruction()?))),
            T::DotWord => {
                let w = self.text(t);
                match w {
                    ".loc" => out.push(Statement::DebugLoc(Box::new(self.loc_directive()?))),
                    ".pragma" => out.push(Statement::Pragma(self.pragma()?)),
                    _ if is_state_space(w) || Linkage::from_word(w).is_some() => {
                        let linkage = Linkage::from_word(w);
                        if linkage.is_some() {
                            self.bump()?;
                        }
                        let v = self.var_decl(linkage, t.span, false)?;
                        self.expect(T::Semi, "`;` after the declaration")?;
                        out.push(Statement::Variable(Box::new(v)));
                    }
                    _ if is_function_attr(w) => {
                        let name = self.word()?;
                        let mut args = Vec::new();
                        if !self.at(T::Semi) {
                            args.push(self.expr()?);
                            while self.eat(T::Comma)? {
                                args.push(self.expr()?);
                            }
                        }
                        self.expect(T::Semi, "`;`")?;
                        let loc = Loc(t.span.to(Span::at(self.prev_end)));
                        out.push(Statement::Other { name, args, loc });
                    }
                    _ => {
                        self.bump()?;
                        let mut d = Diagnostic::error(
                            codes::UNKNOWN_DIRECTIVE,
                            format!("unknown or misplaced directive `{w}` in a function body"),
                            t.span,
                        )
                        .with_label_message("not a statement-level directive");
                        if matches!(w, ".entry" | ".func" | ".version" | ".target") {
                            d = d.with_help("is a `}` missing before this line?");
                        }
                        return self.fail(d);
                    }
                }
            }
            T::Semi => {
                self.bump()?;
                return self.fail(
                    Diagnostic::error(codes::EMPTY_STATEMENT, "empty statement", t.span)
                        .with_label_message("a lone `;`"),
                );
            }
            _ => return self.expected("an instruction, a label, a declaration or `}`"),
        }
        Ok(())
    }

    fn call_prototype(&mut self, name: Word) -> SResult<CallPrototype> {
        self.bump()?;
        let returns = if self.at(T::LParen) {
            Some(self.param_list()?)
        } else {
            None
        };
        self.expect(T::Underscore, "`_` (the prototype's anonymous name)")?;
        let params = if self.at(T::LParen) {
            Some(self.param_list()?)
        } else {
            None
        };
        let noreturn = if self.at_word(".noreturn") {
            self.bump()?;
            true
        } else {
            false
        };
        self.expect(T::Semi, "`;`")?;
        let loc = Loc(name.loc.0.to(Span::at(self.prev_end)));
        Ok(CallPrototype {
            name,
            returns,
            params,
            noreturn,
            loc,
        })
    }

    fn instruction(&mut self) -> SResult<Instruction> {
        let start = self.tok.span;
        let guard = if self.eat(T::At)? {
            let at = Span::new(start.start, start.start + 1);
            let negated = self.eat(T::Bang)?;
            let pred = self.expect_ident("a predicate register after `@`")?;
            if self.at(T::DotWord) && self.adjacent() {
                // `@ mov.u32 …`: what follows `@` is an opcode, not a predicate.
                return self.fail(
                    Diagnostic::error(
                        codes::EXPECTED,
                        "guard `@` without a predicate register",
                        at,
                    )
                    .with_label_message("expected a predicate register after `@`")
                    .with_secondary(pred.loc.0, "this is the instruction's opcode")
                    .with_help("write `@%p1 mov.u32 …` or `@!%p1 mov.u32 …`"),
                );
            }
            Some(Guard { negated, pred })
        } else {
            None
        };
        let opcode = self.expect_ident("an instruction opcode")?;
        let mut modifiers = Vec::new();
        while self.at(T::DotWord) {
            let mut m = self.word()?;
            // Legacy constant banks: `ld.const[2].f32` keeps `[2]` in the modifier.
            if m.text == ".const" && self.at(T::LBracket) && self.adjacent() {
                self.bump()?;
                let n = self.expect_u64("a constant bank number")?;
                self.expect(T::RBracket, "`]`")?;
                m.text = format!(".const[{n}]").into();
                m.loc = Loc(m.loc.0.to(Span::at(self.prev_end)));
            }
            modifiers.push(m);
        }
        let call = opcode.text == "call";
        let mut operands = Vec::new();
        if !self.at(T::Semi) {
            loop {
                operands.push(self.operand(call)?);
                if !self.eat(T::Comma)? {
                    break;
                }
            }
        }
        if !self.at(T::Semi) {
            return self.expected(if operands.is_empty() {
                "an operand or `;`"
            } else {
                "`,` or `;` after the operand"
            });
        }
        self.bump()?;
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            loc: Loc(start.to(Span::at(self.prev_end))),
        })
    }

    // ---- operands -----------------------------------------------------------------------

    fn operand(&mut self, call: bool) -> SResult<Operand> {
        let first = match self.tok.kind {
            T::LBrace => self.vector()?,
            T::LBracket => self.address()?,
            T::LParen if call => {
                let open = self.bump()?.span;
                let mut items = Vec::new();
                if !self.at(T::RParen) {
                    loop {
                        items.push(self.operand(false)?);
                        if !self.eat(T::Comma)? {
                            break;
                        }
                    }
                }
                self.expect(T::RParen, "`,` or `)` in the argument list")?;
                Operand::List(items, Loc(open.to(Span::at(self.prev_end))))
            }
            _ => {
                // Parse above `|` so that `p|q` (a predicate pair) is seen before `|` as an operator.
                let lhs = self.expr_bp(BinaryOp::BitXor.precedence(), false)?;
                let is_reg = matches!(
                    lhs.kind,
                    ExprKind::Symbol(_) | ExprKind::Select(..) | ExprKind::Sink
                );
                if !(is_reg && self.at(T::Pipe)) {
                    let e = self.expr_rest(lhs, 0, false)?;
                    return Ok(Operand::Expr(e));
                }
                Operand::Expr(lhs)
            }
        };
        if self.at(T::Pipe) {
            self.bump()?;
            let second = self.expr_bp(BinaryOp::BitXor.precedence(), false)?;
            return Ok(Operand::Pair(
                Box::new(first),
                Box::new(Operand::Expr(second)),
            ));
        }
        Ok(first)
    }

    fn vector(&mut self) -> SResult<Operand> {
        let open = self.bump()?.span;
        self.stmt_braces += 1;
        self.nest(open)?;
        let mut items = Vec::new();
        if self.at(T::RBrace) {
            return self.fail(
                Diagnostic::error(
                    codes::EXPECTED,
                    "empty vector operand",
                    open.to(self.tok.span),
                )
                .with_label_message("a vector operand needs 1 to 8 elements"),
            );
        }
        loop {
            items.push(self.operand(false)?);
            if !self.eat(T::Comma)? {
                break;
            }
        }
        self.expect(T::RBrace, "`,` or `}` in the vector operand")?;
        self.stmt_braces -= 1;
        self.unnest();
        Ok(Operand::Vector(
            items,
            Loc(open.to(Span::at(self.prev_end))),
        ))
    }

    fn address(&mut self) -> SResult<Operand> {
        let open = self.bump()?.span;
        let mut items = Vec::new();
        loop {
            if self.at(T::RBracket) {
                return self.expected("an address expression");
            }
            items.push(self.operand(false)?);
            if !self.eat(T::Comma)? {
                break;
            }
        }
        self.expect(T::RBracket, "`]` closing the address")?;
        let suffix = if self.at(T::DotWord) && self.adjacent() {
            Some(self.word()?)
        } else {
            None
        };
        Ok(Operand::Address(Box::new(Address {
            items,
            suffix,
            loc: Loc(open.to(Span::at(self.prev_end))),
        })))
    }

    // ---- expressions --------------------------------------------------------------------

    fn expr(&mut self) -> SResult<Expr> {
        self.expr_with(false)
    }

    /// An expression; `dot_names` lets dotted words stand for symbols (section names in data).
    fn expr_with(&mut self, dot_names: bool) -> SResult<Expr> {
        let lhs = self.expr_bp(0, dot_names)?;
        Ok(lhs)
    }

    fn binary_op(&self) -> Option<BinaryOp> {
        use BinaryOp::*;
        Some(match self.tok.kind {
            T::Star => Mul,
            T::Slash => Div,
            T::Percent => Rem,
            T::Plus => Add,
            T::Minus => Sub,
            T::Shl => Shl,
            T::Shr => Shr,
            T::Lt => Lt,
            T::Gt => Gt,
            T::Le => Le,
            T::Ge => Ge,
            T::EqEq => Eq,
            T::Ne => Ne,
            T::Amp => BitAnd,
            T::Caret => BitXor,
            T::Pipe => BitOr,
            T::AmpAmp => And,
            T::PipePipe => Or,
            _ => return None,
        })
    }

    /// Operators binding at least `min` (0 admits `?:`).
    fn expr_bp(&mut self, min: u8, dot_names: bool) -> SResult<Expr> {
        let lhs = self.unary(dot_names)?;
        self.expr_rest(lhs, min, dot_names)
    }

    fn expr_rest(&mut self, mut lhs: Expr, min: u8, dot_names: bool) -> SResult<Expr> {
        // Each operator of a chain (`1+1+…`) deepens the left-leaning tree by one, so it counts
        // against the nesting limit like a parenthesis does.
        let mut chain = 0;
        while let Some(op) = self.binary_op() {
            let prec = op.precedence();
            if prec < min.max(1) {
                break;
            }
            self.deepen(self.tok.span)?;
            chain += 1;
            self.bump()?;
            let rhs = self.expr_bp(prec + 1, dot_names)?;
            let loc = Loc(lhs.loc.0.to(rhs.loc.0));
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                loc,
            };
        }
        if min == 0 && self.at(T::Question) {
            self.bump()?;
            self.nest(lhs.loc.0)?;
            let a = self.expr_bp(0, dot_names)?;
            self.expect(T::Colon, "`:` of the conditional expression")?;
            let b = self.expr_bp(0, dot_names)?;
            self.unnest();
            let loc = Loc(lhs.loc.0.to(b.loc.0));
            lhs = Expr {
                kind: ExprKind::Conditional(Box::new(lhs), Box::new(a), Box::new(b)),
                loc,
            };
        }
        self.depth -= chain;
        Ok(lhs)
    }

    fn unary(&mut self, dot_names: bool) -> SResult<Expr> {
        let op = match self.tok.kind {
            T::Minus => UnaryOp::Neg,
            T::Plus => UnaryOp::Plus,
            T::Bang => UnaryOp::Not,
            T::Tilde => UnaryOp::BitNot,
            _ => return self.postfix(dot_names),
        };
        let t = self.bump()?;
        self.nest(t.span)?;
        let e = self.unary(dot_names)?;
        self.unnest();
        let loc = Loc(t.span.to(e.loc.0));
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(e)),
            loc,
        })
    }

    fn postfix(&mut self, dot_names: bool) -> SResult<Expr> {
        let mut e = self.primary(dot_names)?;
        // Each `[i]` or selector deepens the tree by one, so a chain `a[0][0]…` counts against the
        // nesting limit like parentheses do.
        let mut chain = 0;
        loop {
            if self.at(T::LBracket) && matches!(e.kind, ExprKind::Symbol(_) | ExprKind::Index(..)) {
                self.bump()?;
                self.nest(e.loc.0)?;
                chain += 1;
                let i = self.expr()?;
                self.expect(T::RBracket, "`]`")?;
                let loc = Loc(e.loc.0.to(Span::at(self.prev_end)));
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    loc,
                };
            } else if self.at(T::DotWord)
                && self.adjacent()
                && matches!(e.kind, ExprKind::Symbol(_) | ExprKind::Index(..))
            {
                self.nest(self.tok.span)?;
                chain += 1;
                let sel = self.word()?;
                let loc = Loc(e.loc.0.to(sel.loc.0));
                e = Expr {
                    kind: ExprKind::Select(Box::new(e), sel.text),
                    loc,
                };
            } else {
                self.nesting -= chain;
                self.depth -= chain;
                return Ok(e);
            }
        }
    }

    fn primary(&mut self, dot_names: bool) -> SResult<Expr> {
        let t = self.tok;
        let kind = match t.kind {
            T::Number => {
                self.bump()?;
                match decode_number(self.text(t)) {
                    Ok(ExprKind::Int { value, .. }) if self.at(T::LParen) && self.adjacent() => {
                        // `0xFF(expr)`: the mask() initializer operator.
                        self.bump()?;
                        self.nest(t.span)?;
                        let inner = self.expr()?;
                        self.unnest();
                        self.expect(T::RParen, "`)`")?;
                        ExprKind::Mask(value, Box::new(inner))
                    }
                    Ok(k) => k,
                    Err(e) => return self.number_error(t.span, e),
                }
            }
            T::Float => {
                self.bump()?;
                ExprKind::Float(self.text(t).into())
            }
            T::Ident => {
                self.bump()?;
                let name = self.text(t);
                if name == "generic" && self.at(T::LParen) {
                    self.bump()?;
                    self.nest(t.span)?;
                    let inner = self.expr()?;
                    self.unnest();
                    self.expect(T::RParen, "`)`")?;
                    ExprKind::Generic(Box::new(inner))
                } else {
                    ExprKind::Symbol(name.into())
                }
            }
            T::DotWord if is_dot_float(self.text(t)) => {
                self.bump()?;
                ExprKind::Float(self.text(t).into())
            }
            T::DotWord if dot_names => {
                self.bump()?;
                ExprKind::Symbol(self.text(t).into())
            }
            T::Underscore => {
                self.bump()?;
                ExprKind::Sink
            }
            T::LParen => {
                self.bump()?;
                self.nest(t.span)?;
                let p = self.peek()?;
                let e = if self.at(T::DotWord) && p.kind == T::RParen {
                    let ty = self.word()?;
                    self.bump()?;
                    let inner = self.unary(dot_names)?;
                    Expr {
                        loc: Loc(t.span.to(inner.loc.0)),
                        kind: ExprKind::Cast(ty.text, Box::new(inner)),
                    }
                } else {
                    let inner = self.expr_with(dot_names)?;
                    self.expect(T::RParen, "`)`")?;
                    inner
                };
                self.unnest();
                return Ok(e);
            }
            _ => return self.expected("an operand"),
        };
        Ok(Expr {
            kind,
            loc: Loc(t.span.to(Span::at(self.prev_end))),
        })
    }
}
