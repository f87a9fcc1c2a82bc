// cudaDeviceReset in the middle of a program: the runtime starts again on the same device
// (memory from before is gone, kernels and symbols still work), device printf, occupancy.
#include "check.cuh"

__device__ int scale = 3;

__global__ void times(int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = i * scale;
    if (i == 0) printf("kernel says %d\n", scale + 4);
}

static void round_trip(int n) {
    int *d;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    times<<<(n + 127) / 128, 128>>>(d, n);
    CHECK(cudaGetLastError());
    int *h = new int[n];
    CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * i);
    delete[] h;
    CHECK(cudaFree(d));
}

int main() {
    round_trip(300);
    int block = 0, grid = 0, active = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, times));
    EXPECT(block > 0 && block <= 1024 && grid > 0);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, times, 128, 0));
    EXPECT(active > 0);
    CHECK(cudaDeviceReset());
    int s = 0;
    CHECK(cudaMemcpyFromSymbol(&s, scale, sizeof(int)));
    EXPECT(s == 3);
    round_trip(1000);
    CHECK(cudaDeviceReset());
    std::printf("reset: ok\n");
    return 0;
}
