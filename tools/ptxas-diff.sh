#!/usr/bin/env bash
# The ptxas-differential campaign as CI runs it: ptxas 13.5 from PyPI (nvidia-cuda-nvcc, in a
# scratch venv; or PTXAS=/path/to/ptxas, or an installed `nvidia` package that has it), a
# release build of ptxvm, then tools/ptxas-diff.py with a fixed seed over tests/ (and
# ../shared/corpus when PTXVM_SHARED names it). Fails when ptxvm rejects a mutant ptxas
# accepts (verdict `stricter`).
#
#   tools/ptxas-diff.sh [COUNT [SEED]]      # default 2000 mutants, seed 1
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
count="${1:-2000}"
seed="${2:-1}"
ptxas="${PTXAS:-}"
if [[ -z "$ptxas" ]]; then
  ptxas="$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13/bin/ptxas"))' 2>/dev/null || true)"
fi
if [[ ! -x "$ptxas" ]]; then
  scratch="${PTXVM_CLIENTS:-/tmp/ptxvm-clients}"
  mkdir -p "$scratch"
  v="$scratch/venv-ptxas"
  [[ -x "$v/bin/python" ]] || python3 -m venv "$v"
  # the ptxas the checker's gates were measured against
  "$v/bin/pip" install -q --disable-pip-version-check "nvidia-cuda-nvcc==13.5.37" >&2
  ptxas="$("$v/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13/bin/ptxas"))')"
fi
"$ptxas" --version | tail -2
(cd "$repo" && cargo build --release -q -p ptxvm-cli)
corpus=()
if [[ -n "${PTXVM_SHARED:-}" && -d "$PTXVM_SHARED/corpus" ]]; then
  corpus=(--corpus "$PTXVM_SHARED/corpus")
fi
python3 "$repo/tools/ptxas-diff.py" --count "$count" --seed "$seed" --ptxas "$ptxas" \
  --ptxvm "$repo/target/release/ptxvm" "${corpus[@]}"
