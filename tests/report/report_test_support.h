// Shared helpers of the report tests: the fixture database, a temporary folder, a small
// RFC 4180 parser and running the command.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reduce_tune/db/database.h"
#include "reduce_tune/report/report.h"

namespace reduce_tune::report::testing {

inline constexpr const char* kHostileName = "<script>alert(\"x\")</script> & GPU";
inline constexpr const char* kHostileUuid = "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
inline constexpr const char* kPlainName = "NVIDIA A100-SXM4-80GB";

// What the fixture's bench runs stored for the first device's f32 sum
// (tests/report/make_report_fixture.cpp): the latest run per size.
inline constexpr std::uint64_t kBenchSmallN = (std::uint64_t{3} << 22) / 2;  // bucket 22: run "bench-2"
inline constexpr std::uint64_t kBenchLargeN = (std::uint64_t{3} << 26) / 2;  // bucket 26: run "bench-1"
struct FixtureBenchTimes {
  double tuned, default_config, cub, classic_best;
};
inline constexpr FixtureBenchTimes kBenchSmall{0.0125, 0.0150, 0.0140, 0.0200};
inline constexpr FixtureBenchTimes kBenchLarge{0.0905, 0.0990, 0.0950, 0.1040};
inline constexpr const char* kCubCall = "cub::DeviceReduce::Sum";

// A bench row as the loader makes them; CUB rows name the CUB call.
inline BenchRow bench_row(const ProblemKey& problem, std::string_view implementation, double median_ms, double gbps) {
  BenchRow row;
  row.problem = problem;
  row.implementation = std::string(implementation);
  row.median_ms = median_ms;
  row.gbps = gbps;
  row.config = implementation == kBenchCub ? kCubCall : "multi_element";
  return row;
}

// Axis results (issue 12) stored by store_axis_results below, on a device of their own.
inline constexpr const char* kAxisDeviceName = "NVIDIA H200";
inline constexpr const char* kAxisDeviceUuid = "GPU-axis0000-1111-2222-3333-444444444444";
// A config text from the database that needs escaping in every format.
inline constexpr const char* kHostileAxisConfig = "columns:block=256,<b>|`x`,\"q\"";

// One winner of store_axis_results: its class, the shape it was measured at and its time.
struct AxisFixtureWinner {
  AxisLayout layout;
  Op op;
  DType dtype;
  int reduced_bucket, outputs_bucket;
  std::uint64_t reduced, outputs, inner;
  double median_ms;
  const char* config;
  double gbps() const {
    return static_cast<double>(reduced * outputs * size_of(dtype)) / (median_ms * 1e6);
  }
  db::AxisProblemClass problem() const { return {op, dtype, dtype, layout, reduced_bucket, outputs_bucket}; }
};
// sum f32 rows: R buckets 10..12 by outputs buckets 14..16, of which (10, 14), (10, 16) and
// (12, 14) have winners, (12, 16) was tuned without one, and the rest was never tuned;
// sum f32 columns: one winner at (8, 20) with the hostile config; max f64 rows: one at (20, 4).
inline const std::vector<AxisFixtureWinner>& axis_fixture_winners() {
  static const std::vector<AxisFixtureWinner> winners = {
      {AxisLayout::rows, Op::sum, DType::f32, 10, 14, 1024, 16384, 1, 0.0250,
       "rows:block=256,group=4,vec=4,split=none,rows=4"},
      {AxisLayout::rows, Op::sum, DType::f32, 10, 16, 1500, 65536, 1, 0.1000,
       "rows:block=128,group=8,vec=4,split=none,rows=8"},
      {AxisLayout::rows, Op::sum, DType::f32, 12, 14, 4096, 20000, 1, 0.0800,
       "rows:block=512,group=1,vec=4,split=none,rows=1"},
      {AxisLayout::columns, Op::sum, DType::f32, 8, 20, 300, std::uint64_t{1} << 20, 8, 0.4000, kHostileAxisConfig},
      {AxisLayout::rows, Op::max, DType::f64, 20, 4, std::uint64_t{1} << 20, 16, 1, 0.0900,
       "rows:block=1024,group=1,vec=2,split=4,rows=1"},
  };
  return winners;
}
inline constexpr int kAxisFailedReducedBucket = 12, kAxisFailedOutputsBucket = 16;

inline DeviceKey axis_device() {
  DeviceKey d;
  d.name = kAxisDeviceName;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 60 << 20;
  d.memory_bus_bits = 6144;
  d.memory_clock_khz = 3'201'000;
  d.uuid = kAxisDeviceUuid;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  return d;
}

// Stores axis_fixture_winners() (each with a slower losing candidate) and the class tuned
// without a winner, as the tuner does, through Database::store_axis_bucket.
inline void store_axis_results(db::Database& database) {
  const db::Timestamp at{std::chrono::microseconds(1'700'000'000'000'000)};
  auto measurement = [&](const AxisFixtureWinner& w, const std::string& config, double ms,
                         db::MeasurementStatus status) {
    db::AxisMeasurement m;
    m.op = w.op;
    m.dtype = w.dtype;
    m.out_dtype = w.dtype;
    m.layout = w.layout;
    m.reduced = w.reduced;
    m.outputs = w.outputs;
    m.inner = w.inner;
    m.config = config;
    m.status = status;
    m.median_ms = status == db::MeasurementStatus::ok ? ms : std::nan("");
    m.spread = 0.01;
    m.repetitions = 25;
    m.gbps = status == db::MeasurementStatus::ok
                 ? static_cast<double>(w.reduced * w.outputs * size_of(w.dtype)) / (ms * 1e6)
                 : std::nan("");
    m.tool_version = "0.3.0";
    m.created_at = at;
    if (status != db::MeasurementStatus::ok) m.detail = "launch failed";
    return m;
  };
  for (const auto& w : axis_fixture_winners()) {
    db::AxisBucketResult r;
    r.device = axis_device();
    r.problem = w.problem();
    r.measurements.push_back(measurement(w, std::string(to_string(w.layout)) + ":slow", w.median_ms * 2,
                                         db::MeasurementStatus::ok));
    r.measurements.push_back(measurement(w, w.config, w.median_ms, db::MeasurementStatus::ok));
    r.winner = 1;
    r.tool_version = "0.3.0";
    r.created_at = at;
    database.store_axis_bucket(r);
  }
  AxisFixtureWinner failed = axis_fixture_winners().front();
  failed.reduced_bucket = kAxisFailedReducedBucket;
  failed.outputs_bucket = kAxisFailedOutputsBucket;
  failed.reduced = std::uint64_t{1} << kAxisFailedReducedBucket;
  failed.outputs = std::uint64_t{1} << kAxisFailedOutputsBucket;
  db::AxisBucketResult r;
  r.device = axis_device();
  r.problem = failed.problem();
  r.measurements.push_back(measurement(failed, "rows:block=2048", 0, db::MeasurementStatus::launch_failed));
  r.tool_version = "0.3.0";
  r.created_at = at;
  database.store_axis_bucket(r);
}

// A class the tuner filled in between tuned ones, on the axis device: one measurement
// (at the class's corner, `ms` milliseconds), the winner, and no done mark.
inline void store_filled_axis_class(db::Database& database, const db::AxisProblemClass& problem,
                                    const std::string& config, double ms) {
  db::AxisMeasurement m;
  m.op = problem.op;
  m.dtype = problem.dtype;
  m.out_dtype = problem.out_dtype;
  m.layout = problem.layout;
  m.reduced = std::uint64_t{1} << problem.reduced_bucket;
  m.outputs = std::uint64_t{1} << problem.outputs_bucket;
  m.inner = problem.layout == AxisLayout::columns ? m.outputs : 1;
  m.config = config;
  m.status = db::MeasurementStatus::ok;
  m.median_ms = ms;
  m.repetitions = 9;
  m.gbps = static_cast<double>(m.reduced * m.outputs * size_of(problem.dtype)) / (ms * 1e6);
  m.tool_version = "0.3.0";
  db::AxisBucketResult fill;
  fill.device = axis_device();
  fill.problem = problem;
  fill.measurements = {m};
  fill.winner = 0;
  fill.tool_version = "0.3.0";
  fill.mark_tuned = false;
  database.store_axis_bucket(fill);
}

inline std::filesystem::path fixture_path() {
  return std::filesystem::path(REDUCE_TUNE_REPORT_ASSETS) / "fixture.db";
}

inline db::Database open_fixture() {
  auto database = db::Database::open_read_only(fixture_path());
  if (!database) throw std::runtime_error("fixture database missing: " + fixture_path().string());
  return std::move(*database);
}

// A fresh folder under the system temp folder, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "reduce-tune-report-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// RFC 4180: fields separated by commas, records by CRLF (a lone LF accepted); a quoted
// field may hold commas, CR, LF and doubled quotes. Throws on malformed input.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  std::size_t i = 0;
  bool field_started = false;
  auto end_field = [&] {
    record.push_back(field);
    field.clear();
    field_started = false;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' && !field_started && field.empty()) {
      ++i;
      for (;;) {
        if (i >= text.size()) throw std::runtime_error("unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
      field_started = true;
      if (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n')
        throw std::runtime_error("text after a closing quote");
    } else if (c == ',') {
      end_field();
      ++i;
    } else if (c == '\r' || c == '\n') {
      end_field();
      records.push_back(std::move(record));
      record.clear();
      i += (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ? 2 : 1;
    } else {
      if (c == '"') throw std::runtime_error("quote inside an unquoted field");
      field += c;
      field_started = true;
      ++i;
    }
  }
  if (field_started || !record.empty()) {
    end_field();
    records.push_back(std::move(record));
  }
  return records;
}

// CSV records as maps from the header's column names.
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  const auto records = parse_csv(text);
  std::vector<std::map<std::string, std::string>> rows;
  if (records.empty()) return rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != records[0].size()) throw std::runtime_error("record with a different field count");
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < records[0].size(); ++c) row[records[0][c]] = records[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

inline std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

}  // namespace reduce_tune::report::testing
