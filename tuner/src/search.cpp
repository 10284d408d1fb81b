#include "reduce_tune/tuner/search.h"

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <type_traits>

namespace reduce_tune::tuner {

SearchSpace::SearchSpace(Op op, const TypeRule& types, const DeviceLimits& limits,
                         std::span<const Strategy> strategies) {
  for (Strategy s : strategies) {
    auto part = enumerate_space(s, op, types, limits);
    configs_.insert(configs_.end(), part.begin(), part.end());
  }
  std::sort(configs_.begin(), configs_.end());
}

SearchSpace::SearchSpace(std::vector<ReduceConfig> configs) : configs_(std::move(configs)) {
  std::sort(configs_.begin(), configs_.end());
  configs_.erase(std::unique(configs_.begin(), configs_.end()), configs_.end());
}

bool SearchSpace::contains(const ReduceConfig& c) const {
  return std::binary_search(configs_.begin(), configs_.end(), c);
}

namespace {

template <typename T>
void adjacent_moves(const std::vector<T>& values, const T& current, std::vector<T>& out) {
  const auto it = std::find(values.begin(), values.end(), current);
  if (it == values.end()) {
    out.insert(out.end(), values.begin(), values.end());
    return;
  }
  if (it != values.begin()) out.push_back(*(it - 1));
  if (it + 1 != values.end()) out.push_back(*(it + 1));
}

template <typename T>
void other_values(const std::vector<T>& values, const T& current, std::vector<T>& out) {
  for (const T& v : values)
    if (!(v == current)) out.push_back(v);
}

}  // namespace

std::vector<ReduceConfig> SearchSpace::neighbours(const ReduceConfig& c) const {
  const ParameterValues v = declared_values(c.strategy);
  std::vector<ReduceConfig> out;
  auto try_add = [&](ReduceConfig n) {
    if (contains(n) && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  // Ordered parameters move one step either way; categorical ones try every other value.
  auto move = [&](const auto& values, auto ReduceConfig::*field, bool ordered) {
    std::remove_cvref_t<decltype(values)> moves;
    if (ordered) adjacent_moves(values, c.*field, moves);
    else other_values(values, c.*field, moves);
    for (const auto& m : moves) {
      ReduceConfig n = c;
      n.*field = m;
      try_add(n);
    }
  };
  move(v.block_threads, &ReduceConfig::block_threads, true);
  move(v.items_per_thread, &ReduceConfig::items_per_thread, true);
  move(v.vec_width, &ReduceConfig::vec_width, true);
  move(v.unroll, &ReduceConfig::unroll, true);
  move(v.grid, &ReduceConfig::grid, true);
  move(v.warp_reduce, &ReduceConfig::warp_reduce, false);
  move(v.passes, &ReduceConfig::passes, false);
  move(v.load, &ReduceConfig::load, false);
  return out;
}

namespace {

class SearchState {
 public:
  SearchState(const SearchRequest& request, Evaluator& evaluator) : request_(request), evaluator_(evaluator) {}

  bool exhausted() const {
    return result_.stopped ||
           (request_.max_evaluations > 0 && static_cast<int>(result_.evaluated.size()) >= request_.max_evaluations);
  }
  bool seen(const ReduceConfig& c) const { return times_.count(c) > 0; }

  // Evaluates the configs not seen yet, in order, within the budget.
  void evaluate_all(const std::vector<ReduceConfig>& configs) {
    std::vector<ReduceConfig> fresh;
    for (const auto& c : configs)
      if (!seen(c) && std::find(fresh.begin(), fresh.end(), c) == fresh.end()) fresh.push_back(c);
    if (request_.max_evaluations > 0) {
      const auto room = static_cast<std::size_t>(request_.max_evaluations) - result_.evaluated.size();
      if (fresh.size() > room) fresh.resize(room);
    }
    evaluator_.prefetch(fresh, false);
    // Whether the budget leaves evaluations after this batch (for the next step's moves).
    const bool room_after = request_.max_evaluations <= 0 ||
                            result_.evaluated.size() + fresh.size() < static_cast<std::size_t>(request_.max_evaluations);
    for (const auto& c : fresh) {
      if (evaluator_.should_stop()) {
        result_.stopped = true;
        return;
      }
      const auto t = evaluator_.evaluate(c);
      times_[c] = t;
      result_.evaluated.push_back({c, t});
      if (t && (!best_time_ || *t < *best_time_)) {
        best_time_ = t;
        result_.best = c;
        // The search goes on from the best point next: its moves may start compiling
        // while this batch is timed, if the budget leaves room for them.
        if (on_new_best && room_after) on_new_best(c);
      }
    }
  }
  std::function<void(const ReduceConfig&)> on_new_best;
  std::optional<double> time(const ReduceConfig& c) const {
    auto it = times_.find(c);
    return it == times_.end() ? std::nullopt : it->second;
  }
  SearchResult take() { return std::move(result_); }
  const std::map<ReduceConfig, std::optional<double>>& times() const { return times_; }

 private:
  const SearchRequest& request_;
  Evaluator& evaluator_;
  std::map<ReduceConfig, std::optional<double>> times_;
  std::optional<double> best_time_;
  SearchResult result_;
};

}  // namespace

namespace {
std::vector<ReduceConfig> sample_configs(const std::vector<ReduceConfig>& all, std::size_t count, std::mt19937_64& rng) {
  std::vector<ReduceConfig> picked;
  std::sample(all.begin(), all.end(), std::back_inserter(picked), count, rng);
  std::shuffle(picked.begin(), picked.end(), rng);
  return picked;
}
}  // namespace

std::vector<ReduceConfig> starting_points(const SearchSpace& space, const SearchRequest& request) {
  std::vector<ReduceConfig> points;
  for (const auto& s : request.seeds)
    if (space.contains(s)) points.push_back(s);
  std::mt19937_64 rng(request.rng_seed);
  for (const auto& c : sample_configs(space.configs(), static_cast<std::size_t>(request.random_sample), rng))
    points.push_back(c);
  return points;
}

SearchResult run_search(const SearchSpace& space, const SearchRequest& request, Evaluator& evaluator) {
  SearchState state(request, evaluator);
  const auto& all = space.configs();
  std::mt19937_64 rng(request.rng_seed);
  auto sample = [&](std::size_t count) { return sample_configs(all, count, rng); };

  switch (request.kind) {
    case SearchKind::exhaustive:
      state.evaluate_all(all);
      break;
    case SearchKind::random:
      state.evaluate_all(sample(request.max_evaluations > 0 ? static_cast<std::size_t>(request.max_evaluations)
                                                            : all.size()));
      break;
    case SearchKind::local: {
      state.on_new_best = [&](const ReduceConfig& best) {
        std::vector<ReduceConfig> next;
        for (const auto& n : space.neighbours(best))
          if (!state.seen(n)) next.push_back(n);
        evaluator.prefetch(next, true);
      };
      std::vector<ReduceConfig> starts;
      for (const auto& s : request.seeds)
        if (space.contains(s)) starts.push_back(s);
      state.evaluate_all(starts);
      state.evaluate_all(sample(static_cast<std::size_t>(request.random_sample)));
      // Hill-climb from the best point not yet climbed from; when a point has no better
      // neighbour it is a local optimum, and the climb restarts from the next best.
      std::set<ReduceConfig> climbed;
      while (!state.exhausted()) {
        // The unclimbed points, fastest first: the climb goes on from the first; the
        // neighbours of the next two are compiled in the background meanwhile, since
        // the climb usually goes there next (compiling, not timing, bounds a bucket).
        std::vector<std::pair<double, ReduceConfig>> open;
        for (const auto& [c, t] : state.times())
          if (t && !climbed.count(c)) open.emplace_back(*t, c);
        if (open.empty()) break;
        std::sort(open.begin(), open.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        const ReduceConfig from = open.front().second;
        climbed.insert(from);
        std::vector<ReduceConfig> moves, ahead;
        for (const auto& n : space.neighbours(from))
          if (!state.seen(n)) moves.push_back(n);
        for (std::size_t k = 1; k < open.size() && k <= 2; ++k)
          for (const auto& n : space.neighbours(open[k].second))
            if (!state.seen(n)) ahead.push_back(n);
        evaluator.prefetch(ahead, true);
        state.evaluate_all(moves);
      }
      break;
    }
  }
  return state.take();
}

}  // namespace reduce_tune::tuner
