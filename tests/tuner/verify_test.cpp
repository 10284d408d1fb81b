// The tuner's verification fed wrong answers: what a kernel that drops a tile, the last
// element or the head, or returns the identity would give must be rejected, by the
// candidate's own checks or (min, max, products) by its coverage twin. The GPU mutation
// test (tests/gpu/mutation_test.cpp) does the same with real broken kernels at 2^30.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "reduce_tune/dtype_visit.h"
#include "reduce_tune/tuner/reference.h"

namespace reduce_tune::verify {
namespace {

constexpr std::uint64_t kSeed = 0x5eed;

// The data set as a host array of `dtype` values.
std::vector<std::uint64_t> materialise(FillKind kind, DType dtype, std::uint64_t n) {
  std::vector<std::uint64_t> bits(n);
  for (std::uint64_t i = 0; i < n; ++i) bits[i] = hashed_bits(kind, dtype, kSeed, i);
  return bits;
}

// What a kernel computing op over exactly the elements `keep` says yes to returns: the
// in-order reduction, as the output's bytes (exact data: any order gives these bits).
template <typename Keep>
std::uint64_t result_over(Op op, const TypeRule& t, const std::vector<std::uint64_t>& data, Keep keep,
                          bool identity = false) {
  return visit_dtype(t.in, [&](auto in_tag) {
    using In = decltype(in_tag);
    return visit_dtype(t.acc, [&](auto acc_tag) {
      using Acc = decltype(acc_tag);
      Acc acc{};
      if (op == Op::prod) acc = Acc(1);
      if (op == Op::min) acc = std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                                       : std::numeric_limits<Acc>::max();
      if (op == Op::max) acc = std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                                       : std::numeric_limits<Acc>::lowest();
      std::uint64_t used = 0;
      for (std::uint64_t i = 0; i < data.size() && !identity; ++i) {
        if (!keep(i)) continue;
        In x;
        std::memcpy(&x, &data[i], sizeof x);
        const Acc v = static_cast<Acc>(x);
        if constexpr (std::is_integral_v<Acc>) {
          using U = std::make_unsigned_t<Acc>;
          if (op == Op::sum || op == Op::mean) acc = static_cast<Acc>(static_cast<U>(acc) + static_cast<U>(v));
          if (op == Op::prod) acc = static_cast<Acc>(static_cast<U>(acc) * static_cast<U>(v));
        } else {
          if (op == Op::sum || op == Op::mean) acc = static_cast<Acc>(acc + v);
          if (op == Op::prod) acc = static_cast<Acc>(acc * v);
        }
        if (op == Op::min) acc = std::min(acc, v);
        if (op == Op::max) acc = std::max(acc, v);
        ++used;
      }
      return visit_dtype(t.out, [&](auto out_tag) {
        using Out = decltype(out_tag);
        // A kernel divides by the n it was given, whatever it read.
        const Out out = op == Op::mean ? static_cast<Out>(static_cast<double>(acc) / static_cast<double>(data.size()))
                                       : static_cast<Out>(acc);
        std::uint64_t b = 0;
        std::memcpy(&b, &out, sizeof out);
        return b;
      });
    });
  });
}

struct Mutation {
  const char* name;
  std::function<bool(std::uint64_t, std::uint64_t)> keep;  // (index, n) -> read?
  bool identity = false;
};

std::vector<Mutation> mutations() {
  const std::uint64_t tile = 4096;
  return {
      {"drops the middle tile", [=](std::uint64_t i, std::uint64_t n) {
         const std::uint64_t start = n / tile / 2 * tile;
         return i < start || i >= start + tile;
       }},
      {"drops the last element", [](std::uint64_t i, std::uint64_t n) { return i + 1 < n; }},
      {"drops the head", [](std::uint64_t i, std::uint64_t) { return i != 0; }},
      {"returns the identity", [](std::uint64_t, std::uint64_t) { return true; }, true},
  };
}

TEST(Verification, HostReferenceMatchesTheDataReducedInOrder) {
  const std::uint64_t n = 100003;
  for (DType dtype : kAllDTypes)
    for (Op op : kAllOps) {
      const TypeRule t = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      const auto data = materialise(exact_fill(op), dtype, n);
      const Expected e = reference_hashed(op, t, exact_fill(op), kSeed, 0, n, 3);
      EXPECT_TRUE(e.exact);
      EXPECT_EQ(e.bits, result_over(op, t, data, [](std::uint64_t) { return true; }))
          << to_string(op) << "<" << to_string(dtype) << ">";
    }
}

TEST(Verification, SeveralRangesInOnePassMatchOneAtATime) {
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, 300007}, {3, 300005}, {0, 450001}};
  for (DType dtype : kAllDTypes)
    for (Op op : {Op::sum, Op::max, Op::prod, Op::mean}) {
      const TypeRule t = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      std::vector<FillKind> kinds = {exact_fill(op)};
      if (has_rounding_set(op, t)) kinds.push_back(FillKind::rounding);
      for (FillKind kind : kinds) {
        const auto together = reference_hashed(op, t, kind, kSeed, ranges, 3);
        ASSERT_EQ(together.size(), ranges.size());
        for (std::size_t r = 0; r < ranges.size(); ++r) {
          const auto alone = reference_hashed(op, t, kind, kSeed, ranges[r].first, ranges[r].second, 2);
          EXPECT_EQ(together[r].bits, alone.bits) << to_string(op) << "<" << to_string(dtype) << "> range " << r;
          EXPECT_EQ(together[r].value, alone.value);
        }
      }
    }
}

// The host computes several ranges in one pass by cutting them into disjoint segments:
// overlapping, nested, empty and unsorted ranges each still get the in-order reduction of
// exactly their elements.
TEST(Verification, OverlappingRangesEachGetTheirOwnElements) {
  // Over 2^21 elements, so that four threads' chunks also cut the segments.
  const std::uint64_t n_all = (1 << 21) + 17;
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {
      {5, 1500001}, {0, 3}, {600000, 1000000}, {7, 0}, {0, n_all}, {n_all - 1, 1}};
  for (DType dtype : {DType::i32, DType::f32, DType::f64, DType::u32})
    for (Op op : {Op::sum, Op::min, Op::max}) {
      const TypeRule t = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      const auto values = materialise(exact_fill(op), dtype, n_all);
      const auto together = reference_hashed(op, t, exact_fill(op), kSeed, ranges, 4);
      ASSERT_EQ(together.size(), ranges.size());
      for (std::size_t r = 0; r < ranges.size(); ++r) {
        const auto [offset, n] = ranges[r];
        EXPECT_EQ(together[r].bits,
                  result_over(op, t, values, [&](std::uint64_t i) { return i >= offset && i - offset < n; }))
            << to_string(op) << "<" << to_string(dtype) << "> range " << r;
      }
    }
}

// The rounding set's reference is the exact sum of its values, computed here in long
// double from the values themselves (exact for these sizes: f32's 24-bit values over
// 2^17 elements need 41 bits).
TEST(Verification, RoundingReferenceIsTheExactSumOfTheValues) {
  const std::uint64_t n = 1 << 17;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    const TypeRule t = *resolve_types(Op::sum, dtype, DType::f32).rule;
    const auto values = materialise(FillKind::rounding, dtype, n);
    long double exact = 0, upper = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const long double v = static_cast<long double>(bits_to_double(dtype, values[i]));
      exact += v;
      if (i >= 3 && i < n - 5) upper += v;
    }
    const auto got = reference_hashed(Op::sum, t, FillKind::rounding, kSeed, {{0, n}, {3, n - 8}}, 3);
    EXPECT_FALSE(got[0].exact);
    EXPECT_EQ(got[0].value, static_cast<double>(exact)) << to_string(dtype);
    EXPECT_EQ(got[1].value, static_cast<double>(upper)) << to_string(dtype);
  }
}

TEST(Verification, FloatSumDataHasNoZerosAndRoundingDataIsInOneToTwo) {
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16})
    for (std::uint64_t i = 0; i < 200000; ++i) {
      EXPECT_NE(bits_to_double(dtype, hashed_bits(FillKind::sum, dtype, kSeed, i)), 0.0);
      const double r = bits_to_double(dtype, hashed_bits(FillKind::rounding, dtype, kSeed, i));
      ASSERT_GE(r, 1.0);
      ASSERT_LT(r, 2.0);
    }
}

TEST(Verification, EveryMutationIsRejectedByTheCheckOrTheCoverageTwin) {
  const std::uint64_t n = (std::uint64_t{1} << 20) + 3;
  const KernelSpec any{Op::sum, {DType::f32, DType::f32, DType::f32}, ReduceConfig{}};
  const std::uint64_t chain = longest_chain(any, plan_launch(any, n, 132), n);
  for (DType dtype : kAllDTypes) {
    const auto twin_data = materialise(FillKind::sum, dtype, n);
    for (Op op : kAllOps) {
      const TypeRule t = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      const std::optional<TypeRule> twin_types = coverage_twin(op, t);
      const TypeRule sum_types = twin_types ? *twin_types : t;
      const Expected twin_expected = reference_hashed(Op::sum, sum_types, FillKind::sum, kSeed, 0, n, 3);
      const auto data = materialise(exact_fill(op), dtype, n);
      const Expected expected = reference_hashed(op, t, exact_fill(op), kSeed, 0, n, 3);
      for (const auto& m : mutations()) {
        auto keep = [&](std::uint64_t i) { return m.keep(i, n); };
        const bool own = !compare_result(t, result_over(op, t, data, keep, m.identity), expected, chain).empty();
        const bool twin =
            !compare_result(sum_types, result_over(Op::sum, sum_types, twin_data, keep, m.identity), twin_expected, chain)
                 .empty();
        const bool has_twin = twin_types.has_value();
        EXPECT_EQ(has_twin, op == Op::min || op == Op::max || op == Op::prod || size_of(t.out) == 2);
        EXPECT_TRUE(own || (has_twin && twin)) << to_string(op) << "<" << to_string(dtype) << "> " << m.name;
        // A float product of +-1 is 1 half the time, so a kernel returning the identity is
        // right there; the twin (built with the same fault) still shows it is broken.
        if (m.identity && !(op == Op::prod && is_floating(dtype))) {
          EXPECT_TRUE(own) << to_string(op) << "<" << to_string(dtype) << "> " << m.name;
        }
        // The correct answer passes.
        EXPECT_EQ(compare_result(t, result_over(op, t, data, [](std::uint64_t) { return true; }), expected, chain), "");
      }
    }
  }
}

// `v` rounded to the output type, as the output's bytes.
std::uint64_t out_bits(DType out, double v) {
  return visit_dtype(out, [&](auto tag) {
    const decltype(tag) x = static_cast<decltype(tag)>(v);
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof x);
    return b;
  });
}

TEST(Verification, RoundingBoundIsHonestAndTight) {
  for (DType dtype : {DType::f32, DType::f64})
    for (Op op : {Op::sum, Op::mean}) {
      const std::uint64_t n = std::uint64_t{1} << 22;
      const TypeRule t = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      const KernelSpec spec{op, t, ReduceConfig{}};
      const std::uint64_t chain = longest_chain(spec, plan_launch(spec, n, 132), n);
      const Expected e = reference_hashed(op, t, FillKind::rounding, kSeed, 0, n, 3);
      ASSERT_FALSE(e.exact);
      const double u = dtype == DType::f32 ? 0x1p-24 : 0x1p-53;
      const double bound = static_cast<double>(chain) * u * e.magnitude;
      auto bits = [&](double v) { return out_bits(t.out, v); };
      const std::string label = std::string(to_string(op)) + "<" + std::string(to_string(dtype)) + ">";
      EXPECT_EQ(compare_result(t, bits(e.value), e, chain), "") << label;
      EXPECT_EQ(compare_result(t, bits(e.value + 0.5 * bound), e, chain), "") << label;
      EXPECT_NE(compare_result(t, bits(e.value + 4 * bound), e, chain), "") << label;
      EXPECT_NE(compare_result(t, bits(0.0), e, chain), "") << label;  // what the old check let pass at 2^30
      // One 4096-element tile short: about 1/1024 of the sum.
      EXPECT_NE(compare_result(t, bits(e.value * (1 - 1.0 / 1024)), e, chain), "") << label;
    }
}

// The 16-bit floats accumulate in f32: the same bound with f32's roundoff, one rounding
// to the output, and an f16 total past 65504 is Inf, which is then the right answer.
TEST(Verification, SixteenBitRoundingSetIsCheckedInF32AndOverflowsToInf) {
  const std::uint64_t n = std::uint64_t{1} << 22;
  for (DType dtype : {DType::f16, DType::bf16})
    for (DType out : {dtype, DType::f32})
      for (Op op : {Op::sum, Op::mean}) {
        const TypeRule t = *resolve_types(op, dtype, out).rule;
        ASSERT_EQ(t.acc, DType::f32);
        const KernelSpec spec{op, t, ReduceConfig{}};
        const std::uint64_t chain = longest_chain(spec, plan_launch(spec, n, 132), n);
        const Expected e = reference_hashed(op, t, FillKind::rounding, kSeed, 0, n, 3);
        ASSERT_FALSE(e.exact);
        auto bits = [&](double v) { return out_bits(t.out, v); };
        const std::string label = std::string(to_string(op)) + "<" + std::string(to_string(dtype)) + ", " +
                                  std::string(to_string(out)) + ">";
        EXPECT_EQ(compare_result(t, bits(e.value), e, chain), "") << label;
        EXPECT_NE(compare_result(t, bits(0.0), e, chain), "") << label;
        EXPECT_NE(compare_result(t, bits(-e.value), e, chain), "") << label;
        const bool overflows = dtype == DType::f16 && out == DType::f16 && op == Op::sum;
        if (overflows) {
          // About 1.5 * 2^22: past f16's range, so Inf (and only +Inf) is right.
          EXPECT_TRUE(std::isinf(bits_to_double(t.out, bits(e.value)))) << label;
          EXPECT_NE(compare_result(t, bits(65504.0), e, chain), "") << label;
        } else {
          // A share short that the output can show: one 4096-element tile; for bf16's
          // 8 significant bits, a sixteenth (its rounding hides less than that; the coverage
          // twin, a sum into f32, sees a single element).
          const double share = out == DType::bf16 ? 1.0 / 16 : 1.0 / 1024;
          EXPECT_NE(compare_result(t, bits(e.value * (1 - share)), e, chain), "") << label;
          EXPECT_NE(compare_result(t, bits(std::numeric_limits<double>::infinity()), e, chain), "") << label;
        }
      }
}

TEST(Verification, LongestChainCoversEveryLevel) {
  const KernelSpec ticket{Op::sum, {DType::f32, DType::f32, DType::f32}, *parse_config("vectorized").config};
  const std::uint64_t n = std::uint64_t{1} << 30;
  const LaunchPlan plan = plan_launch(ticket, n, 132);
  const std::uint64_t per_thread = n / (std::uint64_t{plan.grid} * plan.block);
  EXPECT_GE(longest_chain(ticket, plan, n), per_thread / ticket.config.unroll + 20);
  KernelSpec atomic = ticket;
  atomic.config.passes = Passes::single_pass_atomic;
  EXPECT_GE(longest_chain(atomic, plan_launch(atomic, n, 132), n), plan.grid);  // blocks add in turn
  const LaunchPlan one = plan_launch(ticket, 100, 132);
  EXPECT_LE(longest_chain(ticket, one, 100), 60u);
}

}  // namespace
}  // namespace reduce_tune::verify
