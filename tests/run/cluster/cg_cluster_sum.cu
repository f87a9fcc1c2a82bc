// Cluster histogram-style exchange with cooperative groups (sm_90): each block of a 2-block
// cluster stores its input slice in shared memory, syncs the cluster, then sums its own value
// with the partner block's value at the mirrored index through map_shared_rank.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_sum(const int *in, int *out, unsigned *ranks)
{
    __shared__ int smem[64];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    smem[t] = in[g];
    cluster.sync();
    int *peer = cluster.map_shared_rank(smem, rank ^ 1);
    out[g] = smem[t] + peer[blockDim.x - 1 - t];
    if (t == 0) {
        ranks[blockIdx.x * 2] = rank;
        ranks[blockIdx.x * 2 + 1] = cluster.num_blocks();
    }
    cluster.sync();
}
