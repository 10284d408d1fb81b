#!/usr/bin/env bash
# On the GPU machine: the Python package's tests (and, with BENCH=1, the framework
# benchmark) over the extension staged by scripts/stage-gpu.sh. Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-python-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/gpu-stage/python" PYTHONDONTWRITEBYTECODE=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX beside PyTorch in one process
python3 - <<'PY' 2>&1 | tee "$OUT/versions.txt"
import sys, importlib
print("python", sys.version.split()[0])
for m in ("torch", "cupy", "jax", "pytest", "numpy"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "absent:", e)
PY
if [ -n "${TUNE_ARGS:-}" ]; then
  # Tune first (e.g. TUNE_ARGS="--ops sum,max --dtypes f32 --layouts rows,columns"), so the
  # benchmark below runs the tuned winners, as a user's program would.
  export REDUCE_TUNE_DB=${REDUCE_TUNE_DB:-/tmp/gpu-python-tuning.db}
  start=$SECONDS
  timeout "${TUNE_TIMEOUT:-300}" gpu-stage/reduce-tune tune --device 0 $TUNE_ARGS --db "$REDUCE_TUNE_DB" \
    > "$OUT/tune.log" 2>&1
  echo "tune rc=$? in $((SECONDS - start)) s: $(tail -1 "$OUT/tune.log")"
fi
if [ "${TESTS:-1}" = 1 ]; then
  (cd python/tests && timeout "${TEST_TIMEOUT:-400}" python3 -m pytest -q -rs test_cpu.py test_gpu.py) > "$OUT/pytest.log" 2>&1
  echo "pytest rc=$?"
fi
if [ "${BENCH:-0}" = 1 ]; then
  timeout "${BENCH_TIMEOUT:-300}" python3 bench/python_frameworks.py ${BENCH_ARGS:-} > "$OUT/bench.log" 2>&1
  echo "bench rc=$?"
fi
echo "== summary"
[ -f "$OUT/pytest.log" ] && tail -25 "$OUT/pytest.log"
[ -f "$OUT/bench.log" ] && tail -40 "$OUT/bench.log"
exit 0
