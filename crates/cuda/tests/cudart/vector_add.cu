// cudaMalloc, cudaMemcpy both ways, a <<<>>> launch of a templated kernel and of a plain one,
// cudaGetLastError, device properties, function attributes and a bad launch configuration.
#include "check.cuh"
#include <vector>

template <typename T>
__global__ void axpy(T alpha, const T *x, const T *y, T *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * x[i] + y[i];
}

__global__ void iota(int *out, int n, int base) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = base + i;
}

int main() {
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    EXPECT(count == 1);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    EXPECT(prop.warpSize == 32 && prop.major >= 7);
    int driver = 0, runtime = 0;
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    EXPECT(runtime >= 12000 && driver >= runtime);

    const int n = 3000;
    std::vector<float> x(n), y(n), out(n);
    for (int i = 0; i < n; i++) { x[i] = float(i); y[i] = float(2 * i + 1); }
    float *dx, *dy, *dout;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dout, 0, n * sizeof(float)));
    axpy<float><<<(n + 255) / 256, 256>>>(3.0f, dx, dy, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(out[i] == 3.0f * x[i] + y[i]);

    // a double instantiation of the same template: a second function of the same module
    double *dd;
    CHECK(cudaMalloc(&dd, 3 * 64 * sizeof(double)));
    std::vector<double> hd(3 * 64);
    for (int i = 0; i < 128; i++) hd[i] = i * 0.5;
    CHECK(cudaMemcpy(dd, hd.data(), 128 * sizeof(double), cudaMemcpyHostToDevice));
    axpy<double><<<1, 64>>>(-2.0, dd, dd + 64, dd + 128, 64);
    CHECK(cudaMemcpy(hd.data(), dd, hd.size() * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++) EXPECT(hd[128 + i] == -2.0 * (i * 0.5) + (64 + i) * 0.5);

    int *di;
    CHECK(cudaMalloc(&di, n * sizeof(int)));
    iota<<<4, 128>>>(di, n, 7);
    CHECK(cudaGetLastError());
    std::vector<int> hi(n);
    CHECK(cudaMemcpy(hi.data(), di, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(hi[i] == 7 + i);

    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, iota));
    EXPECT(attr.maxThreadsPerBlock > 0);

    // a block too large: the launch fails, the error is not sticky (a GPU says
    // cudaErrorInvalidConfiguration; ptxvm's driver answers CUDA_ERROR_INVALID_VALUE, which
    // cudart reports as cudaErrorInvalidValue)
    iota<<<1, 4096>>>(di, n, 0);
    cudaError_t bad = cudaGetLastError();
    if (bad != cudaErrorInvalidConfiguration && bad != cudaErrorInvalidValue) {
        std::fprintf(stderr, "a 4096-thread block: %s\n", cudaGetErrorName(bad));
        return 1;
    }
    CHECK(cudaGetLastError());

    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dd));
    CHECK(cudaFree(di));
    std::printf("vector_add: ok\n");
    return 0;
}
