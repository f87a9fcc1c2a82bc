#!/usr/bin/env python3
"""Generates tests/run/matrix/triton_dot_scaled_e2m1.ptx and triton_dot_scaled_e4m3.ptx: Triton's
microscaled matmul (tl.dot_scaled: A and B with one ue8m0 scale per 32 elements along K)
compiled to PTX for sm_120a, where Triton lowers it to mma.sync .kind::mxf4nvf4.block_scale
.scale_vec::2X (e2m1, two per byte) and .kind::mxf8f6f4.block_scale.scale_vec::1X (e4m3).
The inputs are written beside the tests; the expected output is computed here with numpy.

Needs triton and numpy (not needed to run the tests): e.g.
    python3 -m venv /tmp/venv-triton && /tmp/venv-triton/bin/pip install triton numpy
    /tmp/venv-triton/bin/python tests/run/tools/triton_dot_scaled.py

Triton builds the register fragments and the scale selectors for real sm_120 GPUs, so this
checks ptxvm's fragment and scale-factor layouts against a compiler, not against itself.
Exactness: e2m1 values are multiples of 1/2 up to 6 and the small e4m3 inputs are integers in
[-8, 8]; scales are 2^-2..2^2 (ue8m0 125..129). Every product is then a multiple of 2^-6 below
2^10 and every partial sum of 128 of them is below 2^17, exact in f32 whatever the order of
the sums, so numpy's f64 result is the exact answer any GPU gives too.
"""

import os

import numpy as np
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "matrix")
M, N, K = 32, 32, 128
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@triton.jit
def dot_scaled_kernel(a_ptr, b_ptr, as_ptr, bs_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr, FMT: tl.constexpr):
    PACK: tl.constexpr = 2 if FMT == "e2m1" else 1
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK // PACK)
    a = tl.load(a_ptr + offs_m[:, None] * (BK // PACK) + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BN + offs_n[None, :])
    offs_s = tl.arange(0, BK // 32)
    sa = tl.load(as_ptr + offs_m[:, None] * (BK // 32) + offs_s[None, :])
    sb = tl.load(bs_ptr + offs_n[:, None] * (BK // 32) + offs_s[None, :])
    acc = tl.dot_scaled(a, sa, FMT, b, sb, FMT)
    tl.store(c_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)


def e2m1_code(v):
    code = E2M1.index(abs(v))
    return code | (8 if v < 0 or (v == 0 and np.signbit(v)) else 0)


def e4m3_code(v):
    """The .e4m3 bits of an integer in [-8, 8] (exact)."""
    if v == 0:
        return 0
    sign = 0x80 if v < 0 else 0
    v = abs(int(v))
    e = v.bit_length() - 1
    frac = (v - (1 << e)) * 8 >> e
    assert (1 << e) + (frac << e) // 8 == v
    return sign | (e + 7) << 3 | frac


def gen(fmt, seed):
    src = ASTSource(fn=dot_scaled_kernel,
                    signature={"a_ptr": "*u8", "b_ptr": "*u8", "as_ptr": "*u8", "bs_ptr": "*u8",
                               "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr",
                               "BK": "constexpr", "FMT": "constexpr"},
                    constexprs={"BM": M, "BN": N, "BK": K, "FMT": fmt})
    k = triton.compile(src, target=GPUTarget("cuda", 120, 32), options={"num_warps": 4})
    ptx = k.asm["ptx"]
    rng = np.random.default_rng(seed)
    if fmt == "e2m1":
        a = rng.choice(E2M1, size=(M, K)) * rng.choice([-1.0, 1.0], size=(M, K))
        b = rng.choice(E2M1, size=(K, N)) * rng.choice([-1.0, 1.0], size=(K, N))
        ac = np.vectorize(e2m1_code)(a).astype(np.uint8)
        bc = np.vectorize(e2m1_code)(b).astype(np.uint8)
        # two per byte along K, the first element in the low bits
        abytes = (ac[:, 0::2] | (ac[:, 1::2] << 4)).astype(np.uint8)
        bbytes = (bc[0::2, :] | (bc[1::2, :] << 4)).astype(np.uint8)
    else:
        a = rng.integers(-8, 9, size=(M, K)).astype(np.float64)
        b = rng.integers(-8, 9, size=(K, N)).astype(np.float64)
        abytes = np.vectorize(e4m3_code)(a).astype(np.uint8)
        bbytes = np.vectorize(e4m3_code)(b).astype(np.uint8)
    sa = rng.integers(125, 130, size=(M, K // 32)).astype(np.uint8)
    sb = rng.integers(125, 130, size=(N, K // 32)).astype(np.uint8)
    ascale = np.repeat(2.0 ** (sa.astype(np.int64) - 127), 32, axis=1)  # M x K
    bscale = np.repeat(2.0 ** (sb.astype(np.int64) - 127), 32, axis=1).T  # K x N
    c = (a * ascale) @ (b * bscale)
    assert np.all(np.float32(c) == c)
    names = []
    for arr, what in ((abytes, "a"), (bbytes, "b"), (sa, "as"), (sb, "bs")):
        name = f"triton_dot_scaled_{fmt}_{what}.bin"
        arr.tofile(os.path.join(OUT, name))
        names.append(name)
    kinds = sorted({line.split()[0] for line in ptx.splitlines() if "mma.sync" in line})
    assert kinds, "no mma.sync in the PTX"
    vals = " ".join(repr(float(x)) for x in c.ravel())
    hdr = [
        f"// Triton {triton.__version__} tl.dot_scaled ({fmt} A and B, ue8m0 scales per 32 along K,",
        f"// {M}x{N}x{K}, 4 warps) compiled for sm_120a:",
        *[f"//   {kind}" for kind in kinds],
        f"// C = (A * 2^(sa-127)) x (B * 2^(sb-127)), inputs in {', '.join(names)};",
        "// expected output from numpy (exact: see tests/run/tools/triton_dot_scaled.py).",
        "// Generated by tests/run/tools/triton_dot_scaled.py; do not edit by hand.",
        f"// RUN: --grid 1 --block 128 --shared {k.metadata.shared} "
        + " ".join(f"--arg @{n}" for n in names) + f" --arg f32[{M * N}] --arg 0 --arg 0",
        f"// EXPECT 4 f32: {vals}",
    ]
    with open(os.path.join(OUT, f"triton_dot_scaled_{fmt}.ptx"), "w") as f:
        f.write("\n".join(hdr) + "\n" + ptx)


if __name__ == "__main__":
    gen("e2m1", 120)
    gen("e4m3", 121)
