//! Prints what `ptxvm doc` will print, straight from the table:
//! `cargo run -p ptx-isa --example doc -- add.f32` (or `--list`, `--list --coverage`; this
//! example cannot see the checker or the interpreter, so their columns say `-`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--list") {
        print!(
            "{}",
            ptx_isa::render_list(
                args.iter()
                    .any(|a| a == "--coverage")
                    .then_some(&ptx_isa::Stages::PARSE_ONLY)
            )
        );
        return;
    }
    for query in &args {
        match ptx_isa::render_doc(query) {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
