/* The deprecated execution API PyCUDA-era code calls: block shape, shared size and parameter
 * bytes set one call at a time, then cuLaunch / cuLaunchGrid / cuLaunchGridAsync; and the
 * cuCtxAttach/cuCtxDetach usage count. vadd (check.h) adds a[i] + b[i] for i < n: every
 * expected value is a[i] + b[i] with a[i] = i, b[i] = 100 - 2i, or untouched (-1). */
#include "check.h"
#include <stddef.h>

#define N 100

static void check(CUdeviceptr c, unsigned upto) {
    float host[N];
    OK(cuMemcpyDtoH(host, c, sizeof host));
    for (unsigned i = 0; i < N; i++) {
        float want = i < upto ? (float)i + (100.0f - 2.0f * (float)i) : -1.0f;
        ASSERT(host[i] == want);
    }
}

int main(void) {
    CUdevice dev;
    CUcontext ctx = create_context(&dev);
    CUmodule m;
    OK(cuModuleLoadData(&m, KERNELS));
    CUfunction f;
    OK(cuModuleGetFunction(&f, m, "vadd"));

    float a[N], b[N], minus[N];
    for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 100.0f - 2.0f * (float)i, minus[i] = -1.0f;
    CUdeviceptr da, db, dc;
    OK(cuMemAlloc(&da, sizeof a));
    OK(cuMemAlloc(&db, sizeof b));
    OK(cuMemAlloc(&dc, sizeof minus));
    OK(cuMemcpyHtoD(da, a, sizeof a));
    OK(cuMemcpyHtoD(db, b, sizeof b));
    OK(cuMemcpyHtoD(dc, minus, sizeof minus));

    /* no block shape yet: the launch is refused; bad shapes and handles */
    EXPECT(cuLaunchGrid(f, 1, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncSetBlockShape(f, 0, 1, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncSetBlockShape((CUfunction)0x1234, 32, 1, 1), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuParamSetSize(f, 32765), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuParamSeti(f, -4, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuParamSeti(f, 32764, 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuParamSetv(f, 0, NULL, 8), CUDA_ERROR_INVALID_VALUE);

    /* the parameters at their offsets: three pointers, then n */
    OK(cuFuncSetBlockShape(f, 32, 1, 1));
    OK(cuParamSetv(f, 0, &da, sizeof da));
    OK(cuParamSetv(f, 8, &db, sizeof db));
    OK(cuParamSetv(f, 16, &dc, sizeof dc));
    OK(cuParamSeti(f, 24, 40));
    OK(cuParamSetSize(f, 28));
    /* one block of 32 threads: elements 0..31 */
    OK(cuLaunch(f));
    OK(cuCtxSynchronize());
    check(dc, 32);
    /* a 2x1 grid covers 64 threads, and n = 40 stops at 40 */
    OK(cuLaunchGrid(f, 2, 1));
    OK(cuCtxSynchronize());
    check(dc, 40);
    /* n changed by cuParamSeti alone; on a stream */
    OK(cuParamSeti(f, 24, N));
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    OK(cuFuncSetBlockShape(f, 16, 2, 1)); /* 32 threads a block, ntid.x = 16: i = 16 ctaid + tid.x */
    OK(cuLaunchGridAsync(f, 7, 1, s));
    OK(cuStreamSynchronize(s));
    check(dc, 7 * 16);
    OK(cuStreamDestroy(s));
    /* shared size within the limit, and past it */
    OK(cuFuncSetSharedSize(f, 1024));
    OK(cuLaunchGrid(f, 1, 1));
    OK(cuFuncSetSharedSize(f, 1 << 20));
    EXPECT(cuLaunchGrid(f, 1, 1), CUDA_ERROR_INVALID_VALUE);
    OK(cuCtxSynchronize());

    /* attach counts a usage; the context lives until the last detach */
    CUcontext attached;
    EXPECT(cuCtxAttach(&attached, 1), CUDA_ERROR_INVALID_VALUE);
    OK(cuCtxAttach(&attached, 0));
    ASSERT(attached == ctx);
    OK(cuCtxDetach(ctx));
    unsigned version = 0;
    OK(cuCtxGetApiVersion(ctx, &version));
    OK(cuMemFree(da));
    OK(cuMemFree(db));
    OK(cuMemFree(dc));
    OK(cuModuleUnload(m));
    OK(cuCtxDetach(ctx));
    EXPECT(cuCtxGetApiVersion(ctx, &version), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    printf("legacy: ok\n");
    return 0;
}
