/* Thread-block clusters through cuLaunchKernelEx's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: each
 * block writes (%cluster_nctarank << 8) | %cluster_ctarank after a barrier.cluster, so a grid of
 * 4 blocks in clusters of 2 gives 0x200, 0x201, 0x200, 0x201. A grid that is not a multiple of
 * the cluster, and a cluster of 16 blocks without CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
 * are CUDA_ERROR_INVALID_CLUSTER_SIZE; with the attribute, 16 runs. A block shape its kernel's
 * .reqntid refuses is CUDA_ERROR_INVALID_VALUE, also when the kernel's name says "cluster". */
#include "check.h"

static const char *CLUSTER_PTX =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry ranks(.param .u64 out)\n"
    "{\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .b64 %rd<4>;\n"
    "    .reg .pred %p;\n"
    "    barrier.cluster.arrive;\n"
    "    barrier.cluster.wait;\n"
    "    mov.u32 %r1, %tid.x;\n"
    "    setp.ne.u32 %p, %r1, 0;\n"
    "    @%p bra done;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %cluster_ctarank;\n"
    "    mov.u32 %r4, %cluster_nctarank;\n"
    "    shl.b32 %r5, %r4, 8;\n"
    "    or.b32 %r5, %r5, %r3;\n"
    "    mul.wide.u32 %rd2, %r2, 4;\n"
    "    add.s64 %rd3, %rd1, %rd2;\n"
    "    st.global.u32 [%rd3], %r5;\n"
    "done:\n"
    "    ret;\n"
    "}\n"
    ".visible .entry fixed_cluster() .reqnctapercluster 2, 1, 1\n"
    "{\n"
    "    ret;\n"
    "}\n"
    ".visible .entry cluster_fixed_block() .reqntid 64\n"
    "{\n"
    "    ret;\n"
    "}\n";

static CUresult launch(CUfunction f, unsigned grid, unsigned cluster, CUdeviceptr *out) {
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = 4; /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
    at.value.clusterDim.x = cluster;
    at.value.clusterDim.y = 1;
    at.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {grid, 1, 1, 32, 1, 1, 0, NULL, &at, 1};
    void *params[] = {out};
    return cuLaunchKernelEx(&cfg, f, params, NULL);
}

int main(void) {
    CUdevice dev;
    CUcontext ctx = create_context(&dev);
    CUmodule m;
    CUfunction f;
    OK(cuModuleLoadData(&m, CLUSTER_PTX));
    OK(cuModuleGetFunction(&f, m, "ranks"));
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 16 * 4));
    OK(launch(f, 4, 2, &out));
    OK(cuCtxSynchronize());
    unsigned int r[16];
    OK(cuMemcpyDtoH(r, out, 4 * 4));
    ASSERT(r[0] == 0x200 && r[1] == 0x201 && r[2] == 0x200 && r[3] == 0x201);
    EXPECT(launch(f, 3, 2, &out), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT(launch(f, 16, 16, &out), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT(launch(f, 4, 0, &out), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    CUfunction fixed;
    OK(cuModuleGetFunction(&fixed, m, "cluster_fixed_block"));
    EXPECT(cuLaunchKernel(fixed, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuLaunchKernel(fixed, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL));
    OK(cuCtxSynchronize());
    OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    OK(launch(f, 16, 16, &out));
    OK(cuCtxSynchronize());
    OK(cuMemcpyDtoH(r, out, sizeof r));
    for (int i = 0; i < 16; i++) ASSERT(r[i] == (0x1000u | (unsigned)i));

    /* function attributes (issue 23 item 11): every settable one is honoured or kept and
       reported, the read-only ones are refused */
    int v = -1;
    EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 10), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 64),
           CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, 1),
           CUDA_ERROR_INVALID_VALUE);
    OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f));
    ASSERT(v == 50);
    OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 1));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, f));
    ASSERT(v == 1);
    EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 7),
           CUDA_ERROR_INVALID_VALUE);
    /* the shared memory mode (CUDA 13; Triton sets it for kernels over 48 KiB): by default 64 KiB
       of dynamic shared memory is refused; ALLOW_OVERSIZED (3) and ALLOW_NON_PORTABLE (2) allow
       up to the opt-in limit, REQUIRE_PORTABLE (1) keeps 48 KiB; the launch attribute (18)
       overrides the function's; modes past PREFER_OVERSIZED (4) are invalid */
    {
        void *p1[] = {&out};
        const unsigned big = 64 << 10;
        EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, big, NULL, p1, NULL), CUDA_ERROR_INVALID_VALUE);
        OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE, 3));
        OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE, f));
        ASSERT(v == 3);
        OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, big, NULL, p1, NULL));
        int optin = 0;
        OK(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
        EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, (unsigned)optin + 1, NULL, p1, NULL),
               CUDA_ERROR_INVALID_VALUE);
        OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE, 1));
        EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, big, NULL, p1, NULL), CUDA_ERROR_INVALID_VALUE);
        EXPECT(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE, 5), CUDA_ERROR_INVALID_VALUE);
        OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE, 0));
        CUlaunchAttribute mode;
        memset(&mode, 0, sizeof mode);
        mode.id = 18; /* CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE */
        mode.value.sharedMemoryMode = 2;
        CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, big, NULL, &mode, 1};
        OK(cuLaunchKernelEx(&cfg, f, p1, NULL));
        mode.value.sharedMemoryMode = 9;
        EXPECT(cuLaunchKernelEx(&cfg, f, p1, NULL), CUDA_ERROR_INVALID_VALUE);
        OK(cuCtxSynchronize());
    }
    /* a required cluster shape set at run time is the shape of launches that give none:
       4 blocks of plain cuLaunchKernel run in clusters of 2 */
    OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
    OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 1));
    OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 1));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f));
    ASSERT(v == 2);
    void *params[] = {&out};
    OK(cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    OK(cuCtxSynchronize());
    OK(cuMemcpyDtoH(r, out, 4 * 4));
    ASSERT(r[0] == 0x200 && r[1] == 0x201 && r[2] == 0x200 && r[3] == 0x201);
    /* a compile-time cluster shape (.reqnctapercluster) is reported and cannot be changed */
    CUfunction fc;
    OK(cuModuleGetFunction(&fc, m, "fixed_cluster"));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, fc));
    ASSERT(v == 1);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fc));
    ASSERT(v == 2);
    EXPECT(cuFuncSetAttribute(fc, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4),
           CUDA_ERROR_NOT_PERMITTED);

    OK(cuMemFree(out));
    OK(cuModuleUnload(m));
    OK(cuCtxDestroy(ctx));
    (void)KERNELS;
    printf("cluster: ok\n");
    return 0;
}
