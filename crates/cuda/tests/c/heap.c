/* Device-side malloc through the driver: CU_LIMIT_MALLOC_HEAP_SIZE sizes the heap before the
 * first kernel that uses it; 32 threads each ask for 16 bytes of a 256-byte heap, so lanes 0-15
 * get distinct 16-byte-aligned blocks (one warp allocates in lane order) and lanes 16-31 get
 * NULL. Once such a kernel has run, the size can no longer change (CUDA_ERROR_INVALID_VALUE). */
#include "check.h"

static const char *HEAP_PTX =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".extern .func (.param .b64 ret) malloc(.param .b64 size);\n"
    ".visible .entry grab(.param .u64 out)\n"
    "{\n"
    "    .reg .b32 %r<2>;\n"
    "    .reg .b64 %rd<6>;\n"
    "    .reg .pred %p;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    {\n"
    "    .param .b64 sz;\n"
    "    .param .b64 rv;\n"
    "    st.param.b64 [sz], 16;\n"
    "    call.uni (rv), malloc, (sz);\n"
    "    ld.param.b64 %rd2, [rv];\n"
    "    }\n"
    "    mul.wide.u32 %rd3, %r1, 8;\n"
    "    add.s64 %rd4, %rd1, %rd3;\n"
    "    st.global.u64 [%rd4], %rd2;\n"
    "    ret;\n"
    "}\n";

int main(void) {
    CUdevice dev;
    CUcontext ctx = create_context(&dev);
    size_t lim = 0;
    OK(cuCtxGetLimit(&lim, CU_LIMIT_MALLOC_HEAP_SIZE));
    ASSERT(lim == 8u << 20);
    OK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 256));
    CUmodule m;
    CUfunction f;
    OK(cuModuleLoadData(&m, HEAP_PTX));
    OK(cuModuleGetFunction(&f, m, "grab"));
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 32 * 8));
    void *params[] = {&out};
    OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    OK(cuCtxSynchronize());
    unsigned long long p[32];
    OK(cuMemcpyDtoH(p, out, sizeof p));
    for (int i = 0; i < 16; i++) {
        ASSERT(p[i] != 0 && p[i] % 16 == 0);
        for (int j = 0; j < i; j++) ASSERT(p[i] != p[j]);
    }
    for (int i = 16; i < 32; i++) ASSERT(p[i] == 0);
    EXPECT(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 1 << 20), CUDA_ERROR_INVALID_VALUE);
    OK(cuCtxGetLimit(&lim, CU_LIMIT_MALLOC_HEAP_SIZE));
    ASSERT(lim == 256);
    OK(cuMemFree(out));
    OK(cuModuleUnload(m));
    OK(cuCtxDestroy(ctx));
    (void)KERNELS;
    printf("heap: ok\n");
    return 0;
}
