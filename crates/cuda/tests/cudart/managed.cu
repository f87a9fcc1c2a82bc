// __managed__ variables and cudaMallocManaged: host and kernels share them, the host reading
// after cudaDeviceSynchronize.
#include "check.cuh"

__managed__ int histogram[16];
__managed__ float scale = 2.0f;

__global__ void fill(const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&histogram[in[i] % 16], 1);
}

__global__ void scale_all(float *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= scale;
}

int main() {
    const int n = 1000;
    int *in;
    CHECK(cudaMallocManaged(&in, n * sizeof(int)));
    for (int i = 0; i < n; i++) in[i] = i * 3;
    for (int b = 0; b < 16; b++) histogram[b] = 0;
    fill<<<(n + 127) / 128, 128>>>(in, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int expect[16] = {0};
    for (int i = 0; i < n; i++) expect[(i * 3) % 16]++;
    for (int b = 0; b < 16; b++) EXPECT(histogram[b] == expect[b]);

    float *v;
    CHECK(cudaMallocManaged(&v, n * sizeof(float)));
    for (int i = 0; i < n; i++) v[i] = i;
    scale = 0.5f;
    scale_all<<<(n + 255) / 256, 256>>>(v, n);
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++) EXPECT(v[i] == i * 0.5f);
    CHECK(cudaFree(in));
    CHECK(cudaFree(v));
    std::printf("managed: ok\n");
    return 0;
}
