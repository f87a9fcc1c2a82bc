//! Times parsing (and dropping the AST) of the files given on the command line.
fn main() {
    for path in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&path).expect("readable UTF-8 file");
        let t0 = std::time::Instant::now();
        let parsed = ptx_syntax::parse(&src);
        let t1 = std::time::Instant::now();
        let n = parsed.module.directives.len();
        drop(parsed);
        let t2 = std::time::Instant::now();
        let mb = src.len() as f64 / 1e6;
        println!(
            "{path}: {mb:.1} MB, {n} directives, parse {:.3} s ({:.0} MB/s), drop {:.3} s",
            (t1 - t0).as_secs_f64(),
            mb / (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64()
        );
    }
}
