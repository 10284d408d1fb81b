#include "reduce_tune/tuner/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace reduce_tune::tuner {
namespace {

// A smooth cost over (block, items, unroll, grid) of warp_shuffle configs with its
// optimum at block=256, items=8, unroll=2, grid=sm*4; other parameters add a fixed cost.
class FakeEvaluator : public Evaluator {
 public:
  std::optional<double> evaluate(const ReduceConfig& c) override {
    ++calls;
    if (speculated_configs.count(c)) ++speculation_hits;
    seen.insert(c);
    if (fail_block && c.block_threads == fail_block) return std::nullopt;
    auto d = [](double a, double b) { return std::pow(std::log2(a) - std::log2(b), 2); };
    double cost = 1.0 + d(c.block_threads, 256) + d(c.items_per_thread, 8) + d(c.unroll, 2) + d(c.grid.value, 4);
    if (c.passes != Passes::single_pass_ticket) cost += 0.5;
    if (c.load != LoadHint::ldg) cost += 0.25;
    if (c.warp_reduce != WarpReduce::shuffle) cost += 0.3;
    return cost;
  }
  void prefetch(std::span<const ReduceConfig> configs, bool speculative) override {
    (speculative ? speculated : prefetched) += configs.size();
    if (speculative) speculated_configs.insert(configs.begin(), configs.end());
  }
  bool should_stop() override { return stop_after > 0 && calls >= stop_after; }
  int calls = 0;
  int stop_after = 0;
  std::size_t prefetched = 0;
  std::size_t speculated = 0;
  std::set<ReduceConfig> speculated_configs;
  int speculation_hits = 0;  // evaluations of a config speculated before
  std::uint32_t fail_block = 0;
  std::set<ReduceConfig> seen;
};

ReduceConfig optimum() {
  return *parse_config("warp_shuffle:block=256,items=8,unroll=2,grid=sm*4,passes=single_pass_ticket,load=ldg,warp=shuffle").config;
}

SearchRequest request_of(SearchKind kind, int budget, std::uint64_t seed = 1) {
  SearchRequest r;
  r.kind = kind;
  r.max_evaluations = budget;
  r.rng_seed = seed;
  return r;
}

SearchSpace warp_shuffle_space() {
  const std::vector<Strategy> strategies = {Strategy::warp_shuffle};
  return SearchSpace(Op::sum, *resolve_types(Op::sum, DType::f32, DType::f32).rule, DeviceLimits{}, strategies);
}

TEST(Search, ExhaustiveEvaluatesEverythingOnceAndFindsTheOptimum) {
  const SearchSpace space = warp_shuffle_space();
  ASSERT_TRUE(space.contains(optimum()));
  FakeEvaluator ev;
  const auto r = run_search(space, request_of(SearchKind::exhaustive, 0), ev);
  EXPECT_EQ(r.evaluated.size(), space.configs().size());
  EXPECT_EQ(ev.seen.size(), space.configs().size());
  EXPECT_EQ(ev.prefetched, space.configs().size());
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, optimum());
}

// The climb's next moves are the neighbours of the best point found so far: the search
// offers them for compiling (speculatively) as soon as that point is measured, so that
// most configs the climb evaluates were announced a step ahead.
TEST(Search, LocalAnnouncesTheNextStepsMovesAheadOfTime) {
  const SearchSpace space = warp_shuffle_space();
  SearchRequest request = request_of(SearchKind::local, 60);
  request.seeds = {default_config(Strategy::warp_shuffle)};
  request.random_sample = 0;
  FakeEvaluator ev;
  const auto r = run_search(space, request, ev);
  ASSERT_EQ(r.evaluated.size(), 60u);
  // Everything after the seed is a move of some climb step.
  EXPECT_GE(ev.speculation_hits, 40) << ev.speculation_hits << " of 59";
  // Nothing is announced once the budget is spent: a budget of one evaluation speculates nothing.
  FakeEvaluator one;
  run_search(space, request_of(SearchKind::local, 1), one);
  EXPECT_EQ(one.speculated, 0u);
}

TEST(Search, LocalFindsTheOptimumOfASmoothSpaceWithinItsBudget) {
  const SearchSpace space = warp_shuffle_space();
  SearchRequest request = request_of(SearchKind::local, 60);
  request.seeds = {default_config(Strategy::warp_shuffle)};
  FakeEvaluator ev;
  const auto r = run_search(space, request, ev);
  EXPECT_LE(static_cast<int>(r.evaluated.size()), 60);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, optimum()) << to_string(*r.best);
  EXPECT_LT(space.configs().size(), 20000u);
  EXPECT_GT(space.configs().size(), 60u * 10);  // the budget is a small part of the space
}

TEST(Search, RandomRespectsTheBudgetAndIsReproducible) {
  const SearchSpace space = warp_shuffle_space();
  FakeEvaluator a, b;
  const auto ra = run_search(space, request_of(SearchKind::random, 25, 7), a);
  const auto rb = run_search(space, request_of(SearchKind::random, 25, 7), b);
  EXPECT_EQ(ra.evaluated.size(), 25u);
  ASSERT_EQ(rb.evaluated.size(), 25u);
  for (std::size_t i = 0; i < 25; ++i) EXPECT_EQ(ra.evaluated[i].config, rb.evaluated[i].config);
}

TEST(Search, FailedCandidatesNeverWin) {
  const SearchSpace space = warp_shuffle_space();
  FakeEvaluator ev;
  ev.fail_block = 256;
  const auto r = run_search(space, request_of(SearchKind::exhaustive, 0), ev);
  ASSERT_TRUE(r.best);
  EXPECT_NE(r.best->block_threads, 256u);
}

TEST(Search, StopsWhenTheEvaluatorSaysSo) {
  const SearchSpace space = warp_shuffle_space();
  FakeEvaluator ev;
  ev.stop_after = 5;
  const auto r = run_search(space, request_of(SearchKind::exhaustive, 0), ev);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.evaluated.size(), 5u);
}

TEST(Search, NeighboursMoveOneParameterAndStayValid) {
  const SearchSpace space = warp_shuffle_space();
  const ReduceConfig c = optimum();
  const auto ns = space.neighbours(c);
  EXPECT_FALSE(ns.empty());
  for (const auto& n : ns) {
    EXPECT_TRUE(space.contains(n));
    int changed = (n.block_threads != c.block_threads) + (n.items_per_thread != c.items_per_thread) +
                  (n.vec_width != c.vec_width) + (n.unroll != c.unroll) + !(n.grid == c.grid) +
                  (n.warp_reduce != c.warp_reduce) + (n.passes != c.passes) + (n.load != c.load);
    EXPECT_EQ(changed, 1) << to_string(n);
  }
  // block 256 -> 128 and 512 (adjacent declared values), not 64 or 1024.
  auto has_block = [&](std::uint32_t b) {
    return std::any_of(ns.begin(), ns.end(), [&](const ReduceConfig& n) { return n.block_threads == b; });
  };
  EXPECT_TRUE(has_block(128) && has_block(512));
  EXPECT_FALSE(has_block(64) || has_block(1024));
  // A categorical parameter (warp reduction, pass structure, load) has no order: every
  // valid config that differs from c in that one parameter alone is a neighbour.
  int categorical = 0;
  for (const auto& other : space.configs()) {
    const bool rest_same = other.strategy == c.strategy && other.block_threads == c.block_threads &&
                           other.items_per_thread == c.items_per_thread && other.vec_width == c.vec_width &&
                           other.unroll == c.unroll && other.grid == c.grid;
    const int changed = (other.warp_reduce != c.warp_reduce) + (other.passes != c.passes) + (other.load != c.load);
    if (!rest_same || changed != 1) continue;
    ++categorical;
    EXPECT_NE(std::find(ns.begin(), ns.end(), other), ns.end()) << to_string(other);
  }
  EXPECT_GE(categorical, 3);
}

}  // namespace
}  // namespace reduce_tune::tuner
