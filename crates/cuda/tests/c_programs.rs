//! Our C programs against `cuda.h` (tests/c; the header there is our own minimal one), built
//! with the system C compiler, linked with `-lcuda` and run against this crate's
//! `libcuda.so.1`. Each checks its expectations itself and prints `NAME: ok`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

/// A scratch directory holding `libcuda.so.1` (and `libcuda.so` for the linker) pointing at
/// the built library.
fn scratch(name: &str) -> PathBuf {
    common::scratch_with_library("ptxvm-cuda-c", name, &["libcuda.so.1", "libcuda.so"])
}

/// Builds and runs `tests/c/NAME.c`; returns (stdout, stderr).
fn run(name: &str) -> Option<(String, String)> {
    run_with(name, &[])
}

/// [`run`] with environment variables.
fn run_with(name: &str, env: &[(&str, &str)]) -> Option<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let dir = scratch(name);
    let exe = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-D_POSIX_C_SOURCE=200809L",
        ])
        .arg("-I")
        .arg(src.join("include"))
        .arg(src.join(format!("{name}.c")))
        .arg("-L")
        .arg(&dir)
        .args(["-lcuda", "-lpthread", "-o"])
        .arg(&exe)
        .output();
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipping {name}: no C compiler `{cc}` ({e})");
            return None;
        }
    };
    assert!(
        built.status.success(),
        "{name}.c did not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe)
        .current_dir(&dir)
        .env("LD_LIBRARY_PATH", &dir)
        .env_remove("PTXVM_TRACE")
        .env_remove("PTXVM_EXACT_BOUNDS")
        .envs(env.iter().copied())
        .output()
        .expect("run the program");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "{name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(stdout.contains(&format!("{name}: ok")), "{name}: {stdout}");
    let _ = std::fs::remove_dir_all(&dir);
    Some((stdout, stderr))
}

#[test]
fn happy_paths() {
    run("happy");
}

#[test]
fn the_deprecated_launch_api_and_context_usage_counts() {
    run("legacy");
}

#[test]
fn stream_ordered_allocation_and_memory_pools() {
    run("pool");
}

#[test]
fn error_paths_return_the_documented_codes() {
    if let Some((_, stderr)) = run("errors") {
        // the one-line hints for images without PTX
        assert!(
            stderr.contains("cubin (ELF image) holds no PTX"),
            "{stderr}"
        );
        assert!(stderr.contains("-gencode arch=compute_XX,code=compute_XX"));
        // bad PTX is reported with ptxvm's diagnostics
        assert!(
            stderr.contains("error[E0102]: unknown register `%r1`"),
            "{stderr}"
        );
    }
}

#[test]
fn faults_are_reported_and_sticky() {
    if let Some((_, stderr)) = run("fault") {
        assert!(stderr.contains("error[E0601]: out-of-bounds global access of 4 bytes"));
        assert!(
            stderr.contains("just past the end of cuMemAlloc buffer")
                && stderr.contains(", 256 bytes)"),
            "{stderr}"
        );
        assert!(stderr.contains("block (0,0,0) thread (0,0,0)"));
        assert!(stderr.contains("error[E0603]: the kernel executed `trap`"));
        // the report names the kernel and its module's origin (issue 23 item 12): a module
        // loaded from memory is `<memory HASH>`, not a made-up file name
        assert!(stderr.contains("ptxvm: kernel `"), "{stderr}");
        assert!(stderr.contains("(<memory "), "{stderr}");
        assert!(!stderr.contains("module.ptx"), "{stderr}");
    }
}

#[test]
fn exact_bounds_report_an_access_past_the_requested_size() {
    if let Some((_, stderr)) = run_with("fault", &[("PTXVM_EXACT_BOUNDS", "1")]) {
        assert!(
            stderr.contains("just past the end of cuMemAlloc buffer")
                && stderr.contains(", 16 bytes)"),
            "{stderr}"
        );
    }
}

#[test]
fn two_threads_with_their_own_contexts() {
    run("threads");
}

#[test]
fn fatbins_plain_compressed_embedded_and_hostile_and_the_linkers_logs() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fatbin");
    let data = data.to_str().expect("UTF-8 path");
    if let Some((_, stderr)) = run_with("fatbin", &[("FATBIN_DIR", data)]) {
        // SASS only: the one-line hint, once per refused load
        assert!(
            stderr.contains("the fatbin holds no PTX")
                && stderr.contains("-gencode arch=compute_XX,code=compute_XX"),
            "{stderr}"
        );
        assert!(
            stderr.contains("undefined reference to `missing`"),
            "{stderr}"
        );
    }
}

#[test]
fn the_trace_names_the_symbols_cu_get_proc_address_is_asked_for() {
    if let Some((stdout, stderr)) = run_with("trace", &[("PTXVM_TRACE", "1")]) {
        assert!(stdout.contains("trace: ok"), "{stdout}");
        for want in [
            "[ptxvm] cuGetProcAddress: symbol \"cuMemAlloc\", version 3020, flags 0",
            "[ptxvm] cuGetProcAddress: symbol \"cuNoSuchFunction\", version 13000, flags 0",
            ") = CUDA_ERROR_NOT_FOUND",
        ] {
            assert!(stderr.contains(want), "`{want}` not in:\n{stderr}");
        }
    }
}

#[test]
fn memory_2d_3d_registered_and_interprocess() {
    if let Some((stdout, _)) = run("mem") {
        assert!(stdout.contains("mem child: ok"), "{stdout}");
    }
}

#[test]
fn asynchronous_streams_events_and_graphs() {
    if let Some((_, stderr)) = run("streams") {
        // the fault on the asynchronous stream is reported once, by the worker that ran it
        assert_eq!(stderr.matches("error[E0601]").count(), 1, "{stderr}");
    }
}

#[test]
fn frees_and_resets_return_while_streams_hold_work() {
    run("hostile");
}

#[test]
fn captured_copies_and_memsets_replayed_after_a_free_fail_and_write_nothing() {
    if let Some((_, stderr)) = run("replay") {
        assert!(
            stderr.contains("runs after its memory was freed"),
            "{stderr}"
        );
    }
}

#[test]
fn a_launch_shows_its_progress_when_asked() {
    // PTXVM_PROGRESS=always: from the start (a terminal gets it after 2 s); not a terminal
    // here, so whole lines
    if let Some((_, stderr)) = run_with("happy", &[("PTXVM_PROGRESS", "always")]) {
        assert!(
            stderr.contains("[ptxvm] kernel `") && stderr.contains("blocks,"),
            "{stderr}"
        );
    }
    if let Some((_, stderr)) = run("happy") {
        assert!(!stderr.contains("[ptxvm] kernel `"), "{stderr}");
    }
}

#[test]
fn a_child_forked_after_init_is_not_initialized() {
    run("fork");
}

#[test]
fn device_memory_from_the_global_allocator_without_the_shared_arena() {
    run_with("happy", &[("PTXVM_NO_SHARED_MEMORY", "1")]);
}

#[test]
fn device_malloc_heap_limit() {
    if let Some((stdout, _)) = run("heap") {
        assert!(stdout.contains("heap: ok"), "{stdout}");
    }
}

#[test]
fn cooperative_launches_synchronize_the_grid() {
    run("coop");
}

#[test]
fn tensor_maps_encode_check_and_feed_a_tma_kernel() {
    run_with("tensormap", &[("PTXVM_CC", "90")]);
}

#[test]
fn cluster_launches_through_launch_kernel_ex() {
    if let Some((stdout, _)) = run_with("cluster", &[("PTXVM_CC", "90")]) {
        assert!(stdout.contains("cluster: ok"), "{stdout}");
    }
}
