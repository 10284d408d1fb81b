#include "host_reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>

#include "reduce_tune/dtype_visit.h"

namespace reduce_tune::testing {

const char* pattern_name(Pattern p) {
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

template <typename T>
std::uint64_t bits_of(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

template <typename T>
T generate(Op op, Pattern pattern, std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  if constexpr (std::is_integral_v<T>) {
    return op == Op::prod ? static_cast<T>(r | 1) : static_cast<T>(r);  // wraps; odd products never vanish
  } else {
    if (op == Op::min || op == Op::max) {
      const T v = static_cast<T>(std::ldexp(static_cast<double>(r >> 12) / 4503599627370496.0 - 0.5, static_cast<int>(r % 31) - 15));
      // A value too small for a 16-bit float rounds to zero: keep it +0, since min and
      // max of +0 and -0 depend on the order.
      return v == T(0) ? T(0) : v;
    }
    if (op == Op::prod) return r % 100003 == 11 ? T(2) : ((r >> 7) & 1 ? T(1) : T(-1));
    if (pattern == Pattern::real) return static_cast<T>(static_cast<double>(r >> 11) * 0x1p-52 - 1.0);
    // Small integers: the partial sums of the tests' sizes stay far inside the mantissa.
    return static_cast<T>(static_cast<int>(r % 9) - 4);
  }
}

template <typename T>
T combine(Op op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (op == Op::prod) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if (op == Op::sum || op == Op::mean) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    return op == Op::min ? std::min(a, b) : std::max(a, b);
  } else {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    switch (op) {
      case Op::sum:
      case Op::mean: return static_cast<T>(a + b);
      case Op::prod: return static_cast<T>(a * b);
      case Op::min: return std::min(a, b);
      case Op::max: return std::max(a, b);
    }
    return a;
  }
}

template <typename T>
T start(Op op) {
  if (op == Op::sum || op == Op::mean) return T(0);
  if (op == Op::prod) return T(1);
  if constexpr (std::numeric_limits<T>::has_infinity)
    return op == Op::min ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  else
    return op == Op::min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

long double epsilon_of(DType d) {
  switch (d) {
    case DType::f32: return std::numeric_limits<float>::epsilon();
    case DType::f16: return std::ldexp(1.0L, -10);
    case DType::bf16: return std::ldexp(1.0L, -7);
    default: return std::numeric_limits<double>::epsilon();
  }
}

}  // namespace

HostArray make_input(Op op, DType dtype, Pattern pattern, std::size_t count, std::uint64_t seed) {
  HostArray a{dtype, std::vector<unsigned char>(count * size_of(dtype))};
  std::mt19937_64 rng(seed ^ (static_cast<std::uint64_t>(op) << 40) ^ (static_cast<std::uint64_t>(dtype) << 48) ^
                      (static_cast<std::uint64_t>(pattern) << 56));
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* x = reinterpret_cast<T*>(a.bytes.data());
    for (std::size_t i = 0; i < count; ++i) x[i] = generate<T>(op == Op::mean ? Op::sum : op, pattern, rng);
    if constexpr (is_float_type_v<T>) {
      const T inf = std::numeric_limits<T>::infinity();
      auto plant = [&](T v) {
        for (int k = 0; k < 3 && count > 0; ++k) x[rng() % count] = v;
      };
      if (pattern == Pattern::nan) plant(std::numeric_limits<T>::quiet_NaN());
      if (pattern == Pattern::inf || pattern == Pattern::mixed_inf) plant(inf);
      if (pattern == Pattern::mixed_inf) plant(-inf);
    }
    return 0;
  });
  return a;
}

Expectation expect(Op op, const TypeRule& types, const HostArray& input, std::size_t offset, std::uint64_t n) {
  Expectation e;
  visit_dtype(types.in, [&](auto in_tag) {
    using In = decltype(in_tag);
    const In* x = reinterpret_cast<const In*>(input.bytes.data()) + offset;
    visit_dtype(types.acc, [&](auto acc_tag) {
      using Acc = decltype(acc_tag);
      Acc acc = start<Acc>(op);
      long double exact = 0, magnitude = 0;
      bool integers = true;
      for (std::uint64_t i = 0; i < n; ++i) {
        acc = combine(op, acc, static_cast<Acc>(x[i]));
        exact += static_cast<long double>(x[i]);
        magnitude += std::fabs(static_cast<long double>(x[i]));
        if constexpr (is_float_type_v<In>) integers = integers && std::isfinite(x[i]) && x[i] == std::trunc(x[i]);
      }
      visit_dtype(types.out, [&](auto out_tag) {
        using Out = decltype(out_tag);
        const Out out = op == Op::mean ? static_cast<Out>(static_cast<double>(acc) / static_cast<double>(n))
                                       : static_cast<Out>(acc);
        e.bits = bits_of(out);
        e.value = static_cast<long double>(out);
        if constexpr (is_float_type_v<In>) {
          // Arbitrary reals: the order of additions matters; compare with the exact sum.
          if ((op == Op::sum || op == Op::mean) && !integers && std::isfinite(static_cast<double>(magnitude))) {
            e.exact = false;
            e.value = op == Op::mean ? exact / static_cast<long double>(n) : exact;
            e.abs_sum = op == Op::mean ? magnitude / static_cast<long double>(n) : magnitude;
          }
        }
        return 0;
      });
      return 0;
    });
    return 0;
  });
  return e;
}

std::uint64_t addition_depth(const KernelSpec& spec, const LaunchPlan& plan, std::uint64_t n) {
  const std::uint64_t threads = std::uint64_t{plan.grid} * plan.block;
  std::uint64_t depth = (n + threads - 1) / threads + spec.config.unroll + 4;  // a thread's elements, head and tail
  depth += 2 * 10;                                                             // two levels of block trees
  if (plan.grid > 1)
    depth += spec.config.passes == Passes::single_pass_atomic ? plan.grid : plan.grid / plan.block + 1 + 2 * 10;
  return depth;
}

std::string mismatch(const TypeRule& types, std::uint64_t got, const Expectation& e, std::uint64_t depth) {
  const std::uint64_t mask = size_of(types.out) >= 8 ? ~0ull : (1ull << (8 * size_of(types.out))) - 1;
  const long double value = visit_dtype(types.out, [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, &got, sizeof v);
    return static_cast<long double>(v);
  });
  std::ostringstream os;
  os.precision(20);
  if (e.exact) {
    if ((got & mask) == (e.bits & mask)) return {};
    if (is_floating(types.out) && std::isnan(value) && std::isnan(e.value)) return {};
    os << "got " << value << ", expected exactly " << e.value;
    return os.str();
  }
  const long double bound =
      static_cast<long double>(depth) * epsilon_of(types.acc) * e.abs_sum + epsilon_of(types.out) * std::fabs(e.value);
  if (std::fabs(value - e.value) <= bound) return {};
  os << "got " << value << ", expected " << e.value << " within " << bound;
  return os.str();
}

}  // namespace reduce_tune::testing
