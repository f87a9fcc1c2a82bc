//! PTX instruction semantics as pure scalar functions, one module per chapter of the PTX ISA.
//!
//! Every function here computes what one lane of one instruction produces, from operand values
//! and the instruction's modifiers, and nothing else: no allocation, no state, no panics on any
//! input. Modifiers are passed as plain enums and `bool`s so that a caller that knows them
//! statically (the bytecode compiler, constant folding) gets the branches folded away.
//!
//! The crate sits below the interpreter (`ptx-interp` re-exports it as `ptx_interp::semantics`)
//! and knows nothing of syntax, IR or execution, so that a later JIT and constant folding in the
//! checker or the IR compute exactly what the interpreter computes. The functions are
//! `#[inline]` (or generic): they are called per lane in the interpreter's handlers, across this
//! crate boundary, and must inline there as they did when they were a module of `ptx-interp`.
//!
//! | module | ISA chapter |
//! |---|---|
//! | [`int`] | integer arithmetic, extended-precision (carry chain) arithmetic |
//! | [`logic`] | logic and shift, bit-field and bit-scan instructions, `prmt` |
//! | [`float`] | `.f32`/`.f64` floating point, every rounding mode, `.ftz`, `.sat`, `.approx` |
//! | [`half`] | `.f16`/`.bf16` and their packed `x2` forms |
//! | [`cmp`] | comparison operators, `set`/`setp`/`selp`/`slct` |
//! | [`cvt`] | `cvt` and `cvt.pack` between every integer and floating-point type |
//! | [`video`] | the SIMD video instructions (`vabsdiff4`) |
//! | [`matrix`] | warp-level matrix multiply-accumulate (`mma`): fragment layouts and numerics |
//! | [`mbarrier`] | `mbarrier` objects and the reductions of `cp.reduce.async.bulk` |
//! | [`fp`] | the shared soft-float core: formats, decoding, correctly rounded packing |
//!
//! NaN policy (the ISA leaves single-precision NaN bits unspecified): arithmetic on `.f32`,
//! `.f16`, `.bf16` returns the canonical NaN (all exponent and fraction bits set, sign clear:
//! `0x7FFF_FFFF`, `0x7FFF`) which is what NVIDIA hardware produces; `.f64` arithmetic keeps the
//! payload of the first NaN operand (quieted), as the ISA says double precision supports
//! payloads, and an invalid operation on non-NaN `.f64` operands gives [`float::CANONICAL_NAN_F64`].

pub mod cmp;
pub mod cvt;
pub mod float;
pub mod fp;
pub mod half;
pub mod int;
pub mod logic;
pub mod matrix;
pub mod mbarrier;
pub mod mma_kind;
pub mod tensormap;
pub mod video;

/// Floating-point rounding modifier (`.rn .rz .rm .rp`, and `.rna` where `cvt` allows it).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// `.rn`: to nearest, ties to even.
    Rn,
    /// `.rz`: toward zero.
    Rz,
    /// `.rm`: toward negative infinity.
    Rm,
    /// `.rp`: toward positive infinity.
    Rp,
    /// `.rna`: to nearest, ties away from zero (`cvt` to `.tf32` only).
    Rna,
}

/// Integer rounding modifier of `cvt` (`.rni .rzi .rmi .rpi`): round a float to an integral value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntRounding {
    /// `.rni`: to nearest integer, ties to even.
    Rni,
    /// `.rzi`: toward zero.
    Rzi,
    /// `.rmi`: toward negative infinity.
    Rmi,
    /// `.rpi`: toward positive infinity.
    Rpi,
}

/// The `.clamp` / `.wrap` mode of `shf`, `bmsk` and `szext`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClampMode {
    /// `.clamp`: amounts past the width are clamped.
    Clamp,
    /// `.wrap`: amounts are taken modulo 32.
    Wrap,
}

impl Rounding {
    #[inline]
    pub(crate) fn apfloat(self) -> rustc_apfloat::Round {
        use rustc_apfloat::Round;
        match self {
            Rounding::Rn => Round::NearestTiesToEven,
            Rounding::Rz => Round::TowardZero,
            Rounding::Rm => Round::TowardNegative,
            Rounding::Rp => Round::TowardPositive,
            Rounding::Rna => Round::NearestTiesToAway,
        }
    }
}
