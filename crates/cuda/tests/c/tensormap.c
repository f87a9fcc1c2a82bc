/* Tensor maps: cuTensorMapEncodeTiled's argument checks, a TMA kernel (cp.async.bulk.tensor
 * with an mbarrier) reading a 2D box with the 128-byte swizzle and out-of-bounds zeros,
 * cuTensorMapReplaceAddress, and cuTensorMapEncodeIm2col's checks. Expected values by hand:
 * element (x, y) of the 40 x 10 tensor holds 40y + x; the 16-byte chunk c of the 128-byte row r
 * of the box lands at chunk c ^ (r % 8). */
#include <stdint.h>

#include "check.h"

static const char *TMA =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry tma(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 x,"
    " .param .u32 y)\n{\n"
    " .reg .pred %p<4>; .reg .b32 %r<10>; .reg .b64 %rd<10>;\n"
    " .shared .align 1024 .b8 buf[1024];\n .shared .align 8 .b64 bar;\n"
    " mov.u32 %r1, %tid.x;\n setp.ne.u32 %p1, %r1, 0;\n @%p1 bra SYNC;\n"
    " mbarrier.init.shared::cta.b64 [bar], 1;\nSYNC:\n bar.sync 0;\n @%p1 bra WAIT;\n"
    " mov.u64 %rd1, tmap;\n ld.param.u32 %r3, [x];\n ld.param.u32 %r4, [y];\n"
    " mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 1024;\n"
    " cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [buf],"
    " [%rd1, {%r3, %r4}], [bar];\n"
    "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;\n @!%p2 bra WAIT;\n"
    " mov.u32 %r5, buf;\n shl.b32 %r6, %r1, 2;\n add.u32 %r5, %r5, %r6;\n"
    " ld.shared.u32 %r7, [%r5];\n ld.param.u64 %rd3, [out];\n"
    " mul.wide.u32 %rd4, %r1, 4;\n add.u64 %rd3, %rd3, %rd4;\n st.global.u32 [%rd3], %r7;\n"
    " ret;\n}\n";

int main(void) {
    (void)KERNELS;
    OK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    OK(cuDeviceGet(&dev, 0));
    OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    OK(cuCtxSetCurrent(ctx));

    enum { W = 40, H = 10 };
    float host[W * H];
    for (int i = 0; i < W * H; i++) host[i] = (float)i;
    CUdeviceptr in, in2, out;
    OK(cuMemAlloc(&in, sizeof host));
    OK(cuMemAlloc(&in2, sizeof host));
    OK(cuMemAlloc(&out, 1024));
    OK(cuMemcpyHtoD(in, host, sizeof host));
    for (int i = 0; i < W * H; i++) host[i] = (float)(1000 + i);
    OK(cuMemcpyHtoD(in2, host, sizeof host));

    CUtensorMap map;
    cuuint32_t e3_ones[3] = {1, 1, 1};
    cuuint64_t dims[2] = {W, H}, strides[1] = {W * 4};
    cuuint32_t box[2] = {32, 8}, es[2] = {1, 1};
    void *g = (void *)(uintptr_t)in;
#define TILED(m, t, r, a, d, s, b, e, sw, fill)                                         \
    cuTensorMapEncodeTiled(m, t, r, a, d, s, b, e, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, \
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, fill)
    /* the checks */
    const CUresult BAD = CUDA_ERROR_INVALID_VALUE;
    const CUtensorMapSwizzle S128 = CU_TENSOR_MAP_SWIZZLE_128B;
    const CUtensorMapFloatOOBfill Z = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    const CUtensorMapDataType F32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    EXPECT(TILED(NULL, F32, 2, g, dims, strides, box, es, S128, Z), BAD);
    EXPECT(TILED((CUtensorMap *)((char *)&map + 4), F32, 2, g, dims, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 0, g, dims, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 6, g, dims, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, (CUtensorMapDataType)13, 2, g, dims, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, (char *)g + 4, dims, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, NULL, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, dims, NULL, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, dims, strides, NULL, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, dims, strides, box, NULL, S128, Z), BAD);
    cuuint64_t zero_dim[2] = {0, H}, bad_stride[1] = {W * 4 + 4};
    EXPECT(TILED(&map, F32, 2, g, zero_dim, strides, box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, dims, bad_stride, box, es, S128, Z), BAD);
    cuuint32_t big_box[2] = {32, 257}, odd_box[2] = {3, 8}, wide_box[2] = {64, 8};
    EXPECT(TILED(&map, F32, 2, g, dims, strides, big_box, es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, dims, strides, odd_box, es, S128, Z), BAD);
    /* 256 bytes per box row: wider than the 128-byte swizzle span */
    EXPECT(TILED(&map, F32, 2, g, dims, strides, wide_box, es, S128, Z), BAD);
    cuuint32_t bad_es[2] = {1, 9};
    EXPECT(TILED(&map, F32, 2, g, dims, strides, box, bad_es, S128, Z), BAD);
    EXPECT(TILED(&map, F32, 2, g, dims, strides, box, es, (CUtensorMapSwizzle)4, Z), BAD);
    EXPECT(TILED(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, g, dims, strides, box, es, S128,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA),
           BAD);
    EXPECT(cuTensorMapEncodeTiled(&map, F32, 2, g, dims, strides, box, es,
                                  (CUtensorMapInterleave)3, S128,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, Z),
           BAD);
    /* interleaved layouts (NC/8HWC8: dimension 0 is one 16-byte slice of channels): rank 3
       or more; the 32-byte interleave needs the 32-byte swizzle, a 32-byte aligned address
       and strides that are multiples of 32; the box's inner dimension need not be a multiple
       of 16 bytes nor fit the swizzle span */
    {
        const CUtensorMapDataType U16 = CU_TENSOR_MAP_DATA_TYPE_UINT16;
        const CUtensorMapInterleave I16 = CU_TENSOR_MAP_INTERLEAVE_16B;
        const CUtensorMapInterleave I32 = CU_TENSOR_MAP_INTERLEAVE_32B;
        const CUtensorMapSwizzle S32 = CU_TENSOR_MAP_SWIZZLE_32B;
        const CUtensorMapL2promotion L2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
        cuuint64_t idims[3] = {8, 5, 3}, istr[2] = {32, 160}, istr16[2] = {16, 80};
        cuuint32_t ibox[3] = {6, 4, 2}, ies[3] = {2, 1, 1};
        OK(cuTensorMapEncodeTiled(&map, U16, 3, g, idims, istr16, ibox, ies, I16, S128, L2, Z));
        OK(cuTensorMapEncodeTiled(&map, U16, 3, g, idims, istr, ibox, ies, I32, S32, L2, Z));
        EXPECT(cuTensorMapEncodeTiled(&map, U16, 2, g, idims, istr, ibox, ies, I16, S128, L2, Z),
               BAD);
        EXPECT(cuTensorMapEncodeTiled(&map, U16, 3, g, idims, istr, ibox, ies, I32, S128, L2, Z),
               BAD);
        EXPECT(cuTensorMapEncodeTiled(&map, U16, 3, g, idims, istr16, ibox, ies, I32, S32, L2, Z),
               BAD);
        EXPECT(cuTensorMapEncodeTiled(&map, U16, 3, (char *)g + 16, idims, istr, ibox, ies, I32,
                                      S32, L2, Z),
               BAD);
        cuuint64_t d3i[3] = {8, 8, 2}, s3i[2] = {32, 256};
        int l1[1] = {0}, h1[1] = {0};
        OK(cuTensorMapEncodeIm2col(&map, U16, 3, g, d3i, s3i, l1, h1, 8, 4, e3_ones, I32, S32,
                                   L2, Z));
    }
    /* im2col: rank 3..5, corners, channels and pixels */
    cuuint64_t d3[3] = {16, 8, 2}, s3[2] = {64, 512};
    cuuint32_t e3[3] = {1, 1, 1};
    int lo[1] = {-1}, hi[1] = {1};
    EXPECT(cuTensorMapEncodeIm2col(&map, F32, 2, g, dims, strides, lo, hi, 16, 8, es,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, S128,
                                   CU_TENSOR_MAP_L2_PROMOTION_NONE, Z),
           BAD);
    EXPECT(cuTensorMapEncodeIm2col(&map, F32, 3, g, d3, s3, lo, hi, 0, 8, e3,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, S128,
                                   CU_TENSOR_MAP_L2_PROMOTION_NONE, Z),
           BAD);
    OK(cuTensorMapEncodeIm2col(&map, F32, 3, g, d3, s3, lo, hi, 16, 8, e3,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, Z));
    /* garbage is not a tensor map */
    CUtensorMap junk;
    memset(&junk, 0x5a, sizeof junk);
    EXPECT(cuTensorMapReplaceAddress(&junk, g), BAD);

    /* the kernel */
    OK(TILED(&map, F32, 2, g, dims, strides, box, es, S128, Z));
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, TMA));
    OK(cuModuleGetFunction(&f, mod, "tma"));
    unsigned x = 16, y = (unsigned)-2;
    void *params[] = {&map, &out, &x, &y};
    float got[256];
    for (int pass = 0; pass < 2; pass++) {
        float base = pass ? 1000.0f : 0.0f;
        OK(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
        OK(cuCtxSynchronize());
        OK(cuMemcpyDtoH(got, out, sizeof got));
        for (int r = 0; r < 8; r++) {
            for (int c = 0; c < 32; c++) {
                int gx = 16 + c, gy = r - 2;
                float want = (gx < W && gy >= 0) ? base + (float)(gy * W + gx) : 0.0f;
                int chunk = c / 4, word = c % 4;
                int at = r * 32 + ((chunk ^ (r % 8)) * 4) + word;
                if (got[at] != want) {
                    fprintf(stderr, "pass %d box (%d, %d): got %g at word %d, want %g\n", pass,
                            c, r, got[at], at, want);
                    return 1;
                }
            }
        }
        /* the second pass reads the other buffer */
        OK(cuTensorMapReplaceAddress(&map, (void *)(uintptr_t)in2));
    }
    EXPECT(cuTensorMapReplaceAddress(&map, (char *)(uintptr_t)in2 + 8), BAD);
    printf("tensormap: ok\n");
    return 0;
}
