/* Cooperative launches: a kernel that synchronizes its grid through cudaCGSynchronize (the
 * device runtime's entry point; the linker replaces libcudadevrt.a with ptxvm's own
 * definitions), and a grid too large to be resident at once. */
#include "check.h"

/* each CTA stores its index + 1, the grid synchronizes, then each CTA sums every slot
 * (checked with ptxas 13.5: ptxas -arch=sm_80 -c) */
static const char *COOP =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".extern .func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle(.param .b32 cudaCGGetIntrinsicHandle_param_0);\n"
    ".extern .func (.param .b32 func_retval0) cudaCGSynchronize(.param .b64 cudaCGSynchronize_param_0, .param .b32 cudaCGSynchronize_param_1);\n"
    ".visible .entry gridsum(.param .u64 slots, .param .u64 sums)\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<10>;\n"
    "    .reg .b64 %rd<10>;\n"
    "    ld.param.u64 %rd1, [slots];\n"
    "    ld.param.u64 %rd2, [sums];\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %tid.x;\n"
    "    mov.u32 %r3, %nctaid.x;\n"
    "    setp.ne.u32 %p1, %r2, 0;\n"
    "    mul.wide.u32 %rd3, %r1, 4;\n"
    "    add.u64 %rd4, %rd1, %rd3;\n"
    "    add.u32 %r4, %r1, 1;\n"
    "    @!%p1 st.global.u32 [%rd4], %r4;\n"
    "    {\n"
    "    .param .b32 param0;\n"
    "    st.param.b32 [param0+0], 1;\n"
    "    .param .b64 retval0;\n"
    "    call.uni (retval0), cudaCGGetIntrinsicHandle, (param0);\n"
    "    ld.param.b64 %rd5, [retval0+0];\n"
    "    }\n"
    "    {\n"
    "    .param .b64 param0;\n"
    "    st.param.b64 [param0+0], %rd5;\n"
    "    .param .b32 param1;\n"
    "    st.param.b32 [param1+0], 0;\n"
    "    .param .b32 retval0;\n"
    "    call.uni (retval0), cudaCGSynchronize, (param0, param1);\n"
    "    ld.param.b32 %r5, [retval0+0];\n"
    "    }\n"
    "    @%p1 bra DONE;\n"
    "    mov.u32 %r6, 0;\n"
    "    mov.u32 %r7, 0;\n"
    "LOOP:\n"
    "    mul.wide.u32 %rd6, %r7, 4;\n"
    "    add.u64 %rd7, %rd1, %rd6;\n"
    "    ld.global.u32 %r8, [%rd7];\n"
    "    add.u32 %r6, %r6, %r8;\n"
    "    add.u32 %r7, %r7, 1;\n"
    "    setp.lt.u32 %p2, %r7, %r3;\n"
    "    @%p2 bra LOOP;\n"
    "    add.u64 %rd8, %rd2, %rd3;\n"
    "    st.global.u32 [%rd8], %r6;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

/* the start of an ar archive whose member is NVIDIA's cuda_device_runtime.o (what the linker
 * recognizes; the real archive holds only SASS) */
static const char DEVRT[] = "!<arch>\n//                                              26        `\n"
                            "cuda_device_runtime.o/\n\n";

int main(void) {
    (void)KERNELS; /* check.h's shared kernels: not used here */
    CUdevice dev;
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDeviceGet(&dev, 0));
    OK(cuCtxCreate(&ctx, 0, dev));

    /* link the kernel with the device runtime */
    CUlinkState link;
    void *image;
    size_t size;
    OK(cuLinkCreate(0, NULL, NULL, &link));
    OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)COOP, strlen(COOP) + 1, "coop.ptx", 0, NULL,
                     NULL));
    OK(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, (void *)DEVRT, sizeof DEVRT, "libcudadevrt.a", 0,
                     NULL, NULL));
    OK(cuLinkComplete(link, &image, &size));
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, image));
    OK(cuLinkDestroy(link));
    OK(cuModuleGetFunction(&f, mod, "gridsum"));

    enum { GRID = 4 };
    CUdeviceptr slots, sums;
    OK(cuMemAlloc(&slots, GRID * 4));
    OK(cuMemAlloc(&sums, GRID * 4));
    OK(cuMemsetD32(slots, 0, GRID));
    void *params[] = {&slots, &sums};
    /* twice: the barrier is ready for the next launch */
    for (int rep = 0; rep < 2; rep++) {
        OK(cuMemsetD32(sums, 0, GRID));
        OK(cuLaunchCooperativeKernel(f, GRID, 1, 1, 64, 1, 1, 0, NULL, params));
        OK(cuCtxSynchronize());
        unsigned got[GRID];
        OK(cuMemcpyDtoH(got, sums, sizeof got));
        for (int b = 0; b < GRID; b++) ASSERT(got[b] == 1 + 2 + 3 + 4);
    }

    /* more CTAs than the device keeps resident */
    int sms = 0, per_sm = 0;
    OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, 64, 0));
    ASSERT(sms > 0 && per_sm > 0);
    unsigned too_many = (unsigned)(sms * per_sm + 1);
    EXPECT(cuLaunchCooperativeKernel(f, too_many, 1, 1, 64, 1, 1, 0, NULL, params),
           CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);

    OK(cuMemFree(slots));
    OK(cuMemFree(sums));
    OK(cuCtxDestroy(ctx));
    printf("coop: ok\n");
    return 0;
}
