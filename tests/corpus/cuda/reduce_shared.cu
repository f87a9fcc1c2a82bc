// Block reduction with static shared memory + __syncthreads, then warp shuffles and votes.
extern "C" __global__ void reduce_sum(const float* in, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        float v = s[threadIdx.x] + s[threadIdx.x + 32];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        unsigned any = __ballot_sync(0xffffffff, v > 0.0f);
        if (threadIdx.x == 0 && __all_sync(0xffffffff, 1) && any) atomicAdd(out, v);
    }
}
