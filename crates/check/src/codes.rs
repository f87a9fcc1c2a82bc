//! Stable codes of the semantic diagnostics and their explanations for `ptxvm explain`.
//!
//! `E01xx`: names and scopes; `E02xx`: instructions, operands and types; `E03xx`: module header,
//! PTX versions and targets; `E04xx`: calls and control flow; `W03xx`: warnings.

use ptx_diag::Code;

/// A name declared twice in the same scope.
pub const DUPLICATE: Code = Code("E0101");
/// A `%`-register (or other `%` name) that is not declared in any enclosing scope.
pub const UNDECLARED_REGISTER: Code = Code("E0102");
/// A label, variable or other symbol that is not declared.
pub const UNDECLARED_SYMBOL: Code = Code("E0103");
/// A type that a register may not have (`.reg .bf16`).
pub const BAD_REGISTER_TYPE: Code = Code("E0104");
/// A name used where a different kind of entity is required (a label where a register goes).
pub const WRONG_KIND: Code = Code("E0105");

/// An opcode that is not a PTX instruction.
pub const UNKNOWN_OPCODE: Code = Code("E0201");
/// A modifier that no form of the instruction accepts.
pub const UNKNOWN_MODIFIER: Code = Code("E0202");
/// The wrong number of operands.
pub const OPERAND_COUNT: Code = Code("E0203");
/// A register whose type does not agree with the instruction type.
pub const OPERAND_TYPE: Code = Code("E0204");
/// A predicate where a value is needed, or a value where a predicate is needed.
pub const PREDICATE_MISUSE: Code = Code("E0205");
/// An immediate of the wrong kind (an integer literal for a floating-point operand).
pub const IMMEDIATE_KIND: Code = Code("E0206");
/// A vector operand whose width does not match `.v2`/`.v4`.
pub const VECTOR_WIDTH: Code = Code("E0207");
/// A state space the instruction cannot use (`st.const`).
pub const STATE_SPACE: Code = Code("E0208");
/// A `cvt` that needs a rounding modifier without one.
pub const CVT_ROUNDING: Code = Code("E0209");
/// An instruction that needs a type modifier without one.
pub const MISSING_TYPE: Code = Code("E0210");
/// An operand of the wrong shape (a register where an address goes, …).
pub const OPERAND_SHAPE: Code = Code("E0211");
/// Modifiers that exist for the instruction but no form takes together (`.ftz` with `.f64`).
pub const MODIFIER_COMBINATION: Code = Code("E0212");

/// `.version` missing or not first.
pub const VERSION_DIRECTIVE: Code = Code("E0301");
/// `.target` missing or misplaced.
pub const TARGET_DIRECTIVE: Code = Code("E0302");
/// A target name that is not known.
pub const UNKNOWN_TARGET: Code = Code("E0303");
/// The declared `.version` is too old for the target.
pub const TARGET_NEEDS_VERSION: Code = Code("E0304");
/// `.address_size` other than 32 or 64, or misplaced.
pub const ADDRESS_SIZE: Code = Code("E0305");
/// An instruction or modifier that needs a newer `.version`.
pub const NEEDS_VERSION: Code = Code("E0306");
/// An instruction or modifier that needs a newer target.
pub const NEEDS_TARGET: Code = Code("E0307");
/// A PTX version that does not exist.
pub const UNKNOWN_VERSION: Code = Code("E0308");
/// `shfl` without `.sync` on sm_70+ with PTX 6.4+.
pub const SHFL_WITHOUT_SYNC: Code = Code("E0309");
/// `.const` variables that need more than the 64 KiB constant bank.
pub const CONST_BANK: Code = Code("E0310");
/// Kernel parameters that need more than the parameter space.
pub const PARAM_SPACE: Code = Code("E0311");

/// A call to a function that is not declared.
pub const UNDECLARED_FUNCTION: Code = Code("E0401");
/// A call with the wrong number of arguments.
pub const CALL_ARG_COUNT: Code = Code("E0402");
/// A call with the wrong number of return values.
pub const CALL_RET_COUNT: Code = Code("E0403");
/// A branch target that is not a label.
pub const BRANCH_TARGET: Code = Code("E0404");
/// A malformed call.
pub const CALL_SHAPE: Code = Code("E0405");
/// A call argument whose type, size, alignment or state space does not fit the parameter.
pub const CALL_ARG_TYPE: Code = Code("E0406");
/// A call result whose type, size, alignment or state space does not fit the return parameter.
pub const CALL_RET_TYPE: Code = Code("E0407");

/// `shfl` without `.sync`: deprecated.
pub const SHFL_DEPRECATED: Code = Code("W0301");
/// A deprecated directive (`.maxnctapersm`).
pub const DEPRECATED_DIRECTIVE: Code = Code("W0302");

/// Every semantic code with a title and an explanation paragraph.
pub const EXPLANATIONS: &[(Code, &str, &str)] = &[
    (DUPLICATE, "duplicate declaration",
     "A name is declared twice in the same scope: two `.reg` declarations of `%x` in one block, \
      two parameters with the same name, two definitions of a function or of a module variable, \
      or a label defined twice in one function. A nested `{ }` block may redeclare (shadow) an \
      outer name; the same block may not. Parameterized declarations such as `%r<4>` declare \
      `%r0` to `%r3` and clash with those names. Rename or remove one of the declarations; the \
      secondary label points at the earlier one."),
    (UNDECLARED_REGISTER, "undeclared register",
     "A `%` name that is neither declared by a `.reg` (or other) declaration in an enclosing scope \
      nor a special register such as `%tid.x`. Registers must be declared before their first \
      use, in the same block or an enclosing one; `.reg .b32 %r<10>;` declares `%r0` to `%r9` \
      (not `%r10`). The help line names the closest declared name when there is one."),
    (UNDECLARED_SYMBOL, "undeclared label or symbol",
     "An operand names a label, variable, parameter or function that is not declared. Labels may \
      be used before they are defined but must be defined somewhere in the same function; \
      variables and parameters must be declared in an enclosing scope or at module level."),
    (BAD_REGISTER_TYPE, "invalid register type",
     "Registers (`.reg`) may have the types `.pred`, `.b8`-`.b128`, `.u8`-`.u64`, \
      `.s8`-`.s64`, `.f16`, `.f16x2`, `.f32` and `.f64`. Types such as `.bf16`, `.bf16x2`, \
      `.tf32` or `.e4m3` describe how an instruction interprets bits and are not register \
      types: declare the register with the bit type of the same size (`.b16` for `.bf16`, \
      `.b32` for `.bf16x2` and `.tf32`)."),
    (WRONG_KIND, "wrong kind of name",
     "A name is used where a different kind of entity is required: for example a label or \
      function name as an arithmetic operand, or a memory variable where a register is required. \
      Load a variable's value with `ld` or take its address with `mov`."),
    (UNKNOWN_OPCODE, "unknown instruction",
     "The opcode is not a PTX instruction. The help line suggests the nearest known opcode. \
      `ptxvm doc --list` lists every instruction ptxvm knows."),
    (UNKNOWN_MODIFIER, "unknown modifier",
     "A dotted modifier is not accepted by any form of this instruction (for example `ld.foo`, or \
      a type the instruction does not have). The help line suggests the closest modifier of the \
      instruction; `ptxvm doc OPCODE` shows its forms."),
    (OPERAND_COUNT, "wrong number of operands",
     "The instruction has a fixed list of operands (`add.s32 d, a, b;` has three). Some operands \
      are optional; the message says how many this form accepts. A memory instruction with \
      `.L2::cache_hint` takes a 64-bit cache-policy operand last (`ld.global.L2::cache_hint.b32 \
      d, [a], policy;`), and one without the modifier takes none: the two go together."),
    (OPERAND_TYPE, "operand type does not match the instruction type",
     "An operand's type must agree with the instruction's type modifier: bit-size types (`.bN`) \
      agree with any type of the same size; signed and unsigned integers agree when they have \
      the same size; floating-point types must match exactly (or be a bit-size register of the \
      same size). `ld`, `st` and `cvt` relax the size rule for bit and integer types: a register \
      wider than the instruction type may receive or supply the value (`ld.global.u8` into a \
      `.u32` register). Use a register of a suitable type or convert with `cvt`/`mov.bN`."),
    (PREDICATE_MISUSE, "predicate misuse",
     "Predicate registers (`.pred`) hold one bit and are only legal where the instruction has a \
      predicate operand (the destination of `setp`, the selector of `selp`, the operands of \
      `and.pred` …). There is no direct conversion: use `selp.u32 %r, 1, 0, %p` to get an \
      integer from a predicate and `setp.ne.u32 %p, %r, 0` for the reverse."),
    (IMMEDIATE_KIND, "immediate of the wrong kind",
     "ptxas does not convert integer literals to floating point: `mov.f32 %f1, 1;` is rejected. \
      Write floating-point constants as `1.0`, or exactly as `0f3F800000` (single) or \
      `0d3FF0000000000000` (double). Conversely a floating-point literal is not an integer \
      operand."),
    (VECTOR_WIDTH, "vector width mismatch",
     "A vector operand `{a, b, c, d}` must have as many elements as the `.v2`/`.v4`/`.v8` \
      modifier says, and a `.vN` instruction needs a vector operand (a scalar operand needs no \
      `.vN`)."),
    (STATE_SPACE, "state space not allowed",
     "The instruction cannot use this state space: `.const` (and `.tex`) memory is read-only, so \
      `st.const` is illegal; `atom`/`red` operate on `.global` and `.shared` only."),
    (CVT_ROUNDING, "rounding modifier required",
     "`cvt` needs a rounding modifier when the conversion can round: float-to-integer \
      conversions take an integer rounding (`.rni`, `.rzi`, `.rmi`, `.rpi`; C casts use `.rzi`); \
      integer-to-float conversions and narrowing float-to-float conversions take a \
      floating-point rounding (`.rn`, `.rz`, `.rm`, `.rp`). `mad.f64` always takes a rounding \
      modifier, and so does `mad.f32` from sm_20 on (`mad.rn.f32` is `fma.rn.f32`)."),
    (MISSING_TYPE, "missing type modifier",
     "Typed instructions must name their operand type as a suffix (`add.s32`, `mov.b64`)."),
    (OPERAND_SHAPE, "operand of the wrong shape",
     "The operand is not of the form the instruction expects: `ld` and `st` take an address in \
      brackets (`[%rd1+8]`), destinations must be registers (or `_` where a sink is allowed), \
      branch targets are labels, and special registers (`%tid.x`, `%laneid`) are operands of \
      `mov` and `cvt` only: read one into a register first (`mov.u32 %r1, %tid.x;`)."),
    (MODIFIER_COMBINATION, "modifier not allowed with the others",
     "Each modifier is known to the instruction, but not in this combination: `.ftz` and `.sat` \
      exist for `add.f32` but not for `add.f64`, `.ftz` not for integer types, `add.sat` only \
      with `.s32`; `setp` takes `.ftz` only with `.f32`, `.f16` and `.f16x2`. `cvt` takes the \
      rounding its conversion needs and no other: none between integers or when widening a \
      float, `.rni`/`.rzi`/`.rmi`/`.rpi` from float to integer and between floats of one size, \
      `.rn`/`.rz`/`.rm`/`.rp` from integer to float and when narrowing a float; its `.ftz` \
      needs an `.f32` source or destination. The primary label points at the modifier to drop \
      and the help line shows the forms without it; `ptxvm doc OPCODE` lists all forms."),
    (VERSION_DIRECTIVE, "missing or misplaced .version",
     "Every PTX module starts with `.version MAJOR.MINOR` (comments aside), followed by \
      `.target`. The version decides which instructions and targets may be used."),
    (TARGET_DIRECTIVE, "missing or misplaced .target",
     "`.target sm_XX` must follow `.version` directly and appear once. `--target` on the \
      command line overrides the module's target."),
    (UNKNOWN_TARGET, "unknown target",
     "The target is not a known architecture (`sm_50` … `sm_120a`, `compute_XX`) or target \
      option (`texmode_unified`, `texmode_independent`, `debug`, `map_f64_to_f32`)."),
    (TARGET_NEEDS_VERSION, "target needs a newer PTX version",
     "Each architecture was introduced with a PTX ISA version: sm_70 with 6.0, sm_75 with 6.3, \
      sm_80 with 7.0, sm_90 with 7.8, sm_90a with 8.0, sm_100 with 8.6. Raise `.version` or \
      choose an older target."),
    (ADDRESS_SIZE, "invalid .address_size",
     "`.address_size` is 32 or 64, appears at most once, and comes after `.target` and before \
      any other declaration."),
    (NEEDS_VERSION, "feature needs a newer PTX version",
     "The instruction, or one of its modifiers, was introduced in a later PTX ISA version than the \
      module's `.version`. Raise `.version` to at least the version named in the message (the \
      target must also be supported by that version)."),
    (NEEDS_TARGET, "feature needs a newer target",
     "The instruction, or one of its modifiers, needs a newer GPU architecture than the module's \
      `.target` (or `--target`). Raise the target or use an alternative instruction; targets \
      with an `a` suffix (`sm_90a`) are required for architecture-specific features."),
    (UNKNOWN_VERSION, "unknown PTX version",
     "The `.version` is not a PTX ISA version (1.0 to 9.x)."),
    (SHFL_WITHOUT_SYNC, "shfl without .sync",
     "`shfl` without `.sync` is not supported on sm_70 and later targets from PTX ISA 6.4: use \
      `shfl.sync.MODE.b32 d, a, b, c, membermask;` with a member mask (`0xffffffff` for the full \
      warp)."),
    (CONST_BANK, "constant bank overflow",
     "A module's `.const` variables share one 64 KiB (0x10000 bytes) constant bank, as ptxas \
      lays them out: every `.const` variable of the file, at module scope or in a function, in \
      declaration order, each at its alignment. The error points at the variable that passes \
      the end of the bank (ptxas: \"File uses too much global constant data\"). Keep large tables \
      in `.global` memory and pass a pointer."),
    (PARAM_SPACE, "kernel parameter space overflow",
     "A kernel's parameters, laid out in order each at its alignment, may take at most 32764 \
      bytes (0x7ffc) from PTX ISA 8.1 on and 4352 bytes (0x1100) before it, as ptxas enforces \
      (\"Entry function uses too much parameter space\"). Pass large data through a pointer to \
      global memory."),
    (UNDECLARED_FUNCTION, "call to an undeclared function",
     "A direct `call` names a function that is not declared in the module. Declare it before the \
      call (`.extern .func (.param .b32 r) f(.param .b32 a);`) or define it; an indirect call \
      through a register needs a `.callprototype` or `.calltargets` operand."),
    (CALL_ARG_COUNT, "wrong number of call arguments",
     "A `call` must pass exactly as many arguments as the callee (or prototype) declares \
      parameters."),
    (CALL_RET_COUNT, "wrong number of call results",
     "A `call` must list as many return parameters as the callee declares: none for a function \
      without a return list, one `(r)` for `.func (.param .b32 r) f(...)`."),
    (BRANCH_TARGET, "branch target is not a label",
     "`bra` takes a label defined in the same function; `brx.idx` takes a register index and a \
      `.branchtargets` list."),
    (CALL_SHAPE, "malformed call",
     "A call is `call{.uni} (results), f, (arguments){, prototype};` where the result and \
      argument lists may be left out; the callee is a function name or, for an indirect call, a \
      register, and an indirect call ends with the label of a `.callprototype` (whose \
      parameter lists give the signature) or `.calltargets` list (every function of which must \
      fit the call) declared in the same function."),
    (CALL_ARG_TYPE, "call argument does not match the parameter",
     "Each argument of a `call` must fit the callee's (or the prototype's) parameter in its \
      position. A `.param` variable passed for a scalar parameter needs a compatible type under \
      the operand-type rules (`.bN` matches any type of N bits, `.u32` and `.s32` match each \
      other, `.f32` only `.f32` or `.b32`) and the same alignment (the natural one unless \
      `.align` says otherwise). A register needs only the parameter's size, and predicates go \
      only to predicates. An array parameter (`.param .align 8 .b8 p[16]`) takes a `.param` \
      array of the same byte size and alignment, never a register or constant. Integer \
      constants cannot be passed to floating-point parameters, nor floating-point constants to \
      integer ones. Variables of other state spaces (`.global`, `.shared`, `.local`) and the \
      calling function's own `.param` parameters cannot be passed: load the value into a \
      register first. The secondary label shows the parameter's declaration."),
    (CALL_RET_TYPE, "call result does not match the return parameter",
     "Each result of a `call` receives the callee's (or the prototype's) return parameter in its \
      position, under the same rules as arguments: a `.param` variable of a compatible type \
      and the same alignment, or a register of the same size (`call (%r1), f, (a);` needs a \
      32-bit register when `f` returns `.param .b32`); array return parameters need a `.param` \
      array of the same size and alignment."),
    (SHFL_DEPRECATED, "deprecated shfl without .sync",
     "`shfl` without `.sync` is deprecated since PTX ISA 6.0 and is rejected on sm_70 and later \
      from PTX 6.4. Use `shfl.sync` with a member mask."),
    (DEPRECATED_DIRECTIVE, "deprecated directive",
     "The directive is deprecated: `.maxnctapersm` was replaced by `.minnctapersm` in PTX ISA 2.1 \
      (ptxas still accepts it)."),
];
