#!/usr/bin/env bash
# The measurements behind docs/BENCHMARKS.md, on the GPU machine, in parts that each fit
# one call of its time limit (a warm machine keeps /tmp between calls):
#
#   PART=tune  the default run as a user starts it (`reduce-tune --device 0`), Ctrl-C after
#              TUNE_TIMEOUT s; call again to resume (the walls of the parts add up in
#              $STATE/walls). TUNE_ARGS narrows it (for example --layouts flat).
#   PART=flat  reduce_tune_bench --check over every op and dtype against that database
#              (tuned, built-in default, CUB), then bench/torch_flat.py, then the join.
#   PART=axes  the f32 sum and max axis classes tuned into the same database where they
#              are missing (a finished default run has them: nothing is compiled then),
#              the axis grid against the tuned call, the built-in choice, CUB segmented
#              reduce and torch (DTYPES="f32 f16" adds the 16-bit grid, built-in choice
#              and whatever classes the database holds).
#
# Executables from $BIN (scripts/stage-gpu.sh), logs under $OUT, a short summary printed
# last. Usage: PART=tune scripts/gpu-benchmarks.sh
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
STATE=${STATE:-/tmp/reduce-tune-bench}
DB=${DB:-$STATE/tuning.db}
PART=${PART:-tune}
mkdir -p "$OUT" "$STATE"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader \
  >"$OUT/device.txt" 2>&1
echo "device: $(cat "$OUT/device.txt"); part: $PART; $(date -u +%H:%M:%S) UTC"

case "$PART" in
tune)
  n=$(($(ls "$STATE"/tune-*.log 2>/dev/null | wc -l) + 1))
  log="$STATE/tune-$n.log"
  start=$SECONDS
  timeout -s INT "${TUNE_TIMEOUT:-540}" "$BIN/reduce-tune" --device 0 --db "$DB" --verbose \
    ${TUNE_ARGS:-} >"$log" 2>&1
  rc=$?
  wall=$((SECONDS - start))
  echo "$wall $rc" >>"$STATE/walls"
  cp "$log" "$OUT/"
  grep -v "^\[" "$log" | tail -8
  total=$(awk '{s += $1} END {print s}' "$STATE/walls")
  echo "this part: rc=$rc, ${wall} s; the run so far: $(wc -l <"$STATE/walls") part(s), ${total} s"
  # Into $OUT too: the summary's tail may cut this line off, and the machine's files go.
  ls -l "$DB" | awk '{print "database file: " $5 " bytes"}' | tee "$OUT/db-size.txt"
  if [ "$rc" = 0 ]; then
    "$BIN/reduce-tune" db info --db "$DB" | tee "$OUT/db-info.txt"
  fi
  ;;
flat)
  start=$SECONDS
  timeout "${BENCH_TIMEOUT:-420}" "$BIN/reduce_tune_bench" --db "$DB" --check --no-store \
    ${BENCH_ARGS:-} >"$OUT/flat-bench.log" 2>&1
  echo "flat bench: rc=$? (4: a guarantee break), $((SECONDS - start)) s"
  start=$SECONDS
  PYTHONUNBUFFERED=1 timeout "${TORCH_TIMEOUT:-150}" python3 bench/torch_flat.py \
    --dtypes "${TORCH_DTYPES:-f32,f64,i32,i64,f16,bf16,f16>f32,bf16>f32}" >"$OUT/flat-torch.log" 2>&1
  echo "torch flat: rc=$?, $((SECONDS - start)) s"
  python3 bench/join_flat.py "$OUT/flat-bench.log" "$OUT/flat-torch.log" >"$OUT/flat-torch-join.md"
  head -2 "$OUT/flat-bench.log"
  grep -E "^(guarantee|small sizes)" "$OUT/flat-bench.log"
  tail -1 "$OUT/flat-torch-join.md"
  ;;
axes)
  start=$SECONDS
  "$BIN/reduce-tune" tune --device 0 --db "$DB" --layouts rows,columns --ops sum,max --dtypes f32 \
    >"$OUT/axes-tune.log" 2>&1
  echo "axis classes (sum, max f32): rc=$?, $((SECONDS - start)) s"
  grep -v "^\[" "$OUT/axes-tune.log" | tail -3
  for dt in ${DTYPES:-f32}; do
    start=$SECONDS
    timeout "${AXES_TIMEOUT:-200}" "$BIN/reduce_tune_axis_bench" --db "$DB" --dtype "$dt" \
      >"$OUT/axes-$dt.log" 2>&1
    echo "axis bench $dt: rc=$?, $((SECONDS - start)) s"
    start=$SECONDS
    PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_axes.py --dtype "$dt" >"$OUT/axes-torch-$dt.log" 2>&1
    echo "torch axes $dt: rc=$?, $((SECONDS - start)) s"
    python3 bench/join_axes.py "$OUT/axes-$dt.log" "$OUT/axes-torch-$dt.log" >"$OUT/axes-$dt-table.md"
    echo "== $dt"
    sed -n '/^shapes:/,$p' "$OUT/axes-$dt-table.md" | head -30
  done
  ;;
*)
  echo "PART must be tune, flat or axes" >&2
  exit 2
  ;;
esac
