//! (Being written.)

use crate::compile::Dec;
use crate::program::Insn;

/// Decodes the instructions of this family; `None` when `d` is not one of them.
pub(crate) fn decode(d: &mut Dec<'_, '_>, insn: &mut Insn) -> Option<Result<(), String>> {
    let _ = (d, insn);
    None
}
