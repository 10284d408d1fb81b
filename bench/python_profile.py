#!/usr/bin/env python3
"""Where the host time of a reduce_tune call from Python goes: microseconds per call of
each step of the PyTorch, CuPy and JAX paths, timed alone in a loop (the median of
chunks of 200 calls, the queue drained between chunks, outside the clock).

Usage: python_profile.py"""
import os
import statistics
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import torch  # noqa: E402

import reduce_tune as rt  # noqa: E402
from reduce_tune import _core  # noqa: E402


def us(call, calls=4000, chunk=200):
    call()
    samples = []
    for _ in range(calls // chunk):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(chunk):
            call()
        samples.append((time.perf_counter() - start) / chunk * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples)


def show(label, value):
    print(f"  {label:48s} {value:7.2f}", flush=True)


def main():
    x = torch.ones((4, 1024), device="cuda")
    o = torch.empty((4,), device="cuda")
    f32 = _core.DTYPES.index("f32")
    stream = torch.cuda.current_stream().cuda_stream
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print("torch (4, 1024) float32, dim=1: us per call")
    show("torch.sum(x, dim=1)", us(lambda: torch.sum(x, dim=1)))
    show("rt.sum(x, dim=1)", us(lambda: rt.sum(x, dim=1)))
    show("torch.sum(x, dim=1, out=o)", us(lambda: torch.sum(x, dim=1, out=o)))
    show("rt.sum(x, dim=1, out=o)", us(lambda: rt.sum(x, dim=1, out=o)))
    show("_core.torch_call (the fast path alone)", us(lambda: _core.torch_call(0, x, 1, False, None, None, None)))
    # The same call through the package's Python layer (its cached checks, as before the
    # fast path), against the fast path, in alternating chunks: the difference is what
    # the fast path saves, free of the drift between separate loops.
    for key, plan in list(rt._plans.items()):
        if key[0] == "torch":
            rt._plans[key] = plan[:7] + (False,)  # served by the Python layer, not handed on
    python_layer, fast = [], []
    for _ in range(15):
        python_layer.append(us(lambda: rt._reduce("sum", "sum", x, 1, False, None, None, None), calls=1000))
        fast.append(us(lambda: rt.sum(x, dim=1), calls=1000))
    show("A/B: rt.sum through the Python layer", statistics.median(python_layer))
    show("A/B: rt.sum through the fast path", statistics.median(fast))
    show("A/B: median of the paired differences", statistics.median(a - b for a, b in zip(python_layer, fast)))
    show("torch.empty((4,), dtype, device=0)", us(lambda: torch.empty((4,), dtype=torch.float32, device=0)))
    dev = x.device
    show("torch.empty((4,), dtype, device=x.device)", us(lambda: torch.empty((4,), dtype=torch.float32, device=dev)))
    show("x.new_empty((4,))", us(lambda: x.new_empty((4,))))
    template = torch.empty((4,), dtype=torch.float32, device=dev)
    show("torch.empty_like(a cached (4,) tensor)", us(lambda: torch.empty_like(template)))
    show("torch.empty(4, dtype, device) (an int size)", us(lambda: torch.empty(4, dtype=torch.float32, device=dev)))
    show("torch.empty((4,), device=x.device) (default dtype)", us(lambda: torch.empty((4,), device=dev)))
    show("torch.cuda._sleep(0) (one kernel launch)", us(lambda: torch.cuda._sleep(0)))
    show("x.data_ptr()", us(lambda: x.data_ptr()))
    show("x.shape, x.stride(), x.dtype", us(lambda: (x.shape, x.stride(), x.dtype)))
    show("x.get_device()", us(lambda: x.get_device()))
    show("raw current stream", us(lambda: torch._C._cuda_getCurrentRawStream(0)))
    show("_core.check(...)", us(lambda: _core.check(0, f32, f32, x.shape, x.stride(), (1,))))
    show("_core.reduce(...), prebuilt arguments", us(
        lambda: _core.reduce(0, f32, f32, x.data_ptr(), (4, 1024), (1024, 1), (1,), o.data_ptr(), stream, 0)))
    show("_core.device_count() (an empty C++ call)", us(_core.device_count))
    show("_core.reduce of a 1-D flat sum", us(
        lambda: _core.reduce(0, f32, f32, x.data_ptr(), (4096,), (1,), (0,), o.data_ptr(), stream, 0)))
    try:
        import cupy
        c = cupy.ones((4, 1024), dtype=cupy.float32)
        print("cupy (4, 1024) float32, axis=1")
        show("cupy.sum(c, axis=1)", us(lambda: cupy.sum(c, axis=1)))
        show("rt.sum(c, dim=1)", us(lambda: rt.sum(c, dim=1)))
        show("cupy.empty((4,), float32)", us(lambda: cupy.empty((4,), dtype="float32")))
        show("cupy current stream ptr", us(lambda: cupy.cuda.get_current_stream().ptr))
    except ImportError:
        print("cupy: not installed")
    try:
        import jax
        import jax.numpy as jnp
        j = jnp.ones((4, 1024), dtype=jnp.float32)
        jsum = jax.jit(lambda a: jnp.sum(a, axis=1))
        print("jax (4, 1024) float32, axis=1")
        show("jitted jnp.sum(j, axis=1)", us(lambda: jsum(j)))
        show("rt.sum(j, dim=1)", us(lambda: rt.sum(j, dim=1)))
        key = ("jax", "sum", j.dtype, j.shape, j.sharding, 1, False, None)
        call = rt._plans.get(key)
        if call is not None:
            show("the cached jitted FFI call alone", us(lambda: call(j)))
        big = jnp.ones((1 << 24, 16), dtype=jnp.float32)
        bsum = jax.jit(lambda a: jnp.sum(a, axis=1))
        for label, f in (("jitted jnp.sum", bsum), ("rt.sum", lambda a: rt.sum(a, dim=1))):
            f(big).block_until_ready()
            start = time.perf_counter()
            for _ in range(20):
                r = f(big)
            issued = time.perf_counter() - start
            r.block_until_ready()
            total = time.perf_counter() - start
            print(f"  (2^24, 16) f32 dim=1, 20 calls of {label}: issued in {issued * 1e6 / 20:.1f} us per call, "
                  f"done in {total * 1e6 / 20:.1f} us per call", flush=True)
        show("j.__dlpack__(stream=...)", us(lambda: j.__dlpack__(stream=stream)))
        show("j.unsafe_buffer_pointer()", us(lambda: j.unsafe_buffer_pointer()))
        d = rt.DeviceArray((4,), "f32", 0, stream)
        show("rt.DeviceArray((4,), f32)", us(lambda: rt.DeviceArray((4,), "f32", 0, stream)))
        show("jax.dlpack.from_dlpack(DeviceArray)", us(lambda: jax.dlpack.from_dlpack(rt.DeviceArray((4,), "f32", 0, stream))))
        show("_core.StreamEvent(stream, 0)", us(lambda: _core.StreamEvent(stream, 0)))
        del d
    except ImportError:
        print("jax: not installed")


if __name__ == "__main__":
    main()
