// `reduce-tune report` on the command line: formats, output files, filters, exit codes
// and messages.
#include <nlohmann/json.hpp>

#include <sstream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "reduce_tune/report/report_text.h"
#include "report_test_support.h"
#include "test_support.h"

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
  const auto r = run_report(with_db({"--dtype", "f8"}));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--dtype 'f8': expected one of i32, i64, u32, f32, f64, f16, bf16"), std::string::npos) << r.err;
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

// A database file holding only axis results (report_test_support.h's store_axis_results).
std::filesystem::path axis_database(const TempDir& dir) {
  const auto path = dir / "axis.db";
  auto database = db::Database::open(path);
  store_axis_results(database);
  return path;
}

TEST(Report, WritesTheAxisHeatMapsInEveryFormat) {
  TempDir dir;
  const auto path = axis_database(dir).string();
  const auto& w = axis_fixture_winners()[0];  // sum f32 rows at R 2^10, outputs 2^14
  ASSERT_EQ(w.reduced_bucket, 10);
  ASSERT_EQ(w.outputs_bucket, 14);
  const auto gbps = report::fixed_number(w.gbps(), 1);

  const auto md = run_report({"--db", path});
  ASSERT_EQ(md.code, kExitOk) << md.err;
  EXPECT_EQ(md.out.find("Nothing tuned for this device matches"), std::string::npos);
  const auto rows_at = md.out.find("### Axis: sum f32 → f32, rows");
  ASSERT_NE(rows_at, std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| R ↓ outputs → | 2^14 | 2^15 | 2^16 |", rows_at), std::string::npos);
  EXPECT_NE(md.out.find("| 2^10 | " + gbps + " | - | ", rows_at), std::string::npos);
  EXPECT_NE(md.out.find("| 2^11 | - | - | - |", rows_at), std::string::npos);
  EXPECT_NE(md.out.find(std::string("`") + w.config + "`", rows_at), std::string::npos);

  const auto csv = csv_rows(run_report({"--db", path, "--format", "csv"}).out);
  ASSERT_EQ(csv.size(), axis_fixture_winners().size());
  EXPECT_EQ(csv[0].at("layout"), "rows");
  EXPECT_EQ(csv[0].at("reduced_bucket"), "10");
  EXPECT_EQ(csv[0].at("outputs_bucket"), "14");
  EXPECT_EQ(csv[0].at("config"), w.config);

  const auto report = json::parse(run_report({"--db", path, "--format", "json"}).out);
  const auto& axis = report.at("devices")[0].at("axis_winners");
  ASSERT_EQ(axis.size(), axis_fixture_winners().size());
  EXPECT_EQ(axis[0].at("reduced_bucket"), 10);
  EXPECT_EQ(axis[0].at("outputs_bucket"), 14);
  EXPECT_EQ(axis[0].at("config"), w.config);

  const auto html = run_report({"--db", path, "--format", "html"}).out;
  EXPECT_EQ(count_of(html, "<table class=\"heat\""), 3u);
  EXPECT_NE(html.find("data-reduced-bucket=\"10\" data-outputs-bucket=\"14\" data-gbps=\"" +
                      report::exact_number(w.gbps()) + "\""),
            std::string::npos);
}

TEST(Report, FiltersTheAxisHeatMapsByOpAndDtype) {
  TempDir dir;
  const auto path = axis_database(dir).string();
  const auto max_only = run_report({"--db", path, "--op", "max"});
  ASSERT_EQ(max_only.code, kExitOk) << max_only.err;
  EXPECT_EQ(count_of(max_only.out, "### Axis: "), 1u);
  EXPECT_NE(max_only.out.find("### Axis: max f64 → f64, rows"), std::string::npos);
  const auto f32 = run_report({"--db", path, "--dtype", "f32", "--format", "json"});
  for (const auto& a : json::parse(f32.out).at("devices")[0].at("axis_winners")) EXPECT_EQ(a.at("dtype"), "f32");
  EXPECT_EQ(json::parse(f32.out).at("devices")[0].at("axis_winners").size(), 4u);
  // Nothing left: the device says so, as it does for flat results.
  const auto none = run_report({"--db", path, "--dtype", "i64"});
  EXPECT_NE(none.out.find("Nothing tuned for this device matches"), std::string::npos);
}

// A database holding the 16-bit floats (sum<f16> into f16, sum<bf16> into f32): the
// report and `show` name them, and --dtype filters them like any other type.
TEST(Report, ShowsTheSixteenBitFloats) {
  TempDir dir;
  const auto path = dir / "sixteen.db";
  {
    auto database = db::Database::open(path);
    for (const auto& [in, out] : {std::pair{DType::f16, DType::f16}, std::pair{DType::bf16, DType::f32}}) {
      auto r = db::testing::sample_bucket(axis_device(), {Op::sum, in, out, {}}, 20, 1);
      r.measurements[0].config = *parse_config("vectorized:vec=8").config;  // 8 x 16 bits per load
      database.store_bucket(r);
    }
  }
  const auto all = run_report({"--db", path.string(), "--format", "json"});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  EXPECT_EQ(problems_of(all.out), (std::vector<std::string>{"0:sum<f16>", "0:sum<bf16>"}));
  const auto csv = csv_rows(run_report({"--db", path.string(), "--format", "csv", "--dtype", "bf16"}).out);
  ASSERT_EQ(csv.size(), 1u);
  EXPECT_EQ(csv[0].at("dtype"), "bf16");
  EXPECT_EQ(csv[0].at("out_dtype"), "f32");
  std::ostringstream out, err;
  ASSERT_EQ(run_show_command({"--db", path.string()}, out, err), kExitOk) << err.str();
  EXPECT_NE(out.str().find("f16"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("bf16"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("vec=8"), std::string::npos) << out.str();
}

TEST(Report, HelpListsTheOptions) {
  const auto r = run_report({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* option : {"--format", "--output", "--device", "--op", "--dtype", "--db"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace reduce_tune::cli
