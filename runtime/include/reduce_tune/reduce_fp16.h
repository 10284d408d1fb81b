// The typed API (reduce_tune/reduce.h) for CUDA's own 16-bit floats: include this header
// in a file that may include cuda_fp16.h and cuda_bf16.h (a .cu file, or host code with
// the CUDA include path), and __half and __nv_bfloat16 arrays go to every function of
// reduce.h as they are:
//
//   reduce_tune::sum(d_half, n, d_half_out, stream);      // accumulates in float, rounds once
//   reduce_tune::sum(d_half, n, d_float_out, stream);     // the float total itself
//   __nv_bfloat16 m = reduce_tune::max_value(d_bf16, n);
//
// They are the same bits as reduce_tune::Half and reduce_tune::BFloat16.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reduce_tune/reduce.h"

namespace reduce_tune {

static_assert(sizeof(__half) == 2 && sizeof(__nv_bfloat16) == 2, "16-bit floats are 2 bytes");
template <> struct DTypeOf<__half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<__nv_bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct MeanOf<__half> { using type = __half; };
template <> struct MeanOf<__nv_bfloat16> { using type = __nv_bfloat16; };

}  // namespace reduce_tune
