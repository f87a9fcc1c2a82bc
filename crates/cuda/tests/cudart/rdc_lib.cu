// The second translation unit of rdc.cu (built with -rdc=true): a __device__ function and a
// __device__ table the other file uses, and a host function that writes the table.
#include "check.cuh"

__device__ int offsets[4] = {10, 20, 30, 40};

__device__ int lookup(int i) { return offsets[i % 4]; }

void set_offsets(const int *values) {
    CHECK(cudaMemcpyToSymbol(offsets, values, 4 * sizeof(int)));
}
