#include "reference.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>

namespace reduce_tune::testing {

std::string_view to_string(Pattern p) {
  switch (p) {
    case Pattern::exact: return "exact";
    case Pattern::real: return "real";
    case Pattern::nan: return "nan";
    case Pattern::inf: return "inf";
    case Pattern::mixed_inf: return "mixed_inf";
  }
  return "?";
}

namespace {

template <typename F>
auto visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::i32: return f(std::int32_t{});
    case DType::i64: return f(std::int64_t{});
    case DType::u32: return f(std::uint32_t{});
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
  }
  return f(float{});
}

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
  else
    return a + b;
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) * static_cast<std::make_unsigned_t<T>>(b));
  else
    return a * b;
}
template <typename T>
T nan_min(T a, T b) { return (a < b || a != a) ? a : b; }
template <typename T>
T nan_max(T a, T b) { return (a > b || a != a) ? a : b; }

template <typename T>
void fill(Op op, Pattern pattern, std::vector<unsigned char>& bytes, std::size_t count, std::mt19937_64& rng) {
  bytes.resize(count * sizeof(T));
  T* data = reinterpret_cast<T*>(bytes.data());
  const bool product = op == Op::prod;
  for (std::size_t i = 0; i < count; ++i) {
    T v{};
    const std::uint64_t r = rng();
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(r);  // the whole range: sums overflow and wrap
      if (product) v = static_cast<T>(v | 1);  // odd: products never collapse to 0
    } else {
      if (op == Op::min || op == Op::max) {
        v = static_cast<T>(std::ldexp(static_cast<double>(r >> 11) * 0x1p-53 - 0.5, static_cast<int>(r % 40) - 20));
      } else if (product) {
        v = (r & 1) ? T(1) : T(-1);
        if (r % 200000 == 7) v = T(2);  // a few factors of two, far from overflow
      } else if (pattern == Pattern::real) {
        v = static_cast<T>(static_cast<double>(r >> 11) * 0x1p-52 - 1.0);
      } else if (std::is_same_v<T, float>) {
        v = static_cast<T>(static_cast<int>(r % 3) - 1);  // partial sums stay exact
      } else {
        v = static_cast<T>(static_cast<int>(r % 2001) - 1000);
      }
    }
    data[i] = v;
  }
  if constexpr (std::is_floating_point_v<T>) {
    auto place = [&](T value, int copies) {
      for (int c = 0; c < copies && count > 0; ++c) data[rng() % count] = value;
    };
    const T inf = std::numeric_limits<T>::infinity();
    if (pattern == Pattern::nan) place(std::numeric_limits<T>::quiet_NaN(), 3);
    if (pattern == Pattern::inf || pattern == Pattern::mixed_inf) place(inf, 3);
    if (pattern == Pattern::mixed_inf) place(-inf, 3);
  }
}

template <typename T>
std::uint64_t to_bits(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

}  // namespace

HostArray make_input(Op op, DType dtype, Pattern pattern, std::size_t count, std::uint64_t seed) {
  HostArray a{dtype, {}};
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(op) * 131 +
                      static_cast<std::uint64_t>(dtype) * 7 + static_cast<std::uint64_t>(pattern));
  visit_dtype(dtype, [&](auto tag) {
    fill<decltype(tag)>(op, pattern, a.bytes, count, rng);
    return 0;
  });
  return a;
}

double bits_to_double(DType dtype, std::uint64_t bits) {
  return visit_dtype(dtype, [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, &bits, sizeof(v));
    return static_cast<double>(v);
  });
}

Expected reference_reduce(Op op, const TypeRule& types, const HostArray& input, std::size_t offset,
                          std::uint64_t n) {
  return visit_dtype(types.in, [&](auto in_tag) {
    using In = decltype(in_tag);
    const In* x = reinterpret_cast<const In*>(input.bytes.data()) + offset;
    return visit_dtype(types.acc, [&](auto acc_tag) {
      using Acc = decltype(acc_tag);
      return visit_dtype(types.out, [&](auto out_tag) {
        using Out = decltype(out_tag);
        Expected e;
        Acc acc{};
        long double precise = 0, magnitude = 0;
        bool all_integers = true;
        switch (op) {
          case Op::sum:
          case Op::mean: acc = Acc(0); break;
          case Op::prod: acc = Acc(1); break;
          case Op::min:
            acc = std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                         : std::numeric_limits<Acc>::max();
            break;
          case Op::max:
            acc = std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                         : std::numeric_limits<Acc>::lowest();
            break;
        }
        for (std::uint64_t i = 0; i < n; ++i) {
          const Acc v = static_cast<Acc>(x[i]);
          switch (op) {
            case Op::sum:
            case Op::mean: acc = wrap_add(acc, v); break;
            case Op::prod: acc = wrap_mul(acc, v); break;
            case Op::min: acc = nan_min(acc, v); break;
            case Op::max: acc = nan_max(acc, v); break;
          }
          if constexpr (std::is_floating_point_v<In>) {
            precise += static_cast<long double>(x[i]);
            magnitude += std::fabs(static_cast<long double>(x[i]));
            all_integers = all_integers && x[i] == std::floor(x[i]);
          }
        }
        Out out;
        if (op == Op::mean)
          out = static_cast<Out>(static_cast<double>(acc) / static_cast<double>(n));
        else
          out = static_cast<Out>(acc);
        e.bits = to_bits(out);
        e.value = static_cast<double>(out);
        // Float sums are exact when every value is an integer and every partial sum fits
        // the mantissa; otherwise the result depends on the order of additions and is
        // checked against the exact sum with a worst-case error bound.
        const long double exact_limit = std::ldexp(1.0L, std::numeric_limits<Acc>::digits);
        const bool inexact = std::is_floating_point_v<Acc> && (op == Op::sum || op == Op::mean) &&
                             std::isfinite(static_cast<double>(magnitude)) &&
                             !(all_integers && magnitude < exact_limit);
        if (inexact) {
          e.exact = false;
          const double eps = std::numeric_limits<Acc>::epsilon();
          double bound = eps * static_cast<double>(magnitude);
          double centre = static_cast<double>(precise);
          if (op == Op::mean && n > 0) {
            bound /= static_cast<double>(n);
            centre /= static_cast<double>(n);
          }
          e.value = centre;
          e.error_per_link = bound;
          e.slack = std::fabs(centre) * 2 * std::numeric_limits<Out>::epsilon();
        }
        return e;
      });
    });
  });
}

std::string compare_result(const TypeRule& types, std::uint64_t got_bits, const Expected& expected,
                           std::uint64_t longest_chain) {
  std::ostringstream os;
  const double tolerance =
      static_cast<double>(longest_chain) * expected.error_per_link + expected.slack;
  const double got = bits_to_double(types.out, got_bits);
  if (is_floating(types.out)) {
    if (std::isnan(expected.value) && std::isnan(got)) return {};
    if (expected.exact) {
      if (got == expected.value) return {};
    } else if (std::fabs(got - expected.value) <= tolerance) {
      return {};
    }
    os.precision(17);
    os << "got " << got << ", expected " << expected.value;
    if (!expected.exact) os << " +- " << tolerance;
    return os.str();
  }
  const std::uint64_t mask = size_of(types.out) == 4 ? 0xffffffffull : ~0ull;
  if ((got_bits & mask) == (expected.bits & mask)) return {};
  os << "got bits 0x" << std::hex << (got_bits & mask) << ", expected 0x" << (expected.bits & mask)
     << std::dec << " (" << got << " vs " << expected.value << ")";
  return os.str();
}

}  // namespace reduce_tune::testing
