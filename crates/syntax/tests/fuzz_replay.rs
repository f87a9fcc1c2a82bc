//! Stable stand-in for the cargo-fuzz `roundtrip` target (`fuzz/fuzz_targets/roundtrip.rs`).
//!
//! 1. Replays every file in `fuzz/seeds/roundtrip/` and `fuzz/regressions/roundtrip/` through
//!    [`ptx_syntax::roundtrip_check`].
//! 2. Runs a bounded, deterministic mutation fuzzer over the seeds (xorshift PRNG; byte flips,
//!    token deletion/duplication/swap/insertion, truncation, splicing), asserting that nothing
//!    panics, that `roundtrip_check` is `Ok`, and that every diagnostic points inside the input on
//!    `char` boundaries.
//!
//! Knobs (environment): `PTX_FUZZ_ITERS` (default 20000), `PTX_FUZZ_SEED` (default fixed).
//! A failing input is minimized greedily and written to `$CARGO_TARGET_TMPDIR/fuzz-failures/`;
//! copy it to `fuzz/regressions/roundtrip/` once reported.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of one directory, sorted by name (missing directory: none).
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = rd
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// Everything the fuzz target checks, plus diagnostic-span sanity; `Err` describes the failure.
fn check(src: &str) -> Result<(), String> {
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        ptx_syntax::roundtrip_check(src)?;
        let parsed = ptx_syntax::parse(src);
        for d in &parsed.diagnostics {
            for l in &d.labels {
                let (s, e) = (l.span.start as usize, l.span.end as usize);
                if s > e || e > src.len() || !src.is_char_boundary(s) || !src.is_char_boundary(e) {
                    return Err(format!(
                        "diagnostic {} {:?} has span {:?} outside the input or off a char boundary (len {})",
                        d.code, d.message, l.span, src.len()
                    ));
                }
            }
            if d.labels.is_empty() {
                return Err(format!(
                    "diagnostic {} {:?} has no location",
                    d.code, d.message
                ));
            }
        }
        Ok(())
    }));
    match r {
        Ok(r) => r,
        Err(p) => Err(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

/// Greedy minimization: drop chunks (halving sizes) while the input still fails.
fn minimize(src: &str) -> String {
    let mut cur = src.to_string();
    let mut chunk = cur.len().max(1).next_power_of_two();
    while chunk >= 1 {
        let mut i = 0;
        while i < cur.len() {
            let end = (i + chunk).min(cur.len());
            if cur.is_char_boundary(i) && cur.is_char_boundary(end) {
                let cand = format!("{}{}", &cur[..i], &cur[end..]);
                if check(&cand).is_err() {
                    cur = cand;
                    continue;
                }
            }
            i += chunk;
        }
        chunk /= 2;
    }
    cur
}

fn quiet_panics<T>(f: impl FnOnce() -> T) -> T {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = f();
    std::panic::set_hook(prev);
    r
}

#[test]
fn replay_seeds_and_regressions() {
    let mut n = 0;
    let mut failures = Vec::new();
    for sub in ["seeds/roundtrip", "regressions/roundtrip"] {
        for (name, bytes) in files_in(&fuzz_dir().join(sub)) {
            n += 1;
            // As the fuzz target: only UTF-8 inputs; the lossy decoding is checked as well.
            let lossy = String::from_utf8_lossy(&bytes);
            if let Err(e) = quiet_panics(|| check(&lossy)) {
                failures.push(format!("{sub}/{name}: {e}"));
            }
        }
    }
    assert!(n >= 10, "expected the seed corpus under {:?}", fuzz_dir());
    assert!(
        failures.is_empty(),
        "{} of {n} inputs fail:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The mutation fuzzer.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Fragments that matter to the grammar, inserted as whole tokens.
const DICT: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    "@",
    "!",
    "|",
    "||",
    "&&",
    "<",
    ">",
    "<<",
    ">>",
    "=",
    "?",
    "+",
    "-",
    "~",
    "_",
    "%r1",
    "%rd<4>",
    "$L__BB0_1",
    ".reg",
    ".b32",
    ".u64",
    ".v4",
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".global",
    ".shared",
    ".param",
    ".const",
    ".align 8",
    ".version 8.0",
    ".target sm_80",
    ".address_size 64",
    ".loc 1 2 3",
    ".file 1 \"a.cu\"",
    ".section",
    ".pragma \"nounroll\";",
    ".maxntid 1,1,1",
    ".callprototype",
    ".branchtargets",
    "0x",
    "0x1F",
    "0f3F800000",
    "0d3FF0000000000000",
    "1.5e-3",
    ".5",
    "18446744073709551616",
    "0b102",
    "1U",
    "-1",
    "\"",
    "\"s\"",
    "/*",
    "*/",
    "//",
    "\n",
    "\r\n",
    "\t",
    " ",
    "\0",
    "é",
    "“",
    "@@DWARF .b8 1",
    "#include",
    "(.s64)",
    "mov.u32",
    "ret;",
    "bra.uni",
    "call (%r1), f, (%r2);",
    "ld.global.v2.f32 {%f1,%f2}, [%rd1+8];",
];

/// Byte ranges of the tokens of `s` (the lexer's view; falls back to whitespace-separated words).
fn token_spans(s: &str) -> Vec<(usize, usize)> {
    ptx_syntax::lexer::tokenize(s)
        .iter()
        .map(|t| (t.span.start as usize, t.span.end as usize))
        .filter(|&(a, b)| a < b && b <= s.len() && s.is_char_boundary(a) && s.is_char_boundary(b))
        .collect()
}

fn mutate(rng: &mut Rng, cur: &str, seeds: &[String]) -> String {
    let bytes = cur.as_bytes();
    match rng.below(10) {
        // Overwrite one byte with a random printable / punctuation / raw byte.
        0 | 1 => {
            if bytes.is_empty() {
                return rng.pick(DICT).to_string();
            }
            let mut b = bytes.to_vec();
            let i = rng.below(b.len());
            b[i] = match rng.below(3) {
                0 => *rng.pick(b"{}()[];,:@!<>=?+-*/%~_.0xfd\"\n"),
                1 => 0x20 + rng.below(0x5f) as u8,
                _ => rng.next() as u8,
            };
            String::from_utf8_lossy(&b).into_owned()
        }
        // Delete / duplicate / swap / insert tokens.
        2..=5 => {
            let toks = token_spans(cur);
            if toks.is_empty() {
                return format!("{cur}{}", rng.pick(DICT));
            }
            let (a, b) = *rng.pick(&toks);
            match rng.below(4) {
                0 => format!("{}{}", &cur[..a], &cur[b..]),
                1 => format!("{}{}{}", &cur[..b], &cur[a..b], &cur[b..]),
                2 => {
                    let (c, d) = *rng.pick(&toks);
                    let ((a, b), (c, d)) = if a <= c {
                        ((a, b), (c, d))
                    } else {
                        ((c, d), (a, b))
                    };
                    if b > c {
                        return cur.to_string();
                    }
                    format!(
                        "{}{}{}{}{}",
                        &cur[..a],
                        &cur[c..d],
                        &cur[b..c],
                        &cur[a..b],
                        &cur[d..]
                    )
                }
                _ => {
                    let at = if rng.below(2) == 0 { a } else { b };
                    format!("{}{}{}", &cur[..at], rng.pick(DICT), &cur[at..])
                }
            }
        }
        // Delete or duplicate a whole line range.
        6 => {
            let lines: Vec<&str> = cur.split_inclusive('\n').collect();
            if lines.is_empty() {
                return cur.to_string();
            }
            let i = rng.below(lines.len());
            let j = (i + 1 + rng.below(3)).min(lines.len());
            let mut out: Vec<&str> = lines[..i].to_vec();
            if rng.below(2) == 0 {
                out.extend_from_slice(&lines[i..j]);
                out.extend_from_slice(&lines[i..j]);
            }
            out.extend_from_slice(&lines[j..]);
            out.concat()
        }
        // Truncate.
        7 => {
            let mut at = rng.below(cur.len() + 1);
            while !cur.is_char_boundary(at) {
                at -= 1;
            }
            cur[..at].to_string()
        }
        // Splice: a prefix of this input with a suffix of another seed.
        _ => {
            let other = rng.pick(seeds);
            let mut a = rng.below(cur.len() + 1);
            while !cur.is_char_boundary(a) {
                a -= 1;
            }
            let mut b = rng.below(other.len() + 1);
            while !other.is_char_boundary(b) {
                b -= 1;
            }
            format!("{}{}", &cur[..a], &other[b..])
        }
    }
}

#[test]
fn mutation_fuzz() {
    let iters: usize = std::env::var("PTX_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let seed: u64 = std::env::var("PTX_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_F00D_CAFE_1234);
    let mut seeds: Vec<String> = Vec::new();
    for sub in ["seeds/roundtrip", "regressions/roundtrip"] {
        for (_, bytes) in files_in(&fuzz_dir().join(sub)) {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            seeds.push(text);
        }
    }
    assert!(!seeds.is_empty(), "no seeds under {:?}", fuzz_dir());

    let mut rng = Rng((seed ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1);
    let mut failures: Vec<(String, String)> = Vec::new();
    quiet_panics(|| {
        for _ in 0..iters {
            let mut input = rng.pick(&seeds).clone();
            for _ in 0..1 + rng.below(4) {
                input = mutate(&mut rng, &input, &seeds);
            }
            // Keep inputs small so that the loop stays fast in debug builds.
            if input.len() > 8192 {
                let mut at = 8192;
                while !input.is_char_boundary(at) {
                    at -= 1;
                }
                input.truncate(at);
            }
            if let Err(e) = check(&input) {
                if failures.len() < 5 {
                    let small = minimize(&input);
                    let why = check(&small).err().unwrap_or(e);
                    failures.push((small, why));
                } else {
                    failures.push((String::new(), e));
                }
            }
        }
    });
    if failures.is_empty() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let mut report = String::new();
    for (i, (input, why)) in failures.iter().take(5).enumerate() {
        let path = dir.join(format!("failure-{i}.ptx"));
        std::fs::write(&path, input).unwrap();
        report.push_str(&format!("--- {} ({why})\n{input:?}\n", path.display()));
    }
    panic!(
        "{} of {iters} mutated inputs fail (seed {seed}); minimized:\n{report}",
        failures.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Regression tests for parser bugs found by the fuzzer (inputs also in fuzz/regressions/roundtrip/).

#[test]
fn bug_unclosed_nested_scope_at_eof() {
    for src in [".entry k{{", ".entry k()\n{\n\t{\n\t\tret;\n"] {
        assert_eq!(ptx_syntax::roundtrip_check(src), Ok(()), "input {src:?}");
    }
}

/// When `PTXVM_SHARED` is set (this machine and CI), every `$PTXVM_SHARED/corpus/**/*.ptx`
/// round-trips too; skipped otherwise (a fresh clone has no shared corpus).
#[test]
fn shared_corpus_roundtrip() {
    let Some(shared) = std::env::var_os("PTXVM_SHARED") else {
        eprintln!("PTXVM_SHARED not set: skipped");
        return;
    };
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(&shared).join("corpus"), &mut files);
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        if let Err(e) = quiet_panics(|| check(&text)) {
            failures.push(format!(
                "{}: {}",
                f.display(),
                e.lines().next().unwrap_or("")
            ));
        }
    }
    eprintln!("{} shared corpus files", files.len());
    assert!(
        failures.is_empty(),
        "{} files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
