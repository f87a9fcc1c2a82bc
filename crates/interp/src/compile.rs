//! IR → bytecode: the driver of slot allocation, decoding and the rewrites.
//!
//! A kernel is compiled together with every function reachable from it. Each IR instruction
//! becomes exactly one [`Insn`], so a label's IR index plus its function's entry is its code
//! index. Decoding (`crate::decode`) happens once per instruction — the typed modifiers become
//! handler choices and packed `aux` bits — so that execution never looks at a modifier.
//!
//! After decoding, passes rewrite the code in place, keeping one `Insn` per IR instruction (a
//! rewritten instruction becomes [`Op::Nop`], still counted as executed): a register that is a
//! plain copy of a constant, symbol or special register is read from that slot as it is decoded
//! (`Facts::copies`), and a copy nothing reads any more is dead; then the passes of
//! `crate::rewrite`: `invariant::plan` hoists what is the same in every CTA into the prelude;
//! `ifconv` turns short guarded branches and if-else blocks into guards; `fuse` makes
//! superinstructions of pairs and triples (leaving out values that liveness shows are never
//! read); last, every instruction records the no-ops that follow it and that the fast path
//! may step over (`Insn::skip`). [`CompileOptions`] turns every rewrite off (the warp-shape
//! harness compares both; `docs/testing.md`).

use crate::decode::{decode, Builder, Dec};
use crate::mem::FUNC_WINDOW;
pub use crate::program::{func_addr, GlobalAddrs};
use crate::program::{FuncInfo, Insn, Op, Program};
use ptx_ir::{Opcode, Operand};
use ptx_isa::{ScalarType, StateSpace};
use std::collections::HashMap;

/// Why a kernel could not be compiled. Decoding itself refuses nothing (an instruction the
/// interpreter cannot run becomes [`Op::Unsupported`], refused at launch): only time runs out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// Compiling went past [`CompileOptions::deadline`].
    TimedOut,
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::TimedOut => {
                write!(f, "compiling the kernel took longer than its time limit")
            }
        }
    }
}

impl std::error::Error for CompileError {}

/// The function whose code address is `addr`.
pub fn func_of_addr(p: &Program, addr: u64) -> Option<u32> {
    if addr < FUNC_WINDOW || (addr - FUNC_WINDOW) % 16 != 0 {
        return None;
    }
    let ir = (addr - FUNC_WINDOW) / 16;
    p.func_of_ir.get(ir as usize).copied().flatten()
}

/// How a kernel is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Run the bytecode rewrites: copy propagation and slot sharing, invariant hoisting,
    /// if-conversion, fusion and no-op skips. Off, every instruction runs as decoded; results
    /// must be the same either way (the warp-shape harness compares both).
    pub rewrites: bool,
    /// Give up ([`CompileError::TimedOut`]) once this instant has passed: a launch's time limit
    /// covers compiling its kernel. Checked every [`DEADLINE_STRIDE`] instructions and between
    /// the passes, each of which is linear in the kernel's size.
    pub deadline: Option<std::time::Instant>,
}

/// Instructions decoded between two looks at the clock.
const DEADLINE_STRIDE: usize = 4096;

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            rewrites: true,
            deadline: None,
        }
    }
}

impl CompileOptions {
    fn check_deadline(&self) -> Result<(), CompileError> {
        match self.deadline {
            Some(d) if std::time::Instant::now() >= d => Err(CompileError::TimedOut),
            _ => Ok(()),
        }
    }
}

/// Compiles kernel `kernel` (IR function index) of `m` with the default options.
pub fn compile(
    m: &ptx_ir::Module,
    kernel: u32,
    globals: &GlobalAddrs,
) -> Result<Program, CompileError> {
    compile_with(m, kernel, globals, CompileOptions::default())
}

/// Compiles kernel `kernel` (IR function index) of `m`.
pub fn compile_with(
    m: &ptx_ir::Module,
    kernel: u32,
    globals: &GlobalAddrs,
    opts: CompileOptions,
) -> Result<Program, CompileError> {
    // reachable functions
    let mut order = vec![kernel];
    let mut seen = vec![false; m.functions.len()];
    seen[kernel as usize] = true;
    // functions whose addresses are stored in module variables (tables of function pointers)
    for g in &m.globals {
        for r in &g.relocs {
            if let ptx_ir::SymbolRef::Function(f) = r.target {
                if m.functions[f].defined && !seen[f.index()] {
                    seen[f.index()] = true;
                    order.push(f.raw());
                }
            }
        }
    }
    let mut i = 0;
    while i < order.len() {
        let f = &m.functions[order[i] as usize];
        for &c in &f.callees {
            if !seen[c.index()] && m.functions[c].defined {
                seen[c.index()] = true;
                order.push(c.raw());
            }
        }
        i += 1;
    }
    let mut func_of_ir = vec![None; m.functions.len()];
    for (pi, &f) in order.iter().enumerate() {
        func_of_ir[f as usize] = Some(pi as u32);
    }
    let mut b = Builder {
        m,
        nslots: 0,
        npreds: 0,
        consts: HashMap::new(),
        const_list: Vec::new(),
        copies: Vec::new(),
        read_direct: Vec::new(),
        const_preds: [None; 2],
        const_pred_list: Vec::new(),
        sregs: HashMap::new(),
        sreg_list: Vec::new(),
        fp_slot: 0,
        cc_slot: 0,
        reg_slot: Vec::new(),
        globals: globals.clone(),
        shared_off: HashMap::new(),
        local_shared_off: HashMap::new(),
        shared_static: 0,
        func_of_ir: func_of_ir.clone(),
        funcs: Vec::new(),
        tables: Vec::new(),
        lists: Vec::new(),
        calls: Vec::new(),
        barriers: Vec::new(),
        messages: Vec::new(),
        cluster_mem: Vec::new(),
        generic_mapa: None,
    };
    b.fp_slot = b.new_slot();
    b.cc_slot = b.new_slot();
    b.konst(0);
    // shared memory layout: module shared variables, then function-local ones, then dynamic
    let mut off = 0u64;
    let mut dynamic = Vec::new();
    let mut shared_vars = Vec::new();
    for (gi, g) in m.globals.iter().enumerate() {
        if matches!(g.space, StateSpace::Shared | StateSpace::SharedCta) {
            if g.size == 0 || g.external {
                dynamic.push(gi as u32);
                continue;
            }
            // (saturating: a size near 2^64 is refused at launch, not wrapped here)
            off = off.div_ceil(g.align.max(1)).saturating_mul(g.align.max(1));
            b.shared_off.insert(gi as u32, off);
            shared_vars.push((off, g.size, g.name.to_string()));
            off = off.saturating_add(g.size);
        }
    }
    for &f in &order {
        for (li, l) in m.functions[f as usize].locals.iter().enumerate() {
            if l.space == StateSpace::Shared {
                off = off.div_ceil(l.align.max(1)).saturating_mul(l.align.max(1));
                b.local_shared_off.insert((f, li as u32), off);
                shared_vars.push((off, l.size, l.name.to_string()));
                off = off.saturating_add(l.size);
            }
        }
    }
    let dyn_off = off.div_ceil(16).saturating_mul(16);
    for g in dynamic {
        b.shared_off.insert(g, dyn_off);
        shared_vars.push((dyn_off, 0, m.globals[g as usize].name.to_string()));
    }
    b.shared_static = dyn_off;
    // recursion: f is recursive if it can reach itself
    let on_cycle = on_call_cycle(m);
    let recursive: Vec<bool> = order.iter().map(|&f| on_cycle[f as usize]).collect();
    // register slots and function info
    let mut entry = 0u32;
    // the kernel's registers that can share slots (see `invariant::Facts::classes`)
    let facts = crate::rewrite::invariant::Facts::new(&m.functions[kernel as usize]);
    let kregs = m.functions[kernel as usize].regs.len();
    let classes = if opts.rewrites {
        facts.classes(&m.functions[kernel as usize])
    } else {
        vec![None; kregs]
    };
    b.copies = if opts.rewrites {
        facts.copies(&m.functions[kernel as usize])
    } else {
        vec![None; kregs]
    };
    b.read_direct = vec![false; m.functions[kernel as usize].regs.len()];
    for (pi, &f) in order.iter().enumerate() {
        let func = &m.functions[f as usize];
        let first = b.nslots;
        let pfirst = b.npreds;
        let mut slots = Vec::with_capacity(func.regs.len());
        let mut class_slot: HashMap<u32, u32> = HashMap::new();
        for (r, info) in func.regs.iter().enumerate() {
            if info.ty == ScalarType::Pred {
                slots.push(b.npreds);
                b.npreds += 1;
            } else if let Some(c) = classes.get(r).copied().flatten().filter(|_| pi == 0) {
                let s = *class_slot.entry(c).or_insert_with(|| {
                    b.nslots += 1;
                    b.nslots - 1
                });
                slots.push(s);
            } else {
                slots.push(b.nslots);
                b.nslots += 1;
            }
        }
        b.reg_slot.push(slots);
        let param_info =
            |p: &ptx_ir::Param, l: Option<&ptx_ir::LocalVar>| -> (u64, u64, Option<u32>) {
                (
                    l.map(|l| l.offset).unwrap_or(0),
                    p.size,
                    p.reg.map(|r| b.reg_slot[pi][r.index()]),
                )
            };
        let find_local = |name: &str| {
            func.locals
                .iter()
                .find(|l| l.name == name && l.space == StateSpace::Param)
        };
        let params = func
            .params
            .iter()
            .map(|p| param_info(p, find_local(&p.name)))
            .collect();
        let returns = func
            .returns
            .iter()
            .map(|p| param_info(p, find_local(&p.name)))
            .collect();
        b.funcs.push(FuncInfo {
            ir_index: f,
            name: func.name.to_string(),
            entry,
            frame_size: func.frame_size,
            slots: (first, b.nslots),
            pred_slots: (pfirst, b.npreds),
            recursive: recursive[pi],
            params,
            returns,
        });
        entry += func.insts.len() as u32;
    }
    // code
    let mut code = Vec::with_capacity(entry as usize);
    for (pi, &f) in order.iter().enumerate() {
        let func = &m.functions[f as usize];
        for (k, inst) in func.insts.iter().enumerate() {
            if k % DEADLINE_STRIDE == DEADLINE_STRIDE - 1 {
                opts.check_deadline()?;
            }
            let mut d = Dec {
                b: &mut b,
                f,
                fi: pi as u32,
                func,
                inst,
            };
            let decoded = match func.unsupported.iter().find(|(at, _)| *at == k as u32) {
                Some((_, why)) => Err(why.clone()),
                None => decode(&mut d),
            };
            let mut insn = match decoded {
                Ok(i) => i,
                Err(msg) => {
                    let id = b.message(msg);
                    Insn::new(Op::Unsupported(id), f, k as u32)
                }
            };
            insn.func = f;
            insn.inst = k as u32;
            if let Some(g) = inst.guard {
                insn.guard = b.reg_slot[pi][g.reg.index()];
                insn.neg = g.negated;
            }
            code.push(insn);
        }
    }
    opts.check_deadline()?;
    let mut plan = crate::rewrite::invariant::plan(&b, kernel, &facts, &mut code, opts.rewrites);
    opts.check_deadline()?;
    // a copy that every reader reads from its source instead is dead (still counted; decided
    // after the plan, which needs the copy decoded to see that its readers can be hoisted).
    // The dead ones leave the prelude in one pass: one `retain` per copy was O(copies x
    // prelude), quadratic in a kernel's registers.
    let mut dead = vec![false; code.len()];
    for (k, inst) in m.functions[kernel as usize].insts.iter().enumerate() {
        if let (Some(Operand::Reg(r)), true) = (inst.operands.first(), inst.op == Opcode::Mov) {
            let r = r.index();
            if b.copies.get(r).is_some_and(|c| c.is_some()) && !b.read_direct[r] {
                code[k].op = Op::Nop;
                dead[k] = true;
            }
        }
    }
    plan.prelude
        .retain(|i| !dead.get(i.inst as usize).copied().unwrap_or(false));
    // every pc a branch, a table or a return can reach
    let mut targets: Vec<u32> = b.funcs.iter().map(|f| f.entry).collect();
    targets.extend(b.tables.iter().flatten().copied());
    for (pc, insn) in code.iter().enumerate() {
        match insn.op {
            Op::Bra(t) => targets.push(t),
            Op::Call(_) => targets.push(pc as u32 + 1),
            _ => {}
        }
    }
    let funcs: Vec<(u32, u32)> = b.funcs.iter().map(|f| (f.ir_index, f.entry)).collect();
    let unfused = crate::disasm::Unfused::of(&code);
    if opts.rewrites {
        crate::rewrite::ifconv::convert(
            &m.functions[kernel as usize],
            facts.effects(),
            &mut code,
            &targets,
        );
        opts.check_deadline()?;
        crate::rewrite::fuse::fuse(m, &funcs, &mut code, &targets, (kernel, &facts));
        crate::rewrite::skips::set_skips(&mut code);
        opts.check_deadline()?;
    }
    let fused = unfused.fused(&code);
    let kf = &m.functions[kernel as usize];
    let unsupported = code
        .iter()
        .filter_map(|i| match i.op {
            Op::Unsupported(m) => Some((i.func, i.inst, m)),
            _ => None,
        })
        .collect();
    let cluster_insts = code.iter().any(|i| {
        matches!(i.op, Op::Async) && crate::ops_async::is_cluster(crate::ops_async::kind(i.aux))
    });
    Ok(Program {
        fused,
        unsupported,
        cluster_insts,
        code,
        prelude: plan.prelude,
        reset_slots: plan.reset_slots,
        reset_preds: plan.reset_preds,
        funcs: b.funcs,
        func_of_ir,
        nslots: b.nslots,
        npreds: b.npreds,
        consts: b.const_list,
        const_preds: b.const_pred_list,
        sreg_slots: b.sreg_list,
        fp_slot: b.fp_slot,
        cc_slot: b.cc_slot,
        tables: b.tables,
        lists: b.lists,
        calls: b.calls,
        barriers: b.barriers,
        messages: b.messages,
        cluster_mem: b.cluster_mem,
        shared_static: b.shared_static,
        shared_vars,
        probes: Vec::new(),
        params: kf.params.iter().map(|p| (p.offset, p.size)).collect(),
        param_size: kf.param_size,
        // (conservatively, any function of the module)
        alloca: m
            .functions
            .iter()
            .any(|f| f.insts.iter().any(|i| i.op == Opcode::Alloca)),
    })
}

/// Per function of `m`: whether it can reach itself through calls (it is in a strongly
/// connected component of the call graph with another function, or calls itself). Kosaraju's
/// two passes with explicit stacks: linear in functions and calls, and no host recursion however
/// long a call chain is (a 30,000-deep chain took seconds when each function was searched
/// from, and overflowed the stack in a recursive walk: issue 23).
fn on_call_cycle(m: &ptx_ir::Module) -> Vec<bool> {
    let n = m.functions.len();
    let callees = |f: usize| m.functions[f].callees.iter().map(|c| c.raw() as usize);
    // pass 1: finishing order of a depth-first walk
    let mut seen = vec![false; n];
    let mut finished = Vec::with_capacity(n);
    for root in 0..n {
        if std::mem::replace(&mut seen[root], true) {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((f, k)) = stack.last_mut() {
            let f = *f;
            match m.functions[f].callees.get(*k).map(|c| c.raw() as usize) {
                Some(c) => {
                    *k += 1;
                    if c < n && !std::mem::replace(&mut seen[c], true) {
                        stack.push((c, 0));
                    }
                }
                None => {
                    finished.push(f);
                    stack.pop();
                }
            }
        }
    }
    // pass 2: components on the reversed graph, in reverse finishing order
    let mut callers = vec![Vec::new(); n];
    for f in 0..n {
        for c in callees(f).filter(|&c| c < n) {
            callers[c].push(f);
        }
    }
    let mut comp = vec![usize::MAX; n];
    let mut size = Vec::new();
    for &root in finished.iter().rev() {
        if comp[root] != usize::MAX {
            continue;
        }
        let id = size.len();
        size.push(0usize);
        comp[root] = id;
        let mut stack = vec![root];
        while let Some(f) = stack.pop() {
            size[id] += 1;
            for &g in &callers[f] {
                if comp[g] == usize::MAX {
                    comp[g] = id;
                    stack.push(g);
                }
            }
        }
    }
    (0..n)
        .map(|f| size[comp[f]] > 1 || callees(f).any(|c| c == f))
        .collect()
}

/// Compiles kernel `k`, with parameters `params` and body `body`, from PTX text (for the tests
/// of the compile-time passes).
#[cfg(test)]
pub(crate) fn test_program(params: &str, body: &str) -> Program {
    let text = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k({params})\n{{\n{body}\n}}\n"
    );
    let parsed = ptx_syntax::parse(&text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let checked = ptx_check::check_module(&parsed.module, &Default::default());
    let m = ptx_ir::lower(&parsed.module, &checked).expect("lowers");
    compile(&m, 0, &GlobalAddrs::default()).expect("compiles")
}

#[cfg(test)]
mod tests {
    use super::on_call_cycle;

    /// Mutual recursion (`a` ↔ `b`), self-recursion (`c`), a function that only calls into a
    /// cycle (`d`), and plain ones (`e`, the kernel), worked out by hand.
    #[test]
    fn call_cycles() {
        let text = "\
.version 8.0\n.target sm_80\n.address_size 64\n\
.func a();\n.func b();\n.func c();\n.func e();\n\
.func a() { call b, (); ret; }\n\
.func b() { call a, (); ret; }\n\
.func c() { call c, (); call e, (); ret; }\n\
.func d() { call a, (); ret; }\n\
.func e() { ret; }\n\
.visible .entry k() { call d, (); call c, (); ret; }\n";
        let parsed = ptx_syntax::parse(text);
        assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
        let checked = ptx_check::check_module(&parsed.module, &Default::default());
        let m = ptx_ir::lower(&parsed.module, &checked).expect("lowers");
        let cyc = on_call_cycle(&m);
        let of = |name: &str| cyc[m.function(name).expect(name).0 as usize];
        assert!(of("a") && of("b"), "mutual recursion");
        assert!(of("c"), "self-recursion");
        assert!(!of("d") && !of("e") && !of("k"), "no cycle through them");
    }
}
