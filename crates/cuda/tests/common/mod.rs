//! What the tests that run programs on the built `libcuda.so` share: building the library,
//! and a fresh folder that links to it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// target/debug (or release), where cargo puts `libcuda.so`: built here once (`cargo test`
/// builds the crate's rlib for the tests, not its cdylib).
pub fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("test executable");
            let dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target directory")
                .to_path_buf();
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "-p", "ptxvm-cuda", "--lib"]);
            if dir.ends_with("release") {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("run cargo build");
            assert!(status.success(), "cargo build -p ptxvm-cuda failed");
            dir
        })
        .clone()
}

/// A fresh scratch folder (`PREFIX-PID-NAME-N`, one per call: tests running the same program
/// at once must not share one) with each of `links` a link to the built `libcuda.so`.
pub fn scratch_with_library(prefix: &str, name: &str, links: &[&str]) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{name}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let lib = lib_dir().join("libcuda.so");
    assert!(lib.exists(), "{} was not built", lib.display());
    for link in links {
        std::os::unix::fs::symlink(&lib, dir.join(link)).expect("symlink");
    }
    dir
}
