#!/usr/bin/env bash
# Runs a gtest executable's tests JOBS at a time, each test in a process of its own, so
# that the whole GPU suite fits one call of the GPU machine (one test after another it
# takes about 50 minutes on an H200). Tests start longest first, by the times in
# scripts/gpu-test-times.txt (tests it does not list start before all others): a queue,
# so the order balances the processes and a stale or missing time costs only balance.
#
# Usage: JOBS=12 scripts/gpu-test-queue.sh GTEST_BINARY LOG_DIR [GTEST_FILTER]
# Each test's log goes to LOG_DIR/<test>.log. Prints one line per test that did not pass,
# then gtest's summary lines ([  PASSED  ] N tests. and so on); exits 1 when a test
# failed, crashed or ran past TEST_TIMEOUT seconds (default 1200), 2 on a usage error.
set -u
if [ $# -lt 2 ]; then
  echo "usage: JOBS=N $0 GTEST_BINARY LOG_DIR [GTEST_FILTER]" >&2
  exit 2
fi
bin=$1 logs=$2 filter=${3:-}
jobs=${JOBS:-4}
times_file=$(dirname "$0")/gpu-test-times.txt
mkdir -p "$logs"

# "Suite.Name" per line (parameterised: "Prefix/Suite.Name/Param"), as gtest lists them.
if ! listing=$("$bin" --gtest_list_tests ${filter:+--gtest_filter="$filter"} 2>&1); then
  echo "$listing" >&2
  exit 1
fi
tests=$(awk '/^[^ ]/ { suite = $1; next } /^  / { print suite $1 }' <<<"$listing")
if [ -z "$tests" ]; then
  echo "[  PASSED  ] 0 tests."
  exit 0
fi
# Longest first; unknown tests (no time) first of all.
ordered=$(awk 'NR == FNR { ms[$2] = $1; next } { print (($0 in ms) ? ms[$0] : 1e12), $0 }' \
  "${times_file}" - <<<"$tests" 2>/dev/null | sort -k1,1gr | cut -d' ' -f2-)
[ -n "$ordered" ] || ordered=$tests

export bin logs
run_one() {
  local name=$1 log
  log="$logs/$(tr '/' '_' <<<"$name").log"
  timeout "${TEST_TIMEOUT:-1200}" "$bin" --gtest_filter="$name" >"$log" 2>&1
  local rc=$?
  if grep -q '^\[  SKIPPED \] 1 test' "$log"; then
    echo "skipped $name"
  elif [ $rc -eq 0 ] && grep -q '^\[  PASSED  \] 1 test' "$log"; then
    echo "passed $name"
  else
    echo "failed $name (exit $rc; $log)"
  fi
}
export -f run_one
# shellcheck disable=SC2016 # run_one expands $1 in the child shell
results=$(xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} <<<"$ordered")

passed=$(grep -c '^passed ' <<<"$results")
skipped=$(grep -c '^skipped ' <<<"$results")
failed=$(grep -c '^failed ' <<<"$results")
total=$(grep -c . <<<"$ordered")
ran=$((passed + skipped + failed))
grep -E '^(failed|skipped) ' <<<"$results"
echo "[==========] $total tests, $jobs at a time."
echo "[  PASSED  ] $passed tests."
[ "$skipped" -gt 0 ] && echo "[  SKIPPED ] $skipped tests, listed above."
[ "$failed" -gt 0 ] && echo "[  FAILED  ] $failed tests, listed above."
if [ "$ran" -ne "$total" ]; then
  echo "gpu-test-queue: $ran of $total tests reported a result" >&2
  exit 1
fi
[ "$failed" -eq 0 ]
