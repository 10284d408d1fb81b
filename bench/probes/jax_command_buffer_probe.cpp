// Probe (not part of the package): whether XLA may capture reduce_tune's FFI custom call
// into its command buffers (CUDA graphs), and what XLA's custom-call path itself costs.
// It compiles the package's handlers (python/src/jax_ffi.cpp) as they are, which gives
// four handler symbols over the same binding (the probe's names for them first):
//   probe_rt_plain   reduce_handler_uncaptured: the reduction without traits (what the
//                    package registered before 2026-11-29);
//   probe_rt_graph   reduce_handler: the same reduction, marked command-buffer
//                    compatible (what the package registers since);
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

// The package's handler without and with the trait are its own symbols,
// reduce_handler_uncaptured and reduce_handler; the probe adds the ones that do nothing.
XLA_FFI_DEFINE_HANDLER_SYMBOL(probe_noop, do_nothing, REDUCE_TUNE_XLA_BINDING);
XLA_FFI_DEFINE_HANDLER_SYMBOL(probe_noop_graph, do_nothing, REDUCE_TUNE_XLA_BINDING,
                              {ffi::Traits::kCmdBufferCompatible});
}  // namespace reduce_tune::python
