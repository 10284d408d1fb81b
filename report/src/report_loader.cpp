#include "reduce_tune/report/report_loader.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "reduce_tune/config.h"

namespace reduce_tune::report {
namespace {

constexpr db::MeasurementStatus kAllStatuses[] = {
    db::MeasurementStatus::ok, db::MeasurementStatus::compile_failed, db::MeasurementStatus::launch_failed,
    db::MeasurementStatus::wrong_result, db::MeasurementStatus::skipped};

bool selected(const ReportFilter& filter, Op op, DType dtype) {
  const bool op_ok = filter.ops.empty() || std::find(filter.ops.begin(), filter.ops.end(), op) != filter.ops.end();
  const bool dtype_ok =
      filter.dtypes.empty() || std::find(filter.dtypes.begin(), filter.dtypes.end(), dtype) != filter.dtypes.end();
  return op_ok && dtype_ok;
}

bool selected(const ReportFilter& filter, const db::ProblemClass& problem) {
  return selected(filter, problem.op, problem.dtype);
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

// The heat maps of a device: its axis winners (with the measurements that chose them) and
// the classes it finished without one, grouped by (op, dtype, out dtype, layout).
std::vector<AxisReport> load_axis_reports(const db::Database& database, db::RowId device_id,
                                          const ReportFilter& filter) {
  using Group = std::tuple<Op, DType, DType, AxisLayout>;
  auto group_of = [](const db::AxisProblemClass& c) { return Group{c.op, c.dtype, c.out_dtype, c.layout}; };
  std::map<Group, AxisReport> groups;
  auto group = [&](const db::AxisProblemClass& c) -> AxisReport& {
    auto& report = groups[group_of(c)];
    report.op = c.op;
    report.dtype = c.dtype;
    report.out_dtype = c.out_dtype;
    report.layout = c.layout;
    return report;
  };

  auto winners = database.axis_winners_for_device(device_id);
  std::erase_if(winners, [&](const db::AxisWinner& w) { return !selected(filter, w.problem.op, w.problem.dtype); });
  std::map<db::RowId, db::AxisMeasurement> measurements;
  if (std::any_of(winners.begin(), winners.end(), [](const db::AxisWinner& w) { return w.measurement_id.has_value(); }))
    for (auto& m : database.axis_measurements(device_id)) {
      const auto id = m.id;
      measurements.emplace(id, std::move(m));
    }
  const auto tuned_list = database.axis_tuned_buckets(device_id);
  const std::set<db::AxisProblemClass> tuned(tuned_list.begin(), tuned_list.end());
  std::set<db::AxisProblemClass> with_winner;
  for (auto& w : winners) {
    with_winner.insert(w.problem);
    ReportAxisWinner entry{w, std::nullopt, !tuned.contains(w.problem)};
    if (w.measurement_id)
      if (const auto it = measurements.find(*w.measurement_id); it != measurements.end()) entry.measurement = it->second;
    group(w.problem).winners.push_back(std::move(entry));
  }
  for (const auto& c : tuned_list)
    if (selected(filter, c.op, c.dtype) && !with_winner.contains(c))
      group(c).without_winner.emplace_back(c.reduced_bucket, c.outputs_bucket);

  std::vector<AxisReport> reports;
  for (auto& [key, report] : groups) {
    std::stable_sort(report.winners.begin(), report.winners.end(),
                     [](const ReportAxisWinner& a, const ReportAxisWinner& b) {
                       return std::pair(a.winner.problem.reduced_bucket, a.winner.problem.outputs_bucket) <
                              std::pair(b.winner.problem.reduced_bucket, b.winner.problem.outputs_bucket);
                     });
    std::sort(report.without_winner.begin(), report.without_winner.end());
    reports.push_back(std::move(report));
  }
  return reports;
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
    device.axis = load_axis_reports(database, record.id, filter);
    data.devices.push_back(std::move(device));
  }
  return data;
}

}  // namespace reduce_tune::report
