#!/usr/bin/env bash
# On the GPU machine: given axis configs timed beside the built-in choice over a grid of
# shapes (reduce_tune_axis_bench --configs), paced and with the launch queue held; prints
# per shape the built-in choice and the three fastest configs held. Every config's result
# is compared bit for bit with the built-in choice's; a difference is marked WRONG.
# CONFIGS (';'-separated), LAYOUT (rows or columns), RS and OS (R and output counts),
# DTYPES, OPS; the executables come from $BIN (default gpu-stage). Logs under $OUT.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
: "${CONFIGS:?CONFIGS: axis configs such as columns:block=1024,by=32,vec=1,split=none, separated by ;}"
LAYOUT=${LAYOUT:-columns}
S=""
for r in ${RS:-64 256 1000 2049 4097 8193 16385}; do for o in ${OS:-2 7 33 100 257 1000 4097}; do S="$S,${r}x${o}"; done; done
S=${S#,}
for dt in ${DTYPES:-f32}; do for op in ${OPS:-sum}; do
  "$BIN/reduce_tune_axis_bench" --layouts "$LAYOUT" --ops "$op" --dtype "$dt" --shapes "$S" --configs "$CONFIGS" \
    > "$OUT/configs-$dt-$op.log" 2>&1
  echo "configs $dt $op rc=$?"
done; done
python3 bench/config_probe_table.py "$OUT"/configs-*.log
