// Writes tests/assets/report/fixture.db, the database the report tests read: two devices
// (the first with a name full of HTML and CSV specials), several problems and buckets,
// every strategy of the classic lineage, failed candidates of every status, and two bench
// runs for the first device's f32 sum. The times follow a simple bandwidth model, so
// charts look like real ones. Run it only to
// recreate the fixture:
//   cmake --build build-report --target make_report_fixture &&
//     ./build-report/tests/report/make_report_fixture tests/assets/report/fixture.db
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reduce_tune/config.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"

namespace {

using namespace reduce_tune;
using db::MeasurementStatus;

const db::Timestamp kTime{std::chrono::microseconds(1'700'000'000'000'000)};  // fixed: reproducible bytes

DeviceKey hostile_device() {
  DeviceKey d;
  d.name = "<script>alert(\"x\")</script> & GPU";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 60 << 20;
  d.memory_bus_bits = 6144;
  d.memory_clock_khz = 3'201'000;
  d.uuid = "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  d.driver_version = 13000;
  d.runtime_version = 13000;
  return d;
}

DeviceKey plain_device() {
  DeviceKey d;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.cc_major = 8;
  d.cc_minor = 0;
  d.sm_count = 108;
  d.l2_bytes = 40 << 20;
  d.memory_bus_bits = 5120;
  d.memory_clock_khz = 1'593'000;
  d.uuid = "GPU-a1a1a1a1-b2b2-c3c3-d4d4-e5e5e5e5e5e5";
  d.driver_version = 12080;
  d.runtime_version = 12040;
  return d;
}

// Fraction of the peak each strategy reaches on large inputs: the lineage's steps.
double efficiency(Strategy s) {
  switch (s) {
    case Strategy::neighbored: return 0.16;
    case Strategy::neighbored_less: return 0.25;
    case Strategy::interleaved: return 0.34;
    case Strategy::first_add: return 0.50;
    case Strategy::unroll_blocks: return 0.66;
    case Strategy::unroll_last_warp: return 0.72;
    case Strategy::complete_unroll: return 0.77;
    case Strategy::multi_element: return 0.83;
    case Strategy::warp_shuffle: return 0.87;
    case Strategy::vectorized: return 0.91;
  }
  return 0.1;
}

db::Measurement measured(const DeviceKey& device, const db::ProblemClass& problem, std::uint64_t n,
                         const ReduceConfig& config, double slowdown) {
  const double bytes = static_cast<double>(n * size_of(problem.dtype));
  const double launch_ms = config.passes == Passes::two_pass ? 0.0065 : 0.0045;
  const double ms = (launch_ms + bytes / (efficiency(config.strategy) * device.peak_bandwidth_gbps() * 1e6)) * slowdown;
  db::Measurement m;
  m.problem = problem.with_size(n);
  m.config = config;
  m.status = MeasurementStatus::ok;
  m.median_ms = ms;
  m.spread = 0.004 + 0.001 * static_cast<double>(static_cast<int>(config.strategy) % 4);
  m.repetitions = 25;
  m.gbps = bytes / (ms * 1e6);
  m.tool_version = "0.1.0";
  m.created_at = kTime;
  return m;
}

db::Measurement failed(const db::ProblemClass& problem, std::uint64_t n, const ReduceConfig& config,
                       MeasurementStatus status, std::string detail) {
  db::Measurement m;
  m.problem = problem.with_size(n);
  m.config = config;
  m.status = status;
  m.median_ms = NAN;
  m.spread = NAN;
  m.gbps = NAN;
  m.tool_version = "0.1.0";
  m.created_at = kTime;
  m.detail = std::move(detail);
  return m;
}

// One bucket: two configs of every listed strategy, a faster non-deterministic
// vectorized config for float problems, and one failed candidate of every status.
db::BucketResult make_bucket(const DeviceKey& device, const db::ProblemClass& problem, int bucket,
                             int strategy_count, bool failures_only = false) {
  db::BucketResult r;
  r.device = device;
  r.problem = problem;
  r.bucket = bucket;
  r.tool_version = "0.1.0";
  r.created_at = kTime;
  const std::uint64_t n = (std::uint64_t{3} << bucket) / 2;  // 1.5 * 2^bucket
  if (!failures_only) {
    for (int i = 0; i < strategy_count; ++i) {
      const Strategy s = kAllStrategies[i];
      ReduceConfig base = default_config(s);
      r.measurements.push_back(measured(device, problem, n, base, 1.0 + 0.01 * (bucket % 3)));
      ReduceConfig wide = base;
      wide.block_threads = base.block_threads == 512 ? 1024 : 512;
      r.measurements.push_back(measured(device, problem, n, wide, bucket % 2 == 0 ? 0.97 : 1.04));
    }
    if (is_floating(problem.dtype) && strategy_count == 10 && bucket >= 18) {
      ReduceConfig atomic = default_config(Strategy::vectorized);
      atomic.passes = Passes::single_pass_atomic;
      atomic.items_per_thread = 8;
      r.measurements.push_back(measured(device, problem, n, atomic, 0.95));
    }
  }
  ReduceConfig too_big = default_config(Strategy::complete_unroll);
  too_big.block_threads = 2048;
  r.measurements.push_back(failed(problem, n, too_big, MeasurementStatus::skipped,
                                  "block_threads 2048 exceeds the device limit of 1024"));
  if (!failures_only) {
    ReduceConfig huge = default_config(Strategy::vectorized);
    huge.items_per_thread = 64;
    huge.unroll = 8;
    r.measurements.push_back(failed(problem, n, huge, MeasurementStatus::compile_failed,
                                    "NVRTC: error: too many registers (\"reduce_vectorized<float, 64>\")\n"
                                    "  detected during instantiation of \"agent\" at line 42"));
    ReduceConfig smem = default_config(Strategy::interleaved);
    smem.block_threads = 1024;
    smem.items_per_thread = 16;
    r.measurements.push_back(failed(problem, n, smem, MeasurementStatus::launch_failed,
                                    "cudaErrorLaunchOutOfResources: too many resources requested for launch"));
    ReduceConfig racy = default_config(Strategy::unroll_last_warp);
    racy.warp_reduce = WarpReduce::smem;
    racy.block_threads = 64;
    r.measurements.push_back(failed(problem, n, racy, MeasurementStatus::wrong_result,
                                    "got 1.5e+07, reference 1.6777216e+07 (|diff| > 1e-05 * n * max|x|), <race?>"));
  }

  // Winners: the fastest deterministic and, when faster still, the fastest of all.
  std::optional<std::size_t> best_det, best_any;
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    const auto& m = r.measurements[i];
    if (m.status != MeasurementStatus::ok) continue;
    if (!best_any || m.median_ms < r.measurements[*best_any].median_ms) best_any = i;
    if (m.config.passes != Passes::single_pass_atomic &&
        (!best_det || m.median_ms < r.measurements[*best_det].median_ms))
      best_det = i;
  }
  if (best_det) r.winners.push_back({db::Determinism::deterministic, *best_det});
  if (best_any && best_any != best_det) r.winners.push_back({db::Determinism::nondeterministic, *best_any});
  return r;
}

// Bench rows for one problem of a device: an older run ("bench-1") at 1.5 * 2^22 and
// 1.5 * 2^26, and a newer one ("bench-2") at 1.5 * 2^22 only, so a report must take the
// newer run where both ran and the older one elsewhere. The times are fixed numbers
// (the speedups the tests expect are their ratios).
struct BenchTimes {
  double tuned, default_config, cub, classic_best;
};

std::vector<db::BenchResult> bench_run(const DeviceKey& device, const db::ProblemClass& problem, std::uint64_t n,
                                       const std::string& run_id, db::Timestamp at, const BenchTimes& times) {
  ReduceConfig tuned_config = default_config(Strategy::vectorized);  // what a tuned winner looks like
  tuned_config.block_threads = 512;
  tuned_config.items_per_thread = 8;
  const std::string tuned = to_string(tuned_config);
  const std::string builtin = to_string(ReduceConfig{});
  const std::string classic = to_string(default_config(Strategy::multi_element));
  const std::pair<std::string_view, std::pair<std::string, double>> rows[] = {
      {db::kBenchTuned, {tuned, times.tuned}},
      {db::kBenchDefault, {builtin, times.default_config}},
      {db::kBenchCub, {"cub::DeviceReduce::Sum", times.cub}},
      {db::kBenchClassicBest, {classic, times.classic_best}},
  };
  std::vector<db::BenchResult> out;
  for (const auto& [implementation, config_and_ms] : rows) {
    db::BenchResult r;
    r.problem = problem.with_size(n);
    r.implementation = std::string(implementation);
    r.config = config_and_ms.first;
    r.median_ms = config_and_ms.second;
    r.spread = 0.006;
    r.repetitions = 50;
    r.gbps = static_cast<double>(n * size_of(problem.dtype)) / (r.median_ms * 1e6);
    r.peak_gbps = device.peak_bandwidth_gbps();
    r.peak_fraction = r.gbps / r.peak_gbps;
    r.run_id = run_id;
    r.tool_version = "0.1.0";
    r.created_at = at;
    out.push_back(std::move(r));
  }
  return out;
}

void store_bench_runs(db::Database& database, const DeviceKey& device, const db::ProblemClass& problem) {
  const std::uint64_t n22 = (std::uint64_t{3} << 22) / 2, n26 = (std::uint64_t{3} << 26) / 2;
  const db::Timestamp first = kTime + std::chrono::hours(1), second = kTime + std::chrono::hours(2);
  auto run1 = bench_run(device, problem, n22, "bench-1", first, {0.0130, 0.0156, 0.0143, 0.0208});
  for (auto& r : bench_run(device, problem, n26, "bench-1", first, {0.0905, 0.0990, 0.0950, 0.1040}))
    run1.push_back(std::move(r));
  database.store_bench_results(device, run1);
  database.store_bench_results(device,
                               bench_run(device, problem, n22, "bench-2", second, {0.0125, 0.0150, 0.0140, 0.0200}));
}

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK) throw Error(std::string(what) + ": " + sqlite3_errmsg(db));
}

// The tuning database runs in WAL mode; the fixture uses a rollback journal so that
// opening it read-only in the source tree creates no -wal/-shm files beside it.
void compact(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open(path.string().c_str(), &db);
  try {
    check(rc, db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode=DELETE; VACUUM;", nullptr, nullptr, nullptr), db, "vacuum");
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  sqlite3_close(db);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_report_fixture OUTPUT.db\n";
    return 2;
  }
  const std::filesystem::path path = argv[1];
  try {
    std::filesystem::remove(path);
    {
      auto database = db::Database::open(path);
      const db::ProblemClass sum_f32{Op::sum, DType::f32, DType::f32, Layout{}};
      const db::ProblemClass sum_i32_i64{Op::sum, DType::i32, DType::i64, Layout{}};
      const db::ProblemClass max_f64{Op::max, DType::f64, DType::f64, Layout{}};
      const auto gpu = hostile_device();
      for (const int b : {10, 14, 18, 22, 26}) database.store_bucket(make_bucket(gpu, sum_f32, b, 10));
      for (const int b : {12, 20, 24}) database.store_bucket(make_bucket(gpu, sum_i32_i64, b, 10));
      for (const int b : {16, 24}) database.store_bucket(make_bucket(gpu, max_f64, b, 10));
      store_bench_runs(database, gpu, sum_f32);
      const auto a100 = plain_device();
      database.store_bucket(make_bucket(a100, sum_f32, 10, 0, true));
      for (const int b : {20, 24}) database.store_bucket(make_bucket(a100, sum_f32, b, 4));
    }
    compact(path);
  } catch (const std::exception& e) {
    std::cerr << "make_report_fixture: " << e.what() << '\n';
    return 1;
  }
  std::cout << "wrote " << path.string() << " (" << std::filesystem::file_size(path) << " bytes)\n";
  return 0;
}
