// Search strategies over a pruned configuration space. A strategy only sees an
// Evaluator, so it is tested against a fake with a known optimum; the tuner's evaluator
// compiles, verifies and times on the GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reduce_tune/config.h"
#include "reduce_tune/engine/search_space.h"
#include "reduce_tune/tuner/tune_options.h"

namespace reduce_tune::tuner {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // These configs will be evaluated soon, or (speculative) may be: a chance to compile
  // them in the background.
  virtual void prefetch(std::span<const ReduceConfig> configs, bool speculative) {
    (void)configs;
    (void)speculative;
  }
  // Time in ms, or nullopt when the candidate failed (compile, launch, verification).
  virtual std::optional<double> evaluate(const ReduceConfig& config) = 0;
  // True when the search must end now (Ctrl-C, time budget).
  virtual bool should_stop() { return false; }
};

// The valid configs of one problem on one device, with one-parameter moves between them.
class SearchSpace {
 public:
  SearchSpace(Op op, const TypeRule& types, const DeviceLimits& limits,
              std::span<const Strategy> strategies = kAllStrategies);
  explicit SearchSpace(std::vector<ReduceConfig> configs);  // for tests
  const std::vector<ReduceConfig>& configs() const { return configs_; }
  bool contains(const ReduceConfig& c) const;
  // Configs one step away: a numeric parameter moved to an adjacent declared value, or
  // an enumerated parameter (warp, passes, load) set to another value; valid ones only.
  std::vector<ReduceConfig> neighbours(const ReduceConfig& c) const;

 private:
  std::vector<ReduceConfig> configs_;
};

struct SearchRequest {
  SearchKind kind = SearchKind::local;
  int max_evaluations = 0;            // 0: no limit (exhaustive walks the whole space)
  std::vector<ReduceConfig> seeds;    // local: where to start (neighbour buckets' winners)
  int random_sample = 6;              // local: random starting points besides the seeds
  std::uint64_t rng_seed = 1;
};

struct SearchResult {
  struct Entry {
    ReduceConfig config;
    std::optional<double> time_ms;
  };
  std::vector<Entry> evaluated;  // in evaluation order, each config once
  std::optional<ReduceConfig> best;
  bool stopped = false;          // should_stop() ended it
};

SearchResult run_search(const SearchSpace& space, const SearchRequest& request, Evaluator& evaluator);

// The configs a local search evaluates first (the seeds in the space, then the random
// sample), in that order: known before the search runs, so they can be compiled ahead.
std::vector<ReduceConfig> starting_points(const SearchSpace& space, const SearchRequest& request);

}  // namespace reduce_tune::tuner
