// Distributed shared memory and asynchronous copies across a 2-block cluster, written with
// cooperative groups and libcu++'s cuda::ptx wrappers (sm_90a):
//  - rank 0 loads 64 ints of `in` (from 64 * clusterid) with one multicast bulk copy
//    (cp.async.bulk ... .multicast::cluster, ctaMask 0b11) into `tile` of both blocks;
//  - every thread pushes 1000 * blockIdx.x + t into the partner's `pushed[t]` with st.async,
//    completing on the partner's mbarrier (found with cluster.map_shared_rank);
//  - thread 0 copies its block's `mine` (t * t) into the partner's `copied` with
//    cp.async.bulk.shared::cluster.shared::cta;
//  - each block waits on its own mbarrier (768 bytes expected) and writes
//    out[192 b + t] = tile[t] * 2, out[192 b + 64 + t] = pushed[t], out[192 b + 128 + t] = copied[t].
#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cstdint>
namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_dsmem_async(const int *in, int *out)
{
    __shared__ alignas(128) int tile[64];
    __shared__ alignas(16) int pushed[64];
    __shared__ alignas(16) int mine[64];
    __shared__ alignas(16) int copied[64];
    __shared__ alignas(8) uint64_t bar;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int t = threadIdx.x;
    mine[t] = t * t;
    if (t == 0) {
        ptx::mbarrier_init(&bar, 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    ptx::fence_proxy_async(ptx::space_shared);
    cluster.sync();
    int *peer_pushed = cluster.map_shared_rank(pushed, rank ^ 1);
    int *peer_copied = cluster.map_shared_rank(copied, rank ^ 1);
    uint64_t *peer_bar = cluster.map_shared_rank(&bar, rank ^ 1);
    if (t == 0) {
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                       3 * 64 * sizeof(int));
        if (rank == 0)
            ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, tile,
                               in + 64 * (blockIdx.x / 2), 64 * sizeof(int), &bar, uint16_t(0b11));
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_shared, peer_copied, mine,
                           64 * sizeof(int), peer_bar);
    }
    ptx::st_async(peer_pushed + t, int32_t(1000 * blockIdx.x + t), peer_bar);
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    out[192 * blockIdx.x + t] = tile[t] * 2;
    out[192 * blockIdx.x + 64 + t] = pushed[t];
    out[192 * blockIdx.x + 128 + t] = copied[t];
    cluster.sync();
}
