//! The one registry of diagnostic codes of ptxvm: every code any stage reports, with a title
//! and an explanation paragraph for `ptxvm explain`.
//!
//! Codes are defined here and nowhere else (a test scans the workspace for `Code("` literals
//! outside this file). Ranges: `E00xx` syntax, `E01xx`-`E04xx` and `W03xx` the checker (names,
//! instructions, module header, calls), `E05xx` lowering and loading, `E06xx` kernel faults and
//! launches. To add a code: add one entry to the stage's block below (constant name, code,
//! title, paragraph); the stage's crate sees it through its own `codes` module, which
//! re-exports this block, and `ptxvm explain` and the registry test pick it up.

use crate::Code;

/// Defines a stage's codes: one `pub const` per entry and the stage's `EXPLANATIONS` table.
macro_rules! codes {
    ($($(#[$m:meta])* $name:ident = $code:literal, $title:literal, $text:literal;)*) => {
        use crate::Code;
        $($(#[$m])* pub const $name: Code = Code($code);)*
        /// Every code of this stage with its title and explanation paragraph.
        pub const EXPLANATIONS: &[(Code, &str, &str)] = &[$(($name, $title, $text)),*];
    };
}

/// Lexer and parser (`E00xx`).
pub mod syntax {
    codes! {
        /// A character that starts no PTX token.
        INVALID_CHARACTER = "E0001", "invalid character",
        "The input contains a character that begins no PTX token. PTX source is ASCII: identifiers, \
        dotted directives and modifiers, numbers, strings, punctuation and comments. Typographic \
        quotes (“ ”), stray backticks and control characters often come from copying text out of \
        documents. Remove or replace the character.";
        /// `/*` without `*/`.
        UNTERMINATED_COMMENT = "E0002", "unterminated block comment",
        "A `/*` comment runs to the end of the file without its closing `*/`. PTX block comments do \
        not nest. Close the comment.";
        /// A string without its closing quote.
        UNTERMINATED_STRING = "E0003", "unterminated string",
        "A string literal (as in `.file 1 \"a.cu\"` or `.pragma \"nounroll\";`) has no closing \
        quote on the same line. Strings cannot span lines.";
        /// A malformed number literal.
        BAD_NUMBER = "E0004", "invalid number literal",
        "Integer literals are decimal (`42`), hexadecimal (`0x2A`), octal (`052`) or binary \
        (`0b101010`), optionally followed by `U`. Exact floats are `0f` followed by exactly 8 hex \
        digits (single precision) or `0d` followed by exactly 16 (double precision); decimal floats \
        have a point or an exponent (`1.5`, `1e-3`). Letters glued to a number (`12abc`) make the \
        whole token invalid.";
        /// An integer literal over 64 bits.
        NUMBER_OVERFLOW = "E0005", "integer literal too large",
        "PTX integer constants are 64 bits wide; a literal above 18446744073709551615 cannot be \
        represented.";
        /// Something other than what the grammar allows here.
        EXPECTED = "E0010", "unexpected token",
        "The parser found a token the PTX grammar does not allow at this point, such as a missing \
        `;` after an instruction, a missing operand after a comma, or an unclosed `[`. The message \
        says what was expected. The parser skips to the end of the statement and carries on, so \
        later errors are reported too.";
        /// A `{` never closed.
        UNCLOSED_BRACE = "E0011", "unclosed brace",
        "A `{` opening a function body, a nested scope or a section is never closed before the end \
        of the file. The label points at the innermost unclosed `{`.";
        /// A `}` with no `{`.
        UNMATCHED_BRACE = "E0012", "unmatched closing brace",
        "A `}` appears at module level where no `{` is open; usually a function body was closed \
        twice.";
        /// A directive unknown or out of place.
        UNKNOWN_DIRECTIVE = "E0013", "unknown or misplaced directive",
        "The dotted word is not a directive allowed here. Module level allows `.version`, `.target`, \
        `.address_size`, `.file`, `.section`, `.pragma`, `.alias`, variable declarations and \
        `.entry`/`.func`; function headers allow the performance-tuning directives; bodies allow \
        declarations, `.loc`, `.pragma` and labelled `.callprototype`, `.calltargets` and \
        `.branchtargets`.";
        /// An instruction outside any function body.
        OUTSIDE_FUNCTION = "E0014", "instruction outside a function",
        "Instructions may only appear inside the body of an `.entry` or `.func`. A missing `{` or an \
        extra `}` before this line can also cause this.";
        /// A malformed variable declaration.
        BAD_DECLARATION = "E0015", "malformed declaration",
        "A variable declaration is `SPACE [.align N] [.vN] TYPE name[<count>][dims] [= init]`, e.g. \
        `.reg .b32 %r<4>;` or `.shared .align 16 .b8 buf[1024];`. The type is missing or a second \
        type or unknown attribute follows it.";
        /// A lone `;`.
        EMPTY_STATEMENT = "E0016", "empty statement",
        "A `;` with nothing before it. PTX statements are directives or instructions; remove the \
        extra `;`.";
        /// Nesting beyond the parser's limit.
        TOO_DEEP = "E0017", "nesting too deep",
        "Expressions, vector operands and initializers may nest at most 256 levels. (Scopes `{ }` in \
        bodies have no limit.)";
        /// Parsing stopped after too many errors.
        TOO_MANY_ERRORS = "E0018", "too many errors",
        "After 1000 errors the parser stops: the input is probably not PTX at all.";
        /// Input over 4 GiB.
        INPUT_TOO_LARGE = "E0019", "input too large",
        "ptxvm reads PTX modules of up to 4 GiB.";
        /// A file that is not UTF-8 text.
        NOT_UTF8 = "E0020", "not UTF-8 text",
        "PTX is ASCII text; the file contains bytes that are not valid UTF-8. The diagnostic points \
        at the first such byte; other invalid bytes are reported as invalid characters.";
    }
}

/// The checker: names and scopes (`E01xx`), instructions, operands and types (`E02xx`), module
/// header, PTX versions and targets (`E03xx`), calls and control flow (`E04xx`), warnings
/// (`W03xx`).
pub mod check {
    codes! {
        /// A name declared twice in the same scope.
        DUPLICATE = "E0101", "duplicate declaration",
        "A name is declared twice in the same scope: two `.reg` declarations of `%x` in one block, \
        two parameters with the same name, two definitions of a function or of a module variable, \
        or a label defined twice in one function. A nested `{ }` block may redeclare (shadow) an \
        outer name; the same block may not. Parameterized declarations such as `%r<4>` declare \
        `%r0` to `%r3` and clash with those names. Rename or remove one of the declarations; the \
        secondary label points at the earlier one.";
        /// A `%`-register (or other `%` name) that is not declared in any enclosing scope.
        UNDECLARED_REGISTER = "E0102", "undeclared register",
        "A `%` name that is neither declared by a `.reg` (or other) declaration in an enclosing scope \
        nor a special register such as `%tid.x`. Registers must be declared before their first \
        use, in the same block or an enclosing one; `.reg .b32 %r<10>;` declares `%r0` to `%r9` \
        (not `%r10`). The help line names the closest declared name when there is one.";
        /// A label, variable or other symbol that is not declared.
        UNDECLARED_SYMBOL = "E0103", "undeclared label or symbol",
        "An operand names a label, variable, parameter or function that is not declared. Labels may \
        be used before they are defined but must be defined somewhere in the same function; \
        variables and parameters must be declared in an enclosing scope or at module level.";
        /// A type that a register may not have (`.reg .bf16`).
        BAD_REGISTER_TYPE = "E0104", "invalid register type",
        "Registers (`.reg`) may have the types `.pred`, `.b8`-`.b128`, `.u8`-`.u64`, \
        `.s8`-`.s64`, `.f16`, `.f16x2`, `.f32` and `.f64`. Types such as `.bf16`, `.bf16x2`, \
        `.tf32` or `.e4m3` describe how an instruction interprets bits and are not register \
        types: declare the register with the bit type of the same size (`.b16` for `.bf16`, \
        `.b32` for `.bf16x2` and `.tf32`).";
        /// A name used where a different kind of entity is required (a label where a register goes).
        WRONG_KIND = "E0105", "wrong kind of name",
        "A name is used where a different kind of entity is required: for example a label or \
        function name as an arithmetic operand, or a memory variable where a register is required. \
        Load a variable's value with `ld` or take its address with `mov`.";
        /// An opcode that is not a PTX instruction.
        UNKNOWN_OPCODE = "E0201", "unknown instruction",
        "The opcode is not a PTX instruction. The help line suggests the nearest known opcode. \
        `ptxvm doc --list` lists every instruction ptxvm knows.";
        /// A modifier that no form of the instruction accepts.
        UNKNOWN_MODIFIER = "E0202", "unknown modifier",
        "A dotted modifier is not accepted by any form of this instruction (for example `ld.foo`, or \
        a type the instruction does not have). The help line suggests the closest modifier of the \
        instruction; `ptxvm doc OPCODE` shows its forms.";
        /// The wrong number of operands.
        OPERAND_COUNT = "E0203", "wrong number of operands",
        "The instruction has a fixed list of operands (`add.s32 d, a, b;` has three). Some operands \
        are optional; the message says how many this form accepts. A memory instruction with \
        `.L2::cache_hint` takes a 64-bit cache-policy operand last (`ld.global.L2::cache_hint.b32 \
        d, [a], policy;`), and one without the modifier takes none: the two go together.";
        /// A register whose type does not agree with the instruction type.
        OPERAND_TYPE = "E0204", "operand type does not match the instruction type",
        "An operand's type must agree with the instruction's type modifier: bit-size types (`.bN`) \
        agree with any type of the same size; signed and unsigned integers agree when they have \
        the same size; floating-point types must match exactly (or be a bit-size register of the \
        same size). `ld`, `st` and `cvt` relax the size rule for bit and integer types: a register \
        wider than the instruction type may receive or supply the value (`ld.global.u8` into a \
        `.u32` register). Use a register of a suitable type or convert with `cvt`/`mov.bN`.";
        /// A predicate where a value is needed, or a value where a predicate is needed.
        PREDICATE_MISUSE = "E0205", "predicate misuse",
        "Predicate registers (`.pred`) hold one bit and are only legal where the instruction has a \
        predicate operand (the destination of `setp`, the selector of `selp`, the operands of \
        `and.pred` …). There is no direct conversion: use `selp.u32 %r, 1, 0, %p` to get an \
        integer from a predicate and `setp.ne.u32 %p, %r, 0` for the reverse.";
        /// An immediate of the wrong kind (an integer literal for a floating-point operand).
        IMMEDIATE_KIND = "E0206", "immediate of the wrong kind",
        "ptxas does not convert integer literals to floating point: `mov.f32 %f1, 1;` is rejected. \
        Write floating-point constants as `1.0`, or exactly as `0f3F800000` (single) or \
        `0d3FF0000000000000` (double). Conversely a floating-point literal is not an integer \
        operand.";
        /// A vector operand whose width does not match `.v2`/`.v4`.
        VECTOR_WIDTH = "E0207", "vector width mismatch",
        "A vector operand `{a, b, c, d}` must have as many elements as the `.v2`/`.v4`/`.v8` \
        modifier says, and a `.vN` instruction needs a vector operand (a scalar operand needs no \
        `.vN`).";
        /// A state space the instruction cannot use (`st.const`).
        STATE_SPACE = "E0208", "state space not allowed",
        "The instruction cannot use this state space: `.const` (and `.tex`) memory is read-only, so \
        `st.const` is illegal; `atom`/`red` operate on `.global` and `.shared` only.";
        /// A `cvt` that needs a rounding modifier without one.
        CVT_ROUNDING = "E0209", "rounding modifier required",
        "`cvt` needs a rounding modifier when the conversion can round: float-to-integer \
        conversions take an integer rounding (`.rni`, `.rzi`, `.rmi`, `.rpi`; C casts use `.rzi`); \
        integer-to-float conversions and narrowing float-to-float conversions take a \
        floating-point rounding (`.rn`, `.rz`, `.rm`, `.rp`). `mad.f64` always takes a rounding \
        modifier, and so does `mad.f32` from sm_20 on (`mad.rn.f32` is `fma.rn.f32`).";
        /// An instruction that needs a type modifier without one.
        MISSING_TYPE = "E0210", "missing type modifier",
        "Typed instructions must name their operand type as a suffix (`add.s32`, `mov.b64`).";
        /// An operand of the wrong shape (a register where an address goes, …).
        OPERAND_SHAPE = "E0211", "operand of the wrong shape",
        "The operand is not of the form the instruction expects: `ld` and `st` take an address in \
        brackets (`[%rd1+8]`), destinations must be registers (or `_` where a sink is allowed), \
        branch targets are labels, and special registers (`%tid.x`, `%laneid`) are operands of \
        `mov` and `cvt` only: read one into a register first (`mov.u32 %r1, %tid.x;`).";
        /// Modifiers that exist for the instruction but no form takes together (`.ftz` with `.f64`).
        MODIFIER_COMBINATION = "E0212", "modifier not allowed with the others",
        "Each modifier is known to the instruction, but not in this combination: `.ftz` and `.sat` \
        exist for `add.f32` but not for `add.f64`, `.ftz` not for integer types, `add.sat` only \
        with `.s32`; `setp` takes `.ftz` only with `.f32`, `.f16` and `.f16x2`. `cvt` takes the \
        rounding its conversion needs and no other: none between integers or when widening a \
        float, `.rni`/`.rzi`/`.rmi`/`.rpi` from float to integer and between floats of one size, \
        `.rn`/`.rz`/`.rm`/`.rp` from integer to float and when narrowing a float; its `.ftz` \
        needs an `.f32` source or destination. The primary label points at the modifier to drop \
        and the help line shows the forms without it; `ptxvm doc OPCODE` lists all forms.";
        /// An integer constant expression that divides by zero.
        CONST_DIV_ZERO = "E0213", "constant expression divides by zero",
        "An integer constant expression (in an operand, an initializer or an array size) divides \
        or takes a remainder by zero, as in `mov.u32 %r1, 5/0;` or `.global .u32 g = 7 % (2-2);`. \
        PTX gives such an expression no value, and ptxas stops (\"Constant expression has \
        division by zero\"). Fix the divisor.";
        /// A store (or other write) to a kernel's input parameter.
        INPUT_PARAM_WRITE = "E0214", "write to a kernel input parameter",
        "A kernel's `.param` parameters are read-only inputs: `st.param` (or `atom`, `red`) to \
        one of them is illegal (ptxas: \"Illegal to write to function input parameter\"). Load \
        the value into a register with `ld.param` and work on the register, or write to a \
        `.local` copy. Device functions (`.func`) may write their own parameters.";
        /// Instruction type modifiers that no form of the instruction takes together.
        INSTRUCTION_TYPES = "E0215", "unexpected instruction types",
        "Every modifier is known to the instruction, but its type modifiers name a combination the \
        instruction does not have: `dp4a` takes `.u32`/`.s32` pairs only, `mad24` 32-bit \
        integers, `shfl.sync` `.b32`, `sin.approx` `.f32`, `set` a 32-bit destination, \
        `redux.sync.add` 32-bit integers, `szext` `.u32`/`.s32` (ptxas: \"Unexpected \
        instruction types specified\"). `ptxvm doc OPCODE` lists the types of each form.";
        /// A comparison operator that the comparison type does not have.
        COMPARE_TYPE = "E0216", "comparison not defined for the type",
        "`setp`, `set` and the other comparing instructions take the comparison operators of \
        their type: bit types (`.b16`, `.b32`, `.b64`) only `eq` and `ne`; signed types also \
        `lt`, `le`, `gt`, `ge`; unsigned types those and `lo`, `ls`, `hi`, `hs`; floating-point \
        types the ordered six and the unordered forms (`equ`, `ltu`, …, `num`, `nan`). Use a \
        signed or unsigned type to order integers (ptxas: \"Mismatch between instruction type \
        and comparison qualifier\").";
        /// An immediate operand outside the values the instruction takes.
        IMMEDIATE_VALUE = "E0240", "immediate operand out of range",
        "The instruction takes only some values for this immediate operand (ptxas: \"unexpected \
        value '8', expected to be 16\", \"value '13' expected to be in range [0..12]\"): \
        `cp.async.cg` copies 16 bytes (`.ca` 4, 8 or 16); `tensormap.cp_fenceproxy` and \
        `fence.proxy.tensormap::generic.acquire` take the tensor-map size 128; the ordinal of \
        `tensormap.replace` is 0..4 and its `.elemtype`, `.interleave_layout`, `.swizzle_mode`, \
        `.swizzle_atomicity` and `.fill_mode` values are the codes the ISA lists (constants, not \
        registers); `st.bulk` takes a size that is a multiple of 8 and the initial value 0. The \
        selectors of the matrix instructions take the values ptxas 13.5 takes for the shape and \
        types: the sparsity selector of `mma.sp` 0 to 3 for `.m16n8k16` `.f16`/`.bf16` and \
        `.m16n8k8` `.tf32`, 0 or 1 for the larger 16-bit and `.tf32` shapes, `.m16n8k32` 8-bit \
        and `.m16n8k64` 4-bit integers, 0 for the rest (with `.f32` accumulators ptxas also takes \
        2 and 3 for `.m16n8k32` `.f16`); that of `wgmma.mma_async.sp` 0 or 1 for 16-bit types and \
        `.tf32`, 0 for 8-bit types; the block-scale `{byte-id, thread-id}` pairs of `mma` byte-id \
        0 to 3 with `.scale_vec::1X`, 0 or 2 with `2X`, 0 with `4X`, thread-id 0 or 1 for A and \
        0 to 3 for B.";
        /// `.version` missing or not first.
        VERSION_DIRECTIVE = "E0301", "missing or misplaced .version",
        "Every PTX module starts with `.version MAJOR.MINOR` (comments aside), followed by \
        `.target`. The version decides which instructions and targets may be used.";
        /// `.target` missing or misplaced.
        TARGET_DIRECTIVE = "E0302", "missing or misplaced .target",
        "`.target sm_XX` must follow `.version` directly and appear once. `--target` on the \
        command line overrides the module's target.";
        /// A target name that is not known.
        UNKNOWN_TARGET = "E0303", "unknown target",
        "The target is not a known architecture (`sm_50` … `sm_120a`, `compute_XX`) or target \
        option (`texmode_unified`, `texmode_independent`, `debug`, `map_f64_to_f32`).";
        /// The declared `.version` is too old for the target.
        TARGET_NEEDS_VERSION = "E0304", "target needs a newer PTX version",
        "Each architecture was introduced with a PTX ISA version: sm_70 with 6.0, sm_75 with 6.3, \
        sm_80 with 7.0, sm_90 with 7.8, sm_90a with 8.0, sm_100 with 8.6. Raise `.version` or \
        choose an older target.";
        /// `.address_size` other than 32 or 64, or misplaced.
        ADDRESS_SIZE = "E0305", "invalid .address_size",
        "`.address_size` is 32 or 64, appears at most once, and comes after `.target` and before \
        any other declaration.";
        /// An instruction or modifier that needs a newer `.version`.
        NEEDS_VERSION = "E0306", "feature needs a newer PTX version",
        "The instruction, or one of its modifiers, was introduced in a later PTX ISA version than the \
        module's `.version`. Raise `.version` to at least the version named in the message (the \
        target must also be supported by that version).";
        /// An instruction or modifier that needs a newer target.
        NEEDS_TARGET = "E0307", "feature needs a newer target",
        "The instruction, or one of its modifiers, needs a newer GPU architecture than the module's \
        `.target` (or `--target`). Raise the target or use an alternative instruction; targets \
        with an `a` suffix (`sm_90a`) are required for architecture-specific features.";
        /// A PTX version that does not exist.
        UNKNOWN_VERSION = "E0308", "unknown PTX version",
        "The `.version` is not a PTX ISA version (1.0 to 9.x).";
        /// `shfl` without `.sync` on sm_70+ with PTX 6.4+.
        SHFL_WITHOUT_SYNC = "E0309", "shfl without .sync",
        "`shfl` without `.sync` is not supported on sm_70 and later targets from PTX ISA 6.4: use \
        `shfl.sync.MODE.b32 d, a, b, c, membermask;` with a member mask (`0xffffffff` for the full \
        warp).";
        /// `.const` variables that need more than the 64 KiB constant bank.
        CONST_BANK = "E0310", "constant bank overflow",
        "A module's `.const` variables share one 64 KiB (0x10000 bytes) constant bank, as ptxas \
        lays them out: every `.const` variable of the file, at module scope or in a function, in \
        declaration order, each at its alignment. The error points at the variable that passes \
        the end of the bank (ptxas: \"File uses too much global constant data\"). Keep large tables \
        in `.global` memory and pass a pointer.";
        /// Kernel parameters that need more than the parameter space.
        PARAM_SPACE = "E0311", "kernel parameter space overflow",
        "A kernel's parameters, laid out in order each at its alignment, may take at most 32764 \
        bytes (0x7ffc) from PTX ISA 8.1 on and 4352 bytes (0x1100) before it, as ptxas enforces \
        (\"Entry function uses too much parameter space\"). Pass large data through a pointer to \
        global memory.";
        /// A call to a function that is not declared.
        UNDECLARED_FUNCTION = "E0401", "call to an undeclared function",
        "A direct `call` names a function that is not declared in the module. Declare it before the \
        call (`.extern .func (.param .b32 r) f(.param .b32 a);`) or define it; an indirect call \
        through a register needs a `.callprototype` or `.calltargets` operand.";
        /// A call with the wrong number of arguments.
        CALL_ARG_COUNT = "E0402", "wrong number of call arguments",
        "A `call` must pass exactly as many arguments as the callee (or prototype) declares \
        parameters.";
        /// A call with the wrong number of return values.
        CALL_RET_COUNT = "E0403", "wrong number of call results",
        "A `call` must list as many return parameters as the callee declares: none for a function \
        without a return list, one `(r)` for `.func (.param .b32 r) f(...)`.";
        /// A branch target that is not a label.
        BRANCH_TARGET = "E0404", "branch target is not a label",
        "`bra` takes a label defined in the same function; `brx.idx` takes a register index and a \
        `.branchtargets` list.";
        /// A malformed call.
        CALL_SHAPE = "E0405", "malformed call",
        "A call is `call{.uni} (results), f, (arguments){, prototype};` where the result and \
        argument lists may be left out; the callee is a function name or, for an indirect call, a \
        register, and an indirect call ends with the label of a `.callprototype` (whose \
        parameter lists give the signature) or `.calltargets` list (every function of which must \
        fit the call) declared in the same function.";
        /// A call argument whose type, size, alignment or state space does not fit the parameter.
        CALL_ARG_TYPE = "E0406", "call argument does not match the parameter",
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
        register first. The secondary label shows the parameter's declaration.";
        /// A call result whose type, size, alignment or state space does not fit the return parameter.
        CALL_RET_TYPE = "E0407", "call result does not match the return parameter",
        "Each result of a `call` receives the callee's (or the prototype's) return parameter in its \
        position, under the same rules as arguments: a `.param` variable of a compatible type \
        and the same alignment, or a register of the same size (`call (%r1), f, (a);` needs a \
        32-bit register when `f` returns `.param .b32`); array return parameters need a `.param` \
        array of the same size and alignment.";
        /// `shfl` without `.sync`: deprecated.
        SHFL_DEPRECATED = "W0301", "deprecated shfl without .sync",
        "`shfl` without `.sync` is deprecated since PTX ISA 6.0 and is rejected on sm_70 and later \
        from PTX 6.4. Use `shfl.sync` with a member mask.";
        /// A deprecated directive (`.maxnctapersm`).
        DEPRECATED_DIRECTIVE = "W0302", "deprecated directive",
        "The directive is deprecated: `.maxnctapersm` was replaced by `.minnctapersm` in PTX ISA 2.1 \
        (ptxas still accepts it).";
    }
}

/// Lowering to the IR and loading a module (`E05xx`).
pub mod lower {
    codes! {
        /// Lowering could not represent the construct.
        UNSUPPORTED = "E0501", "construct not supported yet",
        "The PTX is valid but ptxvm cannot represent one of its constructs yet, such as vector \
        registers (`.reg .v4 .f32 %v;`), addresses in the initializers of function-local \
        variables, or `.global`/`.const` variables declared inside a function. The module is not \
        loaded. (Instructions ptxvm does not execute, such as texture instructions, do not stop \
        a module from loading: see E0609.)";
        /// A name that lowering cannot resolve (only possible on unchecked input).
        UNRESOLVED = "E0502", "unresolved name",
        "Lowering met a name (a register, label, variable or function) that no declaration \
        provides. The checker reports undeclared names first (E0102, E0103), so this code appears \
        only for input that reached lowering without being checked, or for a construct the \
        checker accepts and lowering cannot resolve yet; please report the latter.";
    }
}

/// Kernel faults and launches (`E06xx`).
pub mod runtime {
    codes! {
        /// An access outside every allocation.
        OUT_OF_BOUNDS = "E0601", "out-of-bounds memory access",
        "A thread loaded, stored or ran an atomic at an address outside the memory it may use: \
        outside every global allocation (kernel argument buffers, module `.global` and `.const` \
        variables), past the block's shared memory, the thread's local memory (its stack) or the \
        kernel's parameters. The message names the space, the address and size of the access, \
        the buffer it starts in (\"starts at byte 248 of argument 0 … and runs 2 bytes past its \
        end\") or the nearest one (\"4 bytes past the end of …\"), and the block, thread and \
        PTX line (and CUDA line, when the PTX has `.loc`). Addresses in the first MiB are \
        reported as null-pointer accesses: nothing is ever allocated there. Check the index \
        computation and the buffer sizes given with `--arg`. The launch stops (exit status 2).";
        /// A misaligned access.
        MISALIGNED = "E0602", "misaligned memory access",
        "Every memory access must be aligned to its size (a `.u32` load to 4 bytes, a `.v4.f32` \
        load to 16), as on the GPU. The message gives the address and the alignment required. \
        Misalignment usually comes from a byte offset added to a pointer, or from a `.b8` array \
        declared without `.align`. The launch stops (exit status 2).";
        /// `trap`.
        TRAP = "E0603", "the kernel executed trap",
        "A thread executed `trap`, which aborts the kernel (CUDA's `__trap()`, also what some \
        compilers emit for unreachable code or failed checks). The message names the thread and \
        the line. The launch stops (exit status 2).";
        /// A barrier deadlock.
        DEADLOCK = "E0604", "barrier deadlock",
        "The threads of a block wait at barriers that can never complete: some threads wait at \
        one barrier while the others have exited or wait at another, so no barrier reaches its \
        thread count. The message lists, per barrier, how many threads wait there out of how \
        many it expects, and how many exited. A typical cause is `__syncthreads()` inside a \
        condition that not every thread takes. The launch stops (exit status 2).";
        /// An aligned barrier reached by part of a warp.
        DIVERGENT_BARRIER = "E0605", "divergent aligned barrier",
        "`bar.sync` and `barrier.sync.aligned` (what `__syncthreads()` compiles to) require every \
        active thread of a warp to execute the same barrier instruction together; here some of \
        the warp's threads reached it while others were on another path. Make the barrier \
        unconditional, or use the non-aligned `barrier.sync` for divergent code. The launch \
        stops (exit status 2).";
        /// The instruction budget ran out.
        BUDGET = "E0606", "instruction budget exhausted",
        "Every launch has a budget of thread instructions (`--max-instructions N`), so that a \
        kernel that loops forever ends. The kernel executed more instructions than the budget. \
        If it is meant to run this long, raise the limit; otherwise look for a loop whose exit \
        condition never holds. The launch stops (exit status 2).";
        /// The wall-clock limit passed.
        TIMEOUT = "E0607", "timeout",
        "Every launch has a wall-clock limit (`--timeout SECONDS`). The kernel ran longer. If it \
        is meant to run this long, raise the limit; otherwise look for a thread that spins \
        waiting for something that never happens (a flag no thread sets, a lock never \
        released). The launch stops (exit status 2).";
        /// A failed device-side `assert`.
        ASSERT = "E0608", "device assertion failed",
        "A thread called `__assertfail` (CUDA's device-side `assert`) with a false condition. \
        The message gives the assertion's text, file, line and function as the program passed \
        them, and the thread. The launch stops (exit status 2).";
        /// An instruction ptxvm cannot execute yet.
        UNSUPPORTED = "E0609", "instruction not supported yet",
        "The kernel's code uses an instruction that ptxvm does not execute yet (texture and \
        surface instructions, `barrier.cluster`, `wgmma`, `cp.async.bulk.tensor`, …; \
        `ptxvm doc --list --coverage` lists what executes). Every module loads, but a kernel whose reachable code \
        (the kernel and every function it may call, directly, indirectly or through a function \
        address) contains such an instruction is refused before it starts, even if no thread \
        would reach the instruction; one diagnostic lists each instruction and its line (exit \
        status 1). The module's other kernels run.";
        /// Other kernel faults (stores to constant memory, bad indirect calls, stack overflow…).
        FAULT = "E0610", "kernel fault",
        "A thread did something the GPU would fault on that has no code of its own: a store to \
        `.const` or kernel-parameter memory, an indirect call through an address that is not a \
        function of the module, a call to a function declared but not defined, or a stack that \
        outgrew its limit. The message says which. The launch stops (exit status 2).";
        /// A launch needs more local or shared memory than a thread or block can have.
        RESOURCES = "E0611", "launch out of resources",
        "The launch needs more local or shared memory than a thread or block can have: a kernel \
        whose `.local` variables (with its non-recursive calls) need more than the per-thread \
        local memory (512 KiB, or the stack size when larger), whose static plus dynamic shared \
        memory passes the per-block limit (227 KiB, sm_90's), or whose register storage or local \
        memory per block passes ptxvm's bounds. A GPU refuses such a launch \
        (cudaErrorLaunchOutOfResources); ptxvm refuses it before allocating anything, pointing at \
        the variable and naming the limit (exit status 1). Raise `--stack-size` or \
        `--shared-limit` (`LaunchOptions::stack_size`, `shared_limit`) to run it anyway.";
        /// A data race on shared memory (`--check race`).
        DATA_RACE = "E0612", "data race on shared memory",
        "Reported by `--check race` (exit status 2; the launch runs to its end). Two threads of a \
        block in different warps accessed the same byte of shared memory, at least one of them \
        writing, with no barrier (`bar.sync`, `__syncthreads()`) between them: on a GPU the result \
        depends on the order the warps happen to run in. Read after write: a thread read what \
        another may or may not have written yet; write after read: a thread overwrote what \
        another may not have read yet; write after write: two threads wrote different values. \
        The message names both accesses (thread, block, PTX line, CUDA line when the PTX has \
        `.loc`, the value written), the shared variable and offset. Atomics (and `.volatile`, \
        `.relaxed`, `.acquire`, `.release` accesses) race with nothing, fences, mbarriers and \
        asynchronous copies order everything before them with everything after, writing the \
        value already there is not reported, and threads of one warp are ordered (ptxvm runs a warp's lanes in lockstep; use `__syncwarp()` for code that \
        relies on it). Add the missing `__syncthreads()` between the write and the read, or \
        use atomics. A tree reduction missing the barrier of one step is the classic case.";
        /// A read of memory nobody wrote (`--check init`).
        UNINITIALIZED = "E0613", "read of uninitialised shared memory",
        "Reported by `--check init` (exit status 2; the launch runs to its end). A thread read (or \
        ran an atomic on) bytes of shared memory that no thread of its block had written in \
        this launch. ptxvm zeroes shared memory, so the kernel may seem to work, but on a GPU \
        shared memory holds whatever the previous block left: the result is garbage. Reported \
        once per instruction, with the thread, block, PTX line, the shared variable and the \
        offset. Typical causes: a tile loaded by fewer threads than it has elements, a \
        reduction reading past the values written, or a missing initialisation of an \
        accumulator. Kernels that fill shared memory with `cp.async`, `stmatrix`, `wmma` or \
        tensor copies are not checked (those writes are not tracked yet).";
        /// A barrier not every thread reaches (`--check sync`).
        BARRIER_DIVERGENCE = "E0614", "barrier not reached by every thread",
        "Reported by `--check sync` (exit status 2; the launch runs to its end). Threads of one \
        block passed an aligned barrier of the whole block (`bar.sync`, `barrier.sync.aligned`, \
        `bar.red`, `__syncthreads()`) at different places: either some threads waited at this barrier while others of the block \
        jumped over it (`if (tid < 16) __syncthreads();` followed by more code), or one \
        generation of a barrier was reached at two different instructions (two \
        `__syncthreads()` in the two arms of an `if`). The CUDA programming guide allows \
        `__syncthreads()` in conditional code only when the condition is the same for the \
        whole block; on a GPU such code may hang or release the barrier early. The message \
        names a thread that arrived and one that skipped (with the branch it took). An early \
        `return` before a barrier is not reported: since Volta, exited threads are not waited \
        for.";
        /// Bad launch arguments.
        BAD_ARGUMENT = "E0620", "bad launch argument",
        "A kernel argument does not fit its parameter: a buffer given for a scalar parameter, a \
        value out of the parameter type's range, or the wrong number of arguments. `--arg` takes \
        one argument per kernel parameter, in order (see `ptxvm run --help`). Nothing runs \
        (exit status 1).";
    }
}

/// Every code of every stage, with its title and explanation.
pub fn all() -> impl Iterator<Item = &'static (Code, &'static str, &'static str)> {
    syntax::EXPLANATIONS
        .iter()
        .chain(check::EXPLANATIONS)
        .chain(lower::EXPLANATIONS)
        .chain(runtime::EXPLANATIONS)
}

/// The title and explanation of `code` (`E0601`, case-insensitive).
pub fn explain(code: &str) -> Option<(Code, &'static str, &'static str)> {
    let want = code.trim().to_ascii_uppercase();
    all().find(|(c, _, _)| c.0 == want).copied()
}
