// Non-inlined device calls, recursion, function pointers, local arrays with dynamic indexing.
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ __noinline__ int square(int x) { return x * x; }
typedef int (*op_t)(int);
__device__ op_t ops[2] = {twice, square};
extern "C" __global__ void calls(int* out, int k) {
    int t = threadIdx.x;
    int local[16];
    for (int i = 0; i < 16; ++i) local[i] = i * t;
    out[t] = fib(k & 15) + ops[t & 1](t) + local[(t + k) & 15];
}
