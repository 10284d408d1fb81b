#!/usr/bin/env python3
"""Probe (a GPU and PyTorch): where the time of the Python tests' Semantics layouts goes,
for the dtypes given (default int32,float16): per kind of call, making the input, the
float64 reference, the first call (which compiles the kernel when no database holds it)
and the repeated one, each synchronized; then the slowest first calls and a profile.
Set AT, docs/BENCHMARKS.md.
    PYTHONPATH=<the staged package> python3 bench/probes/python_first_calls.py [DTYPES]
"""
import cProfile
import os
import pstats
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))
import test_gpu as T  # noqa: E402  (the tests' layouts, data and reference)
import reduce_tune as rt  # noqa: E402


def main(dtypes):
    spent = {"data": 0.0, "reference": 0.0, "first": 0.0, "repeated": 0.0}
    firsts = []

    def step(key, fn):
        t = time.perf_counter()
        value = fn()
        torch.cuda.synchronize()
        spent[key] += time.perf_counter() - t
        return value

    profile = cProfile.Profile()
    profile.enable()
    start = time.perf_counter()
    for dtype in dtypes:
        for op in T.OPS:
            for name, shape, dim, make in T.LAYOUTS:
                base = step("data", lambda: T.data(shape, dtype, op, seed=len(name)))
                x = make(base) if make else base
                step("reference", lambda: T.reference(op, x, dim))
                before = spent["first"]
                step("first", lambda: getattr(rt, op)(x, dim=dim))
                firsts.append((spent["first"] - before, f"{op}<{dtype}> {name}"))
                step("repeated", lambda: getattr(rt, op)(x, dim=dim))
    profile.disable()
    print(f"wall {time.perf_counter() - start:.1f} s", {k: round(v, 2) for k, v in spent.items()}, "kinds", len(firsts))
    firsts.sort(reverse=True)
    print("slowest first calls:", [(round(t, 3), what) for t, what in firsts[:8]])
    print(f"median first call {firsts[len(firsts) // 2][0]:.3f} s")
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main((sys.argv[1] if len(sys.argv) > 1 else "int32,float16").split(","))
