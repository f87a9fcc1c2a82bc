/* A faulting kernel: ptxvm's report on stderr, the CUDA error a GPU gives, sticky for the
 * context; other contexts go on. */
#include "check.h"

int main(void) {
    CUcontext ctx, other;
    CUmodule mod;
    CUfunction poke, trapper;
    CUdeviceptr d;
    OK(cuInit(0));
    OK(cuCtxCreate(&other, 0, 0));
    OK(cuCtxCreate(&ctx, 0, 0));
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&poke, mod, "poke"));
    OK(cuMemAlloc(&d, 16));

    unsigned long long off = 12;
    void *params[] = {&d, &off};
    OK(cuLaunchKernel(poke, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    unsigned int x = 0;
    OK(cuMemcpyDtoH(&x, d + 12, 4));
    ASSERT(x == 7);

    off = 16; /* one past the end */
    EXPECT(cuLaunchKernel(poke, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
           CUDA_ERROR_ILLEGAL_ADDRESS);
    /* sticky: every later call in the context reports it */
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuMemcpyDtoH(&x, d, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
    CUdeviceptr d2;
    EXPECT(cuMemAlloc(&d2, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuLaunchKernel(poke, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
           CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(cuCtxDestroy(ctx));

    /* another context is unaffected; a trap is a launch failure */
    OK(cuCtxSetCurrent(other));
    OK(cuMemAlloc(&d2, 16));
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&trapper, mod, "trapper"));
    EXPECT(cuLaunchKernel(trapper, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
           CUDA_ERROR_LAUNCH_FAILED);
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    printf("fault: ok\n");
    return 0;
}
