#include "reduce_tune/report/report_loader.h"

#include <algorithm>
#include <map>
#include <set>

#include "reduce_tune/config.h"

namespace reduce_tune::report {
namespace {

constexpr db::MeasurementStatus kAllStatuses[] = {
    db::MeasurementStatus::ok, db::MeasurementStatus::compile_failed, db::MeasurementStatus::launch_failed,
    db::MeasurementStatus::wrong_result, db::MeasurementStatus::skipped};

bool selected(const ReportFilter& filter, const db::ProblemClass& problem) {
  const bool op_ok = filter.ops.empty() || std::find(filter.ops.begin(), filter.ops.end(), problem.op) != filter.ops.end();
  const bool dtype_ok =
      filter.dtypes.empty() || std::find(filter.dtypes.begin(), filter.dtypes.end(), problem.dtype) != filter.dtypes.end();
  return op_ok && dtype_ok;
}

// The database lists measurements per problem class, not the classes themselves, so the
// candidates are every supported (op, in, out) of the flat layout plus the classes that
// hold winners or bench rows (which covers layouts added later).
std::set<db::ProblemClass> candidate_classes(const std::vector<db::Winner>& winners,
                                             const std::vector<BenchRow>& bench) {
  std::set<db::ProblemClass> classes;
  for (const auto op : kAllOps)
    for (const auto in : kAllDTypes)
      for (const auto out : kAllDTypes)
        if (resolve_types(op, in, out).rule) classes.insert(db::ProblemClass{op, in, out, Layout{}});
  for (const auto& w : winners) classes.insert(w.problem);
  for (const auto& row : bench) classes.insert(db::ProblemClass::of(row.problem));
  return classes;
}

// The latest bench run's rows of the device that the filter selects.
std::vector<BenchRow> load_bench_rows(const db::Database& database, db::RowId device_id, const ReportFilter& filter) {
  std::vector<BenchRow> rows;
  for (auto& r : database.latest_bench_results(device_id)) {
    if (!selected(filter, db::ProblemClass::of(r.problem))) continue;
    rows.push_back(BenchRow{r.problem, std::move(r.implementation), r.median_ms, r.gbps, std::move(r.config),
                            r.peak_fraction});
  }
  return rows;
}

BucketReport summarize_bucket(int bucket, const std::vector<const db::Measurement*>& measurements,
                              const std::vector<const db::Winner*>& winners) {
  BucketReport report;
  report.bucket = bucket;
  report.candidates = static_cast<std::int64_t>(measurements.size());
  for (const auto status : kAllStatuses) {
    StatusSummary summary;
    summary.status = status;
    for (const auto* m : measurements) {
      if (m->status != status) continue;
      ++summary.count;
      if (summary.example_detail.empty()) summary.example_detail = m->detail;
    }
    report.statuses.push_back(summary);
  }
  for (const auto strategy : kAllStrategies) {
    const db::Measurement* best = nullptr;
    for (const auto* m : measurements)
      if (m->status == db::MeasurementStatus::ok && m->config.strategy == strategy &&
          (best == nullptr || m->median_ms < best->median_ms))
        best = m;
    if (best != nullptr) report.strategy_best.push_back(*best);
  }
  for (const auto* w : winners) {
    ReportWinner entry{*w, std::nullopt};
    if (w->measurement_id)
      for (const auto* m : measurements)
        if (m->id == *w->measurement_id) entry.measurement = *m;
    report.winners.push_back(std::move(entry));
  }
  std::stable_sort(report.winners.begin(), report.winners.end(), [](const ReportWinner& a, const ReportWinner& b) {
    return a.winner.determinism < b.winner.determinism;
  });
  return report;
}

ProblemReport summarize_problem(const db::ProblemClass& problem, const std::vector<db::Measurement>& measurements,
                                const std::vector<db::Winner>& device_winners) {
  std::map<int, std::vector<const db::Measurement*>> measurements_by_bucket;
  std::map<int, std::vector<const db::Winner*>> winners_by_bucket;
  for (const auto& m : measurements) measurements_by_bucket[size_bucket(m.problem.n)].push_back(&m);
  for (const auto& w : device_winners)
    if (w.problem == problem) {
      winners_by_bucket[w.bucket].push_back(&w);
      measurements_by_bucket.try_emplace(w.bucket);
    }
  ProblemReport report;
  report.problem = problem;
  for (const auto& [bucket, bucket_measurements] : measurements_by_bucket)
    report.buckets.push_back(summarize_bucket(bucket, bucket_measurements, winners_by_bucket[bucket]));
  return report;
}

}  // namespace

ReportData load_report_data(const db::Database& database, const ReportFilter& filter) {
  ReportData data;
  data.database = database.path().string();
  const auto devices = database.list_devices();
  for (std::size_t index = 0; index < devices.size(); ++index) {
    const auto& record = devices[index];
    if (filter.device && *filter.device != record.id) continue;
    DeviceReport device;
    device.index = index;
    device.key = record.key;
    const auto winners = database.winners_for_device(record.id);
    device.bench = load_bench_rows(database, record.id, filter);
    for (const auto& problem : candidate_classes(winners, device.bench)) {
      if (!selected(filter, problem)) continue;
      const auto measurements = database.measurements(record.id, problem);
      const bool has_winner =
          std::any_of(winners.begin(), winners.end(), [&](const db::Winner& w) { return w.problem == problem; });
      const bool has_bench = std::any_of(device.bench.begin(), device.bench.end(), [&](const BenchRow& row) {
        return db::ProblemClass::of(row.problem) == problem;
      });
      if (measurements.empty() && !has_winner && !has_bench) continue;
      device.problems.push_back(summarize_problem(problem, measurements, winners));
    }
    data.devices.push_back(std::move(device));
  }
  return data;
}

}  // namespace reduce_tune::report
