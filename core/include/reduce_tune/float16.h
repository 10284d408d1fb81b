// The 16-bit floats as host values: IEEE binary16 (`Half`, DType::f16) and bfloat16
// (`BFloat16`, DType::bf16). Each holds its 16 bits; conversions from float and double
// round once, to nearest with ties to even, and keep NaN a NaN (quiet) and +-Inf as
// they are; conversions to float are exact. No CUDA header is needed: a caller with
// cuda_fp16.h passes __half / __nv_bfloat16 through <reduce_tune/reduce_fp16.h>, which
// has the same bits. C++17.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace reduce_tune {

// The conversions behind the types, on bit patterns.
float f16_bits_to_float(std::uint16_t bits);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_f16_bits(float value);
std::uint16_t float_to_bf16_bits(float value);
// One rounding from double (not through float, which would round twice).
std::uint16_t double_to_f16_bits(double value);
std::uint16_t double_to_bf16_bits(double value);

namespace detail {
template <bool Brain>
struct Float16 {
  std::uint16_t bits;  // no initialiser: the type stays trivial (T{} is zero)

  Float16() = default;
  // Rounds `value` once (an integer goes through double, which holds every int32 exactly
  // and rounds an int64 once before the 16-bit rounding can matter).
  template <typename T,
            typename = std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, Float16<!Brain>>>>
  explicit Float16(T value) {
    if constexpr (std::is_same_v<T, Float16<!Brain>>)
      *this = Float16(static_cast<float>(value));
    else if constexpr (std::is_same_v<T, float>)
      bits = Brain ? float_to_bf16_bits(value) : float_to_f16_bits(value);
    else
      bits = Brain ? double_to_bf16_bits(static_cast<double>(value)) : double_to_f16_bits(static_cast<double>(value));
  }
  static Float16 from_bits(std::uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  // Exact, and implicit (as for CUDA's __half): a 16-bit float is a float where one is needed.
  operator float() const { return Brain ? bf16_bits_to_float(bits) : f16_bits_to_float(bits); }
  Float16 operator-() const { return from_bits(static_cast<std::uint16_t>(bits ^ 0x8000u)); }
};
}  // namespace detail

using Half = detail::Float16<false>;
using BFloat16 = detail::Float16<true>;

// True for float, double, Half and BFloat16.
template <typename T>
inline constexpr bool is_float_type_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace reduce_tune

namespace std {
template <bool Brain>
class numeric_limits<reduce_tune::detail::Float16<Brain>> {
  using T = reduce_tune::detail::Float16<Brain>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = Brain ? 8 : 11;  // significand bits, the implicit one included
  static constexpr int radix = 2;
  static T infinity() { return T::from_bits(0x7c00 | (Brain ? 0x0380 : 0)); }
  static T quiet_NaN() { return T::from_bits(Brain ? 0x7fc0 : 0x7e00); }
  static T max() { return T::from_bits(Brain ? 0x7f7f : 0x7bff); }
  static T lowest() { return T::from_bits(Brain ? 0xff7f : 0xfbff); }
  static T min() { return T::from_bits(Brain ? 0x0080 : 0x0400); }  // smallest normal
  static T denorm_min() { return T::from_bits(1); }
  static T epsilon() { return T::from_bits(Brain ? 0x3c00 : 0x1400); }
};
}  // namespace std
