#!/usr/bin/env python3
"""Where reduce_tune's JAX path loses to jax.jit(jnp.sum): the compiled HLO of both, the
wall time per call of each alone and several reductions inside one jitted function (where
JAX's dispatch is paid once), for a few shapes. Run on the GPU machine with the staged
package on PYTHONPATH: python3 bench/probes/jax_dispatch_probe.py"""
import os
import statistics
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import reduce_tune as rt  # noqa: E402


def wall_us(f, args, min_calls=50, min_ms=20.0, rounds=7):
    """Median over rounds of wall microseconds per call, each round a batch of back-to-back
    calls lasting at least min_ms, ended by waiting for the last result."""
    jax.block_until_ready(f(*args))
    start = time.perf_counter()
    jax.block_until_ready(f(*args))
    one = time.perf_counter() - start
    count = max(min_calls, int(min_ms / 1e3 / max(one, 1e-6)))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(count):
            r = f(*args)
        jax.block_until_ready(r)
        samples.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(samples)


def issue_us(f, args, calls=200, rounds=7):
    """Median host microseconds to issue one call (the queue drained between rounds)."""
    samples = []
    for _ in range(rounds):
        jax.block_until_ready(f(*args))
        start = time.perf_counter()
        for _ in range(calls):
            r = f(*args)
        samples.append((time.perf_counter() - start) / calls * 1e6)
        jax.block_until_ready(r)
    return statistics.median(samples)


def main():
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}", flush=True)
    x = jnp.ones((4, 1024), dtype=jnp.float32)
    native = jax.jit(lambda a: jnp.sum(a, axis=1))
    ours = jax.jit(lambda a: rt.sum(a, dim=1))
    for label, f in (("jnp.sum", native), ("rt.sum", ours)):
        print(f"== optimized HLO of jit({label}) on (4, 1024) f32, axis 1")
        print(f.lower(x).compile().as_text())

    shapes = [((4, 1024), 1), ((1000, 1000), 1), ((1000, 1000), 0), ((1 << 20, 100), 1), ((100, 1 << 20), 0),
              ((1 << 24, 16), 1), ((16, 1 << 24), 1)]
    print("\nshape dim | issue us: jnp rt | wall us per call: jnp rt | ratio jnp/rt | "
          "8 in one jit, wall us per reduction: jnp rt")
    for shape, dim in shapes:
        a = (jnp.arange(shape[0] * shape[1], dtype=jnp.int32) % 7 - 3).astype(jnp.float32).reshape(shape)
        jf = jax.jit(lambda v, d=dim: jnp.sum(v, axis=d))
        rf = jax.jit(lambda v, d=dim: rt.sum(v, dim=d))
        assert bool(jnp.allclose(jf(a), rf(a), rtol=1e-4, atol=1e-4))
        arrays = [a] + [jnp.copy(a) for _ in range(7)] if shape[0] * shape[1] <= (1 << 24) else [a] * 8
        j8 = jax.jit(lambda *vs, d=dim: [jnp.sum(v, axis=d) for v in vs])
        r8 = jax.jit(lambda *vs, d=dim: [rt.sum(v, dim=d) for v in vs])
        # Alternate the two sides so drift hits both alike.
        iss = {"j": [], "r": []}
        wall = {"j": [], "r": []}
        many = {"j": [], "r": []}
        for _ in range(3):
            iss["j"].append(issue_us(jf, (a,)))
            iss["r"].append(issue_us(rf, (a,)))
            wall["j"].append(wall_us(jf, (a,)))
            wall["r"].append(wall_us(rf, (a,)))
            many["j"].append(wall_us(j8, arrays) / 8)
            many["r"].append(wall_us(r8, arrays) / 8)
        m = {k: {s: statistics.median(v[s]) for s in v} for k, v in (("i", iss), ("w", wall), ("m", many))}
        print(f"{str(shape):>14s} {dim} | {m['i']['j']:7.2f} {m['i']['r']:7.2f} | {m['w']['j']:9.2f} "
              f"{m['w']['r']:9.2f} | {m['w']['j'] / m['w']['r']:5.2f}x | {m['m']['j']:9.2f} {m['m']['r']:9.2f} "
              f"({m['m']['j'] / m['m']['r']:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
