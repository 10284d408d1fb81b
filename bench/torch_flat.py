#!/usr/bin/env python3
"""PyTorch's flat reductions timed the way reduce_tune_bench times its implementations
(tuner/include/reduce_tune/tuner/measure.h, bench_policy): CUDA events around batches of
back-to-back calls (a sample lasts at least 0.5 ms), 5 to 25 samples until the relative
interquartile range is under 1% or 0.3 s passed, the median; three rounds, their median.
Inputs past a quarter of L2 rotate through slices that together exceed 4x L2.

Usage: torch_flat.py [--ops sum,max] [--dtypes f32,i32,f16,f16>f32] [--sizes N,N,...]
(torch accumulates 16-bit sums in float32 and rounds to the input type once; "f16>f32"
asks for the float32 total itself, for sums only.)
Prints one line per (op, dtype, n): microseconds and GB/s, for docs/BENCHMARKS.md.
"""
import argparse
import statistics
import time

import torch

TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32, "i64": torch.int64,
                "u32": torch.uint32, "f16": torch.float16, "bf16": torch.bfloat16,
                # The sum of a 16-bit tensor into float32 (torch.sum(x, dtype=torch.float32)).
                "f16>f32": torch.float16, "bf16>f32": torch.bfloat16}
TORCH_OPS = {"sum": torch.sum, "prod": torch.prod, "min": torch.amin, "max": torch.amax}


def default_sizes():
    sizes = []
    for b in range(10, 31, 2):
        n = 1 << b
        sizes += [n, n + n // 2 + 1]
        p = n + n * 3 // 10
        while any(p % d == 0 for d in range(2, int(p ** 0.5) + 1)):
            p -= 1
        sizes.append(p)
    return sorted(sizes)


def quartiles(samples):
    s = sorted(samples)

    def q(x):
        pos = x * (len(s) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)
    return q(0.25), q(0.5), q(0.75)


def time_call(call, rotations):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    slice_index = [0]

    def step():
        call(slice_index[0])
        slice_index[0] = (slice_index[0] + 1) % rotations
    for _ in range(2):
        step()
    start.record()
    step()
    stop.record()
    stop.synchronize()
    first = max(start.elapsed_time(stop), 1e-4)
    batch = max(1, min(512, int(-(-0.5 // first))))
    samples, began = [], time.monotonic()
    while True:
        start.record()
        for _ in range(batch):
            step()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / batch)
        if len(samples) >= 5:
            q1, med, q3 = quartiles(samples)
            if (q3 - q1) / med <= 0.01 or len(samples) >= 25 or time.monotonic() - began >= 0.3:
                return med


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="sum,min,max,prod")
    parser.add_argument("--dtypes", default="f32,f64,i32,i64,u32,f16,bf16,f16>f32,bf16>f32")
    parser.add_argument("--sizes", default="")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else default_sizes()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print("op    type                n |   torch us     GB/s")
    for dtype_name in args.dtypes.split(","):
        dtype = TORCH_DTYPES[dtype_name]
        size = torch.tensor([], dtype=dtype).element_size()
        elements = max(max(sizes), 8 * l2 // size) + 64
        try:
            data = (torch.arange(elements, device="cuda", dtype=torch.int64) % 7 - 3)
            data = data.to(dtype) if dtype != torch.uint32 else (data + 3).to(dtype)
        except (RuntimeError, TypeError) as error:
            print(f"{dtype_name}: torch cannot make this tensor ({error})")
            continue
        for op_name in args.ops.split(","):
            op = TORCH_OPS[op_name]
            if ">" in dtype_name:
                if op_name != "sum":
                    continue
                op = lambda x: torch.sum(x, dtype=torch.float32)  # noqa: E731
            for n in sizes:
                stride = (n + 31) // 32 * 32
                rotations = 1 if n * size * 4 < l2 else max(1, min(64, (4 * l2 + n * size - 1) // (n * size) + 1,
                                                                    elements // stride))
                try:
                    op(data[:n])
                    rounds = [time_call(lambda s: op(data[s * stride:s * stride + n]), rotations) for _ in range(3)]
                except (RuntimeError, NotImplementedError) as error:
                    print(f"{op_name:5s} {dtype_name:8s} {n:12d} | not supported ({str(error).splitlines()[0][:60]})")
                    break
                ms = statistics.median(rounds)
                print(f"{op_name:5s} {dtype_name:8s} {n:12d} | {ms * 1e3:10.2f} {n * size / (ms * 1e6):8.1f}",
                      flush=True)


if __name__ == "__main__":
    main()
