// Compiled as a caller built with `nvcc --default-stream per-thread` (which defines
// CUDA_API_PER_THREAD_DEFAULT_STREAM): the public header must turn the caller's null
// stream into cudaStreamPerThread, and leave every other stream alone.
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "this test is compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "reduce_tune/reduce_tune.h"

namespace reduce_tune {
namespace {

TEST(PublicHeader, NullStreamMeansThePerThreadStreamForPerThreadCallers) {
  EXPECT_EQ(detail::caller_stream(nullptr), cudaStreamPerThread);
  EXPECT_EQ(detail::caller_stream(cudaStreamLegacy), cudaStreamLegacy);
  const auto some = reinterpret_cast<cudaStream_t>(0x1234);
  EXPECT_EQ(detail::caller_stream(some), some);
}

}  // namespace
}  // namespace reduce_tune
