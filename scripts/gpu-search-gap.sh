#!/usr/bin/env bash
# How far the default local search's winners are from exhaustive search, and how far two
# independent runs' winners are from each other (issue 11), on the GPU machine:
# - two local runs into two fresh databases (sum of i32, then f32, as in the default
#   run, where the i32 winners seed the f32 search of the same element size);
# - an exhaustive run of sum<f32> over every config, at every other bucket;
# - scripts/compare-search.py times each local run's winners by the exhaustive run's own
#   measurements (one run, so run-to-run drift does not enter).
# Logs under $OUT. SIZES and EXH_SIZES narrow or widen it.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
SIZES=${SIZES:-2^16..2^26}
EXH_SIZES=${EXH_SIZES:-2^16,2^18,2^20,2^22,2^24,2^26}
DIR=${DIR:-/tmp/search-gap}
mkdir -p "$OUT" "$DIR"
rm -f "$DIR"/*.db
for run in a b; do
  start=$SECONDS
  "$BIN/reduce-tune" tune --layouts flat --ops sum --dtypes i32,f32 --sizes "$SIZES" --db "$DIR/local-$run.db" \
    --quiet >"$OUT/local-$run.log" 2>&1
  echo "local run $run rc=$? wall=$((SECONDS - start))s"
done
start=$SECONDS
timeout -s INT "${EXH_TIMEOUT:-400}" "$BIN/reduce-tune" tune --layouts flat --ops sum --dtypes f32 --sizes "$EXH_SIZES" \
  --strategy exhaustive --db "$DIR/exhaustive.db" --verbose >"$OUT/exhaustive.log" 2>&1
echo "exhaustive rc=$? wall=$((SECONDS - start))s"
grep '^\[' "$OUT/exhaustive.log" | cut -c1-160
for run in a b; do
  echo "== local run $run against the exhaustive run"
  python3 scripts/compare-search.py "$DIR/exhaustive.db" "$DIR/local-$run.db" | tee "$OUT/gap-$run.txt"
done
