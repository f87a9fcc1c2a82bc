// Relocatable device code (nvcc -rdc=true rdc.cu rdc_lib.cu): a kernel calls a __device__
// function of another file, which reads that file's __device__ table; cudart registers the
// fatbins nvlink linked, whose PTX the driver's JIT linker links.
#include "check.cuh"

__device__ int lookup(int i);
void set_offsets(const int *values);

__global__ void gather(int *out) { out[threadIdx.x] = lookup(threadIdx.x) + threadIdx.x; }

static void check_with(const int *table) {
    int *d;
    CHECK(cudaMalloc(&d, 64 * sizeof(int)));
    gather<<<1, 64>>>(d);
    CHECK(cudaGetLastError());
    int h[64];
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++) EXPECT(h[i] == table[i % 4] + i);
    CHECK(cudaFree(d));
}

int main() {
    const int initial[4] = {10, 20, 30, 40};
    check_with(initial);
    const int fresh[4] = {-1, 5, 7, 1000};
    set_offsets(fresh);
    check_with(fresh);
    std::printf("rdc: ok\n");
    return 0;
}
