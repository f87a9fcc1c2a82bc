// out[i] = 3 * i + (the virtual architecture the PTX was generated for, e.g. 80 for
// compute_80), so a test sees which of a fatbin's PTX entries ran.
extern "C" __global__ void k(unsigned *out)
{
#ifdef __CUDA_ARCH__
    out[threadIdx.x] = threadIdx.x * 3 + __CUDA_ARCH__ / 10;
#endif
}
