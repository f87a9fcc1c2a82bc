//! Stable stand-in for the cargo-fuzz `check` target (`fuzz/fuzz_targets/check.rs`).
//!
//! 1. `replay`: every saved input — `fuzz/seeds/check/*`, the PTX files of `tests/check`,
//!    `tests/parse` and `tests/run` (the seeds the campaign starts from) and
//!    `fuzz/regressions/check/*` — goes through [`ptx_check::fuzz::check_bytes`], the target's
//!    body; a panic fails the test, naming the file.
//! 2. `mutation_fuzz`: a bounded deterministic mutation loop over the same inputs
//!    ([`ptx_check::fuzz::mutate`]), `PTX_FUZZ_ITERS` iterations (default 2000), `PTX_FUZZ_SEED`.
//!    Failing inputs are written to `$CARGO_TARGET_TMPDIR/fuzz-failures/check/`.
//!
//! Regressions whose fix is pending on another branch are listed in [`PENDING`] with their
//! class: reported, never skipped silently, and their files must exist.

use ptx_check::fuzz::{
    any_file, check_bytes, env_or, is_ptx, mutate, panic_text, pending_class, quiet_panics,
    replay_saved, save_failures, saved_inputs, Rng,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Regressions in `fuzz/regressions/check/` whose fix is pending: (file name, crash class).
const PENDING: &[(&str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn inputs() -> Vec<(String, Vec<u8>)> {
    let root = root();
    let mut v = saved_inputs(&root, "fuzz/seeds/check", any_file).unwrap();
    for t in ["tests/check", "tests/parse", "tests/run"] {
        v.extend(saved_inputs(&root, t, is_ptx).unwrap());
    }
    v.extend(saved_inputs(&root, "fuzz/regressions/check", any_file).unwrap());
    v
}

fn check(data: &[u8]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        check_bytes(data);
    }))
    .map_err(|p| format!("panic: {}", panic_text(&*p)))
}

#[test]
fn replay() {
    replay_saved(&root(), "fuzz/regressions/check", PENDING, inputs(), check);
}

#[test]
fn mutation_fuzz() {
    let iters: usize = env_or("PTX_FUZZ_ITERS", 2000);
    let seed: u64 = env_or("PTX_FUZZ_SEED", 0x5EED_C4EC_0000_0001);
    let seeds: Vec<String> = inputs()
        .into_iter()
        .filter(|(name, _)| pending_class(PENDING, name).is_none())
        .map(|(_, b)| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let mut rng = Rng::new(seed);
    let mut failures: Vec<(String, String)> = Vec::new();
    quiet_panics(|| {
        for _ in 0..iters {
            let mut input = rng.pick(&seeds).clone();
            for _ in 0..1 + rng.below(4) {
                let other = rng.pick(&seeds).clone();
                input = mutate(&mut rng, &input, &other);
            }
            if let Err(e) = check(input.as_bytes()) {
                failures.push((input, e));
            }
        }
    });
    if failures.is_empty() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures/check");
    let report = save_failures(&dir, &failures, 10).unwrap();
    panic!(
        "{} of {iters} mutated inputs fail (seed {seed}):\n{report}",
        failures.len()
    );
}
