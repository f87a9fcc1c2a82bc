#!/usr/bin/env python3
"""Expected buffers of tests/run/async/*.ptx, from the ISA's description of each instruction
(independent of ptxvm). Usage: python3 async_ref.py NAME, prints the EXPECT lines."""
import sys


def words(bs):
    return [int.from_bytes(bytes(bs[i:i + 4]), "little") for i in range(0, len(bs), 4)]


def u32_bytes(vals):
    return b"".join(v.to_bytes(4, "little") for v in vals)


def cp_async():
    src = u32_bytes(range(128))
    out1 = []
    for t in range(32):
        size = 6 if t == 31 else 4 * (t % 5)
        chunk = src[16 * t:16 * t + 16]
        out1 += list(chunk[:size]) + [0] * (16 - size)  # zero fill past src-size
    out2 = []
    for t in range(32):
        out2 += [0, 0] if t % 2 else [2 * t, 2 * t + 1]  # ignore-src zero fills
    out3 = [t if t < 16 else 0 for t in range(32)]
    return {1: list(range(128)), 2: words(out1), 3: out2, 4: out3}


def cp_async_wait_group():
    # a destination reads 0xffffffff between its cp.async and the wait that completes it
    pending = 0xFFFFFFFF
    out = []
    for t in range(32):
        out += [t, pending, pending]                 # after wait_group 2 (of 3 groups)
        out += [t, 32 + t, pending]                  # after wait_group 1
        out += [64 + t, 96 + t]                      # after wait_all (words 2, 3)
    return {1: out}


def bulk_half_multicast():
    # halves k - 16 reduced element-wise into constant buffers (exact in f16 and bf16)
    h = [k - 16 for k in range(32)]
    return {
        1: [min(1.5, v) for v in h],            # .min.f16
        2: [max(1.5, v) for v in h],            # .max.bf16
        3: [v + 0.5 for v in h],                # .add.noftz.f16
        4: list(range(32)) + [7] * 32,          # multicast ctaMask 1 reaches, 0 does not
    }


def nvcc_pipeline_primitives():
    # out[i] = 2 * in[i] + 1, in = iota (f32, exact)
    return {1: [2 * i + 1 for i in range(384)]}


def nvcc_cuda_pipeline():
    # out[i] = in[i]^2 - 7, in = iota (i32)
    return {1: [i * i - 7 for i in range(320)]}


def nvcc_barrier_bulk():
    # out[i] = 3 * in[i] + block, 512 ints per block, in = iota (i32)
    return {1: [3 * i + i // 512 for i in range(1024)]}


TYPES = {"bulk_half_multicast": {1: "f16", 2: "bf16", 3: "f16"}, "nvcc_pipeline_primitives": "f32", "nvcc_cuda_pipeline": "i32", "nvcc_barrier_bulk": "i32"}


def num(x):
    return str(int(x)) if x == int(x) else str(x)


def fmt(v):
    v = [num(x) for x in v]
    out, i = [], 0
    while i < len(v):
        j = i
        while j < len(v) and v[j] == v[i]:
            j += 1
        out.append(f"{j - i}*{v[i]}" if j - i > 3 else " ".join([str(v[i])] * (j - i)))
        i = j
    return " ".join(out)


if __name__ == "__main__":
    for n, v in globals()[sys.argv[1]]().items():
        ty = TYPES.get(sys.argv[1], "u32")
        ty = ty.get(n, "u32") if isinstance(ty, dict) else ty
        print(f"// EXPECT {n} {ty}: {fmt(v)}")
