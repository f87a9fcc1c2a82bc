// Four host threads use the runtime at once, each with its own stream: cudart makes the primary
// context current on each thread and keeps its per-thread state through the driver.
#include "check.cuh"
#include <thread>
#include <vector>

__global__ void fill(int *p, int base, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = base + i;
}

static void work(int id, int *ok) {
    const int n = 5000;
    int *d;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    fill<<<(n + 255) / 256, 256, 0, s>>>(d, id * 100000, n);
    CHECK(cudaGetLastError());
    std::vector<int> h(n);
    CHECK(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++)
        if (h[i] != id * 100000 + i) return;
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    *ok = 1;
}

int main() {
    int ok[4] = {0, 0, 0, 0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) threads.emplace_back(work, t, &ok[t]);
    for (auto &t : threads) t.join();
    for (int t = 0; t < 4; t++) EXPECT(ok[t] == 1);
    std::printf("threads: ok\n");
    return 0;
}
