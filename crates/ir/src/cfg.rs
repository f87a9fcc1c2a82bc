//! Control-flow graph and immediate post-dominators.
//!
//! Blocks start at the first instruction, at every label target and after every instruction
//! that can transfer control (`bra`, `brx.idx`, `ret`, `exit`, `trap`). A block whose last
//! instruction is an unguarded `ret`/`exit`/`trap` has no successors and flows to the virtual
//! exit. Post-dominators are computed on the reversed graph with the iterative algorithm of
//! Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm"); blocks that cannot reach
//! the exit (infinite loops) have no immediate post-dominator.

use crate::{Block, Function, Handle, Inst, Opcode, Operand};

/// The ways an instruction leaves straight-line flow.
fn branch_targets(i: &Inst) -> Option<Vec<u32>> {
    match i.op {
        Opcode::Bra => Some(
            i.operands
                .iter()
                .filter_map(|o| match o {
                    Operand::Label(l) => Some(l.raw()),
                    _ => None,
                })
                .collect(),
        ),
        Opcode::Brx => Some(
            i.operands
                .iter()
                .flat_map(|o| match o {
                    Operand::Targets(t) => t.iter().map(|x| x.raw()).collect(),
                    _ => Vec::new(),
                })
                .collect(),
        ),
        Opcode::Ret | Opcode::Exit | Opcode::Trap => Some(Vec::new()),
        _ => None,
    }
}

/// Splits `f.insts` into basic blocks with their successors.
pub fn build_cfg(f: &Function) -> Vec<Block> {
    let n = f.insts.len();
    if n == 0 {
        return Vec::new();
    }
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    for (_, at) in &f.labels {
        leader[at.index().min(n)] = true;
    }
    for (k, i) in f.insts.iter().enumerate() {
        if let Some(t) = branch_targets(i) {
            leader[k + 1] = true;
            for x in t {
                leader[(x as usize).min(n)] = true;
            }
        }
    }
    let starts: Vec<u32> = (0..n).filter(|&k| leader[k]).map(|k| k as u32).collect();
    let block_of = |inst: u32| -> Option<u32> {
        if inst as usize >= n {
            return None;
        }
        Some(starts.partition_point(|&s| s <= inst) as u32 - 1)
    };
    let mut blocks = Vec::with_capacity(starts.len());
    for (b, &s) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(n as u32);
        let last = &f.insts[end as usize - 1];
        let mut succs = Vec::new();
        match branch_targets(last) {
            Some(t) => {
                for x in t {
                    succs.extend(block_of(x));
                }
                if last.guard.is_some() {
                    succs.extend(block_of(end));
                }
            }
            None => succs.extend(block_of(end)),
        }
        succs.sort_unstable();
        succs.dedup();
        blocks.push(Block {
            start: s,
            end,
            succs: succs.into_iter().map(Handle::new).collect(),
        });
    }
    blocks
}

/// Immediate post-dominator of every block (`None` for the virtual exit or unreachable-exit).
pub fn post_dominators(blocks: &[Block]) -> Vec<Option<Handle<Block>>> {
    let n = blocks.len();
    let exit = n; // virtual exit node
                  // Reverse graph: preds in the reverse graph are the successors in the CFG.
    let mut rsucc: Vec<Vec<usize>> = vec![Vec::new(); n + 1]; // reverse edges: node -> its CFG preds
    for (b, blk) in blocks.iter().enumerate() {
        if blk.succs.is_empty() {
            rsucc[exit].push(b);
        }
        for &s in &blk.succs {
            rsucc[s.index()].push(b);
        }
    }
    // Postorder of the reverse graph from the exit (iterative DFS).
    let mut order = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n + 1];
    let mut stack = vec![(exit, 0usize)];
    seen[exit] = true;
    while let Some((node, k)) = stack.pop() {
        if k < rsucc[node].len() {
            stack.push((node, k + 1));
            let next = rsucc[node][k];
            if !seen[next] {
                seen[next] = true;
                stack.push((next, 0));
            }
        } else {
            order.push(node);
        }
    }
    let mut po_num = vec![usize::MAX; n + 1];
    for (i, &b) in order.iter().enumerate() {
        po_num[b] = i;
    }
    const UNDEF: usize = usize::MAX;
    let mut idom = vec![UNDEF; n + 1];
    idom[exit] = exit;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().rev() {
            if b == exit {
                continue;
            }
            // "predecessors" in the reverse graph are the CFG successors (or the exit).
            let preds: Vec<usize> = if blocks[b].succs.is_empty() {
                vec![exit]
            } else {
                blocks[b].succs.iter().map(|&s| s.index()).collect()
            };
            let mut new = UNDEF;
            for p in preds {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    p
                } else {
                    intersect(&idom, &po_num, p, new)
                };
            }
            if new != UNDEF && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|b| match idom[b] {
            UNDEF => None,
            x if x == exit => None,
            x => Some(Handle::new(x as u32)),
        })
        .collect()
}

fn intersect(idom: &[usize], po: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while po[a] < po[b] {
            a = idom[a];
        }
        while po[b] < po[a] {
            b = idom[b];
        }
    }
    a
}
