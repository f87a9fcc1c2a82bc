/* Helpers of ptxvm's C tests: every expectation is written by hand. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT(call, code)                                                                   \
    do {                                                                                     \
        CUresult r_ = (call);                                                                \
        if (r_ != (code)) {                                                                  \
            const char *n_ = "?";                                                            \
            cuGetErrorName(r_, &n_);                                                         \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d\n", __FILE__, __LINE__, \
                    #call, (int)r_, n_, (int)(code));                                        \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)
#define OK(call) EXPECT(call, CUDA_SUCCESS)
#define ASSERT(cond)                                                             \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                      \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* cuInit, then device 0's primary context made current on this thread. */
static inline void use_primary_context(void) {
    CUdevice dev;
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDeviceGet(&dev, 0));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));
}

/* cuInit, then a new context on device 0 (current on this thread); `dev` gets the device. */
static inline CUcontext create_context(CUdevice *dev) {
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDeviceGet(dev, 0));
    OK(cuCtxCreate(&ctx, 0, *dev));
    return ctx;
}

/* Kernels shared by the tests. */
static const char *KERNELS =
    ".version 7.5\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".const .align 4 .f32 scale = 2.0;\n"
    ".global .align 4 .u32 counter;\n"
    ".global .align 4 .u32 table[4] = {10, 20, 30, 40};\n"
    "\n"
    ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .f32 %f<4>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    ld.param.u64 %rd1, [a];\n"
    "    ld.param.u64 %rd2, [b];\n"
    "    ld.param.u64 %rd3, [c];\n"
    "    ld.param.u32 %r1, [n];\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, %tid.x;\n"
    "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "    setp.ge.u32 %p, %r5, %r1;\n"
    "    @%p bra DONE;\n"
    "    mul.wide.u32 %rd4, %r5, 4;\n"
    "    add.u64 %rd5, %rd1, %rd4;\n"
    "    add.u64 %rd6, %rd2, %rd4;\n"
    "    add.u64 %rd7, %rd3, %rd4;\n"
    "    ld.global.f32 %f1, [%rd5];\n"
    "    ld.global.f32 %f2, [%rd6];\n"
    "    add.f32 %f3, %f1, %f2;\n"
    "    st.global.f32 [%rd7], %f3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// out[i] = i * scale + table[i % 4]; counter counts the threads\n"
    ".visible .entry scaled(.param .u64 out, .param .u32 n)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<8>;\n"
    "    .reg .f32 %f<4>;\n"
    "    .reg .b64 %rd<6>;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    ld.param.u32 %r1, [n];\n"
    "    mov.u32 %r2, %tid.x;\n"
    "    setp.ge.u32 %p, %r2, %r1;\n"
    "    @%p bra DONE;\n"
    "    ld.const.f32 %f1, [scale];\n"
    "    cvt.rn.f32.u32 %f2, %r2;\n"
    "    and.b32 %r3, %r2, 3;\n"
    "    mul.wide.u32 %rd2, %r3, 4;\n"
    "    mov.u64 %rd3, table;\n"
    "    add.u64 %rd3, %rd3, %rd2;\n"
    "    ld.global.u32 %r4, [%rd3];\n"
    "    cvt.rn.f32.u32 %f3, %r4;\n"
    "    fma.rn.f32 %f2, %f2, %f1, %f3;\n"
    "    mul.wide.u32 %rd4, %r2, 4;\n"
    "    add.u64 %rd5, %rd1, %rd4;\n"
    "    st.global.f32 [%rd5], %f2;\n"
    "    atom.global.add.u32 %r5, [counter], 1;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// a by-value struct { float k; unsigned n; unsigned long long out; }\n"
    ".visible .entry fill(.param .align 8 .b8 s[16])\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<4>;\n"
    "    .reg .f32 %f<2>;\n"
    "    .reg .b64 %rd<4>;\n"
    "    ld.param.f32 %f1, [s];\n"
    "    ld.param.u32 %r1, [s+4];\n"
    "    ld.param.u64 %rd1, [s+8];\n"
    "    mov.u32 %r2, %tid.x;\n"
    "    setp.ge.u32 %p, %r2, %r1;\n"
    "    @%p bra DONE;\n"
    "    mul.wide.u32 %rd2, %r2, 4;\n"
    "    add.u64 %rd3, %rd1, %rd2;\n"
    "    st.global.f32 [%rd3], %f1;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// stores one word at p + off (a fault when that is outside every allocation)\n"
    ".visible .entry poke(.param .u64 p, .param .u64 off)\n"
    "{\n"
    "    .reg .b32 %r<2>;\n"
    "    .reg .b64 %rd<4>;\n"
    "    ld.param.u64 %rd1, [p];\n"
    "    ld.param.u64 %rd2, [off];\n"
    "    add.u64 %rd3, %rd1, %rd2;\n"
    "    mov.u32 %r1, 7;\n"
    "    st.global.u32 [%rd3], %r1;\n"
    "    ret;\n"
    "}\n"
    "\n"
    ".visible .entry trapper()\n"
    "{\n"
    "    trap;\n"
    "}\n"
    "\n"
    ".visible .entry hello()\n"
    "{\n"
    "    ret;\n"
    "}\n";
