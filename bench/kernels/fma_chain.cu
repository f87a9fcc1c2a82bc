// FMA chain, compute-bound with warp-uniform control flow: every thread runs
// `iters` iterations of four independent chains of dependent fmaf (fma.rn.f32),
// then stores ((a0 + a1) + (a2 + a3)). With 0 < b < 1 the chains converge to
// c / (1 - b), so no value overflows whatever iters is.
extern "C" __global__ void fma_chain(const float* seed, float* out, float b, float c, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = seed[i];
    float a0 = x;
    float a1 = x + 1.0f;
    float a2 = x + 2.0f;
    float a3 = x + 3.0f;
    for (int k = 0; k < iters; ++k) {
        a0 = fmaf(a0, b, c);
        a1 = fmaf(a1, b, c);
        a2 = fmaf(a2, b, c);
        a3 = fmaf(a3, b, c);
    }
    out[i] = (a0 + a1) + (a2 + a3);
}
