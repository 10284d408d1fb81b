// Shared set-up for GPU tests: they skip, with the reason, only where no CUDA device
// exists; any other CUDA failure fails the test.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "cuda_api.h"
#include "reduce_tune/error.h"

namespace reduce_tune::testing {

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
