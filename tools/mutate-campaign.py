#!/usr/bin/env python3
"""Mutation campaign over the tests/run kernels: `ptxvm run` must never crash, hang or bloat.

    tools/mutate-campaign.py [--runs N] [--jobs J] [--seed S] [--timeout T]
                             [--max-instructions M] [--ptxvm PATH] [--out DIR]

Each run takes one tests/run/**/*.ptx file and its `// RUN:` header, applies 1-3 mutations
chosen by a PRNG seeded with (S, run number) -- so a campaign is the same for any J -- and runs

    ptxvm run MUTATED.ptx <RUN args> --timeout T --max-instructions M --threads 2

in the test's folder (so `@file` arguments resolve). Mutations: swap two operands of an
instruction; put an extreme immediate (0, -1, INT_MIN, INT_MAX, 2^32, 2^63, huge, NaN/inf
bits); delete an instruction; duplicate one or splice one from another kernel; change a
state space (ld.global -> ld.shared/.local/.const/.param/generic, declarations too); change a
type suffix; change the launch shape (grid/block 0, 1, 1025, 65536, 2^32-1, z 65; dynamic
shared 0 .. 1 GiB); change an argument (buffer sizes 0 .. 256 MiB, extreme scalars).

A run FAILS when
  * its exit status is outside 0/1/2, or it died of a signal (a panic is 101, an abort SIGABRT);
  * its wall time exceeds T + 1 s (it is killed at T + --kill-after s and reported as a hang);
  * its peak RSS (os.wait4 ru_maxrss) exceeds the kernel's declared needs + --slack-mib
    (default 64 MiB, which also covers the ptxvm process itself, ~10-20 MiB). Declared needs:
    buffer arguments (DTYPE[N] x size, @file sizes) + every .global/.const declaration +
    (static .shared declarations + --shared) x 2 CTAs in flight (--threads 2) + per thread x
    block threads x 2: every .local declaration, 8 bytes per distinct register named, and
    1 MiB of stack when the call graph has a cycle. Sizes are read from the declarations
    (`[N]` dimensions x element size).
Each failure's mutated PTX, the command (cmd.sh) and its stderr are written to
OUT/failures/<class>/<run>/ (default OUT: target/mutate-campaign). Classes come from the exit
status and the panic location or first error line. The summary gives runs, the exit-code
histogram, the largest wall-time overshoot over T, the largest RSS excess over the declared
needs, and each failure class with its count and one reproducer. Exit status 1 when any run
failed. Python 3 standard library only; Linux (os.wait4).
"""
import argparse
import collections
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXTREME_IMMS = [
    "0", "1", "-1", "2147483647", "-2147483648", "0x80000000", "0xffffffff", "4294967296",
    "0x7fffffffffffffff", "0x8000000000000000", "0xffffffffffffffff", "-9223372036854775808",
    "65536", "1048576", "0f7FC00000", "0f7F800000", "0fFF800000", "0f00000001",
    "0d7FF8000000000000", "0dFFF0000000000000", "0d0000000000000001",
]
DIMS = [
    "0", "1", "2", "31", "32", "33", "1024", "1025", "65535", "65536", "4294967295",
    "2,2,2", "1,1,64", "1,1,65", "32,32", "32,33", "1,65535,65535", "65536,2", "8,8,8",
]
SHARED = ["0", "1", "4096", "49152", "65536", "1048576", "16777216", "1073741824"]
SCALARS = ["0", "1", "-1", "2147483647", "-2147483648", "4294967295", "4294967296",
           "9223372036854775807", "-9223372036854775808", "nan", "inf", "-0.0", "1e308"]
BUF_N = ["0", "1", "3", "31", "1024", "65536", "1048576", "67108864"]
SPACES = [".global", ".shared", ".local", ".const", ".param", ""]
TYPES = [".u8", ".s8", ".u16", ".s16", ".u32", ".s32", ".u64", ".s64", ".b32", ".b64",
         ".f32", ".f64", ".f16", ".pred"]
DTYPE_SIZE = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "f16": 2, "bf16": 2, "u32": 4, "i32": 4,
              "f32": 4, "u64": 8, "i64": 8, "f64": 8}
MAX_BUFFER = 256 << 20  # a mutated buffer argument stays below this (the machine is shared)


# ---------------------------------------------------------------------------------------------
# Seeds


def load_seeds(tests):
    seeds = []
    for dirpath, _, files in os.walk(tests):
        for f in sorted(files):
            if not f.endswith(".ptx"):
                continue
            path = os.path.join(dirpath, f)
            text = open(path, encoding="utf-8", errors="replace").read()
            m = re.search(r"^\s*//\s*RUN:(.*)$", text, re.M)
            if not m:
                continue
            args = strip_limits(m.group(1).split())
            seeds.append((os.path.relpath(path, tests), dirpath, text, args))
    seeds.sort()
    return seeds


def strip_limits(args):
    """Drops --timeout/--max-instructions/--threads (the campaign sets its own)."""
    out, i = [], 0
    while i < len(args):
        if args[i] in ("--timeout", "--max-instructions", "--threads"):
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out


# ---------------------------------------------------------------------------------------------
# Mutations

INSN = re.compile(r"^\s*(@!?%\w+\s+)?[a-z][\w.:]*(\s.*)?;\s*(//.*)?$")


def insn_lines(lines):
    return [i for i, l in enumerate(lines) if INSN.match(l) and not l.lstrip().startswith(".")]


def mutate_text(rng, text, other):
    lines = text.split("\n")
    body = insn_lines(lines)
    kind = rng.choice(["swap", "imm", "imm", "delete", "space", "space", "type", "dup",
                       "splice", "reg"])
    if not body:
        return text, "none"
    i = rng.choice(body)
    l = lines[i]
    if kind == "swap":
        m = re.match(r"^(\s*(?:@!?%\w+\s+)?\S+\s+)(.*?);(.*)$", l)
        if m:
            ops = split_operands(m.group(2))
            if len(ops) >= 2:
                a, b = rng.sample(range(len(ops)), 2)
                ops[a], ops[b] = ops[b], ops[a]
                lines[i] = m.group(1) + ", ".join(ops) + ";" + m.group(3)
    elif kind == "imm":
        imm = rng.choice(EXTREME_IMMS)
        nums = [m for m in re.finditer(r"(?<![\w%.$])-?(0[xXfFdD])?[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b", l)
                if not l[:m.start()].rstrip().endswith("<")]
        if nums:
            m = rng.choice(nums)
            lines[i] = l[:m.start()] + imm + l[m.end():]
        else:
            c = l.rfind(",")
            if c >= 0:
                lines[i] = l[:c + 1] + " " + imm + ";"
    elif kind == "delete":
        del lines[i]
    elif kind == "dup":
        lines.insert(i, l)
    elif kind == "splice":
        ol = other.split("\n")
        ob = insn_lines(ol)
        if ob:
            lines.insert(i, ol[rng.choice(ob)])
    elif kind == "space":
        # an access or a declaration in another state space
        cands = [j for j, x in enumerate(lines)
                 if re.search(r"\.(global|shared|local|const|param)\b", x)]
        if cands:
            j = rng.choice(cands)
            x = lines[j]
            m = rng.choice(list(re.finditer(r"\.(global|shared|local|const|param)\b", x)))
            lines[j] = x[:m.start()] + rng.choice(SPACES) + x[m.end():]
    elif kind == "type":
        ms = list(re.finditer(r"\.(u8|s8|u16|s16|u32|s32|u64|s64|b8|b16|b32|b64|f16|f32|f64)\b", l))
        if ms:
            m = rng.choice(ms)
            lines[i] = l[:m.start()] + rng.choice(TYPES) + l[m.end():]
    elif kind == "reg":
        regs = sorted(set(re.findall(r"%[A-Za-z_]\w*", text)))
        here = re.findall(r"%[A-Za-z_]\w*", l)
        if regs and here:
            lines[i] = l.replace(rng.choice(here), rng.choice(regs), 1)
    return "\n".join(lines), kind


def split_operands(s):
    """Top-level commas only (not inside {..} or [..])."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def mutate_args(rng, args):
    args = list(args)
    kind = rng.choice(["grid", "block", "shared", "arg", "arg"])
    if kind in ("grid", "block", "shared"):
        flag = "--" + kind
        value = rng.choice(SHARED if kind == "shared" else DIMS)
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
        return args, kind
    idx = [k + 1 for k, a in enumerate(args) if a == "--arg" and k + 1 < len(args)]
    if not idx:
        return args, "none"
    k = rng.choice(idx)
    m = re.match(r"^(\w+)\[(\d+)\](.*)$", args[k])
    if m and rng.random() < 0.7:
        n = rng.choice(BUF_N)
        if int(n) * DTYPE_SIZE.get(m.group(1), 8) > MAX_BUFFER:
            n = str(MAX_BUFFER // DTYPE_SIZE.get(m.group(1), 8))
        args[k] = f"{m.group(1)}[{n}]{m.group(3)}"
    else:
        args[k] = rng.choice(SCALARS + ["u8[16]", "u32[1]", "f64[2]=nan"])
    return args, "arg"


# ---------------------------------------------------------------------------------------------
# Declared needs


def type_size(decl):
    m = re.search(r"\.(?:[busf]|bf)(8|16|32|64|128)\b", decl)
    size = int(m.group(1)) // 8 if m else 4
    v = re.search(r"\.v(2|4|8)\b", decl)
    return size * (int(v.group(1)) if v else 1)


def decl_bytes(text, space):
    total = 0
    for m in re.finditer(r"^\s*(?:\.extern\s+|\.visible\s+|\.weak\s+)*\." + space +
                         r"\b([^;=]*?)([%$\w]+)((?:\[\d*\])*)\s*(=|;)", text, re.M):
        n = 1
        for d in re.findall(r"\[(\d*)\]", m.group(3)):
            n *= int(d) if d else 0
        total += type_size(m.group(1)) * n
    return total


def recursive(text):
    """Whether the call graph (by name) has a cycle."""
    funcs = {}
    for m in re.finditer(r"\.(?:func|entry)\s*(?:\([^)]*\)\s*)?([\w$]+)", text):
        start = text.find("{", m.end())
        if start < 0:
            continue
        depth, k = 0, start
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        body = text[start:k]
        calls = set(re.findall(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([\w$]+)", body))
        funcs[m.group(1)] = calls
    state = {}

    def dfs(f):
        state[f] = 1
        for g in funcs.get(f, ()):
            if state.get(g) == 1:
                return True
            if g in funcs and g not in state and dfs(g):
                return True
        state[f] = 2
        return False

    return any(f not in state and dfs(f) for f in funcs)


def dims(v):
    try:
        d = [int(x) for x in v.split(",")]
    except ValueError:
        return [1]
    return d


def declared_needs(text, args, cwd):
    buffers = 0
    for k, a in enumerate(args):
        if k == 0 or args[k - 1] != "--arg":
            continue
        m = re.match(r"^(\w+)\[(\d+)\]", a)
        if m:
            buffers += int(m.group(2)) * DTYPE_SIZE.get(m.group(1), 8)
        elif a.startswith("@"):
            try:
                buffers += os.path.getsize(os.path.join(cwd, a[1:]))
            except OSError:
                pass
    block = dims(args[args.index("--block") + 1]) if "--block" in args else [1]
    threads = 1
    for d in block:
        threads *= max(d, 0)
    threads = min(threads, 1024)
    dyn = int(args[args.index("--shared") + 1]) if "--shared" in args else 0
    shared = decl_bytes(text, "shared") + min(dyn, 1 << 40)
    per_thread = decl_bytes(text, "local") + 8 * len(set(re.findall(r"%[A-Za-z_]\w*", text)))
    if recursive(text):
        per_thread += 1 << 20
    return (buffers + decl_bytes(text, "global") + decl_bytes(text, "const")
            + 2 * shared + 2 * threads * per_thread)


# ---------------------------------------------------------------------------------------------
# Running


def plan(seed, i, seeds):
    """The mutated input of run i: deterministic in (seed, i)."""
    rng = random.Random(seed * 1_000_003 + i)
    name, cwd, text, args = seeds[rng.randrange(len(seeds))]
    other = seeds[rng.randrange(len(seeds))][2]
    what = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.25:
            args, k = mutate_args(rng, args)
        else:
            text, k = mutate_text(rng, text, other)
        what.append(k)
    return name, cwd, text, args, what


def run_one(i, a, seeds, workdir):
    name, cwd, text, args, what = plan(a.seed, i, seeds)
    fd, path = tempfile.mkstemp(suffix=".ptx", dir=workdir)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    cmd = [a.ptxvm, "run", path] + args + [
        "--timeout", str(a.timeout), "--max-instructions", str(a.max_instructions),
        "--threads", "2"]
    need = declared_needs(text, args, cwd)
    errf = tempfile.TemporaryFile(dir=workdir)

    def limit():
        # keep the shared machine safe: past this the process fails to allocate (and aborts)
        cap = need + a.slack_mib * (1 << 20) + (4 << 30)
        # a kernel that declares more than the address space (a hostile `.local` size) runs
        # without a cap: ptxvm must refuse it by itself
        if cap >= 1 << 63:
            cap = resource.RLIM_INFINITY
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=errf, preexec_fn=limit)
    killed = []

    def kill():
        killed.append(True)
        try:
            p.kill()
        except OSError:
            pass

    t = threading.Timer(a.timeout + a.kill_after, kill)
    t.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    t.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    errf.seek(0)
    err = errf.read(1 << 16).decode("utf-8", "replace")
    errf.close()
    rss = ru.ru_maxrss * 1024
    code = p.returncode
    if killed:
        code_key = "killed"
    elif code < 0:
        code_key = signal.Signals(-code).name
    else:
        code_key = str(code)
    fails = []
    if killed:
        fails.append("hang")
    elif code < 0 or code not in (0, 1, 2):
        fails.append("crash")
    if wall > a.timeout + 1:
        fails.append("slow")
    if rss > need + a.slack_mib * (1 << 20):
        fails.append("rss")
    result = dict(i=i, name=name, what=what, code=code_key, wall=wall, rss=rss, need=need,
                  fails=fails, cls=None, path=None)
    if fails:
        result["cls"] = classify(fails, code_key, err)
        d = os.path.join(a.out, "failures", slug(result["cls"]), f"run{i:06d}")
        os.makedirs(d, exist_ok=True)
        shutil.copy(path, os.path.join(d, "kernel.ptx"))
        shown = ["ptxvm", "run", "kernel.ptx"] + cmd[3:]
        with open(os.path.join(d, "cmd.sh"), "w") as f:
            f.write("#!/bin/sh\n# run from %s (the seed's folder, for @file arguments)\n"
                    "# seed test: tests/run/%s; mutations: %s\n# exit %s, %.2f s, peak RSS "
                    "%d MiB, declared needs %d MiB\ncd \"$(dirname \"$0\")\" && %s\n"
                    % (cwd, name, ", ".join(what), code_key, wall, rss >> 20, need >> 20,
                       " ".join(shell_quote(x) for x in shown)))
        with open(os.path.join(d, "stderr.txt"), "w") as f:
            f.write(err)
        result["path"] = d
    os.unlink(path)
    return result


def shell_quote(s):
    return s if re.fullmatch(r"[\w./:=,@\[\]+-]+", s) else "'" + s.replace("'", "'\\''") + "'"


def classify(fails, code, err):
    m = re.search(r"panicked at ([^\n]*?):(\d+):\d+:\n([^\n]*)", err)
    if m:
        where = re.sub(r"^.*?/(crates|library)/", r"\1/", m.group(1))
        msg = re.sub(r"\d+", "N", m.group(3))[:80]
        return f"{'+'.join(fails)} {code} panic {where}:{m.group(2)} {msg}"
    if "memory allocation of" in err:
        return f"{'+'.join(fails)} {code} allocation failed"
    first = next((l for l in err.splitlines() if l.startswith("error")), "")
    first = re.sub(r"\d+", "N", first)[:80]
    return f"{'+'.join(fails)} {code} {first}".strip()


def slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_")[:100]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=2.0, help="ptxvm --timeout (s)")
    ap.add_argument("--max-instructions", type=int, default=1_000_000)
    ap.add_argument("--kill-after", type=float, default=5.0,
                    help="kill a run this many seconds after its timeout")
    ap.add_argument("--slack-mib", type=int, default=64)
    ap.add_argument("--ptxvm", default=os.path.join(ROOT, "target/release/ptxvm"))
    ap.add_argument("--tests", default=os.path.join(ROOT, "tests/run"))
    ap.add_argument("--out", default=os.path.join(ROOT, "target/mutate-campaign"))
    ap.add_argument("--first", type=int, default=0, help="first run number (to replay one)")
    a = ap.parse_args()
    a.ptxvm = os.path.abspath(a.ptxvm)
    a.out = os.path.abspath(a.out)
    if not os.access(a.ptxvm, os.X_OK):
        sys.exit(f"no ptxvm binary at {a.ptxvm} (cargo build --release -p ptxvm-cli)")
    seeds = load_seeds(a.tests)
    if not seeds:
        sys.exit(f"no tests with a RUN: header under {a.tests}")
    shutil.rmtree(os.path.join(a.out, "failures"), ignore_errors=True)
    os.makedirs(a.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="mutate-", dir=a.out)
    started = time.monotonic()
    results = []
    done = [0]
    lock = threading.Lock()

    def job(i):
        r = run_one(i, a, seeds, workdir)
        with lock:
            done[0] += 1
            if done[0] % 500 == 0:
                nf = sum(1 for x in results if x["fails"]) + bool(r["fails"])
                print(f"  {done[0]}/{a.runs} runs, {nf} failing, "
                      f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        return r

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for r in ex.map(job, range(a.first, a.first + a.runs)):
            results.append(r)
    shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.monotonic() - started

    hist = collections.Counter(r["code"] for r in results)
    over = max(results, key=lambda r: r["wall"] - a.timeout)
    excess = max(results, key=lambda r: r["rss"] - r["need"])
    classes = collections.OrderedDict()
    for r in results:
        if r["cls"]:
            classes.setdefault(r["cls"], []).append(r)
    print(f"mutation campaign: {len(results)} runs of {a.ptxvm} over {len(seeds)} kernels "
          f"(seed {a.seed}, jobs {a.jobs}, --timeout {a.timeout:g} --max-instructions "
          f"{a.max_instructions} --threads 2) in {elapsed:.0f} s")
    print("exit codes: " + ", ".join(f"{k}: {v}" for k, v in
                                     sorted(hist.items(), key=lambda kv: -kv[1])))
    print(f"max wall overshoot over --timeout: {over['wall'] - a.timeout:+.2f} s "
          f"(run {over['i']}, {over['wall']:.2f} s, {over['name']})")
    print(f"max RSS excess over declared needs: {(excess['rss'] - excess['need']) / 2**20:+.1f} "
          f"MiB (run {excess['i']}: {excess['rss'] >> 20} MiB peak, {excess['need'] >> 20} MiB "
          f"declared; allowed +{a.slack_mib} MiB)")
    print(f"max peak RSS: {max(r['rss'] for r in results) >> 20} MiB")
    nfail = sum(1 for r in results if r["fails"])
    print(f"failing runs: {nfail} in {len(classes)} classes")
    for c, rs in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(rs):5d}  {c}\n         e.g. {rs[0]['path']}/cmd.sh")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
