/* Error paths: the codes cuda.h documents, and no crash. */
#include "check.h"

int main(void) {
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    CUdeviceptr d = 0;
    int v = 0;

    /* before cuInit */
    EXPECT(cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuDeviceGetCount(&v), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuMemAlloc(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuCtxCreate(&ctx, 0, 0), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuDriverGetVersion(&v)); /* allowed before cuInit */
    EXPECT(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    OK(cuInit(0));

    /* no current context */
    EXPECT(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext cur = (CUcontext)1;
    OK(cuCtxGetCurrent(&cur));
    ASSERT(cur == NULL);
    EXPECT(cuCtxPopCurrent(&cur), CUDA_ERROR_INVALID_CONTEXT);

    /* devices and arguments */
    EXPECT(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuDeviceGet(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 3), CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_ERROR_INVALID_VALUE);
    const char *s = NULL;
    EXPECT(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    ASSERT(s == NULL);
    EXPECT(cuGetErrorString((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);

    OK(cuCtxCreate(&ctx, 0, 0));

    /* memory */
    EXPECT(cuMemAlloc(&d, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemAlloc(&d, 64));
    char host[128] = {0};
    EXPECT(cuMemcpyHtoD(d, host, 65), CUDA_ERROR_INVALID_VALUE);  /* past the end */
    EXPECT(cuMemcpyDtoH(host, d + 32, 33), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyHtoD(0, host, 4), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyHtoD((CUdeviceptr)host, host, 4), CUDA_ERROR_INVALID_VALUE); /* not device memory */
    EXPECT(cuMemcpyDtoH(NULL, d, 4), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemsetD32(d + 2, 0, 4), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    EXPECT(cuMemsetD32(d, 0, 17), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemcpyHtoD(d, host, 64));
    OK(cuMemcpyHtoD(d, host, 0));
    OK(cuMemcpyHtoD(0, host, 0)); /* nothing to copy: no check */
    OK(cuMemsetD32(0, 0, 0));
    CUdeviceptr base;
    size_t size;
    EXPECT(cuMemGetAddressRange(&base, &size, (CUdeviceptr)host), CUDA_ERROR_NOT_FOUND);
    unsigned int mt;
    EXPECT(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)host),
           CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree(d));
    EXPECT(cuMemFree(d), CUDA_ERROR_INVALID_VALUE); /* double free */
    EXPECT(cuMemFree((CUdeviceptr)host), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr dp;
    EXPECT(cuMemHostGetDevicePointer(&dp, host, 0), CUDA_ERROR_INVALID_VALUE);

    /* images */
    CUmodule mod = NULL;
    EXPECT(cuModuleLoadData(&mod, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuModuleLoadData(&mod, "this is not PTX"), CUDA_ERROR_INVALID_IMAGE);
    /* ELF: truncated; a host ELF (machine 62, x86-64); a cubin of machine code only (machine
       190, EM_CUDA, no sections): only the last is NO_BINARY_FOR_GPU, with the hint */
    static const char truncated[] = "\x7f" "ELF\x02";
    EXPECT(cuModuleLoadData(&mod, truncated), CUDA_ERROR_INVALID_IMAGE);
    unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};
    elf[16] = 2;  /* ET_EXEC */
    elf[18] = 62; /* EM_X86_64 */
    elf[20] = 1;  /* EV_CURRENT */
    elf[52] = 64; /* e_ehsize */
    EXPECT(cuModuleLoadData(&mod, elf), CUDA_ERROR_INVALID_IMAGE);
    elf[18] = 190; /* EM_CUDA */
    EXPECT(cuModuleLoadData(&mod, elf), CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT(cuModuleLoadData(&mod, ".version 7.5\n.target sm_80\n.address_size 64\n"
                                  ".visible .entry k() { add.u32 %r1, 1; ret; }\n"),
           CUDA_ERROR_INVALID_PTX);
    EXPECT(cuModuleLoad(&mod, "/nonexistent/module.ptx"), CUDA_ERROR_FILE_NOT_FOUND);
    /* the JIT error log of cuModuleLoadDataEx gets the report; CU_JIT_MAX_REGISTERS caps
       NUM_REGS (vadd names more than 4 registers) */
    {
        char log[4096] = "x", info[64] = "x";
        CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
        void *v[] = {log, (void *)sizeof log, info, (void *)sizeof info};
        EXPECT(cuModuleLoadDataEx(&mod, ".version 7.5\n.target sm_80\n.address_size 64\n"
                                        ".visible .entry k() { add.u32 %r1, 1; ret; }\n",
                                  4, o, v),
               CUDA_ERROR_INVALID_PTX);
        ASSERT(strstr(log, "unknown register `%r1`") != NULL);
        ASSERT((size_t)v[1] == strlen(log) + 1);
        ASSERT(info[0] == 0);
        CUjit_option mo[] = {0 /* CU_JIT_MAX_REGISTERS */};
        void *mv[] = {(void *)(size_t)4};
        CUmodule capped, plain;
        OK(cuModuleLoadDataEx(&capped, KERNELS, 1, mo, mv));
        OK(cuModuleLoadData(&plain, KERNELS));
        CUfunction fc, fp;
        OK(cuModuleGetFunction(&fc, capped, "vadd"));
        OK(cuModuleGetFunction(&fp, plain, "vadd"));
        int rc = 0, rp = 0;
        OK(cuFuncGetAttribute(&rc, CU_FUNC_ATTRIBUTE_NUM_REGS, fc));
        OK(cuFuncGetAttribute(&rp, CU_FUNC_ATTRIBUTE_NUM_REGS, fp));
        ASSERT(rp > 4 && rc == 4);
        OK(cuModuleUnload(capped));
        OK(cuModuleUnload(plain));
    }

    /* handles: invalid and destroyed */
    OK(cuModuleLoadData(&mod, KERNELS));
    CUfunction f = NULL;
    EXPECT(cuModuleGetFunction(&f, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    EXPECT(cuModuleGetFunction(&f, (CUmodule)0x1234, "vadd"), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuModuleGetFunction(&f, NULL, "vadd"), CUDA_ERROR_INVALID_HANDLE);
    CUdeviceptr g;
    EXPECT(cuModuleGetGlobal(&g, NULL, mod, "no_such_global"), CUDA_ERROR_NOT_FOUND);
    OK(cuModuleGetFunction(&f, mod, "vadd"));
    EXPECT(cuLaunchKernel((CUfunction)0x42, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
           CUDA_ERROR_INVALID_HANDLE);
    CUstream st;
    OK(cuStreamCreate(&st, 0));
    OK(cuStreamDestroy(st));
    EXPECT(cuStreamSynchronize(st), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamDestroy(st), CUDA_ERROR_INVALID_HANDLE);
    CUevent ev;
    OK(cuEventCreate(&ev, 0));
    float ms;
    EXPECT(cuEventElapsedTime(&ms, ev, ev), CUDA_ERROR_INVALID_HANDLE); /* never recorded */
    OK(cuEventDestroy(ev));
    EXPECT(cuEventRecord(ev, NULL), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventDestroy(ev), CUDA_ERROR_INVALID_HANDLE);

    /* module sources are bounded (256 MiB) on every path (issue 23: cuModuleLoad("/dev/zero")
       grew to 24 GB, and a 300 MB string was accepted) */
    CUmodule big_mod;
    EXPECT(cuModuleLoad(&big_mod, "/dev/zero"), CUDA_ERROR_INVALID_VALUE);
    size_t big_len = (256u << 20) + 4096;
    char *big_text = malloc(big_len + 1);
    ASSERT(big_text != NULL);
    memset(big_text, ' ', big_len);
    memcpy(big_text, ".version 8.0\n.target sm_80\n", 27);
    big_text[big_len] = 0;
    EXPECT(cuModuleLoadData(&big_mod, big_text), CUDA_ERROR_INVALID_VALUE);
    free(big_text);

    /* launch shapes and parameters */
    OK(cuMemAlloc(&d, 64));
    unsigned int n = 16;
    void *params[] = {&d, &d, &d, &n};
    EXPECT(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 1, 1, 65, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(f, 1, 65536, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    /* gridDim.x is below 2^31 (issue 23: 2^31 and 2^32 - 1 ran until the timeout) */
    EXPECT(cuLaunchKernel(f, 0x80000000u, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(f, 0xffffffffu, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 1 << 20, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    size_t small = 8;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, host, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                     CU_LAUNCH_PARAM_END};
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_VALUE);
    /* a buffer size larger than any parameter buffer of this kernel (28 bytes, 32 with tail
       padding) is refused, not read (issue 23: SIGSEGV, abort, or a caught panic) */
    size_t huge[] = {1 << 20, (size_t)-1 >> 1, (size_t)-1, 33};
    for (int k = 0; k < 4; k++) {
        void *big[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, host, CU_LAUNCH_PARAM_BUFFER_SIZE,
                       &huge[k], CU_LAUNCH_PARAM_END};
        EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, big), CUDA_ERROR_INVALID_VALUE);
    }
    OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    /* kernelParams and extra both given: invalid, whatever extra holds */
    size_t exact = 28;
    void *both[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, host, CU_LAUNCH_PARAM_BUFFER_SIZE, &exact,
                    CU_LAUNCH_PARAM_END};
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, both), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 30),
           CUDA_ERROR_INVALID_VALUE);

    /* unloading invalidates the module's functions */
    OK(cuModuleUnload(mod));
    EXPECT(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE);

    /* the linker refuses cubins */
    CUlinkState link;
    OK(cuLinkCreate(0, NULL, NULL, &link));
    EXPECT(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, (void *)elf, sizeof elf, "x.cubin", 0, NULL, NULL),
           CUDA_ERROR_NO_BINARY_FOR_GPU);
    void *out;
    size_t out_size;
    EXPECT(cuLinkComplete(link, &out, &out_size), CUDA_ERROR_INVALID_VALUE); /* nothing added */
    OK(cuLinkDestroy(link));
    EXPECT(cuLinkDestroy(link), CUDA_ERROR_INVALID_HANDLE);

    /* cuGetProcAddress */
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    EXPECT(cuGetProcAddress("cuNoSuchFunction", &fn, 13000, 0, &q), CUDA_ERROR_NOT_FOUND);
    ASSERT(fn == NULL && q == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    EXPECT(cuGetProcAddress("cuLibraryLoadData", &fn, 11000, 0, &q), CUDA_ERROR_NOT_FOUND);
    ASSERT(fn == NULL && q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    EXPECT(cuGetProcAddress(NULL, &fn, 13000, 0, &q), CUDA_ERROR_INVALID_VALUE);
    /* a CUDA version above the driver's (13.5: 13050) is invalid, as cuda.h documents */
    int driver = 0;
    OK(cuDriverGetVersion(&driver));
    OK(cuGetProcAddress("cuMemAlloc", &fn, driver, 0, &q));
    EXPECT(cuGetProcAddress("cuMemAlloc", &fn, driver + 10, 0, &q), CUDA_ERROR_INVALID_VALUE);
    ASSERT(fn == NULL);
    OK(cuGetProcAddress("cuMemAlloc", &fn, 13000, 0, &q));
    ASSERT(fn == (void *)cuMemAlloc_v2 && q == CU_GET_PROC_ADDRESS_SUCCESS);
    OK(cuGetProcAddress("cuMemAlloc", &fn, 3000, 0, &q));
    ASSERT(fn != NULL && fn != (void *)cuMemAlloc_v2); /* the 32-bit original */
    OK(cuGetProcAddress("cuGraphicsUnregisterResource", &fn, 13000, 0, &q));
    CUresult (*unregister)(void *) = (CUresult(*)(void *))fn;
    EXPECT(unregister(NULL), CUDA_ERROR_NOT_SUPPORTED);

    /* unimplemented functions */
    EXPECT(cuGraphicsUnregisterResource(NULL), CUDA_ERROR_NOT_SUPPORTED);

    /* contexts: destroyed, popped */
    OK(cuMemFree(d));
    OK(cuCtxDestroy(ctx));
    EXPECT(cuCtxPushCurrent(ctx), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    EXPECT(cuCtxDestroy(ctx), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    EXPECT(cuCtxSetCurrent((CUcontext)0x99), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext a, b, popped;
    OK(cuCtxCreate(&a, 0, 0));
    OK(cuCtxCreate(&b, 0, 0));
    OK(cuCtxGetCurrent(&cur));
    ASSERT(cur == b);
    OK(cuCtxPopCurrent(&popped));
    ASSERT(popped == b);
    OK(cuCtxGetCurrent(&cur));
    ASSERT(cur == a);
    OK(cuCtxPushCurrent(b));
    OK(cuCtxGetCurrent(&cur));
    ASSERT(cur == b);
    OK(cuCtxDestroy(b));
    OK(cuCtxDestroy(a));
    printf("errors: ok\n");
    return 0;
}
