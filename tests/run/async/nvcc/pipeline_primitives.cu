// Double-buffered tile copy with the pipeline primitives (__pipeline_memcpy_async,
// __pipeline_commit, __pipeline_wait_prior), compiled for sm_80: cp.async with groups.
// out[i] = 2 * in[i] + 1 over ntiles tiles of 128 floats, 32 threads.
#include <cuda_pipeline.h>

extern "C" __global__ void pipeline_primitives(const float *in, float *out, int ntiles)
{
    __shared__ alignas(16) float buf[2][128];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[0][4 * t], &in[4 * t], 16);
    __pipeline_commit();
    for (int i = 0; i < ntiles; i++) {
        if (i + 1 < ntiles)
            __pipeline_memcpy_async(&buf[(i + 1) % 2][4 * t], &in[(i + 1) * 128 + 4 * t], 16);
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        for (int k = 0; k < 4; k++) {
            // each thread reads another thread's words: the barrier made them visible
            int j = (4 * t + 64 + k) % 128;
            out[i * 128 + j] = 2.0f * buf[i % 2][j] + 1.0f;
        }
        __syncthreads();
    }
}
