// Shared helpers of the database tests: sample rows, temporary folders, file bytes and
// running code in a child process.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "reduce_tune/db/database.h"
#include "reduce_tune/db/records.h"

namespace reduce_tune::db::testing {

inline DeviceKey sample_device(const std::string& uuid = "GPU-11111111-2222-3333-4444-555555555555",
                               int cc_major = 9, int cc_minor = 0) {
  DeviceKey d;
  d.name = "NVIDIA H200";
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  d.sm_count = 132;
  d.l2_bytes = 50 << 20;
  d.memory_bus_bits = 6144;
  d.memory_clock_khz = 3'201'000;
  d.uuid = uuid;
  d.driver_version = 12080;
  d.runtime_version = 12040;
  return d;
}

inline ProblemClass sum_f32() { return {Op::sum, DType::f32, DType::f32, Layout{}}; }

inline Timestamp fixed_time(std::int64_t offset_us = 0) {
  return Timestamp(std::chrono::microseconds(1'700'000'000'000'000 + offset_us));
}

inline Measurement sample_measurement(const ProblemClass& problem, std::uint64_t n, const ReduceConfig& config,
                                      double median_ms, Timestamp at = fixed_time(),
                                      MeasurementStatus status = MeasurementStatus::ok) {
  Measurement m;
  m.problem = problem.with_size(n);
  m.config = config;
  m.status = status;
  m.median_ms = median_ms;
  m.spread = 0.01;
  m.repetitions = 20;
  m.gbps = static_cast<double>(n * 4) / (median_ms * 1e6);
  m.tool_version = "0.1.0";
  m.created_at = at;
  if (status != MeasurementStatus::ok) m.detail = "failed: " + std::string(to_string(status));
  return m;
}

inline ReduceConfig config_with_block(std::uint32_t block_threads) {
  ReduceConfig c;
  c.block_threads = block_threads;
  return c;
}

// A bucket with `count` measurements (blocks 32*(i+1)); the fastest (the last) wins the
// deterministic class.
inline BucketResult sample_bucket(const DeviceKey& device, const ProblemClass& problem, int bucket, int count = 3,
                                  Timestamp at = fixed_time()) {
  BucketResult r;
  r.device = device;
  r.problem = problem;
  r.bucket = bucket;
  const std::uint64_t n = std::uint64_t{1} << bucket;
  for (int i = 0; i < count; ++i)
    r.measurements.push_back(sample_measurement(problem, n, config_with_block(32u * static_cast<std::uint32_t>(i + 1)),
                                                1.0 / (i + 1), at));
  if (count > 0) r.winners.push_back({Determinism::deterministic, static_cast<std::size_t>(count - 1)});
  r.tool_version = "0.1.0";
  r.created_at = at;
  return r;
}

// One bench row of run `run_id` at time `at`: our kernels get a short config text (the
// database stores it canonically), CUB the name of its call.
inline BenchResult sample_bench_row(const ProblemClass& problem, std::uint64_t n, std::string_view implementation,
                                    const std::string& run_id, Timestamp at, double median_ms) {
  BenchResult r;
  r.problem = problem.with_size(n);
  r.implementation = std::string(implementation);
  r.config = implementation == kBenchCub ? "cub::DeviceReduce::Sum" : "multi_element:block=512";
  r.median_ms = median_ms;
  r.spread = 0.02;
  r.repetitions = 30;
  r.gbps = static_cast<double>(n * 4) / (median_ms * 1e6);
  r.peak_gbps = 4915.2;
  r.peak_fraction = r.gbps / r.peak_gbps;
  r.run_id = run_id;
  r.tool_version = "0.2.0";
  r.created_at = at;
  return r;
}

// The four implementations of one size, as one bench run measures them.
inline std::vector<BenchResult> sample_bench_run(const ProblemClass& problem, std::uint64_t n,
                                                 const std::string& run_id, Timestamp at, double tuned_ms = 1.0) {
  return {sample_bench_row(problem, n, kBenchTuned, run_id, at, tuned_ms),
          sample_bench_row(problem, n, kBenchDefault, run_id, at, tuned_ms * 1.5),
          sample_bench_row(problem, n, kBenchCub, run_id, at, tuned_ms * 1.25),
          sample_bench_row(problem, n, kBenchClassicBest, run_id, at, tuned_ms * 2)};
}

// Axis reductions: a class, and a shape inside it (R = 2^reduced_bucket + offset, outputs
// = 2^outputs_bucket; columns with inner = 8 unless the outputs are fewer).
inline AxisProblemClass axis_class(AxisLayout layout = AxisLayout::rows, int reduced_bucket = 10,
                                   int outputs_bucket = 14, Op op = Op::sum, DType dtype = DType::f32,
                                   DType out_dtype = DType::f32) {
  return {op, dtype, out_dtype, layout, reduced_bucket, outputs_bucket};
}

inline AxisMeasurement sample_axis_measurement(const AxisProblemClass& problem, const std::string& config,
                                               double median_ms, Timestamp at = fixed_time(),
                                               MeasurementStatus status = MeasurementStatus::ok,
                                               std::uint64_t reduced_offset = 0) {
  AxisMeasurement m;
  m.op = problem.op;
  m.dtype = problem.dtype;
  m.out_dtype = problem.out_dtype;
  m.layout = problem.layout;
  m.reduced = (std::uint64_t{1} << problem.reduced_bucket) + reduced_offset;
  m.outputs = std::uint64_t{1} << problem.outputs_bucket;
  m.inner = problem.layout == AxisLayout::columns ? std::min<std::uint64_t>(8, m.outputs) : 1;
  m.config = config;
  m.status = status;
  m.median_ms = median_ms;
  m.spread = 0.015;
  m.repetitions = 25;
  m.gbps = static_cast<double>(m.reduced * m.outputs * 4) / (median_ms * 1e6);
  m.tool_version = "0.3.0";
  m.created_at = at;
  if (status != MeasurementStatus::ok) m.detail = "failed: " + std::string(to_string(status));
  return m;
}

// "rows:block=<32*(i+1)>,..." style configs, one per candidate.
inline std::string axis_config(const AxisProblemClass& problem, int i) {
  return std::string(to_string(problem.layout)) + ":block=" + std::to_string(32 * (i + 1)) + ",group=4,vec=4";
}

// An axis class with `count` candidates at times 1/(i+1) ms (the last is the fastest and
// wins), R stepping through the bucket.
inline AxisBucketResult sample_axis_bucket(const DeviceKey& device, const AxisProblemClass& problem, int count = 3,
                                           Timestamp at = fixed_time()) {
  AxisBucketResult r;
  r.device = device;
  r.problem = problem;
  for (int i = 0; i < count; ++i)
    r.measurements.push_back(sample_axis_measurement(problem, axis_config(problem, i), 1.0 / (i + 1), at,
                                                     MeasurementStatus::ok, static_cast<std::uint64_t>(i)));
  if (count > 0) r.winner = static_cast<std::size_t>(count - 1);
  r.tool_version = "0.3.0";
  r.created_at = at;
  return r;
}

// A fresh folder under the system temp folder, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "reduce-tune-db-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    // Undo read-only modes the test set, so removal works for a non-root user too.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored))
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                   ignored);
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                 ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Starts `body` in a forked child. The child never returns into GoogleTest: it leaves
// through _exit with body's result (4 if it threw), so no test state is doubled. Fork
// only while the parent holds no open database.
inline pid_t start_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(60);  // a stuck child dies instead of hanging the test run
    int code = 3;
    try {
      code = body();
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  return pid;
}

// The child's exit status, or 128 + the signal that ended it.
inline int wait_child(pid_t pid) {
  if (pid < 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

inline int run_in_child(const std::function<int()>& body) { return wait_child(start_child(body)); }

inline std::string assets() { return REDUCE_TUNE_DB_ASSETS; }

}  // namespace reduce_tune::db::testing
