// Integer, float, 64-bit atomics and a CAS loop (atomicMax on double).
__device__ double atomicMaxDouble(double* addr, double val) {
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        if (__longlong_as_double(assumed) >= val) break;
        old = atomicCAS(p, assumed, __double_as_longlong(val));
    } while (assumed != old);
    return __longlong_as_double(old);
}
extern "C" __global__ void atomics(int* ci, float* cf, unsigned long long* cl, double* dm, const double* x) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(ci, 1);
    atomicMin(ci + 1, -t);
    atomicExch(ci + 2, t);
    atomicAdd(cf, 0.5f);
    atomicAdd(cl, 1ull << (t & 31));
    atomicOr(cl + 1, (unsigned long long)t);
    atomicMaxDouble(dm, x[t]);
}
