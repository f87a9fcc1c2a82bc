// Vector add with a grid-stride loop and float4 loads.
extern "C" __global__ void vadd4(const float4* a, const float4* b, float4* c, int n4) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
