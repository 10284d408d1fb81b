// The reduce-tune command line end to end through run_cli (no GPU needed): exit codes,
// usage, the no-device path and the messages a script relies on.
#include "cli/command_support.h"
#include "cli/cli.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "cli/db_commands.h"

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
  EXPECT_EQ(r.err, "reduce-tune: unknown command 'frobnicate' (commands: tune, show, report, bench, db; see --help)\n");
}

TEST(Cli, OptionsAloneMeanTune) {
  const Result r = run({"--device", "0", "--dry-run", "--ops", "max", "--dtypes", "i64"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("search space for sm_90"), std::string::npos);
  EXPECT_NE(r.out.find("max<i64>="), std::string::npos);
  EXPECT_NE(r.out.find("buckets to tune: 21"), std::string::npos) << r.out;
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

TEST(Cli, HelpForEveryCommand) {
  for (const char* command : {"tune", "show", "report", "db"}) {
    const Result r = run({command, "--help"});
    EXPECT_EQ(r.code, kExitOk) << command << ": " << r.err;
    EXPECT_NE((r.out + r.err).find("usage"), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace reduce_tune::cli
