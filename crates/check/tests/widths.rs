//! Operand widths as ptxas judges them (ISA 9.4.1, "Operand Size Exceeding Instruction-Type
//! Size", and the bit-size type rules): `tests/check/widths/widths_NN.ptx` hold one candidate
//! instruction per line — `ld`, `st`, `cvt`, atomics, shuffles, `mov` and ALU forms with each
//! data operand given a register of every declared type — and `widths_NN.ptxas.txt` the lines
//! ptxas 13.5 rejects (`tools/probe-widths.py` writes both). The checker must reject exactly
//! those lines: an accepted line ptxas refuses would run with a width the ISA does not define,
//! and a refused line ptxas takes would stop a real program. No ptxas needed.

mod common;

#[test]
fn checker_rejects_exactly_the_widths_ptxas_rejects() {
    let t = common::compare("widths", 5, |l| l.starts_with('\t'));
    assert!(
        t.candidates > 5000 && t.rejected > 2000,
        "{} candidates, {} rejected",
        t.candidates,
        t.rejected
    );
    assert!(
        t.bad.is_empty(),
        "{} disagreements with ptxas:\n{}",
        t.bad.len(),
        t.bad.join("\n")
    );
}
