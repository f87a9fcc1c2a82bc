#!/usr/bin/env python3
"""Probe ptxas for the PTX-version and target gates of every instruction form and special register.

Usage:
    python3 tools/probe-gates.py [--ptxas PATH] [--jobs N] [--only NAME,...] [--spec PATH]
                                 [--tsv PATH] [--md PATH] [--log DIR]
    python3 tools/probe-gates.py --md-only [--check]   # the markdown from the committed TSV

Writes `crates/isa/data/ptxas-gates.tsv` (one row per probed instance: the least `.version` and the
least `.target` at which ptxas accepts it, beside what the ISA text says) and `docs/ptxas-gates.md`
(every disagreement between ptxas and the text). `tools/gen-isa.py` reads the TSV, so neither the
build nor the tests need ptxas. Needs ptxas (pip `nvidia-cuda-nvcc`); plain Python 3 otherwise.

How instances are made (each one is a single instruction inside its own `.entry`):
  * from the table's forms: the opcode path, the first value of every required slot and no
    optional slot (the form's *base* instance), then one *variant* per value of every slot (that
    value substituted, or that optional modifier added), so modifier-level gates are probed too;
    operands are named after the form's operands (`[a]` stays an address, `d|p` two destinations,
    `{!}c` a plain `c`);
  * from the ISA's examples of the section: every instruction statement, identifiers renamed where
    the ISA spells them with a hyphen (`cache-policy`), labels defined, and every identifier that
    the example does not declare declared as a register;
  * special registers: `mov` of the register (or of its `.x` component) into a register.
  Registers get untyped `.bN` types whose width comes from the instruction's own type modifiers;
  since PTX has no single rule for which operand has which width, a few typings are tried
  (all the last type's width; the destination the first type's width; a predicate destination;
  a double-width destination; 32-bit shift/position operands; a predicate last operand; all
  32-bit; all 64-bit) and the first one that ptxas accepts on some probing configuration is kept.
  Variants reuse the typing of their base. Forms with operands the probe cannot spell (parameter
  lists of `call`, texture/surface references, ...) and instances that no configuration accepts are
  listed at the end of docs/ptxas-gates.md.

How gates are found: rather than a binary search per instance (which assumes monotone gates;
ptxas's are not: `shfl` without `.sync` is accepted up to sm_62 only), every instance is assembled
at every target ptxas knows at the newest `.version` (`.target sm_XX` with `-arch=compute_XX`, or
`compute_75` below sm_75, so only the front end runs), and then at every `.version` from the one
that introduced its least target up to the newest, with its least target. All instances of one
configuration go into one file, one `.entry` each; ptxas reports errors by line, so one run gives
the answer for all of them (an instance that makes ptxas give up, a syntax error, is dropped and
the rest of the file assembled again). Runs go through a pool of `--jobs` processes (default 2).
The least target is the first accepting one in the order sm_10 < ... < sm_121, then the `f`/`a`
variants by number (`sm_100f` before `sm_100a`). A least version that equals the version which
introduced the least target only bounds the gate from above (marked `<=`); a disagreement with
the text is reported only where ptxas's answer is exact.
"""

import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TSV = os.path.join(ROOT, "crates", "isa", "data", "ptxas-gates.tsv")
DEFAULT_MD = os.path.join(ROOT, "docs", "ptxas-gates.md")


def load_gen_isa():
    spec = importlib.util.spec_from_file_location("gen_isa", os.path.join(ROOT, "tools", "gen-isa.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


G = load_gen_isa()

# ---------------------------------------------------------------------------------------------
# Versions and targets
# ---------------------------------------------------------------------------------------------

CANDIDATE_VERSIONS = ["%d.%d" % (a, b) for a in range(1, 10) for b in range(10)]
BASE_TARGETS = [10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80,
                86, 87, 88, 89, 90, 100, 101, 103, 107, 110, 120, 121]
SPECIFIC = [90, 100, 101, 103, 107, 110, 120, 121]


def vkey(v):
    a, b = v.split(".")
    return (int(a), int(b))


def tkey(t):
    """Order: every base target by number, then the f/a variants by number, f before a."""
    m = re.match(r"sm_(\d+)([af]?)$", t)
    n, suf = int(m.group(1)), m.group(2)
    return (0 if not suf else 1, n, {"": 0, "f": 1, "a": 2}[suf])


def arch_of(t):
    m = re.match(r"sm_(\d+)([af]?)$", t)
    n, suf = int(m.group(1)), m.group(2)
    if n < 75:
        return "compute_75"
    return "compute_%d%s" % (n, suf)


class Ptxas:
    def __init__(self, path, jobs, logdir):
        self.path = path
        self.jobs = jobs
        self.logdir = logdir
        self.runs = 0
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)

    def run(self, text, arch):
        """Assembles `text`; returns (fatal?, [(line, message)])."""
        self.runs += 1
        fd, path = tempfile.mkstemp(suffix=".ptx", dir=self.logdir)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            p = subprocess.run([self.path, "-arch=" + arch, path, "-o", os.devnull],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
            out = p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            out = "ptxas fatal : timeout"
        finally:
            os.unlink(path)
        errs, fatal_line = [], None
        for line in out.splitlines():
            m = re.match(r"ptxas \S+, line (\d+); (error|fatal)\s*: (.*)$", line)
            if m:
                errs.append((int(m.group(1)), m.group(3).strip()))
                if m.group(2) == "fatal":
                    fatal_line = int(m.group(1))
            elif "fatal" in line and "aborted due to errors" not in line:
                fatal_line = fatal_line or -1
                errs.append((-1, line.strip()))
        return fatal_line, errs

    def map(self, fn, items):
        return list(self.pool.map(fn, items))


def header(version, target):
    h = ".version %s\n.target %s\n" % (version, target)
    if vkey(version) >= (2, 3):
        h += ".address_size 64\n"
    return h


def discover(ptxas):
    """The versions ptxas knows, its targets, and the version that introduced each target."""
    empty = "\n.visible .entry k()\n{\nret;\n}\n"

    def ver_ok(v):
        f, errs = ptxas.run(".version %s\n.target sm_50\n" % v + empty, "compute_75")
        return v, not any("Unsupported .version" in m for _, m in errs)

    versions = [v for v, ok in ptxas.map(ver_ok, CANDIDATE_VERSIONS) if ok]
    newest = versions[-1]
    cands = ["sm_%d" % n for n in BASE_TARGETS] + [
        "sm_%d%s" % (n, s) for n in SPECIFIC for s in ("f", "a") if (n, s) != (90, "f")
    ]

    def floor(t):
        f, errs = ptxas.run(header(newest, t) + empty, arch_of(t))
        if errs:
            return t, None
        lo = None
        for v in versions:
            f, errs = ptxas.run(header(v, t) + empty, arch_of(t))
            if not errs:
                lo = v
                break
        return t, lo

    floors = dict((t, lo) for t, lo in ptxas.map(floor, cands) if lo)
    targets = sorted(floors, key=tkey)
    return versions, targets, floors


# ---------------------------------------------------------------------------------------------
# Instances
# ---------------------------------------------------------------------------------------------

TYPE_BITS = {}
for _n in (8, 16, 32, 64, 128):
    for _p in "usb":
        TYPE_BITS["." + _p + str(_n)] = _n
TYPE_BITS.update({
    ".f16": 16, ".bf16": 16, ".f32": 32, ".f64": 64, ".tf32": 32, ".f16x2": 32, ".bf16x2": 32,
    ".u16x2": 32, ".s16x2": 32, ".b16x2": 32, ".e4m3": 8, ".e5m2": 8, ".e4m3x2": 16, ".e5m2x2": 16,
    ".e2m1x2": 8, ".e2m3x2": 16, ".e3m2x2": 16, ".ue8m0x2": 16, ".e4m3x4": 32, ".e5m2x4": 32,
    ".e2m1x4": 16, ".pred": 1, ".f8x4": 32, ".s8x4": 32, ".u8x4": 32,
})

# The typings tried for the operands of an instance; see the module doc.
HYPOTHESES = ["same", "dfirst", "dlast_rest_first", "pred_dest", "wide_dest", "pos32",
              "pred_last", "pred_dest_pred_last", "all32", "all64", "pred_ends_32",
              "dfirst_pred_last", "first_except_last", "second_pred", "d32", "pred_dest_last32"]

SREG_VECTOR = {"tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid",
               "cluster_nctaid"}

IDENT_RE = re.compile(r"%?[A-Za-z_$][\w$]*")
NUM_RE = re.compile(r"^(0[xXbB][0-9a-fA-F]+U?|0[fFdD][0-9a-fA-F]+|\d+(\.\d*)?([eE][-+]?\d+)?U?)$")


class Instance:
    def __init__(self, key, entry_idx, form_idx, source, text, decls=None, labels=None,
                 sreg=None):
        self.key = key  # the entry's summary key
        self.entry_idx = entry_idx
        self.form_idx = form_idx  # None for examples and special registers
        self.source = source  # base | variant | example | sreg
        self.text = text  # the instruction, without `;`
        self.decls = decls or []  # declarations that the example itself writes
        self.labels = labels or []
        self.sreg = sreg
        self.hyp = None  # the chosen typing
        self.base = None  # for a variant: its base instance
        self.kernel = None  # the kernel body text
        self.accepted = {}  # (version, target) -> bool
        self.errors = {}  # (version, target) -> first message
        self.min_target = None
        self.min_version = None
        self.bounded = False
        self.targets_ok = []

    def mods(self):
        head = split_instr(self.text)[0]
        return head_mods(head)


def split_instr(text):
    t = text.strip()
    guard = ""
    if t.startswith("@"):
        guard, t = t.split(None, 1)
    parts = t.split(None, 1)
    head = parts[0]
    rest = parts[1] if len(parts) > 1 else ""
    return head, rest, guard


def head_mods(head):
    """`ld.global.v4.u32` -> ['.global', '.v4', '.u32'] (`::` sub-qualifiers kept)."""
    parts = re.findall(r"\.[^.]+", head[head.find("."):] if "." in head else "")
    return parts


def type_sizes(mods):
    out = []
    for m in mods:
        if m in TYPE_BITS:
            out.append(TYPE_BITS[m])
    return out


def operand_groups(rest):
    """The operands of an instruction: each a list of (identifier, role) with role `addr0`,
    `addr`, `pred`, or `value` (a `d|p` pair gives its second as `pred2`)."""
    ops = []
    for part in G.split_top(rest):
        p = part.strip()
        if not p:
            continue
        idents = []
        if p.startswith("["):
            inner = p.strip("[]")
            for k, sub in enumerate(G.split_top(inner)):
                for j, m in enumerate(IDENT_RE.finditer(sub)):
                    idents.append((m.group(0), "addr0" if k == 0 and j == 0 else "addr"))
        elif "|" in p:
            a, b = p.split("|", 1)
            for m in IDENT_RE.finditer(a):
                idents.append((m.group(0), "value"))
            for m in IDENT_RE.finditer(b):
                idents.append((m.group(0), "pred2"))
        else:
            q = p.lstrip("!-")
            for m in IDENT_RE.finditer(q):
                tok = m.group(0)
                # `.x` components of special registers and `r.b0` selectors are not identifiers
                if m.start() > 0 and q[m.start() - 1] == ".":
                    continue
                idents.append((tok, "value"))
        ops.append(idents)
    return ops


def reg_type(bits):
    if bits == 1:
        return ".pred"
    return ".b%d" % bits


def typing(hyp, n_ops, i, role, sizes):
    s_first = sizes[0] if sizes else 32
    s_last = sizes[-1] if sizes else 32
    if role == "addr0":
        return ".b64"
    if role == "addr":
        return ".b32"
    if role == "pred2":
        return ".pred"
    last = i == n_ops - 1
    if hyp == "same":
        b = s_last
    elif hyp == "dfirst":
        b = s_first if i == 0 else s_last
    elif hyp == "dlast_rest_first":
        b = s_last if i == 0 else s_first
    elif hyp == "pred_dest":
        b = 1 if i == 0 else s_last
    elif hyp == "wide_dest":
        b = min(2 * s_last, 128) if i == 0 else s_last
    elif hyp == "pos32":
        b = s_last if i <= 1 else 32
    elif hyp == "pred_last":
        b = 1 if last and i > 0 else s_last
    elif hyp == "pred_dest_pred_last":
        b = 1 if i == 0 or (last and i > 0) else s_last
    elif hyp == "all32":
        b = 32
    elif hyp == "pred_ends_32":
        b = 1 if i == 0 or last else 32
    elif hyp == "dfirst_pred_last":
        b = s_first if i == 0 else (1 if last else s_last)
    elif hyp == "first_except_last":
        b = s_last if last and i > 0 else s_first
    elif hyp == "second_pred":
        b = 1 if i == 1 else (32 if i > 1 else s_last)
    elif hyp == "d32":
        b = 32 if i == 0 else s_last
    elif hyp == "pred_dest_last32":
        b = 1 if i == 0 else (32 if last else s_last)
    else:
        b = 64
    if b == 1 and sizes == [1]:
        return ".pred"
    if sizes and sizes[-1] == 1 and hyp in ("same", "dfirst", "all32") and role == "value":
        b = 1
    return reg_type(b)


def declared_names(decls):
    names = set()
    for d in decls:
        if d.startswith(MODULE):
            d = d[len(MODULE):]
        body = re.sub(r"^\s*(\.\w+\s+)+", "", d.rstrip(";"))
        for part in body.split(","):
            m = re.match(r"\s*(%?[A-Za-z_$][\w$]*)(<(\d+)>)?", part)
            if m:
                if m.group(3):
                    names |= {"%s%d" % (m.group(1), i) for i in range(int(m.group(3)))}
                else:
                    names.add(m.group(1))
    return names


SREG_NAMES = set()


def kernel_body(inst, hyp):
    """The declarations and the statement of `inst` under typing `hyp` (None if impossible)."""
    head, rest, guard = split_instr(inst.text)
    mods = head_mods(head)
    sizes = type_sizes(mods)
    have = declared_names(inst.decls)
    decl = collections.OrderedDict()
    ops = operand_groups(rest)
    for i, group in enumerate(ops):
        for name, role in group:
            if name in have or name in decl or name in inst.labels or name == "_":
                continue
            if name.startswith("%") and name[1:] in SREG_NAMES:
                continue
            if NUM_RE.match(name):
                continue
            decl[name] = typing(hyp, len(ops), i, role, sizes)
    if guard:
        g = guard.lstrip("@!")
        if g not in have:
            decl[g] = ".pred"
    lines = list(inst.decls)
    for name, ty in decl.items():
        lines.append(".reg %s %s;" % (ty, name))
    for lab in inst.labels:
        lines.append("%s:" % lab)
    lines.append("%s;" % inst.text)
    return lines


# Operands the forms name that must be immediates or symbols, and what the probe writes for them.
IMMEDIATES = {"N": "0", "immLut": "0xff", "imm-reg-count": "240", "cp-size": "16", "size": "128"}
SYMBOLS = {"var": "svar_K_", "avar": "svar_K_", "sh": "svar_K_", "var+imm": "svar_K_+4",
           "avar+imm": "svar_K_+4", "var + imm": "svar_K_+4", "sh + imm": "svar_K_+4"}


def symbol_decl(mods):
    """A variable for a `var` operand, in the state space the instruction names (`.shared`
    where it names none)."""
    space = next((m for m in mods if m in (".global", ".const", ".local")), ".shared")
    decl = "%s .align 16 .b8 svar_K_[256];" % space
    return MODULE + decl if space in (".global", ".const") else decl
# A declaration that goes before the kernel, at module scope; `_K_` in names becomes the
# kernel's number so that every kernel has its own.
MODULE = "@module:"
# Instructions whose first bracketed operand (or, for istypep, second operand) is a texture or
# surface reference, and the coordinates per geometry.
HANDLES = {"tex": ".texref", "tld4": ".texref", "txq": ".texref", "istypep": ".texref",
           "suld": ".surfref", "sust": ".surfref", "sured": ".surfref", "suq": ".surfref"}
COORDS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 2, ".a2d": 4, ".cube": 4, ".acube": 4,
          ".2dms": 4, ".a2dms": 4}


def fill_operand(o):
    t = o["text"]
    if t in IMMEDIATES:
        return IMMEDIATES[t]
    if t in SYMBOLS:
        return SYMBOLS[t]
    t = t.replace("{!}", "").replace("{-}", "")
    t = re.sub(r"\{\.\w+\}", "", t)  # a{.asel}
    t = re.sub(r"\[\|(\w+)\]", r"|\1", t)  # d[|p]
    t = re.sub(r"\{,\}", "", t)
    t = re.sub(r"\{\s*(\w+)\s*,\s*\}", r"\1,", t)  # [a, {b,} c]
    if re.search(r"[()]", t) or t in ("tlist", "flist", "fproto", "kernel", "fname",
                                      "func") or "imm" in t:
        return None
    if re.match(r"^[\w\-]+\.\w+$", t):  # d.dsel
        t = t.split(".")[0]
    t = t.replace("-", "_")
    return t


def form_instances(entry_idx, key, form):
    """The base instance of a form and one variant per slot value."""
    path = form["path"]
    if form["label"]:
        return [], "labelled form"
    ops = []
    for o in form["operands"]:
        if o["optional"]:
            continue
        f = fill_operand(o)
        if f is None:
            return [], "operand `%s`" % o["text"]
        ops.append(f)
    required = []
    for s in form["slots"]:
        if s["optional"]:
            required.append(None)
            continue
        vals = [v for v in s["values"] if v.startswith(".") and " " not in v]
        if not vals:
            return [], "slot `%s`" % s["name"]
        required.append(vals[0])

    labels = []
    for op in ops:
        if op in ("tgt", "L", "target"):
            labels.append(op)
    decls = []

    op0 = path.split(".")[0]
    handle = HANDLES.get(op0)
    if handle:
        decls = decls + [MODULE + ".global %s href_K_;" % handle]

    def vectors(chosen):
        """`d` becomes `{d0, d1}` under `.v2`; tensor coordinates one per dimension."""
        mods = [v for v in chosen if v]
        mods = [p for v in mods for p in re.findall(r"\.[^.]+", v)]
        n = next((int(m[2:]) for m in mods if re.match(r"^\.v\d+$", m)), 0)
        dims = next((int(m[1]) for m in mods if re.match(r"^\.\dd$", m)), 1)
        out = []
        for op in ops:
            if n and op in ("d", "a", "b"):
                op = "{%s}" % ", ".join("%s%d" % (op, k) for k in range(n))
            elif n and re.match(r"^d\|p$", op):
                op = "{%s}|p" % ", ".join("d%d" % k for k in range(n))
            op = op.replace("tensorCoords", "{%s}" % ", ".join("tc%d" % k for k in range(dims)))
            if handle:
                m = re.match(r"^\[(\w+)(, (\w+))?\]$", op)
                geo = next((COORDS[x] for x in mods if x in COORDS), 1)
                if m and m.group(3):
                    op = "[href_K_, {%s}]" % ", ".join("%s%d" % (m.group(3), k) for k in range(geo))
                elif m:
                    op = "[href_K_]"
                elif op0 == "istypep" and op == "a":
                    op = "href_K_"
            out.append(op)
        return out

    def decls_of(chosen):
        if not any("svar" in op for op in ops):
            return decls
        mods = [p for v in chosen if v for p in re.findall(r"\.[^.]+", v)]
        return decls + [symbol_decl(mods)]

    def text_of(chosen):
        head = path + "".join(v for v in chosen if v)
        return (head + " " + ", ".join(vectors(chosen))).strip()

    # A form whose state space may be left out (generic addressing, which has gates of its
    # own) gets a second base with `.global`, so that its variants show what the modifiers need
    # without generic addressing.
    bases = [required]
    for si, s in enumerate(form["slots"]):
        if s["optional"] and ".global" in s["values"]:
            second = list(required)
            second[si] = ".global"
            bases.append(second)
            break
    out, seen = [], set()
    for chosen0 in bases:
        base = Instance(key, entry_idx, None, "base", text_of(chosen0),
                        decls=decls_of(chosen0), labels=labels)
        out.append(base)
        seen.add(base.text)
        for si, s in enumerate(form["slots"]):
            vals = [v for v in s["values"] if v.startswith(".") and " " not in v][:48]
            for v in vals:
                if v == chosen0[si]:
                    continue
                chosen = list(chosen0)
                chosen[si] = v
                text = text_of(chosen)
                if text in seen:
                    continue
                seen.add(text)
                var = Instance(key, entry_idx, None, "variant", text, decls=decls_of(chosen),
                               labels=labels)
                var.base = base
                out.append(var)
    return out, None


DECL_RE = re.compile(r"^\s*\.(reg|local|shared|param)\b")


def example_instances(entry_idx, key, entry):
    text = entry.get("examples") or ""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    stmts, decls, labels = [], [], []
    buf = ""
    for raw in text.split("\n"):
        line = G.strip_comment(raw).strip()
        if not line or line.startswith("#") or "..." in line:
            continue
        buf = (buf + " " + line).strip()
        if not buf.endswith(";") and not buf.endswith(":") and not buf.endswith("{") \
                and not buf.endswith("}"):
            continue
        line, buf = buf, ""
        for piece in [p.strip() for p in re.split(r"(?<=;)", line) if p.strip()]:
            m = re.match(r"^([A-Za-z_$][\w$]*):\s*(.*)$", piece)
            if m:
                labels.append(m.group(1))
                piece = m.group(2)
            if not piece or piece in ("{", "}") or not piece.endswith(";"):
                continue
            piece = piece[:-1].strip()
            if DECL_RE.match(piece):
                if piece.startswith(".reg") or piece.startswith(".shared") or \
                        piece.startswith(".local"):
                    decls.append(piece + ";")
                continue
            if piece.startswith(".") or piece.startswith("}"):
                continue
            stmts.append(piece)
    out = []
    for s in stmts:
        s = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", "_", s)  # cache-policy
        head = split_instr(s)[0]
        op = head.split(".")[0]
        names = set(n.split(".")[0] for n in G.title_names(entry["title"]))
        names |= set(entry["opcode"].split("/"))
        if op not in names:
            continue  # an example's helper instruction of another section
        d = [x for x in decls]
        refs = set(IDENT_RE.findall(split_instr(s)[1]))
        labs = [l for l in labels if l in refs]
        if op == "bra":
            labs = sorted(r for r in refs if not r.startswith("%"))
        out.append(Instance(key, entry_idx, None, "example", s, decls=d, labels=labs))
    return out


def sreg_instances(entry_idx, key, entry):
    names = G.lookup_names(entry["opcode"], "SpecialRegister")
    concrete = [n for n in names if n[-1].isdigit()]
    name = entry["opcode"] if "<" not in entry["opcode"] else None
    if name is None or name in ("pm0", "pm0_64"):
        name = sorted(concrete, key=lambda n: (len(n), n))[0] if concrete else entry["opcode"]
    ref = "%" + name + (".x" if name in SREG_VECTOR else "")
    out = []
    for ty in (".u32", ".u64", ".pred"):
        out.append(Instance(key, entry_idx, None, "sreg", "mov%s d, %s" % (ty, ref), sreg=name))
    return out


# ---------------------------------------------------------------------------------------------
# Running batches
# ---------------------------------------------------------------------------------------------

def assemble(ptxas, items, version, target, chunk=400):
    """items: list of (id, body lines). Returns {id: [messages]} (empty list: accepted)."""
    results = {}
    chunks = [items[i:i + chunk] for i in range(0, len(items), chunk)]

    def one(ch):
        res = {}
        todo = list(ch)
        while todo:
            text = header(version, target)
            spans = []
            line = text.count("\n") + 1
            parts = [text]
            for k, (iid, body) in enumerate(todo):
                glob = [b[len(MODULE):] for b in body if b.startswith(MODULE)]
                body = [b for b in body if not b.startswith(MODULE)]
                kt = "%s.visible .entry k%d()\n{\n%s\nret;\n}\n" % (
                    "".join(g + "\n" for g in glob), k, "\n".join(body))
                kt = kt.replace("_K_", "_%d_" % k)
                n = kt.count("\n")
                spans.append((line, line + n - 1))
                line += n
                parts.append(kt)
            fatal, errs = ptxas.run("".join(parts), arch_of(target))
            by = collections.defaultdict(list)
            for ln, msg in errs:
                by[ln].append(msg)

            def owner(ln):
                for k, (a, b) in enumerate(spans):
                    if a <= ln <= b:
                        return k
                return None

            if fatal is None:
                for k, (iid, _) in enumerate(todo):
                    a, b = spans[k]
                    res[iid] = [m for ln in range(a, b + 1) for m in by.get(ln, [])]
                break
            fk = owner(fatal) if fatal > 0 else None
            if fk is None:
                if len(todo) == 1:
                    res[todo[0][0]] = [m for ms in by.values() for m in ms] or ["fatal"]
                    break
                # an error outside every kernel: split the chunk
                half = len(todo) // 2
                for sub in (todo[:half], todo[half:]):
                    res.update(one(sub))
                break
            for k in range(fk):
                iid = todo[k][0]
                a, b = spans[k]
                res[iid] = [m for ln in range(a, b + 1) for m in by.get(ln, [])]
            a, b = spans[fk]
            res[todo[fk][0]] = [m for ln in range(a, b + 1) for m in by.get(ln, [])] or ["fatal"]
            todo = todo[fk + 1:]
        return res

    for r in ptxas.map(one, chunks):
        results.update(r)
    return results


GATE_MSG = re.compile(r"requires (PTX ISA \.version|\.target)|not supported on \.target|"
                      r"is not supported for \.target|not supported on target")


def choose_typing(ptxas, insts, newest, p1_targets, log):
    """Sets `hyp` of each instance to the first typing that ptxas accepts on some target."""
    todo = collections.OrderedDict()
    for n, inst in enumerate(insts):
        hyps = ["same"] if inst.source == "sreg" else HYPOTHESES
        seen = set()
        for h in hyps:
            body = tuple(kernel_body(inst, h))
            if body in seen:
                continue
            seen.add(body)
            todo[(n, h)] = list(body)
    good = collections.defaultdict(set)
    for t in p1_targets:
        if not todo:
            break
        items = list(todo.items())
        res = assemble(ptxas, items, newest, t)
        for (n, h), msgs in res.items():
            if not msgs:
                good[n].add(h)
        log.write("phase 1 %s %s: %d kernels, %d instances typed\n"
                  % (newest, t, len(items), sum(1 for v in good.values() if v)))
        # drop the kernels of instances already typed
        todo = collections.OrderedDict((k, b) for k, b in todo.items() if not good[k[0]])
    for n, inst in enumerate(insts):
        for h in ["same"] if inst.source == "sreg" else HYPOTHESES:
            if h in good[n]:
                inst.hyp = h
                break


def scan_targets(ptxas, lst, newest, targets, log):
    """Phase 2: every instance at every target, at the newest version."""
    byid = {id(i): i for i in lst}
    for t in targets:
        res = assemble(ptxas, [(id(i), i.kernel) for i in lst], newest, t)
        for iid, msgs in res.items():
            inst = byid[iid]
            inst.accepted[(newest, t)] = not msgs
            if msgs:
                inst.errors[(newest, t)] = msgs[0]
        log.write("phase 2 %s %s: %d accepted\n" % (newest, t, sum(1 for m in res.values() if not m)))
    for i in lst:
        i.targets_ok = [t for t in targets if i.accepted.get((newest, t))]
        i.min_target = i.targets_ok[0] if i.targets_ok else None


def scan_versions(ptxas, lst, versions, floors, log):
    """Phase 3: every instance at every version (from the one that introduced its least
    target), at its least target."""
    newest = versions[-1]
    groups = collections.defaultdict(list)
    for i in lst:
        if i.min_target:
            groups[i.min_target].append(i)
    for t, grp in sorted(groups.items(), key=lambda kv: tkey(kv[0])):
        byid = {id(i): i for i in grp}
        for v in versions:
            if vkey(v) < vkey(floors[t]) or v == newest:
                continue
            res = assemble(ptxas, [(id(i), i.kernel) for i in grp], v, t)
            for iid, msgs in res.items():
                byid[iid].accepted[(v, t)] = not msgs
                if msgs:
                    byid[iid].errors[(v, t)] = msgs[0]
        log.write("phase 3 %s: %d instances\n" % (t, len(grp)))
        for i in grp:
            ok = [v for v in versions if vkey(v) >= vkey(floors[t]) and i.accepted.get((v, t))]
            i.min_version = ok[0] if ok else None
            i.bounded = i.min_version == floors[t] and floors[t] != versions[0]


def probe(ptxas, instances, versions, targets, floors, log):
    newest = versions[-1]
    # Phase 1: pick a typing for every base, example and special-register instance, then for
    # the variants of a base that got none (a variant otherwise takes its base's typing).
    p1_targets = [t for t in ("sm_62", "sm_90a", "sm_100a", "sm_103a", "sm_110a", "sm_120a",
                              "sm_121a", "sm_100f", "sm_13") if t in floors]
    choose_typing(ptxas, [i for i in instances if i.source != "variant"], newest, p1_targets, log)
    orphans = [i for i in instances if i.source == "variant" and i.base.hyp is None]
    choose_typing(ptxas, orphans, newest, p1_targets, log)
    for inst in instances:
        if inst.source == "variant" and inst.hyp is None:
            inst.hyp = inst.base.hyp
        if inst.hyp:
            inst.kernel = kernel_body(inst, inst.hyp)
    live = [i for i in instances if i.kernel]
    # sreg: keep one of the two widths per register
    by_sreg = collections.defaultdict(list)
    for i in live:
        if i.sreg:
            by_sreg[i.key].append(i)
    for k, lst in by_sreg.items():
        for extra in lst[1:]:
            extra.kernel = None
    live = [i for i in instances if i.kernel]
    # dedupe identical kernels of one entry
    uniq = collections.OrderedDict()
    for i in live:
        uniq.setdefault((i.key, tuple(i.kernel)), i)
    for i in live:
        if uniq[(i.key, tuple(i.kernel))] is not i:
            i.kernel = None
    live = [i for i in instances if i.kernel]
    log.write("instances with a typing: %d of %d\n" % (len(live), len(instances)))

    scan_targets(ptxas, live, newest, targets, log)
    # Variants that no target accepts with their base's typing get a typing of their own.
    retry = [i for i in live if i.source == "variant" and not i.min_target]
    for i in retry:
        i.hyp = None
    choose_typing(ptxas, retry, newest, p1_targets, log)
    retry = [i for i in retry if i.hyp]
    for i in retry:
        i.kernel = kernel_body(i, i.hyp)
    scan_targets(ptxas, retry, newest, targets, log)
    for i in [i for i in live if i.source == "variant" and i.hyp is None]:
        i.hyp = i.base.hyp  # keep the base's typing: the instance is listed as not accepted
    scan_versions(ptxas, live, versions, floors, log)
    return live


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

COLUMNS = ["key", "form", "source", "instance", "min_ptx", "min_target", "text_ptx", "text_target",
           "targets", "message", "kernel"]


def fmt_ver(v):
    return "%d.%d" % v if v else "-"


def fmt_sm(sm):
    return "sm_%d%s" % sm if sm else "-"


def parse_sm_str(s):
    m = re.match(r"sm_(\d+)([af]?)$", s)
    return (int(m.group(1)), m.group(2)) if m else None


def sm_supports(have, need):
    return G.sm_supports(have, need)


def text_gates(entry, kind):
    ptx, _explicit, _preview, pgates = G.parse_ptx_notes(entry, kind)
    tbase, tgates = G.parse_target_notes(entry, kind)
    return ptx, tbase, pgates, tgates


def clean(text):
    return " ".join(str(text).replace("\t", " ").split())


def write_tsv(path, rows, versions, targets, floors):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("# @generated by tools/probe-gates.py with %s; do not edit by hand.\n" % PTXAS_ID)
        f.write("# One row per probed instance (one instruction in its own .entry), then the\n")
        f.write("# instances and forms the probe could not get ptxas to accept (min_target `-`).\n")
        f.write("# key: the table entry (gen-isa summary key); form: index of the form in the entry\n")
        f.write("# (`-` for examples and special registers); source: base (a form without optional\n")
        f.write("# modifiers), variant (one slot value changed or one optional modifier added),\n")
        f.write("# example (from the ISA's examples), sreg (special register read), or why not probed;\n")
        f.write("# min_ptx/min_target: the least .version/.target at which ptxas accepts it (`<=`: the\n")
        f.write("# least .version that allows the least target, so only an upper bound of the gate);\n")
        f.write("# text_ptx/text_target: the ISA text's gate for the entry; targets: empty where the\n")
        f.write("# accepting targets are exactly those that may use a feature needing min_target,\n")
        f.write("# else the list of them; message: ptxas's first error just below the gate;\n")
        f.write("# kernel: the body of the .entry probed (lines joined by ` ; `; a line that starts\n")
        f.write("# with `%s` goes before the .entry, and `_K_` in names is the kernel's number).\n" % MODULE)
        f.write("# versions: %s\n" % " ".join(versions))
        f.write("# targets: %s\n" % " ".join(targets))
        f.write("# target introduced in: %s\n" % " ".join("%s=%s" % (t, floors[t]) for t in targets))
        f.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            f.write("\t".join(clean(c) for c in r) + "\n")


def read_tsv(path):
    rows, meta = [], {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^# (versions|targets): (.*)$", line)
            if m:
                meta[m.group(1)] = m.group(2).split()
            if not line or line.startswith("#") or line.startswith("key\t"):
                continue
            rows.append(line.split("\t"))
    return rows, meta


PTXAS_ID = "ptxas"


def kernel_col(inst):
    return " ; ".join(l.rstrip(";") for l in inst.kernel) if inst.kernel else ""


def result_rows(data, keys, live, instances, skipped, versions, targets):
    newest = versions[-1]
    tg = {}
    for idx, e in enumerate(data):
        tg[keys[idx]] = text_gates(e, G.kind_of(e["title"]))
    order = {k: n for n, k in enumerate(keys)}
    src_order = {"base": 0, "variant": 1, "example": 2, "sreg": 0}
    live.sort(key=lambda i: (order[i.key], i.form_idx if i.form_idx is not None else 999,
                             src_order[i.source], i.text))
    rows, tail = [], []

    def text_cols(key):
        ptx, tbase, _pg, _tg = tg[key]
        tt = "all" if tbase == "all" else (fmt_sm(tbase[1]) if tbase else "-")
        return fmt_ver(ptx), tt

    for i in live:
        form = "-" if i.form_idx is None else str(i.form_idx)
        if not i.min_target:
            tail.append([i.key, form, i.source + ":unaccepted", i.text, "-", "-"]
                        + list(text_cols(i.key)) + ["", i.errors.get((newest, targets[-1]), ""),
                                                kernel_col(i)])
            continue
        need = parse_sm_str(i.min_target)
        fits = [t for t in targets if sm_supports(parse_sm_str(t), need)] == i.targets_ok
        msg = ""
        idx = targets.index(i.min_target)
        below = [t for t in targets[:idx] if t[-1] not in "af"]
        if below and i.min_target[-1] not in "af":
            msg = i.errors.get((newest, below[-1]), "")
        if i.min_version and versions.index(i.min_version) > 0 and not i.bounded:
            pv = versions[versions.index(i.min_version) - 1]
            msg = i.errors.get((pv, i.min_target), msg) or msg
        rows.append([i.key, form, i.source, i.text,
                     ("<=" if i.bounded else "") + (i.min_version or "-"), i.min_target]
                    + list(text_cols(i.key)) + ["" if fits else ",".join(i.targets_ok), msg,
                                                kernel_col(i)])
    typed_sregs = set(i.key for i in instances if i.sreg and i.hyp)
    for i in instances:
        if i.sreg and i.key in typed_sregs:
            continue
        if i.hyp is None and (i.source != "variant" or i.base.hyp is None):
            form = "-" if i.form_idx is None else str(i.form_idx)
            tail.append([i.key, form, i.source + ":untyped", i.text, "-", "-"]
                        + list(text_cols(i.key)) + ["", "no typing of its operands accepted", ""])
    for key, fi, text, why in skipped:
        tail.append([key, str(fi), "form:skipped", text, "-", "-"] + list(text_cols(key))
                    + ["", "cannot spell " + why, ""])
    return rows + tail


def main(argv):
    global PTXAS_ID
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxas")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--spec", default=G.DEFAULT_SPEC)
    ap.add_argument("--tsv", default=DEFAULT_TSV)
    ap.add_argument("--md", default=DEFAULT_MD)
    ap.add_argument("--log", default=None)
    ap.add_argument("--md-only", action="store_true",
                    help="rewrite the markdown from the TSV, without ptxas")
    ap.add_argument("--check", action="store_true",
                    help="with --md-only: exit 1 if the markdown is not what the TSV gives")
    a = ap.parse_args(argv)
    if a.md_only and a.check and not os.path.exists(a.spec):
        # a fresh clone without ../shared: the page is made from the reference extract too, so
        # it cannot be rebuilt here (gen-isa.py --check validates the TSV's digest instead)
        print("probe-gates.py --md-only --check: reference extract not found (%s); %s not "
              "checked" % (a.spec, os.path.relpath(a.md, ROOT)))
        return 0
    data = load_spec(a.spec)
    keys = G.summary_keys(data)
    if a.md_only:
        rows, meta = read_tsv(a.tsv)
        with open(a.tsv, encoding="utf-8") as f:
            m = re.search(r"with (ptxas [\d.]+)", f.readline())
            PTXAS_ID = m.group(1) if m else "ptxas"
        if not write_md(a.md, data, keys, rows, meta["versions"], meta["targets"], a.tsv,
                        check=a.check):
            sys.stderr.write("%s is out of date; run tools/probe-gates.py --md-only\n" % a.md)
            return 1
        return 0
    path = a.ptxas
    if not path:
        try:
            import nvidia  # pip nvidia-cuda-nvcc

            path = os.path.join(nvidia.__path__[0], "cu13", "bin", "ptxas")
        except ImportError:
            sys.exit("ptxas not found: pip install nvidia-cuda-nvcc, or pass --ptxas PATH")
    ver = subprocess.run([path, "--version"], stdout=subprocess.PIPE).stdout.decode()
    m = re.search(r"V([\d.]+)", ver)
    PTXAS_ID = "ptxas %s" % (m.group(1) if m else "?")
    logdir = a.log or tempfile.mkdtemp(prefix="probe-gates-")
    os.makedirs(logdir, exist_ok=True)
    log = open(os.path.join(logdir, "probe.log"), "w", buffering=1)
    ptxas = Ptxas(path, max(1, a.jobs), logdir)

    only = set(x for x in a.only.split(",") if x)
    for e in data:
        if G.kind_of(e["title"]) == "SpecialRegister":
            SREG_NAMES.update(G.lookup_names(e["opcode"], "SpecialRegister"))
    instances, skipped = [], []
    for idx, e in enumerate(data):
        kind = G.kind_of(e["title"])
        if only and e["opcode"] not in only and keys[idx] not in only:
            continue
        if kind == "Directive":
            continue
        if kind == "SpecialRegister":
            instances += sreg_instances(idx, keys[idx], e)
            continue
        forms, _defs = G.parse_syntax(e) if e["syntax"].strip() else ([], [])
        for fi, f in enumerate(forms):
            got, why = form_instances(idx, keys[idx], f)
            for g in got:
                g.form_idx = fi
            if why:
                skipped.append((keys[idx], fi, f["text"], why))
            instances += got
        instances += example_instances(idx, keys[idx], e)
    versions, targets, floors = discover(ptxas)
    log.write("versions: %s\ntargets: %s\n" % (" ".join(versions), " ".join(
        "%s(%s)" % (t, floors[t]) for t in targets)))
    live = probe(ptxas, instances, versions, targets, floors, log)
    log.write("ptxas runs: %d\n" % ptxas.runs)
    rows = result_rows(data, keys, live, instances, skipped, versions, targets)
    write_tsv(a.tsv, rows, versions, targets, floors)
    written, _meta = read_tsv(a.tsv)  # the page is made from the file, as --md-only makes it
    write_md(a.md, data, keys, written, versions, targets, a.tsv)
    log.close()
    print("%d instances probed, %d accepted somewhere, %d ptxas runs; log in %s"
          % (len(live), sum(1 for r in rows if r[5] != "-"), ptxas.runs, logdir))
    return 0


def load_spec(path):
    """The reference extract with gen-isa's supplement merged in, as gen-isa builds the table."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if hasattr(G, "merge_supplement"):
        data = G.merge_supplement(data, G.load_supplement(G.SUPPLEMENT))
    return data


# ---------------------------------------------------------------------------------------------
# The list of disagreements
# ---------------------------------------------------------------------------------------------

def write_md(path, data, keys, rows, versions, targets, tsv, check=False):
    """Writes the list of disagreements; with `check`, only says whether `path` is current."""
    G._PTXAS.pop(tsv, None)
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[r[0]].append(r)
    lines = []
    w = lines.append
    w("# ptxas gates versus the PTX ISA text")
    w("")
    w("<!-- @generated by tools/probe-gates.py from crates/isa/data/ptxas-gates.tsv; do not edit. -->")
    w("")
    w("`tools/probe-gates.py` assembles an instance of every instruction form, of every value of its")
    w("modifier slots, of the ISA's examples and of every special register with %s, at every" % PTXAS_ID)
    w("`.target` and `.version` that ptxas knows, and records in `crates/isa/data/ptxas-gates.tsv` the")
    w("least of each at which ptxas accepts the instance (how instances are made: the script's doc).")
    w("`tools/gen-isa.py` reads that file and makes the table follow ptxas where the two disagree")
    w("(`follow_ptxas`), so `ptxvm check` reports ptxas's gates; neither builds nor tests need ptxas.")
    w("ptxas knows `.version` %s to %s and the targets %s." % (versions[0], versions[-1],
                                                            ", ".join(targets)))
    w("")
    w("Worth knowing about ptxas: it accepts `.version 5.1`, which no PTX ISA release names, and")
    w("applies there most features the text dates 6.0 (`fns`, `match`, `shfl.sync`, `vote.sync`,")
    w("`bar.warp.sync`), although its own message at 5.0 still says \"requires PTX ISA .version")
    w("6.0\"; it takes `nanosleep` from 6.2 (text: 6.3); it accepts `.f64` arithmetic on every")
    w("target (the text: sm_13); `st.async` without `.mbarrier::complete_tx::bytes` needs 9.5.")
    w("")
    w("Rerun: `python3 tools/probe-gates.py` (a few minutes on two cores), then")
    w("`python3 tools/gen-isa.py`. `--md-only` rewrites this page from the TSV.")
    w("")
    w("Each line below is one disagreement. *Applied* says whether the generated table follows ptxas:")
    w("a gate that ptxas accepts earlier (or on more targets) than the text always is; a stricter one")
    w("only where ptxas's answer is exact (not bounded by the version that introduced the least")
    w("target) and, for a whole entry, where every form of the entry was probed and ptxas's message")
    w("below the gate names the instruction itself (`sin` needs 1.4 only for `.approx`). *Feature* is the")
    w("text's gate for a feature, `(entry)` the entry as a whole, and a name marked *new* is a gate the")
    w("text does not state, for the instructions that carry all the modifiers of the name (one is")
    w("only added where every probed instance carrying them agrees; a new gate without modifiers is")
    w("not applied: the checker only applies gates that name modifiers).")
    w("")
    w("| entry | feature | ISA text | ptxas | applied |")
    w("|---|---|---|---|---|")
    total = applied = 0
    for idx, e in enumerate(data):
        k = keys[idx]
        kind = G.kind_of(e["title"])
        if kind == "Directive" or k not in by_key:
            continue
        forms, _d = G.parse_syntax(e) if e["syntax"].strip() else ([], [])
        ptx, tbase, pgates, tgates = text_gates(e, kind)
        res = G.follow_ptxas(k, e["opcode"], forms, kind, ptx, tbase, pgates, tgates,
                             path=tsv)
        for level, feat, text, got, ok in res[4]:
            total += 1
            applied += ok
            name = "(entry)" if level == "entry" else (
                "`%s` *new*" % feat if level == "new" else clean(feat))
            w("| %s | %s | %s | %s | %s |" % (G.display_name(e["opcode"], kind) + (
                "" if k == e["opcode"] else " (%s)" % k), name, text, got, "yes" if ok else "no"))
    w("")
    w("%d disagreements, %d applied to the table." % (total, applied))
    w("")
    w("## Not probed")
    w("")
    w("Forms the probe cannot spell an instance of, and instances that ptxas accepts under none of")
    w("the tried typings or on no target at `.version %s` (their gates come from the text unless" % versions[-1])
    w("another instance of the entry was probed):")
    w("")
    for r in rows:
        if r[5] == "-":
            w("- `%s` (%s, %s): %s" % (r[3], r[0], r[2].split(":")[-1], r[9] or "-"))
    w("")
    text = "\n".join(lines)
    if check:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
