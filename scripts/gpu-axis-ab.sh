#!/usr/bin/env bash
# On the GPU machine: the axis bench of several builds side by side. Each VARIANTS name
# is a folder under gpu-rounds/ (ignored by git) holding that build's reduce_tune_axis_bench
# (copied from gpu-stage/ after scripts/stage-gpu.sh); ROUNDS alternating rounds over
# SHAPES (RxOUTPUTS,...) with ARGS passed on; prints the best time of each, side by side.
# CONFIGS (axis configs, ';'-separated) are passed as --configs: each shape then also
# reports the built-in choice's time with the launch queue held, printed after the table.
# Logs under $OUT.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=${SHAPES:-4097x16385,1000x16385,1000x262144,100x1048577,1048577x100,16x16777216,3x16777216,65537x1000,100x262144,4097x32769,16777216x7,12289x5000}
V=${VARIANTS:-old new}
start=$SECONDS
for round in $(seq 1 ${ROUNDS:-2}); do
  for v in $V; do
    gpu-rounds/$v/reduce_tune_axis_bench --shapes "$S" ${ARGS:-} ${CONFIGS:+--configs "$CONFIGS"} > "$OUT/ab-$v-$round.log" 2>&1
    echo "$v $round rc=$? $((SECONDS-start)) s"
  done
done
python3 - "$OUT" $V <<'PY'
import sys, re, glob, collections
out, vs = sys.argv[1], sys.argv[2:]
t = collections.defaultdict(dict)
held = collections.defaultdict(dict)  # the built-in choice, held (with CONFIGS)
for f in sorted(glob.glob(out + "/ab-*.log")):
    v, rnd = re.search(r"ab-(\w+)-(\d+)\.log", f).groups()
    key = None
    for line in open(f):
        m = re.match(r"(rows|columns)\s+(\w+)\s+(\d+)\s+(\d+) \|\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%", line)
        if m:
            key = m.group(1, 2, 3, 4)
            t[key].setdefault(v, []).append((float(m.group(5)), float(m.group(7))))
        m = re.match(r"\s+built-in \| paced ([\d.]+) us \| held ([\d.]+) us", line)
        if m and key:
            held[key].setdefault(v, []).append(float(m.group(2)))
print("layout op R outputs | " + " | ".join(f"{v} us %peak" for v in vs) + " | " + " ".join(f"{vs[0]}/{v}" for v in vs[1:]))
for k, d in t.items():
    if all(v in d for v in vs):
        b = [min(d[v]) for v in vs]
        print(f"{k[0]:7} {k[1]:4} {k[2]:>9} {k[3]:>9} | " + " | ".join(f"{x[0]:8.2f} {x[1]:5.1f}" for x in b) + " | " + " ".join(f"{b[0][0]/x[0]:.3f}" for x in b[1:]))
if held:
    print("built-in choice, held: layout op R outputs | " + " | ".join(f"{v} us" for v in vs) + " | " +
          " ".join(f"{vs[0]}/{v}" for v in vs[1:]))
    for k, d in held.items():
        if all(v in d for v in vs):
            b = [min(d[v]) for v in vs]
            print(f"{k[0]:7} {k[1]:4} {k[2]:>9} {k[3]:>9} | " + " | ".join(f"{x:8.2f}" for x in b) + " | " +
                  " ".join(f"{b[0]/x:.3f}" for x in b[1:]))
PY
