#include "reduce_tune/tuner/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>
#include <type_traits>
#include <vector>

#include "reduce_tune/dtype_visit.h"

namespace reduce_tune::verify {

namespace {

// Mirrors rt::hashed_value in tuner/kernels/tuner/fill.cuh, operation for operation.
template <typename T>
T hashed_value(FillKind kind, std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = i + seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  const std::uint64_t h = z ^ (z >> 31);
  T v{};
  if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>(kind == FillKind::prod ? (h | 1) : h);
  } else {
    switch (kind) {
      case FillKind::sum: {
        const int k = static_cast<int>(h % 16) + 1;
        v = static_cast<T>(((h >> 8) & 1) ? -k : k);
        break;
      }
      case FillKind::prod:
        v = ((h >> 1) & ((1u << 26) - 1)) == 5 ? T(2) : ((h & 1) ? T(1) : T(-1));
        break;
      case FillKind::minmax:
        v = static_cast<T>(static_cast<double>(static_cast<int>(h >> 40) - (1 << 23)) * 0x1p-10);
        break;
      case FillKind::rounding:
        if constexpr (std::is_same_v<T, float>)
          v = 1.0f + static_cast<float>(h >> 41) * 0x1p-23f;
        else if constexpr (std::is_same_v<T, double>)
          v = 1.0 + static_cast<double>(h >> 12) * 0x1p-52;
        else if constexpr (std::is_same_v<T, Half>)
          v = T(1.0f + static_cast<float>(h >> 54) * 0x1p-10f);
        else
          v = T(1.0f + static_cast<float>(h >> 57) * 0x1p-7f);
        break;
    }
  }
  return v;
}

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
  else
    return static_cast<T>(a + b);
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) * static_cast<std::make_unsigned_t<T>>(b));
  else
    return static_cast<T>(a * b);
}

template <Op O, typename Acc>
Acc combine_op(Acc a, Acc b) {
  if constexpr (O == Op::sum || O == Op::mean) return wrap_add(a, b);
  else if constexpr (O == Op::prod) return wrap_mul(a, b);
  else if constexpr (O == Op::min) return (a < b || a != a) ? a : b;  // NaN wins, as on the device
  else return (a > b || a != a) ? a : b;
}

// Calls f with the op as a compile-time constant (std::integral_constant<Op, op>).
template <typename F>
decltype(auto) with_op(Op op, F&& f) {
  switch (op) {
    case Op::sum: return f(std::integral_constant<Op, Op::sum>{});
    case Op::mean: return f(std::integral_constant<Op, Op::mean>{});
    case Op::prod: return f(std::integral_constant<Op, Op::prod>{});
    case Op::min: return f(std::integral_constant<Op, Op::min>{});
    case Op::max: break;
  }
  return f(std::integral_constant<Op, Op::max>{});
}

template <typename Acc>
Acc combine(Op op, Acc a, Acc b) {
  return with_op(op, [&](auto o) { return combine_op<decltype(o)::value>(a, b); });
}

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // {offset, n}

// Runs body(begin, end) over [lo, hi) split into contiguous chunks on up to `threads`
// threads; returns the per-chunk results in order.
template <typename R, typename Body>
std::vector<R> parallel_chunks(std::uint64_t lo, std::uint64_t hi, unsigned threads, Body body) {
  const std::uint64_t n = hi - lo;
  threads = static_cast<unsigned>(std::clamp<std::uint64_t>(n / (1u << 20), 1, std::max(threads, 1u)));
  std::vector<R> parts(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { parts[t] = body(lo + n * t / threads, lo + n * (t + 1) / threads); });
  for (auto& th : pool) th.join();
  return parts;
}

std::pair<std::uint64_t, std::uint64_t> span_of(const Ranges& ranges) {
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (const auto& [offset, n] : ranges) {
    lo = std::min(lo, offset);
    hi = std::max(hi, offset + n);
  }
  return {ranges.empty() ? 0 : lo, hi};
}

// The ranges' boundaries cut [lo, hi) into disjoint segments; each element is combined
// once, into its segment, and a range is the combination of the segments it covers.
struct Segments {
  std::vector<std::uint64_t> cuts;  // segment k is [cuts[k], cuts[k + 1])
  explicit Segments(const Ranges& ranges) {
    for (const auto& [offset, n] : ranges) {
      cuts.push_back(offset);
      cuts.push_back(offset + n);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  }
  std::size_t count() const { return cuts.empty() ? 0 : cuts.size() - 1; }
  // Calls body(k, begin, end) for the part of each segment k inside [begin, end).
  template <typename Body>
  void each(std::uint64_t begin, std::uint64_t end, Body body) const {
    for (std::size_t k = 0; k < count(); ++k) {
      const std::uint64_t b = std::max(begin, cuts[k]), e = std::min(end, cuts[k + 1]);
      if (b < e) body(k, b, e);
    }
  }
  bool covers(const std::pair<std::uint64_t, std::uint64_t>& range, std::size_t k) const {
    return cuts[k] >= range.first && cuts[k + 1] <= range.first + range.second;
  }
};

template <Op O, typename In, typename Acc>
Acc reduce_hashed(FillKind kind, std::uint64_t seed, std::uint64_t begin, std::uint64_t end, Acc acc) {
  for (std::uint64_t i = begin; i < end; ++i) acc = combine_op<O>(acc, static_cast<Acc>(hashed_value<In>(kind, seed, i)));
  return acc;
}

// The exact set: every order gives the same bits (sums of small integers, wrapping
// integer arithmetic, min, max, products of +-1 and rare 2s), so the segments' partial
// results combine to the in-order reduction bit for bit.
template <typename In, typename Acc, typename Out>
std::vector<Expected> exact_reference(Op op, FillKind kind, std::uint64_t seed, const Ranges& ranges,
                                      unsigned threads) {
  const auto [lo, hi] = span_of(ranges);
  const Segments segments(ranges);
  const auto parts = parallel_chunks<std::vector<Acc>>(lo, hi, threads, [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<Acc> acc(segments.count(), identity_value<Acc>(op));
    segments.each(begin, end, [&](std::size_t k, std::uint64_t b, std::uint64_t e) {
      acc[k] = with_op(op, [&](auto o) { return reduce_hashed<decltype(o)::value, In>(kind, seed, b, e, acc[k]); });
    });
    return acc;
  });
  std::vector<Expected> out;
  for (const auto& range : ranges) {
    Acc total = identity_value<Acc>(op);
    for (const auto& p : parts)
      for (std::size_t k = 0; k < segments.count(); ++k)
        if (segments.covers(range, k)) total = combine(op, total, p[k]);
    const double n = static_cast<double>(range.second);
    const Out value = op == Op::mean ? static_cast<Out>(static_cast<double>(total) / n) : static_cast<Out>(total);
    Expected e;
    e.bits = value_bits(value);
    e.value = static_cast<double>(value);
    out.push_back(e);
  }
  return out;
}

// The rounding set: values 1 + m * 2^-p (p = 23 for f32, 52 for f64), summed exactly as
// integers m.
template <typename In, typename Out>
std::vector<Expected> rounding_reference(Op op, std::uint64_t seed, const Ranges& ranges, unsigned threads) {
  constexpr int p = std::numeric_limits<In>::digits - 1;
  // In [1, 2) the exponent is fixed and the stored fraction is m itself.
  constexpr std::uint64_t fraction = (std::uint64_t{1} << p) - 1;
  const auto [lo, hi] = span_of(ranges);
  const Segments segments(ranges);
  const auto parts =
      parallel_chunks<std::vector<unsigned __int128>>(lo, hi, threads, [&](std::uint64_t begin, std::uint64_t end) {
        std::vector<unsigned __int128> sums(segments.count(), 0);
        segments.each(begin, end, [&](std::size_t k, std::uint64_t b, std::uint64_t e) {
          std::uint64_t sum = 0;  // at most 2^31 mantissas of 52 bits: flushed into 128 bits in runs
          std::uint64_t run = 0;
          for (std::uint64_t i = b; i < e; ++i) {
            sum += value_bits(hashed_value<In>(FillKind::rounding, seed, i)) & fraction;
            if (++run == 2048) {
              sums[k] += sum;
              sum = run = 0;
            }
          }
          sums[k] += sum;
        });
        return sums;
      });
  std::vector<Expected> out;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    unsigned __int128 mantissas = 0;
    for (const auto& part : parts)
      for (std::size_t k = 0; k < segments.count(); ++k)
        if (segments.covers(ranges[r], k)) mantissas += part[k];
    const auto n = static_cast<long double>(ranges[r].second);
    long double exact = n + std::ldexp(static_cast<long double>(mantissas), -p);
    if (op == Op::mean) exact /= n;
    Expected e;
    e.exact = false;
    e.value = static_cast<double>(exact);
    e.magnitude = static_cast<double>(exact);  // all values positive
    e.bits = value_bits(static_cast<Out>(exact));
    out.push_back(e);
  }
  return out;
}

template <typename F>
auto with_types(const TypeRule& types, F&& f) {
  return visit_dtype(types.in, [&](auto in_tag) {
    return visit_dtype(types.acc, [&](auto acc_tag) {
      return visit_dtype(types.out, [&](auto out_tag) { return f(in_tag, acc_tag, out_tag); });
    });
  });
}

// The unit roundoff of a floating type (half its epsilon).
double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f64: return std::ldexp(1.0, -53);
    case DType::f16: return std::ldexp(1.0, -11);
    case DType::bf16: return std::ldexp(1.0, -8);
    default: return 0.0;
  }
}

// The bits of a value of `dtype` in a 64-bit slot (the rest may hold anything).
std::uint64_t value_mask(DType dtype) {
  return size_of(dtype) >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size_of(dtype))) - 1;
}

}  // namespace

FillKind exact_fill(Op op) {
  switch (op) {
    case Op::prod: return FillKind::prod;
    case Op::min:
    case Op::max: return FillKind::minmax;
    default: return FillKind::sum;
  }
}

std::optional<TypeRule> coverage_twin(Op op, const TypeRule& types) {
  if ((op == Op::sum || op == Op::mean) && size_of(types.out) >= 4) return std::nullopt;
  return resolve_types(Op::sum, types.in, is_16bit_float(types.in) ? DType::f32 : types.in).rule;
}

bool has_rounding_set(Op op, const TypeRule& types) {
  return (op == Op::sum || op == Op::mean) && is_floating(types.in);
}

std::uint64_t hashed_bits(FillKind kind, DType dtype, std::uint64_t seed, std::uint64_t i) {
  return visit_dtype(dtype, [&](auto tag) { return value_bits(hashed_value<decltype(tag)>(kind, seed, i)); });
}

std::vector<Expected> reference_hashed(Op op, const TypeRule& types, FillKind kind, std::uint64_t seed,
                                       const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                                       unsigned threads) {
  return with_types(types, [&](auto in_tag, auto acc_tag, auto out_tag) {
    using In = decltype(in_tag);
    using Out = decltype(out_tag);
    if constexpr (is_float_type_v<In>) {
      if (kind == FillKind::rounding) return rounding_reference<In, Out>(op, seed, ranges, threads);
    }
    return exact_reference<In, decltype(acc_tag), Out>(op, kind, seed, ranges, threads);
  });
}

Expected reference_hashed(Op op, const TypeRule& types, FillKind kind, std::uint64_t seed, std::uint64_t offset,
                          std::uint64_t n, unsigned threads) {
  return reference_hashed(op, types, kind, seed, {{offset, n}}, threads).front();
}

std::uint64_t longest_chain(const KernelSpec& spec, const LaunchPlan& plan, std::uint64_t n) {
  const ReduceConfig& c = spec.config;
  const std::uint64_t threads = static_cast<std::uint64_t>(plan.grid) * plan.block;
  // A thread's own elements, spread over `unroll` accumulators, then combined; the
  // peeled head and tail add at most two more.
  const std::uint64_t per_thread = (n + threads - 1) / threads;
  const std::uint64_t unroll = std::max<std::uint32_t>(c.unroll, 1);
  const std::uint64_t in_thread = (per_thread + unroll - 1) / unroll + unroll + 2;
  // The block's tree: at most log2(1024) levels, twice (two-level warp reductions).
  const std::uint64_t block_tree = 2 * 10;
  // Across blocks: the atomic accumulator takes every block in turn; otherwise the last
  // block (or the finalize kernel) folds grid/block partials per thread, then a tree.
  const std::uint64_t across = plan.grid <= 1 ? 0
                               : c.passes == Passes::single_pass_atomic
                                   ? plan.grid
                                   : (plan.grid + plan.block - 1) / plan.block + block_tree;
  return in_thread + block_tree + across;
}

std::string compare_result(const TypeRule& types, std::uint64_t got_bits, const Expected& expected,
                           std::uint64_t chain) {
  std::ostringstream os;
  os.precision(17);
  const double got = bits_to_double(types.out, got_bits);
  if (is_floating(types.out)) {
    if (std::isnan(expected.value) && std::isnan(got)) return {};
    if (expected.exact) {
      if ((got_bits & value_mask(types.out)) == (expected.bits & value_mask(types.out))) return {};
      os << "got " << got << ", expected exactly " << expected.value;
      return os.str();
    }
    // gamma(L) = L u / (1 - L u) for the accumulator, then one rounding to the output
    // type and the reference's own rounding to double.
    const double u = unit_roundoff(types.acc);
    const double lu = static_cast<double>(chain) * u;
    const double bound = (lu < 1 ? lu / (1 - lu) : HUGE_VAL) * expected.magnitude +
                         (unit_roundoff(types.out) + std::ldexp(1.0, -53)) * std::fabs(expected.value);
    if (std::fabs(got - expected.value) <= bound) return {};
    // A narrow output (f16 tops out at 65504) overflows to Inf where the accumulated
    // total may round past its largest value.
    if (std::isinf(got)) {
      const double reach = std::fabs(expected.value) + bound - (unit_roundoff(types.out) + std::ldexp(1.0, -53)) *
                                                                std::fabs(expected.value);
      const double edge = visit_dtype(types.out, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (is_float_type_v<T>) return static_cast<double>(static_cast<T>(reach));
        return 0.0;
      });
      if (std::isinf(edge) && std::signbit(got) == std::signbit(expected.value)) return {};
    }
    os << "got " << got << ", expected " << expected.value << " +- " << bound << " (chain " << chain << ")";
    return os.str();
  }
  const std::uint64_t mask = value_mask(types.out);
  if ((got_bits & mask) == (expected.bits & mask)) return {};
  os << "got bits 0x" << std::hex << (got_bits & mask) << ", expected 0x" << (expected.bits & mask) << std::dec << " ("
     << got << " vs " << expected.value << ")";
  return os.str();
}

double bits_to_double(DType dtype, std::uint64_t bits) {
  return visit_dtype(dtype, [&](auto tag) { return static_cast<double>(from_value_bits<decltype(tag)>(bits)); });
}

}  // namespace reduce_tune::verify
