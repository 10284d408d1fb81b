// Choosing a bucket's winners from its measurements (pure logic, tested without a GPU).
#include <algorithm>
#include <map>
#include <tuple>

#include "reduce_tune/engine/launch.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune::tuner {

double noise_band(double median_ms, double spread) {
  // Below ~10 us a call is bounded by the launch rate and run-to-run variation exceeds
  // the within-run spread; elsewhere 1% (or twice the measured spread).
  const double floor = median_ms < 0.010 ? 0.03 : 0.01;
  return std::max(floor, 2 * spread);
}

double tie_band(double median_ms, double spread) {
  // A call of 0.1 ms or more is timed to a fraction of a percent (its spread), and a 1%
  // band there let the built-in default or the simplest finalist stand 0.5-1.0% behind
  // the fastest one (H100, 2^27-2^30), where CUB was 0.3-0.7% ahead of them: a
  // difference every later call pays.
  if (median_ms >= 0.1) return std::max(0.003, 2 * spread);
  return noise_band(median_ms, spread);
}

bool guarantee_broken(double tuned_ms, double other_ms, double floor_ratio) {
  // The noise floor alone: a wide spread of the other side's measurement says that
  // measurement was noisy, not that the tuned call kept up; the second timing decides.
  return tuned_ms > other_ms / floor_ratio * (1 + noise_band(other_ms, 0));
}

std::vector<db::BucketWinner> choose_winners(const std::vector<db::Measurement>& ms, Op op, const TypeRule& types,
                                             std::uint64_t n, const std::vector<ReduceConfig>& previous,
                                             const ReduceConfig& builtin_default, int sm_count) {
  // A config that failed anywhere in the bucket (a wrong result at an interior size, its
  // coverage twin) never wins.
  std::vector<ReduceConfig> failed;
  for (const auto& m : ms)
    if (m.status != db::MeasurementStatus::ok) failed.push_back(m.config);
  auto is_failed = [&](const ReduceConfig& c) { return std::find(failed.begin(), failed.end(), c) != failed.end(); };

  // Simpler first: fewer launches, no cross-block hand-off, fewer blocks, then the
  // canonical text (a stable total order).
  auto simplicity = [&](const ReduceConfig& c) {
    const LaunchPlan plan = plan_launch(KernelSpec{op, types, c}, n, sm_count);
    return std::make_tuple(plan.finalize ? 2 : 1, plan.uses_ticket ? 1 : 0, plan.grid, to_string(c));
  };

  std::vector<db::BucketWinner> winners;
  for (auto cls : {db::Determinism::deterministic, db::Determinism::nondeterministic}) {
    // config -> (size -> measurement index), for verified configs of this class.
    std::map<ReduceConfig, std::map<std::uint64_t, std::size_t>> times;
    std::vector<std::uint64_t> sizes;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      const auto& m = ms[i];
      if (m.status != db::MeasurementStatus::ok || is_failed(m.config)) continue;
      if (is_deterministic(KernelSpec{op, types, m.config}) != (cls == db::Determinism::deterministic)) continue;
      times[m.config][m.problem.n] = i;
      if (std::find(sizes.begin(), sizes.end(), m.problem.n) == sizes.end()) sizes.push_back(m.problem.n);
    }
    // The finalists: configs measured at every size of the bucket. Without interior
    // measurements (a bucket cut short) every config measured at n competes at n alone.
    std::vector<ReduceConfig> finalists;
    for (const auto& [config, at] : times)
      if (at.size() == sizes.size() && at.count(n)) finalists.push_back(config);
    if (finalists.empty()) {
      sizes = {n};
      for (const auto& [config, at] : times)
        if (at.count(n)) finalists.push_back(config);
    }
    if (finalists.empty()) continue;
    auto t = [&](const ReduceConfig& c, std::uint64_t s) { return ms[times[c][s]].median_ms; };
    std::map<std::uint64_t, double> best;
    for (auto s : sizes) {
      best[s] = t(finalists.front(), s);
      for (const auto& c : finalists) best[s] = std::min(best[s], t(c, s));
    }
    // Each finalist's worst ratio to the fastest at any size of the bucket: a config that
    // wins at 2^k but launches twice just above it loses here.
    auto score = [&](const ReduceConfig& c) {
      double worst = 0;
      for (auto s : sizes) worst = std::max(worst, t(c, s) / best[s]);
      return worst;
    };
    const ReduceConfig* best_config = &finalists.front();
    for (const auto& c : finalists)
      if (score(c) < score(*best_config)) best_config = &c;
    const auto& lead = ms[times[*best_config][n]];
    const double limit = score(*best_config) * (1.0 + tie_band(lead.median_ms, lead.spread));
    std::optional<ReduceConfig> chosen_previous, chosen_default, chosen_simplest;
    for (const auto& c : finalists) {
      if (score(c) > limit) continue;
      if (!chosen_previous && std::find(previous.begin(), previous.end(), c) != previous.end()) chosen_previous = c;
      if (c == builtin_default) chosen_default = c;
      if (!chosen_simplest || simplicity(c) < simplicity(*chosen_simplest)) chosen_simplest = c;
    }
    // Within noise of the best, the previous winner stays (reruns agree); else the
    // built-in default, which costs nothing measurable and keeps the promise of never
    // being slower than it; else the simplest.
    ReduceConfig chosen = chosen_previous ? *chosen_previous : chosen_default ? *chosen_default : *chosen_simplest;
    // Never slower than the built-in default where both were measured: by more than 2%
    // (not the noise band, which at a few microseconds is wider than the promise). A
    // launch the default does not make counts its host time (kExtraLaunchHostMs), which
    // the device's held-queue timing leaves out but a call pays.
    if (chosen != builtin_default && times.count(builtin_default) &&
        std::find(finalists.begin(), finalists.end(), builtin_default) != finalists.end()) {
      auto launches = [&](const ReduceConfig& c, std::uint64_t s) {
        return plan_launch(KernelSpec{op, types, c}, s, sm_count).finalize ? 2 : 1;
      };
      for (auto s : sizes) {
        const auto& d = ms[times[builtin_default][s]];
        const int extra = launches(chosen, s) - launches(builtin_default, s);
        if (t(chosen, s) + std::max(extra, 0) * kExtraLaunchHostMs > d.median_ms * 1.02) {
          chosen = builtin_default;
          break;
        }
      }
    }
    winners.push_back({cls, times[chosen][n]});
  }
  return winners;
}

}  // namespace reduce_tune::tuner
