//! The IR's text form (`ptxvm ir FILE`).

use crate::{Base, Function, FunctionKind, Imm, Module, Operand};
use std::fmt::Write;

/// Prints the whole module.
pub fn print(m: &Module) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "module address_size={}", m.address_size);
    for (i, g) in m.globals.iter().enumerate() {
        let _ = writeln!(
            s,
            "global g{i} {}{} {} size={} align={}{}{}",
            g.space.suffix(),
            if g.external { " extern" } else { "" },
            g.name,
            g.size,
            g.align,
            if g.init.is_empty() { "" } else { " init" },
            if g.relocs.is_empty() {
                String::new()
            } else {
                format!(" relocs={}", g.relocs.len())
            },
        );
    }
    for (i, f) in m.functions.iter().enumerate() {
        s.push('\n');
        print_function(m, i, f, &mut s);
    }
    s
}

fn print_function(m: &Module, idx: usize, f: &Function, s: &mut String) {
    let kind = match f.kind {
        FunctionKind::Entry => ".entry",
        FunctionKind::Func => ".func",
    };
    let _ = writeln!(
        s,
        "{kind} f{idx} {}{}",
        f.name,
        if f.defined { "" } else { " (declaration)" }
    );
    for p in &f.params {
        let _ = writeln!(
            s,
            "  param {} {}{} size={} align={} offset={}",
            p.name,
            p.type_name,
            if p.array { "[]" } else { "" },
            p.size,
            p.align,
            p.offset
        );
    }
    for p in &f.returns {
        let _ = writeln!(s, "  return {} {} size={}", p.name, p.type_name, p.size);
    }
    if !f.defined {
        return;
    }
    let _ = writeln!(s, "  regs {}", f.regs.len());
    for (i, r) in f.regs.iter().enumerate() {
        let _ = writeln!(s, "    r{i} {} {}", r.ty.suffix(), r.name);
    }
    for (i, l) in f.locals.iter().enumerate() {
        let _ = writeln!(
            s,
            "  local l{i} {} {} size={} align={} offset={}",
            l.space.suffix(),
            l.name,
            l.size,
            l.align,
            l.offset
        );
    }
    let _ = writeln!(s, "  frame size={} align={}", f.frame_size, f.frame_align);
    for (b, blk) in f.blocks.iter().enumerate() {
        let succs: Vec<String> = blk.succs.iter().map(|x| format!("bb{x}")).collect();
        let ipdom = match f.ipdom.get(b).copied().flatten() {
            Some(p) => format!("bb{p}"),
            None => "exit".into(),
        };
        let _ = writeln!(s, "  bb{b}: succs [{}] ipdom {ipdom}", succs.join(", "));
        for k in blk.start..blk.end {
            let i = &f.insts[k as usize];
            let mut line = format!("    {k:>4}: ");
            if let Some(g) = i.guard {
                let _ = write!(line, "@{}r{} ", if g.negated { "!" } else { "" }, g.reg);
            }
            line.push_str(&i.full_name());
            let ops: Vec<String> = i.operands.iter().map(|o| operand(m, f, o)).collect();
            if !ops.is_empty() {
                line.push(' ');
                line.push_str(&ops.join(", "));
            }
            if let Some(src) = i.src {
                let file = m.file(src.file as u64).unwrap_or("?");
                let _ = write!(line, "    // {file}:{}:{}", src.line, src.col);
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
}

fn base(m: &Module, f: &Function, b: &Base) -> String {
    match *b {
        Base::Reg(r) => format!("r{r}"),
        Base::Global(g) => format!(
            "g{g}:{}",
            m.globals
                .get(g.index())
                .map(|x| x.name.as_str())
                .unwrap_or("?")
        ),
        Base::Local(l) => format!(
            "l{l}:{}",
            f.locals
                .get(l.index())
                .map(|x| x.name.as_str())
                .unwrap_or("?")
        ),
        Base::KernelParam(p) => format!(
            "param{p}:{}",
            f.params
                .get(p as usize)
                .map(|x| x.name.as_str())
                .unwrap_or("?")
        ),
        Base::Function(x) => format!(
            "f{x}:{}",
            m.functions
                .get(x.index())
                .map(|x| x.name.as_str())
                .unwrap_or("?")
        ),
        Base::Absolute => "abs".into(),
    }
}

fn operand(m: &Module, f: &Function, o: &Operand) -> String {
    let off = |k: i64| {
        if k == 0 {
            String::new()
        } else {
            format!("{k:+}")
        }
    };
    match o {
        Operand::Reg(r) => format!("r{r}"),
        Operand::Imm(Imm::Int(v)) => format!("{}", *v as i64),
        Operand::Imm(Imm::F64(x)) => format!("0d{:016X}", x.to_bits()),
        Operand::Imm(Imm::F32(b)) => format!("0f{b:08X}"),
        Operand::Special(sr) => match sr.comp {
            Some(c) => format!("{}.{}", sr.name, ["x", "y", "z", "w"][c as usize & 3]),
            None => sr.name.to_string(),
        },
        Operand::Symbol(b, k) => format!("&{}{}", base(m, f, b), off(*k)),
        Operand::Address(b, k) => format!("[{}{}]", base(m, f, b), off(*k)),
        Operand::Label(l) => format!("@{l}"),
        Operand::Targets(t) => {
            let v: Vec<String> = t.iter().map(|l| format!("@{l}")).collect();
            format!("targets[{}]", v.join(", "))
        }
        Operand::Prototype(p) => format!("proto {p}"),
        Operand::Vector(v) => {
            let v: Vec<String> = v.iter().map(|x| operand(m, f, x)).collect();
            format!("{{{}}}", v.join(", "))
        }
        Operand::List(v) => {
            let v: Vec<String> = v.iter().map(|x| operand(m, f, x)).collect();
            format!("({})", v.join(", "))
        }
        Operand::Pair(a, b) => format!("{}|{}", operand(m, f, a), operand(m, f, b)),
        Operand::Not(x) => format!("!{}", operand(m, f, x)),
        Operand::Sink => "_".into(),
    }
}
