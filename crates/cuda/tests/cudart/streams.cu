// Streams and events: pinned host memory, asynchronous copies and launches on two streams,
// an event one stream waits for, cudaEventElapsedTime, stream and event queries.
#include "check.cuh"

__global__ void add_one(int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1;
}

__global__ void twice(const int *src, int *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 2 * src[i];
}

int main() {
    const int n = 4096;
    int *h, *d1, *d2;
    CHECK(cudaMallocHost(&h, n * sizeof(int)));
    CHECK(cudaMalloc(&d1, n * sizeof(int)));
    CHECK(cudaMalloc(&d2, n * sizeof(int)));
    for (int i = 0; i < n; i++) h[i] = i;

    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t start, done1, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&done1));
    CHECK(cudaEventCreate(&stop));

    CHECK(cudaEventRecord(start, s1));
    CHECK(cudaMemcpyAsync(d1, h, n * sizeof(int), cudaMemcpyHostToDevice, s1));
    for (int k = 0; k < 3; k++) add_one<<<n / 256, 256, 0, s1>>>(d1, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(done1, s1));
    CHECK(cudaStreamWaitEvent(s2, done1, 0));
    twice<<<n / 256, 256, 0, s2>>>(d1, d2, n);
    CHECK(cudaEventRecord(stop, s2));
    CHECK(cudaMemcpyAsync(h, d2, n * sizeof(int), cudaMemcpyDeviceToHost, s2));
    CHECK(cudaStreamSynchronize(s2));
    CHECK(cudaEventSynchronize(stop));
    EXPECT(cudaStreamQuery(s2) == cudaSuccess);
    EXPECT(cudaEventQuery(stop) == cudaSuccess);
    for (int i = 0; i < n; i++) EXPECT(h[i] == 2 * (i + 3));
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0.0f);

    // the legacy default stream after work on s1
    add_one<<<n / 256, 256, 0, s1>>>(d1, n);
    CHECK(cudaMemcpy(h, d1, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == i + 4);

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(done1));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFreeHost(h));
    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    std::printf("streams: ok\n");
    return 0;
}
