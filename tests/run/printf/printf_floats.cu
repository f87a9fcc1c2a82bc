// Source of printf_floats.ptx: nvcc -ptx -arch=sm_80 printf_floats.cu (then .version set to 8.5).
#include <cstdio>

__global__ void floats(float x, double y) {
    printf("f=%f e=%e g=%g E=%E G=%G\n", x, x, x, x, x);
    printf("[%.3f] [%10.4f] [%-10.2f] [%+.1f] [%010.3f]\n", y, y, y, y, -y);
    printf("[%.2e] [%12.3e] [%g] [%g] [%g] [%.10g]\n", y, -y, 1e20, 1e-5, 100000.0, 0.1);
    printf("[%.17g] [%.0f] [%.0e] [%#.0f] [%g] [%g]\n", 0.1, 1234.0, 1234.0, 3.0, 0.0001, 123456789.0);
    printf("%f %e %g %f\n", 1.0 / 0.0, -1.0 / 0.0, 1.0 / 0.0, -0.0);
    printf("%.3f %.3f %.3f\n", (double)x * 2.0f, 1.0e-7, 123456.789);
}
