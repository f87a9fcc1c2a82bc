#!/usr/bin/env python3
"""Group libFuzzer crash/timeout/oom inputs by cause.

    tools/fuzz-classify.py [--timeout S] [--examples DIR] FUZZ_BINARY INPUT...

Runs FUZZ_BINARY (a cargo-fuzz target built by `cargo fuzz build`) on each INPUT alone and
reads its output: a Rust panic is classed by its location (file:line, made relative to the
repository) and message (digits replaced by N), a fuzz-body violation
(`slow-launch:`, `memory:`, `slow-setup:`, `bad-span`) by its class, libFuzzer's
out-of-memory and timeout reports as such, and any other death by its signal. Prints one line
per class: count, class, and the smallest input. With --examples DIR, copies the smallest
input of each class into DIR under a name made from the class. Standard library only.
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys


def classify(binary, path, timeout):
    try:
        p = subprocess.run(
            [binary, "-rss_limit_mb=4096", f"-timeout={timeout}", path],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout + 30,
        )
        out = p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "hang (no answer within %ds)" % (timeout + 30)
    m = re.search(r"panicked at ([^\n]*?):(\d+):\d+:\n([^\n]*)", out)
    if m:
        where = re.sub(r"^.*?/(crates|library|src)/", r"\1/", m.group(1))
        msg = m.group(3)
        v = re.match(r"(slow-launch|slow-setup|memory|bad-span): ", msg)
        if v:
            # fuzz-body violations: class plus the outcome, which names the fault seen
            outcome = re.search(r"\((Completed|Fault|Refused|Invalid)[^)]*\)*$", msg)
            return f"violation {v.group(1)}" + (f" [{outcome.group(1)}]" if outcome else "")
        msg = re.sub(r"\d+", "N", msg)[:120]
        return f"panic {where}:{m.group(2)}: {msg}"
    if "out-of-memory" in out:
        return "out-of-memory (libFuzzer rss limit)"
    if "ERROR: libFuzzer: timeout" in out:
        return "timeout (libFuzzer -timeout)"
    m = re.search(r"memory allocation of (\d+) bytes failed", out)
    if m:
        return "abort: memory allocation failed"
    m = re.search(r"ERROR: libFuzzer: deadly signal", out)
    if m:
        return "deadly signal (abort)"
    if p.returncode == 0:
        return "no longer fails"
    return f"exit {p.returncode}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--timeout", type=int, default=20)
    ap.add_argument("--examples", help="copy the smallest input of each class here")
    ap.add_argument("binary")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    classes = {}
    for path in a.inputs:
        if os.path.isdir(path):
            continue
        c = classify(a.binary, path, a.timeout)
        classes.setdefault(c, []).append(path)
    for c, paths in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        paths.sort(key=lambda p: (os.path.getsize(p), p))
        print(f"{len(paths):5d}  {c}\n       smallest: {paths[0]} ({os.path.getsize(paths[0])} bytes)")
        if a.examples:
            os.makedirs(a.examples, exist_ok=True)
            slug = re.sub(r"[^A-Za-z0-9]+", "_", c).strip("_")[:80]
            h = hashlib.sha1(c.encode()).hexdigest()[:6]
            shutil.copy(paths[0], os.path.join(a.examples, f"{slug}_{h}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
