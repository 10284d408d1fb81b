#!/usr/bin/env bash
# On the GPU machine: axis shapes timed with their built-in choice and given alternative
# configs (reduce_tune_axis_bench --configs: paced and held, each checked bit for bit
# against the built-in choice), for the large shapes of issue 12's grid (>= 2^26
# elements) by default, beside flat sums of the same element counts; optionally Nsight
# Compute of the built-in kernels (NCU=1). PLAN names a file of lines
# "LAYOUT SHAPES CONFIGS [OPS]" (configs ';'-separated, '-' for none; OPS a space-free
# list such as sum,max, else $OPS), each run as one bench call per op. Logs under $OUT; a short table last. DTYPES (f32), OPS (sum).
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-gpu-stage}
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/device.txt" 2>&1
default_plan() {
  echo "rows 16x16777216,100x1048577,1000x262144,4097x16385,1048577x100,16777216x7,67108864x1,100000000x1,268435456x1 -"
  echo "columns 16x16777216,100x1048577,1000x262144,4097x16385,1048577x100,16777216x7 -"
}
plan=$( [ -n "${PLAN:-}" ] && cat "$PLAN" || default_plan )
i=0
while read -r layout shapes configs line_ops; do
  [ -z "$layout" ] && continue
  i=$((i + 1))
  ops=${line_ops:-${OPS:-sum}}
  for dt in ${DTYPES:-f32}; do for op in ${ops//,/ }; do
    extra=()
    [ "$configs" != "-" ] && extra=(--configs "$configs")
    timeout "${PROBE_TIMEOUT:-240}" "$BIN/reduce_tune_axis_bench" --layouts "$layout" --ops "$op" --dtype "$dt" \
      --max-elements 268435456 --shapes "$shapes" "${extra[@]}" > "$OUT/probe-$i-$layout-$dt-$op.log" 2>&1
    echo "probe $i $layout $dt $op rc=$?"
  done; done
done <<< "$plan"
if [ "${NCU:-0}" = 1 ]; then
  for s in ${NCU_SHAPES:-rows:16x16777216 rows:100x1048577 rows:1048577x100 columns:16777216x7 columns:4097x16385}; do
    l=${s%%:*}; sh=${s#*:}
    timeout 120 ncu --clock-control none -k regex:axis --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      "$BIN/reduce_tune_axis_bench" --layouts "$l" --ops sum --shapes "$sh" --max-elements 268435456 \
      >> "$OUT/ncu.txt" 2>&1; echo "ncu $s rc=$?"
  done
fi
python3 bench/config_probe_table.py --top 4 --peak "$OUT"/probe-*.log
[ -f "$OUT/ncu.txt" ] && grep -E "axis_.*kernel|^ +(DRAM Throughput|Duration|Registers Per Thread|Achieved Occupancy|L1/TEX Hit Rate|L2 Hit Rate|Warp Cycles Per Issued Instruction|Grid Size|Block Size) " "$OUT/ncu.txt" | sed -E 's/ +/ /g' | cut -c1-150
exit 0
