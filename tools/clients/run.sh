#!/usr/bin/env bash
# Real CUDA clients on ptxvm's libcuda, each installed from its registry into a scratch
# directory ($PTXVM_CLIENTS, default /tmp/ptxvm-clients) and run under `ptxvm exec`.
#
#   tools/clients/run.sh tinygrad        # smoke: sum, matmul, conv (DEV=CUDA:PTX)
#   tools/clients/run.sh cudarc          # the 11 examples, then its driver unit tests
#   tools/clients/run.sh numba           # one @cuda.jit kernel
#   tools/clients/run.sh numba-suite [MODULE…]  # numba.cuda.tests.cudapy (or some modules)
#   tools/clients/run.sh all             # tinygrad, cudarc examples, numba smoke
#
# Needs python3 (venv, pip), cargo, network access to PyPI and crates.io. Prints the time of
# each step; exits non-zero when a step fails.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/tools/clients"
scratch="${PTXVM_CLIENTS:-/tmp/ptxvm-clients}"
mkdir -p "$scratch"
shared="${PTXVM_SHARED:-$repo/../shared}"

(cd "$repo" && cargo build --release -q -p ptxvm-cli)
ptxvm="$repo/target/release/ptxvm"

step() { # NAME COMMAND…: run and time one step
  local name="$1"; shift
  local t0; t0=$(date +%s.%N)
  local rc=0
  "$@" || rc=$?
  printf '== %s: %s in %.1fs\n' "$name" "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")" \
    "$(echo "$(date +%s.%N) - $t0" | bc)"
  return $rc
}

venv() { # NAME PACKAGES…: a venv in the scratch directory with the packages
  local v="$scratch/venv-$1"; shift
  [[ -x "$v/bin/python" ]] || python3 -m venv "$v"
  "$v/bin/pip" install -q "$@"
  echo "$v"
}

tinygrad() {
  local v; v=$(venv tinygrad tinygrad numpy)
  DEV=CUDA:PTX step "tinygrad smoke" "$ptxvm" exec -- "$v/bin/python" "$here/tinygrad-smoke.py"
}

nvrtc_lib() { # the lib directory of pip nvidia-cuda-nvrtc (cudarc loads libnvrtc from it)
  # nvidia-cuda-cccl: the CCCL headers (cuda/atomic) NVRTC needs for numba's NRT (memsys.cuh)
  local v; v=$(venv numba numba-cuda cuda-bindings nvidia-cuda-nvcc nvidia-cuda-nvrtc \
    nvidia-cuda-cccl pytest pytest-xdist filecheck ml_dtypes cffi psutil)
  "$v/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))'
}

cudarc() {
  local lib; lib=$(nvrtc_lib)
  local src="$scratch/cudarc"
  if [[ ! -d "$src" ]]; then
    local probe="$scratch/cudarc-probe"
    mkdir -p "$probe" && (cd "$probe" && { [[ -f Cargo.toml ]] || cargo init -q --name probe; } &&
      cargo add -q cudarc@0.19.10 && cargo fetch -q)
    cp -r "$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.10 | head -1)" "$src"
  fi
  local features=std,cuda-13000,dynamic-loading,driver,nvrtc
  local examples=(01-allocate 02-copy 03-launch-kernel 04-streams 05-device-repr 06-threading
    09-constant-memory 10-function-attributes 12-context-config matmul-kernel nvrtc-compile)
  local args=()
  for e in "${examples[@]}"; do args+=(--example "$e"); done
  (cd "$src" && cargo build -q --no-default-features --features "$features" "${args[@]}")
  local failed=0
  for e in "${examples[@]}"; do
    (cd "$src" && LD_LIBRARY_PATH="$lib" step "cudarc $e" "$ptxvm" exec -- "target/debug/examples/$e" \
      > "$scratch/cudarc-$e.out" 2>&1) || failed=1
    tail -n 3 "$scratch/cudarc-$e.out"
  done
  if [[ "${CUDARC_TESTS:-1}" == 1 ]]; then
    (cd "$src" && cargo test -q --no-run --lib --no-default-features --features "$features" 2>&1 | tail -1)
    local bin; bin=$(ls -t "$src"/target/debug/deps/cudarc-* | grep -v '\.d$' | head -1)
    # test_par_launch runs a kernel made slow for a GPU: minutes on a CPU
    (cd "$src" && LD_LIBRARY_PATH="$lib" step "cudarc driver tests" "$ptxvm" exec -- "$bin" \
      --test-threads 1 --skip test_par_launch > "$scratch/cudarc-tests.out" 2>&1) || true
    grep -E '^test result|FAILED' "$scratch/cudarc-tests.out" || true
  fi
  return $failed
}

numba() {
  nvrtc_lib > /dev/null
  step "numba smoke" "$ptxvm" exec -- "$scratch/venv-numba/bin/python" "$here/numba-smoke.py"
}

numba_suite() {
  nvrtc_lib > /dev/null
  local run="$scratch/numba-run"
  mkdir -p "$run"
  cp "$shared/reference/libcuda/pytest.ini" "$shared/reference/libcuda/conftest.py" "$run/"
  local modules=("$@")
  [[ ${#modules[@]} -gt 0 ]] || modules=(numba.cuda.tests.cudapy)
  (cd "$run" && step "numba ${modules[*]}" "$ptxvm" exec -- "$scratch/venv-numba/bin/python" -m pytest \
    -q -p no:cacheprovider -n "${JOBS:-2}" --junitxml="$run/junit.xml" "${modules[@]}" \
    > "$run/pytest.out" 2>&1) || true
  tail -n 1 "$run/pytest.out"
}

case "${1:-all}" in
  tinygrad) tinygrad ;;
  cudarc) cudarc ;;
  numba) numba ;;
  numba-suite) shift; numba_suite "$@" ;;
  all) tinygrad; CUDARC_TESTS=0 cudarc; numba ;;
  *) echo "usage: $0 tinygrad|cudarc|numba|numba-suite [MODULE…]|all" >&2; exit 2 ;;
esac
