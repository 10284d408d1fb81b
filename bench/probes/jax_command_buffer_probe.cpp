// Probe (not part of the package): whether XLA may capture reduce_tune's FFI custom call
// into its command buffers (CUDA graphs), and what XLA's custom-call path itself costs.
// It compiles the package's handler (python/src/jax_ffi.cpp) as it is, then exports four
// handler symbols over the same binding:
//   probe_rt_plain   the package's reduction, no traits (what the package registered
//                    before 2026-11-29);
//   probe_rt_graph   the same reduction, marked command-buffer compatible (as the
//                    package's handler is since);
//   probe_noop       a handler that does nothing (XLA's custom-call path alone);
//   probe_noop_graph the same, marked command-buffer compatible.
// bench/probes/jax_command_buffer_probe.py loads it with ctypes and times each against
// jax.jit(jnp.sum). Built by hand against a Python build's static libraries (B, below),
// with the XLA FFI headers of the JAX that will run it (INC = jax.ffi.include_dir()):
//   g++ -std=c++17 -O2 -fPIC -shared bench/probes/jax_command_buffer_probe.cpp \
//     -o libjax_cb_probe.so -I$INC -Iruntime/include -Icore/include -Iengine/include \
//     -I/usr/local/cuda/include $B/runtime/libreduce_tune_runtime.a \
//     $B/engine/libreduce_tune_engine.a /usr/local/cuda/lib64/libcudart_static.a \
//     $B/db/libreduce_tune_db.a $B/core/libreduce_tune_core.a -L/usr/local/cuda/lib64 \
//     -lnvrtc -lsqlite3 -lz -llzma -ldl -lrt -lpthread
#include "../../python/src/jax_ffi.cpp"

namespace reduce_tune::python {
namespace {
ffi::Error do_nothing(cudaStream_t, std::int32_t, ffi::AnyBuffer, ffi::Result<ffi::AnyBuffer>, std::int64_t,
                      std::int64_t, std::int64_t, ffi::Span<const std::int64_t>) {
  return ffi::Error::Success();
}
}  // namespace

#define REDUCE_TUNE_PROBE_BINDING                              \
  ffi::Ffi::Bind()                                             \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                \
      .Ctx<ffi::DeviceOrdinal>()                               \
      .Arg<ffi::AnyBuffer>()                                   \
      .Ret<ffi::AnyBuffer>()                                   \
      .Attr<std::int64_t>("op")                                \
      .Attr<std::int64_t>("in_dtype")                          \
      .Attr<std::int64_t>("out_dtype")                         \
      .Attr<ffi::Span<const std::int64_t>>("axes")

XLA_FFI_DEFINE_HANDLER_SYMBOL(probe_rt_plain, reduce_on_xla_stream, REDUCE_TUNE_PROBE_BINDING);
XLA_FFI_DEFINE_HANDLER_SYMBOL(probe_rt_graph, reduce_on_xla_stream, REDUCE_TUNE_PROBE_BINDING,
                              {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER_SYMBOL(probe_noop, do_nothing, REDUCE_TUNE_PROBE_BINDING);
XLA_FFI_DEFINE_HANDLER_SYMBOL(probe_noop_graph, do_nothing, REDUCE_TUNE_PROBE_BINDING,
                              {ffi::Traits::kCmdBufferCompatible});
}  // namespace reduce_tune::python
