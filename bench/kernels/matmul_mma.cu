// Tensor-core f16 matmul: C[M][N] (f32) = A[M][K] * B[K][N], A row-major, B given transposed
// (Bt[N][K], row-major, i.e. B column-major), with mma.sync.aligned.m16n8k16.row.col.f32.f16.
// A block of 4 warps computes a 16 x 32 tile of C, each warp a 16 x 8 tile, stepping through K
// 16 at a time; fragments are loaded straight from global memory in the ISA's layout
// (groupID = lane / 4, tig = lane % 4):
//   A: a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]
//   B: b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]       (B[k][n] = Bt[n][k])
//   C: c0,c1 = C[g][2t..2t+1], c2,c3 = C[g+8][2t..2t+1]
// M must be a multiple of 16, N of 32 and K of 16. The inputs are small integers, so every sum
// is exact in f32 whatever order a GPU adds in, and the native loop gives identical results.
#include <cstdint>
extern "C" __global__ void matmul_mma(const uint16_t* A, const uint16_t* Bt, float* C, int M, int N, int K)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int g = lane / 4, t = lane % 4;
    int row0 = blockIdx.y * 16;
    int col0 = blockIdx.x * 32 + warp * 8;
    float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        const uint16_t* a = A + (size_t)(row0 + g) * K + k0 + 2 * t;
        uint32_t a0 = *(const uint32_t*)a;
        uint32_t a1 = *(const uint32_t*)(a + 8 * K);
        uint32_t a2 = *(const uint32_t*)(a + 8);
        uint32_t a3 = *(const uint32_t*)(a + 8 * K + 8);
        const uint16_t* b = Bt + (size_t)(col0 + g) * K + k0 + 2 * t;
        uint32_t b0 = *(const uint32_t*)b;
        uint32_t b1 = *(const uint32_t*)(b + 8);
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float* c = C + (size_t)(row0 + g) * N + col0 + 2 * t;
    c[0] = c0;
    c[1] = c1;
    c[8 * N] = c2;
    c[8 * N + 1] = c3;
}
