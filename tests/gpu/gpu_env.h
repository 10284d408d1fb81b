// Shared set-up for GPU tests: they skip, with the reason, only where no CUDA device
// exists; any other CUDA failure fails the test.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/context.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"

namespace reduce_tune::testing {

// A folder of this test process under the system's temporary folder.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// A fresh database at `path` holding one deterministic winner, as a tuner stores it:
// `config` won sum<f32> at n elements (and so its size bucket) on `device`.
inline void store_test_winner(const std::filesystem::path& path, const DeviceKey& device, std::uint64_t n,
                              const ReduceConfig& config, double median_ms) {
  std::filesystem::remove(path);
  auto database = db::Database::open(path);
  db::BucketResult r;
  r.device = device;
  r.problem = {Op::sum, DType::f32, DType::f32, {}};
  r.bucket = size_bucket(n);
  db::Measurement m;
  m.problem = r.problem.with_size(n);
  m.config = config;
  m.status = db::MeasurementStatus::ok;
  m.median_ms = median_ms;
  m.repetitions = 100;
  m.gbps = static_cast<double>(n) * 4 / (median_ms * 1e6);
  m.tool_version = "reduce-tune test";
  m.created_at = db::now_timestamp();
  r.measurements = {m};
  r.winners = {{db::Determinism::deterministic, 0}};
  r.tool_version = m.tool_version;
  r.created_at = m.created_at;
  database.store_bucket(r);
}

// Context options naming a database that does not exist: built-in defaults everywhere.
inline ContextOptions no_database() {
  ContextOptions o;
  o.database = temp_dir("rt_no_db") / "missing.db";
  return o;
}

// The first device, or the reason there is none.
inline const std::optional<DeviceKey>& test_device(std::string* why_not = nullptr) {
  static std::string reason;
  static const std::optional<DeviceKey> device = [] () -> std::optional<DeviceKey> {
    try {
      auto key = query_device(0);
      RT_CUDA_CHECK(cudaSetDevice(0));
      return key;
    } catch (const NoDeviceError& e) {
      reason = e.what();
      return std::nullopt;
    }
  }();
  if (why_not) *why_not = reason;
  return device;
}

// Quick mode (REDUCE_TUNE_GPU_TEST_QUICK=1): fewer sizes and configs, for the sanitizer.
inline bool quick_mode() {
  const char* v = std::getenv("REDUCE_TUNE_GPU_TEST_QUICK");
  return v && std::string(v) == "1";
}

}  // namespace reduce_tune::testing

#define RT_REQUIRE_GPU()                                                  \
  do {                                                                    \
    std::string rt_why;                                                   \
    if (!::reduce_tune::testing::test_device(&rt_why))                    \
      GTEST_SKIP() << "no CUDA device: " << rt_why;                       \
  } while (0)
