#include "reduce_tune/engine/search_space.h"

#include <gtest/gtest.h>

#include "coverage.h"
#include "reduce_tune/engine/source_gen.h"

namespace reduce_tune {
namespace {

KernelSpec spec_of(Op op, DType in, const std::string& config_text) {
  auto parsed = parse_config(config_text);
  EXPECT_TRUE(parsed.config) << parsed.error;
  return make_spec(op, in, default_out_dtype(op, in), *parsed.config);
}

std::string reason(const KernelSpec& spec, int arch = 90) {
  DeviceLimits limits;
  limits.arch = arch;
  return check_config(spec, limits).value_or("");
}

TEST(SearchSpace, RejectsBlocksTheDeviceOrTheTreeCannotTake) {
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "vectorized:block=2048")).find("between 32 and 1024"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "interleaved:block=96")).find("power of two"), std::string::npos);
  EXPECT_EQ(reason(spec_of(Op::sum, DType::f32, "warp_shuffle:block=96")), "");
  DeviceLimits small;
  small.max_threads_per_block = 512;
  EXPECT_NE(check_config(spec_of(Op::sum, DType::f32, "vectorized:block=1024"), small).value_or("").find("device limit"),
            std::string::npos);
}

TEST(SearchSpace, RejectsLoadsWiderThan16Bytes) {
  EXPECT_NE(reason(spec_of(Op::sum, DType::f64, "vectorized:vec=4")).find("wider than a 16-byte load"), std::string::npos);
  EXPECT_EQ(reason(spec_of(Op::sum, DType::f64, "vectorized:vec=2")), "");
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "warp_shuffle:vec=2")).find("vec must be 1"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "vectorized:vec=1")).find("vec >= 2"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "vectorized:vec=3")).find("1, 2, 4 or 8"), std::string::npos);
}

TEST(SearchSpace, ReduxOnlyFor32BitIntegerAddMinMaxOnSm80) {
  EXPECT_EQ(reason(spec_of(Op::sum, DType::i32, "vectorized:warp=redux")), "");
  EXPECT_EQ(reason(spec_of(Op::max, DType::u32, "warp_shuffle:warp=redux")), "");
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "vectorized:warp=redux")).find("32-bit integers"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::i64, "vectorized:warp=redux,vec=2")).find("32-bit integers"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::prod, DType::i32, "vectorized:warp=redux")).find("add, min and max"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::i32, "vectorized:warp=redux"), 75).find("sm_80"), std::string::npos);
  // sum<i32, i64> accumulates in 64 bits: no redux.
  EXPECT_NE(check_config(make_spec(Op::sum, DType::i32, DType::i64, *parse_config("vectorized:warp=redux").config), {})
                .value_or("").find("32-bit integers"), std::string::npos);
}

TEST(SearchSpace, ClassicStrategiesKeepTheirShape) {
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "first_add:items=4")).find("first_add takes items in {2}"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "unroll_blocks:items=2")).find("{4,8}"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "neighbored:grid=sm*4")).find("grid must be tiles"), std::string::npos);
  // The pure trees have no warp step: their configs say warp=none (text stored before
  // `none` existed says smem and reads the same); a warp reduction is refused.
  EXPECT_EQ(parse_config("interleaved:warp=smem").config->warp_reduce, WarpReduce::none);
  EXPECT_EQ(to_string(*parse_config("first_add").config).find("warp=none") != std::string::npos, true);
  EXPECT_NE(parse_config("interleaved:warp=shuffle").error.find("warp must be none"), std::string::npos);
  ReduceConfig tree = *parse_config("neighbored").config;
  tree.warp_reduce = WarpReduce::shuffle;
  EXPECT_NE(reason(make_spec(Op::sum, DType::f32, DType::f32, tree)).find("warp must be none"), std::string::npos);
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "complete_unroll:warp=none")).find("ends with a warp reduction"),
            std::string::npos);
  EXPECT_EQ(reason(spec_of(Op::sum, DType::f32, "unroll_last_warp:warp=shuffle")), "");
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "complete_unroll:unroll=2")).find("unroll must be 1"), std::string::npos);
}

TEST(SearchSpace, ThreeClassicNamesAreParameterRangesOfSharedCodePaths) {
  EXPECT_EQ(code_path(Strategy::first_add), Strategy::interleaved);
  EXPECT_EQ(code_path(Strategy::unroll_blocks), Strategy::interleaved);
  EXPECT_EQ(code_path(Strategy::multi_element), Strategy::complete_unroll);
  for (Strategy s : {Strategy::neighbored, Strategy::neighbored_less, Strategy::interleaved, Strategy::unroll_last_warp,
                     Strategy::complete_unroll, Strategy::warp_shuffle, Strategy::vectorized})
    EXPECT_EQ(code_path(s), s) << to_string(s);
  // The generated source names the code path; the config keeps the lineage name.
  const auto spec = spec_of(Op::sum, DType::f32, "multi_element");
  EXPECT_NE(config_type_text(spec).find("rt::strategy_complete_unroll"), std::string::npos);
  EXPECT_EQ(to_string(spec.config).rfind("multi_element:", 0), 0u);
}

TEST(SearchSpace, UnrollCannotExceedTheValuesAThreadLoads) {
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "warp_shuffle:items=2,unroll=4")).find("unroll exceeds"), std::string::npos);
  EXPECT_EQ(reason(spec_of(Op::sum, DType::f32, "vectorized:items=1,vec=4,unroll=4")), "");
  EXPECT_NE(reason(spec_of(Op::sum, DType::f32, "vectorized:unroll=3")).find("1, 2, 4 or 8"), std::string::npos);
}

TEST(SearchSpace, EveryDefaultIsValidForEveryProblemAndArch) {
  for (int arch : {70, 80, 90})
    for (Strategy s : kAllStrategies)
      for (const auto& [op, types] : testing::all_problem_types()) {
        DeviceLimits limits;
        limits.arch = arch;
        const KernelSpec spec{op, types, default_config_for(s, op, types, arch)};
        EXPECT_EQ(check_config(spec, limits).value_or(""), "") << to_string(spec) << " sm_" << arch;
      }
}

TEST(SearchSpace, EnumerationKeepsOnlyValidConfigs) {
  DeviceLimits limits;
  for (Strategy s : kAllStrategies)
    for (auto [op, in] : {std::pair{Op::sum, DType::f32}, std::pair{Op::max, DType::i64}}) {
      const TypeRule types = *resolve_types(op, in, in).rule;
      const auto configs = enumerate_space(s, op, types, limits);
      EXPECT_FALSE(configs.empty()) << to_string(s);
      EXPECT_LE(configs.size(), declared_space_size(s));
      for (const auto& c : configs) EXPECT_FALSE(check_config({op, types, c}, limits)) << to_string(c);
    }
  // 8-byte elements drop vec=4 and redux: fewer vectorized configs than for f32 sums.
  const auto f32 = enumerate_space(Strategy::vectorized, Op::sum, *resolve_types(Op::sum, DType::f32, DType::f32).rule, limits);
  const auto f64 = enumerate_space(Strategy::vectorized, Op::sum, *resolve_types(Op::sum, DType::f64, DType::f64).rule, limits);
  EXPECT_LT(f64.size(), f32.size());
}

}  // namespace
}  // namespace reduce_tune

namespace reduce_tune {
namespace {

TEST(SearchSpace, PortfolioSeedsAreValidAndInTheSpace) {
  for (const auto& [op, types] : testing::all_problem_types()) {
    const auto seeds = portfolio_seeds(op, types, 90);
    EXPECT_GE(seeds.size(), 3u) << to_string(op) << " " << to_string(types.in);
    // Seeds of the strategies that load one element at a time survive for every type.
    for (Strategy s : {Strategy::warp_shuffle, Strategy::multi_element})
      EXPECT_TRUE(std::any_of(seeds.begin(), seeds.end(), [&](const ReduceConfig& c) { return c.strategy == s; }))
          << to_string(op) << " " << to_string(types.in) << " " << to_string(s);
    DeviceLimits limits;
    for (const auto& c : seeds) {
      EXPECT_FALSE(check_config(KernelSpec{op, types, c}, limits)) << to_string(c);
      EXPECT_LE(c.vec_width * size_of(types.in), 16u);
      const auto space = enumerate_space(c.strategy, op, types, limits);
      EXPECT_NE(std::find(space.begin(), space.end(), c), space.end()) << to_string(c);
    }
  }
}

}  // namespace
}  // namespace reduce_tune
