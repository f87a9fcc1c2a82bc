//! `ptxvm exec`: the program runs with ptxvm's libcuda.so.1 first on the loader path, the
//! settings as environment variables, and its exit status passed through.

use std::process::Command;

fn ptxvm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptxvm"))
}

#[test]
fn the_program_sees_the_library_and_the_settings() {
    let out = ptxvm()
        .args(["exec", "--threads", "3", "--timeout", "2.5", "--max-instructions", "1000"])
        .args(["--trace", "--exact-bounds", "--cc", "9.0", "--", "sh", "-c"])
        .arg(concat!(
            "echo \"$PTXVM_THREADS $PTXVM_TIMEOUT $PTXVM_MAX_INSTRUCTIONS $PTXVM_TRACE $PTXVM_EXACT_BOUNDS $PTXVM_CC\"; ",
            "d=\"${LD_LIBRARY_PATH%%:*}\"; test -e \"$d/libcuda.so.1\" && test -e \"$d/libcuda.so\" && echo found"
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "3 2.5 1000 1 1 9.0\nfound\n");
}

#[test]
fn the_exit_status_is_the_programs() {
    let out = ptxvm()
        .args(["exec", "--", "sh", "-c", "exit 7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    let out = ptxvm()
        .args(["exec", "--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run `/nonexistent/program`"));
}

#[test]
fn a_program_is_required() {
    let out = ptxvm().args(["exec"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// A `ptxvm` alone in a directory (as `cargo install` leaves it) uses the `libcuda.so` built
/// into it, written once to the cache directory.
#[test]
fn an_installed_binary_uses_its_embedded_library() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_ptxvm"));
    let built = exe.parent().unwrap().join("deps/libcuda.so");
    if !built.is_file() {
        eprintln!("skipping: {} was not built", built.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("ptxvm-exec-installed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let alone = dir.join("bin/ptxvm");
    if std::fs::hard_link(exe, &alone).is_err() {
        std::fs::copy(exe, &alone).unwrap();
    }
    let run = || {
        Command::new(&alone)
            .args([
                "exec",
                "--",
                "sh",
                "-c",
                "readlink \"${LD_LIBRARY_PATH%%:*}/libcuda.so.1\"",
            ])
            .env_remove("PTXVM_LIBCUDA")
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        // the second run reuses the file the first one wrote
        let out = run();
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lib = std::path::PathBuf::from(&stdout);
        assert!(lib.starts_with(dir.join("cache/ptxvm")), "{stdout}");
        assert!(std::fs::read(&lib).unwrap() == std::fs::read(&built).unwrap());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
