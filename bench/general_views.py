# Times reduce_tune against torch on views whose canonical layout is general (neither
# rows nor columns after merging: several reduced dimensions that do not merge, a strided
# reduced dimension, a permuted tensor) and a few rows controls, f32 and f16, sum and
# amax: CUDA events around batches of calls (20 or 200), the best of 5 batches; each
# result checked against torch's. One line per (dtype, op, view) with explain()'s choice.
# usage (the package importable): python3 bench/general_views.py
import sys, torch, reduce_tune as rt
torch.manual_seed(0)
def t_events(fn, reps):
    fn(); torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    best = None
    for _ in range(5):
        s.record()
        for _ in range(reps): fn()
        e.record(); e.synchronize()
        t = s.elapsed_time(e) * 1000 / reps
        best = t if best is None or t < best else best
    return best
cases = [
  ("bn [32,256,56,56] (0,2,3)", lambda dt: torch.randn(32,256,56,56, device="cuda", dtype=dt), (0,2,3)),
  ("[256,64,1024] (0,2)", lambda dt: torch.randn(256,64,1024, device="cuda", dtype=dt), (0,2)),
  ("[4096,64,7] (0,2)", lambda dt: torch.randn(4096,64,7, device="cuda", dtype=dt), (0,2)),
  ("[64,1000,3] (0,2)", lambda dt: torch.randn(64,1000,3, device="cuda", dtype=dt), (0,2)),
  ("[64,32,128,128] (0,2) keep last", lambda dt: torch.randn(64,32,128,128, device="cuda", dtype=dt), (0,2)),
  ("[16,1024,16,256] (1,2)->general?", lambda dt: torch.randn(16,1024,16,256, device="cuda", dtype=dt), (0,2)),
  ("x[:, ::2] [16384,4096] dim1", lambda dt: torch.randn(16384,4096, device="cuda", dtype=dt)[:, ::2], (1,)),
  ("x[::2, :1000] [8192,2048] dim1", lambda dt: torch.randn(8192,2048, device="cuda", dtype=dt)[::2, :1000], (1,)),
  ("x.t()[:, ::3] [3000,3000] dim0", lambda dt: torch.randn(3000,3000, device="cuda", dtype=dt).t()[:, ::3], (0,)),
  ("permute [64,128,512]->(1,2,0) dim (1,2)", lambda dt: torch.randn(64,128,512, device="cuda", dtype=dt).permute(1,2,0), (1,2)),
  ("[1000,1000,16] (0,2)", lambda dt: torch.randn(1000,1000,16, device="cuda", dtype=dt), (0,2)),
  ("[8,8,8,8,8,8,8] (0,2,4,6)", lambda dt: torch.randn(8,8,8,8,8,8,8, device="cuda", dtype=dt), (0,2,4,6)),
  ("[32,64,32,64] (1,3)", lambda dt: torch.randn(32,64,32,64, device="cuda", dtype=dt), (1,3)),
  ("bn [8,64,112,112] (0,2,3)", lambda dt: torch.randn(8,64,112,112, device="cuda", dtype=dt), (0,2,3)),
  ("[4096,8,1024] (0,2) few kept", lambda dt: torch.randn(4096,8,1024, device="cuda", dtype=dt), (0,2)),
  ("[1024,8,4096] (0,2)", lambda dt: torch.randn(1024,8,4096, device="cuda", dtype=dt), (0,2)),
  ("[100,100,100,100] (0,2) keep last", lambda dt: torch.randn(100,100,100,100, device="cuda", dtype=dt), (0,2)),
  # Off the vector grid: the same kept-densest view from one element into its storage.
  ("[64,32,128,128] (0,2) base +1 element", lambda dt: torch.randn(64*32*128*128 + 1, device="cuda", dtype=dt)[1:].view(64,32,128,128), (0,2)),
  ("control rows [16384,2048] dim1", lambda dt: torch.randn(16384,2048, device="cuda", dtype=dt), (1,)),
]
for dt in (torch.float32, torch.float16):
    for name, make, dims in cases:
        x = make(dt)
        for op in ("sum", "max"):
            tf = (lambda: x.sum(dim=dims)) if op == "sum" else (lambda: x.amax(dim=dims))
            rf = (lambda: rt.sum(x, dim=dims)) if op == "sum" else (lambda: rt.max(x, dim=dims))
            ref = tf(); got = rf(); torch.cuda.synchronize()
            ok = torch.allclose(got.float(), ref.float(), rtol=2e-2 if dt == torch.float16 else 1e-4, atol=1e-2)
            reps = 20 if x.numel() > 1 << 24 else 200
            tt = t_events(tf, reps); tr = t_events(rf, reps)
            try: ex = rt.explain(x, dim=dims, op=op)
            except Exception as e: ex = repr(e)
            ex = str(ex).replace("\n", " ")[:160]
            print(f"{str(dt)[6:]:8} {op:3} {name:42} numel={x.numel():>10} torch {tt:9.2f} us  rt {tr:9.2f} us  torch/rt {tt/tr:5.2f}x  ok={ok}  | {ex}", flush=True)
        del x
