/* Two host threads, each with its own context, launching at the same time; the current
 * context is per thread. */
#include "check.h"
#include <pthread.h>

enum { N = 4096 };

static void *work(void *arg) {
    int id = *(int *)arg;
    CUcontext ctx, cur;
    CUmodule mod;
    CUfunction vadd;
    OK(cuCtxCreate(&ctx, 0, 0));
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&vadd, mod, "vadd"));
    static float a[2][N], c[2][N];
    for (int i = 0; i < N; i++) a[id][i] = (float)(i * (id + 1));
    CUdeviceptr da, dc;
    OK(cuMemAlloc(&da, sizeof a[id]));
    OK(cuMemAlloc(&dc, sizeof c[id]));
    OK(cuMemcpyHtoD(da, a[id], sizeof a[id]));
    unsigned int n = N;
    void *params[] = {&da, &da, &dc, &n};
    for (int rep = 0; rep < 20; rep++) {
        OK(cuLaunchKernel(vadd, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
        OK(cuCtxGetCurrent(&cur));
        ASSERT(cur == ctx);
    }
    OK(cuMemcpyDtoH(c[id], dc, sizeof c[id]));
    for (int i = 0; i < N; i++) ASSERT(c[id][i] == 2.0f * i * (id + 1));
    OK(cuCtxDestroy(ctx));
    return NULL;
}

int main(void) {
    OK(cuInit(0));
    pthread_t t[2];
    int ids[2] = {0, 1};
    for (int k = 0; k < 2; k++) ASSERT(pthread_create(&t[k], NULL, work, &ids[k]) == 0);
    for (int k = 0; k < 2; k++) ASSERT(pthread_join(t[k], NULL) == 0);
    CUcontext cur = (CUcontext)1;
    OK(cuCtxGetCurrent(&cur));
    ASSERT(cur == NULL); /* the threads' contexts were never current here */
    printf("threads: ok\n");
    return 0;
}
