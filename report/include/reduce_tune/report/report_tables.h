// The report's tables as format-neutral cells, so Markdown and HTML show the same
// content. Cell text is raw (straight from the database); each renderer escapes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reduce_tune/report/report.h"

namespace reduce_tune::report {

struct TableCell {
  std::string text;
  bool code = false;     // a config or other literal: monospace
  bool numeric = false;  // right-aligned
};

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric_columns;  // parallel to header
  std::vector<std::vector<TableCell>> rows;
};

// Name, architecture, SMs, L2, memory, peak bandwidth (and how it is computed), UUID,
// driver and runtime versions.
Table device_table(const DeviceReport& device);

// Winner per bucket and determinism class; speedup columns when the problem has bench rows.
Table winners_table(const DeviceReport& device, const ProblemReport& problem);

// Candidates tried per bucket and their count per status.
Table candidates_table(const ProblemReport& problem);

// Why candidates failed: per non-ok status with a non-zero count, its total and one
// stored reason.
struct FailureExample {
  db::MeasurementStatus status = db::MeasurementStatus::ok;
  std::int64_t count = 0;
  int bucket = 0;  // where the example comes from
  std::string detail;
};
std::vector<FailureExample> failure_examples(const ProblemReport& problem);

// Best time of each strategy per bucket (rows: buckets; columns: strategies in lineage
// order, those never measured ok left out). Cells: "ms (GB/s)".
Table strategy_table(const ProblemReport& problem);

// The bench rows of the problem, one row per benchmarked n (ascending): each
// implementation's time, the tuned call's GB/s and % of peak (the peak the bench stored),
// and how much faster the tuned call is than each of the others.
Table bench_table(const DeviceReport& device, const db::ProblemClass& problem);

// The distinct CUB calls named by the problem's bench rows ("cub::DeviceReduce::Sum").
std::vector<std::string> bench_cub_calls(const DeviceReport& device, const db::ProblemClass& problem);

// The sentence above the bench table: what the columns mean and which CUB call ran.
std::string bench_note(const DeviceReport& device, const db::ProblemClass& problem);

// An axis heat map as a grid (rows: R buckets; columns: outputs buckets, both over
// axis_grid_range): the winner's GB/s with one decimal, "none" for a class finished
// without a winner, "-" for a class not tuned.
Table axis_heat_table(const AxisReport& axis);
// The text of one heat map cell, as axis_heat_table writes it.
std::string axis_heat_cell_text(const AxisReport& axis, int reduced_bucket, int outputs_bucket);

// The axis winners of one heat map, one row per class (by R bucket, then outputs bucket):
// its config, the shape it was measured at (R, outputs and, for columns, inner), time,
// GB/s and % of peak; a class finished without a winner says so.
Table axis_winners_table(const DeviceReport& device, const AxisReport& axis);

// The sentence above a heat map: what rows, columns and cells mean.
std::string axis_heat_note(const AxisReport& axis);

// Whether any bench row belongs to the problem class.
bool has_bench_rows(const DeviceReport& device, const db::ProblemClass& problem);

}  // namespace reduce_tune::report
