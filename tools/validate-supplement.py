#!/usr/bin/env python3
"""Validate the examples of crates/isa/data/supplement.json with ptxas.

Usage:
    python3 tools/validate-supplement.py [--ptxas PATH] [--verbose]

Every example line of every supplement section and extension is wrapped in a kernel that
declares registers by a naming convention and is assembled by ptxas at the first
(`.version`, `.target`) of TARGETS that accepts it. A line that none accepts is reported and
the script exits 1. The convention the examples follow:

    %p<N>  .pred     %b<N>  .b8      %h<N>  .b16     %r<N>  .b32     %rd<N>  .b64     %f<N>  .f32
    %fd<N> .f64      %q<N>  .b128 (PTX 8.3 and later)
    smem   a 4 KiB .shared array, gmem a 4 KiB .global array, cmem a .const array

ptxas comes from pip's nvidia-cuda-nvcc (`python3 -c 'import nvidia'`) unless --ptxas names
one. This is a maintenance tool: the tests never need ptxas.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPLEMENT = os.path.join(ROOT, "crates", "isa", "data", "supplement.json")

# Tried in order; the first that accepts an example is reported for it.
TARGETS = [
    ("9.1", "sm_90a"),
    ("9.1", "sm_100a"),
    ("9.1", "sm_120a"),
    ("9.1", "sm_103a"),
    ("9.1", "sm_80"),
    ("6.3", "sm_75"),
]


def find_ptxas():
    try:
        import nvidia  # noqa: F401  (pip nvidia-cuda-nvcc)

        p = os.path.join(list(nvidia.__path__)[0], "cu13", "bin", "ptxas")
        if os.path.exists(p):
            return p
    except ImportError:
        pass
    return "ptxas"


def wrap(line, version, target):
    """A module around `line`: in the kernel body, or at module level for a kernel or
    directive example (a line that starts with `.`)."""
    b128 = tuple(int(x) for x in version.split(".")) >= (8, 3)
    regs = [
        ".reg .pred %p<16>;",
        ".reg .b8 %b<16>;",
        ".reg .b16 %h<64>;",
        ".reg .b32 %r<300>;",
        ".reg .b64 %rd<64>;",
        ".reg .f32 %f<300>;",
        ".reg .f64 %fd<64>;",
    ]
    if b128:
        regs.append(".reg .b128 %q<8>;")
    module = line if line.startswith(".") else ""
    body = [] if module else [line]
    return "\n".join(
        [
            ".version %s" % version,
            ".target %s" % target,
            ".address_size 64",
            ".global .align 16 .b8 gmem[4096];",
            ".const .align 16 .b8 cmem[256];",
            ".visible .entry k(.param .u64 k_param_0)",
            "{",
            ".shared .align 16 .b8 smem[4096];",
        ]
        + regs
        + body
        + ["ret;", "}", module, ""]
    )


def example_lines(text):
    for raw in text.split("\n"):
        code = raw.split("//", 1)[0].strip()
        if code:
            yield code if code.endswith((";", "}")) else code + ";"


def assemble(ptxas, src, target):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        r = subprocess.run(
            [ptxas, "-arch=" + target, path, "-o", os.devnull],
            capture_output=True,
            text=True,
        )
        return r.returncode == 0, r.stderr.strip()
    finally:
        os.unlink(path)


def main(argv):
    ptxas = argv[argv.index("--ptxas") + 1] if "--ptxas" in argv else find_ptxas()
    verbose = "--verbose" in argv
    with open(SUPPLEMENT, encoding="utf-8") as f:
        supp = json.load(f)
    failures = 0
    items = [(s["title"], s["examples"]) for s in supp["sections"]]
    items += [("+ " + x["title"], x.get("examples", "")) for x in supp["extensions"]]
    for title, examples in items:
        if isinstance(examples, list):
            examples = "\n".join(examples)
        for line in example_lines(examples):
            errors = []
            for version, target in TARGETS:
                ok, err = assemble(ptxas, wrap(line, version, target), target)
                if ok:
                    if verbose:
                        print("ok   %-8s %-8s %s" % (version, target, line))
                    break
                errors.append("%s/%s: %s" % (version, target, err.split("\n")[0]))
            else:
                failures += 1
                print("FAIL %s: %s" % (title, line))
                for e in errors:
                    print("       " + re.sub(r"^.*?\.ptx", "", e))
    print("%d example(s) rejected" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
