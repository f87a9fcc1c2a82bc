#!/usr/bin/env bash
# Regenerate tests/corpus/ptx/*.ptx from tests/corpus/cuda/*.cu and check each with ptxas.
#
# Compiler install (no system CUDA needed; a host gcc is only needed by nvcc's preprocessor):
#   pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-runtime nvidia-cuda-cccl
# (CUDA 13.5 wheels: nvcc/ptxas V13.5.37; cuda-cccl provides <nv/target> needed by cuda_fp16.h.)
# The tools land in $(python3 -c 'import nvidia,os;print(nvidia.__path__[0])')/cu13/bin.
# Override with NVCC=/path/to/nvcc PTXAS=/path/to/ptxas.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cu13="$(python3 -c 'import nvidia; print(nvidia.__path__[0])' 2>/dev/null)/cu13/bin"
NVCC="${NVCC:-$cu13/nvcc}"
PTXAS="${PTXAS:-$cu13/ptxas}"
src="$root/tests/corpus/cuda"
out="$root/tests/corpus/ptx"
mkdir -p "$out"
archs="${ARCHS:-sm_75 sm_80 sm_90}"
for cu in "$src"/*.cu; do
  name="$(basename "$cu" .cu)"
  for arch in $archs; do
    (cd "$src" && "$NVCC" -arch="$arch" -O3 -ptx "$name.cu" -o "$out/${name}_${arch}.ptx")
  done
done
# Debug variants (.target debug, .file/.loc, DWARF .section blocks) and line-info variants.
for name in calls_recursion reduce_shared; do
  (cd "$src" && "$NVCC" -arch=sm_80 -G -ptx "$name.cu" -o "$out/${name}_sm_80_debug.ptx")
  (cd "$src" && "$NVCC" -arch=sm_80 -O3 -lineinfo -ptx "$name.cu" -o "$out/${name}_sm_80_lineinfo.ptx")
done
# Debug info names this machine's paths: replace them with placeholders so that the files do not
# depend on where the repository or the CUDA package lives.
inc="$(cd "$cu13/.." && pwd)/include/"
for f in "$out"/*.ptx; do
  sed -i "s#\"$src/#\"/src/#; s#\"$cu13/../include/#\"/cuda/include/#; s#\"$inc#\"/cuda/include/#" "$f"
done
# Every generated file must be accepted by ptxas for its own target.
status=0
for f in "$out"/*.ptx; do
  arch="$(grep -m1 '^\.target' "$f" | grep -o 'sm_[0-9]*[af]\?' | head -1)"
  if ! "$PTXAS" -arch="$arch" "$f" -o /dev/null; then echo "ptxas rejected $f" >&2; status=1; fi
done
exit $status
