#!/usr/bin/env bash
# All the GPU work of one round on the GPU machine, in one call: the GPU tests, a
# compute-sanitizer pass (memcheck and racecheck, every strategy at a few sizes) and the
# benchmarks. Full logs go to $OUT (default ./gpu-check-out); a summary table is printed
# last. Usage: scripts/gpu-check.sh [tests] [sanitizer] [tune] [bench] [axistune] [axes]
# (default: all; TESTS=<gtest filter> narrows the tests step, JOBS=N runs N of its tests
# at a time). axistune tunes axis classes into $DB ($AXIS_TUNE_ARGS); axes then benches
# the axis grid against that database and the built-in choice, CUB and PyTorch.
# The executables come from $BIN (default ./gpu-stage, made by scripts/stage-gpu.sh).
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests sanitizer tune bench axistune axes)
DB=${DB:-/tmp/reduce-tune-check/tuning.db}
TUNE_ARGS=${TUNE_ARGS:---ops sum --dtypes f32}
BENCH_ARGS=${BENCH_ARGS:---ops sum --dtypes f32}
AXIS_TUNE_ARGS=${AXIS_TUNE_ARGS:---ops sum,max --dtypes f32}
mkdir -p "$(dirname "$DB")"
want() { local s; for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
summary=()

# run_step NAME LOG COMMAND...: runs, logs, and records "NAME | status | counts | seconds".
run_step() {
  local name=$1 log=$2; shift 2
  local start=$SECONDS
  "$@" >"$OUT/$log" 2>&1
  local rc=$?
  local counts
  counts=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$log" | tr '\n' ' ' | sed 's/  */ /g')
  summary+=("$(printf '%-28s | %-6s | %s | %ss' "$name" "$([ $rc -eq 0 ] && echo ok || echo rc=$rc)" "${counts:0:110}" $((SECONDS - start)))")
}

{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  ldd "$BIN/gpu_tests"
} >"$OUT/device.txt" 2>&1

if want tests; then
  # TESTS: a gtest filter, to narrow the suite. JOBS=N (N > 1): N tests at a time, each
  # in its own process, longest first (scripts/gpu-test-queue.sh; per-test logs in
  # $OUT/gpu_tests/): the suite but the flat KernelFamily strategies took 426 s with
  # JOBS=12 on an H200 (set CA), its tests' times adding up to 4,723 s.
  if [ "${JOBS:-1}" -gt 1 ]; then
    run_step "gpu_tests ${TESTS:-} (JOBS=$JOBS)" gpu_tests.log scripts/gpu-test-queue.sh "$BIN/gpu_tests" \
      "$OUT/gpu_tests" "${TESTS:-}"
  else
    run_step "gpu_tests ${TESTS:-}" gpu_tests.log "$BIN/gpu_tests" ${TESTS:+--gtest_filter="$TESTS"}
  fi
  for t in runtime_gpu_tests tuner_gpu_tests; do
    [ -x "$BIN/$t" ] && run_step "$t" "$t.log" "$BIN/$t"
  done
fi
if want sanitizer; then
  export REDUCE_TUNE_GPU_TEST_QUICK=1
  run_step "memcheck (quick set)" memcheck.log compute-sanitizer --tool memcheck --error-exitcode 1 \
    --leak-check full "$BIN/gpu_tests" --gtest_filter='AllStrategies/KernelFamily.*'
  run_step "racecheck (quick set)" racecheck.log compute-sanitizer --tool racecheck --error-exitcode 1 \
    "$BIN/gpu_tests" --gtest_filter='AllStrategies/KernelFamily.*'
  run_step "synccheck (quick set)" synccheck.log compute-sanitizer --tool synccheck --error-exitcode 1 \
    "$BIN/gpu_tests" --gtest_filter='AllStrategies/KernelFamily.*'
  # Every axis family (rows, split rows, general, columns, split columns), and, in the
  # search space only, column vectors, tiled splits, staged rows and batched tails (one
  # candidate per shape).
  run_step "memcheck (axes)" memcheck-axes.log compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$BIN/gpu_tests" --gtest_filter='Axes.*:AxisMutation.ColumnVectors*:AxisMutation.TiledSplits*:AxisMutation.StagedRows*:AxisMutation.BatchedTails*'
  run_step "racecheck (axes)" racecheck-axes.log compute-sanitizer --tool racecheck --error-exitcode 1 \
    "$BIN/gpu_tests" --gtest_filter='Axes.EveryLayout*:Axes.Misaligned*:Axes.GeneralLayouts*:Axes.GeneralKeptDensest*:AxisMutation.ColumnVectors*:AxisMutation.TiledSplits*:AxisMutation.StagedRows*:AxisMutation.BatchedTails*'
  unset REDUCE_TUNE_GPU_TEST_QUICK
  # The runtime's workspaces, graphs and pointer checks: memcheck sees a replayed graph
  # touching a freed workspace, and a refused pointer that was launched anyway; and the
  # two-kernel plans' programmatic launches.
  run_step "memcheck (runtime)" memcheck-runtime.log compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$BIN/gpu_tests" --gtest_filter='Graphs.*:PointerChecks.*:Concurrency.SynchronousCalls*:ProgrammaticLaunch.*'
fi
if want tune && [ -x "$BIN/reduce-tune" ]; then
  # shellcheck disable=SC2086
  run_step "tune $TUNE_ARGS" tune.log "$BIN/reduce-tune" tune --device 0 --db "$DB" $TUNE_ARGS
  { tail -5 "$OUT/tune.log"; ls -l "$DB" | awk '{print "database size: " $5 " bytes"}';
    "$BIN/reduce-tune" db info --db "$DB" | grep -E "binaries|measurements|winners"; } | sed 's/^/  /' >"$OUT/tune-summary.txt"
fi
if want bench && [ -x "$BIN/reduce_tune_bench" ]; then
  # shellcheck disable=SC2086
  run_step "bench $BENCH_ARGS" bench.log "$BIN/reduce_tune_bench" --db "$DB" $BENCH_ARGS
  [ -x "$BIN/reduce-tune" ] && "$BIN/reduce-tune" report --db "$DB" --format html -o "$OUT/report.html" >/dev/null 2>&1
fi

if want axistune && [ -x "$BIN/reduce-tune" ]; then
  # shellcheck disable=SC2086
  run_step "tune axes $AXIS_TUNE_ARGS" axis_tune.log "$BIN/reduce-tune" tune --device 0 --db "$DB" \
    --layouts rows,columns $AXIS_TUNE_ARGS
  tail -3 "$OUT/axis_tune.log" | sed 's/^/  /' >"$OUT/axis-tune-summary.txt"
fi
if want axes && [ -x "$BIN/reduce_tune_axis_bench" ]; then
  # Axis reductions against CUB's segmented reduce and PyTorch, joined into one table;
  # tuned from $DB where it exists (the built-in choice timed beside it).
  axis_db=()
  [ -f "$DB" ] && axis_db=(--db "$DB")
  run_step "axis bench" axis_bench.log "$BIN/reduce_tune_axis_bench" "${axis_db[@]}"
  run_step "torch axes" torch_axes.log python3 bench/torch_axes.py
  python3 bench/join_axes.py "$OUT/axis_bench.log" "$OUT/torch_axes.log" >"$OUT/axes_table.md" 2>&1
fi

grep -h "\[ counts   \]\|\[ overhead \]\|\[ tuning   \]\|\[ scaling  \]\|\[ launch   \]" "$OUT"/gpu_tests.log 2>/dev/null
grep -h "^empty kernel\|^guarantee\|^small sizes\|^  .*x the default\|^  .*x CUB" "$OUT"/bench.log 2>/dev/null | head -20
[ -f "$OUT/tune-summary.txt" ] && cat "$OUT/tune-summary.txt"
[ -f "$OUT/axes_table.md" ] && sed -n '/^shapes:/,$p' "$OUT/axes_table.md" | head -30
echo
head -2 "$OUT/device.txt"
printf '%-28s | %-6s | %s\n' step status "counts / seconds"
for line in "${summary[@]}"; do echo "$line"; done
