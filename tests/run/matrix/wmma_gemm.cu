// A small nvcuda::wmma GEMM, one warp per 16x16 output tile, compiled to
// wmma_gemm_f16.ptx / wmma_gemm_s8.ptx by tests/run/tools/wmma_gemm.py (nvcc -arch=sm_80).
//   gemm_f16: C (f32, row-major M x N) = A (f16, row-major M x K) * B (f16, row-major K x N)
//   gemm_s8:  C (s32, row-major M x N) = A (s8, row-major M x K)  * B (s8, column-major K x N)
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void gemm_f16(const half *a, const half *b, float *c, int m, int n, int k)
{
    int tm = blockIdx.x * 16, tn = blockIdx.y * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + tm * k + kk, k);
        wmma::load_matrix_sync(fb, b + kk * n + tn, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + tm * n + tn, acc, n, wmma::mem_row_major);
}

extern "C" __global__ void gemm_s8(const signed char *a, const signed char *b, int *c, int m, int n,
                                   int k)
{
    int tm = blockIdx.x * 16, tn = blockIdx.y * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::fill_fragment(acc, 0);
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + tm * k + kk, k);
        wmma::load_matrix_sync(fb, b + tn * k + kk, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    // scaled by 2 in registers: element-wise fragment access works whatever the layout
    for (int i = 0; i < acc.num_elements; i++)
        acc.x[i] *= 2;
    wmma::store_matrix_sync(c + tm * n + tn, acc, n, wmma::mem_row_major);
}
