"""Autotuned CUDA reductions for PyTorch, CuPy and JAX arrays.

    import reduce_tune as rt
    rt.sum(x, dim=1)                # x: a CUDA tensor or array, any strides
    rt.max(x, dim=(0, 2), keepdim=True)
    rt.mean(x)                      # every axis: a 0-d result
    rt.sum(x_int32, dtype=torch.int64)     # widen the output, as in C++
    print(rt.explain(x, dim=1))     # what runs for this shape on this GPU, and why

The input is any object that offers ``__dlpack__`` or ``__cuda_array_interface__``
(PyTorch, CuPy and JAX arrays are read directly); it is reduced where it lies, views
included, without a copy. The result is a new array of the caller's framework (or
``out=``), written C-contiguous, enqueued without the host waiting: on PyTorch's or
CuPy's current stream, or the ``__cuda_array_interface__`` producer's stream. A JAX array
is reduced by an XLA FFI custom call on JAX's stream (also inside ``jax.jit``, where XLA
may record it into the function's CUDA graph; ``REDUCE_TUNE_JAX_COMMAND_BUFFERS=0`` keeps
it out) where the module was built with XLA's FFI headers, else through DLPack like any other DLPack
producer: its data made ready for the package's own stream, the result handed back with
the consumer's stream waiting for ours.

Types and semantics are those of the C++ library: int32, int64, uint32, float32, float64,
float16 and bfloat16 in; the output is the input type (``mean`` of an integer type is
float64), or the wider type named by ``dtype`` (int32/uint32 -> int64, float32 -> float64,
16-bit floats -> float32); 16-bit floats accumulate in float32 and round once. NaN
propagates; an empty reduced extent gives the op's identity (``mean``: NaN).

Kernels are the ones ``reduce-tune --device N`` tuned for the GPU, read from the same
database (``$REDUCE_TUNE_DB``, else ``$XDG_DATA_HOME/reduce-tune/tuning.db``, else
``~/.local/share/reduce-tune/tuning.db``); without one, built-in defaults.

Errors: a CPU array or an unsupported dtype raises TypeError; a bad ``dim``, shape or
``out`` raises ValueError (``reduce_tune.InvalidArgument`` for what the C++ layer checks),
all before any device access. CUDA failures raise ``reduce_tune.CudaError``.
"""

import atexit as _atexit
import builtins as _builtins
import collections as _collections
import operator as _operator
import os as _os
import sys as _sys
import threading as _threading
import warnings as _warnings

from . import _core
from ._core import CudaError, DbError, Error, InvalidArgument, NoDeviceError, NvrtcError

__all__ = [
    "sum", "prod", "min", "max", "mean", "explain",
    "DeviceArray", "Error", "InvalidArgument", "NoDeviceError", "CudaError", "NvrtcError", "DbError",
]

_OP = {name: code for code, name in enumerate(_core.OPS)}
_DT = {name: code for code, name in enumerate(_core.DTYPES)}
_DT_NAME = dict(enumerate(_core.DTYPES))
_ITEMSIZE = {"i32": 4, "i64": 8, "u32": 4, "f32": 4, "f64": 8, "f16": 2, "bf16": 2}
# NumPy-style names (numpy, CuPy, JAX and ml_dtypes dtypes; torch's, less "torch.").
_BY_NAME = {
    "int32": "i32", "int64": "i64", "uint32": "u32", "float32": "f32", "float64": "f64",
    "float16": "f16", "bfloat16": "bf16",
}
_NAME_OF = {v: k for k, v in _BY_NAME.items()}
# __cuda_array_interface__ type strings (bfloat16 has none).
_BY_TYPESTR = {"<i4": "i32", "<i8": "i64", "<u4": "u32", "<f4": "f32", "<f8": "f64", "<f2": "f16"}
_TYPESTR_OF = {v: k for k, v in _BY_TYPESTR.items()}
# DLPack (type code, bits) -> dtype.
_BY_DLPACK = {(0, 32): "i32", (0, 64): "i64", (1, 32): "u32", (2, 32): "f32", (2, 64): "f64",
              (2, 16): "f16", (4, 16): "bf16"}
_DLPACK_CUDA, _DLPACK_CUDA_MANAGED, _DLPACK_CUDA_HOST = 2, 13, 3
_PER_THREAD_STREAM = 2  # cudaStreamPerThread
_MAX_RANK = 8

_type_rules = {}  # (op, in, out) codes -> "" or why not (resolved once by the C++ rules)


def _check_types(fname, op, in_code, out_code):
    key = (op, in_code, out_code)
    why = _type_rules.get(key)
    if why is None:
        why = _core.check_types(op, in_code, out_code)
        _type_rules[key] = why
    if why:
        raise TypeError(f"reduce_tune.{fname}: {why}")


def _dtype_name(dtype):
    """Our dtype name for a torch, NumPy, CuPy, JAX or string dtype, or None."""
    if dtype is None:
        return None
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return _BY_NAME.get(str(dtype)[6:])
    name = getattr(dtype, "name", None)
    if name is None:
        if isinstance(dtype, str):
            name = dtype
        elif isinstance(dtype, type):
            name = getattr(dtype, "__name__", None)
    if name in _DT:
        return name
    return _BY_NAME.get(name)


class _View:
    """What a call needs to know of its input (or out=) array."""

    __slots__ = ("kind", "obj", "ptr", "shape", "strides", "dtype", "device", "stream", "keep")

    def __init__(self, kind, obj, ptr, shape, strides, dtype, device, stream, keep=None):
        self.kind, self.obj, self.ptr, self.shape, self.strides = kind, obj, ptr, shape, strides
        self.dtype, self.device, self.stream, self.keep = dtype, device, stream, keep


def _contiguous_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent if extent > 0 else 1
    return tuple(reversed(strides))


def _unsupported_dtype(fname, what, dtype):
    return TypeError(f"reduce_tune.{fname}: {what} has dtype {dtype}; supported: "
                     "int32, int64, uint32, float32, float64, float16, bfloat16")


_TORCH_DTYPE = {}


def _torch_stream_function(torch):
    """device -> the raw handle of PyTorch's current stream there."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


def _view_torch(fname, x, torch, what):
    if not x.is_cuda:
        raise TypeError(f"reduce_tune.{fname}: {what} is a tensor on '{x.device}'; reduce_tune reduces CUDA "
                        "tensors (move it with .cuda())")
    if x.layout is not torch.strided:
        raise TypeError(f"reduce_tune.{fname}: {what} has layout {x.layout}; only strided tensors are supported")
    dtype = _BY_NAME.get(str(x.dtype)[6:])
    if dtype is None:
        raise _unsupported_dtype(fname, what, x.dtype)
    device = x.get_device()
    if not _TORCH_DTYPE:
        _TORCH_DTYPE.update({k: getattr(torch, v) for k, v in _NAME_OF.items() if hasattr(torch, v)})
    return _View("torch", x, x.data_ptr(), tuple(x.shape), tuple(x.stride()), dtype, device,
                 _torch_stream_function(torch)(device))


def _view_cupy(fname, x, cupy, what):
    dtype = _BY_NAME.get(x.dtype.name)
    if dtype is None:
        raise _unsupported_dtype(fname, what, x.dtype)
    size = _ITEMSIZE[dtype]
    strides = []
    for s in x.strides:
        if s % size:
            raise ValueError(f"reduce_tune.{fname}: {what} has a stride of {s} bytes, not a multiple of its "
                             f"{size}-byte elements")
        strides.append(s // size)
    device = x.data.device_id
    with cupy.cuda.Device(device):
        stream = cupy.cuda.get_current_stream().ptr
    return _View("cupy", x, x.data.ptr, tuple(x.shape), tuple(strides), dtype, device, stream)


def _view_jax(fname, x, what):
    if isinstance(x, _sys.modules["jax"].core.Tracer):
        # Inside jax.jit the reduction is an XLA FFI custom call, which this build lacks
        # or which JAX refused.
        why = (f"JAX refused this build's XLA FFI custom call ({_jax_ffi_refused[0]}); rebuild the package with the "
               "JAX you run" if _jax_ffi_refused else
               "this build of reduce_tune has no XLA FFI custom call (the Python that built it could not import "
               "jax); build the package where jax is installed")
        raise TypeError(f"reduce_tune.{fname}: {what} is a JAX tracer (inside jax.jit or another transform), and "
                        f"{why}, or call it outside the transform")
    if len(x.devices()) != 1:
        raise TypeError(f"reduce_tune.{fname}: {what} is sharded over {len(x.devices())} devices; pass a "
                        "single-device array")
    view = _view_dlpack(fname, x, what)
    view.kind = "jax"
    return view


def _view_cai(fname, x, what):
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise TypeError(f"reduce_tune.{fname}: {what} is a masked array; masks are not supported")
    typestr = cai["typestr"]
    dtype = _BY_TYPESTR.get(typestr)
    if dtype is None:
        raise _unsupported_dtype(fname, what, typestr)
    shape = tuple(int(e) for e in cai["shape"])
    size = _ITEMSIZE[dtype]
    if cai.get("strides") is None:
        strides = _contiguous_strides(shape)
    else:
        strides = []
        for s in cai["strides"]:
            if s % size:
                raise ValueError(f"reduce_tune.{fname}: {what} has a stride of {s} bytes, not a multiple of its "
                                 f"{size}-byte elements")
            strides.append(s // size)
        strides = tuple(strides)
    ptr = int(cai["data"][0])
    stream = cai.get("stream")
    if stream is None or stream == 1:
        stream = 0  # the legacy default stream
    elif stream == 2:
        stream = _PER_THREAD_STREAM
    # The owning device is asked of CUDA only once every argument has been checked.
    return _View("cai", x, ptr, shape, strides, dtype, None, int(stream))


def _resolve_device(fname, view, what):
    """The device of a __cuda_array_interface__ view (None until asked)."""
    if view.device is None:
        any_element = view.ptr != 0 and all(e > 0 for e in view.shape)
        device = _core.pointer_device(view.ptr) if any_element else _current_device()
        if device < 0:
            raise TypeError(f"reduce_tune.{fname}: {what} points to host memory; reduce_tune reduces device "
                            "memory")
        view.device = device
    return view.device


def _view_dlpack(fname, x, what):
    device_type, device_id = x.__dlpack_device__()
    if device_type not in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
        raise TypeError(f"reduce_tune.{fname}: {what} is not in CUDA device memory (DLPack device type "
                        f"{int(device_type)}); reduce_tune reduces CUDA arrays")
    # The producer makes its data ready for the package's stream, the host not waiting.
    stream = _core.package_stream(int(device_id))
    try:
        capsule = x.__dlpack__(stream=stream)
    except TypeError:  # a producer without the stream argument: its data is ready now
        capsule = x.__dlpack__()
    ptr, shape, strides, code, bits, lanes = _core.dlpack_view(capsule)
    dtype = _BY_DLPACK.get((code, bits)) if lanes == 1 else None
    if dtype is None:
        raise _unsupported_dtype(fname, what, f"DLPack (code {code}, {bits} bits, {lanes} lanes)")
    if strides is None:
        strides = _contiguous_strides(shape)
    return _View("dlpack", x, ptr, shape, strides, dtype, int(device_id), stream, keep=capsule)


# DLPack inputs are read on our stream, not their producer's: each producer's tensor (its
# capsule) is held until the reduction that read it has run, so that the producer cannot
# free or reuse the memory under it. Released as later calls find them done, and at exit.
_held = _collections.deque()
_held_lock = _threading.Lock()  # a check of the oldest and its release are one step


def _hold(capsule, stream, device):
    event = _core.StreamEvent(stream, device)
    done = []
    with _held_lock:
        while _held and _held[0][0].done():
            done.append(_held.popleft())
        _held.append((event, capsule))
    # Released after the lock: a producer's deleter may run any Python code, a call of
    # this package's included.
    del done


@_atexit.register
def _release_held():
    with _held_lock:
        while _held:
            event, _ = _held.popleft()
            try:
                event.wait()
            except Error:
                pass  # a failed context at exit: nothing left to protect


def _view(fname, x, what):
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _view_torch(fname, x, torch, what)
    cupy = _sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return _view_cupy(fname, x, cupy, what)
    jax = _sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.Array):
        return _view_jax(fname, x, what)
    if isinstance(x, DeviceArray) or hasattr(x, "__cuda_array_interface__"):
        return _view_cai(fname, x, what)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _view_dlpack(fname, x, what)
    raise TypeError(f"reduce_tune.{fname}: {what} is a {type(x).__module__}.{type(x).__qualname__}; pass a CUDA "
                    "array that offers __dlpack__ or __cuda_array_interface__ (PyTorch, CuPy, JAX, ...)")


def _current_device():
    torch = _sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return 0


def _axes(fname, dim, rank, torch_dims=False):
    """The reduced axes, sorted. torch_dims: an empty tuple or list of dims is every
    dimension, as in PyTorch (torch.sum(x, dim=())); otherwise none, as NumPy's axis=()."""
    if rank > _MAX_RANK:
        raise ValueError(f"reduce_tune.{fname}: the tensor has {rank} dimensions; at most {_MAX_RANK} are supported")
    if dim is None or (torch_dims and type(dim) in (tuple, list) and not dim):
        return tuple(range(rank))
    if isinstance(dim, bool):
        raise TypeError(f"reduce_tune.{fname}: dim must be an int, a tuple of ints or None, not bool")
    if isinstance(dim, int):
        dims = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        try:
            dims = (_operator.index(dim),)
        except TypeError:
            raise TypeError(f"reduce_tune.{fname}: dim must be an int, a tuple of ints or None, not "
                            f"{type(dim).__name__}") from None
    axes = []
    zero_d_named = False  # a 0-d tensor's dim 0 (or -1), once
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            try:
                d = _operator.index(d)
            except TypeError:
                raise TypeError(f"reduce_tune.{fname}: dim entries must be ints, not {type(d).__name__}") from None
        a = d + rank if d < 0 else d
        span = _builtins.max(rank, 1)  # a 0-d tensor takes dim 0 and -1, as in PyTorch
        if not -span <= d < span:
            raise ValueError(f"reduce_tune.{fname}: dim {d} is out of range for a tensor of {rank} "
                             f"dimension{'s' if rank != 1 else ''} (allowed: {-span} .. {span - 1})")
        if rank == 0:
            # A 0-d tensor's only "dimension" reduces nothing, and is named once at most.
            if zero_d_named:
                raise ValueError(f"reduce_tune.{fname}: dim {d} is named more than once")
            zero_d_named = True
            continue
        if a in axes:
            raise ValueError(f"reduce_tune.{fname}: dim {d} is named more than once")
        axes.append(a)
    return tuple(sorted(axes))


def _new_output(view, shape, out_dtype):
    """A new array of the input's framework for the result, on the input's device."""
    kind = view.kind
    if kind == "torch":
        torch = _sys.modules["torch"]
        return torch.empty(shape, dtype=_TORCH_DTYPE[out_dtype], device=view.device)
    if kind == "cupy":
        cupy = _sys.modules["cupy"]
        with cupy.cuda.Device(view.device):
            return cupy.empty(shape, dtype=_NAME_OF[out_dtype])
    return DeviceArray(shape, out_dtype, view.device, view.stream)


# Checked calls, by what decides their checks: PyTorch's and CuPy's arrays skip every
# check after their first call of a kind (the C++ layer still checks pointers).
_plans = {}
_MAX_PLANS = 4096
_torch_bound = []  # non-empty once the PyTorch fast path knows torch's objects
_fast = _core.torch_call


def _dim_key(dim):
    """A dim as part of a plan's key. 1, 1.0 and True are equal and hash alike in Python,
    but only the int is a dim: each entry that is not an int keeps its type beside it, so
    a call with dim=1.0 is not served by the plan of dim=1 (it is checked, and refused)."""
    if type(dim) in (tuple, list):
        return tuple(d if type(d) is int else (type(d), d) for d in dim)
    return (type(dim), dim)


def _plan(fname, op_name, view, dim, keepdim, dtype):
    """(op, in, out codes, axes, output shape), every argument checked."""
    axes = _axes(fname, dim, len(view.shape), view.kind == "torch")
    op = _OP[op_name]
    in_code = _DT[view.dtype]
    if dtype is not None:
        out_name = _dtype_name(dtype)
        if out_name is None:
            raise _unsupported_dtype(fname, "dtype=", dtype)
    else:
        out_name = _DT_NAME[_core.default_out_dtype(op, in_code)]
    _check_types(fname, op, in_code, _DT[out_name])
    _core.check(op, in_code, _DT[out_name], view.shape, view.strides, axes)
    if keepdim:
        out_shape = tuple(1 if i in axes else e for i, e in enumerate(view.shape))
    else:
        out_shape = tuple(e for i, e in enumerate(view.shape) if i not in axes)
    return op, in_code, _DT[out_name], axes, out_shape


def _plan_out(fname, op_name, view, o, dim, keepdim, dtype):
    """_plan for a call into out= (the view `o`): its dtype, shape and layout checked too."""
    if dtype is not None and _dtype_name(dtype) not in (None, o.dtype):
        raise TypeError(f"reduce_tune.{fname}: out= has dtype {_NAME_OF[o.dtype]}, the result is "
                        f"{_NAME_OF[_dtype_name(dtype)]}")
    plan = _plan(fname, op_name, view, dim, keepdim, dtype if dtype is not None else o.dtype)
    out_shape = plan[4]
    if o.shape != out_shape:
        raise ValueError(f"reduce_tune.{fname}: out= has shape {list(o.shape)}, the result has shape "
                         f"{list(out_shape)}")
    if any(s != c for s, c, e in zip(o.strides, _contiguous_strides(out_shape), out_shape) if e > 1):
        raise ValueError(f"reduce_tune.{fname}: out= must be C-contiguous (strides {list(o.strides)})")
    return plan


def _reduce(fname, op_name, x, dim, keepdim, keepdims, dtype, out):
    if keepdims is not None:
        keepdim = keepdims
    torch = _sys.modules.get("torch")
    if torch is not None and type(x) is torch.Tensor and x.is_cuda and (out is None or type(out) is torch.Tensor):
        # PyTorch's tensor, on its current stream, into a new tensor or out=. The call's
        # checks run here once per kind of call; then _core.torch_call serves the kind
        # without coming back here (the public functions try it first).
        if not _torch_bound:
            _core.torch_bind(torch.Tensor, torch.dtype, torch.empty_like, torch.contiguous_format,
                             _torch_stream_function(torch))
            _torch_bound.append(True)
        shape, strides, device = x.shape, x.stride(), x.get_device()
        dim_key = dim if type(dim) is int or dim is None else _dim_key(dim)
        key = ("torch", op_name, x.dtype, shape, strides, device, dim_key, keepdim, dtype,
               None if out is None else (out.dtype, out.shape, out.stride(), out.is_cuda))
        try:
            plan = _plans.get(key)
        except TypeError:  # an unhashable dim: _axes says what is wrong with it
            plan = key = None
        remember = plan is None or plan[7]  # a known kind is here again: the C++ cache was cleared
        if plan is None:
            view = _view_torch(fname, x, torch, "the input")
            if out is None:
                plan = _plan(fname, op_name, view, dim, keepdim, dtype)
            else:
                plan = _plan_out(fname, op_name, view, _view_torch(fname, out, torch, "out="), dim, keepdim, dtype)
            # The result's template: one element broadcast to the result's shape, so that
            # torch.empty_like (about half of torch.empty's host time) makes a C-contiguous
            # result of the right shape, dtype and device without holding its memory.
            template = torch.empty((), dtype=_TORCH_DTYPE[_DT_NAME[plan[2]]], device=device).expand(plan[4])
            plan = plan + (template, _torch_stream_function(torch), True)
        op, in_code, out_code, axes, out_shape, template, current_stream, fast = plan
        if out is not None and out.get_device() != device:
            raise ValueError(f"reduce_tune.{fname}: out= is on device {out.get_device()}, the input on device {device}")
        if remember:
            # False where the call has no fast path (a dim or keepdim of another form):
            # then this layer keeps serving it.
            fast = _core.torch_remember(op, x, dim, keepdim, keepdims, dtype, out, in_code, out_code, axes,
                                        template if out is None else None)
            plan = plan[:7] + (fast,)
            if key is not None:
                if len(_plans) >= _MAX_PLANS:
                    _plans.clear()
                _plans[key] = plan
        result = torch.empty_like(template, memory_format=torch.contiguous_format) if out is None else out
        _core.reduce(op, in_code, out_code, x.data_ptr(), shape, strides, axes, result.data_ptr(),
                     current_stream(device), device)
        return result
    if out is None:
        cupy = _sys.modules.get("cupy")
        if cupy is not None and type(x) is cupy.ndarray:
            # CuPy's array: the same, on CuPy's current stream.
            dim_key = dim if type(dim) is int or dim is None else _dim_key(dim)
            key = ("cupy", op_name, x.dtype, x.shape, x.strides, dim_key, keepdim, dtype)
            try:
                plan = _plans.get(key)
            except TypeError:
                plan = key = None
            if plan is None:
                view = _view_cupy(fname, x, cupy, "the input")
                plan = _plan(fname, op_name, view, dim, keepdim, dtype)
                plan = plan + (view.strides, _NAME_OF[_DT_NAME[plan[2]]])
                if len(_plans) >= _MAX_PLANS:
                    _plans.clear()
                if key is not None:
                    _plans[key] = plan
            op, in_code, out_code, axes, out_shape, strides, out_dtype = plan
            device = x.data.device_id
            if cupy.cuda.runtime.getDevice() == device:
                result = cupy.empty(out_shape, dtype=out_dtype)
                stream = cupy.cuda.get_current_stream().ptr
            else:
                with cupy.cuda.Device(device):
                    result = cupy.empty(out_shape, dtype=out_dtype)
                    stream = cupy.cuda.get_current_stream().ptr
            _core.reduce(op, in_code, out_code, x.data.ptr, x.shape, strides, axes, result.data.ptr, stream, device)
            return result
    jax = _sys.modules.get("jax")
    if jax is not None and _core.HAS_JAX_FFI and not _jax_ffi_refused and (type(x) in _jax_types or _is_jax(x, jax)):
        result = _jax_reduce(fname, op_name, x, dim, keepdim, dtype, out, jax)
        if result is not NotImplemented:
            return result
    view = _view(fname, x, "the input")
    if out is not None:
        if view.kind == "jax":
            raise TypeError(f"reduce_tune.{fname}: out= is not supported for JAX arrays, which are immutable")
        o = _view(fname, out, "out=")
        op, in_code, out_code, axes, out_shape = _plan_out(fname, op_name, view, o, dim, keepdim, dtype)
        if _resolve_device(fname, o, "out=") != _resolve_device(fname, view, "the input"):
            raise ValueError(f"reduce_tune.{fname}: out= is on device {o.device}, the input on device {view.device}")
        result, out_ptr = out, o.ptr
    else:
        op, in_code, out_code, axes, out_shape = _plan(fname, op_name, view, dim, keepdim, dtype)
        if view.kind == "jax":
            _check_jax_x64(fname, _sys.modules["jax"], _DT_NAME[out_code])
        _resolve_device(fname, view, "the input")
        result = _new_output(view, out_shape, _DT_NAME[out_code])
        out_ptr = (result.data_ptr() if view.kind == "torch" else
                   result.data.ptr if view.kind == "cupy" else result.ptr)

    _core.reduce(op, in_code, out_code, view.ptr, view.shape, view.strides, axes, out_ptr, view.stream,
                 view.device)
    if view.keep is not None:
        _hold(view.keep, view.stream, view.device)
    if view.kind == "jax":
        # JAX imports the result through DLPack: its stream waits for ours, no host wait.
        return _sys.modules["jax"].dlpack.from_dlpack(result)
    return result


_JAX_TARGET = "reduce_tune_reduce"
_jax_registered = []
_jax_ffi_refused = []  # why JAX refused the custom call, once it has (then JAX goes through DLPack)
_jax_types = set()  # the types seen to be JAX arrays or tracers (isinstance on jax.Array is slow)


def _is_jax(x, jax):
    if isinstance(x, (jax.Array, jax.core.Tracer)):
        _jax_types.add(type(x))
        return True
    return False


def _check_jax_x64(fname, jax, out_name):
    """A 64-bit result needs jax_enable_x64: without it JAX would not hold it as it is."""
    if out_name in ("i64", "f64") and not jax.config.jax_enable_x64:
        raise TypeError(f"reduce_tune.{fname}: the result is {_NAME_OF[out_name]}, which JAX holds only with "
                        "jax_enable_x64 set")


def _jax_reduce(fname, op_name, x, dim, keepdim, dtype, out, jax):
    """A JAX array (or a tracer inside jax.jit): the reduction as an XLA FFI custom call on
    JAX's own stream, jitted once per kind of call."""
    if out is not None:
        raise TypeError(f"reduce_tune.{fname}: out= is not supported for JAX arrays, which are immutable")
    # A concrete array's sharding (its device) is part of the kind of call: checked once.
    tracer = isinstance(x, jax.core.Tracer)
    sharding = None if tracer else x.sharding
    dim_key = dim if type(dim) is int or dim is None else _dim_key(dim)
    key = ("jax", op_name, x.dtype, x.shape, sharding, dim_key, keepdim, dtype)
    try:
        call = _plans.get(key)
    except TypeError:
        call = key = None
    if call is None:
        if not tracer:
            devices = x.devices()
            if len(devices) != 1:
                raise TypeError(f"reduce_tune.{fname}: the input is sharded over {len(devices)} devices; pass a "
                                "single-device array")
            platform = next(iter(devices)).platform
            if platform not in ("gpu", "cuda"):
                raise TypeError(f"reduce_tune.{fname}: the input is a JAX array on {platform}; reduce_tune "
                                "reduces CUDA arrays")
        in_name = _BY_NAME.get(x.dtype.name)
        if in_name is None:
            raise _unsupported_dtype(fname, "the input", x.dtype)
        shape = tuple(x.shape)
        view = _View("jax", x, 0, shape, _contiguous_strides(shape), in_name, None, None)
        op, in_code, out_code, axes, out_shape = _plan(fname, op_name, view, dim, keepdim, dtype)
        out_name = _DT_NAME[out_code]
        _check_jax_x64(fname, jax, out_name)
        if not _jax_registered:
            try:
                # XLA may record the call into a jitted function's command buffer (CUDA
                # graph) unless REDUCE_TUNE_JAX_COMMAND_BUFFERS=0.
                handler = _core.jax_handler(_os.environ.get("REDUCE_TUNE_JAX_COMMAND_BUFFERS", "1") != "0")
                jax.ffi.register_ffi_target(_JAX_TARGET, handler, platform="CUDA")
            except Exception as e:  # noqa: BLE001 (JAX raises its own runtime error types)
                # Typically XLA FFI headers of another JAX version than the one running:
                # JAX arrays then go through DLPack, and tracers are refused.
                _jax_ffi_refused.append(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
                _warnings.warn(f"reduce_tune: JAX refused the package's XLA FFI custom call ({_jax_ffi_refused[0]}); "
                               "JAX arrays go through DLPack, and calls inside jax.jit are refused. Rebuild the "
                               "package with the JAX you run.", RuntimeWarning, stacklevel=3)
                return NotImplemented
            _jax_registered.append(True)
        numpy = _sys.modules.get("numpy") or __import__("numpy")
        result = jax.ShapeDtypeStruct(out_shape, jax.numpy.bfloat16 if out_name == "bf16" else _NAME_OF[out_name])
        attributes = {"op": numpy.int64(op), "in_dtype": numpy.int64(in_code), "out_dtype": numpy.int64(out_code),
                      "axes": numpy.asarray(axes, dtype=numpy.int64)}
        ffi_call = jax.ffi.ffi_call(_JAX_TARGET, result)
        call = jax.jit(lambda a: ffi_call(a, **attributes))
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        if key is not None:
            _plans[key] = call
    return call(x)


_SUM, _PROD, _MIN, _MAX, _MEAN = (_OP[name] for name in ("sum", "prod", "min", "max", "mean"))


def sum(x, dim=None, keepdim=False, *, dtype=None, out=None, keepdims=None):
    """The sum of ``x`` along ``dim`` (int, tuple of ints, or None for every axis)."""
    result = _fast(_SUM, x, dim, keepdim, keepdims, dtype, out)
    if result is NotImplemented:
        result = _reduce("sum", "sum", x, dim, keepdim, keepdims, dtype, out)
    return result


def prod(x, dim=None, keepdim=False, *, dtype=None, out=None, keepdims=None):
    """The product of ``x`` along ``dim``."""
    result = _fast(_PROD, x, dim, keepdim, keepdims, dtype, out)
    if result is NotImplemented:
        result = _reduce("prod", "prod", x, dim, keepdim, keepdims, dtype, out)
    return result


def min(x, dim=None, keepdim=False, *, out=None, keepdims=None):
    """The minimum of ``x`` along ``dim`` (values only; NaN propagates)."""
    result = _fast(_MIN, x, dim, keepdim, keepdims, None, out)
    if result is NotImplemented:
        result = _reduce("min", "min", x, dim, keepdim, keepdims, None, out)
    return result


def max(x, dim=None, keepdim=False, *, out=None, keepdims=None):
    """The maximum of ``x`` along ``dim`` (values only; NaN propagates)."""
    result = _fast(_MAX, x, dim, keepdim, keepdims, None, out)
    if result is NotImplemented:
        result = _reduce("max", "max", x, dim, keepdim, keepdims, None, out)
    return result


def mean(x, dim=None, keepdim=False, *, dtype=None, out=None, keepdims=None):
    """The mean of ``x`` along ``dim``: float64 for integer input unless ``dtype`` says."""
    result = _fast(_MEAN, x, dim, keepdim, keepdims, dtype, out)
    if result is NotImplemented:
        result = _reduce("mean", "mean", x, dim, keepdim, keepdims, dtype, out)
    return result


def explain(x, dim=None, op="sum", *, dtype=None):
    """What ``reduce_tune.<op>(x, dim)`` runs on x's GPU, and why (a string)."""
    if op not in _OP:
        raise ValueError(f"reduce_tune.explain: op must be one of {', '.join(_OP)}, not {op!r}")
    jax = _sys.modules.get("jax")
    if jax is not None and isinstance(x, jax.core.Tracer):
        raise TypeError("reduce_tune.explain: the input is a JAX tracer (inside jax.jit or another transform); "
                        "explain a concrete array of the same shape and dtype outside it")
    view = _view("explain", x, "the input")
    axes = _axes("explain", dim, len(view.shape), view.kind == "torch")
    in_code = _DT[view.dtype]
    if dtype is None:
        out_code = _core.default_out_dtype(_OP[op], in_code)
    else:
        name = _dtype_name(dtype)
        if name is None:
            raise _unsupported_dtype("explain", "dtype=", dtype)
        out_code = _DT[name]
    _check_types("explain", _OP[op], in_code, out_code)
    _core.check(_OP[op], in_code, out_code, view.shape, view.strides, axes)
    _resolve_device("explain", view, "the input")
    return _core.explain(_OP[op], in_code, out_code, view.shape, view.strides, axes, view.device, view.ptr)


class DeviceArray:
    """A result in device memory the package allocated itself, for inputs whose framework
    it cannot ask (``__cuda_array_interface__`` or DLPack producers other than PyTorch,
    CuPy and JAX). It offers ``__cuda_array_interface__`` (with its stream), so CuPy,
    Numba, PyTorch (``torch.as_tensor``) and others take it without a copy."""

    def __init__(self, shape, dtype, device, stream):
        self.shape = tuple(int(e) for e in shape)
        self.dtype = dtype  # reduce-tune's name: i32, i64, u32, f32, f64, f16, bf16
        count = 1
        for e in self.shape:
            count *= e
        self.size = count
        self._buffer = _core.DeviceBuffer(count * _ITEMSIZE[dtype], device, stream)
        self.device = device
        self.stream = stream

    @property
    def ptr(self):
        return self._buffer.ptr

    @property
    def __cuda_array_interface__(self):
        if self.dtype == "bf16":
            raise TypeError("bfloat16 has no __cuda_array_interface__ type string")
        stream = self.stream
        if stream == 0:
            stream = 1  # the legacy default stream, as the interface spells it
        return {"shape": self.shape, "typestr": _TYPESTR_OF[self.dtype], "data": (self.ptr, False),
                "strides": None, "version": 3, "stream": stream}

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the result; the consumer's `stream` waits for it."""
        if copy:
            raise BufferError("reduce_tune.DeviceArray exports without copying")
        return _core.to_dlpack(self._buffer, self.shape, _DT[self.dtype], stream)

    def __dlpack_device__(self):
        return (_DLPACK_CUDA, self.device)

    def __repr__(self):
        return f"reduce_tune.DeviceArray(shape={self.shape}, dtype={_NAME_OF[self.dtype]}, device={self.device})"
