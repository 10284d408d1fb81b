// reduce_tune's reduction as an XLA FFI custom call, so that JAX runs it on its own
// stream, inside jax.jit or eagerly, without a host wait or a DLPack round trip.
// Built when XLA's FFI headers are found (jax.ffi.include_dir(); python/CMakeLists.txt).
//
// The call: one operand (the array, dense row-major as jax.ffi.ffi_call passes it), one
// result, and the attributes op (an op code), in_dtype and out_dtype (dtype codes, as
// reduce_tune._core.OPS and DTYPES number them) and axes (the reduced dimensions).
//
// The handler is marked command-buffer compatible: XLA may record it into the CUDA graph
// of a jitted function with its fusions (stream capture, then replays that do not call
// it). The reduction allows that: it only enqueues work on the stream it is given (no
// host wait, no allocation once warm), a first call under capture loads its kernels and
// makes its stream's workspace in relaxed capture mode, and a workspace a graph uses is
// kept alive after a larger call outgrows it (runtime/src/context.cpp).
#include "jax_ffi.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>

#include "reduce_tune/context.h"
#include "reduce_tune/error.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace reduce_tune::python {
namespace {

// How often XLA called the handler, and how many of those calls it made while capturing
// the stream into a command buffer (jax_handler_calls()).
std::atomic<std::uint64_t> handler_calls{0}, captured_calls{0};

ffi::DataType xla_type(DType t) {
  switch (t) {
    case DType::i32: return ffi::DataType::S32;
    case DType::i64: return ffi::DataType::S64;
    case DType::u32: return ffi::DataType::U32;
    case DType::f32: return ffi::DataType::F32;
    case DType::f64: return ffi::DataType::F64;
    case DType::f16: return ffi::DataType::F16;
    case DType::bf16: return ffi::DataType::BF16;
  }
  return ffi::DataType::INVALID;
}

ffi::Error reduce_on_xla_stream(cudaStream_t stream, std::int32_t device, ffi::AnyBuffer in,
                                ffi::Result<ffi::AnyBuffer> out, std::int64_t op_code, std::int64_t in_code,
                                std::int64_t out_code, ffi::Span<const std::int64_t> axes) {
  handler_calls.fetch_add(1, std::memory_order_relaxed);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusActive)
    captured_calls.fetch_add(1, std::memory_order_relaxed);
  try {
    if (op_code < 0 || op_code >= static_cast<std::int64_t>(std::size(kAllOps)) || in_code < 0 ||
        in_code >= static_cast<std::int64_t>(std::size(kAllDTypes)) || out_code < 0 ||
        out_code >= static_cast<std::int64_t>(std::size(kAllDTypes)))
      return ffi::Error::InvalidArgument("reduce_tune: unknown op or dtype code");
    const Op op = kAllOps[op_code];
    const DType in_type = kAllDTypes[in_code], out_type = kAllDTypes[out_code];
    // The buffers must be what the codes say: a mismatch (JAX without x64 turning a
    // 64-bit result into 32 bits, say) would otherwise write past the result.
    if (in.element_type() != xla_type(in_type) || out->element_type() != xla_type(out_type))
      return ffi::Error::InvalidArgument(std::string("reduce_tune: the operand or result is not ") +
                                         std::string(to_string(in_type)) + " -> " +
                                         std::string(to_string(out_type)));
    const auto dims = in.dimensions();
    if (dims.size() > static_cast<std::size_t>(kMaxRank))
      return ffi::Error::InvalidArgument("reduce_tune: more than 8 dimensions");
    if (axes.size() > static_cast<std::size_t>(kMaxRank))
      return ffi::Error::InvalidArgument("reduce_tune: more than 8 axes");
    const TensorDesc tensor = TensorDesc::contiguous(dims.begin(), static_cast<int>(dims.size()));
    AxisList list;
    list.count = static_cast<int>(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) list.axes[i] = static_cast<int>(axes[i]);
    // XLA's thread need not have the buffer's device current.
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return ffi::Error::Internal("reduce_tune: cudaGetDevice failed");
    if (previous != device && cudaSetDevice(device) != cudaSuccess)
      return ffi::Error::Internal("reduce_tune: cudaSetDevice failed");
    struct Restore {
      int previous, device;
      ~Restore() {
        if (previous != device) cudaSetDevice(previous);
      }
    } restore{previous, device};
    default_context().reduce_axes(op, in_type, out_type, in.untyped_data(), tensor, list, out->untyped_data(),
                                  stream);
    return ffi::Error::Success();
  } catch (const InvalidArgument& e) {
    return ffi::Error::InvalidArgument(std::string("reduce_tune: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("reduce_tune: ") + e.what());
  }
}

}  // namespace

#define REDUCE_TUNE_XLA_BINDING                 \
  ffi::Ffi::Bind()                              \
      .Ctx<ffi::PlatformStream<cudaStream_t>>() \
      .Ctx<ffi::DeviceOrdinal>()                \
      .Arg<ffi::AnyBuffer>()                    \
      .Ret<ffi::AnyBuffer>()                    \
      .Attr<std::int64_t>("op")                 \
      .Attr<std::int64_t>("in_dtype")           \
      .Attr<std::int64_t>("out_dtype")          \
      .Attr<ffi::Span<const std::int64_t>>("axes")

XLA_FFI_DEFINE_HANDLER_SYMBOL(reduce_handler, reduce_on_xla_stream, REDUCE_TUNE_XLA_BINDING,
                              {ffi::Traits::kCmdBufferCompatible});
// The same handler without the trait: XLA then launches it on its own, outside its
// command buffers (REDUCE_TUNE_JAX_COMMAND_BUFFERS=0).
XLA_FFI_DEFINE_HANDLER_SYMBOL(reduce_handler_uncaptured, reduce_on_xla_stream, REDUCE_TUNE_XLA_BINDING);

void* xla_reduce_handler(bool command_buffers) {
  return command_buffers ? reinterpret_cast<void*>(&reduce_handler) : reinterpret_cast<void*>(&reduce_handler_uncaptured);
}

HandlerCalls xla_handler_calls() {
  return {handler_calls.load(std::memory_order_relaxed), captured_calls.load(std::memory_order_relaxed)};
}

}  // namespace reduce_tune::python
