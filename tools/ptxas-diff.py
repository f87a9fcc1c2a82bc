#!/usr/bin/env python3
"""ptxas-differential campaign: does `ptxvm check` reject exactly what ptxas rejects?

    tools/ptxas-diff.py [--count N] [--seed S] [--jobs J] [--ptxas PATH] [--ptxvm PATH]
                        [--out DIR] [--corpus DIR]... [--max-lines L] [--fail-on CLASSES]

Takes valid PTX (every tests/**/*.ptx of this repository, plus each --corpus folder, e.g.
../shared/corpus), keeping the files both ptxas and `ptxvm check` accept, and makes N mutants,
each one token changed by an operator chosen with a PRNG seeded with (S, mutant number) -- so a
campaign is the same for any J:

  mod-dup       a modifier written twice          (fma.rn.f32 -> fma.rn.rn.f32)
  mod-drop      a modifier dropped                (fma.rn.f32 -> fma.f32)
  mod-insert    a modifier of another instruction inserted
  mod-replace   a modifier replaced by another one of the files' vocabulary
  type          a type modifier replaced by another type
  imm           an immediate operand replaced by a boundary value (0, -1, 15, 16, 31, 32, 255…)
  reg           a register operand replaced by a declared register of another type
  operand-drop  one operand dropped
  sreg-dest     the destination replaced by a special register (%tid.x, %clock64, …)
  decl          a declaration changed: .align to a non-power of two, an initializer on a
                .local/.shared variable, an array size of 0

ptxas 13.5 (`ptxas -arch=sm_XX FILE -o /dev/null`, the file's own .target, at least sm_75) and
`ptxvm check` judge each mutant. Verdicts: both accept; both reject (the first error on the
same line, or not); ptxvm laxer (ptxas rejects, ptxvm accepts); ptxvm stricter (ptxvm rejects,
ptxas accepts; `stricter-quirk` when the mutant only adds a modifier ptxas ignores, see
QUIRK_MODS). The summary gives the counts per operator and the agreement; every
disagreement is written to OUT/<verdict>/<operator>/<n>.ptx with both tools' output beside it
(default OUT: target/ptxas-diff), replayable with either tool. Exit status 1 when a verdict of
--fail-on (default: stricter) occurred. Python 3 standard library only.
"""
import argparse
import collections
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TYPES = [".b8", ".b16", ".b32", ".b64", ".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64",
         ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64", ".pred", ".b128", ".tf32"]
IMMS = ["0", "1", "-1", "2", "3", "7", "8", "15", "16", "17", "31", "32", "33", "63", "64", "65", "255", "256",
        "1024", "0x7fffffff", "0x80000000", "0xffffffff", "4294967296", "0x7fffffffffffffff", "0f3F800000",
        "0d3FF0000000000000", "-2147483648"]
SREGS = ["%tid.x", "%ntid.y", "%ctaid.x", "%laneid", "%warpid", "%clock", "%clock64", "%smid", "%globaltimer",
         "%lanemask_lt", "%nctaid.z"]

# Modifiers ptxas 13.5 accepts on instructions that have no such modifier, ignoring them
# (`and.b32.rank` assembles to the same LOP3 as `and.b32`): the field names of
# tensormap.replace, testp's classes and the element formats of the bulk/ldmatrix copies.
# A mutant ptxvm rejects only because it adds one of these is the verdict `stricter-quirk`,
# listed apart (docs/ptxas-gates.md), not `stricter`.
QUIRK_MODS = {".box_dim", ".element_stride", ".elemtype", ".fill_mode", ".global_address", ".global_dim",
              ".global_stride", ".interleave_layout", ".rank", ".swizzle_atomicity", ".swizzle_mode", ".finite",
              ".infinite", ".normal", ".notanumber", ".number", ".subnormal", ".b4x16_p64", ".b6x16_p32",
              ".b8x16"}

# an instruction line: optional label, optional guard, opcode with modifiers, operands
INSN = re.compile(r"^(\s*(?:[A-Za-z_$][\w$]*:\s*)?(?:@!?%?\w+\s+)?)([a-z][a-z0-9_]*)((?:\.[\w:]+)*)(\s+[^;]*)?;(.*)$")
DIRECTIVE_OPS = {"reg", "local", "shared", "global", "const", "param", "version", "target", "address_size",
                 "entry", "func", "visible", "extern", "weak", "pragma", "loc", "file", "section", "maxntid",
                 "reqntid", "minnctapersm", "maxnreg", "align"}


def split_operands(text):
    """Operands at the top level (commas inside braces, brackets or parentheses stay)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


class Source:
    """One valid PTX file: its lines, the instruction lines, its target and registers."""

    def __init__(self, path, text):
        self.path = path
        self.lines = text.split("\n")
        self.insns = []  # (line index, match)
        self.decls = []  # line indices of variable declarations
        self.regs = collections.defaultdict(list)  # type -> register names
        self.target = "sm_80"
        for i, line in enumerate(self.lines):
            s = line.strip()
            if s.startswith(".target"):
                m = re.search(r"sm_(\d+)([af]?)", s)
                if m:
                    self.target = m.group(0)
            if re.match(r"\s*\.reg\s", line):
                m = re.match(r"\s*\.reg\s+(\.\w+)\s+(%[\w$]+)(?:<(\d+)>)?", line)
                if m:
                    ty, name, n = m.groups()
                    if n:
                        self.regs[ty] += [f"{name}{k}" for k in range(min(int(n), 4))]
                    else:
                        self.regs[ty].append(name)
                continue
            if re.match(r"\s*(\.(visible|extern|weak)\s+)?\.(local|shared|global|const)\s", line):
                self.decls.append(i)
                continue
            m = INSN.match(line)
            if m and m.group(2) not in DIRECTIVE_OPS and not s.startswith("//"):
                self.insns.append((i, m))

    def arch(self):
        m = re.match(r"sm_(\d+)([af]?)", self.target)
        return self.target if m and int(m.group(1)) >= 75 else "sm_75"


def mutate(src, rng, op, vocab):
    """One mutant of `src` by operator `op`, or None when the operator has nothing to change."""
    lines = list(src.lines)
    if op == "decl":
        if not src.decls:
            return None
        i = rng.choice(src.decls)
        line = lines[i]
        choice = rng.randrange(3)
        if choice == 0 and ".align" in line:
            lines[i] = re.sub(r"\.align\s+\d+", f".align {rng.choice([3, 6, 12, 0])}", line, count=1)
        elif choice == 1 and re.search(r"\.(local|shared)\s", line) and "=" not in line and "[" in line:
            lines[i] = re.sub(r";\s*$", " = {0};", line.rstrip(), count=1)
        elif "[" in line:
            lines[i] = re.sub(r"\[\d+\]", "[0]", line, count=1)
        else:
            return None
        return "\n".join(lines) if lines[i] != line else None
    if not src.insns:
        return None
    i, m = rng.choice(src.insns)
    prefix, opcode, mods, operands, rest = m.group(1), m.group(2), m.group(3), m.group(4) or "", m.group(5)
    modl = re.findall(r"\.[\w:]+", mods)
    ops = split_operands(operands)
    if op == "mod-dup":
        if not modl:
            return None
        k = rng.randrange(len(modl))
        modl.insert(k, modl[k])
    elif op == "mod-drop":
        if not modl:
            return None
        del modl[rng.randrange(len(modl))]
    elif op == "mod-insert":
        modl.insert(rng.randrange(len(modl) + 1), rng.choice(vocab))
    elif op == "mod-replace":
        if not modl:
            return None
        modl[rng.randrange(len(modl))] = rng.choice(vocab)
    elif op == "type":
        at = [k for k, x in enumerate(modl) if x in TYPES]
        if not at:
            return None
        k = rng.choice(at)
        modl[k] = rng.choice([t for t in TYPES if t != modl[k]])
    elif op == "imm":
        at = [k for k, x in enumerate(ops) if re.fullmatch(r"\s*-?(0[xXfFdD][0-9a-fA-F]+|\d+)\s*", x)]
        if not at:
            return None
        k = rng.choice(at)
        ops[k] = " " + rng.choice([v for v in IMMS if v != ops[k].strip()])
    elif op == "reg":
        at = [k for k, x in enumerate(ops) if re.fullmatch(r"\s*%[\w$]+\s*", x) and not x.strip().startswith(
            ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%clock"))]
        pool = [r for ty, rs in src.regs.items() for r in rs]
        if not at or len(pool) < 2:
            return None
        k = rng.choice(at)
        ty_of = {r: ty for ty, rs in src.regs.items() for r in rs}
        mine = ty_of.get(ops[k].strip())
        others = [r for r in pool if ty_of[r] != mine]
        if not others:
            return None
        ops[k] = " " + rng.choice(others)
    elif op == "operand-drop":
        if len(ops) < 1:
            return None
        del ops[rng.randrange(len(ops))]
    elif op == "sreg-dest":
        if not ops or not re.fullmatch(r"\s*%[\w$]+\s*", ops[0]):
            return None
        ops[0] = " " + rng.choice(SREGS)
    else:
        raise ValueError(op)
    new_operands = ",".join(ops)
    if new_operands and not new_operands.startswith((" ", "\t")):
        new_operands = " " + new_operands
    lines[i] = f"{prefix}{opcode}{''.join(modl)}{new_operands};{rest}"
    if lines[i] == src.lines[i]:
        return None
    return "\n".join(lines)


OPERATORS = ["mod-dup", "mod-drop", "mod-insert", "mod-replace", "type", "imm", "reg", "operand-drop",
             "sreg-dest", "decl"]


def added_mods(old_lines, text):
    """The modifiers the one changed line of a mutant has that the original line lacks."""

    def mods(line):
        m = INSN.match(line)
        return set(re.findall(r"\.[\w:]+", m.group(3))) if m else set()

    for a, b in zip(old_lines, text.split("\n")):
        if a != b:
            return mods(b) - mods(a)
    return set()


def judge_ptxas(ptxas, path, arch):
    r = subprocess.run([ptxas, f"-arch={arch}", path, "-o", "/dev/null"], capture_output=True, text=True,
                       timeout=120)
    out = r.stdout + r.stderr
    m = re.search(r", line (\d+); error", out)
    return r.returncode == 0, int(m.group(1)) if m else None, out


def judge_ptxvm(ptxvm, path):
    r = subprocess.run([ptxvm, "--color", "never", "check", path], capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    line = None
    # the first error's location: `error[E…]: …` then `┌─ FILE:LINE:COL`
    at = out.find("error[")
    if at >= 0:
        m = re.search(r":(\d+):\d+", out[at:])
        line = int(m.group(1)) if m else None
    return r.returncode == 0, line, out


def sources(dirs, max_lines):
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith(".ptx"):
                    continue
                p = os.path.join(root, f)
                try:
                    text = open(p, encoding="utf-8").read()
                except (UnicodeDecodeError, OSError):
                    continue
                if text.count("\n") <= max_lines and ".entry" in text:
                    yield p, text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--ptxas", default=os.environ.get("PTXAS", "ptxas"))
    ap.add_argument("--ptxvm", default=os.path.join(ROOT, "target/release/ptxvm"))
    ap.add_argument("--out", default=os.path.join(ROOT, "target/ptxas-diff"))
    ap.add_argument("--corpus", action="append", default=[])
    ap.add_argument("--max-lines", type=int, default=400)
    ap.add_argument("--fail-on", default="stricter", help="comma-separated verdicts that fail the run")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ptxas-diff-")

    # valid sources: both tools accept them
    candidates = list(sources([os.path.join(ROOT, "tests")] + args.corpus, args.max_lines))

    def valid(item):
        p, text = item
        s = Source(p, text)
        if not s.insns:
            return None
        ok_a, _, _ = judge_ptxas(args.ptxas, p, s.arch())
        ok_v, _, _ = judge_ptxvm(args.ptxvm, p)
        return s if ok_a and ok_v else None

    with ThreadPoolExecutor(args.jobs) as pool:
        srcs = [s for s in pool.map(valid, candidates) if s]
    srcs.sort(key=lambda s: s.path)
    if not srcs:
        sys.exit("no source both ptxas and ptxvm accept")
    vocab = sorted({m for s in srcs for _, mm in s.insns for m in re.findall(r"\.[\w:]+", mm.group(3))})

    def one(n):
        rng = random.Random(f"{args.seed}:{n}")
        for _ in range(20):
            src = rng.choice(srcs)
            op = rng.choice(OPERATORS)
            text = mutate(src, rng, op, vocab)
            if text is not None:
                break
        else:
            return None
        path = os.path.join(tmp, f"m{n}.ptx")
        with open(path, "w") as f:
            f.write(text)
        ok_a, line_a, out_a = judge_ptxas(args.ptxas, path, src.arch())
        ok_v, line_v, out_v = judge_ptxvm(args.ptxvm, path)
        if ok_a and ok_v:
            verdict = "accept"
        elif not ok_a and not ok_v:
            verdict = "reject-same-line" if line_a is None or line_a == line_v else "reject-other-line"
        elif ok_v:
            verdict = "laxer"
        elif added_mods(src.lines, text) & QUIRK_MODS:
            verdict = "stricter-quirk"
        else:
            verdict = "stricter"
        if verdict in ("laxer", "stricter", "stricter-quirk", "reject-other-line"):
            d = os.path.join(args.out, verdict, op)
            os.makedirs(d, exist_ok=True)
            base = os.path.join(d, f"{n}")
            with open(base + ".ptx", "w") as f:
                f.write(f"// from {os.path.relpath(src.path, ROOT)}; ptxas -arch={src.arch()}\n" + text)
            with open(base + ".ptxas.txt", "w") as f:
                f.write(out_a)
            with open(base + ".ptxvm.txt", "w") as f:
                f.write(out_v)
        os.remove(path)
        return op, verdict

    with ThreadPoolExecutor(args.jobs) as pool:
        results = [r for r in pool.map(one, range(args.count)) if r]

    verdicts = ["accept", "reject-same-line", "reject-other-line", "laxer", "stricter", "stricter-quirk"]
    table = collections.defaultdict(collections.Counter)
    for op, v in results:
        table[op][v] += 1
        table["all"][v] += 1
    print(f"ptxas-diff: seed {args.seed}, {len(results)} mutants of {len(srcs)} valid files "
          f"({len(vocab)} modifiers in the vocabulary); disagreements in {args.out}")
    print(f"{'operator':<14}" + "".join(f"{v:>19}" for v in verdicts) + f"{'agree':>9}")
    for op in OPERATORS + ["all"]:
        c = table[op]
        total = sum(c.values())
        if not total:
            continue
        agree = c["accept"] + c["reject-same-line"] + c["reject-other-line"]
        # a quirk mutant: ptxvm refuses a modifier ptxas ignores (counted as disagreement)
        print(f"{op:<14}" + "".join(f"{c[v]:>19}" for v in verdicts) + f"{100 * agree / total:>8.1f}%")
    rejects = table["all"]["reject-same-line"] + table["all"]["reject-other-line"]
    if rejects:
        print(f"first error on ptxas's line: {100 * table['all']['reject-same-line'] / rejects:.1f}% of "
              f"{rejects} common rejections")
    fail = {v.strip() for v in args.fail_on.split(",") if v.strip()}
    bad = sum(table["all"][v] for v in fail)
    if bad:
        print(f"FAILED: {bad} mutants with a verdict in {sorted(fail)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
