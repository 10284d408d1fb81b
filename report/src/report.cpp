#include "reduce_tune/report/report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace reduce_tune::report {

std::optional<double> BenchComparison::ratio(const std::optional<double>& other_ms) const {
  if (!other_ms || !tuned_ms || !(*tuned_ms > 0) || !std::isfinite(*other_ms)) return std::nullopt;
  return *other_ms / *tuned_ms;
}

std::vector<BenchRow> bench_rows(const DeviceReport& device, const db::ProblemClass& problem,
                                 std::string_view implementation) {
  std::vector<BenchRow> rows;
  for (const auto& row : device.bench)
    if (row.implementation == implementation && db::ProblemClass::of(row.problem) == problem) rows.push_back(row);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const BenchRow& a, const BenchRow& b) { return a.problem.n < b.problem.n; });
  return rows;
}

BenchComparison BenchSize::comparison() const {
  BenchComparison c;
  c.n = n;
  auto time = [](const BenchRow* row) { return row ? std::optional<double>(row->median_ms) : std::nullopt; };
  c.tuned_ms = time(tuned);
  c.default_ms = time(default_config);
  c.cub_ms = time(cub);
  c.classic_best_ms = time(classic_best);
  return c;
}

std::vector<BenchSize> bench_sizes(const DeviceReport& device, const db::ProblemClass& problem) {
  std::map<std::uint64_t, BenchSize> sizes;
  for (const auto& row : device.bench) {
    if (db::ProblemClass::of(row.problem) != problem) continue;
    auto& size = sizes[row.problem.n];
    size.n = row.problem.n;
    // The last row of an implementation wins, as in compare_with_bench.
    if (row.implementation == kBenchTuned) size.tuned = &row;
    else if (row.implementation == kBenchDefault) size.default_config = &row;
    else if (row.implementation == kBenchCub) size.cub = &row;
    else if (row.implementation == kBenchClassicBest) size.classic_best = &row;
  }
  std::vector<BenchSize> out;
  out.reserve(sizes.size());
  for (const auto& [n, size] : sizes) out.push_back(size);
  return out;
}

std::optional<BenchComparison> compare_with_bench(const DeviceReport& device, const ProblemReport& problem,
                                                  const BucketReport& bucket) {
  std::optional<std::uint64_t> n;
  for (const auto& row : device.bench)
    if (db::ProblemClass::of(row.problem) == problem.problem && size_bucket(row.problem.n) == bucket.bucket)
      n = std::max(n.value_or(0), row.problem.n);
  if (!n) return std::nullopt;

  BenchComparison comparison;
  comparison.n = *n;
  for (const auto& row : device.bench) {
    if (row.problem != problem.problem.with_size(*n)) continue;
    // The last row of an implementation wins, so a rerun appended later takes effect.
    if (row.implementation == kBenchTuned) comparison.tuned_ms = row.median_ms;
    else if (row.implementation == kBenchDefault) comparison.default_ms = row.median_ms;
    else if (row.implementation == kBenchCub) comparison.cub_ms = row.median_ms;
    else if (row.implementation == kBenchClassicBest) comparison.classic_best_ms = row.median_ms;
  }
  if (!comparison.tuned_ms)
    if (const auto* winner = primary_winner(bucket)) comparison.tuned_ms = winner->winner.median_ms;
  return comparison;
}

double percent_of_peak(const DeviceKey& device, double gbps) {
  const double peak = device.peak_bandwidth_gbps();
  if (!(peak > 0)) return std::numeric_limits<double>::quiet_NaN();
  return gbps / peak * 100.0;
}

const ReportWinner* find_winner(const BucketReport& bucket, db::Determinism determinism) {
  for (const auto& w : bucket.winners)
    if (w.winner.determinism == determinism) return &w;
  return nullptr;
}

const ReportWinner* primary_winner(const BucketReport& bucket) {
  if (const auto* w = find_winner(bucket, db::Determinism::deterministic)) return w;
  return bucket.winners.empty() ? nullptr : &bucket.winners.front();
}

}  // namespace reduce_tune::report
