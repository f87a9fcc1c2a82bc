//! The typed instruction set: [`Opcode`], [`Modifier`], [`ModSet`] and [`OpFlags`].
//!
//! The enums are generated from the table (`src/generated_ops.rs`, by `tools/gen-isa.py`): every
//! instruction the table's forms name is an [`Opcode`] variant and every modifier spelling of
//! its forms a [`Modifier`] variant, so a later stage that matches on them exhaustively fails to
//! compile when an instruction is added without a handler. An instruction as written
//! (`cp.async.bulk.tensor.2d.shared::cluster.global.tile…`) is its opcode word and its dotted
//! modifiers; [`Opcode::resolve`] finds which opcode that is (the longest name whose path
//! segments lead the modifiers) and how many leading modifiers the name consumed.

pub use crate::generated_ops::{Modifier, Opcode};
use crate::{ScalarType, StateSpace};

/// What the passes after checking need to know of an opcode (a set of flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct OpFlags(u8);

impl OpFlags {
    /// No flag.
    pub const NONE: OpFlags = OpFlags(0);
    /// The first operand is written and never read (`add d, a, b`).
    pub const DEST_FIRST: OpFlags = OpFlags(1);
    /// No operand is written: every register operand is read (`st`, `bra`, `red`).
    pub const NO_DEST: OpFlags = OpFlags(2);
    /// Computed lane by lane from the operands alone, without memory or warp state: an
    /// instance whose operands are the same in every CTA may be computed once.
    pub const PURE: OpFlags = OpFlags(4);
    /// Does the same for each lane whether or not the other lanes of the warp run it, so a
    /// branch around it may become a guard on it (if-conversion).
    pub const CONVERTIBLE: OpFlags = OpFlags(8);
    /// Writes memory through its address operand (`st`, `atom`, `red`): the checker judges its
    /// state space and forbids writes to a kernel's input parameters.
    pub const WRITES_MEMORY: OpFlags = OpFlags(16);
    /// The table's forms of the instruction are complete: the checker rejects any other
    /// modifier and any combination of modifiers that no form takes.
    pub const COMPLETE_FORMS: OpFlags = OpFlags(32);

    /// Both sets of flags.
    pub const fn union(self, other: OpFlags) -> OpFlags {
        OpFlags(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl Opcode {
    /// Which opcode an instruction written as `word` followed by `mods` (each with its leading
    /// dot) is, and how many leading modifiers its name consumed: `cp` with
    /// `[".async", ".bulk", ".tensor", ".2d", …]` is [`Opcode::CpAsyncBulkTensor`] consuming 3;
    /// `add` with `[".cc", ".u32"]` is [`Opcode::Add`] consuming 0. `None` for a word that is no
    /// opcode of the table.
    pub fn resolve<S: AsRef<str>>(word: &str, mods: &[S]) -> Option<(Opcode, usize)> {
        let range = OPCODES_BY_WORD.get(word)?.clone();
        let mut best = None;
        for &(name, op) in &OPCODES_BY_NAME[range] {
            let rest = name[word.len()..].split('.').skip(1);
            let mut k = 0;
            let mut all = true;
            for seg in rest {
                match mods.get(k) {
                    Some(m) if m.as_ref().strip_prefix('.') == Some(seg) => k += 1,
                    _ => {
                        all = false;
                        break;
                    }
                }
            }
            if all && best.is_none_or(|(_, n)| k >= n) {
                best = Some((op, k));
            }
        }
        best
    }

    /// The opcode named exactly `name` (`cp.async.bulk`).
    pub fn from_name(name: &str) -> Option<Opcode> {
        OPCODES_BY_NAME
            .binary_search_by(|(n, _)| (*n).cmp(name))
            .ok()
            .map(|i| OPCODES_BY_NAME[i].1)
    }

    /// Whether the flags include all of `f`.
    pub const fn is(self, f: OpFlags) -> bool {
        self.flags().contains(f)
    }
}

fn first_word(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// Every opcode by name, sorted by name (the order of [`Opcode::ALL`]).
static OPCODES_BY_NAME: std::sync::LazyLock<Vec<(&'static str, Opcode)>> =
    std::sync::LazyLock::new(|| {
        let mut v: Vec<(&'static str, Opcode)> =
            Opcode::ALL.iter().map(|&o| (o.name(), o)).collect();
        // sorted by first word, then by whole name, so that `resolve` finds a word's run
        v.sort_by(|a, b| (first_word(a.0), a.0).cmp(&(first_word(b.0), b.0)));
        v
    });

/// The run of [`OPCODES_BY_NAME`] of each first word (lowering resolves every instruction of
/// a module through it, so a lookup is one hash, not a search).
static OPCODES_BY_WORD: std::sync::LazyLock<
    std::collections::HashMap<&'static str, std::ops::Range<usize>, Fnv>,
> = std::sync::LazyLock::new(|| {
    let mut m = std::collections::HashMap::with_hasher(Fnv);
    for (k, (n, _)) in OPCODES_BY_NAME.iter().enumerate() {
        m.entry(first_word(n))
            .and_modify(|r: &mut std::ops::Range<usize>| r.end = k + 1)
            .or_insert(k..k + 1);
    }
    m
});

/// Every modifier by its text.
static MODIFIERS_BY_TEXT: std::sync::LazyLock<
    std::collections::HashMap<&'static str, Modifier, Fnv>,
> = std::sync::LazyLock::new(|| Modifier::ALL.iter().map(|&m| (m.text(), m)).collect());

/// FNV-1a: the keys are short, fixed, trusted strings (the table's own names), so a simple
/// fast hash beats the default DoS-resistant one here.
#[derive(Clone, Copy, Default)]
struct Fnv;

struct FnvHasher(u64);

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;
    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for FnvHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Modifier {
    /// The modifier spelled `text` (with its leading dot: `.rn`).
    pub fn parse(text: &str) -> Option<Modifier> {
        MODIFIERS_BY_TEXT.get(text).copied()
    }

    /// The fundamental type this modifier names (`.f32`), if any.
    pub fn scalar_type(self) -> Option<ScalarType> {
        ScalarType::from_suffix(self.text())
    }

    /// The state space this modifier names (`.shared::cta`), if any.
    pub fn state_space(self) -> Option<StateSpace> {
        StateSpace::from_suffix(self.text())
    }

    /// The vector width of `.v2`/`.v4`/`.v8`.
    pub fn vector_width(self) -> Option<u32> {
        match self {
            Modifier::V2 => Some(2),
            Modifier::V4 => Some(4),
            Modifier::V8 => Some(8),
            _ => None,
        }
    }
}

impl std::fmt::Display for Modifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

const WORDS: usize = Modifier::COUNT.div_ceil(64);

/// A set of modifiers (a bit set over [`Modifier`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ModSet([u64; WORDS]);

impl ModSet {
    /// The empty set.
    pub const EMPTY: ModSet = ModSet([0; WORDS]);

    /// Adds `m`.
    pub fn insert(&mut self, m: Modifier) {
        let i = m as usize;
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether `m` is in the set.
    pub fn contains(&self, m: Modifier) -> bool {
        let i = m as usize;
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    /// The modifiers of the set, in the order of [`Modifier::ALL`].
    pub fn iter(&self) -> impl Iterator<Item = Modifier> + '_ {
        Modifier::ALL.iter().copied().filter(|&m| self.contains(m))
    }
}

impl FromIterator<Modifier> for ModSet {
    fn from_iter<I: IntoIterator<Item = Modifier>>(iter: I) -> ModSet {
        let mut s = ModSet::EMPTY;
        for m in iter {
            s.insert(m);
        }
        s
    }
}

impl std::fmt::Debug for ModSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_takes_the_longest_name_that_leads_the_modifiers() {
        let r = |w: &str, m: &[&str]| Opcode::resolve(w, m);
        assert_eq!(
            r("cp", &[".async", ".bulk", ".tensor", ".2d"]),
            Some((Opcode::CpAsyncBulkTensor, 3))
        );
        assert_eq!(
            r("cp", &[".async", ".ca", ".shared", ".global"]),
            Some((Opcode::CpAsync, 1))
        );
        assert_eq!(r("add", &[".cc", ".u32"]), Some((Opcode::Add, 0)));
        assert_eq!(r("ld", &[".global", ".nc", ".f32"]), Some((Opcode::Ld, 0)));
        assert_eq!(
            r("bar", &[".warp", ".sync"]),
            Some((Opcode::BarWarpSync, 2))
        );
        assert_eq!(r("bar", &[".sync"]), Some((Opcode::Bar, 0)));
        assert_eq!(
            r("mbarrier", &[".arrive", ".expect_tx", ".shared", ".b64"]),
            Some((Opcode::MbarrierArrive, 1))
        );
        assert_eq!(r("brx", &[".idx"]), Some((Opcode::Brx, 0)));
        assert_eq!(
            r("shfl", &[".sync", ".bfly", ".b32"]),
            Some((Opcode::Shfl, 0))
        );
        assert_eq!(r("addd", &[".u32"]), None);
    }

    #[test]
    fn names_round_trip_and_are_sorted() {
        for &o in Opcode::ALL {
            assert_eq!(Opcode::from_name(o.name()), Some(o));
        }
        assert!(Opcode::ALL.windows(2).all(|w| w[0].name() < w[1].name()));
    }

    #[test]
    fn every_type_and_state_space_is_a_modifier() {
        for t in ScalarType::ALL {
            let m = Modifier::parse(t.suffix()).unwrap();
            assert_eq!(m.scalar_type(), Some(*t));
        }
        for s in StateSpace::ALL {
            let m = Modifier::parse(s.suffix()).unwrap();
            assert_eq!(m.state_space(), Some(*s));
        }
        for &m in Modifier::ALL {
            assert_eq!(Modifier::parse(m.text()), Some(m));
        }
    }

    #[test]
    fn modsets_hold_what_is_inserted() {
        let s: ModSet = [Modifier::Rn, Modifier::F32, Modifier::Xorsign]
            .into_iter()
            .collect();
        assert!(s.contains(Modifier::Rn) && s.contains(Modifier::Xorsign));
        assert!(!s.contains(Modifier::Rz));
        assert_eq!(s.iter().count(), 3);
    }

    #[test]
    fn flags_are_the_tables() {
        assert!(Opcode::Add.is(OpFlags::DEST_FIRST.union(OpFlags::PURE)));
        assert!(Opcode::St.is(OpFlags::NO_DEST));
        assert!(!Opcode::Ld.is(OpFlags::PURE) && Opcode::Ld.is(OpFlags::CONVERTIBLE));
        assert!(
            Opcode::RedAsync.is(OpFlags::WRITES_MEMORY) && !Opcode::Ld.is(OpFlags::WRITES_MEMORY)
        );
        assert!(
            Opcode::StBulk.is(OpFlags::COMPLETE_FORMS) && !Opcode::Prmt.is(OpFlags::COMPLETE_FORMS)
        );
    }
}
