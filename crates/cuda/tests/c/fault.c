/* Memory past the requested size is within reach up to the 256-byte granule (as on a GPU). A
 * faulting kernel: ptxvm's report on stderr, the CUDA error a GPU gives, sticky for the
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
    EXPECT(cuMemcpyDtoH(&x, d + 16, 4), CUDA_ERROR_INVALID_VALUE); /* host copies: exact */

    /* one past the end: of the 256-byte granule a GPU allocates, or with PTXVM_EXACT_BOUNDS=1
     * of the 16 bytes asked for */
    const char *exact = getenv("PTXVM_EXACT_BOUNDS");
    off = exact && strcmp(exact, "1") == 0 ? 16 : 256;
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
