//! The bytecode disassembler (`ptxvm ir --bytecode`): a kernel's [`Program`] as it runs.
//!
//! The listing shows the code after every rewrite of [`crate::compile`]: register slots, the
//! prelude that the invariant pass hoisted (run once per warp), guards that if-conversion put
//! on instructions (`ifconv`), superinstructions (`fuse`) and the no-ops the executor steps
//! over. One line per bytecode instruction: its pc, guard, handler, operand fields, skip count
//! and the PTX line it came from. Handlers are bare `fn` pointers, so a handler is named by the
//! PTX instruction it was decoded from; a superinstruction by the instructions it runs
//! (recorded in [`Program::fused`] when `fuse` made it), each absorbed instruction showing as a
//! no-op that names it.
//!
//! Global addresses depend on where the runtime allocates a module's variables, so the
//! disassembler compiles the kernel with symbolic ones: constants that are addresses print as
//! `&name` or `&name+offset`.

use crate::compile::{compile, CompileError, GlobalAddrs};
use crate::program::{BarKind, CallTarget, Insn, Op, Program, NO_PRED};
use std::fmt::Write;

/// A superinstruction: the pc of the fused instruction and the source instructions it runs
/// (function, instruction), in program order; the instructions after the first are no-ops at
/// their own pcs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fused {
    /// The fused instruction's pc.
    pub pc: u32,
    /// The instructions it runs: (IR function, instruction index).
    pub parts: Vec<(u32, u32)>,
}

/// The code before fusion, to tell what `fuse` changed.
pub(crate) struct Unfused(Vec<(Op, u32, u32)>);

/// Whether two operations are the same (variant and handler).
fn same_op(a: Op, b: Op) -> bool {
    match (a, b) {
        (Op::Alu(f), Op::Alu(g)) => std::ptr::fn_addr_eq(f, g),
        (Op::Mem(f), Op::Mem(g)) | (Op::WarpSync(f), Op::WarpSync(g)) => std::ptr::fn_addr_eq(f, g),
        (Op::Nop, Op::Nop)
        | (Op::Async, Op::Async)
        | (Op::Wgmma, Op::Wgmma)
        | (Op::Ret, Op::Ret)
        | (Op::Exit, Op::Exit)
        | (Op::Trap, Op::Trap) => true,
        (Op::Bra(x), Op::Bra(y))
        | (Op::Brx(x), Op::Brx(y))
        | (Op::Call(x), Op::Call(y))
        | (Op::Bar(x), Op::Bar(y))
        | (Op::Unsupported(x), Op::Unsupported(y))
        | (Op::Probe(x), Op::Probe(y)) => x == y,
        _ => false,
    }
}

impl Unfused {
    /// Records `code` before `fuse` runs.
    pub(crate) fn of(code: &[Insn]) -> Unfused {
        Unfused(code.iter().map(|i| (i.op, i.func, i.inst)).collect())
    }

    /// The superinstructions of `code` after `fuse`: an instruction whose handler changed and
    /// the instructions after it, up to the next such, that became no-ops.
    pub(crate) fn fused(&self, code: &[Insn]) -> Vec<Fused> {
        let mut out: Vec<Fused> = Vec::new();
        for (pc, (insn, &(op, func, inst))) in code.iter().zip(&self.0).enumerate() {
            if same_op(op, insn.op) {
                continue;
            }
            let absorbed = matches!(insn.op, Op::Nop);
            match out.last_mut() {
                Some(f) if absorbed && f.parts.first().is_some_and(|p| p.0 == func) => {
                    f.parts.push((func, inst))
                }
                _ if absorbed => {}
                _ => out.push(Fused {
                    pc: pc as u32,
                    parts: vec![(func, inst)],
                }),
            }
        }
        out
    }
}

/// Bit position of the symbolic address of global `g` (see the module docs).
const SYM_SHIFT: u32 = 40;

/// The listing of kernel `kernel` of `m` (IR function index), compiled with symbolic global
/// addresses; `source` is the PTX text the module was lowered from (for the source lines).
pub fn disassemble(m: &ptx_ir::Module, kernel: u32, source: &str) -> Result<String, CompileError> {
    let globals = GlobalAddrs {
        addr: (0..m.globals.len() as u64)
            .map(|g| (g + 1) << SYM_SHIFT)
            .collect(),
    };
    let p = compile(m, kernel, &globals)?;
    Ok(listing(m, &p, source))
}

/// A constant's value, as a symbolic global address where it is one.
fn constant(m: &ptx_ir::Module, v: u64) -> String {
    let g = (v >> SYM_SHIFT) as usize;
    let off = v & ((1 << SYM_SHIFT) - 1);
    match m.globals.get(g.wrapping_sub(1)) {
        Some(gl) if g > 0 && off <= gl.size => match off {
            0 => format!("&{}", gl.name),
            _ => format!("&{}+{off}", gl.name),
        },
        _ if v < 10 => format!("{v}"),
        _ => format!("{v:#x}"),
    }
}

/// Line (1-based) of byte offset `at` of `source`, and the text of `span` on one line.
fn source_of(source: &str, (start, end): (u32, u32)) -> (usize, String) {
    let at = (start as usize).min(source.len());
    let line = source.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    let text = source
        .get(start as usize..end as usize)
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (line, text)
}

fn listing(m: &ptx_ir::Module, p: &Program, source: &str) -> String {
    let mut out = String::new();
    let kernel = &p.funcs[0];
    let _ = writeln!(
        out,
        "kernel {}: {} instructions, {} value slots, {} predicate slots",
        kernel.name,
        p.code.len(),
        p.nslots,
        p.npreds
    );
    let _ = writeln!(
        out,
        "  (d, a, b, c, v: slot numbers, of value or predicate slots by handler; imm, aux: the \
         decoded immediate or offset and modifiers)"
    );
    let _ = writeln!(out, "  s{}: frame pointer", p.fp_slot);
    let _ = writeln!(out, "  s{}: carry flag", p.cc_slot);
    for &(s, v) in &p.consts {
        let _ = writeln!(out, "  s{s}: constant {}", constant(m, v));
    }
    for &(s, v) in &p.const_preds {
        let _ = writeln!(out, "  p{s}: constant {}", v != 0);
    }
    for &(s, init) in &p.sreg_slots {
        let _ = writeln!(out, "  s{s}: {init:?}");
    }
    let hoisted: std::collections::HashSet<(u32, u32)> =
        p.prelude.iter().map(|i| (i.func, i.inst)).collect();
    let mut fused_at = std::collections::HashMap::new();
    let mut absorbed = std::collections::HashMap::new();
    for f in &p.fused {
        fused_at.insert(f.pc, f);
        for &part in &f.parts[1..] {
            absorbed.insert(part, f.pc);
        }
    }
    let name = |func: u32, inst: u32| -> String {
        m.functions
            .get(func as usize)
            .and_then(|f| f.insts.get(inst as usize))
            .map_or_else(|| "?".into(), |i| i.full_name())
    };
    let handler = |pc: Option<u32>, insn: &Insn| -> String {
        let kind = match insn.op {
            Op::Alu(_) => "alu",
            Op::Mem(_) => "mem",
            Op::WarpSync(_) => "warpsync",
            _ => return control(p, insn),
        };
        match pc.and_then(|pc| fused_at.get(&pc)) {
            Some(f) => {
                let parts: Vec<String> = f.parts.iter().map(|&(fu, i)| name(fu, i)).collect();
                format!("{kind} fused {}", parts.join(" + "))
            }
            None => format!("{kind} {}", name(insn.func, insn.inst)),
        }
    };
    // (a fused instruction at `pc` shows the source of the first instruction it runs, which
    // was at `pc`, although it keeps another's position for its faults)
    let line = |pc: String, at: (u32, u32), insn: &Insn, what: String, out: &mut String| {
        let guard = match (insn.guard, insn.neg) {
            (NO_PRED, _) => String::new(),
            (g, false) => format!("@p{g}"),
            (g, true) => format!("@!p{g}"),
        };
        let mut fields = String::new();
        if matches!(insn.op, Op::Alu(_) | Op::Mem(_) | Op::WarpSync(_)) {
            let _ = write!(
                fields,
                " d={} a={} b={} c={}",
                insn.d, insn.a, insn.b, insn.c
            );
            if insn.v != [0; 4] {
                let v = insn.v.map(|x| match x {
                    u32::MAX => "-".to_string(),
                    x => x.to_string(),
                });
                let _ = write!(fields, " v=[{}]", v.join(", "));
            }
            if insn.imm != 0 {
                let imm = match constant(m, insn.imm as u64) {
                    c if c.starts_with('&') => c,
                    _ => insn.imm.to_string(),
                };
                let _ = write!(fields, " imm={imm}");
            }
            if insn.aux != 0 {
                let _ = write!(fields, " aux={:#x}", insn.aux);
            }
        }
        if insn.converted {
            fields.push_str(" ifconv");
        }
        if insn.skip != 0 {
            let _ = write!(fields, " skip={}", insn.skip);
        }
        let src = m
            .functions
            .get(at.0 as usize)
            .and_then(|f| f.insts.get(at.1 as usize))
            .map(|i| source_of(source, (i.span.start, i.span.end)));
        let src = match src {
            Some((l, text)) => format!("; {l}: {text}"),
            None => String::new(),
        };
        let head = format!("{pc:>5} {guard:<6} {what}{fields}");
        let text = format!("{head:<56} {src}");
        out.push_str(text.trim_end());
        out.push('\n');
    };
    if !p.prelude.is_empty() {
        let _ = writeln!(out, "prelude (once per warp):");
        for (k, insn) in p.prelude.iter().enumerate() {
            let at = (insn.func, insn.inst);
            line(format!("P{k}"), at, insn, handler(None, insn), &mut out);
        }
    }
    for (fi, f) in p.funcs.iter().enumerate() {
        let end = p.funcs.get(fi + 1).map_or(p.code.len() as u32, |n| n.entry);
        let _ = writeln!(
            out,
            "{} {} (pc {}..{}, frame {} bytes{}):",
            if fi == 0 { "kernel" } else { "function" },
            f.name,
            f.entry,
            end,
            f.frame_size,
            if f.recursive { ", recursive" } else { "" }
        );
        let labels: std::collections::HashMap<u32, &str> = m
            .functions
            .get(f.ir_index as usize)
            .map(|irf| {
                irf.labels
                    .iter()
                    .map(|(n, i)| (i.raw(), n.as_ref()))
                    .collect()
            })
            .unwrap_or_default();
        for pc in f.entry..end {
            let insn = &p.code[pc as usize];
            if let Some(l) = labels.get(&(pc - f.entry)) {
                let _ = writeln!(out, "{l}:");
            }
            let what = match insn.op {
                Op::Nop => match absorbed.get(&(insn.func, insn.inst)) {
                    Some(at) => format!("nop (fused into {at})"),
                    None if hoisted.contains(&(insn.func, insn.inst)) => "nop (hoisted)".into(),
                    None => "nop".into(),
                },
                _ => handler(Some(pc), insn),
            };
            let at = fused_at
                .get(&pc)
                .map_or((insn.func, insn.inst), |f| f.parts[0]);
            line(pc.to_string(), at, insn, what, &mut out);
        }
    }
    out
}

/// The handler column of an instruction that is not a lane-wise handler.
fn control(p: &Program, insn: &Insn) -> String {
    match insn.op {
        Op::Bra(t) => format!("bra {t}"),
        Op::Brx(k) => format!(
            "brx {:?}",
            p.tables.get(k as usize).map_or(&[][..], |t| &t[..])
        ),
        Op::Call(k) => match p.calls.get(k as usize).map(|c| &c.target) {
            Some(CallTarget::Func(f)) => {
                let f = &p.funcs[*f as usize];
                format!("call {} (pc {})", f.name, f.entry)
            }
            Some(CallTarget::Indirect(s)) => format!("call indirect s{s}"),
            Some(CallTarget::Vprintf) => "call vprintf".into(),
            Some(CallTarget::AssertFail) => "call __assertfail".into(),
            Some(CallTarget::Malloc) => "call malloc".into(),
            Some(CallTarget::Free) => "call free".into(),
            Some(CallTarget::Undefined(n)) => format!("call {n} (undefined)"),
            None => "call ?".into(),
        },
        Op::Ret => "ret".into(),
        Op::Exit => "exit".into(),
        Op::Trap => "trap".into(),
        Op::Async => format!("async {}", crate::ops_async::kind_name(insn.aux)),
        Op::Wgmma => crate::exec::wgmma::kind_name(insn.aux).into(),
        Op::Bar(k) => match p.barriers.get(k as usize) {
            Some(b) => {
                let kind = match b.kind {
                    BarKind::Sync => "bar.sync",
                    BarKind::Arrive => "bar.arrive",
                    BarKind::Red => "bar.red",
                    BarKind::Warp => "bar.warp.sync",
                };
                let id = match b.id_slot {
                    Some(s) => format!("s{s}"),
                    None => b.id.to_string(),
                };
                let count = match (b.count_slot, b.count) {
                    (Some(s), _) => format!(", s{s} threads"),
                    (None, Some(c)) => format!(", {c} threads"),
                    (None, None) => String::new(),
                };
                format!("{kind} {id}{count}")
            }
            None => "bar ?".into(),
        },
        Op::Nop => "nop".into(),
        Op::Probe(k) => format!("probe {k}"),
        Op::Unsupported(k) => format!(
            "unsupported: {}",
            p.messages.get(k as usize).map_or("?", |s| s.as_str())
        ),
        Op::Alu(_) | Op::Mem(_) | Op::WarpSync(_) => String::new(),
    }
}
