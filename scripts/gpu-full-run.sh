#!/usr/bin/env bash
# The default tuning run as a user starts it (flat sizes and axis classes), timed, then
# the CUB benchmark over every op and dtype against its database (BENCH=0 skips it), then
# reports. The run gets Ctrl-C (SIGINT) after $TUNE_TIMEOUT seconds, so a lease's call
# limit is never hit: finished buckets stay stored and the same command resumes. Logs
# and reports under $OUT. TUNE_ARGS adds options (--verbose: where each bucket's time went).
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
DB=${DB:-/tmp/reduce-tune-full/tuning.db}
mkdir -p "$OUT" "$(dirname "$DB")"
start=$SECONDS
timeout -s INT "${TUNE_TIMEOUT:-560}" "$BIN/reduce-tune" --device 0 --db "$DB" ${TUNE_ARGS:-} >"$OUT/tune_full.log" 2>&1
echo "tune rc=$? wall=$((SECONDS - start))s" | tee -a "$OUT/tune_full.log"
ls -l "$DB" | awk '{print "database size: " $5 " bytes"}' | tee -a "$OUT/tune_full.log"
start=$SECONDS
[ "${BENCH:-1}" = 0 ] || {
timeout "${BENCH_TIMEOUT:-120}" "$BIN/reduce_tune_bench" --db "$DB" ${BENCH_ARGS:-} >"$OUT/bench_full.log" 2>&1
echo "bench rc=$? wall=$((SECONDS - start))s" | tee -a "$OUT/bench_full.log"
}
"$BIN/reduce-tune" report --db "$DB" --format html -o "$OUT/report.html"
"$BIN/reduce-tune" report --db "$DB" --format md -o "$OUT/report.md"
"$BIN/reduce-tune" db info --db "$DB" | tee "$OUT/db_info.txt"
grep -v "^\[" "$OUT/tune_full.log" | tail -6
grep -E "^sum +f32" "$OUT/bench_full.log" | head -30
