// A CUTLASS 3.x Hopper GEMM built with the CollectiveBuilders: warp-specialized TMA + wgmma
// mainloop, TMA epilogue, cluster 2x1x1 (B tiles multicast over the cluster, consumer releases
// arrive on the other CTA's mbarriers). Inputs are small integers so the result is exact.
// The host side is CUTLASS's own (Arguments -> GemmKernel::to_underlying_arguments, which builds
// the TMA descriptors with cuTensorMapEncodeTiled); the launch uses the driver API
// (cuLaunchKernelEx with the cluster attribute), as GemmUniversalAdapter does through cudart.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <chrono>
#include <cuda.h>
#include <string>
#include <fstream>
#include <sstream>
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"
using namespace cute;

using ElementA = cutlass::half_t;  using LayoutA = cutlass::layout::RowMajor;
using ElementB = cutlass::half_t;  using LayoutB = cutlass::layout::ColumnMajor;
using ElementC = float;            using LayoutC = cutlass::layout::RowMajor;
using ElementAcc = float;
constexpr int AlignA = 8, AlignB = 8, AlignC = 4;
#ifndef TILE_M
#define TILE_M 64
#endif
#ifndef TILE_N
#define TILE_N 64
#endif
using TileShape = Shape<Int<TILE_M>, Int<TILE_N>, _64>;
#ifndef CLUSTER_M
#define CLUSTER_M 2
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1
#endif
using ClusterShape = Shape<Int<CLUSTER_M>, Int<CLUSTER_N>, _1>;
// SCHEDULE 0: KernelTmaWarpSpecialized (one consumer warpgroup), 1: ...Cooperative (two
// consumer warpgroups share each tile, persistent), 2: ...Pingpong (two consumer warpgroups
// alternate tiles, persistent)
#ifndef SCHEDULE
#define SCHEDULE 0
#endif
#if SCHEDULE == 1
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#elif SCHEDULE == 2
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecialized;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#endif

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, ElementAcc,
    ElementC, LayoutC, AlignC, ElementC, LayoutC, AlignC,
    EpilogueSchedule>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, AlignA,
    ElementB, LayoutB, AlignB, ElementAcc, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    MainloopSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                        CollectiveMainloop, CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; \
  cuGetErrorName(r_, &s_); printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); return 1; } } while (0)

static int arg(int argc, char **argv, const char *name, int def) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, n) && argv[i][2 + n] == '=')
      return atoi(argv[i] + 3 + n);
  return def;
}
static const char *sarg(int argc, char **argv, const char *name, const char *def) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, n) && argv[i][2 + n] == '=')
      return argv[i] + 3 + n;
  return def;
}

// Instantiates the kernel (nothing else names it: the launch goes through the driver API).
void *const kernel_entry = (void *)&cutlass::device_kernel<GemmKernel>;

int main(int argc, char **argv) {
  int M = arg(argc, argv, "m", 256), N = arg(argc, argv, "n", 128), K = arg(argc, argv, "k", 256);
  const char *ptx_path = sarg(argc, argv, "ptx", "cutlass_gemm.ptx");
  const char *dump = sarg(argc, argv, "dump", nullptr);
  float alpha = 1.f, beta = 1.f;
  std::vector<ElementA> A(size_t(M) * K); std::vector<ElementB> B(size_t(K) * N);
  std::vector<float> C(size_t(M) * N), D(size_t(M) * N, -1.f), R(size_t(M) * N);
  // A row-major MxK, B column-major KxN (element (k,n) at n*K+k), C/D row-major MxN
  // --a/--b/--c pick other inputs when looking for a fault: 1 all ones, 2 the row (m or n) mod 8,
  // 3 k mod 8, 4 2^((k/16) mod 8) (c: 0 pattern, 1 zeros)
  int am = arg(argc, argv, "a", 0), bm = arg(argc, argv, "b", 0), cm = arg(argc, argv, "c", 0);
  alpha = float(arg(argc, argv, "alpha", 1)); beta = float(arg(argc, argv, "beta", 1));
  auto pick = [](int mode, int row, int k, float pattern) {
    return mode == 1 ? 1.f : mode == 2 ? float(row % 8) : mode == 3 ? float(k % 8) : mode == 4 ? float(1 << ((k / 16) % 8)) : pattern; };
  for (int m = 0; m < M; ++m) for (int k = 0; k < K; ++k) A[size_t(m) * K + k] = ElementA(pick(am, m, k, float((m * 7 + k * 3) % 5 - 2)));
  for (int n = 0; n < N; ++n) for (int k = 0; k < K; ++k) B[size_t(n) * K + k] = ElementB(pick(bm, n, k, float((n * 5 + k * 11) % 7 - 3)));
  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) C[size_t(m) * N + n] = cm ? 0.f : float((m + 2 * n) % 9 - 4);
  for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) {
    double s = 0;
    for (int k = 0; k < K; ++k) s += double(float(A[size_t(m) * K + k])) * double(float(B[size_t(n) * K + k]));
    R[size_t(m) * N + n] = float(alpha * s + beta * C[size_t(m) * N + n]);
  }
  CU(cuInit(0));
  CUdevice dev; CU(cuDeviceGet(&dev, 0));
  CUcontext ctx; CU(cuDevicePrimaryCtxRetain(&ctx, dev)); CU(cuCtxSetCurrent(ctx));
  int sms = 0; CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUdeviceptr dA, dB, dC, dD;
  CU(cuMemAlloc(&dA, A.size() * sizeof(ElementA))); CU(cuMemAlloc(&dB, B.size() * sizeof(ElementB)));
  CU(cuMemAlloc(&dC, C.size() * 4)); CU(cuMemAlloc(&dD, D.size() * 4));
  CU(cuMemcpyHtoD(dA, A.data(), A.size() * sizeof(ElementA)));
  CU(cuMemcpyHtoD(dB, B.data(), B.size() * sizeof(ElementB)));
  CU(cuMemcpyHtoD(dC, C.data(), C.size() * 4));
  CU(cuMemcpyHtoD(dD, D.data(), D.size() * 4));

  auto sA = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, {M, K, 1});
  auto sB = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, {N, K, 1});
  auto sC = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, {M, N, 1});
  auto sD = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, {M, N, 1});
  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = sms;
  typename GemmKernel::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1},
      {(ElementA *)dA, sA, (ElementB *)dB, sB}, {{alpha, beta}, (float *)dC, sC, (float *)dD, sD}, hw};
  if (!GemmKernel::can_implement(args)) { printf("can_implement: no\n"); return 1; }
  size_t ws = GemmKernel::get_workspace_size(args);
  if (ws) { printf("workspace of %zu bytes not expected\n", ws); return 1; }
  typename GemmKernel::Params params = GemmKernel::to_underlying_arguments(args, nullptr);
  dim3 grid = GemmKernel::get_grid_shape(params), block = GemmKernel::get_block_shape();
  int smem = GemmKernel::SharedStorageSize;
  printf("CUTLASS GEMM %dx%dx%d f16*f16+f32 -> f32, tile %dx%dx64, cluster %dx%dx1, schedule %d, %d stages, "
         "block %u, grid %u %u %u, smem %d bytes, Params %zu bytes\n", M, N, K, TILE_M, TILE_N, CLUSTER_M, CLUSTER_N, SCHEDULE,
         int(CollectiveMainloop::DispatchPolicy::Stages), block.x, grid.x, grid.y, grid.z, smem,
         sizeof(params));
  if (dump) {  // the Params bytes, for a `ptxvm run` test of the same kernel
    printf("buffers A %#llx B %#llx C %#llx D %#llx\n", (unsigned long long)dA,
           (unsigned long long)dB, (unsigned long long)dC, (unsigned long long)dD);
    FILE *f = fopen(dump, "wb"); fwrite(&params, sizeof(params), 1, f); fclose(f);
  }

  std::ifstream in(ptx_path);
  if (!in) { printf("cannot read %s\n", ptx_path); return 1; }
  std::stringstream ss; ss << in.rdbuf(); std::string ptx = ss.str();
  size_t at = ptx.find(".entry ");
  if (at == std::string::npos) { printf("no .entry in %s\n", ptx_path); return 1; }
  at += 7; size_t end = ptx.find('(', at);
  std::string name = ptx.substr(at, end - at);
  CUmodule mod; CU(cuModuleLoadData(&mod, ptx.c_str()));
  CUfunction fn; CU(cuModuleGetFunction(&fn, mod, name.c_str()));
  CU(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  CUlaunchAttribute attr[1];
  attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr[0].value.clusterDim.x = CLUSTER_M; attr[0].value.clusterDim.y = CLUSTER_N; attr[0].value.clusterDim.z = 1;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = grid.x; cfg.gridDimY = grid.y; cfg.gridDimZ = grid.z;
  cfg.blockDimX = block.x; cfg.blockDimY = block.y; cfg.blockDimZ = block.z;
  cfg.sharedMemBytes = smem; cfg.hStream = 0; cfg.attrs = attr; cfg.numAttrs = 1;
  void *kargs[] = {&params};
  auto t0 = std::chrono::steady_clock::now();
  CU(cuLaunchKernelEx(&cfg, fn, kargs, nullptr));
  CU(cuCtxSynchronize());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CU(cuMemcpyDtoH(D.data(), dD, D.size() * 4));
  size_t bad = 0;
  for (size_t i = 0; i < D.size(); ++i)
    if (D[i] != R[i]) { if (bad < size_t(arg(argc, argv, "show", 5))) printf("mismatch at (%zu,%zu): got %g want %g\n", i / N, i % N, D[i], R[i]); ++bad; }
  printf("kernel time %.3f s; %zu of %zu elements differ\nDisposition: %s\n", secs, bad, D.size(), bad ? "Failed" : "Passed");
  return bad ? 1 : 0;
}
