// Compiled as an ordinary caller: a null stream stays the legacy default stream.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "reduce_tune/reduce_tune.h"

namespace reduce_tune {
namespace {

TEST(PublicHeader, NullStreamStaysTheLegacyStreamForOrdinaryCallers) {
  EXPECT_EQ(detail::caller_stream(nullptr), nullptr);
  EXPECT_EQ(detail::caller_stream(cudaStreamPerThread), cudaStreamPerThread);
}

}  // namespace
}  // namespace reduce_tune
