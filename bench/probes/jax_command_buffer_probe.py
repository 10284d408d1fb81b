#!/usr/bin/env python3
"""Whether XLA capturing reduce_tune's custom call into a command buffer (a CUDA graph)
pays, and what XLA's custom-call path costs by itself. Loads the shared library that
bench/probes/jax_command_buffer_probe.cpp builds (path in argv[1]) and times, per shape,
jax.jit of jnp.sum against jax.jit of a custom call to each of its four handlers (the
package's reduction with and without the command-buffer trait; a handler that does
nothing, with and without it): alone, eight reductions inside one jit, and one reduction
between JAX's own elementwise ops (tanh(R(2 x) + 1), where a custom call XLA may not record
splits the command buffer of the ops around it). The reductions' results are checked against jnp.sum's, on fresh inputs call after call (a command buffer
replayed with stale addresses would show here). Run on the GPU machine:
python3 bench/probes/jax_command_buffer_probe.py libjax_cb_probe.so"""
import ctypes
import os
import statistics
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_dispatch_probe import wall_us  # noqa: E402

# The probe's name for each handler, and its symbol in the library.
SYMBOLS = {"probe_rt_plain": "reduce_handler_uncaptured", "probe_rt_graph": "reduce_handler",
           "probe_noop": "probe_noop", "probe_noop_graph": "probe_noop_graph"}
HANDLERS = tuple(SYMBOLS)


def main():
    lib = ctypes.cdll.LoadLibrary(os.path.abspath(sys.argv[1]))
    for name in HANDLERS:
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, SYMBOLS[name])), platform="CUDA")
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}",
          flush=True)

    def custom(name, shape, dim):
        out = jax.ShapeDtypeStruct(tuple(e for i, e in enumerate(shape) if i != dim), jnp.float32)
        call = jax.ffi.ffi_call(name, out)
        # op 0 = sum, dtype code 3 = f32 (reduce_tune._core.OPS and DTYPES)
        return lambda v: call(v, op=np.int64(0), in_dtype=np.int64(3), out_dtype=np.int64(3),
                              axes=np.asarray([dim], dtype=np.int64))

    x = jnp.ones((4, 1024), dtype=jnp.float32)
    for name in ("probe_rt_plain", "probe_rt_graph"):
        text = jax.jit(custom(name, (4, 1024), 1)).lower(x).compile().as_text()
        lines = [ln.strip() for ln in text.splitlines() if "command_buffer" in ln or "custom-call" in ln]
        print(f"== compiled jit({name}) on (4, 1024) f32, axis 1: lines naming a command buffer or custom call")
        print("\n".join(lines[:8]) or "(none)")

    shapes = [((4, 1024), 1), ((1000, 1000), 1), ((1000, 1000), 0), ((1 << 20, 100), 1), ((100, 1 << 20), 0),
              ((16, 1 << 24), 1)]
    labels = ("jnp",) + HANDLERS
    print("\nwall us per call, the median of 3 alternating rounds (each the median of 7 batches of >= 20 ms):")
    print(f"{'shape':>14s} dim | " + " ".join(f"{s:>16s}" for s in labels) +
          " | same, 8 in one jit, per reduction | same, tanh(R(2 x) + 1)")
    failures = 0
    for shape, dim in shapes:
        size = shape[0] * shape[1]
        keys = jax.random.split(jax.random.PRNGKey(size + dim), 4)
        inputs = [jnp.round(jax.random.normal(k, shape, jnp.float32) * 8) for k in keys]
        single = {"jnp": jax.jit(lambda v, d=dim: jnp.sum(v, axis=d))}
        many = {"jnp": jax.jit(lambda *vs, d=dim: [jnp.sum(v, axis=d) for v in vs])}
        mixed = {"jnp": jax.jit(lambda v, d=dim: jnp.tanh(jnp.sum(v * 2, axis=d) + 1))}
        for name in HANDLERS:
            single[name] = jax.jit(custom(name, shape, dim))
            many[name] = jax.jit(lambda *vs, f=custom(name, shape, dim): [f(v) for v in vs])
            mixed[name] = jax.jit(lambda v, f=custom(name, shape, dim): jnp.tanh(f(v * 2) + 1))
        # Fresh inputs and outputs call after call: each result must be its own input's.
        for name in ("probe_rt_plain", "probe_rt_graph"):
            for _ in range(3):
                for a in inputs:
                    got, want = np.asarray(single[name](a)), np.asarray(single["jnp"](a))
                    if not np.array_equal(got, want):
                        failures += 1
                        print(f"MISMATCH {name} {shape} dim {dim}: max |diff| {np.abs(got - want).max()}")
            got8 = many[name](*(inputs * 2))
            for a, g in zip(inputs * 2, got8):
                if not np.array_equal(np.asarray(g), np.asarray(single["jnp"](a))):
                    failures += 1
                    print(f"MISMATCH {name} {shape} dim {dim}, 8 in one jit")
            got, want = np.asarray(mixed[name](inputs[1])), np.asarray(mixed["jnp"](inputs[1]))
            if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
                failures += 1
                print(f"MISMATCH {name} {shape} dim {dim}, between elementwise ops")
        arrays = inputs * 2 if size <= (1 << 24) else [inputs[0]] * 8
        one = {s: [] for s in labels}
        eight = {s: [] for s in labels}
        composed = {s: [] for s in labels}
        for _ in range(3):
            for s in labels:
                one[s].append(wall_us(single[s], (inputs[0],)))
                eight[s].append(wall_us(many[s], arrays) / 8)
                composed[s].append(wall_us(mixed[s], (inputs[0],)))
        print(f"{str(shape):>14s} {dim:3d} | " + " ".join(f"{statistics.median(one[s]):16.2f}" for s in labels) +
              " | " + " ".join(f"{statistics.median(eight[s]):8.2f}" for s in labels) +
              " | " + " ".join(f"{statistics.median(composed[s]):8.2f}" for s in labels), flush=True)
    print(f"\nmismatches: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
