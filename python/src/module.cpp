// reduce_tune._core: the C++ runtime under the Python package (python/reduce_tune).
// The package's Python layer reads the caller's array (PyTorch, CuPy, JAX, DLPack or
// __cuda_array_interface__), checks every argument and creates the output; this module
// enqueues the reduction through reduce_tune::default_context() with the GIL released.
//
// Every argument check here runs before any CUDA call, so a bad shape or type is
// reported as ValueError/TypeError on a machine without a GPU too.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "reduce_tune/context.h"
#include "reduce_tune/error.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"
#if REDUCE_TUNE_HAS_XLA_FFI
#include "jax_ffi.h"
#endif

namespace nb = nanobind;
using namespace reduce_tune;

namespace {

Op op_of(int code) {
  if (code < 0 || code >= static_cast<int>(std::size(kAllOps))) throw nb::value_error("unknown op code");
  return kAllOps[code];
}
DType dtype_of(int code) {
  if (code < 0 || code >= static_cast<int>(std::size(kAllDTypes))) throw nb::value_error("unknown dtype code");
  return kAllDTypes[code];
}

// A shape and its element strides, from two Python tuples of ints.
TensorDesc tensor_of(nb::handle shape, nb::handle strides) {
  const std::size_t rank = nb::len(shape);
  if (nb::len(strides) != rank) throw nb::value_error("shape and strides differ in length");
  if (rank > static_cast<std::size_t>(kMaxRank))
    throw nb::value_error(("the tensor has " + std::to_string(rank) + " dimensions; at most " +
                           std::to_string(kMaxRank) + " are supported")
                              .c_str());
  TensorDesc t;
  t.rank = static_cast<int>(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    t.extents[i] = nb::cast<std::int64_t>(shape[i]);
    t.strides[i] = nb::cast<std::int64_t>(strides[i]);
  }
  return t;
}

AxisList axes_of(nb::handle axes) {
  const std::size_t count = nb::len(axes);
  if (count > static_cast<std::size_t>(kMaxRank)) throw nb::value_error("more axes than dimensions");
  AxisList list;
  list.count = static_cast<int>(count);
  for (std::size_t i = 0; i < count; ++i) list.axes[i] = nb::cast<int>(axes[i]);
  return list;
}

// The CPU-only checks of a call: the type rule and the canonical form. Throws
// InvalidArgument (ValueError in Python) naming the problem.
CanonicalAxes checked(Op op, DType in, DType out, const TensorDesc& t, const AxisList& axes) {
  const TypeRuleResult types = resolve_types(op, in, out);
  if (!types.rule) throw InvalidArgument(types.error);
  CanonicalResult c = canonicalize(t, axes);
  if (!c.ok) throw InvalidArgument(c.error);
  return c.axes;
}

void cuda_check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver || status == cudaErrorInvalidDevice)
    throw NoDeviceError(std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")");
  throw CudaError(static_cast<int>(status), what, cudaGetErrorString(status));
}

// Makes `device` current for the scope of a call and puts the caller's device back.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) {
      cuda_check(cudaSetDevice(device), "cudaSetDevice");
      switched_ = true;
    }
  }
  ~DeviceScope() {
    if (switched_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// DLPack's C ABI (dlpack.h, unversioned "dltensor" capsules), declared here: the layout
// is fixed by the DLPack specification.
struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: C-contiguous
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

cudaStream_t stream_of(std::uintptr_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

// Device memory the package allocates for a result whose framework it cannot ask (an
// object that offers only __cuda_array_interface__ or __dlpack__): stream-ordered, freed
// on the stream it was made for once the Python object goes away.
class DeviceBuffer {
 public:
  DeviceBuffer(std::size_t bytes, int device, std::uintptr_t stream) : device_(device), stream_(stream) {
    DeviceScope scope(device);
    if (bytes > 0) cuda_check(cudaMallocAsync(&ptr_, bytes, stream_of(stream)), "cudaMallocAsync");
  }
  ~DeviceBuffer() {
    if (ptr_ == nullptr) return;
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    if (previous != device_) cudaSetDevice(device_);
    cudaFreeAsync(ptr_, stream_of(free_stream_));
    if (previous != device_) cudaSetDevice(previous);
  }
  // A consumer reads the buffer on `consumer`: its work there waits for the result, and
  // the buffer is freed in its order (after the consumer's work enqueued by then).
  void hand_to(std::uintptr_t consumer) {
    if (consumer == stream_) return;
    DeviceScope scope(device_);
    cudaEvent_t event = nullptr;
    cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    cudaError_t status = cudaEventRecord(event, stream_of(stream_));
    if (status == cudaSuccess) status = cudaStreamWaitEvent(stream_of(consumer), event, 0);
    cudaEventDestroy(event);
    cuda_check(status, "cudaStreamWaitEvent");
    free_stream_ = consumer;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::uintptr_t ptr() const { return reinterpret_cast<std::uintptr_t>(ptr_); }
  int device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  int device_ = 0;
  std::uintptr_t stream_ = 0;
  std::uintptr_t free_stream_ = stream_;
};

// An event recorded on a stream: done() once the stream's work enqueued before it has
// run. The package holds a DLPack producer's tensor until then.
class StreamEvent {
 public:
  StreamEvent(std::uintptr_t stream, int device) : device_(device) {
    DeviceScope scope(device);
    cuda_check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    const cudaError_t status = cudaEventRecord(event_, stream_of(stream));
    if (status != cudaSuccess) {
      cudaEventDestroy(event_);
      cuda_check(status, "cudaEventRecord");
    }
  }
  ~StreamEvent() { cudaEventDestroy(event_); }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  bool done() const {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    cuda_check(status, "cudaEventQuery");
    return true;
  }
  void wait() const {
    nb::gil_scoped_release released;
    cuda_check(cudaEventSynchronize(event_), "cudaEventSynchronize");
  }

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = 0;
};

// A DLPack export of a DeviceBuffer: the capsule's tensor keeps the buffer's Python
// object alive until the consumer calls the deleter (from any thread).
struct Export {
  DLManagedTensor managed{};
  std::int64_t shape[kMaxRank] = {};
  PyObject* owner = nullptr;
};

void release_export(DLManagedTensor* managed) {
  Export* e = reinterpret_cast<Export*>(managed);
  if (Py_IsInitialized()) {
    PyGILState_STATE state = PyGILState_Ensure();
    Py_XDECREF(e->owner);
    PyGILState_Release(state);
  }
  delete e;
}

void capsule_destructor(PyObject* capsule) {
  // A capsule nobody consumed still owns its tensor.
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  }
}

// DLPack's (code, bits) for our element types.
DLDataType dlpack_dtype(DType t) {
  switch (t) {
    case DType::i32: return {0, 32, 1};
    case DType::i64: return {0, 64, 1};
    case DType::u32: return {1, 32, 1};
    case DType::f32: return {2, 32, 1};
    case DType::f64: return {2, 64, 1};
    case DType::f16: return {2, 16, 1};
    case DType::bf16: return {4, 16, 1};
  }
  return {0, 0, 0};
}

// A stream as the DLPack protocol names it: 1 or None the legacy default stream, 2 the
// per-thread default stream, anything else a cudaStream_t.
std::uintptr_t dlpack_stream(std::uintptr_t stream) {
  if (stream == 1) return 0;
  return stream;  // 2 is cudaStreamPerThread's handle value
}

// ---- The PyTorch fast path ----
//
// A call on a torch.Tensor (the exact type, on a CUDA device) whose kind of call the
// package has checked before goes from the Python function straight to the launch:
// the key of the call (op, the tensor's dtype, shape, strides and device, the axes,
// keepdim, dtype=, and out='s dtype, shape, strides and device) is read with a few
// attribute calls and looked up here. A miss, or any argument outside the plain forms
// (dim an int, a tuple or list of ints, or None; keepdim a bool; dtype= None or a
// torch.dtype), answers NotImplemented, and the package's Python layer checks the call,
// raises what is wrong or tells this cache the plan (torch_remember). Every argument
// check the Python layer makes thus holds for every call served here; the C++ context
// still checks the pointers of each call.
struct TorchKey {
  int op = 0;
  PyObject* dtype = nullptr;  // torch dtypes are singletons of the torch module
  PyObject* out_dtype_arg = nullptr;
  int rank = 0;
  std::int64_t extents[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
  int device = 0;
  unsigned axes = 0;  // bit i: axis i reduced
  bool keepdim = false;
  bool has_out = false;
  PyObject* out_dtype = nullptr;
  int out_rank = 0;
  std::int64_t out_extents[kMaxRank] = {};
  std::int64_t out_strides[kMaxRank] = {};
  int out_device = 0;
  bool operator==(const TorchKey& o) const {
    return op == o.op && dtype == o.dtype && out_dtype_arg == o.out_dtype_arg && rank == o.rank &&
           std::equal(extents, extents + rank, o.extents) && std::equal(strides, strides + rank, o.strides) &&
           device == o.device && axes == o.axes && keepdim == o.keepdim && has_out == o.has_out &&
           out_dtype == o.out_dtype && out_rank == o.out_rank &&
           std::equal(out_extents, out_extents + out_rank, o.out_extents) &&
           std::equal(out_strides, out_strides + out_rank, o.out_strides) && out_device == o.out_device;
  }
};
struct TorchKeyHash {
  std::size_t operator()(const TorchKey& k) const {
    std::size_t h = std::hash<const void*>()(k.dtype) ^ (static_cast<std::size_t>(k.op) << 1);
    auto mix = [&](std::int64_t v) { h = h * 1099511628211ull ^ static_cast<std::size_t>(v); };
    for (int i = 0; i < k.rank; ++i) {
      mix(k.extents[i]);
      mix(k.strides[i]);
    }
    mix(k.device);
    mix(k.axes);
    mix(k.keepdim);
    mix(reinterpret_cast<std::intptr_t>(k.out_dtype_arg));
    mix(k.has_out);
    for (int i = 0; i < k.out_rank; ++i) mix(k.out_extents[i]);
    return h;
  }
};
struct TorchPlan {
  Op op = Op::sum;
  DType in = DType::f32, out = DType::f32;
  AxisList axes;
  nb::object result_template;  // empty_like of it is the result (None with out=)
};

struct TorchState {
  bool bound = false;
  PyTypeObject* tensor_type = nullptr;
  PyTypeObject* dtype_type = nullptr;
  nb::object empty_like, empty_like_kwargs, raw_stream;
  nb::object shape_name, stride_name, get_device_name, dtype_name, is_cuda_name, data_ptr_name;
  std::unordered_map<TorchKey, TorchPlan, TorchKeyHash> plans;
};
// Touched with the GIL held only, and never changed while Python code runs (see
// torch_remember); never destroyed (the interpreter may outlive it).
TorchState& torch_state() {
  static TorchState* state = new TorchState;
  return *state;
}
constexpr std::size_t kMaxTorchPlans = 4096;

// An int64 of a Python int, or false.
bool int64_of(PyObject* o, std::int64_t* v) {
  if (o == nullptr || !PyLong_Check(o) || PyBool_Check(o)) return false;
  int overflow = 0;
  *v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0 || (*v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// A tuple (or torch.Size) of at most kMaxRank ints into `values`; false otherwise.
bool ints_of(PyObject* tuple, std::int64_t* values, int* count) {
  if (tuple == nullptr || !PyTuple_Check(tuple)) return false;
  const Py_ssize_t n = PyTuple_Size(tuple);
  if (n < 0 || n > kMaxRank) return false;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!int64_of(PyTuple_GetItem(tuple, i), &values[i])) return false;
  *count = static_cast<int>(n);
  return true;
}

// dtype, shape, strides and device of a CUDA torch.Tensor, or false (an exception
// raised on the way is cleared: the Python layer reports the problem).
bool read_tensor(const TorchState& st, nb::handle t, PyObject** dtype, std::int64_t* extents, std::int64_t* strides,
                 int* rank, int* device) {
  nb::object is_cuda = nb::steal(PyObject_GetAttr(t.ptr(), st.is_cuda_name.ptr()));
  if (!is_cuda.is_valid() || is_cuda.ptr() != Py_True) {
    PyErr_Clear();
    return false;
  }
  nb::object shape = nb::steal(PyObject_GetAttr(t.ptr(), st.shape_name.ptr()));
  nb::object stride = nb::steal(PyObject_CallMethodObjArgs(t.ptr(), st.stride_name.ptr(), nullptr));
  nb::object dev = nb::steal(PyObject_CallMethodObjArgs(t.ptr(), st.get_device_name.ptr(), nullptr));
  nb::object dt = nb::steal(PyObject_GetAttr(t.ptr(), st.dtype_name.ptr()));
  int stride_rank = 0;
  std::int64_t device_value = 0;
  if (!shape.is_valid() || !stride.is_valid() || !dev.is_valid() || !dt.is_valid() ||
      !ints_of(shape.ptr(), extents, rank) || !ints_of(stride.ptr(), strides, &stride_rank) || stride_rank != *rank ||
      !int64_of(dev.ptr(), &device_value) || device_value < 0 || device_value > 65535) {
    PyErr_Clear();
    return false;
  }
  *device = static_cast<int>(device_value);
  *dtype = dt.ptr();  // a torch dtype lives as long as the torch module
  return true;
}

// The key of a call, or false where an argument is not in a plain form.
bool torch_key(const TorchState& st, int op, nb::handle x, nb::handle dim, nb::handle keepdim, nb::handle keepdims,
               nb::handle dtype, nb::handle out, TorchKey* k) {
  if (!st.bound || Py_TYPE(x.ptr()) != st.tensor_type) return false;
  if (!out.is_none() && Py_TYPE(out.ptr()) != st.tensor_type) return false;
  k->op = op;
  if (!read_tensor(st, x, &k->dtype, k->extents, k->strides, &k->rank, &k->device)) return false;
  nb::handle keep = keepdims.is_none() ? keepdim : keepdims;
  if (keep.ptr() != Py_True && keep.ptr() != Py_False) return false;
  k->keepdim = keep.ptr() == Py_True;
  if (!dtype.is_none() && Py_TYPE(dtype.ptr()) != st.dtype_type) return false;
  k->out_dtype_arg = dtype.is_none() ? nullptr : dtype.ptr();
  if (k->rank == 0) return false;  // 0-d tensors take the Python layer's rules
  auto add_axis = [&](PyObject* item) {
    std::int64_t d = 0;
    if (!int64_of(item, &d) || d < -k->rank || d >= k->rank) return false;
    const unsigned bit = 1u << (d < 0 ? d + k->rank : d);
    if (k->axes & bit) return false;  // named twice: the Python layer says so
    k->axes |= bit;
    return true;
  };
  k->axes = 0;
  if (dim.is_none()) {
    k->axes = (1u << k->rank) - 1;
  } else if (PyTuple_Check(dim.ptr()) || PyList_Check(dim.ptr())) {
    nb::object items = nb::steal(PySequence_Tuple(dim.ptr()));
    if (!items.is_valid()) {
      PyErr_Clear();
      return false;
    }
    const Py_ssize_t n = PyTuple_Size(items.ptr());
    if (n == 0) k->axes = (1u << k->rank) - 1;  // dim=(): every dimension, as in PyTorch
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!add_axis(PyTuple_GetItem(items.ptr(), i))) return false;
  } else if (!add_axis(dim.ptr())) {
    return false;
  }
  k->has_out = !out.is_none();
  if (k->has_out && !read_tensor(st, out, &k->out_dtype, k->out_extents, k->out_strides, &k->out_rank, &k->out_device))
    return false;
  return true;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "reduce-tune's C++ runtime (use the reduce_tune package, not this module)";

  // Errors: argument errors are ValueError, the rest RuntimeError.
  // The base class first: nanobind tries the translators registered last first.
  nb::exception<reduce_tune::Error> error(m, "Error", PyExc_RuntimeError);
  nb::exception<reduce_tune::InvalidArgument>(m, "InvalidArgument", PyExc_ValueError);
  nb::exception<reduce_tune::NoDeviceError>(m, "NoDeviceError", error);
  nb::exception<reduce_tune::CudaError>(m, "CudaError", error);
  nb::exception<reduce_tune::NvrtcError>(m, "NvrtcError", error);
  nb::exception<reduce_tune::DbError>(m, "DbError", error);

  {
    nb::list ops, dtypes;
    for (Op op : kAllOps) ops.append(nb::str(std::string(to_string(op)).c_str()));
    for (DType t : kAllDTypes) dtypes.append(nb::str(std::string(to_string(t)).c_str()));
    m.attr("OPS") = nb::tuple(ops);        // op code = index
    m.attr("DTYPES") = nb::tuple(dtypes);  // dtype code = index
  }

#if REDUCE_TUNE_HAS_XLA_FFI
  m.attr("HAS_JAX_FFI") = true;
  m.def(
      "jax_handler",
      [](bool command_buffers) {
        // An unnamed capsule of the handler's address, as jax.ffi.register_ffi_target takes it.
        PyObject* capsule = PyCapsule_New(reduce_tune::python::xla_reduce_handler(command_buffers), nullptr, nullptr);
        if (capsule == nullptr) throw nb::python_error();
        return nb::steal(capsule);
      },
      nb::arg("command_buffers") = true,
      "The XLA FFI handler of the reduction (for jax.ffi.register_ffi_target); with\n"
      "command_buffers false, one XLA never records into its command buffers.");
  m.def(
      "jax_handler_calls",
      [] {
        const reduce_tune::python::HandlerCalls c = reduce_tune::python::xla_handler_calls();
        return nb::make_tuple(c.calls, c.captured);
      },
      "(calls, captured): how often XLA called the handler in this process, and how many of\n"
      "those calls it made while capturing a command buffer (a CUDA graph it replays later).");
#else
  m.attr("HAS_JAX_FFI") = false;
#endif

  m.def(
      "check_types",
      [](int op, int in, int out) -> std::string {
        const TypeRuleResult r = resolve_types(op_of(op), dtype_of(in), dtype_of(out));
        return r.rule ? std::string() : r.error;
      },
      "The empty string when (op, in, out) is supported, else why not. CPU only.");
  m.def(
      "default_out_dtype",
      [](int op, int in) {
        const DType out = default_out_dtype(op_of(op), dtype_of(in));
        for (std::size_t i = 0; i < std::size(kAllDTypes); ++i)
          if (kAllDTypes[i] == out) return static_cast<int>(i);
        return -1;
      },
      "The output dtype code a call gets when it names none. CPU only.");
  m.def(
      "check",
      [](int op, int in, int out, nb::handle shape, nb::handle strides, nb::handle axes) {
        const TensorDesc t = tensor_of(shape, strides);
        const CanonicalAxes c = checked(op_of(op), dtype_of(in), dtype_of(out), t, axes_of(axes));
        return nb::make_tuple(std::string(to_string(c.layout)), c.outputs, c.reduced);
      },
      "Checks a call without touching the device: (layout, outputs, R), or ValueError.");

  m.def(
      "reduce",
      [](int op_code, int in_code, int out_code, std::uintptr_t in, nb::handle shape, nb::handle strides,
         nb::handle axes, std::uintptr_t out, std::uintptr_t stream, int device) {
        const Op op = op_of(op_code);
        const DType in_t = dtype_of(in_code), out_t = dtype_of(out_code);
        // The package checked these (check()) before its first call of this kind; the
        // context checks them again before it reads any pointer.
        const TensorDesc t = tensor_of(shape, strides);
        const AxisList list = axes_of(axes);
        nb::gil_scoped_release released;
        DeviceScope scope(device);
        default_context().reduce_axes(op, in_t, out_t, reinterpret_cast<const void*>(in), t, list,
                                      reinterpret_cast<void*>(out), stream_of(stream));
      },
      nb::arg("op"), nb::arg("in_dtype"), nb::arg("out_dtype"), nb::arg("in_ptr"), nb::arg("shape"),
      nb::arg("strides"), nb::arg("axes"), nb::arg("out_ptr"), nb::arg("stream"), nb::arg("device"),
      "Enqueues the reduction of the view (element strides) along `axes` into the C-contiguous output.");

  m.def(
      "explain",
      [](int op_code, int in_code, int out_code, nb::handle shape, nb::handle strides, nb::handle axes, int device,
         std::uintptr_t in) {
        const Op op = op_of(op_code);
        const DType in_t = dtype_of(in_code), out_t = dtype_of(out_code);
        const TensorDesc t = tensor_of(shape, strides);
        const AxisList list = axes_of(axes);
        checked(op, in_t, out_t, t, list);
        nb::gil_scoped_release released;
        DeviceScope scope(device);
        return default_context().explain_axes(op, in_t, out_t, t, list, reinterpret_cast<const void*>(in)).to_string();
      },
      nb::arg("op"), nb::arg("in_dtype"), nb::arg("out_dtype"), nb::arg("shape"), nb::arg("strides"), nb::arg("axes"),
      nb::arg("device"), nb::arg("in_ptr") = 0,
      "What reduce() would run on `device` for a view at `in_ptr` (0: a base on every vector grid), and why.");

  m.def(
      "device_count",
      [] {
        // 0 where CUDA has no usable device (no driver included): never raises.
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
          cudaGetLastError();
          return 0;
        }
        return count;
      },
      "The number of usable CUDA devices (0 without a driver or device).");
  m.def(
      "package_stream",
      [](int device) {
        // The package's own stream on `device` (non-blocking, created once, kept for the
        // process): DLPack inputs from producers without a notion of a current stream
        // (JAX, or any DLPack producer) are reduced on it.
        static std::mutex mutex;
        static std::unordered_map<int, cudaStream_t> streams;
        std::lock_guard<std::mutex> lock(mutex);
        auto found = streams.find(device);
        if (found != streams.end()) return reinterpret_cast<std::uintptr_t>(found->second);
        DeviceScope scope(device);
        cudaStream_t stream = nullptr;
        cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        streams.emplace(device, stream);
        return reinterpret_cast<std::uintptr_t>(stream);
      },
      "The package's own CUDA stream on a device.");
  m.def(
      "pointer_device",
      [](std::uintptr_t ptr) {
        // The device that owns `ptr`, or -1 for host memory CUDA does not map.
        cudaPointerAttributes attributes{};
        const cudaError_t status = cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(ptr));
        if (status == cudaErrorInvalidValue) {
          cudaGetLastError();
          return -1;
        }
        cuda_check(status, "cudaPointerGetAttributes");
        if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged)
          return attributes.device;
        return -1;
      },
      "The CUDA device that owns a pointer (-1: not device memory).");

  m.def(
      "dlpack_view",
      [](nb::handle capsule) {
        // Reads a "dltensor" capsule without consuming it: the producer's capsule
        // destructor releases the tensor when the capsule goes away.
        if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
          throw nb::type_error("__dlpack__ did not return an unused 'dltensor' capsule");
        const auto* managed = static_cast<const DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
        const DLTensor& t = managed->dl_tensor;
        if (t.ndim < 0 || t.ndim > kMaxRank)
          throw nb::value_error(("the DLPack tensor has " + std::to_string(t.ndim) + " dimensions; at most " +
                                 std::to_string(kMaxRank) + " are supported")
                                    .c_str());
        nb::list shape, strides;
        for (int i = 0; i < t.ndim; ++i) {
          shape.append(t.shape[i]);
          if (t.strides != nullptr) strides.append(t.strides[i]);
        }
        const std::uintptr_t ptr = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
        return nb::make_tuple(ptr, nb::tuple(shape), t.strides != nullptr ? nb::object(nb::tuple(strides)) : nb::none(),
                              static_cast<int>(t.dtype.code), static_cast<int>(t.dtype.bits),
                              static_cast<int>(t.dtype.lanes));
      },
      "(ptr, shape, strides or None, type code, bits, lanes) of a DLPack capsule.");

  m.def(
      "to_dlpack",
      [](nb::handle buffer_object, nb::handle shape, int dtype_code, nb::object consumer) {
        DeviceBuffer& buffer = nb::cast<DeviceBuffer&>(buffer_object);
        const std::size_t rank = nb::len(shape);
        if (rank > static_cast<std::size_t>(kMaxRank)) throw nb::value_error("too many dimensions");
        // stream -1: the consumer asks for no synchronisation.
        if (!consumer.is_none()) {
          const std::int64_t s = nb::cast<std::int64_t>(consumer);
          if (s != -1) buffer.hand_to(dlpack_stream(static_cast<std::uintptr_t>(s)));
        } else {
          buffer.hand_to(0);
        }
        auto* e = new Export;
        e->managed.dl_tensor.data = reinterpret_cast<void*>(buffer.ptr());
        e->managed.dl_tensor.device = {2, buffer.device()};
        e->managed.dl_tensor.ndim = static_cast<std::int32_t>(rank);
        e->managed.dl_tensor.dtype = dlpack_dtype(dtype_of(dtype_code));
        for (std::size_t i = 0; i < rank; ++i) e->shape[i] = nb::cast<std::int64_t>(shape[i]);
        e->managed.dl_tensor.shape = e->shape;
        e->managed.dl_tensor.strides = nullptr;  // C-contiguous
        e->managed.deleter = release_export;
        e->owner = buffer_object.ptr();
        Py_INCREF(e->owner);
        PyObject* capsule = PyCapsule_New(&e->managed, "dltensor", capsule_destructor);
        if (capsule == nullptr) {
          release_export(&e->managed);
          throw nb::python_error();
        }
        return nb::steal(capsule);
      },
      "A DLPack capsule of a DeviceBuffer, ready for the consumer's stream.");

  m.def(
      "torch_bind",
      [](nb::handle tensor_type, nb::handle dtype_type, nb::object empty_like, nb::object contiguous_format,
         nb::object raw_stream) {
        TorchState& st = torch_state();
        if (st.bound) return;
        if (!PyType_Check(tensor_type.ptr()) || !PyType_Check(dtype_type.ptr()))
          throw nb::type_error("torch_bind: torch.Tensor and torch.dtype must be types");
        st.tensor_type = reinterpret_cast<PyTypeObject*>(tensor_type.inc_ref().ptr());
        st.dtype_type = reinterpret_cast<PyTypeObject*>(dtype_type.inc_ref().ptr());
        st.empty_like = std::move(empty_like);
        nb::dict kwargs;
        kwargs["memory_format"] = contiguous_format;
        st.empty_like_kwargs = std::move(kwargs);
        st.raw_stream = std::move(raw_stream);
        st.shape_name = nb::str("shape");
        st.stride_name = nb::str("stride");
        st.get_device_name = nb::str("get_device");
        st.dtype_name = nb::str("dtype");
        st.is_cuda_name = nb::str("is_cuda");
        st.data_ptr_name = nb::str("data_ptr");
        st.bound = true;
      },
      "Binds the PyTorch fast path to torch's objects (once).");
  m.def(
      "torch_remember",
      [](int op, nb::handle x, nb::handle dim, nb::handle keepdim, nb::handle keepdims, nb::handle dtype,
         nb::handle out, int in_code, int out_code, nb::handle axes, nb::object result_template) {
        // A plan the Python layer checked: served by torch_call from now on.
        TorchState& st = torch_state();
        TorchKey k;
        if (!torch_key(st, op, x, dim, keepdim, keepdims, dtype, out, &k)) return false;
        TorchPlan plan;
        plan.op = op_of(op);
        plan.in = dtype_of(in_code);
        plan.out = dtype_of(out_code);
        plan.axes = axes_of(axes);
        plan.result_template = std::move(result_template);
        // Dropping a plan can drop the last reference to its template, and a tensor's
        // deallocation may run Python code and let other threads in (torch's does): such
        // a thread must find the cache whole. So the cache is changed first and the
        // plans it lets go of die after it is no longer touched: a full cache is swapped
        // for an empty one, and a plan stored again is swapped with its old self.
        std::unordered_map<TorchKey, TorchPlan, TorchKeyHash> dropped;
        if (st.plans.size() >= kMaxTorchPlans) dropped.swap(st.plans);
        std::swap(st.plans[k], plan);
        return true;  // `dropped`, then `plan` (the one replaced, if any), die here
      },
      nb::arg("op"), nb::arg("x").none(), nb::arg("dim").none(), nb::arg("keepdim").none(),
      nb::arg("keepdims").none(), nb::arg("dtype").none(), nb::arg("out").none(), nb::arg("in_dtype"),
      nb::arg("out_dtype"), nb::arg("axes"), nb::arg("result_template").none(),
      "Stores the checked plan of a PyTorch call; false where the call has no fast path.");
  m.def(
      "torch_call",
      [](int op, nb::handle x, nb::handle dim, nb::handle keepdim, nb::handle keepdims, nb::handle dtype,
         nb::handle out) -> nb::object {
        TorchState& st = torch_state();
        TorchKey k;
        if (!torch_key(st, op, x, dim, keepdim, keepdims, dtype, out, &k)) return nb::borrow(Py_NotImplemented);
        const auto found = st.plans.find(k);
        if (found == st.plans.end()) return nb::borrow(Py_NotImplemented);
        // A copy: torch releases the GIL inside its calls below, and another thread may
        // then clear the cache.
        const TorchPlan plan = found->second;
        nb::object result;
        if (k.has_out) {
          result = nb::borrow(out);
        } else {
          nb::tuple args = nb::make_tuple(plan.result_template);
          result = nb::steal(PyObject_Call(st.empty_like.ptr(), args.ptr(), st.empty_like_kwargs.ptr()));
          if (!result.is_valid()) throw nb::python_error();
        }
        nb::object in_ptr = nb::steal(PyObject_CallMethodObjArgs(x.ptr(), st.data_ptr_name.ptr(), nullptr));
        nb::object out_ptr = nb::steal(PyObject_CallMethodObjArgs(result.ptr(), st.data_ptr_name.ptr(), nullptr));
        nb::object stream = st.raw_stream(k.device);
        if (!in_ptr.is_valid() || !out_ptr.is_valid()) throw nb::python_error();
        const auto in = reinterpret_cast<const void*>(nb::cast<std::uintptr_t>(in_ptr));
        const auto out_address = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(out_ptr));
        const cudaStream_t s = stream_of(nb::cast<std::uintptr_t>(stream));
        const TensorDesc t = TensorDesc::strided(k.extents, k.strides, k.rank);
        const Op op_value = plan.op;
        const DType in_t = plan.in, out_t = plan.out;
        const AxisList axes = plan.axes;
        {
          nb::gil_scoped_release released;
          DeviceScope scope(k.device);
          default_context().reduce_axes(op_value, in_t, out_t, in, t, axes, out_address, s);
        }
        return result;
      },
      nb::arg("op"), nb::arg("x").none(), nb::arg("dim").none(), nb::arg("keepdim").none(),
      nb::arg("keepdims").none(), nb::arg("dtype").none(), nb::arg("out").none(),
      "A checked PyTorch call, enqueued on torch's current stream; NotImplemented where the "
      "Python layer must check it first.");

  nb::class_<StreamEvent>(m, "StreamEvent")
      .def(nb::init<std::uintptr_t, int>(), nb::arg("stream"), nb::arg("device"))
      .def("done", &StreamEvent::done)
      .def("wait", &StreamEvent::wait);

  nb::class_<DeviceBuffer>(m, "DeviceBuffer")
      .def(nb::init<std::size_t, int, std::uintptr_t>(), nb::arg("nbytes"), nb::arg("device"), nb::arg("stream"))
      .def_prop_ro("ptr", &DeviceBuffer::ptr);
}
