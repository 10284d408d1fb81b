#!/usr/bin/env python3
"""PyTorch's axis reductions (torch.sum, torch.amax, torch.amin, torch.mean along one dim) on the
shape grid of reduce_tune_axis_bench, timed the same way (tuner/measure.h, bench_policy:
CUDA events around batches of back-to-back calls, the median of 5 to 25 samples; inputs
past a quarter of L2 rotate through slices that together exceed 4x L2).

Usage: torch_axes.py [--max-elements N] [--ops sum,max,min,mean] [--dtype f32|f16|bf16|f64|i32|i64]
                     [--shapes RxOUTPUTS,...] [--layouts rows,columns]
Prints "layout op R outputs | torch us GB/s", the keys of reduce_tune_axis_bench's lines.
Integer sums are torch's own (int32 sums into int64); means take floating types only.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_flat import time_call  # noqa: E402  (one timing method for both scripts)

R_VALUES = [1, 3, 16, 100, 1000, 4097, 65537, 1048577, 16777216]
OUTPUT_VALUES = [1, 7, 100, 1000, 16385, 262144, 1048577, 16777216]


def rotation_count(input_bytes, l2, available_bytes):
    if input_bytes * 4 < l2:
        return 1
    count = (4 * l2 + input_bytes - 1) // input_bytes + 1
    return max(1, min(count, 64, max(1, available_bytes // input_bytes)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-elements", type=int, default=1 << 28)
    parser.add_argument("--ops", default="sum,max")
    parser.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16", "f64", "i32", "i64"])
    parser.add_argument("--shapes", default="", help="R x outputs pairs such as 1000x16385 (default: the grid)")
    parser.add_argument("--layouts", default="rows,columns")
    args = parser.parse_args()
    if args.shapes:
        shapes = [tuple(int(v) for v in item.split("x")) for item in args.shapes.split(",")]
    else:
        shapes = [(r, o) for r in R_VALUES for o in OUTPUT_VALUES]
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
             "i32": torch.int32, "i64": torch.int64}[args.dtype]
    es = torch.tensor([], dtype=dtype).element_size()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    buffer_elements = max(args.max_elements, 8 * l2 // 4) + 1024
    data = (torch.arange(buffer_elements, device="cuda", dtype=torch.int64) % 7 - 3).to(dtype)
    ops = {"sum": lambda x, d: torch.sum(x, dim=d), "max": lambda x, d: torch.amax(x, dim=d),
           "min": lambda x, d: torch.amin(x, dim=d), "mean": lambda x, d: torch.mean(x, dim=d)}
    for op_name in args.ops.split(","):
        if op_name not in ops:
            parser.error(f"unknown op {op_name!r}: choose from {', '.join(ops)}")
        if op_name == "mean" and not dtype.is_floating_point:
            parser.error("mean takes floating types only")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, dtype {args.dtype}")
    print("layout  op       R   outputs | torch us     GB/s")
    for layout in args.layouts.split(","):
        for op_name in args.ops.split(","):
            op = ops[op_name]
            for r, outputs in shapes:
                elements = r * outputs
                if elements > args.max_elements or (not args.shapes and elements < 1024):
                    continue
                stride = (elements + 63) // 64 * 64
                rotations = rotation_count(elements * es, l2, buffer_elements * es)
                shape = (outputs, r) if layout == "rows" else (r, outputs)
                dim = 1 if layout == "rows" else 0
                views = [data[s * stride:s * stride + elements].view(shape) for s in range(rotations)]
                ms = time_call(lambda s: op(views[s], dim), rotations)
                print(f"{layout:7s} {op_name:4s} {r:9d} {outputs:9d} | {ms * 1e3:10.2f} "
                      f"{elements * es / (ms * 1e6):8.1f}", flush=True)


if __name__ == "__main__":
    main()
