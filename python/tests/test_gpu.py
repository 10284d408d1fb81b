"""The Python package on a GPU, against PyTorch (and CuPy and JAX where installed):
every op and dtype, rows, columns, general and flat layouts, strided views, keepdim,
out= and dtype=, empty extents, NaN, non-default streams and threads.

Skips, saying why, where there is no CUDA device or no PyTorch. Runs under pytest or
`python3 -m unittest test_gpu`."""
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import reduce_tune as rt
from reduce_tune import _core

torch = None
SKIP = None
if _core.device_count() == 0:
    SKIP = "no CUDA device"
else:
    try:
        import torch
    except ImportError:
        SKIP = "PyTorch is not installed (the GPU tests compare against it)"


def setUpModule():
    if SKIP:
        raise unittest.SkipTest(SKIP)


ALL_DTYPES = ["int32", "int64", "uint32", "float32", "float64", "float16", "bfloat16"]
# REDUCE_TUNE_TEST_DTYPES (comma-separated) narrows the dtypes the tests loop over, so that
# several processes can share a run: with no database, most new kinds of call compile a
# kernel first, and one process over every dtype takes minutes (docs/BENCHMARKS.md, set AT).
_chosen = [d for d in os.environ.get("REDUCE_TUNE_TEST_DTYPES", "").split(",") if d]
if any(d not in ALL_DTYPES for d in _chosen):
    raise ValueError(f"REDUCE_TUNE_TEST_DTYPES names {_chosen}; the dtypes are {ALL_DTYPES}")
DTYPES = _chosen or ALL_DTYPES
OPS = ["sum", "prod", "min", "max", "mean"]
SIXTEEN = ("float16", "bfloat16")


def tdtype(name):
    return getattr(torch, name)


def reference(op, x, dim, keepdim=False, out_dtype=None):
    """The expected result, computed in float64 (or int64) by PyTorch, then cast to the
    result's dtype. The data the tests use makes every op exact in that width."""
    wide = torch.float64 if x.dtype.is_floating_point else torch.int64
    w = x.to(wide)
    dims = tuple(range(x.dim())) if dim is None else dim
    if isinstance(dims, int):
        dims = (dims,)
    if op == "sum":
        r = w.sum(dim=dims, keepdim=keepdim) if dims else w.clone()
    elif op == "prod":
        r = w
        for d in sorted(dims, reverse=True):
            r = r.prod(dim=d, keepdim=keepdim)
    elif op == "min":
        r = w.amin(dim=dims, keepdim=keepdim) if dims else w.clone()
    elif op == "max":
        r = w.amax(dim=dims, keepdim=keepdim) if dims else w.clone()
    else:
        # sum / count, correctly rounded (torch.mean may be an ulp away from it)
        count = 1
        for d in dims:
            count *= x.shape[d]
        # (a tensor divisor: a scalar one is multiplied by its reciprocal, not divided)
        r = w.to(torch.float64).sum(dim=dims, keepdim=keepdim) if dims else w.to(torch.float64)
        r = r / torch.full_like(r, count)
    if out_dtype is None:
        out_dtype = torch.float64 if (op == "mean" and not x.dtype.is_floating_point) else x.dtype
    return r.to(out_dtype)


def data(shape, dtype, op, seed=0):
    """Small integers: every sum, product, min and max of them is exact in every type
    (products of values in {1, 2} stay far below 2^24 for the extents used here, and
    negative values only where the type has them)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    if op == "prod":
        v = torch.randint(1, 3, shape, generator=g, device="cuda")
        v = torch.where(torch.rand(shape, generator=g, device="cuda") < 0.9, torch.ones_like(v), v)
    elif dtype == "uint32":
        v = torch.randint(0, 8, shape, generator=g, device="cuda")
    else:
        v = torch.randint(-4, 5, shape, generator=g, device="cuda")
    return v.to(tdtype(dtype))


def assert_same(test, got, want, what, ulps=0):
    """Bit-equal (NaN equal to NaN), or within `ulps` units in the last place of the
    result's type (a float mean's division)."""
    test.assertEqual(got.dtype, want.dtype, what)
    test.assertEqual(tuple(got.shape), tuple(want.shape), what)
    if got.numel() == 0:
        return
    if ulps and want.dtype.is_floating_point:
        g, w = got.double(), want.double()
        bound = ulps * torch.finfo(want.dtype).eps * w.abs()
        eq = ((g - w).abs() <= bound) | (torch.isnan(g) & torch.isnan(w)) | (g == w)
        if not bool(eq.all()):
            bad = (~eq).nonzero()[0].tolist()
            test.fail(f"{what}: at {bad} got {g[tuple(bad)].item()}, expected {w[tuple(bad)].item()}")
        return
    if want.dtype == torch.uint32:  # few ops on uint32 in PyTorch
        got, want = got.to(torch.int64), want.to(torch.int64)
    eq = (got == want) | (torch.isnan(got) & torch.isnan(want)) if want.dtype.is_floating_point else got == want
    if not bool(eq.all()):
        bad = (~eq).nonzero()[0].tolist()
        test.fail(f"{what}: at {bad} got {got[tuple(bad)].item()}, expected {want[tuple(bad)].item()}")


# (shape, dim, how to make the view from a contiguous tensor of `base` shape)
LAYOUTS = [
    ("rows", (37, 1001), 1, None),
    ("columns", (1001, 37), 0, None),
    ("middle", (5, 333, 7), 1, None),
    ("two dims", (6, 50, 9), (0, 2), None),
    ("all", (3, 1027), None, None),
    ("transposed", (64, 129), 0, lambda t: t.t()),
    ("sliced", (40, 300), 1, lambda t: t[3:31:2, 5:293:3]),
    ("permuted", (4, 5, 6, 7), (1, 3), lambda t: t.permute(2, 0, 3, 1)),
    # the densest dimension kept but not the outputs' innermost: small, read as it is
    ("permuted outputs", (9, 8, 7), 1, lambda t: t.permute(2, 1, 0)),
    # the same past R = 256: reduced in stride order, written in the outputs' order
    ("permuted outputs, R 300", (7, 300, 9), 1, lambda t: t.permute(2, 1, 0)),
    # the densest dimension reduced, the kept ones out of order ((B, H, S, D) seen as
    # (B, S, H, D)): rows in stride order, written in the outputs' order
    ("transposed rows", (3, 5, 40, 64), 3, lambda t: t.transpose(1, 2)),
    ("broadcast", (1, 300), 0, lambda t: t.expand(50, 300)),
    ("offset", (1, 4099), 1, lambda t: t[:, 1:]),
]


class Semantics(unittest.TestCase):
    def test_every_op_dtype_and_layout(self):
        for dtype in DTYPES:
            for op in OPS:
                for name, shape, dim, make in LAYOUTS:
                    with self.subTest(dtype=dtype, op=op, layout=name):
                        base = data(shape, dtype, op, seed=len(name))
                        x = make(base) if make else base
                        want = reference(op, x, dim)
                        # The first call of a kind is checked by the package's Python layer,
                        # the second served by the C++ fast path (which then answers).
                        for call in ("first", "repeated"):
                            got = getattr(rt, op)(x, dim=dim)
                            self.assertTrue(got.is_contiguous())
                            assert_same(self, got, want, f"{op}<{dtype}> {name}, {call} call",
                                        ulps=1 if op == "mean" else 0)
                        fast = _core.torch_call(rt._OP[op], x, dim, False, None, None, None)
                        self.assertIsNot(fast, NotImplemented)
                        assert_same(self, fast, want, f"{op}<{dtype}> {name}, the fast path itself",
                                    ulps=1 if op == "mean" else 0)

    def test_keepdim(self):
        x = data((4, 5, 6), "float32", "sum")
        for dim in (0, (0, 2), -1, None):
            got = rt.sum(x, dim=dim, keepdim=True)
            self.assertTrue(got.is_contiguous())
            assert_same(self, got, reference("sum", x, dim, keepdim=True), f"keepdim dim={dim}")
            self.assertEqual(tuple(rt.max(x, dim=dim, keepdims=True).shape), tuple(got.shape))

    def test_widening_and_out(self):
        x = data((300, 70), "int32", "sum")
        got = rt.sum(x, dim=0, dtype=torch.int64)
        assert_same(self, got, reference("sum", x, 0, out_dtype=torch.int64), "i32 -> i64")
        h = data((300, 70), "float16", "sum")
        got = rt.sum(h, dim=1, dtype=torch.float32)
        assert_same(self, got, reference("sum", h, 1, out_dtype=torch.float32), "f16 -> f32")
        out = torch.full((70,), 99.0, device="cuda", dtype=torch.float64)
        r = rt.mean(x, dim=0, out=out)
        self.assertIs(r, out)
        assert_same(self, out, reference("mean", x, 0), "mean into out=")
        with self.assertRaises(TypeError):
            rt.sum(x, dim=0, out=torch.empty(70, device="cuda", dtype=torch.float32))

    def test_an_empty_tuple_of_dims_follows_the_framework(self):
        # PyTorch reduces every dimension for dim=() (and []), NumPy-style producers none.
        x = data((5, 7, 3), "float32", "sum")
        for dim in ((), []):
            for keepdim in (False, True):
                for call in ("first", "repeated"):
                    assert_same(self, rt.sum(x, dim=dim, keepdim=keepdim),
                                x.sum(dim=dim, keepdim=keepdim), f"dim={dim!r} keepdim={keepdim}, {call} call")
            assert_same(self, rt.max(x, dim=dim), x.amax(dim=dim), f"max dim={dim!r}")
            assert_same(self, rt.mean(x.double(), dim=dim), x.double().mean(dim=dim), f"mean dim={dim!r}", ulps=1)
        p = torch.nn.Parameter(x.float(), requires_grad=False)  # a subclass: the Python layer alone
        assert_same(self, rt.sum(p, dim=()), x.float().sum(), "a Parameter, dim=()")
        self.assertIn("flat", rt.explain(x, dim=()))
        try:
            import cupy
        except ImportError:
            return
        c = cupy.asarray(x.cpu().numpy())
        got = rt.sum(c, dim=())
        self.assertEqual(got.shape, c.shape)
        self.assertTrue(bool(cupy.all(got == c.sum(axis=()))))

    def test_mean_of_16bit_rounds_once(self):
        x = torch.full((3, 1000), 1.0009765625, device="cuda", dtype=torch.float16) + \
            torch.arange(1000, device="cuda", dtype=torch.float16)[None, :] * 0
        got = rt.mean(x, dim=1)
        want = x.double().mean(dim=1).to(torch.float16)
        assert_same(self, got, want, "f16 mean")

    def test_bfloat16_rounds_to_nearest_even(self):
        # 1 + 2^-8 per element: the f32 total of 3 elements is 3 + 3*2^-8, which bf16
        # rounds to nearest even.
        x = torch.full((5, 3), 1.00390625, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        want = x.float().sum(dim=1).to(torch.bfloat16)
        assert_same(self, rt.sum(x, dim=1), want, "bf16 sum")

    def test_empty_extents(self):
        x = torch.empty((0, 5), device="cuda", dtype=torch.float32)
        assert_same(self, rt.sum(x, dim=0), torch.zeros(5, device="cuda"), "sum over an empty extent")
        self.assertTrue(bool(torch.isnan(rt.mean(x, dim=0)).all()))
        self.assertEqual(float(rt.max(x, dim=0)[0]), float("-inf"))
        self.assertEqual(tuple(rt.sum(x, dim=1).shape), (0,))

    def test_nan_and_inf(self):
        x = torch.ones((4, 100), device="cuda")
        x[1, 17] = float("nan")
        x[2, 3] = float("inf")
        x[3, 5] = float("-inf")
        for op in ("sum", "min", "max"):
            got = getattr(rt, op)(x, dim=1)
            want = reference(op, x, 1).float()
            assert_same(self, got, want, f"{op} with NaN and Inf")
        self.assertTrue(bool(torch.isnan(rt.max(x, dim=1)[1])))

    def test_f16_total_past_its_range(self):
        x = torch.full((2, 40000), 2.0, device="cuda", dtype=torch.float16)
        self.assertEqual(float(rt.sum(x, dim=1)[0]), float("inf"))
        self.assertEqual(float(rt.sum(x, dim=1, dtype=torch.float32)[0]), 80000.0)

    def test_past_2_to_31_elements(self):
        # Extents, offsets and outputs past 2^31 from Python: a flat int32 sum (wrapping,
        # every element counts), its int64 widening, a long 16-bit axis and an int32 copy
        # of 2^31 + 3 outputs, each called twice (the Python layer, then the fast path).
        free, _ = torch.cuda.mem_get_info()
        n = 2**31 + 3
        if free < 4 * n * 2 + (1 << 30):
            self.skipTest(f"needs {(4 * n * 2) >> 20} MiB of device memory, {free >> 20} MiB free")
        g = torch.Generator(device="cuda").manual_seed(31)
        x = torch.randint(-100, 100, (n,), dtype=torch.int32, device="cuda", generator=g)
        want64 = int(x.sum(dtype=torch.int64))
        want32 = (want64 + 2**31) % 2**32 - 2**31
        for call in ("first", "repeated"):
            self.assertEqual(int(rt.sum(x)), want32, f"int32 sum, {call} call")
            self.assertEqual(int(rt.sum(x, dtype=torch.int64)), want64, f"int64 widening, {call} call")
        copy = rt.sum(x.view(n, 1), dim=1)
        self.assertTrue(bool(torch.equal(copy, x)), "a copy of 2^31 + 3 outputs")
        del x, copy
        h = torch.randn(3, 2**30 + 5, device="cuda", generator=g).half()
        want = h.float().sum(dim=1)
        for call in ("first", "repeated"):
            got = rt.sum(h, dim=1, dtype=torch.float32)
            self.assertTrue(bool(torch.allclose(got, want, rtol=1e-4, atol=0.5)), f"f16 rows: {got} vs {want}")
            self.assertTrue(bool(torch.equal(rt.max(h[:, 1:], dim=1), h[:, 1:].amax(dim=1))), f"f16 max, {call}")
        del h
        torch.cuda.empty_cache()

    def test_scalar_and_0d(self):
        x = data((1000,), "float64", "sum")
        got = rt.sum(x)
        self.assertEqual(got.dim(), 0)
        self.assertEqual(float(got), float(x.sum()))
        s = torch.tensor(3.5, device="cuda")
        self.assertEqual(float(rt.max(s)), 3.5)
        self.assertEqual(float(rt.sum(s, dim=0)), 3.5)


# The widenings dtype= may ask for, by input dtype (sum and prod; mean takes float64 of
# float32 and of the integers, whose default it is).
WIDER = {"int32": "int64", "uint32": "int64", "float32": "float64", "float16": "float32", "bfloat16": "float32"}


def random_view(rng, dtype, op):
    """A view of rank 1 to 5 over a fresh base: sliced with steps and offsets, permuted,
    broadcast along new or size-1 dimensions; its extents odd more often than round."""
    rank = rng.randint(1, 5)
    budget = rng.choice((2**8, 2**12, 2**16, 2**19))
    extents = []
    for _ in range(rank):
        left = budget // max(1, math.prod(extents))
        e = rng.choice((1, 2, 3, 5, 7, 16, 31, 64, 97, 128, 255, 257, 1000, 1023, 4099))
        extents.append(max(1, min(e, left)))
    base = data(tuple(extents), dtype, op, seed=rng.randrange(1 << 30))
    x = base
    for d in range(rank):
        if x.shape[d] > 2 and rng.random() < 0.3:
            start = rng.randint(0, 2)
            step = rng.choice((1, 2, 3))
            x = x.narrow(d, start, x.shape[d] - start)[(slice(None),) * d + (slice(None, None, step),)]
    if rng.random() < 0.4:
        order = list(range(rank))
        rng.shuffle(order)
        x = x.permute(*order)
    if rng.random() < 0.15 and x.dim() < 8:
        # a broadcast dimension (stride 0) somewhere
        d = rng.randint(0, x.dim())
        shape = list(x.shape)
        shape.insert(d, rng.choice((2, 3, 9)))
        x = x.unsqueeze(d).expand(*shape)
    return x


class RandomViews(unittest.TestCase):
    """Seeded random views, dims, keepdim, dtype= and out= for every op and dtype, each
    call made twice (the Python layer, then the fast path), against the float64/int64
    reference. REDUCE_TUNE_RANDOM_VIEWS sets the number of cases (default 300: with no
    database most new kinds of call compile a kernel first)."""

    def test_random_views_against_the_reference(self):
        rng = random.Random(20261128)
        cases = int(os.environ.get("REDUCE_TUNE_RANDOM_VIEWS", "300"))
        kinds = {}
        for i in range(cases):
            dtype = DTYPES[i % len(DTYPES)]
            op = OPS[(i // len(DTYPES)) % len(OPS)]
            x = random_view(rng, dtype, op)
            r = x.dim()
            form = rng.random()
            if form < 0.15:
                dim = None
            elif form < 0.55:
                dim = rng.randrange(-r, r)
            else:
                dim = tuple(sorted(rng.sample(range(r), rng.randint(1, r))))
                if rng.random() < 0.3:
                    dim = tuple(d - r for d in dim)
            keepdim = rng.random() < 0.3
            out_dtype = None
            if rng.random() < 0.3:
                if op in ("sum", "prod") and dtype in WIDER:
                    out_dtype = WIDER[dtype]
                elif op == "mean" and dtype in ("float32",):
                    out_dtype = "float64"
            dims = dim if dim is None or isinstance(dim, tuple) else (dim,)
            dims = None if dims is None else tuple(d % r for d in dims)
            want = reference(op, x, dims, keepdim=keepdim,
                             out_dtype=None if out_dtype is None else tdtype(out_dtype))
            what = (f"case {i}: {op}<{dtype}> shape {tuple(x.shape)} strides {x.stride()} offset "
                    f"{x.storage_offset()} dim {dim} keepdim {keepdim} dtype {out_dtype}")
            kwargs = {} if out_dtype is None else {"dtype": tdtype(out_dtype)}
            use_out = rng.random() < 0.2
            for call in ("first", "repeated"):
                if use_out:
                    out = torch.empty(tuple(want.shape), device="cuda", dtype=want.dtype)
                    got = getattr(rt, op)(x, dim=dim, keepdim=keepdim, out=out, **kwargs)
                    self.assertIs(got, out, what)
                else:
                    got = getattr(rt, op)(x, dim=dim, keepdim=keepdim, **kwargs)
                assert_same(self, got, want, f"{what}, {call} call", ulps=1 if op == "mean" else 0)
            layout = rt.explain(x, dim=dim, op=op, **kwargs).split()[0]
            kinds[layout] = kinds.get(layout, 0) + 1
            if (i + 1) % 50 == 0:
                print(f"[ random views ] {i + 1} cases", file=sys.stderr, flush=True)
        print(f"\n[ counts ] random views: {cases} cases, by the explanation's first word: {kinds}")


class RepeatedCalls(unittest.TestCase):
    def test_a_kind_of_call_checked_once_stays_right(self):
        # The second and later calls of a kind take the cached plan: results, dims given
        # as lists, and errors on a new kind must all be as on the first call.
        for _ in range(3):
            x = data((33, 65), "float32", "sum")
            assert_same(self, rt.sum(x, dim=[1]), reference("sum", x, 1), "dim as a list")
            assert_same(self, rt.sum(x.t(), dim=0), reference("sum", x.t(), 0), "a transposed view")
            with self.assertRaises(ValueError):
                rt.sum(x, dim=2)
            # An unhashable dim that is still an index (a 0-d integer array).
            assert_same(self, rt.max(x, dim=torch.tensor(0).numpy()), reference("max", x, 0), "a 0-d array dim")

    def test_out_argument_repeated(self):
        x = data((70, 300), "int32", "sum")
        out = torch.empty(70, device="cuda", dtype=torch.int64)
        for i in range(3):
            r = rt.sum(x[:, i:], dim=1, dtype=torch.int64, out=out[: x.shape[0]])
            assert_same(self, r, reference("sum", x[:, i:], 1, out_dtype=torch.int64), f"out= call {i}")
            with self.assertRaises(ValueError):
                rt.sum(x, dim=0, out=out)  # 300 results do not fit in 70
            with self.assertRaises(TypeError):
                rt.sum(x, dim=1, out=out.cpu())

    def test_dlpack_export_of_a_result(self):
        x = data((300, 41), "float32", "sum")

        class Wrapped:
            __cuda_array_interface__ = x.__cuda_array_interface__

        got = rt.sum(Wrapped(), dim=0)
        as_torch = torch.from_dlpack(got)  # the consumer's stream waits for the result
        assert_same(self, as_torch, reference("sum", x, 0), "DeviceArray through DLPack")


class Streams(unittest.TestCase):
    def test_current_stream_is_used(self):
        # Data made on a side stream and reduced there: correct without synchronising
        # with the default stream first (the result is ordered on the side stream).
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            for _ in range(3):
                x = torch.ones((512, 4096), device="cuda")
                x.mul_(2.0)
                r = rt.sum(x, dim=1)
        s.synchronize()
        self.assertTrue(bool((r == 8192.0).all()))

    def test_threads_on_their_own_streams(self):
        errors = []

        def work(seed):
            try:
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    for i in range(20):
                        x = data((257, 129 + seed), "float32", "sum", seed=seed * 100 + i)
                        got = rt.sum(x, dim=0)
                        want = reference("sum", x, 0)
                        s.synchronize()
                        if not bool((got == want).all()):
                            errors.append(f"thread {seed} call {i}")
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_sixteen_threads_of_first_calls_on_the_default_stream(self):
        # As an application's thread pool calls it: sixteen threads on PyTorch's default
        # stream, each making the first calls of many kinds at once (every op and dtype,
        # with and without a dtype= widening, over rows, columns, two dimensions and
        # everything), each kind twice in a row (the second by the fast path), the threads
        # starting at different kinds. (A black-box script's sixteen threads met a
        # segmentation fault on an H200: docs/BENCHMARKS.md, set BD.)
        shapes = [((37, 41), 1), ((41, 37), 0), ((5, 33, 7), (0, 2)), ((3, 1027), None)]
        cases = []
        for op in OPS:
            for dtype in DTYPES:
                if op in ("sum", "prod"):
                    wider = WIDER.get(dtype)
                elif op == "mean" and dtype in ("float32",) + SIXTEEN:
                    wider = WIDER[dtype]
                else:
                    wider = None
                for out in (None, wider) if wider else (None,):
                    for k, (shape, dim) in enumerate(shapes):
                        x = data(shape, dtype, op, seed=len(cases))
                        want = reference(op, x, dim, out_dtype=None if out is None else tdtype(out))
                        cases.append((op, x, dim, None if out is None else tdtype(out), want))
        torch.cuda.synchronize()
        errors = []

        def same(got, want):
            if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
                return False
            if want.dtype.is_floating_point:
                g, w = got.double(), want.double()
                tol = torch.finfo(want.dtype).eps * w.abs()  # a mean's one rounding
                return bool((((g - w).abs() <= tol) | (g == w)).all())
            return bool((got.to(torch.int64) == want.to(torch.int64)).all())

        def bits(t):
            return t.reshape(-1).view(torch.uint8)

        def work(t):
            try:
                n = len(cases)
                for i in range(n):
                    op, x, dim, dtype, want = cases[(i + t * n // 16) % n]
                    fn = getattr(rt, op)
                    kw = {} if dtype is None else {"dtype": dtype}
                    first = fn(x, dim=dim, **kw)
                    again = fn(x, dim=dim, **kw)
                    if not same(first, want) or not bits(first).equal(bits(again)):
                        errors.append(f"thread {t}: {op}<{x.dtype}> dtype={dtype} dim={dim}")
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(f"thread {t}: {e!r}")

        threads = [threading.Thread(target=work, args=(t,)) for t in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors[:10], [])
        self.assertGreater(len(cases), 100)


class Errors(unittest.TestCase):
    def test_cpu_tensor(self):
        with self.assertRaises(TypeError):
            rt.sum(torch.ones(4))

    def test_unsupported_torch_dtype(self):
        with self.assertRaises(TypeError):
            rt.sum(torch.ones(4, device="cuda", dtype=torch.int8))

    def test_host_pointer_is_refused_and_the_context_survives(self):
        host = torch.ones(64).numpy()

        class HostArray:
            __cuda_array_interface__ = {"shape": (64,), "typestr": "<f4", "data": (host.ctypes.data, False),
                                        "strides": None, "version": 3}

        with self.assertRaises(TypeError):
            rt.sum(HostArray())
        self.assertEqual(float(rt.sum(torch.ones(100, device="cuda"))), 100.0)

    def test_explain(self):
        text = rt.explain(torch.ones((100, 1000), device="cuda"), dim=1)
        self.assertIn("rows", text)

    def test_explain_sees_the_base(self):
        # 16-bit vectors of four outputs in one to two blocks per SM over a long R: from a
        # base on the vector grid unsplit; one element in (the twin's scalar loads) split
        # across blocks, on a GPU of 67 to 132 SMs. Both reduce right.
        shape = (100, 33, 100, 128)
        flat = data((100 * 33 * 100 * 128 + 1,), "float16", "sum", seed=5)
        on, off = flat[:-1].view(shape), flat[1:].view(shape)
        on_text, off_text = rt.explain(on, dim=(0, 2)), rt.explain(off, dim=(0, 2))
        self.assertIn("split=none", on_text)
        if 66 < torch.cuda.get_device_properties(0).multi_processor_count <= 132:
            self.assertIn("split=two_pass", off_text)
        for x, what in ((on, "on the grid"), (off, "one element in")):
            assert_same(self, rt.sum(x, dim=(0, 2)), reference("sum", x, (0, 2)), what)


class OtherProducers(unittest.TestCase):
    def test_cuda_array_interface(self):
        x = data((300, 41), "float32", "sum")

        class Wrapped:
            __cuda_array_interface__ = x.__cuda_array_interface__

        got = rt.sum(Wrapped(), dim=0)
        self.assertIsInstance(got, rt.DeviceArray)
        torch.cuda.synchronize()
        assert_same(self, torch.as_tensor(got, device="cuda"), reference("sum", x, 0), "CAI input")

    def test_dlpack_only(self):
        x = data((300, 41), "int64", "max")[:, 3:]

        class Wrapped:
            def __dlpack__(self, stream=None):
                return x.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return x.__dlpack_device__()

        got = rt.max(Wrapped(), dim=1)
        torch.cuda.synchronize()
        assert_same(self, torch.as_tensor(got, device="cuda"), reference("max", x, 1), "DLPack input")

    def test_cupy(self):
        try:
            import cupy
        except ImportError:
            self.skipTest("CuPy is not installed")
        a = cupy.arange(7 * 300 * 5, dtype=cupy.float32).reshape(7, 300, 5) % 7 - 3
        v = a[::-1, ::2, :]  # a negative stride
        got = rt.sum(v, dim=1)
        self.assertIsInstance(got, cupy.ndarray)
        self.assertTrue(bool(cupy.all(got == v.sum(axis=1))))
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            b = cupy.ones((1000, 333), dtype=cupy.int32)
            r = rt.max(b, dim=0, keepdims=True)
        s.synchronize()
        self.assertEqual(r.shape, (1, 333))
        self.assertTrue(bool(cupy.all(r == 1)))

    def test_jax(self):
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            self.skipTest("JAX is not installed")
        gpus = [d for d in jax.devices() if d.platform in ("gpu", "cuda")]
        if not gpus:
            self.skipTest("JAX sees no GPU")
        a = (jnp.arange(64 * 999, dtype=jnp.float32).reshape(64, 999) % 7 - 3).astype(jnp.bfloat16)
        a = jax.device_put(a, gpus[0])
        got = rt.sum(a, dim=1, dtype=jnp.float32)
        self.assertIsInstance(got, jax.Array)
        want = jnp.sum(a.astype(jnp.float32), axis=1)
        self.assertTrue(bool(jnp.all(got == want)))
        self.assertTrue(bool(jnp.all(rt.max(a, dim=0) == jnp.max(a, axis=0))))
        # Inside jax.jit, composed with JAX's own ops: the XLA FFI custom call where the
        # module was built with it, else a TypeError that says why not.
        f = jax.jit(lambda v: rt.sum(v * 2, dim=(0, 1), dtype=jnp.float32) + 1)
        if _core.HAS_JAX_FFI:
            self.assertEqual(float(f(a)), float(jnp.sum(a.astype(jnp.float32)) * 2 + 1))
        else:
            with self.assertRaisesRegex(TypeError, "tracer.*no XLA FFI"):
                f(a)
        # explain needs a concrete array: a tracer gets a TypeError that says so.
        self.assertIn("rows", rt.explain(a, dim=1))
        with self.assertRaisesRegex(TypeError, "tracer"):
            jax.jit(lambda v: rt.explain(v, dim=1) and v)(a)
        i = jax.device_put(jnp.arange(3 * 1001, dtype=jnp.int32).reshape(3, 1001) % 5, gpus[0])
        self.assertTrue(bool(jnp.all(rt.min(i, dim=1) == jnp.min(i, axis=1))))
        with self.assertRaises(ValueError):
            rt.sum(i, dim=2)
        if not jax.config.jax_enable_x64:
            with self.assertRaises(TypeError):
                rt.mean(i, dim=1)  # float64, which JAX holds only with x64
        # A module built without XLA's FFI headers takes JAX arrays through DLPack, and
        # refuses tracers with a TypeError.
        built_with_ffi = _core.HAS_JAX_FFI
        try:
            _core.HAS_JAX_FFI = False
            got = rt.sum(a[:, 7:], dim=1, dtype=jnp.float32)
            self.assertIsInstance(got, jax.Array)
            self.assertTrue(bool(jnp.all(got == jnp.sum(a[:, 7:].astype(jnp.float32), axis=1))))
            with self.assertRaisesRegex(TypeError, "tracer.*no XLA FFI"):
                jax.jit(lambda v: rt.max(v, dim=0))(a)
            if not jax.config.jax_enable_x64:
                with self.assertRaisesRegex(TypeError, "jax_enable_x64"):
                    rt.mean(i, dim=1)  # through DLPack too: float64, which JAX holds only with x64
        finally:
            _core.HAS_JAX_FFI = built_with_ffi
        # JAX refusing the custom call (headers of another JAX version than the one
        # running): one warning, then DLPack for arrays and a TypeError for tracers. A
        # build without the custom call (pip's isolated build, where JAX is not
        # importable) has nothing for JAX to refuse.
        if not built_with_ffi:
            return
        register, registered, plans = jax.ffi.register_ffi_target, list(rt._jax_registered), dict(rt._plans)

        def refuse(*args, **kwargs):
            raise RuntimeError("the handler's API version (9.9) is incompatible with the framework's")

        try:
            jax.ffi.register_ffi_target = refuse
            rt._jax_registered.clear()
            rt._plans.clear()
            b = a[:, 5:]
            with self.assertWarnsRegex(RuntimeWarning, "refused.*API version"):
                got = rt.sum(b, dim=1, dtype=jnp.float32)
            self.assertIsInstance(got, jax.Array)
            self.assertTrue(bool(jnp.all(got == jnp.sum(b.astype(jnp.float32), axis=1))))
            self.assertTrue(bool(jnp.all(rt.min(b, dim=0) == jnp.min(b, axis=0))))
            with self.assertRaisesRegex(TypeError, "tracer.*refused.*API version"):
                jax.jit(lambda v: rt.sum(v, dim=1))(b)
        finally:
            jax.ffi.register_ffi_target = register
            _core.HAS_JAX_FFI = built_with_ffi
            rt._jax_ffi_refused.clear()
            rt._jax_registered[:] = registered
            rt._plans.clear()
            rt._plans.update(plans)

    # Several reductions and JAX's own ops in one jitted function, in a process whose XLA
    # records every custom call it may into command buffers (CUDA graphs it replays without
    # calling the handler): fresh inputs call after call, each result checked against
    # jnp's; the handler must have been called under capture at least once, and never
    # with REDUCE_TUNE_JAX_COMMAND_BUFFERS=0.
    JAX_COMMAND_BUFFERS = """
import sys
import jax, jax.numpy as jnp, numpy as np
import reduce_tune as rt
from reduce_tune import _core
f = jax.jit(lambda a, b: (rt.sum(a * 2, dim=1) + 1, rt.max(b, dim=0), jnp.tanh(rt.mean(a, dim=0)),
                          rt.min(jnp.abs(b), dim=1)))
for k in range(8):
    a = jnp.round(jax.random.normal(jax.random.PRNGKey(k), (257, 1001), jnp.float32) * 8)
    b = jnp.round(jax.random.normal(jax.random.PRNGKey(100 + k), (3, 4097), jnp.float32) * 8)
    got = f(a, b)
    want = (jnp.sum(a * 2, axis=1) + 1, jnp.max(b, axis=0), jnp.tanh(jnp.mean(a, axis=0)), jnp.min(jnp.abs(b), axis=1))
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        ok = np.allclose(g, w, rtol=1e-6, atol=1e-6) if i == 2 else np.array_equal(g, w)
        if not ok:
            sys.exit(f"call {k}, result {i}: max |diff| {np.abs(g - w).max()}")
print(*_core.jax_handler_calls())
"""

    def run_jax_command_buffers(self, **extra_env):
        """Runs JAX_COMMAND_BUFFERS in a fresh process; returns (calls, captured)."""
        package = os.path.dirname(os.path.dirname(os.path.abspath(rt.__file__)))
        env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false",
                   XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1",
                   PYTHONPATH=os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH", "")) if p),
                   **extra_env)
        done = subprocess.run([sys.executable, "-c", self.JAX_COMMAND_BUFFERS], env=env, capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        calls, captured = (int(v) for v in done.stdout.split()[-2:])
        self.assertGreater(calls, 0)
        return calls, captured

    def test_jax_in_command_buffers(self):
        try:
            import jax
        except ImportError:
            self.skipTest("JAX is not installed")
        if not any(d.platform in ("gpu", "cuda") for d in jax.devices()):
            self.skipTest("JAX sees no GPU")
        if not _core.HAS_JAX_FFI:
            self.skipTest("the module was built without XLA's FFI headers (no custom call for XLA to record)")
        calls, captured = self.run_jax_command_buffers(REDUCE_TUNE_JAX_COMMAND_BUFFERS="1")
        self.assertGreater(captured, 0, f"XLA called the handler {calls} times, never under capture")
        # REDUCE_TUNE_JAX_COMMAND_BUFFERS=0: the handler without the trait, never recorded,
        # every call made on the stream as it runs.
        calls, captured = self.run_jax_command_buffers(REDUCE_TUNE_JAX_COMMAND_BUFFERS="0")
        self.assertEqual(captured, 0, f"XLA recorded {captured} of {calls} calls of the handler without the trait")


def reduce_tune_command():
    """The reduce-tune executable: $REDUCE_TUNE_CLI, the staged one, the built one or PATH's."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("REDUCE_TUNE_CLI", ""),
                  os.path.join(here, "..", "..", "gpu-stage", "reduce-tune"),
                  os.path.join(here, "..", "..", "build", "bin", "reduce-tune"),
                  shutil.which("reduce-tune") or ""]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


class MultiDevice(unittest.TestCase):
    """An array on a device other than the current one: reduced there, on that device's
    current stream, the result on it, and the caller's current device left as it was."""

    def setUp(self):
        if torch.cuda.device_count() < 2:
            self.skipTest(f"needs two CUDA devices ({torch.cuda.device_count()} here)")
        torch.cuda.set_device(0)

    def test_torch_on_the_second_device(self):
        x = data((300, 1001), "float32", "sum").to("cuda:1")
        for call in ("first", "repeated"):
            got = rt.sum(x, dim=1)
            self.assertEqual(got.device, x.device)
            assert_same(self, got, reference("sum", x, 1), f"sum on cuda:1, {call} call")
            self.assertEqual(torch.cuda.current_device(), 0)
        for name, v, dim in (("transposed", x.t(), 1), ("permuted", x.view(300, 7, 143).permute(2, 0, 1), (0, 2)),
                             ("everything", x, None)):
            assert_same(self, rt.max(v, dim=dim), reference("max", v, dim), f"max of a {name} view on cuda:1")
        s = torch.cuda.Stream(device=1)
        with torch.cuda.stream(s):
            y = x * 2
            got = rt.sum(y, dim=0)
        s.synchronize()
        assert_same(self, got, reference("sum", y, 0), "on cuda:1's current stream")
        out = torch.empty(300, device="cuda:1")
        self.assertIs(rt.sum(x, dim=1, out=out), out)
        assert_same(self, out, reference("sum", x, 1), "out= on cuda:1")
        with self.assertRaises((TypeError, ValueError)):
            rt.sum(x, dim=1, out=torch.empty(300, device="cuda:0"))
        self.assertEqual(torch.cuda.current_device(), 0)
        # Both devices from threads at once.
        errors = []

        def work(device):
            try:
                z = data((257, 129), "float32", "sum", seed=device).to(f"cuda:{device}")
                for _ in range(20):
                    r = rt.sum(z, dim=0)
                if not bool((r == reference("sum", z, 0)).all()):
                    errors.append(f"cuda:{device}")
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(d,)) for d in (0, 1, 0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_cupy_on_the_second_device(self):
        try:
            import cupy
        except ImportError:
            self.skipTest("CuPy is not installed")
        with cupy.cuda.Device(1):
            a = cupy.arange(64 * 333, dtype=cupy.float32).reshape(64, 333) % 7 - 3
        got = rt.sum(a[::-1], dim=0)
        self.assertEqual(got.device.id, 1)
        with cupy.cuda.Device(1):
            self.assertTrue(bool(cupy.all(got == a[::-1].sum(axis=0))))
        self.assertEqual(cupy.cuda.runtime.getDevice(), 0)


class Database(unittest.TestCase):
    EXPLAIN = ("import torch, reduce_tune as rt; "
               "print(rt.explain(torch.ones((4096, 1000), device='cuda'), dim=1))")

    def explain_with(self, database):
        env = dict(os.environ, REDUCE_TUNE_DB=database)
        done = subprocess.run([sys.executable, "-c", self.EXPLAIN], env=env, capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_reads_the_winner_tuned_into_REDUCE_TUNE_DB(self):
        cli = reduce_tune_command()
        if cli is None:
            self.skipTest("the reduce-tune command is not built (set REDUCE_TUNE_CLI)")
        with tempfile.TemporaryDirectory() as folder:
            database = os.path.join(folder, "tuning.db")
            self.assertIn("using the built-in choice", self.explain_with(database))  # no file yet
            tune = subprocess.run([cli, "tune", "--device", "0", "--ops", "sum", "--dtypes", "f32", "--layouts",
                                   "rows", "--axis-shapes", "1000x4096", "--budget", "4", "--db", database,
                                   "--quiet"], capture_output=True, text=True, timeout=600)
            self.assertEqual(tune.returncode, 0, tune.stdout + tune.stderr)
            self.assertIn("tuned on this device", self.explain_with(database))


if __name__ == "__main__":
    unittest.main()
