// cuda::pipeline (thread scope, two stages) with cuda::memcpy_async, compiled for sm_80:
// cp.async with commit/wait groups under libcu++. 64 threads; each stage copies one int per
// thread. out[i] = in[i] * in[i] - 7 over ntiles tiles of 64 ints.
#include <cuda/pipeline>

extern "C" __global__ void cuda_pipeline(const int *in, int *out, int ntiles)
{
    constexpr int stages = 2;
    __shared__ alignas(16) int smem[stages][64];
    int t = threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    int fetch = 0;
    for (int i = 0; i < ntiles; i++) {
        for (; fetch < ntiles && fetch < i + stages; fetch++) {
            pipe.producer_acquire();
            cuda::memcpy_async(&smem[fetch % stages][t], &in[fetch * 64 + t], sizeof(int), pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        int v = smem[i % stages][t];
        out[i * 64 + t] = v * v - 7;
        pipe.consumer_release();
    }
}
