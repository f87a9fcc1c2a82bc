//! The last rewrite: the no-op runs that the fast path may step over.

use crate::program::{Insn, Op};

/// Sets every instruction's [`Insn::skip`]: the length of the run of no-ops after it within
/// its function that the fast path may step over. A no-op guarded by if-conversion counts only
/// for the lanes whose guard holds, so it is in the run only after an instruction converted
/// with the same guard: the fast path runs that one only when every lane passes the guard,
/// and the guard cannot change in between (a converted instruction does not write its guard).
pub(crate) fn set_skips(code: &mut [Insn]) {
    for k in 0..code.len() {
        let insn = &code[k];
        // (runs are looked at up to 256 long: a longer one continues from its 256th no-op)
        let run = code[k + 1..]
            .iter()
            .take(256)
            .take_while(|n| {
                matches!(n.op, Op::Nop)
                    && n.func == insn.func
                    && (!n.converted
                        || insn.converted && (n.guard, n.neg) == (insn.guard, insn.neg))
            })
            .count();
        code[k].skip = run as u16;
    }
}
