#!/usr/bin/env bash
# The default tuning run as a user starts it, timed, then the CUB benchmark over every op
# and dtype against its database, then reports. Logs and reports under $OUT.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
DB=${DB:-/tmp/reduce-tune-full/tuning.db}
mkdir -p "$OUT" "$(dirname "$DB")"
start=$SECONDS
timeout "${TUNE_TIMEOUT:-440}" "$BIN/reduce-tune" --device 0 --db "$DB" >"$OUT/tune_full.log" 2>&1
echo "tune rc=$? wall=$((SECONDS - start))s" | tee -a "$OUT/tune_full.log"
start=$SECONDS
timeout "${BENCH_TIMEOUT:-120}" "$BIN/reduce_tune_bench" --db "$DB" ${BENCH_ARGS:-} >"$OUT/bench_full.log" 2>&1
echo "bench rc=$? wall=$((SECONDS - start))s" | tee -a "$OUT/bench_full.log"
"$BIN/reduce-tune" report --db "$DB" --format html -o "$OUT/report.html"
"$BIN/reduce-tune" report --db "$DB" --format md -o "$OUT/report.md"
"$BIN/reduce-tune" db info --db "$DB" | tee "$OUT/db_info.txt"
tail -3 "$OUT/tune_full.log"
grep -E "^sum +f32" "$OUT/bench_full.log" | head -30
