// The report model: what `reduce-tune report` shows, as plain values read from the
// tuning database (tuner/report_loader.h) and turned into Markdown, CSV, JSON or HTML
// (tuner/report_render.h). Nothing here prints or touches SQLite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reduce_tune/db/records.h"
#include "reduce_tune/device_key.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"

namespace reduce_tune::report {

// One side-by-side benchmark result (`reduce-tune bench`): the same problem timed with
// the tuned config, the built-in default, cub::DeviceReduce, or the best classic
// strategy, in the same process with the same method. The loader fills these from
// db::Database::latest_bench_results (the latest run per problem, n and implementation).
struct BenchRow {
  ProblemKey problem;
  std::string implementation;  // one of the kBench* names below
  double median_ms = 0;
  double gbps = 0;
  std::string config;          // canonical config text, or the CUB call's name
  double peak_fraction = std::numeric_limits<double>::quiet_NaN();  // gbps / the bench's peak
};
inline constexpr std::string_view kBenchTuned = db::kBenchTuned;
inline constexpr std::string_view kBenchDefault = db::kBenchDefault;
inline constexpr std::string_view kBenchCub = db::kBenchCub;
inline constexpr std::string_view kBenchClassicBest = db::kBenchClassicBest;

// A stored winner with the measurement that chose it (absent when that measurement is
// not in this file, e.g. after a merge).
struct ReportWinner {
  db::Winner winner;
  std::optional<db::Measurement> measurement;
};

// How many candidates of a bucket ended with one status, and one stored reason.
struct StatusSummary {
  db::MeasurementStatus status = db::MeasurementStatus::ok;
  std::int64_t count = 0;
  std::string example_detail;  // the first non-empty detail of that status; may be empty
};

struct BucketReport {
  int bucket = 0;                     // n in [2^bucket, 2^(bucket+1))
  std::vector<ReportWinner> winners;  // deterministic class first
  std::int64_t candidates = 0;        // measurements stored for the bucket
  // One entry per MeasurementStatus in enum order, zero counts included.
  std::vector<StatusSummary> statuses;
  // The fastest `ok` measurement (lowest median) of each strategy that has one, in the
  // lineage order of kAllStrategies.
  std::vector<db::Measurement> strategy_best;
};

struct ProblemReport {
  db::ProblemClass problem;
  std::vector<BucketReport> buckets;  // ascending
};

// A stored axis winner (issue 12) with the measurement that chose it (absent when that
// measurement is not in this file).
struct ReportAxisWinner {
  db::AxisWinner winner;
  std::optional<db::AxisMeasurement> measurement;
  // A class the tuner filled in between tuned ones (no done mark): its tuned
  // neighbours' winners and the built-in choice were timed there, not the whole space.
  bool filled = false;
};

// The tuned axis classes of one (op, input type, output type, layout): what the report
// draws as one heat map, rows the reduced extent's bucket (R in [2^a, 2^(a+1))), columns
// the output count's bucket (outputs in [2^b, 2^(b+1))).
struct AxisReport {
  Op op = Op::sum;
  DType dtype = DType::f32;
  DType out_dtype = DType::f32;
  AxisLayout layout = AxisLayout::rows;  // rows or columns
  // Ordered by (reduced bucket, outputs bucket).
  std::vector<ReportAxisWinner> winners;
  // Classes the tuner finished without a winner (no candidate passed), as (reduced bucket,
  // outputs bucket), ascending.
  std::vector<std::pair<int, int>> without_winner;
};

struct DeviceReport {
  std::size_t index = 0;  // the position `reduce-tune db info` lists the device at
  DeviceKey key;
  std::vector<ProblemReport> problems;  // ordered by (op, dtype, out dtype, layout)
  // Bench results of this device: the latest run's row per (problem, n, implementation),
  // oldest first, after the filter's ops and dtypes. Every renderer shows speedups when
  // rows are present.
  std::vector<BenchRow> bench;
  // Tuned axis reductions: one entry per (op, dtype, out dtype, layout) with axis winners
  // or finished axis classes, in that order, after the filter's ops and dtypes.
  std::vector<AxisReport> axis;
};

struct ReportData {
  std::string database;  // the file the data came from, as shown in the report
  std::vector<DeviceReport> devices;
};

// What the report covers; empty lists mean "all".
struct ReportFilter {
  std::optional<db::RowId> device;
  std::vector<Op> ops;
  std::vector<DType> dtypes;  // input element types
};

// The bucket's comparison with the bench rows of the same problem class: the largest
// benchmarked n that falls in the bucket, and the times measured there.
struct BenchComparison {
  std::uint64_t n = 0;
  // The bench "tuned" row at n, else the bucket's deterministic winner (any winner when
  // it has none); empty when neither exists.
  std::optional<double> tuned_ms;
  std::optional<double> default_ms;
  std::optional<double> cub_ms;
  std::optional<double> classic_best_ms;

  // other / tuned: above 1 means the tuned kernel is faster.
  std::optional<double> speedup_over_default() const { return ratio(default_ms); }
  std::optional<double> speedup_over_cub() const { return ratio(cub_ms); }
  std::optional<double> speedup_over_classic_best() const { return ratio(classic_best_ms); }

 private:
  std::optional<double> ratio(const std::optional<double>& other_ms) const;
};

// Empty when no bench row of the problem class has an n in the bucket.
std::optional<BenchComparison> compare_with_bench(const DeviceReport& device, const ProblemReport& problem,
                                                  const BucketReport& bucket);

// The bench rows of one problem class at one n, side by side (the last row of each
// implementation when there are several). Pointers into DeviceReport::bench.
struct BenchSize {
  std::uint64_t n = 0;
  const BenchRow* tuned = nullptr;
  const BenchRow* default_config = nullptr;
  const BenchRow* cub = nullptr;
  const BenchRow* classic_best = nullptr;

  // The times at n; tuned_ms only from the bench's own tuned row (no winner stands in).
  BenchComparison comparison() const;
};

// Every benchmarked n of the problem class, ascending.
std::vector<BenchSize> bench_sizes(const DeviceReport& device, const db::ProblemClass& problem);

// Bench rows of one implementation for one problem class, by ascending n.
std::vector<BenchRow> bench_rows(const DeviceReport& device, const db::ProblemClass& problem,
                                 std::string_view implementation);

// gbps as a percentage of DeviceKey::peak_bandwidth_gbps(); NaN when the peak is unknown.
double percent_of_peak(const DeviceKey& device, double gbps);

// An axis winner's GB/s (input bytes / time): the stored value, else its measurement's,
// else computed from the measurement's shape and the winner's time; NaN when unknown.
double axis_gbps(const ReportAxisWinner& winner);

// The winner of one cell of a heat map, if that class has one.
const ReportAxisWinner* find_axis_winner(const AxisReport& report, int reduced_bucket, int outputs_bucket);

// Whether the tuner finished that class without a winner.
bool axis_class_without_winner(const AxisReport& report, int reduced_bucket, int outputs_bucket);

// The rows and columns of a heat map: every bucket from the lowest to the highest that
// holds a winner or a finished class, so untuned buckets in between show as gaps.
struct AxisGridRange {
  std::vector<int> reduced_buckets;  // ascending
  std::vector<int> outputs_buckets;  // ascending
};
AxisGridRange axis_grid_range(const AxisReport& report);

// The winner of a determinism class, if the bucket has one.
const ReportWinner* find_winner(const BucketReport& bucket, db::Determinism determinism);

// The winner the report leads with: deterministic if present, else any.
const ReportWinner* primary_winner(const BucketReport& bucket);

}  // namespace reduce_tune::report
