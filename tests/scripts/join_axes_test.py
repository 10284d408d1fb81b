#!/usr/bin/env python3
"""bench/join_axes.py against a small axis bench log and torch log written here: the
ratios it prints beside each shape, and the design's bar (0.9x a flat reduction of the
same element count, the shape's writes counted) counted and listed, with logs from
before the flat lines too."""
import os
import subprocess
import sys
import tempfile

JOIN = sys.argv[1]

BENCH = """device: NVIDIA H200, 132 SMs, L2 60 MiB, peak 4814 GB/s
dtype: f32
empty kernel launch, back to back: 3.00 us
layout  op       R   outputs | reduce-tune us  GB/s  %peak | cub-segmented us  GB/s | built-in us | rt kernel
flat    sum  7340039 |      10.00   2936.0  61.0%
columns sum    1048577         7 |      12.50   2348.8  48.8% |            -        - |          - | default columns_dense
rows    sum    1048577         7 |      10.00   2936.0  61.0% |        20.00   1468.0 |          - | default rows
flat    sum  1600 |       3.00      2.1   0.0%
rows    sum         16       100 |       4.00      1.6   0.0% |         4.00      1.6 |          - | default rows
flat    max  7340039 |       9.00   3262.2  67.8%
rows    max    1048577         7 |      11.00   2669.1  55.4% |        20.00   1468.0 |          - | default rows
"""
TORCH = """columns sum    1048577         7 |      25.00
rows    sum    1048577         7 |      18.00
rows    sum         16       100 |       9.00
rows    max    1048577         7 |      18.00
"""


def run(bench_text):
    with tempfile.TemporaryDirectory() as d:
        b, t = os.path.join(d, "bench.log"), os.path.join(d, "torch.log")
        open(b, "w").write(bench_text)
        open(t, "w").write(TORCH)
        r = subprocess.run([sys.executable, JOIN, b, t], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


out = run(BENCH)
lines = out.splitlines()
row = next(l for l in lines if l.startswith("| columns | sum | 1048577 | 7 |"))
# flat 10.00 us over the shape's 12.50: 0.80x, below the bar; torch 25.00 / 12.50 = 2.00x.
check(row.rstrip().endswith("| 10.0 | 0.80× |"), f"columns row's flat columns: {row}")
check("| 2.00× |" in row, f"columns row's torch ratio: {row}")
row = next(l for l in lines if l.startswith("| rows | max | 1048577 | 7 |"))
check(row.rstrip().endswith("| 9.0 | 0.82× |"), f"rows max joins the flat max, not the flat sum: {row}")
row = next(l for l in lines if l.startswith("| rows | sum | 16 | 100 |"))
# 3.00 / 4.00 with the outputs' bytes counted too (1 + 1/16): 0.80x.
check(row.rstrip().endswith("| 3.0 | 0.80× |"), f"small rows row, its writes counted: {row}")
every = next(l for l in lines if "flat reduction's bandwidth" in l and "every shape" in l)
check("1 of 4" in every and "0.80-1.00x" in every, f"every shape: {every}")
big = next(l for l in lines if "flat reduction's bandwidth" in l and ">= 2^20" in l)
check("1 of 3" in big and "0.80-1.00x" in big, f">= 2^20 elements: {big}")
listed = [l for l in lines if l.startswith("  below 0.9x the flat reduction")]
check(len(listed) == 2 and "('columns', 'sum', 1048577, 7) 0.80×" in listed[0]
      and "('rows', 'max', 1048577, 7) 0.82×" in listed[1], f"listed, lowest first: {listed}")

# A log from before the flat lines: the same table, no flat ratio and no design line.
old = run("\n".join(l for l in BENCH.splitlines() if not l.startswith("flat")) + "\n")
row = next(l for l in old.splitlines() if l.startswith("| columns | sum | 1048577 | 7 |"))
check(row.rstrip().endswith("| - | - |"), f"old log's row: {row}")
check("flat reduction's bandwidth" not in old, "old log: no design line")
print("join_axes: all checks passed")
