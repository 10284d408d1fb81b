"""The Python package without a GPU: it imports, and every argument error is raised
before any device access (CI runs this where there is no CUDA device; it runs the same
on the GPU machine). Standard library only: `python3 -m unittest` or pytest."""
import ctypes
import sys
import unittest

import reduce_tune as rt
from reduce_tune import _core

HAS_DEVICE = _core.device_count() > 0


class FakeCuda:
    """An array that claims to live in device memory at a made-up address."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7F0000000000, mask=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3, "mask": mask}


class FakeDLPack:
    """An array offering only DLPack, on the given DLPack device type (1 = CPU)."""

    def __init__(self, device_type):
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("a CPU array's data must not be requested")


def expected_device_error():
    """What a well-formed call at a made-up address raises: no device here, or the
    refusal of an address that is not device memory."""
    return TypeError if HAS_DEVICE else rt.NoDeviceError


class ImportTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(_core.OPS, ("sum", "prod", "min", "max", "mean"))
        self.assertEqual(_core.DTYPES, ("i32", "i64", "u32", "f32", "f64", "f16", "bf16"))
        for name in ("sum", "prod", "min", "max", "mean", "explain"):
            self.assertTrue(callable(getattr(rt, name)))

    def test_no_framework_is_imported(self):
        # The package reads arrays of the frameworks the caller already imported.
        for framework in ("torch", "cupy", "jax"):
            if framework not in sys.modules:
                self.assertNotIn(framework, sys.modules)

    def test_errors_are_python_errors(self):
        self.assertTrue(issubclass(rt.InvalidArgument, ValueError))
        for error in (rt.NoDeviceError, rt.CudaError, rt.NvrtcError, rt.DbError):
            self.assertTrue(issubclass(error, rt.Error))
        self.assertTrue(issubclass(rt.Error, RuntimeError))


class ArgumentErrorTest(unittest.TestCase):
    def assertRaisesMessage(self, error, text, call, *args, **kwargs):
        with self.assertRaises(error) as caught:
            call(*args, **kwargs)
        self.assertIn(text, str(caught.exception))
        self.assertNotIsInstance(caught.exception, rt.NoDeviceError)

    def test_dim_out_of_range(self):
        x = FakeCuda((3, 4))
        self.assertRaisesMessage(ValueError, "dim 2 is out of range for a tensor of 2 dimensions", rt.sum, x, dim=2)
        self.assertRaisesMessage(ValueError, "dim -3 is out of range", rt.max, x, dim=-3)
        self.assertRaisesMessage(ValueError, "dim 5 is out of range", rt.mean, x, dim=(0, 5))

    def test_dim_repeated(self):
        self.assertRaisesMessage(ValueError, "dim -1 is named more than once", rt.sum, FakeCuda((3, 4)), dim=(1, -1))

    def test_dim_repeated_on_a_0d_tensor(self):
        # A 0-d tensor takes dim 0 and -1 (as in PyTorch), each naming its one "dimension".
        self.assertEqual(rt._axes("sum", (0,), 0, torch_dims=True), ())
        self.assertEqual(rt._axes("sum", -1, 0, torch_dims=True), ())
        for dim in ((0, 0), (0, -1), [-1, -1]):
            self.assertRaisesMessage(ValueError, "is named more than once", rt._axes, "sum", dim, 0, torch_dims=True)

    def test_plan_keys_tell_an_int_dim_from_its_equals(self):
        # 1 == 1.0 == True in Python: a checked plan for dim=1 must not serve dim=1.0.
        for int_dim, other in ((1, 1.0), (1, True), ((0, 1), (0, 1.0)), ([1], [True])):
            int_key = int_dim if type(int_dim) is int else rt._dim_key(int_dim)
            self.assertNotEqual(int_key, rt._dim_key(other), other)
        self.assertEqual(rt._dim_key([0, 1]), (0, 1))  # a list of ints shares the tuple's plan

    def test_an_empty_tuple_of_dims(self):
        # Every dimension for a PyTorch tensor (torch.sum(x, dim=())), none for the rest.
        for dim in ((), []):
            self.assertEqual(rt._axes("sum", dim, 3, torch_dims=True), (0, 1, 2))
            self.assertEqual(rt._axes("sum", dim, 3), ())
            self.assertEqual(rt._axes("sum", dim, 0, torch_dims=True), ())
        self.assertEqual(rt._axes("sum", (-1,), 3, torch_dims=True), (2,))

    def test_dim_of_the_wrong_type(self):
        x = FakeCuda((3, 4))
        self.assertRaisesMessage(TypeError, "dim must be an int", rt.sum, x, dim=1.0)
        self.assertRaisesMessage(TypeError, "not bool", rt.sum, x, dim=True)
        self.assertRaisesMessage(TypeError, "dim entries must be ints", rt.sum, x, dim=(0, "1"))

    def test_unsupported_dtypes(self):
        for typestr in ("<i2", "|b1", "<c8", "|u1", ">f4"):
            self.assertRaisesMessage(TypeError, "supported: int32", rt.sum, FakeCuda((8,), typestr))
        self.assertRaisesMessage(TypeError, "dtype=", rt.sum, FakeCuda((8,)), dtype="int8")

    def test_unsupported_type_pairs(self):
        # An int64 sum has no float32 output; a float64 has no float32 output.
        self.assertRaisesMessage(TypeError, "reduce_tune.sum", rt.sum, FakeCuda((8,), "<i8"), dtype="float32")
        self.assertRaisesMessage(TypeError, "reduce_tune.prod", rt.prod, FakeCuda((8,), "<f8"), dtype="float32")

    def test_bad_shapes(self):
        self.assertRaisesMessage(ValueError, "overflows 64 bits", rt.sum, FakeCuda((1 << 40, 1 << 40)), dim=1)
        self.assertRaisesMessage(ValueError, "at most 8", rt.sum, FakeCuda((1,) * 9))
        self.assertRaisesMessage(ValueError, "not a multiple", rt.sum, FakeCuda((4, 4), strides=(16, 6)), dim=0)

    def test_masked_arrays(self):
        self.assertRaisesMessage(TypeError, "masked", rt.sum, FakeCuda((4,), mask=FakeCuda((4,), "|b1")))

    def test_cpu_arrays(self):
        self.assertRaisesMessage(TypeError, "not in CUDA device memory", rt.sum, FakeDLPack(1))
        self.assertRaisesMessage(TypeError, "pass a CUDA array", rt.sum, [1.0, 2.0, 3.0])
        self.assertRaisesMessage(TypeError, "pass a CUDA array", rt.sum, 3.0)
        try:
            import numpy
        except ImportError:
            return
        self.assertRaisesMessage(TypeError, "not in CUDA device memory", rt.sum, numpy.ones(4, numpy.float32))

    def test_out_argument(self):
        x = FakeCuda((3, 4))
        self.assertRaisesMessage(ValueError, "out= has shape [4], the result has shape [3]", rt.sum, x, dim=1,
                                 out=FakeCuda((4,)))
        self.assertRaisesMessage(ValueError, "out= has shape [3], the result has shape [3, 1]", rt.sum, x, dim=1,
                                 keepdim=True, out=FakeCuda((3,)))
        self.assertRaisesMessage(TypeError, "out= has dtype float64, the result is float32", rt.sum, x, dim=1,
                                 dtype="float32", out=FakeCuda((3,), "<f8"))
        self.assertRaisesMessage(ValueError, "C-contiguous", rt.sum, x, dim=0, out=FakeCuda((4,), strides=(8,)))

    def test_explain(self):
        self.assertRaisesMessage(ValueError, "op must be one of", rt.explain, FakeCuda((3, 4)), op="median")
        self.assertRaisesMessage(ValueError, "out of range", rt.explain, FakeCuda((3, 4)), dim=3)

    def test_well_formed_call_reaches_the_device(self):
        # Nothing wrong with the arguments: the call gets as far as the device, which
        # refuses the made-up address (or is absent).
        with self.assertRaises(expected_device_error()):
            rt.sum(FakeCuda((3, 4)), dim=1, out=FakeCuda((3,)))


# A stand-in for PyTorch, run in a child process (the fast path binds to the first torch
# it sees, for the life of the process): a CUDA tensor at a made-up address, and
# counters of what only the package's Python layer reads (a tensor's layout) and what
# every call does (allocate its result).
FAKE_TORCH_STANDIN = r"""
import json, sys, types
torch = types.ModuleType("torch")
class dtype:
    def __init__(self, name): self.name = name
    def __str__(self): return "torch." + self.name
for name in ("int32", "int64", "uint32", "float32", "float64", "float16", "bfloat16"):
    setattr(torch, name, dtype(name))
torch.dtype = dtype
torch.strided = object()
torch.contiguous_format = object()
counts = {"layout": 0, "empty_like": 0, "stride": 0}
def contiguous(shape):
    strides, step = [], 1
    for e in reversed(shape):
        strides.append(step)
        step *= e
    return tuple(reversed(strides))
class Tensor:
    def __init__(self, shape, strides=None, dt=None, device=0, ptr=0x7F0000000000):
        self.shape, self._strides = tuple(shape), tuple(strides or contiguous(shape))
        self.dtype, self._device, self._ptr = dt or torch.float32, device, ptr
    is_cuda = property(lambda self: self._device >= 0)
    @property
    def layout(self):
        counts["layout"] += 1
        return torch.strided
    def stride(self):
        counts["stride"] += 1
        return self._strides
    def get_device(self): return self._device
    device = property(lambda self: "cuda:%d" % self._device if self._device >= 0 else "cpu")
    def data_ptr(self): return self._ptr
    def expand(self, shape): return Tensor(shape, (0,) * len(shape), self.dtype, self._device)
torch.Tensor = Tensor
torch.empty = lambda shape, dtype=None, device=None: Tensor(shape, None, dtype, device)
def empty_like(t, memory_format=None):
    counts["empty_like"] += 1
    return Tensor(t.shape, None, t.dtype, t._device, 0x7F0000100000)
torch.empty_like = empty_like
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)
sys.modules["torch"] = torch

import reduce_tune as rt
from reduce_tune import _core
# A made-up address: refused by the pointer check where there is a device.
device_error = rt.InvalidArgument if _core.device_count() > 0 else rt.NoDeviceError
"""

FAKE_TORCH = FAKE_TORCH_STANDIN + r"""
x = Tensor((4, 1024))
steps = []
def call(label, **kwargs):
    before = dict(counts)
    try:
        getattr(rt, kwargs.pop("op", "sum"))(kwargs.pop("x", x), **kwargs)
        raised = "none"
    except device_error:
        raised = "device"
    except (TypeError, ValueError) as e:
        raised = type(e).__name__ + ": " + str(e)
    steps.append({"label": label, "raised": raised, "python_layer": counts["layout"] > before["layout"],
                  "allocated": counts["empty_like"] - before["empty_like"]})
call("first", dim=1)
call("again", dim=1)
call("dim as a tuple", dim=(1,))
call("dim as a list from the end", dim=[-1])
call("keepdim, first", dim=1, keepdim=True)
call("keepdim, again", dim=1, keepdims=True)
call("keepdim as an int, first", dim=1, keepdim=1)
call("keepdim as an int, again", dim=1, keepdim=1)
call("a transposed view, first", x=Tensor((1024, 4), (1, 1024)), dim=0)
call("a transposed view, again", x=Tensor((1024, 4), (1, 1024)), dim=0)
call("dim out of range", dim=2)
call("dim out of range, again", dim=2)
call("another op", op="max", dim=1)
call("dtype=, first", dim=1, dtype=torch.float64)
call("dtype=, again", dim=1, dtype=torch.float64)
call("out=, first", dim=1, out=Tensor((4,)))
call("out=, again", dim=1, out=Tensor((4,), ptr=0x7F0000200000))
call("out= on another device", dim=1, out=Tensor((4,), device=1))
call("out= on another device, again", dim=1, out=Tensor((4,), device=1))
call("out= of the wrong shape", dim=1, out=Tensor((5,)))
call("a CPU tensor", x=Tensor((4, 1024), device=-1), dim=1)
# Equal to a checked kind's dim in Python, but not ints: checked, and refused, each time.
call("dim as a float after the int", dim=1.0)
call("dim as a bool after the int", dim=True)
call("dims as floats after the ints", dim=(1.0,))
# Forms the fast path leaves to the Python layer, even after a call of the kind.
steps.append({"label": "fast path for keepdim=1",
              "raised": str(_core.torch_call(rt._SUM, x, 1, 1, None, None, None) is NotImplemented)})
steps.append({"label": "fast path for a 0-d array dim",
              "raised": str(_core.torch_call(rt._SUM, x, types.SimpleNamespace(), False, None, None, None)
                            is NotImplemented)})
print(json.dumps(steps))
"""


class TorchFastPathTest(unittest.TestCase):
    """The PyTorch fast path (against a stand-in for torch, in a child process): the
    first call of a kind goes through the package's checks, a repeated kind skips them,
    and every kind of call that is wrong raises each time."""

    def test_a_checked_kind_skips_the_python_layer(self):
        import json
        import subprocess
        run = subprocess.run([sys.executable, "-c", FAKE_TORCH], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        steps = {s["label"]: s for s in json.loads(run.stdout.strip().splitlines()[-1])}
        # Served by the fast path: no Python checks, one result allocated, the device reached.
        for label in ("again", "dim as a tuple", "dim as a list from the end", "keepdim, again",
                      "a transposed view, again", "dtype=, again"):
            self.assertEqual(steps[label]["raised"], "device", label)
            self.assertFalse(steps[label]["python_layer"], label)
            self.assertEqual(steps[label]["allocated"], 1, label)
        self.assertEqual(steps["out=, again"]["raised"], "device")
        self.assertFalse(steps["out=, again"]["python_layer"])
        self.assertEqual(steps["out=, again"]["allocated"], 0)  # the result is out=
        # A new kind goes through the checks first.
        for label in ("first", "keepdim, first", "a transposed view, first", "another op", "dtype=, first",
                      "out=, first"):
            self.assertEqual(steps[label]["raised"], "device", label)
            self.assertTrue(steps[label]["python_layer"], label)
        # Forms without a fast path stay with the Python layer (its cached checks).
        self.assertEqual(steps["keepdim as an int, again"]["raised"], "device")
        self.assertEqual(steps["fast path for keepdim=1"]["raised"], "True")
        self.assertEqual(steps["fast path for a 0-d array dim"]["raised"], "True")
        # Wrong calls raise every time, never cached.
        for label in ("dim out of range", "dim out of range, again"):
            self.assertIn("ValueError: reduce_tune.sum: dim 2 is out of range", steps[label]["raised"], label)
        for label in ("out= on another device", "out= on another device, again"):
            self.assertIn("out= is on device 1, the input on device 0", steps[label]["raised"], label)
        self.assertIn("out= has shape [5]", steps["out= of the wrong shape"]["raised"])
        self.assertIn("TypeError: reduce_tune.sum: the input is a tensor on", steps["a CPU tensor"]["raised"])
        for label, text in (("dim as a float after the int", "dim must be an int"),
                            ("dim as a bool after the int", "not bool"),
                            ("dims as floats after the ints", "dim entries must be ints")):
            self.assertTrue(steps[label]["raised"].startswith("TypeError: reduce_tune.sum: "), steps[label])
            self.assertIn(text, steps[label]["raised"], label)

    def test_a_call_made_while_the_cache_is_emptied_finds_it_whole(self):
        import json
        import subprocess
        run = subprocess.run([sys.executable, "-c", FAKE_TORCH_CACHE_RESET], capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        result = json.loads(run.stdout.strip().splitlines()[-1])
        self.assertTrue(result["reentered"], result)  # a template died while the cache was emptied
        # The calls its deallocation made were remembered in the emptied cache, not lost
        # with what it dropped (or worse: a double free, as 16 threads of PyTorch calls hit).
        self.assertTrue(result["new kind served fast"], result)
        self.assertTrue(result["checked kind served fast"], result)


# The fast path's cache of checked kinds is emptied when full. A plan it drops may hold
# the last reference to its result template, a tensor whose deallocation can run Python
# code and so let another call in (PyTorch's lets other threads in): such a call must
# find the cache whole. Here a template's __del__ makes that call itself.
FAKE_TORCH_CACHE_RESET = FAKE_TORCH_STANDIN + r"""
armed, reentered = [False], []
class Template(Tensor):
    def expand(self, shape):
        t = Template(shape, (0,) * len(shape), self.dtype, self._device)
        t.cached = True  # the template a plan holds (torch.empty's 0-d tensor dies at once)
        return t
    def __del__(self):
        if armed[0] and not reentered and getattr(self, "cached", False):
            reentered.append(True)
            for t in (Tensor((3, 5, 7)), Tensor((4, 1024))):  # a new kind, and one checked before
                try:
                    rt.sum(t, dim=1)
                except device_error:
                    pass
torch.empty = lambda shape, dtype=None, device=None: Template(shape, None, dtype, device)
def served_fast(t):
    before = counts["stride"]
    try:
        rt.sum(t, dim=1)
    except device_error:
        pass
    return counts["stride"] - before == 1  # the fast path reads the layout once; a miss, three times
served_fast(Tensor((4, 1024)))
# From here the fast path's cache alone holds the templates of the kinds checked so far:
# the first of them to die, when that cache is next emptied, calls again.
rt._plans.clear()
armed[0] = True
n = 1
while not reentered and n < 3 * rt._MAX_PLANS:
    n += 1
    served_fast(Tensor((2, n)))
print(json.dumps({"reentered": bool(reentered), "calls": n,
                  "new kind served fast": served_fast(Tensor((3, 5, 7))),
                  "checked kind served fast": served_fast(Tensor((4, 1024)))}))
"""


# A DLPack producer's tensor is held until the reduction that reads it has run, and let
# go by a later call; its deleter may run any Python code, a call of the package included.
HELD_RELEASE = r"""
import reduce_tune as rt
class Event:  # a stand-in for the CUDA event: the reduction has run
    def __init__(self, stream, device): pass
    def done(self): return True
rt._core.StreamEvent = Event
calls = []
class Producer:
    def __del__(self):
        calls.append("deleter")
        rt._hold(object(), 0, 0)  # the package again, from the deleter
rt._hold(Producer(), 0, 0)
rt._hold(object(), 0, 0)  # lets the producer go
print(calls)
"""


class HeldProducerTest(unittest.TestCase):
    def test_a_deleter_that_calls_the_package_does_not_deadlock(self):
        import subprocess
        run = subprocess.run([sys.executable, "-c", HELD_RELEASE], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertEqual(run.stdout.strip(), "['deleter']")


class CheckTest(unittest.TestCase):
    """_core.check: the canonical form without the device."""

    def test_layouts(self):
        f32 = _core.DTYPES.index("f32")
        self.assertEqual(_core.check(0, f32, f32, (6, 5), (5, 1), (1,)), ("rows", 6, 5))
        self.assertEqual(_core.check(0, f32, f32, (6, 5), (5, 1), (0,)), ("columns", 5, 6))
        self.assertEqual(_core.check(0, f32, f32, (6, 5), (5, 1), (0, 1)), ("flat", 1, 30))
        self.assertEqual(_core.check(0, f32, f32, (6, 5), (1, 6), (1,)), ("columns", 6, 5))  # a transpose
        self.assertEqual(_core.check(0, f32, f32, (4, 3, 5), (15, 5, 1), (0, 2))[0], "general")


class DLPackTest(unittest.TestCase):
    """_core.dlpack_view reads a 'dltensor' capsule as the DLPack ABI lays it out."""

    def test_reads_a_capsule(self):
        class DLDevice(ctypes.Structure):
            _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

        class DLDataType(ctypes.Structure):
            _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

        class DLTensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                        ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

        class DLManagedTensor(ctypes.Structure):
            _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

        shape = (ctypes.c_int64 * 3)(2, 3, 4)
        strides = (ctypes.c_int64 * 3)(1, 8, 2)
        managed = DLManagedTensor()
        managed.dl_tensor.data = 0x1000
        managed.dl_tensor.device = DLDevice(2, 0)
        managed.dl_tensor.ndim = 3
        managed.dl_tensor.dtype = DLDataType(4, 16, 1)  # bfloat16
        managed.dl_tensor.shape = shape
        managed.dl_tensor.strides = strides
        managed.dl_tensor.byte_offset = 64
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        capsule = new_capsule(ctypes.addressof(managed), b"dltensor", None)
        self.assertEqual(_core.dlpack_view(capsule), (0x1040, (2, 3, 4), (1, 8, 2), 4, 16, 1))
        managed.dl_tensor.strides = None
        self.assertEqual(_core.dlpack_view(capsule)[2], None)
        used = new_capsule(ctypes.addressof(managed), b"used_dltensor", None)
        with self.assertRaises(TypeError):
            _core.dlpack_view(used)


if __name__ == "__main__":
    unittest.main()
