//! The warp-shape metamorphic harness of issue 22 (see `shapes/mod.rs`): every executed
//! instruction form of the table, drawn with random modifiers and operands, must give the same
//! bits at block sizes 1, 7, 31, 32, 33, 64 and 1024, plain, guarded and in a divergent branch,
//! on one OS thread or all, through the SIMD and the portable handlers, with the rewrites on and
//! off; warp-collective instructions must match their per-lane models.
//!
//! `cargo test` runs a fixed-seed slice (one draw per form, a few configurations each). The
//! campaign runs it long, in release, every configuration of every draw:
//!
//! ```sh
//! PTXVM_SHAPES_ROUNDS=40 PTXVM_SHAPES_ALL=1 PTXVM_SHAPES_SEED=7 \
//!     cargo test --release -p ptxvm --test warp_shapes -- --nocapture
//! ```
//! (`tools/shapes-campaign.sh` wraps it.)

mod shapes;

use shapes::*;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn every_form_agrees_at_every_warp_shape() {
    let rounds = env_u64("PTXVM_SHAPES_ROUNDS", 1);
    let all = env_u64("PTXVM_SHAPES_ALL", 0) == 1;
    let seed = env_u64("PTXVM_SHAPES_SEED", 22);
    let per = env_u64("PTXVM_SHAPES_CONFIGS", 2) as usize;
    let only = std::env::var("PTXVM_SHAPES_ONLY").ok();
    let device = ptxvm::Device::new();
    let configs = all_configs();
    let mut tally = Tally::default();
    let mut r = Rng(seed);
    let forms = forms();
    let start = std::time::Instant::now();
    let mut tails = std::collections::BTreeSet::new();
    for round in 0..rounds {
        // memory forms and the forms of fused patterns take more draws: their fast paths
        // depend on type, width, operands and address
        let draws = |word: &str| match word {
            "selp" | "shfl" => 3,
            _ if template_of(word) == Some(Template::Memory) => 2,
            _ => 1,
        };
        for (word, form) in forms
            .iter()
            .flat_map(|f| std::iter::repeat_n(f, draws(f.0)))
        {
            if only.as_deref().is_some_and(|o| !form.path.starts_with(o)) {
                continue;
            }
            // a draw the checker takes, in a few tries; for `selp` and `shfl`, one with the
            // instructions after it that make a fused pattern (selp + add, the scan step)
            let want_tail = matches!(*word, "selp" | "shfl") && !tails.contains(&form.path);
            let mut inst = None;
            for _ in 0..if want_tail { 60 } else { 12 } {
                inst = instance(&mut r, form, word);
                match &inst {
                    Some(i) if want_tail && i.tail == Tail::None => {}
                    Some(_) => break,
                    None => {}
                }
            }
            if inst.as_ref().is_some_and(|i| i.tail != Tail::None) {
                tails.insert(form.path);
            }
            let Some(inst) = inst else { continue };
            if !executed(inst.opcode) {
                continue;
            }
            let chosen: Vec<Config> = if all {
                configs.clone()
            } else {
                // always a full-warp configuration with every fast path on, then random ones
                let mut v = vec![Config {
                    block: 32,
                    threads: 1,
                    simd: true,
                    rewrites: true,
                }];
                for _ in 1..per {
                    v.push(*r.pick(&configs));
                }
                v
            };
            check_instance(&device, &inst, &mut r, &chosen, &mut tally);
            if tally.mismatches.len() > 60 {
                break;
            }
        }
        if all {
            eprintln!(
                "round {}: {} instances, {} launches, {} thread results compared, {} mismatches ({:.0?})",
                round + 1,
                tally.instances,
                tally.launches,
                tally.thread_results,
                tally.mismatches.len(),
                start.elapsed()
            );
        }
    }
    eprintln!(
        "warp shapes: {} instances, {} launches compared with the reference, {} thread results, {} opcodes exercised, {} refused draws",
        tally.instances,
        tally.launches,
        tally.thread_results,
        tally.exercised.len(),
        tally.refused.values().sum::<u64>()
    );
    for (path, n) in &tally.paths {
        eprintln!("  path ×{n}: {path}");
    }
    for (why, n) in &tally.refused {
        eprintln!("  refused ×{n}: {why}");
    }
    assert!(
        tally.mismatches.is_empty(),
        "{} mismatches:\n{}\n\nthe first in full:\n{}",
        tally.mismatches.len(),
        tally
            .mismatches
            .iter()
            .map(|m| m.lines().next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
        tally.mismatches[0]
    );
    if only.is_none() {
        let unreached: Vec<&&str> = REQUIRED_PATHS
            .iter()
            .filter(|p| !tally.paths.contains_key(**p))
            .collect();
        assert!(
            unreached.is_empty(),
            "optimised paths no draw reached: {unreached:?}"
        );
        // every executed opcode is exercised or exempt with a reason
        let missing: Vec<&str> = ptx_isa::Opcode::ALL
            .iter()
            .filter(|&&op| executed(op))
            .map(|op| op.name())
            .filter(|n| !tally.exercised.contains(n) && !EXEMPT.iter().any(|(e, _)| e == n))
            .collect();
        assert!(
            missing.is_empty(),
            "executed opcodes the harness neither exercises nor exempts: {missing:?}"
        );
    }
}
