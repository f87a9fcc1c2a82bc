#!/usr/bin/env python3
"""Expected values of tests/run/cluster/cg_cluster_sum.ptx (the cooperative-groups kernel of
cg_cluster_sum.cu): blocks of 64 threads in clusters of 2, in[g] = g (iota);
out[g] = in[g] + in[64*(b^1) + 63 - t]; ranks[2b] = b % 2, ranks[2b+1] = 2."""

BLOCKS, THREADS = 4, 64

inp = list(range(BLOCKS * THREADS))
out = []
for b in range(BLOCKS):
    for t in range(THREADS):
        out.append(inp[b * THREADS + t] + inp[(b ^ 1) * THREADS + THREADS - 1 - t])
ranks = []
for b in range(BLOCKS):
    ranks += [b % 2, 2]
print("// EXPECT 1 i32:", " ".join(map(str, out)))
print("// EXPECT 2 u32:", " ".join(map(str, ranks)))
