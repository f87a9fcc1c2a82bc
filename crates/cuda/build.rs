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
    let mut signatures = std::collections::BTreeMap::new();
    // the sources of `src/` and of its module folders (`src/driver/`)
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src") {
            let path = entry.expect("src entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for path in files {
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("exports.rs") {
            continue;
        }
        for line in std::fs::read_to_string(&path).expect("source").lines() {
            if let Some(rest) = line.trim_start().strip_prefix("fn cu") {
                if let Some(name) = rest.split('(').next() {
                    implemented.insert(format!("cu{name}"));
                    if let Some(args) = arguments(rest) {
                        signatures.insert(format!("cu{name}"), args);
                    }
                }
            }
        }
    }
    // `X_ptds`/`X_ptsz` of an implemented `X` whose signature names only types every module
    // sees: `X` itself (see `per_thread!` in lib.rs).
    let mut per_thread = String::from("per_thread! {\n");
    for n in &names {
        let Some(base) = n.strip_suffix("_ptds").or_else(|| n.strip_suffix("_ptsz")) else {
            continue;
        };
        if implemented.contains(n) {
            continue;
        }
        if let Some(args) = signatures.get(base).filter(|a| portable(a)) {
            writeln!(per_thread, "    fn {n}({args}) => {base};").unwrap();
            implemented.insert(n.clone());
        }
    }
    per_thread.push_str("}\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("per_thread.rs");
    std::fs::write(dest, per_thread).expect("write per_thread.rs");
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

/// The argument list of `NAME(ARGS) {` on one line (`None` when it spans lines).
fn arguments(rest: &str) -> Option<String> {
    let open = rest.find('(')?;
    let mut depth = 0;
    for (k, c) in rest[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let tail = rest[open + k + 1..].trim();
                    return (tail == "{").then(|| rest[open + 1..open + k].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether every type in `args` is one the per-thread aliases' module can name.
fn portable(args: &str) -> bool {
    const KNOWN: &[&str] = &[
        "mut",
        "const",
        "unsafe",
        "extern",
        "fn",
        "Option",
        "Handle",
        "CUdevice",
        "CUdeviceptr",
        "CUresult",
        "c_char",
        "c_int",
        "c_uint",
        "c_void",
        "usize",
        "isize",
        "u8",
        "u16",
        "u32",
        "u64",
        "i8",
        "i16",
        "i32",
        "i64",
        "f32",
        "f64",
        "LaunchConfig",
        "Memcpy2D",
        "Memcpy3D",
        "IpcHandle",
    ];
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut start = 0;
    for (k, c) in args.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&args[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[start..]);
    parts.iter().filter(|p| !p.trim().is_empty()).all(|p| {
        let Some((_, ty)) = p.split_once(':') else {
            return false;
        };
        ty.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
            .all(|w| KNOWN.contains(&w))
    })
}
