#!/usr/bin/env bash
# A CUTLASS 3.x Hopper GEMM end to end on ptxvm: tools/clients/cutlass/cutlass_gemm.cu (a
# CollectiveBuilder warp-specialized TMA + wgmma GEMM, TMA epilogue, cluster 2x1x1) compiled by
# nvcc 13.5 from PyPI for compute_90a (the fatbin holds PTX only: ptxvm's libcuda JIT-loads PTX),
# run under `ptxvm exec` on several problem sizes; each run checks every element of D against a
# host reference and prints "Disposition: Passed".
#
#   tools/clients/cutlass.sh           # fetch + build + run the sizes below
#   tools/clients/cutlass.sh regen     # also regenerate tests/run/matrix/cutlass_gemm_sm90.ptx
#                                      # (kernel PTX + the Params bytes the program built)
#
# Needs git, python3 (venv, pip), cargo, network access to GitHub and PyPI. Settings:
#   PTXVM_CLIENTS  scratch directory (default /tmp/ptxvm-clients): venv, CUTLASS checkout, build
#   CUTLASS_COMMIT the CUTLASS commit (default: the one the committed test was generated from)
#   SIZES          "M,N,K ..." (default below)
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
[[ -x "$v/bin/python" ]] || python3 -m venv "$v"
"$v/bin/pip" install -q --disable-pip-version-check nvidia-cuda-nvcc==13.5.37 nvidia-cuda-crt==13.5.37 \
  nvidia-nvvm==13.5.37 nvidia-cuda-runtime==13.5.37 nvidia-cuda-cccl numpy
cu="$("$v/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13"))')"

src="$scratch/cutlass"
if [[ "$(git -C "$src" rev-parse HEAD 2>/dev/null)" != "$commit" ]]; then
  rm -rf "$src" && mkdir -p "$src"
  git -C "$src" init -q
  git -C "$src" fetch -q --depth 1 https://github.com/NVIDIA/cutlass "$commit"
  git -C "$src" checkout -q FETCH_HEAD
fi

build="$scratch/cutlass-build"
mkdir -p "$build/keep"
t0=$(now)
"$cu/bin/nvcc" -std=c++17 -O1 -gencode arch=compute_90a,code=compute_90a --expt-relaxed-constexpr \
  -diag-suppress 20012,177 -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 \
  -I "$src/include" -I "$src/tools/util/include" --keep --keep-dir "$build/keep" \
  -o "$build/cutlass_gemm" "$repo/tools/clients/cutlass/cutlass_gemm.cu" \
  -L "$repo/target/release" -lcuda
printf '== nvcc: %ss\n' "$(elapsed "$t0")" >&2
ptx="$build/keep/cutlass_gemm.ptx"

rc=0
for s in $sizes; do
  IFS=, read -r m n k <<<"$s"
  t0=$(now)
  if ! "$ptxvm" exec --cc 9.0 -- "$build/cutlass_gemm" --ptx="$ptx" --m="$m" --n="$n" --k="$k"; then
    rc=1
  fi
  printf '== %sx%sx%s: %ss under ptxvm exec\n' "$m" "$n" "$k" "$(elapsed "$t0")" >&2
done

if [[ "${1:-}" == regen ]]; then
  "$ptxvm" exec --cc 9.0 -- "$build/cutlass_gemm" --ptx="$ptx" --m=128 --n=64 --k=256 \
    --dump="$build/params.bin"
  "$v/bin/python" "$repo/tests/run/tools/cutlass_gemm_sm90.py" "$ptx" "$build/params.bin"
fi
exit $rc
