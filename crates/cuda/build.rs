//! Links the library with SONAME `libcuda.so.1` and writes `stubs.rs`: a
//! `CUDA_ERROR_NOT_SUPPORTED` stub for every symbol of `src/exports.rs` that the sources do not
//! implement, and `symbol(name)`, the address of every export (for `cuGetProcAddress`).
//! An implemented export is a line `fn cuName(` inside the `api!` macro of `src/`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=src");
    let src = Path::new("src");
    let exports = std::fs::read_to_string(src.join("exports.rs")).expect("src/exports.rs");
    let list = exports
        .split("pub const EXPORTS: &[&str] = &[")
        .nth(1)
        .and_then(|s| s.split("];").next())
        .expect("EXPORTS in src/exports.rs");
    let names: BTreeSet<String> = list
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix('"')?
                .strip_suffix("\",")
                .map(String::from)
        })
        .collect();
    let mut implemented = BTreeSet::new();
    for entry in std::fs::read_dir(src).expect("src") {
        let path = entry.expect("src entry").path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("exports.rs") {
            continue;
        }
        for line in std::fs::read_to_string(&path).expect("source").lines() {
            if let Some(rest) = line.trim_start().strip_prefix("fn cu") {
                if let Some(name) = rest.split('(').next() {
                    implemented.insert(format!("cu{name}"));
                }
            }
        }
    }
    let mut out = String::from("stubs! {\n");
    for n in names.iter().filter(|n| !implemented.contains(*n)) {
        writeln!(out, "    {n},").unwrap();
    }
    out.push_str("}\n\n/// The address of export `name`.\npub(crate) fn symbol(name: &str) -> Option<*const std::ffi::c_void> {\n    let f: *const std::ffi::c_void = match name {\n");
    for n in names.iter().chain(implemented.difference(&names)) {
        writeln!(out, "        \"{n}\" => {n} as *const std::ffi::c_void,").unwrap();
    }
    out.push_str("        _ => return None,\n    };\n    Some(f)\n}\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("stubs.rs");
    std::fs::write(dest, out).expect("write stubs.rs");
}
