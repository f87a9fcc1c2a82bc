//! The PTX abstract syntax tree.
//!
//! The tree mirrors the text: a [`Module`] is a list of module-level [`Directive`]s; a function
//! body is a *flat* list of [`Statement`]s in which nested `{ }` scopes appear as
//! [`Statement::ScopeBegin`] / [`Statement::ScopeEnd`] markers. Flat bodies mean no pass (parsing,
//! printing, checking, dropping) recurses on scope depth, so a 10 000-deep brace nest is harmless.
//!
//! Instructions are kept as written: opcode, the modifiers in source order, then operands. What the
//! modifiers mean is the instruction table's business (`ptx-isa`), not the parser's.
//!
//! Every node carries a [`Loc`]. Equality of nodes ignores locations (see [`Loc`]), so
//! `parse(print(ast)) == ast` is a plain `==`.

pub use compact_str::CompactString as Name;
use ptx_diag::Span;
use std::fmt;

/// A source location. Compares equal to every other `Loc`, so that derived equality of AST nodes
/// is structural: two trees that differ only in positions are equal.
#[derive(Clone, Copy, Default)]
pub struct Loc(pub Span);

impl PartialEq for Loc {
    fn eq(&self, _: &Loc) -> bool {
        true
    }
}
impl Eq for Loc {}
impl fmt::Debug for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{:?}", self.0)
    }
}
impl From<Span> for Loc {
    fn from(s: Span) -> Loc {
        Loc(s)
    }
}

/// A name with its location (identifiers, dotted words).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Word {
    /// The text, e.g. `%r1`, `.global`.
    pub text: Name,
    /// Where it was written.
    pub loc: Loc,
}

/// A string literal: the text between the quotes, escapes kept as written.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct StrLit {
    /// Contents without the quotes.
    pub text: Name,
    /// Where it was written (quotes included).
    pub loc: Loc,
}

/// A whole PTX module.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Module {
    /// Module-level directives in source order.
    pub directives: Vec<Directive>,
}

/// A module-level directive.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Directive {
    /// `.version 8.0`
    Version {
        /// Major version.
        major: u32,
        /// Minor version.
        minor: u32,
        /// Location.
        loc: Loc,
    },
    /// `.target sm_80, texmode_independent`
    Target {
        /// Target names in order.
        targets: Vec<Word>,
        /// Location.
        loc: Loc,
    },
    /// `.address_size 64`
    AddressSize {
        /// 32 or 64.
        bits: u32,
        /// Location.
        loc: Loc,
    },
    /// `.file 1 "a.cu", 1339013327, 64118`
    File(FileDirective),
    /// `.section .debug_info { … }`
    Section(Section),
    /// A legacy `@@DWARF …` line, kept verbatim.
    Dwarf(Word),
    /// `.pragma "nounroll";`
    Pragma(Pragma),
    /// A `#…` preprocessor line, kept verbatim.
    Preprocessor(Word),
    /// A variable declaration (`.global .u32 x;`).
    Variable(VarDecl),
    /// A kernel (`.entry`) or function (`.func`), declared or defined.
    Function(Box<Function>),
    /// `.alias fAlias, fAliasee;`
    Alias {
        /// The new name.
        alias: Word,
        /// The function it names.
        aliasee: Word,
        /// Location.
        loc: Loc,
    },
    /// A `.loc` line at module level (accepted; nvcc never writes one there).
    DebugLoc(LocDirective),
}

/// `.file INDEX "NAME" [, TIMESTAMP, SIZE]`
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FileDirective {
    /// File number used by `.loc`.
    pub index: u64,
    /// Path.
    pub path: StrLit,
    /// Optional modification time and size.
    pub extra: Vec<u64>,
    /// Location.
    pub loc: Loc,
}

/// `.loc FILE LINE COLUMN [, function_name NAME [+ OFF], inlined_at F L C]`
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LocDirective {
    /// File number.
    pub file: u64,
    /// Line.
    pub line: u64,
    /// Column.
    pub column: u64,
    /// `function_name` label (an expression: `name`, `.debug_str+16`).
    pub function_name: Option<Expr>,
    /// `inlined_at FILE LINE COLUMN`.
    pub inlined_at: Option<[u64; 3]>,
    /// Location.
    pub loc: Loc,
}

/// `.pragma "a", "b";`
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Pragma {
    /// The strings.
    pub strings: Vec<StrLit>,
    /// Location.
    pub loc: Loc,
}

/// `.section NAME { ITEMS }`: DWARF and other data blocks.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Section {
    /// Section name, e.g. `.debug_info`.
    pub name: Word,
    /// Labels and data lines.
    pub items: Vec<SectionItem>,
    /// Location.
    pub loc: Loc,
}

/// One line of a `.section` body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SectionItem {
    /// `name:`
    Label(Word),
    /// `.b8 1, 2, 3` / `.b32 label+4` / `.b64 .debug_abbrev`
    Data {
        /// The data type word (`.b8`, `.b16`, `.b32`, `.b64`).
        ty: Word,
        /// The values.
        values: Vec<Expr>,
        /// Location.
        loc: Loc,
    },
}

/// Linkage directives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Linkage {
    /// `.extern`
    Extern,
    /// `.visible`
    Visible,
    /// `.weak`
    Weak,
    /// `.common`
    Common,
}

impl Linkage {
    /// The directive as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Linkage::Extern => ".extern",
            Linkage::Visible => ".visible",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        }
    }
    /// Parses a linkage directive.
    pub fn from_word(w: &str) -> Option<Linkage> {
        Some(match w {
            ".extern" => Linkage::Extern,
            ".visible" => Linkage::Visible,
            ".weak" => Linkage::Weak,
            ".common" => Linkage::Common,
            _ => return None,
        })
    }
}

/// A variable declaration: module variables, function-local variables and parameters.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VarDecl {
    /// Linkage directive, if any.
    pub linkage: Option<Linkage>,
    /// State space word (`.reg`, `.global`, `.shared::cta`, `.param`, …).
    pub space: Word,
    /// Legacy constant bank: `.const[2]`.
    pub bank: Option<u64>,
    /// `.attribute(.managed)` contents.
    pub attributes: Vec<Word>,
    /// `.align N` before the type.
    pub align: Option<u64>,
    /// Vector width word (`.v2`, `.v4`, `.v8`).
    pub vector: Option<Word>,
    /// Element type word (`.u32`, `.b8`, `.texref`, …).
    pub ty: Word,
    /// `.ptr [.space] [.align N]` kernel-parameter attribute.
    pub ptr: Option<PtrAttr>,
    /// The declared names.
    pub declarators: Vec<Declarator>,
    /// Location.
    pub loc: Loc,
}

/// `.ptr .global .align 16` on a kernel parameter.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PtrAttr {
    /// Pointee state space.
    pub space: Option<Word>,
    /// Pointee alignment.
    pub align: Option<u64>,
}

/// One declared name: `%r<100>`, `buf[16][4]`, `x = 5`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Declarator {
    /// The name.
    pub name: Word,
    /// `<N>` parameterized count: declares `name0 … name{N-1}`.
    pub count: Option<u64>,
    /// Array dimensions; `None` for `[]`.
    pub dims: Vec<Option<Expr>>,
    /// Initializer.
    pub init: Option<Initializer>,
}

/// An initializer value.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Initializer {
    /// A constant or address expression (`5`, `foo`, `generic(foo)+4`, `0xff(foo)`).
    Expr(Expr),
    /// `{ a, b, { c } }`
    List(Vec<Initializer>, Loc),
    /// `field = value` inside texture/sampler/surface initializers.
    Field(Word, Box<Initializer>),
}

/// `.entry` or `.func`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FunctionKind {
    /// A kernel.
    Entry,
    /// A device function.
    Func,
}

/// A kernel or function declaration or definition.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Function {
    /// Linkage directive, if any.
    pub linkage: Option<Linkage>,
    /// `.entry` or `.func`.
    pub kind: FunctionKind,
    /// Return parameters (`.func (.reg .b32 r) f(...)`); `None` when absent.
    pub returns: Option<Vec<VarDecl>>,
    /// Name.
    pub name: Word,
    /// Parameters; `None` when the parentheses are absent.
    pub params: Option<Vec<VarDecl>>,
    /// Performance-tuning and other header directives, in order.
    pub attrs: Vec<FunctionAttr>,
    /// The body; `None` for a declaration ending in `;`.
    pub body: Option<Body>,
    /// Location of the header.
    pub loc: Loc,
}

/// A function-header directive: `.noreturn`, `.maxntid 256,1,1`, `.pragma "nounroll";` …
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FunctionAttr {
    /// A directive and its integer arguments (`.maxnreg 32`, `.explicitcluster`).
    Directive {
        /// The directive word.
        name: Word,
        /// Its arguments.
        args: Vec<u64>,
    },
    /// `.pragma "…";` in the header.
    Pragma(Pragma),
}

/// A function body: flat statements with scope markers.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Body {
    /// The statements, in order.
    pub statements: Vec<Statement>,
    /// Location of the opening brace.
    pub open: Loc,
    /// Location of the closing brace.
    pub close: Loc,
}

/// A statement of a function body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Statement {
    /// `name:`
    Label(Word),
    /// An instruction.
    Instruction(Box<Instruction>),
    /// A local declaration (`.reg`, `.local`, `.shared`, `.param`). Boxed, like the other large
    /// variants, so that a statement stays small: bodies hold millions of them.
    Variable(Box<VarDecl>),
    /// `{` opening a nested scope.
    ScopeBegin(Loc),
    /// `}` closing a nested scope.
    ScopeEnd(Loc),
    /// `.loc …`
    DebugLoc(Box<LocDirective>),
    /// `.pragma …;`
    Pragma(Pragma),
    /// `name: .callprototype …;`
    CallPrototype(Box<CallPrototype>),
    /// `name: .calltargets f, g;`
    CallTargets {
        /// The label naming the list.
        name: Word,
        /// The functions.
        targets: Vec<Word>,
        /// Location.
        loc: Loc,
    },
    /// `name: .branchtargets L1, L2;` (`N<5>` expands to `N0 … N4` at check time).
    BranchTargets {
        /// The label naming the list.
        name: Word,
        /// The labels, each with an optional `<N>` count.
        targets: Vec<(Word, Option<u64>)>,
        /// Location.
        loc: Loc,
    },
    /// A `#…` line, verbatim.
    Preprocessor(Word),
    /// A legacy `@@DWARF` line, verbatim.
    Dwarf(Word),
    /// Any other directive statement (`.maxntid` inside a body, …): name and arguments.
    Other {
        /// The directive word.
        name: Word,
        /// Arguments as expressions.
        args: Vec<Expr>,
        /// Location.
        loc: Loc,
    },
}

/// `name: .callprototype (.param .b32 _) _ (.param .b32 _) .noreturn;`
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CallPrototype {
    /// The label naming the prototype.
    pub name: Word,
    /// Return parameters.
    pub returns: Option<Vec<VarDecl>>,
    /// Parameters.
    pub params: Option<Vec<VarDecl>>,
    /// `.noreturn`
    pub noreturn: bool,
    /// Location.
    pub loc: Loc,
}

/// `@p` or `@!p`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Guard {
    /// `@!p`
    pub negated: bool,
    /// The predicate register.
    pub pred: Word,
}

/// An instruction as written: guard, opcode, modifiers in order, operands.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Instruction {
    /// Optional guard predicate.
    pub guard: Option<Guard>,
    /// The opcode word (`ld`, `mma`).
    pub opcode: Word,
    /// Modifiers in source order, each with its leading dot (`.global`, `.v4`, `.f32`).
    pub modifiers: Vec<Word>,
    /// Operands.
    pub operands: Vec<Operand>,
    /// Location of the whole instruction (guard to `;`).
    pub loc: Loc,
}

impl Instruction {
    /// The opcode and modifiers joined, e.g. `ld.global.f32`.
    pub fn full_opcode(&self) -> String {
        let mut s = String::from(self.opcode.text.as_str());
        for m in &self.modifiers {
            s.push_str(&m.text);
        }
        s
    }
}

/// An instruction operand.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Operand {
    /// A register, symbol, label, immediate or constant expression.
    Expr(Expr),
    /// `{a, b, c, d}`
    Vector(Vec<Operand>, Loc),
    /// `[…]`
    Address(Box<Address>),
    /// `(a, b)`: the parenthesized lists of `call`.
    List(Vec<Operand>, Loc),
    /// `d|p`: a destination paired with a predicate destination.
    Pair(Box<Operand>, Box<Operand>),
}

impl Operand {
    /// The operand's location.
    pub fn loc(&self) -> Loc {
        match self {
            Operand::Expr(e) => e.loc,
            Operand::Vector(_, l) | Operand::List(_, l) => *l,
            Operand::Address(a) => a.loc,
            Operand::Pair(a, b) => Loc(a.loc().0.to(b.loc().0)),
        }
    }
}

/// `[base+offset]`, `[tex, {coords}]`, `[a].unified`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Address {
    /// Comma-separated parts inside the brackets.
    pub items: Vec<Operand>,
    /// A modifier written after the brackets (`.unified`).
    pub suffix: Option<Word>,
    /// Location (brackets included).
    pub loc: Loc,
}

/// An expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub loc: Loc,
}

/// How an integer literal was written (kept so that `fmt` prints it the same way).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Radix {
    /// `42`
    Decimal,
    /// `0x2a`
    Hex,
    /// `052`
    Octal,
    /// `0b101010`
    Binary,
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `!`
    Not,
    /// `~`
    BitNot,
}

/// Binary operators of constant expressions (C precedence).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinaryOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// Binding strength (higher binds tighter), as in C.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Mul | Div | Rem => 10,
            Add | Sub => 9,
            Shl | Shr => 8,
            Lt | Gt | Le | Ge => 7,
            Eq | Ne => 6,
            BitAnd => 5,
            BitXor => 4,
            BitOr => 3,
            And => 2,
            Or => 1,
        }
    }
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Rem => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            And => "&&",
            Or => "||",
        }
    }
}

/// The expression kinds.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ExprKind {
    /// An integer literal (always non-negative; `-` is a unary operator).
    Int {
        /// The value.
        value: u64,
        /// Written with a `U` suffix.
        unsigned_suffix: bool,
        /// How it was written.
        radix: Radix,
    },
    /// `0fXXXXXXXX`: an exact single-precision value.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: an exact double-precision value.
    F64Bits(u64),
    /// A decimal floating-point literal, kept as written (value via [`ExprKind::float_value`]).
    Float(Name),
    /// A name: register, variable, label, function, special register, or section name in data.
    Symbol(Name),
    /// `_`: the sink / placeholder.
    Sink,
    /// A unary operation.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operation.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(.s64) e` / `(.u64) e`
    Cast(Name, Box<Expr>),
    /// `a[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `%tid.x`, `r2.b0`, `r3.h10`: a component or byte/half selector.
    Select(Box<Expr>, Name),
    /// `generic(var)` in initializers.
    Generic(Box<Expr>),
    /// `0xFF(expr)`: the `mask()` initializer operator.
    Mask(u64, Box<Expr>),
}

impl ExprKind {
    /// The value of a decimal float literal (the lexer guarantees it parses).
    pub fn float_value(text: &str) -> f64 {
        text.parse().unwrap_or(f64::NAN)
    }
}

/// Splits `%r12` into every (stem, index) reading: (`%r1`, 2), (`%r`, 12); an index has no
/// leading zero. The one reading of family members (`.reg .b32 %r<N>`) for the checker and
/// lowering.
pub fn family_splits(name: &str) -> impl Iterator<Item = (&str, u64)> {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    (1..=digits).filter_map(move |k| {
        let (stem, num) = name.split_at(name.len() - k);
        if num.len() > 1 && num.starts_with('0') {
            return None;
        }
        num.parse().ok().map(|n| (stem, n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bodies hold one `Statement` per line of PTX; keep them small (see `Statement::Variable`).
    #[test]
    fn node_sizes() {
        assert!(
            std::mem::size_of::<Statement>() <= 72,
            "{}",
            std::mem::size_of::<Statement>()
        );
        assert!(
            std::mem::size_of::<Operand>() <= 56,
            "{}",
            std::mem::size_of::<Operand>()
        );
        assert!(
            std::mem::size_of::<Expr>() <= 48,
            "{}",
            std::mem::size_of::<Expr>()
        );
    }
}
