//! The operand/instruction type agreement rules of the ISA ("Type Information for Instructions
//! and Operands").

use ptx_isa::{ScalarType, TypeKind};

/// Whether a register of type `reg` may be an operand of an instruction of type `instr`.
///
/// Bit-size types agree with any type of the same size; signed and unsigned integers agree when
/// their sizes match; floats must match exactly unless the register is a bit type. With
/// `relaxed` (`ld`, `st`, `cvt`) bit and integer instruction types accept wider registers.
pub(crate) fn compatible(instr: ScalarType, reg: ScalarType, relaxed: bool) -> bool {
    let (ik, rk) = (instr.kind(), reg.kind());
    if ik == TypeKind::Pred || rk == TypeKind::Pred {
        return ik == rk;
    }
    let (is, rs) = (instr.size_bits(), reg.size_bits());
    let size_ok = if relaxed { rs >= is } else { rs == is };
    match ik {
        TypeKind::Bit => size_ok,
        TypeKind::Unsigned | TypeKind::Signed => size_ok && rk != TypeKind::Float,
        TypeKind::Float => match rk {
            TypeKind::Bit => size_ok,
            TypeKind::Float => {
                instr == reg
                    || (is == rs
                        && !matches!(instr, ScalarType::F32 | ScalarType::F64)
                        && !matches!(reg, ScalarType::F32 | ScalarType::F64))
            }
            _ => false,
        },
        TypeKind::Pred => false,
    }
}

/// Types a `.reg` declaration may have.
pub(crate) fn is_register_type(t: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        t,
        B8 | B16
            | B32
            | B64
            | B128
            | U8
            | U16
            | U32
            | U64
            | S8
            | S16
            | S32
            | S64
            | F16
            | F16x2
            | F32
            | F64
            | Pred
    )
}

/// The integer or bit type twice as wide (`.s32` gives `.s64`), for `.wide` forms.
pub(crate) fn widened(t: ScalarType) -> Option<ScalarType> {
    let prefix = match t.kind() {
        TypeKind::Unsigned => "u",
        TypeKind::Signed => "s",
        TypeKind::Bit => "b",
        _ => return None,
    };
    ScalarType::from_suffix(&format!("{prefix}{}", t.size_bits() * 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn bit_types_match_any_same_size() {
        assert!(compatible(B32, F32, false));
        assert!(compatible(B32, S32, false));
        assert!(compatible(F32, B32, false));
        assert!(!compatible(B32, B64, false));
        assert!(!compatible(B32, Pred, false));
    }

    #[test]
    fn ints_and_floats() {
        assert!(compatible(U32, S32, false));
        assert!(!compatible(U32, F32, false));
        assert!(!compatible(F32, U32, false));
        assert!(!compatible(F64, F32, false));
        assert!(compatible(F16, B16, false));
    }

    #[test]
    fn relaxed_rules() {
        assert!(compatible(U8, U32, true));
        assert!(compatible(U16, B64, true));
        assert!(!compatible(U32, U16, true));
        assert!(!compatible(F32, F64, true));
        assert!(compatible(F16, B32, true));
    }

    #[test]
    fn widening() {
        assert_eq!(widened(S32), Some(S64));
        assert_eq!(widened(U16), Some(U32));
        assert_eq!(widened(F32), None);
        assert!(!is_register_type(Bf16));
        assert!(is_register_type(F16x2));
    }
}
