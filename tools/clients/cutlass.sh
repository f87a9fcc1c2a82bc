#!/usr/bin/env bash
# CUTLASS 3.x Hopper GEMMs end to end on ptxvm: tools/clients/cutlass/cutlass_gemm.cu (CUTLASS's
# sm90 CollectiveBuilder: warp-specialized TMA + wgmma mainloop, TMA epilogue, clusters) built by
# nvcc 13.5 from PyPI for compute_90a (the fatbin holds PTX only: ptxvm's libcuda JIT-loads PTX)
# in three schedules (KernelTmaWarpSpecialized with cluster 2x1x1, ...Cooperative 128x128 with
# cluster 1x2x1, ...Pingpong with cluster 2x1x1), each run under `ptxvm exec` on several problem
# sizes; every run checks each element of D against a host reference ("Disposition: Passed").
#
#   tools/clients/cutlass.sh           # fetch + build + run the sizes below
#   tools/clients/cutlass.sh regen     # also regenerate tests/run/matrix/cutlass_gemm_sm90.ptx
#                                      # (kernel PTX + the Params bytes the program built)
#
# Needs git, python3 (venv, pip), cargo, network access to GitHub and PyPI. Settings:
#   PTXVM_CLIENTS  scratch directory (default /tmp/ptxvm-clients): venv, CUTLASS checkout, build
#   CUTLASS_COMMIT the CUTLASS commit (default: the one the committed test was generated from)
#   SIZES          "M,N,K ..." (default below)
#   CU13           an installed nvidia/cu13 folder (nvcc 13.5, crt, nvvm, cudart, cccl): no pip
#                  install (except for regen, which needs numpy)
#
# The host side is CUTLASS's own (GemmKernel::to_underlying_arguments, which builds the four
# tensor maps with cuTensorMapEncodeTiled, linked straight to ptxvm's libcuda with
# CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL); the launch is cuLaunchKernelEx with the cluster
# attribute. It does not go through cudart: cudart 13 initialises through the driver's private
# cuGetExportTable tables, which ptxvm's libcuda does not provide (cudaMalloc answers
# "operation not supported").
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="${PTXVM_CLIENTS:-/tmp/ptxvm-clients}"
mkdir -p "$scratch"
scratch="$(cd "$scratch" && pwd)"
commit="${CUTLASS_COMMIT:-7107b05535f8977f5ecb9d01ee203205b1fd9bc4}"
sizes="${SIZES:-128,64,256 256,128,256 256,128,64 200,72,136 384,192,512 256,128,1024}"

now() { echo "${EPOCHREALTIME/,/.}"; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

(cd "$repo" && cargo build --release -q -p ptxvm-cli -p ptxvm-cuda)
ptxvm="$repo/target/release/ptxvm"

v="$scratch/venv-cutlass"
if [[ -z "${CU13:-}" || "${1:-}" == regen ]]; then
  [[ -x "$v/bin/python" ]] || python3 -m venv "$v"
  "$v/bin/pip" install -q --disable-pip-version-check nvidia-cuda-nvcc==13.5.37 \
    nvidia-cuda-crt==13.5.37 nvidia-nvvm==13.5.37 nvidia-cuda-runtime==13.5.37 nvidia-cuda-cccl numpy
fi
cu="${CU13:-$("$v/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13"))')}"

src="$scratch/cutlass"
if [[ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" != "$commit" ]]; then
  rm -rf "$src" && mkdir -p "$src"
  git -C "$src" init -q
  git -C "$src" fetch -q --depth 1 https://github.com/NVIDIA/cutlass "$commit"
  git -C "$src" checkout -q FETCH_HEAD
fi

build="$scratch/cutlass-build"
# NAME: nvcc -D flags (the schedules of CUTLASS's sm90 CollectiveBuilder, see the .cu)
variants=(
  "ws:-DSCHEDULE=0 -DCLUSTER_M=2"                                       # 64x64 tile, B multicast
  "coop:-DSCHEDULE=1 -DTILE_M=128 -DTILE_N=128 -DCLUSTER_M=1 -DCLUSTER_N=2" # persistent, A multicast
  "ping:-DSCHEDULE=2 -DCLUSTER_M=2"                                     # persistent, 2 consumer WGs
)
rc=0
for var in "${variants[@]}"; do
  name="${var%%:*}"
  read -r -a defs <<<"${var#*:}"
  mkdir -p "$build/$name"
  t0=$(now)
  "$cu/bin/nvcc" -std=c++17 -O1 -gencode arch=compute_90a,code=compute_90a --expt-relaxed-constexpr \
    -diag-suppress 20012,177 -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 "${defs[@]}" \
    -I "$src/include" -I "$src/tools/util/include" --keep --keep-dir "$build/$name" \
    -o "$build/$name/cutlass_gemm" "$repo/tools/clients/cutlass/cutlass_gemm.cu" \
    -L "$repo/target/release" -lcuda
  printf '== %s: nvcc %ss\n' "$name" "$(elapsed "$t0")" >&2
  for s in $sizes; do
    IFS=, read -r m n k <<<"$s"
    t0=$(now)
    if ! "$ptxvm" exec --cc 9.0 -- "$build/$name/cutlass_gemm" --ptx="$build/$name/cutlass_gemm.ptx" \
        --m="$m" --n="$n" --k="$k"; then
      rc=1
    fi
    printf '== %s %sx%sx%s: %ss under ptxvm exec\n' "$name" "$m" "$n" "$k" "$(elapsed "$t0")" >&2
  done
done

if [[ "${1:-}" == regen ]]; then
  "$ptxvm" exec --cc 9.0 -- "$build/ws/cutlass_gemm" --ptx="$build/ws/cutlass_gemm.ptx" \
    --m=128 --n=64 --k=256 --dump="$build/params.bin"
  "$v/bin/python" "$repo/tests/run/tools/cutlass_gemm_sm90.py" "$build/ws/cutlass_gemm.ptx" \
    "$build/params.bin"
fi
exit $rc
