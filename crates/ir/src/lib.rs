//! `ptx-ir`: the program representation between the checked AST and execution.
//!
//! Lowering ([`lower`]) turns a checked [`ptx_syntax::ast::Module`] into a [`Module`] in which
//! every name is resolved: registers become typed slots of their function ([`RegId`], a
//! [`Handle`]), variables
//! become module [`Global`]s or function [`LocalVar`]s with byte layouts and evaluated
//! initializers (addresses of other symbols as [`Reloc`]s), labels become instruction indices,
//! and callees become function indices. Instructions are typed: an [`Opcode`] resolved once
//! here and the [`Modifier`]s that follow its name (the interpreter decodes them once, when it
//! compiles its bytecode); operands are typed [`Operand`]s. Each function carries its
//! control-flow graph ([`Block`]s with successors) and the immediate post-dominator of every
//! block: the reconvergence point of a divergent branch.
//! [`verify`] checks the invariants the interpreter relies on, [`dataflow`] gives register
//! reads and writes, definite assignment and interference, and [`print`] writes the text form
//! that `ptxvm ir FILE` shows.
//!
//! Storage is arena-style: the module and each function own flat vectors (`globals`,
//! `functions`, `regs`, `locals`, `insts`, `blocks`) and refer to their elements by typed
//! [`Handle`]s (`Handle<RegInfo>`, `Handle<Block>`, `Handle<Global>`, `Handle<Function>`,
//! `Handle<LocalVar>`; `u32`s underneath), so the IR is compact, cheap to clone, free of
//! reference cycles, and an index of one kind cannot be used for another.

mod cfg;
pub mod dataflow;
mod lower;
mod print;
mod verify;

pub use cfg::{build_cfg, post_dominators};
pub use lower::lower;
pub use print::print;
pub use verify::verify;

use ptx_diag::Span;
pub use ptx_isa::{ModSet, Modifier, OpFlags, Opcode};
use ptx_isa::{ScalarType, StateSpace};
use ptx_syntax::ast::Name;
use std::marker::PhantomData;

/// A typed index into one of the IR's vectors: `Handle<RegInfo>` is an index into
/// [`Function::regs`], so that a register cannot be used where a block, a global or a plain
/// number is meant. It is a `u32`, free to copy; [`Handle::index`] gives the `usize` for
/// slices, and `vec[handle]` indexes a `Vec<T>` or `[T]` by a `Handle<T>` directly.
pub struct Handle<T> {
    raw: u32,
    _of: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The handle of element `raw`.
    pub const fn new(raw: u32) -> Handle<T> {
        Handle {
            raw,
            _of: PhantomData,
        }
    }
    /// The element's index.
    pub const fn index(self) -> usize {
        self.raw as usize
    }
    /// The element's index as stored.
    pub const fn raw(self) -> u32 {
        self.raw
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.raw.cmp(&other.raw)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.raw.hash(state)
    }
}
/// The bare number, as the indices were shown before they were typed.
impl<T> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}
impl<T> From<Handle<T>> for usize {
    fn from(h: Handle<T>) -> usize {
        h.index()
    }
}
impl<T> std::fmt::Display for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}
impl<T> std::ops::Index<Handle<T>> for [T] {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self[h.index()]
    }
}
impl<T> std::ops::IndexMut<Handle<T>> for [T] {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self[h.index()]
    }
}
impl<T> std::ops::Index<Handle<T>> for Vec<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self[h.index()]
    }
}
impl<T> std::ops::IndexMut<Handle<T>> for Vec<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self[h.index()]
    }
}

/// A register slot of a function: an index into [`Function::regs`].
pub type RegId = Handle<RegInfo>;

/// An instruction of a function: an index into [`Function::insts`] (a label's target).
pub type InstId = Handle<Inst>;

/// A lowered module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// `.address_size` (32 or 64).
    pub address_size: u32,
    /// Module-level variables in memory state spaces, in declaration order.
    pub globals: Vec<Global>,
    /// Every function and kernel, declared or defined, in declaration order.
    pub functions: Vec<Function>,
    /// `.file` directives: index → path.
    pub files: Vec<(u64, String)>,
}

impl Module {
    /// The function with this name.
    pub fn function(&self, name: &str) -> Option<(u32, &Function)> {
        self.functions
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == name)
            .map(|(i, f)| (i as u32, f))
    }
    /// The path of `.file` number `index`.
    pub fn file(&self, index: u64) -> Option<&str> {
        self.files
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, p)| p.as_str())
    }
}

/// A module-level variable.
#[derive(Clone, Debug)]
pub struct Global {
    /// Name.
    pub name: Name,
    /// State space (`.global`, `.const`, `.shared`, `.local`).
    pub space: StateSpace,
    /// Element type, when it is a fundamental type.
    pub ty: Option<ScalarType>,
    /// Size in bytes (0 for an unsized `.extern .shared` array: dynamic shared memory).
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// Initial bytes (`size` long, zeros where not initialized); empty when uninitialized.
    pub init: Vec<u8>,
    /// Addresses of other symbols stored into `init`.
    pub relocs: Vec<Reloc>,
    /// Declared `.extern` (no storage of its own unless it is dynamic shared memory).
    pub external: bool,
    /// Where it was declared.
    pub span: Span,
}

/// The address of a symbol stored into an initializer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// Byte offset in the initializer.
    pub offset: u64,
    /// Size of the stored value in bytes (4 or 8).
    pub size: u8,
    /// The symbol whose address is stored.
    pub target: SymbolRef,
    /// Added to the address.
    pub addend: i64,
    /// `generic(sym)`: the generic address rather than the state-space address.
    pub generic: bool,
}

/// A symbol that has an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolRef {
    /// A module variable.
    Global(Handle<Global>),
    /// A function.
    Function(Handle<Function>),
}

/// `.entry` or `.func`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// A kernel.
    Entry,
    /// A device function.
    Func,
}

/// A kernel or function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name.
    pub name: Name,
    /// Kernel or function.
    pub kind: FunctionKind,
    /// Has a body.
    pub defined: bool,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// Return parameters, in order.
    pub returns: Vec<Param>,
    /// Register slots.
    pub regs: Vec<RegInfo>,
    /// Variables declared in the body (and, for a `.func`, its parameters and return
    /// parameters, which live in its frame).
    pub locals: Vec<LocalVar>,
    /// Size in bytes of the per-thread frame: `.local` variables and `.param` variables.
    pub frame_size: u64,
    /// Alignment of the frame.
    pub frame_align: u64,
    /// Size in bytes of the kernel parameter buffer (kernels only).
    pub param_size: u64,
    /// The instructions, in order.
    pub insts: Vec<Inst>,
    /// Labels: name and the index of the instruction they precede.
    pub labels: Vec<(Name, InstId)>,
    /// Basic blocks, in instruction order.
    pub blocks: Vec<Block>,
    /// Immediate post-dominator of each block (`None`: the virtual exit, or no path to exit).
    pub ipdom: Vec<Option<Handle<Block>>>,
    /// Module globals this function refers to (shared-memory layout needs them).
    pub uses_globals: Vec<Handle<Global>>,
    /// Functions this function calls directly or takes the address of.
    pub callees: Vec<Handle<Function>>,
    /// Instructions with a construct lowering cannot represent (texture and surface
    /// operands, …): the instruction's index and why. They stay in `insts` (operands that
    /// could not be lowered are `Sink`) so that the module loads and its other kernels run.
    pub unsupported: Vec<(u32, String)>,
    /// `.maxntid`/`.reqntid` and other header directives, as written.
    pub attrs: Vec<(Name, Vec<u64>)>,
    /// Where it was declared.
    pub span: Span,
}

/// A parameter of a kernel or function.
#[derive(Clone, Debug)]
pub struct Param {
    /// Name.
    pub name: Name,
    /// Element type (for `.b8 x[16]` arrays: `.b8`).
    pub ty: Option<ScalarType>,
    /// Type as written.
    pub type_name: Name,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// Declared as an array.
    pub array: bool,
    /// Byte offset: in the kernel parameter buffer (kernels) or in the frame (functions).
    pub offset: u64,
    /// `.reg` parameter (old-style function parameters passed in registers).
    pub reg: Option<RegId>,
}

/// A register slot.
#[derive(Clone, Debug)]
pub struct RegInfo {
    /// Name as written (`%r12` for the 13th register of `%r<20>`).
    pub name: Name,
    /// Type (`.pred` for predicates).
    pub ty: ScalarType,
}

/// A variable declared inside a function body.
#[derive(Clone, Debug)]
pub struct LocalVar {
    /// Name.
    pub name: Name,
    /// `.local`, `.param` (call arguments and the function's own parameters) or `.shared`.
    pub space: StateSpace,
    /// Size in bytes.
    pub size: u64,
    /// Alignment.
    pub align: u64,
    /// Byte offset in the frame (`.local`, `.param`); for `.shared`, 0 until the interpreter
    /// lays out shared memory.
    pub offset: u64,
    /// Initial bytes (empty: none).
    pub init: Vec<u8>,
    /// The declared name in the source.
    pub span: Span,
}

/// A basic block: instructions `start..end` of its function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// First instruction.
    pub start: u32,
    /// One past the last instruction.
    pub end: u32,
    /// Successor blocks.
    pub succs: Vec<Handle<Block>>,
}

/// `@p` / `@!p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// The predicate register.
    pub reg: RegId,
    /// `@!p`.
    pub negated: bool,
}

/// A CUDA source position from `.loc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrcLoc {
    /// `.file` number.
    pub file: u32,
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
}

/// An instruction: its opcode, resolved once when lowering, and its typed modifiers.
#[derive(Clone, Debug)]
pub struct Inst {
    /// Guard predicate.
    pub guard: Option<Guard>,
    /// Opcode, e.g. [`Opcode::Add`], [`Opcode::CpAsyncBulk`].
    pub op: Opcode,
    /// Modifiers in source order, without the path segments that the opcode's name consumed
    /// (`cp.async.bulk.shared::cluster…` keeps `.shared::cluster…`), e.g. `.rn`, `.f32`.
    pub mods: Vec<Modifier>,
    /// The same modifiers as a set, for membership tests.
    pub modset: ModSet,
    /// Operands in source order.
    pub operands: Vec<Operand>,
    /// The instruction's text in the PTX file.
    pub span: Span,
    /// The CUDA source position of the last `.loc` before it.
    pub src: Option<SrcLoc>,
}

impl Inst {
    /// An unguarded instruction without a source position.
    pub fn new(op: Opcode, mods: Vec<Modifier>, operands: Vec<Operand>, span: Span) -> Inst {
        Inst {
            guard: None,
            op,
            modset: mods.iter().copied().collect(),
            mods,
            operands,
            span,
            src: None,
        }
    }
    /// The unguarded instruction written `text` (`mad.lo.cc.u32`), or `None` when the typed
    /// instruction set does not know its opcode or one of its modifiers.
    pub fn named(text: &str, operands: Vec<Operand>, span: Span) -> Option<Inst> {
        let mut parts = text.split('.');
        let word = parts.next()?;
        let all: Vec<String> = parts.map(|p| format!(".{p}")).collect();
        let (op, consumed) = Opcode::resolve(word, &all)?;
        let mods = all[consumed..]
            .iter()
            .map(|m| Modifier::parse(m))
            .collect::<Option<Vec<_>>>()?;
        Some(Inst::new(op, mods, operands, span))
    }
    /// Whether the instruction has this modifier.
    pub fn has(&self, m: Modifier) -> bool {
        self.modset.contains(m)
    }
    /// Whether the opcode has all of the flags `f`.
    pub fn is(&self, f: OpFlags) -> bool {
        self.op.is(f)
    }
    /// The fundamental types among the modifiers, in order.
    pub fn types(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.mods.iter().filter_map(|m| m.scalar_type())
    }
    /// The state space among the modifiers.
    pub fn space(&self) -> Option<StateSpace> {
        self.mods.iter().find_map(|m| m.state_space())
    }
    /// The vector width among the modifiers (`.v2`, `.v4`, `.v8`).
    pub fn vector_width(&self) -> Option<u32> {
        self.mods.iter().find_map(|m| m.vector_width())
    }
    /// `opcode.mod1.mod2`, as written.
    pub fn full_name(&self) -> String {
        let mut s = self.op.name().to_string();
        for m in &self.mods {
            s.push_str(m.text());
        }
        s
    }
}

/// An immediate value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Imm {
    /// An integer (two's complement bits).
    Int(u64),
    /// A float written in decimal or `0d` form (converted to the instruction type when used).
    F64(f64),
    /// A `0f` single-precision literal's bits.
    F32(u32),
}

/// A special register read: `%tid.x` is `{ name: "%tid", comp: Some(0) }`.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecialReg {
    /// The register's name.
    pub name: Name,
    /// Component `.x .y .z .w` as 0..3.
    pub comp: Option<u8>,
}

/// What an address or symbol value is relative to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Base {
    /// A register's value.
    Reg(RegId),
    /// A module variable.
    Global(Handle<Global>),
    /// A variable of this function's frame or shared memory.
    Local(Handle<LocalVar>),
    /// A kernel parameter (index into `params`; kernels only).
    KernelParam(u32),
    /// A function (its address is an opaque code address).
    Function(Handle<Function>),
    /// No base: an absolute address.
    Absolute,
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(RegId),
    /// An immediate.
    Imm(Imm),
    /// A special register.
    Special(SpecialReg),
    /// The address of a symbol (plus an offset) used as a value: `mov.u64 %rd, var;`.
    Symbol(Base, i64),
    /// A memory address `[base+offset]`.
    Address(Base, i64),
    /// A label: the index of the instruction it marks.
    Label(InstId),
    /// A list of labels (`.branchtargets`).
    Targets(Vec<InstId>),
    /// A `.callprototype` or `.calltargets` name (indirect calls).
    Prototype(Name),
    /// `{a, b, c, d}`.
    Vector(Vec<Operand>),
    /// `(a, b)` in `call`.
    List(Vec<Operand>),
    /// `d|p`.
    Pair(Box<Operand>, Box<Operand>),
    /// `!p`: a negated predicate operand.
    Not(Box<Operand>),
    /// `_`.
    Sink,
}
