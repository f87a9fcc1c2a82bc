#!/usr/bin/env python3
"""Operand widths against ptxas: which register types each data operand of ld/st/cvt/atom/shfl/
mov/ALU instructions may have (ISA 9.4.1, "Operand Size Exceeding Instruction-Type Size", and
the relaxed type-checking rules for bit-size types).

Writes tests/check/widths/widths_NN.ptx: one candidate instruction per line, each operand under
test given a register of one of the declared types; and, with ptxas (pip's nvidia-cuda-nvcc),
tests/check/widths/widths_NN.ptxas.txt, ptxas's own output for each file (the lines it rejects).
The `widths` test of ptx-check requires `ptxvm check` to reject exactly the lines ptxas
rejects. Run without --ptxas to only rewrite the PTX (then the verdicts are stale).

    python3 tools/probe-widths.py [--ptxas PATH]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "check", "widths")

# register classes: name prefix -> declared type
REGS = {
    "b16": "%xh", "u16": "%uh", "s16": "%sh", "f16": "%fh",
    "b32": "%xr", "u32": "%ur", "s32": "%sr", "f32": "%fr",
    "b64": "%xd", "u64": "%ud", "s64": "%sd", "f64": "%fd",
}


def reg(t, k=1):
    return f"{REGS[t]}{k}"


INT8 = ["b8", "u8", "s8"]
INT16 = ["b16", "u16", "s16"]
INT32 = ["b32", "u32", "s32"]
INT64 = ["b64", "u64", "s64"]
LDTYPES = INT8 + INT16 + INT32 + INT64 + ["f16", "f32", "f64"]


def candidates():
    """(template with X for the operand under test, description) pairs."""
    out = []
    for t in LDTYPES:
        for sp in ["global", "shared", "const", "local", "global.nc"]:
            if t == "f16" and sp != "global":
                continue
            out.append(f"ld.{sp}.{t} X, [%xd9];")
        out.append(f"ld.{t} X, [%xd9];")
        out.append(f"ldu.global.{t} X, [%xd9];")
        out.append(f"ld.param.{t} X, [pv];")
        out.append(f"ld.global.v2.{t} {{X, X}}, [%xd9];")
        if t not in INT64 + ["f64"]:
            out.append(f"ld.shared.v4.{t} {{X, X, X, X}}, [%xd9];")
        for sp in ["global", "shared", "local", ""]:
            dot = "." if sp else ""
            out.append(f"st{dot}{sp}.{t} [%xd9], X;")
        out.append(f"st.global.v2.{t} [%xd9], {{X, X}};")
    # cvt: destination and source widths
    ints = INT8[1:] + INT16[1:] + INT32[1:] + INT64[1:]
    for dt in ints:
        for st in ["s32", "u16", "s64"]:
            out.append(f"cvt.{dt}.{st} X, {reg(st if st != 'u16' else 'u16')};")
        out.append(f"cvt.{dt}.s32 X, %sr1;")
        out.append(f"cvt.s32.{dt} %sr2, X;")
        out.append(f"cvt.rn.f32.{dt} %fr2, X;")
        out.append(f"cvt.rzi.{dt}.f32 X, %fr1;")
        out.append(f"cvt.rn.f64.{dt} %fd2, X;")
    # .sat between integer types (ptxas refuses it where nothing can saturate)
    for dt in ints:
        for st in ints:
            out.append(f"cvt.sat.{dt}.{st} X, %xd1;")
    for ft in ["f16", "f32", "f64"]:
        out.append(f"cvt.rn.{ft}.s32 X, %sr1;")
        out.append(f"cvt.rzi.s32.{ft} %sr2, X;")
    # atomics and reductions: the returned value and the operand
    for t in ["b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64"]:
        op = "exch" if t[0] == "b" else "add"
        out.append(f"atom.global.{op}.{t} X, [%xd9], {reg(t if t[0] != 'b' else t, 2)};")
        out.append(f"atom.global.{op}.{t} {reg(t, 3)}, [%xd9], X;")
        out.append(f"red.global.{op}.{t} [%xd9], X;")
        out.append(f"atom.shared.{op}.{t} X, [%xd9], {reg(t, 2)};")
    out.append("atom.global.cas.b32 X, [%xd9], %xr1, %xr2;")
    out.append("atom.global.cas.b64 X, [%xd9], %xd1, %xd2;")
    # warp shuffles, votes, reductions
    out.append("shfl.sync.idx.b32 X, %xr1, 0, 31, -1;")
    out.append("shfl.sync.idx.b32 %xr2, X, 0, 31, -1;")
    out.append("shfl.sync.bfly.b32 X|%p1, %xr1, 1, 31, -1;")
    out.append("redux.sync.add.s32 X, %sr1, -1;")
    out.append("redux.sync.min.u32 %ur2, X, -1;")
    out.append("vote.sync.ballot.b32 X, %p1, -1;")
    out.append("match.any.sync.b32 X, %xr1, -1;")
    out.append("match.any.sync.b64 %xr2, X, -1;")
    # mov, arithmetic, logic, comparison, selection
    for t in ["b16", "u16", "s16", "b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64"]:
        out.append(f"mov.{t} X, {reg(t)};")
        out.append(f"mov.{t} {reg(t, 2)}, X;")
        if t[0] != "b":
            out.append(f"add.{t} X, {reg(t)}, {reg(t, 2)};")
            out.append(f"add.{t} {reg(t, 3)}, X, {reg(t, 2)};")
            out.append(f"setp.lt.{t} %p1, X, {reg(t)};")
            out.append(f"min.{t} {reg(t, 3)}, X, {reg(t, 2)};")
        else:
            out.append(f"and.{t} X, {reg(t)}, {reg(t, 2)};")
            out.append(f"and.{t} {reg(t, 3)}, X, {reg(t, 2)};")
            out.append(f"setp.eq.{t} %p1, X, {reg(t)};")
            out.append(f"shl.{t} {reg(t, 3)}, X, 1;")
        out.append(f"selp.{t} X, {reg(t)}, {reg(t, 2)}, %p1;")
        out.append(f"selp.{t} {reg(t, 3)}, X, {reg(t, 2)}, %p1;")
    out.append("prmt.b32 X, %xr1, %xr2, %xr3;")
    out.append("prmt.b32 %xr4, X, %xr2, %xr3;")
    out.append("mul.wide.s32 X, %sr1, %sr2;")
    out.append("mul.wide.u16 X, %uh1, %uh2;")
    out.append("mul.wide.s32 %sd3, X, %sr2;")
    out.append("mul.lo.s32 X, %sr1, %sr2;")
    out.append("mad.lo.s32 X, %sr1, %sr2, %sr3;")
    out.append("bfe.u32 X, %ur1, 0, 8;")
    out.append("bfe.s64 X, %sd1, 0, 8;")
    out.append("popc.b32 X, %xr1;")
    out.append("popc.b64 X, %xd1;")
    out.append("popc.b64 %ur3, X;")
    out.append("clz.b64 X, %xd1;")
    out.append("cnot.b32 X, %xr1;")
    out.append("not.b16 X, %xh1;")
    out.append("fma.rn.f32 X, %fr1, %fr2, %fr3;")
    out.append("fma.rn.f32 %fr4, X, %fr2, %fr3;")
    out.append("add.f16 X, %fh1, %fh2;")
    out.append("add.f16 %fh3, X, %fh2;")
    out.append("abs.f32 X, %fr1;")
    out.append("testp.finite.f32 %p1, X;")
    out.append("copysign.f64 X, %fd1, %fd2;")
    out.append("slct.s32.s32 X, %sr1, %sr2, %sr3;")
    out.append("slct.f32.s32 %fr3, %fr1, %fr2, X;")
    out.append("dp4a.s32.s32 X, %sr1, %sr2, %sr3;")
    out.append("set.lt.u32.s32 X, %sr1, %sr2;")
    return out


def lines():
    body = []
    for tmpl in candidates():
        for t in REGS:
            if "X|%p1" in tmpl:
                body.append(tmpl.replace("X|%p1", reg(t, 5) + "|%p1"))
            else:
                body.append(tmpl.replace("X", reg(t, 5)))
    return body


CHUNK = 800

HEADER = """// Generated by tools/probe-widths.py: one candidate instruction per line; ptxas's verdict
// is in the .ptxas.txt beside this file. Do not edit by hand.
// NOTE: ptxas rejects the lines its .ptxas.txt names (crates/check/tests/widths.rs).
.version 8.0
.target sm_80
.address_size 64

.visible .entry widths(.param .u64 pv)
{
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxas", help="ptxas to ask (default: pip's nvidia-cuda-nvcc)")
    a = ap.parse_args()
    decl = "".join(f"\t.reg .{t} {p}<8>;\n" for t, p in REGS.items())
    decl += "\t.reg .b64 %xd9;\n\t.reg .pred %p<4>;\n"
    ptxas = a.ptxas
    if not ptxas:
        try:
            import nvidia  # noqa: F401

            ptxas = os.path.join(nvidia.__path__[0], "cu13", "bin", "ptxas")
        except ImportError:
            ptxas = None
            print("no ptxas: writing the PTX only", file=sys.stderr)
    for old in os.listdir(OUT):
        if old.startswith("widths_"):
            os.remove(os.path.join(OUT, old))
    body = lines()
    total = 0
    # files of CHUNK candidates: the checker stops after 1000 diagnostics
    for n, k in enumerate(range(0, len(body), CHUNK)):
        name = f"widths_{n:02}.ptx"
        text = HEADER + decl + "".join(f"\t{ln}\n" for ln in body[k : k + CHUNK]) + "\tret;\n}\n"
        path = os.path.join(OUT, name)
        with open(path, "w") as f:
            f.write(text)
        if not ptxas:
            continue
        r = subprocess.run([ptxas, "-arch=sm_80", path, "-o", "/dev/null"], capture_output=True, text=True)
        rel = [ln.replace(path, name) for ln in r.stderr.splitlines() if ", line " in ln]
        with open(os.path.join(OUT, name.replace(".ptx", ".ptxas.txt")), "w") as f:
            f.write("".join(ln + "\n" for ln in rel))
        total += len(rel)
    print(f"{len(body)} candidates, ptxas rejects {total}")


if __name__ == "__main__":
    main()
