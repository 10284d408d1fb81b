#!/usr/bin/env python3
"""reduce_tune against PyTorch on random N-d shapes and views, to find the shapes where
rt.<op>(x, dim=dims) is slower than torch's reduction of the same tensor, or wrong.

Cases are drawn from random.Random(--seed), so a seed and a count name the same cases on
any machine (the first N cases do not depend on --count). Each case has a rank of 1 to 4,
a total number of elements log-uniform between --min-elements and --max-elements, extents
that are mostly "odd" (primes, 2^k+-1, random integers; some powers of two, some 1, 2 or
3), a non-empty set of reduced dims (one, several or all), a dtype and an op drawn from
the lists. About 30% of the inputs are views of a contiguous base tensor:
  permute(p)  base of shape s' with s'[p[i]] = shape[i], x = base.permute(p)
  step2@d     base with extent 2*shape[d] along d, x = base[..., ::2 (along d), ...]
  offset+1    base of numel+1 elements, x = base[1:].view(shape) (a misaligned start)
The data are random integers in [-3, 3], so that float32 accumulation is exact (partial
sums stay far below 2^24): a float32 result is compared with rtol 1e-5, a 16-bit one
(rounded once from float32 by both sides) with rtol 1e-2, float64 with rtol 1e-12 and
integers exactly, mean likewise by its output type. Sums and products of int32 are asked
for in int64 on both sides (dtype=torch.int64, torch's own default); a mean of integers
(which torch has not) is skipped. A difference beyond that is a "MISMATCH" with its
largest absolute error (the run goes on); a case torch cannot reduce, or that does not
fit in memory, is skipped.

Timing is python_frameworks.py's, from Python so that each call's host overhead counts:
CUDA events around batches of back-to-back calls on the current stream (about 1 ms a
batch), the median of 5 to 25 batches; --rounds such medians, alternating rt and torch,
and their median. Inputs past a quarter of L2 rotate through copies of the base that
together exceed 4x L2 (torch_axes.rotation_count), each copy viewed the same way.

Usage: random_shapes.py [--count N] [--seed S] [--dtypes f32,f16,bf16] [--ops sum,max]
       [--min-elements N] [--max-elements N] [--rounds N] [--only I,J] [--json PATH]
       [--time-limit S] [--dry-run]
Prints "case dtype op shape view dims | rt us, torch us, speedup (torch / rt), rt GB/s"
(GB/s: the view's bytes over rt's time), then a summary with the worst cases and the
kernel rt.explain() names for them. --dry-run prints the cases only (no torch needed).
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time

# rt's dtype names and torch's; --dtypes draws from these.
TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "i32": "int32",
                "i64": "int64"}
DTYPE_NAMES = tuple(TORCH_DTYPES)
OP_NAMES = ("sum", "prod", "min", "max", "mean")
VIEW_SHARE = 0.3  # the share of cases that are views rather than contiguous tensors


def is_prime(n):
    if n < 2:
        return False
    return all(n % d for d in range(2, int(n ** 0.5) + 1))


def odd_extent(rng, target):
    """An extent near target: mostly odd sizes, sometimes round or tiny ones."""
    target = max(1, target)
    kind = rng.random()
    if kind < 0.08:
        return rng.choice((1, 2, 3))
    if kind < 0.40:
        n = rng.randint(max(2, target // 2), max(2, target * 2))
        while not is_prime(n):
            n += 1
        return n
    if kind < 0.60:
        return max(1, 2 ** max(1, round(math.log2(target))) + rng.choice((-1, 1)))
    if kind < 0.75:
        return 2 ** round(math.log2(target))
    return rng.randint(max(1, target // 2), target * 2)


class Case:
    """One random case: the shape of the reduced tensor x, how x views its base, the dims."""

    def __init__(self, index, rng, args):
        self.index = index
        rank = rng.choices((1, 2, 3, 4), weights=(15, 30, 30, 25))[0]  # rank 1 is a flat reduction
        self.shape = self.draw_shape(rng, rank, args.min_elements, args.max_elements)
        self.view, self.perm, self.step_dim = "contig", None, None
        if rng.random() < VIEW_SHARE:
            self.view = rng.choice(("permute", "step2", "offset") if rank > 1 else ("step2", "offset"))
            if self.view == "permute":
                identity = list(range(rank))
                self.perm = identity
                while self.perm == identity:
                    self.perm = rng.sample(identity, rank)
            elif self.view == "step2":
                self.step_dim = rng.randrange(rank)
        mode = rng.random()  # all dims, one dim, or several but not all
        if rank == 1 or mode < 0.15:
            self.dims = tuple(range(rank))
        elif mode < 0.55 or rank == 2:
            self.dims = (rng.randrange(rank),)
        else:
            self.dims = tuple(sorted(rng.sample(range(rank), rng.randint(2, rank - 1))))
        self.dtype = rng.choice(args.dtypes)
        self.op = rng.choice(args.ops)
        self.elements = math.prod(self.shape)

    @staticmethod
    def draw_shape(rng, rank, lo, hi):
        """Extents whose product is log-uniform in [lo, hi] (redrawn until it falls inside)."""
        for _ in range(1000):
            total = math.exp(rng.uniform(math.log(lo), math.log(hi)))
            cuts = [0.0] + sorted(rng.random() for _ in range(rank - 1)) + [1.0]
            shape = [odd_extent(rng, round(total ** (b - a))) for a, b in zip(cuts, cuts[1:])]
            if lo <= math.prod(shape) <= hi:
                return tuple(shape)
        return (lo,) + (1,) * (rank - 1)

    def dim_arg(self):
        return self.dims[0] if len(self.dims) == 1 else self.dims  # an int for one dim

    def base_shape(self):
        """The contiguous tensor x is a view of (offset+1: a flat one)."""
        if self.view == "permute":
            base = [0] * len(self.shape)
            for i, p in enumerate(self.perm):
                base[p] = self.shape[i]
            return tuple(base)
        if self.view == "step2":
            return tuple(e * 2 if d == self.step_dim else e for d, e in enumerate(self.shape))
        if self.view == "offset":
            return (self.elements + 1,)
        return self.shape

    def make_view(self, base):
        if self.view == "permute":
            return base.permute(*self.perm)
        if self.view == "step2":
            return base[(slice(None),) * self.step_dim + (slice(None, None, 2),)]
        if self.view == "offset":
            return base[1:].view(self.shape)
        return base

    def view_name(self):
        if self.view == "permute":
            return "permute(" + ",".join(map(str, self.perm)) + ")"
        return {"step2": f"step2@{self.step_dim}", "offset": "offset+1"}.get(self.view, "contig")

    def describe(self):
        shape = "x".join(map(str, self.shape))
        dims = "(" + ",".join(map(str, self.dims)) + ")"
        return f"{self.index:4d} {self.dtype:4s} {self.op:4s} {shape:>22s} {self.view_name():15s} {dims:9s}"


def generate(args):
    rng = random.Random(args.seed)
    return [Case(i, rng, args) for i in range(args.count)]


def tolerance(case):
    """(rtol, atol): exact integer sums in float32; one rounding of a 16-bit output."""
    if case.dtype in ("i32", "i64"):
        return (0.0, 0.0)
    return {"f32": (1e-5, 1e-6), "f64": (1e-12, 1e-12)}.get(case.dtype, (1e-2, 1e-3))


def check(torch, got, ref, case):
    """None where rt's result matches torch's, else what differs."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return f"shape/dtype {tuple(got.shape)} {got.dtype} vs {tuple(ref.shape)} {ref.dtype}"
    rtol, atol = tolerance(case)
    try:
        torch.testing.assert_close(got, ref, rtol=rtol, atol=atol, equal_nan=True)
        return None
    except AssertionError:
        a, b = got.double(), ref.double()
        error = torch.where(a == b, torch.zeros_like(a), (a - b).abs().nan_to_num(nan=math.inf))
        return f"max abs error {error.max().item():.4g}"


def run_case(case, env, args):
    """The row of one case, or a string saying why it was skipped."""
    torch, rt, pf, rotation_count = env["torch"], env["rt"], env["pf"], env["rotation_count"]
    dtype = getattr(torch, TORCH_DTYPES[case.dtype])
    es = torch.tensor([], dtype=dtype).element_size()
    # torch sums and multiplies int32 into int64; rt is asked for the same.
    kwargs = {"dtype": torch.int64} if case.dtype == "i32" and case.op in ("sum", "prod") else {}
    base_shape = case.base_shape()
    base_bytes = math.prod(base_shape) * es
    free, _ = torch.cuda.mem_get_info()
    if base_bytes * 2 > free * 0.9:  # the base and its int8 source or one copy
        return f"needs {base_bytes * 2 >> 20} MiB, {free >> 20} MiB free"
    rotations = rotation_count(base_bytes, env["l2"], int(free * 0.6))
    try:
        generator = torch.Generator(device="cuda").manual_seed(args.seed * 1000003 + case.index)
        base = torch.randint(-3, 4, base_shape, device="cuda", dtype=torch.int8, generator=generator).to(dtype)
        views = [case.make_view(base)] + [case.make_view(base.clone()) for _ in range(rotations - 1)]
    except torch.cuda.OutOfMemoryError:
        return f"out of memory building {rotations} x {base_bytes >> 20} MiB"
    rt_op, torch_op, dim = getattr(rt, case.op), pf.TORCH_FW_OPS[case.op], case.dim_arg()
    try:
        ref = torch_op(views[0], dim=dim, **kwargs)
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return f"torch has no {case.op} of this: {str(error).splitlines()[0][:80]}"
    try:
        problem = check(torch, rt_op(views[0], dim=dim, **kwargs), ref, case)
    except (rt.Error, TypeError, ValueError) as error:
        return {"case": case, "problem": f"rt raised {type(error).__name__}: {str(error).splitlines()[0][:100]}"}
    impls = {"rt": lambda s: rt_op(views[s], dim=dim, **kwargs),
             "torch": lambda s: torch_op(views[s], dim=dim, **kwargs)}
    try:
        ms = pf.compare(impls, rotations, env["clock"], args.rounds)
    except torch.cuda.OutOfMemoryError:
        return "out of memory while timing"
    return {"case": case, "problem": problem, "rotations": rotations, "rt_us": ms["rt"] * 1e3,
            "torch_us": ms["torch"] * 1e3, "speedup": ms["torch"] / ms["rt"],
            "rt_gbps": case.elements * es / (ms["rt"] * 1e6)}


def explain(env, case):
    """rt.explain() for the case's view (of an uninitialized base: only the layout counts)."""
    torch, rt = env["torch"], env["rt"]
    base = torch.empty(case.base_shape(), device="cuda", dtype=getattr(torch, TORCH_DTYPES[case.dtype]))
    try:
        return " ".join(str(rt.explain(case.make_view(base), dim=case.dim_arg(), op=case.op)).split())
    except Exception as error:  # noqa: BLE001  (a report, not a check)
        return f"explain failed: {error!r}"


def summarize(rows, skipped, env):
    timed = [row for row in rows if "speedup" in row]
    mismatches = [row for row in rows if row["problem"]]
    print("\n== summary (speedup = torch time / rt time) ==")
    print(f"cases timed: {len(timed)}, skipped: {len(skipped)}, mismatches: {len(mismatches)}")
    worst = []
    if timed:
        ratios = [row["speedup"] for row in timed]
        print(f"rt >= 1.0x torch on {sum(r >= 1.0 for r in ratios)} of {len(timed)}; "
              f"median {statistics.median(ratios):.2f}x, lowest {min(ratios):.2f}x")
        print(f"below 0.97x: {sum(r < 0.97 for r in ratios)}")
        worst = sorted(timed, key=lambda row: row["speedup"])[:10]
        print("worst cases:")
        for row in worst:
            row["explain"] = explain(env, row["case"])
            print(f"{row['case'].describe()} | {row['rt_us']:10.2f} {row['torch_us']:10.2f} "
                  f"{row['speedup']:6.2f}x\n       {row['explain']}")
    for row in mismatches:
        print(f"MISMATCH {row['case'].describe()}: {row['problem']}")
    return worst


def recheck(rows, env, args):
    """Times every case below 1.0x again, with args.recheck rounds: which losses hold.

    The summary above stays the sweep's result; this says how many of its losses are the
    noise of one timing (small cases move with the host by a microsecond or two)."""
    losses = [row for row in rows if "speedup" in row and not row["problem"] and row["speedup"] < 1.0]
    print(f"\n== recheck: the {len(losses)} cases below 1.0x, timed again with {args.recheck} rounds ==")
    again_args = argparse.Namespace(**{**vars(args), "rounds": args.recheck})
    out = []
    for row in losses:
        result = run_case(row["case"], env, again_args)
        env["torch"].cuda.empty_cache()
        if isinstance(result, str) or "speedup" not in result:
            print(f"{row['case'].describe()} | not timed again: {result if isinstance(result, str) else 'mismatch'}")
            continue
        print(f"{row['case'].describe()} | {row['speedup']:6.2f}x then {result['rt_us']:10.2f} "
              f"{result['torch_us']:10.2f} {result['speedup']:6.2f}x", flush=True)
        out.append({"index": row["case"].index, "first": row["speedup"], "again": result["speedup"],
                    "rt_us": result["rt_us"], "torch_us": result["torch_us"]})
    held = [r for r in out if r["again"] < 1.0]
    print(f"below 1.0x again: {len(held)} of {len(out)}; below 0.97x again: "
          f"{sum(r['again'] < 0.97 for r in out)}")
    return out


def json_row(row):
    case = row["case"]
    out = {"index": case.index, "dtype": case.dtype, "op": case.op, "shape": list(case.shape),
           "view": case.view_name(), "dims": list(case.dims), "match": not row["problem"]}
    out.update({k: v for k, v in row.items() if k != "case"})
    return out


def main():
    parser = argparse.ArgumentParser(description="reduce_tune vs torch on random N-d shapes and views")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dtypes", default="f32,f16,bf16")
    parser.add_argument("--ops", default="sum,max")
    parser.add_argument("--max-elements", type=int, default=1 << 27)
    parser.add_argument("--min-elements", type=int, default=1 << 12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="run only these case numbers (of the same seed), e.g. 17,42")
    parser.add_argument("--json", metavar="PATH", help="also write the rows and the summary as JSON")
    parser.add_argument("--dry-run", action="store_true", help="print the cases and exit (no torch needed)")
    parser.add_argument("--recheck", type=int, default=0, metavar="ROUNDS",
                        help="time the cases below 1.0x again with this many rounds (0: not), after the summary")
    parser.add_argument("--time-limit", type=float, default=0,
                        help="start no case after this many seconds (0: none), then summarize")
    args = parser.parse_args()
    args.dtypes, args.ops = args.dtypes.split(","), args.ops.split(",")
    for name, given, allowed in (("--dtypes", args.dtypes, DTYPE_NAMES), ("--ops", args.ops, OP_NAMES)):
        for item in given:
            if item not in allowed:
                parser.error(f"{name}: {item!r} is not one of {', '.join(allowed)}")
    if not 1 <= args.min_elements <= args.max_elements:
        parser.error("need 1 <= --min-elements <= --max-elements")
    cases = generate(args)
    if args.only:
        wanted = {int(i) for i in args.only.split(",")}
        cases = [case for case in cases if case.index in wanted]
    if args.dry_run:
        print(f"seed {args.seed}, {len(cases)} cases: case dtype op shape view dims (elements)")
        for case in cases:
            print(f"{case.describe()} ({case.elements} elements)")
        return

    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import python_frameworks as pf  # its timing and op table; it imports reduce_tune
    from torch_axes import rotation_count
    env = {"torch": torch, "rt": pf.rt, "pf": pf, "rotation_count": rotation_count,
           "l2": torch.cuda.get_device_properties(0).L2_cache_size,
           "clock": pf.EventClock(lambda: torch.cuda.Event(enable_timing=True), lambda a, b: a.elapsed_time(b))}
    device = torch.cuda.get_device_name(0)
    print(f"device: {device}, torch {torch.__version__}, seed {args.seed}, {len(cases)} cases")
    print(f"{'case':>4s} {'type':4s} {'op':4s} {'shape':>22s} {'view':15s} {'dims':9s} | {'rt us':>10s} "
          f"{'torch us':>10s} {'speedup':>7s} {'GB/s':>8s}")
    rows, skipped = [], []
    start = time.monotonic()
    for case in cases:
        if args.time_limit and time.monotonic() - start > args.time_limit:
            print(f"time limit: {args.time_limit:.0f} s passed, {case.index} cases run", flush=True)
            break
        result = run_case(case, env, args)
        torch.cuda.empty_cache()
        if isinstance(result, str):
            skipped.append({"index": case.index, "case": case.describe(), "reason": result})
            print(f"{case.describe()} | skipped: {result}", flush=True)
            continue
        rows.append(result)
        if "speedup" not in result:
            print(f"{case.describe()} | MISMATCH {result['problem']}", flush=True)
            continue
        mark = f"  MISMATCH {result['problem']}" if result["problem"] else ""
        print(f"{case.describe()} | {result['rt_us']:10.2f} {result['torch_us']:10.2f} {result['speedup']:6.2f}x "
              f"{result['rt_gbps']:8.1f}{mark}", flush=True)
    worst = summarize(rows, skipped, env)
    rechecked = recheck(rows, env, args) if args.recheck > 0 else []

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "args": vars(args),
                       "rows": [json_row(row) for row in rows], "skipped": skipped,
                       "worst": [row["case"].index for row in worst], "rechecked": rechecked}, f, indent=1)


if __name__ == "__main__":
    main()
