#!/usr/bin/env python3
"""torch against reduce_tune from Python on the strided views given, each as
DTYPE:OP:EXTENTS:STRIDES:DIMS (for example f32:mean:7x14086678:28173356x2:1, every other
element of 7 rows reduced along 1; f32, f16, bf16, f64, i32 or i64; sum, mean, max or
min; an i32 sum is taken in int64 on both sides, torch's default). CUDA events
around batches of calls (20, or 200 under 2^24 elements), the best of 7 batches, two
rounds each side in turn; both sides' host time counts. Set AT, docs/BENCHMARKS.md.
    PYTHONPATH=<the staged package> python3 bench/torch_views.py VIEW...
"""
import sys

import torch
import reduce_tune as rt

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
          "i32": torch.int32, "i64": torch.int64}
TORCH = {"mean": lambda x, d, **kw: x.mean(dim=d), "sum": lambda x, d, **kw: x.sum(dim=d, **kw),
         "max": lambda x, d, **kw: x.amax(dim=d), "min": lambda x, d, **kw: x.amin(dim=d)}


def best_of_batches(fn, reps):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = None
    for _ in range(7):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        t = start.elapsed_time(end) * 1000 / reps
        best = t if best is None else min(best, t)
    return best


def main(items):
    if not items:
        sys.exit(__doc__)
    for item in items:
        dt, op, ext, st, dims = item.split(":")
        ext = [int(v) for v in ext.split("x")]
        st = [int(v) for v in st.split("x")]
        dims = tuple(int(v) for v in dims.split(","))
        span = 1 + sum((e - 1) * s for e, s in zip(ext, st))
        if dt in ("i32", "i64"):
            x = torch.randint(-3, 4, (span,), device="cuda", dtype=DTYPES[dt]).as_strided(ext, st)
        else:
            x = torch.randn(span, device="cuda", dtype=DTYPES[dt]).as_strided(ext, st)
        kw = {"dtype": torch.int64} if dt == "i32" and op == "sum" else {}
        ref, mine = TORCH[op], getattr(rt, op)
        ours = lambda x, dim: mine(x, dim=dim, **kw)  # noqa: E731
        want, got = ref(x, dims, **kw), ours(x, dims)
        if dt in ("i32", "i64"):
            same = torch.equal(got, want)
        else:
            same = torch.allclose(got.double(), want.double(), rtol=1e-4 if dt in ("f32", "f64") else 2e-2, atol=1e-2)
        reps = 20 if x.numel() > 1 << 24 else 200
        t = [best_of_batches(lambda: ref(x, dims, **kw), reps), best_of_batches(lambda: ours(x, dims), reps),
             best_of_batches(lambda: ref(x, dims, **kw), reps), best_of_batches(lambda: ours(x, dims), reps)]
        torch_us, rt_us = min(t[0], t[2]), min(t[1], t[3])
        print(f"{item:50} torch {torch_us:9.2f} us  rt {rt_us:9.2f} us  torch/rt {torch_us / rt_us:5.2f}x  "
              f"same={same}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
