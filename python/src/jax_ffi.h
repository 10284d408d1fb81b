// The XLA FFI handler of reduce_tune's reduction (jax_ffi.cpp), for JAX.
#pragma once

namespace reduce_tune::python {
// The handler's address (an XLA_FFI_Handler*), for jax.ffi.register_ffi_target.
void* xla_reduce_handler();
}  // namespace reduce_tune::python
