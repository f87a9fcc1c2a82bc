// nvcc-flags: -fmad=false
// SAXPY, out of place: out[i] = a * x[i] + y[i], one element per thread.
// Compiled with -fmad=false so that the PTX has mul.rn.f32 then add.rn.f32,
// the same two roundings as the plain `a * x + y` of the native Rust code.
// Out of place (rather than y = a*x + y) so that repeated launches see the
// same inputs; the memory traffic is the same (two loads, one store).
extern "C" __global__ void saxpy(int n, float a, const float* x, const float* y, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a * x[i] + y[i];
    }
}
