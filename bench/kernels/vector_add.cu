// Vector add, f32, memory-bound: c[i] = a[i] + b[i], one element per thread.
// Two 4-byte loads, one add and one 4-byte store per thread; n need not be a
// multiple of the block size (threads past n do nothing).
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
