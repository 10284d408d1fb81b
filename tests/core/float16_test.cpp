// The host 16-bit floats: every bit pattern converts to float and back unchanged, and
// rounding from float and from double matches a plain nearest-value search (ties to the
// even significand, overflow to Inf) for many values, with the known hard cases named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "reduce_tune/float16.h"

namespace reduce_tune {
namespace {

struct Format {
  const char* name;
  float (*to_float)(std::uint16_t);
  std::uint16_t (*from_float)(float);
  std::uint16_t (*from_double)(double);
  double max_finite;
  int significand_bits;  // explicit bits
};
const Format kFormats[] = {
    {"f16", f16_bits_to_float, float_to_f16_bits, double_to_f16_bits, 65504.0, 10},
    {"bf16", bf16_bits_to_float, float_to_bf16_bits, double_to_bf16_bits,
     static_cast<double>(std::numeric_limits<float>::max()) * (1.0 - std::ldexp(1.0, -8)), 7},
};

bool is_nan_bits(std::uint16_t b, const Format& f) {
  return f.significand_bits == 10 ? (b & 0x7c00) == 0x7c00 && (b & 0x3ff) : (b & 0x7f80) == 0x7f80 && (b & 0x7f);
}

// The nearest representable value by search over every finite non-negative pattern, ties
// to the even pattern; past the largest finite value by half an ulp or more: Inf.
std::uint16_t nearest_by_search(double v, const Format& f, const std::vector<double>& values) {
  const bool negative = std::signbit(v);
  const double a = std::fabs(v);
  const std::uint16_t sign = negative ? 0x8000 : 0;
  const std::uint16_t inf = f.significand_bits == 10 ? 0x7c00 : 0x7f80;
  const double ulp_at_max = std::ldexp(1.0, std::ilogb(f.max_finite) - f.significand_bits);
  if (a >= f.max_finite + ulp_at_max / 2) return static_cast<std::uint16_t>(sign | inf);
  auto it = std::lower_bound(values.begin(), values.end(), a);
  std::size_t hi = static_cast<std::size_t>(it - values.begin());
  if (hi == values.size()) return static_cast<std::uint16_t>(sign | (hi - 1));
  if (values[hi] == a || hi == 0) return static_cast<std::uint16_t>(sign | hi);
  const std::size_t lo = hi - 1;
  const double dl = a - values[lo], dh = values[hi] - a;
  const std::size_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<std::uint16_t>(sign | pick);
}

std::vector<double> finite_values(const Format& f) {
  std::vector<double> v;
  for (std::uint32_t b = 0; b < 0x8000; ++b) {
    const float x = f.to_float(static_cast<std::uint16_t>(b));
    if (!std::isfinite(x)) break;
    v.push_back(x);
  }
  return v;
}

TEST(Float16, EveryPatternRoundTripsThroughFloat) {
  for (const auto& f : kFormats)
    for (std::uint32_t b = 0; b <= 0xffff; ++b) {
      const auto bits = static_cast<std::uint16_t>(b);
      const float x = f.to_float(bits);
      if (is_nan_bits(bits, f)) {
        EXPECT_TRUE(std::isnan(x)) << f.name << " " << b;
        EXPECT_TRUE(is_nan_bits(f.from_float(x), f)) << f.name << " " << b;
        EXPECT_TRUE(is_nan_bits(f.from_double(x), f)) << f.name << " " << b;
        continue;
      }
      ASSERT_EQ(f.from_float(x), bits) << f.name << " " << b;
      ASSERT_EQ(f.from_double(static_cast<double>(x)), bits) << f.name << " " << b;
    }
}

TEST(Float16, RoundingMatchesANearestValueSearch) {
  std::mt19937_64 rng(7);
  for (const auto& f : kFormats) {
    const auto values = finite_values(f);
    for (int i = 0; i < 300000; ++i) {
      // Values around every exponent of the format, its subnormals and overflow included,
      // and exact midpoints between neighbours.
      const std::size_t k = rng() % (values.size() - 1);
      double v;
      switch (rng() % 3) {
        case 0: v = (values[k] + values[k + 1]) / 2; break;  // a tie
        case 1: v = values[k] + (values[k + 1] - values[k]) * std::ldexp(static_cast<double>(rng() >> 11), -53); break;
        default: v = std::ldexp(static_cast<double>(rng() >> 11), -53) * f.max_finite * 1.01; break;
      }
      if (rng() & 1) v = -v;
      const std::uint16_t want = nearest_by_search(v, f, values);
      ASSERT_EQ(f.from_double(v), want) << f.name << " " << v;
      const float x = static_cast<float>(v);
      if (static_cast<double>(x) == v) {
        ASSERT_EQ(f.from_float(x), want) << f.name << " " << v;
      }
      ASSERT_EQ(f.from_float(x), nearest_by_search(static_cast<double>(x), f, values)) << f.name << " " << x;
    }
  }
}

TEST(Float16, KnownCases) {
  // Ties go to the even significand.
  EXPECT_EQ(float_to_f16_bits(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);
  // Overflow: f16's largest finite value is 65504; from 65520 on it rounds to Inf.
  EXPECT_EQ(float_to_f16_bits(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-1e6f), 0xfc00);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  // Subnormals: 2^-24 is f16's smallest; half of it ties to zero, 1.5 of it to 2.
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000);
  EXPECT_EQ(float_to_f16_bits(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(float_to_f16_bits(-0x1p-26f), 0x8000);
  EXPECT_EQ(f16_bits_to_float(0x03ff), 1023 * 0x1p-24f);
  // A double just above a tie rounds up; through float it would tie and round down.
  EXPECT_EQ(double_to_f16_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  EXPECT_EQ(double_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
  EXPECT_EQ(double_to_f16_bits(1.0 + 0x1p-11 - 0x1p-40), 0x3c00);
  // A double past float's range is still one rounding: bf16's max for just above it.
  EXPECT_EQ(double_to_bf16_bits(3.3961e38), 0x7f7f);
  EXPECT_EQ(double_to_bf16_bits(1e39), 0x7f80);
  // Infinities and NaN.
  EXPECT_EQ(float_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(double_to_bf16_bits(-std::numeric_limits<double>::infinity()), 0xff80);
  EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(std::nanf("")))));
  // The value types: rounding once, exact widening, limits.
  EXPECT_EQ(static_cast<float>(Half(2.5)), 2.5f);
  EXPECT_EQ(Half(1.0 + 0x1p-11 + 0x1p-40).bits, 0x3c01);
  EXPECT_EQ(BFloat16(3).bits, 0x4040);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Half>::max()), 65504.0f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<BFloat16>::epsilon()), 0x1p-7f);
  EXPECT_TRUE(std::isinf(static_cast<float>(-std::numeric_limits<Half>::infinity())));
  static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);
  static_assert(std::is_trivially_copyable_v<Half> && std::is_trivial_v<BFloat16>);
}

}  // namespace
}  // namespace reduce_tune
