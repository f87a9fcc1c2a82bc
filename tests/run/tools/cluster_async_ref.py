#!/usr/bin/env python3
"""Expected buffers of tests/run/cluster/st_red_async.ptx, from the ISA's description of
st.async and red.async (independent of ptxvm): grid 4, 32 threads, clusters of 2; block b
receives from its partner p = b ^ 1; and of tests/run/cluster/nvcc/cluster_dsmem_async.ptx
(its .cu beside it). Usage: python3 cluster_async_ref.py [st_red_async | nvcc_dsmem], prints
the EXPECT lines."""
import struct
import sys

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def s32(v):
    return v & M32


def red_u32():
    # the partner's 32 threads each reduce once into each counter (initial values as the
    # receiving block writes them); order does not matter for these operations
    c = [0, 0, 100, 5, 0, s32(-100), 0, 3, M32, 0, 0]
    sx = lambda v: v - (1 << 32) if v >> 31 else v
    for t in range(32):
        c[0] = s32(c[0] + t)                                  # add.u32
        c[1] = s32(c[1] + (t - 16))                           # add.s32
        c[2] = min(c[2], t + 50)                              # min.u32
        c[3] = max(c[3], t)                                   # max.u32
        c[4] = s32(min(sx(c[4]), t - 16))                     # min.s32
        c[5] = s32(max(sx(c[5]), t - 16))                     # max.s32
        c[6] = 0 if c[6] >= 10 else c[6] + 1                  # inc.u32 10
        c[7] = 10 if c[7] == 0 or c[7] > 10 else c[7] - 1     # dec.u32 10
        c[8] &= M32 ^ (1 << (t & 7))                          # and.b32
        c[9] |= 1 << (t & 15)                                 # or.b32
        c[10] ^= s32(t * 0x9E3779B9)                          # xor.b32
    return c + [0] * 5


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def main():
    words, longs, floats, counters, c64 = [], [], [], [], []
    for b in range(4):
        p = b ^ 1
        words += [100 * p + t for t in range(32)]             # st.async.u32
        words += [1000 * p + k for k in range(32)]            # st.async.v2.b32 (16 threads)
        words += [2000 * p + k for k in range(64)]            # st.async.v4.b32 (16 threads)
        longs += [(p << 32) | t for t in range(32)]           # generic st.async.b64
        for t in range(16):                                   # st.async.v2.f64
            longs += [f64_bits(t + 0.5), f64_bits(-(t + 0.25))]
        floats += [100 * p + 0.5 * t for t in range(32)]      # st.async.f32
        counters += red_u32()
        c64.append(sum((1 << 32) + t for t in range(32)) & M64)  # add.u64
    fl = lambda v: repr(v) if v != int(v) else str(int(v))
    print("// EXPECT 0 u32:", " ".join(map(str, words)))
    print("// EXPECT 1 u64:", " ".join(hex(v) for v in longs))
    print("// EXPECT 2 f32:", " ".join(fl(v) for v in floats))
    print("// EXPECT 3 u32:", " ".join(hex(v) for v in counters))
    print("// EXPECT 4 u64:", " ".join(hex(v) for v in c64))


def nvcc_dsmem():
    # grid 4, 64 threads, clusters of 2 (cluster c = b // 2, partner p = b ^ 1): tile is
    # in[64c ..] (multicast by rank 0), pushed the partner's st.async values, copied the
    # partner's mine[t] = t * t
    out = []
    for b in range(4):
        c, p = b // 2, b ^ 1
        out += [2 * (64 * c + t) for t in range(64)]
        out += [1000 * p + t for t in range(64)]
        out += [t * t for t in range(64)]
    print("// EXPECT 1 i32:", " ".join(map(str, out)))


if __name__ == "__main__":
    if sys.argv[1:] == ["nvcc_dsmem"]:
        nvcc_dsmem()
    else:
        main()
