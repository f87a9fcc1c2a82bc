// Source of printf_strings.ptx: nvcc -ptx -arch=sm_80 printf_strings.cu (then .version set to 8.5).
#include <cstdio>

__device__ const char *names[4] = {"zero", "one", "two", "three"};

__global__ void strings(int k) {
    printf("hello from the device\n");
    printf("[%s] [%10s] [%-10s] [%.2s] [%c%c%c]\n", names[k], names[k], names[k + 1], names[3], 'a', 66, '!');
    printf("%s=%d, %s=%d\n", names[1], 1, names[2], 2);
    printf("no tab here, quote \" and backslash \\ end\n");
    printf("[%5c] [%-3c]\n", 'x', 'y');
}
