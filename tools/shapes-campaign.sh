#!/usr/bin/env bash
# The warp-shape campaign (issue 22): ROUNDS draws of every executed instruction form, each run
# in every configuration (7 block sizes x 1/all OS threads x SIMD/portable x rewrites on/off,
# plain, guarded and divergent) and compared with the reference. Prints a line per round and the
# totals; exits non-zero on any mismatch.
#   tools/shapes-campaign.sh [ROUNDS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-20}"
seed="${2:-$(date +%s)}"
echo "warp-shape campaign: $rounds rounds, seed $seed"
PTXVM_SHAPES_ROUNDS="$rounds" PTXVM_SHAPES_ALL=1 PTXVM_SHAPES_SEED="$seed" \
  cargo test --release -p ptxvm --test warp_shapes -- --nocapture
