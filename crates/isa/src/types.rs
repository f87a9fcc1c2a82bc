//! Fundamental types (`.u32`, `.f16x2`, `.e4m3`, ...) and state spaces (`.global`, ...).

use std::fmt;

/// The broad kind of a fundamental type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// Untyped bits: `.b8` .. `.b128`.
    Bit,
    /// Unsigned integers: `.u8` .. `.u64`, `.u16x2`.
    Unsigned,
    /// Signed integers: `.s8` .. `.s64`, `.s16x2`.
    Signed,
    /// Floating point, including the packed and 8/6/4-bit formats.
    Float,
    /// Predicates: `.pred`.
    Pred,
}

macro_rules! scalar_types {
    ($($(#[$doc:meta])* $name:ident = $suffix:literal, $bits:literal, $kind:ident;)*) => {
        /// A PTX fundamental type, as written in instruction suffixes and declarations.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ScalarType {
            $($(#[$doc])* $name,)*
        }

        impl ScalarType {
            /// Every fundamental type.
            pub const ALL: &'static [ScalarType] = &[$(ScalarType::$name,)*];

            /// The suffix with its dot: `.u32`.
            pub fn suffix(self) -> &'static str {
                match self { $(ScalarType::$name => $suffix,)* }
            }

            /// The type of a suffix written with its dot (`.u32`): one `match`, as the checker
            /// asks it of every modifier of every instruction.
            fn from_dotted(text: &str) -> Option<ScalarType> {
                match text { $($suffix => Some(ScalarType::$name),)* _ => None }
            }

            /// Size of a value in bits (a `.pred` counts as 1).
            pub fn size_bits(self) -> u32 {
                match self { $(ScalarType::$name => $bits,)* }
            }

            /// The kind of type: bits, unsigned, signed, float or predicate.
            pub fn kind(self) -> TypeKind {
                match self { $(ScalarType::$name => TypeKind::$kind,)* }
            }
        }
    };
}

scalar_types! {
    /// `.b8`
    B8 = ".b8", 8, Bit;
    /// `.b16`
    B16 = ".b16", 16, Bit;
    /// `.b32`
    B32 = ".b32", 32, Bit;
    /// `.b64`
    B64 = ".b64", 64, Bit;
    /// `.b128`
    B128 = ".b128", 128, Bit;
    /// `.u2` (sub-byte, `cvt.pack` only)
    U2 = ".u2", 2, Unsigned;
    /// `.u4` (sub-byte)
    U4 = ".u4", 4, Unsigned;
    /// `.u8`
    U8 = ".u8", 8, Unsigned;
    /// `.u16`
    U16 = ".u16", 16, Unsigned;
    /// `.u32`
    U32 = ".u32", 32, Unsigned;
    /// `.u64`
    U64 = ".u64", 64, Unsigned;
    /// `.u16x2`: two packed u16
    U16x2 = ".u16x2", 32, Unsigned;
    /// `.s2` (sub-byte, `cvt.pack` only)
    S2 = ".s2", 2, Signed;
    /// `.s4` (sub-byte)
    S4 = ".s4", 4, Signed;
    /// `.s8`
    S8 = ".s8", 8, Signed;
    /// `.s16`
    S16 = ".s16", 16, Signed;
    /// `.s32`
    S32 = ".s32", 32, Signed;
    /// `.s64`
    S64 = ".s64", 64, Signed;
    /// `.s16x2`: two packed s16
    S16x2 = ".s16x2", 32, Signed;
    /// `.f16`: IEEE half precision
    F16 = ".f16", 16, Float;
    /// `.f16x2`: two packed f16
    F16x2 = ".f16x2", 32, Float;
    /// `.bf16`: bfloat16
    Bf16 = ".bf16", 16, Float;
    /// `.bf16x2`: two packed bf16
    Bf16x2 = ".bf16x2", 32, Float;
    /// `.tf32`: 19-bit tensor float held in 32 bits
    Tf32 = ".tf32", 32, Float;
    /// `.f32`
    F32 = ".f32", 32, Float;
    /// `.f64`
    F64 = ".f64", 64, Float;
    /// `.e4m3`: 8-bit float, 4 exponent bits
    E4m3 = ".e4m3", 8, Float;
    /// `.e5m2`: 8-bit float, 5 exponent bits
    E5m2 = ".e5m2", 8, Float;
    /// `.e4m3x2`: two packed e4m3
    E4m3x2 = ".e4m3x2", 16, Float;
    /// `.e5m2x2`: two packed e5m2
    E5m2x2 = ".e5m2x2", 16, Float;
    /// `.e2m1`: 4-bit float
    E2m1 = ".e2m1", 4, Float;
    /// `.e2m1x2`: two packed e2m1 in a byte
    E2m1x2 = ".e2m1x2", 8, Float;
    /// `.e3m2`: 6-bit float
    E3m2 = ".e3m2", 6, Float;
    /// `.e3m2x2`: two e3m2, one per byte
    E3m2x2 = ".e3m2x2", 16, Float;
    /// `.e2m3`: 6-bit float
    E2m3 = ".e2m3", 6, Float;
    /// `.e2m3x2`: two e2m3, one per byte
    E2m3x2 = ".e2m3x2", 16, Float;
    /// `.ue8m0`: 8-bit unsigned exponent-only scale
    Ue8m0 = ".ue8m0", 8, Float;
    /// `.ue8m0x2`: two packed ue8m0
    Ue8m0x2 = ".ue8m0x2", 16, Float;
    /// `.pred`: a predicate
    Pred = ".pred", 1, Pred;
}

impl ScalarType {
    /// Parses a suffix such as `.u32` (the leading dot is optional).
    pub fn from_suffix(text: &str) -> Option<ScalarType> {
        if text.starts_with('.') {
            return ScalarType::from_dotted(text);
        }
        let t = text;
        ScalarType::ALL
            .iter()
            .copied()
            .find(|ty| &ty.suffix()[1..] == t)
    }

    /// Number of packed elements: 2 for `.f16x2`, `.u16x2`, `.e4m3x2`..., else 1.
    pub fn lanes(self) -> u32 {
        if self.suffix().ends_with("x2") {
            2
        } else {
            1
        }
    }

    /// Whether this is one of the integer kinds (unsigned or signed).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), TypeKind::Unsigned | TypeKind::Signed)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}

/// A PTX state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    /// `.reg`: registers.
    Reg,
    /// `.sreg`: special (read-only, predefined) registers.
    Sreg,
    /// `.const`: constant banks.
    Const,
    /// `.global`: device memory.
    Global,
    /// `.local`: per-thread memory.
    Local,
    /// `.param`: kernel and function parameters.
    Param,
    /// `.shared`: per-CTA shared memory (same as `.shared::cta`).
    Shared,
    /// `.shared::cta`: shared memory of the executing CTA.
    SharedCta,
    /// `.shared::cluster`: shared memory of any CTA in the cluster.
    SharedCluster,
    /// `.tex`: global texture memory (deprecated).
    Tex,
}

impl StateSpace {
    /// Every state space.
    pub const ALL: &'static [StateSpace] = &[
        StateSpace::Reg,
        StateSpace::Sreg,
        StateSpace::Const,
        StateSpace::Global,
        StateSpace::Local,
        StateSpace::Param,
        StateSpace::Shared,
        StateSpace::SharedCta,
        StateSpace::SharedCluster,
        StateSpace::Tex,
    ];

    /// The spelling with its dot: `.shared::cta`.
    pub fn suffix(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg",
            StateSpace::Sreg => ".sreg",
            StateSpace::Const => ".const",
            StateSpace::Global => ".global",
            StateSpace::Local => ".local",
            StateSpace::Param => ".param",
            StateSpace::Shared => ".shared",
            StateSpace::SharedCta => ".shared::cta",
            StateSpace::SharedCluster => ".shared::cluster",
            StateSpace::Tex => ".tex",
        }
    }

    /// Parses `.global`, `.shared::cluster`, ... (the leading dot is optional).
    pub fn from_suffix(text: &str) -> Option<StateSpace> {
        let t = text.strip_prefix('.').unwrap_or(text);
        StateSpace::ALL
            .iter()
            .copied()
            .find(|s| &s.suffix()[1..] == t)
    }

    /// Whether the space is addressable memory (everything except registers).
    pub fn is_memory(self) -> bool {
        !matches!(self, StateSpace::Reg | StateSpace::Sreg)
    }
}

impl fmt::Display for StateSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_with_sizes_and_kinds() {
        let cases = [
            (".b8", 8, TypeKind::Bit),
            (".b128", 128, TypeKind::Bit),
            (".u32", 32, TypeKind::Unsigned),
            (".s64", 64, TypeKind::Signed),
            (".u16x2", 32, TypeKind::Unsigned),
            (".s16x2", 32, TypeKind::Signed),
            (".f16", 16, TypeKind::Float),
            (".f16x2", 32, TypeKind::Float),
            (".bf16x2", 32, TypeKind::Float),
            (".tf32", 32, TypeKind::Float),
            (".f64", 64, TypeKind::Float),
            (".e4m3", 8, TypeKind::Float),
            (".e5m2x2", 16, TypeKind::Float),
            (".e2m1x2", 8, TypeKind::Float),
            (".e3m2x2", 16, TypeKind::Float),
            (".e2m3x2", 16, TypeKind::Float),
            (".ue8m0x2", 16, TypeKind::Float),
            (".pred", 1, TypeKind::Pred),
        ];
        for (s, bits, kind) in cases {
            let ty = ScalarType::from_suffix(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(ty.size_bits(), bits, "{s}");
            assert_eq!(ty.kind(), kind, "{s}");
            assert_eq!(ty.to_string(), s);
        }
        assert_eq!(ScalarType::from_suffix("u8"), Some(ScalarType::U8));
        assert_eq!(ScalarType::from_suffix(".u128"), None);
        assert_eq!(
            ScalarType::from_suffix(".f16x2").map(ScalarType::lanes),
            Some(2)
        );
    }

    #[test]
    fn state_spaces_parse() {
        for &s in StateSpace::ALL {
            assert_eq!(StateSpace::from_suffix(s.suffix()), Some(s));
        }
        assert_eq!(
            StateSpace::from_suffix(".shared::cluster"),
            Some(StateSpace::SharedCluster)
        );
        assert_eq!(StateSpace::from_suffix(".shared::gpu"), None);
        assert!(!StateSpace::Reg.is_memory());
    }
}
