// The XLA FFI handler of reduce_tune's reduction (jax_ffi.cpp), for JAX.
#pragma once

#include <cstdint>

namespace reduce_tune::python {
// The handler's address (an XLA_FFI_Handler*), for jax.ffi.register_ffi_target:
// marked command-buffer compatible (XLA may record it into a jitted function's CUDA
// graph), or, with command_buffers false, without that trait.
void* xla_reduce_handler(bool command_buffers);

// How often XLA has called the handler in this process, and how many of those calls it
// made while capturing its stream into a command buffer (a CUDA graph that XLA replays
// later without calling the handler).
struct HandlerCalls {
  std::uint64_t calls = 0, captured = 0;
};
HandlerCalls xla_handler_calls();
}  // namespace reduce_tune::python
