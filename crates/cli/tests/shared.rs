//! Checks over the shared material beside the repository (`../shared`), run by `.ci/run` as its
//! own step with `PTXVM_SHARED=../shared`. Without that variable this harness has no tests, so the
//! README's test command passes on a fresh clone.
//!
//! - `spec-examples`: every `examples` block of `spec/isa-reference.json` parses, placed inside a
//!   kernel body or at module level. Lines that are only `...` (the spec's "code omitted") are
//!   dropped first. Blocks that are malformed in the spec itself are listed, with the reason, in
//!   `tests/spec/malformed-examples.txt`; the test fails if that list is not exactly the set of
//!   blocks that do not parse (so a new misparse, or a fixed one, shows up).
//! - `corpus::…`: every `.ptx` under `corpus/` (all accepted by ptxas) parses and checks with no
//!   diagnostic (no error, no warning), and `fmt` round-trips and is idempotent.
//! - `run::…`: every kernel of every corpus file runs to completion with synthetic arguments
//!   (a zeroed 4 MiB buffer per 64-bit parameter, 64 for integer scalars, 1.0 for floats, zero
//!   bytes for by-value structs; 2 blocks of 64 threads, or of the `.reqntid` shape), or is
//!   refused before it starts because its reachable code uses an instruction ptxvm does not
//!   execute yet (only E0609 diagnostics). Any other error or fault fails the test.

mod common;

use common::ptx_files;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

const HEADER: &str = ".version 9.0\n.target sm_100a\n.address_size 64\n";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Removes the spec's "code omitted" marks: runs of three or more dots (also `. . .`).
fn strip_ellipses(block: &str) -> String {
    let mut out = String::with_capacity(block.len());
    for line in block.lines() {
        let mut kept = String::with_capacity(line.len());
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            // Count dots separated by at most single spaces.
            let mut j = i;
            let mut dots = 0;
            while j < chars.len()
                && (chars[j] == '.'
                    || (chars[j] == ' ' && dots > 0 && j + 1 < chars.len() && chars[j + 1] == '.'))
            {
                if chars[j] == '.' {
                    dots += 1;
                }
                j += 1;
            }
            if dots >= 3 {
                i = j;
            } else {
                kept.push(chars[i]);
                i += 1;
            }
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

fn parses(src: &str) -> Result<(), String> {
    let p = ptx_syntax::parse(src);
    if p.diagnostics.is_empty() {
        Ok(())
    } else {
        let file = ptx_diag::SourceFile::new("example.ptx", src);
        Err(ptx_diag::render_plain(&file, &p.diagnostics))
    }
}

/// Whether an examples block parses in a kernel body or at module level.
fn example_parses(block: &str) -> Result<(), String> {
    let body = format!("{HEADER}.visible .entry spec_example()\n{{\n{block}\n}}\n");
    let module = format!("{HEADER}{block}\n");
    match (parses(&body), parses(&module)) {
        (Ok(()), _) | (_, Ok(())) => Ok(()),
        (Err(a), Err(b)) => Err(format!("in a kernel body:\n{a}\nat module level:\n{b}")),
    }
}

fn spec_examples(shared: &Path) -> Result<(), Failed> {
    let json = std::fs::read_to_string(shared.join("spec/isa-reference.json"))
        .map_err(|e| format!("isa-reference.json: {e}"))?;
    let entries: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    let entries = entries
        .as_array()
        .ok_or("isa-reference.json is not an array")?;
    let listed_text =
        std::fs::read_to_string(repo_root().join("tests/spec/malformed-examples.txt"))
            .map_err(|e| format!("tests/spec/malformed-examples.txt: {e}"))?;
    let listed: std::collections::BTreeSet<String> = listed_text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split(':').next().map(|k| k.trim().to_string()))
        .collect();
    let mut failing = std::collections::BTreeMap::new();
    let mut total = 0;
    for (i, e) in entries.iter().enumerate() {
        let block = e["examples"].as_str().unwrap_or("");
        if block.trim().is_empty() {
            continue;
        }
        total += 1;
        let key = format!("{i:03} {}", e["opcode"].as_str().unwrap_or("?"));
        if let Err(why) = example_parses(&strip_ellipses(block)) {
            failing.insert(key, why);
        }
    }
    let unexpected: Vec<_> = failing.keys().filter(|k| !listed.contains(*k)).collect();
    let fixed: Vec<_> = listed
        .iter()
        .filter(|k| !failing.contains_key(*k))
        .collect();
    println!(
        "spec examples: {total} non-empty blocks, {} parse, {} listed as malformed in the spec",
        total - failing.len(),
        failing.len()
    );
    if unexpected.is_empty() && fixed.is_empty() {
        return Ok(());
    }
    let mut msg = String::new();
    for k in &unexpected {
        msg.push_str(&format!("example {k} does not parse:\n{}\n", failing[*k]));
    }
    for k in &fixed {
        msg.push_str(&format!(
            "example {k} is listed as malformed but parses: remove it from the list\n"
        ));
    }
    Err(msg.into())
}

fn corpus_file(path: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let diags = ptx_check::check_source(&src, &ptx_check::CheckOptions::default());
    if !diags.is_empty() {
        let file = ptx_diag::SourceFile::new(path.display().to_string(), src.as_str());
        return Err(ptx_diag::render_plain(&file, &diags).into());
    }
    ptx_syntax::roundtrip_check(&src).map_err(Failed::from)
}

fn run_file(path: &Path) -> Result<(), Failed> {
    use ptxvm::{Arg, Device, Error, LaunchOptions, Module};
    use ptxvm::{ScalarType, TypeKind};
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let device = Device::new();
    let module =
        Module::from_ptx(&device, &path.display().to_string(), &src).map_err(|e| e.render())?;
    let mut buffers = Vec::new();
    let mut unsupported = Vec::new();
    for name in module.kernel_names() {
        let k = module.kernel(&name).map_err(|e| e.render())?;
        let mut args = Vec::new();
        let params = k.params();
        let numba = path.to_string_lossy().contains("numba");
        let mut i = 0;
        while i < params.len() {
            let p = &params[i];
            // Numba passes each array as 7 words: meminfo, parent, nitems, itemsize, data,
            // shape, strides. Give it a 64-element f32/i32 array.
            if numba
                && i + 7 <= params.len()
                && params[i..i + 7].iter().all(|q| q.size == 8 && !q.array)
            {
                let b = device.alloc::<u8>(4 << 20).map_err(|e| e.render())?;
                for v in [0, 0, 64, 4, b.addr(), 64, 4] {
                    args.push(Arg::Bytes(u64::to_le_bytes(v).to_vec()));
                }
                buffers.push(b);
                i += 7;
                continue;
            }
            i += 1;
            let arg = match p.ty {
                _ if p.array => Arg::Bytes(vec![0; p.size as usize]),
                Some(t) if p.size == 8 && t.kind() != TypeKind::Float => {
                    let b = device.alloc::<u8>(4 << 20).map_err(|e| e.render())?;
                    let a = Arg::Pointer(b.addr());
                    buffers.push(b);
                    a
                }
                Some(ScalarType::F32) => Arg::f32(1.0),
                Some(ScalarType::F64) => Arg::f64(1.0),
                Some(t) if t.kind() == TypeKind::Float => Arg::Bytes(vec![0; p.size as usize]),
                _ => {
                    let mut v = 64u64.to_le_bytes().to_vec();
                    v.truncate(p.size as usize);
                    Arg::Bytes(v)
                }
            };
            args.push(arg);
        }
        let opts = LaunchOptions {
            threads: 1,
            max_instructions: 200_000_000,
            timeout: Some(std::time::Duration::from_secs(60)),
            ..LaunchOptions::default()
        };
        let block = k.required_block().unwrap_or([64, 1, 1]);
        match k.launch([2, 1, 1], block, 16384, &args, &opts) {
            Ok(_) => {}
            // a kernel whose reachable code holds an instruction ptxvm does not execute yet is
            // refused before it starts, each such instruction an E0609 (issue 13 point 11)
            Err(e @ Error::Invalid { .. })
                if matches!(&e, Error::Invalid { diagnostics, .. }
                    if !diagnostics.is_empty()
                        && diagnostics.iter().all(|d| d.code == ptxvm::codes::UNSUPPORTED)) =>
            {
                unsupported.push(format!("{name}: {e}"));
            }
            Err(e) => return Err(format!("kernel `{name}`:\n{}", e.render()).into()),
        }
    }
    if !unsupported.is_empty() {
        eprintln!("{}: deferred: {}", path.display(), unsupported.join("; "));
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    if let Some(shared) = std::env::var_os("PTXVM_SHARED").map(PathBuf::from) {
        let s = shared.clone();
        trials.push(Trial::test("spec-examples", move || spec_examples(&s)));
        let mut files = Vec::new();
        ptx_files(&shared.join("corpus"), &mut files);
        files.sort();
        for p in files {
            let name = p.strip_prefix(&shared).unwrap_or(&p).display().to_string();
            let q = p.clone();
            trials.push(Trial::test(format!("corpus::{name}"), move || {
                corpus_file(&q)
            }));
            trials.push(Trial::test(format!("run::{name}"), move || run_file(&p)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
