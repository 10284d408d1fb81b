#include "reduce_tune/report/report_tables.h"

#include <algorithm>
#include <cmath>

#include "reduce_tune/config.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

TableCell text(std::string value) { return {std::move(value), false, false}; }
TableCell code(std::string value) { return {std::move(value), true, false}; }
TableCell number(std::string value) { return {std::move(value), false, true}; }

void set_header(Table& table, std::vector<std::string> header, std::size_t first_numeric) {
  table.numeric_columns.assign(header.size(), false);
  for (std::size_t i = first_numeric; i < header.size(); ++i) table.numeric_columns[i] = true;
  table.header = std::move(header);
}

TableCell speedup_cell(const std::optional<double>& speedup) {
  return number(speedup ? speedup_text(*speedup) : "-");
}

}  // namespace

bool has_bench_rows(const DeviceReport& device, const db::ProblemClass& problem) {
  return std::any_of(device.bench.begin(), device.bench.end(),
                     [&](const BenchRow& row) { return db::ProblemClass::of(row.problem) == problem; });
}

Table device_table(const DeviceReport& device) {
  const auto& key = device.key;
  Table table;
  set_header(table, {"property", "value"}, 2);
  table.rows = {
      {text("name"), text(key.name)},
      {text("architecture"), text(arch_label(key) + " (compute capability " + std::to_string(key.cc_major) + "." +
                                  std::to_string(key.cc_minor) + ")")},
      {text("SMs"), text(std::to_string(key.sm_count))},
      {text("L2 cache"), text(bytes_label(key.l2_bytes))},
      {text("memory"), text(std::to_string(key.memory_bus_bits) + "-bit bus at " +
                            fixed_number(static_cast<double>(key.memory_clock_khz) / 1000.0, 0) + " MHz")},
      {text("peak bandwidth"),
       text(fixed_number(key.peak_bandwidth_gbps(), 1) +
            " GB/s: bus width x memory clock x 2 (double data rate); the peak that \"% of peak\" uses")},
      {text("UUID"), code(key.uuid)},
      {text("driver / runtime"),
       text("CUDA " + cuda_version_label(key.driver_version) + " / " + cuda_version_label(key.runtime_version))},
  };
  return table;
}

Table winners_table(const DeviceReport& device, const ProblemReport& problem) {
  const bool bench = has_bench_rows(device, problem.problem);
  Table table;
  std::vector<std::string> header = {"bucket", "class", "config", "n", "time (ms)", "GB/s", "% of peak"};
  if (bench) {
    header.push_back("bench n");
    header.push_back("vs default");
    header.push_back("vs CUB");
    header.push_back("vs classic best");
  }
  set_header(table, std::move(header), 3);
  for (const auto& bucket : problem.buckets) {
    const auto comparison = bench ? compare_with_bench(device, problem, bucket) : std::nullopt;
    if (bucket.winners.empty()) {
      std::vector<TableCell> row = {text(bucket_label(bucket.bucket)), text("none"), text("no candidate passed"),
                                    number("-"), number("-"), number("-"), number("-")};
      if (bench) row.insert(row.end(), 4, number("-"));
      table.rows.push_back(std::move(row));
      continue;
    }
    for (const auto& entry : bucket.winners) {
      const auto& w = entry.winner;
      const auto& m = entry.measurement;
      std::vector<TableCell> row = {
          text(bucket_label(bucket.bucket)),
          text(std::string(to_string(w.determinism))),
          code(to_string(w.config)),
          number(m ? std::to_string(m->problem.n) : "-"),
          number(time_ms(w.median_ms)),
          number(m ? fixed_number(m->gbps, 1) : "-"),
          number(m ? fixed_number(percent_of_peak(device.key, m->gbps), 1) : "-"),
      };
      if (bench) {
        // The comparison is per bucket: it goes on the winner the report leads with.
        const bool leads = &entry == primary_winner(bucket);
        row.push_back(number(leads && comparison ? std::to_string(comparison->n) : "-"));
        row.push_back(speedup_cell(leads && comparison ? comparison->speedup_over_default() : std::nullopt));
        row.push_back(speedup_cell(leads && comparison ? comparison->speedup_over_cub() : std::nullopt));
        row.push_back(speedup_cell(leads && comparison ? comparison->speedup_over_classic_best() : std::nullopt));
      }
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

Table bench_table(const DeviceReport& device, const db::ProblemClass& problem) {
  Table table;
  set_header(table,
             {"bucket", "n", "tuned (ms)", "default (ms)", "CUB (ms)", "classic best (ms)", "tuned GB/s",
              "tuned % of peak", "vs default", "vs CUB", "vs classic best"},
             1);
  auto time = [](const BenchRow* row) { return number(row ? time_ms(row->median_ms) : "-"); };
  for (const auto& size : bench_sizes(device, problem)) {
    const auto comparison = size.comparison();
    std::string percent = "-";
    if (size.tuned != nullptr)
      percent = std::isfinite(size.tuned->peak_fraction) ? fixed_number(size.tuned->peak_fraction * 100, 1)
                                                         : fixed_number(percent_of_peak(device.key, size.tuned->gbps), 1);
    table.rows.push_back({text(bucket_label(size_bucket(size.n))), number(std::to_string(size.n)), time(size.tuned),
                          time(size.default_config), time(size.cub), time(size.classic_best),
                          number(size.tuned ? fixed_number(size.tuned->gbps, 1) : "-"), number(percent),
                          speedup_cell(comparison.speedup_over_default()), speedup_cell(comparison.speedup_over_cub()),
                          speedup_cell(comparison.speedup_over_classic_best())});
  }
  return table;
}

std::vector<std::string> bench_cub_calls(const DeviceReport& device, const db::ProblemClass& problem) {
  std::vector<std::string> calls;
  for (const auto& row : device.bench)
    if (row.implementation == kBenchCub && db::ProblemClass::of(row.problem) == problem &&
        std::find(calls.begin(), calls.end(), row.config) == calls.end())
      calls.push_back(row.config);
  return calls;
}

std::string bench_note(const DeviceReport& device, const db::ProblemClass& problem) {
  std::string note =
      "The latest reduce-tune bench run per size: milliseconds of the tuned call, the built-in default config, "
      "cub::DeviceReduce and the best classic kernel, timed in one process with the same method. \"vs X\" is X's "
      "time / the tuned time (above 1: the tuned call is faster).";
  const auto calls = bench_cub_calls(device, problem);
  if (!calls.empty()) {
    note += " CUB: ";
    for (std::size_t i = 0; i < calls.size(); ++i) note += (i ? ", " : "") + calls[i];
    note += ".";
  }
  return note;
}

Table candidates_table(const ProblemReport& problem) {
  Table table;
  std::vector<std::string> header = {"bucket", "tried"};
  if (!problem.buckets.empty())
    for (const auto& s : problem.buckets.front().statuses) header.emplace_back(to_string(s.status));
  set_header(table, std::move(header), 1);
  for (const auto& bucket : problem.buckets) {
    std::vector<TableCell> row = {text(bucket_label(bucket.bucket)), number(std::to_string(bucket.candidates))};
    for (const auto& s : bucket.statuses) row.push_back(number(std::to_string(s.count)));
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::vector<FailureExample> failure_examples(const ProblemReport& problem) {
  std::vector<FailureExample> examples;
  for (const auto& bucket : problem.buckets)
    for (const auto& s : bucket.statuses) {
      if (s.status == db::MeasurementStatus::ok || s.count == 0) continue;
      auto it = std::find_if(examples.begin(), examples.end(),
                             [&](const FailureExample& e) { return e.status == s.status; });
      if (it == examples.end()) {
        examples.push_back({s.status, 0, bucket.bucket, {}});
        it = std::prev(examples.end());
      }
      it->count += s.count;
      if (it->detail.empty() && !s.example_detail.empty()) {
        it->detail = s.example_detail;
        it->bucket = bucket.bucket;
      }
    }
  std::sort(examples.begin(), examples.end(),
            [](const FailureExample& a, const FailureExample& b) { return a.status < b.status; });
  return examples;
}

Table strategy_table(const ProblemReport& problem) {
  std::vector<Strategy> columns;
  for (const auto strategy : kAllStrategies) {
    const bool measured = std::any_of(problem.buckets.begin(), problem.buckets.end(), [&](const BucketReport& b) {
      return std::any_of(b.strategy_best.begin(), b.strategy_best.end(),
                         [&](const db::Measurement& m) { return m.config.strategy == strategy; });
    });
    if (measured) columns.push_back(strategy);
  }
  Table table;
  std::vector<std::string> header = {"bucket"};
  for (const auto strategy : columns) header.emplace_back(to_string(strategy));
  set_header(table, std::move(header), 1);
  for (const auto& bucket : problem.buckets) {
    std::vector<TableCell> row = {text(bucket_label(bucket.bucket))};
    for (const auto strategy : columns) {
      const auto it = std::find_if(bucket.strategy_best.begin(), bucket.strategy_best.end(),
                                   [&](const db::Measurement& m) { return m.config.strategy == strategy; });
      row.push_back(number(it == bucket.strategy_best.end()
                               ? "-"
                               : time_ms(it->median_ms) + " (" + fixed_number(it->gbps, 0) + ")"));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string axis_heat_cell_text(const AxisReport& axis, int reduced_bucket, int outputs_bucket) {
  if (const auto* w = find_axis_winner(axis, reduced_bucket, outputs_bucket))
    return fixed_number(axis_gbps(*w), 1) + (w->filled ? "*" : "");
  if (axis_class_without_winner(axis, reduced_bucket, outputs_bucket)) return "none";
  return "-";
}

Table axis_heat_table(const AxisReport& axis) {
  const auto range = axis_grid_range(axis);
  Table table;
  std::vector<std::string> header = {"R ↓ outputs →"};
  for (const int o : range.outputs_buckets) header.push_back(bucket_label(o));
  set_header(table, std::move(header), 1);
  for (const int r : range.reduced_buckets) {
    std::vector<TableCell> row = {text(bucket_label(r))};
    for (const int o : range.outputs_buckets) row.push_back(number(axis_heat_cell_text(axis, r, o)));
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table axis_winners_table(const DeviceReport& device, const AxisReport& axis) {
  const bool columns = axis.layout == AxisLayout::columns;
  Table table;
  std::vector<std::string> header = {"R bucket", "outputs bucket", "config", "R", "outputs"};
  if (columns) header.push_back("inner");
  for (const char* h : {"time (ms)", "GB/s", "% of peak"}) header.push_back(h);
  set_header(table, std::move(header), 3);
  const auto range = axis_grid_range(axis);
  for (const int r : range.reduced_buckets)
    for (const int o : range.outputs_buckets) {
      const auto* w = find_axis_winner(axis, r, o);
      if (w == nullptr) {
        if (!axis_class_without_winner(axis, r, o)) continue;
        std::vector<TableCell> row = {text(bucket_label(r)), text(bucket_label(o)), text("no candidate passed")};
        row.insert(row.end(), columns ? 6 : 5, number("-"));
        table.rows.push_back(std::move(row));
        continue;
      }
      const auto& m = w->measurement;
      const double gbps = axis_gbps(*w);
      // A class with a second winner for its shapes on the 16-byte grid shows both.
      const std::string config = w->winner.grid_config.empty()
                                     ? w->winner.config
                                     : w->winner.config + "; on the 16-byte grid: " + w->winner.grid_config;
      std::vector<TableCell> row = {text(bucket_label(r)), text(bucket_label(o)), code(config),
                                    number(m ? std::to_string(m->reduced) : "-"),
                                    number(m ? std::to_string(m->outputs) : "-")};
      if (columns) row.push_back(number(m ? std::to_string(m->inner) : "-"));
      row.push_back(number(time_ms(w->winner.median_ms)));
      row.push_back(number(fixed_number(gbps, 1)));
      row.push_back(number(fixed_number(percent_of_peak(device.key, gbps), 1)));
      table.rows.push_back(std::move(row));
    }
  return table;
}

std::string axis_heat_note(const AxisReport& axis) {
  return "Axis reductions of " + axis_layout_shape(axis.layout) +
         ", reduced along R. Rows: R bucket (R in [2^a, 2^(a+1))); columns: outputs bucket (outputs in "
         "[2^b, 2^(b+1))); cells: the class winner's GB/s (input bytes / time). \"-\": not tuned; \"none\": tuned, "
         "no candidate passed; \"*\": filled in between tuned classes (their winners and the built-in choice timed "
         "there, not the whole space).";
}

}  // namespace reduce_tune::report
