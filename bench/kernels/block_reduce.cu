// Block reduction: block b sums x[b*per_block .. (b+1)*per_block) into
// partial[b]. Each thread first adds the elements t, t + blockDim.x, ... of the
// block's chunk, then the block folds the blockDim.x thread sums with a halving
// tree in shared memory, one __syncthreads per level. blockDim.x must be a power
// of two and at most 256.
extern "C" __global__ void block_reduce(const float* x, float* partial, int per_block)
{
    __shared__ float buf[256];
    unsigned t = threadIdx.x;
    const float* chunk = x + (size_t)blockIdx.x * per_block;
    float acc = 0.0f;
    for (int i = t; i < per_block; i += blockDim.x) {
        acc += chunk[i];
    }
    buf[t] = acc;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        if (t < half) {
            buf[t] = buf[t] + buf[t + half];
        }
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = buf[0];
    }
}
