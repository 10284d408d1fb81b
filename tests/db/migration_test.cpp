// Schema versions: migration from every earlier version's fixture, refusal of newer
// versions and of files that are not ours, all without modifying a refused file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "columns.h"
#include "database_access.h"
#include "fixture_writer.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/transfer.h"
#include "reduce_tune/error.h"
#include "schema.h"
#include "sqlite_handle.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;

// Every schema version older than the current one has a fixture.
std::vector<int> old_versions() {
  std::vector<int> versions;
  for (int version = 1; version < kSchemaVersion; ++version) versions.push_back(version);
  return versions;
}

std::string fixture_name(int version) { return "schema_v" + std::to_string(version) + ".db"; }

// Fixtures are copied before use: opening for writing migrates them in place. A version
// whose fixture is not checked in (tests/assets/db) yet is written here by the code that
// db_make_fixtures runs (fixture_writer.h), with the schema steps up to that version.
std::filesystem::path copy_fixture(const TempDir& dir, int version) {
  const auto target = dir / fixture_name(version);
  const auto checked_in = std::filesystem::path(assets()) / fixture_name(version);
  if (std::filesystem::exists(checked_in))
    std::filesystem::copy_file(checked_in, target);
  else
    fixtures::write_fixture(target, version);
  return target;
}

std::vector<std::string> schema_sql(const Database& database) {
  detail::Statement s(DatabaseAccess::connection(database),
                      "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema ORDER BY type, name");
  std::vector<std::string> rows;
  while (s.step()) rows.push_back(s.text(0));
  return rows;
}

// The fixtures of versions 1 to 3 hold the same rows (tests/db/fixture_writer.h), each
// under the device UUID "GPU-fixture-v<version>"; version 2 adds a failure detail,
// version 3 a bench row.
void expect_fixture_rows(const Database& database, int version) {
  const auto device_id = database.find_device("GPU-fixture-v" + std::to_string(version));
  ASSERT_TRUE(device_id);
  EXPECT_EQ(database.device(*device_id)->key.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(database.device(*device_id)->key.arch(), 90);
  const auto measurements = database.measurements(*device_id, sum_f32(), 24);
  ASSERT_EQ(measurements.size(), 3u);
  EXPECT_EQ(measurements[0].config, ReduceConfig{});
  EXPECT_EQ(measurements[0].median_ms, 0.125);
  EXPECT_EQ(measurements[2].status, MeasurementStatus::compile_failed);
  EXPECT_TRUE(std::isnan(measurements[2].median_ms));
  // The column v2 added: empty for v1's rows, kept for v2's.
  EXPECT_EQ(measurements[2].detail, version >= 2 ? "ptxas: too many registers" : "");
  EXPECT_EQ(measurements[0].detail, "");
  const auto winners = database.winners_for_device(*device_id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].config, ReduceConfig{});
  EXPECT_EQ(winners[0].measurement_id, measurements[0].id);
  EXPECT_EQ(winners[0].bucket, 24);
  EXPECT_EQ(database.tuned_buckets(*device_id, sum_f32()), std::vector<int>{24});
  ASSERT_TRUE(database.find_binary("fixture-key"));
  EXPECT_EQ(database.find_binary("fixture-key")->cubin.size(), 7u);
  // The table v3 added: there, and empty before v3.
  const auto bench = database.bench_results(*device_id);
  if (version >= 3) {
    ASSERT_EQ(bench.size(), 1u);
    EXPECT_EQ(bench[0].implementation, "cub");
    EXPECT_EQ(bench[0].config, "cub::DeviceReduce::Sum");
    EXPECT_EQ(bench[0].run_id, "fixture-run");
    EXPECT_EQ(bench[0].problem, sum_f32().with_size(1u << 24));
    EXPECT_EQ(bench[0].median_ms, 0.02);
  } else {
    EXPECT_TRUE(bench.empty());
  }
  EXPECT_EQ(database.latest_bench_results(*device_id).size(), bench.size());
  EXPECT_EQ(database.counts().bench_results, version >= 3 ? 1 : 0);
  // The tables v4 added: there, and empty before v4.
  const auto counts = database.counts();
  // Another device of the fixture's arch sees the fixture's axis winners, from v4 on.
  EXPECT_EQ(database.axis_winners_for_same_arch(sample_device("GPU-other")).size(), version >= 4 ? 1u : 0u);
  if (version < 4) {
    EXPECT_TRUE(database.axis_measurements(*device_id).empty());
    EXPECT_TRUE(database.axis_measurements(*device_id, axis_class()).empty());
    EXPECT_TRUE(database.axis_winners_for_device(*device_id).empty());
    EXPECT_TRUE(database.axis_tuned_buckets(*device_id).empty());
    EXPECT_EQ(counts.axis_measurements, 0);
    EXPECT_EQ(counts.axis_winners, 0);
    EXPECT_EQ(counts.axis_tuned_buckets, 0);
    return;
  }
  // v4's rows, whose config and tool version texts v5 stores as ids: the same texts and
  // ids, and the winner still points at its measurement.
  const auto axis = database.axis_measurements(*device_id);
  ASSERT_EQ(axis.size(), 4u);
  EXPECT_EQ(database.axis_measurements(*device_id, axis_class()).size(), 4u);
  EXPECT_EQ(axis[0].config, "rows:block=128,vec=1,rows_per_block=1");
  EXPECT_EQ(axis[1].config, "rows:block=256,vec=4,rows_per_block=1");
  EXPECT_EQ(axis[3].config, axis[1].config);
  EXPECT_EQ(axis[1].tool_version, "0.4.0");
  EXPECT_EQ(axis[3].tool_version, "0.4.1");
  EXPECT_EQ(axis[1].median_ms, 0.025);
  EXPECT_EQ(axis[1].reduced, 1024u);
  EXPECT_EQ(axis[1].outputs, 16384u);
  EXPECT_EQ(axis[1].inner, 1u);
  EXPECT_EQ(axis[2].status, MeasurementStatus::launch_failed);
  EXPECT_TRUE(std::isnan(axis[2].median_ms));
  EXPECT_EQ(axis[2].detail, "launch: too many resources requested");
  for (std::size_t i = 0; i < axis.size(); ++i) EXPECT_EQ(axis[i].id, static_cast<RowId>(i + 1));
  const auto axis_winners = database.axis_winners_for_device(*device_id);
  ASSERT_EQ(axis_winners.size(), 1u);
  EXPECT_EQ(axis_winners[0].config, axis[1].config);
  EXPECT_EQ(axis_winners[0].measurement_id, axis[1].id);
  EXPECT_EQ(axis_winners[0].grid_config, "");  // before v6: one winner serves the class
  EXPECT_EQ(database.axis_tuned_buckets(*device_id), std::vector<AxisProblemClass>{axis_class()});
  EXPECT_EQ(counts.axis_measurements, 4);
  EXPECT_EQ(counts.axis_winners, 1);
  EXPECT_EQ(counts.axis_tuned_buckets, 1);
}

std::int64_t table_rows(const Database& database, const std::string& table) {
  detail::Statement s(DatabaseAccess::connection(database), "SELECT count(*) FROM " + table);
  return s.step() ? s.int64(0) : -1;
}

int file_user_version(const std::filesystem::path& path) {
  detail::Connection raw(path.string(), SQLITE_OPEN_READONLY, path.string());
  detail::Statement version(raw, "PRAGMA user_version");
  return version.step() ? version.int32(0) : -1;
}

// Fixture `version` copied into `dir` (its path in `path`) and opened for writing, which
// migrates it: the file's version before, the database's after, and the fixture's rows.
Database open_migrated_fixture(const TempDir& dir, int version, std::filesystem::path* path) {
  *path = copy_fixture(dir, version);
  EXPECT_EQ(file_user_version(*path), version);
  auto database = Database::open(*path);
  EXPECT_EQ(database.file_schema_version(), kSchemaVersion);
  expect_fixture_rows(database, version);
  return database;
}

TEST(Migration, UpgradesV1FixtureWhenOpenedForWriting) {
  TempDir dir;
  std::filesystem::path path;
  {
    auto database = open_migrated_fixture(dir, 1, &path);
    EXPECT_TRUE(database.integrity_problems().empty());
    // New rows use the new column.
    auto bucket = sample_bucket(sample_device(), sum_f32(), 12);
    bucket.measurements[0].detail = "why";
    const auto stored = database.store_bucket(bucket);
    EXPECT_EQ(database.measurements(stored.device_id, sum_f32())[0].detail, "why");
  }
  EXPECT_EQ(file_user_version(path), kSchemaVersion);
}

TEST(Migration, UpgradesV2FixtureWhenOpenedForWriting) {
  TempDir dir;
  std::filesystem::path path;
  {
    auto database = open_migrated_fixture(dir, 2, &path);
    // Bench rows go in beside the old rows, for the fixture's own device too.
    auto device = database.device(*database.find_device("GPU-fixture-v2"))->key;
    const auto ids = database.store_bench_results(device, sample_bench_run(sum_f32(), 1u << 24, "r", fixed_time()));
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_EQ(database.latest_bench_results(*database.find_device("GPU-fixture-v2")).size(), 4u);
    EXPECT_EQ(database.counts().devices, 1);
    EXPECT_EQ(database.counts().measurements, 3);
    EXPECT_TRUE(database.integrity_problems().empty());
  }
  EXPECT_EQ(file_user_version(path), kSchemaVersion);
  auto reopened = Database::open_read_only(path);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->file_schema_version(), kSchemaVersion);
  EXPECT_EQ(reopened->counts().bench_results, 4);
}

TEST(Migration, UpgradesV3FixtureWhenOpenedForWriting) {
  TempDir dir;
  std::filesystem::path path;
  {
    auto database = open_migrated_fixture(dir, 3, &path);
    // Axis rows go in beside the old rows, for the fixture's own device too.
    const RowId device_id = *database.find_device("GPU-fixture-v3");
    const auto device = database.device(device_id)->key;
    const auto stored = database.store_axis_bucket(sample_axis_bucket(device, axis_class(AxisLayout::columns)));
    EXPECT_EQ(stored.device_id, device_id);
    ASSERT_EQ(database.axis_winners_for_device(device_id).size(), 1u);
    EXPECT_EQ(database.axis_winners_for_device(device_id)[0].measurement_id, stored.measurement_ids[2]);
    EXPECT_EQ(database.axis_tuned_buckets(device_id), std::vector<AxisProblemClass>{axis_class(AxisLayout::columns)});
    const auto counts = database.counts();
    EXPECT_EQ(counts.devices, 1);
    EXPECT_EQ(counts.measurements, 3);
    EXPECT_EQ(counts.bench_results, 1);
    EXPECT_EQ(counts.axis_measurements, 3);
    EXPECT_EQ(counts.axis_winners, 1);
    EXPECT_EQ(counts.axis_tuned_buckets, 1);
    EXPECT_TRUE(database.integrity_problems().empty());
  }
  EXPECT_EQ(file_user_version(path), kSchemaVersion);
  auto reopened = Database::open_read_only(path);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->file_schema_version(), kSchemaVersion);
  EXPECT_EQ(reopened->counts().axis_measurements, 3);
  EXPECT_EQ(reopened->counts().bench_results, 1);
}

TEST(Migration, UpgradesV4FixtureWhenOpenedForWriting) {
  TempDir dir;
  std::filesystem::path path;
  {
    auto database = open_migrated_fixture(dir, 4, &path);
    EXPECT_TRUE(database.integrity_problems().empty());
    // Each text once: two configs of four rows share one, two tool versions.
    EXPECT_EQ(table_rows(database, "axis_configs"), 3);
    EXPECT_EQ(table_rows(database, "tool_versions"), 2);
    // A migrated row's identity still finds it: merging the file into itself adds nothing.
    const auto stats = merge_snapshot(database, read_snapshot(database));
    EXPECT_EQ(stats.axis_measurements_added, 0);
    EXPECT_EQ(stats.axis_measurements_duplicate, 4);
    // New rows reuse the texts already there and add what is new.
    const RowId device_id = *database.find_device("GPU-fixture-v4");
    auto bucket = sample_axis_bucket(database.device(device_id)->key, axis_class(AxisLayout::columns));
    bucket.tool_version = "0.4.0";
    for (auto& m : bucket.measurements) m.tool_version = "0.4.0";
    const auto stored = database.store_axis_bucket(bucket);
    EXPECT_EQ(table_rows(database, "tool_versions"), 2);
    EXPECT_EQ(table_rows(database, "axis_configs"), 6);
    EXPECT_EQ(database.axis_measurements(device_id).size(), 7u);
    EXPECT_EQ(database.axis_measurements(device_id, axis_class(AxisLayout::columns)).back().tool_version, "0.4.0");
    EXPECT_EQ(database.axis_winners_for_device(device_id).size(), 2u);
    EXPECT_EQ(stored.device_id, device_id);
    EXPECT_TRUE(database.integrity_problems().empty());
  }
  EXPECT_EQ(file_user_version(path), kSchemaVersion);
}

// The reason for version 5: an axis measurement's row and index no longer repeat its
// config and tool version texts. Many rows of few texts take far less room than before.
TEST(Migration, V5StoresAxisTextsOnce) {
  TempDir dir;
  auto bytes_for_rows = [&](const std::filesystem::path& path, bool old_schema) {
    {
      detail::Connection raw(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
      detail::Transaction t(raw, detail::TransactionKind::immediate);
      detail::migrate(raw, 0, old_schema ? 4 : kSchemaVersion);
      raw.exec("INSERT INTO devices VALUES (1, 'GPU-x', 'x', 9, 0, 132, 0, 0, 0, 0, 0)");
      if (old_schema) {
        detail::Statement m(raw,
                            "INSERT INTO axis_measurements (device_id, op, dtype, out_dtype, layout, reduced, "
                            "outputs, inner, config, status, median_ms, spread, repetitions, gbps, tool_version, "
                            "created_at_us) VALUES (1, 'sum', 'f32', 'f32', 'columns', ?1, 100, 100, "
                            "'columns:block=256,by=8,vec=4,split=none,rows=1,unroll=4,sm=' || (?1 % 16), 'ok', "
                            "0.01, 0.001, 25, 1000.0, 'reduce-tune 0.1.0 kernels 0123456789abcdef axis 2', ?1)");
        for (int i = 0; i < 20000; ++i) {
          m.bind(1, std::int64_t{i});
          m.run();
          m.reset();
        }
      }
      t.commit();
    }
    if (!old_schema) {
      auto database = Database::open(path);
      AxisBucketResult bucket;
      bucket.device = sample_device("GPU-x");
      bucket.problem = axis_class(AxisLayout::columns, 14, 6);
      bucket.tool_version = "reduce-tune 0.1.0 kernels 0123456789abcdef axis 2";
      for (int i = 0; i < 20000; ++i) {
        auto m = sample_axis_measurement(bucket.problem,
                                         "columns:block=256,by=8,vec=4,split=none,rows=1,unroll=4,sm=" +
                                             std::to_string(i % 16),
                                         0.01, fixed_time(i));
        m.tool_version = bucket.tool_version;
        bucket.measurements.push_back(m);
      }
      bucket.winner = 0;
      database.store_axis_bucket(bucket);
    }
    return std::filesystem::file_size(path);
  };
  const auto v4 = bytes_for_rows(dir / "v4.db", true);
  const auto v5 = bytes_for_rows(dir / "v5.db", false);
  EXPECT_LT(static_cast<double>(v5), 0.6 * static_cast<double>(v4)) << v4 << " bytes at v4, " << v5 << " at v5";
  // A v4 file migrated keeps every row, and gives back the old table's pages.
  {
    auto migrated = Database::open(dir / "v4.db");
    EXPECT_EQ(migrated.counts().axis_measurements, 20000);
    EXPECT_EQ(table_rows(migrated, "axis_configs"), 16);
    EXPECT_EQ(table_rows(migrated, "tool_versions"), 1);
    EXPECT_TRUE(migrated.integrity_problems().empty());
  }
  const auto after = std::filesystem::file_size(dir / "v4.db");
  EXPECT_LT(static_cast<double>(after), 0.6 * static_cast<double>(v4)) << v4 << " bytes before, " << after << " after";
}

TEST(Migration, MigratedSchemaEqualsFreshSchema) {
  TempDir dir;
  const auto fresh = Database::open(dir / "fresh.db");
  for (const int version : old_versions()) {
    const auto migrated = Database::open(copy_fixture(dir, version));
    EXPECT_EQ(schema_sql(migrated), schema_sql(fresh)) << version;
  }
}

TEST(Migration, ReadsOldFixturesReadOnlyWithoutWritingThem) {
  TempDir dir;
  for (const int version : old_versions()) {
    const auto path = copy_fixture(dir, version);
    const auto before = file_bytes(path);
    {
      auto database = Database::open_read_only(path);
      ASSERT_TRUE(database);
      EXPECT_EQ(database->file_schema_version(), version);
      expect_fixture_rows(*database, version);
      // Read in place through the read shims, not through a copy in memory (a default
      // run's file holds hundreds of MB of binaries, and every process opens it).
      detail::Statement list(DatabaseAccess::connection(*database), "PRAGMA database_list");
      bool main_is_the_file = false;
      while (list.step())
        if (list.text(1) == "main")
          main_is_the_file = std::filesystem::equivalent(std::filesystem::path(list.text(2)), path);
      EXPECT_TRUE(main_is_the_file) << version;
      EXPECT_THROW(database->put_binary({"k", 90, "12", {}, fixed_time()}), DbError);
      EXPECT_THROW(database->store_bench_results(sample_device(), sample_bench_run(sum_f32(), 64, "r", fixed_time())),
                   DbError);
      EXPECT_THROW(database->store_axis_bucket(sample_axis_bucket(sample_device(), axis_class())), DbError);
      // An export of an old file reads through the same shims: axis rows from v4 on.
      const auto snapshot = read_snapshot(*database);
      EXPECT_EQ(snapshot.measurements.size(), 3u);
      EXPECT_EQ(snapshot.axis_measurements.size(), version >= 4 ? 4u : 0u) << version;
      EXPECT_EQ(snapshot.axis_winners.size(), version >= 4 ? 1u : 0u) << version;
      EXPECT_EQ(snapshot.axis_tuned_buckets.size(), version >= 4 ? 1u : 0u) << version;
    }
    // load_snapshot (db import/merge of an old file) opens it read-only too.
    const auto loaded = load_snapshot(path);
    EXPECT_EQ(loaded.winners.size(), 1u) << version;
    EXPECT_EQ(loaded.axis_measurements.size(), version >= 4 ? 4u : 0u) << version;
    if (version >= 4) {
      EXPECT_EQ(loaded.axis_measurements[3].tool_version, "0.4.1");
      EXPECT_EQ(loaded.axis_winners[0].measurement_id, loaded.axis_measurements[1].id);
    }
    EXPECT_EQ(file_bytes(path), before) << version;
    EXPECT_EQ(file_user_version(path), version);
  }
}

// columns.h lists every table's columns once for the SQL statements and the JSON export;
// the migration steps are what defines them. These tests tie the two together: a step
// that adds a column or table without adding it to columns.h (or the reverse) fails here.
std::vector<std::string> listed(detail::ColumnList columns) { return {columns.begin(), columns.end()}; }

std::vector<std::string> table_columns(const Database& database, std::string_view table) {
  detail::Statement s(DatabaseAccess::connection(database), "PRAGMA table_info(" + std::string(table) + ")");
  std::vector<std::string> columns;
  while (s.step()) columns.push_back(s.text(1));  // in cid order: the order of the table
  return columns;
}

void expect_listed_columns(const Database& database, const std::string& context) {
  for (const auto& [table, columns] : detail::kTables)
    EXPECT_EQ(table_columns(database, table), listed(columns)) << context << ": table " << table;
}

TEST(Columns, FreshDatabaseHasExactlyTheListedTablesAndColumns) {
  TempDir dir;
  const auto database = Database::open(dir / "fresh.db");
  std::vector<std::string> tables;
  detail::Statement s(DatabaseAccess::connection(database),
                      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (s.step()) tables.push_back(s.text(0));
  std::vector<std::string> listed_tables;
  for (const auto& table : detail::kTables) listed_tables.emplace_back(table.table);
  std::sort(listed_tables.begin(), listed_tables.end());
  EXPECT_EQ(tables, listed_tables);
  expect_listed_columns(database, "fresh database");
}

TEST(Columns, KeysAreUniqueConstraintsOfTheirTables) {
  const auto database = Database::open_in_memory();
  const auto& connection = DatabaseAccess::connection(database);
  for (const auto& [table, key] : detail::kUniqueKeys) {
    std::vector<std::vector<std::string>> unique_indexes;
    detail::Statement indexes(connection, "PRAGMA index_list(" + std::string(table) + ")");
    while (indexes.step()) {
      if (indexes.int32(2) == 0) continue;  // not unique
      detail::Statement info(connection, "PRAGMA index_info(" + indexes.text(1) + ")");
      std::vector<std::string> columns;
      while (info.step()) columns.push_back(info.text(2));  // in seqno order
      unique_indexes.push_back(columns);
    }
    EXPECT_NE(std::find(unique_indexes.begin(), unique_indexes.end(), listed(key)), unique_indexes.end())
        << "no UNIQUE constraint or primary key of " << table << " is the listed key";
  }
}

TEST(Columns, OldFilesShowTheListedColumnsMigratedAndReadOnly) {
  for (const int version : old_versions()) {
    const std::string name = fixture_name(version);
    TempDir read_only_dir, migrated_dir;
    // Read in place through the read shims.
    const auto read_only = Database::open_read_only(copy_fixture(read_only_dir, version));
    ASSERT_TRUE(read_only);
    expect_listed_columns(*read_only, name + " read-only");
    const auto migrated = Database::open(copy_fixture(migrated_dir, version));
    expect_listed_columns(migrated, name + " migrated");
  }
}

// Makes a valid database of ours whose user_version is `version`.
std::filesystem::path database_with_version(const TempDir& dir, int version) {
  const auto path = dir / "newer.db";
  Database::open(path).store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
  detail::Connection raw(path.string(), SQLITE_OPEN_READWRITE, path.string());
  raw.exec(("PRAGMA user_version = " + std::to_string(version) + "; PRAGMA journal_mode = DELETE").c_str());
  return path;
}

TEST(Database, RefusesNewerSchema) {
  TempDir dir;
  const auto path = database_with_version(dir, kSchemaVersion + 1);
  const auto before = file_bytes(path);
  for (const bool read_only : {false, true}) {
    try {
      if (read_only) Database::open_read_only(path);
      else Database::open(path);
      FAIL() << "a newer schema was accepted";
    } catch (const DbError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path.string() + ": database schema version " + std::to_string(kSchemaVersion + 1) +
                             " is newer"),
                std::string::npos)
          << message;
      EXPECT_EQ(message.find('\n'), std::string::npos);
    }
    EXPECT_EQ(file_bytes(path), before);
  }
}

TEST(Database, RefusesNonSqliteFileWithoutTouchingIt) {
  TempDir dir;
  const auto path = dir / "notes.db";
  const std::string text = "these are my notes, not a database\n" + std::string(5000, 'x');
  write_file(path, text);
  for (const bool read_only : {false, true}) {
    try {
      if (read_only) Database::open_read_only(path);
      else Database::open(path);
      FAIL() << "a text file was accepted";
    } catch (const DbError& e) {
      EXPECT_EQ(std::string(e.what()), path.string() + ": not a reduce-tune database (file is not a database)");
      EXPECT_EQ(e.code() & 0xff, SQLITE_NOTADB);
    }
    EXPECT_EQ(file_bytes(path), text);
  }
}

TEST(Database, RefusesCorruptFileWithoutTouchingIt) {
  TempDir dir;
  const auto path = dir / "corrupt.db";
  {
    auto database = Database::open(path);
    database.store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
    DatabaseAccess::connection(database).exec("PRAGMA journal_mode = DELETE");
  }
  // Keep the 100-byte header (so it still looks like SQLite) and wreck the schema page.
  std::string bytes = file_bytes(path);
  ASSERT_GT(bytes.size(), 4096u);
  for (std::size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(0xA5 ^ i);
  write_file(path, bytes);
  for (const bool read_only : {false, true}) {
    try {
      if (read_only) Database::open_read_only(path);
      else Database::open(path);
      FAIL() << "a corrupt file was accepted";
    } catch (const DbError& e) {
      EXPECT_EQ(std::string(e.what()), path.string() + ": not a reduce-tune database (database disk image is malformed)");
    }
    EXPECT_EQ(file_bytes(path), bytes);
  }
}

TEST(Database, RefusesSqliteFileOfAnotherApplication) {
  TempDir dir;
  const auto path = dir / "other.db";
  {
    detail::Connection raw(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
    raw.exec("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x')");
  }
  const auto before = file_bytes(path);
  EXPECT_THROW(Database::open(path), DbError);
  EXPECT_THROW(Database::open_read_only(path), DbError);
  EXPECT_EQ(file_bytes(path), before);
}

TEST(Database, TreatsEmptyFileAsNewDatabase) {
  TempDir dir;
  const auto path = dir / "empty.db";
  write_file(path, "");
  EXPECT_FALSE(Database::open_read_only(path).has_value());
  EXPECT_EQ(file_bytes(path), "");
  auto database = Database::open(path);
  EXPECT_EQ(database.file_schema_version(), kSchemaVersion);
}

}  // namespace
}  // namespace reduce_tune::db
