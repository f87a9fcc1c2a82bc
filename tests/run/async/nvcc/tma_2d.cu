// The CUDA programming guide's TMA pattern with libcu++ (sm_90): a 2D box loaded into shared
// memory with cp_async_bulk_tensor_2d_global_to_shared completing on a block-scope
// cuda::barrier (barrier_arrive_tx), changed in place, and stored back with
// cp_async_bulk_tensor_2d_shared_to_global through a second tensor map (bulk group).
// Block b loads the 32 x 8 box at (16 b, 3) of `in` (40 x 10 f32; columns 40.. are out of
// bounds and read as zeros), computes v * 2 + b, and stores the box at (32 b, 8 b) of `out`
// (64 x 16 f32). 256 threads, one element each.
#include <cuda.h>
#include <cuda/barrier>
#include <utility>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

extern "C" __global__ void tma_2d(const __grid_constant__ CUtensorMap in,
                                  const __grid_constant__ CUtensorMap out)
{
    __shared__ alignas(128) float smem[8][32];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(&smem, &in, 16 * blockIdx.x, 3, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem));
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    float *s = &smem[0][0];
    s[threadIdx.x] = s[threadIdx.x] * 2.0f + blockIdx.x;
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&out, 32 * blockIdx.x, 8 * blockIdx.x, &smem);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
}
