#!/usr/bin/env python3
"""Generates tests/run/matrix/triton_attention.ptx: a flash-attention forward kernel in the shape of
Triton's fused-attention tutorial (`_attn_fwd`: Q, K, V fp16, one program per BLOCK_M query rows
of one (batch, head), a loop over BLOCK_N key blocks with the online softmax in base 2 — running
max m_i, rescale alpha = exp2(m_i - m_ij), running sum l_i — two tl.dot per block, QK^T and P V,
then O = acc / l_i and M = m_i + log2(l_i)), compiled by Triton for sm_80 with num_stages=3
(cp.async pipeline, ldmatrix, mma.sync m16n8k16), run with batch 1, 2 heads, seq 128,
head dim 64, BLOCK_M 64, BLOCK_N 32 (four key blocks per program).

The harness compares exactly, so the inputs make every intermediate exact (no tolerance is needed):
each K row is 0 or 64 times a unit vector e_d, each Q row 32 times a unit vector, so every score
QK^T is 0 or 2048 (a power of two, so qk * qk_scale is exact, fused or not). A query's matching
keys all score the maximum (exp2(0) = 1); every other key is 2048 * qk_scale ~ 369 below it, and
exp2(-369) is exactly 0 in f32, so rescaling by alpha is by exactly 0 or 1. Each query matches
1, 2, 4 or 8 keys, so O is the mean of those V rows (small integers / a power of two: exact in
fp16). The reference is computed independently in float64 (a plain softmax(Q K^T * sm_scale) V
and log2-sum-exp), and the script checks that it rounds to the listed fp16/f32 values with an
error far below half an ulp. M's f32 value is the float64 log2-sum-exp rounded the way the
kernel computes it: f32(2048 * f32(sm_scale * 1.44269504)) + log2(count).

Needs triton and numpy (not needed to run the test):
    /tmp/venv-triton/bin/python tests/run/tools/triton_attention.py
"""

import math
import os

import numpy as np
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "matrix")
Z, H, N_CTX, HEAD_DIM = 1, 2, 128, 64
BLOCK_M, BLOCK_N = 64, 32
SM_SCALE = 0.125  # 1 / sqrt(HEAD_DIM)


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,
              stride_qz, stride_qh, stride_qm, stride_qk: tl.constexpr,
              stride_kz, stride_kh, stride_kn, stride_kk: tl.constexpr,
              stride_vz, stride_vh, stride_vk, stride_vn: tl.constexpr,
              stride_oz, stride_oh, stride_om, stride_on: tl.constexpr,
              Z, H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_base = Q + off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_base = K + off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_base = V + off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_base = Out + off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2)
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk)
    for start_n in range(0, N_CTX, BLOCK_N):
        kt = tl.load(k_base + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None] * stride_kk)
        qk = tl.dot(q, kt)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_base + (start_n + offs_n)[:, None] * stride_vk + offs_d[None, :] * stride_vn)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_on,
             acc.to(Out.type.element_ty))


def inputs(rng):
    q = np.zeros((Z, H, N_CTX, HEAD_DIM))
    k = np.zeros((Z, H, N_CTX, HEAD_DIM))
    v = rng.integers(-4, 5, size=(Z, H, N_CTX, HEAD_DIM)).astype(np.float64)
    count = np.zeros((Z, H, N_CTX), dtype=np.int64)
    for z in range(Z):
        for h in range(H):
            # 40 dimensions with 1, 2, 4 or 8 keys each (at most 128 keys); the other keys are 0
            dims = rng.permutation(HEAD_DIM)[:40]
            keydim = []
            for d in dims:
                c = int(rng.choice([1, 2, 4, 8]))
                if len(keydim) + c > N_CTX:
                    c = 1
                if len(keydim) + c > N_CTX:
                    break
                keydim += [int(d)] * c
            keydim += [-1] * (N_CTX - len(keydim))
            keydim = rng.permutation(keydim)
            used = sorted(set(int(d) for d in keydim if d >= 0))
            for j, d in enumerate(keydim):
                if d >= 0:
                    k[z, h, j, d] = 64
            for i in range(N_CTX):
                d = int(rng.choice(used))
                q[z, h, i, d] = 32
                count[z, h, i] = int(np.sum(keydim == d))
    return q, k, v, count


def reference(q, k, v):
    """Plain attention in float64: O = softmax(Q K^T * sm_scale) V, M = log2 sum exp2(scaled)."""
    s = np.einsum("zhid,zhjd->zhij", q, k) * (SM_SCALE / math.log(2))
    smax = s.max(axis=-1, keepdims=True)
    e = np.exp2(s - smax)
    o = np.einsum("zhij,zhjd->zhid", e / e.sum(axis=-1, keepdims=True), v)
    m = smax[..., 0] + np.log2(e.sum(axis=-1))
    return o, m


def main():
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32",
           "Out": "*fp16"}
    consts = {"HEAD_DIM": HEAD_DIM, "BLOCK_M": BLOCK_M, "BLOCK_N": BLOCK_N}
    for t in "qkvo":
        for s in "zh" + {"q": "m", "k": "n", "v": "k", "o": "m"}[t]:
            sig[f"stride_{t}{s}"] = "i32"
        last = {"q": "k", "k": "k", "v": "n", "o": "n"}[t]
        sig[f"stride_{t}{last}"] = "constexpr"
        consts[f"stride_{t}{last}"] = 1
    sig.update({"Z": "i32", "H": "i32", "N_CTX": "i32"})
    sig.update({n: "constexpr" for n in ("HEAD_DIM", "BLOCK_M", "BLOCK_N")})
    names = list(sig)
    # What Triton's launcher would infer: pointers and the strides and N_CTX are multiples of 16
    # (without it Triton cannot use 16-byte cp.async for the tiles).
    div16 = [i for i, n in enumerate(names)
             if sig[n].startswith("*") or (sig[n] == "i32" and n not in ("Z", "H"))]
    attrs = {(i,): [["tt.divisibility", 16]] for i in div16}
    src = ASTSource(fn=_attn_fwd, signature=sig, constexprs=consts, attrs=attrs)
    kern = triton.compile(src, target=GPUTarget("cuda", 80, 32),
                          options={"num_warps": 4, "num_stages": 3})
    ptx = kern.asm["ptx"]
    for needed in ("cp.async", "ldmatrix", "mma.sync", "ex2.approx"):
        assert needed in ptx, needed

    rng = np.random.default_rng(1616)
    q, k, v, count = inputs(rng)
    o_ref, m_ref = reference(q, k, v)
    # exact values the kernel must produce, checked against the float64 reference
    o_exact = np.einsum("zhid,zhjd->zhij", q, k)
    o_exact = np.einsum("zhij,zhjd->zhid", (o_exact == o_exact.max(-1, keepdims=True)), v)
    o_exact /= count[..., None]
    o16 = o_exact.astype(np.float16)
    assert np.array_equal(o16.astype(np.float64), o_exact)
    assert np.max(np.abs(o_ref - o_exact)) < 1e-9
    qk_scale = np.float32(np.float32(SM_SCALE) * np.float32(1.44269504))
    m32 = (np.float32(2048) * qk_scale) + np.log2(count).astype(np.float32)
    assert np.max(np.abs(m32.astype(np.float64) - m_ref)) < 1e-4

    for name, arr in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(OUT, f"triton_attn_{name}.npy"), arr.astype(np.float16))
    elems = Z * H * N_CTX * HEAD_DIM
    sd = (H * N_CTX * HEAD_DIM, N_CTX * HEAD_DIM, HEAD_DIM)
    strides = " ".join(f"--arg {s}" for _ in range(4) for s in sd)
    m_bits = " ".join(f"0f{int(x):08x}" for x in m32.ravel().view(np.uint32))
    o_bits = " ".join(f"0h{int(x):04x}" for x in o16.ravel().view(np.uint16))
    hdr = [
        "// A flash-attention forward kernel shaped like Triton's fused-attention tutorial (_attn_fwd:",
        "// online softmax in base 2, tl.dot for QK^T and for PV), compiled by Triton "
        f"{triton.__version__} for",
        "// sm_80 with num_stages=3: cp.async pipeline, ldmatrix (.x4, .x4.trans), mma.sync m16n8k16,",
        "// ex2.approx. Batch 1, 2 heads, seq 128, head dim 64 (Q, K, V: triton_attn_{q,k,v}.npy),",
        "// BLOCK_M 64, BLOCK_N 32. The inputs make every step exact (see the script): O is the mean",
        "// of the V rows of each query's matching keys, M the base-2 log-sum-exp of the scores.",
        "// Expected values: a float64 softmax(Q K^T / 8) V and log-sum-exp in numpy.",
        "// Generated by tests/run/tools/triton_attention.py; do not edit by hand.",
        f"// RUN: --grid {N_CTX // BLOCK_M},{Z * H} --block 128 --shared {kern.metadata.shared} "
        f"--arg @triton_attn_q.npy --arg @triton_attn_k.npy --arg @triton_attn_v.npy "
        f"--arg {SM_SCALE} --arg f32[{Z * H * N_CTX}] --arg f16[{elems}] {strides} "
        f"--arg {Z} --arg {H} --arg {N_CTX} --arg 0 --arg 0",
        f"// EXPECT 4 f32: {m_bits}",
        f"// EXPECT 5 f16: {o_bits}",
    ]
    with open(os.path.join(OUT, "triton_attention.ptx"), "w") as f:
        f.write("\n".join(hdr) + "\n" + ptx)


if __name__ == "__main__":
    main()
