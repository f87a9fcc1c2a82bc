//! `mbarrier` objects (PTX ISA, "Parallel Synchronization and Communication Instructions:
//! mbarrier") and the element reductions of `cp.reduce.async.bulk`.
//!
//! An mbarrier is an opaque 64-bit object in shared memory. The ISA fixes what it tracks — the
//! current phase, the arrivals still pending in it, the expected arrival count of each phase and
//! a transaction count — but not how the 8 bytes encode it. ptxvm's encoding (the same bits are
//! the "state" token that `mbarrier.arrive` returns):
//!
//! | bits | field |
//! |---|---|
//! | 0..20 | pending arrivals of the current phase |
//! | 20..40 | expected arrivals per phase (the `init` count, less `arrive_drop`s) |
//! | 40..61 | tx-count, 21-bit two's complement |
//! | 62 | initialized (set by `init`, cleared by `inval`; shared memory starts zeroed) |
//! | 63 | phase parity |
//!
//! A phase completes when its pending arrivals and its tx-count are both zero: the parity
//! flips, the pending count becomes the expected count, the tx-count stays 0. The token of an
//! arrive holds the parity of the phase the arrival belonged to and the arrivals still pending
//! after it (what `mbarrier.pending_count` reads).

/// Largest arrival count (`init`, `arrive`): 2^20 - 1.
pub const MAX_COUNT: u64 = (1 << 20) - 1;
/// Largest tx-count magnitude: 2^20 - 1.
pub const MAX_TX: i64 = (1 << 20) - 1;

const PENDING: u64 = MAX_COUNT;
const VALID: u64 = 1 << 62;

/// Why an mbarrier operation is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarError {
    /// The object was never initialized (or was invalidated).
    Uninitialized,
    /// A count outside `1..=2^20-1`.
    BadCount(u64),
    /// More arrivals than the phase has pending.
    TooManyArrivals {
        /// Arrivals pending.
        pending: u64,
        /// Arrivals made.
        count: u64,
    },
    /// The tx-count would leave `-(2^20-1)..=2^20-1`.
    TxRange(i64),
    /// `.noComplete` arrival that completes the phase.
    Completes,
}

impl std::fmt::Display for MbarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MbarError::Uninitialized => {
                write!(f, "the mbarrier object is not initialized (no mbarrier.init, or mbarrier.inval since)")
            }
            MbarError::BadCount(c) => write!(f, "count {c} is outside the range 1..=1048575"),
            MbarError::TooManyArrivals { pending, count } => write!(
                f,
                "{count} arrivals on an mbarrier phase with {pending} arrivals pending"
            ),
            MbarError::TxRange(t) => write!(
                f,
                "the mbarrier tx-count would become {t}, outside -1048575..=1048575"
            ),
            MbarError::Completes => {
                write!(f, "an `.noComplete` arrival completes the mbarrier phase")
            }
        }
    }
}

/// Pending arrivals of the current phase.
#[inline]
pub fn pending(s: u64) -> u64 {
    s & PENDING
}
/// Expected arrivals per phase.
#[inline]
pub fn expected(s: u64) -> u64 {
    (s >> 20) & MAX_COUNT
}
/// The tx-count.
#[inline]
pub fn tx(s: u64) -> i64 {
    (((s >> 40) as i64) << 43) >> 43
}
/// The current phase's parity (0 or 1).
#[inline]
pub fn phase(s: u64) -> u64 {
    s >> 63
}
/// Whether the object is initialized.
#[inline]
pub fn initialized(s: u64) -> bool {
    s & VALID != 0
}

fn pack(phase: u64, expected: u64, pending: u64, tx: i64) -> u64 {
    (phase << 63) | VALID | ((tx as u64 & 0x1F_FFFF) << 40) | (expected << 20) | pending
}

/// Completes the phase if nothing is pending.
fn settle(s: u64) -> u64 {
    if pending(s) == 0 && tx(s) == 0 {
        pack(phase(s) ^ 1, expected(s), expected(s), 0)
    } else {
        s
    }
}

/// `mbarrier.init [a], count`: phase 0, `count` arrivals expected and pending, tx-count 0.
#[inline]
pub fn init(count: u64) -> Result<u64, MbarError> {
    if count == 0 || count > MAX_COUNT {
        return Err(MbarError::BadCount(count));
    }
    Ok(pack(0, count, count, 0))
}

/// `mbarrier.arrive{.expect_tx}{_drop}{.noComplete}`: first adds `tx_inc` to the tx-count
/// (`.expect_tx`), then `count` arrivals; `drop` also lowers the expected count of later phases.
/// Returns the new state and the token.
#[inline]
pub fn arrive(
    s: u64,
    count: u64,
    tx_inc: i64,
    drop: bool,
    no_complete: bool,
) -> Result<(u64, u64), MbarError> {
    if !initialized(s) {
        return Err(MbarError::Uninitialized);
    }
    if count == 0 || count > MAX_COUNT {
        return Err(MbarError::BadCount(count));
    }
    let s = expect_tx(s, tx_inc)?;
    let p = pending(s);
    if count > p {
        return Err(MbarError::TooManyArrivals { pending: p, count });
    }
    let exp = if drop {
        expected(s).saturating_sub(count)
    } else {
        expected(s)
    };
    let after = pack(phase(s), exp, p - count, tx(s));
    let token = (phase(s) << 63) | (p - count);
    let next = settle(after);
    if no_complete && next != after {
        return Err(MbarError::Completes);
    }
    Ok((next, token))
}

/// `cp.async.mbarrier.arrive` without `.noinc`: one more arrival pending in the current phase
/// (the asynchronous arrival that follows).
#[inline]
pub fn add_pending(s: u64) -> Result<u64, MbarError> {
    if !initialized(s) {
        return Err(MbarError::Uninitialized);
    }
    if pending(s) >= MAX_COUNT {
        return Err(MbarError::BadCount(pending(s) + 1));
    }
    Ok(s + 1)
}

/// `mbarrier.expect_tx [a], n`: the tx-count grows by `n`.
#[inline]
pub fn expect_tx(s: u64, n: i64) -> Result<u64, MbarError> {
    if !initialized(s) {
        return Err(MbarError::Uninitialized);
    }
    let t = tx(s) + n;
    if !(-MAX_TX..=MAX_TX).contains(&t) {
        return Err(MbarError::TxRange(t));
    }
    Ok(pack(phase(s), expected(s), pending(s), t))
}

/// `mbarrier.complete_tx [a], n` (and the completion of an asynchronous copy of `n` bytes):
/// the tx-count shrinks by `n`, which may complete the phase.
#[inline]
pub fn complete_tx(s: u64, n: i64) -> Result<u64, MbarError> {
    Ok(settle(expect_tx(s, -n)?))
}

/// `mbarrier.test_wait`/`try_wait` with a token: whether the phase the token was taken in has
/// completed (the current parity differs from the token's).
#[inline]
pub fn token_complete(s: u64, token: u64) -> bool {
    phase(s) != token >> 63
}

/// `.parity` forms: whether the phase of parity `parity` (0 or 1, the current phase or the
/// one before it) has completed.
#[inline]
pub fn parity_complete(s: u64, parity: u64) -> bool {
    phase(s) != parity & 1
}

/// `mbarrier.pending_count.b64 count, state`.
#[inline]
pub fn pending_count(token: u64) -> u64 {
    token & PENDING
}

/// The reductions of `cp.reduce.async.bulk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    /// `.and`
    And,
    /// `.or`
    Or,
    /// `.xor`
    Xor,
    /// `.add`
    Add,
    /// `.inc`: `d >= s ? 0 : d + 1`
    Inc,
    /// `.dec`: `d == 0 || d > s ? s : d - 1`
    Dec,
    /// `.min`
    Min,
    /// `.max`
    Max,
}

/// The element types of `cp.reduce.async.bulk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedType {
    /// `.b32`/`.u32`
    U32,
    /// `.s32`
    S32,
    /// `.b64`/`.u64`
    U64,
    /// `.s64`
    S64,
    /// `.f32`
    F32,
    /// `.f64`
    F64,
    /// `.f16`
    F16,
    /// `.bf16`
    Bf16,
}

impl RedType {
    /// Element size in bytes.
    pub fn size(self) -> u32 {
        match self {
            RedType::U32 | RedType::S32 | RedType::F32 => 4,
            RedType::U64 | RedType::S64 | RedType::F64 => 8,
            RedType::F16 | RedType::Bf16 => 2,
        }
    }
}

/// One element of `cp.reduce.async.bulk`: the destination `d` combined with the source `s`
/// (bits, zero-extended). Floating-point additions round to nearest even without flushing
/// subnormals (`.noftz` for the half types); `None` for a combination the ISA does not list.
#[inline]
pub fn reduce(op: RedOp, ty: RedType, d: u64, s: u64) -> Option<u64> {
    use RedType::*;
    let w = |v: u64| if ty.size() == 4 { v & 0xFFFF_FFFF } else { v };
    Some(w(match (op, ty) {
        // (ptxas takes the bitwise operations on `.b32`/`.b64` only; on the signed types,
        // which the checker lets through, they are the same bits)
        (RedOp::And, U32 | U64 | S32 | S64) => d & s,
        (RedOp::Or, U32 | U64 | S32 | S64) => d | s,
        (RedOp::Xor, U32 | U64 | S32 | S64) => d ^ s,
        (RedOp::Add, U32 | S32 | U64 | S64) => d.wrapping_add(s),
        (RedOp::Inc, U32 | U64) => {
            if w(d) >= w(s) {
                0
            } else {
                d + 1
            }
        }
        (RedOp::Dec, U32 | U64) => {
            if w(d) == 0 || w(d) > w(s) {
                s
            } else {
                d - 1
            }
        }
        (RedOp::Min | RedOp::Max, U32 | U64) => {
            let (a, b) = (w(d), w(s));
            if (op == RedOp::Min) == (a < b) {
                a
            } else {
                b
            }
        }
        (RedOp::Min | RedOp::Max, S32 | S64) => {
            let sx = |v: u64| {
                if ty == S32 {
                    v as u32 as i32 as i64
                } else {
                    v as i64
                }
            };
            let (a, b) = (sx(d), sx(s));
            (if (op == RedOp::Min) == (a < b) { a } else { b }) as u64
        }
        (RedOp::Add, F32) => (f32::from_bits(d as u32) + f32::from_bits(s as u32)).to_bits() as u64,
        (RedOp::Add, F64) => (f64::from_bits(d) + f64::from_bits(s)).to_bits(),
        (RedOp::Add, F16) => {
            crate::half::add_f16(d as u16, s as u16, crate::half::HalfMods::default()) as u64
        }
        (RedOp::Add, Bf16) => crate::half::add_bf16(d as u16, s as u16) as u64,
        (RedOp::Min, F16) => crate::half::min_f16(d as u16, s as u16, Default::default()) as u64,
        (RedOp::Max, F16) => crate::half::max_f16(d as u16, s as u16, Default::default()) as u64,
        (RedOp::Min, Bf16) => crate::half::min_bf16(d as u16, s as u16, Default::default()) as u64,
        (RedOp::Max, Bf16) => crate::half::max_bf16(d as u16, s as u16, Default::default()) as u64,
        _ => return None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_flip_after_all_arrivals() {
        let s = init(2).unwrap();
        assert_eq!((phase(s), pending(s), expected(s), tx(s)), (0, 2, 2, 0));
        let (s, t0) = arrive(s, 1, 0, false, false).unwrap();
        assert_eq!((phase(s), pending(s), pending_count(t0)), (0, 1, 1));
        assert!(!token_complete(s, t0));
        assert!(!parity_complete(s, 0));
        let (s, t1) = arrive(s, 1, 0, false, false).unwrap();
        assert_eq!((phase(s), pending(s)), (1, 2));
        assert!(token_complete(s, t0) && token_complete(s, t1));
        assert!(parity_complete(s, 0) && !parity_complete(s, 1));
        let (s, _) = arrive(s, 2, 0, false, false).unwrap();
        assert_eq!(phase(s), 0);
    }

    #[test]
    fn tx_count_holds_the_phase() {
        let s = init(1).unwrap();
        let (s, _) = arrive(s, 1, 64, false, false).unwrap();
        assert_eq!((phase(s), pending(s), tx(s)), (0, 0, 64));
        let s = complete_tx(s, 48).unwrap();
        assert_eq!((phase(s), tx(s)), (0, 16));
        let s = complete_tx(s, 16).unwrap();
        assert_eq!((phase(s), pending(s), tx(s)), (1, 1, 0));
        // completions before the expectation: negative until expected
        let s = complete_tx(s, 8).unwrap();
        assert_eq!(tx(s), -8);
        let s = expect_tx(s, 8).unwrap();
        let (s, _) = arrive(s, 1, 0, false, false).unwrap();
        assert_eq!(phase(s), 0);
    }

    #[test]
    fn drop_and_errors() {
        let s = init(3).unwrap();
        let (s, _) = arrive(s, 1, 0, true, false).unwrap();
        assert_eq!((pending(s), expected(s)), (2, 2));
        let (s, _) = arrive(s, 2, 0, false, false).unwrap();
        assert_eq!((phase(s), pending(s)), (1, 2));
        assert_eq!(
            arrive(s, 3, 0, false, false),
            Err(MbarError::TooManyArrivals {
                pending: 2,
                count: 3
            })
        );
        assert_eq!(arrive(s, 2, 0, false, true), Err(MbarError::Completes));
        assert_eq!(arrive(0, 1, 0, false, false), Err(MbarError::Uninitialized));
        assert_eq!(init(0), Err(MbarError::BadCount(0)));
        assert_eq!(init(1 << 20), Err(MbarError::BadCount(1 << 20)));
        assert_eq!(expect_tx(s, 1 << 20), Err(MbarError::TxRange(1 << 20)));
    }

    #[test]
    fn reductions() {
        assert_eq!(reduce(RedOp::Add, RedType::U32, 0xFFFF_FFFF, 2), Some(1));
        assert_eq!(
            reduce(RedOp::Min, RedType::S32, 5, 0xFFFF_FFFF),
            Some(0xFFFF_FFFF)
        );
        assert_eq!(
            reduce(RedOp::Max, RedType::U32, 5, 0xFFFF_FFFF),
            Some(0xFFFF_FFFF)
        );
        assert_eq!(reduce(RedOp::Inc, RedType::U32, 3, 3), Some(0));
        assert_eq!(reduce(RedOp::Inc, RedType::U32, 2, 3), Some(3));
        assert_eq!(reduce(RedOp::Dec, RedType::U32, 0, 7), Some(7));
        assert_eq!(reduce(RedOp::Dec, RedType::U32, 5, 7), Some(4));
        assert_eq!(
            reduce(
                RedOp::Add,
                RedType::F32,
                1.5f32.to_bits() as u64,
                2.25f32.to_bits() as u64
            ),
            Some(3.75f32.to_bits() as u64)
        );
        assert_eq!(
            reduce(RedOp::Add, RedType::F16, 0x3C00, 0x3C00),
            Some(0x4000)
        );
        assert_eq!(reduce(RedOp::And, RedType::F32, 1, 1), None);
        // min/max of halves: -2.0 (0xc000) < 1.0 (0x3c00)
        assert_eq!(
            reduce(RedOp::Min, RedType::F16, 0x3C00, 0xC000),
            Some(0xC000)
        );
        assert_eq!(
            reduce(RedOp::Max, RedType::Bf16, 0x3F80, 0xC000),
            Some(0x3F80)
        );
    }
}
