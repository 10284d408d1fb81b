#include "reduce_tune/types.h"

#include <gtest/gtest.h>

namespace reduce_tune {
namespace {

TEST(Types, OpAndDTypeNamesRoundTrip) {
  for (Op op : kAllOps) EXPECT_EQ(parse_op(to_string(op)), op);
  for (DType d : kAllDTypes) EXPECT_EQ(parse_dtype(to_string(d)), d);
  EXPECT_EQ(parse_dtype("float"), DType::f32);
  EXPECT_EQ(parse_dtype("int64"), DType::i64);
  EXPECT_FALSE(parse_op("average"));
  EXPECT_FALSE(parse_dtype("f8"));
  EXPECT_EQ(parse_dtype("half"), DType::f16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(to_string(DType::bf16), "bf16");
  EXPECT_EQ(size_of(DType::f16), 2u);
  EXPECT_TRUE(is_floating(DType::bf16));
  EXPECT_TRUE(is_16bit_float(DType::f16));
  EXPECT_FALSE(is_16bit_float(DType::f32));
}

TEST(Types, SixteenBitFloatsAccumulateInF32AndWriteTheirTypeOrF32) {
  for (DType in : {DType::f16, DType::bf16})
    for (Op op : kAllOps) {
      EXPECT_EQ(default_out_dtype(op, in), in);
      for (DType out : kAllDTypes) {
        const auto r = resolve_types(op, in, out);
        if (out == in || out == DType::f32) {
          ASSERT_TRUE(r.rule) << r.error;
          EXPECT_EQ(r.rule->acc, DType::f32);
        } else {
          EXPECT_FALSE(r.rule);
          EXPECT_NE(r.error.find("accumulates in f32 and writes"), std::string::npos) << r.error;
        }
      }
    }
  // Nothing else widens into or narrows to a 16-bit float.
  EXPECT_FALSE(resolve_types(Op::sum, DType::f32, DType::f16).rule);
  EXPECT_FALSE(resolve_types(Op::max, DType::f32, DType::bf16).rule);
  EXPECT_FALSE(resolve_types(Op::sum, DType::f16, DType::bf16).rule);
}

TEST(Types, SumAccumulatesInTheOutputType) {
  EXPECT_EQ(resolve_types(Op::sum, DType::i32, DType::i32).rule->acc, DType::i32);
  EXPECT_EQ(resolve_types(Op::sum, DType::i32, DType::i64).rule->acc, DType::i64);
  EXPECT_EQ(resolve_types(Op::sum, DType::u32, DType::i64).rule->acc, DType::i64);
  EXPECT_EQ(resolve_types(Op::sum, DType::f32, DType::f32).rule->acc, DType::f32);
  EXPECT_EQ(resolve_types(Op::prod, DType::f32, DType::f64).rule->acc, DType::f64);
}

TEST(Types, RejectsNarrowingAndMismatchedOutputs) {
  auto r = resolve_types(Op::sum, DType::i64, DType::i32);
  EXPECT_FALSE(r.rule);
  EXPECT_NE(r.error.find("sum<i64, i32>"), std::string::npos) << r.error;
  EXPECT_FALSE(resolve_types(Op::min, DType::i32, DType::i64).rule);
  EXPECT_FALSE(resolve_types(Op::mean, DType::i32, DType::i32).rule);
  EXPECT_FALSE(resolve_types(Op::mean, DType::f64, DType::f32).rule);
}

TEST(Types, MeanOfIntegersIsDoubleAccumulatedInInt64) {
  EXPECT_EQ(default_out_dtype(Op::mean, DType::i32), DType::f64);
  EXPECT_EQ(default_out_dtype(Op::mean, DType::f32), DType::f32);
  const auto r = resolve_types(Op::mean, DType::u32, DType::f64);
  ASSERT_TRUE(r.rule);
  EXPECT_EQ(r.rule->acc, DType::i64);
}

TEST(Types, SizeBucketsArePowersOfTwo) {
  EXPECT_EQ(size_bucket(0), 0);
  EXPECT_EQ(size_bucket(1), 0);
  EXPECT_EQ(size_bucket(2), 1);
  EXPECT_EQ(size_bucket(1023), 9);
  EXPECT_EQ(size_bucket(1024), 10);
  EXPECT_EQ(size_bucket((1ull << 31) + 7), 31);
}

TEST(Types, ProblemKeyPrintsOpTypesAndSize) {
  ProblemKey k{Op::sum, DType::i32, DType::i64, {}, 1000};
  EXPECT_EQ(to_string(k), "sum<i32,i64>[flat,n=1000]");
  ProblemKey same = k;
  EXPECT_EQ(k, same);
  same.n = 1001;
  EXPECT_LT(k, same);
}

}  // namespace
}  // namespace reduce_tune
