#!/usr/bin/env python3
"""Probe (not part of the build; a GPU and PyTorch): host microseconds per call of each
piece of a PyTorch call into reduce_tune (the attributes the fast path reads, torch's
current stream, forms of allocating a result) and of whole calls, on a (4, 1024) float32
tensor reduced along dim 1. Each piece alone in a loop: chunks of 250 calls, synchronized
outside the clock, the median of 16 chunks; `rounds` such medians, the pieces in turn,
and their median. Set AN, docs/BENCHMARKS.md.
    PYTHONPATH=<the staged package> python3 bench/probes/python_host_costs.py [rounds, default 5]
"""
import os
import statistics
import sys

import torch
import reduce_tune as rt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from python_frameworks import host_us  # noqa: E402  (the package benchmark's loop)


x = (torch.arange(4 * 1024, device="cuda") % 7 - 3).float().view(4, 1024)
o = torch.empty(4, device="cuda")
tmpl = torch.empty((), device="cuda").expand(4)
cf = torch.contiguous_format
raw_stream = torch._C._cuda_getCurrentRawStream
core = rt._core
f32 = core.DTYPES.index("f32")
raw = (core.OPS.index("sum"), f32, f32, x.data_ptr(), tuple(x.shape), tuple(x.stride()), (1,), o.data_ptr(),
       torch.cuda.current_stream().cuda_stream, torch.cuda.current_device())
rt.sum(x, dim=1)
rt.sum(x, dim=1, out=o)
tc = core.torch_call
cases = {
    "loop (None)": lambda: None,
    "torch.cuda._sleep(0)": lambda: torch.cuda._sleep(0),
    "x.is_cuda": lambda: x.is_cuda,
    "x.shape": lambda: x.shape,
    "x.stride()": lambda: x.stride(),
    "x.get_device()": lambda: x.get_device(),
    "x.dtype": lambda: x.dtype,
    "x.data_ptr()": lambda: x.data_ptr(),
    "x.device": lambda: x.device,
    "raw_stream(0)": lambda: raw_stream(0),
    "empty_like(t, memory_format=cf)": lambda: torch.empty_like(tmpl, memory_format=cf),
    "empty_like(t)": lambda: torch.empty_like(tmpl),
    "empty_like(o)": lambda: torch.empty_like(o),
    "t.new_empty((4,))": lambda: tmpl.new_empty((4,)),
    "torch.empty((4,), dtype, device)": lambda: torch.empty((4,), dtype=torch.float32, device="cuda"),
    "torch.empty_strided((4,),(1,),..)": lambda: torch.empty_strided((4,), (1,), dtype=torch.float32, device="cuda"),
    "o.new_empty(4)": lambda: o.new_empty(4),
    "torch_call NotImplemented (dim 5)": lambda: tc(0, x, 5, False, None, None, None),
    "torch_call(out=o)": lambda: tc(0, x, 1, False, None, None, o),
    "torch_call()": lambda: tc(0, x, 1, False, None, None, None),
    "rt.sum(x, dim=1)": lambda: rt.sum(x, dim=1),
    "rt.sum(x, dim=1, out=o)": lambda: rt.sum(x, dim=1, out=o),
    "_core.reduce(raw)": lambda: core.reduce(*raw),
    "torch.sum(x, dim=1)": lambda: torch.sum(x, dim=1),
    "torch.sum(x, dim=1, out=o)": lambda: torch.sum(x, dim=1, out=o),
}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
res = {k: [] for k in cases}
for r in range(rounds):
    for k, f in cases.items():
        res[k].append(host_us(f, torch.cuda.synchronize, calls=4000))
print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, python {sys.version.split()[0]}")
for k, v in res.items():
    print(f"  {k:36s} {statistics.median(v):7.3f}   rounds {' '.join(f'{u:.2f}' for u in v)}")
