// `reduce-tune db ...` through run_db_command: output, exit codes and messages.
#include "cli/command_support.h"
#include "cli/db_commands.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <sstream>

#include "reduce_tune/db/database.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/tuner/tuner.h"
#include "test_support.h"

namespace reduce_tune::cli {

namespace {

using namespace db::testing;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_db_command(args, out, err);
  return {code, out.str(), err.str()};
}

void make_database(const std::filesystem::path& path) {
  auto database = db::Database::open(path);
  database.store_bucket(sample_bucket(sample_device("GPU-h200"), sum_f32(), 10));
  database.store_bucket(sample_bucket(sample_device("GPU-a100", 8, 0), sum_f32(), 12, 2));
  database.put_binary({"k", 90, "12.4", {std::byte{1}, std::byte{2}}, fixed_time()});
  database.store_bench_results(sample_device("GPU-h200"), sample_bench_run(sum_f32(), 1u << 20, "run-1", fixed_time()));
}

bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == text.size() - 1; }

// Stores a binary for each of `needed` and one "orphan" no winner runs, then runs
// `db gc`: it must remove the orphan alone. The file, opened read-only, for more checks.
std::optional<db::Database> gc_with_an_orphan(const std::string& path, const std::set<std::string>& needed,
                                              const std::string& version) {
  {
    auto database = db::Database::open(path);
    for (const auto& key : needed) database.put_binary({key, 90, version, {std::byte{7}}, fixed_time()});
    database.put_binary({"orphan", 90, version, std::vector<std::byte>(4096, std::byte{1}), fixed_time()});
  }
  const auto r = run({"gc", "--db", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("removed 1 binaries"), std::string::npos) << r.out;
  auto database = db::Database::open_read_only(path);
  EXPECT_TRUE(database);
  if (!database) return std::nullopt;
  for (const auto& key : needed) EXPECT_TRUE(database->find_binary(key)) << key;
  EXPECT_FALSE(database->find_binary("orphan"));
  return database;
}

TEST(DbCommand, GcKeepsTheBinariesOfWinnersAndOfOtherCompilersOnly) {
  TempDir dir;
  const auto path = (dir / "tuning.db").string();
  make_database(path);  // two winners (sm_90 and sm_80 devices), one binary "k" of NVRTC 12.4
  NvrtcCompiler compiler;
  const std::string version = compiler.version();
  std::set<std::string> needed;
  {
    auto database = db::Database::open(path);
    needed = tuner::winner_binary_keys(database, compiler);
    ASSERT_EQ(needed.size(), 4u);  // two sum<f32> winners: each its sum and the mean it serves
  }
  auto database = gc_with_an_orphan(path, needed, version);
  ASSERT_TRUE(database);
  EXPECT_TRUE(database->find_binary("k"));  // another NVRTC's: kept
  EXPECT_EQ(database->counts().measurements, 5);  // every measurement stays
}

// An axis class with a second winner for its shapes on the 16-byte grid: gc keeps the
// binaries of both (each its sum and the mean it serves), and removes the rest.
TEST(DbCommand, GcKeepsTheBinariesOfAnAxisWinnerOnTheGrid) {
  TempDir dir;
  const auto path = (dir / "tuning.db").string();
  NvrtcCompiler compiler;
  const std::string version = compiler.version();
  const db::AxisProblemClass problem{Op::sum, DType::f16, DType::f16, AxisLayout::columns, 1, 23};
  const std::string off = "columns:block=256,by=1,vec=4,split=none,rows=1,unroll=4,sm=4,tail=1,occ=1536";
  const std::string on = "short_columns:block=256,group=1,vec=8,split=none,rows=1,unroll=2,sm=4";
  std::set<std::string> needed, grid_only;
  {
    auto database = db::Database::open(path);
    auto bucket = sample_axis_bucket(sample_device("GPU-h200"), problem, 2);
    bucket.measurements[0].config = off;
    bucket.measurements[1].config = on;
    bucket.winner = 0;
    bucket.grid_winner = 1;
    database.store_axis_bucket(bucket);
    needed = tuner::winner_binary_keys(database, compiler);
    ASSERT_EQ(needed.size(), 4u);
    bucket.grid_winner.reset();  // the same class with one winner: half the binaries
    database.store_axis_bucket(bucket);
    const auto one = tuner::winner_binary_keys(database, compiler);
    ASSERT_EQ(one.size(), 2u);
    for (const auto& key : needed)
      if (!one.count(key)) grid_only.insert(key);
    ASSERT_EQ(grid_only.size(), 2u);
    bucket.grid_winner = 1;
    database.store_axis_bucket(bucket);
  }
  auto database = gc_with_an_orphan(path, needed, version);
  ASSERT_TRUE(database);
  for (const auto& key : grid_only) EXPECT_TRUE(database->find_binary(key)) << key;
}

TEST(DbCommand, InfoShowsPathVersionDevicesAndCounts) {
  TempDir dir;
  const auto path = (dir / "tuning.db").string();
  make_database(path);
  const auto r = run({"info", "--db", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("database: " + path + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("schema version: " + std::to_string(db::kSchemaVersion) + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("devices: 2\n  [0] NVIDIA H200 (sm_90, 132 SMs) GPU-h200\n  [1] NVIDIA H200 (sm_80, 132 SMs) GPU-a100"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("measurements: 5\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("winners: 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("binaries: 1 (2 bytes)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bench results: 4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("axis measurements: 0\naxis winners: 0\naxis tuned buckets: 0\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
  // Axis rows are counted on their own lines; the lines above stay as they were.
  {
    auto database = db::Database::open(path);
    database.store_axis_bucket(sample_axis_bucket(sample_device("GPU-h200"), axis_class(AxisLayout::rows, 10, 14)));
    auto failed = sample_axis_bucket(sample_device("GPU-a100", 8, 0), axis_class(AxisLayout::columns, 6, 12), 1);
    failed.measurements[0].status = db::MeasurementStatus::compile_failed;
    failed.winner.reset();
    database.store_axis_bucket(failed);
  }
  const auto with_axis = run({"info", "--db", path});
  EXPECT_EQ(with_axis.code, 0) << with_axis.err;
  EXPECT_NE(with_axis.out.find("measurements: 5\nwinners: 2\ntuned buckets: 2\nbinaries: 1 (2 bytes)\n"
                               "bench results: 4\naxis measurements: 4\naxis winners: 1\naxis tuned buckets: 2\n"),
            std::string::npos)
      << with_axis.out;
}

TEST(DbCommand, InfoOnMissingDatabaseSaysNoTuningAndCreatesNothing) {
  TempDir dir;
  const auto path = dir / "none/tuning.db";
  const auto r = run({"info", "--db", path.string()});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("no tuning yet"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "none"));
}

TEST(DbCommand, InfoUsesReduceTuneDbVariable) {
  TempDir dir;
  const auto path = (dir / "env.db").string();
  make_database(path);
  ::setenv("REDUCE_TUNE_DB", path.c_str(), 1);
  const auto r = run({"info"});
  ::unsetenv("REDUCE_TUNE_DB");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("database: " + path), std::string::npos);
}

TEST(DbCommand, ExportImportMergeRoundTrip) {
  TempDir dir;
  const auto source = (dir / "source.db").string();
  make_database(source);
  for (const std::string name : {"all.db", "all.json"}) {
    const auto file = (dir / name).string();
    auto r = run({"export", "--db", source, "-o", file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("exported 2 devices, 5 measurements, 2 winners"), std::string::npos) << r.out;
    const auto target = (dir / ("from-" + name + ".db")).string();
    r = run({"import", "--db", target, file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("measurements +5 (0 already present)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bench results +4 (0 already present)"), std::string::npos) << r.out;
    EXPECT_EQ(db::Database::open(target).counts(), db::Database::open(source).counts());
    r = run({"merge", "--db", target, file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("measurements +0 (5 already present), winners +0 replaced 0 kept 2"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("bench results +0 (4 already present)"), std::string::npos) << r.out;
  }
}

TEST(DbCommand, ExportImportAndMergeCountAxisRows) {
  TempDir dir;
  const auto source = (dir / "source.db").string();
  make_database(source);
  {
    auto database = db::Database::open(source);
    database.store_axis_bucket(sample_axis_bucket(sample_device("GPU-h200"), axis_class(AxisLayout::rows, 10, 14)));
  }
  const auto file = (dir / "axis.json").string();
  auto r = run({"export", "--db", source, "-o", file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 bench results, 3 axis measurements, 1 axis winners, 1 axis tuned buckets to " + file),
            std::string::npos)
      << r.out;
  const auto target = (dir / "target.db").string();
  r = run({"import", "--db", target, file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("axis measurements +3 (0 already present), axis winners +1 replaced 0, axis tuned buckets +1\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(db::Database::open(target).counts(), db::Database::open(source).counts());
  r = run({"merge", "--db", target, file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("axis measurements +0 (3 already present), axis winners +0 replaced 0 kept 1 unverified 0, "
                       "axis tuned buckets +0\n"),
            std::string::npos)
      << r.out;
}

TEST(DbCommand, ExportOneDeviceByIndexOrUuid) {
  TempDir dir;
  const auto source = (dir / "source.db").string();
  make_database(source);
  auto r = run({"export", "--db", source, "--device", "1", "--format", "json", "-o", (dir / "a100.out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("exported 1 devices, 2 measurements, 1 winners"), std::string::npos) << r.out;
  EXPECT_EQ(file_bytes(dir / "a100.out").front(), '{');
  r = run({"export", "--db", source, "--device", "GPU-h200", "-o", (dir / "h200.db").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("exported 1 devices, 3 measurements, 1 winners, 1 tuned buckets, 1 binaries, 4 bench results"),
            std::string::npos)
      << r.out;
}

TEST(DbCommand, CorruptFileFailsWithOneLineAndIsNotTouched) {
  TempDir dir;
  const auto path = (dir / "corrupt.db").string();
  write_file(path, "definitely not sqlite");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"info", "--db", path},
           {"export", "--db", path, "-o", (dir / "x.db").string()},
           {"import", "--db", path, (dir / "nothing.db").string()}}) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(file_bytes(path), "definitely not sqlite");
  }
  const auto r = run({"info", "--db", path});
  EXPECT_EQ(r.err, "reduce-tune db: " + path + ": not a reduce-tune database (file is not a database)\n");

  // A corrupt file to import is refused before the database is created.
  const auto target = dir / "target.db";
  const auto imported = run({"import", "--db", target.string(), path});
  EXPECT_EQ(imported.code, 1);
  EXPECT_TRUE(one_line(imported.err)) << imported.err;
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST(DbCommand, NewerSchemaFailsWithExitOne) {
  TempDir dir;
  const auto path = (dir / "newer.db").string();
  make_database(path);
  {
    // user_version lives at byte 60 of the header (big-endian).
    std::string bytes = file_bytes(path);
    bytes[63] = 9;
    write_file(path, bytes);
  }
  const auto r = run({"info", "--db", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("schema version 9 is newer"), std::string::npos) << r.err;
}

TEST(DbCommand, UsageErrorsExitTwo) {
  TempDir dir;
  const auto source = (dir / "source.db").string();
  make_database(source);
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"info", "--bogus"},
      {"info", "--db"},
      {"export", "--db", source},                                    // no -o
      {"export", "--db", source, "-o", "x.db", "--format", "xml"},  // bad format
      {"export", "--db", source, "-o", (dir / "y.db").string(), "--device", "7"},
      {"import", "--db", source},  // no FILE
      {"merge", "--db", source, "a.db", "b.db"},
  };
  for (const auto& args : bad) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << (args.empty() ? "(none)" : args[0]);
    EXPECT_FALSE(r.err.empty());
  }
  const auto r = run({"info", "--bogus"});
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "y.db"));
}

TEST(DbCommand, HelpExitsZero) {
  EXPECT_EQ(run({"--help"}).code, 0);
  const auto r = run({"export", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--device"), std::string::npos);
}

TEST(DbCommand, ExportRefusesExistingOutput) {
  TempDir dir;
  const auto source = (dir / "source.db").string();
  make_database(source);
  const auto out = dir / "taken.db";
  write_file(out, "mine");
  const auto r = run({"export", "--db", source, "-o", out.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(file_bytes(out), "mine");
}

}  // namespace
}  // namespace reduce_tune::cli
