#!/usr/bin/env python3
"""The eager JAX path's host time: reduce_tune.sum(x, dim=d) on a JAX array against the
cached jitted custom call it ends in, jax.jit(jnp.sum), jit(rt.sum) and eager jnp.sum
(issue time of 200 calls and wall time per call, bench/probes/jax_dispatch_probe.py's
timers), then the Python pieces of the eager path. Run on the GPU machine from the
repository root with the staged package on PYTHONPATH:
python3 bench/probes/jax_eager_host_probe.py"""
import os, time, statistics, sys
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import torch, cupy  # noqa: F401  (imported as in bench/python_frameworks.py)
import jax, jax.numpy as jnp
import reduce_tune as rt
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_dispatch_probe import wall_us, issue_us
print(jax.__version__, jax.devices()[0].device_kind)
for shape, dim in (((4, 1024), 1), ((1000, 1000), 1), ((1000, 1000), 0)):
    x = (jnp.arange(shape[0] * shape[1], dtype=jnp.int32) % 7 - 3).astype(jnp.float32).reshape(shape)
    j = jax.jit(lambda a, d=dim: jnp.sum(a, axis=d))
    rt.sum(x, dim=dim).block_until_ready()
    key = ("jax", "sum", x.dtype, x.shape, x.sharding, dim, False, None)
    cached = rt._plans[key]
    wrapped = jax.jit(lambda a, d=dim: rt.sum(a, dim=d))
    fs = {"jit(jnp.sum)": lambda a: j(a), "rt.sum eager": lambda a: rt.sum(a, dim=dim),
          "rt cached jit": lambda a: cached(a), "jit(rt.sum)": lambda a: wrapped(a),
          "jnp.sum eager": lambda a: jnp.sum(a, axis=dim)}
    res = {k: ([], []) for k in fs}
    for _ in range(3):
        for k, f in fs.items():
            res[k][0].append(issue_us(f, (x,)))
            res[k][1].append(wall_us(f, (x,)))
    print(shape, dim, " | ".join(f"{k}: issue {statistics.median(v[0]):.2f} wall {statistics.median(v[1]):.2f}" for k, v in res.items()), flush=True)
x = jnp.ones((4, 1024), jnp.float32)
def t(f, n=20000):
    s = []
    for _ in range(5):
        a = time.perf_counter()
        for _ in range(n): f()
        s.append((time.perf_counter() - a) / n * 1e6)
    return statistics.median(s)
key = ("jax", "sum", x.dtype, x.shape, x.sharding, 1, False, None)
for k, f in {"x.sharding": lambda: x.sharding, "hash(key)": lambda: hash(("jax", "sum", x.dtype, x.shape, x.sharding, 1, False, None)),
             "x.dtype": lambda: x.dtype, "x.shape": lambda: x.shape, "isinstance Tracer": lambda: isinstance(x, jax.core.Tracer),
             "_plans.get": lambda: rt._plans.get(key), "_core.torch_call": lambda: rt._core.torch_call(0, x, 1, False, None, None, None)}.items():
    print(f"{k:20s} {t(f):.3f} us")
