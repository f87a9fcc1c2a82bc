//! Helpers shared by the test binaries of `ptxvm-cli`.

use std::path::{Path, PathBuf};

/// Every `.ptx` file under `dir`, recursively, in sorted order (none when `dir` is missing).
pub fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}
