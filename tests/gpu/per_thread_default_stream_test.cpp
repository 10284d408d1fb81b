// Compiled as a caller built with `nvcc --default-stream per-thread` (the build defines
// CUDA_API_PER_THREAD_DEFAULT_STREAM for this file only): each thread's null stream is
// its own stream, and threads reducing at once on "the default stream" must not share
// a workspace.
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "this test is compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gpu_env.h"
#include "reduce_tune/reduce_tune.h"

namespace reduce_tune {
namespace {

TEST(Concurrency, SixteenPerThreadDefaultStreamCallersUsingTheNullStream) {
  RT_REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 22) + 7;
  std::atomic<int> wrong{0}, checked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      RT_CUDA_CHECK(cudaSetDevice(0));
      std::vector<std::int32_t> host(n);
      std::int64_t expected = 0;
      for (std::size_t i = 0; i < n; ++i) {
        host[i] = static_cast<std::int32_t>((i * 13 + static_cast<std::size_t>(t)) % 1001) - 500;
        expected += host[i];
      }
      std::int32_t* in = nullptr;
      std::int64_t* out = nullptr;
      RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&in), n * 4));
      RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&out), 32 * 8));
      RT_CUDA_CHECK(cudaMemcpy(in, host.data(), n * 4, cudaMemcpyHostToDevice));
      for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < 32; ++k) reduce_tune::sum(in, n, out + k);  // the null stream
        RT_CUDA_CHECK(cudaStreamSynchronize(nullptr));                   // this thread's stream
        std::int64_t got[32];
        RT_CUDA_CHECK(cudaMemcpy(got, out, sizeof(got), cudaMemcpyDeviceToHost));
        for (auto g : got) {
          ++checked;
          if (g != expected) ++wrong;
        }
      }
      cudaFree(in);
      cudaFree(out);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << "of " << checked.load();
  EXPECT_EQ(checked.load(), 16 * 20 * 32);
}

}  // namespace
}  // namespace reduce_tune
