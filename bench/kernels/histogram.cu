// 256-bin histogram of bytes: block b counts data[b*per_block .. (b+1)*per_block)
// (clipped to n) into a shared-memory histogram with atom.shared.add, then adds
// its non-zero bins to the global histogram with atom.global.add. The global
// bins must be zero before the launch.
extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n, int per_block)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    int start = blockIdx.x * per_block;
    int end = min(start + per_block, n);
    for (int i = start + threadIdx.x; i < end; i += blockDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int v = local[b];
        if (v != 0) {
            atomicAdd(&bins[b], v);
        }
    }
}
