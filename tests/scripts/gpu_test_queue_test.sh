#!/usr/bin/env bash
# scripts/gpu-test-queue.sh against a stand-in for a gtest binary: it must count passed
# and skipped tests, report a failed and a crashed one (and exit 1), start the longest
# first by the times file, unknown tests before all, and pass a filter on to the listing.
set -u
queue=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The stand-in: lists A.fast, A.slow, A.unknown, P/B.case/1 (or what FAKE_LIST says),
# appends each test it runs to $work/order, and passes, skips, fails or crashes by name.
cat >"$work/fake_gtest" <<'FAKE'
#!/usr/bin/env bash
case "$1" in
  --gtest_list_tests)
    if [ -n "${FAKE_LIST:-}" ]; then printf '%b' "$FAKE_LIST"; exit 0; fi
    [ "${2:-}" = "--gtest_filter=A.*" ] && { printf 'A.\n  fast\n  slow\n'; exit 0; }
    printf 'A.\n  fast\n  slow\n  unknown\nP/B.\n  case/1\n'; exit 0;;
esac
name=${1#--gtest_filter=}
echo "$name" >>"$WORK/order"
case "$name" in
  *fail*) echo "[  FAILED  ] 1 test, listed below:"; exit 1;;
  *crash*) kill -SEGV $$;;
  *skip*) echo "[  SKIPPED ] 1 test, listed below:"; exit 0;;
  *) echo "[  PASSED  ] 1 test.";;
esac
FAKE
chmod +x "$work/fake_gtest"
export WORK=$work

# Times: the queue reads scripts/gpu-test-times.txt beside it; run a copy beside ours.
mkdir -p "$work/scripts"
cp "$queue" "$work/scripts/gpu-test-queue.sh"
printf '# ms name\n10 A.fast\n5000 A.slow\n700 P/B.case/1\n' >"$work/scripts/gpu-test-times.txt"
q="$work/scripts/gpu-test-queue.sh"

# All pass, one at a time: the unknown test first, then the longest first.
out=$(JOBS=1 "$q" "$work/fake_gtest" "$work/logs1" 2>&1) || fail "all passing exited non-zero: $out"
grep -q '^\[  PASSED  \] 4 tests\.$' <<<"$out" || fail "expected 4 passed: $out"
order=$(tr '\n' ' ' <"$work/order")
[ "$order" = "A.unknown A.slow P/B.case/1 A.fast " ] || fail "order: $order"
[ -f "$work/logs1/P_B.case_1.log" ] || fail "no log for a parameterised test"

# The filter reaches the listing.
rm -f "$work/order"
out=$(JOBS=2 "$q" "$work/fake_gtest" "$work/logs2" 'A.*' 2>&1) || fail "filtered run: $out"
grep -q '^\[  PASSED  \] 2 tests\.$' <<<"$out" || fail "expected 2 passed with the filter: $out"

# A failing, a crashing and a skipped test among passing ones.
rm -f "$work/order"
out=$(FAKE_LIST='S.\n  ok\n  fails\n  crashes\n  skips\n' JOBS=3 "$q" "$work/fake_gtest" "$work/logs3" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "a failing run exited $rc: $out"
grep -q '^failed S.fails ' <<<"$out" || fail "the failed test is not named: $out"
grep -q '^failed S.crashes ' <<<"$out" || fail "the crashed test is not named: $out"
grep -q '^skipped S.skips$' <<<"$out" || fail "the skipped test is not named: $out"
grep -q '^\[  PASSED  \] 1 tests\.$' <<<"$out" || fail "expected 1 passed: $out"
grep -q '^\[  FAILED  \] 2 tests' <<<"$out" || fail "expected 2 failed: $out"
grep -q '^\[  SKIPPED \] 1 tests' <<<"$out" || fail "expected 1 skipped: $out"

# A binary that cannot list its tests is an error, not an empty pass.
printf '#!/bin/sh\necho broken >&2\nexit 3\n' >"$work/broken"
chmod +x "$work/broken"
if JOBS=2 "$q" "$work/broken" "$work/logs4" >/dev/null 2>&1; then fail "a binary that cannot list passed"; fi
# Usage errors.
"$q" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no arguments should exit 2"
echo "gpu-test-queue: all checks passed"
