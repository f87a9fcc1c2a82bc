//! The IR verifier: invariants the interpreter relies on.

use crate::{Base, Function, Module, Opcode, Operand};

/// Checks every function of `m`; returns one message per violation (empty: valid).
pub fn verify(m: &Module) -> Vec<String> {
    let mut errs = Vec::new();
    for f in &m.functions {
        verify_function(m, f, &mut errs);
    }
    errs
}

fn verify_function(m: &Module, f: &Function, errs: &mut Vec<String>) {
    let n = f.insts.len() as u32;
    let nregs = f.regs.len() as u32;
    let mut err = |k: usize, msg: String| errs.push(format!("{}: inst {k}: {msg}", f.name));
    for (k, i) in f.insts.iter().enumerate() {
        if let Some(g) = i.guard {
            match f.regs.get(g.reg.index()) {
                Some(r) if r.ty == ptx_isa::ScalarType::Pred => {}
                _ => err(k, format!("guard register {} is not a predicate", g.reg)),
            }
        }
        let mut stack: Vec<&Operand> = i.operands.iter().collect();
        while let Some(o) = stack.pop() {
            match o {
                Operand::Reg(r)
                | Operand::Address(Base::Reg(r), _)
                | Operand::Symbol(Base::Reg(r), _)
                    if r.raw() >= nregs =>
                {
                    err(k, format!("register {r} out of range"))
                }
                Operand::Label(l) if l.raw() >= n => err(k, format!("label {l} out of range")),
                Operand::Targets(t) if t.iter().any(|l| l.raw() >= n) => {
                    err(k, "branch target out of range".into())
                }
                Operand::Address(b, _) | Operand::Symbol(b, _) => match *b {
                    Base::Global(g) if g.index() >= m.globals.len() => {
                        err(k, format!("global {g} out of range"))
                    }
                    Base::Local(l) if l.index() >= f.locals.len() => {
                        err(k, format!("local {l} out of range"))
                    }
                    Base::KernelParam(p) if p as usize >= f.params.len() => {
                        err(k, format!("param {p} out of range"))
                    }
                    Base::Function(x) if x.index() >= m.functions.len() => {
                        err(k, format!("function {x} out of range"))
                    }
                    _ => {}
                },
                Operand::Vector(v) | Operand::List(v) => stack.extend(v.iter()),
                Operand::Pair(a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
                Operand::Not(a) => stack.push(a),
                _ => {}
            }
        }
    }
    if f.defined {
        // control never runs past the last instruction (lowering adds the implicit `ret`)
        let falls = f.insts.last().is_none_or(|i| {
            i.guard.is_some()
                || !matches!(
                    i.op,
                    Opcode::Ret | Opcode::Exit | Opcode::Bra | Opcode::Brx | Opcode::Trap
                )
        });
        if falls {
            err(
                n as usize,
                "control can fall off the end of the body".into(),
            );
        }
        if let Some((name, at)) = f.labels.iter().find(|(_, at)| at.raw() >= n) {
            err(at.index(), format!("label `{name}` marks no instruction"));
        }
        let mut covered = 0;
        for (b, blk) in f.blocks.iter().enumerate() {
            if blk.start != covered || blk.end <= blk.start {
                err(
                    blk.start as usize,
                    format!("block {b} does not tile the body"),
                );
            }
            covered = blk.end;
            if blk.succs.iter().any(|&s| s.index() >= f.blocks.len()) {
                err(
                    blk.start as usize,
                    format!("block {b} has an invalid successor"),
                );
            }
        }
        if covered != n {
            err(n as usize, "blocks do not cover every instruction".into());
        }
        if f.ipdom.len() != f.blocks.len() {
            err(0, "post-dominator table has the wrong length".into());
        }
    }
}
