// Shared helpers of the report tests: the fixture database, a temporary folder, a small
// RFC 4180 parser and running the command.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

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
