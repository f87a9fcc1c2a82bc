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

`--check` exits non-zero when the committed file differs from what would be generated.
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
    """Short, stable keys for SUMMARIES: the opcode, qualified only where it is ambiguous."""
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
    entries = []
    stats = {"ptx": 0, "ptx_explicit": 0, "target": 0, "forms": 0, "no_forms": [],
             "ptx_gates": 0, "target_gates": 0}
    for idx, e in enumerate(data):
        kind = kind_of(e["title"])
        forms, defs = parse_syntax(e) if e["syntax"].strip() else ([], [])
        ptx, explicit, preview, pgates = parse_ptx_notes(e, kind)
        tbase, tgates = parse_target_notes(e, kind)
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
        summary = SUMMARIES.get(key)
        if summary is None:
            missing.append(key)
            summary = ""
        b("    Entry {")
        b("        opcode: %s," % rs_str(e["opcode"]))
        b("        kind: EntryKind::%s," % kind)
        b("        title: %s," % rs_str(e["title"]))
        b("        category: %s," % rs_str(category_of(e["title"])))
        b("        names: &%s," % em.str_list(title_names(e["title"])))
        b("        anchor: %s," % rs_str(anchor_of(e["title"])))
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
            b(
                "            FeatureGate { feature: %s, modifiers: &%s, ptx: None, sm: %s },"
                % (rs_str(g["feature"] or ""), em.str_list(g["mods"]), rs_sm(g["sm"]))
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
    "dest_first": """abs activemask add addc and atom bfe bfi bfind bmsk brev clz cnot copysign
        cos cvt cvt.pack cvta div dp2a dp4a elect ex2 fma fns isspacep ld ldu lg2 lop3 mad
        mad24 madc mapa match max min mov mul mul24 neg not or popc prmt rcp redux rem rsqrt
        sad selp set setp shf shfl shl shr sin slct sqrt sub subc szext tanh testp vote xor""",
    "no_dest": """bra brx exit fence membar nanosleep pmevent prefetch prefetchu red ret st
        trap""",
    "pure": """abs add and bfe bfi bfind brev clz cnot cvt cvt.pack cvta mad mad24 max min mov
        mul mul24 neg not or popc prmt selp setp shl shr slct sub xor""",
    "convertible": """abs add and atom bfe bfi bfind brev clz cnot cvt cvt.pack cvta ld mad mad24
        max min mov mul mul24 neg not or popc prmt red selp setp shl shr slct st sub xor""",
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
        fl = [k for k in ("dest_first", "no_dest", "pure", "convertible") if o in flags[k]]
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
    with open(spec, encoding="utf-8") as f:
        data = json.load(f)
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

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
