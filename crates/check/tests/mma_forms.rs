//! The shapes and types of `mma` and `mma.sp` (without `.kind`) as ptxas judges them:
//! `tests/check/mma/*.ptx` hold one candidate instruction per line — every shape × D/A/B/C
//! combination ptxas 13.5 accepts on sm_90 and every combination one shape or type away from
//! one (the border of the table), the same accepted forms on sm_80, and the fp8 `mma.sp`
//! forms with every accumulator pair on sm_120a — and the `.ptxas.txt` beside each the lines
//! ptxas rejects (`tools/probe-mma-forms.py` writes both, from ptxas's verdict on all 72,600
//! combinations). The checker must reject exactly those lines: its one table of forms,
//! `ptx_isa::matrix::MMA_FORMS`, is also what the interpreter's decoder runs. No ptxas needed.

mod common;

#[test]
fn checker_rejects_exactly_the_mma_forms_ptxas_rejects() {
    let t = common::compare("mma", 3, |l| l.trim_start().starts_with("mma"));
    assert!(
        t.candidates > 2500 && t.rejected > 2300,
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
