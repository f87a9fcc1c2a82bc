/* Stream-ordered allocation and memory pools: the default and current pool, created pools
 * (maxSize, destroy with an allocation outstanding), attributes (the documented read-only and
 * reset-only ones), access, capture, and a kernel using pool memory before a stream-ordered
 * free. ptxvm's pools hold no memory beyond their allocations, so used = reserved = the bytes
 * allocated and not yet freed (README). */
#include "check.h"
#include <stdint.h>

static uint64_t attr64(CUmemoryPool p, CUmemPool_attribute a) {
    uint64_t v = 12345;
    OK(cuMemPoolGetAttribute(p, a, &v));
    return v;
}

int main(void) {
    CUdevice dev;
    CUcontext ctx = create_context(&dev);
    int supported = 0;
    OK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
    ASSERT(supported == 1);

    CUmemoryPool def, cur;
    OK(cuDeviceGetDefaultMemPool(&def, dev));
    OK(cuDeviceGetMemPool(&cur, dev));
    ASSERT(def == cur && def != NULL);
    EXPECT(cuDeviceGetDefaultMemPool(&def, 1), CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);

    /* allocate on a stream, use it there from a kernel, free it in stream order */
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    CUdeviceptr a, b, c;
    OK(cuMemAllocAsync(&a, 256 * 4, s));
    OK(cuMemAllocAsync(&b, 256 * 4, s));
    OK(cuMemAllocAsync(&c, 256 * 4, s));
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 3 * 1024);
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 3 * 1024);
    CUmemoryPool owner = NULL;
    OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
    ASSERT(owner == def);
    OK(cuMemsetD32Async(a, 0x40400000u, 256, s)); /* 3.0f */
    OK(cuMemsetD32Async(b, 0x3f800000u, 256, s)); /* 1.0f */
    CUmodule m;
    OK(cuModuleLoadData(&m, KERNELS));
    CUfunction vadd;
    OK(cuModuleGetFunction(&vadd, m, "vadd"));
    unsigned n = 256;
    void *params[] = {&a, &b, &c, &n};
    OK(cuLaunchKernel(vadd, 2, 1, 1, 128, 1, 1, 0, s, params, NULL));
    float out[256];
    OK(cuMemcpyDtoHAsync(out, c, sizeof out, s));
    OK(cuMemFreeAsync(a, s));
    OK(cuMemFreeAsync(b, s));
    OK(cuMemFreeAsync(c, s));
    /* freed when queued, as far as the pool's figures go; the high watermark stays */
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 3 * 1024);
    OK(cuStreamSynchronize(s));
    for (int i = 0; i < 256; i++) ASSERT(out[i] == 4.0f);
    EXPECT(cuMemFreeAsync(a, s), CUDA_ERROR_INVALID_VALUE); /* already freed */
    EXPECT(cuMemAllocAsync(&a, 0, s), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemAllocAsync(NULL, 16, s), CUDA_ERROR_INVALID_VALUE);

    /* attributes: reuse flags and the threshold kept; current values read-only; the high
     * watermarks reset to the current value with 0 only */
    uint64_t big = UINT64_MAX;
    OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &big));
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == UINT64_MAX);
    int off = 0, flag = 7;
    OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &off));
    OK(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &flag));
    ASSERT(flag == 0);
    uint64_t zero = 0, one = 1;
    EXPECT(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &one), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
    EXPECT(cuMemPoolGetAttribute(def, (CUmemPool_attribute)99, &flag), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemPoolTrimTo(def, 0));

    /* access: the device's own read-write access only */
    CUmemAccessDesc acc = {{1, 0}, 3};
    OK(cuMemPoolSetAccess(def, &acc, 1));
    acc.location.id = 1;
    EXPECT(cuMemPoolSetAccess(def, &acc, 1), CUDA_ERROR_INVALID_DEVICE);
    int flags = 0;
    CUmemLocation here = {1, 0};
    OK(cuMemPoolGetAccess(&flags, def, &here));
    ASSERT(flags == 3);

    /* a created pool with a maximum size, made current, destroyed with an allocation out */
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = 1;
    props.location.type = 1;
    props.location.id = 0;
    props.maxSize = 4096;
    CUmemoryPool mine;
    OK(cuMemPoolCreate(&mine, &props));
    ASSERT(mine != def);
    CUdeviceptr p;
    EXPECT(cuMemAllocFromPoolAsync(&p, 4097, mine, s), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuDeviceSetMemPool(dev, mine));
    OK(cuMemAllocAsync(&p, 4096, s));
    OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    ASSERT(owner == mine);
    CUdeviceptr q;
    EXPECT(cuMemAllocAsync(&q, 1, s), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemPoolDestroy(mine));
    OK(cuDeviceGetMemPool(&cur, dev));
    ASSERT(cur == def);
    OK(cuMemsetD8Async(p, 1, 4096, s)); /* still valid after its pool went */
    OK(cuMemFreeAsync(p, s));
    EXPECT(cuMemPoolDestroy(mine), CUDA_ERROR_INVALID_VALUE);
    props.allocType = 0;
    EXPECT(cuMemPoolCreate(&mine, &props), CUDA_ERROR_INVALID_VALUE);
    props.allocType = 1;
    props.location.id = 3;
    EXPECT(cuMemPoolCreate(&mine, &props), CUDA_ERROR_INVALID_DEVICE);

    /* a pool allocation freed by cuMemFree leaves the pool's figures */
    OK(cuMemAllocAsync(&p, 512, s));
    OK(cuStreamSynchronize(s));
    OK(cuMemFree(p));
    ASSERT(attr64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);

    /* graph memory nodes are not supported: allocation during capture is refused */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    EXPECT(cuMemAllocAsync(&p, 64, s), 900 /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */);
    CUgraph g;
    OK(cuStreamEndCapture(s, &g));
    OK(cuGraphDestroy(g));

    OK(cuStreamSynchronize(s));
    OK(cuStreamDestroy(s));
    OK(cuModuleUnload(m));
    OK(cuCtxDestroy(ctx));
    printf("pool: ok\n");
    return 0;
}
