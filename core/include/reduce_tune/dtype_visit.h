// Calls f with a value of the C++ type a DType names (int32_t for i32, ..., Half for f16), so generic
// code runs once per element type: visit_dtype(d, [&](auto tag) { using T = decltype(tag); ... }).
// value_bits / from_value_bits carry such a value in a type-erased 64-bit slot.
#pragma once

#include <cstdint>
#include <cstring>

#include "reduce_tune/float16.h"
#include "reduce_tune/types.h"

namespace reduce_tune {

template <typename F>
auto visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::i32: return f(std::int32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::f32: return f(float{});
    case DType::f16: return f(Half{});
    case DType::bf16: return f(BFloat16{});
    case DType::f64: break;
  }
  return f(double{});
}

template <typename T>
std::uint64_t value_bits(T v) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <typename T>
T from_value_bits(std::uint64_t bits) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

}  // namespace reduce_tune
