// The Database API against in-memory and temporary-file databases.
#include "reduce_tune/db/database.h"

#include <gtest/gtest.h>

#include <cmath>

#include "database_access.h"
#include "reduce_tune/error.h"
#include "sqlite_handle.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;

std::string pragma_text(const Database& database, const char* sql) {
  detail::Statement s(DatabaseAccess::connection(database), sql);
  return s.step() ? s.text(0) : std::string();
}

TEST(Database, OpensInMemoryWithCurrentSchema) {
  auto database = Database::open_in_memory();
  EXPECT_EQ(database.file_schema_version(), kSchemaVersion);
  EXPECT_EQ(pragma_text(database, "PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(database.counts(), DbCounts{});
  EXPECT_FALSE(database.read_only());
  EXPECT_TRUE(database.integrity_problems().empty());
}

TEST(Database, CreatesFileAndFolderInWalMode) {
  TempDir dir;
  const auto path = dir / "nested/deeper/tuning.db";
  {
    auto database = Database::open(path);
    EXPECT_EQ(pragma_text(database, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(pragma_text(database, "PRAGMA foreign_keys"), "1");
    database.store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  auto reopened = Database::open(path);
  EXPECT_EQ(reopened.counts().measurements, 3);
}

TEST(Database, UpsertDeviceKeysOnUuidAndRefreshesFields) {
  auto database = Database::open_in_memory();
  auto device = sample_device();
  const RowId id = database.upsert_device(device);
  device.driver_version = 13000;
  EXPECT_EQ(database.upsert_device(device), id);
  const RowId other = database.upsert_device(sample_device("GPU-other"));
  EXPECT_NE(other, id);
  ASSERT_TRUE(database.device(id));
  EXPECT_EQ(database.device(id)->key, device);
  EXPECT_EQ(database.find_device(device.uuid), id);
  EXPECT_EQ(database.find_device("GPU-missing"), std::nullopt);
  const auto devices = database.list_devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0], (DeviceRecord{id, device}));
  EXPECT_EQ(devices[1].key.uuid, "GPU-other");
}

TEST(Database, UpsertDeviceRejectsEmptyUuid) {
  auto database = Database::open_in_memory();
  EXPECT_THROW(database.upsert_device(sample_device("")), InvalidArgument);
}

TEST(Database, StoreBucketWritesMeasurementsWinnersAndDoneMark) {
  auto database = Database::open_in_memory();
  auto bucket = sample_bucket(sample_device(), sum_f32(), 20, 4);
  bucket.measurements[1].status = MeasurementStatus::compile_failed;
  bucket.measurements[1].median_ms = std::nan("");
  bucket.measurements[1].detail = "ptxas: too many registers";
  bucket.winners.push_back({Determinism::nondeterministic, 2});
  const auto stored = database.store_bucket(bucket);
  ASSERT_EQ(stored.measurement_ids.size(), 4u);

  const auto measurements = database.measurements(stored.device_id, sum_f32());
  ASSERT_EQ(measurements.size(), 4u);
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const auto& got = measurements[i];
    const auto& want = bucket.measurements[i];
    EXPECT_EQ(got.id, stored.measurement_ids[i]);
    EXPECT_EQ(got.device_id, stored.device_id);
    EXPECT_EQ(got.problem, want.problem);
    EXPECT_EQ(got.config, want.config);
    EXPECT_EQ(got.status, want.status);
    if (std::isnan(want.median_ms)) EXPECT_TRUE(std::isnan(got.median_ms));
    else EXPECT_EQ(got.median_ms, want.median_ms);
    EXPECT_EQ(got.spread, want.spread);
    EXPECT_EQ(got.repetitions, want.repetitions);
    EXPECT_EQ(got.gbps, want.gbps);
    EXPECT_EQ(got.tool_version, want.tool_version);
    EXPECT_EQ(got.created_at, want.created_at);
    EXPECT_EQ(got.detail, want.detail);
  }

  const auto winners = database.winners_for_device(stored.device_id);
  ASSERT_EQ(winners.size(), 2u);
  EXPECT_EQ(winners[0].determinism, Determinism::deterministic);
  EXPECT_EQ(winners[0].config, bucket.measurements[3].config);
  EXPECT_EQ(winners[0].median_ms, bucket.measurements[3].median_ms);
  EXPECT_EQ(winners[0].measurement_id, stored.measurement_ids[3]);
  EXPECT_EQ(winners[0].bucket, 20);
  EXPECT_EQ(winners[0].problem, sum_f32());
  EXPECT_EQ(winners[0].source, WinnerSource::tuned);
  EXPECT_EQ(winners[0].tool_version, "0.1.0");
  EXPECT_EQ(winners[0].created_at, fixed_time());
  EXPECT_EQ(winners[1].determinism, Determinism::nondeterministic);
  EXPECT_EQ(winners[1].measurement_id, stored.measurement_ids[2]);

  EXPECT_EQ(database.tuned_buckets(stored.device_id, sum_f32()), std::vector<int>{20});
  const auto counts = database.counts();
  EXPECT_EQ(counts.devices, 1);
  EXPECT_EQ(counts.configs, 4);
  EXPECT_EQ(counts.measurements, 4);
  EXPECT_EQ(counts.winners, 2);
  EXPECT_EQ(counts.tuned_buckets, 1);
}

TEST(Database, StoreBucketWithoutWinnersStillMarksItDone) {
  auto database = Database::open_in_memory();
  auto bucket = sample_bucket(sample_device(), sum_f32(), 5, 2);
  for (auto& m : bucket.measurements) m.status = MeasurementStatus::wrong_result;
  bucket.winners.clear();
  const auto stored = database.store_bucket(bucket);
  EXPECT_EQ(database.tuned_buckets(stored.device_id, sum_f32()), std::vector<int>{5});
  EXPECT_TRUE(database.winners_for_device(stored.device_id).empty());
}

TEST(Database, StoreBucketRejectsInconsistentBuckets) {
  auto database = Database::open_in_memory();
  const auto good = sample_bucket(sample_device(), sum_f32(), 10);

  auto wrong_size = good;
  wrong_size.measurements[0].problem.n = 5000;  // bucket 12
  EXPECT_THROW(database.store_bucket(wrong_size), InvalidArgument);

  auto wrong_problem = good;
  wrong_problem.measurements[0].problem.op = Op::max;
  EXPECT_THROW(database.store_bucket(wrong_problem), InvalidArgument);

  auto failed_winner = good;
  failed_winner.measurements[2].status = MeasurementStatus::launch_failed;
  EXPECT_THROW(database.store_bucket(failed_winner), InvalidArgument);

  auto two_winners = good;
  two_winners.winners.push_back({Determinism::deterministic, 0});
  EXPECT_THROW(database.store_bucket(two_winners), InvalidArgument);

  auto bad_index = good;
  bad_index.winners[0].measurement_index = 7;
  EXPECT_THROW(database.store_bucket(bad_index), InvalidArgument);

  EXPECT_EQ(database.counts(), DbCounts{});
}

TEST(Database, StoreBucketIsAllOrNothing) {
  auto database = Database::open_in_memory();
  auto bucket = sample_bucket(sample_device(), sum_f32(), 10);
  // The device row is written first; the problem cannot be stored. The whole bucket,
  // device included, must roll back.
  bucket.problem.layout.outer = ~std::uint64_t{0};
  for (auto& m : bucket.measurements) m.problem.layout.outer = bucket.problem.layout.outer;
  EXPECT_THROW(database.store_bucket(bucket), InvalidArgument);
  EXPECT_EQ(database.counts(), DbCounts{});
  // The connection is usable afterwards (the transaction was rolled back, not left open).
  database.store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
  EXPECT_EQ(database.counts().measurements, 3);
}

TEST(Database, RetuningABucketReplacesWinnersAndKeepsHistory) {
  auto database = Database::open_in_memory();
  const auto first = database.store_bucket(sample_bucket(sample_device(), sum_f32(), 10, 3, fixed_time(0)));
  // Storing the very same bucket again adds nothing.
  const auto again = database.store_bucket(sample_bucket(sample_device(), sum_f32(), 10, 3, fixed_time(0)));
  EXPECT_EQ(again.measurement_ids, first.measurement_ids);
  EXPECT_EQ(database.counts().measurements, 3);

  auto rerun = sample_bucket(sample_device(), sum_f32(), 10, 2, fixed_time(1000));
  rerun.winners = {{Determinism::deterministic, 0}};
  const auto second = database.store_bucket(rerun);
  EXPECT_EQ(database.counts().measurements, 5);
  const auto winners = database.winners_for_device(second.device_id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].measurement_id, second.measurement_ids[0]);
  EXPECT_EQ(winners[0].config, config_with_block(32));
  EXPECT_EQ(winners[0].created_at, fixed_time(1000));
  EXPECT_EQ(database.tuned_buckets(second.device_id, sum_f32()), std::vector<int>{10});
}

TEST(Database, WinnersForSameArchListsOtherDevicesOfThatCapability) {
  auto database = Database::open_in_memory();
  const auto h200 = sample_device("GPU-h200");
  const auto h100 = sample_device("GPU-h100");
  const auto a100 = sample_device("GPU-a100", 8, 0);
  database.store_bucket(sample_bucket(h200, sum_f32(), 10));
  database.store_bucket(sample_bucket(h100, sum_f32(), 12));
  database.store_bucket(sample_bucket(h100, sum_f32(), 14));
  database.store_bucket(sample_bucket(a100, sum_f32(), 16));

  const auto same = database.winners_for_same_arch(h200);
  ASSERT_EQ(same.size(), 2u);
  for (const auto& w : same) EXPECT_EQ(w.device_id, *database.find_device("GPU-h100"));
  EXPECT_EQ(same[0].bucket, 12);
  EXPECT_EQ(same[1].bucket, 14);
  // A device the file has never seen still finds its peers.
  EXPECT_EQ(database.winners_for_same_arch(sample_device("GPU-new")).size(), 3u);
  EXPECT_TRUE(database.winners_for_same_arch(a100).empty());
  EXPECT_EQ(database.winners_for_device(*database.find_device("GPU-a100")).size(), 1u);
}

TEST(Database, MeasurementsFilterByProblemAndBucket) {
  auto database = Database::open_in_memory();
  const ProblemClass max_i32{Op::max, DType::i32, DType::i32, Layout{}};
  const auto stored = database.store_bucket(sample_bucket(sample_device(), sum_f32(), 0, 1));
  database.store_bucket(sample_bucket(sample_device(), sum_f32(), 1, 2));
  database.store_bucket(sample_bucket(sample_device(), sum_f32(), 30, 3));
  database.store_bucket(sample_bucket(sample_device(), max_i32, 30, 4));
  const RowId device = stored.device_id;
  EXPECT_EQ(database.measurements(device, sum_f32()).size(), 6u);
  EXPECT_EQ(database.measurements(device, sum_f32(), 0).size(), 1u);
  EXPECT_EQ(database.measurements(device, sum_f32(), 1).size(), 2u);
  EXPECT_EQ(database.measurements(device, sum_f32(), 30).size(), 3u);
  EXPECT_EQ(database.measurements(device, sum_f32(), 31).size(), 0u);
  EXPECT_EQ(database.measurements(device, max_i32).size(), 4u);
  EXPECT_EQ(database.measurements(device + 1, max_i32).size(), 0u);
  EXPECT_EQ(database.tuned_buckets(device, sum_f32()), (std::vector<int>{0, 1, 30}));
  EXPECT_EQ(database.tuned_buckets(device, max_i32), std::vector<int>{30});
  const ProblemClass widening{Op::sum, DType::i32, DType::i64, Layout{}};
  EXPECT_TRUE(database.tuned_buckets(device, widening).empty());
}

TEST(Database, BinaryCacheGetsAndReplacesByKey) {
  auto database = Database::open_in_memory();
  EXPECT_EQ(database.find_binary("k1"), std::nullopt);
  CompiledBinary binary{"k1", 90, "12.4", {std::byte{0}, std::byte{0x7f}, std::byte{0xff}, std::byte{0}}, fixed_time()};
  database.put_binary(binary);
  EXPECT_EQ(database.find_binary("k1"), binary);
  binary.cubin = {std::byte{1}};
  binary.nvrtc_version = "12.8";
  database.put_binary(binary);
  EXPECT_EQ(database.find_binary("k1"), binary);
  CompiledBinary empty{"k2", 80, "12.4", {}, fixed_time()};
  database.put_binary(empty);
  EXPECT_EQ(database.find_binary("k2"), empty);
  EXPECT_EQ(database.counts().binaries, 2);
  EXPECT_EQ(database.counts().binary_bytes, 1);
}

TEST(Database, ReadOnlyHandleRefusesWrites) {
  TempDir dir;
  const auto path = dir / "tuning.db";
  Database::open(path).store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
  auto reader = Database::open_read_only(path);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(reader->read_only());
  EXPECT_EQ(reader->winners_for_device(*reader->find_device(sample_device().uuid)).size(), 1u);
  try {
    reader->store_bucket(sample_bucket(sample_device(), sum_f32(), 11));
    FAIL() << "a read-only database accepted a write";
  } catch (const DbError& e) {
    EXPECT_EQ(e.code(), SQLITE_READONLY);
  }
  EXPECT_THROW(reader->put_binary({"k", 90, "12", {}, fixed_time()}), DbError);
  EXPECT_THROW(reader->upsert_device(sample_device("GPU-x")), DbError);
}

TEST(Transaction, RollsBackUnlessCommitted) {
  auto database = Database::open_in_memory();
  const auto& connection = DatabaseAccess::connection(database);
  {
    detail::Transaction transaction(connection, detail::TransactionKind::immediate);
    connection.exec("INSERT INTO configs (text, hash) VALUES ('x', 1)");
  }
  EXPECT_EQ(database.counts().configs, 0);
  {
    detail::Transaction transaction(connection, detail::TransactionKind::immediate);
    connection.exec("INSERT INTO configs (text, hash) VALUES ('x', 1)");
    transaction.commit();
  }
  EXPECT_EQ(database.counts().configs, 1);
}

TEST(Statement, ReportsErrorsAsDbErrorWithExtendedCode) {
  auto database = Database::open_in_memory();
  const auto& connection = DatabaseAccess::connection(database);
  connection.exec("INSERT INTO configs (text, hash) VALUES ('x', 1)");
  try {
    connection.exec("INSERT INTO configs (text, hash) VALUES ('x', 2)");
    FAIL() << "a duplicate config was accepted";
  } catch (const DbError& e) {
    EXPECT_EQ(e.code(), SQLITE_CONSTRAINT_UNIQUE);
    EXPECT_NE(std::string(e.what()).find(":memory:: "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace reduce_tune::db
