// Built as C++17: the public headers must serve callers that are not on C++20 (nvcc
// compiles .cu files as C++17 by default). The install test repeats this against the
// installed package with g++ and nvcc.
#if __cplusplus != 201703L
#error "this test is compiled as C++17"
#endif
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "reduce_tune/device_key.h"
#include "reduce_tune/reduce_tune.h"

namespace reduce_tune {
namespace {

TEST(PublicHeaderCxx17, ValueTypesCompareAndOrder) {
  ReduceConfig a, b;
  EXPECT_EQ(a, b);
  b.block_threads = 512;
  EXPECT_NE(a, b);
  EXPECT_TRUE(a < b);
  std::set<ReduceConfig> configs = {a, b, a};
  EXPECT_EQ(configs.size(), 2u);
  ProblemKey p{Op::sum, DType::f32, DType::f32, {}, 10};
  ProblemKey q = p;
  q.n = 11;
  EXPECT_TRUE(p < q);
  EXPECT_NE(p, q);
  std::map<ProblemKey, int> by_problem = {{p, 1}, {q, 2}};
  EXPECT_EQ(by_problem.at(q), 2);
  DeviceKey d1, d2;
  d2.uuid = "GPU-1";
  EXPECT_NE(d1, d2);
  EXPECT_EQ((TypeRule{DType::i32, DType::i64, DType::i64}), (TypeRule{DType::i32, DType::i64, DType::i64}));
}

TEST(PublicHeaderCxx17, TensorsAndAxesBuildInCxx17) {
  const TensorDesc t = TensorDesc::contiguous({2, 3, 4});
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.strides[0], 12);
  const AxisList axes{0, -1};
  EXPECT_EQ(axes.count, 2);
  const CanonicalResult c = canonicalize(t, axes);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.axes.outputs, 3u);
}

TEST(PublicHeaderCxx17, TypedFunctionsNameTheirTypes) {
  EXPECT_EQ(dtype_of<const float>, DType::f32);
  EXPECT_EQ(dtype_of<std::uint32_t>, DType::u32);
  static_assert(std::is_same_v<mean_t<float>, float>);
  static_assert(std::is_same_v<mean_t<int>, double>);
}

}  // namespace
}  // namespace reduce_tune
