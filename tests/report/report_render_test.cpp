// The renderers on the fixture database: every format holds the database's numbers, the
// HTML charts hold one series per strategy, and text from the database is escaped.
#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

#include "reduce_tune/config.h"
#include "report_test_support.h"
#include "reduce_tune/report/report_loader.h"
#include "reduce_tune/report/report_render.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

using namespace testing;
using nlohmann::json;

const ReportData& fixture_data() {
  static const ReportData data = [] {
    const auto database = open_fixture();
    return load_report_data(database);
  }();
  return data;
}

// All measurements of the fixture, by id.
std::map<db::RowId, db::Measurement> fixture_measurements() {
  const auto database = open_fixture();
  std::map<db::RowId, db::Measurement> all;
  for (const auto& device : fixture_data().devices)
    for (const auto& problem : device.problems)
      for (const auto& m : database.measurements(database.find_device(device.key.uuid).value(), problem.problem))
        all[m.id] = m;
  return all;
}

// ReportData with bench rows for the f32 sum of the first device at 1.5 * 2^22.
ReportData with_bench_rows() {
  ReportData data = fixture_data();
  auto& device = data.devices[0];
  const db::ProblemClass sum_f32{Op::sum, DType::f32, DType::f32, Layout{}};
  const auto key = sum_f32.with_size((std::uint64_t{3} << 22) / 2);
  device.bench = {bench_row(key, "tuned", 0.010, 2516.0),
                  bench_row(key, "default", 0.015, 1677.0),
                  bench_row(key, "cub", 0.020, 1258.0),
                  bench_row(key, "classic_best", 0.040, 629.0),
                  bench_row(sum_f32.with_size(std::uint64_t{3} << 25), "cub", 0.030, 4000.0)};
  return data;
}

TEST(Report, MarkdownShowsDeviceWinnersCandidatesAndLineage) {
  const auto md = render_markdown(fixture_data());
  EXPECT_NE(md.find("## Device 0: "), std::string::npos);
  EXPECT_NE(md.find("sm\\_90"), std::string::npos);  // Markdown-escaped
  EXPECT_NE(md.find("132"), std::string::npos);
  EXPECT_NE(md.find("60 MiB"), std::string::npos);
  EXPECT_NE(md.find(fixed_number(fixture_data().devices[0].key.peak_bandwidth_gbps(), 1) + " GB/s"), std::string::npos);
  EXPECT_NE(md.find("the peak that"), std::string::npos);
  EXPECT_NE(md.find("### sum f32 → f32"), std::string::npos);
  EXPECT_NE(md.find("### sum i32 → i64"), std::string::npos);
  const auto& winner = fixture_data().devices[0].problems[1].buckets[0].winners[0];
  EXPECT_NE(md.find("`" + to_string(winner.winner.config) + "`"), std::string::npos);
  EXPECT_NE(md.find("- compile\\_failed: "), std::string::npos);
  EXPECT_NE(md.find("too many registers"), std::string::npos);
  EXPECT_NE(md.find("no candidate passed"), std::string::npos);
  EXPECT_EQ(count_of(md, "No bench data stored"), 1u);  // the A100 has none
  EXPECT_EQ(count_of(md, "#### Bench: tuned vs CUB"), 1u);  // the first device's f32 sum
  // The strategy columns follow the lineage.
  std::size_t at = md.find("#### Best time per strategy");
  ASSERT_NE(at, std::string::npos);
  for (const auto strategy : kAllStrategies) {
    std::string cell = " ";
    cell.append(markdown_escape(to_string(strategy))).append(" |");
    const auto next = md.find(cell, at);
    ASSERT_NE(next, std::string::npos) << to_string(strategy);
    at = next;
  }
}

TEST(Report, MarkdownEscapesDeviceName) {
  const auto md = render_markdown(fixture_data());
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;alert(\"x\")&lt;/script&gt; &amp; GPU"), std::string::npos);
}

TEST(Report, EscapesDeviceName) {
  const auto html = render_html(fixture_data());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("alert(\"x\")"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; GPU"), std::string::npos);
  // Failure details are escaped too.
  EXPECT_NE(html.find("&lt;race?&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<race?>"), std::string::npos);
}

TEST(Report, HtmlIsSelfContained) {
  const auto html = render_html(fixture_data());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* outside : {"http:", "https:", "src=", "<link", "@import", "url(", "<script"})
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
}

TEST(Report, HtmlChartsHaveASeriesPerStrategyWithTheNumbers) {
  const auto& data = fixture_data();
  const auto html = render_html(data);
  std::size_t problems = 0;
  for (const auto& d : data.devices)
    for (const auto& p : d.problems)
      if (std::any_of(p.buckets.begin(), p.buckets.end(), [](const BucketReport& b) { return !b.strategy_best.empty(); }))
        ++problems;
  EXPECT_EQ(count_of(html, "<svg class=\"chart\""), problems);
  // The first device has three problems with all ten strategies; the A100 four.
  for (const auto strategy : kAllStrategies) {
    const std::size_t expected = static_cast<int>(strategy) < 4 ? 4 : 3;
    EXPECT_EQ(count_of(html, "<g data-strategy=\"" + std::string(to_string(strategy)) + "\">"), expected)
        << to_string(strategy);
  }
  EXPECT_EQ(count_of(html, "<polyline class=\"series\""), 3 * 10 + 4u);
  EXPECT_EQ(count_of(html, "data-strategy=\"cub\""), 1u);  // the first device's f32 sum has bench data
  // Every strategy's best GB/s is a point of the chart.
  for (const auto& d : data.devices)
    for (const auto& p : d.problems)
      for (const auto& b : p.buckets)
        for (const auto& m : b.strategy_best)
          EXPECT_NE(html.find("data-gbps=\"" + exact_number(m.gbps) + "\""), std::string::npos);
  EXPECT_NE(html.find("n (elements, log2 scale)"), std::string::npos);
  EXPECT_NE(html.find("peak bandwidth"), std::string::npos);
}

TEST(Report, CsvParsesBackToTheDatabasesNumbers) {
  const auto rows = csv_rows(render_csv(fixture_data()));
  const auto stored = fixture_measurements();
  ASSERT_FALSE(rows.empty());
  std::size_t strategy_rows = 0, winner_rows = 0;
  for (const auto& row : rows) {
    const auto m = stored.at(std::stoll(row.at("measurement_id")));
    EXPECT_EQ(std::stod(row.at("median_ms")), m.median_ms);
    EXPECT_EQ(std::stod(row.at("gbps")), m.gbps);
    EXPECT_EQ(std::stod(row.at("spread")), m.spread);
    EXPECT_EQ(std::stoi(row.at("repetitions")), m.repetitions);
    EXPECT_EQ(std::stoull(row.at("n")), m.problem.n);
    EXPECT_EQ(row.at("config"), to_string(m.config));
    EXPECT_EQ(row.at("strategy"), to_string(m.config.strategy));
    EXPECT_EQ(row.at("op"), to_string(m.problem.op));
    EXPECT_EQ(row.at("dtype"), to_string(m.problem.dtype));
    EXPECT_EQ(row.at("out_dtype"), to_string(m.problem.out_dtype));
    EXPECT_EQ(std::stoi(row.at("bucket")), size_bucket(m.problem.n));
    EXPECT_EQ(m.status, db::MeasurementStatus::ok);
    if (row.at("strategy_best") == "true") ++strategy_rows;
    if (row.at("winner") == "true") ++winner_rows;
    EXPECT_TRUE(row.at("strategy_best") == "true" || row.at("winner") == "true");
  }
  EXPECT_EQ(rows.front().at("device_name"), kHostileName);  // quoted, with doubled quotes
  EXPECT_EQ(rows.front().at("arch"), "sm_90");
  std::size_t expected_strategy_rows = 0, expected_winners = 0;
  for (const auto& d : fixture_data().devices)
    for (const auto& p : d.problems)
      for (const auto& b : p.buckets) {
        expected_strategy_rows += b.strategy_best.size();
        expected_winners += b.winners.size();
      }
  EXPECT_EQ(strategy_rows, expected_strategy_rows);
  EXPECT_EQ(winner_rows, expected_winners);  // the fixture's winners are distinct measurements
  // A deterministic winner slower than its strategy's atomic config has a row of its own.
  EXPECT_GT(rows.size(), expected_strategy_rows);
  EXPECT_EQ(rows.front().at("speedup_over_cub"), "");
}

TEST(Report, CsvGuardsDatabaseTextAgainstSpreadsheetFormulas) {
  ReportData data = fixture_data();
  ASSERT_FALSE(data.devices.empty());
  data.devices[0].key.name = "=HYPERLINK(\"http://x\",\"GPU\")";
  data.devices[0].key.uuid = "@SUM(1+1)";
  const auto rows = csv_rows(render_csv(data));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().at("device_name"), "'=HYPERLINK(\"http://x\",\"GPU\")");
  EXPECT_EQ(rows.front().at("device_uuid"), "'@SUM(1+1)");
  for (const char* cell : {"+1", "-1", "@x", "=x", "\tx", "\rx"})
    EXPECT_EQ(csv_text_field(cell).find('\''), csv_text_field(cell).front() == '"' ? 1u : 0u) << cell;
  EXPECT_EQ(csv_text_field("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(csv_field("-1.5"), "-1.5");  // numbers the report formats stay numbers
}

TEST(Report, CsvWinnerColumnsMatchTheStoredWinners) {
  const auto database = open_fixture();
  const auto rows = csv_rows(render_csv(fixture_data()));
  std::set<db::RowId> csv_winners;
  for (const auto& row : rows)
    if (row.at("winner_deterministic") == "true" || row.at("winner_nondeterministic") == "true")
      csv_winners.insert(std::stoll(row.at("measurement_id")));
  std::set<db::RowId> stored;
  for (const auto& d : database.list_devices())
    for (const auto& w : database.winners_for_device(d.id)) stored.insert(w.measurement_id.value());
  EXPECT_EQ(csv_winners, stored);
}

TEST(Report, JsonParsesBackToTheDatabasesNumbers) {
  const auto report = json::parse(render_json(fixture_data()));
  EXPECT_EQ(report.at("schema_version"), 1);
  const auto stored = fixture_measurements();
  ASSERT_EQ(report.at("devices").size(), 2u);
  const auto& device = report.at("devices")[0];
  EXPECT_EQ(device.at("name"), kHostileName);
  EXPECT_EQ(device.at("arch"), "sm_90");
  EXPECT_EQ(device.at("peak_bandwidth_gbps").get<double>(), fixture_data().devices[0].key.peak_bandwidth_gbps());
  std::size_t checked = 0;
  for (const auto& d : report.at("devices"))
    for (const auto& problem : d.at("problems"))
      for (const auto& bucket : problem.at("buckets")) {
        for (const auto& s : bucket.at("strategies")) {
          const auto& m = stored.at(s.at("measurement_id").get<db::RowId>());
          EXPECT_EQ(s.at("median_ms").get<double>(), m.median_ms);
          EXPECT_EQ(s.at("gbps").get<double>(), m.gbps);
          EXPECT_EQ(s.at("config"), to_string(m.config));
          EXPECT_EQ(s.at("n").get<std::uint64_t>(), m.problem.n);
          EXPECT_EQ(problem.at("op"), to_string(m.problem.op));
          ++checked;
        }
        for (const auto& w : bucket.at("winners")) {
          const auto& m = stored.at(w.at("measurement").at("measurement_id").get<db::RowId>());
          EXPECT_EQ(w.at("median_ms").get<double>(), m.median_ms);
          EXPECT_EQ(w.at("config"), to_string(m.config));
        }
        std::int64_t total = 0;
        for (const auto& [status, count] : bucket.at("candidates").at("by_status").items()) total += count.get<std::int64_t>();
        EXPECT_EQ(total, bucket.at("candidates").at("tried").get<std::int64_t>());
        // Only the first device's f32 sum has bench rows, in buckets 22 and 26.
        const bool benchmarked = d.at("index") == 0 && problem.at("op") == "sum" && problem.at("dtype") == "f32" &&
                                 (bucket.at("bucket") == 22 || bucket.at("bucket") == 26);
        EXPECT_EQ(bucket.at("bench").is_null(), !benchmarked) << bucket.at("bucket");
      }
  std::size_t expected = 0;
  for (const auto& d : fixture_data().devices)
    for (const auto& p : d.problems)
      for (const auto& b : p.buckets) expected += b.strategy_best.size();
  EXPECT_EQ(checked, expected);
}

TEST(Report, BenchRowsRenderSpeedupsInEveryFormat) {
  const auto data = with_bench_rows();

  const auto md = render_markdown(data);
  EXPECT_NE(md.find("| vs CUB |"), std::string::npos);
  EXPECT_NE(md.find("| 2.00x |"), std::string::npos);  // cub 0.020 / tuned 0.010
  EXPECT_NE(md.find("| 1.50x |"), std::string::npos);  // default 0.015 / tuned 0.010
  EXPECT_NE(md.find("| 4.00x |"), std::string::npos);  // classic best

  const auto rows = csv_rows(render_csv(data));
  std::size_t with_speedup = 0;
  for (const auto& row : rows) {
    if (row.at("speedup_over_cub").empty()) continue;
    ++with_speedup;
    if (row.at("bucket") != "22") continue;
    EXPECT_EQ(row.at("winner_deterministic"), "true");
    EXPECT_DOUBLE_EQ(std::stod(row.at("speedup_over_cub")), 2.0);
    EXPECT_DOUBLE_EQ(std::stod(row.at("speedup_over_default")), 1.5);
    EXPECT_EQ(std::stod(row.at("bench_cub_ms")), 0.020);
    EXPECT_EQ(std::stoull(row.at("bench_n")), (std::uint64_t{3} << 22) / 2);
  }
  EXPECT_EQ(with_speedup, 2u);  // buckets 22 and 26 (the latter against the winner's time)

  const auto report = json::parse(render_json(data));
  const auto& problem = report.at("devices")[0].at("problems")[1];
  ASSERT_EQ(problem.at("dtype"), "f32");
  const auto& bucket22 = problem.at("buckets")[3];
  ASSERT_EQ(bucket22.at("bucket"), 22);
  EXPECT_DOUBLE_EQ(bucket22.at("bench").at("speedup_over_cub").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(bucket22.at("bench").at("speedup_over_default").get<double>(), 1.5);
  EXPECT_TRUE(problem.at("buckets")[0].at("bench").is_null());
  EXPECT_EQ(report.at("devices")[0].at("bench").size(), 5u);
  EXPECT_EQ(report.at("devices")[0].at("bench")[2].at("implementation"), "cub");

  const auto html = render_html(data);
  EXPECT_EQ(count_of(html, "<g data-strategy=\"cub\">"), 1u);
  EXPECT_NE(html.find("data-gbps=\"1258\""), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">2.00x</td>"), std::string::npos);
  EXPECT_NE(html.find("CUB (bench)"), std::string::npos);
}

// The fixture's own bench rows, read from the database: the latest run's times and their
// ratios in every format.
TEST(Report, FixtureBenchRowsShowTunedAgainstCubInEveryFormat) {
  const auto& data = fixture_data();
  const double small_cub = kBenchSmall.cub / kBenchSmall.tuned;  // 1.12
  const double large_cub = kBenchLarge.cub / kBenchLarge.tuned;  // 1.05

  const auto md = render_markdown(data);
  const auto bench_at = md.find("#### Bench: tuned vs CUB");
  ASSERT_NE(bench_at, std::string::npos);
  EXPECT_NE(md.find("CUB: cub::DeviceReduce::Sum.", bench_at), std::string::npos);
  EXPECT_NE(md.find("| 2^22 | " + std::to_string(kBenchSmallN) + " | 0.01250 | 0.01500 | 0.01400 | 0.02000 |"),
            std::string::npos);
  EXPECT_NE(md.find(" | 1.20x | 1.12x | 1.60x |"), std::string::npos);  // bench table and winners table
  EXPECT_NE(md.find(" | 1.09x | 1.05x | 1.15x |"), std::string::npos);
  EXPECT_EQ(md.find("0.01300"), std::string::npos);  // the older run's time at 2^22 is not shown

  const auto rows = csv_rows(render_csv(data));
  std::map<std::string, std::map<std::string, std::string>> lead;  // bucket → the row with bench columns
  for (const auto& row : rows)
    if (!row.at("bench_n").empty()) lead[row.at("device_index") + ":" + row.at("dtype") + ":" + row.at("bucket")] = row;
  ASSERT_EQ(lead.size(), 2u);
  const auto& row22 = lead.at("0:f32:22");
  EXPECT_EQ(row22.at("winner_deterministic"), "true");
  EXPECT_EQ(std::stoull(row22.at("bench_n")), kBenchSmallN);
  EXPECT_EQ(std::stod(row22.at("bench_tuned_ms")), kBenchSmall.tuned);
  EXPECT_EQ(std::stod(row22.at("bench_cub_ms")), kBenchSmall.cub);
  EXPECT_EQ(std::stod(row22.at("bench_default_ms")), kBenchSmall.default_config);
  EXPECT_EQ(std::stod(row22.at("bench_classic_best_ms")), kBenchSmall.classic_best);
  EXPECT_DOUBLE_EQ(std::stod(row22.at("speedup_over_cub")), small_cub);
  EXPECT_DOUBLE_EQ(std::stod(lead.at("0:f32:26").at("speedup_over_cub")), large_cub);

  const auto report = json::parse(render_json(data));
  const auto& device = report.at("devices")[0];
  ASSERT_EQ(device.at("bench").size(), 8u);
  for (const auto& row : device.at("bench")) {
    EXPECT_FALSE(row.at("config").get<std::string>().empty());
    EXPECT_GT(row.at("peak_fraction").get<double>(), 0.0);
    if (row.at("implementation") == "cub") {
      EXPECT_EQ(row.at("config"), kCubCall);
    }
  }
  EXPECT_TRUE(report.at("devices")[1].at("bench").empty());
  const auto& problem = device.at("problems")[1];
  ASSERT_EQ(problem.at("dtype"), "f32");
  const auto& bucket22 = problem.at("buckets")[3];
  ASSERT_EQ(bucket22.at("bucket"), 22);
  EXPECT_EQ(bucket22.at("bench").at("tuned_ms").get<double>(), kBenchSmall.tuned);
  EXPECT_DOUBLE_EQ(bucket22.at("bench").at("speedup_over_cub").get<double>(), small_cub);

  const auto html = render_html(data);
  const auto cub_at = html.find("<g data-strategy=\"cub\">");
  ASSERT_NE(cub_at, std::string::npos);
  const auto cub_end = html.find("</g>", cub_at);
  EXPECT_EQ(count_of(html.substr(cub_at, cub_end - cub_at), "<circle"), 2u);  // one point per benchmarked n
  for (const auto& row : data.devices[0].bench) {
    if (row.implementation == kBenchCub) {
      EXPECT_NE(html.find("data-gbps=\"" + exact_number(row.gbps) + "\"", cub_at), std::string::npos);
    }
  }
  EXPECT_NE(html.find("<h4>Bench: tuned vs CUB</h4>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1.12x</td>"), std::string::npos);
  EXPECT_NE(html.find("and cub::DeviceReduce from the bench data"), std::string::npos);
}

// The fixture's devices plus a device with axis results only (store_axis_results).
const ReportData& axis_report_data() {
  static const ReportData data = [] {
    ReportData combined = fixture_data();
    auto database = db::Database::open_in_memory();
    store_axis_results(database);
    auto axis = load_report_data(database);
    axis.devices.at(0).index = combined.devices.size();
    combined.devices.push_back(std::move(axis.devices.at(0)));
    return combined;
  }();
  return data;
}

const AxisFixtureWinner& axis_winner_at(AxisLayout layout, Op op, int reduced_bucket, int outputs_bucket) {
  for (const auto& w : axis_fixture_winners())
    if (w.layout == layout && w.op == op && w.reduced_bucket == reduced_bucket && w.outputs_bucket == outputs_bucket)
      return w;
  throw std::runtime_error("no such axis winner");
}

std::string gbps_text(AxisLayout layout, Op op, int reduced_bucket, int outputs_bucket) {
  return fixed_number(axis_winner_at(layout, op, reduced_bucket, outputs_bucket).gbps(), 1);
}

TEST(Report, ReportsWithoutAxisResultsHaveNoAxisSections) {
  const auto& data = fixture_data();
  EXPECT_EQ(render_markdown(data).find("Axis"), std::string::npos);
  EXPECT_EQ(render_csv(data).find("reduced_bucket"), std::string::npos);
  EXPECT_FALSE(json::parse(render_json(data)).at("devices")[0].contains("axis_winners"));
  const auto html = render_html(data);
  EXPECT_EQ(html.find("heat"), std::string::npos);
  EXPECT_EQ(html.find("Axis"), std::string::npos);
}

TEST(Report, MarkdownDrawsAnAxisHeatMapPerLayout) {
  const auto md = render_markdown(axis_report_data());
  const auto device_at = md.find(std::string("## Device 2: ") + kAxisDeviceName);
  ASSERT_NE(device_at, std::string::npos);
  EXPECT_EQ(md.find("Nothing tuned for this device matches", device_at), std::string::npos);
  const auto rows_at = md.find("### Axis: sum f32 → f32, rows", device_at);
  const auto columns_at = md.find("### Axis: sum f32 → f32, columns", device_at);
  const auto max_at = md.find("### Axis: max f64 → f64, rows", device_at);
  ASSERT_NE(rows_at, std::string::npos);
  ASSERT_NE(columns_at, std::string::npos);
  ASSERT_NE(max_at, std::string::npos);
  EXPECT_LT(rows_at, columns_at);
  EXPECT_LT(columns_at, max_at);
  EXPECT_EQ(count_of(md, "#### GB/s heat map"), 3u);

  // The grid: R buckets down, outputs buckets across; "-" untuned, "none" tuned without a winner.
  const std::string grid = "| R ↓ outputs → | 2^14 | 2^15 | 2^16 |\n"
                           "| --- | ---: | ---: | ---: |\n"
                           "| 2^10 | " + gbps_text(AxisLayout::rows, Op::sum, 10, 14) + " | - | " +
                           gbps_text(AxisLayout::rows, Op::sum, 10, 16) + " |\n"
                           "| 2^11 | - | - | - |\n"
                           "| 2^12 | " + gbps_text(AxisLayout::rows, Op::sum, 12, 14) + " | - | none |\n";
  const auto grid_at = md.find(grid, rows_at);
  EXPECT_NE(grid_at, std::string::npos) << md.substr(rows_at, 1200);
  EXPECT_LT(grid_at, columns_at);
  EXPECT_NE(md.find("| R ↓ outputs → | 2^20 |\n| --- | ---: |\n| 2^8 | " +
                        gbps_text(AxisLayout::columns, Op::sum, 8, 20) + " |\n",
                    columns_at),
            std::string::npos);

  // The winners under it: config, shape, time, GB/s.
  const auto& w = axis_winner_at(AxisLayout::rows, Op::sum, 10, 14);
  EXPECT_NE(md.find("| 2^10 | 2^14 | `" + std::string(w.config) + "` | 1024 | 16384 | 0.02500 | " +
                        fixed_number(w.gbps(), 1) + " | " +
                        fixed_number(percent_of_peak(axis_device(), w.gbps()), 1) + " |",
                    rows_at),
            std::string::npos);
  EXPECT_NE(md.find("| 2^12 | 2^16 | no candidate passed | - | - | - | - | - |", rows_at), std::string::npos);
  // A config with Markdown and HTML specials is escaped, not put in a code span.
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  EXPECT_NE(md.find("columns:block=256,&lt;b&gt;\\|\\`x\\`,\"q\""), std::string::npos);
}

TEST(Report, CsvHasARowPerAxisWinner) {
  const auto& data = axis_report_data();
  const auto text = render_csv(data);
  const auto header = parse_csv(text).at(0);
  ASSERT_GE(header.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(header.end() - 5, header.end()),
            (std::vector<std::string>{"reduced_bucket", "outputs_bucket", "reduced", "outputs", "inner"}));
  const auto rows = csv_rows(text);  // every row has the header's field count
  std::size_t axis_rows = 0, flat_rows = 0;
  for (const auto& row : rows) {
    if (row.at("layout") == "flat") {
      ++flat_rows;
      EXPECT_EQ(row.at("reduced_bucket"), "");
      EXPECT_EQ(row.at("inner"), "");
      continue;
    }
    ++axis_rows;
    EXPECT_EQ(row.at("device_index"), "2");
    EXPECT_EQ(row.at("device_name"), kAxisDeviceName);
    const auto& w = axis_winner_at(row.at("layout") == "rows" ? AxisLayout::rows : AxisLayout::columns,
                                   row.at("op") == "sum" ? Op::sum : Op::max, std::stoi(row.at("reduced_bucket")),
                                   std::stoi(row.at("outputs_bucket")));
    EXPECT_EQ(row.at("dtype"), to_string(w.dtype));
    EXPECT_EQ(row.at("out_dtype"), to_string(w.dtype));
    EXPECT_EQ(row.at("config"), w.config);  // the hostile one parses back exactly
    EXPECT_EQ(std::stoull(row.at("reduced")), w.reduced);
    EXPECT_EQ(std::stoull(row.at("outputs")), w.outputs);
    EXPECT_EQ(std::stoull(row.at("inner")), w.inner);
    EXPECT_EQ(std::stod(row.at("median_ms")), w.median_ms);
    EXPECT_DOUBLE_EQ(std::stod(row.at("gbps")), w.gbps());
    EXPECT_DOUBLE_EQ(std::stod(row.at("percent_of_peak")), percent_of_peak(axis_device(), w.gbps()));
    EXPECT_EQ(row.at("winner"), "true");
    EXPECT_EQ(row.at("winner_deterministic"), "true");
    EXPECT_EQ(row.at("strategy_best"), "false");
    EXPECT_EQ(row.at("bucket"), "");
    EXPECT_EQ(row.at("bench_n"), "");
    EXPECT_FALSE(row.at("measurement_id").empty());
  }
  EXPECT_EQ(axis_rows, axis_fixture_winners().size());
  EXPECT_EQ(flat_rows, csv_rows(render_csv(fixture_data())).size());
}

TEST(Report, JsonListsTheAxisWinnersOfADevice) {
  const auto report = json::parse(render_json(axis_report_data()));
  const auto& devices = report.at("devices");
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_FALSE(devices[0].contains("axis_winners"));
  const auto& axis = devices[2].at("axis_winners");
  ASSERT_EQ(axis.size(), axis_fixture_winners().size());
  // In heat map order: sum f32 rows by (R bucket, outputs bucket), sum f32 columns, max f64 rows.
  const std::vector<std::tuple<std::string, int, int>> order = {
      {"rows", 10, 14}, {"rows", 10, 16}, {"rows", 12, 14}, {"columns", 8, 20}, {"rows", 20, 4}};
  for (std::size_t i = 0; i < axis.size(); ++i) {
    const auto& a = axis[i];
    EXPECT_EQ(std::tuple(a.at("layout").get<std::string>(), a.at("reduced_bucket").get<int>(),
                         a.at("outputs_bucket").get<int>()),
              order[i]);
    const auto& w = axis_winner_at(a.at("layout") == "rows" ? AxisLayout::rows : AxisLayout::columns,
                                   a.at("op") == "sum" ? Op::sum : Op::max, a.at("reduced_bucket").get<int>(),
                                   a.at("outputs_bucket").get<int>());
    EXPECT_EQ(a.at("dtype"), to_string(w.dtype));
    EXPECT_EQ(a.at("config"), w.config);
    EXPECT_EQ(a.at("median_ms").get<double>(), w.median_ms);
    EXPECT_DOUBLE_EQ(a.at("gbps").get<double>(), w.gbps());
    EXPECT_EQ(a.at("source"), "tuned");
    EXPECT_EQ(a.at("measurement").at("reduced").get<std::uint64_t>(), w.reduced);
    EXPECT_EQ(a.at("measurement").at("outputs").get<std::uint64_t>(), w.outputs);
    EXPECT_EQ(a.at("measurement").at("inner").get<std::uint64_t>(), w.inner);
  }
}

// A class that keeps a second winner for its shapes on the 16-byte grid: the JSON names
// it as grid_config (absent elsewhere), the markdown table's config cell shows both.
TEST(Report, AnAxisWinnerOnTheGridIsNamedInJsonAndTables) {
  ReportData data = axis_report_data();
  const std::string grid = "rows:block=512,group=8,vec=4,split=none,rows=1,unroll=4,sm=4";
  bool set = false;
  for (auto& axis : data.devices[2].axis)
    for (auto& w : axis.winners)
      if (axis.layout == AxisLayout::rows && w.winner.problem.reduced_bucket == 10 &&
          w.winner.problem.outputs_bucket == 14) {
        w.winner.grid_config = grid;
        set = true;
      }
  ASSERT_TRUE(set);
  const auto report = json::parse(render_json(data));
  int named = 0;
  for (const auto& a : report.at("devices")[2].at("axis_winners")) {
    const bool here = a.at("layout") == "rows" && a.at("reduced_bucket") == 10 && a.at("outputs_bucket") == 14;
    EXPECT_EQ(a.contains("grid_config"), here) << a.dump();
    if (here) {
      EXPECT_EQ(a.at("grid_config"), grid);
      ++named;
    }
  }
  EXPECT_EQ(named, 1);
  const std::string md = render_markdown(data);
  EXPECT_NE(md.find("; on the 16-byte grid: " + grid), std::string::npos) << md;
  EXPECT_EQ(render_markdown(axis_report_data()).find("16-byte grid"), std::string::npos);
}

// The <td> of one heat map cell, found by its buckets after `from`.
std::string heat_cell(const std::string& html, std::size_t from, int reduced_bucket, int outputs_bucket) {
  const std::string key = "data-reduced-bucket=\"" + std::to_string(reduced_bucket) + "\" data-outputs-bucket=\"" +
                          std::to_string(outputs_bucket) + "\"";
  const auto at = html.find(key, from);
  if (at == std::string::npos) return "";
  const auto begin = html.rfind("<td", at);
  return html.substr(begin, html.find("</td>", at) + 5 - begin);
}

TEST(Report, HtmlDrawsAColouredHeatMapWithConfigTooltips) {
  const auto& data = axis_report_data();
  const auto html = render_html(data);
  EXPECT_EQ(count_of(html, "<table class=\"heat\""), 3u);
  EXPECT_NE(html.find("table.heat td"), std::string::npos);  // the heat map style is added
  const auto rows_at = html.find("<h3>Axis: sum f32 → f32, rows</h3>");
  ASSERT_NE(rows_at, std::string::npos);
  EXPECT_NE(html.find("against the peak bandwidth (" + fixed_number(axis_device().peak_bandwidth_gbps(), 1) +
                      " GB/s)", rows_at),
            std::string::npos);

  const auto& w = axis_winner_at(AxisLayout::rows, Op::sum, 10, 14);
  const auto cell = heat_cell(html, rows_at, 10, 14);
  EXPECT_NE(cell.find("data-gbps=\"" + exact_number(w.gbps()) + "\""), std::string::npos) << cell;
  EXPECT_NE(cell.find(">" + fixed_number(w.gbps(), 1) + "</td>"), std::string::npos) << cell;
  EXPECT_NE(cell.find(std::string("title=\"R 2^10, outputs 2^14: ") + fixed_number(w.gbps(), 1) + " GB/s"),
            std::string::npos)
      << cell;
  EXPECT_NE(cell.find(std::string("\n") + w.config + "\""), std::string::npos) << cell;  // the config in the tooltip
  EXPECT_NE(cell.find("style=\"background:#"), std::string::npos) << cell;
  EXPECT_NE(heat_cell(html, rows_at, 11, 15).find("class=\"untuned\""), std::string::npos);
  EXPECT_NE(heat_cell(html, rows_at, 11, 15).find(">-</td>"), std::string::npos);
  EXPECT_NE(heat_cell(html, rows_at, 12, 16).find(">none</td>"), std::string::npos);
  // Above 55 % of the peak the text turns white; 2^10 x 2^14 is at 54.6 %, 2^12 x 2^14 at 83 %.
  EXPECT_EQ(cell.find("color:#fff"), std::string::npos) << cell;
  EXPECT_NE(heat_cell(html, rows_at, 12, 14).find("color:#fff"), std::string::npos);
  // The winners table under the map.
  EXPECT_NE(html.find("<code>rows:block=256,<wbr>group=4,", rows_at), std::string::npos);
  // Config text from the database is escaped, in the tooltip and in the table.
  EXPECT_EQ(html.find("<b>|"), std::string::npos);
  EXPECT_NE(html.find("columns:block=256,&lt;b&gt;|`x`,&quot;q&quot;\""), std::string::npos);
  // Self-contained still.
  for (const char* outside : {"http:", "https:", "src=", "<link", "@import", "url(", "<script"})
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
}

// A class the tuner filled in between tuned ones (a winner, no done mark) in the
// untuned cell 2^11 x 2^15 of the sum f32 rows map: marked with "*" in the heat maps
// (the note says what that means), in the tooltip, and as "filled" in JSON.
TEST(Report, FilledAxisClassesAreMarked) {
  auto database = db::Database::open_in_memory();
  store_axis_results(database);
  const std::string config = "rows:block=256,group=32,vec=4,split=none,rows=1,unroll=8,sm=4";
  store_filled_axis_class(database, {Op::sum, DType::f32, DType::f32, AxisLayout::rows, 11, 15}, config, 0.1);
  const ReportData data = load_report_data(database);
  const auto& rows = data.devices.at(0).axis.at(0);
  ASSERT_EQ(rows.layout, AxisLayout::rows);
  const auto* w = find_axis_winner(rows, 11, 15);
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->filled);
  EXPECT_FALSE(find_axis_winner(rows, 10, 14)->filled);
  const std::string gbps = fixed_number(2048.0 * 32768 * 4 / (0.1 * 1e6), 1);
  const auto md = render_markdown(data);
  EXPECT_NE(md.find("| 2^11 | - | " + gbps + "\\* | - |"), std::string::npos) << md;  // Markdown-escaped
  EXPECT_EQ(count_of(md, "* |"), 1u);  // the tuned classes carry no mark
  EXPECT_NE(md.find("\"\\*\": filled in between tuned classes"), std::string::npos);
  const auto html = render_html(data);
  const auto cell = heat_cell(html, 0, 11, 15);
  EXPECT_NE(cell.find("; filled in between tuned classes\n" + config), std::string::npos) << cell;
  EXPECT_NE(cell.find(">" + gbps + "*</td>"), std::string::npos) << cell;
  EXPECT_EQ(heat_cell(html, 0, 10, 14).find("filled"), std::string::npos);
  const auto json_report = json::parse(render_json(data));
  std::size_t filled = 0;
  for (const auto& a : json_report.at("devices")[0].at("axis_winners")) {
    const bool here = a.at("reduced_bucket") == 11 && a.at("outputs_bucket") == 15;
    EXPECT_EQ(a.at("filled").get<bool>(), here);
    filled += here;
  }
  EXPECT_EQ(filled, 1u);
}

TEST(Report, HtmlHeatMapScalesToTheFastestCellWithoutAPeak) {
  ReportData data = axis_report_data();
  auto& device = data.devices.back();
  device.key.memory_bus_bits = 0;
  device.key.memory_clock_khz = 0;
  const auto html = render_html(data);
  const auto rows_at = html.find("<h3>Axis: sum f32 → f32, rows</h3>");
  ASSERT_NE(rows_at, std::string::npos);
  EXPECT_NE(html.find("against the fastest cell", rows_at), std::string::npos);
  // 2^12 x 2^14 is the map's fastest: the darkest colour.
  EXPECT_NE(heat_cell(html, rows_at, 12, 14).find("style=\"background:#08306b;color:#fff\""), std::string::npos)
      << heat_cell(html, rows_at, 12, 14);
  EXPECT_EQ(heat_cell(html, rows_at, 10, 14).find("#08306b"), std::string::npos);
}

TEST(Report, RendersAnEmptyReport) {
  const ReportData empty{"x.db", {}};
  EXPECT_NE(render_markdown(empty).find("No tuned devices match"), std::string::npos);
  EXPECT_EQ(csv_rows(render_csv(empty)).size(), 0u);
  EXPECT_TRUE(json::parse(render_json(empty)).at("devices").empty());
  EXPECT_NE(render_html(empty).find("No tuned devices match"), std::string::npos);
}

TEST(Report, ParsesFormatNamesAndFileExtensions) {
  EXPECT_EQ(parse_report_format("md"), ReportFormat::markdown);
  EXPECT_EQ(parse_report_format("markdown"), ReportFormat::markdown);
  EXPECT_EQ(parse_report_format("html"), ReportFormat::html);
  EXPECT_FALSE(parse_report_format("xml").has_value());
  EXPECT_EQ(report_format_for_file("out/report.HTML"), ReportFormat::html);
  EXPECT_EQ(report_format_for_file("r.htm"), ReportFormat::html);
  EXPECT_EQ(report_format_for_file("r.csv"), ReportFormat::csv);
  EXPECT_FALSE(report_format_for_file("report").has_value());
}

}  // namespace
}  // namespace reduce_tune::report
