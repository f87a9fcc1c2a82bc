// Source of assert_fail.ptx: nvcc -ptx -arch=sm_80 assert_fail.cu (then .version set to 8.5).
#include <cassert>

__global__ void check(const int *v, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(v[i] != 45);
    out[i] = v[i] * 2;
}
