// half / bf16 arithmetic and double-precision libm (sqrt, exp, sin), 2D indexing.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void mixed_math(const __half* h, const __nv_bfloat16* b, double* d, int w, int hgt) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= hgt) return;
    int i = y * w + x;
    __half hv = __hfma(h[i], __float2half(2.0f), __float2half(1.0f));
    __nv_bfloat16 bv = __hmul(b[i], b[i]);
    double v = (double)__half2float(hv) + (double)__bfloat162float(bv);
    d[i] = sqrt(fabs(v)) + exp(-v) + sin(v);
}
