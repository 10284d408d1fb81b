// Calls f with a value of the C++ type a DType names (int32_t for i32, ...), so generic
// code runs once per element type: visit_dtype(d, [&](auto tag) { using T = decltype(tag); ... }).
#pragma once

#include <cstdint>

#include "reduce_tune/types.h"

namespace reduce_tune {

template <typename F>
auto visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::i32: return f(std::int32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::f32: return f(float{});
    case DType::f64: break;
  }
  return f(double{});
}

}  // namespace reduce_tune
