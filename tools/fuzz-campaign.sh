#!/bin/sh
# Build the cargo-fuzz targets `run` and `check` and fuzz each for MINUTES on one core, then print
# executions, coverage and the crashes found, grouped by cause.
#
#   tools/fuzz-campaign.sh MINUTES [TARGET...]      (default targets: run check; also: driver)
#
# Needs nightly and cargo-fuzz (`cargo install cargo-fuzz`). Each target runs in libFuzzer's fork
# mode, so that a crash, an out-of-memory or a timeout is saved and the campaign goes on:
#   -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -rss_limit_mb=2048 -timeout=10
#   -max_len=65536 -dict=fuzz/ptx.dict (PTX tokens), built without a sanitizer (-s none: the
#   code is safe Rust, and the fuzz bodies check time and memory themselves).
# Corpus: fuzz/corpus/TARGET (kept between campaigns, ignored by git), seeded from
# fuzz/seeds/TARGET and the PTX files of tests/ (run: tests/run; check: tests/check, tests/parse,
# tests/run). Findings: fuzz/artifacts/TARGET-DATE/ and the log fuzz/logs/TARGET-DATE.log.
# Minimise one with `cargo +nightly fuzz tmin -s none TARGET FILE` and save it in
# fuzz/regressions/TARGET/ under a name that says its class (see fuzz/README.md).
set -eu
MINUTES=${1:?usage: tools/fuzz-campaign.sh MINUTES [TARGET...]}
shift
TARGETS=${*:-run check}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/fuzz"
cargo +nightly fuzz build -s none
BIN=target/x86_64-unknown-linux-gnu/release
STAMP=$(date -u +%Y%m%d-%H%M%S)
mkdir -p logs
PIDS=
trap 'for p in $PIDS; do kill "$p" 2>/dev/null || true; done' INT TERM
for t in $TARGETS; do
    DICT=-dict=ptx.dict
    case $t in
        run) SEEDS="seeds/run ../tests/run" ;;
        check) SEEDS="seeds/check ../tests/check ../tests/parse ../tests/run" ;;
        # driver: inputs are call sequences, not PTX (no dictionary)
        *) SEEDS="seeds/$t regressions/$t" DICT= ;;
    esac
    mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t-$STAMP"
    # shellcheck disable=SC2086
    "$BIN/$t" "corpus/$t" $SEEDS -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
        -rss_limit_mb=2048 -timeout=10 -max_len=65536 $DICT -max_total_time=$((MINUTES * 60)) \
        -artifact_prefix="artifacts/$t-$STAMP/" >"logs/$t-$STAMP.log" 2>&1 &
    PIDS="$PIDS $!"
done
echo "fuzzing $TARGETS for $MINUTES min (logs: fuzz/logs/*-$STAMP.log)"
for p in $PIDS; do wait "$p" || true; done
for t in $TARGETS; do
    echo
    echo "== $t"
    # the last status line: #EXECS: cov: C ft: F corp: N exec/s: E oom/timeout/crash: O/T/C time: Ss
    line=$(grep -E '^#[0-9]+: cov:' "logs/$t-$STAMP.log" | tail -n 1 || true)
    echo "$line" | awk '{
        execs = substr($1, 2, length($1) - 2); secs = $(NF - 4); sub(/s$/, "", secs)
        printf "executions: %s in %s s (%.0f exec/s), coverage: %s edges, %s features, corpus: %s inputs, oom/timeout/crash: %s\n",
            execs, secs, (secs > 0 ? execs / secs : 0), $3, $5, $7, $11 }'
    n=$(find "artifacts/$t-$STAMP" -type f | wc -l)
    echo "saved findings: $n (fuzz/artifacts/$t-$STAMP/)"
    if [ "$n" -gt 0 ]; then
        # shellcheck disable=SC2046
        python3 "$ROOT/tools/fuzz-classify.py" "$BIN/$t" $(find "artifacts/$t-$STAMP" -type f)
    fi
done
