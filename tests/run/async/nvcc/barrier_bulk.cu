// cuda::memcpy_async of a 16-byte-aligned block into shared memory completed through a
// cuda::barrier (block scope), compiled for sm_90: libcu++ issues cp.async.bulk with
// mbarrier complete_tx. 128 threads; out[i] = in[i] * 3 + block for 512 ints per block.
#include <cuda/barrier>
#include <utility>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

extern "C" __global__ void barrier_bulk(const int *in, int *out)
{
    __shared__ alignas(128) int smem[512];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x);
    __syncthreads();
    const int *src = in + blockIdx.x * 512;
    if (threadIdx.x == 0)
        cuda::memcpy_async(smem, src, cuda::aligned_size_t<16>(sizeof(smem)), bar);
    block_barrier::arrival_token token = bar.arrive();
    bar.wait(std::move(token));
    for (int k = threadIdx.x; k < 512; k += blockDim.x)
        out[blockIdx.x * 512 + k] = smem[k] * 3 + blockIdx.x;
}
