// nvcc-flags: -fmad=false
// Mandelbrot escape counts, divergent loops: the pixel (px, py) of a width x
// height image is c = (x_min + px*dx, y_min + py*dy); it iterates
// z = z^2 + c from z = 0 until |z|^2 > 4 or max_iter iterations and stores the
// iteration count. Neighbouring pixels of a warp leave the loop at different
// iterations. Compiled with -fmad=false so each operation is one rounded
// mul/add/sub, as in the native Rust code: the counts are bit-exact.
extern "C" __global__ void mandelbrot(unsigned int* out, int width, int height, float x_min,
                                      float y_min, float dx, float dy, int max_iter)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height) {
        return;
    }
    float x0 = x_min + (float)px * dx;
    float y0 = y_min + (float)py * dy;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (it < max_iter) {
        float x2 = x * x;
        float y2 = y * y;
        if (x2 + y2 > 4.0f) {
            break;
        }
        float xt = (x2 - y2) + x0;
        y = (2.0f * x) * y + y0;
        x = xt;
        ++it;
    }
    out[py * width + px] = (unsigned int)it;
}
