//! Decoding of the sm_120a `mma` kinds (`.kind::f8f6f4`, `.kind::mxf8f6f4`, `.kind::mxf4`,
//! `.kind::mxf4nvf4`) and of the sm_100a `.b8` shapes of `ldmatrix`/`stmatrix` (handlers in
//! [`crate::ops_mma_kind`]). The forms accepted are those ptxas 13.5 accepts.

use super::matrix::{single, vector};
use super::{Dec, R};
use crate::ops_matrix::NO_MEMBER;
use crate::ops_mma_kind::{self as mk, B8Shape, Kind, KindCfg};
use crate::ops_move::space_code;
use crate::program::{Insn, Op};
use ptx_ir::Operand;
use ptx_isa::ScalarType;
use ptx_semantics::mma_kind::{self as mmk, KindType, ScaleType, SrcFmt};

/// `mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.dtype.atype.btype.ctype d, a, b, c` and
/// `mma.sync.aligned.mMnNkK.row.col.kind.block_scale{.scale_vec::NX}.f32.atype.btype.f32.stype
/// d, a, b, c, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}`
/// (the modifiers in any order, as ptxas takes them), and their sparse forms
/// `mma.sp::ordered_metadata` (`.m16n8k64`, `.m16n8k128` for `.kind::mxf4`/`.kind::mxf4nvf4`)
/// with the metadata `e` and sparsity selector `f` (0) after C.
pub(super) fn decode_mma_kind(d: &mut Dec<'_, '_>, insn: &mut Insn) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    let kind = match texts.iter().find(|t| t.starts_with(".kind")) {
        Some(&".kind::f8f6f4") => Kind::F8f6f4,
        Some(&".kind::mxf8f6f4") => Kind::Mxf8f6f4,
        Some(&".kind::mxf4") => Kind::Mxf4,
        Some(&".kind::mxf4nvf4") => Kind::Mxf4nvf4,
        Some(t) => {
            return Err(format!(
                "`{name}`: `{t}` is not a kind of `mma.sync` (ptxas 13.5 takes `.kind::f8f6f4`, \
                 `.kind::mxf8f6f4`, `.kind::mxf4` and `.kind::mxf4nvf4`)"
            ))
        }
        None => return Err(format!("`{name}`: expected a `.kind`")),
    };
    // `mma.sp`, `mma.sp::ordered_metadata`, or `.sp::ordered_metadata` among the modifiers
    let sparse = name.split('.').any(|p| p == "sp" || p.starts_with("sp::"));
    if sparse && !name.contains("::ordered_metadata") {
        return Err(format!(
            "`{name}`: the sparse `.kind` forms are `mma.sp::ordered_metadata` only (ptxas: \
             \"Illegal modifier '.sp'\")"
        ));
    }
    let scaled = texts.contains(&".block_scale");
    if scaled == (kind == Kind::F8f6f4) {
        return Err(if scaled {
            format!("`{name}`: `.kind::f8f6f4` takes no `.block_scale`")
        } else {
            format!("`{name}`: this kind needs `.block_scale`")
        });
    }
    let vec_text = texts.iter().find(|t| t.starts_with(".scale_vec"));
    let vec = match vec_text {
        Some(&".scale_vec::1X") => Some(1),
        Some(&".scale_vec::2X") => Some(2),
        Some(&".scale_vec::4X") => Some(4),
        Some(t) => return Err(format!("`{name}`: unknown `{t}`")),
        None => None,
    };
    let shape = match (kind, sparse) {
        (Kind::F8f6f4 | Kind::Mxf8f6f4, false) => ".m16n8k32",
        (Kind::Mxf4 | Kind::Mxf4nvf4, false) | (Kind::F8f6f4 | Kind::Mxf8f6f4, true) => ".m16n8k64",
        (Kind::Mxf4 | Kind::Mxf4nvf4, true) => ".m16n8k128",
    };
    if !texts.contains(&shape) {
        return Err(format!(
            "`{name}`: the shape of this kind is `{shape}`, the only one ptxas takes"
        ));
    }
    if !(texts.contains(&".row") && texts.contains(&".col")) || texts.contains(&".satfinite") {
        return Err(format!(
            "`{name}`: this form takes `.row.col` and no `.satfinite`"
        ));
    }
    // d, a, b, c types and the scale type, in order
    let mut acc = Vec::new();
    let mut mul = Vec::new();
    let mut stype = None;
    for t in &texts {
        match *t {
            ".f32" | ".f16" => acc.push(*t == ".f16"),
            ".ue8m0" => stype = Some(ScaleType::Ue8m0),
            ".ue4m3" => stype = Some(ScaleType::Ue4m3),
            t => mul.extend(KindType::of(t)),
        }
    }
    let ([dt16, ct16], [a, b]) = match (&acc[..], &mul[..]) {
        (&[x, y], &[a, b]) => ([x, y], [a, b]),
        _ => return Err(format!("`{name}`: expected the types d, a, b, c")),
    };
    if dt16 != ct16 || (scaled && dt16) {
        return Err(format!(
            "`{name}`: D and C must have the same type{}",
            if scaled { ", `.f32`" } else { "" }
        ));
    }
    if matches!(kind, Kind::Mxf4 | Kind::Mxf4nvf4) && (a != KindType::E2m1 || b != KindType::E2m1) {
        return Err(format!("`{name}`: this kind multiplies `.e2m1` only"));
    }
    let scale = if scaled {
        let Some(st) = stype else {
            return Err(format!(
                "`{name}`: expected the scale type `.ue8m0` or `.ue4m3`"
            ));
        };
        // Table "Valid combinations of .scale_vec_size and .kind", as ptxas checks it
        let vec = match (kind, vec, st) {
            (Kind::Mxf8f6f4, None | Some(1), ScaleType::Ue8m0) => 1,
            (Kind::Mxf4, None | Some(2), ScaleType::Ue8m0) => 2,
            (Kind::Mxf4nvf4, Some(2), ScaleType::Ue8m0) => 2,
            (Kind::Mxf4nvf4, Some(4), _) => 4,
            _ => {
                return Err(format!(
                    "`{name}`: not a valid combination of kind, `.scale_vec` and scale type \
                     (`.kind::mxf8f6f4`: 1X `.ue8m0`; `.kind::mxf4`: 2X `.ue8m0`; \
                     `.kind::mxf4nvf4`: 2X `.ue8m0` or 4X `.ue8m0`/`.ue4m3`)"
                ))
            }
        };
        Some((vec, st))
    } else {
        if vec.is_some() || stype.is_some() {
            return Err(format!("`{name}`: `.kind::f8f6f4` has no scale factors"));
        }
        None
    };
    let cfg = KindCfg {
        kind,
        a,
        b,
        f16_acc: dt16,
        scale,
        sparse,
    };
    let counts = cfg.counts();
    // d, a, b, c {, e, f} {, scale-a-data, {..}, scale-b-data, {..}}
    let sp = if sparse { 2 } else { 0 };
    let want_ops = if scaled { 8 } else { 4 } + sp;
    if d.inst.operands.len() != want_ops {
        return Err(format!(
            "`{name}` takes {want_ops} operands, found {}",
            d.inst.operands.len()
        ));
    }
    let mut slots = super::matrix::fragment_slots_as(d, &name, &counts, ScalarType::B32)?;
    if sparse {
        slots.push(d.src_op(single(d, 4)?, ScalarType::B32)?);
        // the sparsity selector: the constant 0 (ptxas: "unexpected value '1', expected to be 0")
        if !matches!(d.operand(5)?, Operand::Imm(ptx_ir::Imm::Int(0))) {
            return Err(format!(
                "`{name}`: the sparsity selector must be the constant 0 (the four threads of \
                 each quad hold the metadata)"
            ));
        }
    }
    if scaled {
        for k in [4 + sp, 6 + sp] {
            // a register (or `{%r}`), as ptxas requires ("Arguments mismatch" for an immediate)
            let o = single(d, k)?;
            if !matches!(o, Operand::Reg(_)) {
                return Err(format!(
                    "`{name}`: operand {} (the scale data) must be a `.b32` register",
                    k + 1
                ));
            }
            slots.push(d.src_op(o, ScalarType::B32)?);
            let sel = vector(d, k + 1)?;
            if sel.len() != 2 {
                return Err(format!(
                    "`{name}`: operand {} must be the selector pair {{byte-id, thread-id}}",
                    k + 2
                ));
            }
            // immediates out of the ISA's table are refused here, as ptxas refuses them
            // ("unexpected value '1', expected to be 0 or 2"); registers are checked when the
            // instruction runs
            let vec = scale.map_or(1, |(v, _)| v);
            let imm = |o: &Operand| match o {
                Operand::Imm(i) => Some(super::imm_bits(*i, ScalarType::U16)),
                _ => None,
            };
            let (byte_id, thread_id) = (imm(sel[0]), imm(sel[1]));
            let is_a = k == 4 + sp;
            let bad_byte = byte_id.is_some_and(|b| !mmk::selectors_valid(vec, b, 0, is_a));
            let bad_thread = thread_id.is_some_and(|t| !mmk::selectors_valid(1, 0, t, is_a));
            if bad_byte || bad_thread {
                let which = if is_a { "a" } else { "b" };
                return Err(format!(
                    "`{name}`: selector {{byte-id-{which}, thread-id-{which}}} out of range for \
                     `.scale_vec::{vec}X` (byte-id {}, thread-id-{which} {})",
                    match vec {
                        1 => "0 to 3",
                        2 => "0 or 2",
                        _ => "0",
                    },
                    if is_a { "0 or 1" } else { "0 to 3" }
                ));
            }
            for o in sel {
                slots.push(d.src_op(o, ScalarType::U16)?);
            }
        }
    }
    d.b.lists.push(slots);
    insn.imm = d.b.lists.len() as i64 - 1;
    insn.aux = cfg.pack();
    insn.b = NO_MEMBER;
    insn.op = Op::WarpSync(mk::mma_kind);
    Ok(())
}

/// `ldmatrix.sync.aligned.m16n16.num.trans{.ss}.b8` (or `.b8x16.src_fmt`),
/// `ldmatrix.sync.aligned.m8n16.num{.ss}.b8x16.src_fmt` and
/// `stmatrix.sync.aligned.m16n8.num.trans{.ss}.b8`.
pub(super) fn decode_ldst_b8(d: &mut Dec<'_, '_>, insn: &mut Insn, store: bool) -> R<()> {
    let name = d.inst.full_name();
    let texts: Vec<&str> = d.inst.mods.iter().map(|m| m.text()).collect();
    let has = |t: &str| texts.contains(&t);
    let shape = if store && has(".m16n8") {
        B8Shape::M16n8
    } else if !store && has(".m16n16") {
        B8Shape::M16n16
    } else if !store && has(".m8n16") {
        B8Shape::M8n16
    } else {
        return Err(format!("`{name}`: not a shape of this instruction"));
    };
    let num = if has(".x1") {
        1
    } else if has(".x2") {
        2
    } else if has(".x4") {
        4
    } else {
        return Err(format!("`{name}` needs `.x1`, `.x2` or `.x4`"));
    };
    let fmt = if has(".b6x16_p32") {
        SrcFmt::B6x16P32
    } else if has(".b4x16_p64") {
        SrcFmt::B4x16P64
    } else {
        SrcFmt::B8
    };
    let unpacks = fmt != SrcFmt::B8;
    let trans = has(".trans");
    // as ptxas: `.m16n16` and `.m16n8` need `.trans` (and `.m16n16` one or two matrices),
    // `.m8n16` forbids it and needs `.b8x16` with a source format; `stmatrix` stores `.b8`
    let ok = match shape {
        B8Shape::M16n16 => trans && num <= 2 && (has(".b8") || has(".b8x16") && unpacks),
        B8Shape::M8n16 => !trans && has(".b8x16") && unpacks,
        B8Shape::M16n8 => trans && has(".b8") && !unpacks,
    };
    if !ok {
        return Err(format!(
            "`{name}`: not a form ptxas takes (`ldmatrix .m16n16.{{x1,x2}}.trans` `.b8` or \
             `.b8x16.{{b6x16_p32,b4x16_p64}}`, `ldmatrix .m8n16` `.b8x16.{{b6x16_p32,b4x16_p64}}` \
             without `.trans`, `stmatrix .m16n8.trans.b8`)"
        ));
    }
    let nregs = if shape == B8Shape::M16n16 {
        2 * num
    } else {
        num
    };
    let space = super::matrix::ldst_operands(d, insn, &name, store, nregs as usize)?;
    insn.aux = mk::b8_cfg(num, shape, fmt, space_code(space));
    insn.b = NO_MEMBER;
    insn.op = Op::WarpSync(if store {
        mk::stmatrix_b8
    } else {
        mk::ldmatrix_b8
    });
    Ok(())
}
