// Source of printf_warp.ptx: nvcc -ptx -arch=sm_80 printf_warp.cu (then .version set to 8.5).
#include <cstdio>

__global__ void warp_print(const int *v) {
    int lane = threadIdx.x;
    printf("lane %2d: v=%d\n", lane, v[lane] * 3);
    if (lane % 5 == 0) {
        printf("multiple of 5: %d\n", lane);
    }
    printf("done %d\n", lane);
}
