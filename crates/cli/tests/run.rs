//! Run tests: one named test per `tests/run/**/*.ptx` file (name = its path under `tests/run`).
//!
//! Each file is a complete PTX module whose header comments say how to run it and what it must
//! produce (the format is described in `tests/run/README.md`):
//!
//! ```text
//! // RUN: --grid 1 --block 32 --arg u32[64] --arg 7
//! // EXPECT 0 u32: 1 2 3 0xffffffff 4*0 -5
//! // EXIT: 0
//! // STDERR: text that must appear in stderr
//! // STDOUT: one expected line of the kernel's printf output
//! ```
//!
//! The harness runs `ptxvm run FILE <RUN args> --out N=TMP/K.bin …` (one `--out` per `EXPECT`;
//! `--out-symbol NAME:DTYPE=TMP/K.bin` for an `EXPECT @NAME`)
//! with the test file's folder as the working directory, then checks the exit status, the stderr
//! substrings, the stdout lines and every expected buffer element by element. A malformed header
//! is a test failure naming the line. The harness's own parsers are checked by `harness::*`
//! trials.
//!
//! `PTXVM_RUN_TIMEOUT=SECONDS` (default 120) bounds each `ptxvm` process; `PTXVM_RUN_KEEP=1`
//! keeps the temporary folders (their path is in the failure message).

mod common;

use common::ptx_files;
use libtest_mimic::{Arguments, Failed, Trial};
use ptxvm::Dtype;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_dir() -> PathBuf {
    repo_root().join("tests/run")
}

// ---------------------------------------------------------------------------------------------
// Element types and expected values
// ---------------------------------------------------------------------------------------------

/// Width of an element in bits.
fn bits_of(dtype: Dtype) -> u32 {
    8 * dtype.size() as u32
}

fn mask(dtype: Dtype) -> u64 {
    u64::MAX >> (64 - bits_of(dtype))
}

/// Whether the raw bits are a NaN of this (float) type.
fn is_nan(dtype: Dtype, bits: u64) -> bool {
    dtype.float_value(bits).is_some_and(f64::is_nan)
}

/// The value of raw bits, for messages: hex, then decimal or float.
fn show(dtype: Dtype, bits: u64) -> String {
    let hex = format!("0x{:0w$x}", bits, w = dtype.size() * 2);
    format!("{hex} ({})", dtype.format_bits(bits))
}

/// One expected element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expected {
    /// These exact bits (low `Dtype::bits` of the u64).
    Bits(u64),
    /// Any NaN of the element type.
    AnyNan,
}

impl Expected {
    fn matches(self, dtype: Dtype, bits: u64) -> bool {
        match self {
            Expected::Bits(b) => b == bits,
            Expected::AnyNan => is_nan(dtype, bits),
        }
    }

    fn show(self, dtype: Dtype) -> String {
        match self {
            Expected::Bits(b) => show(dtype, b),
            Expected::AnyNan => "any NaN".to_string(),
        }
    }
}

/// A decimal float literal: digits, sign, point and exponent only (Rust's parser would also take
/// `infinity` and friends, which the format spells differently).
fn parse_decimal_f64(s: &str) -> Option<f64> {
    if s.is_empty()
        || !s.bytes().any(|b| b.is_ascii_digit())
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    s.parse::<f64>().ok()
}

fn parse_hex_bits(s: &str, digits: usize) -> Option<u64> {
    if s.len() != digits || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Parses one value token (no repetition) for `dtype`.
fn parse_value(dtype: Dtype, tok: &str) -> Result<Expected, String> {
    if dtype.is_float() {
        parse_float_value(dtype, tok)
    } else {
        parse_int_value(dtype, tok)
    }
}

fn parse_int_value(dtype: Dtype, tok: &str) -> Result<Expected, String> {
    let bits = bits_of(dtype);
    if let Some(hex) = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")) {
        let v = if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            None
        } else {
            u64::from_str_radix(hex, 16).ok()
        };
        return match v {
            Some(v) if v & !mask(dtype) == 0 => Ok(Expected::Bits(v)),
            Some(_) => Err(format!("`{tok}` does not fit in {bits} bits")),
            None => Err(format!("`{tok}` is not a hex integer")),
        };
    }
    let digits = tok.strip_prefix(['-', '+']).unwrap_or(tok);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{tok}` is not an integer"));
    }
    let v: i128 = tok
        .parse()
        .map_err(|_| format!("`{tok}` is not an integer"))?;
    // Any value that is in range for the signed or the unsigned type of this width is accepted
    // and stored as its two's-complement bits.
    let min = -(1i128 << (bits - 1));
    let max = (1i128 << bits) - 1;
    if v < min || v > max {
        return Err(format!("`{tok}` is out of range for {bits}-bit integers"));
    }
    Ok(Expected::Bits((v as u64) & mask(dtype)))
}

fn parse_float_value(dtype: Dtype, tok: &str) -> Result<Expected, String> {
    let name = dtype.name();
    match tok {
        "nan" => return Ok(Expected::AnyNan),
        "inf" | "+inf" | "-inf" => {
            let neg = tok.starts_with('-');
            let bits: u64 = match dtype {
                Dtype::F16 => 0x7c00 | if neg { 0x8000 } else { 0 },
                Dtype::BF16 => 0x7f80 | if neg { 0x8000 } else { 0 },
                Dtype::F32 => u64::from(
                    (if neg {
                        f32::NEG_INFINITY
                    } else {
                        f32::INFINITY
                    })
                    .to_bits(),
                ),
                _ => (if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                })
                .to_bits(),
            };
            return Ok(Expected::Bits(bits));
        }
        _ => {}
    }
    let bit_form = match dtype {
        Dtype::F16 | Dtype::BF16 => tok
            .strip_prefix("0h")
            .or_else(|| tok.strip_prefix("0H"))
            .map(|h| (h, 4)),
        Dtype::F32 => tok
            .strip_prefix("0f")
            .or_else(|| tok.strip_prefix("0F"))
            .map(|h| (h, 8)),
        _ => tok
            .strip_prefix("0d")
            .or_else(|| tok.strip_prefix("0D"))
            .map(|h| (h, 16)),
    };
    if let Some((hex, digits)) = bit_form {
        return parse_hex_bits(hex, digits)
            .map(Expected::Bits)
            .ok_or_else(|| {
                format!(
                    "`{tok}` is not a {name} bit pattern (prefix and exactly {digits} hex digits)"
                )
            });
    }
    let x = parse_decimal_f64(tok).ok_or_else(|| {
        format!("`{tok}` is not a {name} value (decimal, inf, -inf, nan or exact bits)")
    })?;
    let inexact = || format!("`{tok}` is not exactly representable as {name}; use the bit form");
    if !x.is_finite() {
        return Err(inexact());
    }
    // exact when rounding to the type gives back the same value
    let bits = dtype
        .float_bits(x)
        .filter(|&b| dtype.float_value(b) == Some(x))
        .ok_or_else(inexact)?;
    Ok(Expected::Bits(bits))
}

/// Parses a whitespace-separated value list with `K*V` repetition.
fn parse_values(dtype: Dtype, text: &str) -> Result<Vec<Expected>, String> {
    let mut out = Vec::new();
    for tok in text.split_whitespace() {
        match tok.split_once('*') {
            Some((k, v)) => {
                let k: usize = k
                    .parse()
                    .ok()
                    .filter(|&k| k > 0 && k <= 1 << 24)
                    .ok_or_else(|| format!("`{tok}`: the repeat count must be 1..=16777216"))?;
                let e = parse_value(dtype, v)?;
                out.extend(std::iter::repeat_n(e, k));
            }
            None => out.push(parse_value(dtype, tok)?),
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------------------------

/// One `EXPECT` line.
#[derive(Debug, PartialEq)]
struct ExpectBuf {
    /// What is read back: `N` (a 0-based kernel parameter index), `N.F` (the buffer of field F
    /// of struct argument N) or `@NAME` (module variable NAME).
    arg: String,
    dtype: Dtype,
    values: Vec<Expected>,
    /// 1-based line of the header, for messages.
    line: usize,
}

/// What a test file's header asks for.
#[derive(Debug, Default, PartialEq)]
struct Header {
    run: Vec<String>,
    expects: Vec<ExpectBuf>,
    exit: i32,
    stderr: Vec<String>,
    stdout: Option<Vec<String>>,
}

/// The text after a directive keyword's `:`, without the one space that conventionally follows.
fn after_colon(s: &str) -> &str {
    s.strip_prefix(' ').unwrap_or(s)
}

fn parse_header(text: &str) -> Result<Header, String> {
    let mut h = Header::default();
    let mut run_line = None;
    let mut exit_line = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let Some(comment) = raw.trim_start().strip_prefix("//") else {
            continue;
        };
        let c = comment.trim_start().trim_end_matches('\r');
        let err = |m: String| format!("line {n}: {m}\n  {}", raw.trim_end());
        if let Some(rest) = c.strip_prefix("RUN:") {
            if run_line.is_some() {
                return Err(err(format!(
                    "second RUN: line (the first is line {})",
                    run_line.unwrap_or(0)
                )));
            }
            run_line = Some(n);
            h.run = rest.split_whitespace().map(str::to_string).collect();
        } else if let Some(rest) = c.strip_prefix("EXIT:") {
            if exit_line.is_some() {
                return Err(err("second EXIT: line".to_string()));
            }
            exit_line = Some(n);
            h.exit = match rest.trim().parse::<i32>() {
                Ok(code) if (0..=255).contains(&code) => code,
                _ => return Err(err("EXIT: wants an exit status 0..=255".to_string())),
            };
        } else if let Some(rest) = c.strip_prefix("STDERR:") {
            let t = rest.trim();
            if t.is_empty() {
                return Err(err("STDERR: wants the text to find".to_string()));
            }
            h.stderr.push(t.to_string());
        } else if let Some(rest) = c.strip_prefix("STDOUT:") {
            h.stdout
                .get_or_insert_with(Vec::new)
                .push(after_colon(rest).to_string());
        } else if let Some(rest) = c
            .strip_prefix("EXPECT")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            let Some((head, values)) = rest.split_once(':') else {
                return Err(err("EXPECT wants `EXPECT N DTYPE: values…`".to_string()));
            };
            let mut words = head.split_whitespace();
            let (Some(arg), Some(dt), None) = (words.next(), words.next(), words.next()) else {
                return Err(err("EXPECT wants `EXPECT N DTYPE: values…`".to_string()));
            };
            let valid = match arg.strip_prefix('@') {
                Some(name) => !name.is_empty() && !name.contains(['=', ':']),
                None => {
                    let mut parts = arg.splitn(2, '.');
                    parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                }
            };
            if !valid {
                return Err(err(format!(
                    "`{arg}` is not a parameter index (N), a struct field buffer (N.F) or a variable (@NAME)"
                )));
            }
            let arg = arg.to_string();
            let dtype = Dtype::from_name(dt).ok_or_else(|| {
                err(format!(
                    "unknown element type `{dt}` (u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)"
                ))
            })?;
            if let Some(prev) = h.expects.iter().find(|e| e.arg == arg) {
                return Err(err(format!(
                    "second EXPECT for parameter {arg} (the first is line {})",
                    prev.line
                )));
            }
            let values = parse_values(dtype, values).map_err(err)?;
            if values.is_empty() {
                return Err(err("EXPECT lists no values".to_string()));
            }
            h.expects.push(ExpectBuf {
                arg,
                dtype,
                values,
                line: n,
            });
        }
    }
    if run_line.is_none() {
        return Err("no `// RUN:` line".to_string());
    }
    Ok(h)
}

// ---------------------------------------------------------------------------------------------
// Running and checking
// ---------------------------------------------------------------------------------------------

/// A fresh temporary folder, removed on drop unless `PTXVM_RUN_KEEP` is set.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Result<TempDir, String> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let clean: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let dir = std::env::temp_dir().join(format!(
            "ptxvm-run-{}-{}-{clean}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

fn keep_tmp() -> bool {
    std::env::var_os("PTXVM_RUN_KEEP").is_some_and(|v| v != "0")
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !keep_tmp() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

fn timeout() -> Duration {
    let secs = std::env::var("PTXVM_RUN_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(120);
    Duration::from_secs(secs)
}

/// Runs a command to completion (killing it after `limit`), collecting its output.
fn run_command(mut cmd: Command, limit: Duration) -> Result<Outcome, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > limit => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().map_err(|e| e.to_string())?;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for ptxvm: {e}")),
        }
    };
    Ok(Outcome {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
    })
}

/// Compares a read-back buffer with its EXPECT line; `Err` lists the differences.
fn check_buffer(e: &ExpectBuf, bytes: &[u8]) -> Result<(), String> {
    let size = e.dtype.size();
    let dt = format!("{:?}", e.dtype).to_lowercase();
    let mut msg = String::new();
    if bytes.len() % size != 0 {
        let _ = writeln!(
            msg,
            "  buffer {} is {} bytes, not a whole number of {dt} elements",
            e.arg,
            bytes.len()
        );
    }
    let got: Vec<u64> = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect();
    if got.len() != e.values.len() {
        let _ = writeln!(
            msg,
            "  buffer {} holds {} {dt} elements, EXPECT (line {}) lists {}",
            e.arg,
            got.len(),
            e.line,
            e.values.len()
        );
    }
    let bad: Vec<usize> = (0..got.len().min(e.values.len()))
        .filter(|&i| !e.values[i].matches(e.dtype, got[i]))
        .collect();
    const SHOWN: usize = 32;
    for &i in bad.iter().take(SHOWN) {
        let _ = writeln!(
            msg,
            "  buffer {} element {i}: expected {}, got {}",
            e.arg,
            e.values[i].show(e.dtype),
            show(e.dtype, got[i])
        );
    }
    if bad.len() > SHOWN {
        let _ = writeln!(msg, "  … and {} more differing elements", bad.len() - SHOWN);
    }
    if msg.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "buffer {} ({dt}, EXPECT on line {}) differs:\n{msg}",
            e.arg, e.line
        ))
    }
}

fn indent(s: &str) -> String {
    if s.is_empty() {
        return "    (empty)\n".to_string();
    }
    s.lines().map(|l| format!("    {l}\n")).collect()
}

fn run_test(path: &Path, name: &str, simd: bool) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let header = parse_header(&text).map_err(|e| format!("malformed header: {e}"))?;
    let tmp = TempDir::new(name)?;
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptxvm"));
    cmd.arg("run").arg(&abs).args(&header.run);
    if !simd {
        cmd.env("PTXVM_SIMD", "0");
    }
    let mut outs = Vec::new();
    for (k, e) in header.expects.iter().enumerate() {
        let file = tmp.0.join(format!("{k}.bin"));
        let (flag, mut spec) = match e.arg.strip_prefix('@') {
            Some(name) => (
                "--out-symbol",
                std::ffi::OsString::from(format!("{name}:{}=", e.dtype.name())),
            ),
            None => ("--out", std::ffi::OsString::from(format!("{}=", e.arg))),
        };
        spec.push(file.as_os_str());
        cmd.arg(flag).arg(spec);
        outs.push(file);
    }
    if let Some(dir) = abs.parent() {
        cmd.current_dir(dir);
    }
    let shown = format!("ptxvm run {} {}", name, header.run.join(" "));
    let o = run_command(cmd, timeout())?;
    let context = || {
        format!(
            "command: {shown}\ntemporary folder: {}{}\nstderr:\n{}stdout:\n{}",
            tmp.0.display(),
            if keep_tmp() {
                ""
            } else {
                " (removed; PTXVM_RUN_KEEP=1 keeps it)"
            },
            indent(&o.stderr),
            indent(&o.stdout)
        )
    };
    if o.timed_out {
        return Err(format!(
            "ptxvm ran past {:?} and was killed\n{}",
            timeout(),
            context()
        )
        .into());
    }
    let mut failures = Vec::new();
    match o.code {
        Some(c) if c == header.exit => {}
        Some(c) => failures.push(format!("exit status {c}, expected {}", header.exit)),
        None => failures.push("ptxvm was killed by a signal".to_string()),
    }
    for s in &header.stderr {
        if !o.stderr.contains(s.as_str()) {
            failures.push(format!("stderr does not contain `{s}`"));
        }
    }
    if let Some(lines) = &header.stdout {
        let want: String = lines.iter().map(|l| format!("{l}\n")).collect();
        if o.stdout != want {
            failures.push(format!(
                "stdout differs\n  expected:\n{}",
                indent(&want).replace("\n    ", "\n      ")
            ));
        }
    }
    // Buffers are compared only when the run ended as expected; otherwise the status says more.
    if failures.is_empty() {
        for (e, file) in header.expects.iter().zip(&outs) {
            match std::fs::read(file) {
                Ok(bytes) => {
                    if let Err(m) = check_buffer(e, &bytes) {
                        failures.push(m);
                    }
                }
                Err(err) => failures.push(format!(
                    "buffer {} was not written to {}: {err}",
                    e.arg,
                    file.display()
                )),
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{}", failures.join("\n"), context()).into())
    }
}

// ---------------------------------------------------------------------------------------------
// The harness's own checks
// ---------------------------------------------------------------------------------------------

fn ensure(cond: bool, what: &str) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what.into())
    }
}

fn bits(v: &[Expected]) -> Vec<u64> {
    v.iter()
        .map(|e| match e {
            Expected::Bits(b) => *b,
            Expected::AnyNan => u64::MAX,
        })
        .collect()
}

fn self_tests() -> Vec<Trial> {
    let t = |name: &str, f: fn() -> Result<(), Failed>| Trial::test(format!("harness::{name}"), f);
    vec![
        t("int_values", || {
            let v = parse_values(Dtype::U32, "1 -5 0xffffffff 3*0x1 4294967295 +7")?;
            ensure(
                bits(&v) == [1, 0xffff_fffb, 0xffff_ffff, 1, 1, 1, 0xffff_ffff, 7],
                &format!("{v:?}"),
            )?;
            let v = parse_values(Dtype::I8, "-128 127 255 0x80")?;
            ensure(bits(&v) == [0x80, 0x7f, 0xff, 0x80], &format!("{v:?}"))?;
            let v = parse_values(Dtype::I64, "-1 0x8000000000000000")?;
            ensure(bits(&v) == [u64::MAX, 1 << 63], &format!("{v:?}"))?;
            for bad in [
                "256", "-129", "0x100", "1.5", "0x", "abc", "0*1", "x*1", "--1",
            ] {
                ensure(
                    parse_values(Dtype::U8, bad).is_err(),
                    &format!("u8 `{bad}` accepted"),
                )?;
            }
            Ok(())
        }),
        t("float_values", || {
            let v = parse_values(
                Dtype::F32,
                "1.5 -0.0 0.0 inf -inf 0f3f800000 2*0F7FC00000 1e3",
            )?;
            ensure(
                bits(&v)
                    == [
                        0x3fc0_0000,
                        0x8000_0000,
                        0,
                        0x7f80_0000,
                        0xff80_0000,
                        0x3f80_0000,
                        0x7fc0_0000,
                        0x7fc0_0000,
                        0x447a_0000,
                    ],
                &format!("{v:?}"),
            )?;
            let v = parse_values(Dtype::F64, "0.1 -2.5 0d7ff8000000000001")?;
            ensure(
                bits(&v) == [0.1f64.to_bits(), (-2.5f64).to_bits(), 0x7ff8_0000_0000_0001],
                &format!("{v:?}"),
            )?;
            let v = parse_values(
                Dtype::F16,
                "1 -2 65504 0.000000059604644775390625 0h3c00 -inf",
            )?;
            ensure(
                bits(&v) == [0x3c00, 0xc000, 0x7bff, 0x0001, 0x3c00, 0xfc00],
                &format!("{v:?}"),
            )?;
            let v = parse_values(Dtype::BF16, "1 -0.0 3.0 inf 0h7fc0")?;
            ensure(
                bits(&v) == [0x3f80, 0x8000, 0x4040, 0x7f80, 0x7fc0],
                &format!("{v:?}"),
            )?;
            for (dt, bad) in [
                (Dtype::F32, "0.1"),
                (Dtype::F32, "0f3f80000"),
                (Dtype::F32, "0d3ff0000000000000"),
                (Dtype::F32, "infinity"),
                (Dtype::F32, "1e39"),
                (Dtype::F16, "65505"),
                (Dtype::F16, "0.1"),
                (Dtype::BF16, "1.001"),
                (Dtype::F64, "0f3f800000"),
                (Dtype::F64, "1e400"),
            ] {
                ensure(
                    parse_values(dt, bad).is_err(),
                    &format!("{dt:?} `{bad}` accepted"),
                )?;
            }
            Ok(())
        }),
        t("nan_matches_any_nan", || {
            let e = parse_value(Dtype::F32, "nan")?;
            for b in [0x7fc0_0000u64, 0x7fff_ffff, 0xffc0_0000, 0x7f80_0001] {
                ensure(e.matches(Dtype::F32, b), &format!("nan vs {b:#x}"))?;
            }
            for b in [0x7f80_0000u64, 0, 0x3f80_0000] {
                ensure(!e.matches(Dtype::F32, b), &format!("nan matched {b:#x}"))?;
            }
            let e = parse_value(Dtype::F16, "nan")?;
            ensure(e.matches(Dtype::F16, 0x7e00), "f16 nan")?;
            ensure(!e.matches(Dtype::F16, 0x7c00), "f16 inf is not nan")?;
            let e = parse_value(Dtype::F64, "nan")?;
            ensure(e.matches(Dtype::F64, 0xfff0_0000_0000_0001), "f64 nan")?;
            // -0.0 and 0.0 are different bits.
            let z = parse_value(Dtype::F32, "-0.0")?;
            ensure(!z.matches(Dtype::F32, 0), "-0.0 matched +0.0")?;
            Ok(())
        }),
        t("header", || {
            let h = parse_header(
                "// RUN: --grid 1 --block 32  --arg u32[64] --arg 7\n\
                 .version 8.0\n\
                 \t// EXPECT 0 u32: 1 2 3 0xffffffff 4*0 -5\n\
                 // EXPECT 2 f32: 1.5 nan\n\
                 // EXIT: 2\n\
                 // STDERR: out-of-bounds\n\
                 // STDOUT: hello  from 0\n\
                 // STDOUT:\n\
                 // EXPECTS nothing: this is an ordinary comment\n",
            )?;
            ensure(
                h.run
                    == [
                        "--grid", "1", "--block", "32", "--arg", "u32[64]", "--arg", "7",
                    ],
                &format!("{:?}", h.run),
            )?;
            ensure(h.expects.len() == 2, "two EXPECTs")?;
            ensure(
                h.expects[0].arg == "0" && h.expects[0].values.len() == 9 && h.expects[0].line == 3,
                &format!("{:?}", h.expects[0]),
            )?;
            ensure(
                h.expects[1].dtype == Dtype::F32 && h.expects[1].values[1] == Expected::AnyNan,
                &format!("{:?}", h.expects[1]),
            )?;
            ensure(h.exit == 2, "exit")?;
            ensure(h.stderr == ["out-of-bounds"], "stderr")?;
            ensure(
                h.stdout == Some(vec!["hello  from 0".to_string(), String::new()]),
                &format!("{:?}", h.stdout),
            )?;
            let h = parse_header("// RUN:\n// EXPECT 1.2 u8: 1\n// EXPECT @coeffs f32: 1\n")?;
            ensure(
                h.expects[0].arg == "1.2" && h.expects[1].arg == "@coeffs",
                &format!("{:?}", h.expects),
            )?;
            let h = parse_header("// RUN:\n")?;
            ensure(
                h.run.is_empty() && h.exit == 0 && h.stdout.is_none(),
                "defaults",
            )?;
            Ok(())
        }),
        t("malformed_headers", || {
            for bad in [
                "",
                "// EXPECT 0 u32: 1\n",
                "// RUN: a\n// RUN: b\n",
                "// RUN:\n// EXPECT 0 u32 1 2\n",
                "// RUN:\n// EXPECT x u32: 1\n",
                "// RUN:\n// EXPECT 0 u31: 1\n",
                "// RUN:\n// EXPECT 0: 1\n",
                "// RUN:\n// EXPECT 0 u32:\n",
                "// RUN:\n// EXPECT 0 u32: 1\n// EXPECT 0 u32: 2\n",
                "// RUN:\n// EXPECT 0 f32: 0.1\n",
                "// RUN:\n// EXIT: two\n",
                "// RUN:\n// EXIT: 1\n// EXIT: 2\n",
                "// RUN:\n// STDERR:\n",
                "// RUN:\n// EXPECT 1. u32: 1\n",
                "// RUN:\n// EXPECT 1.x u32: 1\n",
                "// RUN:\n// EXPECT @ u32: 1\n",
                "// RUN:\n// EXPECT @a=b u32: 1\n",
            ] {
                ensure(
                    parse_header(bad).is_err(),
                    &format!("accepted malformed header {bad:?}"),
                )?;
            }
            let e = parse_header("// RUN:\n// EXPECT 0 u8: 1 256\n").unwrap_err();
            ensure(e.starts_with("line 2:") && e.contains("256"), &e)?;
            Ok(())
        }),
        t("check_buffer", || {
            let e = ExpectBuf {
                arg: "1".to_string(),
                dtype: Dtype::I16,
                values: parse_values(Dtype::I16, "1 -2 0x7fff")?,
                line: 4,
            };
            check_buffer(&e, &[1, 0, 0xfe, 0xff, 0xff, 0x7f])?;
            let m = check_buffer(&e, &[1, 0, 0xfd, 0xff, 0xff, 0x7f]).unwrap_err();
            ensure(
                m.contains("element 1: expected 0xfffe (-2), got 0xfffd (-3)"),
                &m,
            )?;
            let m = check_buffer(&e, &[1, 0, 0xfe, 0xff]).unwrap_err();
            ensure(
                m.contains("holds 2 i16 elements, EXPECT (line 4) lists 3"),
                &m,
            )?;
            let m = check_buffer(&e, &[1, 0, 0xfe, 0xff, 0xff]).unwrap_err();
            ensure(m.contains("5 bytes"), &m)?;
            let f = ExpectBuf {
                arg: "0".to_string(),
                dtype: Dtype::F32,
                values: parse_values(Dtype::F32, "1.5")?,
                line: 1,
            };
            let m = check_buffer(&f, &0x3f80_0000u32.to_le_bytes()).unwrap_err();
            ensure(
                m.contains("expected 0x3fc00000 (1.5), got 0x3f800000 (1)"),
                &m,
            )?;
            Ok(())
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let root = run_dir();
    let mut files = Vec::new();
    ptx_files(&root, &mut files);
    let mut trials = self_tests();
    for p in files {
        let name = p
            .strip_prefix(&root)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        let test_name = name.clone();
        let q = p.clone();
        trials.push(Trial::test(name.clone(), move || {
            run_test(&q, &test_name, true)
        }));
        // the portable copies of the handlers (the machine may otherwise use only the
        // AVX2/FMA ones): same expectations
        let test_name = format!("portable/{name}");
        trials.push(Trial::test(test_name.clone(), move || {
            run_test(&p, &test_name, false)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
