#!/usr/bin/env bash
# How far the default local search's winners are from exhaustive search, and how far
# independent runs' winners are from each other (issue 11), on the GPU machine:
# - an exhaustive run of sum<f32> over every config at EXH_SIZES (compiling its 8,850
#   configs takes 3-5 minutes there);
# - RUNS local runs into fresh databases (sum of i32, then f32, as in the default run,
#   where the i32 winners seed the f32 search of the same element size);
# - scripts/compare-search.py times each local run's winners by the exhaustive run's own
#   measurements (one run, so run-to-run drift does not enter).
# PART=exhaustive or PART=local runs one half, so that each fits a call of the device
# tool (the databases stay in $DIR on a machine kept warm between the calls).
# Logs under $OUT.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
SIZES=${SIZES:-2^16..2^23}
EXH_SIZES=${EXH_SIZES:-2^16,2^18,2^20,2^22}
RUNS=${RUNS:-a b c}
PART=${PART:-all}
DIR=${DIR:-/tmp/search-gap}
mkdir -p "$OUT" "$DIR"
if [ "$PART" != local ]; then
  rm -f "$DIR"/exhaustive.db
  start=$SECONDS
  timeout -s INT "${EXH_TIMEOUT:-570}" "$BIN/reduce-tune" tune --layouts flat --ops sum --dtypes f32 --sizes "$EXH_SIZES" \
    --strategy exhaustive --db "$DIR/exhaustive.db" --verbose >"$OUT/exhaustive.log" 2>&1
  echo "exhaustive rc=$? wall=$((SECONDS - start))s"
  grep '^\[' "$OUT/exhaustive.log" | cut -c1-160
fi
[ "$PART" = exhaustive ] && exit 0
for run in $RUNS; do
  rm -f "$DIR/local-$run.db"
  start=$SECONDS
  "$BIN/reduce-tune" tune --layouts flat --ops sum --dtypes i32,f32 --sizes "$SIZES" --db "$DIR/local-$run.db" \
    --verbose >"$OUT/local-$run.log" 2>&1
  echo "local run $run rc=$? wall=$((SECONDS - start))s"
  cp "$DIR/local-$run.db" "$OUT/" 2>/dev/null
  echo "== local run $run against the exhaustive run"
  python3 scripts/compare-search.py "$DIR/exhaustive.db" "$DIR/local-$run.db" | tee "$OUT/gap-$run.txt"
done
