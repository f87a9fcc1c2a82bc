/* Captured work replayed after its memory was freed (issue 23, item 4): a graph's memset and
 * memcpy nodes keep the addresses they were captured with. Replayed after cuMemFreeHost or
 * cuMemFree of their target, they used to write into whatever malloc or cuMemAlloc placed
 * there, and the launch reported success. Each replay must now fail (CUDA_ERROR_INVALID_VALUE,
 * as the same call made after the free does) and leave the new occupant untouched. */
#include "check.h"

enum { N = 4096 };

/* Captures `record(arg)` on stream `s` into an executable graph. */
static CUgraphExec capture(CUstream s, void (*record)(CUstream, void *), void *arg) {
    CUgraph g;
    CUgraphExec e;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    record(s, arg);
    OK(cuStreamEndCapture(s, &g));
    OK(cuGraphInstantiateWithFlags(&e, g, 0));
    OK(cuGraphDestroy(g));
    return e;
}

static void memset_host(CUstream s, void *p) {
    OK(cuMemsetD8Async((CUdeviceptr)p, 0xAB, N, s));
}

static CUdeviceptr copy_from;
static void copy_to(CUstream s, void *p) {
    OK(cuMemcpyAsync((CUdeviceptr)p, copy_from, N, s));
}

static void memset_dev(CUstream s, void *p) {
    OK(cuMemsetD32Async((CUdeviceptr)p, 0x07070707u, N / 4, s));
}

static int all(const unsigned char *p, unsigned char v) {
    for (int k = 0; k < N; k++)
        if (p[k] != v) return 0;
    return 1;
}

int main(void) {
    CUstream s;
    use_primary_context();
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    (void)KERNELS;

    /* 1. a memset node into pinned host memory, replayed after cuMemFreeHost */
    void *h;
    OK(cuMemHostAlloc(&h, N, 0));
    CUgraphExec e = capture(s, memset_host, h);
    OK(cuGraphLaunch(e, s));
    OK(cuStreamSynchronize(s));
    ASSERT(all(h, 0xAB));
    OK(cuMemFreeHost(h));
    /* whatever takes its place (often the very same address) */
    unsigned char *m = malloc(N);
    memset(m, 0, N);
    CUresult r = cuGraphLaunch(e, s);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
    EXPECT(r, CUDA_ERROR_INVALID_VALUE);
    ASSERT(all(m, 0));
    OK(cuGraphExecDestroy(e));

    /* 2. a memcpy node from device memory into pinned memory, the source freed */
    void *h2;
    OK(cuMemHostAlloc(&h2, N, 0));
    OK(cuMemAlloc(&copy_from, N));
    OK(cuMemsetD8(copy_from, 0x5A, N));
    e = capture(s, copy_to, h2);
    OK(cuGraphLaunch(e, s));
    OK(cuStreamSynchronize(s));
    ASSERT(all(h2, 0x5A));
    memset(h2, 0, N);
    OK(cuMemFree(copy_from));
    CUdeviceptr other;
    OK(cuMemAlloc(&other, N)); /* may sit where the source was */
    OK(cuMemsetD8(other, 0x11, N));
    r = cuGraphLaunch(e, s);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
    EXPECT(r, CUDA_ERROR_INVALID_VALUE);
    ASSERT(all(h2, 0)); /* nothing copied from the new occupant */
    OK(cuGraphExecDestroy(e));

    /* 3. a memset node into device memory, replayed after cuMemFree and a new allocation */
    CUdeviceptr d;
    OK(cuMemAlloc(&d, N));
    e = capture(s, memset_dev, (void *)d);
    OK(cuMemFree(d));
    CUdeviceptr d2;
    OK(cuMemAlloc(&d2, N));
    OK(cuMemsetD8(d2, 0, N));
    r = cuGraphLaunch(e, s);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
    EXPECT(r, CUDA_ERROR_INVALID_VALUE);
    unsigned char back[N];
    OK(cuMemcpyDtoH(back, d2, N));
    ASSERT(all(back, 0));
    /* the graph fails each time; the stream and the context stay usable */
    r = cuGraphLaunch(e, s);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
    EXPECT(r, CUDA_ERROR_INVALID_VALUE);
    OK(cuMemsetD8Async(d2, 0x22, N, s));
    OK(cuStreamSynchronize(s));
    OK(cuMemcpyDtoH(back, d2, N));
    ASSERT(all(back, 0x22));
    OK(cuGraphExecDestroy(e));

    free(m);
    OK(cuMemFreeHost(h2));
    OK(cuMemFree(other));
    OK(cuMemFree(d2));
    OK(cuStreamDestroy(s));
    printf("replay: ok\n");
    return 0;
}
