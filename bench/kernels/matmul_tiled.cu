// nvcc-flags: -fmad=false
// Tiled f32 matmul: C[M][N] = A[M][K] * B[K][N], row-major, 16x16 tiles staged
// in shared memory between __syncthreads. Out-of-range tile elements load as 0
// and out-of-range outputs are not written, so sizes need not be multiples of 16.
// Each output accumulates acc = acc + A[row][k] * B[k][col] from acc = 0 in
// increasing k. Compiled with -fmad=false (mul.rn.f32 then add.rn.f32) so the
// native i-k-j loop `c[j] += a * b[j]`, which adds the same products in the
// same order, gives bit-identical results.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[ty][tx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc = acc + As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
