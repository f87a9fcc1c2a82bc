// __constant__ memory written with cudaMemcpyToSymbol (whole and at an offset), read back with
// cudaMemcpyFromSymbol, used by a kernel; cudaGetSymbolSize.
#include "check.cuh"

__constant__ float coeff[8];
__constant__ int offset_value;

__global__ void poly(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 7; k >= 0; k--) acc = acc * x[i] + coeff[k];
    y[i] = acc + offset_value;
}

int main() {
    float h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(cudaMemcpyToSymbol(coeff, h, sizeof(h)));
    float two = 0.5f;
    // coeff[3] = 0.5, at a byte offset
    CHECK(cudaMemcpyToSymbol(coeff, &two, sizeof(float), 3 * sizeof(float)));
    int off = 100;
    CHECK(cudaMemcpyToSymbol(offset_value, &off, sizeof(int)));
    float back[8];
    CHECK(cudaMemcpyFromSymbol(back, coeff, sizeof(back)));
    EXPECT(back[0] == 1.0f && back[3] == 0.5f && back[7] == 8.0f);
    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, coeff));
    EXPECT(size == sizeof(h));

    const int n = 200;
    float hx[n], hy[n];
    for (int i = 0; i < n; i++) hx[i] = (i % 7) * 0.25f;
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof(hx)));
    CHECK(cudaMalloc(&dy, sizeof(hy)));
    CHECK(cudaMemcpy(dx, hx, sizeof(hx), cudaMemcpyHostToDevice));
    poly<<<(n + 63) / 64, 64>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hy, dy, sizeof(hy), cudaMemcpyDeviceToHost));
    h[3] = 0.5f;
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int k = 7; k >= 0; k--) acc = acc * hx[i] + h[k];
        EXPECT(hy[i] == acc + 100);
    }
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    std::printf("constant: ok\n");
    return 0;
}
