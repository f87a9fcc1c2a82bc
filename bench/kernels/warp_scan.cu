// Warp-shuffle inclusive scan of u32 (wrapping) within each block: each warp
// scans its 32 values with __shfl_up_sync (5 steps), lane 31 writes the warp's
// total to shared memory, warp 0 scans the warp totals the same way, and every
// warp but the first adds the total of the warps before it. out[i] is the sum of
// in[block_start .. i]. blockDim.x must be a multiple of 32 (at most 1024).
extern "C" __global__ void warp_scan(const unsigned int* in, unsigned int* out, int n)
{
    __shared__ unsigned int warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    unsigned int v = i < n ? in[i] : 0u;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        unsigned int t = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) {
            v += t;
        }
    }
    if (lane == 31) {
        warp_sums[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        unsigned int s = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0u;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            unsigned int t = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d) {
                s += t;
            }
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    if (warp > 0) {
        v += warp_sums[warp - 1];
    }
    if (i < n) {
        out[i] = v;
    }
}
