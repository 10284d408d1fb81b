#!/usr/bin/env python3
"""Black-box checker for the `reduce_tune` Python package (an outside reviewer's view).

Written from README.md ("Semantics" and "Python") and the package's public signatures
only; it does not reuse python/tests/test_gpu.py. Needs a CUDA GPU and PyTorch; CuPy and
JAX sections run where those import (and see the GPU). Run:

    PYTHONPATH=<dir holding the built reduce_tune package> python3 python/tests/blackbox.py

(Not collected by pytest: run by hand on a GPU machine.) Options: --budget SECONDS
(default 230: the bulk section stops starting new cases once only the reserve for the
later sections is left, and says how many it skipped), --workers N (threads for the bulk
section, default min(16, cores)), --only a,b (section names), --skip a,b, --no-large,
--seed N, --verbose, --cases A:B (a slice of the bulk cases, after their sort).

Where it stands (docs/BENCHMARKS.md, sets BD, BE and BY): on an H200 the bulk section ran
its 7600 cases on one thread, and on 16 threads since d55a39b (before it the process died
once the PyTorch fast path's cache of 4096 kinds was cleared). At 480320c (set BY) every
section but cupy passed in one run (7998 cases, one skipped: out= on another device needs
two GPUs), and the cupy section alone (--only cupy) passed its 523 cases.

Sections: bulk (every op x dtype, flat sizes, axis shapes, views; exact small-integer
data, "wide" data exact only in the promised accumulator, random normal data with a
rounding bound), nan (NaN/Inf/subnormals/overflow), out (out=), errors (bad input and
context health), streams (side streams, 8 threads x 200, back-to-back, CAI stream,
DLPack producers), large (past 2^31 elements), cupy, jax, isolated (pointer probes and
graph capture of new kinds, in a child process, since a wrong answer there could poison
the CUDA context), graphs (CUDA graph capture, replay), final (health).

Every case is wrapped: one failure never stops the rest. At the end: the first 30
failures in detail, then one summary line. Exit status 0 only when no case mismatched
or raised unexpectedly.

Reference values: computed by PyTorch on the GPU in int64 (wrapping mod 2^64, then
reduced to the output width: integer sums and products wrap like two's complement, and
addition and multiplication mod 2^k do not depend on the order) or float64, then rounded
ONCE, to nearest even, to the output type (a rounding written here, not torch's
float64 -> float16 cast, which goes through float32 and rounds twice).

README readings this script relies on (where the README is ambiguous, the comment at the
check says so and what is accepted):
  * output dtype = input dtype, except mean of an integer type = float64; dtype= may only
    widen: sum/prod i32->i64, u32->i64, f32->f64, f16/bf16->f32; mean f32->f64,
    f16/bf16->f32, ints->f64. min/max take no dtype=.
  * 16-bit floats accumulate in f32 and are rounded once at the end; f32 sums accumulate
    in f32, f64 in f64; widened sums accumulate in the wider type; integer sums/products
    wrap in the OUTPUT type; integer mean = int64 sum / n in double.
  * mean = sum in the accumulator type divided by n; a 16-bit mean is rounded once.
  * NaN propagates through sum, prod, min, max (and so mean); n = 0 gives the identity
    (sum 0, prod 1, min +inf / type max, max -inf / type min, mean NaN).
  * Errors: CPU array or unsupported dtype -> TypeError; bad dim, shape or out= ->
    ValueError (reduce_tune.InvalidArgument, a ValueError, for the C++ layer's checks).
  * PyTorch dim=() / [] means every axis; for other arrays (CuPy, JAX) no axis.
  * Each output is reduced in a fixed order: a repeated call gives the same bits.
"""
import os

# JAX must not preallocate most of the GPU (the large section needs ~16 GB). Set before
# anything can import jax.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import argparse
import math
import zlib
import random
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

torch = None
rt = None
cupy = None
np = None

# --------------------------------------------------------------------------------------
# Bookkeeping
# --------------------------------------------------------------------------------------


class Mismatch(Exception):
    """A promise of the README not kept (wrong value, dtype, shape, or error type)."""


class Skip(Exception):
    """A case that cannot run here (missing framework, one GPU, ...)."""


class Report:
    def __init__(self):
        self.lock = threading.Lock()
        self.cases = 0
        self.passed = 0
        self.mismatches = []
        self.exceptions = []
        self.skipped = []
        self.failures = []  # (kind, section, name, detail) in the order seen
        self.notes = []

    def add(self, section, name, status, detail=""):
        with self.lock:
            self.cases += 1
            if status == "pass":
                self.passed += 1
            elif status == "mismatch":
                self.mismatches.append((section, name, detail))
                self.failures.append(("MISMATCH", section, name, detail))
            elif status == "exception":
                self.exceptions.append((section, name, detail))
                self.failures.append(("EXCEPTION", section, name, detail))
            else:
                self.skipped.append((section, name, detail))

    def note(self, text):
        with self.lock:
            self.notes.append(text)


REPORT = Report()
VERBOSE = False
DEV = "cuda"  # the device the script's own tensors go to (a CPU dry run of the plumbing sets "cpu")
BULK_DEADLINE = None  # monotonic time after which bulk cases are skipped
HARD_DEADLINE = None  # after which every remaining case is skipped


def run_case(section, name, fn, deadline=None):
    limit = deadline if deadline is not None else HARD_DEADLINE
    if limit is not None and time.monotonic() > limit:
        REPORT.add(section, name, "skip", "time budget")
        return
    try:
        fn()
    except Mismatch as e:
        REPORT.add(section, name, "mismatch", str(e))
        if VERBOSE:
            print(f"  MISMATCH {section}: {name}: {e}", flush=True)
    except Skip as e:
        REPORT.add(section, name, "skip", str(e))
    except Exception as e:  # noqa: BLE001 (every unexpected exception is reported)
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        detail = f"{type(e).__name__}: {e}\n" + "".join(tb[-4:])
        REPORT.add(section, name, "exception", detail)
        if VERBOSE:
            print(f"  EXCEPTION {section}: {name}: {type(e).__name__}: {e}", flush=True)
    else:
        REPORT.add(section, name, "pass")


def expect(cond, msg):
    if not cond:
        raise Mismatch(msg)


def expect_raises(excs, fn, what, msg_contains=None):
    """fn() must raise one of `excs` (a type or tuple). Any other exception, or none, is a
    mismatch. msg_contains: substrings (any one, case-insensitive) the message must hold."""
    try:
        fn()
    except excs as e:
        if msg_contains:
            text = str(e).lower()
            if not any(s.lower() in text for s in msg_contains):
                raise Mismatch(f"{what}: raised {type(e).__name__} as promised, but the message does not mention "
                               f"any of {msg_contains}: {str(e)[:200]!r}")
        return e
    except Exception as e:  # noqa: BLE001
        names = excs.__name__ if isinstance(excs, type) else "/".join(x.__name__ for x in excs)
        raise Mismatch(f"{what}: expected {names}, got {type(e).__name__}: {str(e)[:200]}")
    names = excs.__name__ if isinstance(excs, type) else "/".join(x.__name__ for x in excs)
    raise Mismatch(f"{what}: expected {names}, nothing was raised")


def section_header(name):
    print(f"\n=== {name} === (t={time.monotonic() - T0:.1f}s)", flush=True)


def section_footer(name, before):
    c = REPORT.cases - before[0]
    m = len(REPORT.mismatches) - before[1]
    e = len(REPORT.exceptions) - before[2]
    s = len(REPORT.skipped) - before[3]
    print(f"--- {name}: {c} cases, {m} mismatches, {e} exceptions, {s} skipped "
          f"(t={time.monotonic() - T0:.1f}s)", flush=True)


def snapshot():
    return (REPORT.cases, len(REPORT.mismatches), len(REPORT.exceptions), len(REPORT.skipped))


T0 = time.monotonic()

# --------------------------------------------------------------------------------------
# Types, rules, reference
# --------------------------------------------------------------------------------------

ALL_DTYPES = ["int32", "int64", "uint32", "float32", "float64", "float16", "bfloat16"]
INTS = ("int32", "int64", "uint32")
FLOATS = ("float32", "float64", "float16", "bfloat16")
SIXTEEN = ("float16", "bfloat16")
OPS = ["sum", "prod", "min", "max", "mean"]
# dtype= widenings the README allows (sum and prod; mean separately).
WIDER = {"int32": "int64", "uint32": "int64", "float32": "float64", "float16": "float32", "bfloat16": "float32"}
WIDER_MEAN = {"float32": "float64", "float16": "float32", "bfloat16": "float32",
              "int32": "float64", "int64": "float64", "uint32": "float64"}
# (significand bits incl. the implicit one, smallest normal exponent, largest finite)
FMT = {"float16": (11, -14, 65504.0), "bfloat16": (8, -126, 3.3895313892515355e38),
       "float32": (24, -126, 3.4028234663852886e38), "float64": (53, -1022, 1.7976931348623157e308)}
UNIT = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}  # unit roundoff
IDENT_MIN = {"int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1, "uint32": 2 ** 32 - 1}
IDENT_MAX = {"int32": -2 ** 31, "int64": -2 ** 63, "uint32": 0}


def tdt(name):
    return getattr(torch, name)


def name_of(dtype):
    """'float32' etc. for a torch dtype."""
    return str(dtype).replace("torch.", "")


def default_out(op, in_name):
    return "float64" if (op == "mean" and in_name in INTS) else in_name


def acc_name(op, in_name, out_name):
    if in_name in SIXTEEN:
        return "float32"
    if in_name in INTS:
        return "float64"
    return out_name  # f32 -> f32 accumulates in f32; f32 -> f64 (widened) in f64


def widen(t):
    """A typed tensor's exact values: int64 for integers (uint32 unsigned), float64 else."""
    if t.dtype == torch.uint32:
        return t.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    if t.dtype in (torch.int32, torch.int64):
        return t.to(torch.int64)
    return t.to(torch.float64)


def to_typed(raw, name):
    """raw (int64/float64) -> the typed tensor; uint32 comes back as its int32 bits (call
    finish() after any view, which reinterprets them)."""
    if name == "uint32":
        bits = ((raw.to(torch.int64) & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
        return bits.to(torch.int32)
    return raw.to(tdt(name))


def finish(x, name):
    return x.view(torch.uint32) if name == "uint32" else x


def wrap_to(r, name):
    """An int64 result reduced mod 2^32 / 2^64 into the output type's range (as int64)."""
    if name == "int64":
        return r
    if name == "int32":
        return ((r & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
    if name == "uint32":
        return r & 0xFFFFFFFF
    raise ValueError(name)


def pow2(k):
    """2.0 ** k for an int64 tensor k (normal doubles), exactly: its bits. (torch.pow(2.0, k)
    on a GPU can be a double ulp off, which made 3.0 round to 2.9999999999999996.)"""
    return ((k + 1023) << 52).view(torch.float64)


def round_to(v, name):
    """float64 values rounded once, to nearest even, to `name`'s format (as float64)."""
    if name == "float64":
        return v
    if name == "float32":
        return v.to(torch.float32).to(torch.float64)  # a single IEEE rounding
    p, emin, maxv = FMT[name]
    a = v.abs()
    finite = torch.isfinite(v) & (a > 0)
    safe = torch.where(finite, a, torch.ones_like(a))
    _, e = torch.frexp(safe)  # safe = m * 2^e, 0.5 <= m < 1
    E = torch.clamp(e.to(torch.int64) - 1, min=emin)
    scale = pow2(E - (p - 1))
    r = torch.round(safe / scale) * scale  # torch.round: half to even
    r = torch.where(r > maxv, torch.full_like(r, math.inf), r)
    r = torch.copysign(r, v)
    return torch.where(finite, r, v)


def ulp(v, name):
    p, emin, _ = FMT[name]
    a = v.abs()
    ok = torch.isfinite(a) & (a > 0)
    safe = torch.where(ok, a, torch.ones_like(a))
    _, e = torch.frexp(safe)
    E = torch.clamp(e.to(torch.int64) - 1, min=emin)
    u = pow2(E - (p - 1))
    return torch.where(ok, u, torch.full_like(u, 2.0 ** (emin - (p - 1))))


def norm_dims(dim, rank, torch_dims=True):
    """The reduced axes as the README defines them (sorted, non-negative)."""
    if dim is None:
        return list(range(rank))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return list(range(rank)) if torch_dims else []
        ds = list(dim)
    else:
        ds = [dim]
    if rank == 0:
        return []
    return sorted({int(d) % rank for d in ds})


def out_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else e for i, e in enumerate(shape))
    return tuple(e for i, e in enumerate(shape) if i not in dims)


class Expect:
    __slots__ = ("op", "in_name", "out_name", "want", "exact", "abs_sum", "R", "shape")


def expected(op, x, dim, keepdim=False, out_name=None, torch_dims=True, in_name=None, w=None):
    """The README's result for rt.<op>(x, dim, keepdim, dtype=out_name)."""
    in_name = in_name or name_of(x.dtype)
    out_name = out_name or default_out(op, in_name)
    if w is None:
        w = widen(x)
    rank = w.dim()
    red = norm_dims(dim, rank, torch_dims)
    kept = [d for d in range(rank) if d not in red]
    kept_shape = [w.shape[d] for d in kept]
    R = 1
    for d in red:
        R *= w.shape[d]
    wr = w.permute(tuple(kept + red)).reshape(*kept_shape, R) if rank else w.reshape(1)
    is_int = in_name in INTS
    if op == "sum":
        r = wr.sum(-1)
    elif op == "prod":
        r = wr.prod(-1)
    elif op in ("min", "max"):
        if R == 0:
            if is_int:
                ident = IDENT_MIN[in_name] if op == "min" else IDENT_MAX[in_name]
            else:
                ident = math.inf if op == "min" else -math.inf
            r = torch.full(kept_shape, ident, dtype=w.dtype, device=w.device)
        else:
            r = wr.amin(-1) if op == "min" else wr.amax(-1)
    elif op == "mean":
        # Divided by a tensor: torch multiplies by the reciprocal for a scalar divisor,
        # which is not the correctly rounded quotient.
        total = wr.sum(-1).to(torch.float64)
        r = total / torch.full_like(total, float(R))  # R = 0: 0/0 = NaN
    else:
        raise ValueError(op)
    e = Expect()
    e.op, e.in_name, e.out_name, e.R = op, in_name, out_name, R
    e.shape = out_shape(tuple(w.shape), red, keepdim)
    if out_name in INTS:
        e.want = wrap_to(r.to(torch.int64), out_name).reshape(e.shape)
        e.exact = e.want
        e.abs_sum = None
    else:
        exact = r.to(torch.float64)
        e.exact = exact.reshape(e.shape)
        e.want = round_to(exact, out_name).reshape(e.shape)
        e.abs_sum = wr.abs().sum(-1).to(torch.float64).reshape(e.shape) if not is_int else None
    return e


def first_bad(eq, got, want, extra=None):
    bad = (~eq).nonzero()
    count = bad.shape[0]
    if eq.dim() == 0:
        idx = ()
    else:
        idx = tuple(bad[0].tolist())
    msg = f"{count} of {eq.numel()} outputs differ; first at {list(idx)}: got {got[idx].item()!r}, " \
          f"expected {want[idx].item()!r}"
    if extra is not None:
        msg += f" ({extra(idx)})"
    return msg


def compare(got, e, mode, what):
    """got: a torch tensor (the call's result, or a conversion of it)."""
    expect(name_of(got.dtype) == e.out_name, f"{what}: dtype {name_of(got.dtype)}, README promises {e.out_name}")
    expect(tuple(got.shape) == tuple(e.shape), f"{what}: shape {tuple(got.shape)}, expected {tuple(e.shape)}")
    if got.numel() == 0:
        return
    g = widen(got)
    if e.out_name in INTS:
        eq = g == e.want
        if not bool(eq.all()):
            raise Mismatch(f"{what}: " + first_bad(eq, g, e.want))
        return
    nan_ok = torch.isnan(g) & torch.isnan(e.want)
    eq = (g == e.want) | nan_ok
    tol = None
    if mode == "normal" and e.op in ("sum", "mean", "prod"):
        u = UNIT[acc_name(e.op, e.in_name, e.out_name)]
        last = ulp(e.exact, e.out_name)
        if e.op == "sum":
            tol = 64 * u * e.abs_sum + last
        elif e.op == "mean":
            tol = 64 * u * e.abs_sum / max(e.R, 1) + 2 * u * e.exact.abs() + last
        else:
            # A product's rounding errors need not cancel (factors near 1): torch's own f32
            # CPU product of 12M such factors drifted 28 sqrt(R) u. Still orders of magnitude
            # below what a 16-bit (or, for f64, a 32-bit) accumulator gives.
            # Factors this close to 1 round with a bias (their products' low bits), so the
            # errors of R of them add up rather than cancel: the worst case, R u, is the
            # bound (an f32 chunked-then-tree product of 12345679 such factors in numpy
            # came out 6.8% low).
            tol = (max(e.R, 1) + 16) * u * e.exact.abs() + last
        eq = eq | ((g - e.exact).abs() <= tol)
    if not bool(eq.all()):
        def extra(idx):
            s = f"exact {e.exact[idx].item()!r}"
            if tol is not None:
                s += f", tolerance {tol[idx].item():.3g}"
            elif e.op == "mean":
                d = abs(g[idx].item() - e.want[idx].item())
                u1 = ulp(e.want[idx].reshape(1), e.out_name).item()
                s += f", off by {d / u1:.3g} ulp of {e.out_name} (README: the sum divided by n, rounded once)"
            return s
        raise Mismatch(f"{what}: " + first_bad(eq, g, e.want, extra))


def same_bits(a, b, what):
    ga, gb = widen(a), widen(b)
    eq = ga == gb
    if ga.is_floating_point():
        eq = eq | (torch.isnan(ga) & torch.isnan(gb))
    if ga.numel() and not bool(eq.all()):
        raise Mismatch(f"{what}: a repeated call gave other values (README: same bits on every run): "
                       + first_bad(eq, gb, ga))


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


def gen_raw(shape, dtype, op, mode, g, R):
    """Values (int64 or float64, on the GPU) for a case, or None where the mode does not
    apply. small: exact everywhere; wide: exact only in the promised accumulator (and
    wrapping for integers); normal: random floats, checked with a rounding bound."""
    dev = DEV
    shape = tuple(shape)

    def ri(lo, hi):
        return torch.randint(lo, hi, shape, generator=g, device=dev, dtype=torch.int64)

    def rf():
        return torch.rand(shape, generator=g, device=dev, dtype=torch.float64)

    if mode == "small":
        if op == "prod":
            v = torch.ones(shape, dtype=torch.int64, device=dev)
            p2 = min(0.3, 3.0 / max(R, 1))  # a few factors of 2 per output: +-2^k, exact
            v = torch.where(rf() < p2, torch.full_like(v, 2), v)
            if dtype != "uint32":
                v = torch.where(rf() < 0.5, -v, v)
            return v
        return ri(0, 8) if dtype == "uint32" else ri(-4, 5)
    if mode == "wide":
        if dtype == "int32":
            v = ri(-2 ** 31, 2 ** 31)
            return v | 1 if op == "prod" else v  # odd factors keep a product mod 2^32 non-trivial
        if dtype == "int64":
            if op == "mean":
                return ri(-2 ** 40, 2 ** 40)  # no int64 wrap: README's "summed in int64" untested there
            v = ri(-2 ** 31, 2 ** 31) * 2 ** 32 + ri(0, 2 ** 32)
            return v | 1 if op == "prod" else v
        if dtype == "uint32":
            v = ri(0, 2 ** 32)
            return v | 1 if op == "prod" else v
        if op == "prod":
            return None
        if dtype == "float64":
            return ri(-2 ** 28, 2 ** 28).to(torch.float64)  # sums exact in f64, not in f32
        if dtype == "float32":
            return ri(-2 ** 23, 2 ** 23).to(torch.float64) * 2.0 ** -20  # exact f32 values; f64 sums exact
        if dtype == "float16":
            return ri(-1023, 1024).to(torch.float64) * 2.0 ** -8  # f32 sums exact, f16 sums not
        if dtype == "bfloat16":
            return ri(-127, 128).to(torch.float64) * 2.0 ** -4
    if mode == "normal":
        if dtype in INTS:
            return None
        z = torch.randn(shape, generator=g, device=dev, dtype=torch.float64)
        if op == "prod":
            return torch.exp(0.3 * z / math.sqrt(max(R, 1)))
        return z
    return None


def meta_shape(base_shape, view):
    m = torch.empty(tuple(base_shape), device="meta")
    return tuple((view(m) if view else m).shape)


def build(base_shape, dtype, op, mode, seed, view, R):
    """(x typed view, raw exists) or None."""
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    raw = gen_raw(base_shape, dtype, op, mode, g, R)
    if raw is None:
        return None
    xb = to_typed(raw, dtype)
    x = view(xb) if view else xb
    return finish(x, dtype)


def small_tensor(shape, dtype, op="sum", seed=0, mode="small", R=None, dim=-1):
    """A contiguous tensor of `mode` data; R (for products: how many factors of 2 an
    output gets) from the dims that will be reduced."""
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    if R is None:
        R = 1
        for d in norm_dims(dim, len(shape)):
            R *= shape[d]
    raw = gen_raw(shape, dtype, op, mode, g, R)
    return finish(to_typed(raw, dtype), dtype)


# --------------------------------------------------------------------------------------
# A reduction case (PyTorch input)
# --------------------------------------------------------------------------------------


def call_rt(op, x, dim, keepdim, out_name, style=0):
    """style varies how arguments are spelled: 0 keyword dim/keepdim, 1 keepdims=,
    2 dim omitted (only for dim None) / positional dim."""
    fn = getattr(rt, op)
    kw = {}
    if out_name is not None:
        kw["dtype"] = tdt(out_name)
    if style == 2:
        if dim is None and not keepdim:
            return fn(x, **kw)
        return fn(x, dim, keepdim, **kw)
    kw["dim"] = dim
    if keepdim or style == 0:
        kw["keepdims" if style == 1 else "keepdim"] = keepdim
    return fn(x, **kw)


_TORCH_DTYPE_RULE = {}


def torch_agrees(op, dtype):
    """Where the README says PyTorch's dtype rule is its own (floats keep their type,
    min/max keep any type, int64 sums stay int64): the dtype torch gives, else None.
    (README: an int32 sum stays int32 where PyTorch widens; an integer mean is float64
    where PyTorch refuses.)"""
    if not (dtype in FLOATS or (op in ("min", "max") and dtype in ("int32", "int64"))
            or (op in ("sum", "prod") and dtype == "int64")):
        return None
    key = (op, dtype)
    if key not in _TORCH_DTYPE_RULE:
        f = {"sum": torch.sum, "prod": torch.prod, "min": torch.amin, "max": torch.amax, "mean": torch.mean}[op]
        _TORCH_DTYPE_RULE[key] = f(torch.ones(2, dtype=tdt(dtype), device=DEV)).dtype
    return _TORCH_DTYPE_RULE[key]


def reduction_case(op, dtype, base_shape, view, view_desc, dim, keepdim, out_name, mode, seed, style=0):
    def fn():
        shape = meta_shape(base_shape, view)
        dims = norm_dims(dim, len(shape))
        R = 1
        for d in dims:
            R *= shape[d]
        x = build(base_shape, dtype, op, mode, seed, view, R)
        if x is None:
            raise Skip("mode not applicable")
        what = f"{op}<{dtype}{'->' + out_name if out_name else ''}> {view_desc} dim={dim!r} keepdim={keepdim} [{mode}]"
        got = call_rt(op, x, dim, keepdim, out_name, style)
        expect(isinstance(got, torch.Tensor), f"{what}: result is {type(got).__name__}, not a torch.Tensor")
        expect(got.device == x.device, f"{what}: result on {got.device}, input on {x.device}")
        expect(got.is_contiguous(), f"{what}: result not C-contiguous (strides {got.stride()})")
        e = expected(op, x, dim, keepdim, out_name)
        compare(got, e, mode, what)
        if out_name is None and torch_agrees(op, dtype) is not None:
            expect(got.dtype == torch_agrees(op, dtype),
                   f"{what}: dtype {got.dtype}, PyTorch's (which the README follows here) {torch_agrees(op, dtype)}")
        got2 = call_rt(op, x, dim, keepdim, out_name, style)  # a known kind: the fast path
        same_bits(got, got2, what)
    return fn


# --------------------------------------------------------------------------------------
# Section: bulk (parallel)
# --------------------------------------------------------------------------------------

FLAT_SIZES = [1, 2, 3, 7, 31, 33, 127, 1000, 1023, 1025, 4097, 65535, 65537, (1 << 20) - 1, (1 << 20) + 1,
              3 * 2 ** 20 + 7, 12345679]

AXIS_SHAPES = [
    ((3, 5, 7), [0, 1, 2, -1, -2, (0, 2), (2, 0), (0, 1, 2), (1, 2), [0, 1], None]),
    ((1, 1000003), [0, 1, -1, (0, 1), None]),
    ((1000003, 1), [0, 1, -2, (0, 1)]),
    ((17, 1, 33), [0, 1, 2, (0, 1), (1, 2), (0, 2), -3, None]),
    ((2, 3, 4, 5, 6), [0, 2, 4, -1, (1, 3), (0, 2, 4), (-1, -2), (0, 1, 2, 3), (1, 2, 3, 4), None]),
]


def _as_strided(size, stride, offset=0):
    return lambda t: t.as_strided(size, stride, offset)


VIEWS = [
    # (description, base shape, view, dims)
    ("x[1:] of (4099,)", (4099,), lambda t: t[1:], [None, 0]),
    ("x[3:-5] of (2^20+9,)", ((1 << 20) + 9,), lambda t: t[3:-5], [None]),
    ("x[::3] of (30001,)", (30001,), lambda t: t[::3], [None, 0]),
    ("x[:, 1:] of (64,1001)", (64, 1001), lambda t: t[:, 1:], [1, 0, None]),
    ("x[..., ::2] of (8,9,1000)", (8, 9, 1000), lambda t: t[..., ::2], [-1, 0, (0, 1), None]),
    ("x.t() of (129,257)", (129, 257), lambda t: t.t(), [0, 1, None]),
    ("permute(2,0,1) of (6,7,300)", (6, 7, 300), lambda t: t.permute(2, 0, 1), [0, 1, 2, (0, 2), None]),
    ("permute(3,1,4,0,2) of (2,3,4,5,6)", (2, 3, 4, 5, 6), lambda t: t.permute(3, 1, 4, 0, 2),
     [(1, 3), 0, -1, (0, 2, 4)]),
    ("expand (1,500)->(300,500)", (1, 500), lambda t: t.expand(300, 500), [0, 1, None]),
    ("expand (300,1)->(300,50)", (300, 1), lambda t: t.expand(300, 50), [0, 1]),
    ("expand (4,1,7)->(4,9,7)", (4, 1, 7), lambda t: t.expand(4, 9, 7), [1, (0, 1), 2]),
    ("x[None,:,None].expand(5,37,3)", (37,), lambda t: t[None, :, None].expand(5, 37, 3), [0, 1, (0, 2), None]),
    ("as_strided overlapping rows (50,100)/(10,1)", (1000,), _as_strided((50, 100), (10, 1)), [1, 0, None]),
    ("as_strided (30,40)/(1,1)", (100,), _as_strided((30, 40), (1, 1)), [0, 1, None]),
    ("as_strided zero stride (7,11,13)/(0,13,1)", (200,), _as_strided((7, 11, 13), (0, 13, 1)), [0, (1, 2), 2]),
    ("as_strided offset 3 (33,65)/(70,1)", (5000,), _as_strided((33, 65), (70, 1), 3), [0, 1]),
    ("0-d", (), None, [None, 0, -1, ()]),
    ("0-d view x[5] of (10,)", (10,), lambda t: t[5], [None, 0]),
    ("zero-size (0,5)", (0, 5), None, [0, 1, None, (0, 1)]),
    ("zero-size (3,0,4)", (3, 0, 4), None, [1, 2, (0, 2), 0, None]),
    ("transpose(1,2) of (3,5,40,64)", (3, 5, 40, 64), lambda t: t.transpose(1, 2), [-1, (1, 3)]),
    ("permute(2,1,0) of (7,300,9)", (7, 300, 9), lambda t: t.permute(2, 1, 0), [1]),
    ("x[:, ::2] of (1024,64)", (1024, 64), lambda t: t[:, ::2], [0]),
    ("x[::3].unsqueeze(1) of (3000,)", (3000,), lambda t: t[::3].unsqueeze(1), [1]),
    ("x[1:, 1:] of (100,37)", (100, 37), lambda t: t[1:, 1:], [0]),
    ("rank 8 (2,1,3,1,2,3,1,2)", (2, 1, 3, 1, 2, 3, 1, 2), None, [(0, 2, 4), None, 7]),
    ("x[:, 1:] of (3,100003)", (3, 100003), lambda t: t[:, 1:], [1]),
    ("dim=[] list of (5,7)", (5, 7), None, [[], [1], [-1, 0]]),
]


def bulk_specs(scale):
    """(priority, name, fn), lowest priority first, so that if the time budget ends the
    broad exact coverage has run: 0 flat exact; 1 axis exact; 2 views exact; 3 wide and
    normal data (accumulator types, rounding); 4 dtype= widenings; 5 the other keepdim."""
    specs = []
    seed = [1000]

    def add(prio, op, dtype, base_shape, view, desc, dim, keepdim, out_name, mode, style=0):
        seed[0] += 1
        name = f"{op}<{dtype}{'->' + out_name if out_name else ''}> {desc} dim={dim!r} keepdim={keepdim} [{mode}]"
        specs.append((prio, name, reduction_case(op, dtype, base_shape, view, desc, dim, keepdim, out_name, mode,
                                                 seed[0], style)))

    def wider(op, dtype):
        if op in ("sum", "prod"):
            return WIDER.get(dtype)
        if op == "mean":
            return WIDER_MEAN.get(dtype)
        return None

    sizes = FLAT_SIZES if scale >= 1 else [s for i, s in enumerate(FLAT_SIZES) if i % 2 == 0]
    flat_dims = [None, 0, -1, (0,), [0], None, ()]
    # 0: flat, exact data, every op x dtype x size (dims spelled several ways).
    for i, n in enumerate(sizes):
        dim = flat_dims[i % len(flat_dims)]
        for op in OPS:
            for dtype in ALL_DTYPES:
                add(0, op, dtype, (n,), None, f"flat n={n}", dim, i % 3 == 1, None, "small", style=i % 3)
                w = wider(op, dtype)
                if w and i % 3 == 0:
                    add(4, op, dtype, (n,), None, f"flat n={n}", None, False, w, "small")
    # A contiguous N-d tensor reduced everywhere is one contiguous run too.
    for shape in ((37, 333667), (1023, 1025), (2, 3, 5, 7, 11)):
        for op in OPS:
            for dtype in ALL_DTYPES:
                add(0, op, dtype, shape, None, f"contiguous {shape}", None, False, None, "small")
    # 1: axis shapes, exact data; 5: the same with the other keepdim.
    for shape, dims in AXIS_SHAPES:
        for j, dim in enumerate(dims):
            for op in OPS:
                for dtype in ALL_DTYPES:
                    add(1, op, dtype, shape, None, f"shape {shape}", dim, j % 2 == 1, None, "small", style=j % 3)
                    add(5, op, dtype, shape, None, f"shape {shape}", dim, j % 2 == 0, None, "small")
                    w = wider(op, dtype)
                    if w and j % 2 == 0:
                        add(4, op, dtype, shape, None, f"shape {shape}", dim, j % 4 == 0, w, "small")
    # 2: views, exact data; every op, three dtypes per (view, dim, op) in rotation (every
    # dtype per view over its dims and ops); scale >= 2 takes every dtype.
    k = 0
    for desc, base, view, dims in VIEWS:
        for dim in dims:
            for op in OPS:
                for r in range(7 if scale >= 2 else 3):
                    dtype = ALL_DTYPES[(k + 3 * r) % 7] if scale < 2 else ALL_DTYPES[r]
                    add(2, op, dtype, base, view, desc, dim, k % 5 == 0, None, "small", style=k % 3)
                k += 1
    # 3: wide data (exact only in the promised accumulator, wrapping for integers) and
    # random normal data (checked against a rounding bound).
    for i, n in enumerate(sizes):
        for op in OPS:
            for dtype in ALL_DTYPES:
                if dtype == "float32":
                    if op in ("sum", "mean"):
                        add(3, op, dtype, (n,), None, f"flat n={n}", None, False, "float64", "wide")
                    elif op in ("min", "max"):
                        add(3, op, dtype, (n,), None, f"flat n={n}", None, False, None, "wide")
                elif not (dtype in FLOATS and op == "prod"):
                    add(3, op, dtype, (n,), None, f"flat n={n}", None, False, None, "wide")
                    if dtype in INTS and op in ("sum", "prod") and i % 4 == 1:
                        add(3, op, dtype, (n,), None, f"flat n={n}", None, False, wider(op, dtype), "wide")
            for dtype in FLOATS:
                add(3, op, dtype, (n,), None, f"flat n={n}", None, False, None, "normal")
                w = wider(op, dtype)
                if w and op != "prod" and i % 3 == 2:
                    add(3, op, dtype, (n,), None, f"flat n={n}", None, False, w, "normal")
    for shape, dims in AXIS_SHAPES:
        for j, dim in enumerate(dims):
            for op in OPS:
                for dtype in ALL_DTYPES:
                    if dtype == "float32":
                        if op in ("sum", "mean"):
                            add(3, op, dtype, shape, None, f"shape {shape}", dim, False, "float64", "wide")
                        elif op in ("min", "max") and j % 2:
                            add(3, op, dtype, shape, None, f"shape {shape}", dim, False, None, "wide")
                    elif not (dtype in FLOATS and op == "prod") and (dtype in INTS or j % 2 == 0):
                        add(3, op, dtype, shape, None, f"shape {shape}", dim, False, None, "wide")
                for dtype in FLOATS:
                    add(3, op, dtype, shape, None, f"shape {shape}", dim, j % 3 == 0, None, "normal")
    for desc, base, view, dims in VIEWS[:8]:
        for op in ("sum", "mean", "prod"):
            for dtype in FLOATS:
                add(3, op, dtype, base, view, desc, dims[0], False, None, "normal")
    specs.sort(key=lambda s: s[0])
    return specs


def section_bulk(args):
    specs = bulk_specs(args.scale)
    if args.cases:
        a, b = (int(v) if v else None for v in args.cases.split(":"))
        specs = specs[a:b]
    print(f"{len(specs)} cases on {args.workers} threads; new cases stop at "
          f"t={BULK_DEADLINE - T0:.0f}s", flush=True)
    done = [0]
    lock = threading.Lock()

    def task(item):
        _, name, fn = item
        run_case("bulk", name, fn, deadline=BULK_DEADLINE)
        with lock:
            done[0] += 1
            if done[0] % 500 == 0:
                print(f"  bulk: {done[0]}/{len(specs)} (t={time.monotonic() - T0:.1f}s, "
                      f"{len(REPORT.mismatches)} mismatches, {len(REPORT.exceptions)} exceptions so far)", flush=True)

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        list(pool.map(task, specs))
    torch.cuda.synchronize()


# --------------------------------------------------------------------------------------
# Section: NaN, Inf, subnormals, 16-bit overflow
# --------------------------------------------------------------------------------------


def special_case(op, dtype, base_shape, dim, setter, view=None, desc="", out_name=None, base_fill=None):
    def fn():
        shape = meta_shape(base_shape, view)
        R = max(1, math.prod(shape[d] for d in norm_dims(dim, len(shape))))
        if base_fill is not None:
            raw = torch.full(base_shape, base_fill, dtype=torch.float64, device=DEV)
        else:
            g = torch.Generator(device=DEV)
            g.manual_seed(zlib.crc32(f"{op} {dtype} {desc}".encode()))
            raw = gen_raw(base_shape, dtype, op, "small", g, R).to(torch.float64)
        setter(raw)
        xb = to_typed(raw, dtype)
        x = view(xb) if view else xb
        what = f"{op}<{dtype}{'->' + out_name if out_name else ''}> {desc} dim={dim!r}"
        got = call_rt(op, x, dim, False, out_name)
        compare(got, expected(op, x, dim, False, out_name), "small", what)
    return fn


def section_nan(args):
    nan, inf = math.nan, math.inf
    cases = []

    def s_rows(r):
        r[2, 517] = nan
        r[4, 0] = nan
        r[5, 999] = nan
        r[1, :] = -inf
        r[3, 10] = inf
        r[3, 20] = -inf

    def s_long(r):
        r[1, 77777] = nan
        r[2, :] = -inf
        r[3, 5] = inf
        r[3, 99999] = -inf

    def s_general(r):
        r[3, 20, 4] = nan
        r[0, 0, 0] = inf

    def s_tail(r):
        r[-1] = nan

    def s_head(r):
        r[1] = nan  # the first element of x[1:]

    def s_mix(r):
        r[10] = inf
        r[4000] = -inf

    def s_none(r):
        pass

    for dtype in FLOATS:
        for op in OPS:
            cases += [
                (f"NaN rows (6,1000) {op}<{dtype}>", special_case(op, dtype, (6, 1000), 1, s_rows, desc="NaN rows (6,1000)")),
                (f"NaN columns (1000,6) {op}<{dtype}>", special_case(op, dtype, (6, 1000), 0, s_rows, view=lambda t: t.t(),
                                                       desc="NaN columns (6,1000).t()")),
                (f"NaN columns contiguous {op}<{dtype}>", special_case(op, dtype, (1000, 6), 0,
                                                         lambda r: (s_rows(r.t())), desc="NaN columns (1000,6)")),
                (f"NaN long rows {op}<{dtype}>", special_case(op, dtype, (4, 100003), 1, s_long, desc="NaN long rows (4,100003)")),
                (f"NaN general {op}<{dtype}>", special_case(op, dtype, (6, 50, 7), (1, 2), s_general,
                                              view=lambda t: t.permute(2, 0, 1), desc="NaN permuted (6,50,7)")),
                (f"NaN flat tail {op}<{dtype}>", special_case(op, dtype, ((1 << 20) + 1,), None, s_tail,
                                                desc="NaN at the last of 2^20+1")),
                (f"NaN head of x[1:] {op}<{dtype}>", special_case(op, dtype, ((1 << 20) + 3,), None, s_head,
                                                    view=lambda t: t[1:], desc="NaN first of x[1:]")),
                (f"all -inf {op}<{dtype}>", special_case(op, dtype, (5000,), None, s_none, desc="all -inf (5000)",
                                           base_fill=-inf)),
                (f"all +inf rows {op}<{dtype}>", special_case(op, dtype, (3, 777), 1, s_none, desc="all +inf (3,777)",
                                                base_fill=inf)),
                (f"+inf and -inf {op}<{dtype}>", special_case(op, dtype, (4097,), None, s_mix, desc="+inf,-inf (4097)")),
            ]
        # Subnormals kept (README: "subnormals are kept"); every value exact.
        tiny = {"float32": 2.0 ** -140, "float64": 2.0 ** -1070, "float16": 2.0 ** -20, "bfloat16": 2.0 ** -130}[dtype]
        count = {"float32": 1000, "float64": 1000, "float16": 10, "bfloat16": 8}[dtype]
        for op in ("sum", "mean", "max", "min"):
            cases.append((f"subnormal {dtype} {op}",
                          special_case(op, dtype, (count,), None, s_none, desc=f"subnormal {tiny!r} x{count}",
                                       base_fill=tiny)))
            cases.append((f"subnormal rows {dtype} {op}",
                          special_case(op, dtype, (3, count), 1, s_none, desc=f"subnormal rows {tiny!r}",
                                       base_fill=tiny)))
        if dtype in SIXTEEN:
            cases.append((f"subnormal {dtype} sum->f32",
                          special_case("sum", dtype, (count,), None, s_none, desc="subnormal -> f32",
                                       out_name="float32", base_fill=tiny)))
    # f16 past 65504: +Inf in f16, exact in f32; the mean does not overflow.
    for shape, dim in (((70001,), None), ((2, 70001), 1), ((70001, 3), 0)):
        for op, out in (("sum", None), ("sum", "float32"), ("mean", None), ("mean", "float32")):
            cases.append((f"f16 overflow {shape} {op} {out}",
                          special_case(op, "float16", shape, dim, s_none, desc=f"ones {shape}", out_name=out,
                                       base_fill=1.0)))
    # bf16/f32 totals past float's range: +Inf.
    for dtype in ("bfloat16", "float32"):
        cases.append((f"{dtype} past float max",
                      special_case("sum", dtype, (1000,), None, s_none, desc="1e38 x1000", base_fill=1e38)))
    # 16-bit means whose quotient is a 16-bit subnormal, ties included (row i holds one
    # value (2i+1) * tiny and zeros: the quotient (2i+1)/n * tiny, n = 2 a tie to even).
    for dtype, tiny in (("float16", 2.0 ** -24), ("bfloat16", 2.0 ** -133)):
        for n in (2, 3, 7):
            def setter(r, tiny=tiny):
                r[:, 0] = torch.arange(1, 2 * r.shape[0], 2, dtype=torch.float64, device=r.device) * tiny
            for out in (None, "float32"):
                cases.append((f"mean<{dtype}{'->' + out if out else ''}> of subnormals, n={n}",
                              special_case("mean", dtype, (8, n), 1, setter, out_name=out, base_fill=0.0,
                                           desc=f"subnormal quotients n={n}")))
    # A 16-bit mean is rounded ONCE (README): n ones and k twos, where the float quotient
    # (n + k) / n lands on a 16-bit midpoint that the exact quotient does not reach, so a
    # float quotient rounded again to 16 bits is one 16-bit ulp off. (Found by search:
    # f16 8283 + 182 -> 1.0224609375 once, 1.021484375 twice; bf16 153599 + 600 -> 1.0078125
    # once, 1.0 twice.)
    for dtype, n, k in (("float16", 8283, 182), ("float16", 8387, 86), ("bfloat16", 153599, 600),
                        ("bfloat16", 76799, 300)):
        idx = [i * (n // k) for i in range(k)]
        for layout, shape, dim, setter in (
                ("flat", (n,), None, lambda r, idx=idx: r.__setitem__(idx, 2.0)),
                ("rows", (3, n), 1, lambda r, idx=idx: r.__setitem__((slice(None), idx), 2.0)),
                ("columns", (n, 5), 0, lambda r, idx=idx: r.__setitem__(idx, 2.0)),
                ("transposed", (n, 3), 0, lambda r, idx=idx: r.__setitem__(idx, 2.0))):
            view = (lambda t: t.t().contiguous().t()) if layout == "transposed" else None
            for op, out in (("mean", None), ("mean", "float32"), ("sum", None)):
                cases.append((f"{op}<{dtype}{'->' + out if out else ''}> rounded once, {layout} n={n} k={k}",
                              special_case(op, dtype, shape, dim, setter, view=view, out_name=out,
                                           desc=f"{layout} {n} ones + {k} twos", base_fill=1.0)))
    for name, fn in cases:
        run_case("nan", name, fn)
    torch.cuda.synchronize()


# --------------------------------------------------------------------------------------
# Section: out=
# --------------------------------------------------------------------------------------


def section_out(args):
    dev = DEV
    S = "out"

    x = small_tensor((33, 65), "float32", seed=1)

    def good_repeated():
        o = torch.empty(33, device=dev)
        for i in range(3):
            r = rt.sum(x, dim=1, out=o)
            expect(r is o, f"call {i}: out= call did not return the out tensor itself")
            compare(o, expected("sum", x, 1), "small", f"sum into out=, call {i}")
    run_case(S, "out= correct, repeated (fast path)", good_repeated)

    def keepdim_out():
        o = torch.empty(33, 1, device=dev)
        r = rt.max(x, dim=1, keepdim=True, out=o)
        expect(r is o, "not the out tensor")
        compare(o, expected("max", x, 1, True), "small", "max keepdim into out=")
    run_case(S, "out= keepdim shape", keepdim_out)

    def zero_d_out():
        o = torch.empty((), device=dev)
        rt.sum(x, out=o)
        compare(o, expected("sum", x, None), "small", "sum into a 0-d out=")
        expect_raises(ValueError, lambda: rt.sum(x, out=torch.empty(1, device=dev)), "0-d result into shape (1,)")
    run_case(S, "out= 0-d", zero_d_out)

    def guarded():
        big = torch.full((200,), -7.0, device=dev)
        o = big[50:83]
        rt.sum(x, dim=1, out=o)
        torch.cuda.synchronize()
        expect(bool((big[:50] == -7).all()) and bool((big[83:] == -7).all()),
               "out= wrote outside the out view (guard values changed)")
        compare(o, expected("sum", x, 1), "small", "sum into a view with offset")
    run_case(S, "out= view with offset, guards intact", guarded)

    def zero_size():
        xz = torch.empty(0, 5, device=dev)
        o0 = torch.empty(0, device=dev)
        expect(rt.sum(xz, dim=1, out=o0) is o0, "empty out= not returned")
        o5 = torch.full((5,), 9.0, device=dev)
        rt.prod(xz, dim=0, out=o5)
        compare(o5, expected("prod", xz, 0), "small", "prod of nothing into out= (ones)")
        rt.min(xz, dim=0, out=o5)
        compare(o5, expected("min", xz, 0), "small", "min of nothing into out= (+inf)")
    run_case(S, "out= zero-size", zero_size)

    xi = small_tensor((40, 300), "int32", mode="wide", seed=2)

    def dtype_and_out():
        o = torch.empty(40, dtype=torch.int64, device=dev)
        rt.sum(xi, dim=1, dtype=torch.int64, out=o)
        compare(o, expected("sum", xi, 1, False, "int64"), "wide", "i32 sum dtype=int64 into int64 out=")
    run_case(S, "out= with dtype=", dtype_and_out)

    def type_error_or_values(call, o, want, kind, label, note):
        # Accepted either as a TypeError or as the right values in `o` (the README is silent).
        try:
            call()
        except TypeError:
            REPORT.note(note + ": TypeError (accepted)")
            return
        compare(o, want, kind, label)
        REPORT.note(note + ": accepted, values checked")

    def implicit_widening():
        # README ambiguity: out= of a wider dtype than the default, no dtype= (int32 sum
        # into int64). The README does not say whether out='s dtype acts as dtype=: then the
        # widened (not wrapped) sums.
        o = torch.empty(40, dtype=torch.int64, device=dev)
        type_error_or_values(lambda: rt.sum(xi, dim=1, out=o), o, expected("sum", xi, 1, False, "int64"), "wide",
                             "i32 sum into int64 out= without dtype= (must then be the widened sum, not a wrapped "
                             "int32)", "out= int64 for an int32 sum without dtype=")
    run_case(S, "out= implicit widening (ambiguous)", implicit_widening)

    def sixteen_minmax_f32():
        # README (C++ semantics): 16-bit floats write their type or float, "also for prod,
        # min, max and mean". Python's min/max take no dtype=, so only out= can ask.
        h = small_tensor((20, 333), "float16", seed=3)
        o = torch.empty(20, dtype=torch.float32, device=dev)
        type_error_or_values(lambda: rt.max(h, dim=1, out=o), o, expected("max", h, 1, False, "float32"), "small",
                             "max<f16> into float32 out=", "rt.max(f16, out=f32)")
    run_case(S, "16-bit max into f32 out= (ambiguous)", sixteen_minmax_f32)

    bad = [
        ("wrong length", ValueError, lambda: rt.sum(x, dim=1, out=torch.empty(34, device=dev))),
        ("keepdim shape without keepdim", ValueError, lambda: rt.sum(x, dim=1, out=torch.empty(33, 1, device=dev))),
        ("keepdim=True into flat shape", ValueError,
         lambda: rt.sum(x, dim=1, keepdim=True, out=torch.empty(33, device=dev))),
        ("f32 sum into f16", TypeError, lambda: rt.sum(x, dim=1, out=torch.empty(33, dtype=torch.float16, device=dev))),
        ("i32 sum into f32", TypeError, lambda: rt.sum(xi, dim=1, out=torch.empty(40, device=dev))),
        ("f32 mean into f16", TypeError,
         lambda: rt.mean(x, dim=1, out=torch.empty(33, dtype=torch.float16, device=dev))),
        ("f32 max into f64", TypeError,
         lambda: rt.max(x, dim=1, out=torch.empty(33, dtype=torch.float64, device=dev))),
        ("dtype=int64 with int32 out", TypeError,
         lambda: rt.sum(xi, dim=1, dtype=torch.int64, out=torch.empty(40, dtype=torch.int32, device=dev))),
        ("non-contiguous out (every other)", ValueError,
         lambda: rt.sum(x, dim=1, out=torch.empty(33, 2, device=dev)[:, 0])),
        ("transposed out", ValueError,
         lambda: rt.sum(small_tensor((7, 5, 3), "float32"), dim=2, out=torch.empty(5, 7, device=dev).t())),
        ("broadcast (stride 0) out", ValueError,
         lambda: rt.sum(x, dim=1, out=torch.empty(1, device=dev).expand(33))),
        ("CPU out", (TypeError, ValueError), lambda: rt.sum(x, dim=1, out=torch.empty(33))),
    ]
    for what, exc, call in bad:
        # Twice: the second time the kind of call (input side) is known to the fast path.
        run_case(S, f"bad out=: {what}",
                 lambda exc=exc, call=call, what=what: (expect_raises(exc, call, what),
                                                        expect_raises(exc, call, what + " (repeated)")))

    def after_bad_still_good():
        o = torch.empty(33, device=dev)
        rt.sum(x, dim=1, out=o)
        compare(o, expected("sum", x, 1), "small", "good out= after the bad ones")
    run_case(S, "good out= after errors", after_bad_still_good)

    def other_device():
        if torch.cuda.device_count() < 2:
            raise Skip("one GPU: out= on another device not testable")
        expect_raises((ValueError, TypeError), lambda: rt.sum(x, dim=1, out=torch.empty(33, device="cuda:1")),
                      "out= on cuda:1 for an input on cuda:0")
    run_case(S, "out= on another device", other_device)

    def overlap_axis():
        # README: "an output that overlaps the input view throw[s] InvalidArgument" (axes).
        x5 = small_tensor((5, 4), "float32", seed=4)
        before = x5.clone()
        expect_raises(ValueError, lambda: rt.sum(x5, dim=0, out=x5[0]), "axis sum into a row of its own input")
        torch.cuda.synchronize()
        expect(bool(torch.equal(x5, before)), "the refused call changed the input")
    run_case(S, "out= overlapping the input (axis)", overlap_axis)

    def overlap_flat(dtype, n, where):
        # README ambiguity: the C++ flat API says "the output may point into the input: the
        # input is read completely before the output is written", the axis API refuses
        # overlap. A Python dim=None call over a contiguous tensor is a flat reduction.
        # Accepted: ValueError, or the right total with nothing else changed.
        def fn():
            v = small_tensor((n,), dtype, seed=5)
            total = expected("sum", v, None)
            before = v.clone()
            try:
                rt.sum(v, out=v[where])
            except ValueError:
                REPORT.note(f"flat sum of {dtype} into its own element: ValueError (accepted)")
                return
            torch.cuda.synchronize()
            compare(v[where], total, "small", f"flat {dtype} sum of n={n} written into its own element {where}")
            mask = torch.ones(n, dtype=torch.bool, device=dev)
            mask[where] = False
            expect(bool(torch.equal(v[mask], before[mask])), "other input elements changed")
        return fn
    run_case(S, "out= = an element of the input (flat int32, ambiguous)", overlap_flat("int32", 100003, 0))
    run_case(S, "out= = an element of the input (flat f32, ambiguous)", overlap_flat("float32", (1 << 20) + 1, -1))
    torch.cuda.synchronize()


# --------------------------------------------------------------------------------------
# Section: bad input; the CUDA context survives
# --------------------------------------------------------------------------------------


class CAI:
    def __init__(self, shape, typestr, ptr, strides=None, stream=None, mask=None, keep=None):
        d = {"shape": tuple(shape), "typestr": typestr, "data": (int(ptr), False), "strides": strides, "version": 3}
        if stream is not None:
            d["stream"] = stream
        if mask is not None:
            d["mask"] = mask
        self.__cuda_array_interface__ = d
        self.keep = keep


class DLPackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None, **kwargs):
        return self.t.__dlpack__(stream=stream) if stream is not None else self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def section_errors(args):
    dev = DEV
    S = "errors"
    x2 = torch.ones(4, 5, device=dev)

    run_case(S, "CPU tensor -> TypeError naming the device",
             lambda: expect_raises(TypeError, lambda: rt.sum(torch.ones(10)), "CPU tensor", ["cpu", "cuda"]))
    run_case(S, "CPU tensor with dim -> TypeError",
             lambda: expect_raises(TypeError, lambda: rt.mean(torch.ones(3, 4), dim=1), "CPU tensor, dim=1"))
    run_case(S, "CPU tensor min -> TypeError",
             lambda: expect_raises(TypeError, lambda: rt.min(torch.ones(3, 4, dtype=torch.int32), dim=0), "CPU i32"))

    bad_dtypes = [torch.bool, torch.int8, torch.uint8, torch.int16, torch.complex64, torch.complex128]
    for name in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint64"):
        if hasattr(torch, name):
            bad_dtypes.append(getattr(torch, name))
    for dt in bad_dtypes:
        def fn(dt=dt):
            t = torch.empty(16, 3, dtype=dt, device=dev)  # no kernel launched for the data
            expect_raises(TypeError, lambda: rt.sum(t), f"sum of {dt}")
            expect_raises(TypeError, lambda: rt.max(t, dim=0), f"max of {dt} dim=0")
            expect_raises(TypeError, lambda: rt.mean(t[:, 1:], dim=1), f"mean of a {dt} view")
        run_case(S, f"unsupported dtype {dt} -> TypeError", fn)

    def dims():
        rt.sum(x2, dim=1)  # the kind is now known (fast path)
        for d in (2, -3, (0, 0), (1, -1), [0, 5], (0, 1, 0), 7):
            for op in ("sum", "max", "mean"):
                expect_raises(ValueError, lambda: getattr(rt, op)(x2, dim=d), f"{op} dim={d!r} on rank 2")
        s0 = torch.tensor(1.5, device=dev)
        expect_raises(ValueError, lambda: rt.sum(s0, dim=1), "0-d tensor dim=1")
        expect_raises(ValueError, lambda: rt.sum(s0, dim=-2), "0-d tensor dim=-2")
        expect_raises(ValueError, lambda: rt.prod(torch.ones(5, device=dev), dim=1), "1-d tensor dim=1")
    run_case(S, "dim out of range / repeated -> ValueError (README; torch would say IndexError)", dims)

    def zero_d_repeated():
        # README: a repeated axis is an error. A 0-d tensor takes dim 0 and -1 (as in
        # PyTorch, which also refuses (0, 0) as "dim 0 appears multiple times").
        s0 = torch.tensor(2.5, device=dev)
        for d in ((0, 0), (0, -1), [-1, -1]):
            expect_raises(ValueError, lambda: rt.sum(s0, dim=d), f"0-d tensor dim={d!r}")
    run_case(S, "0-d tensor with a repeated dim -> ValueError", zero_d_repeated)

    def dim_types():
        # README: "a bad dim ... a ValueError"; a dim of the wrong Python type is arguably a
        # TypeError. Ambiguous: either is accepted.
        for d in (1.0, "1", True, (0, 1.5), object()):
            expect_raises((TypeError, ValueError), lambda: rt.sum(x2, dim=d), f"dim={d!r}")
    run_case(S, "dim of a wrong type -> TypeError or ValueError (ambiguous)", dim_types)

    def rank9():
        t = torch.ones([1] * 8 + [2], device=dev)
        expect_raises(ValueError, lambda: rt.sum(t), "rank 9 (README: rank 0 to 8)")
        expect_raises(ValueError, lambda: rt.sum(t, dim=8), "rank 9, dim=8")
    run_case(S, "rank 9 -> ValueError", rank9)

    def rank8_ok():
        t = torch.ones([2] * 8, device=dev)
        expect(float(rt.sum(t)) == 256.0, "rank 8 sum")
        expect(float(rt.sum(t, dim=(1, 3, 5, 7)).sum()) == 256.0, "rank 8 axis sum")
    run_case(S, "rank 8 works", rank8_ok)

    def dtype_pairs():
        i32 = torch.ones(10, dtype=torch.int32, device=dev)
        i64 = torch.ones(10, dtype=torch.int64, device=dev)
        u32 = torch.ones(10, dtype=torch.int32, device=dev).view(torch.uint32)
        f32 = torch.ones(10, device=dev)
        f64 = torch.ones(10, dtype=torch.float64, device=dev)
        f16 = torch.ones(10, dtype=torch.float16, device=dev)
        bad = [("sum i32 -> f32", lambda: rt.sum(i32, dtype=torch.float32)),
               ("sum i32 -> u32", lambda: rt.sum(i32, dtype=torch.uint32)),
               ("sum f64 -> f32", lambda: rt.sum(f64, dtype=torch.float32)),
               ("sum f32 -> f16", lambda: rt.sum(f32, dtype=torch.float16)),
               ("sum f32 -> i64", lambda: rt.sum(f32, dtype=torch.int64)),
               ("sum f16 -> f64", lambda: rt.sum(f16, dtype=torch.float64)),
               ("sum f16 -> bf16", lambda: rt.sum(f16, dtype=torch.bfloat16)),
               ("prod i64 -> i32", lambda: rt.prod(i64, dtype=torch.int32)),
               ("prod u32 -> i32", lambda: rt.prod(u32, dtype=torch.int32)),
               ("mean i32 -> f32", lambda: rt.mean(i32, dtype=torch.float32)),
               ("mean f64 -> f32", lambda: rt.mean(f64, dtype=torch.float32)),
               ("mean i64 -> i64", lambda: rt.mean(i64, dtype=torch.int64)),
               ("sum f32 -> int8", lambda: rt.sum(f32, dtype=torch.int8)),
               ("sum f32 -> bool", lambda: rt.sum(f32, dtype=torch.bool))]
        for what, call in bad:
            expect_raises(TypeError, call, what)
        expect_raises(TypeError, lambda: rt.max(f32, dtype=torch.float64), "max with dtype= (not in its signature)")
        # And the allowed widenings do run.
        expect(rt.sum(u32, dtype=torch.int64).dtype == torch.int64, "sum u32 -> i64 allowed")
        expect(rt.mean(f16, dtype=torch.float32).dtype == torch.float32, "mean f16 -> f32 allowed")
        expect(rt.prod(f32, dtype=torch.float64).dtype == torch.float64, "prod f32 -> f64 allowed")
    run_case(S, "unsupported dtype= pairs -> TypeError", dtype_pairs)

    def not_arrays():
        for v in ([1.0, 2.0], None, 3.0, (1, 2)):
            expect_raises(TypeError, lambda: rt.sum(v), f"rt.sum({v!r})")
        if np is not None:
            expect_raises(TypeError, lambda: rt.sum(np.ones((4, 4), np.float32), dim=0), "a numpy array")
        expect_raises(TypeError, lambda: rt.sum(DLPackOnly(torch.ones(8))), "a DLPack producer on the CPU")
    run_case(S, "non-arrays and host arrays -> TypeError", not_arrays)

    base = torch.zeros(1 << 20, device=dev)

    def cai_errors():
        # Checks made in Python before any device access. (Pointers the device cannot read
        # are probed in a child process: section "isolated".)
        p = base.data_ptr()
        expect_raises(ValueError, lambda: rt.sum(CAI((10, 10), "<f4", p, strides=(40, 6)), dim=0),
                      "stride not a multiple of the element size")
        for ts in ("<i2", "|b1", "<c8", "|i1", "<u8"):
            expect_raises(TypeError, lambda: rt.sum(CAI((8,), ts, p)), f"typestr {ts}")
        expect_raises(TypeError, lambda: rt.sum(CAI((8,), "<f4", p, mask=CAI((8,), "|b1", p))), "masked array")
    run_case(S, "__cuda_array_interface__ errors", cai_errors)

    def pinned_host():
        # README ambiguity: C++ reads mapped page-locked host memory in place; the Python
        # section says a CPU array is a TypeError. Accepted: TypeError or the right sum.
        h = torch.arange(1000, dtype=torch.float32).pin_memory()
        try:
            r = rt.sum(CAI((1000,), "<f4", h.data_ptr(), keep=h))
        except TypeError:
            REPORT.note("pinned host memory via __cuda_array_interface__: TypeError (accepted)")
            return
        torch.cuda.synchronize()
        got = torch.as_tensor(r, device="cuda")
        torch.cuda.synchronize()
        expect(float(got) == 499500.0, f"pinned host memory sum: {float(got)} != 499500")
        REPORT.note("pinned host memory via __cuda_array_interface__: read in place (accepted)")
    run_case(S, "pinned host memory (ambiguous)", pinned_host)

    def explain_checks():
        for t, d in ((x2, 1), (x2.t(), 0), (torch.tensor(2.0, device=dev), None),
                     (torch.empty(0, 3, device=dev), 0), (small_tensor((9, 8, 7), "float16"), (0, 2))):
            s = rt.explain(t, dim=d)
            expect(isinstance(s, str) and s.strip(), f"explain of {tuple(t.shape)} dim={d}: {s!r}")
        s = rt.explain(x2, dim=1, op="prod", dtype=torch.float64)
        expect(isinstance(s, str) and s.strip(), "explain prod f32->f64")
        expect_raises(ValueError, lambda: rt.explain(x2, dim=1, op="median"), "explain op='median'")
        expect_raises(ValueError, lambda: rt.explain(x2, dim=2), "explain dim=2 on rank 2")
        expect_raises(TypeError, lambda: rt.explain(torch.ones(3)), "explain of a CPU tensor")
    run_case(S, "explain", explain_checks)

    def autograd():
        x = torch.randn(100, 3, device=dev, requires_grad=True)
        for op in ("sum", "mean", "max"):
            r = getattr(rt, op)(x, dim=0)
            expect(r.grad_fn is None and not r.requires_grad, f"{op}: result records autograd (README: it does not)")
    run_case(S, "results carry no autograd", autograd)

    def subclass():
        p = torch.nn.Parameter(small_tensor((10, 17), "float32"), requires_grad=False)
        got = rt.sum(p, dim=1)
        compare(got, expected("sum", p.detach(), 1), "small", "a Parameter (Tensor subclass)")
    run_case(S, "Tensor subclass input", subclass)

    def health():
        torch.cuda.synchronize()
        expect(float(rt.sum(torch.ones(12345, device=dev))) == 12345.0, "sum of ones after the error cases")
        v = small_tensor((77, 1001), "int32", seed=9)
        compare(rt.sum(v, dim=0), expected("sum", v, 0), "small", "axis sum after the error cases")
        torch.cuda.synchronize()
    run_case(S, "CUDA context healthy after errors", health)


# --------------------------------------------------------------------------------------
# Section: streams and threads
# --------------------------------------------------------------------------------------


def gpu_sleep(cycles):
    f = getattr(torch.cuda, "_sleep", None)
    if f is not None:
        f(int(cycles))


def section_streams(args):
    dev = DEV
    S = "streams"

    def side_stream():
        s = torch.cuda.Stream()
        N = (1 << 22) + 3  # 3 * N < 2^24: exact in f32
        with torch.cuda.stream(s):
            x = torch.empty(N, device=dev)
            y = torch.empty(4096, 1001, device=dev)
            gpu_sleep(5e7)  # ~25 ms of GPU time ahead of the fills on this stream
            x.fill_(3.0)
            y.fill_(2.0)
            y[7, 5] = 9.0
            r1 = rt.sum(x)
            r2 = rt.max(y, dim=1)
            r3 = rt.mean(y.t(), dim=0)
            r4 = r1 * 2  # a torch kernel reading the result right away
        s.synchronize()  # only this stream
        expect(float(r1) == 3.0 * N, f"sum on a side stream: {float(r1)} != {3.0 * N}")
        expect(float(r4) == 6.0 * N, "torch kernel after rt on the side stream")
        want2 = torch.full((4096,), 2.0, device=dev)
        want2[7] = 9.0
        expect(bool(torch.equal(r2, want2)), "max along rows on a side stream")
        expect(bool((r3[torch.arange(4096, device=dev) != 7] == 2.0).all()), "mean of a transposed view on a side stream")
    run_case(S, "side stream: work enqueued before, sync only that stream", side_stream)

    def no_host_wait():
        # README: "No call waits on the host." With ~100 ms of GPU work queued ahead on the
        # stream, warm calls must return long before it ends.
        if getattr(torch.cuda, "_sleep", None) is None:
            raise Skip("torch.cuda._sleep is not available")
        x = small_tensor((3000, 1001), "float32", seed=13)
        h = small_tensor((5000,), "float16", seed=14)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            for _ in range(2):  # warm: kinds compiled, this stream's workspace made
                rt.sum(x, dim=1), rt.max(x.t(), dim=1), rt.mean(h), rt.sum(x, dim=0, out=torch.empty(1001, device=dev))
        s.synchronize()
        with torch.cuda.stream(s):
            o = torch.empty(1001, device=dev)
            gpu_sleep(2e8)
            t0 = time.perf_counter()
            r1 = rt.sum(x, dim=1)
            r2 = rt.max(x.t(), dim=1)
            r3 = rt.mean(h)
            rt.sum(x, dim=0, out=o)
            took = time.perf_counter() - t0
        s.synchronize()
        expect(took < 0.05, f"4 warm calls behind ~100 ms of queued GPU work took {took * 1000:.1f} ms on the host")
        compare(r1, expected("sum", x, 1), "small", "sum after the host-wait probe")
        compare(r2, expected("max", x.t(), 1), "small", "max after the host-wait probe")
        compare(r3, expected("mean", h, None), "small", "mean after the host-wait probe")
        compare(o, expected("sum", x, 0), "small", "out= after the host-wait probe")
    run_case(S, "calls do not wait on the host", no_host_wait)

    def chain():
        # rt reading rt's output at once, and out= reused in a loop with torch kernels
        # between (programmatic dependent launch must not let a call read stale data).
        s = torch.cuda.Stream()
        x0 = small_tensor((64, 1000), "float32", seed=11)
        torch.cuda.synchronize()
        s0 = float(x0.double().sum())
        with torch.cuda.stream(s):
            x = x0.clone()
            r1 = torch.empty(64, device=dev)
            tot = torch.empty(50, device=dev)
            gpu_sleep(2e7)
            for i in range(50):
                x.add_(1.0)
                rt.sum(x, dim=1, out=r1)
                rt.sum(r1, out=tot[i])
            m = rt.sum(rt.sum(rt.sum(x, dim=0, keepdim=True), dim=0))  # the total, through three calls
        s.synchronize()
        want = torch.tensor([s0 + (i + 1) * x0.numel() for i in range(50)], dtype=torch.float64)
        got = tot.double().cpu()
        bad = (got != want).nonzero()
        expect(bad.numel() == 0, f"chained sums: {bad.numel()} of 50 wrong, first {bad[:1].tolist()}: "
               f"{got[bad[0]].tolist() if bad.numel() else ''} vs {want[bad[0]].tolist() if bad.numel() else ''}")
        expect(float(m) == s0 + 50 * x0.numel(), f"rt(rt(rt(x))): {float(m)} vs {s0 + 50 * x0.numel()}")
    run_case(S, "back-to-back rt calls reading each other's output", chain)

    def back_to_back():
        # 40 prepared calls of different shapes/ops/dtypes issued with no other kernel in
        # between, five times on one stream (they share the stream's workspace).
        rng = random.Random(7)
        calls = []
        for k in range(40):
            op = OPS[k % 5]
            dtype = ALL_DTYPES[(k // 5) % 7]
            shape = rng.choice([(1000,), (5000, 3), (3, 5000), (33, 65, 9), (4097,), (257, 129), (1, 300000)])
            dim = rng.choice([None, 0, -1] + ([(0, 2), 1] if len(shape) == 3 else []))
            x = small_tensor(shape, dtype, op, seed=100 + k, dim=dim)
            calls.append((op, x, dim, expected(op, x, dim)))
        for op, x, dim, _ in calls:  # warm: every kind compiled before the timed burst
            getattr(rt, op)(x, dim=dim)
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        results = []
        with torch.cuda.stream(s):
            gpu_sleep(1e7)
            for rep in range(5):
                results.append([getattr(rt, op)(x, dim=dim) for op, x, dim, _ in calls])
        s.synchronize()
        for rep, res in enumerate(results):
            for (op, x, dim, e), got in zip(calls, res):
                compare(got, e, "small", f"burst {rep}: {op}<{name_of(x.dtype)}> {tuple(x.shape)} dim={dim}")
    run_case(S, "bursts of back-to-back calls on one stream", back_to_back)

    def threads():
        T, ITERS = 8, 200
        pool = [("sum", "float32", (257, 129), 1), ("max", "int32", (1000, 33), 0),
                ("mean", "float64", (64, 1001), None), ("min", "float16", (3, 5, 777), (0, 2)),
                ("prod", "int64", (50, 7), 1), ("sum", "bfloat16", (4097,), None),
                ("sum", "uint32", (129, 65), 0), ("max", "float32", (33, 65, 9), 1),
                ("mean", "int32", (300, 17), 1), ("sum", "float16", (2, 100003), 1)]
        per_thread = []
        for t in range(T):
            rng = random.Random(t)
            specs = [pool[(t + i) % len(pool)] for i in range(5)]
            # one kind per thread never called before: first calls run concurrently too
            specs.append(("sum", "float32", (97 + t, 3, 5 + t), (0, 2)))
            items = []
            for j, (op, dtype, shape, dim) in enumerate(specs):
                srcs = [small_tensor(shape, dtype, op, seed=1000 * t + 10 * j + v, dim=dim) for v in range(2)]
                bits = [s.view(torch.int32) if dtype == "uint32" else s for s in srcs]
                wants = [expected(op, s, dim) for s in srcs]
                items.append((op, dtype, dim, bits, wants))
            per_thread.append((rng, items))
        for op, dtype, shape, dim in pool:  # warm the shared kinds
            getattr(rt, op)(small_tensor(shape, dtype, op, dim=dim), dim=dim)
        torch.cuda.synchronize()
        errors = [[] for _ in range(T)]

        def work(t):
            rng, items = per_thread[t]
            try:
                s = torch.cuda.Stream()
                done = []
                with torch.cuda.stream(s):
                    bufs = [torch.empty_like(bits[0]) for _, _, _, bits, _ in items]
                    for i in range(ITERS):
                        j = rng.randrange(len(items))
                        v = rng.randrange(2)
                        op, dtype, dim, bits, wants = items[j]
                        if i % 40 == 0:
                            gpu_sleep(2e6)
                        bufs[j].copy_(bits[v])  # overwrites what an earlier call on s read
                        xin = bufs[j].view(torch.uint32) if dtype == "uint32" else bufs[j]
                        done.append((i, j, v, getattr(rt, op)(xin, dim=dim)))
                s.synchronize()
                for i, j, v, got in done:
                    op, dtype, dim, _, wants = items[j]
                    try:
                        compare(got, wants[v], "small", f"thread {t} call {i}: {op}<{dtype}> dim={dim}")
                    except Mismatch as m:
                        errors[t].append(str(m))
            except Exception as e:  # noqa: BLE001
                errors[t].append(f"{type(e).__name__}: {e}")

        threads_ = [threading.Thread(target=work, args=(t,)) for t in range(T)]
        for th in threads_:
            th.start()
        for th in threads_:
            th.join()
        bad = [(t, e) for t in range(T) for e in errors[t]]
        expect(not bad, f"{len(bad)} of {T * ITERS} threaded reductions wrong or failed; first: {bad[:2]}")
    run_case(S, "8 threads x 200 reductions, each thread on its own stream", threads)

    def cai_stream():
        # A __cuda_array_interface__ producer naming its stream: reduced on that stream.
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            x = torch.empty(512, 1000, device=dev)
            gpu_sleep(3e7)
            x.fill_(2.0)
        w = CAI((512, 1000), "<f4", x.data_ptr(), stream=s.cuda_stream, keep=x)
        got = rt.sum(w, dim=1)  # called outside any torch stream context
        s.synchronize()
        expect(isinstance(got, rt.DeviceArray), f"CAI input gave {type(got).__name__}, README: a DeviceArray")
        t = torch.as_tensor(got, device=dev)
        torch.cuda.synchronize()
        expect(bool((t == 2000.0).all()), f"CAI on its stream: values {t[:3].tolist()}")
    run_case(S, "__cuda_array_interface__ stream is used", cai_stream)

    def dlpack_producer():
        base = small_tensor((300, 41), "float32", seed=12)
        v = base[:, 3:]
        got = rt.max(DLPackOnly(v), dim=1)
        expect(isinstance(got, rt.DeviceArray), f"DLPack producer gave {type(got).__name__}")
        t = torch.from_dlpack(got)
        compare(t, expected("max", v, 1), "small", "DLPack-only producer, sliced view")
        neg = CAI((300, 41), "<f4", base.data_ptr() + 299 * 41 * 4, strides=(-41 * 4, 4), keep=base)
        got2 = rt.sum(neg, dim=0)
        torch.cuda.synchronize()
        t2 = torch.as_tensor(got2, device=dev)
        torch.cuda.synchronize()
        compare(t2, expected("sum", base.flip(0), 0), "small", "CAI with a negative stride, reduced along it")
        got3 = rt.sum(neg, dim=1)
        torch.cuda.synchronize()
        t3 = torch.as_tensor(got3, device=dev)
        torch.cuda.synchronize()
        compare(t3, expected("sum", base.flip(0), 1), "small", "CAI with a negative stride, rows reversed")
    run_case(S, "other producers (DLPack-only, CAI negative strides)", dlpack_producer)
    torch.cuda.synchronize()


# --------------------------------------------------------------------------------------
# Section: large (past 2^31 elements)
# --------------------------------------------------------------------------------------


def fill_small_ints(t, lo, hi, g):
    flat = t.view(-1)
    step = 1 << 28
    for a in range(0, flat.numel(), step):
        b = min(flat.numel(), a + step)
        flat[a:b].copy_(torch.randint(lo, hi, (b - a,), dtype=torch.int8, device=t.device, generator=g))


def exact_sum(t1d):
    total = 0.0
    step = 1 << 27
    for a in range(0, t1d.numel(), step):
        total += float(t1d[a:a + step].to(torch.float64).sum())  # integers < 2^53: exact
    return total


def section_large(args):
    S = "large"
    if args.no_large:
        REPORT.add(S, "large tensors", "skip", "--no-large")
        return
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    n = 2 ** 31 + 5

    def flat_f32():
        if free < 4 * n + (4 << 30):
            raise Skip(f"needs ~{(4 * n) >> 30} GiB free, {free >> 30} GiB free")
        g = torch.Generator(device=DEV)
        g.manual_seed(31)
        x = torch.empty(n, dtype=torch.float32, device="cuda")
        fill_small_ints(x, -4, 5, g)
        ref = exact_sum(x)
        x0 = float(x[0])
        try:
            r = rt.sum(x)
            expect(r.dtype == torch.float32 and r.dim() == 0, f"dtype/shape {r.dtype} {tuple(r.shape)}")
            expect(float(r) == ref, f"f32 sum of 2^31+5 small ints: {float(r)} != {ref}")
            r = rt.sum(x)
            expect(float(r) == ref, f"repeated: {float(r)} != {ref}")
            r64 = rt.sum(x, dtype=torch.float64)
            expect(float(r64) == ref, f"f32->f64 sum: {float(r64)} != {ref}")
            r1 = rt.sum(x[1:])
            expect(float(r1) == ref - x0, f"sum of x[1:] (2^31+4, misaligned): {float(r1)} != {ref - x0}")
            expect(float(rt.max(x)) == 4.0 and float(rt.min(x)) == -4.0, "max/min of the large flat")
            m = rt.mean(x, dtype=torch.float64)
            expect(float(m) == ref / n, f"mean f32->f64: {float(m)!r} != {ref / n!r}")
        finally:
            del x
            torch.cuda.empty_cache()
    run_case(S, "flat f32 sum of 2^31+5 elements (exact)", flat_f32)

    def rows_f16():
        free2, _ = torch.cuda.mem_get_info()
        m = 2 ** 30 + 1
        if free2 < 3 * m * 2 + (4 << 30):
            raise Skip(f"needs ~{(6 * m) >> 30} GiB free")
        g = torch.Generator(device=DEV)
        g.manual_seed(32)
        h = torch.empty(3, m, dtype=torch.float16, device="cuda")
        fill_small_ints(h, -4, 5, g)
        refs = [exact_sum(h[i]) for i in range(3)]
        first = [float(h[i, 0]) for i in range(3)]
        try:
            ref = torch.tensor(refs, dtype=torch.float64, device=DEV)
            got = rt.sum(h, dim=1, dtype=torch.float32)
            expect(got.dtype == torch.float32 and tuple(got.shape) == (3,), f"{got.dtype} {tuple(got.shape)}")
            expect(got.double().tolist() == refs, f"f16 [3, 2^30+1] sum->f32: {got.tolist()} != {refs}")
            got16 = rt.sum(h, dim=1)
            want16 = round_to(ref, "float16")
            expect(got16.double().tolist() == want16.tolist(),
                   f"f16 sum rounded once to f16: {got16.tolist()} != {want16.tolist()}")
            got_v = rt.sum(h[:, 1:], dim=1, dtype=torch.float32)
            want_v = [r - f for r, f in zip(refs, first)]
            expect(got_v.double().tolist() == want_v, f"h[:, 1:] sum: {got_v.tolist()} != {want_v}")
            mx = rt.max(h, dim=1)
            expect(mx.tolist() == [4.0, 4.0, 4.0], f"max rows: {mx.tolist()}")
            mean = rt.mean(h, dim=1, dtype=torch.float32)
            want_m = (ref / torch.full_like(ref, float(m))).to(torch.float32)  # a correctly rounded quotient
            expect(bool(torch.equal(mean, want_m)), f"mean f16->f32 of 2^30+1: {mean.tolist()} != {want_m.tolist()}")
        finally:
            del h
            torch.cuda.empty_cache()
    run_case(S, "f16 [3, 2^30+1] sum along 1 (exact)", rows_f16)


# --------------------------------------------------------------------------------------
# Section: CuPy
# --------------------------------------------------------------------------------------


def torch_to_cupy(t):
    if t.dtype == torch.uint32:
        a = t.view(torch.int32).cpu().numpy().view(np.uint32)
    else:
        a = t.cpu().numpy()
    return cupy.asarray(a)


def cupy_to_torch(c):
    a = np.array(cupy.asnumpy(c), order="C", copy=True)  # keeps 0-d arrays 0-d
    if a.dtype == np.uint32:
        return torch.from_numpy(a.view(np.int32)).cuda().view(torch.uint32)
    return torch.from_numpy(a).cuda()


CUPY_VIEWS = [
    # (desc, base shape, cupy view, the same view built in torch (flip copies), dims)
    ("c[::-1] (100003,)", (100003,), lambda c: c[::-1], lambda t: t.flip(0), [None, 0]),
    ("c[::-1, ::-1] (67,301)", (67, 301), lambda c: c[::-1, ::-1], lambda t: t.flip(0, 1), [0, 1, None]),
    ("c[:, ::-2] (67,301)", (67, 301), lambda c: c[:, ::-2], lambda t: t.flip(1)[:, ::2], [0, 1]),
    ("c[::-1, :] (67,301)", (67, 301), lambda c: c[::-1, :], lambda t: t.flip(0), [1, 0]),
    ("c[::-1, :, ::-1] (5,33,41)", (5, 33, 41), lambda c: c[::-1, :, ::-1], lambda t: t.flip(0, 2),
     [(0, 2), 1, 2]),
    ("c[::-3, 1:] (301,67)", (301, 67), lambda c: c[::-3, 1:], lambda t: t.flip(0)[::3, 1:], [0, 1, (0, 1)]),
    ("c.T (129,257)", (129, 257), lambda c: c.T, lambda t: t.t(), [0, 1]),
]


def cupy_case(op, dtype, base_shape, cview, tview, desc, dim, keepdim, mode, seed, out_name=None):
    def fn():
        shape = tuple(cview(np.empty(base_shape, np.int8)).shape) if np is not None else None
        x = small_tensor(base_shape, dtype, op, seed=seed, mode=mode,
                         R=max(1, math.prod(shape[d] for d in norm_dims(dim, len(shape), False))))
        c = cview(torch_to_cupy(x))
        kw = {"dim": dim, "keepdims" if keepdim else "keepdim": keepdim}
        if out_name:
            kw["dtype"] = np.dtype(out_name)
        got = getattr(rt, op)(c, **kw)
        what = f"cupy {op}<{dtype}> {desc} dim={dim!r} keepdim={keepdim}"
        expect(isinstance(got, cupy.ndarray), f"{what}: result is {type(got).__name__}, README: the caller's framework")
        expect(got.data.device_id == c.data.device_id, f"{what}: result on another device")
        if dtype == "uint32":  # few torch kernels take uint32: flip the int32 bits
            xt = tview(x.view(torch.int32)).contiguous().view(torch.uint32)
        else:
            xt = tview(x).contiguous()
        e = expected(op, xt, dim, keepdim, out_name, torch_dims=False)
        compare(cupy_to_torch(got), e, mode, what)
    return fn


def section_cupy(args):
    global cupy
    S = "cupy"
    try:
        import cupy as _cupy
        cupy = _cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        REPORT.add(S, "cupy", "skip", f"CuPy not usable: {type(e).__name__}: {e}")
        return
    cases = []
    seed = 5000
    dtypes = ["float32", "int32", "uint32", "float16", "float64", "int64"]  # CuPy has no bfloat16
    for desc, base, cview, tview, dims in CUPY_VIEWS:
        for j, dim in enumerate(dims):
            for op in OPS:
                for dtype in dtypes:
                    seed += 1
                    cases.append((f"{op}<{dtype}> {desc} dim={dim!r}",
                                  cupy_case(op, dtype, base, cview, tview, desc, dim, seed % 4 == 0, "small", seed)))
    # unsigned wrap / widening / unsigned compare on full-range uint32
    for op, out in (("sum", None), ("sum", "int64"), ("max", None), ("min", None), ("mean", None), ("prod", None)):
        seed += 1
        cases.append((f"{op}<uint32{'->' + out if out else ''}> full range",
                      cupy_case(op, "uint32", (129, 1000), lambda c: c, lambda t: t, "u32 wide (129,1000)", 1, False,
                                "wide", seed, out)))
    # dim=() on CuPy: no axis (README: NumPy's axis=())
    for op in ("sum", "mean", "max"):
        seed += 1
        cases.append((f"{op} dim=() no axis", cupy_case(op, "int32", (5, 7, 3), lambda c: c, lambda t: t,
                                                        "(5,7,3)", (), False, "small", seed)))
    for name, fn in cases:
        run_case(S, name, fn, deadline=HARD_DEADLINE)

    def cupy_out_and_errors():
        c = torch_to_cupy(small_tensor((40, 77), "float32", seed=3))
        o = cupy.empty(77, dtype=cupy.float32)
        r = rt.sum(c, dim=0, out=o)
        expect(r is o, "cupy out= not returned")
        expect(bool(cupy.all(o == c.sum(axis=0))), "cupy out= values")
        expect_raises(ValueError, lambda: rt.sum(c, dim=0, out=cupy.empty(76, dtype=cupy.float32)), "cupy out= shape")
        expect_raises(TypeError, lambda: rt.sum(c, dim=0, out=cupy.empty(77, dtype=cupy.float16)), "cupy out= dtype")
        expect_raises(ValueError, lambda: rt.sum(c, dim=0, out=cupy.empty((77, 2), dtype=cupy.float32)[:, 0]),
                      "cupy non-contiguous out=")
        for dt in (cupy.int8, cupy.bool_, cupy.complex64, cupy.uint8, cupy.int16, cupy.uint64):
            expect_raises(TypeError, lambda: rt.sum(cupy.zeros(8, dtype=dt)), f"cupy dtype {np.dtype(dt).name}")
        expect_raises(ValueError, lambda: rt.sum(c, dim=2), "cupy dim=2 on rank 2")
        expect_raises(ValueError, lambda: rt.sum(c, dim=(0, -2)), "cupy repeated dim")
    run_case(S, "cupy out= and errors", cupy_out_and_errors)

    def cupy_stream():
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            b = cupy.empty((2000, 333), dtype=cupy.int32)
            for _ in range(20):
                b = b * 0 + 3  # queue GPU work ahead of the reduction on s
            r = rt.sum(b, dim=0, keepdims=True)
            r2 = rt.max(b[::-1], dim=1)
        s.synchronize()
        expect(r.shape == (1, 333) and bool(cupy.all(r == 6000)), "cupy sum on a non-blocking stream")
        expect(bool(cupy.all(r2 == 3)), "cupy max on a non-blocking stream")
    run_case(S, "cupy current stream", cupy_stream)

    def cupy_managed():
        shape = (300, 1001)
        mem = cupy.cuda.malloc_managed(300 * 1001 * 4)
        a = cupy.ndarray(shape, dtype=cupy.float32, memptr=mem)
        a[...] = cupy.asarray(small_tensor(shape, "float32", seed=8).cpu().numpy())
        got = rt.sum(a, dim=1)
        want = a.astype(cupy.float64).sum(axis=1).astype(cupy.float32)
        expect(bool(cupy.all(got == want)), "sum of managed memory (README: read in place)")
        del a, mem
    run_case(S, "cupy managed memory", cupy_managed)

    def cupy_dtype_args():
        c = torch_to_cupy(small_tensor((50, 60), "int32", mode="wide", seed=6))
        for dt in (np.int64, np.dtype("int64"), cupy.int64):
            r = rt.sum(c, dim=1, dtype=dt)
            expect(r.dtype == np.int64, f"dtype={dt!r}: {r.dtype}")
            want = c.astype(cupy.int64).sum(axis=1)
            expect(bool(cupy.all(r == want)), f"widened int32 sum (dtype={dt!r})")
        m = rt.mean(c, dim=0)
        expect(m.dtype == np.float64, f"cupy int mean dtype {m.dtype}")
    run_case(S, "cupy dtype= spellings", cupy_dtype_args)
    cupy.get_default_memory_pool().free_all_blocks()


# --------------------------------------------------------------------------------------
# Section: JAX
# --------------------------------------------------------------------------------------


def section_jax(args):
    S = "jax"
    try:
        import jax
        import jax.numpy as jnp
        gpus = [d for d in jax.devices() if d.platform in ("gpu", "cuda")]
    except Exception as e:  # noqa: BLE001
        REPORT.add(S, "jax", "skip", f"JAX not usable: {type(e).__name__}: {e}")
        return
    if not gpus:
        REPORT.add(S, "jax", "skip", "JAX sees no GPU")
        return
    try:
        x64 = bool(jax.config.jax_enable_x64)
    except AttributeError:
        x64 = bool(jax.config.read("jax_enable_x64"))

    def to_jax(t):
        if t.dtype == torch.bfloat16:
            a = jnp.asarray(t.float().cpu().numpy()).astype(jnp.bfloat16)
        elif t.dtype == torch.uint32:
            a = jnp.asarray(t.view(torch.int32).cpu().numpy().view(np.uint32))
        else:
            a = jnp.asarray(t.cpu().numpy())
        return jax.device_put(a, gpus[0])

    def to_torch(a):
        if a.dtype == jnp.bfloat16:
            return torch.from_numpy(np.array(a.astype(jnp.float32))).cuda().to(torch.bfloat16)
        n = np.array(a)
        if n.dtype == np.uint32:
            return torch.from_numpy(n.view(np.int32).copy()).cuda().view(torch.uint32)
        return torch.from_numpy(n.copy()).cuda()

    specs = [((37, 1001), "float32", "sum", 1, False, None), ((37, 1001), "float32", "max", 0, False, None),
             ((37, 1001), "float32", "mean", (0, 1), False, None), ((37, 1001), "float32", "min", None, False, None),
             ((129, 33), "int32", "sum", 0, False, None), ((129, 33), "int32", "max", 1, True, None),
             ((129, 33), "uint32", "min", None, False, None), ((129, 33), "uint32", "sum", 1, False, None),
             ((64, 999), "float16", "sum", 1, False, None), ((64, 999), "float16", "sum", 1, False, "float32"),
             ((64, 999), "bfloat16", "mean", 0, False, None), ((64, 999), "bfloat16", "prod", 1, False, None),
             ((3, 4, 5), "float32", "sum", -1, True, None), ((3, 4, 5), "float32", "prod", (0, 2), False, None),
             ((5, 7, 3), "float32", "sum", (), False, None),  # JAX: dim=() is no axis
             ((0, 5), "float32", "sum", 0, False, None), ((0, 5), "float32", "max", 1, False, None),
             ((4097,), "bfloat16", "sum", None, False, "float32"), ((1000003,), "float32", "sum", None, False, None)]
    if x64:
        specs += [((50, 70), "int64", "sum", 1, False, None), ((50, 70), "float64", "mean", 0, False, None),
                  ((50, 70), "int32", "mean", 1, False, None)]
    for k, (shape, dtype, op, dim, keepdim, out_name) in enumerate(specs):
        def fn(shape=shape, dtype=dtype, op=op, dim=dim, keepdim=keepdim, out_name=out_name, k=k):
            x = small_tensor(shape, dtype, op, seed=700 + k, dim=dim if dim != () else None)
            a = to_jax(x)
            kw = {"dim": dim, "keepdim": keepdim}
            if out_name:
                kw["dtype"] = getattr(jnp, out_name)
            what = f"jax {op}<{dtype}> {shape} dim={dim!r} keepdim={keepdim}"
            got = getattr(rt, op)(a, **kw)
            expect(isinstance(got, jax.Array), f"{what}: result is {type(got).__name__}, README: a JAX array")
            e = expected(op, x, dim, keepdim, out_name, torch_dims=False)
            compare(to_torch(got), e, "small", what)
        run_case(S, f"{op}<{dtype}> {shape} dim={dim!r}", fn)

    def jit():
        from reduce_tune import _core
        x = small_tensor((64, 333), "float32", seed=77)
        a = to_jax(x)
        f = jax.jit(lambda v: rt.sum(v * 2, dim=1) + rt.max(v, dim=1))
        if getattr(_core, "HAS_JAX_FFI", False):
            got = np.array(f(a))
            want = np.array(jnp.sum(a * 2, axis=1) + jnp.max(a, axis=1))
            expect(np.array_equal(got, want), f"inside jax.jit: {got[:4]} vs {want[:4]}")
        else:
            expect_raises(TypeError, lambda: f(a), "jax.jit without the FFI custom call")
    run_case(S, "inside jax.jit", jit)

    def x64_mean():
        if x64:
            raise Skip("jax_enable_x64 is on")
        a = to_jax(small_tensor((10, 10), "int32"))
        expect_raises(TypeError, lambda: rt.mean(a, dim=1), "JAX int mean (float64) without jax_enable_x64")
    run_case(S, "int mean needs x64", x64_mean)

    def jax_errors():
        a = to_jax(small_tensor((10, 10), "float32"))
        expect_raises(ValueError, lambda: rt.sum(a, dim=2), "JAX dim=2 on rank 2")
        expect_raises(TypeError, lambda: rt.sum(a, dim=0, out=a), "JAX out= (immutable)")
        try:
            cpu = jax.devices("cpu")[0]
        except Exception:  # noqa: BLE001
            return
        c = jax.device_put(jnp.ones(10, jnp.float32), cpu)
        expect_raises(TypeError, lambda: rt.sum(c), "a JAX array on the CPU")
    run_case(S, "jax errors", jax_errors)


# --------------------------------------------------------------------------------------
# Section: isolated (probes that would poison this process's CUDA context if the library
# got them wrong run in a child process; each reports one line)
# --------------------------------------------------------------------------------------

CHILD = r"""
import sys, traceback
import torch
import reduce_tune as rt

def report(name, status, detail=""):
    print("@@" + name + "|" + status + "|" + detail.replace("\n", " / ")[:1500], flush=True)

class CAI:
    def __init__(self, shape, typestr, ptr, keep=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (int(ptr), False),
                                         "strides": None, "version": 3}
        self.keep = keep

def healthy():
    torch.cuda.synchronize()
    v = float(rt.sum(torch.ones(100003, device="cuda")))
    torch.cuda.synchronize()
    return v == 100003.0

def probe(name, call, excs, why):
    try:
        call()
        torch.cuda.synchronize()
        report(name, "mismatch", "nothing was raised (README: " + why + ")")
    except excs as e:
        report(name, "pass" if healthy() else "mismatch",
               "" if healthy() else "raised as promised, but the CUDA context is unusable afterwards")
    except Exception as e:
        ok = False
        try:
            ok = healthy()
        except Exception:
            pass
        report(name, "mismatch", f"expected {excs}, got {type(e).__name__}: {e}" +
               ("" if ok else "; the CUDA context is unusable afterwards"))

which = sys.argv[1]
base = torch.zeros(1 << 20, device="cuda")
p = base.data_ptr()
torch.cuda.synchronize()
if which == "pointers":
    probe("misaligned f32 pointer, flat", lambda: rt.sum(CAI((100,), "<f4", p + 2)), rt.InvalidArgument,
          "a pointer not aligned to its element type throws InvalidArgument")
    probe("misaligned f32 pointer, axis", lambda: rt.sum(CAI((10, 10), "<f4", p + 2), dim=0), rt.InvalidArgument,
          "a pointer not aligned to its element type throws InvalidArgument")
    probe("range past its allocation, flat", lambda: rt.sum(CAI((1 << 36,), "<f4", p)), rt.InvalidArgument,
          "a range that runs past the end of its allocation throws InvalidArgument")
    probe("range past its allocation, axis", lambda: rt.sum(CAI((1 << 16, 1 << 20), "<f4", p), dim=1),
          rt.InvalidArgument, "a range that runs past the end of its allocation throws InvalidArgument")
    import numpy as np
    host = np.ones(1 << 16, np.float32)
    probe("pageable host pointer", lambda: rt.sum(CAI((1 << 16,), "<f4", host.ctypes.data, keep=host)),
          (TypeError, rt.InvalidArgument), "a CPU array is a TypeError")
    probe("pageable host pointer, axis", lambda: rt.sum(CAI((256, 256), "<f4", host.ctypes.data, keep=host), dim=1),
          (TypeError, rt.InvalidArgument), "a CPU array is a TypeError")
elif which == "graph":
    try:
        g = torch.cuda.CUDAGraph()
        x = torch.randint(-4, 5, (77, 1234), device="cuda").double()
        y = torch.randint(-4, 5, (5, 66, 13), device="cuda").to(torch.bfloat16)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):  # kinds never called in this process: compiled or loaded under capture
            r = rt.sum(x, dim=0)
            r2 = rt.max(y.permute(2, 0, 1), dim=(0, 2))
        x.copy_(torch.randint(-4, 5, (77, 1234), device="cuda").double())
        g.replay()
        torch.cuda.synchronize()
        want2 = y.permute(2, 0, 1).float().amax(dim=(0, 2)).to(torch.bfloat16)
        ok1, ok2 = torch.equal(r, x.sum(0)), torch.equal(r2, want2)
        report("graph capture of never-called kinds", "pass" if ok1 and ok2 else "mismatch",
               "" if ok1 and ok2 else f"replayed values wrong: sum {r[:4].tolist()} vs {x.sum(0)[:4].tolist()}; "
               f"max {r2.tolist()[:4]} vs {want2.tolist()[:4]}")
    except Exception as e:
        report("graph capture of never-called kinds", "mismatch",
               f"{type(e).__name__}: {e} (README: calls may be captured into CUDA graphs, the first call on a "
               "stream included)")
"""


def section_isolated(args):
    import subprocess
    S = "isolated"
    for which in ("pointers", "graph"):
        try:
            done = subprocess.run([sys.executable, "-c", CHILD, which], capture_output=True, text=True, timeout=240,
                                  env=dict(os.environ))
        except subprocess.TimeoutExpired:
            REPORT.add(S, f"child '{which}'", "exception", "timed out after 240 s")
            continue
        lines = [ln[2:] for ln in done.stdout.splitlines() if ln.startswith("@@")]
        for ln in lines:
            name, status, detail = (ln.split("|", 2) + ["", ""])[:3]
            REPORT.add(S, name, status if status in ("pass", "mismatch") else "exception", detail)
        if done.returncode != 0:
            REPORT.add(S, f"child '{which}' exit status", "exception",
                       f"exit status {done.returncode}; stderr tail: {done.stderr[-1500:]}")
        elif not lines:
            REPORT.add(S, f"child '{which}'", "exception", f"reported nothing; stderr tail: {done.stderr[-1500:]}")


# --------------------------------------------------------------------------------------
# Section: CUDA graph capture (last: a failed capture must not disturb other sections)
# --------------------------------------------------------------------------------------


def section_graphs(args):
    S = "graphs"

    def warmed_kind():
        x = small_tensor((300, 1000), "float32", seed=21)
        rt.sum(x, dim=1)
        rt.max(x, dim=0)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):  # its own capture stream: the first call on that stream
            r = rt.sum(x, dim=1)
            m = rt.max(x, dim=0)
        new = small_tensor((300, 1000), "float32", seed=22)
        x.copy_(new)
        g.replay()
        torch.cuda.synchronize()
        compare(r, expected("sum", new, 1), "small", "graph replay: sum rows")
        compare(m, expected("max", new, 0), "small", "graph replay: max columns")
        x.copy_(small_tensor((300, 1000), "float32", seed=23))
        g.replay()
        torch.cuda.synchronize()
        compare(r, expected("sum", x, 1), "small", "graph second replay")
    run_case(S, "torch.cuda.graph capture of warmed kinds", warmed_kind)


def section_final(args):
    def health():
        torch.cuda.synchronize()
        v = small_tensor((1001, 77), "float32", seed=99)
        compare(rt.sum(v, dim=0), expected("sum", v, 0), "small", "final sum")
        compare(rt.mean(v), expected("mean", v, None), "small", "final mean")
        torch.cuda.synchronize()
    run_case("final", "CUDA context healthy at the end", health)


# --------------------------------------------------------------------------------------

SECTIONS = [("bulk", section_bulk), ("nan", section_nan), ("out", section_out), ("errors", section_errors),
            ("streams", section_streams), ("large", section_large), ("cupy", section_cupy), ("jax", section_jax),
            ("isolated", section_isolated), ("graphs", section_graphs), ("final", section_final)]


def main():
    global torch, rt, np, VERBOSE, BULK_DEADLINE, HARD_DEADLINE, T0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=230.0, help="seconds for the whole run (soft)")
    ap.add_argument("--reserve", type=float, default=80.0, help="seconds kept for the sections after bulk")
    ap.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 4))
    ap.add_argument("--only", default="", help="comma-separated section names")
    ap.add_argument("--skip", default="", help="comma-separated section names")
    ap.add_argument("--no-large", action="store_true")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="<1 halves the flat sizes and views; >=2 runs every dtype on every view")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--cases", default="", help="a slice A:B of the bulk cases (after their sort)")
    args = ap.parse_args()
    VERBOSE = args.verbose
    random.seed(args.seed)
    T0 = time.monotonic()
    BULK_DEADLINE = T0 + max(30.0, args.budget - args.reserve)
    HARD_DEADLINE = T0 + args.budget + 120.0

    try:
        import torch as _torch
        torch = _torch
    except ImportError:
        print("blackbox: PyTorch is not installed; nothing checked")
        print("SUMMARY: cases run=0 mismatches=0 unexpected exceptions=0 skipped=0 (no PyTorch)")
        return 2
    if not torch.cuda.is_available():
        print("blackbox: no CUDA device; nothing checked")
        print("SUMMARY: cases run=0 mismatches=0 unexpected exceptions=0 skipped=0 (no CUDA device)")
        return 2
    try:
        import numpy as _np
        np = _np
    except ImportError:
        np = None
    try:
        import reduce_tune as _rt
    except Exception as e:  # noqa: BLE001
        print(f"blackbox: cannot import reduce_tune ({type(e).__name__}: {e}); set PYTHONPATH to the built package")
        print("SUMMARY: cases run=0 mismatches=0 unexpected exceptions=1 skipped=0 (no reduce_tune)")
        return 2
    rt = _rt
    if not hasattr(torch, "uint32"):
        print("blackbox: this PyTorch has no uint32; uint32 cases will raise", flush=True)
    print(f"reduce_tune from {getattr(rt, '__file__', '?')}; torch {torch.__version__}; "
          f"{torch.cuda.get_device_name(0)}; {torch.cuda.device_count()} GPU(s)", flush=True)

    only = {s for s in args.only.split(",") if s}
    skip = {s for s in args.skip.split(",") if s}
    for name, fn in SECTIONS:
        if (only and name not in only) or name in skip:
            continue
        section_header(name)
        before = snapshot()
        try:
            fn(args)
        except Exception as e:  # noqa: BLE001 (a section's own setup failed)
            REPORT.add(name, f"section {name} setup", "exception",
                       f"{type(e).__name__}: {e}\n" + "".join(traceback.format_exc().splitlines(True)[-4:]))
        section_footer(name, before)

    elapsed = time.monotonic() - T0
    if REPORT.notes:
        print("\nNotes (ambiguous README points, behaviour seen):")
        for n in REPORT.notes:
            print(f"  - {n}")
    skipped_budget = sum(1 for s in REPORT.skipped if s[2] == "time budget")
    other_skips = {}
    for sec, nm, why in REPORT.skipped:
        if why != "time budget":
            other_skips[f"{sec}: {nm}: {why}"] = 1
    if other_skips:
        print("\nSkipped (not time):")
        for k in list(other_skips)[:20]:
            print(f"  - {k}")
    if REPORT.failures:
        print(f"\nFirst {min(30, len(REPORT.failures))} of {len(REPORT.failures)} failures:")
        for i, (kind, sec, nm, detail) in enumerate(REPORT.failures[:30]):
            text = detail if len(detail) < 1500 else detail[:1500] + " ..."
            print(f"[{i + 1}] {kind} [{sec}] {nm}\n    " + text.replace("\n", "\n    "))
    ran = REPORT.cases - len(REPORT.skipped)
    print(f"\nSUMMARY: cases run={ran} passed={REPORT.passed} mismatches={len(REPORT.mismatches)} "
          f"unexpected exceptions={len(REPORT.exceptions)} skipped={len(REPORT.skipped)} "
          f"(time budget: {skipped_budget}) time={elapsed:.0f}s", flush=True)
    return 0 if not REPORT.mismatches and not REPORT.exceptions else 1


if __name__ == "__main__":
    sys.exit(main())
