// The CSV renderer: one row per (device, problem, bucket, strategy) best measurement, plus
// a row for a winner that is not its strategy's fastest, then one row per axis winner (with
// axis columns added at the end when there are any); docs/REPORTS.md lists the columns.
#include <iterator>
#include <sstream>

#include "reduce_tune/config.h"
#include "reduce_tune/report/report_render.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

constexpr const char* kColumns[] = {
    "device_index", "device_uuid", "device_name", "arch", "op", "dtype", "out_dtype", "layout", "bucket",
    "bucket_min_n", "n", "strategy", "config", "median_ms", "gbps", "percent_of_peak", "spread", "repetitions",
    "measurement_id", "strategy_best", "winner", "winner_deterministic", "winner_nondeterministic", "bench_n",
    "bench_default_ms", "bench_cub_ms", "speedup_over_default", "speedup_over_cub", "speedup_over_classic_best",
    "bench_tuned_ms", "bench_classic_best_ms",
};

// Added after kColumns when the report holds axis winners, so a report without them keeps
// its columns.
constexpr const char* kAxisColumns[] = {"reduced_bucket", "outputs_bucket", "reduced", "outputs", "inner"};

std::string optional_number(const std::optional<double>& value) { return value ? exact_number(*value) : ""; }
const char* boolean(bool value) { return value ? "true" : "false"; }

class CsvWriter {
 public:
  explicit CsvWriter(std::ostringstream& out) : out_(out) {}
  CsvWriter& field(std::string_view text) {
    if (!first_) out_ << ',';
    out_ << csv_field(text);
    first_ = false;
    return *this;
  }
  // Text from the database: guarded against spreadsheet formulas.
  CsvWriter& text(std::string_view text) {
    if (!first_) out_ << ',';
    out_ << csv_text_field(text);
    first_ = false;
    return *this;
  }
  void end_row() {
    out_ << "\r\n";  // RFC 4180 line break
    first_ = true;
  }

 private:
  std::ostringstream& out_;
  bool first_ = true;
};

struct Row {
  ReduceConfig config;
  const db::Measurement* measurement = nullptr;  // null for a winner whose measurement is not in the file
  double median_ms = 0;
  bool strategy_best = false;
  bool deterministic_winner = false;
  bool nondeterministic_winner = false;
  bool leads = false;  // the winner the bucket's bench comparison belongs to
};

// The strategies' best, then winners that are none of them (a deterministic winner
// slower than its strategy's non-deterministic best, or one whose measurement is not in
// this file).
std::vector<Row> bucket_rows(const BucketReport& bucket) {
  std::vector<Row> rows;
  for (const auto& m : bucket.strategy_best) rows.push_back({m.config, &m, m.median_ms, true, false, false, false});
  const auto* lead = primary_winner(bucket);
  for (const auto& w : bucket.winners) {
    Row* row = nullptr;
    if (w.measurement)
      for (auto& r : rows)
        if (r.measurement != nullptr && r.measurement->id == w.measurement->id) row = &r;
    if (row == nullptr) {
      rows.push_back({w.winner.config, w.measurement ? &*w.measurement : nullptr, w.winner.median_ms, false, false,
                      false, false});
      row = &rows.back();
    }
    if (w.winner.determinism == db::Determinism::deterministic) row->deterministic_winner = true;
    else row->nondeterministic_winner = true;
    if (&w == lead) row->leads = true;
  }
  return rows;
}

void write_rows(CsvWriter& csv, const DeviceReport& device, const ProblemReport& problem, const BucketReport& bucket,
                bool axis_columns) {
  const auto comparison = compare_with_bench(device, problem, bucket);
  const std::uint64_t min_n = bucket.bucket >= 64 ? 0 : std::uint64_t{1} << bucket.bucket;
  for (const auto& row : bucket_rows(bucket)) {
    const auto* m = row.measurement;
    const bool leads = row.leads && comparison.has_value();
    csv.field(std::to_string(device.index))
        .text(device.key.uuid)
        .text(device.key.name)
        .field(arch_label(device.key))
        .field(to_string(problem.problem.op))
        .field(to_string(problem.problem.dtype))
        .field(to_string(problem.problem.out_dtype))
        .field(to_string(problem.problem.layout))
        .field(std::to_string(bucket.bucket))
        .field(std::to_string(min_n))
        .field(m ? std::to_string(m->problem.n) : "")
        .field(to_string(row.config.strategy))
        .text(to_string(row.config))
        .field(exact_number(row.median_ms))
        .field(m ? exact_number(m->gbps) : "")
        .field(m ? exact_number(percent_of_peak(device.key, m->gbps)) : "")
        .field(m ? exact_number(m->spread) : "")
        .field(m ? std::to_string(m->repetitions) : "")
        .field(m ? std::to_string(m->id) : "")
        .field(boolean(row.strategy_best))
        .field(boolean(row.deterministic_winner || row.nondeterministic_winner))
        .field(boolean(row.deterministic_winner))
        .field(boolean(row.nondeterministic_winner))
        .field(leads ? std::to_string(comparison->n) : "")
        .field(leads ? optional_number(comparison->default_ms) : "")
        .field(leads ? optional_number(comparison->cub_ms) : "")
        .field(leads ? optional_number(comparison->speedup_over_default()) : "")
        .field(leads ? optional_number(comparison->speedup_over_cub()) : "")
        .field(leads ? optional_number(comparison->speedup_over_classic_best()) : "")
        .field(leads ? optional_number(comparison->tuned_ms) : "")
        .field(leads ? optional_number(comparison->classic_best_ms) : "");
    if (axis_columns)
      for (std::size_t i = 0; i < std::size(kAxisColumns); ++i) csv.field("");
    csv.end_row();
  }
}

// One axis winner: the flat columns that apply (device, op, types, layout, config, time,
// GB/s, % of peak, the measurement's spread, repetitions and id; an axis winner is
// deterministic), the others empty, then the axis columns.
void write_axis_row(CsvWriter& csv, const DeviceReport& device, const AxisReport& axis, const ReportAxisWinner& w) {
  const auto* m = w.measurement ? &*w.measurement : nullptr;
  const double gbps = axis_gbps(w);
  csv.field(std::to_string(device.index))
      .text(device.key.uuid)
      .text(device.key.name)
      .field(arch_label(device.key))
      .field(to_string(axis.op))
      .field(to_string(axis.dtype))
      .field(to_string(axis.out_dtype))
      .field(to_string(axis.layout))
      .field("")   // bucket
      .field("")   // bucket_min_n
      .field("")   // n
      .field("")   // strategy
      .text(w.winner.config)
      .field(exact_number(w.winner.median_ms))
      .field(exact_number(gbps))
      .field(exact_number(percent_of_peak(device.key, gbps)))
      .field(m ? exact_number(m->spread) : "")
      .field(m ? std::to_string(m->repetitions) : "")
      .field(m ? std::to_string(m->id) : "")
      .field(boolean(false))  // strategy_best
      .field(boolean(true))   // winner
      .field(boolean(true))   // winner_deterministic
      .field(boolean(false));  // winner_nondeterministic
  // The eight bench columns, the last of kColumns.
  static_assert(std::size(kColumns) == 23 + 8, "write_axis_row writes 23 columns, then the bench ones");
  for (int i = 0; i < 8; ++i) csv.field("");
  csv.field(std::to_string(w.winner.problem.reduced_bucket))
      .field(std::to_string(w.winner.problem.outputs_bucket))
      .field(m ? std::to_string(m->reduced) : "")
      .field(m ? std::to_string(m->outputs) : "")
      .field(m ? std::to_string(m->inner) : "");
  csv.end_row();
}

}  // namespace

std::string render_csv(const ReportData& data) {
  std::ostringstream out;
  CsvWriter csv(out);
  bool axis_columns = false;
  for (const auto& device : data.devices)
    for (const auto& axis : device.axis) axis_columns = axis_columns || !axis.winners.empty();
  for (const auto* column : kColumns) csv.field(column);
  if (axis_columns)
    for (const auto* column : kAxisColumns) csv.field(column);
  csv.end_row();
  for (const auto& device : data.devices) {
    for (const auto& problem : device.problems)
      for (const auto& bucket : problem.buckets) write_rows(csv, device, problem, bucket, axis_columns);
    for (const auto& axis : device.axis)
      for (const auto& w : axis.winners) write_axis_row(csv, device, axis, w);
  }
  return out.str();
}

}  // namespace reduce_tune::report
