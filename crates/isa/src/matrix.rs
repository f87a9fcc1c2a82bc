//! Which shape and type combinations of the warp-level matrix instructions exist: `mma` and
//! `mma.sp`/`mma.sp::ordered_metadata` without a `.kind` ([`MMA_FORMS`]), and `wmma`
//! ([`WMMA_FORMS`]). One table for the checker (which refuses what it does not list, as ptxas
//! does) and the interpreter's decoder (which runs what it lists from the ISA).
//!
//! The forms are keyed by the shape `(m, n, k)` and the type suffixes as written (`".f16"`),
//! D, A, B, C in that order. The `mma` rows are ptxas 13.5's verdict on every shape × D/A/B/C
//! combination (`tools/probe-mma-forms.py`; the `mma_forms` test of ptx-check holds the
//! checker to it): the ISA's forms, with D and C of one type wherever the ISA lists `.dtype`
//! and `.ctype` apart (except `.m8n8k4 .f16`), plus a few forms ptxas takes that the ISA does
//! not list ([`FormOrigin::Ptxas`]), which the interpreter refuses. The `wmma` rows are the
//! ISA's; ptxas takes more than those for some shapes, and the checker leaves `wmma` to
//! ptxas.

/// A matrix shape `(m, n, k)`: `.m16n8k16` is `(16, 8, 16)`.
pub type MatrixShape = (u32, u32, u32);

/// `mma` or its sparse form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaVariant {
    /// `mma.sync.aligned`.
    Dense,
    /// `mma.sp.sync.aligned` or `mma.sp::ordered_metadata.sync.aligned`.
    Sparse,
}

impl MmaVariant {
    /// The name as written: `mma` or `mma.sp`.
    pub fn name(self) -> &'static str {
        match self {
            MmaVariant::Dense => "mma",
            MmaVariant::Sparse => "mma.sp",
        }
    }
}

/// Where a form comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormOrigin {
    /// The PTX ISA lists it.
    Isa,
    /// ptxas 13.5 takes it, but the ISA does not list it (so its fragment layout is not
    /// documented either).
    Ptxas,
}

/// What a form needs beyond the instruction's own version and target gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormNeeds {
    /// Nothing more.
    Nothing,
    /// `.sp::ordered_metadata` (ptxas refuses `.sp`: "Illegal modifier '.sp'") on a target of
    /// the sm_120 family (sm_120a, sm_120f, sm_121a, sm_121f).
    OrderedMetadataSm120f,
}

/// A row of forms: every shape of `shapes` with every A of `a`, B of `b` and (D, C) pair of
/// `acc`.
#[derive(Clone, Copy, Debug)]
pub struct MmaForms {
    /// Dense or sparse.
    pub variant: MmaVariant,
    /// The shapes.
    pub shapes: &'static [MatrixShape],
    /// The types of A.
    pub a: &'static [&'static str],
    /// The types of B (with any A of the row).
    pub b: &'static [&'static str],
    /// The (D, C) type pairs.
    pub acc: &'static [(&'static str, &'static str)],
    /// ISA or ptxas only.
    pub origin: FormOrigin,
    /// Further requirements.
    pub needs: FormNeeds,
}

impl MmaForms {
    /// Whether the row has `shape` and the types `[d, a, b, c]`.
    pub fn has(&self, shape: MatrixShape, [d, a, b, c]: [&str; 4]) -> bool {
        self.shapes.contains(&shape)
            && self.a.contains(&a)
            && self.b.contains(&b)
            && self.acc.contains(&(d, c))
    }
}

const F8: &[&str] = &[".e4m3", ".e5m2"];
const I8: &[&str] = &[".s8", ".u8"];
const I4: &[&str] = &[".s4", ".u4"];
const F16_ACC: &[(&str, &str)] = &[(".f16", ".f16"), (".f32", ".f32")];
const F32_ACC: &[(&str, &str)] = &[(".f32", ".f32")];
const S32_ACC: &[(&str, &str)] = &[(".s32", ".s32")];

const fn row(
    variant: MmaVariant,
    shapes: &'static [MatrixShape],
    a: &'static [&'static str],
    b: &'static [&'static str],
    acc: &'static [(&'static str, &'static str)],
) -> MmaForms {
    MmaForms {
        variant,
        shapes,
        a,
        b,
        acc,
        origin: FormOrigin::Isa,
        needs: FormNeeds::Nothing,
    }
}

const fn ptxas_only(r: MmaForms) -> MmaForms {
    MmaForms {
        origin: FormOrigin::Ptxas,
        ..r
    }
}

use MmaVariant::{Dense, Sparse};

/// The forms of `mma` and `mma.sp`/`mma.sp::ordered_metadata` without `.kind` (the `.kind`
/// forms are checked apart). Targets: `.e4m3`/`.e5m2` need sm_89, `.m16n8k4`/`.m16n8k8`/
/// `.m16n8k16` `.f64` sm_90 (the instruction's gates); everything else sm_80 (`.m8n8k4 .f16`
/// sm_70).
pub const MMA_FORMS: &[MmaForms] = &[
    // `.m8n8k4 .f16`: the quad-pair form, the one whose D may be `.f32` with `.f16` C
    row(
        Dense,
        &[(8, 8, 4)],
        &[".f16"],
        &[".f16"],
        &[(".f16", ".f16"), (".f32", ".f16"), (".f32", ".f32")],
    ),
    row(
        Dense,
        &[(16, 8, 8), (16, 8, 16)],
        &[".f16"],
        &[".f16"],
        F16_ACC,
    ),
    row(
        Dense,
        &[(16, 8, 8), (16, 8, 16)],
        &[".bf16"],
        &[".bf16"],
        F32_ACC,
    ),
    row(
        Dense,
        &[(16, 8, 4), (16, 8, 8)],
        &[".tf32"],
        &[".tf32"],
        F32_ACC,
    ),
    row(Dense, &[(16, 8, 16), (16, 8, 32)], F8, F8, F16_ACC),
    row(
        Dense,
        &[(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)],
        &[".f64"],
        &[".f64"],
        &[(".f64", ".f64")],
    ),
    row(
        Dense,
        &[(8, 8, 16), (16, 8, 16), (16, 8, 32)],
        I8,
        I8,
        S32_ACC,
    ),
    row(
        Dense,
        &[(8, 8, 32), (16, 8, 32), (16, 8, 64)],
        I4,
        I4,
        S32_ACC,
    ),
    row(
        Dense,
        &[(8, 8, 128), (16, 8, 128), (16, 8, 256)],
        &[".b1"],
        &[".b1"],
        S32_ACC,
    ),
    // ptxas 13.5 takes these with the operand counts of the ISA's pattern (`.m8n8k4`: eight
    // `.f32` D and C registers, A and B four elements, like `.f16`)
    ptxas_only(row(Dense, &[(16, 8, 16)], &[".tf32"], &[".tf32"], F32_ACC)),
    ptxas_only(row(Dense, &[(8, 8, 4)], &[".bf16"], &[".bf16"], F32_ACC)),
    ptxas_only(row(Dense, &[(8, 8, 4)], &[".tf32"], &[".tf32"], F32_ACC)),
    row(
        Sparse,
        &[(16, 8, 16), (16, 8, 32)],
        &[".f16"],
        &[".f16"],
        F16_ACC,
    ),
    row(
        Sparse,
        &[(16, 8, 16), (16, 8, 32)],
        &[".bf16"],
        &[".bf16"],
        F32_ACC,
    ),
    row(
        Sparse,
        &[(16, 8, 8), (16, 8, 16)],
        &[".tf32"],
        &[".tf32"],
        F32_ACC,
    ),
    row(Sparse, &[(16, 8, 64)], F8, F8, F32_ACC),
    MmaForms {
        needs: FormNeeds::OrderedMetadataSm120f,
        ..ptxas_only(row(Sparse, &[(16, 8, 64)], F8, F8, &[(".f16", ".f16")]))
    },
    row(Sparse, &[(16, 8, 32), (16, 8, 64)], I8, I8, S32_ACC),
    row(Sparse, &[(16, 8, 64), (16, 8, 128)], I4, I4, S32_ACC),
];

/// The row that has the form, if any.
pub fn mma_form(
    variant: MmaVariant,
    shape: MatrixShape,
    types: [&str; 4],
) -> Option<&'static MmaForms> {
    MMA_FORMS
        .iter()
        .find(|r| r.variant == variant && r.has(shape, types))
}

/// The rows of `variant` whose A type is `a`.
pub fn mma_rows_for(variant: MmaVariant, a: &str) -> impl Iterator<Item = &'static MmaForms> + '_ {
    MMA_FORMS
        .iter()
        .filter(move |r| r.variant == variant && r.a.contains(&a))
}

/// The shapes `variant` takes with A of type `a`, in the table's order, without repeats.
pub fn mma_shapes_for(variant: MmaVariant, a: &str) -> Vec<MatrixShape> {
    let mut out = Vec::new();
    for r in mma_rows_for(variant, a) {
        for s in r.shapes {
            if !out.contains(s) {
                out.push(*s);
            }
        }
    }
    out
}

/// The A types of `variant`, in the table's order, without repeats.
pub fn mma_a_types(variant: MmaVariant) -> Vec<&'static str> {
    let mut out = Vec::new();
    for r in MMA_FORMS.iter().filter(|r| r.variant == variant) {
        for a in r.a {
            if !out.contains(a) {
                out.push(*a);
            }
        }
    }
    out
}

/// `.m16n8k16`.
pub fn shape_name((m, n, k): MatrixShape) -> String {
    format!(".m{m}n{n}k{k}")
}

/// The shape a modifier spells: `.m16n8k16` gives `(16, 8, 16)`; `None` for anything else
/// (`.m8n8` without `k` included).
pub fn parse_shape(text: &str) -> Option<MatrixShape> {
    let t = text.strip_prefix(".m")?;
    let (m, rest) = t.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    let num = |s: &str| {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse().ok()
        }
    };
    Some((num(m)?, num(n)?, num(k)?))
}

/// A row of `wmma` forms: multiplicands A and B of type `ab` with the shapes `shapes` and the
/// (D, C) pairs `acc`.
#[derive(Clone, Copy, Debug)]
pub struct WmmaForms {
    /// The shapes.
    pub shapes: &'static [MatrixShape],
    /// The type of A and B.
    pub ab: &'static str,
    /// The (D, C) type pairs.
    pub acc: &'static [(&'static str, &'static str)],
}

const WMMA_STD: &[MatrixShape] = &[(16, 16, 16), (32, 8, 16), (8, 32, 16)];

/// The forms of `wmma` as the ISA lists them (`wmma.mma` with `.f16` multiplicands names only
/// D's and C's types).
pub const WMMA_FORMS: &[WmmaForms] = &[
    WmmaForms {
        shapes: WMMA_STD,
        ab: ".f16",
        acc: &[
            (".f16", ".f16"),
            (".f16", ".f32"),
            (".f32", ".f16"),
            (".f32", ".f32"),
        ],
    },
    WmmaForms {
        shapes: WMMA_STD,
        ab: ".bf16",
        acc: F32_ACC,
    },
    WmmaForms {
        shapes: &[(16, 16, 8)],
        ab: ".tf32",
        acc: F32_ACC,
    },
    WmmaForms {
        shapes: &[(8, 8, 4)],
        ab: ".f64",
        acc: &[(".f64", ".f64")],
    },
    WmmaForms {
        shapes: WMMA_STD,
        ab: ".s8",
        acc: S32_ACC,
    },
    WmmaForms {
        shapes: WMMA_STD,
        ab: ".u8",
        acc: S32_ACC,
    },
    WmmaForms {
        shapes: &[(8, 8, 32)],
        ab: ".s4",
        acc: S32_ACC,
    },
    WmmaForms {
        shapes: &[(8, 8, 32)],
        ab: ".u4",
        acc: S32_ACC,
    },
    WmmaForms {
        shapes: &[(8, 8, 128)],
        ab: ".b1",
        acc: S32_ACC,
    },
];

/// A `wmma` fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WmmaFragment {
    /// `.a`.
    A,
    /// `.b`.
    B,
    /// `.c` or `.d` (the accumulators).
    C,
}

/// Whether `wmma.mma` takes `shape` with the types `[d, a, b, c]`.
pub fn wmma_mma_form(shape: MatrixShape, [d, a, b, c]: [&str; 4]) -> bool {
    a == b
        && WMMA_FORMS
            .iter()
            .any(|r| r.ab == a && r.shapes.contains(&shape) && r.acc.contains(&(d, c)))
}

/// Whether `wmma.load`/`wmma.store` takes fragment `frag` of type `ty` with `shape`: A and B
/// with the multiplicand types of the shape, C and D with its accumulator types.
pub fn wmma_fragment_form(shape: MatrixShape, frag: WmmaFragment, ty: &str) -> bool {
    WMMA_FORMS.iter().any(|r| {
        r.shapes.contains(&shape)
            && match frag {
                WmmaFragment::A | WmmaFragment::B => r.ab == ty,
                WmmaFragment::C => r.acc.iter().any(|&(d, c)| d == ty || c == ty),
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse() {
        assert_eq!(parse_shape(".m16n8k16"), Some((16, 8, 16)));
        assert_eq!(parse_shape(".m8n8"), None);
        assert_eq!(parse_shape(".m16n8k"), None);
        assert_eq!(shape_name((16, 8, 256)), ".m16n8k256");
    }

    #[test]
    fn mma_forms_are_ptxas_verdicts() {
        let f = |v, s, t| mma_form(v, s, t).map(|r| r.origin);
        let isa = Some(FormOrigin::Isa);
        let m8n8k4 = (8, 8, 4);
        assert_eq!(f(Dense, m8n8k4, [".f32", ".f16", ".f16", ".f16"]), isa);
        assert_eq!(f(Dense, m8n8k4, [".f16", ".f16", ".f16", ".f32"]), None);
        // ptxas: "Argument vector size mismatch", the ISA has no `.m16n8k4 .f16`
        assert_eq!(f(Dense, (16, 8, 4), [".f32", ".f16", ".f16", ".f32"]), None);
        // D and C of one type (the ISA lists them apart)
        assert_eq!(
            f(Dense, (16, 8, 16), [".f32", ".e4m3", ".e5m2", ".f32"]),
            isa
        );
        assert_eq!(
            f(Dense, (16, 8, 16), [".f32", ".e4m3", ".e5m2", ".f16"]),
            None
        );
        assert_eq!(f(Dense, (16, 8, 8), [".f32", ".f16", ".f16", ".f16"]), None);
        assert_eq!(
            f(Dense, (16, 8, 16), [".f32", ".tf32", ".tf32", ".f32"]),
            Some(FormOrigin::Ptxas)
        );
        assert_eq!(
            f(Sparse, (16, 8, 8), [".f32", ".f16", ".f16", ".f32"]),
            None
        );
        assert_eq!(
            f(Sparse, (16, 8, 16), [".s32", ".f16", ".f16", ".s32"]),
            None
        );
        assert_eq!(
            f(Sparse, (16, 8, 64), [".f32", ".f16", ".f16", ".f32"]),
            None
        );
        assert_eq!(f(Sparse, (16, 8, 64), [".s32", ".u4", ".s4", ".s32"]), isa);
        let f16_f8 = mma_form(Sparse, (16, 8, 64), [".f16", ".e5m2", ".e4m3", ".f16"]);
        assert_eq!(
            f16_f8.map(|r| r.needs),
            Some(FormNeeds::OrderedMetadataSm120f)
        );
        assert_eq!(
            mma_shapes_for(Sparse, ".s4"),
            vec![(16, 8, 64), (16, 8, 128)]
        );
        assert!(!mma_a_types(Dense).contains(&".f32"));
    }

    #[test]
    fn wmma_forms() {
        let std = (16, 16, 16);
        assert!(wmma_mma_form(std, [".f16", ".f16", ".f16", ".f32"]));
        assert!(!wmma_mma_form(std, [".s32", ".s8", ".u8", ".s32"]));
        assert!(!wmma_mma_form(
            (16, 16, 8),
            [".f32", ".bf16", ".bf16", ".f32"]
        ));
        use WmmaFragment::*;
        assert!(wmma_fragment_form((16, 16, 8), C, ".f32"));
        assert!(!wmma_fragment_form((16, 16, 8), C, ".f16"));
        assert!(wmma_fragment_form((8, 8, 128), C, ".s32"));
        assert!(wmma_fragment_form((8, 8, 4), A, ".f64"));
        assert!(!wmma_fragment_form((8, 8, 4), B, ".f16"));
    }
}
