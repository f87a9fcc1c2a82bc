// Built for machine code only (-gencode arch=compute_80,code=sm_80): ptxvm runs PTX, so
// cudart's first call that loads the fatbin fails with cudaErrorNoKernelImageForDevice (the
// driver's CUDA_ERROR_NO_BINARY_FOR_GPU) and libcuda prints its one-line hint. cudart 13 loads
// its fatbins when it initialises, so that is cudaMalloc here (a GPU without a matching image
// fails at the launch instead). Exits 0 when that is what happened.
#include "check.cuh"

__global__ void store(int *out) { out[threadIdx.x] = threadIdx.x; }

int main() {
    int *d;
    cudaError_t e = cudaMalloc(&d, 32 * sizeof(int));
    if (e == cudaSuccess) {
        store<<<1, 32>>>(d);
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
    }
    if (e != cudaErrorNoKernelImageForDevice) {
        std::fprintf(stderr, "sass_only: expected cudaErrorNoKernelImageForDevice, got %s\n",
                     cudaGetErrorName(e));
        return 1;
    }
    std::printf("sass_only: ok\n");
    return 0;
}
