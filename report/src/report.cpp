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

double axis_gbps(const ReportAxisWinner& winner) {
  if (std::isfinite(winner.winner.gbps) && winner.winner.gbps > 0) return winner.winner.gbps;
  const auto& m = winner.measurement;
  if (!m) return std::numeric_limits<double>::quiet_NaN();
  if (std::isfinite(m->gbps) && m->gbps > 0) return m->gbps;
  const double ms = winner.winner.median_ms;
  if (!(ms > 0) || !std::isfinite(ms)) return std::numeric_limits<double>::quiet_NaN();
  const double bytes = static_cast<double>(m->reduced) * static_cast<double>(m->outputs) *
                       static_cast<double>(size_of(m->dtype));
  return bytes / (ms * 1e6);
}

const ReportAxisWinner* find_axis_winner(const AxisReport& report, int reduced_bucket, int outputs_bucket) {
  for (const auto& w : report.winners)
    if (w.winner.problem.reduced_bucket == reduced_bucket && w.winner.problem.outputs_bucket == outputs_bucket)
      return &w;
  return nullptr;
}

bool axis_class_without_winner(const AxisReport& report, int reduced_bucket, int outputs_bucket) {
  return std::find(report.without_winner.begin(), report.without_winner.end(),
                   std::pair<int, int>{reduced_bucket, outputs_bucket}) != report.without_winner.end();
}

AxisGridRange axis_grid_range(const AxisReport& report) {
  std::vector<std::pair<int, int>> cells = report.without_winner;
  for (const auto& w : report.winners)
    cells.emplace_back(w.winner.problem.reduced_bucket, w.winner.problem.outputs_bucket);
  AxisGridRange range;
  if (cells.empty()) return range;
  int r_lo = cells.front().first, r_hi = r_lo, o_lo = cells.front().second, o_hi = o_lo;
  for (const auto& [r, o] : cells) {
    r_lo = std::min(r_lo, r);
    r_hi = std::max(r_hi, r);
    o_lo = std::min(o_lo, o);
    o_hi = std::max(o_hi, o);
  }
  for (int r = r_lo; r <= r_hi; ++r) range.reduced_buckets.push_back(r);
  for (int o = o_lo; o <= o_hi; ++o) range.outputs_buckets.push_back(o);
  return range;
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
