//! The checker's version and target gates never reject what ptxas accepts: every instance that
//! `tools/probe-gates.py` found ptxas 13.5 to accept (crates/isa/data/ptxas-gates.tsv, one row
//! per instance with the kernel it assembled) is checked at the least `.version` and `.target`
//! ptxas accepted it at, and must get no version or target error (E0306, E0307). Other
//! diagnostics are the operand rules' business and are not looked at here. No ptxas needed.

use ptx_check::{check_source, CheckOptions};
use ptx_diag::codes::check as codes;
use std::path::Path;

const TSV: &str = "../isa/data/ptxas-gates.tsv";

struct Row<'a> {
    key: &'a str,
    instance: &'a str,
    min_ptx: &'a str,
    min_target: &'a str,
    kernel: &'a str,
}

fn rows(text: &str) -> Vec<Row<'_>> {
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (k, i, v, t, body) = (
        col("key"),
        col("instance"),
        col("min_ptx"),
        col("min_target"),
        col("kernel"),
    );
    lines
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Row {
                key: c[k],
                instance: c[i],
                min_ptx: c[v],
                min_target: c[t],
                kernel: c.get(body).copied().unwrap_or(""),
            }
        })
        .collect()
}

/// The module the probe assembled for a row, at `version` and `target`.
fn module(row: &Row<'_>, version: &str, target: &str) -> String {
    let (major, minor) = version.split_once('.').expect("version");
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    let mut out = format!(".version {version}\n.target {target}\n");
    if (major, minor) >= (2, 3) {
        out.push_str(".address_size 64\n");
    }
    let mut body = String::new();
    for line in row.kernel.split(" ; ") {
        let line = line.replace("_K_", "_0_");
        let end = if line.ends_with(':') { "" } else { ";" };
        match line.strip_prefix("@module:") {
            Some(global) => out.push_str(&format!("{global};\n")),
            None => body.push_str(&format!("\t{line}{end}\n")),
        }
    }
    out.push_str(&format!(".visible .entry k()\n{{\n{body}\tret;\n}}\n"));
    out
}

#[test]
fn gates_accept_what_ptxas_accepts() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TSV);
    let text = std::fs::read_to_string(&path).expect("crates/isa/data/ptxas-gates.tsv");
    let mut checked = 0;
    let mut bad = String::new();
    for row in rows(&text) {
        if row.min_target == "-" || row.kernel.is_empty() {
            continue;
        }
        let version = row.min_ptx.trim_start_matches("<=");
        let src = module(&row, version, row.min_target);
        checked += 1;
        for d in check_source(&src, &CheckOptions::default()) {
            if d.code == codes::NEEDS_VERSION || d.code == codes::NEEDS_TARGET {
                bad.push_str(&format!(
                    "{} `{}` at .version {version} .target {}: {}\n",
                    row.key, row.instance, row.min_target, d.message
                ));
            }
        }
    }
    assert!(checked > 2000, "only {checked} probed instances");
    assert!(bad.is_empty(), "gates stricter than ptxas:\n{bad}");
}

/// A few facts of the probe, written out by hand from its log.
#[test]
fn probed_facts() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TSV);
    let text = std::fs::read_to_string(&path).expect("crates/isa/data/ptxas-gates.tsv");
    let all = rows(&text);
    let find = |instance: &str| {
        all.iter()
            .find(|r| r.instance == instance)
            .unwrap_or_else(|| panic!("no row for `{instance}`"))
    };
    // The ISA text says 6.3; ptxas accepts nanosleep from 6.2.
    let n = find("nanosleep.u32 t");
    assert_eq!((n.min_ptx, n.min_target), ("6.2", "sm_70"));
    // The text says 6.0; ptxas accepts fns from the version it calls 5.1.
    let f = find("fns.b32 d, mask, base, offset");
    assert_eq!((f.min_ptx, f.min_target), ("5.1", "sm_30"));
    // Packed 16-bit integer add: PTX 8.0 and sm_90.
    let a = find("add.u16x2 d, a, b");
    assert_eq!((a.min_ptx, a.min_target), ("8.0", "sm_90"));
    // `%clusterid` needs sm_90; the least version is the one that introduced sm_90 (7.8).
    let c = find("mov.u32 d, %clusterid.x");
    assert_eq!((c.min_ptx, c.min_target), ("<=7.8", "sm_90"));
}
