#!/usr/bin/env python3
"""Checks what a cudarc 0.19.10 example printed under `ptxvm exec` against values worked out by
hand from the example's source (several examples exit 0 even when their numbers are wrong).

    cudarc-expect.py EXAMPLE OUTPUT_FILE      # exit 0 when the output is right, 1 (with why) if not
"""
import math
import re
import sys
from collections import Counter


def floats(line):
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", line)]


def found_list(out):
    """The list printed as `Found [a, b, …]`."""
    m = re.search(r"^Found \[([^\]]*)\]", out, re.M)
    if not m:
        raise AssertionError("no `Found [...]` line")
    return floats(m.group(1))


def close(got, want, tol):
    if len(got) != len(want) or any(abs(g - w) > tol * max(1.0, abs(w)) for g, w in zip(got, want)):
        raise AssertionError(f"got {got}, want {want} (tolerance {tol})")


def empty(out):
    # these examples only assert on the host and print nothing
    if out.strip():
        raise AssertionError(f"expected no output, got {out.strip()[:200]!r}")


def sin_kernel(out):
    # sin.ptx's sin_kernel writes sinf(a[i]) for a = [1, 2, 3], computed in software by the PTX
    # (CUDA's sinf, not sin.approx), so within an ulp or two of the true values
    close(found_list(out), [math.sin(1.0), math.sin(2.0), math.sin(3.0)], 1e-6)


def threading(out):
    # 10 host threads launch hello_world(i) twice over (a shared and a per-thread context),
    # each launch LaunchConfig::for_num_elems(1) = one block of 1024 threads, all printing
    lines = Counter(out.splitlines())
    want = Counter({f"Hello from the cuda kernel in thread {i}": 2 * 1024 for i in range(10)})
    if lines != want:
        raise AssertionError(f"printf lines differ: {sorted((lines - want).items())[:3]} extra, "
                             f"{sorted((want - lines).items())[:3]} missing")


def constant_memory(out):
    # coefficients {1, 2, 3, 4} in __constant__ memory: f(x) = 1 + 2x + 3x^2 + 4x^3
    got = {float(x): float(v) for x, v in re.findall(r"f\(([\d.]+)\) = ([\d.]+)", out)}
    want = {0.0: 1.0, 1.0: 10.0, 2.0: 49.0, 3.0: 142.0, 4.0: 313.0, 5.0: 586.0}
    if got != want:
        raise AssertionError(f"polynomial values {got}, want {want}")
    if "'coefficients' has 16 bytes" not in out:
        raise AssertionError("the constant symbol's size is not 16 bytes")


def function_attributes(out):
    # sin.ptx says `.version 7.3`; a kernel without __launch_bounds__ allows 1024 threads
    for needle in ("Function Attributes for 'sin_kernel'", "Max threads per block:    1024",
                   "PTX version:              7.3"):
        if needle not in out:
            raise AssertionError(f"missing {needle!r}")


def context_config(out):
    # it sets the stack limit to 2048 and the cache preference to shared, reading each back
    for needle in ("Updated stack size: 2048 bytes", "Restored stack size to 1024 bytes",
                   "Updated cache config: CU_FUNC_CACHE_PREFER_SHARED"):
        if needle not in out:
            raise AssertionError(f"missing {needle!r}")


def matmul(out):
    # [[1, 2], [3, 4]] squared
    close(found_list(out), [7.0, 10.0, 15.0, 22.0], 0.0)


def nvrtc_compile(out):
    if "Compilation succeeded!" not in out:
        raise AssertionError("no `Compilation succeeded!`")


CHECKS = {
    "01-allocate": empty,
    "02-copy": empty,
    "03-launch-kernel": sin_kernel,
    "04-streams": sin_kernel,
    "05-device-repr": empty,
    "06-threading": threading,
    "09-constant-memory": constant_memory,
    "10-function-attributes": function_attributes,
    "12-context-config": context_config,
    "matmul-kernel": matmul,
    "nvrtc-compile": nvrtc_compile,
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(CHECKS)} OUTPUT_FILE")
    name, path = sys.argv[1:]
    with open(path, encoding="utf-8", errors="replace") as f:
        out = f.read()
    try:
        CHECKS[name](out)
    except AssertionError as e:
        print(f"cudarc {name}: wrong output: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"cudarc {name}: output as expected")


if __name__ == "__main__":
    main()
