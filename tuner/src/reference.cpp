#include "reduce_tune/tuner/reference.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>
#include <algorithm>
#include <thread>

namespace reduce_tune::verify {

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

namespace {

// The running state of a reference reduction over a range; ranges combine in order.
template <typename Acc>
struct Partial {
  Acc acc;
  long double precise = 0, magnitude = 0;
  bool all_integers = true;
};

template <typename Acc>
Acc identity_for(Op op) {
  switch (op) {
    case Op::sum:
    case Op::mean: return Acc(0);
    case Op::prod: return Acc(1);
    case Op::min:
      return std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                    : std::numeric_limits<Acc>::max();
    case Op::max:
      return std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                    : std::numeric_limits<Acc>::lowest();
  }
  return Acc(0);
}

template <typename Acc>
Acc combine(Op op, Acc a, Acc b) {
  switch (op) {
    case Op::sum:
    case Op::mean: return wrap_add(a, b);
    case Op::prod: return wrap_mul(a, b);
    case Op::min: return nan_min(a, b);
    case Op::max: return nan_max(a, b);
  }
  return a;
}

template <typename In, typename Acc, typename Get>
Partial<Acc> reduce_range(Op op, Get get, std::uint64_t begin, std::uint64_t end) {
  Partial<Acc> p{identity_for<Acc>(op)};
  for (std::uint64_t i = begin; i < end; ++i) {
    const In x = get(i);
    p.acc = combine(op, p.acc, static_cast<Acc>(x));
    if constexpr (std::is_floating_point_v<In>) {
      p.precise += static_cast<long double>(x);
      p.magnitude += std::fabs(static_cast<long double>(x));
      p.all_integers = p.all_integers && x == std::floor(x);
    }
  }
  return p;
}

// Reduces get(0..n) on `threads` threads, combining the ranges in order, and turns the
// total into the expected output.
template <typename In, typename Acc, typename Out, typename Get>
Expected finish_reference(Op op, Get get, std::uint64_t n, unsigned threads) {
  threads = static_cast<unsigned>(std::clamp<std::uint64_t>(n / (1u << 20), 1, std::max(threads, 1u)));
  std::vector<Partial<Acc>> parts(threads, Partial<Acc>{identity_for<Acc>(op)});
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { parts[t] = reduce_range<In, Acc>(op, get, n * t / threads, n * (t + 1) / threads); });
  for (auto& th : pool) th.join();
  Partial<Acc> total{identity_for<Acc>(op)};
  for (const auto& p : parts) {
    total.acc = combine(op, total.acc, p.acc);
    total.precise += p.precise;
    total.magnitude += p.magnitude;
    total.all_integers = total.all_integers && p.all_integers;
  }
  Expected e;
  Out out;
  if (op == Op::mean)
    out = static_cast<Out>(static_cast<double>(total.acc) / static_cast<double>(n));
  else
    out = static_cast<Out>(total.acc);
  e.bits = to_bits(out);
  e.value = static_cast<double>(out);
  // Float sums are exact when every value is an integer and every partial sum fits the
  // mantissa; otherwise the result depends on the order of additions and is checked
  // against the exact sum with a worst-case error bound.
  const long double exact_limit = std::ldexp(1.0L, std::numeric_limits<Acc>::digits);
  const bool inexact = std::is_floating_point_v<Acc> && (op == Op::sum || op == Op::mean) &&
                       std::isfinite(static_cast<double>(total.magnitude)) &&
                       !(total.all_integers && total.magnitude < exact_limit);
  if (inexact) {
    e.exact = false;
    double bound = std::numeric_limits<Acc>::epsilon() * static_cast<double>(total.magnitude);
    double centre = static_cast<double>(total.precise);
    if (op == Op::mean && n > 0) {
      bound /= static_cast<double>(n);
      centre /= static_cast<double>(n);
    }
    e.value = centre;
    e.error_per_link = bound;
    e.slack = std::fabs(centre) * 2 * std::numeric_limits<Out>::epsilon();
  }
  return e;
}

template <typename F>
Expected with_types(const TypeRule& types, F&& f) {
  return visit_dtype(types.in, [&](auto in_tag) {
    return visit_dtype(types.acc, [&](auto acc_tag) {
      return visit_dtype(types.out, [&](auto out_tag) { return f(in_tag, acc_tag, out_tag); });
    });
  });
}

}  // namespace

Expected reference_reduce(Op op, const TypeRule& types, const HostArray& input, std::size_t offset,
                          std::uint64_t n) {
  return with_types(types, [&](auto in_tag, auto acc_tag, auto out_tag) {
    using In = decltype(in_tag);
    const In* x = reinterpret_cast<const In*>(input.bytes.data()) + offset;
    return finish_reference<In, decltype(acc_tag), decltype(out_tag)>(
        op, [x](std::uint64_t i) { return x[i]; }, n, 1);
  });
}

FillKind fill_kind(Op op) {
  switch (op) {
    case Op::prod: return FillKind::prod;
    case Op::min:
    case Op::max: return FillKind::minmax;
    default: return FillKind::sum;
  }
}

// Mirrors rt::hashed_value in tuner/kernels/tuner/fill.cuh, operation for operation.
std::uint64_t hashed_bits(FillKind kind, DType dtype, std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = i + seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  const std::uint64_t h = z ^ (z >> 31);
  return visit_dtype(dtype, [&](auto tag) -> std::uint64_t {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(kind == FillKind::prod ? (h | 1) : h);
    } else {
      if (kind == FillKind::sum)
        v = static_cast<T>(static_cast<int>(h % 3) - 1);
      else if (kind == FillKind::prod)
        v = ((h >> 1) & ((1u << 26) - 1)) == 5 ? T(2) : ((h & 1) ? T(1) : T(-1));
      else
        v = static_cast<T>(static_cast<double>(static_cast<int>(h >> 40) - (1 << 23)) * 0x1p-10);
    }
    return to_bits(v);
  });
}

Expected reference_reduce_hashed(Op op, const TypeRule& types, std::uint64_t seed, std::uint64_t offset,
                                 std::uint64_t n, unsigned threads) {
  const FillKind kind = fill_kind(op);
  return with_types(types, [&](auto in_tag, auto acc_tag, auto out_tag) {
    using In = decltype(in_tag);
    const DType in = types.in;
    auto get = [=](std::uint64_t i) {
      const std::uint64_t bits = hashed_bits(kind, in, seed, offset + i);
      In v;
      std::memcpy(&v, &bits, sizeof(In));
      return v;
    };
    return finish_reference<In, decltype(acc_tag), decltype(out_tag)>(op, get, n, threads);
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

}  // namespace reduce_tune::verify
