//! Embeds ptxvm's `libcuda.so` into the `ptxvm` binary, so that `ptxvm exec` finds it after
//! `cargo install` (which keeps the binary only).
//!
//! `ptxvm-cuda` is a normal dependency of this package, so cargo builds its cdylib into
//! `target/<profile>/deps/` before it compiles and links the `ptxvm` binary (a binary needs
//! its dependencies' full artifacts, not only their metadata). The library is attached at link
//! time — the linker reads it as a raw binary input and `--defsym` names its first and last
//! bytes — not with `include_bytes!`, so `cargo check` and clippy, which link nothing and build
//! no cdylib, never need the file.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    // OUT_DIR is target/<profile>/build/ptxvm-cli-<hash>/out
    let Some(profile_dir) = out.ancestors().nth(3) else {
        return;
    };
    let lib = profile_dir.join("deps").join("libcuda.so");
    let Some(path) = lib.to_str().filter(|p| !p.contains([',', ' ', '\''])) else {
        println!("cargo:warning=ptxvm: libcuda.so is not embedded (unusual target path)");
        return;
    };
    // ld and lld name a binary input's symbols after its path, every other character than
    // letters and digits becoming `_`.
    let mangled: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    println!(
        "cargo:rustc-link-arg-bins=-Wl,--format=binary,{path},--format=default,\
         --defsym=ptxvm_libcuda_start=_binary_{mangled}_start,\
         --defsym=ptxvm_libcuda_end=_binary_{mangled}_end"
    );
    println!("cargo:rustc-cfg=ptxvm_embedded_libcuda");
    println!("cargo:rustc-check-cfg=cfg(ptxvm_embedded_libcuda)");
    println!("cargo:rerun-if-changed=build.rs");
}
