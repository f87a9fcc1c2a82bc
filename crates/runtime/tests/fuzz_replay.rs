//! Stable stand-in for the cargo-fuzz `run` target (`fuzz/fuzz_targets/run.rs`).
//!
//! 1. `replay`: every saved input — `fuzz/seeds/run/*`, every `tests/run/**/*.ptx` (the seeds
//!    the campaign starts from) and `fuzz/regressions/run/*` — goes through
//!    [`ptxvm::fuzz::run_bytes_with`], the fuzz target's body: a panic or a [`Violation`]
//!    (launch past its deadline + margin, memory beyond the declared needs + 64 MiB, a
//!    diagnostic outside the text) fails the test, naming the file.
//! 2. `mutation_fuzz`: a small deterministic mutation loop over the same inputs (xorshift PRNG;
//!    line deletion and duplication, operand swaps, extreme immediates, state-space changes,
//!    launch-shape changes), `PTX_FUZZ_ITERS` iterations (default 150), `PTX_FUZZ_SEED`.
//!    Failing inputs are written to `$CARGO_TARGET_TMPDIR/fuzz-failures/run/`.
//!
//! Regressions whose fix is still pending on another branch are listed in [`PENDING`] with their
//! class: they are reported (never skipped silently), their files must exist, and
//! `cargo test -p ptxvm --test fuzz_replay -- --ignored` runs each in a child process and says
//! which of them pass now (remove those from the list).
//!
//! The memory check reads the process's peak RSS, so the tests of this file take one lock and
//! run one at a time.
//!
//! [`Violation`]: ptxvm::fuzz::Violation

use ptx_check::fuzz::{
    any_file, env_or, is_ptx, panic_text, pending_class, quiet_panics, replay_saved, save_failures,
    saved_inputs,
};
use ptxvm::fuzz::{run_bytes_with, FuzzLimits};
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Regressions in `fuzz/regressions/run/` whose fix is pending: (file name, crash class).
const PENDING: &[(&str, &str)] = &[];

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Seeds (the fuzz corpus and `tests/run`) and regressions.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let root = root();
    let mut v = saved_inputs(&root, "fuzz/seeds/run", any_file).unwrap();
    v.extend(saved_inputs(&root, "tests/run", is_ptx).unwrap());
    v.extend(saved_inputs(&root, "fuzz/regressions/run", any_file).unwrap());
    v
}

/// The fuzz target's limits, with more margin: CI machines are slow and busy.
fn limits() -> FuzzLimits {
    FuzzLimits {
        margin: Duration::from_secs(2),
        ..FuzzLimits::default()
    }
}

/// One input through the target's body: `Err` describes a bug.
fn run_one(data: &[u8], limits: &FuzzLimits) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(|| run_bytes_with(data, limits))) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(v)) => Err(v.to_string()),
        Err(p) => Err(format!("panic: {}", panic_text(&*p))),
    }
}

#[test]
fn replay() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let limits = limits();
    replay_saved(
        &root(),
        "fuzz/regressions/run",
        PENDING,
        inputs(),
        |bytes| run_one(bytes, &limits),
    );
}

#[test]
fn mutation_fuzz() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let iters: usize = env_or("PTX_FUZZ_ITERS", 150);
    let seed: u64 = env_or("PTX_FUZZ_SEED", 0x5EED_0000_0000_00F1);
    let limits = limits();
    let seeds: Vec<String> = inputs()
        .into_iter()
        .filter(|(name, _)| pending_class(PENDING, name).is_none())
        .map(|(_, b)| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let mut rng = ptx_check::fuzz::Rng::new(seed);
    let mut failures: Vec<(String, String)> = Vec::new();
    quiet_panics(|| {
        for _ in 0..iters {
            let mut input = rng.pick(&seeds).clone();
            for _ in 0..1 + rng.below(3) {
                let other = rng.pick(&seeds).clone();
                input = ptx_check::fuzz::mutate(&mut rng, &input, &other);
            }
            if let Err(e) = run_one(input.as_bytes(), &limits) {
                failures.push((input, e));
            }
        }
    });
    if failures.is_empty() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures/run");
    let report = save_failures(&dir, &failures, 10).unwrap();
    panic!(
        "{} of {iters} mutated inputs fail (seed {seed}):\n{report}",
        failures.len()
    );
}

/// Runs each [`PENDING`] regression in a child process (a crash class may abort the process or
/// run for minutes: each gets 60 s) and reports which still fail and which pass now.
#[test]
#[ignore = "runs the pending regressions; they still crash until their fixes are merged"]
fn pending() {
    let exe = std::env::current_exe().unwrap();
    let mut fixed = Vec::new();
    for (file, class) in PENDING {
        let path = root().join("fuzz/regressions/run").join(file);
        let mut child = std::process::Command::new(&exe)
            .args(["child", "--exact", "--nocapture", "--test-threads=1"])
            .env("PTXVM_FUZZ_CHILD", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        let why = err
            .lines()
            .find(|l| l.contains("panicked") || l.contains("violation") || l.contains("memory"))
            .unwrap_or("")
            .to_string();
        match status {
            Some(s) if s.success() => {
                let _ = writeln!(std::io::stderr(), "FIXED ({class}): {file}");
                fixed.push(*file);
            }
            Some(s) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "still failing ({class}): {file}: {s} {why}"
                );
            }
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "still failing ({class}): {file}: over 60 s"
                );
            }
        }
    }
    assert!(
        fixed.is_empty(),
        "these pass now, remove them from PENDING: {fixed:?}"
    );
}

/// The child of [`pending`]: runs the file named by `PTXVM_FUZZ_CHILD` (nothing without it).
#[test]
fn child() {
    let Some(path) = std::env::var_os("PTXVM_FUZZ_CHILD") else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let data = std::fs::read(path).unwrap();
    if let Err(v) = run_bytes_with(&data, &limits()) {
        panic!("violation {v}");
    }
}
