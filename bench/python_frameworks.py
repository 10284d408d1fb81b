#!/usr/bin/env python3
"""The Python package reduce_tune against PyTorch, CuPy and JAX on the shape grid of
torch_axes.py (rows: shape (outputs, R) reduced along dim 1; columns: shape (R, outputs)
reduced along dim 0), timed from Python so that each call's host overhead counts.

Device table, per framework: rt.<op>(x, dim=d) against the framework's own reduction of the
same array (torch.sum/amax/..., cupy.sum/max/..., a jitted jnp.sum/max/... and, in an extra
column, the eager jnp call). PyTorch and CuPy: CUDA events around batches of back-to-back
calls on the current stream (a batch lasts about 1 ms), the median of 5 to 25 batches until
the relative interquartile range is under 1% or 0.3 s passed; --rounds such medians,
alternating between the implementations, and their median. JAX: wall clock from the first
call's dispatch to the last result's block_until_ready(), over batches of at least 5 ms
and 20 calls (both sides are dispatched asynchronously, rt's as an XLA FFI call; a batch
of 1 ms was two or three large calls, over which the batch's first dispatch and final wait,
tens of microseconds, were spread). Inputs past a quarter of L2 rotate through
copies that together exceed 4x L2 (torch_axes.rotation_count). Each case first compares the
two results (a "MISMATCH" marks a difference beyond rounding). JAX's speedup is against the
jitted call; two more columns time rt inside jax.jit (the custom call without the package's
Python) and its speedup over the jitted jnp call. CuPy has no bfloat16.

Host overhead: microseconds of host time per call on a (4, 1024) float32 array reduced along
dim 1, the Python loop alone (chunks of calls short enough that the launch queue never fills,
synchronized outside the clock): rt.sum, rt.sum with out=, the raw rt._core.reduce with
prebuilt arguments, and torch.sum; rt.sum and cupy.sum for CuPy. Then rt.sum and torch.sum
(with and without out=) over one bare kernel launch from Python (torch.cuda._sleep(0)), in
alternating rounds: the overhead a call adds to the launch it makes.

Usage: python_frameworks.py [--max-elements N] [--ops sum,max] [--dtype f32|f16|bf16]
       [--frameworks torch,cupy,jax] [--quick] [--shapes "columns sum 4097 7,..."] [--rounds N]
       [--recheck N] [--json PATH] [--overhead-only]
Prints "layout op R outputs | rt us, framework us, speedup (framework / rt), rt GB/s" per
framework, a summary of each, then the host overhead. --recheck N times each shape below
1.0x again, alone, with N rounds, after the framework's grid, and the summary says how many
stay below (their rows in the JSON carry "recheck_speedup").
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

import reduce_tune as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_axes import OUTPUT_VALUES, R_VALUES, rotation_count  # noqa: E402  (the same grid and rotation)
from torch_flat import TORCH_OPS, quartiles  # noqa: E402

QUICK_R_VALUES = [16, 1000, 65537]
QUICK_OUTPUT_VALUES = [7, 1000, 262144]
OPS = ("sum", "max", "min", "prod", "mean")  # rt's names; torch's amax/amin, CuPy's and JAX's max/min
TORCH_FW_OPS = dict(TORCH_OPS, mean=torch.mean)
DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


class Case:
    """One point of the grid: the array's shape and the dim reduced."""

    def __init__(self, layout, op, r, outputs):
        self.layout, self.op, self.r, self.outputs = layout, op, r, outputs
        self.elements = r * outputs
        self.shape = (outputs, r) if layout == "rows" else (r, outputs)
        self.dim = 1 if layout == "rows" else 0

    def name(self):
        return f"{self.layout} {self.op} {self.r} {self.outputs}"


def grid(args):
    r_values, output_values = (QUICK_R_VALUES, QUICK_OUTPUT_VALUES) if args.quick else (R_VALUES, OUTPUT_VALUES)
    for layout in ("rows", "columns"):
        for op in args.ops:
            for r in r_values:
                for outputs in output_values:
                    case = Case(layout, op, r, outputs)
                    if 1024 <= r * outputs <= args.max_elements and (args.only is None or case.name() in args.only):
                        yield case


class EventClock:
    """Milliseconds between two CUDA events recorded on the current stream (PyTorch, CuPy)."""

    batch_ms, min_calls = 1.0, 1

    def __init__(self, make_event, elapsed_ms):
        self.begin, self.end, self.elapsed_ms = make_event(), make_event(), elapsed_ms

    def start(self):
        self.begin.record()

    def stop(self, last):
        self.end.record()
        self.end.synchronize()
        return self.elapsed_ms(self.begin, self.end)


class WallClock:
    """Milliseconds of wall time until the last call's result is ready (JAX). A batch's
    first dispatch and final wait are host time no event excludes: batches are long enough
    that they weigh little on each call."""

    batch_ms, min_calls = 5.0, 20

    def start(self):
        self.began = time.perf_counter()

    def stop(self, last):
        last.block_until_ready()
        return (time.perf_counter() - self.began) * 1e3


def time_call(call, rotations, clock):
    """Median milliseconds per call(index) over batches of back-to-back calls that cycle
    through the rotations, each batch lasting about clock.batch_ms (at least clock.min_calls
    calls): 5 to 25 batches, until the relative interquartile range is under 1% or 0.3 s
    passed."""
    index = 0

    def batch(count):
        nonlocal index
        clock.start()
        for _ in range(count):
            last = call(index)
            index = (index + 1) % rotations
        return clock.stop(last) / count

    batch(2)  # the first calls compile or load kernels
    count = max(clock.min_calls, min(4096, math.ceil(clock.batch_ms / max(batch(1), 1e-4))))
    samples, began = [], time.monotonic()
    while True:
        samples.append(batch(count))
        if len(samples) >= 5:
            q1, median, q3 = quartiles(samples)
            if (q3 - q1) / median <= 0.01 or len(samples) >= 25 or time.monotonic() - began >= 0.3:
                return median


def compare(impls, rotations, clock, rounds):
    """Per implementation, the median over rounds of time_call; the rounds alternate between
    the implementations so that drift (clocks, temperature) affects them alike."""
    times = {name: [] for name in impls}
    for _ in range(rounds):
        for name, call in impls.items():
            times[name].append(time_call(call, rotations, clock))
    return {name: statistics.median(t) for name, t in times.items()}


def tolerance(dtype):
    """Sums in another order round differently: one 16-bit ulp, or float32's order effects."""
    return 1e-2 if dtype != "f32" else 1e-4


# PyTorch: the views of one shared buffer, as torch_axes.py rotates them.
def torch_views(data, case, es, l2):
    stride = (case.elements + 63) // 64 * 64
    count = min(rotation_count(case.elements * es, l2, data.numel() * es), data.numel() // stride)
    return [data[s * stride:s * stride + case.elements].view(case.shape) for s in range(count)]


def torch_cases(data, args, es, l2):
    tol = tolerance(args.dtype)

    def close(a, b):
        return a.shape == b.shape and torch.allclose(a.float(), b.float(), rtol=tol, atol=tol)

    for case in grid(args):
        views = torch_views(data, case, es, l2)
        yield case, impls_of(getattr(rt, case.op), TORCH_FW_OPS[case.op], views, case.dim, "dim"), len(views), close


# CuPy: the same PyTorch views, shared through DLPack.
def cupy_cases(cupy, data, args, es, l2):
    tol = tolerance(args.dtype)

    def close(a, b):
        return a.shape == b.shape and bool(cupy.allclose(a.astype(cupy.float32), b.astype(cupy.float32),
                                                         rtol=tol, atol=tol))

    for case in grid(args):
        arrays = [cupy.from_dlpack(v) for v in torch_views(data, case, es, l2)]
        yield case, impls_of(getattr(rt, case.op), getattr(cupy, case.op), arrays, case.dim, "axis"), len(arrays), close


def impls_of(rt_op, fw_op, arrays, dim, dim_keyword):
    return {"rt": lambda s: rt_op(arrays[s], dim=dim), "fw": lambda s: fw_op(arrays[s], **{dim_keyword: dim})}


# JAX: arrays built natively (a JAX slice would be a copy anyway), one per rotation.
def jax_cases(jax, args, es, l2, available_bytes):
    jnp = jax.numpy
    dtype = getattr(jnp, DTYPES[args.dtype])
    tol = tolerance(args.dtype)

    def close(a, b):
        return a.shape == b.shape and bool(jnp.allclose(a.astype(jnp.float32), b.astype(jnp.float32),
                                                        rtol=tol, atol=tol))

    for case in grid(args):
        base = (jnp.arange(case.elements, dtype=jnp.int32) % 7 - 3).astype(dtype).reshape(case.shape)
        count = rotation_count(case.elements * es, l2, available_bytes)
        arrays = [base] + [jnp.copy(base) for _ in range(count - 1)]
        yield case, jax_impls(jax, case.op, case.dim, arrays), count, close


def jax_impls(jax, op, dim, arrays):
    """rt eager against jnp jitted (the table's speedup), and both sides eager and both
    jitted (rt inside jax.jit: the custom call without the package's Python)."""
    rt_op, jnp_op = getattr(rt, op), getattr(jax.numpy, op)
    jitted = jax.jit(lambda a: jnp_op(a, axis=dim))
    rt_jitted = jax.jit(lambda a: rt_op(a, dim=dim))
    return {"rt": lambda s: rt_op(arrays[s], dim=dim), "fw": lambda s: jitted(arrays[s]),
            "eager": lambda s: jnp_op(arrays[s], axis=dim), "rt_jit": lambda s: rt_jitted(arrays[s])}


def run_framework(framework, title, fw_column, cases, clock, args, es):
    """Times every case, printing a line each; returns the rows."""
    print(f"\n== {framework}: {title}, {args.rounds} rounds ==")
    eager = " eager us  rt jit us jit speedup" if framework == "jax" else ""
    print(f"layout  op       R   outputs |      rt us {fw_column:>10s} speedup     GB/s{eager}")
    rows = []
    for case, impls, rotations, close in cases:
        match = bool(close(impls["rt"](0), impls["fw"](0)))
        ms = compare(impls, rotations, clock, args.rounds)
        row = {"framework": framework, "layout": case.layout, "op": case.op, "dtype": args.dtype, "R": case.r,
               "outputs": case.outputs, "rotations": rotations, "rt_us": ms["rt"] * 1e3, "fw_us": ms["fw"] * 1e3,
               "speedup": ms["fw"] / ms["rt"], "rt_gbps": case.elements * es / (ms["rt"] * 1e6), "match": match}
        line = (f"{case.layout:7s} {case.op:4s} {case.r:9d} {case.outputs:9d} | {row['rt_us']:10.2f} "
                f"{row['fw_us']:10.2f} {row['speedup']:6.2f}x {row['rt_gbps']:8.1f}")
        if "eager" in ms:
            row["eager_us"] = ms["eager"] * 1e3
            line += f" {row['eager_us']:8.2f}"
        if "rt_jit" in ms:
            row["rt_jit_us"] = ms["rt_jit"] * 1e3
            row["jit_speedup"] = ms["fw"] / ms["rt_jit"]
            line += f" {row['rt_jit_us']:9.2f} {row['jit_speedup']:10.2f}x"
        print(line + ("" if match else "  MISMATCH"), flush=True)
        rows.append(row)
    return rows


def summarize(framework, rows):
    if not rows:
        return
    ratios = [row["speedup"] for row in rows]
    worst = min(rows, key=lambda row: row["speedup"])
    below = [row for row in rows if row["speedup"] < 1.0]
    mismatches = [row for row in rows if not row["match"]]

    def name(row):
        return f"{row['layout']} {row['op']} {row['R']} {row['outputs']}"
    print(f"{framework}: rt >= 1.0x on {len(rows) - len(below)} of {len(rows)} shapes; worst {worst['speedup']:.2f}x "
          f"({name(worst)}), median {statistics.median(ratios):.2f}x")
    if below:
        print("  below 1.0x: " + ", ".join(f"{name(row)} ({row['speedup']:.2f}x)" for row in below))
    rechecked = [row for row in below if "recheck_speedup" in row]
    if rechecked:
        still = [row for row in rechecked if row["recheck_speedup"] < 1.0]
        print(f"  timed again: {len(still)} of {len(rechecked)} still below 1.0x" +
              (": " + ", ".join(f"{name(row)} ({row['recheck_rt_us']:.2f} against {row['recheck_fw_us']:.2f} us, "
                               f"{row['recheck_speedup']:.2f}x)" for row in still) if still else ""))
    if all("jit_speedup" in row for row in rows):
        jit_ratios = [row["jit_speedup"] for row in rows]
        jit_worst = min(rows, key=lambda row: row["jit_speedup"])
        print(f"{framework}, both sides jitted: rt >= 1.0x on {sum(r >= 1.0 for r in jit_ratios)} of {len(rows)} "
              f"shapes; worst {jit_worst['jit_speedup']:.2f}x ({name(jit_worst)}), median "
              f"{statistics.median(jit_ratios):.2f}x")
    if mismatches:
        print("  MISMATCH: " + ", ".join(name(row) for row in mismatches))


def host_us(call, synchronize, calls=20000, chunk=250):
    """Median host microseconds per call: the loop alone, in chunks short enough that the
    launch queue never fills (a full queue would make the host wait for the GPU), with a
    synchronization after each chunk, outside the clock. The first chunk warms up."""
    for _ in range(chunk):
        call()
    synchronize()
    per_call = []
    for _ in range(calls // chunk):
        began = time.perf_counter()
        for _ in range(chunk):
            call()
        per_call.append((time.perf_counter() - began) / chunk * 1e6)
        synchronize()
    return statistics.median(per_call)


def print_overhead(label, results):
    print(f"\nhost overhead, {label} (4, 1024) float32, dim=1: us per call (median of chunks of 250)")
    for name, us in results.items():
        print(f"  {name:28s} {us:8.2f}")


def torch_overhead():
    x = (torch.arange(4 * 1024, device="cuda") % 7 - 3).float().view(4, 1024)
    o = torch.empty(4, device="cuda")
    core = rt._core
    f32 = core.DTYPES.index("f32")
    raw = (core.OPS.index("sum"), f32, f32, x.data_ptr(), tuple(x.shape), tuple(x.stride()), (1,), o.data_ptr(),
           torch.cuda.current_stream().cuda_stream, torch.cuda.current_device())
    results = {
        "rt.sum(x, dim=1)": host_us(lambda: rt.sum(x, dim=1), torch.cuda.synchronize),
        "rt.sum(x, dim=1, out=o)": host_us(lambda: rt.sum(x, dim=1, out=o), torch.cuda.synchronize),
        "rt._core.reduce(...)": host_us(lambda: core.reduce(*raw), torch.cuda.synchronize),
        "torch.sum(x, dim=1)": host_us(lambda: torch.sum(x, dim=1), torch.cuda.synchronize),
    }
    print_overhead("torch", results)
    layer = results["rt.sum(x, dim=1)"] - results["rt._core.reduce(...)"]
    print(f"  python layer = rt.sum - raw _core.reduce: {layer:.2f} us")
    results["paired"] = paired_overhead(
        {"rt.sum(x, dim=1)": lambda: rt.sum(x, dim=1),
         "rt.sum(x, dim=1, out=o)": lambda: rt.sum(x, dim=1, out=o),
         "torch.sum(x, dim=1)": lambda: torch.sum(x, dim=1),
         "torch.sum(x, dim=1, out=o)": lambda: torch.sum(x, dim=1, out=o)},
        "torch.cuda._sleep(0)", lambda: torch.cuda._sleep(0), torch.cuda.synchronize)
    return results


def paired_overhead(calls, bare_name, bare, synchronize, rounds=15, per_round=2000):
    """Each call's host time over one bare kernel launch from Python (bare: the least a
    call that launches a kernel can cost), measured in alternating rounds so that the
    host's drift between loops cancels: per round, every call and the bare launch are
    timed back to back (host_us), and the overhead is the median over rounds of each
    round's difference."""
    times = {name: [] for name in calls}
    times[bare_name] = []
    for _ in range(rounds):
        times[bare_name].append(host_us(bare, synchronize, calls=per_round))
        for name, call in calls.items():
            times[name].append(host_us(call, synchronize, calls=per_round))
    print(f"\nhost time over a bare launch ({bare_name}), {rounds} alternating rounds of {per_round} calls: "
          "us per call, median (and the median of the rounds' differences)")
    print(f"  {bare_name:28s} {statistics.median(times[bare_name]):8.2f}")
    result = {bare_name: statistics.median(times[bare_name])}
    for name in calls:
        over = statistics.median(a - b for a, b in zip(times[name], times[bare_name]))
        result[name] = {"us": statistics.median(times[name]), "over_bare_us": over}
        print(f"  {name:28s} {statistics.median(times[name]):8.2f}   over the bare launch: {over:6.2f}")
    return result


def cupy_overhead(cupy):
    x = (cupy.arange(4 * 1024, dtype=cupy.float32) % 7 - 3).reshape(4, 1024)
    synchronize = cupy.cuda.Device().synchronize
    results = {
        "rt.sum(x, dim=1)": host_us(lambda: rt.sum(x, dim=1), synchronize),
        "cupy.sum(x, axis=1)": host_us(lambda: cupy.sum(x, axis=1), synchronize),
    }
    print_overhead("cupy", results)
    return results


def load(names, dtype):
    """The modules of the frameworks asked for that import and can run here."""
    modules = {}
    if "torch" in names:
        modules["torch"] = torch
    if "cupy" in names:
        if dtype == "bf16":
            print("cupy: skipped (CuPy has no bfloat16)")
        else:
            try:
                import cupy
                modules["cupy"] = cupy
            except ImportError as error:
                print(f"cupy: skipped ({error})")
    if "jax" in names:
        # JAX would otherwise take most of the GPU's memory for itself at its first use.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy  # noqa: F401  (jax_cases reads jax.numpy)
            if jax.default_backend() in ("gpu", "cuda"):
                modules["jax"] = jax
            else:
                print(f"jax: skipped (its backend is {jax.default_backend()}, not a GPU)")
        except ImportError as error:
            print(f"jax: skipped ({error})")
    return modules


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-elements", type=int, default=1 << 28)
    parser.add_argument("--ops", default="sum,max")
    parser.add_argument("--dtype", default="f32", choices=list(DTYPES))
    parser.add_argument("--frameworks", default="torch,cupy,jax")
    parser.add_argument("--quick", action="store_true", help="R in {16, 1000, 65537} x outputs in {7, 1000, 262144}")
    parser.add_argument("--shapes", help="only these grid shapes, comma-separated, each 'layout op R outputs'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--recheck", type=int, default=0, metavar="N",
                        help="time each shape below 1.0x again, alone, with N rounds")
    parser.add_argument("--json", metavar="PATH", help="also write the rows and the overhead as JSON")
    parser.add_argument("--overhead-only", action="store_true", help="only the host overhead, no shape grid")
    args = parser.parse_args()
    args.ops = args.ops.split(",")
    args.only = None
    if args.shapes:
        args.only = {" ".join(shape.split()) for shape in args.shapes.split(",")}
        named = {case.name() for case in grid(argparse.Namespace(**dict(vars(args), only=None, ops=list(OPS))))}
        for shape in args.only:
            if shape not in named:
                parser.error(f"--shapes: {shape!r} is not a shape of the grid ('layout op R outputs', "
                             f"e.g. 'columns sum 4097 7')")
        args.ops = [op for op in OPS if any(shape.split()[1] == op for shape in args.only)]
    for op in args.ops:
        if op not in OPS:
            parser.error(f"--ops: {op!r} is not one of {', '.join(OPS)}")
    frameworks = args.frameworks.split(",")
    for name in frameworks:
        if name not in ("torch", "cupy", "jax"):
            parser.error(f"--frameworks: {name!r} is not one of torch, cupy, jax")
    modules = load(frameworks, args.dtype)

    dtype = getattr(torch, DTYPES[args.dtype])
    es = torch.tensor([], dtype=dtype).element_size()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    versions = {"torch": torch.__version__}
    versions.update({name: m.__version__ for name, m in modules.items() if name != "torch"})
    device = torch.cuda.get_device_name(0)
    print(f"device: {device}, " + ", ".join(f"{name} {v}" for name, v in versions.items()) + f", dtype {args.dtype}")

    buffer_elements = max(args.max_elements, 8 * l2 // 4) + 1024
    data = (torch.arange(buffer_elements, device="cuda", dtype=torch.int64) % 7 - 3).to(dtype)
    torch.cuda.synchronize()
    rows = {}
    if args.overhead_only:
        modules = {name: m for name, m in modules.items() if name != "jax"}  # no overhead table of its own
    # Per framework: how to build its cases for given arguments, its clock, title and column.
    runs = {}
    if "torch" in modules:
        runs["torch"] = (lambda a: torch_cases(data, a, es, l2),
                         lambda: EventClock(lambda: torch.cuda.Event(enable_timing=True), lambda x, y: x.elapsed_time(y)),
                         "rt.<op>(x, dim=d) vs torch.sum/amax/amin/prod/mean(x, dim=d)", "torch us")
    if "cupy" in modules:
        cupy = modules["cupy"]
        runs["cupy"] = (lambda a: cupy_cases(cupy, data, a, es, l2),
                        lambda: EventClock(cupy.cuda.Event, cupy.cuda.get_elapsed_time),
                        "rt.<op>(x, dim=d) vs cupy.<op>(x, axis=d)", "cupy us")
    if "jax" in modules:
        runs["jax"] = (lambda a: jax_cases(modules["jax"], a, es, l2, buffer_elements * es), WallClock,
                       "rt.<op>(x, dim=d) vs jax.jit(jnp.<op>(x, axis=d)), wall clock", "jit us")
    for framework, (cases, clock, title, column) in runs.items():
        if args.overhead_only:
            break
        rows[framework] = run_framework(framework, title, column, cases(args), clock(), args, es)
        below = {f"{row['layout']} {row['op']} {row['R']} {row['outputs']}": row
                 for row in rows[framework] if row["speedup"] < 1.0}
        if args.recheck and below:
            again = argparse.Namespace(**dict(vars(args), only=set(below), rounds=args.recheck))
            for row in run_framework(framework, title + ", the shapes below 1.0x timed again", column, cases(again),
                                     clock(), again, es):
                first = below[f"{row['layout']} {row['op']} {row['R']} {row['outputs']}"]
                first.update(recheck_rt_us=row["rt_us"], recheck_fw_us=row["fw_us"],
                             recheck_speedup=row["speedup"], recheck_rounds=args.recheck)
        if framework == "cupy":
            cupy.get_default_memory_pool().free_all_blocks()

    print("\n== summary (speedup = framework time / rt time) ==")
    for framework, framework_rows in rows.items():
        summarize(framework, framework_rows)

    overhead = {"torch": torch_overhead()}
    if "cupy" in modules:
        overhead["cupy"] = cupy_overhead(modules["cupy"])

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "versions": versions, "dtype": args.dtype,
                       "rows": [row for framework_rows in rows.values() for row in framework_rows],
                       "host_overhead_us": overhead}, f, indent=1)


if __name__ == "__main__":
    main()
