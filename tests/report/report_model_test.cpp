// The report model: what the loader reads from the fixture database, bench comparisons
// and the text helpers.
#include <algorithm>
#include <cmath>
#include <map>

#include "reduce_tune/config.h"
#include "report_test_support.h"
#include "reduce_tune/report/report_loader.h"
#include "reduce_tune/report/report_render.h"
#include "reduce_tune/report/report_tables.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

using namespace testing;

const ProblemReport* find_problem(const DeviceReport& device, Op op, DType dtype) {
  for (const auto& p : device.problems)
    if (p.problem.op == op && p.problem.dtype == dtype) return &p;
  return nullptr;
}

TEST(Report, LoadsEveryDeviceProblemAndBucketOfTheFixture) {
  const auto database = open_fixture();
  const auto data = load_report_data(database);
  ASSERT_EQ(data.devices.size(), 2u);
  EXPECT_EQ(data.devices[0].index, 0u);
  EXPECT_EQ(data.devices[0].key.name, kHostileName);
  EXPECT_EQ(data.devices[1].key.name, kPlainName);
  const auto& gpu = data.devices[0];
  ASSERT_EQ(gpu.problems.size(), 3u);
  EXPECT_EQ(gpu.problems[0].problem, (db::ProblemClass{Op::sum, DType::i32, DType::i64, Layout{}}));
  EXPECT_EQ(gpu.problems[1].problem, (db::ProblemClass{Op::sum, DType::f32, DType::f32, Layout{}}));
  EXPECT_EQ(gpu.problems[2].problem, (db::ProblemClass{Op::max, DType::f64, DType::f64, Layout{}}));
  std::vector<int> buckets;
  for (const auto& b : gpu.problems[1].buckets) buckets.push_back(b.bucket);
  EXPECT_EQ(buckets, (std::vector<int>{10, 14, 18, 22, 26}));
  // The latest bench run per size: 4 implementations at each of two sizes.
  ASSERT_EQ(gpu.bench.size(), 8u);
  for (const auto& row : gpu.bench) {
    EXPECT_EQ(db::ProblemClass::of(row.problem), gpu.problems[1].problem);
    EXPECT_TRUE(row.problem.n == kBenchSmallN || row.problem.n == kBenchLargeN) << row.problem.n;
  }
  EXPECT_TRUE(data.devices[1].bench.empty());
}

TEST(Report, ReadsTheLatestBenchRunsSpeedupsFromTheDatabase) {
  const auto database = open_fixture();
  const auto data = load_report_data(database);
  const auto& gpu = data.devices[0];
  const auto* problem = find_problem(gpu, Op::sum, DType::f32);
  ASSERT_NE(problem, nullptr);
  std::map<int, const BucketReport*> buckets;
  for (const auto& b : problem->buckets) buckets[b.bucket] = &b;

  // Bucket 22: both runs measured it; the newer one counts.
  const auto small = compare_with_bench(gpu, *problem, *buckets.at(22));
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->n, kBenchSmallN);
  EXPECT_EQ(small->tuned_ms, kBenchSmall.tuned);
  EXPECT_EQ(small->cub_ms, kBenchSmall.cub);
  EXPECT_DOUBLE_EQ(small->speedup_over_cub().value(), kBenchSmall.cub / kBenchSmall.tuned);
  EXPECT_DOUBLE_EQ(small->speedup_over_default().value(), kBenchSmall.default_config / kBenchSmall.tuned);
  EXPECT_DOUBLE_EQ(small->speedup_over_classic_best().value(), kBenchSmall.classic_best / kBenchSmall.tuned);
  // Bucket 26: only the older run measured it.
  const auto large = compare_with_bench(gpu, *problem, *buckets.at(26));
  ASSERT_TRUE(large.has_value());
  EXPECT_EQ(large->n, kBenchLargeN);
  EXPECT_DOUBLE_EQ(large->speedup_over_cub().value(), kBenchLarge.cub / kBenchLarge.tuned);
  EXPECT_DOUBLE_EQ(large->speedup_over_classic_best().value(), kBenchLarge.classic_best / kBenchLarge.tuned);
  // No bench row in the other buckets.
  EXPECT_FALSE(compare_with_bench(gpu, *problem, *buckets.at(18)).has_value());

  // The rows carry their config and the bench's own fraction of peak.
  const auto cub = bench_rows(gpu, problem->problem, kBenchCub);
  ASSERT_EQ(cub.size(), 2u);
  EXPECT_EQ(cub[0].config, kCubCall);
  EXPECT_DOUBLE_EQ(cub[0].peak_fraction, cub[0].gbps / gpu.key.peak_bandwidth_gbps());
  const auto tuned = bench_rows(gpu, problem->problem, kBenchTuned);
  ASSERT_EQ(tuned.size(), 2u);
  EXPECT_TRUE(parse_config(tuned[0].config).config.has_value()) << tuned[0].config;
  const auto sizes = bench_sizes(gpu, problem->problem);
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0].n, kBenchSmallN);
  ASSERT_NE(sizes[0].classic_best, nullptr);
  EXPECT_EQ(sizes[0].classic_best->median_ms, kBenchSmall.classic_best);
  EXPECT_DOUBLE_EQ(sizes[1].comparison().speedup_over_default().value(),
                   kBenchLarge.default_config / kBenchLarge.tuned);
}

TEST(Report, ShowsProblemsWithOnlyBenchRowsAndFiltersBenchRows) {
  auto database = db::Database::open_in_memory();
  DeviceKey device;
  device.name = "GPU";
  device.uuid = "GPU-bench-only";
  device.memory_bus_bits = 5120;
  device.memory_clock_khz = 2'619'000;
  const db::ProblemClass min_i32{Op::min, DType::i32, DType::i32, Layout{}};
  const db::ProblemClass sum_f64{Op::sum, DType::f64, DType::f64, Layout{}};
  std::vector<db::BenchResult> rows;
  for (const auto& problem : {min_i32, sum_f64})
    for (const auto implementation : db::kBenchImplementations) {
      db::BenchResult r;
      r.problem = problem.with_size(1u << 20);
      r.implementation = std::string(implementation);
      r.config = implementation == db::kBenchCub ? "cub::DeviceReduce::Min" : "warp_shuffle";
      r.median_ms = implementation == db::kBenchTuned ? 0.01 : 0.02;
      r.repetitions = 10;
      r.run_id = "only";
      rows.push_back(r);
    }
  database.store_bench_results(device, rows);

  const auto data = load_report_data(database);
  ASSERT_EQ(data.devices.size(), 1u);
  ASSERT_EQ(data.devices[0].problems.size(), 2u);  // no measurements, yet shown
  EXPECT_EQ(data.devices[0].problems[0].problem, sum_f64);  // in (op, dtype) order
  EXPECT_EQ(data.devices[0].problems[1].problem, min_i32);
  EXPECT_TRUE(data.devices[0].problems[1].buckets.empty());
  const auto comparison = bench_sizes(data.devices[0], min_i32).at(0).comparison();
  EXPECT_DOUBLE_EQ(comparison.speedup_over_cub().value(), 2.0);
  // Every format renders a problem without buckets, with its bench table.
  for (const auto format : kAllReportFormats) EXPECT_FALSE(render_report(data, format).empty());
  EXPECT_NE(render_markdown(data).find("CUB: cub::DeviceReduce::Min."), std::string::npos);
  EXPECT_EQ(data.devices[0].bench.size(), 8u);

  ReportFilter filter;
  filter.dtypes = {DType::f64};
  const auto filtered = load_report_data(database, filter);
  ASSERT_EQ(filtered.devices[0].problems.size(), 1u);
  EXPECT_EQ(filtered.devices[0].problems[0].problem, sum_f64);
  ASSERT_EQ(filtered.devices[0].bench.size(), 4u);
  for (const auto& row : filtered.devices[0].bench) EXPECT_EQ(row.problem.dtype, DType::f64);
}

TEST(Report, CountsCandidatesPerStatusWithExampleDetail) {
  const auto database = open_fixture();
  const auto data = load_report_data(database);
  const auto* problem = find_problem(data.devices[0], Op::sum, DType::f32);
  ASSERT_NE(problem, nullptr);
  const auto& bucket = problem->buckets.front();  // 2^10: 20 ok + 4 failed
  const auto stored = database.measurements(database.find_device(kHostileUuid).value(), problem->problem, 10);
  EXPECT_EQ(bucket.candidates, static_cast<std::int64_t>(stored.size()));
  ASSERT_EQ(bucket.statuses.size(), 5u);
  std::int64_t total = 0;
  for (const auto& s : bucket.statuses) {
    total += s.count;
    const auto expected = std::count_if(stored.begin(), stored.end(), [&](const db::Measurement& m) { return m.status == s.status; });
    EXPECT_EQ(s.count, expected) << to_string(s.status);
    if (s.status != db::MeasurementStatus::ok) {
      EXPECT_EQ(s.count, 1) << to_string(s.status);
      EXPECT_FALSE(s.example_detail.empty()) << to_string(s.status);
    }
  }
  EXPECT_EQ(total, bucket.candidates);
  EXPECT_NE(bucket.statuses[1].example_detail.find("too many registers"), std::string::npos);
}

TEST(Report, KeepsEachStrategysFastestOkMeasurementInLineageOrder) {
  const auto database = open_fixture();
  const auto data = load_report_data(database);
  const auto* problem = find_problem(data.devices[0], Op::sum, DType::f32);
  ASSERT_NE(problem, nullptr);
  const auto device_id = database.find_device(kHostileUuid).value();
  for (const auto& bucket : problem->buckets) {
    ASSERT_EQ(bucket.strategy_best.size(), std::size(kAllStrategies));
    for (std::size_t i = 0; i < bucket.strategy_best.size(); ++i) {
      const auto& best = bucket.strategy_best[i];
      EXPECT_EQ(best.config.strategy, kAllStrategies[i]);
      EXPECT_EQ(best.status, db::MeasurementStatus::ok);
      for (const auto& m : database.measurements(device_id, problem->problem, bucket.bucket)) {
        if (m.status == db::MeasurementStatus::ok && m.config.strategy == best.config.strategy) {
          EXPECT_LE(best.median_ms, m.median_ms);
        }
      }
    }
  }
}

TEST(Report, AttachesTheWinningMeasurementToEachWinner) {
  const auto database = open_fixture();
  const auto data = load_report_data(database);
  const auto* problem = find_problem(data.devices[0], Op::sum, DType::f32);
  ASSERT_NE(problem, nullptr);
  const auto& large = problem->buckets.back();  // 2^26: a faster atomic (non-deterministic) config
  ASSERT_EQ(large.winners.size(), 2u);
  EXPECT_EQ(large.winners[0].winner.determinism, db::Determinism::deterministic);
  EXPECT_EQ(large.winners[1].winner.determinism, db::Determinism::nondeterministic);
  for (const auto& w : large.winners) {
    ASSERT_TRUE(w.measurement.has_value());
    EXPECT_EQ(w.measurement->config, w.winner.config);
    EXPECT_EQ(w.measurement->median_ms, w.winner.median_ms);
  }
  EXPECT_EQ(primary_winner(large), &large.winners[0]);
}

TEST(Report, ShowsABucketWhereEveryCandidateFailed) {
  const auto database = open_fixture();
  const auto data = load_report_data(database);
  const auto& a100 = data.devices[1];
  ASSERT_EQ(a100.problems.size(), 1u);
  const auto& first = a100.problems[0].buckets.front();
  EXPECT_EQ(first.bucket, 10);
  EXPECT_TRUE(first.winners.empty());
  EXPECT_TRUE(first.strategy_best.empty());
  EXPECT_EQ(first.candidates, 1);
}

TEST(Report, FiltersByDeviceOpAndDtype) {
  const auto database = open_fixture();
  ReportFilter filter;
  filter.device = database.find_device(kHostileUuid);
  filter.ops = {Op::sum};
  filter.dtypes = {DType::f32};
  const auto data = load_report_data(database, filter);
  ASSERT_EQ(data.devices.size(), 1u);
  EXPECT_EQ(data.devices[0].index, 0u);
  ASSERT_EQ(data.devices[0].problems.size(), 1u);
  EXPECT_EQ(data.devices[0].problems[0].problem.op, Op::sum);
  EXPECT_EQ(data.devices[0].problems[0].problem.dtype, DType::f32);
  filter.ops = {Op::min};
  EXPECT_TRUE(load_report_data(database, filter).devices[0].problems.empty());
}

// Axis results (issue 12): one heat map per (op, dtype, out dtype, layout).
ReportData axis_data(const ReportFilter& filter = {}) {
  auto database = db::Database::open_in_memory();
  store_axis_results(database);
  return load_report_data(database, filter);
}

TEST(Report, LoadsAxisWinnersIntoAHeatMapPerLayout) {
  const auto data = axis_data();
  ASSERT_EQ(data.devices.size(), 1u);
  const auto& device = data.devices[0];
  EXPECT_EQ(device.key.name, kAxisDeviceName);
  EXPECT_TRUE(device.problems.empty());
  ASSERT_EQ(device.axis.size(), 3u);  // by (op, dtype, out dtype, layout)
  const auto& rows = device.axis[0];
  const auto& columns = device.axis[1];
  const auto& max_rows = device.axis[2];
  EXPECT_EQ(rows.op, Op::sum);
  EXPECT_EQ(rows.layout, AxisLayout::rows);
  EXPECT_EQ(columns.op, Op::sum);
  EXPECT_EQ(columns.layout, AxisLayout::columns);
  EXPECT_EQ(max_rows.op, Op::max);
  EXPECT_EQ(max_rows.dtype, DType::f64);
  EXPECT_EQ(max_rows.out_dtype, DType::f64);
  ASSERT_EQ(rows.winners.size(), 3u);
  ASSERT_EQ(columns.winners.size(), 1u);
  ASSERT_EQ(max_rows.winners.size(), 1u);
  // The class tuned without a winner is kept apart; every other mark has a winner.
  EXPECT_EQ(rows.without_winner, (std::vector<std::pair<int, int>>{{kAxisFailedReducedBucket, kAxisFailedOutputsBucket}}));
  EXPECT_TRUE(columns.without_winner.empty());

  // Every stored winner is in its map's cell, with the measurement that chose it.
  std::size_t found = 0;
  for (const auto& expected : axis_fixture_winners())
    for (const auto& axis : device.axis) {
      if (axis.op != expected.op || axis.layout != expected.layout) continue;
      const auto* w = find_axis_winner(axis, expected.reduced_bucket, expected.outputs_bucket);
      ASSERT_NE(w, nullptr) << expected.config;
      ++found;
      EXPECT_EQ(w->winner.problem, expected.problem());
      EXPECT_EQ(w->winner.config, expected.config);
      EXPECT_EQ(w->winner.median_ms, expected.median_ms);
      ASSERT_TRUE(w->measurement.has_value());
      EXPECT_EQ(w->measurement->config, expected.config);
      EXPECT_EQ(w->measurement->reduced, expected.reduced);
      EXPECT_EQ(w->measurement->outputs, expected.outputs);
      EXPECT_EQ(w->measurement->inner, expected.inner);
      EXPECT_DOUBLE_EQ(axis_gbps(*w), expected.gbps());
    }
  EXPECT_EQ(found, axis_fixture_winners().size());
  // Winners are ordered by (R bucket, outputs bucket).
  EXPECT_EQ(rows.winners[0].winner.problem.outputs_bucket, 14);
  EXPECT_EQ(rows.winners[1].winner.problem.outputs_bucket, 16);
  EXPECT_EQ(rows.winners[2].winner.problem.reduced_bucket, 12);
  // Cells without a winner.
  EXPECT_EQ(find_axis_winner(rows, 11, 15), nullptr);
  EXPECT_EQ(find_axis_winner(rows, kAxisFailedReducedBucket, kAxisFailedOutputsBucket), nullptr);
  EXPECT_TRUE(axis_class_without_winner(rows, kAxisFailedReducedBucket, kAxisFailedOutputsBucket));
  EXPECT_FALSE(axis_class_without_winner(rows, 11, 15));
  EXPECT_FALSE(axis_class_without_winner(rows, 10, 14));
}

TEST(Report, AxisGridSpansEveryBucketBetweenTheTunedOnes) {
  const auto data = axis_data();
  const auto range = axis_grid_range(data.devices[0].axis[0]);
  EXPECT_EQ(range.reduced_buckets, (std::vector<int>{10, 11, 12}));
  EXPECT_EQ(range.outputs_buckets, (std::vector<int>{14, 15, 16}));
  const auto single = axis_grid_range(data.devices[0].axis[1]);
  EXPECT_EQ(single.reduced_buckets, (std::vector<int>{8}));
  EXPECT_EQ(single.outputs_buckets, (std::vector<int>{20}));
  EXPECT_TRUE(axis_grid_range(AxisReport{}).reduced_buckets.empty());
}

TEST(Report, AxisHeatTablePlacesEachWinnerInItsCell) {
  const auto data = axis_data();
  const auto& rows = data.devices[0].axis[0];
  const auto table = axis_heat_table(rows);
  EXPECT_EQ(table.header, (std::vector<std::string>{"R ↓ outputs →", "2^14", "2^15", "2^16"}));
  ASSERT_EQ(table.rows.size(), 3u);
  auto gbps_of = [](int r, int o) {
    for (const auto& w : axis_fixture_winners())
      if (w.layout == AxisLayout::rows && w.op == Op::sum && w.reduced_bucket == r && w.outputs_bucket == o)
        return fixed_number(w.gbps(), 1);
    return std::string("?");
  };
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : table.rows) {
    cells.emplace_back();
    for (const auto& cell : row) cells.back().push_back(cell.text);
  }
  EXPECT_EQ(cells, (std::vector<std::vector<std::string>>{
                       {"2^10", gbps_of(10, 14), "-", gbps_of(10, 16)},
                       {"2^11", "-", "-", "-"},
                       {"2^12", gbps_of(12, 14), "-", "none"},
                   }));

  // The winners table: one row per tuned class, the failed one included.
  const auto winners = axis_winners_table(data.devices[0], rows);
  ASSERT_EQ(winners.rows.size(), 4u);
  EXPECT_EQ(winners.rows[0][2].text, axis_fixture_winners()[0].config);
  EXPECT_TRUE(winners.rows[0][2].code);
  EXPECT_EQ(winners.rows[3][0].text, "2^12");
  EXPECT_EQ(winners.rows[3][1].text, "2^16");
  EXPECT_EQ(winners.rows[3][2].text, "no candidate passed");
  // Columns show the inner extent.
  const auto columns = axis_winners_table(data.devices[0], data.devices[0].axis[1]);
  EXPECT_NE(std::find(columns.header.begin(), columns.header.end(), "inner"), columns.header.end());
  EXPECT_EQ(std::find(winners.header.begin(), winners.header.end(), "inner"), winners.header.end());
}

TEST(Report, AxisGbpsFallsBackToTheMeasurement) {
  ReportAxisWinner w;
  w.winner.median_ms = 0.5;
  w.winner.gbps = 123.0;
  EXPECT_EQ(axis_gbps(w), 123.0);
  w.winner.gbps = 0;
  EXPECT_TRUE(std::isnan(axis_gbps(w)));  // nothing to compute it from
  db::AxisMeasurement m;
  m.dtype = DType::f64;
  m.reduced = 1000;
  m.outputs = 500;
  m.gbps = 7.5;
  w.measurement = m;
  EXPECT_EQ(axis_gbps(w), 7.5);
  w.measurement->gbps = NAN;
  EXPECT_DOUBLE_EQ(axis_gbps(w), 1000.0 * 500 * 8 / (0.5 * 1e6));
}

TEST(Report, FiltersAxisWinnersByOpAndDtype) {
  ReportFilter filter;
  filter.ops = {Op::max};
  auto data = axis_data(filter);
  ASSERT_EQ(data.devices[0].axis.size(), 1u);
  EXPECT_EQ(data.devices[0].axis[0].op, Op::max);
  filter.ops = {};
  filter.dtypes = {DType::f32};
  data = axis_data(filter);
  ASSERT_EQ(data.devices[0].axis.size(), 2u);
  for (const auto& axis : data.devices[0].axis) EXPECT_EQ(axis.dtype, DType::f32);
  filter.dtypes = {DType::i32};
  EXPECT_TRUE(axis_data(filter).devices[0].axis.empty());
}

TEST(Report, TheFixtureHasNoAxisResults) {
  const auto database = open_fixture();
  for (const auto& device : load_report_data(database).devices) EXPECT_TRUE(device.axis.empty());
}

TEST(Report, ComparesABucketWithBenchRowsOfItsSize) {
  DeviceReport device;
  ProblemReport problem;
  problem.problem = {Op::sum, DType::f32, DType::f32, Layout{}};
  BucketReport bucket;
  bucket.bucket = 20;
  db::Winner w;
  w.median_ms = 0.5;
  bucket.winners.push_back({w, std::nullopt});
  EXPECT_FALSE(compare_with_bench(device, problem, bucket).has_value());

  const auto key = problem.problem.with_size(1u << 20);
  device.bench = {bench_row(key, "cub", 0.3, 0), bench_row(key, "default", 0.45, 0), bench_row(key, "tuned", 0.2, 0),
                  bench_row(problem.problem.with_size(1u << 22), "cub", 9, 0)};
  const auto comparison = compare_with_bench(device, problem, bucket);
  ASSERT_TRUE(comparison.has_value());
  EXPECT_EQ(comparison->n, 1u << 20);
  EXPECT_DOUBLE_EQ(comparison->speedup_over_cub().value(), 1.5);
  EXPECT_DOUBLE_EQ(comparison->speedup_over_default().value(), 2.25);
  EXPECT_FALSE(comparison->speedup_over_classic_best().has_value());

  // Without a bench "tuned" row the winner's stored time stands in.
  device.bench.erase(device.bench.begin() + 2);
  EXPECT_DOUBLE_EQ(compare_with_bench(device, problem, bucket)->speedup_over_cub().value(), 0.6);
}

TEST(Report, PercentOfPeakUsesTheDevicesPeakBandwidth) {
  DeviceKey key;
  key.memory_bus_bits = 6144;
  key.memory_clock_khz = 3'201'000;
  EXPECT_DOUBLE_EQ(percent_of_peak(key, key.peak_bandwidth_gbps() / 2), 50.0);
  EXPECT_TRUE(std::isnan(percent_of_peak(DeviceKey{}, 100)));
}

TEST(Report, CsvFieldQuotesPerRfc4180) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(parse_csv(csv_field("a,\"b\"\r\nc") + ",x\r\n"), (std::vector<std::vector<std::string>>{{"a,\"b\"\r\nc", "x"}}));
}

TEST(Report, EscapesHtmlAndMarkdownSpecials) {
  EXPECT_EQ(html_escape("<a href='x'>\"&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(markdown_escape("a|b <i>*x*</i>\nc"), "a\\|b &lt;i&gt;\\*x\\*&lt;/i&gt; c");
}

TEST(Report, FormatsNumbers) {
  for (const double v : {0.1, 1.0 / 3.0, 4915.2, 1e-7})
    EXPECT_EQ(std::stod(exact_number(v)), v);
  EXPECT_EQ(exact_number(NAN), "");
  EXPECT_EQ(time_ms(0.0123456), "0.01235");
  EXPECT_EQ(time_ms(12.3456), "12.35");
  EXPECT_EQ(time_ms(1234.6), "1235");
  EXPECT_EQ(size_label(1u << 20), "1M");
  EXPECT_EQ(size_label(3u << 10), "3K");
  EXPECT_EQ(size_label(1000), "1000");
  EXPECT_EQ(cuda_version_label(12080), "12.8");
}

}  // namespace
}  // namespace reduce_tune::report
