//! PTX ISA versions (`.version 7.8`) and target architectures (`.target sm_90a`).

use std::fmt;
use std::str::FromStr;

/// A PTX ISA version, as written after `.version` (`major.minor`). Ordered by (major, minor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxVersion {
    /// The number before the dot.
    pub major: u16,
    /// The number after the dot.
    pub minor: u16,
}

impl PtxVersion {
    /// A version from its two numbers.
    pub const fn new(major: u16, minor: u16) -> Self {
        PtxVersion { major, minor }
    }

    /// Parses `7.8` (an optional `ptx`/`PTX ISA ` prefix is accepted).
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        let t = t
            .strip_prefix("PTX ISA ")
            .or_else(|| t.strip_prefix("ptx"))
            .unwrap_or(t);
        let (major, minor) = t.split_once('.')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(major) || !digits(minor) {
            return None;
        }
        Some(PtxVersion::new(major.parse().ok()?, minor.parse().ok()?))
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for PtxVersion {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        PtxVersion::parse(s).ok_or(ParseError)
    }
}

/// The text was not a PTX version or target name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError;

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a valid PTX version or target name")
    }
}

impl std::error::Error for ParseError {}

/// Whether a target names real hardware (`sm_XX`) or a virtual architecture (`compute_XX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArchKind {
    /// `sm_XX`.
    Sm,
    /// `compute_XX`.
    Compute,
}

/// The suffix of a target name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArchVariant {
    /// No suffix: the feature set of this architecture and every later one.
    Base,
    /// `a` (`sm_90a`): architecture-specific features, available on exactly this architecture.
    ArchSpecific,
    /// `f` (`sm_100f`): family-specific features, available on this architecture and later
    /// members of the same family (same major compute capability).
    FamilySpecific,
}

/// A target architecture: `sm_75`, `sm_90a`, `sm_100f`, `compute_80`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmTarget {
    /// `sm_` or `compute_`.
    pub kind: ArchKind,
    /// The number: 75 for `sm_75`, 100 for `sm_100f`.
    pub number: u32,
    /// The suffix.
    pub variant: ArchVariant,
}

impl SmTarget {
    /// `sm_<number>` with the given suffix.
    pub const fn sm(number: u32, variant: ArchVariant) -> Self {
        SmTarget {
            kind: ArchKind::Sm,
            number,
            variant,
        }
    }

    /// Parses `sm_90`, `sm_90a`, `sm_100f`, `compute_80` (also `sm90`, as the spec once writes).
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        let (kind, rest) = if let Some(r) = t.strip_prefix("compute_") {
            (ArchKind::Compute, r)
        } else if let Some(r) = t.strip_prefix("sm_").or_else(|| t.strip_prefix("sm")) {
            (ArchKind::Sm, r)
        } else {
            return None;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let number = rest[..digits].parse().ok()?;
        let variant = match &rest[digits..] {
            "" => ArchVariant::Base,
            "a" => ArchVariant::ArchSpecific,
            "f" => ArchVariant::FamilySpecific,
            _ => return None,
        };
        Some(SmTarget {
            kind,
            number,
            variant,
        })
    }

    /// The major compute capability: 9 for `sm_90`, 10 for `sm_100`/`sm_103`.
    pub fn major(&self) -> u32 {
        self.number / 10
    }

    /// Whether code compiled for `self` may use a feature that requires `required`.
    ///
    /// - a plain requirement (`sm_80`) is met by any target with a number at least as high,
    ///   whatever its suffix;
    /// - an arch-specific requirement (`sm_90a`) only by exactly that architecture with `a`;
    /// - a family requirement (`sm_100f`) by an `a` or `f` target of the same family (same
    ///   major number) whose number is at least as high.
    pub fn supports(&self, required: &SmTarget) -> bool {
        match required.variant {
            ArchVariant::Base => self.number >= required.number,
            ArchVariant::ArchSpecific => {
                self.variant == ArchVariant::ArchSpecific && self.number == required.number
            }
            ArchVariant::FamilySpecific => {
                self.variant != ArchVariant::Base
                    && self.major() == required.major()
                    && self.number >= required.number
            }
        }
    }
}

impl fmt::Display for SmTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            ArchKind::Sm => "sm_",
            ArchKind::Compute => "compute_",
        };
        let suffix = match self.variant {
            ArchVariant::Base => "",
            ArchVariant::ArchSpecific => "a",
            ArchVariant::FamilySpecific => "f",
        };
        write!(f, "{prefix}{}{suffix}", self.number)
    }
}

impl FromStr for SmTarget {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        SmTarget::parse(s).ok_or(ParseError)
    }
}

/// What the spec says about the targets an entry runs on (the entry as a whole; finer
/// statements are in [`crate::Entry::target_gates`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetReq {
    /// Supported on all target architectures.
    All,
    /// Requires this target or a later one (see [`SmTarget::supports`]).
    Min(SmTarget),
    /// Requires one of these (each read as in `Min`): where ptxas accepts an instruction on
    /// targets no single requirement describes (`setmaxnreg`: sm_90a, and the sm_100+ families).
    AnyOf(&'static [SmTarget]),
    /// The notes make no statement about the whole entry (only about some forms, if any).
    Unstated,
}

impl TargetReq {
    /// Whether `target` meets the requirement (`Unstated` counts as met).
    pub fn allows(&self, target: &SmTarget) -> bool {
        match self {
            TargetReq::Min(req) => target.supports(req),
            TargetReq::AnyOf(reqs) => reqs.iter().any(|r| target.supports(r)),
            TargetReq::All | TargetReq::Unstated => true,
        }
    }
}

impl fmt::Display for TargetReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetReq::All => f.write_str("all targets"),
            TargetReq::Min(t) if t.variant == ArchVariant::Base => write!(f, "{t}+"),
            TargetReq::Min(t) => write!(f, "{t}"),
            TargetReq::AnyOf(ts) => {
                let names: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
                f.write_str(&names.join(" or "))
            }
            TargetReq::Unstated => f.write_str("-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(PtxVersion::parse("7.8"), Some(PtxVersion::new(7, 8)));
        assert_eq!(PtxVersion::parse("10.0"), Some(PtxVersion::new(10, 0)));
        assert_eq!(
            PtxVersion::parse("PTX ISA 8.1"),
            Some(PtxVersion::new(8, 1))
        );
        assert_eq!(PtxVersion::parse("7"), None);
        assert_eq!(PtxVersion::parse("7.x"), None);
        assert!(PtxVersion::new(7, 10) > PtxVersion::new(7, 8));
        assert!(PtxVersion::new(8, 0) > PtxVersion::new(7, 8));
        assert_eq!(PtxVersion::new(6, 4).to_string(), "6.4");
        assert_eq!("8.0".parse::<PtxVersion>(), Ok(PtxVersion::new(8, 0)));
    }

    #[test]
    fn targets_parse() {
        let t = SmTarget::parse("sm_90a").unwrap();
        assert_eq!((t.number, t.variant), (90, ArchVariant::ArchSpecific));
        let t = SmTarget::parse("sm_100f").unwrap();
        assert_eq!(
            (t.number, t.variant, t.major()),
            (100, ArchVariant::FamilySpecific, 10)
        );
        let t = SmTarget::parse("compute_75").unwrap();
        assert_eq!((t.kind, t.number), (ArchKind::Compute, 75));
        assert_eq!(SmTarget::parse("sm89").map(|t| t.number), Some(89));
        assert_eq!(SmTarget::parse("sm_"), None);
        assert_eq!(SmTarget::parse("sm_90x"), None);
        assert_eq!(SmTarget::parse("gfx90"), None);
        for s in ["sm_75", "sm_90a", "sm_100f", "compute_80"] {
            assert_eq!(SmTarget::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn target_support_rules() {
        let p = |s| SmTarget::parse(s).unwrap();
        assert!(p("sm_90").supports(&p("sm_80")));
        assert!(p("sm_90a").supports(&p("sm_80")));
        assert!(!p("sm_75").supports(&p("sm_80")));
        // arch-specific: exactly that architecture with the `a` suffix
        assert!(p("sm_90a").supports(&p("sm_90a")));
        assert!(!p("sm_90").supports(&p("sm_90a")));
        assert!(!p("sm_100a").supports(&p("sm_90a")));
        // family: same major, at least as new, with `a` or `f`
        assert!(p("sm_100f").supports(&p("sm_100f")));
        assert!(p("sm_103a").supports(&p("sm_100f")));
        assert!(p("sm_103f").supports(&p("sm_100f")));
        assert!(!p("sm_100").supports(&p("sm_100f")));
        assert!(!p("sm_120f").supports(&p("sm_100f")));
        assert!(!p("sm_100f").supports(&p("sm_103f")));
    }
}
