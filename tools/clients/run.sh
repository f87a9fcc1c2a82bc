#!/usr/bin/env bash
# Real CUDA clients on ptxvm's libcuda, each installed from its registry into a scratch
# directory ($PTXVM_CLIENTS, default /tmp/ptxvm-clients) and run under `ptxvm exec`.
#
#   tools/clients/run.sh tinygrad        # smoke: sum, matmul, conv (DEV=CUDA:PTX)
#   tools/clients/run.sh tinygrad-suite  # tinygrad's test_tiny + test_ops (FORWARD_ONLY=1), DEV=CUDA:PTX
#   tools/clients/run.sh tinygrad-cpu    # the same selection on DEV=CPU, no ptxvm (the reference)
#   tools/clients/run.sh cudarc [EXAMPLE…]  # the 11 examples (or some), outputs checked, then
#                                        # its driver unit tests (CUDARC_TESTS=0 skips them)
#   tools/clients/run.sh numba           # one @cuda.jit kernel (asserts nvJitLink is absent)
#   tools/clients/run.sh numba-suite [MODULE…]  # numba.cuda.tests.cudapy (or some modules)
#   tools/clients/run.sh triton [CC…]    # Triton's tutorials (tools/clients/triton/tutorials.py,
#                                        # numpy over cuMemAlloc, no PyTorch) at each compute
#                                        # capability (default 8.0 9.0); Triton's ptxas is
#                                        # `ptxvm ptxas`, which `ptxvm exec` points it at
#   tools/clients/run.sh triton-interpret  # the same tutorials on Triton's interpreter
#                                        # (TRITON_INTERPRET=1, no ptxvm), for the timing
#   tools/clients/run.sh cudart          # nvcc-built CUDA Runtime programs (crates/cuda/tests/
#                                        # cudart): cudart 13 static and shared, and cudart 12
#   tools/clients/run.sh pycuda          # PyCUDA built from its sdist (without cuRAND) against
#                                        # ptxvm's libcuda, then its test_driver, test_gpuarray
#                                        # and test_cumath; nvcc --cubin goes through `ptxvm nvcc`
#   tools/clients/run.sh cupy            # CuPy (cupy-cuda13x): tools/clients/cupy-smoke.py at
#                                        # cc 12.0 with CUPY_COMPILE_WITH_PTX=1
#   tools/clients/run.sh smoke           # the CI subset (.ci/run): tinygrad smoke, 3 cudarc
#                                        # examples, numba smoke + 4 cudapy modules, Triton
#                                        # tutorials 01 and 03 at cc 9.0; all must pass
#   tools/clients/run.sh all             # tinygrad, cudarc examples, numba smoke
#
# Needs python3 (venv, pip), cargo, network access to PyPI and crates.io. Prints the time of
# each step; exits non-zero when a step fails. For the suites a failing test is a figure, not a
# failure of the script: they print pytest's summary and fail only when pytest itself breaks.
#
# Settings (environment):
#   PTXVM_CLIENTS   scratch directory (venvs, cudarc source, test runs, outputs)
#   JOBS            pytest-xdist workers for the suites (default 2; numba-suite, tinygrad-*)
#   TEST_TIMEOUT    seconds per test for the tinygrad suites (default 900; pytest-timeout).
#                   Some test_ops kernels take minutes on ptxvm (test_masked_select's
#                   r_320_16_320_320_20 is ~5e9 thread instructions); a launch over ptxvm's
#                   PTXVM_TIMEOUT (600 s) is CUDA_ERROR_LAUNCH_TIMEOUT, sticky as on a GPU, so
#                   every later test of that process fails: give a loaded machine a larger one
#   TINYGRAD_REPO   a clone of tinygrad's repository (work tree or git dir): test_ops.py and
#                   test/helpers.py come from its tag v$TINYGRAD_VERSION, or HEAD when it lacks
#                   that tag; the PyPI sdist ships only test/test_tiny.py
#   TINYGRAD_VERSION  the pip version of tinygrad (default 0.14.0)
#   TRITON_VERSION  the pip version of triton (default 3.9.0)
#   TUTORIALS       the tutorials `triton` runs (default all: 01 02 03 05 06 07 08 09)
#   TINYGRAD_TESTS  the test files to run (default: test/test_tiny.py test/backend/test_ops.py)
#   TORCH_INDEX_URL  a package index for torch (test_ops' reference): a CPU-only build saves
#                   ~3 GB of CUDA wheels that PyPI's torch pulls in (unused: torch runs on CPU)
#   PTXVM_SHARED    unused here (kept for compatibility)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/tools/clients"
scratch="${PTXVM_CLIENTS:-/tmp/ptxvm-clients}"
mkdir -p "$scratch"
scratch="$(cd "$scratch" && pwd)"
tg_version="${TINYGRAD_VERSION:-0.14.0}"

# `ptxvm exec` finds libcuda.so beside the binary (building the CLI builds ptxvm-cuda too)
(cd "$repo" && cargo build --release -q -p ptxvm-cli -p ptxvm-cuda)
ptxvm="$repo/target/release/ptxvm"

now() { echo "${EPOCHREALTIME/,/.}"; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

step() { # NAME COMMAND…: run and time one step (the timing line goes to stderr)
  local name="$1"; shift
  local t0; t0=$(now)
  local rc=0
  "$@" || rc=$?
  printf '== %s: %s in %ss\n' "$name" "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")" "$(elapsed "$t0")" >&2
  return $rc
}

venv() { # NAME PACKAGES…: a venv in the scratch directory with the packages
  local v="$scratch/venv-$1"; shift
  [[ -x "$v/bin/python" ]] || python3 -m venv "$v" >&2 || return 1
  "$v/bin/pip" install -q --disable-pip-version-check "$@" >&2 || return 1
  echo "$v"
}

tinygrad() {
  local v; v=$(step "tinygrad install" venv tinygrad "tinygrad==$tg_version" numpy) || return 1
  DEV=CUDA:PTX step "tinygrad smoke" "$ptxvm" exec -- "$v/bin/python" "$here/tinygrad-smoke.py"
}

tinygrad_tests() { # prints the folder holding test/test_tiny.py and test/backend/test_ops.py
  local t="$scratch/tinygrad-tests"
  if [[ ! -f "$t/test/backend/test_ops.py" ]]; then
    if [[ -z "${TINYGRAD_REPO:-}" ]]; then
      echo "tinygrad-suite: set TINYGRAD_REPO to a clone of tinygrad's repository (test_ops.py is not in the sdist)" >&2
      return 1
    fi
    local g="$TINYGRAD_REPO"
    [[ -d "$g/.git" ]] && g="$g/.git"
    local rev="v$tg_version"
    if ! git --git-dir="$g" rev-parse -q --verify "$rev^{commit}" > /dev/null; then
      rev=$(git --git-dir="$g" rev-parse HEAD)
      echo "tinygrad-suite: $TINYGRAD_REPO has no tag v$tg_version; test_ops.py is from $rev" >&2
    fi
    mkdir -p "$t/test/backend"
    for f in test/__init__.py test/helpers.py test/backend/__init__.py test/backend/test_ops.py; do
      git --git-dir="$g" show "$rev:$f" > "$t/$f" || return 1
    done
    # test_tiny.py as it ships in the sdist of the installed version
    local sd="$scratch/tinygrad-sdist"
    mkdir -p "$sd"
    "$1/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: \
      "tinygrad==$tg_version" -d "$sd" >&2 || return 1
    tar xzf "$sd/tinygrad-$tg_version.tar.gz" -C "$sd" "tinygrad-$tg_version/test/test_tiny.py" || return 1
    cp "$sd/tinygrad-$tg_version/test/test_tiny.py" "$t/test/"
  fi
  echo "$t"
}

tinygrad_suite() { # MODE (ptx|cpu): test_tiny, then test_ops with FORWARD_ONLY=1
  local mode="$1"
  local torch_index=()
  [[ -n "${TORCH_INDEX_URL:-}" ]] && torch_index=(--index-url "$TORCH_INDEX_URL")
  local v; v=$(step "tinygrad-suite install" venv tinygrad "tinygrad==$tg_version" numpy pytest \
    pytest-xdist pytest-timeout hypothesis) || return 1
  step "torch install" "$v/bin/pip" install -q --disable-pip-version-check "${torch_index[@]}" torch \
    || return 1
  local t; t=$(tinygrad_tests "$v") || return 1
  local run=() dev=CPU
  if [[ "$mode" == ptx ]]; then run=("$ptxvm" exec --); dev=CUDA:PTX; fi
  local failed=0
  local files
  read -r -a files <<< "${TINYGRAD_TESTS:-test/test_tiny.py test/backend/test_ops.py}"
  for f in "${files[@]}"; do
    local name; name=$(basename "$f" .py)
    local out="$scratch/tinygrad-$mode-$name"
    local rc=0
    (cd "$t" && DEV=$dev FORWARD_ONLY=1 step "tinygrad $dev $name" "${run[@]}" "$v/bin/python" -m pytest \
      -q -p no:cacheprovider -n "${JOBS:-2}" --timeout "${TEST_TIMEOUT:-900}" --junitxml="$out.xml" "$f" \
      > "$out.log" 2>&1) || rc=$?
    grep -E '^(FAILED|ERROR) ' "$out.log" || true
    tail -n 2 "$out.log"
    [[ $rc == 0 || $rc == 1 ]] || failed=1 # 1: some tests failed (the figure); else pytest broke
  done
  return $failed
}

nvrtc_lib() { # the lib directory of pip nvidia-cuda-nvrtc (cudarc loads libnvrtc from it)
  # nvidia-cuda-cccl: the CCCL headers (cuda/atomic) NVRTC needs for numba's NRT (memsys.cuh)
  local v; v=$(venv numba numba-cuda cuda-bindings nvidia-cuda-nvcc nvidia-cuda-nvrtc \
    nvidia-cuda-cccl pytest pytest-xdist filecheck ml_dtypes cffi psutil)
  "$v/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))'
}

cudarc() { # [EXAMPLE…]: build and run the examples, checking what each prints
  local lib; lib=$(step "numba/nvrtc install" nvrtc_lib) || return 1
  local src="$scratch/cudarc"
  if [[ ! -d "$src" ]]; then
    local probe="$scratch/cudarc-probe"
    mkdir -p "$probe" && (cd "$probe" && { [[ -f Cargo.toml ]] || cargo init -q --name probe; } &&
      cargo add -q cudarc@0.19.10 && cargo fetch -q) || return 1
    cp -r "$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.10 | head -1)" "$src"
  fi
  local features=std,cuda-13000,dynamic-loading,driver,nvrtc
  local examples=("$@")
  [[ ${#examples[@]} -gt 0 ]] || examples=(01-allocate 02-copy 03-launch-kernel 04-streams
    05-device-repr 06-threading 09-constant-memory 10-function-attributes 12-context-config
    matmul-kernel nvrtc-compile)
  local args=()
  for e in "${examples[@]}"; do args+=(--example "$e"); done
  (cd "$src" && step "cudarc build ${examples[*]}" cargo build -q --no-default-features \
    --features "$features" "${args[@]}") || return 1
  local failed=0
  for e in "${examples[@]}"; do
    local out="$scratch/cudarc-$e.out"
    (cd "$src" && LD_LIBRARY_PATH="$lib" step "cudarc $e" "$ptxvm" exec -- "target/debug/examples/$e" \
      > "$out" 2>&1) || { failed=1; tail -n 5 "$out"; }
    grep '^== ' "$out" || true
    # the step line is in the file too: check only what the example printed
    grep -v '^== cudarc ' "$out" > "$out.prog" || true
    python3 "$here/cudarc-expect.py" "$e" "$out.prog" || failed=1
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
  step "numba install" nvrtc_lib > /dev/null || return 1
  step "numba smoke" "$ptxvm" exec -- "$scratch/venv-numba/bin/python" "$here/numba-smoke.py"
}

numba_suite() { # [MODULE…]; STRICT=1: fail unless every test passes or is skipped
  step "numba install" nvrtc_lib > /dev/null || return 1
  local run="$scratch/numba-run"
  mkdir -p "$run"
  cp "$here/numba/pytest.ini" "$here/numba/conftest.py" "$run/"
  local modules=("$@")
  [[ ${#modules[@]} -gt 0 ]] || modules=(numba.cuda.tests.cudapy)
  local rc=0
  (cd "$run" && step "numba ${modules[*]}" "$ptxvm" exec -- "$scratch/venv-numba/bin/python" -m pytest \
    -q -p no:cacheprovider -n "${JOBS:-2}" --junitxml="$run/junit.xml" "${modules[@]}" \
    > "$run/pytest.out" 2>&1) || rc=$?
  grep -E '^(FAILED|ERROR) ' "$run/pytest.out" || true
  tail -n 2 "$run/pytest.out"
  if [[ "${STRICT:-0}" == 1 ]]; then return $rc; fi
  [[ $rc == 0 || $rc == 1 ]] # 1: some tests failed (the figure); else pytest broke
}

triton_venv() {
  venv triton "triton==${TRITON_VERSION:-3.9.0}" numpy cuda-bindings
}

triton() { # [CC…]: the tutorials at each compute capability; any failure fails
  local v; v=$(step "triton install" triton_venv) || return 1
  local failed=0 cc
  # shellcheck disable=SC2086 # TUTORIALS is a list
  for cc in ${*:-8.0 9.0}; do
    step "triton tutorials at cc $cc" "$ptxvm" exec --cc "$cc" -- \
      "$v/bin/python" "$here/triton/tutorials.py" ${TUTORIALS:-} || failed=1
  done
  return $failed
}

triton_interpret() { # the tutorials on Triton's own interpreter (no ptxvm), timed
  local v; v=$(step "triton install" triton_venv) || return 1
  # shellcheck disable=SC2086
  TRITON_INTERPRET=1 step "triton tutorials, TRITON_INTERPRET=1" \
    "$v/bin/python" "$here/triton/tutorials.py" ${TUTORIALS:-}
}

cudart() { # cargo test --test cudart with pip's nvcc 13, cudart 13 and cudart 12
  local v; v=$(step "cudart install" venv cudart nvidia-cuda-nvcc nvidia-cuda-crt nvidia-nvvm \
    nvidia-cuda-runtime nvidia-cuda-cccl nvidia-cuda-runtime-cu12) || return 1
  local nv; nv=$("$v/bin/python" -c 'import nvidia; print(nvidia.__path__[0])') || return 1
  (cd "$repo" && NVCC="$nv/cu13/bin/nvcc" CUDART12_LIB="$nv/cuda_runtime/lib" \
    step "cudart programs" cargo test --release -q -p ptxvm-cuda --test cudart)
}

cupy() { # CuPy's elementwise, reductions (CUB's too), indexing and kernels vs numpy
  local v; v=$(step "cupy install" venv cupy "cupy-cuda13x==${CUPY_VERSION:-14.2.0}" \
    nvidia-cuda-nvrtc nvidia-cuda-runtime numpy) || return 1
  # NVRTC must write PTX (CuPy's default is SASS for the device's sm); CuPy's CUB module
  # holds PTX for compute_120 only, so the device says 12.0; a fresh kernel cache, as one
  # written without the variable holds SASS
  CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_DIR="$scratch/cupy-cache" step "cupy smoke" "$ptxvm" exec \
    --cc 12.0 -- "$v/bin/python" "$here/cupy-smoke.py"
}

pycuda() { # PyCUDA's test suite: a figure (pytest's summary), not a pass/fail of the script
  local version="${PYCUDA_VERSION:-2026.1}"
  local v; v=$(step "pycuda build deps" venv pycuda numpy pytools mako platformdirs setuptools \
    wheel pytest "nvidia-cuda-nvcc==13.5.37" nvidia-cuda-profiler-api nvidia-cuda-runtime \
    nvidia-cuda-cccl) || return 1
  local nv; nv="$("$v/bin/python" -c 'import nvidia; print(nvidia.__path__[0])')/cu13" || return 1
  # a CUDA_ROOT as PyCUDA's build and its JIT-link tests expect one: the headers of the pip
  # packages, lib64/ with ptxvm's libcuda.so (to link against) and libcudadevrt.a
  local root="$scratch/pycuda-cuda-root"
  rm -rf "$root" && mkdir -p "$root/include" "$root/lib64" || return 1
  ln -s "$nv"/include/* "$root/include/" && ln -s "$repo/target/release/libcuda.so" "$root/lib64/" \
    && ln -s "$nv/lib/libcudadevrt.a" "$root/lib64/" || return 1
  local src="$scratch/pycuda-$version"
  if [[ ! -f "$src/setup.py" ]]; then
    "$v/bin/python" - "$version" "$scratch" <<'PY' || return 1
import json, sys, tarfile, urllib.request, io
version, dest = sys.argv[1], sys.argv[2]
meta = json.load(urllib.request.urlopen("https://pypi.org/pypi/pycuda/json"))
url = next(u["url"] for u in meta["releases"][version] if u["packagetype"] == "sdist")
tarfile.open(fileobj=io.BytesIO(urllib.request.urlopen(url).read())).extractall(dest)
PY
  fi
  (cd "$src" && "$v/bin/python" configure.py --cuda-root="$root" --no-cuda-enable-curand >/dev/null \
    && CUDA_ROOT="$root" step "pycuda build" "$v/bin/pip" install -q --no-build-isolation .) || return 1
  # test_big_array_{elementwise,reduction,scan} work on 4 GiB arrays: ~10^10 thread
  # instructions each (hours for an interpreter), and elementwise's numpy reference needs
  # 32 GiB of host memory
  local rc=0
  (cd "$src/test" && PATH="$nv/bin:$PATH" CUDA_ROOT="$root" step "pycuda tests" "$ptxvm" exec -- \
    "$v/bin/python" -m pytest test_driver.py test_gpuarray.py test_cumath.py -q -rf \
    -p no:cacheprovider -k "not test_big_array") || rc=$?
  [[ $rc == 0 || $rc == 1 ]]
}

smoke() { # the CI subset: every part runs, any failure fails
  local failed=()
  tinygrad || failed+=(tinygrad)
  CUDARC_TESTS=0 cudarc 01-allocate 03-launch-kernel matmul-kernel || failed+=(cudarc)
  numba || failed+=(numba)
  STRICT=1 numba_suite numba.cuda.tests.cudapy.test_vectorize numba.cuda.tests.cudapy.test_laplace \
    numba.cuda.tests.cudapy.test_sync numba.cuda.tests.cudapy.test_array || failed+=(numba-suite)
  TUTORIALS="01 03" triton 9.0 || failed+=(triton)
  if [[ ${#failed[@]} -gt 0 ]]; then
    echo "client smoke FAILED: ${failed[*]}"
    return 1
  fi
}

all() {
  local failed=0
  tinygrad || failed=1
  CUDARC_TESTS=0 cudarc || failed=1
  numba || failed=1
  return $failed
}

case "${1:-all}" in
  tinygrad) tinygrad ;;
  tinygrad-suite) tinygrad_suite ptx ;;
  tinygrad-cpu) tinygrad_suite cpu ;;
  cudarc) shift; cudarc "$@" ;;
  numba) numba ;;
  cudart) cudart ;;
  numba-suite) shift; numba_suite "$@" ;;
  triton) shift; triton "$@" ;;
  pycuda) pycuda ;;
  cupy) cupy ;;
  triton-interpret) triton_interpret ;;
  smoke) step "client smoke" smoke ;;
  all) step "clients" all ;;
  *) echo "usage: $0 tinygrad|tinygrad-suite|tinygrad-cpu|cudarc [EXAMPLE…]|numba|numba-suite [MODULE…]|cudart|triton [CC…]|triton-interpret|pycuda|cupy|smoke|all" >&2
     exit 2 ;;
esac
