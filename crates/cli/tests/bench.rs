//! `ptxvm bench`: the quick suite end to end (JSON shape, every kernel verified, the geometric
//! mean), bad command lines, and the native reference implementations on tiny inputs whose
//! results are computed by hand (or with Python, as noted).

use serde_json::Value;
use std::process::{Command, Output};

#[allow(dead_code)]
#[path = "../src/bench/native.rs"]
mod native;

const KERNELS: [&str; 9] = [
    "vector_add",
    "saxpy",
    "fma_chain",
    "matmul_tiled",
    "block_reduce",
    "histogram",
    "mandelbrot",
    "warp_scan",
    "matmul_mma",
];

fn ptxvm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptxvm"))
        .args(args)
        .output()
        .expect("run ptxvm")
}

/// Runs the quick suite with `--json` and checks the report's shape and consistency.
fn quick_suite(threads: &str) {
    let out = ptxvm(&["bench", "--quick", "--json", "--threads", threads]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["threads"].as_u64(), threads.parse().ok());
    let kernels = doc["kernels"].as_array().expect("kernels array");
    let names: Vec<&str> = kernels.iter().filter_map(|k| k["name"].as_str()).collect();
    assert_eq!(names, KERNELS);
    let mut log_sum = 0.0;
    for k in kernels {
        let name = k["name"].as_str().unwrap_or("?");
        assert_eq!(k["verified"], Value::Bool(true), "{name}");
        let instr = k["thread_instructions"]
            .as_u64()
            .expect("thread_instructions");
        assert!(instr > 0, "{name}");
        let ptxvm_s = k["ptxvm_seconds"].as_f64().expect("ptxvm_seconds");
        let native_s = k["native_seconds"].as_f64().expect("native_seconds");
        let ratio = k["ratio"].as_f64().expect("ratio");
        let gips = k["gips"].as_f64().expect("gips");
        assert!(ptxvm_s > 0.0 && native_s > 0.0, "{name}");
        assert!(ratio > 0.0 && ratio.is_finite(), "{name}: ratio {ratio}");
        assert!((ratio - ptxvm_s / native_s).abs() <= 1e-9 * ratio, "{name}");
        assert!(
            (gips - instr as f64 / ptxvm_s / 1e9).abs() <= 1e-9 * gips,
            "{name}"
        );
        assert!(k["ctas"].as_u64().expect("ctas") > 0, "{name}");
        assert!(
            k["device_bytes"].as_u64().expect("device_bytes") > 0,
            "{name}"
        );
        assert!(k["host_bytes"].as_u64().is_some(), "{name}");
        let rss = &k["peak_rss_bytes"];
        assert!(
            rss.is_null() || rss.as_u64().is_some_and(|b| b > 0),
            "{name}"
        );
        log_sum += ratio.ln();
    }
    let geomean = doc["geomean_ratio"].as_f64().expect("geomean_ratio");
    let want = (log_sum / kernels.len() as f64).exp();
    assert!((geomean - want).abs() <= 1e-9 * want, "{geomean} vs {want}");
}

#[test]
fn quick_suite_one_thread() {
    quick_suite("1");
}

#[test]
fn quick_suite_two_threads() {
    quick_suite("2");
}

#[test]
fn filter_and_table() {
    let out = ptxvm(&[
        "bench",
        "--quick",
        "--filter",
        "scan",
        "--repeat",
        "1",
        "--threads",
        "1",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warp_scan"), "{text}");
    assert!(!text.contains("vector_add"), "{text}");
    assert!(text.contains("geometric mean"), "{text}");
}

#[test]
fn bad_command_lines() {
    for (args, message) in [
        (
            &["bench", "--quick", "--filter", "nope"][..],
            "matches no kernel",
        ),
        (&["bench", "--quick", "--threads", "0"][..], "--threads"),
        (&["bench", "--quick", "--repeat", "0"][..], "--repeat"),
    ] {
        let out = ptxvm(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

// ---- native implementations on hand-computed inputs ----

#[test]
fn lcg_is_deterministic_and_in_range() {
    // state1 = 1 * 6364136223846793005 + 1442695040888963407 = 7806831264735756412;
    // its high 32 bits are 7806831264735756412 >> 32 = 1817669548.
    assert_eq!(native::Lcg::new(1).next_u32(), 1817669548);
    assert_eq!(native::random_u32(5, 42), native::random_u32(5, 42));
    let xs = native::random_f32(1000, 3, -1.0, 1.0);
    assert!(xs.iter().all(|&x| (-1.0..1.0).contains(&x)));
}

#[test]
fn vector_add_and_saxpy() {
    let a = [1.0, 2.5, -3.0, 0.25];
    let b = [0.5, 0.5, 1.0, -0.25];
    let mut c = [0.0; 4];
    native::vector_add(&a, &b, &mut c);
    assert_eq!(c, [1.5, 3.0, -2.0, 0.0]);
    let mut p = [9.0; 4];
    native::vector_add_par(&a, &b, &mut p);
    assert_eq!(p, c);

    // 2 * x + y.
    let mut out = [0.0; 4];
    native::saxpy(2.0, &a, &b, &mut out);
    assert_eq!(out, [2.5, 5.5, -5.0, 0.25]);
    native::saxpy_par(2.0, &a, &b, &mut p);
    assert_eq!(p, out);
}

#[test]
fn fma_chain_by_hand() {
    // b = 0.5, c = 1: a -> a/2 + 1, exact in binary. From x = 2: chains 2, 3, 4, 5.
    // Two steps: 2 -> 2 -> 2; 3 -> 2.5 -> 2.25; 4 -> 3 -> 2.5; 5 -> 3.5 -> 2.75.
    // (2 + 2.25) + (2.5 + 2.75) = 9.5.
    assert_eq!(native::fma_chain_one(2.0, 0.5, 1.0, 2), 9.5);
    // Zero iterations: x + (x+1) + (x+2) + (x+3) = 4x + 6.
    assert_eq!(native::fma_chain_one(1.0, 0.5, 1.0, 0), 10.0);
    // The fused rounding: (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24; one fma keeps the 2^-24 term,
    // a separate multiply would round it away. x = 1 + 2^-12 in the first chain; with b = x,
    // c = -1: a0 = fma(x, x, -1) = 2^-11 + 2^-24.
    let x = 1.0 + f32::powi(2.0, -12);
    let a0 = x.mul_add(x, -1.0);
    assert_eq!(a0, f32::powi(2.0, -11) + f32::powi(2.0, -24));
    let mut out = [0.0; 3];
    native::fma_chain(&[2.0, 2.0, 1.0], &mut out, 0.5, 1.0, 2);
    assert_eq!(out[..2], [9.5, 9.5]);
    let mut par = [0.0; 3];
    native::fma_chain_par(&[2.0, 2.0, 1.0], &mut par, 0.5, 1.0, 2);
    assert_eq!(par, out);
}

#[test]
fn matmul_by_hand() {
    // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154].
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
    let mut c = [-1.0; 4];
    native::matmul(&a, &b, &mut c, 3, 2);
    assert_eq!(c, [58.0, 64.0, 139.0, 154.0]);
    let mut p = [-1.0; 4];
    native::matmul_par(&a, &b, &mut p, 3, 2);
    assert_eq!(p, c);
}

#[test]
fn block_reduce_by_hand() {
    // Chunks of 3: [1 2 3] [4 5 6] [7 8] -> 6, 15, 15.
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let mut partial = [0.0; 3];
    native::block_reduce(&x, &mut partial, 3);
    assert_eq!(partial, [6.0, 15.0, 15.0]);
    let mut p = [0.0; 3];
    native::block_reduce_par(&x, &mut p, 3);
    assert_eq!(p, partial);
}

#[test]
fn histogram_by_hand() {
    let data = [0u8, 255, 7, 7, 0, 7, 128, 255, 255, 255];
    let mut want = [0u32; 256];
    want[0] = 2;
    want[7] = 3;
    want[128] = 1;
    want[255] = 4;
    let mut bins = [9u32; 256];
    native::histogram(&data, &mut bins);
    assert_eq!(bins, want);
    let mut par = [9u32; 256];
    native::histogram_par(&data, &mut par, 3);
    assert_eq!(par, want);
}

#[test]
fn mandelbrot_points_by_hand() {
    // c = 0 and c = -1 (0, -1, 0, -1, ...) never escape.
    assert_eq!(native::mandelbrot_point(0.0, 0.0, 100), 100);
    assert_eq!(native::mandelbrot_point(-1.0, 0.0, 100), 100);
    // c = 1: z = 0, 1, 2, 5: |z|^2 = 0, 1, 4 (not > 4), 25 -> 3 iterations.
    assert_eq!(native::mandelbrot_point(1.0, 0.0, 100), 3);
    // c = 2: z = 0, 2, 6: |z|^2 = 0, 4, 36 -> 2 iterations.
    assert_eq!(native::mandelbrot_point(2.0, 0.0, 100), 2);
    // c = 3: |z|^2 = 0, 9 -> 1 iteration; c = i: 0, i, -1+i, -i, -1+i, ... never escapes.
    assert_eq!(native::mandelbrot_point(3.0, 0.0, 100), 1);
    assert_eq!(native::mandelbrot_point(0.0, 1.0, 100), 100);
    // c = 0.5: 0, 0.5, 0.75, 1.0625, 1.62890625, 3.1533..., escapes after 5 (Python:
    // z=0; n=0
    // while abs(z)**2 <= 4: z = z*z + 0.5; n += 1  -> n == 5).
    assert_eq!(native::mandelbrot_point(0.5, 0.0, 100), 5);
    // A 2x2 view at x = -1, 0.5 and y = 0, 1 (dx = 1.5, dy = 1), limit 10:
    // (-1, 0) stays; (0.5, 0) escapes after 5; (-1, i): z = 0, -1+i, -1-i, -1+3i: |z|^2 =
    // 0, 2, 2, 10 -> 3; (0.5, i): z = 0, 0.5+i, -0.25+2i: |z|^2 = 0, 1.25, 4.0625 -> 2.
    let v = native::View {
        width: 2,
        height: 2,
        x_min: -1.0,
        y_min: 0.0,
        dx: 1.5,
        dy: 1.0,
        max_iter: 10,
    };
    let mut out = [0u32; 4];
    native::mandelbrot(&v, &mut out);
    assert_eq!(out, [10, 5, 3, 2]);
    let mut par = [0u32; 4];
    native::mandelbrot_par(&v, &mut par);
    assert_eq!(par, out);
}

#[test]
fn scan_of_one_to_n_is_triangular() {
    let input: Vec<u32> = (1..=10).collect();
    let mut out = vec![0u32; 10];
    native::block_scan(&input, &mut out, 10);
    assert_eq!(out, (1..=10).map(|k| k * (k + 1) / 2).collect::<Vec<u32>>());
    // Blocks of 4: each restarts from its first element.
    native::block_scan(&input, &mut out, 4);
    assert_eq!(out, [1, 3, 6, 10, 5, 11, 18, 26, 9, 19]);
    let mut par = vec![0u32; 10];
    native::block_scan_par(&input, &mut par, 4);
    assert_eq!(par, out);
    // Sums wrap like the kernel's u32 adds.
    native::block_scan(&[u32::MAX, 2], &mut out[..2], 4);
    assert_eq!(out[..2], [u32::MAX, 1]);
}
