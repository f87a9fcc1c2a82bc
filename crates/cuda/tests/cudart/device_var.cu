// __device__ variables: initialised in the image, written by kernels (atomics), read and
// written from the host with cudaMemcpyFromSymbol/ToSymbol and through cudaGetSymbolAddress.
#include "check.cuh"

__device__ unsigned counter = 5;
__device__ int table[4] = {10, 20, 30, 40};

__global__ void count(int rounds) {
    for (int r = 0; r < rounds; r++) atomicAdd(&counter, 1u);
    if (threadIdx.x < 4 && blockIdx.x == 0) table[threadIdx.x] += 1;
}

__global__ void read_table(int *out) { out[threadIdx.x] = table[threadIdx.x] * 2; }

int main() {
    unsigned c = 0;
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof(c)));
    EXPECT(c == 5);
    count<<<3, 32>>>(2);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof(c)));
    EXPECT(c == 5 + 3 * 32 * 2);

    int *addr = nullptr;
    CHECK(cudaGetSymbolAddress((void **)&addr, table));
    EXPECT(addr != nullptr);
    int h[4];
    CHECK(cudaMemcpy(h, addr, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 11 && h[3] == 41);
    int fresh[4] = {1, 2, 3, 4};
    CHECK(cudaMemcpyToSymbol(table, fresh, sizeof(fresh)));
    int *dout;
    CHECK(cudaMalloc(&dout, sizeof(h)));
    read_table<<<1, 4>>>(dout);
    CHECK(cudaMemcpy(h, dout, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 4; i++) EXPECT(h[i] == 2 * (i + 1));
    CHECK(cudaFree(dout));
    std::printf("device_var: ok\n");
    return 0;
}
