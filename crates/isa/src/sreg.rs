//! Special registers (`%tid`, `%laneid`, ...) and the directive names.

use crate::{lookup, EntryKind, PtxVersion, ScalarType, TargetReq};

/// A predefined, read-only special register (state space `.sreg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialRegister {
    /// The name with its `%`: `%tid`. For families, the stem: `%envreg`, `%pm`.
    pub name: &'static str,
    /// Type of the register, or of each component of a vector register.
    pub ty: ScalarType,
    /// Components of a vector register (`.x .y .z`); empty for scalars. Vector registers are
    /// `.v4` in the ISA, with the fourth component unused.
    pub components: &'static [&'static str],
    /// For families: how many numbered members there are (`%envreg0..%envreg31` is 32).
    pub count: u32,
    /// For families: text after the number (`_64` in `%pm3_64`).
    pub suffix: &'static str,
}

const XYZ: &[&str] = &["x", "y", "z"];

const fn scalar(name: &'static str, ty: ScalarType) -> SpecialRegister {
    SpecialRegister {
        name,
        ty,
        components: &[],
        count: 0,
        suffix: "",
    }
}

const fn vector(name: &'static str) -> SpecialRegister {
    SpecialRegister {
        name,
        ty: ScalarType::U32,
        components: XYZ,
        count: 0,
        suffix: "",
    }
}

const fn family(
    name: &'static str,
    ty: ScalarType,
    count: u32,
    suffix: &'static str,
) -> SpecialRegister {
    SpecialRegister {
        name,
        ty,
        components: &[],
        count,
        suffix,
    }
}

/// Every special register of the ISA reference.
pub static SPECIAL_REGISTERS: &[SpecialRegister] = &[
    vector("%tid"),
    vector("%ntid"),
    vector("%ctaid"),
    vector("%nctaid"),
    vector("%clusterid"),
    vector("%nclusterid"),
    vector("%cluster_ctaid"),
    vector("%cluster_nctaid"),
    scalar("%cluster_ctarank", ScalarType::U32),
    scalar("%cluster_nctarank", ScalarType::U32),
    scalar("%is_explicit_cluster", ScalarType::Pred),
    scalar("%laneid", ScalarType::U32),
    scalar("%warpid", ScalarType::U32),
    scalar("%nwarpid", ScalarType::U32),
    scalar("%smid", ScalarType::U32),
    scalar("%nsmid", ScalarType::U32),
    scalar("%gridid", ScalarType::U64),
    scalar("%lanemask_eq", ScalarType::U32),
    scalar("%lanemask_le", ScalarType::U32),
    scalar("%lanemask_lt", ScalarType::U32),
    scalar("%lanemask_ge", ScalarType::U32),
    scalar("%lanemask_gt", ScalarType::U32),
    scalar("%clock", ScalarType::U32),
    scalar("%clock_hi", ScalarType::U32),
    scalar("%clock64", ScalarType::U64),
    scalar("%globaltimer", ScalarType::U64),
    scalar("%globaltimer_lo", ScalarType::U32),
    scalar("%globaltimer_hi", ScalarType::U32),
    scalar("%current_graph_exec", ScalarType::U64),
    scalar("%total_smem_size", ScalarType::U32),
    scalar("%aggr_smem_size", ScalarType::U32),
    scalar("%dynamic_smem_size", ScalarType::U32),
    scalar("%reserved_smem_offset_begin", ScalarType::B32),
    scalar("%reserved_smem_offset_end", ScalarType::B32),
    scalar("%reserved_smem_offset_cap", ScalarType::B32),
    family("%reserved_smem_offset_", ScalarType::B32, 2, ""),
    family("%envreg", ScalarType::B32, 32, ""),
    family("%pm", ScalarType::U32, 8, ""),
    family("%pm", ScalarType::U64, 8, "_64"),
];

impl SpecialRegister {
    /// Whether the register is a vector with `.x/.y/.z` components.
    pub fn is_vector(&self) -> bool {
        !self.components.is_empty()
    }

    /// The reference entry that documents this register.
    pub fn entry(&self) -> Option<&'static crate::Entry> {
        let stem = self.name.trim_start_matches('%');
        let key = match (self.count, self.suffix) {
            (0, _) => stem.to_string(),
            (_, s) if !s.is_empty() => format!("{stem}0{s}"),
            _ => format!("{stem}0"),
        };
        lookup(&key)
            .iter()
            .find(|e| e.kind == EntryKind::SpecialRegister)
    }

    /// The PTX version that introduced the register, from the reference.
    pub fn ptx(&self) -> Option<PtxVersion> {
        self.entry().and_then(|e| e.ptx)
    }

    /// The target requirement, from the reference.
    pub fn target(&self) -> TargetReq {
        self.entry().map_or(TargetReq::Unstated, |e| e.target)
    }
}

/// Finds a special register by name: `%tid`, `%tid.x` (a component), `%envreg7`, `%pm3_64`.
pub fn special_register(name: &str) -> Option<&'static SpecialRegister> {
    let (base, component) = match name.split_once('.') {
        Some((b, c)) => (b, Some(c)),
        None => (name, None),
    };
    let base = if base.starts_with('%') {
        base.to_string()
    } else {
        format!("%{base}")
    };
    SPECIAL_REGISTERS.iter().find(|r| {
        let name_ok = if r.count == 0 {
            r.name == base
        } else {
            base.strip_prefix(r.name)
                .and_then(|rest| rest.strip_suffix(r.suffix))
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n < r.count)
        };
        name_ok && component.is_none_or(|c| r.components.contains(&c))
    })
}

/// Every directive name (with its dot), documented in the reference or not: module, linking,
/// function, performance-tuning, debugging and variable-declaration directives.
pub static DIRECTIVES: &[&str] = &[
    ".address_size",
    ".alias",
    ".align",
    ".blocksareclusters",
    ".branchtargets",
    ".callprototype",
    ".calltargets",
    ".common",
    ".const",
    ".entry",
    ".explicitcluster",
    ".extern",
    ".file",
    ".func",
    ".global",
    ".loc",
    ".local",
    ".maxclusterrank",
    ".maxnctapersm",
    ".maxnreg",
    ".maxntid",
    ".minnctapersm",
    ".noreturn",
    ".param",
    ".pragma",
    ".reg",
    ".reqnctapercluster",
    ".reqntid",
    ".section",
    ".shared",
    ".sreg",
    ".target",
    ".tex",
    ".version",
    ".visible",
    ".weak",
];

/// Whether `name` (with its dot) is a directive.
pub fn is_directive(name: &str) -> bool {
    DIRECTIVES.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_registers_resolve() {
        let tid = special_register("%tid").unwrap();
        assert!(tid.is_vector());
        assert_eq!(tid.ty, ScalarType::U32);
        assert!(special_register("%tid.x").is_some());
        assert!(special_register("%tid.w").is_none());
        assert_eq!(special_register("%laneid").unwrap().ty, ScalarType::U32);
        assert!(!special_register("%laneid").unwrap().is_vector());
        assert_eq!(special_register("%clock64").unwrap().ty, ScalarType::U64);
        assert_eq!(special_register("%envreg31").unwrap().count, 32);
        assert!(special_register("%envreg32").is_none());
        assert_eq!(special_register("%pm7").unwrap().ty, ScalarType::U32);
        assert_eq!(special_register("%pm7_64").unwrap().ty, ScalarType::U64);
        assert!(special_register("%pm8").is_none());
        assert!(special_register("%reserved_smem_offset_1").is_some());
        assert!(special_register("%nope").is_none());
    }

    #[test]
    fn every_special_register_has_an_entry() {
        for r in SPECIAL_REGISTERS {
            assert!(r.entry().is_some(), "{}", r.name);
            assert!(r.ptx().is_some(), "{}", r.name);
        }
        assert_eq!(
            special_register("%clock64").unwrap().ptx(),
            Some(PtxVersion::new(2, 0))
        );
    }

    #[test]
    fn directives_sorted_and_cover_the_reference() {
        assert!(DIRECTIVES.windows(2).all(|w| w[0] < w[1]));
        for e in crate::entries() {
            if e.kind == EntryKind::Directive {
                assert!(is_directive(&e.name()), "{}", e.name());
            }
        }
    }
}
