// What cudart registers from a program: a kernel and the three kinds of module variables.
// tests/export_table.rs loads registration.fatbin (nvcc's default target: PTX for compute_75
// and SASS for sm_75, zstd-compressed) the way cudart 13 does, without nvcc or cudart.
__constant__ int bias;
__device__ int table[4] = {1, 2, 3, 4};
__managed__ int total;

// out[i] = table[i % 4] + bias; total += every out[i]
extern "C" __global__ void accumulate(int *out)
{
    int v = table[threadIdx.x % 4] + bias;
    out[threadIdx.x] = v;
    atomicAdd(&total, v);
}
