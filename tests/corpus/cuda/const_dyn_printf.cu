// __constant__ memory with initializers, dynamic shared memory, printf, assert, inline PTX asm, 3D indexing.
#include <cstdio>
#include <cassert>
__constant__ float coeffs[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
__constant__ int table[2][3] = {{1, 2, 3}, {4, 5, 6}};
extern "C" __global__ void misc(float* out, int n) {
    extern __shared__ float dyn[];
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    unsigned r;
    asm("add.u32 %0, %1, %2;" : "=r"(r) : "r"(lane), "r"((unsigned)table[t & 1][lane % 3]));
    dyn[t] = coeffs[t & 3] * r;
    __syncthreads();
    assert(n > 0);
    if (t == 0) printf("block %d n=%d v=%f\n", blockIdx.x, n, dyn[0]);
    out[blockIdx.x * n + (t % n)] = dyn[(t + 1) % n];
}
