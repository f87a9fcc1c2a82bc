//! Asynchronous copies and mbarriers: the layout of their decoded instructions and the one
//! lane-wise handler (`mbarrier.pending_count`). The others run as [`crate::program::Op::Async`]
//! in the executor (`exec/asyncop.rs`), which owns the CTA's pending copies and suspends lanes
//! that wait on an mbarrier; `crate::decode::asyncop` decodes them all.
//!
//! `aux` layout: bits 0..8 the kind (the constants below), 8..16 flags of the kind, 16..19 the
//! space code of the first address, 19..22 of the second, 22..25 of the third
//! ([`crate::ops_move::space_code`]), 32..40 a size or element type, 40..48 a reduction.
//! Addresses are a base slot and a constant slot holding the offset: the first `a`/`v[0]`,
//! the second `b`/`v[1]`, the third `v[2]`/`v[3]`; a value operand is `c`, a destination `d`.

use crate::program::{for_lanes, Insn, Lanes};
use crate::semantics::mbarrier::{RedOp, RedType};

/// `cp.async`: flags [`CP_SRC_SIZE`], [`CP_IGNORE`], [`CP_IGNORE_NEG`]; bits 32..40 the
/// cp-size; `imm` the slot of src-size or of the ignore-src predicate.
pub(crate) const CP_ASYNC: u64 = 0;
/// `cp.async.commit_group`.
pub(crate) const CP_COMMIT: u64 = 1;
/// `cp.async.wait_group N` (`imm` = N).
pub(crate) const CP_WAIT: u64 = 2;
/// `cp.async.wait_all`.
pub(crate) const CP_WAIT_ALL: u64 = 3;
/// `cp.async.mbarrier.arrive` (flag [`NOINC`]).
pub(crate) const CP_MBAR_ARRIVE: u64 = 4;
/// `mbarrier.init` (`c`: count).
pub(crate) const MBAR_INIT: u64 = 5;
/// `mbarrier.inval`.
pub(crate) const MBAR_INVAL: u64 = 6;
/// `mbarrier.arrive{_drop}{.expect_tx}{.noComplete}` (`d`: state, `c`: tx-count, `v[1]`:
/// count; flags [`DROP`], [`NO_COMPLETE`]).
pub(crate) const MBAR_ARRIVE: u64 = 7;
/// `mbarrier.expect_tx` (`c`: tx-count).
pub(crate) const MBAR_EXPECT_TX: u64 = 8;
/// `mbarrier.complete_tx` (`c`: tx-count).
pub(crate) const MBAR_COMPLETE_TX: u64 = 9;
/// `mbarrier.test_wait` (`d`: predicate, `c`: state or parity; flag [`PARITY`]).
pub(crate) const MBAR_TEST_WAIT: u64 = 10;
/// `mbarrier.try_wait`, same operands.
pub(crate) const MBAR_TRY_WAIT: u64 = 11;
/// `cp.async.bulk` and `cp.reduce.async.bulk` (`c`: size; bits 8..10 the direction
/// [`G2S`], [`S2S`], [`S2G`]; a reduction has [`REDUCE`] and bits 32..40 the type code,
/// 40..48 the operation code; [`MULTICAST`]).
pub(crate) const BULK: u64 = 12;
/// `cp.async.bulk.prefetch` (`c`: size).
pub(crate) const BULK_PREFETCH: u64 = 13;
/// `cp.async.bulk.commit_group`.
pub(crate) const BULK_COMMIT: u64 = 14;
/// `cp.async.bulk.wait_group{.read} N` (`imm` = N).
pub(crate) const BULK_WAIT: u64 = 15;
/// `barrier.cluster.arrive` (`exec/cluster.rs`; kinds [`CL_ARRIVE`]`..=`[`CL_MEM`] are the
/// cluster ones, [`is_cluster`]).
pub(crate) const CL_ARRIVE: u64 = 16;
/// `barrier.cluster.wait`.
pub(crate) const CL_WAIT: u64 = 17;
/// `mapa` (`d` ← address `a` mapped to the CTA of rank `b`; flag [`CL_SHARED`]).
pub(crate) const CL_MAPA: u64 = 18;
/// `getctarank` (`d` ← the rank of the CTA of address `a`; flag [`CL_SHARED`]).
pub(crate) const CL_GETCTARANK: u64 = 19;
/// A memory access that may reach another CTA of the cluster (bits 32.. the index in
/// [`crate::program::Program::cluster_mem`]).
pub(crate) const CL_MEM: u64 = 20;
/// `mapa`/`getctarank` on `.shared::cluster` addresses (not generic ones).
pub(crate) const CL_SHARED: u64 = 1 << 8;

/// Whether an [`crate::program::Op::Async`] of this kind is a cluster instruction (run by
/// `exec/cluster.rs`).
pub(crate) fn is_cluster(kind: u64) -> bool {
    (CL_ARRIVE..=CL_MEM).contains(&kind)
}

/// `cp.async.bulk.tensor` and `cp.reduce.async.bulk.tensor`: the shared-memory address is
/// the first (`a`/`v[0]`), the tensor map's the second (`b`/`v[1]`), the mbarrier's the third;
/// `c` the ctaMask slot ([`MULTICAST`]); `imm` indexes `Program::lists`: the coordinate slots,
/// then the im2col offset slots; bits 8..10 the direction ([`G2S`], [`S2G`]), bits 32..35
/// the rank, [`IM2COL`], [`REDUCE`] with bits 40..48 the operation.
pub(crate) const TENSOR: u64 = 21;
/// `cp.async.bulk.prefetch.tensor` (the tensor map and coordinates as [`TENSOR`]).
pub(crate) const TENSOR_PREFETCH: u64 = 22;
/// `tensormap.replace.tile.field` (`exec/tmap.rs`): the tensor map's address is the first,
/// `c` the new value; bits 32..40 the field (its index in
/// [`crate::semantics::tensormap::Field::ALL`]), 40..48 the ordinal. (Kinds 48.. are the
/// tensor-map ones.)
pub(crate) const TMAP_REPLACE: u64 = 48;
/// `tensormap.cp_fenceproxy`: the 128 bytes at the second address (shared) to the first
/// (global).
pub(crate) const TMAP_CP: u64 = 49;
/// `st.bulk`: zeroes `c` bytes at the first address (shared::cta); [`SIZE32`]: `c` is a
/// 32-bit register.
pub(crate) const ST_BULK: u64 = 50;
/// `st.bulk` with a 32-bit size register.
pub(crate) const SIZE32: u64 = 1 << 8;
/// `.im2col` / `.im2col_no_offs`.
pub(crate) const IM2COL: u64 = 1 << 12;
/// `st.async` to another CTA of the cluster: the address is the first (`a`/`v[0]`), the
/// mbarrier's the third; `imm` indexes `Program::lists`, the value slots (1, 2 or 4); bits
/// 32..40 the element size in bytes. (Kinds 40.. are the asynchronous stores, numbered apart
/// from the copies'.)
pub(crate) const ST_ASYNC: u64 = 40;
/// `red.async`: as [`ST_ASYNC`] with one value, bits 32..40 the type code and 40..48 the
/// operation code ([`reduction`]).
pub(crate) const RED_ASYNC: u64 = 41;

/// `cp.async` with a src-size operand.
pub(crate) const CP_SRC_SIZE: u64 = 1 << 8;
/// `cp.async` with an ignore-src predicate.
pub(crate) const CP_IGNORE: u64 = 1 << 9;
/// The ignore-src predicate is negated (`!p`).
pub(crate) const CP_IGNORE_NEG: u64 = 1 << 10;
/// `.noinc`.
pub(crate) const NOINC: u64 = 1 << 8;
/// `arrive_drop`.
pub(crate) const DROP: u64 = 1 << 8;
/// `.noComplete`.
pub(crate) const NO_COMPLETE: u64 = 1 << 9;
/// `.parity`.
pub(crate) const PARITY: u64 = 1 << 8;
/// Bulk copy global → shared (mbarrier completion).
pub(crate) const G2S: u64 = 0;
/// Bulk copy shared::cta → shared::cluster (mbarrier completion).
pub(crate) const S2S: u64 = 1;
/// Bulk copy shared::cta → global (bulk group).
pub(crate) const S2G: u64 = 2;
/// A reduction (`cp.reduce.async.bulk`).
pub(crate) const REDUCE: u64 = 1 << 10;
/// `.multicast::cluster` (`d`: the ctaMask slot; the data and the `complete_tx` go to the same
/// shared-memory offsets in every CTA of the mask).
pub(crate) const MULTICAST: u64 = 1 << 11;

/// The kind of an [`crate::program::Op::Async`] instruction.
#[inline]
pub(crate) fn kind(aux: u64) -> u64 {
    aux & 0xFF
}

/// The space code of address `k` (0, 1, 2).
#[inline]
pub(crate) fn space(aux: u64, k: u32) -> u64 {
    (aux >> (16 + 3 * k)) & 7
}

/// The instruction an `aux` describes, for the disassembler.
pub fn kind_name(aux: u64) -> &'static str {
    match kind(aux) {
        CP_ASYNC => "cp.async",
        CP_COMMIT => "cp.async.commit_group",
        CP_WAIT => "cp.async.wait_group",
        CP_WAIT_ALL => "cp.async.wait_all",
        CP_MBAR_ARRIVE => "cp.async.mbarrier.arrive",
        MBAR_INIT => "mbarrier.init",
        MBAR_INVAL => "mbarrier.inval",
        MBAR_ARRIVE => "mbarrier.arrive",
        MBAR_EXPECT_TX => "mbarrier.expect_tx",
        MBAR_COMPLETE_TX => "mbarrier.complete_tx",
        MBAR_TEST_WAIT => "mbarrier.test_wait",
        MBAR_TRY_WAIT => "mbarrier.try_wait",
        BULK if aux & REDUCE != 0 => "cp.reduce.async.bulk",
        BULK => "cp.async.bulk",
        BULK_PREFETCH => "cp.async.bulk.prefetch",
        BULK_COMMIT => "cp.async.bulk.commit_group",
        BULK_WAIT => "cp.async.bulk.wait_group",
        TENSOR if aux & REDUCE != 0 => "cp.reduce.async.bulk.tensor",
        TENSOR => "cp.async.bulk.tensor",
        TENSOR_PREFETCH => "cp.async.bulk.prefetch.tensor",
        ST_ASYNC => "st.async",
        RED_ASYNC => "red.async",
        CL_ARRIVE => "barrier.cluster.arrive",
        CL_WAIT => "barrier.cluster.wait",
        CL_MAPA => "mapa",
        CL_GETCTARANK => "getctarank",
        CL_MEM => "shared::cluster access",
        TMAP_REPLACE => "tensormap.replace",
        TMAP_CP => "tensormap.cp_fenceproxy",
        ST_BULK => "st.bulk",
        _ => "?",
    }
}

/// `mbarrier.pending_count.b64 d, state`.
pub(crate) fn pending_count(r: &mut [Lanes], _p: &mut [u32], i: &Insn, mask: u32) {
    let (a, d) = (i.a as usize, i.d as usize);
    for_lanes(mask, |l| {
        r[d][l] = crate::semantics::mbarrier::pending_count(r[a][l]);
    });
}

const RED_TYPES: [RedType; 8] = [
    RedType::U32,
    RedType::S32,
    RedType::U64,
    RedType::S64,
    RedType::F32,
    RedType::F64,
    RedType::F16,
    RedType::Bf16,
];
const RED_OPS: [RedOp; 8] = [
    RedOp::And,
    RedOp::Or,
    RedOp::Xor,
    RedOp::Add,
    RedOp::Inc,
    RedOp::Dec,
    RedOp::Min,
    RedOp::Max,
];

pub(crate) fn red_type_code(t: RedType) -> u64 {
    RED_TYPES.iter().position(|&x| x == t).unwrap_or(0) as u64
}
pub(crate) fn red_op_code(o: RedOp) -> u64 {
    RED_OPS.iter().position(|&x| x == o).unwrap_or(0) as u64
}

/// The reduction of a `cp.reduce.async.bulk` `aux`.
pub(crate) fn reduction(aux: u64) -> (RedOp, RedType) {
    (
        RED_OPS[((aux >> 40) & 7) as usize],
        RED_TYPES[((aux >> 32) & 7) as usize],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two branches merged with the same kind numbers once (`cp.async.bulk.tensor` ran as
    /// `barrier.cluster.arrive`): every kind has its own number and its own name.
    #[test]
    fn kinds_are_distinct() {
        let kinds = [
            CP_ASYNC,
            CP_COMMIT,
            CP_WAIT,
            CP_WAIT_ALL,
            CP_MBAR_ARRIVE,
            MBAR_INIT,
            MBAR_INVAL,
            MBAR_ARRIVE,
            MBAR_EXPECT_TX,
            MBAR_COMPLETE_TX,
            MBAR_TEST_WAIT,
            MBAR_TRY_WAIT,
            BULK,
            BULK_PREFETCH,
            BULK_COMMIT,
            BULK_WAIT,
            CL_ARRIVE,
            CL_WAIT,
            CL_MAPA,
            CL_GETCTARANK,
            CL_MEM,
            TENSOR,
            TENSOR_PREFETCH,
            ST_ASYNC,
            RED_ASYNC,
            TMAP_REPLACE,
            TMAP_CP,
            ST_BULK,
        ];
        let mut names: Vec<&str> = kinds.iter().map(|&k| kind_name(k)).collect();
        assert!(!names.contains(&"?"));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), kinds.len());
        assert!(kinds
            .iter()
            .all(|&k| k <= 0xFF && is_cluster(k) == (CL_ARRIVE..=CL_MEM).contains(&k)));
        assert!(!is_cluster(TENSOR) && !is_cluster(TENSOR_PREFETCH));
    }
}
