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
