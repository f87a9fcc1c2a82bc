//! The body of the `check` fuzz target (`fuzz/fuzz_targets/check.rs`), a plain function so that
//! stable Rust can replay saved inputs through it (`crates/check/tests/fuzz_replay.rs`).
//!
//! [`check_bytes`] does what `ptxvm check FILE` does with the bytes of a file: decode (invalid
//! UTF-8 is a diagnostic, not a failure), parse, check when the syntax is clean, and render every
//! diagnostic as text. Diagnostics are the expected result for bad input; what is a bug is a
//! panic anywhere on the way, or a diagnostic that points outside the text (then the message
//! could not name `file:line:column`): [`check_bytes`] panics on the latter too.

use ptx_diag::Diagnostic;

/// What [`check_bytes`] found: how many diagnostics and whether any is an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Number of diagnostics (errors and warnings).
    pub diagnostics: usize,
    /// Whether the input was rejected (an error diagnostic).
    pub rejected: bool,
}

/// Decodes, parses, checks and renders `data` as `ptxvm check` does. Never panics unless ptxvm
/// has a bug: a panic inside the parser, checker or renderer, or a diagnostic whose span is not
/// inside the text (see [`spans_problem`]).
pub fn check_bytes(data: &[u8]) -> CheckOutcome {
    let (file, mut diags) = ptx_syntax::decode_source("fuzz.ptx", data);
    if diags.is_empty() {
        diags = crate::check_source(file.text(), &crate::CheckOptions::default());
    }
    if let Some(p) = spans_problem(file.text(), &diags) {
        panic!("{p}");
    }
    // The renderer is part of what a user runs; it must cope with every span it is given.
    let text = ptx_diag::render_plain(&file, &diags);
    std::hint::black_box(text);
    CheckOutcome {
        diagnostics: diags.len(),
        rejected: ptx_diag::has_errors(&diags),
    }
}

/// `Some(description)` when a diagnostic has no location or a label whose span is not inside
/// `text` on `char` boundaries.
pub fn spans_problem(text: &str, diags: &[Diagnostic]) -> Option<String> {
    for d in diags {
        if d.labels.is_empty() {
            return Some(format!(
                "diagnostic {} {:?} has no location",
                d.code, d.message
            ));
        }
        for l in &d.labels {
            let (s, e) = (l.span.start as usize, l.span.end as usize);
            if s > e || e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
                return Some(format!(
                    "diagnostic {} {:?} has span {}..{} outside the text or off a char boundary (length {})",
                    d.code,
                    d.message,
                    s,
                    e,
                    text.len()
                ));
            }
        }
    }
    None
}

/// A small deterministic PRNG for mutation loops (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng((seed ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Immediates that break assumptions: zero, ±1, the edges of every width, NaN and infinity bits.
pub const EXTREME_IMMEDIATES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2147483647",
    "-2147483648",
    "0x80000000",
    "0xffffffff",
    "4294967296",
    "0x7fffffffffffffff",
    "0x8000000000000000",
    "0xffffffffffffffff",
    "-9223372036854775808",
    "65536",
    "1048576",
    "0f7FC00000",
    "0f7F800000",
    "0fFF800000",
    "0f00000001",
    "0d7FF8000000000000",
    "0dFFF0000000000000",
];

/// Launch dimensions and sizes at the edges of the limits.
pub const EXTREME_DIMS: &[&str] = &[
    "0",
    "1",
    "2",
    "31",
    "32",
    "33",
    "64",
    "1024",
    "1025",
    "65535",
    "65536",
    "4294967295",
    "2,2,2",
    "1,1,64",
    "1,1,65",
    "32,32",
    "1024,1,1",
    "1,65535,65535",
];

const SPACES: &[&str] = &[
    ".global",
    ".shared",
    ".local",
    ".const",
    ".param",
    ".shared::cta",
    "",
];

const TYPES: &[&str] = &[
    ".u8", ".s8", ".u16", ".s16", ".u32", ".s32", ".u64", ".s64", ".b32", ".b64", ".f32", ".f64",
    ".f16", ".pred",
];

/// One structure-aware mutation of PTX text `src` (lines as units; `other` is another input for
/// splicing): delete, duplicate or swap lines, swap two operands of an instruction, put an extreme
/// immediate, change a state space or a type suffix, rename a register, change the `// RUN:`
/// launch shape (`--grid`, `--block`, `--shared`) or an argument, or splice a line of `other`.
/// Deterministic in `rng`.
pub fn mutate(rng: &mut Rng, src: &str, other: &str) -> String {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return other.to_string();
    }
    let i = rng.below(lines.len());
    match rng.below(11) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => {
            let j = rng.below(lines.len());
            lines.swap(i, j);
        }
        3 => {
            // swap two operands of an instruction: `op a, b, c;`
            let l = &lines[i];
            if let Some(sp) = l.trim_start().find(char::is_whitespace) {
                let indent = l.len() - l.trim_start().len();
                let (op, rest) = l.split_at(indent + sp);
                let rest = rest.trim_end().trim_end_matches(';');
                let mut ops: Vec<&str> = rest.split(',').collect();
                if ops.len() >= 2 {
                    let a = rng.below(ops.len());
                    let b = rng.below(ops.len());
                    ops.swap(a, b);
                    lines[i] = format!("{op}{};", ops.join(","));
                }
            }
        }
        4 => {
            // an extreme immediate in place of a number (or of the last operand)
            let l = lines[i].clone();
            let imm = rng.pick(EXTREME_IMMEDIATES);
            // not a register count (`%r<100>`): huge declarations are a class of their own
            // (slow to lower in debug builds), left to the fuzz targets
            let nums: Vec<(usize, usize)> = number_spans(&l)
                .into_iter()
                .filter(|&(a, _)| !l[..a].ends_with('<'))
                .collect();
            lines[i] = if nums.is_empty() {
                match l.rfind(',') {
                    Some(c) => format!("{} {imm};", &l[..=c]),
                    None => l,
                }
            } else {
                let (a, b) = *rng.pick(&nums);
                format!("{}{imm}{}", &l[..a], &l[b..])
            };
        }
        5 => {
            // a state space for another: ld.global → ld.shared, .local → .const …
            let l = lines[i].clone();
            let found: Vec<(usize, &str)> = SPACES[..6]
                .iter()
                .filter_map(|s| l.find(s).map(|p| (p, *s)))
                .collect();
            if let Some(&(p, s)) = found.first() {
                let to = rng.pick(SPACES);
                lines[i] = format!("{}{to}{}", &l[..p], &l[p + s.len()..]);
            }
        }
        6 => {
            // a type suffix for another
            let l = lines[i].clone();
            let found: Vec<(usize, &str)> = TYPES
                .iter()
                .filter_map(|t| {
                    l.find(t)
                        .filter(|&p| !l[p + t.len()..].starts_with(|c: char| c.is_ascii_digit()))
                        .map(|p| (p, *t))
                })
                .collect();
            if !found.is_empty() {
                let (p, t) = *rng.pick(&found);
                let to = rng.pick(TYPES);
                lines[i] = format!("{}{to}{}", &l[..p], &l[p + t.len()..]);
            }
        }
        7 => {
            // a register for another register of the file
            let regs: Vec<&str> = src
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
                .filter(|w| w.starts_with('%') && w.len() > 1)
                .collect();
            let l = lines[i].clone();
            let here: Vec<&str> = regs.iter().copied().filter(|r| l.contains(r)).collect();
            if !here.is_empty() && !regs.is_empty() {
                let from = *rng.pick(&here);
                let to = *rng.pick(&regs);
                lines[i] = l.replacen(from, to, 1);
            }
        }
        8 => {
            // the launch shape or one argument
            if let Some(h) = lines.iter().position(|l| l.contains("RUN:")) {
                let l = lines[h].clone();
                let (flag, value) = match rng.below(5) {
                    0 => ("--grid", *rng.pick(EXTREME_DIMS)),
                    1 => ("--block", *rng.pick(EXTREME_DIMS)),
                    2 => (
                        "--shared",
                        *rng.pick(&["0", "1", "49152", "1048576", "1073741824", "4294967296"]),
                    ),
                    3 => (
                        "--arg",
                        *rng.pick(&["u8[0]", "u32[1]", "u64[1]", "0", "-1", "4294967295"]),
                    ),
                    _ => ("--arg", *rng.pick(EXTREME_IMMEDIATES)),
                };
                let words: Vec<&str> = l.split_whitespace().collect();
                let at: Vec<usize> = (0..words.len()).filter(|&k| words[k] == flag).collect();
                lines[h] = if at.is_empty() || flag == "--arg" && rng.below(4) == 0 {
                    format!("{l} {flag} {value}")
                } else {
                    let k = *rng.pick(&at);
                    let mut w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
                    if k + 1 < w.len() {
                        w[k + 1] = value.to_string();
                    }
                    w.join(" ")
                };
            }
        }
        9 => {
            let ol: Vec<&str> = other.lines().collect();
            if !ol.is_empty() {
                lines.insert(i, rng.pick(&ol).to_string());
            }
        }
        _ => {
            // truncate
            lines.truncate(i);
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Byte ranges of the numbers in `line` (decimal, hex, `0f`/`0d` float bits), not inside names.
fn number_spans(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let starts = b[k].is_ascii_digit()
            && (k == 0
                || !(b[k - 1].is_ascii_alphanumeric()
                    || b[k - 1] == b'_'
                    || b[k - 1] == b'%'
                    || b[k - 1] == b'.'));
        if starts {
            let s = if k > 0 && b[k - 1] == b'-' { k - 1 } else { k };
            let mut e = k;
            while e < b.len() && (b[e].is_ascii_alphanumeric()) {
                e += 1;
            }
            out.push((s, e));
            k = e;
        } else {
            k += 1;
        }
    }
    out
}

/// The structure-aware half of the fuzz targets' mutator: the first `size` bytes of `data` read
/// as text, given one to three [`mutate`] steps (lines of the input itself as the other text),
/// written back into `data` cut at `max_size`. Returns the new size.
pub fn mutate_in_place(rng: &mut Rng, data: &mut [u8], size: usize, max_size: usize) -> usize {
    let size = size.min(data.len());
    let text = String::from_utf8_lossy(&data[..size]).into_owned();
    let mut out = text.clone();
    for _ in 0..1 + rng.below(3) {
        out = mutate(rng, &out, &text);
    }
    let n = out.len().min(max_size).min(data.len());
    data[..n].copy_from_slice(&out.as_bytes()[..n]);
    n
}

/// Saved fuzz inputs for the stable replay tests: the files under `root/dir`, recursively (names
/// starting with `.` skipped), sorted by path, those that pass `keep`, each named by its path
/// relative to `root`. A missing directory has none.
pub fn saved_inputs(
    root: &std::path::Path,
    dir: &str,
    keep: fn(&std::path::Path) -> bool,
) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    use std::path::{Path, PathBuf};
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root.join(dir), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter(|p| keep(p))
        .map(|p| {
            let name = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            std::fs::read(&p).map(|bytes| (name, bytes))
        })
        .collect()
}

/// Every file ([`saved_inputs`]'s filter for seed and regression folders).
pub fn any_file(_: &std::path::Path) -> bool {
    true
}

/// `.ptx` files ([`saved_inputs`]'s filter for `tests/`).
pub fn is_ptx(p: &std::path::Path) -> bool {
    p.extension().is_some_and(|x| x == "ptx")
}

/// The crash class `pending` gives the saved input `name` (a path; its file name is looked up).
pub fn pending_class(pending: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    let file = name.rsplit('/').next().unwrap_or(name);
    pending.iter().find(|(f, _)| *f == file).map(|(_, c)| *c)
}

/// Writes the first `shown` failing inputs of a mutation loop to `dir` (`failure-N.ptx`) and
/// returns one line per file with why it failed, for the test's panic message.
pub fn save_failures(
    dir: &std::path::Path,
    failures: &[(String, String)],
    shown: usize,
) -> std::io::Result<String> {
    std::fs::create_dir_all(dir)?;
    let mut report = String::new();
    for (i, (input, why)) in failures.iter().take(shown).enumerate() {
        let path = dir.join(format!("failure-{i}.ptx"));
        std::fs::write(&path, input)?;
        report.push_str(&format!("{} : {why}\n", path.display()));
    }
    Ok(report)
}

/// The message of a caught panic (empty when it is neither a `String` nor a `&str`).
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs `f` with the panic hook silenced (the caller catches and reports the panic itself),
/// then puts the previous hook back.
pub fn quiet_panics<T>(f: impl FnOnce() -> T) -> T {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = f();
    std::panic::set_hook(prev);
    r
}

/// A setting from the environment (`PTX_FUZZ_ITERS`), or `default` when unset or unparsable.
pub fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The replay test of a fuzz target: runs every saved input through `one` (with panics
/// silenced; `one` catches them), except those `pending` lists, which are named on stderr.
/// Fails when `pending` names a file missing from `root/regressions`, when fewer than 100
/// inputs ran (the seeds were not found), or when any input failed.
pub fn replay_saved(
    root: &std::path::Path,
    regressions: &str,
    pending: &[(&str, &'static str)],
    inputs: Vec<(String, Vec<u8>)>,
    mut one: impl FnMut(&[u8]) -> Result<(), String>,
) {
    use std::io::Write as _;
    let mut n = 0;
    let mut failures = Vec::new();
    for (name, bytes) in inputs {
        if let Some(class) = pending_class(pending, &name) {
            // straight to stderr, past the test harness's capture: never silent
            let _ = writeln!(std::io::stderr(), "PENDING ({class}): {name}");
            continue;
        }
        n += 1;
        if let Err(e) = quiet_panics(|| one(&bytes)) {
            failures.push(format!("{name}: {e}"));
        }
    }
    for (file, class) in pending {
        assert!(
            root.join(regressions).join(file).is_file(),
            "PENDING lists {file} ({class}), which is not in {regressions}"
        );
    }
    assert!(n >= 100, "expected the seeds under {root:?}");
    assert!(
        failures.is_empty(),
        "{} of {n} inputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
