#!/usr/bin/env bash
# After scripts/gpu-default-run.sh on the same machine: the axis grid against the tuned
# database, the built-in choice, CUB and PyTorch; the axis GPU tests; the flat sum bench.
# Without the database (a fresh machine), the axis classes the bench needs are tuned
# first (sum and max of f32).
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
DB=${DB:-/tmp/reduce-tune-full/tuning.db}
mkdir -p "$OUT" "$(dirname "$DB")"
if [ ! -f "$DB" ]; then
  echo "no database at $DB: tuning the axis classes of sum and max f32 first"
  start=$SECONDS
  "$BIN/reduce-tune" tune --device 0 --db "$DB" --layouts rows,columns --ops sum,max --dtypes f32 \
    >"$OUT/axis-tune.log" 2>&1
  echo "axis tune: exit $?, $((SECONDS - start)) s"; grep -v "^\[" "$OUT/axis-tune.log" | tail -3
fi
"$BIN/reduce_tune_axis_bench" --db "$DB" >"$OUT/axis_bench.log" 2>&1; echo "axis bench: exit $?"
PYTHONUNBUFFERED=1 python3 bench/torch_axes.py >"$OUT/torch_axes.log" 2>&1; echo "torch axes: exit $?"
python3 bench/join_axes.py "$OUT/axis_bench.log" "$OUT/torch_axes.log" >"$OUT/axes_table.md" 2>&1
sed -n '/^shapes:/,$p' "$OUT/axes_table.md" | head -40
if [ -n "${TESTS:-}" ]; then
  "$BIN/gpu_tests" --gtest_filter="$TESTS" >"$OUT/gpu_tests.log" 2>&1; echo "gpu_tests ($TESTS): exit $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |\[ counts|\[ tuning|\[ overhead \] warm call:" "$OUT/gpu_tests.log" | head -20
fi
"$BIN/reduce-tune" report --db "$DB" --format html -o "$OUT/report.html" >/dev/null 2>&1
