#include "reduce_tune/float16.h"

#include <cmath>
#include <cstring>

namespace reduce_tune {

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// `value` rounded toward zero to float, with the lowest significand bit set when that
// dropped anything ("round to odd"). Rounding this float to nearest-even at 16 bits then
// gives the same result as rounding `value` itself once, because float keeps more than
// two bits beyond either 16-bit format's significand, in every range they share.
float round_to_odd_float(double value) {
  if (std::isnan(value) || std::isinf(value)) return static_cast<float>(value);
  float f = static_cast<float>(value);  // nearest; step back toward zero when it rounded away
  if (std::isinf(f) || std::fabs(static_cast<double>(f)) > std::fabs(value))
    f = std::nextafter(f, 0.0f);
  if (static_cast<double>(f) != value) f = float_of(bits_of(f) | 1u);
  return f;
}

}  // namespace

float f16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1f;
  const std::uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) return float_of(sign | 0x7f800000u | (mantissa << 13));  // Inf, NaN (payload kept)
  if (exponent != 0) return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  return sign ? -magnitude : magnitude;
}

float bf16_bits_to_float(std::uint16_t b) { return float_of(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t float_to_f16_bits(float value) {
  const std::uint32_t u = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00 | ((a >> 13) & 0x1ff));  // NaN stays NaN
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00);  // >= 65520 rounds to Inf
  if (a >= 0x38800000u) {  // normal in f16 (>= 2^-14)
    const std::uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (a < 0x33000000u) return sign;  // below half the smallest subnormal (2^-25): zero
  // Subnormal: the significand with its implicit bit, shifted to units of 2^-24.
  const std::uint32_t exponent = a >> 23;
  const std::uint32_t significand = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - exponent;  // 14..24 for exponents 102..112
  const std::uint32_t half_unit = 1u << (shift - 1);
  std::uint32_t q = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1);
  if (rest > half_unit || (rest == half_unit && (q & 1u))) ++q;
  return static_cast<std::uint16_t>(sign | q);
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t u = bits_of(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040);  // quiet NaN
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

std::uint16_t double_to_f16_bits(double value) { return float_to_f16_bits(round_to_odd_float(value)); }
std::uint16_t double_to_bf16_bits(double value) { return float_to_bf16_bits(round_to_odd_float(value)); }

}  // namespace reduce_tune
