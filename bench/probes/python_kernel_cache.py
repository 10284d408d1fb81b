#!/usr/bin/env python3
"""First calls of 36 kinds of call in this process (sum, max and min of f32, i64 and f16
tensors of [64, 1000, 33] over dims 1, (0, 2), 2 and all), each timed alone (synchronized),
then the same calls again. Prints the first calls' total, median and slowest, and the
repeated calls' total. Run it in a process over an empty kernel cache folder, then in a
second process over the folder the first left (set AU, docs/BENCHMARKS.md):
    rm -rf /tmp/kc; export REDUCE_TUNE_DB=/tmp/none.db PYTHONPATH=<the staged package>
    REDUCE_TUNE_KERNEL_CACHE=/tmp/kc python3 bench/probes/python_kernel_cache.py "empty folder"
    REDUCE_TUNE_KERNEL_CACHE=/tmp/kc python3 bench/probes/python_kernel_cache.py "the folder kept"
    REDUCE_TUNE_KERNEL_CACHE=off python3 bench/probes/python_kernel_cache.py off
"""
import statistics
import sys
import time

import torch
import reduce_tune as rt
x32 = torch.randn(64, 1000, 33, device="cuda")
xi = torch.randint(-3, 4, (64, 1000, 33), device="cuda", dtype=torch.int64)
cases = []
for x in (x32, xi, x32.half()):
    for op in ("sum", "max", "min"):
        for dim in (1, (0, 2), 2, None):
            cases.append((x, op, dim))


def timed(x, op, dim):
    torch.cuda.synchronize()
    t = time.perf_counter()
    getattr(rt, op)(x, dim=dim)
    torch.cuda.synchronize()
    return time.perf_counter() - t


firsts = [timed(*c) for c in cases]
warms = [timed(*c) for c in cases]
label = sys.argv[1] if len(sys.argv) > 1 else "this process"
print(f"{label}: {len(cases)} kinds: first calls total {sum(firsts):.3f} s, median {statistics.median(firsts)*1e3:.1f} ms, "
      f"slowest {max(firsts)*1e3:.1f} ms; repeated calls total {sum(warms)*1e3:.2f} ms", flush=True)
