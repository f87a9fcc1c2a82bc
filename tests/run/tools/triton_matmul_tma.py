#!/usr/bin/env python3
"""Generates tests/run/matrix/triton_matmul_tma_sm90.ptx: a Triton fp16 matmul over host-side tensor
descriptors (TensorDescriptor arguments: desc.load / desc.store), compiled by Triton for sm_90a
with num_stages=3. Triton lowers it to TMA: per stage an mbarrier.arrive.expect_tx and two
cp.async.bulk.tensor.2d loads (global -> shared::cta, 64B swizzle, mbarrier::complete_tx) waited
with mbarrier.try_wait.parity, wgmma.mma_async m64n32k16 on the swizzled tiles, and the f32
result written back with a cp.async.bulk.tensor.2d store (128B swizzle) in a bulk group.

Each descriptor argument is a CUtensorMap (128 bytes, .param .align 64 .b8 [128]) followed by
its shape (2 x i32) and strides (2 x i64, in elements), as Triton's launcher passes them. On
the command line the map is ptxvm's tensor-map struct (docs/async.md, "Tensor maps"): the
fields Triton's launcher would give cuTensorMapEncodeTiled (tensor_map below).

C (128x64) = A (128x160, triton_tma_a.npy) x B (160x64, triton_tma_b.npy), 64x32x32 blocks,
grid 2x2, five K blocks (pipeline prologue, steady state and drain). Small-integer inputs make
the expected output (an integer matmul in numpy) exact in f32.

Needs triton and numpy (not needed to run the test):
    /tmp/venv-triton/bin/python tests/run/tools/triton_matmul_tma.py
"""

import os

import numpy as np
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "matrix")
M, N, K = 128, 64, 160
BM, BN, BK = 64, 32, 32


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


# CUtensorMapDataType values (the host enum, which ptxvm's map uses)
DTYPE = {"f16": (6, 2), "f32": (7, 4)}


def tensor_map(buf, dtype, rows, cols, box_rows, box_cols, swizzle):
    """ptxvm's tensor-map struct for a row-major rows x cols tensor in buffer BUF (docs/async.md):
    magic, version 1, data type, rank 2, tile mode; address; dims (innermost first); zero;
    dim-1 stride in bytes; box dims; element strides 1; interleave none, SWIZZLE (1 32B,
    2 64B, 3 128B), no L2 promotion, zero fill; the im2col fields and the tail zero."""
    code, size = DTYPE[dtype]
    return ("{u32:0x50414d54," f"u8:[1,{code},2,0],{buf},u32:[{cols},{rows},1,1,1],u32:0,"
            f"u64:[{cols * size},0,0,0],u16:[{box_cols},{box_rows},1,1,1],u8:[1,1,1,1,1],"
            f"u8:[0,{swizzle},0,0],i8:[0,0,0,0,0,0],u8:0,u16:[0,0],"
            "u16:[0,0,0,0,0,0,0,0,0,0,0,0,0]}")


def main():
    sig = {"a_desc": f"tensordesc<fp16[{BM}, {BK}]>", "b_desc": f"tensordesc<fp16[{BK}, {BN}]>",
           "c_desc": f"tensordesc<fp32[{BM}, {BN}]>", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
    src = ASTSource(fn=matmul_tma, signature=sig,
                    constexprs={"BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "num_stages": 3})
    ptx = k.asm["ptx"]
    for needed in ("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes",
                   "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
                   "mbarrier.try_wait.parity", "wgmma.mma_async", ".target sm_90a"):
        assert needed in ptx, needed
    # the layouts Triton asked for (its launcher would encode the maps with these)
    meta = k.metadata.tensordesc_meta
    want = [(2, 6, [BM, BK]), (2, 6, [BK, BN]), (3, 7, [BM, BN])]
    got = [(m["swizzle"], m["elem_type"], list(m["block_size"])) for m in meta]
    assert got == want, got

    rng = np.random.default_rng(90)
    a = rng.integers(-3, 4, size=(M, K))
    b = rng.integers(-3, 4, size=(K, N))
    c = a @ b
    np.save(os.path.join(OUT, "triton_tma_a.npy"), a.astype(np.float16))
    np.save(os.path.join(OUT, "triton_tma_b.npy"), b.astype(np.float16))
    args = [tensor_map("@triton_tma_a.npy", "f16", M, K, BM, BK, 2), str(M), str(K), str(K), "1",
            tensor_map("@triton_tma_b.npy", "f16", K, N, BK, BN, 2), str(K), str(N), str(N), "1",
            tensor_map(f"f32[{M * N}]", "f32", M, N, BM, BN, 3), str(M), str(N), str(N), "1",
            str(K), "0", "0"]
    vals = " ".join(str(int(x)) for x in c.ravel())
    hdr = [
        "// A Triton fp16 matmul over tensor descriptors (desc.load/desc.store, tl.dot into f32,",
        f"// {BM}x{BN}x{BK} blocks, 4 warps) compiled by Triton {triton.__version__} for sm_90a with "
        "num_stages=3:",
        "// TMA loads (cp.async.bulk.tensor.2d, 64B swizzle, mbarrier expect_tx/complete_tx,",
        "// try_wait.parity) into wgmma.mma_async m64n32k16, and a TMA store (128B swizzle, bulk group).",
        f"// C ({M}x{N}) = A ({M}x{K}, triton_tma_a.npy) x B ({K}x{N}, triton_tma_b.npy); each",
        "// descriptor argument is a tensor map (ptxvm's struct, docs/async.md) + shape + strides.",
        "// Small-integer inputs make the expected output (numpy) exact.",
        "// Generated by tests/run/tools/triton_matmul_tma.py; do not edit by hand.",
        f"// RUN: --grid {M // BM},{N // BN} --block 128 --shared {k.metadata.shared} "
        + " ".join(f"--arg {x}" for x in args),
        f"// EXPECT 10.2 f32: {vals}",
    ]
    with open(os.path.join(OUT, "triton_matmul_tma_sm90.ptx"), "w") as f:
        f.write("\n".join(hdr) + "\n" + ptx)


if __name__ == "__main__":
    main()
