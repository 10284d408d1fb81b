// The reduce-tune command line end to end through run_cli (no GPU needed): exit codes,
// usage, the no-device path and the messages a script relies on.
#include "cli/command_support.h"
#include "cli/cli.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "cli/db_commands.h"
#include "report_test_support.h"

namespace reduce_tune::cli {

namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// Device 999 exists nowhere: with a GPU the error names the missing index, without one
// it says there is no device at all. Nothing is tuned or written either way.
bool has_gpu() {
  const Result probe = run({"tune", "--device", "999", "--db", "/nonexistent/dir/x.db"});
  return probe.err.find("no CUDA device available") == std::string::npos;
}

TEST(Cli, NoArgumentsPrintsUsageAndFails) {
  const Result r = run({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("usage: reduce-tune"), std::string::npos);
  EXPECT_EQ(run({"--help"}).code, kExitOk);
  EXPECT_NE(run({"--help"}).out.find("exit codes"), std::string::npos);
}

TEST(Cli, UnknownCommandNamesTheCommands) {
  const Result r = run({"frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.err,
            "reduce-tune: unknown command 'frobnicate' (commands: tune, show, report, bench, db, cache; see --help)\n");
}

// A bad command line of cache, db and report is one line naming the command and its
// --help, with exit code 2.
TEST(Cli, ABadOptionOfASubcommandPointsToItsHelp) {
  for (const char* command : {"cache", "db", "report"}) {
    const Result r = run({command, "--no-such-option"});
    EXPECT_EQ(r.code, kExitUsage) << command << ": " << r.err;
    const std::string prefix = std::string("reduce-tune ") + command + ": ";
    const std::string suffix = std::string(" (see reduce-tune ") + command + " --help)\n";
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
    ASSERT_GE(r.err.size(), suffix.size()) << r.err;
    EXPECT_EQ(r.err.substr(r.err.size() - suffix.size()), suffix) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Cli, OptionsAloneMeanTune) {
  const Result r = run({"--device", "0", "--dry-run", "--ops", "max", "--dtypes", "i64"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("search space for sm_90"), std::string::npos);
  EXPECT_NE(r.out.find("max<i64>="), std::string::npos);
  EXPECT_NE(r.out.find("buckets to tune: 21"), std::string::npos) << r.out;
  // Sizes sharing a bucket are one bucket to tune.
  const Result shared = run({"tune", "--dry-run", "--ops", "max", "--dtypes", "i64", "--sizes", "24577,16384,1024"});
  EXPECT_EQ(shared.code, kExitOk) << shared.err;
  EXPECT_NE(shared.out.find("sizes: 3 (2^10 .. 24577), buckets to tune: 2,"), std::string::npos) << shared.out;
}

TEST(Cli, BadOptionValuesNameTheOption) {
  const Result r = run({"tune", "--ops", "avg"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("reduce-tune tune: --ops: unknown value 'avg' (allowed: sum, prod, min, max, mean, all)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(run({"tune", "--strategy", "annealing"}).code, kExitUsage);
  EXPECT_EQ(run({"tune", "--sizes", "lots"}).code, kExitUsage);
}

TEST(Cli, WithoutAGpuTuneStopsWithOneLineAndExitCode3) {
  if (has_gpu()) GTEST_SKIP() << "a CUDA device is present: the GPU tests cover tuning";
  const auto db = std::filesystem::temp_directory_path() / "rt_cli_nogpu" / "t.db";
  const Result r = run({"--device", "0", "--db", db.string()});
  EXPECT_EQ(r.code, kExitNoDevice);
  EXPECT_EQ(r.err.rfind("reduce-tune tune: no CUDA device available (", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db)) << "nothing is written without a GPU";
}

TEST(Cli, ShowWithoutADatabaseSaysSo) {
  const Result r = run({"show", "--db", "/nonexistent/reduce-tune/none.db"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("no tuning database at /nonexistent/reduce-tune/none.db"), std::string::npos) << r.err;
}

TEST(Cli, ShowPrintsTheStoredWinners) {
  const std::filesystem::path fixture = std::filesystem::path(REDUCE_TUNE_TEST_ASSETS) / "report" / "fixture.db";
  ASSERT_TRUE(std::filesystem::exists(fixture)) << fixture;
  const Result r = run({"show", "--db", fixture.string(), "--device", "0"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("sum<f32>[flat]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos);
  EXPECT_EQ(run({"show", "--db", fixture.string(), "--device", "7"}).code, kExitFailure);
}

TEST(Cli, ShowListsAxisWinnersAfterTheFlatOnes) {
  const std::filesystem::path fixture = std::filesystem::path(REDUCE_TUNE_TEST_ASSETS) / "report" / "fixture.db";
  const Result before = run({"show", "--db", fixture.string()});
  ASSERT_EQ(before.code, kExitOk) << before.err;
  EXPECT_EQ(before.out.find("axis class"), std::string::npos);  // the fixture has no axis results

  // A copy of the fixture with axis results on a third device, which also has one flat winner.
  report::testing::TempDir dir;
  const auto path = dir / "axis.db";
  std::filesystem::copy_file(fixture, path);
  {
    auto database = db::Database::open(path);
    report::testing::store_axis_results(database);
    db::BucketResult flat;
    flat.device = report::testing::axis_device();
    flat.problem = {Op::sum, DType::f32, DType::f32, Layout{}};
    flat.bucket = 20;
    db::Measurement m;
    m.problem = flat.problem.with_size(std::uint64_t{1} << 20);
    m.median_ms = 0.01;
    m.repetitions = 10;
    m.gbps = 419.4304;
    m.tool_version = "0.3.0";
    flat.measurements = {m};
    flat.winners = {{db::Determinism::deterministic, 0}};
    flat.tool_version = "0.3.0";
    database.store_bucket(flat);
    // A class filled in between tuned ones: listed, and said to be filled.
    report::testing::store_filled_axis_class(database, {Op::max, DType::f32, DType::f32, AxisLayout::rows, 5, 17},
                                             "rows:block=256,group=8,vec=4,split=none,rows=1,unroll=4,sm=4", 0.02);
    // A filled class with a second winner for its shapes on the 16-byte grid: both named.
    report::testing::store_filled_axis_class(database, {Op::max, DType::f32, DType::f32, AxisLayout::rows, 7, 17},
                                             "rows:block=128,group=8,vec=1,split=none,rows=1,unroll=4,sm=4", 0.03);
    const db::AxisProblemClass grid_class{Op::max, DType::f32, DType::f32, AxisLayout::rows, 7, 17};
    const auto both = database.axis_measurements(*database.find_device(report::testing::axis_device().uuid),
                                                 std::optional<db::AxisProblemClass>(grid_class));
    ASSERT_EQ(both.size(), 1u);
    db::AxisBucketResult grid;
    grid.device = report::testing::axis_device();
    grid.problem = grid_class;
    grid.measurements.assign(2, both[0]);
    grid.measurements[1].config = "rows:block=256,group=8,vec=4,split=none,rows=1,unroll=4,sm=4";
    grid.winner = 0;
    grid.grid_winner = 1;
    grid.tool_version = "0.3.0";
    grid.mark_tuned = false;
    database.store_axis_bucket(grid);
  }
  const Result r = run({"show", "--db", path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // The devices without axis results read as before.
  EXPECT_EQ(r.out.substr(0, before.out.size()), before.out);
  const auto device = r.out.find(std::string("[2] ") + report::testing::kAxisDeviceName, before.out.size());
  ASSERT_NE(device, std::string::npos) << r.out;
  const auto flat_line = r.out.find("  sum<f32>[flat]    2^20   det", device);
  const auto header = r.out.find("  axis class", device);
  ASSERT_NE(flat_line, std::string::npos) << r.out;
  ASSERT_NE(header, std::string::npos) << r.out;
  EXPECT_LT(flat_line, header);
  // One line per class, in class order: its name, time, GB/s and config.
  std::size_t at = header;
  for (const auto& w : report::testing::axis_fixture_winners()) {  // listed in class order
    std::ostringstream line;
    line << "  " << std::left << std::setw(40) << db::to_string(w.problem()) << std::right << std::fixed
         << std::setprecision(4) << std::setw(11) << w.median_ms << std::setprecision(1) << std::setw(10) << w.gbps()
         << "  " << w.config << '\n';
    const auto next = r.out.find(line.str(), at);
    EXPECT_NE(next, std::string::npos) << line.str() << "\nin\n" << r.out;
    if (next != std::string::npos) at = next;
  }
  EXPECT_NE(r.out.find("  sum<f32>[rows R 2^10 x 2^14 outputs]   "), std::string::npos) << r.out;
  // The class tuned without a winner is not listed.
  EXPECT_EQ(r.out.find("R 2^12 x 2^16"), std::string::npos);
  const auto filled = r.out.find("  max<f32>[rows R 2^5 x 2^17 outputs]", device);
  ASSERT_NE(filled, std::string::npos) << r.out;
  const std::string line = r.out.substr(filled, r.out.find('\n', filled) - filled);
  EXPECT_NE(line.find("unroll=4,sm=4  (filled)"), std::string::npos) << line;
  const auto with_grid = r.out.find("  max<f32>[rows R 2^7 x 2^17 outputs]", device);
  ASSERT_NE(with_grid, std::string::npos) << r.out;
  const std::string grid_line = r.out.substr(with_grid, r.out.find('\n', with_grid) - with_grid);
  EXPECT_NE(grid_line.find("rows:block=128,group=8,vec=1,split=none,rows=1,unroll=4,sm=4  on the 16-byte grid: "
                           "rows:block=256,group=8,vec=4,split=none,rows=1,unroll=4,sm=4  (filled)"),
            std::string::npos)
      << grid_line;
  EXPECT_EQ(r.out.find("16-byte grid"), r.out.rfind("16-byte grid"));  // that class alone
  // Only those classes: the tuned ones are not marked.
  std::size_t marks = 0;
  for (auto at = r.out.find("(filled)"); at != std::string::npos; at = r.out.find("(filled)", at + 1)) ++marks;
  EXPECT_EQ(marks, 2u) << r.out;
}

TEST(Cli, HelpForEveryCommand) {
  for (const char* command : {"tune", "show", "report", "db"}) {
    const Result r = run({command, "--help"});
    EXPECT_EQ(r.code, kExitOk) << command << ": " << r.err;
    EXPECT_NE((r.out + r.err).find("usage"), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace reduce_tune::cli
