#!/usr/bin/env python3
"""Generate crates/isa/src/generated.rs from the PTX ISA reference data.

Usage:
    python3 tools/gen-isa.py [--spec PATH] [--out PATH] [--check] [--stats] [--template]

The input is the shared spec extract (../shared/spec/isa-reference.json relative to the
repository root by default): 240 sections, each with an opcode, a section title, the syntax
grammar, examples, and two free-text notes (PTX ISA version notes and target notes).

The output is a committed, deterministic Rust source file holding the facts only: the syntax
grammar as written (it is grammar, not prose), the structure parsed out of it (forms, modifier
slots with their alternatives, operands), the PTX version and sm_XX gates extracted from the
notes, and a one-line summary per section that we wrote ourselves (SUMMARIES below).

The reference lacks many instructions of PTX ISA 9.x (wmma, mma, wgmma, tcgen05, the .b128 and
.v8 forms, the newer cvt formats, ...). `crates/isa/data/supplement.json` (committed) adds them:
its `sections` are new entries in the reference's shape (plus a `summary` in our own words), its
`extensions` append forms, notes and examples to an existing section (see SUPPLEMENT below).

`--check` exits non-zero when the committed file differs from what would be generated. Without
the reference (a fresh clone has no ../shared) it cannot regenerate: it then validates the
supplement and compares the digests of the supplement and of this generator with the ones
recorded in the generated file's header, and says that it skipped the full comparison.
`--stats` prints how much of the notes and syntax could be extracted.
`--template` prints the summary keys that are missing from SUMMARIES.

Plain Python 3, no packages.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SPEC = os.path.join(ROOT, "..", "shared", "spec", "isa-reference.json")
DEFAULT_OUT = os.path.join(ROOT, "crates", "isa", "src", "generated.rs")
DOC_BASE = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#"
SUPPLEMENT = os.path.join(ROOT, "crates", "isa", "data", "supplement.json")

# Misspelled opcodes in the syntax text of the source data, corrected in the parsed structure
# (the raw syntax text is kept as it is).
OPCODE_ERRATA = {"appplypriority": "applypriority", "maps": "mapa"}

# Value sets that a syntax block uses but the source data leaves undefined, per opcode. The
# half-precision `fma.rnd.oob.{relu}.type` form names `.type` without defining it; the ISA's
# examples of the section use `.oob` with all four of these types.
DEF_ERRATA = {"fma": {".type": [".f16", ".f16x2", ".bf16", ".bf16x2"]}}

# ---------------------------------------------------------------------------------------------
# Summaries: one line each, in our own words. Key: see summary_keys().
# ---------------------------------------------------------------------------------------------
SUMMARIES = {}  # filled in by the block at the end of this file


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def category_of(title):
    return title.split(":", 1)[0].strip()


def title_names(title):
    """The instruction/directive/register names a section title lists."""
    tail = title.split(":", 1)[1] if ":" in title else title
    names = []
    for part in re.split(r"[,/]", tail):
        part = part.strip()
        if part:
            names.append(part)
    return names


def kind_of(title):
    cat = category_of(title)
    if cat == "Special Registers":
        return "SpecialRegister"
    if "Directives" in cat:
        return "Directive"
    return "Instruction"


def anchor_of(title):
    a = title.lower()
    a = re.sub(r"[^a-z0-9]+", "-", a)
    return a.strip("-")


def display_name(opcode, kind):
    if kind == "SpecialRegister":
        return "%" + opcode
    if kind == "Directive":
        return "." + opcode
    return opcode


def lookup_names(opcode, kind):
    """Names under which an entry can be looked up (without the `%`/`.` prefix)."""
    names = set(opcode.split("/"))
    m = re.match(r"^(\w+?)<(\d+)>$", opcode)  # envreg<32>, reserved_smem_offset_<2>
    if m:
        base, n = m.group(1), int(m.group(2))
        names = {base.rstrip("_")} | {"%s%d" % (base, i) for i in range(n)}
    if opcode == "pm0":
        names |= {"pm%d" % i for i in range(8)}
    if opcode == "pm0_64":
        names |= {"pm%d_64" % i for i in range(8)}
    return sorted(names)


def split_top(text, sep=","):
    """Split on `sep` outside (), [] and {}."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def strip_comment(line):
    i = line.find("//")
    return line if i < 0 else line[:i]


# ---------------------------------------------------------------------------------------------
# Syntax grammar parsing
# ---------------------------------------------------------------------------------------------

DEF_RE = re.compile(r"^\s*((?:\.?[A-Za-z][\w:\-]*\s*=\s*)+)(.*)$")


def expand_value(v):
    """`.shared{::cta, ::cluster}` -> [.shared, .shared::cta, .shared::cluster]."""
    v = v.strip()
    m = re.match(r"^(.*?)\{([^{}]*)\}(.*)$", v)
    if m:
        pre, alts, post = m.group(1), m.group(2), m.group(3)
        alts = [a.strip() for a in alts.split(",") if a.strip()]
        if pre.endswith("::"):  # .async.shared::{cta, cluster}: required choice
            return [pre + a + post for a in alts]
        return [pre + post] + [pre + a + post for a in alts]
    return [v]


def parse_def_values(body):
    """Values of a `{ ... }` definition body (already brace-balanced text)."""
    body = body.strip().rstrip(";").strip()
    if "where" in body:  # `.hxy, where x,y are from {...}`: a pattern, keep it whole
        m = re.search(r"(\.\w+)\s*,?\s*where", body)
        return [m.group(1)] if m else [body]
    if body.startswith("{"):
        depth = 0
        for i, ch in enumerate(body):
            depth += ch == "{"
            depth -= ch == "}"
            if depth == 0:
                body = body[1:i]
                break
    vals = []
    for part in split_top(body):
        part = part.strip()
        if not part:
            continue
        # `.b10\n .b2` (a missing comma in the source data) splits on whitespace too.
        for p in split_top(" ".join(part.split()), " "):
            if p.strip():
                vals.extend(expand_value(p))
    return vals


def normalize_value(v):
    if v == "none" or re.match(r"^\d", v) or v.startswith("sm_") or v.startswith("-"):
        return v
    if not v.startswith(".") and re.match(r"^[A-Za-z_]", v):
        return "." + v
    return v


def logical_lines(syntax):
    """Group the raw lines into ('form', text) / ('def', names, values) / ('sep',) items."""
    items = []
    lines = syntax.split("\n")
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = strip_comment(raw).rstrip()
        i += 1
        if not line.strip():
            if not raw.strip():
                items.append(("sep",))
            continue
        s = line.strip()
        dm = DEF_RE.match(line)
        if dm and "{" in dm.group(2) or (dm and re.match(r"^\s*\.[\w]+\s*$", dm.group(2))):
            names = [n.strip() for n in dm.group(1).split("=") if n.strip()]
            body = dm.group(2)
            while body.count("{") > body.count("}") and i < len(lines):
                body += " " + strip_comment(lines[i]).strip()
                i += 1
            items.append(("def", names, body))
            continue
        if dm and re.match(r"^\s*\.\w+\s*,\s*where", dm.group(2)):
            names = [n.strip() for n in dm.group(1).split("=") if n.strip()]
            items.append(("def", names, dm.group(2)))
            continue
        if re.match(r"^[A-Z][\w ]*:$", s) or s.startswith("defaults to") or re.match(
            r"^\.\w+ defaults to", s
        ):
            items.append(("sep",))  # heading or prose
            continue
        # A form, possibly continued on indented lines when it has not ended with `;`.
        text = s
        while (
            not text.rstrip().endswith(";")
            and i < len(lines)
            and lines[i][:1] in (" ", "\t")
            and strip_comment(lines[i]).strip()
            and not DEF_RE.match(strip_comment(lines[i]))
        ):
            text += " " + strip_comment(lines[i]).strip()
            i += 1
        items.append(("form", text))
    return items


def split_head(text):
    """Split a form into (head, rest): head is the opcode with its modifiers."""
    i, depth, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch.isspace() and depth == 0:
            # `. vec_16_bit` (a stray space after a dot in the source data) continues the head
            if i > 0 and text[i - 1] == ".":
                j = i
                while j < n and text[j].isspace():
                    j += 1
                text = text[:i] + text[j:]
                n = len(text)
                continue
            break
        i += 1
    return text[:i], text[i:].strip()


def head_segments(head):
    """`add{.rnd}.f32` -> [('add', False), ('{.rnd}', True), ('.f32', False)]."""
    segs, i, n = [], 0, len(head)
    while i < n:
        ch = head[i]
        if ch == "{":
            depth, j = 0, i
            while j < n:
                depth += head[j] == "{"
                depth -= head[j] == "}"
                j += 1
                if depth == 0:
                    break
            segs.append((head[i:j], True))
            i = j
        elif ch == ".":
            j = i + 1
            if j < n and head[j] == "{":  # `.{1d,2d,3d}` or `.{.relu}`
                depth = 0
                while j < n:
                    depth += head[j] == "{"
                    depth -= head[j] == "}"
                    j += 1
                    if depth == 0:
                        break
                inner = head[i + 2 : j - 1]
                if inner.startswith(".") or re.match(r"^\w+$", inner):
                    # `.{.relu}` / `.{relu}`: misprinted optionals
                    segs.append(("{." + inner.lstrip(".") + "}", True))
                else:
                    segs.append((head[i:j], False))
                i = j
                continue
            while j < n and head[j] not in ".{":
                j += 1
            # `.shared{::cta}` keeps its sub-qualifier
            if j < n and head[j] == "{" and head[j + 1 : j + 3] == "::":
                k = head.index("}", j) + 1
                j = k
            segs.append((head[i:j], False))
            i = j
        else:
            j = i
            while j < n and head[j] not in ".{":
                j += 1
            segs.append((head[i:j], False))
            i = j
    return segs


def parse_operands(rest):
    rest = rest.strip().rstrip(";").strip()
    ops = []
    if not rest:
        return ops
    # pull out optional groups `{, x, y}` written after an operand
    pieces = []
    i, depth, cur = 0, 0, ""
    while i < len(rest):
        ch = rest[i]
        if ch == "{" and depth == 0 and re.match(r"\{\s*,", rest[i:]):
            j, d = i, 0
            while j < len(rest):
                d += rest[j] == "{"
                d -= rest[j] == "}"
                j += 1
                if d == 0:
                    break
            pieces.append((cur, False))
            cur = ""
            inner = rest[i + 1 : j - 1].strip().lstrip(",")
            pieces.append((inner, True))
            i = j
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        cur += ch
        i += 1
    pieces.append((cur, False))
    for text, optional in pieces:
        for part in split_top(text):
            t = " ".join(part.split())
            if not t:
                continue
            negatable = t.startswith("{!}") or t.startswith("{-}")
            address = t.startswith("[")
            body = t[3:] if negatable else t
            m = re.search(r"[A-Za-z_][\w\-]*", body)
            name = m.group(0) if m else body
            ops.append(
                {
                    "text": t,
                    "name": name,
                    "optional": optional,
                    "negatable": negatable,
                    "address": address,
                }
            )
    return ops


def slot_from_segment(seg, optional, defs_lookup):
    inner = seg[1:-1] if optional else seg
    if optional and inner.startswith("{") is False and "," in inner and inner.startswith("."):
        # `{.hi,.lo}`: an optional choice between literals
        vals = [v.strip() for v in inner.split(",")]
        return {"name": inner, "optional": True, "values": vals, "placeholder": False}
    if inner.startswith(".{"):  # `.{1d,2d,3d}`: a required choice
        vals = ["." + v.strip().lstrip(".") for v in inner[2:-1].split(",")]
        return {"name": inner, "optional": False, "values": vals, "placeholder": False}
    if not inner.startswith("."):
        inner = "." + inner  # `{relu}`
    base = re.sub(r"\{.*\}$", "", inner)
    d = defs_lookup(base)
    if d is not None:
        vals = [normalize_value(v) for v in d]
        opt = optional or "none" in vals
        vals = [v for v in vals if v != "none"]
        return {"name": base, "optional": opt, "values": vals, "placeholder": True}
    vals = expand_value(inner)
    return {"name": inner, "optional": optional, "values": vals, "placeholder": False}


def parse_syntax(entry):
    """Parse an entry's syntax text into forms and definitions."""
    items = logical_lines(entry["syntax"])
    # groups: forms followed by their definitions
    groups, cur_forms, cur_defs = [], [], {}
    all_defs = []
    for it in items:
        if it[0] == "form":
            if cur_defs:
                groups.append((cur_forms, cur_defs))
                cur_forms, cur_defs = [], {}
            cur_forms.append(it[1])
        elif it[0] == "def":
            vals = parse_def_values(it[2])
            for name in it[1]:
                key = name if name.startswith(".") else "." + name
                cur_defs[key] = vals
                all_defs.append((name, vals))
    groups.append((cur_forms, cur_defs))

    names = title_names(entry["title"])
    kind = kind_of(entry["title"])
    forms = []
    for gi, (ftexts, gdefs) in enumerate(groups):

        def defs_lookup(name, gi=gi, gdefs=gdefs):
            if name in gdefs:
                return gdefs[name]
            order = list(range(gi + 1, len(groups))) + list(range(gi - 1, -1, -1))
            for k in order:
                if name in groups[k][1]:
                    return groups[k][1][name]
            return DEF_ERRATA.get(entry["opcode"], {}).get(name)

        for text in ftexts:
            forms.append(parse_form(text, entry, names, kind, defs_lookup))
    defs = []
    seen = set()
    for name, vals in all_defs:
        key = (name, tuple(vals))
        if key not in seen:
            seen.add(key)
            defs.append({"name": name, "values": [normalize_value(v) for v in vals]})
    return forms, defs


def parse_form(text, entry, names, kind, defs_lookup):
    guard = False
    label = False
    t = text
    if t.startswith("@"):
        guard = True
        t = t.split(None, 1)[1]
    m = re.match(r"^([A-Za-z_]\w*):\s+(.*)$", t)
    if m:
        label = True
        t = m.group(2)
    t = t.strip()
    if t.endswith(";"):
        t = t[:-1].rstrip()
    head, rest = split_head(t)
    segs = head_segments(head)
    first = segs[0][0] if segs else ""
    first = OPCODE_ERRATA.get(first, first)
    # `vop.dtype...` with `vop = { vadd, ... }`: the placeholder stands for this entry's opcode
    if defs_lookup("." + first) is not None and entry["opcode"] in [
        v.lstrip(".") for v in defs_lookup("." + first)
    ]:
        first = entry["opcode"]
    # the opcode path: the longest title name the head starts with
    path = first
    path_len = 1
    for name in sorted(names, key=len, reverse=True):
        parts = name.split(".")
        if parts[0] != first or len(parts) > len(segs):
            continue
        if all(
            not segs[k][1] and segs[k][0] == "." + parts[k] for k in range(1, len(parts))
        ):
            path, path_len = name, len(parts)
            break
    if kind == "Directive":
        path = first.lstrip(".")
    slots = [slot_from_segment(s, o, defs_lookup) for s, o in segs[path_len:]]
    operands = parse_operands(rest)
    return {
        "text": " ".join(text.split()),
        "guard": guard,
        "label": label,
        "path": path,
        "slots": slots,
        "operands": operands,
    }


# ---------------------------------------------------------------------------------------------
# Notes: PTX ISA versions and target architectures
# ---------------------------------------------------------------------------------------------

JUNK_LINES = {"Example", "Release Notes", "Errata", "Preview Feature:"}
VER_RE = re.compile(r"PTX\s+ISA\s+(?:version\s+|versions\s+)?(\d+)\.(\d+)")
SM_RE = re.compile(r"\bsm_?(\d+)([af]?)\b")


def sentences(notes):
    lines = []
    for raw in notes.split("\n"):
        s = raw.replace("\u00a0", " ").replace("\u2022", "").strip()
        if not s or s in JUNK_LINES:
            lines.append("")
            continue
        lines.append(s)
    joined = []
    for s in lines:
        if s and joined and joined[-1] and not re.search(r"[.:]$", joined[-1]):
            joined[-1] += " " + s
        else:
            joined.append(s)
    out = []
    for s in joined:
        if not s:
            continue
        parts = re.split(r"(?<=\d\.\d\.)\s+|(?<=\d\.\d\d\.)\s+|(?<=[a-z)]\.)\s+(?=[A-Z%])", s)
        out.extend(p.strip() for p in parts if p.strip())
    return out


def mentioned_modifiers(subject):
    mods = []
    for m in re.finditer(r"\.\{([^}]*)\}", subject):
        for v in re.split(r"[,/]", m.group(1)):
            v = v.strip().lstrip(".")
            if v and "." + v not in mods:
                mods.append("." + v)
    s = re.sub(r"\.\{[^}]*\}", "", subject)
    for m in re.finditer(r"(?:\.|::)[A-Za-z][\w]*(?:::[\w]+)*", s):
        tok = m.group(0)
        if tok not in mods:
            mods.append(tok)
    # drop the opcode-path tokens of the subject's instruction names, keep the rest
    return mods


def subject_of(sentence, keyword_re):
    m = keyword_re.search(sentence)
    if not m:
        return ""
    subj = sentence[: m.start()].strip().rstrip(",")
    subj = re.sub(r"\b(is|are|were|was)$", "", subj).strip()
    return subj


def subject_is_entry(subject, entry, kind):
    if not subject:
        return True
    s = re.sub(r"^(The|Support for)\s+", "", subject)
    s = re.sub(r"\s+(directive|instruction|instructions)$", "", s)
    items = [x.strip() for x in re.split(r",|\band\b", s) if x.strip()]
    items = set(x.lstrip("%").lstrip(".") for x in items)
    tn = set(n.lstrip("%").lstrip(".") for n in title_names(entry["title"]))
    own = set(entry["opcode"].split("/"))
    if items == tn or items == own:
        return True
    # `vadd2, vsub2, varvg2, ...`: the list of the title's names with one misspelled
    return bool(own & items) and len(items & tn) >= max(1, len(tn) - 1) and len(items) == len(tn)


PTX_KEY_RE = re.compile(
    r"\b(introduced|added|preview feature|requires PTX ISA)\b", re.IGNORECASE
)
SM_KEY_RE = re.compile(
    r"\b(requires?|supported|support|available)\b", re.IGNORECASE
)


def parse_ptx_notes(entry, kind):
    base, preview, gates = None, False, []
    for s in sentences(entry["isa_notes"]):
        v = VER_RE.search(s)
        if not v or not PTX_KEY_RE.search(s):
            continue
        if re.search(r"\b(Redefined|clarified|defaults|For PTX ISA|removed)\b", s):
            continue
        ver = (int(v.group(1)), int(v.group(2)))
        if "preview feature" in s:
            preview = True
        subj = subject_of(s, re.compile(r"\b(introduced|added|is a preview|requires PTX)\b"))
        if re.match(r"^Introduced\b", s) or subject_is_entry(subj, entry, kind):
            base = ver if base is None else min(base, ver)
        else:
            gates.append({"feature": subj, "mods": mentioned_modifiers(subj), "ptx": ver})
    explicit = base is not None
    if base is None and gates:
        base = min(g["ptx"] for g in gates)
    return base, explicit, preview, gates


def parse_sm(m):
    return (int(m.group(1)), m.group(2) or "")


def parse_target_notes(entry, kind):
    """Returns (base, gates); base is 'all', ('min', (n, suffix)) or None."""
    base, gates = None, []
    lines = entry["target_notes"].split("\n")
    # `Rounding modifiers have the following target requirements:` blocks
    text_lines, ctx, in_block = [], None, False
    for raw in lines:
        s = raw.replace("\u2022", "").strip()
        if "following target requirements" in s:
            in_block = True
            continue
        if in_block:
            if re.match(r"^\.[\w]+(\s*,\s*\.[\w]+)*$", s):
                ctx = s
                continue
            if s.startswith("available for all targets"):
                gates.append({"feature": ctx, "mods": mentioned_modifiers(ctx), "sm": None})
                continue
            m = re.match(r"^(?:(\.[\w.,]+)\s+)?for\s+(\S+?),\s+requires\s+sm_(\d+)", s)
            if m:
                feat = "%s for %s" % (m.group(1) or ctx, m.group(2))
                gates.append(
                    {"feature": feat, "mods": mentioned_modifiers(feat), "sm": (int(m.group(3)), "")}
                )
                continue
            if not s:
                continue
            in_block = False
        text_lines.append(raw)
    for s in sentences("\n".join(text_lines)):
        if re.search(r"supported on all target architectures|available for all targets", s, re.I):
            subj = subject_of(s, re.compile(r"\b(is supported|supported)\b"))
            if re.match(r"^Supported\b", s) or subject_is_entry(subj, entry, kind):
                base = "all"
            else:
                gates.append({"feature": subj, "mods": mentioned_modifiers(subj), "sm": None})
            continue
        m = re.search(r"\brequires?\s+(?:target\s+|architecture\s+)?sm_?(\d+)([af]?)", s, re.I)
        if not m:
            m2 = re.search(r"\bsupport requires sm_(\d+)", s)
            if not m2:
                continue
            m = m2
        sm = (int(m.group(1)), m.group(2) if m.lastindex and m.lastindex >= 2 else "")
        subj = s[: m.start()].strip().rstrip(",")
        subj = re.sub(r"\s*support$", "", subj)
        if re.match(r"^Requires?\b", s) or subject_is_entry(subj, entry, kind):
            base = ("min", sm)
        else:
            gates.append({"feature": subj, "mods": mentioned_modifiers(subj), "sm": sm})
    return base, gates


# ---------------------------------------------------------------------------------------------
# ptxas gates: where ptxas and the ISA text disagree, ptxas wins
# ---------------------------------------------------------------------------------------------
# tools/probe-gates.py records, per probed instance, the least .version and .target at which
# ptxas accepts it (crates/isa/data/ptxas-gates.tsv, committed); follow_ptxas() makes the
# entry's gates and its per-feature gates agree with those rows. docs/ptxas-gates.md lists
# every change (tools/probe-gates.py --md-only rewrites it from the TSV).

PTXAS_GATES = os.path.join(ROOT, "crates", "isa", "data", "ptxas-gates.tsv")
_PTXAS = {}


def ptxas_rows(path=PTXAS_GATES):
    """(rows by entry key, every target ptxas knows in order) from the probe's TSV."""
    if path in _PTXAS:
        return _PTXAS[path]
    rows, targets, cols = {}, [], None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("# targets:"):
                    targets = line.split(":", 1)[1].split()
                    continue
                if not line or line.startswith("#"):
                    continue
                cells = line.split("\t")
                if cols is None:
                    cols = cells
                    continue
                r = dict(zip(cols, cells))
                r["mods"] = ptxas_instance_mods(r["instance"])
                rows.setdefault(r["key"], []).append(r)
    _PTXAS[path] = (rows, targets)
    return rows, targets


def ptxas_instance_mods(text):
    t = text.strip()
    if t.startswith("@"):
        t = t.split(None, 1)[1]
    head = t.split(None, 1)[0]
    return re.findall(r"\.[^.]+", head[head.find("."):]) if "." in head else []


def sm_of(text):
    m = re.match(r"^sm_(\d+)([af]?)$", text or "")
    return (int(m.group(1)), m.group(2)) if m else None


def sm_supports(have, need):
    """SmTarget::supports: may code for `have` use a feature that requires `need`?"""
    if need[1] == "":
        return have[0] >= need[0]
    if need[1] == "a":
        return have == need
    return have[1] in ("a", "f") and have[0] // 10 == need[0] // 10 and have[0] >= need[0]


def ptxas_accepting(row, targets):
    """The targets on which ptxas accepts a row's instance (at the newest .version)."""
    if row["targets"]:
        return frozenset(row["targets"].split(","))
    need = sm_of(row["min_target"])
    return frozenset(t for t in targets if sm_supports(sm_of(t), need))


def ptxas_version(row):
    """(least version, exact?) of a row: `<=` marks an upper bound."""
    v = row["min_ptx"]
    return tuple(int(x) for x in v.lstrip("<=").split(".")), not v.startswith("<=")


def ptxas_target_req(rows, targets, any_of=False):
    """The target requirement that describes exactly where ptxas accepts `rows` (any of them),
    as gen-isa's target base (`'all'` or `('min', sm)`; with `any_of`, also `('any', [sm..])`:
    one of several, as `setmaxnreg` on sm_90a and the sm_100+ families), or None."""
    union = frozenset().union(*[ptxas_accepting(r, targets) for r in rows])
    if not union:
        return None
    order = {t: n for n, t in enumerate(targets)}
    least = min(union, key=lambda t: order[t])
    exact = frozenset(t for t in targets if sm_supports(sm_of(t), sm_of(least)))
    if exact == union:
        return "all" if least == targets[0] else ("min", sm_of(least))
    if not any_of:
        return None
    # the fewest requirements, in target order, whose targets together are the accepted ones
    cover, got = [], frozenset()
    for t in sorted(union, key=lambda t: order[t]):
        mine = target_set(("min", sm_of(t)), targets)
        if t not in got and mine <= union:
            cover.append(sm_of(t))
            got |= mine
    return ("any", cover) if got == union else None


def target_set(req, targets):
    if req == "all":
        return frozenset(targets)
    needs = req[1] if req[0] == "any" else [req[1]]
    return frozenset(t for t in targets if any(sm_supports(sm_of(t), n) for n in needs))


def ptxas_least_version(rows):
    best, exact = None, False
    for r in rows:
        v, ex = ptxas_version(r)
        if best is None or v < best or (v == best and ex):
            best, exact = v, ex
    return best, exact


def fmt_target_req(req):
    if req is None:
        return "unstated"
    if req == "all":
        return "all targets"
    if req[0] == "any":
        return " or ".join("sm_%d%s" % n for n in req[1])
    return "sm_%d%s" % req[1]


def follow_ptxas(key, opcode, forms, kind, ptx, tbase, pgates, tgates, path=PTXAS_GATES):
    """The entry's gates made to agree with ptxas; returns (ptx, tbase, pgates, tgates, changes).

    Entry level, over all the entry's rows: a version or target ptxas accepts that the text
    does not is always taken; a stricter one only where every form of the entry has a probed
    base instance and the version is exact. Per feature, over the rows that carry all of a text
    gate's modifiers: the gate is relaxed to ptxas's least version/target where ptxas accepts
    more (never made stricter: the rows may not be the feature's earliest). Then a gate is added
    for every probed instance that ptxas accepts later or on fewer targets than the entry, keyed
    on all of its modifiers (see ptxas_gate_mods).
    """
    nforms = len(forms)
    rows_by_key, targets = ptxas_rows(path)
    rows = [r for r in rows_by_key.get(key, []) if r["min_target"] != "-"]
    if kind != "SpecialRegister":  # `bar` and `barrier` share sections but not their gates
        rows = [r for r in rows if ptxas_opcode(r) in opcode.split("/")]
    changes = []
    if not rows or not targets:
        return ptx, tbase, pgates, tgates, changes
    whole = rows
    forms_probed = set(int(r["form"]) for r in rows if r["form"] != "-" and r["source"] == "base")
    complete = bool(whole) and (
        forms_probed == set(range(nforms)) if nforms else kind == "SpecialRegister")
    if whole:
        v, exact = ptxas_least_version(whole)
        if ptx is not None and (v < ptx or (v > ptx and exact)):
            ok = v < ptx or (complete and ptxas_names_entry(whole, v, opcode))
            changes.append(("entry", "", "PTX %s" % fmt_v(ptx), "PTX %s" % fmt_v(v), ok))
            ptx = v if ok else ptx
        elif ptx is None and exact and complete and ptxas_names_entry(whole, v, opcode):
            changes.append(("entry", "", "PTX unstated", "PTX %s" % fmt_v(v), True))
            ptx = v
        req = ptxas_target_req(whole, targets, any_of=True)
        have = None if req is None else target_set(req, targets)
        text = frozenset(targets) if tbase is None else target_set(tbase, targets)
        if req is None:
            lst = sorted(frozenset().union(*[ptxas_accepting(r, targets) for r in whole]),
                         key=targets.index)
            if frozenset(lst) != text:
                changes.append(("entry", "", fmt_target_req(tbase),
                                "only " + ", ".join(lst), False))
        elif have != text:
            ok = have > text or complete
            changes.append(("entry", "", fmt_target_req(tbase), fmt_target_req(req), ok))
            tbase = req if ok else tbase
    new_p, new_t = [], []
    for g in pgates:
        g = dict(g)
        hits = [r for r in rows if g["mods"] and all(ptxas_has_mod(r, m, forms) for m in g["mods"])]
        if hits and g["ptx"] is not None:
            v, exact = ptxas_least_version(hits)
            if v < g["ptx"]:
                changes.append(("gate", g["feature"], "PTX %s" % fmt_v(g["ptx"]),
                                "PTX %s" % fmt_v(v), True))
                g["ptx"] = v
        new_p.append(g)
    for g in tgates:
        g = dict(g)
        hits = [r for r in rows if g["mods"] and all(ptxas_has_mod(r, m, forms) for m in g["mods"])]
        if hits and g["sm"] is not None:
            # several families where no one target says it (`ldmatrix.m8n16` on the sm_100,
            # sm_110 and sm_120 families): the gate lists them all (see emit_target_gate)
            req = ptxas_target_req(hits, targets, any_of=True)
            text = target_set(("min", g["sm"]), targets)
            if req is None:  # no set of targets says it: the widest one within what ptxas takes
                union = frozenset().union(*[ptxas_accepting(r, targets) for r in hits])
                fits = [("min", sm_of(t)) for t in targets
                        if text <= target_set(("min", sm_of(t)), targets) <= union]
                req = max(fits, key=lambda q: len(target_set(q, targets)), default=None)
            if req is not None and target_set(req, targets) > text:
                changes.append(("gate", g["feature"], fmt_target_req(("min", g["sm"])),
                                fmt_target_req(req), True))
                g["sm"] = None if req == "all" else req[1]
        new_t.append(g)
    # Gates ptxas has that the text does not state.
    entry_set = frozenset(targets) if tbase is None else target_set(tbase, targets)
    for r in rows:
        v, exact = ptxas_version(r)
        if exact and (ptx is None or v > ptx):
            mods = ptxas_gate_mods(r, rows, forms, lambda o: ptxas_version(o)[0] >= v)
            if mods is not None and not covered(new_p, mods, "ptx", v):
                feat = ptxas_opcode(r) + "".join(mods)
                new_p.append({"feature": feat, "mods": mods, "ptx": v, "ptxas": True})
                changes.append(("new", feat, "-", "PTX %s" % fmt_v(v), bool(mods)))
        req = ptxas_target_req([r], targets, any_of=True)
        if req not in (None, "all") and not (target_set(req, targets) >= entry_set):
            mine = target_set(req, targets)
            mods = ptxas_gate_mods(
                r, rows, forms, lambda o: ptxas_target_req([o], targets, any_of=True) is not None
                and ptxas_accepting(o, targets) <= mine)
            if mods is not None and not covered(new_t, mods, "sm", req[1]):
                feat = ptxas_opcode(r) + "".join(mods)
                new_t.append({"feature": feat, "mods": mods, "sm": req[1], "ptxas": True})
                changes.append(("new", feat, "-", fmt_target_req(req), bool(mods)))
    return ptx, tbase, new_p, new_t, changes


def ptxas_names_entry(rows, v, opcode):
    """Whether ptxas, just below version `v`, rejects the rows that need `v` for the instruction
    itself ("Feature 'sub.cc' requires ...") rather than for a modifier of the form the table
    writes ("Feature '.approx' requires ...": `sin.f32` without `.approx` is PTX 1.0 syntax that
    the table's forms do not spell, so the entry as a whole does not need 1.4)."""
    names = set(n.lstrip("%") for n in opcode.split("/"))
    for r in rows:
        if ptxas_version(r)[0] != v:
            continue
        m = re.search(r"^(?:Feature|Instruction) '%?([\w]+)", r.get("message", ""))
        if m and m.group(1) in names:
            return True
    return False


def ptxas_warn_stale(keys, path=PTXAS_GATES):
    """Says which entries of the probe's TSV the table no longer has (new sections can rename
    keys: the entry would silently fall back to the text's gates until the probe is rerun)."""
    rows, _targets = ptxas_rows(path)
    stale = sorted(set(rows) - set(keys))
    if stale:
        sys.stderr.write("warning: %s names entries the table lacks (rerun tools/probe-gates.py): "
                         "%s\n" % (os.path.relpath(path, ROOT), ", ".join(stale)))


def ptxas_opcode(row):
    t = row["instance"].strip()
    if t.startswith("@"):
        t = t.split(None, 1)[1]
    return t.split(None, 1)[0].split(".")[0]


def ptxas_has_mod(row, m, forms):
    """Whether a row's instance carries the gate modifier `m`, as the checker matches it
    (`gate_mod_present`): the modifier itself, a `::sub` ending, or a value of the placeholder
    slot that `m` names (`.sem` for `.acquire`)."""
    if m.startswith("::"):
        return any(x.endswith(m) for x in row["mods"])
    if m in row["mods"]:
        return True
    return any(s["placeholder"] and s["name"] == m and any(x in s["values"] for x in row["mods"])
               for f in forms for s in f["slots"])


def ptxas_gate_mods(row, rows, forms, at_least):
    """The modifiers a derived gate keys on: all of the row's modifiers, if every probed row
    the checker would apply the gate to (ptxas_has_mod) needs as much as the row (`at_least`);
    else None (the requirement comes from an operand or from a modifier left out, as with
    generic addressing, and no gate on modifiers can say it). No fewer modifiers: the probe
    varies one slot at a time, so a single modifier's rows (`atom.min` only with `.f16`
    vectors) say little about its other uses."""
    full = list(row["mods"])
    if all(at_least(o) for o in rows if all(ptxas_has_mod(o, m, forms) for m in full)):
        return full
    return None


def covered(gates, mods, field, value):
    """An existing gate already asks at least `value` of every instruction carrying `mods`."""
    for g in gates:
        if g.get(field) is None or not g["mods"] or not set(g["mods"]) <= set(mods):
            continue
        if field == "ptx" and g["ptx"] >= value:
            return True
        if field == "sm" and g["sm"] == value:
            return True
    return False


def fmt_v(v):
    return "%d.%d" % v if v else "unstated"


# ---------------------------------------------------------------------------------------------
# Rust emission
# ---------------------------------------------------------------------------------------------

def rs_str(s):
    out = '"'
    for ch in s:
        if ch == "\\":
            out += "\\\\"
        elif ch == '"':
            out += '\\"'
        elif ch == "\n":
            out += "\\n"
        elif ch == "\t":
            out += "\\t"
        elif ord(ch) < 0x20:
            out += "\\u{%x}" % ord(ch)
        else:
            out += ch
    return out + '"'


def rs_ver(v):
    if v is None:
        return "None"
    return "Some(PtxVersion::new(%d, %d))" % v


def rs_sm(sm):
    if sm is None:
        return "None"
    n, suf = sm
    variant = {"": "Base", "a": "ArchSpecific", "f": "FamilySpecific"}[suf]
    return "Some(SmTarget::sm(%d, ArchVariant::%s))" % (n, variant)


class Emitter:
    def __init__(self):
        self.str_lists = {}
        self.lines = []

    def str_list(self, values):
        key = tuple(values)
        if key not in self.str_lists:
            self.str_lists[key] = "S%d" % len(self.str_lists)
        return self.str_lists[key]


def summary_keys(data):
    """Short, stable keys for SUMMARIES: the opcode, qualified only where it is ambiguous.
    Sections of the supplement carry their own summary: their key is `@` + title and they do
    not count, so adding one never renames the key of a reference section."""
    ref = [e for e in data if "summary" not in e]
    it = iter(reference_summary_keys(ref))
    return ["@" + e["title"] if "summary" in e else next(it) for e in data]


def reference_summary_keys(data):
    count = {}
    for e in data:
        count[e["opcode"]] = count.get(e["opcode"], 0) + 1
    suffix_count = {}
    for e in data:
        k = (e["opcode"], e["title"].split(":", 1)[1].strip())
        suffix_count[k] = suffix_count.get(k, 0) + 1
    keys, seen = [], {}
    for e in data:
        k = e["opcode"]
        if count[k] > 1:
            suffix = e["title"].split(":", 1)[1].strip()
            if suffix_count[(k, suffix)] == 1:
                k += " " + suffix
            else:
                k += " " + category_of(e["title"]).split()[0].lower()
        seen[k] = seen.get(k, 0) + 1
        if seen[k] > 1:
            k += " #%d" % seen[k]
        keys.append(k)
    return keys


def build(data):
    em = Emitter()
    keys = summary_keys(data)
    ptxas_warn_stale(keys)
    entries = []
    stats = {"ptx": 0, "ptx_explicit": 0, "target": 0, "forms": 0, "no_forms": [],
             "ptx_gates": 0, "target_gates": 0}
    for idx, e in enumerate(data):
        kind = kind_of(e["title"])
        forms, defs = parse_syntax(e) if e["syntax"].strip() else ([], [])
        ptx, explicit, preview, pgates = parse_ptx_notes(e, kind)
        tbase, tgates = parse_target_notes(e, kind)
        ptx, tbase, pgates, tgates, _ = follow_ptxas(
            keys[idx], e["opcode"], forms, kind, ptx, tbase, pgates, tgates)
        stats["ptx"] += ptx is not None
        stats["ptx_explicit"] += explicit
        stats["target"] += tbase is not None or bool(tgates)
        stats["forms"] += len(forms)
        stats["ptx_gates"] += len(pgates)
        stats["target_gates"] += len(tgates)
        if not forms:
            stats["no_forms"].append(display_name(e["opcode"], kind))
        entries.append((idx, e, kind, forms, defs, ptx, preview, pgates, tbase, tgates, keys[idx]))

    out = []
    w = out.append
    w("// @generated by tools/gen-isa.py from the PTX ISA reference extract. Do not edit by hand;")
    w("// edit the generator (or its SUMMARIES table) and run `python3 tools/gen-isa.py`.")
    w(digest_line())
    w("")
    w("use crate::{")
    w("    ArchVariant, Coverage, Definition, Entry, EntryKind, FeatureGate, Form, OperandSpec,")
    w("    PtxVersion, SmTarget, Slot, TargetReq,")
    w("};")
    w("")
    body = []
    b = body.append
    b("/// Every section of the reference, in the order of the source data (sorted by opcode).")
    b("pub(crate) static ENTRIES: &[Entry] = &[")
    missing = []
    for (idx, e, kind, forms, defs, ptx, preview, pgates, tbase, tgates, key) in entries:
        summary = e["summary"] if "summary" in e else SUMMARIES.get(key)
        if summary is None:
            missing.append(key)
            summary = ""
        b("    Entry {")
        b("        opcode: %s," % rs_str(e["opcode"]))
        b("        kind: EntryKind::%s," % kind)
        b("        title: %s," % rs_str(e["title"]))
        b("        category: %s," % rs_str(category_of(e["title"])))
        b("        names: &%s," % em.str_list(title_names(e["title"])))
        b("        anchor: %s," % rs_str(e.get("anchor") or anchor_of(e["title"])))
        b("        syntax: %s," % rs_str(e["syntax"]))
        b("        forms: &[")
        for f in forms:
            b("            Form {")
            b("                text: %s," % rs_str(f["text"]))
            b("                path: %s," % rs_str(f["path"]))
            b("                guard: %s," % ("true" if f["guard"] else "false"))
            b("                label: %s," % ("true" if f["label"] else "false"))
            b("                slots: &[")
            for s in f["slots"]:
                b(
                    "                    Slot { name: %s, optional: %s, placeholder: %s, values: &%s },"
                    % (
                        rs_str(s["name"]),
                        "true" if s["optional"] else "false",
                        "true" if s["placeholder"] else "false",
                        em.str_list(s["values"]),
                    )
                )
            b("                ],")
            b("                operands: &[")
            for o in f["operands"]:
                b(
                    "                    OperandSpec { text: %s, name: %s, optional: %s, negatable: %s, address: %s },"
                    % (
                        rs_str(o["text"]),
                        rs_str(o["name"]),
                        "true" if o["optional"] else "false",
                        "true" if o["negatable"] else "false",
                        "true" if o["address"] else "false",
                    )
                )
            b("                ],")
            b("            },")
        b("        ],")
        b("        definitions: &[")
        for d in defs:
            b(
                "            Definition { name: %s, values: &%s },"
                % (rs_str(d["name"]), em.str_list(d["values"]))
            )
        b("        ],")
        b("        ptx: %s," % rs_ver(ptx))
        b("        preview: %s," % ("true" if preview else "false"))
        if tbase is None:
            b("        target: TargetReq::Unstated,")
        elif tbase == "all":
            b("        target: TargetReq::All,")
        elif tbase[0] == "any":
            b("        target: TargetReq::AnyOf(&[%s]),"
              % ", ".join(rs_sm(n)[5:-1] for n in tbase[1]))
        else:
            b("        target: TargetReq::Min(%s)," % rs_sm(tbase[1])[5:-1])
        b("        ptx_gates: &[")
        for g in pgates:
            b(
                "            FeatureGate { feature: %s, modifiers: &%s, ptx: %s, sm: None },"
                % (rs_str(g["feature"]), em.str_list(g["mods"]), rs_ver(g["ptx"]))
            )
        b("        ],")
        b("        target_gates: &[")
        for g in tgates:
            # an any-of gate (a list of targets) is written as one gate per target, in a row, all
            # with the same feature and modifiers: the crate reads such a run as alternatives
            # (`Entry::target_gate_runs`)
            for sm in (g["sm"] if isinstance(g["sm"], list) else [g["sm"]]):
                b(
                    "            FeatureGate { feature: %s, modifiers: &%s, ptx: None, sm: %s },"
                    % (rs_str(g["feature"] or ""), em.str_list(g["mods"]), rs_sm(sm))
                )
        b("        ],")
        b("        summary: %s," % rs_str(summary))
        b("        coverage: Coverage { parses: true },")
        b("    },")
    b("];")
    b("")
    # lookup index
    index = {}
    for (idx, e, kind, *_rest) in entries:
        for n in lookup_names(e["opcode"], kind):
            index.setdefault(n, []).append(idx)
    b("/// Lookup names (no `%`/`.` prefix), sorted, with the range of their entries.")
    b("pub(crate) static INDEX: &[(&str, usize, usize)] = &[")
    for n in sorted(index):
        ids = index[n]
        assert ids == list(range(ids[0], ids[-1] + 1)), "entries of %s are not adjacent" % n
        b("    (%s, %d, %d)," % (rs_str(n), ids[0], ids[-1] + 1))
    b("];")

    for values, name in sorted(em.str_lists.items(), key=lambda kv: int(kv[1][1:])):
        w("static %s: [&str; %d] = [%s];" % (name, len(values), ", ".join(rs_str(v) for v in values)))
    w("")
    out.extend(body)
    return "\n".join(out) + "\n", stats, missing, keys


# ---------------------------------------------------------------------------------------------
# The supplement: instructions and forms of PTX ISA 9.x that the reference extract lacks
# ---------------------------------------------------------------------------------------------
#
# crates/isa/data/supplement.json holds two lists:
#   "sections":   new entries in the reference's shape: title, opcode, syntax, isa_notes,
#                 target_notes, examples, plus `summary` (one line in our own words) and, where
#                 the ISA's link anchor is not the one derived from the title, `anchor`. The
#                 text fields may be a string or a list of lines.
#   "extensions": additions to a reference section: `title` (and `occurrence`, 1-based, when
#                 several sections share the title) names it; `syntax`, `isa_notes`,
#                 `target_notes` and `examples` are appended to its fields after a blank line,
#                 so the added forms form their own group with their own value sets.
# The notes use the reference's phrasing ("Introduced in PTX ISA version X.Y.", "Requires
# sm_NN or higher.", "Support for .mod introduced in PTX ISA version X.Y.") so that the same
# extraction yields the gates. The versions and targets are the ISA text's; a probe of ptxas
# may override them.

SECTION_FIELDS = ("title", "opcode", "syntax", "isa_notes", "target_notes", "examples", "summary")
OPTIONAL_SECTION_FIELDS = ("anchor",)  # where the ISA's anchor is not derived from the title
EXTENSION_FIELDS = ("title", "occurrence", "syntax", "isa_notes", "target_notes", "examples")
TEXT_FIELDS = ("syntax", "isa_notes", "target_notes", "examples")


def supplement_text(v):
    return "\n".join(v) if isinstance(v, list) else v


def load_supplement(path):
    with open(path, encoding="utf-8") as f:
        supp = json.load(f)
    problems = validate_supplement(supp)
    if problems:
        raise SystemExit("%s:\n  %s" % (path, "\n  ".join(problems)))
    return supp


def validate_supplement(supp):
    """The shape of the supplement, and that every section's syntax parses into forms whose
    path starts with its opcode and whose examples name one of those paths."""
    problems = []
    if set(supp) - {"about", "sections", "extensions"}:
        problems.append("unknown top-level keys %r" % sorted(set(supp) - {"about", "sections", "extensions"}))
    titles = set()
    for i, e in enumerate(supp.get("sections", [])):
        where = "sections[%d] (%s)" % (i, e.get("title"))
        missing = [k for k in SECTION_FIELDS if k not in e]
        extra = [k for k in e if k not in SECTION_FIELDS + OPTIONAL_SECTION_FIELDS]
        if missing or extra:
            problems.append("%s: missing %r, unknown %r" % (where, missing, extra))
            continue
        if e["title"] in titles:
            problems.append("%s: duplicate title" % where)
        titles.add(e["title"])
        if not e["summary"].strip():
            problems.append("%s: empty summary" % where)
        sec = {k: supplement_text(e[k]) for k in e}
        forms, _defs = parse_syntax(sec)
        if not forms:
            problems.append("%s: the syntax has no forms" % where)
        paths = {f["path"] for f in forms}
        if kind_of(sec["title"]) != "Instruction":
            continue  # directive examples are whole kernels
        for f in forms:
            if f["path"].split(".")[0] not in sec["opcode"].split("/"):
                problems.append("%s: form %r does not start with the opcode" % (where, f["text"]))
            for sl in f["slots"]:
                if not sl["values"]:
                    problems.append("%s: slot %s of %r has no values" % (where, sl["name"], f["text"]))
        for line in sec["examples"].split("\n"):
            code = strip_comment(line).strip()
            if code.startswith("@"):
                code = code.split(None, 1)[1]
            if not code or code.endswith(":"):
                continue
            word = code.split()[0]
            if not any(word == p or word.startswith(p + ".") for p in paths):
                problems.append("%s: example %r uses none of the forms' paths %r" % (where, code, sorted(paths)))
    for i, x in enumerate(supp.get("extensions", [])):
        where = "extensions[%d] (%s)" % (i, x.get("title"))
        extra = [k for k in x if k not in EXTENSION_FIELDS]
        if "title" not in x or extra:
            problems.append("%s: no title, or unknown keys %r" % (where, extra))
    return problems


def merge_supplement(data, supp):
    """The reference with the supplement's extensions appended and its sections inserted after
    the reference sections of the same opcode (the data stays sorted by opcode, so that the
    entries of one lookup name stay adjacent)."""
    data = [dict(e) for e in data]
    for x in supp.get("extensions", []):
        hits = [e for e in data if e["title"] == x["title"]]
        n = x.get("occurrence", 1)
        if len(hits) < n:
            raise SystemExit("supplement: extension of %r: no such section in the reference" % x["title"])
        e = hits[n - 1]
        for k in TEXT_FIELDS:
            if k in x:
                e[k] = (e[k].rstrip("\n") + "\n\n" + supplement_text(x[k])).strip("\n")
    for s in supp.get("sections", []):
        if any(e["title"] == s["title"] for e in data):
            raise SystemExit("supplement: section %r is already in the reference; make it an extension" % s["title"])
        data.append({k: supplement_text(v) for k, v in s.items()})
    data.sort(key=lambda e: e["opcode"])  # stable: reference order kept, supplement after
    return data


def file_digest(path):
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def digest_line():
    """A header line that lets `--check` verify the file without the reference extract."""
    return "// inputs: supplement.json sha256 %s, gen-isa.py sha256 %s, ptxas-gates.tsv sha256 %s" % (
        file_digest(SUPPLEMENT),
        file_digest(os.path.abspath(__file__)),
        file_digest(PTXAS_GATES),
    )


def check_without_reference(out_path, supplement, spec):
    """`--check` when the reference extract is absent: the supplement was validated on
    loading; the generated file must record the digests of this supplement and generator."""
    with open(out_path, encoding="utf-8") as f:
        head = f.read(2000).split("\n")
    if digest_line() not in head:
        sys.stderr.write(
            "%s was not generated from this supplement.json and gen-isa.py; run "
            "tools/gen-isa.py with the reference extract (../shared/spec)\n" % out_path
        )
        return 1
    print(
        "gen-isa.py --check: reference extract not found (%s); checked the supplement (%d "
        "sections, %d extensions) and the input digests only, not a full regeneration"
        % (spec, len(supplement.get("sections", [])), len(supplement.get("extensions", [])))
    )
    return 0

# ---------------------------------------------------------------------------------------------
# The typed instruction set: `Opcode`, `Modifier` and the per-opcode flags
# (written to crates/isa/src/generated_ops.rs)
# ---------------------------------------------------------------------------------------------

DEFAULT_OPS_OUT = os.path.join(ROOT, "crates", "isa", "src", "generated_ops.rs")

# Trailing path segments that the ISA writes in a form's path but that are modifiers of the
# instruction, not part of its name: `add.cc` is `add` with `.cc`, `ld.global.nc` is `ld` with
# `.global.nc`, `shfl.sync` is `shfl` with `.sync`.
PATH_MODIFIER_TAILS = [
    ("add", ".cc"), ("sub", ".cc"), ("mad", ".cc"), ("ld", ".global.nc"), ("brx", ".idx"),
    ("rcp", ".approx.ftz.f64"), ("rsqrt", ".approx.ftz.f64"), ("shfl", ".sync"),
    ("vote", ".sync"), ("redux", ".sync"), ("elect", ".sync"), ("match", ".sync"),
]

# Instructions that real PTX uses but that no form of the reference extract names yet; each is an
# `Opcode` all the same, so that later stages can name it.
EXTRA_OPCODES = [
    "bfi", "bfind", "bmsk", "clusterlaunchcontrol", "ldmatrix", "mma", "mma.sp", "movmatrix",
    "stmatrix", "tcgen05", "tensormap", "wgmma", "wmma", "vote", "shfl",
]

# Modifiers that every instruction may take, or that the ISA names only in prose.
EXTRA_MODIFIERS = [".uni", ".sync", ".aligned", ".b128", ".v8", ".x4", ".x2", ".x1", ".trans",
                   ".shiftamt", ".tensormap::generic", ".row", ".col", ".load", ".store", ".mma",
                   ".mma_async", ".d", ".m8n8", ".m16n8k8", ".m16n8k16", ".m16n16k16",
                   ".m64n64k16", ".fence"]

# Per-opcode facts the later passes need (by opcode name):
# - dest_first: the first operand is written and never read.
# - no_dest: no operand is written (every register operand is read).
# - pure: computed lane by lane from the operands alone (no memory, no warp state): hoistable.
# - convertible: does the same for each lane with or without the other lanes present, so a
#   branch around it may become a guard on it (if-conversion).
OP_FLAGS = {
    "dest_first": """vabsdiff4 abs activemask add addc and atom bfe bfi bfind bmsk brev clz cnot copysign
        cos cvt cvt.pack cvta div dp2a dp4a elect ex2 fma fns isspacep ld ldmatrix ldu lg2 lop3 mad
        mad24 madc mapa match max min mma movmatrix mov mul mul24 neg not or popc prmt rcp redux rem rsqrt
        sad selp set setp shf shfl shl shr sin slct sqrt sub subc szext tanh testp vote xor""",
    "no_dest": """bra brx exit fence membar nanosleep pmevent prefetch prefetchu red ret st
        stmatrix trap""",
    "pure": """vabsdiff4 abs add and bfe bfi bfind brev clz cnot cvt cvt.pack cvta mad mad24 max min mov
        mul mul24 neg not or popc prmt selp setp shl shr slct sub xor""",
    "convertible": """vabsdiff4 abs add and atom bfe bfi bfind brev clz cnot cvt cvt.pack cvta ld mad mad24
        max min mov mul mul24 neg not or popc prmt red selp setp shl shr slct st sub xor""",
    # writes memory through its address operand: the checker judges its state space and
    # forbids writes to a kernel's input parameters
    "writes_memory": """atom red red.async st st.async st.bulk""",
    # the table's forms of the instruction (and of the others of its word) are complete: the
    # checker rejects any other modifier and any combination no form takes
    "complete_forms": """vabsdiff4 vadd4 vsub4 vavrg4 vmin4 vmax4 vabsdiff2 vadd2 vsub2 vavrg2 vmin2 vmax2 abs add and atom bra call cvt cvt.pack cvta div fma ld mad max min
        mov mul neg not or red red.async rem ret selp setp shl shr st st.async st.bulk sub
        xor""",
}


def opcode_of_path(path):
    for op, tail in PATH_MODIFIER_TAILS:
        if path == op + tail:
            return op
    return path


def instruction_paths(data):
    """Every instruction opcode name: the reference's form paths (modifier tails removed) and
    the extra ones."""
    names = set(EXTRA_OPCODES)
    for e in data:
        if kind_of(e["title"]) != "Instruction" or not e["syntax"].strip():
            continue
        forms, _ = parse_syntax(e)
        for f in forms:
            names.add(opcode_of_path(f["path"]))
    return sorted(names)


def vocabulary_suffixes():
    """The suffixes of `ScalarType` and `StateSpace` (crates/isa/src/types.rs): each is a
    modifier too."""
    with open(os.path.join(ROOT, "crates", "isa", "src", "types.rs"), encoding="utf-8") as f:
        return set(re.findall(r'=>? "(\.[a-z0-9_:]+)"', f.read()))


def all_modifiers(data):
    """Every single modifier spelling of the instruction forms: path segments after the opcode,
    slot values and value-set definitions, split into single modifiers."""
    mods = set(EXTRA_MODIFIERS) | vocabulary_suffixes()

    def add(v):
        for part in re.findall(r"\.[^.]+", v):
            if re.match(r"^\.[A-Za-z0-9_]+(::[A-Za-z0-9_]+)*$", part):
                mods.add(part)

    for e in data:
        if kind_of(e["title"]) != "Instruction" or not e["syntax"].strip():
            continue
        forms, defs = parse_syntax(e)
        for f in forms:
            for seg in f["path"].split(".")[1:]:
                add("." + seg)
            for sl in f["slots"]:
                for v in sl["values"]:
                    add(v)
        for d in defs:
            for v in d["values"]:
                add(v)
    return sorted(mods)


def rust_ident(text):
    """`.shared::cta` -> `SharedCta`, `cp.async.bulk` -> `CpAsyncBulk`, `.L2::64B` -> `L2_64B`."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", text) if w]
    out = ""
    for w in words:
        piece = w[0].upper() + w[1:]
        if out and out[-1].isdigit() and piece[0].isdigit():
            out += "_"
        out += piece
    if out[0].isdigit():
        out = "N" + out
    return out


def build_ops(data):
    ops = instruction_paths(data)
    mods = all_modifiers(data)
    flags = {k: set(v.split()) for k, v in OP_FLAGS.items()}
    for k, names in flags.items():
        unknown = names - set(ops)
        assert not unknown, "OP_FLAGS[%s] names unknown opcodes %r" % (k, sorted(unknown))
    op_ids = [rust_ident(o) for o in ops]
    assert len(set(op_ids)) == len(op_ids), "opcode identifiers collide"
    mod_ids = {}
    for m in mods:
        i = rust_ident(m)
        while i in mod_ids.values():
            i += "_"
        mod_ids[m] = i
    out = []
    w = out.append
    w("// @generated by tools/gen-isa.py from the PTX ISA reference extract. Do not edit by hand;")
    w("// edit the generator (its OP_FLAGS, EXTRA_OPCODES, EXTRA_MODIFIERS) and run")
    w("// `python3 tools/gen-isa.py`.")
    w("")
    w("use crate::opcode::OpFlags;")
    w("")
    w("/// A PTX instruction: the opcode and the path segments that name a distinct instruction")
    w("/// (`cp.async.bulk.tensor`, `mbarrier.arrive`, `bar.warp.sync`); modifiers that only")
    w("/// qualify it (`.cc`, `.sync`, `.global.nc`) are [`Modifier`]s.")
    w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]")
    w("pub enum Opcode {")
    for o, i in zip(ops, op_ids):
        w("    /// `%s`" % o)
        w("    %s," % i)
    w("}")
    w("")
    w("impl Opcode {")
    w("    /// Every opcode, sorted by name.")
    w("    pub const ALL: &'static [Opcode] = &[")
    for i in op_ids:
        w("        Opcode::%s," % i)
    w("    ];")
    w("")
    w("    /// The name as PTX writes it: `cp.async.bulk`.")
    w("    pub const fn name(self) -> &'static str {")
    w("        match self {")
    for o, i in zip(ops, op_ids):
        w("            Opcode::%s => %s," % (i, rs_str(o)))
    w("        }")
    w("    }")
    w("")
    w("    /// What the later passes need to know of the instruction.")
    w("    pub const fn flags(self) -> OpFlags {")
    w("        match self {")
    groups = {}
    for o, i in zip(ops, op_ids):
        fl = [k for k in OP_FLAGS if o in flags[k]]
        groups.setdefault(tuple(fl), []).append(i)
    for fl, ids in sorted(groups.items()):
        expr = " .union(".join("OpFlags::" + f.upper() for f in fl)
        if fl:
            expr = "OpFlags::" + fl[0].upper() + "".join(".union(OpFlags::%s)" % f.upper() for f in fl[1:])
        else:
            expr = "OpFlags::NONE"
        pat = " | ".join("Opcode::" + i for i in ids)
        w("            %s => %s," % (pat, expr))
    w("        }")
    w("    }")
    w("}")
    w("")
    w("/// One instruction modifier, as written after a dot: `.rn`, `.f32`, `.shared::cta`.")
    w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]")
    w("#[repr(u16)]")
    w("pub enum Modifier {")
    for m in mods:
        w("    /// `%s`" % m)
        w("    %s," % mod_ids[m])
    w("}")
    w("")
    w("impl Modifier {")
    w("    /// How many modifiers there are.")
    w("    pub const COUNT: usize = %d;" % len(mods))
    w("")
    w("    /// Every modifier, sorted by spelling.")
    w("    pub const ALL: &'static [Modifier] = &[")
    for m in mods:
        w("        Modifier::%s," % mod_ids[m])
    w("    ];")
    w("")
    w("    /// The spelling with its leading dot: `.shared::cta`.")
    w("    pub const fn text(self) -> &'static str {")
    w("        MODIFIER_TEXT[self as usize]")
    w("    }")
    w("}")
    w("")
    w("/// The spelling of each modifier, in the order of [`Modifier::ALL`] (sorted: binary search).")
    w("pub(crate) static MODIFIER_TEXT: [&str; %d] = [" % len(mods))
    for m in mods:
        w("    %s," % rs_str(m))
    w("];")
    return "\n".join(out) + "\n"


def main(argv):
    spec, out_path = DEFAULT_SPEC, DEFAULT_OUT
    args = list(argv)
    if "--spec" in args:
        spec = args[args.index("--spec") + 1]
    if "--out" in args:
        out_path = args[args.index("--out") + 1]
    ops_out_path = DEFAULT_OPS_OUT
    if "--ops-out" in args:
        ops_out_path = args[args.index("--ops-out") + 1]
    supplement = load_supplement(SUPPLEMENT)
    if not os.path.exists(spec) and "--check" in args:
        return check_without_reference(out_path, supplement, spec)
    with open(spec, encoding="utf-8") as f:
        data = merge_supplement(json.load(f), supplement)
    text, stats, missing, keys = build(data)
    if "--template" in args:
        for k in missing:
            print("    %s: \"\"," % json.dumps(k))
        return 0
    extra = sorted(set(SUMMARIES) - set(keys))
    if missing or extra:
        sys.stderr.write("summaries missing: %r\nsummaries unused: %r\n" % (missing, extra))
        return 1
    if "--stats" in args:
        print("entries: %d" % len(data))
        print("entries with a PTX version: %d (explicit base %d)" % (stats["ptx"], stats["ptx_explicit"]))
        print("entries with a target statement: %d" % stats["target"])
        print("forms: %d; per-feature PTX gates: %d; per-feature target gates: %d"
              % (stats["forms"], stats["ptx_gates"], stats["target_gates"]))
        print("entries without syntax forms: %d: %s" % (len(stats["no_forms"]), " ".join(stats["no_forms"])))
    outputs = [(out_path, text), (ops_out_path, build_ops(data))]
    if "--check" in args:
        for path, content in outputs:
            with open(path, encoding="utf-8") as f:
                if f.read() != content:
                    sys.stderr.write("%s is out of date; run tools/gen-isa.py\n" % path)
                    return 1
        return 0
    for path, content in outputs:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(content)
    return 0


# ---------------------------------------------------------------------------------------------
# Summaries (our own words)
# ---------------------------------------------------------------------------------------------
SUMMARIES.update({
    "abs floating": "Absolute value of an f32 or f64 number; .ftz flushes subnormals.",
    "abs half": "Absolute value of f16/bf16 values, scalar or packed in pairs.",
    "abs integer": "Absolute value of a signed integer.",
    "activemask": "Returns a bit mask of the lanes in the warp that are currently executing.",
    "add floating": "Sums two f32 or f64 values with an optional rounding mode, .ftz and .sat.",
    "add half": "Sums f16/bf16 values, scalar or packed pairs.",
    "add integer": "Sums two integers (wrapping, or saturating for .s32 .sat); packed 16x2 too.",
    "add add.cc": "Integer add that also writes the carry flag for a following addc.",
    "addc": "Integer add that consumes the carry flag, and optionally writes it again.",
    "address_size": "Declares whether the module uses 32- or 64-bit addresses.",
    "aggr_smem_size": "Read-only: total shared memory of the CTA, reserved part included.",
    "alias": "Makes one function symbol another name for an existing function.",
    "alloca": "Reserves a block on the thread's local stack and yields its address.",
    "and": "Bitwise AND of two values (or logical AND of predicates).",
    "applypriority": "Changes the L2 eviction priority of a cached global memory range.",
    "atom": "Atomic read-modify-write on global or shared memory; returns the old value.",
    "bar bar, barrier": "CTA-wide barrier: wait for, arrive at, or reduce a predicate across threads.",
    "bar bar.warp.sync": "Makes the lanes named in a mask wait for each other within the warp.",
    "barrier bar, barrier": "CTA-wide barrier (newer spelling); .aligned asserts all threads take it.",
    "barrier barrier.cluster": "Cluster-wide barrier, split into an arrive and a wait step.",
    "bfe": "Pulls a bit field out of a register, zero- or sign-extending it.",
    "bra": "Jumps to a label, under a guard predicate when one is given.",
    "branchtargets": "Lists the labels an indirect brx.idx may jump to.",
    "brev": "Reverses the order of the bits of a value.",
    "brkpt": "Halts execution at a breakpoint for a debugger.",
    "brx": "Indirect jump: picks a label from a .branchtargets list by index.",
    "call": "Calls a function directly or through a pointer, passing parameters.",
    "callprototype": "Declares the signature of functions reached by indirect calls.",
    "calltargets": "Lists the functions an indirect call may reach.",
    "clock": "Read-only: low 32 bits of a per-SM cycle counter.",
    "clock64": "Read-only: the 64-bit per-SM cycle counter.",
    "clock_hi": "Read-only: high 32 bits of the per-SM cycle counter.",
    "cluster_ctaid": "Read-only: position of this CTA inside its cluster (x, y, z).",
    "cluster_ctarank": "Read-only: linear rank of this CTA inside its cluster.",
    "cluster_nctaid": "Read-only: size of the cluster in CTAs per dimension.",
    "cluster_nctarank": "Read-only: number of CTAs in the cluster.",
    "clusterid": "Read-only: position of this cluster inside the grid (x, y, z).",
    "clz": "Counts the zero bits above the highest set bit.",
    "cnot": "C-style logical negation: 1 when the input is zero, else 0.",
    "common": "Declares a global variable that several modules may define; the largest wins.",
    "copysign": "Returns the first value's magnitude with the second value's sign.",
    "cos": "Approximate cosine of an f32 angle in radians.",
    "cp cp.async": "Starts an asynchronous copy of 4-16 bytes from global to shared memory.",
    "cp cp.async.bulk": "Starts an asynchronous bulk copy between global, shared and cluster memory.",
    "cp cp.async.bulk.commit_group": "Closes the current group of bulk async copies.",
    "cp cp.async.bulk.prefetch": "Hints that a global memory range should be brought into L2.",
    "cp cp.async.bulk.prefetch.tensor": "Hints that a tile of a tensor in global memory should be brought into L2.",
    "cp cp.async.bulk.tensor": "Starts an asynchronous copy of a tensor tile described by a tensor map.",
    "cp cp.async.bulk.wait_group": "Waits until at most N bulk async-copy groups are still pending.",
    "cp cp.async.commit_group": "Closes the current group of cp.async copies.",
    "cp cp.async.mbarrier.arrive": "Has an mbarrier observe the completion of this thread's earlier cp.async copies.",
    "cp data": "Waits for earlier cp.async groups: all of them, or all but the newest N.",
    "cp data #2": "Waits for earlier cp.async groups: all of them, or all but the newest N.",
    "cp cp.reduce.async.bulk": "Asynchronous bulk reduction of a memory range into a destination range.",
    "cp cp.reduce.async.bulk.tensor": "Asynchronous reduction of a tensor tile into global memory.",
    "createpolicy": "Builds a 64-bit cache eviction policy value for later memory operations.",
    "ctaid": "Read-only: position of this CTA inside the grid (x, y, z).",
    "current_graph_exec": "Read-only: handle of the CUDA graph being executed, or zero.",
    "cvt cvt": "Converts a value between numeric types, with rounding and saturation options.",
    "cvt cvt.pack": "Converts and narrows integers with saturation, packing them into one register.",
    "cvta": "Turns a state-space address into a generic address, or back.",
    "discard": "Drops a cached global range from L2 without writing it back.",
    "div floating": "Division of f32/f64: approximate, full-range or correctly rounded.",
    "div integer": "Integer quotient, truncated toward zero.",
    "dp2a": "Two-way dot product of 16-bit halves with 8-bit bytes, plus an accumulator.",
    "dp4a": "Four-way dot product of packed bytes, plus an accumulator.",
    "dynamic_smem_size": "Read-only: bytes of shared memory allocated at launch time.",
    "elect": "Picks one leader lane out of the lanes named in a mask.",
    "entry": "Defines a kernel, the function the host launches.",
    "envreg<32>": "Read-only: 32 driver-defined environment registers, %envreg0..%envreg31.",
    "ex2 floating": "Approximate base-2 exponential of an f32 value.",
    "ex2 half": "Approximate base-2 exponential of f16/bf16 values.",
    "exit": "Ends the executing thread.",
    "explicitcluster": "States that the kernel must be launched with a cluster shape.",
    "extern": "Declares a symbol that is defined in another module.",
    "file": "Gives a source file an index for .loc line information.",
    "fma floating": "Fused multiply-add of f32/f64 with a single rounding.",
    "fma half": "Fused multiply-add of f16/bf16 values, optionally clamping negatives to zero.",
    "fns": "Finds the position of the n-th set bit of a mask from a start position.",
    "func": "Defines or declares a device function with parameters and results.",
    "getctarank": "Returns the rank of the CTA that owns a shared::cluster address.",
    "globaltimer": "Read-only: a 64-bit nanosecond timer shared by the whole GPU.",
    "globaltimer_hi": "Read-only: high 32 bits of the global nanosecond timer.",
    "globaltimer_lo": "Read-only: low 32 bits of the global nanosecond timer.",
    "griddepcontrol": "Coordinates with dependent grids: let them start, or wait for prerequisites.",
    "gridid": "Read-only: an identifier of the running grid.",
    "is_explicit_cluster": "Read-only: true when the launch asked for clusters explicitly.",
    "isspacep": "Tests whether a generic address falls inside a given state space.",
    "istypep": "Tests whether an opaque handle is a texture, sampler or surface.",
    "laneid": "Read-only: index of this thread within its warp (0..31).",
    "lanemask_eq": "Read-only: a mask with only this lane's bit set.",
    "lanemask_ge": "Read-only: a mask of this lane and all higher lanes.",
    "lanemask_gt": "Read-only: a mask of the lanes above this one.",
    "lanemask_le": "Read-only: a mask of this lane and all lower lanes.",
    "lanemask_lt": "Read-only: a mask of the lanes below this one.",
    "ld ld": "Reads a scalar or vector from memory into registers.",
    "ld ld.global.nc": "Reads global memory through the non-coherent (read-only) cache path.",
    "ldu": "Reads a value that is the same for all threads of the warp.",
    "lg2": "Approximate base-2 logarithm of an f32 value.",
    "loc": "Ties the following instructions to a source file, line and column.",
    "lop3": "Any bitwise function of three inputs, chosen by an 8-bit truth table.",
    "mad floating": "Multiply then add for f32/f64, rounding once.",
    "mad integer": "Integer multiply then add, keeping the high, low or full product.",
    "mad mad.cc": "Integer multiply-add that writes the carry flag.",
    "mad24": "Multiply of 24-bit integers then add.",
    "madc": "Integer multiply-add that consumes the carry flag.",
    "mapa": "Maps a shared memory address to the same location in another CTA of the cluster.",
    "match": "Finds the lanes of a warp that hold the same value.",
    "max floating": "Larger of two f32/f64 values, with NaN handling options.",
    "max half": "Larger of two f16/bf16 values, scalar or packed.",
    "max integer": "Larger of two integers; packed 16x2 and ReLU variants too.",
    "maxclusterrank": "Caps the number of CTAs per cluster for a kernel.",
    "maxnreg": "Caps the number of registers each thread of a kernel may use.",
    "maxntid": "Caps the number of threads per CTA for a kernel.",
    "mbarrier mbarrier": "Barrier object in shared memory that tracks arrivals and transfers in phases.",
    "mbarrier mbarrier.arrive": "Signals arrival at an mbarrier and returns its phase state.",
    "mbarrier mbarrier.arrive_drop": "Arrives at an mbarrier and leaves its set of participants.",
    "mbarrier mbarrier.complete_tx": "Marks transaction bytes as completed on an mbarrier.",
    "mbarrier mbarrier.expect_tx": "Adds expected transaction bytes to an mbarrier's current phase.",
    "mbarrier mbarrier.init": "Sets up an mbarrier object with an expected arrival count.",
    "mbarrier mbarrier.inval": "Invalidates an mbarrier so its memory can be reused.",
    "mbarrier mbarrier.pending_count": "Extracts the number of outstanding arrivals from an mbarrier state.",
    "mbarrier mbarrier.test_wait/mbarrier.try_wait": "Checks (or waits a while) whether an mbarrier phase has finished.",
    "membar/fence": "Orders memory accesses at a scope, or between memory proxies.",
    "min floating": "Smaller of two f32/f64 values, with NaN handling options.",
    "min half": "Smaller of two f16/bf16 values, scalar or packed.",
    "min integer": "Smaller of two integers; packed 16x2 and ReLU variants too.",
    "minnctapersm": "Asks for at least this many CTAs to fit on one SM at once.",
    "mov data": "Copies a register, immediate, special register or symbol address.",
    "mov data #2": "Packs smaller values into a wider register, or splits one apart.",
    "mul floating": "Product of two f32/f64 values with an optional rounding mode.",
    "mul half": "Product of f16/bf16 values, scalar or packed.",
    "mul integer": "Integer product, keeping the high, low or full-width result.",
    "mul24": "Product of 24-bit integers, keeping the high or low part.",
    "multimem data": "Loads-and-reduces, stores or reduces across all copies of a multimem address.",
    "multimem data #2": "Loads-and-reduces, stores or reduces across all copies of a multimem address.",
    "multimem data #3": "Loads-and-reduces, stores or reduces across all copies of a multimem address.",
    "nanosleep": "Suspends the thread for roughly the given number of nanoseconds.",
    "nclusterid": "Read-only: number of clusters in the grid per dimension.",
    "nctaid": "Read-only: number of CTAs in the grid per dimension.",
    "neg floating": "Flips the sign of an f32/f64 value.",
    "neg half": "Flips the sign of f16/bf16 values.",
    "neg integer": "Two's-complement negation of a signed integer.",
    "noreturn": "Marks a function that never returns to its caller.",
    "not": "Bitwise complement (or logical negation of a predicate).",
    "nsmid": "Read-only: an upper bound on SM identifiers.",
    "ntid": "Read-only: number of threads in the CTA per dimension.",
    "nwarpid": "Read-only: an upper bound on warp identifiers.",
    "or": "Bitwise OR of two values (or logical OR of predicates).",
    "pm0": "Read-only: 32-bit performance monitor counters %pm0..%pm7.",
    "pm0_64": "Read-only: 64-bit performance monitor counters %pm0_64..%pm7_64.",
    "pmevent": "Raises one or more performance monitor events.",
    "popc": "Counts the set bits of a value.",
    "pragma": "Passes a hint string to the assembler.",
    "prefetch": "Hints that a memory line should be brought into a cache level.",
    "prefetchu": "Hints that a line should be brought into the uniform cache.",
    "prmt": "Assembles a 32-bit value from chosen bytes of two registers.",
    "rcp rcp": "Reciprocal of an f32/f64 value, approximate or correctly rounded.",
    "rcp rcp.approx.ftz.f64": "Fast, coarse reciprocal of an f64 value.",
    "red red": "Atomic reduction on global or shared memory that returns nothing.",
    "red red.async": "Asynchronous reduction into another CTA's shared memory, signalling an mbarrier.",
    "redux": "Reduces a value across the lanes named in a mask (add, min, max, bitwise).",
    "rem": "Integer remainder of a division.",
    "reqnctapercluster": "Fixes the cluster shape a kernel must be launched with.",
    "reqntid": "Fixes the CTA shape a kernel must be launched with.",
    "reserved_smem_offset_<2>": "Read-only: offsets of reserved shared memory regions, indexed 0 and 1.",
    "reserved_smem_offset_begin": "Read-only: start offset of the reserved shared memory region.",
    "reserved_smem_offset_cap": "Read-only: capacity of the reserved shared memory region.",
    "reserved_smem_offset_end": "Read-only: end offset of the reserved shared memory region.",
    "ret": "Returns from the current function.",
    "rsqrt rsqrt": "Approximate reciprocal square root.",
    "rsqrt rsqrt.approx.ftz.f64": "Fast, coarse reciprocal square root of an f64 value.",
    "sad": "Adds the absolute difference of two integers to a third.",
    "selp": "Chooses one of two values by a predicate.",
    "set comparison": "Compares two values and writes an all-ones/1.0 or zero result.",
    "set half": "Compares f16/bf16 values and writes a mask or 1.0/0.0 result.",
    "setmaxnreg": "Grows or shrinks the register budget of the warp at run time.",
    "setp comparison": "Compares two values and writes predicates, optionally combined with another.",
    "setp half": "Compares f16/bf16 values and writes predicates.",
    "shf": "Shifts a 64-bit pair of registers and keeps 32 bits (funnel shift).",
    "shfl": "Exchanges register values between lanes of a warp.",
    "shl": "Shift left, filling with zeros.",
    "shr": "Shift right, arithmetic for signed types and logical otherwise.",
    "sin": "Approximate sine of an f32 angle in radians.",
    "slct": "Chooses one of two values by the sign of a third operand.",
    "smid": "Read-only: identifier of the SM running this thread.",
    "sqrt": "Square root, approximate or correctly rounded.",
    "st st": "Writes a scalar or vector from registers to memory.",
    "st st.async": "Asynchronous store into another CTA's shared memory, signalling an mbarrier.",
    "stackrestore": "Resets the stack pointer to a value saved by stacksave.",
    "stacksave": "Captures the current stack pointer.",
    "sub floating": "Difference of two f32/f64 values with an optional rounding mode.",
    "sub half": "Difference of f16/bf16 values, scalar or packed.",
    "sub integer": "Difference of two integers (wrapping, or saturating for .s32 .sat).",
    "sub sub.cc": "Integer subtract that writes the borrow flag.",
    "subc": "Integer subtract that consumes the borrow flag.",
    "suld": "Reads from a surface at integer coordinates.",
    "suq": "Reads an attribute (size, format, ...) of a surface.",
    "sured": "Atomically reduces a value into a surface element.",
    "sust": "Writes to a surface at integer coordinates.",
    "szext": "Sign- or zero-extends the low bits of a value from a given width.",
    "tanh floating": "Approximate hyperbolic tangent of an f32 value.",
    "tanh half": "Approximate hyperbolic tangent of f16/bf16 values.",
    "target": "Names the GPU architecture and options the module is written for.",
    "testp": "Classifies a float (finite, NaN, subnormal, ...) into a predicate.",
    "tex": "Samples a texture at given coordinates.",
    "tid": "Read-only: position of this thread inside its CTA (x, y, z).",
    "tld4": "Gathers one colour channel of the four texels around a point.",
    "total_smem_size": "Read-only: shared memory of the CTA, static plus dynamic.",
    "trap": "Aborts the kernel with an error.",
    "txq": "Reads an attribute of a texture or sampler.",
    "vabsdiff": "Video op: absolute difference of selected bytes/halves, with an optional second op.",
    "vabsdiff2": "SIMD video op: per-half absolute difference.",
    "vabsdiff4": "SIMD video op: per-byte absolute difference.",
    "vadd": "Video op: sum of selected bytes/halves, with an optional second op.",
    "vadd2": "SIMD video op: per-half sum.",
    "vadd4": "SIMD video op: per-byte sum.",
    "vavrg2": "SIMD video op: per-half rounded average.",
    "vavrg4": "SIMD video op: per-byte rounded average.",
    "version": "States the PTX ISA version the module is written in.",
    "visible": "Makes a symbol visible to other modules.",
    "vmad": "Video op: multiply-add of selected bytes/halves with optional scaling.",
    "vmax": "Video op: larger of selected bytes/halves, with an optional second op.",
    "vmax2": "SIMD video op: per-half maximum.",
    "vmax4": "SIMD video op: per-byte maximum.",
    "vmin": "Video op: smaller of selected bytes/halves, with an optional second op.",
    "vmin2": "SIMD video op: per-half minimum.",
    "vmin4": "SIMD video op: per-byte minimum.",
    "vote": "Combines a predicate across the lanes of a warp (all, any, uniform, ballot).",
    "vset": "Video op: compares selected bytes/halves, with an optional second op.",
    "vset2": "SIMD video op: per-half comparison.",
    "vset4": "SIMD video op: per-byte comparison.",
    "vshl": "Video op: shift left with clamp or wrap of the shift amount.",
    "vshr": "Video op: shift right with clamp or wrap of the shift amount.",
    "vsub": "Video op: difference of selected bytes/halves, with an optional second op.",
    "vsub2": "SIMD video op: per-half difference.",
    "vsub4": "SIMD video op: per-byte difference.",
    "warpid": "Read-only: identifier of the warp within the SM (may change over time).",
    "weak": "Declares a symbol that a strong definition elsewhere may override.",
    "xor": "Bitwise exclusive OR of two values (or of predicates).",
})


# ---------------------------------------------------------------------------------------------
# Operand roles (written to crates/isa/src/generated_roles.rs; read by the checker's generic
# operand pass). Hand-written, in our own notation, from the operand descriptions of the ISA;
# independent of the reference extract, so a fresh clone regenerates it without ../shared.
#
# One line per opcode, optionally narrowed by modifiers that must all be written (`cp.async.bulk`
# is opcode `cp` with `.async` and `.bulk`; the line naming the most of an instruction's
# modifiers applies): `SELECTOR OPERAND...`, or `SELECTOR hand` for the irregular instructions
# whose operand rules are written by hand in crates/check/src/insn/operands.rs (the reason
# follows as a comment), or `SELECTOR ...` for operand lists the pass does not check (each with
# its reason), or `SELECTOR ()` for none. An operand is a name (used in the help lines) and a role:
#
#   d>TYPE    destination register (`_` allowed); `d>TYPE|p` may be paired with a predicate
#             destination (`d|p`)
#   a<TYPE    source: register or immediate of TYPE (integer literals only for non-float TYPE)
#   c<pred    predicate source; `c<!pred` may be negated (`!%p`)
#   p>pred    predicate destination
#   n#        immediate only (a constant expression)
#   a[]       memory address in brackets
#   t@        label
#   x*        anything (texture handles, vectors, variables where the role is not fixed)
#   ...?      a trailing `?` makes the operand optional (optional operands come last)
#
# TYPE is `T` (the instruction's last type modifier), `T1`/`T2`/`T3` (its first, second, third
# type modifier: `set.dtype.stype`), `W` (twice the width of T: `mul.wide`), `A` (an address:
# .u64, or .u32 under `.address_size 32`), or a type without its dot (`u32`, `b64`, `f16`).
# An operand whose TYPE cannot be resolved (no type modifier written) is checked for shape only.
# ---------------------------------------------------------------------------------------------

DEFAULT_ROLES_OUT = os.path.join(ROOT, "crates", "isa", "src", "generated_roles.rs")

ROLES = """
abs             d>T a<T
activemask      d>b32
add             hand    # .wide doubles the destination; .cc and the packed and mixed forms
add.f32.f16     d>f32 a<f16 c<f32
add.f32.bf16    d>f32 a<bf16 c<f32
add.f32x2       d>b64 a<b64 b<b64
addc            hand    # shares the arithmetic rule of add
alloca          ptr>T size<T immAlign#?
and             d>T a<T b<T
applypriority   a[] size#
atom            hand    # operands depend on .cas, .exch/.and/.or/.xor, the cache hint, vectors
bar             hand    # bar.sync, bar.arrive, bar.red and bar.warp.sync differ
barrier         hand    # as bar; barrier.cluster takes none
bfe             d>T a<T b<u32 c<u32
bfi             f>T a<T b<T c<u32 d<u32
bfind           d>u32 a<T
bmsk            d>b32 a<u32 b<u32
bra             hand    # the target must be a label of the function
brev            d>T a<T
brkpt           ()
brx             index<u32 tlist@
call            hand    # arguments against the callee's or prototype's parameters
clusterlaunchcontrol ...  # query and try_cancel forms differ in every operand
clz             d>u32 a<T
cnot            d>T a<T
copysign        d>T a<T b<T
cos             d>T a<T
cp              ...     # a cp form this table does not name
cp.async        dst[] src[] cp-size# src-size*? cache-policy*?
cp.async.commit_group ()
cp.async.wait_group N#
cp.async.wait_all ()
cp.async.mbarrier.arrive addr[]
cp.async.bulk   dstMem[] srcMem[] size<u32 mbar*? ctaMask*? cache-policy*?
cp.async.bulk.commit_group ()
cp.async.bulk.wait_group N#
cp.async.bulk.prefetch srcMem[] size<u32 cache-policy*?
cp.async.bulk.tensor ...  # the tensor coordinates are a vector inside the address
cp.async.bulk.prefetch.tensor ...  # the tensor coordinates are a vector inside the address
cp.reduce.async.bulk dstMem[] srcMem[] size<u32 mbar*? cache-policy*?
cp.reduce.async.bulk.tensor ...  # the tensor coordinates are a vector inside the address
createpolicy    cache-policy>b64 a*? primary-size*? total-size*?
cvt             hand    # the rounding and .ftz rules per conversion
cvt.pack        ...     # the packed conversions' operand types are not checked yet
cvt.rs          ...     # stochastic rounding: a third (random bits) operand; not checked yet
cvt.e2m1x2      ...     # sub-byte formats of PTX 8.6+: operand types not checked yet
cvt.e2m3x2      ...     # sub-byte formats of PTX 8.6+: operand types not checked yet
cvt.e3m2x2      ...     # sub-byte formats of PTX 8.6+: operand types not checked yet
cvt.ue8m0x2     ...     # sub-byte formats of PTX 8.6+: operand types not checked yet
cvt.e2m1x4      ...     # packed x4 formats: operand types not checked yet
cvt.e2m3x4      ...     # packed x4 formats: operand types not checked yet
cvt.e3m2x4      ...     # packed x4 formats: operand types not checked yet
cvt.e4m3x4      ...     # packed x4 formats: operand types not checked yet
cvt.e5m2x4      ...     # packed x4 formats: operand types not checked yet
cvta            hand    # a register or a variable, checked with the variable rules
discard         a[] size#
div             hand    # shares the arithmetic rule of add
dp2a            d>u32 a<u32 b<u32 c<u32  # ptxas refuses .f32 registers (tests/check/widths)
dp4a            d>u32 a<u32 b<u32 c<u32  # as dp2a
elect           d>b32|p membermask<b32
ex2             d>T a<T
exit            ()
fence           ()
fence.proxy.tensormap::generic a[]? size#?
fma             hand    # the rounding modifier and the relu forms
fma.f32.f16     d>f32 a<f16 b<f16 c<f32
fma.f32.bf16    d>f32 a<bf16 b<bf16 c<f32
fma.f32x2       d>b64 a<b64 b<b64 c<b64
fns             d>b32 mask<b32 base<b32 offset<b32
getctarank      d>u32 a*
griddepcontrol  ()
isspacep        p>pred a*    # ptxas takes 32- and 64-bit address registers alike
istypep         p>pred a*
ld              hand    # vectors, cache hints and the address
ldmatrix        ...     # vector destinations whose width depends on .num
ldu             hand    # as ld
lg2             d>T a<T
lop3            d>b32|p a<b32 b<b32 c<b32 immLut# q<!pred?
mad             hand    # .wide, .hi/.lo and the rounding rules of mad.f32
mad24           d>T a<T b<T c<T
madc            hand    # shares the rule of mad
mapa            d>T a* b<u32
match           d>u32|p a<T membermask<u32  # ptxas refuses .f32 for d and membermask
max             hand    # shares the arithmetic rule of add
max.f32         d>T a<T b<T c<T?
membar          ()
min             hand    # shares the arithmetic rule of add
min.f32         d>T a<T b<T c<T?
mma             ...     # matrix fragments are vectors of registers per shape and type
movmatrix       d>b32 a<b32
mov             hand    # pack/unpack vectors, special registers, variable addresses
mul             hand    # .wide doubles the destination
mul.f32x2       d>b64 a<b64 b<b64
mul24           d>T a<T b<T
multimem        ...     # ld_reduce, st and red take different operands and vectors
nanosleep       t<u32
neg             d>T a<T
not             d>T a<T
or              d>T a<T b<T
pmevent         a#
popc            d>u32 a<T
prefetch        a[]
prefetchu       a[]
prmt            d>b32 a<b32 b<b32 c<b32
rcp             d>T a<T
red             hand    # as atom
redux           dst>T src<T membermask<b32
rem             d>T a<T b<T
ret             ()
rsqrt           d>T a<T
sad             d>T a<T b<T c<T
selp            d>T a<T b<T c<pred
set             d>T1 a<T2 b<T2 c<!pred?
setmaxnreg      imm-reg-count#
setp            hand    # predicate pairs and the .ftz rule per type
shf             d>b32 a<b32 b<b32 c<u32
shfl            d>b32|p a<b32 b<b32 c<b32
shfl.sync       hand    # the member mask and the d|p pair
shl             d>T a<T b<u32
shr             d>T a<T b<u32
sin             d>T a<T
slct            d>T1 a<T1 b<T1 c<T2
sqrt            d>T a<T
st              hand    # vectors, cache hints, .async and the address
st.bulk         a[] size* initval#
stackrestore    a<T
stacksave       d>T
stmatrix        ...     # vector sources whose width depends on .num
sub             hand    # shares the arithmetic rule of add
sub.f32.f16     d>f32 a<f16 c<f32
sub.f32.bf16    d>f32 a<bf16 c<f32
sub.f32x2       d>b64 a<b64 b<b64
subc            hand    # shares the arithmetic rule of add
suld            ...     # vector destinations and [surface, coordinates] addresses
suq             d>b32 a[]
sured           ...     # [surface, coordinates] addresses
sust            ...     # [surface, coordinates] addresses and vector sources
szext           d>T a<T b<u32
tanh            d>T a<T
tcgen05         ...     # tensor memory addresses and descriptors per sub-instruction
tensormap       ...     # replace and cp_fenceproxy take different operands
testp           p>pred a<T
tex             ...     # vector destinations and [texture, sampler, coordinates] addresses
tld4            ...     # vector destinations and [texture, sampler, coordinates] addresses
trap            ()
txq             d>b32 a[] lod*?
vabsdiff        d>T1 a<T2 b<T3 c<T1?
vabsdiff2       d>T1 a<T2 b<T3 c<T1
vabsdiff4       d>T1 a<T2 b<T3 c<T1
vadd            d>T1 a<T2 b<T3 c<T1?
vadd2           d>T1 a<T2 b<T3 c<T1
vadd4           d>T1 a<T2 b<T3 c<T1
vavrg2          d>T1 a<T2 b<T3 c<T1
vavrg4          d>T1 a<T2 b<T3 c<T1
vmad            d>T1 a<T2 b<T3 c<T1
vmax            d>T1 a<T2 b<T3 c<T1?
vmax2           d>T1 a<T2 b<T3 c<T1
vmax4           d>T1 a<T2 b<T3 c<T1
vmin            d>T1 a<T2 b<T3 c<T1?
vmin2           d>T1 a<T2 b<T3 c<T1
vmin4           d>T1 a<T2 b<T3 c<T1
vote            d>pred a<!pred
vote.ballot     d>b32 a<!pred
vote.sync       hand    # the member mask, and .ballot writes a .b32
vote.sync.ballot hand   # as vote.sync
vset            d>u32 a<T1 b<T2 c<u32?
vset2           d>u32 a<T1 b<T2 c<u32
vset4           d>u32 a<T1 b<T2 c<u32
vshl            d>T1 a<T2 b<u32 c<T1?
vshr            d>T1 a<T2 b<u32 c<T1?
vsub            d>T1 a<T2 b<T3 c<T1?
vsub2           d>T1 a<T2 b<T3 c<T1
vsub4           d>T1 a<T2 b<T3 c<T1
wgmma           ...     # matrix descriptors and fragment vectors per shape
wmma            ...     # fragment vectors per shape, layout and type
xor             d>T a<T b<T
mbarrier        ...     # an mbarrier form this table does not name
mbarrier.init   addr[] count<b32
mbarrier.arrive state>b64 addr[] count<b32?
mbarrier.arrive_drop state>b64 addr[] count<b32?
mbarrier.arrive.expect_tx state>b64 addr[] txCount<b32
mbarrier.arrive_drop.expect_tx state>b64 addr[] txCount<b32
mbarrier.expect_tx addr[] txCount<b32
mbarrier.complete_tx addr[] txCount<b32
mbarrier.inval  addr[]
mbarrier.pending_count count>u32 state<b64
mbarrier.test_wait waitComplete>pred addr[] state<b64
mbarrier.test_wait.parity waitComplete>pred addr[] phaseParity<b32
mbarrier.try_wait waitComplete>pred addr[] state<b64 suspendTimeHint<u32?
mbarrier.try_wait.parity waitComplete>pred addr[] phaseParity<b32 suspendTimeHint<u32?
"""

ROLE_TYPES = {"T": "Ty::Last", "W": "Ty::Wide", "A": "Ty::Address", "T1": "Ty::Nth(0)",
              "T2": "Ty::Nth(1)", "T3": "Ty::Nth(2)"}
SCALAR_NAMES = {"b8": "B8", "b16": "B16", "b32": "B32", "b64": "B64", "b128": "B128",
                "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64", "s8": "S8", "s16": "S16",
                "s32": "S32", "s64": "S64", "f16": "F16", "bf16": "Bf16", "f32": "F32",
                "f64": "F64", "pred": "Pred"}
ROLE_RE = re.compile(r"^([A-Za-z_][\w-]*)(>|<!|<|#|\[\]|@|\*)([A-Za-z0-9]*)(\|[A-Za-z]\w*)?(\?)?$")


def role_type(t, line):
    if t in ROLE_TYPES:
        return ROLE_TYPES[t]
    if t in SCALAR_NAMES:
        return "Ty::Fixed(S::%s)" % SCALAR_NAMES[t]
    raise SystemExit("roles: unknown type %r in %r" % (t, line))


def parse_roles():
    """The ROLES lines as (opcode, when, kind, operands, comment); kind is 'list', 'hand' or
    'unchecked'; each operand (name, kind, type, pair, optional)."""
    rules, seen = [], set()
    for raw in ROLES.strip().splitlines():
        # a comment is a `#` standing alone (an immediate's `#` is glued to its name)
        parts = re.split(r"\s#(?:\s|$)", raw, maxsplit=1)
        line, comment = parts[0], (parts[1] if len(parts) > 1 else "")
        words = line.split()
        sel, rest = words[0], words[1:]
        if sel in seen:
            raise SystemExit("roles: %s twice" % sel)
        seen.add(sel)
        opcode, *when = sel.split(".")
        when = ["." + w for w in when]
        comment = comment.strip()
        if rest == ["hand"] or rest == ["..."]:
            if not comment:
                raise SystemExit("roles: %s needs a reason" % sel)
            rules.append((opcode, when, "hand" if rest == ["hand"] else "unchecked", [], comment))
            continue
        if rest == ["()"]:
            rest = []
        ops, optional_seen = [], False
        for w in rest:
            m = ROLE_RE.match(w)
            if not m:
                raise SystemExit("roles: bad operand %r in %r" % (w, raw))
            name, sig, ty, pair, opt = m.groups()
            kind = {">": "Dst", "<": "Src", "<!": "Src", "#": "Imm", "[]": "Address", "@": "Label",
                    "*": "Any"}[sig]
            if sig in (">", "<") and not ty:
                raise SystemExit("roles: %r needs a type" % w)
            if ty == "pred" and sig == ">":
                kind, ty = "PredDst", ""
            elif ty == "pred" and sig in ("<", "<!"):
                kind, ty = ("Pred { negatable: true }" if sig == "<!" else "Pred { negatable: false }"), ""
            elif sig == "<!":
                raise SystemExit("roles: only predicates are negated: %r" % raw)
            if opt:
                optional_seen = True
            elif optional_seen:
                raise SystemExit("roles: optional operands come last: %r" % raw)
            rty = role_type(ty, raw) if ty else "Ty::None"
            ops.append((name, kind, rty, pair[1:] if pair else None, bool(opt)))
        rules.append((opcode, when, "list", ops, ""))
    rules.sort(key=lambda r: (r[0], r[1]))
    return rules


def build_roles():
    out = [
        "// @generated by tools/gen-isa.py from its ROLES table: do not edit by hand.",
        "//! The operand roles of every instruction (see `crate::roles`).",
        "",
        "use crate::roles::{OperandRole as R, RoleCheck, RoleKind as K, RoleRule, RoleType as Ty};",
        "use crate::ScalarType as S;",
        "",
        "/// Every rule, sorted by opcode, then by the modifiers that select it.",
        "pub(crate) static ROLE_RULES: &[RoleRule] = &[",
    ]
    for opcode, when, kind, ops, comment in parse_roles():
        whens = ", ".join(rs_str(w) for w in when)
        if kind == "list":
            items = []
            for name, k, ty, pair, opt in ops:
                items.append("R { name: %s, kind: K::%s, ty: %s, pair: %s, optional: %s }" % (
                    rs_str(name), k, ty, "Some(%s)" % rs_str(pair) if pair else "None",
                    "true" if opt else "false"))
            check = "RoleCheck::Operands(&[%s])" % ", ".join(items)
        elif kind == "hand":
            check = "RoleCheck::Hand(%s)" % rs_str(comment)
        else:
            check = "RoleCheck::Unchecked(%s)" % rs_str(comment)
        out.append("    RoleRule { opcode: %s, when: &[%s], check: %s }," % (rs_str(opcode), whens, check))
    out.append("];")
    return "\n".join(out) + "\n"


DEFAULT_EXAMPLES_OUT = os.path.join(ROOT, "crates", "isa", "src", "generated_examples.rs")


def build_examples(data):
    """The example code of every instruction section, as the reference gives it (verbatim:
    the form test of crates/check reads each statement), deduplicated."""
    out = [
        "// @generated by tools/gen-isa.py from the reference's examples: do not edit by hand.",
        "//! The example code of each instruction section (see `crate::examples`).",
        "",
        "/// `(section title, example code)`, in the order of the reference.",
        "pub(crate) static EXAMPLES: &[(&str, &str)] = &[",
    ]
    seen = set()
    for e in data:
        ex = (e.get("examples") or "").strip()
        if not ex or kind_of(e["title"]) != "Instruction" or ex in seen:
            continue
        seen.add(ex)
        out.append("    (%s, %s)," % (rs_str(e["title"]), rs_str(ex)))
    out.append("];")
    return "\n".join(out) + "\n"


def roles_main(argv):
    """Writes (or with --check verifies) generated_roles.rs and generated_examples.rs; runs
    after main()."""
    if "--template" in argv or "--stats" in argv:
        return 0
    spec = argv[argv.index("--spec") + 1] if "--spec" in argv else DEFAULT_SPEC
    outputs = [(DEFAULT_ROLES_OUT, build_roles())]
    if os.path.exists(spec):
        with open(spec, encoding="utf-8") as f:
            outputs.append((DEFAULT_EXAMPLES_OUT, build_examples(json.load(f))))
    elif "--check" not in argv:
        sys.stderr.write("%s not found: cannot write the examples\n" % spec)
        return 1
    # (a fresh clone without ../shared checks the roles; the examples need the reference)
    for path, text in outputs:
        if "--check" in argv:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except OSError:
                current = None
            if current != text:
                sys.stderr.write("%s is out of date; run tools/gen-isa.py\n" % path)
                return 1
            continue
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or roles_main(sys.argv[1:]))
