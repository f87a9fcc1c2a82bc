// Source of early_return_barrier.ptx:
//   nvcc -ptx -arch=sm_80 early_return_barrier.cu (then .version set to 8.5 and the header
//   comments added).
// The common CUDA pattern of returning early before __syncthreads(): threads past the end of
// the data leave, the others synchronise. Since Volta, bar.sync (and its derivatives) waits
// for every thread of the block that has not exited.
__global__ void early_return_barrier(const unsigned *in, unsigned *out, unsigned n) {
    __shared__ unsigned s[256];
    unsigned i = threadIdx.x;
    if (i >= n) return;
    s[i] = in[i] * 3;
    __syncthreads();
    unsigned v = s[n - 1 - i];
    unsigned odd = __syncthreads_count(v & 1);
    int all_small = __syncthreads_and(v < 600);
    int any_big = __syncthreads_or(v > 590);
    out[i] = v + (odd << 16) + (all_small << 28) + (any_big << 29);
}
