// Tuned axis reductions in the database (schema version 4): storing a class's
// measurements, winner and mark; the queries the tuner and the runtime use; the checks
// that refuse an inconsistent result; and export, import and merge of axis rows.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include "database_access.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/transfer.h"
#include "reduce_tune/error.h"
#include "rows.h"
#include "sqlite_handle.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;

void expect_same_measurement(const AxisMeasurement& got, const AxisMeasurement& want) {
  EXPECT_EQ(got.op, want.op);
  EXPECT_EQ(got.dtype, want.dtype);
  EXPECT_EQ(got.out_dtype, want.out_dtype);
  EXPECT_EQ(got.layout, want.layout);
  EXPECT_EQ(got.reduced, want.reduced);
  EXPECT_EQ(got.outputs, want.outputs);
  EXPECT_EQ(got.inner, want.inner);
  EXPECT_EQ(got.config, want.config);
  EXPECT_EQ(got.status, want.status);
  if (std::isnan(want.median_ms)) EXPECT_TRUE(std::isnan(got.median_ms));
  else EXPECT_EQ(got.median_ms, want.median_ms);
  EXPECT_EQ(got.spread, want.spread);
  EXPECT_EQ(got.repetitions, want.repetitions);
  if (std::isnan(want.gbps)) EXPECT_TRUE(std::isnan(got.gbps));
  else EXPECT_EQ(got.gbps, want.gbps);
  EXPECT_EQ(got.tool_version, want.tool_version);
  EXPECT_EQ(got.created_at, want.created_at);
  EXPECT_EQ(got.detail, want.detail);
}

TEST(AxisRecords, LayoutTextAndClassName) {
  EXPECT_EQ(parse_axis_layout("rows"), AxisLayout::rows);
  EXPECT_EQ(parse_axis_layout("columns"), AxisLayout::columns);
  EXPECT_EQ(parse_axis_layout("flat"), std::nullopt);
  EXPECT_EQ(parse_axis_layout("general"), std::nullopt);
  EXPECT_EQ(parse_axis_layout("Rows"), std::nullopt);
  EXPECT_EQ(to_string(axis_class(AxisLayout::rows, 10, 14)), "sum<f32>[rows R 2^10 x 2^14 outputs]");
  EXPECT_EQ(to_string(axis_class(AxisLayout::columns, 3, 0, Op::sum, DType::i32, DType::i64)),
            "sum<i32,i64>[columns R 2^3 x 2^0 outputs]");
}

TEST(AxisRecords, MeasurementNamesTheClassOfItsShape) {
  AxisMeasurement m;
  m.op = Op::max;
  m.dtype = DType::f64;
  m.out_dtype = DType::f64;
  m.layout = AxisLayout::columns;
  m.reduced = 1023;   // bucket 9
  m.outputs = 1024;   // bucket 10
  m.inner = 16;
  EXPECT_EQ(m.problem(), axis_class(AxisLayout::columns, 9, 10, Op::max, DType::f64, DType::f64));
  m.reduced = 0;
  m.outputs = 1;
  EXPECT_EQ(m.problem().reduced_bucket, 0);
  EXPECT_EQ(m.problem().outputs_bucket, 0);
}

TEST(AxisDatabase, StoreAndReadRoundTripEveryField) {
  auto database = Database::open_in_memory();
  auto bucket = sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns, 12, 16), 4, fixed_time(5));
  bucket.measurements[1].status = MeasurementStatus::launch_failed;
  bucket.measurements[1].median_ms = std::nan("");
  bucket.measurements[1].gbps = std::nan("");
  bucket.measurements[1].detail = "too many resources requested for launch";
  bucket.measurements[2].inner = 64;  // another shape of the class
  bucket.winner = 2;
  const auto stored = database.store_axis_bucket(bucket);
  ASSERT_EQ(stored.measurement_ids.size(), 4u);
  EXPECT_EQ(database.find_device(sample_device().uuid), stored.device_id);
  EXPECT_EQ(database.device(stored.device_id)->key, sample_device());

  const auto measurements = database.axis_measurements(stored.device_id);
  ASSERT_EQ(measurements.size(), 4u);
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(measurements[i].id, stored.measurement_ids[i]);
    EXPECT_EQ(measurements[i].device_id, stored.device_id);
    expect_same_measurement(measurements[i], bucket.measurements[i]);
  }
  EXPECT_EQ(database.axis_measurements(stored.device_id, bucket.problem).size(), 4u);

  const auto winners = database.axis_winners_for_device(stored.device_id);
  ASSERT_EQ(winners.size(), 1u);
  const AxisWinner& w = winners[0];
  EXPECT_EQ(w.device_id, stored.device_id);
  EXPECT_EQ(w.problem, bucket.problem);
  EXPECT_EQ(w.config, bucket.measurements[2].config);
  EXPECT_EQ(w.median_ms, bucket.measurements[2].median_ms);
  EXPECT_EQ(w.gbps, bucket.measurements[2].gbps);
  EXPECT_EQ(w.measurement_id, stored.measurement_ids[2]);
  EXPECT_EQ(w.source, WinnerSource::tuned);
  EXPECT_EQ(w.tool_version, "0.3.0");
  EXPECT_EQ(w.created_at, fixed_time(5));
  EXPECT_EQ(w.grid_config, "");  // one winner serves the class

  EXPECT_EQ(database.axis_tuned_buckets(stored.device_id), std::vector<AxisProblemClass>{bucket.problem});
  const auto counts = database.counts();
  EXPECT_EQ(counts.devices, 1);
  EXPECT_EQ(counts.axis_measurements, 4);
  EXPECT_EQ(counts.axis_winners, 1);
  EXPECT_EQ(counts.axis_tuned_buckets, 1);
  // The flat tables are untouched.
  EXPECT_EQ(counts.measurements, 0);
  EXPECT_EQ(counts.winners, 0);
  EXPECT_EQ(counts.tuned_buckets, 0);
  EXPECT_EQ(counts.configs, 0);
  EXPECT_TRUE(database.integrity_problems().empty());
}

TEST(AxisDatabase, UntimedCandidateIsStoredAsNullAndReadBackAsNan) {
  auto database = Database::open_in_memory();
  auto bucket = sample_axis_bucket(sample_device(), axis_class(), 2);
  bucket.measurements[0].status = MeasurementStatus::compile_failed;
  bucket.measurements[0].median_ms = std::nan("");
  bucket.measurements[0].spread = std::nan("");
  bucket.measurements[0].gbps = std::nan("");
  const auto stored = database.store_axis_bucket(bucket);
  detail::Statement raw(DatabaseAccess::connection(database),
                        "SELECT median_ms IS NULL, spread IS NULL, gbps IS NULL FROM axis_measurements WHERE id = ?1");
  raw.bind(1, stored.measurement_ids[0]);
  ASSERT_TRUE(raw.step());
  EXPECT_EQ(raw.int64(0), 1);
  EXPECT_EQ(raw.int64(1), 1);
  EXPECT_EQ(raw.int64(2), 1);
  const auto back = database.axis_measurements(stored.device_id);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(std::isnan(back[0].median_ms));
  EXPECT_TRUE(std::isnan(back[0].spread));
  EXPECT_TRUE(std::isnan(back[0].gbps));
  EXPECT_EQ(back[1].median_ms, 0.5);  // the timed one is a number
}

TEST(AxisDatabase, StoringTheSameMeasurementsTwiceAddsNothing) {
  auto database = Database::open_in_memory();
  const auto bucket = sample_axis_bucket(sample_device(), axis_class(), 3, fixed_time(0));
  const auto first = database.store_axis_bucket(bucket);
  const auto again = database.store_axis_bucket(bucket);
  EXPECT_EQ(again.measurement_ids, first.measurement_ids);
  EXPECT_EQ(database.counts().axis_measurements, 3);
  EXPECT_EQ(database.counts().axis_winners, 1);
  EXPECT_EQ(database.counts().axis_tuned_buckets, 1);
  // Two identical measurements within one result are one row, with one id.
  auto doubled = bucket;
  doubled.measurements.push_back(doubled.measurements[0]);
  const auto third = database.store_axis_bucket(doubled);
  EXPECT_EQ(third.measurement_ids[3], first.measurement_ids[0]);
  EXPECT_EQ(database.counts().axis_measurements, 3);
  // Any part of the identity that differs makes a new row: time, tool version, config,
  // shape (inner of a columns class included).
  auto later = bucket;
  later.measurements.resize(1);
  later.winner = 0;
  later.measurements[0].created_at = fixed_time(1);
  database.store_axis_bucket(later);
  auto other_tool = bucket;
  other_tool.measurements.resize(1);
  other_tool.winner = 0;
  other_tool.measurements[0].tool_version = "0.3.1";
  database.store_axis_bucket(other_tool);
  auto other_config = bucket;
  other_config.measurements.resize(1);
  other_config.winner = 0;
  other_config.measurements[0].config += ",rows=2";
  database.store_axis_bucket(other_config);
  EXPECT_EQ(database.counts().axis_measurements, 6);
  auto columns = sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns), 1);
  database.store_axis_bucket(columns);
  columns.measurements[0].inner = 16;
  database.store_axis_bucket(columns);
  EXPECT_EQ(database.counts().axis_measurements, 8);
}

TEST(AxisDatabase, RetuningAClassReplacesItsWinnerAndKeepsHistory) {
  auto database = Database::open_in_memory();
  const auto problem = axis_class(AxisLayout::rows, 6, 18);
  const auto first = database.store_axis_bucket(sample_axis_bucket(sample_device(), problem, 3, fixed_time(0)));
  auto rerun = sample_axis_bucket(sample_device(), problem, 2, fixed_time(1000));
  rerun.tool_version = "0.4.0";
  rerun.winner = 0;  // the slower one this time
  const auto second = database.store_axis_bucket(rerun);
  EXPECT_EQ(second.device_id, first.device_id);
  EXPECT_EQ(database.counts().axis_measurements, 5);
  const auto winners = database.axis_winners_for_device(second.device_id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].measurement_id, second.measurement_ids[0]);
  EXPECT_EQ(winners[0].config, rerun.measurements[0].config);
  EXPECT_EQ(winners[0].median_ms, 1.0);
  EXPECT_EQ(winners[0].created_at, fixed_time(1000));
  EXPECT_EQ(winners[0].tool_version, "0.4.0");
  // The mark's provenance is the last run's.
  const auto marks = detail::select_axis_tuned_buckets(DatabaseAccess::connection(database), "", {});
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].tool_version, "0.4.0");
  EXPECT_EQ(marks[0].created_at, fixed_time(1000));

  // A rerun where nothing passed has no winner to offer: the class keeps its winner, and
  // its candidates are kept as history.
  auto failed = sample_axis_bucket(sample_device(), problem, 1, fixed_time(2000));
  failed.measurements[0].status = MeasurementStatus::wrong_result;
  failed.winner.reset();
  database.store_axis_bucket(failed);
  ASSERT_EQ(database.axis_winners_for_device(second.device_id).size(), 1u);
  EXPECT_EQ(database.axis_winners_for_device(second.device_id)[0].measurement_id, second.measurement_ids[0]);
  EXPECT_EQ(database.counts().axis_measurements, 6);
}

TEST(AxisDatabase, ClassWithoutWinnerIsStillMarkedTuned) {
  auto database = Database::open_in_memory();
  auto bucket = sample_axis_bucket(sample_device(), axis_class(), 2);
  for (auto& m : bucket.measurements) m.status = MeasurementStatus::skipped;
  bucket.winner.reset();
  const auto stored = database.store_axis_bucket(bucket);
  EXPECT_EQ(database.axis_tuned_buckets(stored.device_id), std::vector<AxisProblemClass>{axis_class()});
  EXPECT_TRUE(database.axis_winners_for_device(stored.device_id).empty());
  // No measurements at all: the class is done too (nothing fit the device, say).
  auto empty = sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns), 0);
  database.store_axis_bucket(empty);
  EXPECT_EQ(database.axis_tuned_buckets(stored.device_id).size(), 2u);
}

// Every way a result can be inconsistent, each refused with InvalidArgument before
// anything is written.
// A class's second winner, for its shapes on the 16-byte grid: stored beside the first,
// replaced by a rerun that finds one config for every shape, and carried through an
// export, an import and a merge.
TEST(AxisDatabase, AWinnerOnTheGridIsStoredExportedAndMerged) {
  TempDir dir;
  auto database = Database::open(dir / "a.db");
  auto bucket = sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns, 10, 23), 3, fixed_time(5));
  bucket.winner = 2;
  bucket.grid_winner = 0;
  database.store_axis_bucket(bucket);
  const RowId id = *database.find_device(sample_device().uuid);
  auto winners = database.axis_winners_for_device(id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].config, bucket.measurements[2].config);
  EXPECT_EQ(winners[0].grid_config, bucket.measurements[0].config);
  EXPECT_EQ(database.axis_winners_for_same_arch(sample_device("GPU-twin"))[0].grid_config,
            bucket.measurements[0].config);

  // Exported and imported into another file: the same pair.
  std::ostringstream out;
  write_json(read_snapshot(database), out);
  const std::string json = out.str();
  EXPECT_NE(json.find("\"grid_config\": \"" + bucket.measurements[0].config + "\""), std::string::npos) << json;
  std::istringstream in(json);
  auto other = Database::open(dir / "b.db");
  import_snapshot(other, read_json(in, "grid.json"));
  const auto imported = other.axis_winners_for_device(*other.find_device(sample_device().uuid));
  ASSERT_EQ(imported.size(), 1u);
  EXPECT_EQ(imported[0].config, winners[0].config);
  EXPECT_EQ(imported[0].grid_config, winners[0].grid_config);
  // Merged into a file whose winner of the class is slower: the pair replaces it.
  auto third = Database::open(dir / "c.db");
  auto slower = sample_axis_bucket(sample_device(), bucket.problem, 1, fixed_time(4));
  slower.measurements[0].config = "columns:block=64,group=1,vec=1";
  slower.measurements[0].median_ms = 9.0;
  third.store_axis_bucket(slower);
  merge_snapshot(third, read_snapshot(database));
  const auto merged = third.axis_winners_for_device(*third.find_device(sample_device().uuid));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].config, winners[0].config);
  EXPECT_EQ(merged[0].grid_config, winners[0].grid_config);

  // An export of an older tool (no grid_config) reads with one winner for the class.
  const std::string older = std::regex_replace(json, std::regex(R"(,\s*"grid_config": "[^"]*")"), "");
  ASSERT_EQ(older.find("grid_config"), std::string::npos);
  std::istringstream older_in(older);
  const auto old_snapshot = read_json(older_in, "older.json");
  ASSERT_EQ(old_snapshot.axis_winners.size(), 1u);
  EXPECT_EQ(old_snapshot.axis_winners[0].config, winners[0].config);
  EXPECT_EQ(old_snapshot.axis_winners[0].grid_config, "");

  // A rerun whose one winner holds everywhere leaves no grid winner behind.
  auto rerun = sample_axis_bucket(sample_device(), bucket.problem, 2, fixed_time(6));
  database.store_axis_bucket(rerun);
  winners = database.axis_winners_for_device(id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].grid_config, "");
  EXPECT_TRUE(database.integrity_problems().empty());
}

// The tuner's mark for the built-in choice made at each shape is stored as the winner's
// config (the grid's), its corner measurement behind it; a grid winner may not repeat the
// class's winner as stored, and a mark needs a winner to stand on.
TEST(AxisDatabase, AWinnerStoredUnderAnotherConfigTextKeepsItsMeasurementBehindIt) {
  auto database = Database::open_in_memory();
  auto bucket = sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns, 10, 23), 3, fixed_time(5));
  bucket.winner = 1;
  bucket.winner_config = "built-in";
  database.store_axis_bucket(bucket);
  const RowId id = *database.find_device(sample_device().uuid);
  auto winners = database.axis_winners_for_device(id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].config, "built-in");
  EXPECT_EQ(winners[0].median_ms, bucket.measurements[1].median_ms);
  ASSERT_TRUE(winners[0].measurement_id);
  bool found = false;
  for (const auto& m : database.axis_measurements(id, bucket.problem))
    if (m.id == *winners[0].measurement_id) {
      found = true;
      EXPECT_EQ(m.config, bucket.measurements[1].config);
    }
  EXPECT_TRUE(found);
  // On the grid only: the class keeps measurement 2's config off it.
  bucket.winner = 2;
  bucket.winner_config.clear();
  bucket.grid_winner = 1;
  bucket.grid_winner_config = "built-in";
  database.store_axis_bucket(bucket);
  winners = database.axis_winners_for_device(id);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].config, bucket.measurements[2].config);
  EXPECT_EQ(winners[0].grid_config, "built-in");
  // The grid's mark may stand on the class winner's measurement (it is another config),
  // but not repeat the class's mark.
  bucket.grid_winner = 2;
  EXPECT_NO_THROW(database.store_axis_bucket(bucket));
  bucket.winner_config = "built-in";
  EXPECT_THROW(database.store_axis_bucket(bucket), InvalidArgument);
  auto no_winner = bucket;
  no_winner.winner.reset();
  no_winner.grid_winner.reset();
  no_winner.grid_winner_config.clear();
  EXPECT_THROW(database.store_axis_bucket(no_winner), InvalidArgument);
  EXPECT_TRUE(database.integrity_problems().empty());
}

TEST(AxisDatabase, StoreRejectsInconsistentResults) {
  auto database = Database::open_in_memory();
  const auto good = sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns, 10, 14), 3);
  std::vector<std::pair<std::string, AxisBucketResult>> bad;
  auto add = [&](const std::string& name, const std::function<void(AxisBucketResult&)>& edit) {
    auto r = good;
    edit(r);
    bad.emplace_back(name, std::move(r));
  };
  add("other op", [](auto& r) { r.measurements[0].op = Op::prod; });
  add("other dtype", [](auto& r) { r.measurements[0].dtype = DType::f64; });
  add("other out dtype", [](auto& r) { r.measurements[1].out_dtype = DType::f64; });
  add("other layout", [](auto& r) {
    r.measurements[0].layout = AxisLayout::rows;
    r.measurements[0].inner = 1;
  });
  add("R in a lower bucket", [](auto& r) { r.measurements[0].reduced = 1023; });
  add("R in a higher bucket", [](auto& r) { r.measurements[2].reduced = 2048; });
  add("outputs in another bucket", [](auto& r) { r.measurements[0].outputs = std::uint64_t{1} << 15; });
  add("class layout flat", [](auto& r) {
    r.problem.layout = AxisLayout::flat;
    for (auto& m : r.measurements) m.layout = AxisLayout::flat;
  });
  add("class layout general", [](auto& r) {
    r.problem.layout = AxisLayout::general;
    for (auto& m : r.measurements) m.layout = AxisLayout::general;
  });
  add("class layout flat without measurements", [](auto& r) {
    r.problem.layout = AxisLayout::flat;
    r.measurements.clear();
    r.winner.reset();
  });
  add("columns with inner 0", [](auto& r) { r.measurements[1].inner = 0; });
  add("columns with inner not dividing outputs", [](auto& r) { r.measurements[1].inner = 3; });
  add("rows with inner 2", [](auto& r) {
    r.problem.layout = AxisLayout::rows;
    for (auto& m : r.measurements) {
      m.layout = AxisLayout::rows;
      m.inner = 1;
    }
    r.measurements[0].inner = 2;
  });
  add("empty config", [](auto& r) { r.measurements[0].config.clear(); });
  add("winner index out of range", [](auto& r) { r.winner = 3; });
  add("winner not ok", [](auto& r) { r.measurements[2].status = MeasurementStatus::wrong_result; });
  add("winner skipped", [](auto& r) { r.measurements[2].status = MeasurementStatus::skipped; });
  add("winner without a time", [](auto& r) { r.measurements[2].median_ms = std::nan(""); });
  add("grid winner without a winner", [](auto& r) {
    r.winner.reset();
    r.grid_winner = 1;
  });
  add("grid winner out of range", [](auto& r) { r.grid_winner = 3; });
  add("grid winner not ok", [](auto& r) {
    r.grid_winner = 1;
    r.measurements[1].status = MeasurementStatus::launch_failed;
  });
  add("grid winner repeats the winner", [](auto& r) { r.grid_winner = 2; });
  add("bucket out of range", [](auto& r) {
    r.problem.reduced_bucket = 64;
    r.measurements.clear();
    r.winner.reset();
  });
  add("device without UUID", [](auto& r) { r.device.uuid.clear(); });
  add("R beyond 2^63", [](auto& r) {
    r.problem.reduced_bucket = 63;
    for (auto& m : r.measurements) m.reduced = ~std::uint64_t{0};
  });
  for (const auto& [name, result] : bad) {
    EXPECT_THROW(database.store_axis_bucket(result), InvalidArgument) << name;
    EXPECT_EQ(database.counts(), DbCounts{}) << name;
  }
  // The good one goes in, and the connection is usable after all those refusals.
  database.store_axis_bucket(good);
  EXPECT_EQ(database.counts().axis_measurements, 3);
}

TEST(AxisDatabase, RefusalNamesTheClassAndTheReason) {
  auto database = Database::open_in_memory();
  auto r = sample_axis_bucket(sample_device(), axis_class(AxisLayout::rows, 10, 14), 2);
  r.measurements[1].reduced = 4096;
  try {
    database.store_axis_bucket(r);
    FAIL() << "accepted";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("sum<f32>[rows R 2^10 x 2^14 outputs]"), std::string::npos) << message;
    EXPECT_NE(message.find("measurement 1"), std::string::npos) << message;
    EXPECT_NE(message.find("sum<f32>[rows R 2^12 x 2^14 outputs]"), std::string::npos) << message;
  }
}

TEST(AxisDatabase, SchemaRefusesLayoutsOtherThanRowsAndColumnsFromAnyWriter) {
  auto database = Database::open_in_memory();
  const RowId device = database.upsert_device(sample_device());
  const auto& connection = DatabaseAccess::connection(database);
  connection.exec("INSERT INTO axis_configs (id, text) VALUES (1, 'rows:block=32');"
                  "INSERT INTO tool_versions (id, text) VALUES (1, 'x')");
  auto insert_with = [&](const char* layout, std::int64_t config_id) {
    detail::Statement insert(connection,
                             "INSERT INTO axis_measurements (device_id, op, dtype, out_dtype, layout, reduced, outputs, "
                             "inner, config_id, status, repetitions, tool_version_id, created_at_us) VALUES "
                             "(?1, 'sum', 'f32', 'f32', ?2, 4, 4, 1, ?3, 'ok', 1, 1, 0)");
    insert.bind(1, device).bind(2, layout).bind(3, config_id);
    try {
      insert.run();
      ADD_FAILURE() << layout << " with config " << config_id << " was stored";
      return 0;
    } catch (const DbError& e) {
      return e.code();
    }
  };
  for (const char* layout : {"flat", "general", "strided"}) EXPECT_EQ(insert_with(layout, 1), SQLITE_CONSTRAINT_CHECK);
  // A config id with no text behind it is refused too, and so is an empty text.
  EXPECT_EQ(insert_with("rows", 2), SQLITE_CONSTRAINT_FOREIGNKEY);
  EXPECT_THROW(connection.exec("INSERT INTO axis_configs (text) VALUES ('')"), DbError);
  EXPECT_EQ(database.counts().axis_measurements, 0);
}

TEST(AxisDatabase, MeasurementsFilterByClassWithBothBuckets) {
  auto database = Database::open_in_memory();
  const auto problem = axis_class(AxisLayout::rows, 4, 6);
  auto bucket = sample_axis_bucket(sample_device(), problem, 0);
  // The edges of the class: R in [16, 31], outputs in [64, 127].
  for (const auto& [reduced, outputs] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {16, 64}, {31, 64}, {16, 127}, {31, 127}}) {
    auto m = sample_axis_measurement(problem, "rows:block=64", 0.01);
    m.reduced = reduced;
    m.outputs = outputs;
    bucket.measurements.push_back(m);
  }
  const auto stored = database.store_axis_bucket(bucket);
  // Neighbouring classes, on every side, and another op and device.
  database.store_axis_bucket(sample_axis_bucket(sample_device(), axis_class(AxisLayout::rows, 3, 6), 1));
  database.store_axis_bucket(sample_axis_bucket(sample_device(), axis_class(AxisLayout::rows, 5, 6), 1));
  database.store_axis_bucket(sample_axis_bucket(sample_device(), axis_class(AxisLayout::rows, 4, 5), 1));
  database.store_axis_bucket(sample_axis_bucket(sample_device(), axis_class(AxisLayout::rows, 4, 7), 1));
  database.store_axis_bucket(sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns, 4, 6), 1));
  database.store_axis_bucket(
      sample_axis_bucket(sample_device(), axis_class(AxisLayout::rows, 4, 6, Op::min, DType::f32, DType::f32), 1));
  database.store_axis_bucket(sample_axis_bucket(sample_device("GPU-other"), problem, 2));

  const auto in_class = database.axis_measurements(stored.device_id, problem);
  ASSERT_EQ(in_class.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(in_class[i].id, stored.measurement_ids[i]);
  EXPECT_EQ(database.axis_measurements(stored.device_id).size(), 10u);
  EXPECT_EQ(database.axis_measurements(*database.find_device("GPU-other"), problem).size(), 2u);
  EXPECT_TRUE(database.axis_measurements(stored.device_id, axis_class(AxisLayout::rows, 40, 6)).empty());
  EXPECT_TRUE(database.axis_measurements(stored.device_id + 100).empty());
}

TEST(AxisDatabase, TunedClassesAreListedPerDeviceInClassOrder) {
  auto database = Database::open_in_memory();
  const std::vector<AxisProblemClass> classes = {
      axis_class(AxisLayout::columns, 2, 3),
      axis_class(AxisLayout::rows, 20, 3),
      axis_class(AxisLayout::rows, 2, 30),
      axis_class(AxisLayout::rows, 2, 3, Op::max, DType::f32, DType::f32),
      axis_class(AxisLayout::rows, 2, 3, Op::sum, DType::u32, DType::u32),
  };
  for (const auto& c : classes) database.store_axis_bucket(sample_axis_bucket(sample_device(), c, 1));
  database.store_axis_bucket(sample_axis_bucket(sample_device("GPU-other"), axis_class(), 1));
  auto expected = classes;
  std::sort(expected.begin(), expected.end());
  const RowId device = *database.find_device(sample_device().uuid);
  EXPECT_EQ(database.axis_tuned_buckets(device), expected);
  EXPECT_EQ(database.axis_tuned_buckets(*database.find_device("GPU-other")), std::vector<AxisProblemClass>{axis_class()});
  EXPECT_TRUE(database.axis_tuned_buckets(device + 100).empty());
  EXPECT_EQ(database.axis_winners_for_device(device).size(), classes.size());
}

TEST(AxisDatabase, WinnersForSameArchListsOtherDevicesOfThatCapability) {
  auto database = Database::open_in_memory();
  const auto h200 = sample_device("GPU-h200");
  const auto h100 = sample_device("GPU-h100");
  const auto a100 = sample_device("GPU-a100", 8, 0);
  const auto sm91 = sample_device("GPU-sm91", 9, 1);
  database.store_axis_bucket(sample_axis_bucket(h200, axis_class(AxisLayout::rows, 10, 10)));
  database.store_axis_bucket(sample_axis_bucket(h100, axis_class(AxisLayout::rows, 12, 10)));
  database.store_axis_bucket(sample_axis_bucket(h100, axis_class(AxisLayout::columns, 14, 10)));
  database.store_axis_bucket(sample_axis_bucket(a100, axis_class(AxisLayout::rows, 16, 10)));
  database.store_axis_bucket(sample_axis_bucket(sm91, axis_class(AxisLayout::rows, 18, 10)));
  // Flat winners of the same devices do not show up among axis winners.
  database.store_bucket(sample_bucket(h100, sum_f32(), 20));

  const auto same = database.axis_winners_for_same_arch(h200);
  ASSERT_EQ(same.size(), 2u);
  for (const auto& w : same) EXPECT_EQ(w.device_id, *database.find_device("GPU-h100"));
  EXPECT_EQ(same[0].problem, axis_class(AxisLayout::rows, 12, 10));
  EXPECT_EQ(same[1].problem, axis_class(AxisLayout::columns, 14, 10));
  // A device the file has never seen finds every peer of its capability, by device id.
  const auto unseen = database.axis_winners_for_same_arch(sample_device("GPU-new"));
  ASSERT_EQ(unseen.size(), 3u);
  EXPECT_EQ(unseen[0].device_id, *database.find_device("GPU-h200"));
  EXPECT_TRUE(database.axis_winners_for_same_arch(a100).empty());
  EXPECT_TRUE(database.axis_winners_for_same_arch(sm91).empty());
  EXPECT_EQ(database.axis_winners_for_device(*database.find_device("GPU-a100")).size(), 1u);
}

TEST(AxisDatabase, ReadOnlyHandleRefusesToStore) {
  TempDir dir;
  const auto path = dir / "tuning.db";
  Database::open(path).store_axis_bucket(sample_axis_bucket(sample_device(), axis_class()));
  auto reader = Database::open_read_only(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->axis_winners_for_device(*reader->find_device(sample_device().uuid)).size(), 1u);
  try {
    reader->store_axis_bucket(sample_axis_bucket(sample_device(), axis_class(AxisLayout::columns)));
    FAIL() << "a read-only database accepted a write";
  } catch (const DbError& e) {
    EXPECT_EQ(e.code(), SQLITE_READONLY);
  }
  EXPECT_EQ(reader->counts().axis_measurements, 3);
}

// ---- Export, import and merge ----

// (GPU-h200, class) with one winner at `median_ms` of config `config`, tuned at `at`.
AxisBucketResult axis_winner_bucket(const AxisProblemClass& problem, const std::string& config, double median_ms,
                                    std::int64_t at) {
  auto b = sample_axis_bucket(sample_device("GPU-h200"), problem, 0, fixed_time(at));
  b.measurements.push_back(sample_axis_measurement(problem, config, median_ms, fixed_time(at)));
  b.winner = 0;
  return b;
}

std::map<AxisProblemClass, AxisWinner> axis_winners_by_class(const Database& database) {
  std::map<AxisProblemClass, AxisWinner> out;
  for (const auto& w : database.axis_winners_for_device(*database.find_device("GPU-h200"))) out[w.problem] = w;
  return out;
}

const AxisProblemClass kA = axis_class(AxisLayout::rows, 8, 8);
const AxisProblemClass kB = axis_class(AxisLayout::rows, 9, 8);
const AxisProblemClass kC = axis_class(AxisLayout::columns, 8, 8);

TEST(AxisTransfer, MergeKeepsFasterVerifiedWinner) {
  auto mine = Database::open_in_memory();
  mine.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 1.0, 0));
  mine.store_axis_bucket(axis_winner_bucket(kC, "columns:block=128", 1.0, 0));
  auto theirs = Database::open_in_memory();
  theirs.store_axis_bucket(axis_winner_bucket(kA, "rows:block=512", 0.5, 100));     // faster: replaces
  theirs.store_axis_bucket(axis_winner_bucket(kB, "rows:block=512", 0.7, 100));     // new: added
  theirs.store_axis_bucket(axis_winner_bucket(kC, "columns:block=512", 2.0, 100));  // slower: kept out

  const auto stats = merge_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.axis_winners_replaced, 1);
  EXPECT_EQ(stats.axis_winners_added, 1);
  EXPECT_EQ(stats.axis_winners_kept, 1);
  EXPECT_EQ(stats.axis_winners_unverified, 0);
  EXPECT_EQ(stats.axis_measurements_added, 3);
  EXPECT_EQ(stats.axis_measurements_duplicate, 0);
  EXPECT_EQ(stats.axis_tuned_buckets_added, 1);  // kB's; the others were marked here already
  EXPECT_EQ(stats.devices_added, 0);
  // No flat rows moved.
  EXPECT_EQ(stats.measurements_added + stats.winners_added + stats.winners_replaced, 0);

  auto winners = axis_winners_by_class(mine);
  ASSERT_EQ(winners.size(), 3u);
  EXPECT_EQ(winners[kA].config, "rows:block=512");
  EXPECT_EQ(winners[kA].median_ms, 0.5);
  EXPECT_EQ(winners[kA].source, WinnerSource::merged);
  EXPECT_EQ(winners[kA].created_at, fixed_time(100));  // the tuning run's provenance is kept
  EXPECT_EQ(winners[kB].source, WinnerSource::merged);
  EXPECT_EQ(winners[kC].config, "columns:block=128");
  EXPECT_EQ(winners[kC].source, WinnerSource::tuned);
  // Each winner points at its own measurement in this file.
  const RowId device = *mine.find_device("GPU-h200");
  for (const auto& [problem, w] : winners) {
    ASSERT_TRUE(w.measurement_id);
    const auto ms = mine.axis_measurements(device, problem);
    const auto it =
        std::find_if(ms.begin(), ms.end(), [&](const AxisMeasurement& m) { return m.id == *w.measurement_id; });
    ASSERT_NE(it, ms.end()) << to_string(problem);
    EXPECT_EQ(it->config, w.config);
    EXPECT_EQ(it->median_ms, w.median_ms);
    EXPECT_EQ(it->created_at, w.created_at);
  }
  EXPECT_EQ(mine.counts().axis_measurements, 5);
  EXPECT_EQ(mine.axis_tuned_buckets(device), (std::vector<AxisProblemClass>{kA, kB, kC}));
}

TEST(AxisTransfer, MergeTieKeepsExisting) {
  auto mine = Database::open_in_memory();
  mine.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 1.0, 0));
  auto theirs = Database::open_in_memory();
  theirs.store_axis_bucket(axis_winner_bucket(kA, "rows:block=512", 1.0, 100));
  const auto stats = merge_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.axis_winners_kept, 1);
  EXPECT_EQ(stats.axis_winners_replaced, 0);
  EXPECT_EQ(axis_winners_by_class(mine)[kA].config, "rows:block=128");
  EXPECT_EQ(axis_winners_by_class(mine)[kA].source, WinnerSource::tuned);
}

TEST(AxisTransfer, MergeSkipsWinnersWithoutAnOkMeasurementBehindThem) {
  auto mine = Database::open_in_memory();
  mine.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 1.0, 0));
  auto theirs = Database::open_in_memory();
  theirs.store_axis_bucket(axis_winner_bucket(kA, "rows:block=512", 0.1, 100));
  theirs.store_axis_bucket(axis_winner_bucket(kB, "rows:block=512", 0.1, 100));
  theirs.store_axis_bucket(axis_winner_bucket(kC, "columns:block=512", 0.1, 100));
  auto snapshot = read_snapshot(theirs);
  ASSERT_EQ(snapshot.axis_winners.size(), 3u);
  // e.g. a hand-edited export: kA's winner names no measurement, kB's names one the file
  // does not hold, kC's names one that failed.
  for (auto& w : snapshot.axis_winners) {
    if (w.problem == kA) w.measurement_id.reset();
    if (w.problem == kB) w.measurement_id = 4242;
    if (w.problem == kC)
      for (auto& m : snapshot.axis_measurements)
        if (m.id == *w.measurement_id) m.status = MeasurementStatus::wrong_result;
  }
  const auto stats = merge_snapshot(mine, snapshot);
  EXPECT_EQ(stats.axis_winners_unverified, 3);
  EXPECT_EQ(stats.axis_winners_added + stats.axis_winners_replaced + stats.axis_winners_kept, 0);
  auto winners = axis_winners_by_class(mine);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[kA].config, "rows:block=128");
  // Their measurements are kept all the same.
  EXPECT_EQ(stats.axis_measurements_added, 3);
}

TEST(AxisTransfer, MergeReplacesAnUnverifiedExistingWinner) {
  auto theirs = Database::open_in_memory();
  theirs.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 0.1, 0));
  auto unverified = read_snapshot(theirs);
  unverified.axis_measurements.clear();
  unverified.axis_winners[0].measurement_id.reset();
  unverified.axis_winners[0].source = WinnerSource::imported;
  auto mine = Database::open_in_memory();
  import_snapshot(mine, unverified);
  EXPECT_EQ(axis_winners_by_class(mine)[kA].source, WinnerSource::imported);
  EXPECT_FALSE(axis_winners_by_class(mine)[kA].measurement_id);

  auto verified = Database::open_in_memory();
  verified.store_axis_bucket(axis_winner_bucket(kA, "rows:block=512", 0.9, 100));  // slower, but verified
  const auto stats = merge_snapshot(mine, read_snapshot(verified));
  EXPECT_EQ(stats.axis_winners_replaced, 1);
  EXPECT_EQ(axis_winners_by_class(mine)[kA].config, "rows:block=512");
  EXPECT_EQ(axis_winners_by_class(mine)[kA].source, WinnerSource::merged);
}

TEST(AxisTransfer, ImportReplacesTheWinnerAtTheSameKeyAndKeepsProvenance) {
  auto mine = Database::open_in_memory();
  mine.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 0.5, 0));
  auto theirs = Database::open_in_memory();
  theirs.store_axis_bucket(axis_winner_bucket(kA, "rows:block=512", 0.9, 100));  // slower, but import takes it
  const auto stats = import_snapshot(mine, read_snapshot(theirs));
  EXPECT_EQ(stats.axis_winners_replaced, 1);
  EXPECT_EQ(stats.axis_winners_added, 0);
  EXPECT_EQ(stats.axis_measurements_added, 1);
  EXPECT_EQ(stats.axis_tuned_buckets_added, 0);
  const auto w = axis_winners_by_class(mine)[kA];
  EXPECT_EQ(w.config, "rows:block=512");
  EXPECT_EQ(w.source, WinnerSource::tuned);
  EXPECT_EQ(w.created_at, fixed_time(100));
  EXPECT_EQ(mine.counts().axis_measurements, 2);
  EXPECT_EQ(mine.counts().axis_winners, 1);
}

TEST(AxisTransfer, ImportRollsBackOnABrokenAxisReference) {
  auto theirs = Database::open_in_memory();
  theirs.store_bucket(sample_bucket(sample_device("GPU-h200"), sum_f32(), 10));
  theirs.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 0.5, 0));
  for (int which = 0; which < 3; ++which) {
    auto snapshot = read_snapshot(theirs);
    if (which == 0) snapshot.axis_measurements.back().device_id = 4242;
    if (which == 1) snapshot.axis_winners.back().device_id = 4242;
    if (which == 2) snapshot.axis_tuned_buckets.back().device_id = 4242;
    for (const bool merge : {false, true}) {
      auto mine = Database::open_in_memory();
      EXPECT_THROW(merge ? merge_snapshot(mine, snapshot) : import_snapshot(mine, snapshot), DbError) << which;
      EXPECT_EQ(mine.counts(), DbCounts{}) << which;
    }
  }
}

TEST(AxisTransfer, JsonRoundTripKeepsEveryAxisField) {
  auto source = Database::open_in_memory();
  auto bucket = sample_axis_bucket(sample_device("GPU-h200"), kC, 3, fixed_time(42));
  bucket.measurements[0].status = MeasurementStatus::compile_failed;
  bucket.measurements[0].median_ms = bucket.measurements[0].gbps = std::nan("");
  bucket.measurements[0].detail = "line one\nline \"two\"";
  bucket.measurements[2].gbps = std::nan("");  // the winner's bandwidth was not measured
  source.store_axis_bucket(bucket);
  std::ostringstream out;
  write_json(read_snapshot(source), out);
  const std::string text = out.str();
  for (const char* field : {"\"axis_measurements\": [", "\"axis_winners\": [", "\"axis_tuned_buckets\": [",
                            "\"layout\": \"columns\"", "\"reduced\": 256", "\"outputs\": 256", "\"inner\": 8",
                            "\"reduced_bucket\": 8", "\"outputs_bucket\": 8", "\"gbps\": null",
                            "\"config\": \"columns:block=96,group=4,vec=4\""})
    EXPECT_NE(text.find(field), std::string::npos) << field << "\n" << text;
  EXPECT_NE(text.find("\"version\": 1,"), std::string::npos);  // a compatible addition: no format bump

  std::istringstream in(text);
  const auto snapshot = read_json(in, "axis.json");
  ASSERT_EQ(snapshot.axis_measurements.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expect_same_measurement(snapshot.axis_measurements[i], bucket.measurements[i]);
  ASSERT_EQ(snapshot.axis_winners.size(), 1u);
  EXPECT_EQ(snapshot.axis_winners[0].problem, kC);
  EXPECT_TRUE(std::isnan(snapshot.axis_winners[0].gbps));
  EXPECT_EQ(snapshot.axis_winners[0].measurement_id, snapshot.axis_measurements[2].id);
  ASSERT_EQ(snapshot.axis_tuned_buckets.size(), 1u);
  EXPECT_EQ(snapshot.axis_tuned_buckets[0].problem, kC);
  EXPECT_EQ(snapshot.axis_tuned_buckets[0].created_at, fixed_time(42));

  auto target = Database::open_in_memory();
  import_snapshot(target, snapshot);
  const RowId device = *target.find_device("GPU-h200");
  const auto back = target.axis_measurements(device, kC);
  ASSERT_EQ(back.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expect_same_measurement(back[i], bucket.measurements[i]);
  const auto winners = target.axis_winners_for_device(device);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].measurement_id, back[2].id);
  EXPECT_TRUE(std::isnan(winners[0].gbps));
  EXPECT_EQ(target.counts(), source.counts());
}

TEST(AxisTransfer, ReadsJsonExportsWithoutAxisSections) {
  // What a reduce-tune of schema version 3 wrote: bench rows, no axis sections.
  std::istringstream old_export(
      R"({"format": "reduce-tune-db", "version": 1, "schema_version": 3,
          "devices": [{"id": 3, "uuid": "GPU-old", "name": "NVIDIA H100", "cc_major": 9, "cc_minor": 0,
                       "sm_count": 132, "l2_bytes": 52428800, "memory_bus_bits": 5120,
                       "memory_clock_khz": 2619000, "driver_version": 12040, "runtime_version": 12040}],
          "measurements": [], "winners": [], "tuned_buckets": [], "binaries": [],
          "bench_results": [{"id": 1, "device_id": 3, "op": "sum", "dtype": "f32", "out_dtype": "f32",
                             "layout": "flat", "layout_outer": 1, "layout_inner": 1, "n": 1024,
                             "implementation": "cub", "config": "cub::DeviceReduce::Sum", "median_ms": 0.01,
                             "spread": 0.01, "repetitions": 5, "gbps": 0.4, "peak_fraction": null,
                             "peak_gbps": null, "run_id": "r", "tool_version": "0.2.0",
                             "created_at_us": 1700000000000000}]})");
  const auto snapshot = read_json(old_export, "old.json");
  EXPECT_TRUE(snapshot.axis_measurements.empty());
  EXPECT_TRUE(snapshot.axis_winners.empty());
  EXPECT_TRUE(snapshot.axis_tuned_buckets.empty());
  auto database = Database::open_in_memory();
  database.store_axis_bucket(sample_axis_bucket(sample_device("GPU-old"), kA));
  const auto stats = import_snapshot(database, snapshot);
  EXPECT_EQ(stats.bench_results_added, 1);
  EXPECT_EQ(stats.axis_measurements_added + stats.axis_winners_added + stats.axis_tuned_buckets_added, 0);
  // Importing a file without axis rows leaves the axis rows already here alone.
  const auto counts = database.counts();
  EXPECT_EQ(counts.devices, 1);
  EXPECT_EQ(counts.axis_measurements, 3);
  EXPECT_EQ(counts.axis_winners, 1);
}

TEST(AxisTransfer, JsonAxisRowsThatCannotBeStoredAreRefusedNamingTheRow) {
  auto source = Database::open_in_memory();
  source.store_axis_bucket(sample_axis_bucket(sample_device(), kA, 2));
  std::ostringstream out;
  write_json(read_snapshot(source), out);
  const std::string text = out.str();
  auto refused = [&](const std::string& from, const std::string& to, std::size_t occurrence,
                     const std::string& expected) {
    std::string edited = text;
    std::size_t at = std::string::npos;
    for (std::size_t i = 0; i <= occurrence; ++i) at = edited.find(from, at == std::string::npos ? 0 : at + 1);
    ASSERT_NE(at, std::string::npos) << from;
    edited.replace(at, from.size(), to);
    std::istringstream in(edited);
    try {
      read_json(in, "edited.json");
      ADD_FAILURE() << expected << ": accepted";
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  // The measurements come first in the file, then the winner, then the mark.
  refused("\"layout\": \"rows\"", "\"layout\": \"flat\"", 1, "axis_measurements[1]: unknown layout 'flat'");
  refused("\"layout\": \"rows\"", "\"layout\": \"general\"", 2, "axis_winners[0]: unknown layout 'general'");
  refused("\"layout\": \"rows\"", "\"layout\": \"diagonal\"", 3, "axis_tuned_buckets[0]: unknown layout 'diagonal'");
  refused("\"config\": \"rows:block=32,group=4,vec=4\"", "\"config\": \"\"", 0, "axis_measurements[0]: empty config");
  refused("\"config\": \"rows:block=64,group=4,vec=4\"", "\"config\": \"\"", 1, "axis_winners[0]: empty config");
  refused("\"reduced_bucket\": 8", "\"reduced_bucket\": \"eight\"", 0, "axis_winners[0]: bad \"reduced_bucket\"");
  refused("\"status\": \"ok\"", "\"status\": \"fine\"", 0, "axis_measurements[0]: unknown status 'fine'");
}

TEST(AxisTransfer, SqliteExportOfOneDeviceCarriesItsAxisRowsOnly) {
  TempDir dir;
  auto source = Database::open_in_memory();
  source.store_axis_bucket(axis_winner_bucket(kA, "rows:block=128", 0.5, 0));
  source.store_axis_bucket(sample_axis_bucket(sample_device("GPU-a100", 8, 0), kB, 2));
  const auto file = dir / "h200.db";
  export_database(source, file, ExportFormat::sqlite, *source.find_device("GPU-h200"));
  auto shipped = Database::open_read_only(file);
  ASSERT_TRUE(shipped);
  const auto counts = shipped->counts();
  EXPECT_EQ(counts.devices, 1);
  EXPECT_EQ(counts.axis_measurements, 1);
  EXPECT_EQ(counts.axis_winners, 1);
  EXPECT_EQ(counts.axis_tuned_buckets, 1);
  EXPECT_EQ(shipped->axis_winners_for_device(*shipped->find_device("GPU-h200"))[0].config, "rows:block=128");
  EXPECT_FALSE(shipped->find_device("GPU-a100"));
}

}  // namespace
}  // namespace reduce_tune::db
