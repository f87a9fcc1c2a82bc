// Device malloc/free: each thread allocates 4 ints, fills them, the block syncs, each thread
// sums its own block, then frees it. A second malloc larger than the heap returns NULL.
extern "C" __global__ void heap(unsigned long long *ok, int *sums, unsigned long long *big) {
  int t = threadIdx.x;
  int *p = (int *)malloc(4 * sizeof(int));
  ok[t] = (p != 0) && ((unsigned long long)p % 16 == 0);
  for (int i = 0; i < 4; i++) p[i] = t * 10 + i;
  __syncthreads();
  sums[t] = p[0] + p[1] + p[2] + p[3];
  free(p);
  if (t == 0) big[0] = (unsigned long long)malloc(1ull << 40);
}
extern "C" __global__ void double_free(int *out) {
  int *p = (int *)malloc(16);
  out[0] = 1;
  free(p);
  free(p);
}
