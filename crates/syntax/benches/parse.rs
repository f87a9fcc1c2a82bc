//! Lexer, parser and printer throughput.
//!
//! `cargo bench -p ptx-syntax --bench parse -- --warm-up-time 1 --measurement-time 3`
//!
//! Inputs (each set is one benchmark item, its files parsed one by one, `Throughput::Bytes` of
//! the whole set):
//! * `corpus`: `tests/corpus/ptx/*.ptx` (nvcc output),
//! * `parse-ok`: `tests/parse/ok/*.ptx` (hand-written valid modules),
//! * `shared`: `$PTXVM_SHARED/corpus/**/*.ptx`, only when `PTXVM_SHARED` is set.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            if recursive {
                collect(&p, true, out);
            }
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

struct Set {
    name: &'static str,
    files: Vec<String>,
}

impl Set {
    fn load(name: &'static str, dir: &Path, recursive: bool) -> Option<Set> {
        let mut paths = Vec::new();
        collect(dir, recursive, &mut paths);
        paths.sort();
        // Non-UTF-8 files (if any) are skipped: the benchmark measures the lexer and parser.
        let files: Vec<String> = paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        if files.is_empty() {
            None
        } else {
            Some(Set { name, files })
        }
    }
    fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.len() as u64).sum()
    }
}

fn sets() -> Vec<Set> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut v = Vec::new();
    v.extend(Set::load("corpus", &root.join("tests/corpus/ptx"), false));
    v.extend(Set::load("parse-ok", &root.join("tests/parse/ok"), false));
    if let Some(shared) = std::env::var_os("PTXVM_SHARED") {
        v.extend(Set::load(
            "shared",
            &Path::new(&shared).join("corpus"),
            true,
        ));
    }
    for s in &v {
        eprintln!(
            "input set {}: {} files, {} bytes",
            s.name,
            s.files.len(),
            s.bytes()
        );
    }
    v
}

fn bench_parse(c: &mut Criterion) {
    let sets = sets();
    let mut g = c.benchmark_group("parse");
    for set in &sets {
        g.throughput(Throughput::Bytes(set.bytes()));
        g.bench_with_input(BenchmarkId::new("lex", set.name), set, |b, set| {
            b.iter(|| {
                let mut n = 0usize;
                for f in &set.files {
                    let mut lx = ptx_syntax::lexer::Lexer::new(f);
                    while lx.next_token().kind != ptx_syntax::lexer::TokenKind::Eof {
                        n += 1;
                    }
                }
                black_box(n)
            })
        });
        g.bench_with_input(BenchmarkId::new("parse", set.name), set, |b, set| {
            b.iter(|| {
                for f in &set.files {
                    black_box(ptx_syntax::parse(black_box(f)));
                }
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("print");
    for set in &sets {
        let modules: Vec<_> = set
            .files
            .iter()
            .map(|f| ptx_syntax::parse(f).module)
            .collect();
        g.throughput(Throughput::Bytes(set.bytes()));
        g.bench_with_input(
            BenchmarkId::new("print", set.name),
            &modules,
            |b, modules| {
                b.iter(|| {
                    for m in modules {
                        black_box(ptx_syntax::print_module(black_box(m)));
                    }
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
