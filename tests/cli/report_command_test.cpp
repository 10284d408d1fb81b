// `reduce-tune report` on the command line: formats, output files, filters, exit codes
// and messages.
#include <nlohmann/json.hpp>

#include <sstream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "report_test_support.h"

namespace reduce_tune::cli {
namespace {

using namespace report::testing;
using nlohmann::json;

struct CommandResult {
  int code = -1;
  std::string out;
  std::string err;
};

CommandResult run_report(std::vector<std::string> args) {
  std::ostringstream out, err;
  CommandResult result;
  result.code = run_report_command(args, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

std::vector<std::string> with_db(std::vector<std::string> args) {
  args.push_back("--db");
  args.push_back(fixture_path().string());
  return args;
}

// (op, dtype) of every problem of every device in a JSON report.
std::vector<std::string> problems_of(const std::string& text) {
  std::vector<std::string> problems;
  const auto report = json::parse(text);  // named: a temporary's member would dangle in the loop
  for (const auto& device : report.at("devices"))
    for (const auto& p : device.at("problems"))
      problems.push_back(device.at("index").dump() + ":" + p.at("op").get<std::string>() + "<" +
                         p.at("dtype").get<std::string>() + ">");
  return problems;
}

TEST(Report, WritesMarkdownToStandardOutputByDefault) {
  const auto r = run_report(with_db({}));
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("# reduce-tune report", 0), 0u);
}

TEST(Report, WritesEveryFormat) {
  for (const char* format : {"md", "csv", "json", "html"}) {
    const auto r = run_report(with_db({"--format", format}));
    EXPECT_EQ(r.code, kExitOk) << format << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << format;
  }
  EXPECT_EQ(json::parse(run_report(with_db({"--format", "json"})).out).at("schema_version"), 1);
  EXPECT_EQ(run_report(with_db({"--format", "csv"})).out.rfind("device_index,device_uuid,", 0), 0u);
  EXPECT_EQ(run_report(with_db({"--format", "html"})).out.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(Report, WritesTheOutputFileInTheFormatItsExtensionNames) {
  TempDir dir;
  const auto file = dir / "report.json";
  const auto r = run_report(with_db({"-o", file.string()}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(json::parse(file_text(file)).at("schema_version"), 1);
  // --format wins over the extension.
  ASSERT_EQ(run_report(with_db({"-o", file.string(), "--format", "csv"})).code, kExitOk);
  EXPECT_EQ(file_text(file).rfind("device_index,", 0), 0u);
}

TEST(Report, FailsWhenTheOutputFileCannotBeWritten) {
  TempDir dir;
  const auto r = run_report(with_db({"-o", (dir / "missing-folder" / "r.md").string()}));
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("reduce-tune report: cannot write"), std::string::npos) << r.err;
}

TEST(Report, FiltersByOp) {
  const auto r = run_report(with_db({"--format", "json", "--op", "max"}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(problems_of(r.out), (std::vector<std::string>{"0:max<f64>"}));
}

TEST(Report, FiltersByDtype) {
  const auto r = run_report(with_db({"--format", "json", "--dtype", "f32,f64"}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(problems_of(r.out), (std::vector<std::string>{"0:sum<f32>", "0:max<f64>", "1:sum<f32>"}));
  const auto csv = csv_rows(run_report(with_db({"--format", "csv", "--dtype", "i32"})).out);
  ASSERT_FALSE(csv.empty());
  for (const auto& row : csv) EXPECT_EQ(row.at("dtype"), "i32");
}

TEST(Report, FiltersByDeviceIndexOrUuid) {
  const auto by_index = run_report(with_db({"--format", "json", "--device", "1"}));
  ASSERT_EQ(by_index.code, kExitOk) << by_index.err;
  EXPECT_EQ(problems_of(by_index.out), (std::vector<std::string>{"1:sum<f32>"}));
  const auto by_uuid = run_report(with_db({"--format", "md", "--device", kHostileUuid}));
  ASSERT_EQ(by_uuid.code, kExitOk) << by_uuid.err;
  EXPECT_NE(by_uuid.out.find("## Device 0:"), std::string::npos);
  EXPECT_EQ(by_uuid.out.find(kPlainName), std::string::npos);
}

TEST(Report, RejectsAnUnknownFormatNamingTheAllowedOnes) {
  const auto r = run_report(with_db({"--format", "xml"}));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("reduce-tune report: --format 'xml': expected one of md, csv, json, html"), std::string::npos)
      << r.err;
}

TEST(Report, RejectsAnUnknownOpNamingTheAllowedOnes) {
  const auto r = run_report(with_db({"--op", "sum,median"}));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--op 'median': expected one of sum, prod, min, max, mean"), std::string::npos) << r.err;
}

TEST(Report, RejectsAnUnknownDtypeNamingTheAllowedOnes) {
  const auto r = run_report(with_db({"--dtype", "f16"}));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--dtype 'f16': expected one of i32, i64, u32, f32, f64"), std::string::npos) << r.err;
}

TEST(Report, RejectsAnUnknownDevice) {
  for (const char* device : {"7", "GPU-nope"}) {
    const auto r = run_report(with_db({"--device", device}));
    EXPECT_EQ(r.code, kExitUsage) << device;
    EXPECT_NE(r.err.find(std::string("--device '") + device + "': no such device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("2 devices"), std::string::npos) << r.err;
  }
}

TEST(Report, RejectsUnknownOptionsAndMissingValues) {
  const auto unknown = run_report(with_db({"--colour"}));
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_NE(unknown.err.find("colour"), std::string::npos) << unknown.err;
  const auto missing = run_report({"--format"});
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_NE(missing.err.find("format"), std::string::npos) << missing.err;
}

TEST(Report, MissingDatabaseSaysHowToCreateOne) {
  TempDir dir;
  const auto path = (dir / "none.db").string();
  const auto r = run_report({"--db", path});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "reduce-tune report: no tuning database at " + path + ": run reduce-tune --device 0 first\n");
  EXPECT_FALSE(std::filesystem::exists(path));  // read-only: nothing created
}

TEST(Report, BadOptionsAreReportedBeforeTheDatabaseIsOpened) {
  TempDir dir;
  const auto r = run_report({"--db", (dir / "none.db").string(), "--op", "avg"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--op 'avg'"), std::string::npos) << r.err;
}

TEST(Report, NotADatabaseFails) {
  TempDir dir;
  const auto path = dir / "junk.db";
  std::ofstream(path) << "this is not SQLite, just text long enough to look like a header of some file\n";
  const auto r = run_report({"--db", path.string()});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_EQ(r.err.rfind("reduce-tune report: ", 0), 0u) << r.err;
}

TEST(Report, HelpListsTheOptions) {
  const auto r = run_report({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* option : {"--format", "--output", "--device", "--op", "--dtype", "--db"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace reduce_tune::cli
