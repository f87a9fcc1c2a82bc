//! Decoding of the warp-level matrix instructions `mma`, `ldmatrix`, `stmatrix`,
//! `movmatrix` and `wmma` (handlers in [`crate::ops_matrix`]).
//!
//! An `mma` names up to 20 registers (`.m16n8k16 .f64`: 4 + 8 + 4 + 4): their slots are packed
//! as 16-bit indices into the instruction's slot fields (see [`crate::ops_matrix::MmaCfg`]), in
//! the order D, A, B, C.

use super::{Dec, R};
use crate::ops_matrix::{self as mx, MmaCfg};
use crate::ops_move::space_code;
use crate::program::{Insn, Op, Space};
use ptx_ir::Operand;
use ptx_isa::matrix::{self as pmx, FormOrigin, MatrixShape, MmaVariant, WmmaFragment};
use ptx_isa::ScalarType;
use ptx_semantics::matrix::{self, Elem, Frag, Product, Shape};

/// The element type a modifier spells, if it is one `mma`, `wmma` or `wgmma` takes.
pub(super) fn elem_of(text: &str) -> Option<Elem> {
    Some(match text {
        ".f16" => Elem::F16,
        ".bf16" => Elem::Bf16,
        ".tf32" => Elem::Tf32,
        ".e4m3" => Elem::E4m3,
        ".e5m2" => Elem::E5m2,
        ".f32" => Elem::F32,
        ".f64" => Elem::F64,
        ".s8" => Elem::S8,
        ".u8" => Elem::U8,
        ".s4" => Elem::S4,
        ".u4" => Elem::U4,
        ".s32" => Elem::S32,
        ".b1" => Elem::B1,
        _ => return None,
    })
}

/// The value slots of an `mma`/`wmma.mma`'s four register vectors D, A, B, C, in that
/// order, each checked to hold `counts[k]` registers (D's as destinations).
fn fragment_slots(d: &mut Dec<'_, '_>, name: &str, counts: [u32; 4]) -> R<Vec<u32>> {
    fragment_slots_as(d, name, &counts.map(|n| n as usize), ScalarType::B64)
}

/// [`fragment_slots`] with the sources read as `src` (`.b32` for the kind forms).
pub(super) fn fragment_slots_as(
    d: &mut Dec<'_, '_>,
    name: &str,
    counts: &[usize],
    src: ScalarType,
) -> R<Vec<u32>> {
    let mut slots = Vec::new();
    for (k, &n) in counts.iter().enumerate() {
        let ops = vector(d, k)?;
        if ops.len() != n {
            return Err(format!(
                "`{name}`: operand {} must be a vector of {n} registers, found {}",
                k + 1,
                ops.len()
            ));
        }
        if k == 0 {
            slots.extend(dst_slots(d, &ops)?);
        } else {
            for o in ops {
                slots.push(d.src_op(o, src)?);
            }
        }
    }
    Ok(slots)
}

/// The first `.mMnNkK` modifier.
fn shape_in(texts: &[&str]) -> Option<Shape> {
    texts
        .iter()
        .find_map(|t| pmx::parse_shape(t))
        .map(|(m, n, k)| Shape { m, n, k })
}

/// The registers of vector operand `k` (a lone register is a vector of one).
pub(super) fn vector<'m>(d: &Dec<'_, 'm>, k: usize) -> R<Vec<&'m Operand>> {
    Ok(match d.operand(k)? {
        Operand::Vector(v) => v.iter().collect(),
        o => vec![o],
    })
}

/// Operand `k`, or the register of a one-element vector `{%r}` there (ptxas takes that spelling
/// for the metadata of `mma.sp` and the scale data of the block-scaled `mma` kinds).
pub(super) fn single<'m>(d: &Dec<'_, 'm>, k: usize) -> R<&'m Operand> {
    match d.operand(k)? {
        Operand::Vector(v) if v.len() == 1 => Ok(&v[0]),
        Operand::Vector(v) => Err(format!(
            "`{}`: operand {} must be one register, found a vector of {}",
            d.inst.full_name(),
            k + 1,
            v.len()
        )),
        o => Ok(o),
    }
}

/// Slots of a destination vector.
pub(super) fn dst_slots(d: &mut Dec<'_, '_>, ops: &[&Operand]) -> R<Vec<u32>> {
    ops.iter()
        .map(|o| match o {
            Operand::Sink => Ok(d.dst_sink()),
            Operand::Reg(_) => d.src_op(o, ScalarType::B64),
            o => Err(format!("expected a register destination, found {o:?}")),
        })
        .collect()
}

/// The type suffix of an element type (`.f16`): the key of the form table.
fn suffix(e: Elem) -> &'static str {
    match e {
        Elem::F16 => ".f16",
        Elem::Bf16 => ".bf16",
        Elem::Tf32 => ".tf32",
        Elem::E4m3 => ".e4m3",
        Elem::E5m2 => ".e5m2",
        Elem::F32 => ".f32",
        Elem::F64 => ".f64",
        Elem::S8 => ".s8",
        Elem::U8 => ".u8",
        Elem::S4 => ".s4",
        Elem::U4 => ".u4",
        Elem::S32 => ".s32",
        Elem::B1 => ".b1",
    }
}

/// The table's key of a shape.
fn mnk(s: Shape) -> MatrixShape {
    (s.m, s.n, s.k)
}

/// The shape, the four types (D, A, B, C) and the `.row`/`.col` layouts of an `mma` or
/// `mma.sp`, with the shape/type combination looked up in the form table
/// ([`ptx_isa::matrix::MMA_FORMS`], which the checker uses too): the forms ptxas alone takes
/// have no documented fragment layout to run.
fn mma_header<'t>(
    name: &str,
    texts: &[&'t str],
    variant: MmaVariant,
) -> R<(Shape, [Elem; 4], Vec<&'t str>)> {
    let shape = shape_in(texts).ok_or_else(|| format!("`{name}` has no shape"))?;
    let elems: Vec<Elem> = texts.iter().filter_map(|t| elem_of(t)).collect();
    let types: [Elem; 4] = elems
        .as_slice()
        .try_into()
        .map_err(|_| format!("`{name}`: expected four types (d, a, b, c)"))?;
    match pmx::mma_form(variant, mnk(shape), types.map(suffix)) {
        Some(r) if r.origin == FormOrigin::Isa => {}
        Some(_) => {
            return Err(format!(
                "`{name}`: ptxas takes this form, but the PTX ISA does not list it (nor its \
                 fragment layout), so ptxvm does not run it"
            ))
        }
        None => {
            return Err(format!(
                "`{name}`: this shape and type combination is not an `{}` form",
                variant.name()
            ))
        }
    }
    let layouts = texts
        .iter()
        .copied()
        .filter(|t| *t == ".row" || *t == ".col")
        .collect();
    Ok((shape, types, layouts))
}

/// `mma.sync.aligned.shape.alayout.blayout{.satfinite}.dtype.atype.btype.ctype{.bitOp.popc}
/// d, a, b, c`.
pub(crate) fn decode_mma(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    // `mma.sp::ordered_metadata` is an `mma` with that modifier
    if texts.iter().any(|t| t.starts_with(".sp")) {
        return decode_mma_sp(d, insn);
    }
    if texts
        .iter()
        .any(|t| t.starts_with(".kind") || t.starts_with(".block_scale"))
    {
        return super::matrix_kind::decode_mma_kind(d, insn);
    }
    let (shape, types, layouts) = mma_header(&name, &texts, MmaVariant::Dense)?;
    let [dt, at, bt, ct] = types;
    let (row_a, col_b) = match layouts.as_slice() {
        [a, b] => (*a == ".row", *b == ".col"),
        _ => return Err(format!("`{name}` needs the layouts of A and B")),
    };
    let quad = matrix::groups(shape, at) == 4;
    if !(quad || row_a && col_b) {
        return Err(format!("`{name}`: this shape takes `.row.col` only"));
    }
    let prod = if at == Elem::B1 {
        if texts.contains(&".xor") {
            Product::Xor
        } else if texts.contains(&".and") {
            Product::And
        } else {
            return Err(format!("`{name}` needs `.xor.popc` or `.and.popc`"));
        }
    } else if at == Elem::F64 {
        Product::Fma
    } else {
        Product::Mul
    };
    let regs = |f: Frag, e: Elem| matrix::elements(shape, at, f) / e.per_reg();
    let counts = [
        regs(Frag::C, dt),
        regs(Frag::A, at),
        regs(Frag::B, bt),
        regs(Frag::C, ct),
    ];
    let slots = fragment_slots(d, &name, counts)?;
    let cfg = MmaCfg {
        shape,
        types,
        row_a,
        col_b,
        satfinite: texts.contains(&".satfinite"),
        prod,
        counts,
    };
    mx::pack_slots(insn, &slots).map_err(|e| format!("`{name}`: {e}"))?;
    insn.aux |= cfg.pack();
    insn.b = mx::NO_MEMBER;
    insn.op = Op::WarpSync(mx::mma);
    Ok(())
}

/// `mma.sp{::ordered_metadata}.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype
/// d, a, b, c, e, f`: `mma` with a 2:4 (`.tf32` 1:2, `.s4`/`.u4` pair-wise 4:8) structured sparse
/// A, metadata `e` and sparsity selector `f` (handler [`mx::mma_sp`]).
pub(crate) fn decode_mma_sp(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    if texts
        .iter()
        .any(|t| t.starts_with(".kind") || t.starts_with(".block_scale"))
    {
        return super::matrix_kind::decode_mma_kind(d, insn);
    }
    let ordered = name.contains("::ordered_metadata");
    let (shape, types, layouts) = mma_header(&name, &texts, MmaVariant::Sparse)?;
    let [dt, at, bt, ct] = types;
    if layouts != [".row", ".col"] {
        return Err(format!("`{name}` takes `.row.col` only"));
    }
    let satfinite = texts.contains(&".satfinite");
    if satfinite && dt != Elem::S32 {
        return Err(format!(
            "`{name}`: `.satfinite` takes integer multiplicands"
        ));
    }
    let sel = match d.operand(5)? {
        Operand::Imm(ptx_ir::Imm::Int(v)) => *v as i64,
        _ => {
            return Err(format!(
                "`{name}`: the sparsity selector must be an integer constant"
            ))
        }
    };
    let top = 4 / matrix::sparse_meta_threads(shape, at) as i64;
    if !(0..top).contains(&sel) {
        return Err(format!(
            "`{name}`: sparsity selector {sel} out of range, expected 0..{}",
            top - 1
        ));
    }
    let regs = |f: Frag, e: Elem| matrix::elements(shape, at, f) / e.per_reg();
    let counts = [
        regs(Frag::C, dt),
        matrix::sparse_a_regs(shape, at),
        regs(Frag::B, bt),
        regs(Frag::C, ct),
    ];
    let mut slots = fragment_slots(d, &name, counts)?;
    slots.push(d.src_op(single(d, 4)?, ScalarType::B32)?);
    let cfg = MmaCfg {
        shape,
        types,
        row_a: true,
        col_b: true,
        satfinite,
        prod: Product::Mul,
        counts,
    };
    mx::pack_slots(insn, &slots).map_err(|e| format!("`{name}`: {e}"))?;
    insn.aux |= cfg.pack() | mx::sparse_bits(ordered, sel as u64);
    insn.b = mx::NO_MEMBER;
    insn.op = Op::WarpSync(mx::mma_sp);
    Ok(())
}

/// `.x1`, `.x2`, `.x4` and the `.trans` of `ldmatrix`/`stmatrix`, checking the `.m8n8 .b16` form.
fn ldst_form(d: &Dec<'_, '_>) -> R<(u32, bool)> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    if !texts.contains(&".m8n8") || !texts.contains(&".b16") {
        return Err(format!(
            "`{name}`: expected `.m8n8 .b16` (or a `.b8` shape: `.m16n16`, `.m8n16`, `.m16n8`)"
        ));
    }
    let num = if texts.contains(&".x1") {
        1
    } else if texts.contains(&".x2") {
        2
    } else if texts.contains(&".x4") {
        4
    } else {
        return Err(format!("`{name}` needs `.x1`, `.x2` or `.x4`"));
    };
    Ok((num, texts.contains(&".trans")))
}

/// The memory operand and the register vector of a fragment load (`ldmatrix`, `wmma.load`:
/// `d, [a]`) or store (`stmatrix`, `wmma.store`: `[a], d`, `store`): the vector's value slots
/// (checked to hold `nregs` registers; sources read as `src`) and the address. The address is
/// shared or generic, or also global where `global_ok`.
fn fragment_memory(
    d: &mut Dec<'_, '_>,
    name: &str,
    store: bool,
    nregs: usize,
    src: ScalarType,
    global_ok: bool,
) -> R<(Vec<u32>, (u32, i64, Space))> {
    let (vi, ai) = if store { (1, 0) } else { (0, 1) };
    let (base, imm, space) = d.address(ai)?;
    match space {
        Space::Shared | Space::Generic => {}
        Space::Global if global_ok => {}
        _ if global_ok => {
            return Err(format!(
                "`{name}` addresses generic, `.global` or `.shared` memory only"
            ))
        }
        _ => return Err(format!("`{name}` addresses shared memory only")),
    }
    let ops = vector(d, vi)?;
    if ops.len() != nregs {
        return Err(format!(
            "`{name}` needs a vector of {nregs} registers, found {}",
            ops.len()
        ));
    }
    let slots = if store {
        ops.iter()
            .map(|o| d.src_op(o, src))
            .collect::<R<Vec<u32>>>()?
    } else {
        dst_slots(d, &ops)?
    };
    Ok((slots, (base, imm, space)))
}

/// The shared-memory address (into `insn.a`/`insn.imm`) and the `nregs` registers of an
/// `ldmatrix` (destinations) or `stmatrix` (sources, `store`) into `insn.v`; the address's
/// state space.
pub(super) fn ldst_operands(
    d: &mut Dec<'_, '_>,
    insn: &mut Insn,
    name: &str,
    store: bool,
    nregs: usize,
) -> R<Space> {
    let (slots, (base, imm, space)) =
        fragment_memory(d, name, store, nregs, ScalarType::B32, false)?;
    insn.v[..slots.len()].copy_from_slice(&slots);
    insn.a = base;
    insn.imm = imm;
    Ok(space)
}

/// `ldmatrix.sync.aligned.m8n8.num{.trans}{.shared}.b16 r, [p]` and
/// `stmatrix.sync.aligned.m8n8.num{.trans}{.shared}.b16 [p], r`.
pub(crate) fn decode_ldst_matrix(d: &mut Dec<'_, '_>, insn: &mut Insn, store: bool) -> R<()> {
    let name = d.inst.full_name();
    if d.inst
        .mods
        .iter()
        .any(|m| matches!(m.text(), ".m16n16" | ".m8n16" | ".m16n8"))
    {
        return super::matrix_kind::decode_ldst_b8(d, insn, store);
    }
    let (num, trans) = ldst_form(d)?;
    let space = ldst_operands(d, insn, &name, store, num as usize)?;
    insn.aux = num as u64 | (trans as u64) << 3 | space_code(space) << 8;
    insn.b = mx::NO_MEMBER;
    insn.op = Op::WarpSync(if store { mx::stmatrix } else { mx::ldmatrix });
    Ok(())
}

/// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`.
pub(crate) fn decode_movmatrix(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    if !(texts.contains(&".m8n8") && texts.contains(&".trans") && texts.contains(&".b16")) {
        return Err(format!("`{name}`: expected `.m8n8.trans.b16`"));
    }
    let dst = vector(d, 0)?;
    insn.d = dst_slots(d, &dst)?[0];
    insn.a = d.src(1, ScalarType::B32)?;
    insn.b = mx::NO_MEMBER;
    insn.op = Op::WarpSync(mx::movmatrix);
    Ok(())
}

/// Whether `wmma.load`/`wmma.store` takes fragment `f` of type `e` with shape `s`
/// ([`ptx_isa::matrix::WMMA_FORMS`]).
fn wmma_fragment_ok(s: Shape, f: Frag, e: Elem) -> bool {
    let frag = match f {
        Frag::A => WmmaFragment::A,
        Frag::B => WmmaFragment::B,
        Frag::C => WmmaFragment::C,
    };
    pmx::wmma_fragment_form(mnk(s), frag, suffix(e))
}

/// Whether `wmma.mma` takes shape `s` with the types D, A, B, C.
fn wmma_form_ok(s: Shape, types: [Elem; 4]) -> bool {
    pmx::wmma_mma_form(mnk(s), types.map(suffix))
}

/// `wmma.load.{a,b,c}.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}` and
/// `wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}`.
pub(crate) fn decode_wmma_ldst(d: &mut Dec<'_, '_>, insn: &mut Insn, store: bool) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    let shape = shape_in(&texts).ok_or_else(|| format!("`{name}` has no shape"))?;
    let frag = if store {
        if !texts.contains(&".d") {
            return Err(format!("`{name}`: `wmma.store` stores `.d`"));
        }
        Frag::C
    } else if texts.contains(&".a") {
        Frag::A
    } else if texts.contains(&".b") {
        Frag::B
    } else if texts.contains(&".c") {
        Frag::C
    } else {
        return Err(format!("`{name}` needs `.a`, `.b` or `.c`"));
    };
    let elems: Vec<Elem> = texts.iter().filter_map(|t| elem_of(t)).collect();
    let [e] = elems[..] else {
        return Err(format!("`{name}`: expected one element type"));
    };
    if !wmma_fragment_ok(shape, frag, e) {
        return Err(format!(
            "`{name}`: this shape and type combination is not a `wmma` form"
        ));
    }
    let row = match (texts.contains(&".row"), texts.contains(&".col")) {
        (true, false) => true,
        (false, true) => false,
        _ => return Err(format!("`{name}` needs `.row` or `.col`")),
    };
    // sub-byte multiplicands: A is `.row`, B is `.col` only
    if matches!(e, Elem::S4 | Elem::U4 | Elem::B1) && (frag == Frag::A) != row {
        return Err(format!(
            "`{name}`: sub-byte fragments are `.row` for A and `.col` for B"
        ));
    }
    let n = matrix::wmma_regs(shape, frag, e);
    let (slots, (base, imm, space)) =
        fragment_memory(d, &name, store, n as usize, ScalarType::B64, true)?;
    let has_stride = d.inst.operands.len() > 2;
    let stride = if has_stride {
        d.src(2, ScalarType::U32)?
    } else {
        0
    };
    mx::pack_slots(insn, &slots).map_err(|e| format!("`{name}`: {e}"))?;
    insn.v[1] = base;
    insn.v[2] = stride;
    insn.imm = imm;
    insn.aux = mx::wmma_ldst_cfg(frag, e, shape, row, space_code(space), has_stride, n);
    insn.b = mx::NO_MEMBER;
    insn.op = Op::WarpSync(if store { mx::wmma_store } else { mx::wmma_load });
    Ok(())
}

/// `wmma.mma{.op.popc}.sync.aligned.alayout.blayout.shape{.rnd}.dtype{.atype.btype}.ctype
/// {.satfinite} d, a, b, c` (`.f16` multiplicands name only the accumulator types).
pub(crate) fn decode_wmma_mma(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    let shape = shape_in(&texts).ok_or_else(|| format!("`{name}` has no shape"))?;
    let elems: Vec<Elem> = texts.iter().filter_map(|t| elem_of(t)).collect();
    let types = match elems[..] {
        [dt, ct] => [dt, Elem::F16, Elem::F16, ct],
        [dt, at, bt, ct] => [dt, at, bt, ct],
        _ => return Err(format!("`{name}`: expected the types d, c or d, a, b, c")),
    };
    let [dt, at, bt, ct] = types;
    if !wmma_form_ok(shape, types) {
        return Err(format!(
            "`{name}`: this shape and type combination is not a `wmma.mma` form"
        ));
    }
    let layouts = texts
        .iter()
        .filter(|t| **t == ".row" || **t == ".col")
        .count();
    if layouts != 2 {
        return Err(format!("`{name}` needs the layouts of A and B"));
    }
    let satfinite = texts.contains(&".satfinite");
    if satfinite && !matches!(at, Elem::F16 | Elem::S8 | Elem::U8 | Elem::S4 | Elem::U4) {
        return Err(format!(
            "`{name}`: `.satfinite` takes `.f16` or integer multiplicands"
        ));
    }
    let prod = match at {
        Elem::B1 if texts.contains(&".xor") => Product::Xor,
        Elem::B1 if texts.contains(&".and") => Product::And,
        Elem::B1 => return Err(format!("`{name}` needs `.xor.popc` or `.and.popc`")),
        Elem::F64 => Product::Fma,
        _ => Product::Mul,
    };
    let rnd = if texts.contains(&".rz") {
        1
    } else if texts.contains(&".rm") {
        2
    } else if texts.contains(&".rp") {
        3
    } else {
        0
    };
    if rnd != 0 && at != Elem::F64 {
        return Err(format!("`{name}`: a rounding modifier takes `.f64` only"));
    }
    let counts = [
        matrix::wmma_regs(shape, Frag::C, dt),
        matrix::wmma_regs(shape, Frag::A, at),
        matrix::wmma_regs(shape, Frag::B, bt),
        matrix::wmma_regs(shape, Frag::C, ct),
    ];
    let slots = fragment_slots(d, &name, counts)?;
    d.b.lists.push(slots);
    insn.imm = d.b.lists.len() as i64 - 1;
    insn.aux = mx::wmma_mma_cfg(types, shape, satfinite, prod, rnd);
    insn.b = mx::NO_MEMBER;
    insn.op = Op::WarpSync(mx::wmma_mma);
    Ok(())
}

/// `wmma` spelled with its operation as a modifier (`.load`, `.store`, `.mma`).
pub(crate) fn decode_wmma(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    if texts.contains(&".load") {
        decode_wmma_ldst(d, insn, false)
    } else if texts.contains(&".store") {
        decode_wmma_ldst(d, insn, true)
    } else if texts.contains(&".mma") {
        decode_wmma_mma(d, insn)
    } else {
        Err(format!(
            "`{}`: expected `wmma.load`, `wmma.store` or `wmma.mma`",
            d.inst.full_name()
        ))
    }
}
