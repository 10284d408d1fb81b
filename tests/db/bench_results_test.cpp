// Bench results (`reduce-tune bench` rows): storing, reading, the latest-run selection and
// the checks that keep the table's values meaningful.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "database_access.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"
#include "sqlite_handle.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;

std::string key_of(const BenchResult& r) { return to_string(r.problem) + " " + r.implementation; }

TEST(BenchResults, StoreAndReadRoundTripEveryField) {
  auto database = Database::open_in_memory();
  const ProblemClass mean_i32{Op::mean, DType::i32, DType::f64, Layout{}};
  auto rows = sample_bench_run(sum_f32(), 1u << 24, "run-1", fixed_time(10));
  rows.push_back(sample_bench_row(mean_i32, 1000, kBenchCub, "run-1", fixed_time(11), 0.004));
  rows.back().spread = std::nan("");  // not measured: stored as NULL, read back as NaN
  const auto ids = database.store_bench_results(sample_device(), rows);
  ASSERT_EQ(ids.size(), rows.size());

  const auto device_id = database.find_device(sample_device().uuid);
  ASSERT_TRUE(device_id);  // upserted by the store
  const auto stored = database.bench_results(*device_id);
  ASSERT_EQ(stored.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& in = rows[i];
    const auto& out = stored[i];
    EXPECT_EQ(out.id, ids[i]);
    EXPECT_EQ(out.device_id, *device_id);
    EXPECT_EQ(out.problem, in.problem);
    EXPECT_EQ(out.implementation, in.implementation);
    EXPECT_EQ(out.median_ms, in.median_ms);
    EXPECT_EQ(out.repetitions, in.repetitions);
    EXPECT_EQ(out.gbps, in.gbps);
    EXPECT_EQ(out.peak_fraction, in.peak_fraction);
    EXPECT_EQ(out.peak_gbps, in.peak_gbps);
    EXPECT_EQ(out.run_id, "run-1");
    EXPECT_EQ(out.tool_version, "0.2.0");
    EXPECT_EQ(out.created_at, in.created_at);
    if (std::isnan(in.spread)) EXPECT_TRUE(std::isnan(out.spread));
    else EXPECT_EQ(out.spread, in.spread);
  }
  // Our kernels' configs are stored as the canonical text; CUB's name as given.
  EXPECT_EQ(stored[0].config, to_string(*parse_config("multi_element:block=512").config));
  EXPECT_EQ(stored[2].config, "cub::DeviceReduce::Sum");
  EXPECT_EQ(database.counts().bench_results, 5);
  EXPECT_EQ(database.counts().measurements, 0);
}

TEST(BenchResults, AreOrderedOldestFirstAndPerDevice) {
  auto database = Database::open_in_memory();
  database.store_bench_results(sample_device(), sample_bench_run(sum_f32(), 4096, "late", fixed_time(50)));
  database.store_bench_results(sample_device(), sample_bench_run(sum_f32(), 4096, "early", fixed_time(5)));
  database.store_bench_results(sample_device("GPU-other"), sample_bench_run(sum_f32(), 4096, "x", fixed_time(7)));
  const auto rows = database.bench_results(*database.find_device(sample_device().uuid));
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows.front().run_id, "early");
  EXPECT_EQ(rows.back().run_id, "late");
  EXPECT_EQ(database.bench_results(*database.find_device("GPU-other")).size(), 4u);
  EXPECT_TRUE(database.bench_results(4242).empty());
}

TEST(BenchResults, IdenticalRowIsStoredOnce) {
  auto database = Database::open_in_memory();
  const auto run = sample_bench_run(sum_f32(), 4096, "run-1", fixed_time());
  const auto first = database.store_bench_results(sample_device(), run);
  const auto again = database.store_bench_results(sample_device(), run);
  EXPECT_EQ(again, first);
  EXPECT_EQ(database.counts().bench_results, 4);
  // Another run, or the same run at another time, is a row of its own.
  database.store_bench_results(sample_device(), sample_bench_run(sum_f32(), 4096, "run-2", fixed_time()));
  database.store_bench_results(sample_device(), sample_bench_run(sum_f32(), 4096, "run-1", fixed_time(1)));
  EXPECT_EQ(database.counts().bench_results, 12);
}

TEST(BenchResults, LatestKeepsTheNewestRunPerProblemAndImplementation) {
  auto database = Database::open_in_memory();
  const std::uint64_t small = 1u << 12, large = 1u << 24;
  auto run1 = sample_bench_run(sum_f32(), small, "run-1", fixed_time(100), 1.0);
  for (auto& r : sample_bench_run(sum_f32(), large, "run-1", fixed_time(100), 8.0)) run1.push_back(r);
  database.store_bench_results(sample_device(), run1);
  // run-2 measures only the small size, and CUB only on the side: the large size keeps
  // run-1's rows.
  database.store_bench_results(sample_device(), sample_bench_run(sum_f32(), small, "run-2", fixed_time(200), 0.5));
  database.store_bench_results(sample_device(),
                               {sample_bench_row(sum_f32(), large, kBenchCub, "cub-only", fixed_time(300), 7.0)});
  // Older than run-1: never the latest.
  database.store_bench_results(sample_device(), sample_bench_run(sum_f32(), small, "run-0", fixed_time(1), 9.0));

  const RowId device_id = *database.find_device(sample_device().uuid);
  EXPECT_EQ(database.bench_results(device_id).size(), 17u);
  const auto latest = database.latest_bench_results(device_id);
  ASSERT_EQ(latest.size(), 8u);
  std::map<std::string, BenchResult> by_key;
  for (const auto& r : latest) EXPECT_TRUE(by_key.emplace(key_of(r), r).second) << "twice: " << key_of(r);
  const auto at = [&](std::uint64_t n, std::string_view implementation) {
    return by_key.at(to_string(sum_f32().with_size(n)) + " " + std::string(implementation));
  };
  for (const auto implementation : kBenchImplementations) {
    EXPECT_EQ(at(small, implementation).run_id, "run-2") << implementation;
    EXPECT_EQ(at(large, implementation).run_id, implementation == kBenchCub ? "cub-only" : "run-1") << implementation;
  }
  EXPECT_EQ(at(small, kBenchTuned).median_ms, 0.5);
  EXPECT_EQ(at(large, kBenchCub).median_ms, 7.0);
  // Oldest first, like bench_results.
  for (std::size_t i = 1; i < latest.size(); ++i) EXPECT_LE(latest[i - 1].created_at, latest[i].created_at);
}

TEST(BenchResults, LatestBreaksATimestampTieByTheLaterStoredRow) {
  auto database = Database::open_in_memory();
  database.store_bench_results(sample_device(), {sample_bench_row(sum_f32(), 64, kBenchCub, "a", fixed_time(), 2.0)});
  database.store_bench_results(sample_device(), {sample_bench_row(sum_f32(), 64, kBenchCub, "b", fixed_time(), 1.0)});
  const auto latest = database.latest_bench_results(*database.find_device(sample_device().uuid));
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].run_id, "b");
}

TEST(BenchResults, RejectsUnknownImplementationWithoutWritingAnything) {
  auto database = Database::open_in_memory();
  auto run = sample_bench_run(sum_f32(), 4096, "run-1", fixed_time());
  run.back().implementation = "thrust";
  try {
    database.store_bench_results(sample_device(), run);
    FAIL() << "an unknown implementation was stored";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown implementation 'thrust'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(database.counts(), DbCounts{});  // not even the device
  // The table refuses it too, whoever writes.
  EXPECT_THROW(DatabaseAccess::connection(database).exec(
                   "INSERT INTO devices (id, uuid, name, cc_major, cc_minor, sm_count, l2_bytes, memory_bus_bits, "
                   "memory_clock_khz, driver_version, runtime_version) VALUES (1, 'u', 'n', 9, 0, 1, 1, 1, 1, 1, 1); "
                   "INSERT INTO bench_results (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, "
                   "n, implementation, config, repetitions, run_id, tool_version, created_at_us) VALUES "
                   "(1, 'sum', 'f32', 'f32', 'flat', 1, 1, 8, 'Tuned', 'x', 1, 'r', 'v', 0)"),
               DbError);
}

TEST(BenchResults, RejectsEmptyRunIdEmptyConfigAndUnparsableConfig) {
  auto database = Database::open_in_memory();
  auto no_run = sample_bench_row(sum_f32(), 64, kBenchTuned, "", fixed_time(), 1.0);
  auto no_config = sample_bench_row(sum_f32(), 64, kBenchCub, "r", fixed_time(), 1.0);
  no_config.config.clear();
  auto bad_config = sample_bench_row(sum_f32(), 64, kBenchDefault, "r", fixed_time(), 1.0);
  bad_config.config = "cub::DeviceReduce::Sum";  // not one of our configs
  for (const auto& row : {no_run, no_config, bad_config})
    EXPECT_THROW(database.store_bench_results(sample_device(), {row}), InvalidArgument) << row.config;
  EXPECT_EQ(database.counts().bench_results, 0);
  EXPECT_TRUE(is_bench_implementation("classic_best"));
  EXPECT_FALSE(is_bench_implementation(""));
}

TEST(BenchResults, ReadOnlyDatabaseRefusesToStore) {
  TempDir dir;
  const auto path = dir / "tuning.db";
  Database::open(path).store_bench_results(sample_device(), sample_bench_run(sum_f32(), 64, "r", fixed_time()));
  auto database = Database::open_read_only(path);
  ASSERT_TRUE(database);
  EXPECT_EQ(database->latest_bench_results(*database->find_device(sample_device().uuid)).size(), 4u);
  EXPECT_THROW(database->store_bench_results(sample_device(), sample_bench_run(sum_f32(), 64, "s", fixed_time())),
               DbError);
}

}  // namespace
}  // namespace reduce_tune::db
