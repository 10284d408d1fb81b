// Export, import and merge: lossless round trips (SQLite and JSON) and the merge rule.
#include "reduce_tune/db/transfer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "reduce_tune/error.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;

// Every row as text, with ids replaced by what they point at (ids are per file).
std::vector<std::string> canonical_rows(const DatabaseSnapshot& s) {
  std::map<RowId, std::string> uuid;
  for (const auto& d : s.devices) uuid[d.id] = d.key.uuid;
  auto num = [](double v) {
    std::ostringstream os;
    os.precision(17);
    if (std::isnan(v)) os << "nan";
    else os << v;
    return os.str();
  };
  std::map<RowId, std::string> identity;
  for (const auto& m : s.measurements)
    identity[m.id] = uuid[m.device_id] + " " + to_string(m.problem) + " " + to_string(m.config) + " " +
                     std::to_string(m.created_at.time_since_epoch().count()) + " " + m.tool_version;
  std::vector<std::string> rows;
  for (const auto& d : s.devices) {
    std::ostringstream os;
    os << "device " << d.key;
    rows.push_back(os.str() + " " + d.key.uuid + " " + std::to_string(d.key.driver_version) + " " +
                   std::to_string(d.key.runtime_version) + " " + std::to_string(d.key.memory_clock_khz) + " " +
                   std::to_string(d.key.l2_bytes) + " " + std::to_string(d.key.memory_bus_bits));
  }
  for (const auto& m : s.measurements) {
    std::ostringstream os;
    os.precision(17);
    os << "measurement " << identity[m.id] << " " << to_string(m.status) << " " << num(m.median_ms) << " "
       << num(m.spread) << " " << m.repetitions << " " << num(m.gbps) << " [" << m.detail << "]";
    rows.push_back(os.str());
  }
  for (const auto& w : s.winners) {
    std::ostringstream os;
    os.precision(17);
    os << "winner " << uuid[w.device_id] << " " << to_string(w.problem) << " " << w.bucket << " "
       << to_string(w.determinism) << " " << to_string(w.config) << " " << w.median_ms << " "
       << (w.measurement_id ? identity[*w.measurement_id] : std::string("none")) << " " << to_string(w.source)
       << " " << w.tool_version << " " << w.created_at.time_since_epoch().count();
    rows.push_back(os.str());
  }
  for (const auto& b : s.tuned_buckets)
    rows.push_back("bucket " + uuid[b.device_id] + " " + to_string(b.problem) + " " + std::to_string(b.bucket) + " " +
                   b.tool_version + " " + std::to_string(b.created_at.time_since_epoch().count()));
  for (const auto& b : s.binaries) {
    std::string bytes;
    for (auto byte : b.cubin) bytes += std::to_string(std::to_integer<int>(byte)) + ",";
    rows.push_back("binary " + b.key + " " + std::to_string(b.arch) + " " + b.nvrtc_version + " " + bytes + " " +
                   std::to_string(b.created_at.time_since_epoch().count()));
  }
  for (const auto& r : s.bench_results) {
    std::ostringstream os;
    os.precision(17);
    os << "bench " << uuid[r.device_id] << " " << to_string(r.problem) << " " << r.implementation << " ["
       << r.config << "] " << num(r.median_ms) << " " << num(r.spread) << " " << r.repetitions << " " << num(r.gbps)
       << " " << num(r.peak_fraction) << " " << num(r.peak_gbps) << " " << r.run_id << " " << r.tool_version << " "
       << r.created_at.time_since_epoch().count();
    rows.push_back(os.str());
  }
  std::map<RowId, std::string> axis_identity;
  for (const auto& m : s.axis_measurements)
    axis_identity[m.id] = uuid[m.device_id] + " " + to_string(m.problem()) + " " + to_string(m.layout) + " " +
                          std::to_string(m.reduced) + "x" + std::to_string(m.outputs) + "/" +
                          std::to_string(m.inner) + " [" + m.config + "] " +
                          std::to_string(m.created_at.time_since_epoch().count()) + " " + m.tool_version;
  for (const auto& m : s.axis_measurements) {
    std::ostringstream os;
    os.precision(17);
    os << "axis measurement " << axis_identity[m.id] << " " << to_string(m.status) << " " << num(m.median_ms) << " "
       << num(m.spread) << " " << m.repetitions << " " << num(m.gbps) << " [" << m.detail << "]";
    rows.push_back(os.str());
  }
  for (const auto& w : s.axis_winners) {
    std::ostringstream os;
    os.precision(17);
    os << "axis winner " << uuid[w.device_id] << " " << to_string(w.problem) << " [" << w.config << "] "
       << num(w.median_ms) << " " << num(w.gbps) << " "
       << (w.measurement_id ? axis_identity[*w.measurement_id] : std::string("none")) << " " << to_string(w.source)
       << " " << w.tool_version << " " << w.created_at.time_since_epoch().count();
    rows.push_back(os.str());
  }
  for (const auto& b : s.axis_tuned_buckets)
    rows.push_back("axis bucket " + uuid[b.device_id] + " " + to_string(b.problem) + " " + b.tool_version + " " +
                   std::to_string(b.created_at.time_since_epoch().count()));
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Two devices of different archs, failed candidates, both determinism classes, binaries.
void fill(Database& database) {
  const ProblemClass mean_i32{Op::mean, DType::i32, DType::f64, Layout{}};
  for (int bucket : {10, 20, 30}) {
    auto b = sample_bucket(sample_device("GPU-h200"), sum_f32(), bucket, 4, fixed_time(bucket));
    b.measurements[0].status = MeasurementStatus::compile_failed;
    b.measurements[0].median_ms = std::nan("");
    b.measurements[0].gbps = std::nan("");
    b.measurements[0].detail = "error: \"quoted\"\nsecond line";
    b.measurements[1].config.passes = Passes::single_pass_atomic;
    b.winners.push_back({Determinism::nondeterministic, 1});
    database.store_bucket(b);
  }
  database.store_bucket(sample_bucket(sample_device("GPU-a100", 8, 0), mean_i32, 16, 3));
  database.put_binary({"k90", 90, "12.4", {std::byte{0}, std::byte{255}, std::byte{7}}, fixed_time(1)});
  database.put_binary({"k80", 80, "12.4", {std::byte{1}}, fixed_time(2)});
  database.put_binary({"k90-empty", 90, "12.8", {}, fixed_time(3)});
  // Two bench runs on the H200 (one row not measured) and one on the A100.
  auto run = sample_bench_run(sum_f32(), 1u << 20, "run-1", fixed_time(5));
  run[1].median_ms = run[1].gbps = run[1].peak_fraction = std::nan("");
  database.store_bench_results(sample_device("GPU-h200"), run);
  database.store_bench_results(sample_device("GPU-h200"), sample_bench_run(sum_f32(), 1u << 20, "run-2", fixed_time(6)));
  database.store_bench_results(sample_device("GPU-a100", 8, 0),
                               {sample_bench_row(mean_i32, 1u << 16, kBenchCub, "a100 run", fixed_time(7), 0.01)});
  // Axis rows: on the H200 a rows class (with a failed candidate) and a columns class
  // whose winner has no bandwidth figure; on the A100 a class where every candidate failed.
  auto rows = sample_axis_bucket(sample_device("GPU-h200"), axis_class(AxisLayout::rows, 10, 14), 3, fixed_time(8));
  rows.measurements[0].status = MeasurementStatus::wrong_result;
  rows.measurements[0].median_ms = rows.measurements[0].gbps = std::nan("");
  rows.measurements[0].detail = "mismatch at output 7: \"nan\"\nvs 3";
  database.store_axis_bucket(rows);
  auto columns = sample_axis_bucket(sample_device("GPU-h200"),
                                    axis_class(AxisLayout::columns, 8, 12, Op::max, DType::f64, DType::f64), 2,
                                    fixed_time(9));
  columns.measurements[1].gbps = std::nan("");
  database.store_axis_bucket(columns);
  auto failed = sample_axis_bucket(sample_device("GPU-a100", 8, 0),
                                   axis_class(AxisLayout::rows, 4, 20, Op::sum, DType::i32, DType::i64), 1, fixed_time(10));
  failed.measurements[0].status = MeasurementStatus::compile_failed;
  failed.measurements[0].median_ms = std::nan("");
  failed.winner.reset();
  database.store_axis_bucket(failed);
}

void expect_round_trip(const std::string& name) {
  TempDir dir;
  auto source = Database::open(dir / "source.db");
  fill(source);
  const auto file = dir / name;
  export_database(source, file, export_format_for(file));
  EXPECT_FALSE(std::filesystem::exists(dir / (name + "-wal")));
  auto target = Database::open(dir / "target.db");
  const auto stats = import_snapshot(target, load_snapshot(file));
  EXPECT_EQ(stats.measurements_added, source.counts().measurements);
  EXPECT_EQ(stats.measurements_duplicate, 0);
  const auto rows = canonical_rows(read_snapshot(source));
  // devices + measurements + winners + buckets + binaries + bench rows + axis measurements,
  // winners and buckets
  EXPECT_EQ(rows.size(), 2u + 15u + 7u + 4u + 3u + 9u + 6u + 2u + 3u);
  EXPECT_EQ(stats.bench_results_added, 9);
  EXPECT_EQ(stats.axis_measurements_added, 6);
  EXPECT_EQ(stats.axis_measurements_duplicate, 0);
  EXPECT_EQ(stats.axis_winners_added, 2);
  EXPECT_EQ(stats.axis_tuned_buckets_added, 3);
  EXPECT_EQ(canonical_rows(read_snapshot(target)), rows);
  EXPECT_EQ(target.counts(), source.counts());
  EXPECT_TRUE(target.integrity_problems().empty());
}

TEST(Transfer, SqliteExportImportRoundTripsEveryRow) { expect_round_trip("export.db"); }

TEST(Transfer, JsonExportImportRoundTripsEveryRow) { expect_round_trip("export.json"); }

TEST(Transfer, SqliteExportIsOneFileThatOpensReadOnly) {
  TempDir dir;
  auto source = Database::open_in_memory();
  fill(source);
  const auto file = dir / "ship.db";
  export_database(source, file, ExportFormat::sqlite);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"ship.db"});
  auto shipped = Database::open_read_only(file);
  ASSERT_TRUE(shipped);
  EXPECT_EQ(shipped->counts(), source.counts());
}

TEST(Transfer, JsonExportNamesFormatAndVersion) {
  auto source = Database::open_in_memory();
  fill(source);
  std::ostringstream out;
  write_json(read_snapshot(source), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("\"format\": \"reduce-tune-db\""), std::string::npos);
  EXPECT_NE(text.find("\"version\": 1"), std::string::npos);
  EXPECT_NE(text.find("\"median_ms\": null"), std::string::npos);  // NaN
}

TEST(Transfer, ExportOfOneDeviceHoldsOnlyItsRows) {
  TempDir dir;
  auto source = Database::open_in_memory();
  fill(source);
  const RowId a100 = *source.find_device("GPU-a100");
  const auto file = dir / "a100.json";
  export_database(source, file, ExportFormat::json, a100);
  const auto snapshot = load_snapshot(file);
  ASSERT_EQ(snapshot.devices.size(), 1u);
  EXPECT_EQ(snapshot.devices[0].key.uuid, "GPU-a100");
  EXPECT_EQ(snapshot.measurements.size(), 3u);
  EXPECT_EQ(snapshot.winners.size(), 1u);
  EXPECT_EQ(snapshot.tuned_buckets.size(), 1u);
  ASSERT_EQ(snapshot.binaries.size(), 1u);  // only sm_80's
  EXPECT_EQ(snapshot.binaries[0].key, "k80");
  ASSERT_EQ(snapshot.bench_results.size(), 1u);
  EXPECT_EQ(snapshot.bench_results[0].run_id, "a100 run");
  ASSERT_EQ(snapshot.axis_measurements.size(), 1u);
  EXPECT_EQ(snapshot.axis_measurements[0].out_dtype, DType::i64);
  EXPECT_TRUE(snapshot.axis_winners.empty());
  ASSERT_EQ(snapshot.axis_tuned_buckets.size(), 1u);
  EXPECT_EQ(snapshot.axis_tuned_buckets[0].problem, axis_class(AxisLayout::rows, 4, 20, Op::sum, DType::i32, DType::i64));
  const auto h200 = read_snapshot(source, *source.find_device("GPU-h200"));
  EXPECT_EQ(h200.axis_measurements.size(), 5u);
  EXPECT_EQ(h200.axis_winners.size(), 2u);
  EXPECT_EQ(h200.axis_tuned_buckets.size(), 2u);
  EXPECT_THROW(read_snapshot(source, 999), InvalidArgument);
}

TEST(Transfer, ExportRefusesToOverwrite) {
  TempDir dir;
  auto source = Database::open_in_memory();
  const auto file = dir / "exists.db";
  write_file(file, "keep me");
  EXPECT_THROW(export_database(source, file, ExportFormat::sqlite), InvalidArgument);
  EXPECT_EQ(file_bytes(file), "keep me");
}

TEST(Transfer, ConcurrentExportsToOneNameLeaveExactlyOneCompleteFile) {
  // The existence check and the final rename used to be two steps: exports racing for
  // one name could all pass the check and overwrite each other. Now exactly one wins.
  TempDir dir;
  auto source = Database::open_in_memory();
  fill(source);
  const DatabaseSnapshot snapshot = read_snapshot(source);
  for (auto format : {ExportFormat::sqlite, ExportFormat::json}) {
    const auto file = dir / (format == ExportFormat::sqlite ? "race.db" : "race.json");
    std::atomic<int> written{0}, refused{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        try {
          write_export(snapshot, file, format);
          ++written;
        } catch (const InvalidArgument&) {
          ++refused;
        } catch (...) {
          ++other;
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(written.load(), 1);
    EXPECT_EQ(refused.load(), 7);
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(canonical_rows(load_snapshot(file)), canonical_rows(snapshot));
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"race.db", "race.json"}));  // no partial file left
}

TEST(Transfer, LoadRefusesFilesThatAreNotExports) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"text.db", "hello, world"},
      {"empty.db", ""},
      {"broken.json", "{\"format\": \"reduce-tune-db\", \"version\": 1, \"devices\": ["},
      {"other.json", "{\"format\": \"something-else\"}"},
      {"newer.json", "{\"format\": \"reduce-tune-db\", \"version\": 99, \"devices\": []}"},
      {"badrow.json",
       "{\"format\": \"reduce-tune-db\", \"version\": 1, \"devices\": [{\"id\": 1}], \"measurements\": [], "
       "\"winners\": []}"},
  };
  for (const auto& [name, bytes] : cases) {
    const auto file = dir / name;
    write_file(file, bytes);
    try {
      load_snapshot(file);
      ADD_FAILURE() << name << " was accepted";
    } catch (const DbError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(file.string() + ": ", 0), 0u) << message;
    }
    EXPECT_EQ(file_bytes(file), bytes);
  }
  EXPECT_THROW(load_snapshot(dir / "missing.db"), DbError);
}

// A database with one winner for (GPU-h200, sum<f32>, bucket) at `median_ms`.
BucketResult winner_bucket(int bucket, std::uint32_t block, double median_ms, std::int64_t at) {
  BucketResult b = sample_bucket(sample_device("GPU-h200"), sum_f32(), bucket, 0, fixed_time(at));
  b.measurements.push_back(
      sample_measurement(sum_f32(), std::uint64_t{1} << bucket, config_with_block(block), median_ms, fixed_time(at)));
  b.winners = {{Determinism::deterministic, 0}};
  return b;
}

std::map<int, Winner> winners_by_bucket(const Database& database) {
  std::map<int, Winner> out;
  for (const auto& w : database.winners_for_device(*database.find_device("GPU-h200"))) out[w.bucket] = w;
  return out;
}

TEST(Transfer, MergeKeepsFasterVerifiedWinner) {
  auto mine = Database::open_in_memory();
  mine.store_bucket(winner_bucket(10, 128, 1.0, 0));
  mine.store_bucket(winner_bucket(14, 128, 1.0, 0));
  auto theirs = Database::open_in_memory();
  theirs.store_bucket(winner_bucket(10, 512, 0.5, 100));  // faster: replaces
  theirs.store_bucket(winner_bucket(12, 512, 0.7, 100));  // new: added
  theirs.store_bucket(winner_bucket(14, 512, 2.0, 100));  // slower: ignored

  const auto stats = merge_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.winners_replaced, 1);
  EXPECT_EQ(stats.winners_added, 1);
  EXPECT_EQ(stats.winners_kept, 1);
  EXPECT_EQ(stats.measurements_added, 3);
  EXPECT_EQ(stats.devices_added, 0);

  auto winners = winners_by_bucket(mine);
  ASSERT_EQ(winners.size(), 3u);
  EXPECT_EQ(winners[10].config, config_with_block(512));
  EXPECT_EQ(winners[10].median_ms, 0.5);
  EXPECT_EQ(winners[10].source, WinnerSource::merged);
  EXPECT_EQ(winners[10].created_at, fixed_time(100));  // provenance of the tuning run kept
  EXPECT_EQ(winners[12].source, WinnerSource::merged);
  EXPECT_EQ(winners[14].config, config_with_block(128));
  EXPECT_EQ(winners[14].source, WinnerSource::tuned);
  // Each winner points at its own measurement in this file.
  for (const auto& [bucket, w] : winners) {
    ASSERT_TRUE(w.measurement_id);
    const auto ms = mine.measurements(w.device_id, sum_f32(), bucket);
    const auto it = std::find_if(ms.begin(), ms.end(), [&](const Measurement& m) { return m.id == *w.measurement_id; });
    ASSERT_NE(it, ms.end());
    EXPECT_EQ(it->config, w.config);
    EXPECT_EQ(it->median_ms, w.median_ms);
  }
  // Every measurement of both files is there.
  EXPECT_EQ(mine.counts().measurements, 5);
  EXPECT_EQ(mine.tuned_buckets(*mine.find_device("GPU-h200"), sum_f32()), (std::vector<int>{10, 12, 14}));
}

TEST(Transfer, MergeTieKeepsExisting) {
  auto mine = Database::open_in_memory();
  mine.store_bucket(winner_bucket(10, 128, 1.0, 0));
  auto theirs = Database::open_in_memory();
  theirs.store_bucket(winner_bucket(10, 512, 1.0, 100));
  const auto stats = merge_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.winners_kept, 1);
  EXPECT_EQ(winners_by_bucket(mine)[10].config, config_with_block(128));
}

TEST(Transfer, MergingTwiceAddsNothing) {
  auto mine = Database::open_in_memory();
  mine.store_bucket(winner_bucket(10, 128, 1.0, 0));
  auto theirs = Database::open_in_memory();
  fill(theirs);
  theirs.store_bucket(winner_bucket(10, 512, 0.5, 100));
  const auto snapshot = read_snapshot(theirs);
  merge_snapshot(mine, snapshot);
  const auto after_first = canonical_rows(read_snapshot(mine));
  const auto counts = mine.counts();
  const auto second = merge_snapshot(mine, snapshot);
  EXPECT_EQ(second.measurements_added, 0);
  EXPECT_EQ(second.measurements_duplicate, static_cast<std::int64_t>(snapshot.measurements.size()));
  EXPECT_EQ(second.winners_added + second.winners_replaced, 0);
  EXPECT_EQ(second.devices_added + second.tuned_buckets_added + second.binaries_added, 0);
  EXPECT_EQ(second.bench_results_added, 0);
  EXPECT_EQ(second.bench_results_duplicate, 9);
  EXPECT_EQ(second.axis_measurements_added, 0);
  EXPECT_EQ(second.axis_measurements_duplicate, 6);
  EXPECT_EQ(second.axis_winners_added + second.axis_winners_replaced + second.axis_tuned_buckets_added, 0);
  EXPECT_EQ(second.axis_winners_kept, 2);
  EXPECT_EQ(mine.counts(), counts);
  EXPECT_EQ(canonical_rows(read_snapshot(mine)), after_first);
}

TEST(Transfer, MergeSkipsWinnersWithoutOkMeasurement) {
  auto mine = Database::open_in_memory();
  mine.store_bucket(winner_bucket(10, 128, 1.0, 0));
  auto theirs_db = Database::open_in_memory();
  theirs_db.store_bucket(winner_bucket(10, 512, 0.1, 100));
  theirs_db.store_bucket(winner_bucket(12, 512, 0.1, 100));
  auto snapshot = read_snapshot(theirs_db);
  for (auto& w : snapshot.winners) w.measurement_id.reset();  // e.g. a hand-edited export
  const auto stats = merge_snapshot(mine, snapshot);
  EXPECT_EQ(stats.winners_unverified, 2);
  EXPECT_EQ(stats.winners_added + stats.winners_replaced, 0);
  EXPECT_EQ(winners_by_bucket(mine).size(), 1u);
  EXPECT_EQ(winners_by_bucket(mine)[10].config, config_with_block(128));
}

TEST(Transfer, MergeReplacesUnverifiedExistingWinner) {
  auto theirs_db = Database::open_in_memory();
  theirs_db.store_bucket(winner_bucket(10, 128, 0.1, 0));
  auto unverified = read_snapshot(theirs_db);
  unverified.measurements.clear();
  unverified.winners[0].measurement_id.reset();
  unverified.winners[0].source = WinnerSource::imported;
  auto mine = Database::open_in_memory();
  import_snapshot(mine, unverified);
  EXPECT_EQ(winners_by_bucket(mine)[10].source, WinnerSource::imported);

  auto verified_db = Database::open_in_memory();
  verified_db.store_bucket(winner_bucket(10, 512, 0.9, 100));  // slower, but verified
  const auto stats = merge_snapshot(mine, read_snapshot(verified_db));
  EXPECT_EQ(stats.winners_replaced, 1);
  EXPECT_EQ(winners_by_bucket(mine)[10].config, config_with_block(512));
}

TEST(Transfer, ImportReplacesExistingRowsAtTheSameKey) {
  auto mine = Database::open_in_memory();
  mine.store_bucket(winner_bucket(10, 128, 0.5, 0));
  mine.put_binary({"k", 90, "12.4", {std::byte{1}}, fixed_time()});
  auto theirs = Database::open_in_memory();
  theirs.store_bucket(winner_bucket(10, 512, 0.9, 100));  // slower, but import takes it
  theirs.put_binary({"k", 90, "12.8", {std::byte{2}}, fixed_time()});
  const auto stats = import_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.winners_replaced, 1);
  EXPECT_EQ(stats.binaries_replaced, 1);
  EXPECT_EQ(winners_by_bucket(mine)[10].config, config_with_block(512));
  EXPECT_EQ(winners_by_bucket(mine)[10].source, WinnerSource::tuned);
  EXPECT_EQ(mine.find_binary("k")->nvrtc_version, "12.8");
  EXPECT_EQ(mine.counts().measurements, 2);
}

TEST(Transfer, MergeKeepsEveryBenchRunOfBothFiles) {
  auto mine = Database::open_in_memory();
  mine.store_bench_results(sample_device("GPU-h200"), sample_bench_run(sum_f32(), 4096, "mine", fixed_time(10)));
  auto theirs = Database::open_in_memory();
  // Their newer run, and a copy of mine (same identity): kept once.
  theirs.store_bench_results(sample_device("GPU-h200"), sample_bench_run(sum_f32(), 4096, "theirs", fixed_time(20), 0.5));
  theirs.store_bench_results(sample_device("GPU-h200"), sample_bench_run(sum_f32(), 4096, "mine", fixed_time(10)));
  const auto stats = merge_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.bench_results_added, 4);
  EXPECT_EQ(stats.bench_results_duplicate, 4);
  const RowId device = *mine.find_device("GPU-h200");
  EXPECT_EQ(mine.bench_results(device).size(), 8u);
  const auto latest = mine.latest_bench_results(device);
  ASSERT_EQ(latest.size(), 4u);
  for (const auto& r : latest) EXPECT_EQ(r.run_id, "theirs");
  // A bench row of a device the file does not hold is refused, and nothing is written.
  auto broken = read_snapshot(theirs);
  broken.bench_results.back().device_id = 4242;
  auto empty = Database::open_in_memory();
  EXPECT_THROW(merge_snapshot(empty, broken), DbError);
  EXPECT_EQ(empty.counts(), DbCounts{});
}

TEST(Transfer, ReadsJsonExportsWithoutBenchRows) {
  // What a reduce-tune of schema version 2 wrote: no "bench_results" section.
  std::istringstream old_export(
      R"({"format": "reduce-tune-db", "version": 1, "schema_version": 2,
          "devices": [{"id": 3, "uuid": "GPU-old", "name": "NVIDIA H100", "cc_major": 9, "cc_minor": 0,
                       "sm_count": 132, "l2_bytes": 52428800, "memory_bus_bits": 5120,
                       "memory_clock_khz": 2619000, "driver_version": 12040, "runtime_version": 12040}],
          "measurements": [], "winners": [], "tuned_buckets": [], "binaries": []})");
  const auto snapshot = read_json(old_export, "old.json");
  EXPECT_TRUE(snapshot.bench_results.empty());
  auto database = Database::open_in_memory();
  import_snapshot(database, snapshot);
  EXPECT_EQ(database.counts().devices, 1);
}

TEST(Transfer, JsonBenchRowWithUnknownImplementationIsRefused) {
  auto source = Database::open_in_memory();
  source.store_bench_results(sample_device(), sample_bench_run(sum_f32(), 64, "r", fixed_time()));
  std::ostringstream out;
  write_json(read_snapshot(source), out);
  std::string text = out.str();
  EXPECT_NE(text.find("\"bench_results\": ["), std::string::npos);
  const auto at = text.find("\"implementation\": \"cub\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("\"implementation\": \"cub\"").size(), "\"implementation\": \"thrust\"");
  std::istringstream in(text);
  try {
    read_json(in, "edited.json");
    FAIL() << "an unknown implementation was read";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("bench_results[2]: unknown implementation 'thrust'"), std::string::npos)
        << e.what();
  }
}

TEST(Transfer, ImportRollsBackOnBrokenReference) {
  auto mine = Database::open_in_memory();
  auto theirs = Database::open_in_memory();
  fill(theirs);
  auto snapshot = read_snapshot(theirs);
  snapshot.measurements.back().device_id = 4242;  // refers to no device of the file
  EXPECT_THROW(import_snapshot(mine, snapshot), DbError);
  EXPECT_EQ(mine.counts(), DbCounts{});
}

}  // namespace
}  // namespace reduce_tune::db
