#!/usr/bin/env python3
"""The eager JAX path's host time: reduce_tune.sum(x, dim=d) on a JAX array against the
cached jitted custom call it ends in, jax.jit(jnp.sum), jit(rt.sum), eager jnp.sum and
the package's inner layers (_reduce, _jax_reduce), then the Python pieces of the eager
path alone. Each form's issue time (200 calls, the queue drained between batches) is the
median over --rounds alternating rounds of the median of 9 batches; with --wall, also the
wall time per call (bench/probes/jax_dispatch_probe.py's timer). Run on the GPU machine
from the repository root with the staged package on PYTHONPATH:
    python3 bench/probes/jax_eager_host_probe.py [--rounds N] [--wall]
(docs/BENCHMARKS.md, set BC: `…-jax-eager-host.log` is --rounds 3 --wall over the forms
but the inner layers; `…-jax-eager-split.log` is --rounds 5 over them all, before the
pieces were printed.)"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import torch  # noqa: F401,E402  (imported as in bench/python_frameworks.py)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import reduce_tune as rt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_dispatch_probe import wall_us  # noqa: E402


def issue_us(f, calls=200, batches=9):
    """Median host microseconds to issue one call of f() (the queue drained between batches)."""
    samples = []
    for _ in range(batches):
        jax.block_until_ready(f())
        began = time.perf_counter()
        for _ in range(calls):
            r = f()
        samples.append((time.perf_counter() - began) / calls * 1e6)
        jax.block_until_ready(r)
    return statistics.median(samples)


def loop_us(f, n=20000, rounds=5):
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        for _ in range(n):
            f()
        samples.append((time.perf_counter() - began) / n * 1e6)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wall", action="store_true")
    args = parser.parse_args()
    jax_module = sys.modules["jax"]
    print(jax.__version__, jax.devices()[0].device_kind, flush=True)
    for shape, dim in (((4, 1024), 1), ((100, 262144), 1), ((1000, 1000), 1), ((1000, 1000), 0)):
        x = (jnp.arange(shape[0] * shape[1], dtype=jnp.int32) % 7 - 3).astype(jnp.float32).reshape(shape)
        rt.sum(x, dim=dim).block_until_ready()
        cached = rt._plans[("jax", "sum", x.dtype, x.shape, x.sharding, dim, False, None)]
        jitted_jnp = jax.jit(lambda a, d=dim: jnp.sum(a, axis=d))
        jitted_rt = jax.jit(lambda a, d=dim: rt.sum(a, dim=d))
        forms = {"jit(jnp.sum)": lambda: jitted_jnp(x), "cached(x)": lambda: cached(x),
                 "jit(rt.sum)": lambda: jitted_rt(x),
                 "_jax_reduce": lambda: rt._jax_reduce("sum", "sum", x, dim, False, None, None, jax_module),
                 "_reduce": lambda: rt._reduce("sum", "sum", x, dim, False, None, None, None),
                 "rt.sum": lambda: rt.sum(x, dim=dim), "jnp.sum eager": lambda: jnp.sum(x, axis=dim)}
        issue = {name: [] for name in forms}
        wall = {name: [] for name in forms}
        for _ in range(args.rounds):
            for name, f in forms.items():
                issue[name].append(issue_us(f))
                if args.wall:
                    wall[name].append(wall_us(lambda a, f=f: f(), (x,)))
        line = " | ".join(f"{name} {statistics.median(issue[name]):.2f}" +
                          (f" (wall {statistics.median(wall[name]):.2f})" if args.wall else "") for name in forms)
        print(f"{shape} {dim} issue us: {line}", flush=True)
    x = jnp.ones((4, 1024), jnp.float32)
    key = ("jax", "sum", x.dtype, x.shape, x.sharding, 1, False, None)
    pieces = {"x.sharding": lambda: x.sharding, "hash(key)": lambda: hash(("jax", "sum", x.dtype, x.shape,
                                                                          x.sharding, 1, False, None)),
              "x.dtype": lambda: x.dtype, "x.shape": lambda: x.shape,
              "isinstance Tracer": lambda: isinstance(x, jax.core.Tracer), "_plans.get": lambda: rt._plans.get(key),
              "_core.torch_call": lambda: rt._core.torch_call(0, x, 1, False, None, None, None)}
    for name, f in pieces.items():
        print(f"{name:20s} {loop_us(f):.3f} us", flush=True)


if __name__ == "__main__":
    main()
