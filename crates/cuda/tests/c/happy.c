/* The happy paths: device, contexts, memory, copies, modules, globals, launches (kernelParams,
 * extra, cuLaunchKernelEx, a by-value struct), streams, events, the linker and libraries. */
#include "check.h"

static int host_fn_ran = 0;
static void host_fn(void *p) { *(int *)p += 1; }

int main(void) {
    int version = 0, count = 0, v = 0;
    OK(cuInit(0));
    OK(cuDriverGetVersion(&version));
    ASSERT(version >= 13000);
    OK(cuDeviceGetCount(&count));
    ASSERT(count == 1);
    CUdevice dev;
    OK(cuDeviceGet(&dev, 0));
    char name[64];
    OK(cuDeviceGetName(name, sizeof name, dev));
    ASSERT(strstr(name, "ptxvm") != NULL);
    OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    ASSERT(v == 32);
    OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    ASSERT(v == 8);
    /* every attribute has an answer */
    for (int a = 1; a < 140; a++) {
        CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev);
        ASSERT(r == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE);
    }

    CUcontext ctx, cur;
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
    OK(cuCtxGetCurrent(&cur));
    ASSERT(cur == ctx);

    const char *s = NULL;
    OK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
    ASSERT(strcmp(s, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
    OK(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
    ASSERT(strcmp(s, "invalid argument") == 0);

    /* memory */
    enum { N = 1000 };
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) { a[i] = (float)i; b[i] = 0.5f * i; c[i] = -1; }
    CUdeviceptr da, db, dc;
    OK(cuMemAlloc(&da, sizeof a));
    OK(cuMemAlloc(&db, sizeof b));
    OK(cuMemAlloc(&dc, sizeof c));
    OK(cuMemcpyHtoD(da, a, sizeof a));
    OK(cuMemcpyHtoD(db, b, sizeof b));
    CUdeviceptr base = 0;
    size_t size = 0;
    OK(cuMemGetAddressRange(&base, &size, da + 100));
    ASSERT(base == da && size == sizeof a);
    unsigned int mt = 0;
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, db));
    ASSERT(mt == CU_MEMORYTYPE_DEVICE);
    size_t free_b = 0, total_b = 0;
    OK(cuMemGetInfo(&free_b, &total_b));
    ASSERT(free_b > 0 && free_b <= total_b);

    /* a module from PTX text */
    CUmodule mod;
    CUfunction vadd, scaled, fill, hello;
    OK(cuModuleLoadData(&mod, KERNELS));
    OK(cuModuleGetFunction(&vadd, mod, "vadd"));
    OK(cuModuleGetFunction(&scaled, mod, "scaled"));
    OK(cuModuleGetFunction(&fill, mod, "fill"));
    OK(cuModuleGetFunction(&hello, mod, "hello"));
    CUfunction again;
    OK(cuModuleGetFunction(&again, mod, "vadd"));
    ASSERT(again == vadd);

    /* kernelParams */
    unsigned int n = N;
    void *params[] = {&da, &db, &dc, &n};
    OK(cuLaunchKernel(vadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    OK(cuCtxSynchronize());
    OK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < N; i++) ASSERT(c[i] == 1.5f * i);

    /* extra: one buffer with the parameters at their offsets (0, 8, 16, 24) */
    struct { CUdeviceptr a, b, c; unsigned int n; unsigned int pad; } buf = {db, db, dc, N, 0};
    size_t buf_size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &buf_size, CU_LAUNCH_PARAM_END};
    OK(cuLaunchKernel(vadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, NULL, extra));
    OK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < N; i++) ASSERT(c[i] == 1.0f * i);

    /* cuLaunchKernelEx with a by-value struct parameter */
    struct { float k; unsigned int n; CUdeviceptr out; } st = {3.25f, 100, dc};
    void *fparams[] = {&st};
    CUlaunchConfig cfg = {1, 1, 1, 128, 1, 1, 0, NULL, NULL, 0};
    OK(cuLaunchKernelEx(&cfg, fill, fparams, NULL));
    OK(cuMemcpyDtoH(c, dc, sizeof c));
    ASSERT(c[0] == 3.25f && c[99] == 3.25f && c[100] == 100.0f);

    /* module globals: read the initialised table, write the constant, count threads */
    CUdeviceptr table, scale, counter;
    size_t bytes = 0;
    OK(cuModuleGetGlobal(&table, &bytes, mod, "table"));
    ASSERT(bytes == 16);
    unsigned int t[4];
    OK(cuMemcpyDtoH(t, table, sizeof t));
    ASSERT(t[0] == 10 && t[3] == 40);
    OK(cuModuleGetGlobal(&scale, &bytes, mod, "scale"));
    ASSERT(bytes == 4);
    float three = 3.0f;
    OK(cuMemcpyHtoD(scale, &three, 4));
    OK(cuModuleGetGlobal(&counter, NULL, mod, "counter"));
    OK(cuMemsetD32(counter, 5, 1));
    unsigned int n8 = 8;
    void *sparams[] = {&dc, &n8};
    OK(cuLaunchKernel(scaled, 1, 1, 1, 32, 1, 1, 0, NULL, sparams, NULL));
    OK(cuMemcpyDtoH(c, dc, 8 * sizeof(float)));
    for (int i = 0; i < 8; i++) ASSERT(c[i] == 3.0f * i + 10.0f * (i % 4 + 1));
    unsigned int cnt = 0;
    OK(cuMemcpyDtoH(&cnt, counter, 4));
    ASSERT(cnt == 13);

    /* memset, device-to-device */
    OK(cuMemsetD8(da, 0, sizeof a));
    OK(cuMemcpyDtoD(db, da, sizeof a));
    OK(cuMemcpyDtoH(b, db, sizeof b));
    for (int i = 0; i < N; i++) ASSERT(b[i] == 0.0f);

    /* mapped host memory and managed memory: the kernel and the host share the pointer */
    float *h = NULL;
    OK(cuMemHostAlloc((void **)&h, N * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr dh;
    OK(cuMemHostGetDevicePointer(&dh, h, 0));
    ASSERT(dh == (CUdeviceptr)h);
    CUdeviceptr m;
    OK(cuMemAllocManaged(&m, N * sizeof(float), CU_MEM_ATTACH_GLOBAL));
    float *mh = (float *)m;
    for (int i = 0; i < N; i++) { h[i] = 1.0f; mh[i] = (float)i; }
    void *mparams[] = {&dh, &m, &m, &n};
    OK(cuLaunchKernel(vadd, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, mparams, NULL));
    OK(cuCtxSynchronize());
    for (int i = 0; i < N; i++) ASSERT(mh[i] == i + 1.0f);
    OK(cuMemFreeHost(h));
    OK(cuMemFree(m));

    /* streams, events, host functions */
    CUstream stream;
    CUevent e0, e1;
    OK(cuStreamCreate(&stream, 0));
    OK(cuEventCreate(&e0, 0));
    OK(cuEventCreate(&e1, 0));
    OK(cuEventRecord(e0, stream));
    OK(cuMemcpyHtoDAsync(da, a, sizeof a, stream));
    OK(cuLaunchKernel(vadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, stream, params, NULL));
    OK(cuLaunchHostFunc(stream, host_fn, &host_fn_ran));
    OK(cuMemcpyDtoHAsync(c, dc, sizeof c, stream));
    OK(cuEventRecord(e1, stream));
    OK(cuStreamWaitEvent(NULL, e1, 0));
    OK(cuStreamSynchronize(stream));
    OK(cuStreamQuery(stream));
    OK(cuEventSynchronize(e1));
    float ms = -1;
    OK(cuEventElapsedTime(&ms, e0, e1));
    ASSERT(ms >= 0.0f);
    ASSERT(host_fn_ran == 1);
    for (int i = 0; i < N; i++) ASSERT(c[i] == (float)i);
    OK(cuEventDestroy(e0));
    OK(cuEventDestroy(e1));
    OK(cuStreamDestroy(stream));

    /* attributes, occupancy, limits */
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, vadd));
    ASSERT(v == 1024);
    /* the PTX's virtual architecture (.target sm_80), not its ISA version (.version 7.5);
       the binary is what the JIT made for the device (compute capability 8.0) */
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, vadd));
    ASSERT(v == 80);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_BINARY_VERSION, vadd));
    ASSERT(v == 80);
    OK(cuFuncSetAttribute(vadd, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, vadd));
    ASSERT(v == 65536);
    OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, vadd, 256, 0));
    ASSERT(v == 8);
    size_t lim = 0;
    OK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
    OK(cuCtxGetLimit(&lim, CU_LIMIT_STACK_SIZE));
    ASSERT(lim == 4096);

    /* the linker, then a library from its output, as numba-cuda does */
    CUlinkState link;
    void *cubin = NULL;
    size_t cubin_size = 0;
    OK(cuLinkCreate(0, NULL, NULL, &link));
    OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)KERNELS, strlen(KERNELS) + 1, "k.ptx", 0,
                     NULL, NULL));
    OK(cuLinkComplete(link, &cubin, &cubin_size));
    ASSERT(cubin != NULL && cubin_size > 0);
    CUlibrary lib;
    OK(cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLinkDestroy(link));
    CUkernel k;
    CUfunction kf;
    OK(cuLibraryGetKernel(&k, lib, "vadd"));
    OK(cuKernelGetFunction(&kf, k));
    OK(cuLaunchKernel(kf, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    CUdeviceptr lt;
    OK(cuLibraryGetGlobal(&lt, &bytes, lib, "table"));
    ASSERT(bytes == 16 && lt != table);
    OK(cuLibraryUnload(lib));

    /* cuModuleLoad from a file */
    const char *path = "happy_module.ptx";
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(KERNELS, f);
    fclose(f);
    CUmodule fmod;
    OK(cuModuleLoad(&fmod, path));
    remove(path);
    OK(cuModuleGetFunction(&hello, fmod, "hello"));
    OK(cuLaunchKernel(hello, 2, 2, 1, 4, 4, 1, 0, NULL, NULL, NULL));
    OK(cuModuleUnload(fmod));

    OK(cuMemFree(da));
    OK(cuMemFree(db));
    OK(cuMemFree(dc));
    OK(cuModuleUnload(mod));
    OK(cuDevicePrimaryCtxRelease(dev));
    printf("happy: ok\n");
    return 0;
}
