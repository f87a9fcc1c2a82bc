//! The driver-API fuzzer on stable (`cuda::fuzz::drive`, the body of the cargo-fuzz target
//! `fuzz/fuzz_targets/driver.rs`): every saved input (`fuzz/seeds/driver`,
//! `fuzz/regressions/driver`) and a fixed-seed random set (`PTXVM_DRIVER_FUZZ_ITERS` inputs of
//! 1 to 4 threads, 200 by default, from seed `PTXVM_DRIVER_FUZZ_FIRST`, 0 by default), each checked against the reference model, for hangs and for
//! leaks.

use std::path::Path;

fn saved(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(dir);
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| {
                    let p = e.path();
                    (
                        p.display().to_string(),
                        std::fs::read(&p).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn saved_driver_inputs_replay_clean() {
    let mut inputs = saved("seeds/driver");
    inputs.extend(saved("regressions/driver"));
    assert!(!inputs.is_empty(), "fuzz/seeds/driver is empty");
    for (name, data) in inputs {
        if let Err(v) = cuda::fuzz::drive(&data) {
            panic!("{name}: {}", v.0);
        }
    }
}

#[test]
fn random_driver_call_sequences_follow_the_model() {
    let n: u64 = std::env::var("PTXVM_DRIVER_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let first: u64 = std::env::var("PTXVM_DRIVER_FUZZ_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for seed in first..first + n {
        let data = cuda::fuzz::input_from_seed(seed, 40);
        if let Err(v) = cuda::fuzz::drive(&data) {
            panic!(
                "seed {seed} (cuda::fuzz::input_from_seed({seed}, 40)): {}",
                v.0
            );
        }
    }
}
