//! Decoding of the asynchronous copies (`cp.async*`, `cp.reduce.async.bulk`) and mbarriers into
//! [`Op::Async`] instructions (layout: [`crate::ops_async`]).

use super::{Dec, R};
use crate::ops_async as k;
use crate::ops_move::space_code;
use crate::program::{Insn, Op, Space};
use crate::semantics::mbarrier::{RedOp, RedType};
use ptx_ir::{Imm, Modifier, Opcode, Operand};
use ptx_isa::ScalarType;

/// Address operand `n` as the `which`-th address (0, 1, 2) of `insn`, in `space` (`None`: the
/// space the instruction's first state-space modifier gives, generic without one).
pub(super) fn addr(
    d: &mut Dec<'_, '_>,
    i: &mut Insn,
    n: usize,
    which: u32,
    space: Option<Space>,
) -> R<()> {
    let (base, off, sp) = d.address(n)?;
    let sp = space.unwrap_or(sp);
    if !matches!(sp, Space::Global | Space::Shared | Space::Generic) {
        return Err(format!(
            "`{}`: operand {} must be a global or shared address",
            d.inst.full_name(),
            n + 1
        ));
    }
    let off = d.b.konst(off as u64);
    match which {
        0 => (i.a, i.v[0]) = (base, off),
        1 => (i.b, i.v[1]) = (base, off),
        _ => (i.v[2], i.v[3]) = (base, off),
    }
    i.aux |= space_code(sp) << (16 + 3 * which);
    Ok(())
}

/// The reduction modifier of a `cp.reduce.async.bulk{.tensor}`.
fn red_op(d: &Dec<'_, '_>) -> R<RedOp> {
    [
        (Modifier::And, RedOp::And),
        (Modifier::Or, RedOp::Or),
        (Modifier::Xor, RedOp::Xor),
        (Modifier::Add, RedOp::Add),
        (Modifier::Inc, RedOp::Inc),
        (Modifier::Dec, RedOp::Dec),
        (Modifier::Min, RedOp::Min),
        (Modifier::Max, RedOp::Max),
    ]
    .iter()
    .find(|(m, _)| d.has(*m))
    .map(|&(_, o)| o)
    .ok_or_else(|| format!("`{}` has no reduction", d.inst.full_name()))
}

/// `cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`, `cp.async.bulk.prefetch.tensor`
/// (layout: [`k::TENSOR`]).
fn tensor(d: &mut Dec<'_, '_>, i: &mut Insn, nops: usize) -> R<()> {
    let rank = [
        Modifier::N1d,
        Modifier::N2d,
        Modifier::N3d,
        Modifier::N4d,
        Modifier::N5d,
    ]
    .iter()
    .position(|m| d.has(*m))
    .ok_or_else(|| format!("`{}` has no dimension", d.inst.full_name()))? as u64
        + 1;
    let prefetch = d.inst.op == Opcode::CpAsyncBulkPrefetchTensor;
    let to_global = !prefetch
        && d.inst.mods.iter().find_map(|m| m.state_space()) == Some(ptx_isa::StateSpace::Global);
    let im2col = d.has(Modifier::Im2col) || d.has(Modifier::Im2colNoOffs);
    i.aux = if prefetch {
        k::TENSOR_PREFETCH
    } else {
        k::TENSOR
    } | if to_global { k::S2G } else { k::G2S } << 8
        | rank << 32
        | if im2col { k::IM2COL } else { 0 };
    let name = d.inst.full_name();
    // the `[tensorMap, {coords}]` operand
    let mop = if to_global || prefetch { 0 } else { 1 };
    let (map, coords) = match d.operand(mop)? {
        Operand::List(v) => match &v[..] {
            [m, Operand::Vector(c)] => (m, c),
            _ => return Err(format!("`{name}`: expected [tensorMap, {{coordinates}}]")),
        },
        _ => return Err(format!("`{name}`: expected [tensorMap, {{coordinates}}]")),
    };
    if coords.len() as u64 != rank {
        return Err(format!(
            "`{name}`: {} coordinates for a {rank}-dimensional copy",
            coords.len()
        ));
    }
    let (base, off, _) = d.address_op(map)?;
    let off = d.b.konst(off as u64);
    (i.b, i.v[1]) = (base, off);
    i.aux |= crate::ops_move::space_code(Space::Generic) << 19;
    let mut list = Vec::new();
    for c in coords {
        list.push(d.src_op(c, ScalarType::S32)?);
    }
    if !prefetch {
        if to_global {
            addr(d, i, 1, 0, Some(Space::Shared))?;
        } else {
            addr(d, i, 0, 0, Some(Space::Shared))?;
            addr(d, i, 2, 2, Some(Space::Shared))?;
        }
    }
    // operands after the fixed ones: im2col offsets ({..}), ctaMask, cache policy
    let mut next = if prefetch {
        1
    } else if to_global {
        2
    } else {
        3
    };
    if d.has(Modifier::Im2col) && !to_global {
        if let Ok(Operand::Vector(v)) = d.operand(next) {
            for o in v {
                list.push(d.src_op(o, ScalarType::U16)?);
            }
            next += 1;
        }
    }
    if d.has(Modifier::MulticastCluster) {
        i.aux |= k::MULTICAST;
        i.c = d.src(next, ScalarType::U16)?;
        next += 1;
    }
    let _ = (next, nops);
    if d.inst.op == Opcode::CpReduceAsyncBulkTensor {
        i.aux |= k::REDUCE | (k::red_op_code(red_op(d)?) << 40);
    }
    d.b.lists.push(list);
    i.imm = d.b.lists.len() as i64 - 1;
    Ok(())
}

/// `st.async` and `red.async` with mbarrier completion (layout: [`k::ST_ASYNC`],
/// [`k::RED_ASYNC`]). The sm_100 forms to global memory (`.release`, `.mmio`, no mbarrier) are
/// refused: ptxvm does not execute them yet.
fn store_async(d: &mut Dec<'_, '_>, i: &mut Insn) -> R<()> {
    let name = d.inst.full_name();
    if d.inst.operands.len() < 3 || d.has(Modifier::Mmio) || d.has(Modifier::Release) {
        return Err(format!(
            "`{name}`: ptxvm executes st.async/red.async with mbarrier completion into another CTA's shared memory only, not the sm_100 forms to global memory yet"
        ));
    }
    let ty = d.ty()?;
    let red = d.inst.op == Opcode::RedAsync;
    addr(d, i, 0, 0, None)?;
    addr(d, i, 2, 2, None)?;
    let vals: Vec<&Operand> = match d.operand(1)? {
        Operand::Vector(v) => v.iter().collect(),
        o => vec![o],
    };
    let mut list = Vec::new();
    for o in vals {
        list.push(d.src_op(o, ty)?);
    }
    if !matches!(list.len(), 1 | 2 | 4) || (red && list.len() != 1) {
        return Err(format!("`{name}`: {} values", list.len()));
    }
    let size = (ty.size_bits() / 8) as u64;
    if !matches!(size, 4 | 8) || size * list.len() as u64 > 16 {
        return Err(format!("`{name}`: type {ty:?}"));
    }
    i.aux = if red {
        let op = red_op(d)?;
        let rt = match ty {
            ScalarType::B32 | ScalarType::U32 => RedType::U32,
            ScalarType::S32 => RedType::S32,
            ScalarType::B64 | ScalarType::U64 => RedType::U64,
            ScalarType::S64 => RedType::S64,
            t => return Err(format!("`{name}`: type {t:?}")),
        };
        if crate::semantics::mbarrier::reduce(op, rt, 0, 0).is_none() {
            return Err(format!(
                "`{name}`: this reduction is not defined on this type"
            ));
        }
        k::RED_ASYNC | (k::red_type_code(rt) << 32) | (k::red_op_code(op) << 40)
    } else {
        k::ST_ASYNC | size << 32
    } | (i.aux & !0xFF);
    d.b.lists.push(list);
    i.imm = d.b.lists.len() as i64 - 1;
    Ok(())
}

/// An immediate integer operand.
pub(super) fn imm(d: &Dec<'_, '_>, n: usize) -> R<u64> {
    match d.operand(n)? {
        Operand::Imm(Imm::Int(v)) => Ok(*v),
        o => Err(format!(
            "`{}`: operand {} must be an integer constant, found {o:?}",
            d.inst.full_name(),
            n + 1
        )),
    }
}

/// Whether operand `n` is a predicate register (or `!p`).
fn is_pred(d: &Dec<'_, '_>, n: usize) -> bool {
    match d.inst.operands.get(n) {
        Some(Operand::Reg(r)) => d.reg_ty(*r) == ScalarType::Pred,
        Some(Operand::Not(_)) => true,
        _ => false,
    }
}

pub(super) fn decode(d: &mut Dec<'_, '_>, i: &mut Insn) -> R<()> {
    i.op = Op::Async;
    let hint = d.has(Modifier::L2CacheHint);
    // operands before the cache-policy operand (`.L2::cache_hint`), which has no effect here
    let nops = d.inst.operands.len() - hint as usize;
    match d.inst.op {
        Opcode::CpAsync => {
            i.aux = k::CP_ASYNC;
            addr(d, i, 0, 0, Some(Space::Shared))?;
            addr(d, i, 1, 1, Some(Space::Global))?;
            let size = imm(d, 2)?;
            // (`.cg` takes 16 bytes only; ptxas and the checker reject smaller sizes)
            if !matches!(size, 4 | 8 | 16) {
                return Err(format!(
                    "`{}`: cp-size {size} is not allowed",
                    d.inst.full_name()
                ));
            }
            i.aux |= size << 32;
            if nops > 3 {
                if is_pred(d, 3) {
                    let (p, neg) = d.pred_src(3)?;
                    i.aux |= k::CP_IGNORE | if neg { k::CP_IGNORE_NEG } else { 0 };
                    i.imm = p as i64;
                } else {
                    i.aux |= k::CP_SRC_SIZE;
                    i.imm = d.src(3, ScalarType::U32)? as i64;
                }
            }
        }
        Opcode::CpAsyncCommitGroup => i.aux = k::CP_COMMIT,
        Opcode::CpAsyncWaitGroup => {
            i.aux = k::CP_WAIT;
            i.imm = imm(d, 0)? as i64;
        }
        Opcode::CpAsyncWaitAll => i.aux = k::CP_WAIT_ALL,
        Opcode::CpAsyncMbarrierArrive => {
            i.aux = k::CP_MBAR_ARRIVE | if d.has(Modifier::Noinc) { k::NOINC } else { 0 };
            addr(d, i, 0, 0, None)?;
        }
        // (the table's `mbarrier` entry is the family's name, with `init`'s syntax)
        Opcode::Mbarrier | Opcode::MbarrierInit => {
            i.aux = k::MBAR_INIT;
            addr(d, i, 0, 0, None)?;
            i.c = d.src(1, ScalarType::U32)?;
        }
        Opcode::MbarrierInval => {
            i.aux = k::MBAR_INVAL;
            addr(d, i, 0, 0, None)?;
        }
        Opcode::MbarrierArrive | Opcode::MbarrierArriveDrop => {
            i.aux = k::MBAR_ARRIVE;
            if d.inst.op == Opcode::MbarrierArriveDrop {
                i.aux |= k::DROP;
            }
            if d.has(Modifier::NoComplete) {
                i.aux |= k::NO_COMPLETE;
            }
            i.d = d.dst(0)?;
            addr(d, i, 1, 0, None)?;
            let one = d.b.konst(1);
            let zero = d.b.konst(0);
            if d.has(Modifier::ExpectTx) {
                i.c = d.src(2, ScalarType::U32)?;
                i.v[1] = one;
            } else {
                i.c = zero;
                i.v[1] = if nops > 2 {
                    d.src(2, ScalarType::U32)?
                } else {
                    one
                };
            }
        }
        Opcode::MbarrierExpectTx | Opcode::MbarrierCompleteTx => {
            i.aux = if d.inst.op == Opcode::MbarrierExpectTx {
                k::MBAR_EXPECT_TX
            } else {
                k::MBAR_COMPLETE_TX
            };
            addr(d, i, 0, 0, None)?;
            i.c = d.src(1, ScalarType::U32)?;
        }
        Opcode::MbarrierTestWait | Opcode::MbarrierTryWait => {
            i.aux = if d.inst.op == Opcode::MbarrierTestWait {
                k::MBAR_TEST_WAIT
            } else {
                k::MBAR_TRY_WAIT
            };
            let parity = d.has(Modifier::Parity);
            if parity {
                i.aux |= k::PARITY;
            }
            i.d = d.pred_dst(0)?;
            addr(d, i, 1, 0, None)?;
            let ty = if parity {
                ScalarType::U32
            } else {
                ScalarType::B64
            };
            i.c = d.src(2, ty)?;
        }
        Opcode::CpAsyncBulk | Opcode::CpReduceAsyncBulk => {
            let spaces: Vec<_> = d.inst.mods.iter().filter_map(|m| m.state_space()).collect();
            let to_global = spaces.first().copied() == Some(ptx_isa::StateSpace::Global);
            let from_global = spaces.get(1).copied() == Some(ptx_isa::StateSpace::Global);
            let dir = if to_global {
                k::S2G
            } else if from_global {
                k::G2S
            } else {
                k::S2S
            };
            i.aux = k::BULK | dir << 8;
            let (dst, src) = match dir {
                k::S2G => (Space::Global, Space::Shared),
                k::G2S => (Space::Shared, Space::Global),
                _ => (Space::Shared, Space::Shared),
            };
            addr(d, i, 0, 0, Some(dst))?;
            addr(d, i, 1, 1, Some(src))?;
            i.c = d.src(2, ScalarType::U32)?;
            if dir != k::S2G {
                addr(d, i, 3, 2, Some(Space::Shared))?;
            }
            if d.has(Modifier::MulticastCluster) {
                // the CTAs of the cluster that receive the data: ptxvm runs clusters of one
                // CTA (rank 0), which receives it when bit 0 of ctaMask is set
                i.aux |= k::MULTICAST;
                i.d = d.src(4, ScalarType::U16)?;
            }
            if d.inst.op == Opcode::CpReduceAsyncBulk {
                let op = red_op(d)?;
                let ty = match d.ty()? {
                    ScalarType::B32 | ScalarType::U32 => RedType::U32,
                    ScalarType::S32 => RedType::S32,
                    ScalarType::B64 | ScalarType::U64 => RedType::U64,
                    ScalarType::S64 => RedType::S64,
                    ScalarType::F32 => RedType::F32,
                    ScalarType::F64 => RedType::F64,
                    ScalarType::F16 => RedType::F16,
                    ScalarType::Bf16 => RedType::Bf16,
                    t => return Err(format!("`{}`: type {t:?}", d.inst.full_name())),
                };
                if crate::semantics::mbarrier::reduce(op, ty, 0, 0).is_none() {
                    return Err(format!(
                        "`{}`: this reduction is not defined on this type",
                        d.inst.full_name()
                    ));
                }
                i.aux |= k::REDUCE | (k::red_type_code(ty) << 32) | (k::red_op_code(op) << 40);
            }
        }
        Opcode::CpAsyncBulkPrefetch => {
            i.aux = k::BULK_PREFETCH;
            addr(d, i, 0, 0, Some(Space::Global))?;
            i.c = d.src(1, ScalarType::U32)?;
        }
        Opcode::CpAsyncBulkCommitGroup => i.aux = k::BULK_COMMIT,
        Opcode::CpAsyncBulkWaitGroup => {
            i.aux = k::BULK_WAIT;
            i.imm = imm(d, 0)? as i64;
        }
        Opcode::CpAsyncBulkTensor
        | Opcode::CpReduceAsyncBulkTensor
        | Opcode::CpAsyncBulkPrefetchTensor => tensor(d, i, nops)?,
        Opcode::StAsync | Opcode::RedAsync => store_async(d, i)?,
        op => return Err(format!("`{}` is not an asynchronous copy", op.name())),
    }
    Ok(())
}
