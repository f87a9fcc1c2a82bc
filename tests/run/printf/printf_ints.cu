// Source of printf_ints.ptx: nvcc -ptx -arch=sm_80 printf_ints.cu (then .version set to 8.5).
#include <cstdio>

__global__ void ints(int n) {
    long long big = -1234567890123LL;
    unsigned long long umax = 18446744073709551615ULL;
    printf("d=%d i=%i u=%u x=%x X=%X o=%o\n", -42, n, 3000000000u, 255, 0xBEEF, 8);
    printf("[%5d] [%-5d] [%05d] [%+d] [% d] [%+d]\n", n, n, n, n, n, -n);
    printf("[%.3d] [%8.3d] [%-8.3d] [%x] [%#x] [%#o] [%#X]\n", 7, 7, 7, -1, 255, 8, 255);
    printf("ld=%ld lld=%lld llu=%llu lx=%lx llX=%llX\n", big, big, umax, 0x123456789abcdefLL, 0xfedcba9876543210ULL);
    printf("%d%% done, %u%%\n", 50, 100u);
    printf("[%*d] [%-*d]\n", 6, n, 6, n);
}
