// The axis kernels' host side without a GPU: the built-in choice for each layout class,
// launch plans, invalid specs, and NVRTC compiling every family for every op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <set>
#include <tuple>
#include <vector>

#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/error.h"

namespace reduce_tune {
namespace {

CanonicalAxes shape_of(std::initializer_list<std::int64_t> extents, AxisList axes) {
  const CanonicalResult r = canonicalize(TensorDesc::contiguous(extents), axes);
  EXPECT_TRUE(r.ok) << r.error;
  return r.axes;
}

const TypeRule kF32{DType::f32, DType::f32, DType::f32};
const TypeRule kF16{DType::f16, DType::f16, DType::f32};
const TypeRule kBF16{DType::bf16, DType::bf16, DType::f32};

// A general view's split takes the count of blocks per output, rounded down or up, whose
// busiest SM reads least: rows of every other element (a block per split, four per SM on
// 132 SMs) take 528 blocks or fewer where a count rounded up would leave a few SMs a fifth
// block (7 rows: 75 splits, 525 blocks, where 76 made 532). Other families round up
// (split columns of 20001 x 3001: 94 blocks of outputs, 6 splits).
TEST(AxisSpec, SplitsLeaveNoSMALastRoundOfAFewBlocks) {
  const std::map<std::int64_t, std::uint64_t> want_splits = {{1, 528}, {3, 176}, {7, 75}, {8, 66},
                                                             {13, 40}, {33, 16}, {100, 5}};
  for (const TypeRule& t : {kF32, kF16}) {
    for (const auto& [rows, splits] : want_splits) {
      const std::int64_t r = (std::int64_t{1} << 25) / rows;
      const CanonicalAxes shape = canonicalize(TensorDesc::strided({rows, r}, {2 * r, 2}), AxisList{1}).axes;
      const AxisKernelSpec s = builtin_axis_spec(Op::sum, t, shape, 132);
      ASSERT_EQ(s.family, AxisFamily::general) << shape.to_string();
      ASSERT_EQ(s.blocks_per_sm, 4u);
      const AxisLaunchPlan plan = plan_axis_launch(s, shape, 132);
      EXPECT_EQ(plan.splits, splits) << rows << " rows";
      EXPECT_LE(plan.grid, 4u * 132) << rows << " rows";
      // The busiest SM's share of the work is no more than with one split more or fewer.
      const auto busiest = [&](std::uint64_t k) { return double((rows * k + 131) / 132) / double(k); };
      EXPECT_LE(busiest(plan.splits), busiest(plan.splits + 1)) << rows << " rows";
      if (plan.splits > 1) {
        EXPECT_LE(busiest(plan.splits), busiest(plan.splits - 1)) << rows << " rows";
      }
    }
  }
  // Every row count that splits, on 132 and 114 SMs: of the counts rounded down and up,
  // the chosen one's busiest SM reads no more than the other's.
  for (const int sms : {132, 114}) {
    for (std::int64_t rows = 1; rows < 2 * sms; ++rows) {
      const std::int64_t r = 1 << 22;
      const CanonicalAxes shape = canonicalize(TensorDesc::strided({rows, r}, {2 * r, 2}), AxisList{1}).axes;
      AxisKernelSpec s = builtin_axis_spec(Op::sum, kF32, shape, sms);
      s.blocks_per_sm = 4;
      const std::uint64_t splits = plan_axis_launch(s, shape, sms).splits;
      const std::uint64_t want = 4ull * sms, down = want / rows, up = (want + rows - 1) / rows;
      ASSERT_TRUE(splits == down || splits == up) << rows << " rows on " << sms << " SMs: " << splits;
      const auto busiest = [&](std::uint64_t k) { return double((rows * k + sms - 1) / sms) / double(k); };
      EXPECT_LE(busiest(splits), busiest(splits == down ? up : down)) << rows << " rows on " << sms << " SMs";
    }
  }
  const CanonicalAxes columns = shape_of({20001, 3001}, {0});
  const AxisKernelSpec s = builtin_axis_spec(Op::sum, kF32, columns, 132);
  ASSERT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(plan_axis_launch(s, columns, 132).splits, 6u);
}

// Eight slices and more of contiguous columns over R <= 2^14 that a block each would not
// fill the GPU with: a thread per output in blocks of 256, 8 threads across R, split (the
// dense kernel splits each slice and folds it through shared memory).
// 8-byte dense columns of up to 64 outputs a slice, split, one slice or slices of R >=
// 2^16: blocks of 256 and four loads in flight for every op; up to 16 outputs the splits
// interleave single steps and the last block folds, from 17 contiguous splits fold in a
// second kernel. Several slices of a shorter R keep the splits before. One slice of few
// outputs whose split interleaves is read dense from R = 2^16 (65537 x 3), as 16-bit ones.
TEST(AxisSpec, EightByteDenseColumnsSplitInBlocksOf256) {
  const TypeRule i64{DType::i64, DType::i64, DType::i64};
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  int checked = 0;
  for (const TypeRule& t : {i64, f64})
    for (Op op : {Op::sum, Op::min, Op::max, Op::prod})
      for (std::int64_t inner = 2; inner <= 64; ++inner)
        for (const CanonicalAxes& shape : {shape_of({1048577, inner}, {0}), shape_of({8, 300001, inner}, {1}),
                                           shape_of({16, 65536, inner}, {1})}) {
          AxisLaunchPlan plan;
          const AxisKernelSpec s = builtin_axis_spec(op, t, shape, 132, &plan);
          ASSERT_EQ(s.family, AxisFamily::columns_dense) << shape.to_string();
          ASSERT_GT(plan.splits, 1u) << shape.to_string();
          EXPECT_EQ(s.block, 256u) << shape.to_string();
          EXPECT_EQ(s.vec, 2u) << shape.to_string();
          EXPECT_EQ(s.unroll, 4u) << shape.to_string();
          if (inner <= 16) {
            EXPECT_EQ(s.split, AxisSplit::ticket_tiles) << shape.to_string();
            EXPECT_EQ(plan.finalize_grid, 0u) << shape.to_string();
          } else {
            EXPECT_EQ(s.split, AxisSplit::two_pass) << shape.to_string();
            EXPECT_GT(plan.finalize_grid, 0u) << shape.to_string();
          }
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 4 * 63 * 3);
  // Several slices of R < 2^16: the contiguous splits, min and max in blocks of 512.
  for (const TypeRule& t : {i64, f64})
    for (const CanonicalAxes& shape : {shape_of({64, 1921, 15}, {1}), shape_of({3, 65535, 15}, {1}),
                                       shape_of({3, 40001, 33}, {1})}) {
      const AxisKernelSpec sum = builtin_axis_spec(Op::sum, t, shape, 132);
      const AxisKernelSpec max = builtin_axis_spec(Op::max, t, shape, 132);
      EXPECT_EQ(sum.family, AxisFamily::columns_dense) << shape.to_string();
      EXPECT_NE(sum.split, AxisSplit::ticket_tiles) << shape.to_string();
      EXPECT_EQ(sum.block, 256u) << shape.to_string();
      EXPECT_EQ(max.block, 512u) << shape.to_string();
      EXPECT_NE(max.split, AxisSplit::ticket_tiles) << shape.to_string();
    }
  // More outputs: min and max in blocks of 512 as before.
  EXPECT_EQ(builtin_axis_spec(Op::max, i64, shape_of({1 << 18, 65}, {0}), 132).block, 512u);
  // One slice of few outputs: dense from R = 2^16 (a thread per output with threads
  // across R below).
  for (const TypeRule& t : {i64, f64}) {
    EXPECT_EQ(builtin_axis_spec(Op::sum, t, shape_of({65537, 3}, {0}), 132).family, AxisFamily::columns_dense);
    EXPECT_EQ(builtin_axis_spec(Op::sum, t, shape_of({65535, 3}, {0}), 132).family, AxisFamily::columns);
    EXPECT_EQ(builtin_axis_spec(Op::max, t, shape_of({65537, 15}, {0}), 132).family, AxisFamily::columns_dense);
    EXPECT_EQ(builtin_axis_spec(Op::max, t, shape_of({65535, 15}, {0}), 132).family, AxisFamily::columns);
  }
}

TEST(AxisSpec, ManySlicesOfShortColumnsTakeAThreadPerOutput) {
  for (const TypeRule& t : {kF32, kF16, kBF16}) {
    for (const auto& [slices, r, inner] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
             {64, 1921, 15}, {256, 1921, 15}, {64, 8191, 15}, {8, 16384, 15}, {64, 1921, 64}, {64, 1921, 33}}) {
      const CanonicalAxes shape = shape_of({slices, r, inner}, {1});
      const AxisKernelSpec s = builtin_axis_spec(Op::sum, t, shape, 132);
      EXPECT_EQ(s.family, AxisFamily::columns) << shape.to_string();
      EXPECT_EQ(s.block, 256u) << shape.to_string();
      EXPECT_EQ(s.group, 8u) << shape.to_string();
      EXPECT_EQ(s.vec, 1u) << shape.to_string();
      EXPECT_EQ(s.unroll, 4u) << shape.to_string();  // not the eight of many split outputs
      EXPECT_NE(s.split, AxisSplit::none) << shape.to_string();
    }
    // One slice, R past 2^14, or slices enough for a block each at four per SM: dense.
    for (const CanonicalAxes& shape : {shape_of({1, 262144, 15}, {1}), shape_of({64, 16385, 15}, {1}),
                                       shape_of({264, 1921, 15}, {1}), shape_of({7, 65536, 15}, {1})})
      EXPECT_EQ(builtin_axis_spec(Op::sum, t, shape, 132).family, AxisFamily::columns_dense) << shape.to_string();
  }
  // 8-byte elements were not measured: dense.
  const TypeRule i64{DType::i64, DType::i64, DType::i64};
  EXPECT_EQ(builtin_axis_spec(Op::sum, i64, shape_of({64, 1921, 15}, {1}), 132).family, AxisFamily::columns_dense);
}

TEST(AxisSpec, BuiltInChoiceFollowsTheShape) {
  // Short rows: a thread per row, with 16-byte loads where a row holds two aligned
  // vectors or four of any alignment; never staged through shared memory.
  auto s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 8}, {1}), 132);
  EXPECT_EQ(s.family, AxisFamily::rows);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.rows_per_pass, 4u);  // two loads per thread: four rows per pass
  EXPECT_EQ(s.split, AxisSplit::none);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 15}, {1}), 132);
  EXPECT_EQ(s.family, AxisFamily::rows);
  EXPECT_EQ(s.vec, 1u);  // 15 elements: misaligned rows, under four vectors
  EXPECT_EQ(s.group, 1u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 17}, {1}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 1u);
  // Dense rows of 9 to 16 elements read a thread per row over 2^24 rows and more: blocks
  // of 512; four rows a pass for 16-bit sums, min and max of rows of 16 (read in vectors),
  // f64 sums and means, i64 min and max, else one. Over one row fewer, rows of 8 or 17,
  // or rows spaced apart: 256, one row a pass.
  {
    const TypeRule f64_rule{DType::f64, DType::f64, DType::f64};
    const TypeRule i64_rule{DType::i64, DType::i64, DType::i64};
    const TypeRule bf16_rule{DType::bf16, DType::bf16, DType::f32};
    const std::int64_t many = std::int64_t{1} << 24;
    struct Case {
      TypeRule t;
      std::int64_t r;
      std::vector<Op> four;  // the ops that take four rows a pass
    };
    const std::vector<Op> compares{Op::min, Op::max};
    for (const Case& c : std::vector<Case>{{kF32, 9, {}},
                                           {kF32, 12, {}},
                                           {kF32, 15, {}},
                                           {kF32, 16, {}},
                                           {kF16, 9, {}},
                                           {kF16, 12, {}},
                                           {kF16, 15, {}},
                                           {kF16, 16, {Op::sum, Op::min, Op::max}},
                                           {bf16_rule, 13, {}},
                                           {bf16_rule, 16, {Op::sum, Op::min, Op::max}},
                                           {f64_rule, 9, {Op::sum, Op::mean}},
                                           {f64_rule, 12, {Op::sum, Op::mean}},
                                           {f64_rule, 14, {Op::sum, Op::mean}},
                                           {i64_rule, 10, compares},
                                           {i64_rule, 13, compares}}) {
      const TypeRule& t = c.t;
      const std::int64_t r = c.r;
      for (Op op : {Op::sum, Op::prod, Op::min, Op::max, Op::mean}) {
        if (op == Op::mean && t.in == DType::i64) continue;
        const bool four = std::find(c.four.begin(), c.four.end(), op) != c.four.end();
        const std::string what = std::string(to_string(op)) + " " + std::string(to_string(t.in)) + " R = " + std::to_string(r);
        s = builtin_axis_spec(op, t, shape_of({many, r}, {1}), 132);
        EXPECT_EQ(s.family, AxisFamily::rows) << what;
        EXPECT_EQ(s.group, 1u) << what;
        EXPECT_EQ(s.rows_per_pass, four ? 4u : 1u) << what;
        EXPECT_EQ(s.block, 512u) << what;
        EXPECT_EQ(axis_spec_mismatch(s, shape_of({many, r}, {1})), "");
        const AxisLaunchPlan plan = plan_axis_launch(s, shape_of({many, r}, {1}), 132);
        EXPECT_EQ(plan.block, 512u) << what;
        const AxisKernelSpec under = builtin_axis_spec(op, t, shape_of({many - 1, r}, {1}), 132);
        EXPECT_EQ(under.block, 256u) << what << ", one row under 2^24";
        EXPECT_EQ(under.rows_per_pass, 1u) << what << ", one row under 2^24";
      }
    }
    EXPECT_NE(builtin_axis_spec(Op::sum, kF32, shape_of({many, 8}, {1}), 132).block, 512u);
    EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({many, 17}, {1}), 132).block, 256u);
    const CanonicalResult spaced = canonicalize(TensorDesc::strided({many, 16}, {20, 1}), {1});
    ASSERT_TRUE(spaced.ok);
    s = builtin_axis_spec(Op::sum, kF32, spaced.axes, 132);
    EXPECT_EQ(s.family, AxisFamily::rows);
    EXPECT_EQ(s.block, 256u) << "rows spaced apart";
  }
  // Contiguous rows of 2 to 8 elements, 2^20 elements and more, from a base on the
  // 16-byte grid (or one not known): packed, a thread a chunk of whole rows in whole
  // 16-byte vectors, in blocks of 256, a chunk a pass. Not 4-byte rows of 4 (a vector a
  // row), 5 or 7, nor 8-byte rows of 5 or 7, nor rows of 8 (the corner of a tuned class of
  // 8 to 15), nor 16-bit means over 4, nor rows spaced apart, nor fewer elements.
  for (const auto& [t, r] : std::vector<std::pair<TypeRule, std::int64_t>>{
           {kF32, 2}, {kF32, 3}, {kF32, 6}, {kF16, 2}, {kF16, 4}, {kF16, 5}, {kF16, 7},
           {TypeRule{DType::f64, DType::f64, DType::f64}, 4},
           {TypeRule{DType::i64, DType::i64, DType::i64}, 6}}) {
    const std::int64_t rows = ((std::int64_t{1} << 20) + r - 1) / r;  // 2^20 elements at least
    s = builtin_axis_spec(Op::sum, t, shape_of({rows, r}, {1}), 132);
    EXPECT_EQ(s.family, AxisFamily::rows_packed) << to_string(t.in) << " R = " << r;
    EXPECT_EQ(s.block, 256u);
    EXPECT_EQ(s.unroll, 1u);
    EXPECT_EQ(s.vec * size_of(t.in), 16u);
    EXPECT_EQ(axis_spec_mismatch(s, shape_of({rows, r}, {1})), "");
    alignas(16) static const unsigned char bytes[32] = {};
    EXPECT_EQ(builtin_axis_spec(Op::sum, t, shape_of({rows, r}, {1}), 132, nullptr, bytes).family,
              AxisFamily::rows_packed);
    EXPECT_NE(builtin_axis_spec(Op::sum, t, shape_of({rows, r}, {1}), 132, nullptr, bytes + size_of(t.in)).family,
              AxisFamily::rows_packed)
        << "a base off the 16-byte grid";
    EXPECT_NE(builtin_axis_spec(Op::sum, t, shape_of({rows - 1, r}, {1}), 132).family, AxisFamily::rows_packed)
        << "under 2^20 elements";
  }
  for (const auto& [t, r] : std::vector<std::pair<TypeRule, std::int64_t>>{
           {kF32, 4}, {kF32, 5}, {kF32, 7}, {kF32, 8}, {kF32, 9}, {kF32, 1}, {kF16, 8}, {kF16, 9},
           {TypeRule{DType::f64, DType::f64, DType::f64}, 5}, {TypeRule{DType::f64, DType::f64, DType::f64}, 7}})
    EXPECT_NE(builtin_axis_spec(Op::sum, t, shape_of({1 << 20, r}, {1}), 132).family, AxisFamily::rows_packed)
        << to_string(t.in) << " R = " << r;
  const TypeRule f16_mean = *resolve_types(Op::mean, DType::f16, DType::f16).rule;
  for (std::int64_t r : {2, 3, 5, 6, 7})
    EXPECT_EQ(builtin_axis_spec(Op::mean, f16_mean, shape_of({1 << 20, r}, {1}), 132).family, AxisFamily::rows_packed)
        << r;
  for (std::int64_t r : {4})
    EXPECT_NE(builtin_axis_spec(Op::mean, f16_mean, shape_of({1 << 20, r}, {1}), 132).family, AxisFamily::rows_packed)
        << r;
  const CanonicalResult spaced_pairs = canonicalize(TensorDesc::strided({1 << 20, 2}, {4, 1}), {1});
  ASSERT_TRUE(spaced_pairs.ok);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, spaced_pairs.axes, 132).family, AxisFamily::rows);

  // R = 1 over contiguous outputs is columns [1, inner], a converting copy: a 16-byte
  // vector of four outputs per thread, on the vector grid or off it (the kernel reads
  // the last ones, or a misaligned view, an element at a time).
  for (std::int64_t outputs : {1 << 20, (1 << 20) + 1}) {
    s = builtin_axis_spec(Op::sum, kF32, shape_of({outputs, 1}, {1}), 132);
    EXPECT_EQ(s.family, AxisFamily::short_columns);
    EXPECT_EQ(s.vec, 4u);
    EXPECT_EQ(s.group, 1u);
  }
  const TypeRule f16{DType::f16, DType::f16, DType::f32};
  // 16-bit rows of 16 and 32 .. 127 elements: 8-byte vectors (four elements), lanes of
  // about four of them; others as before (25: element by element; 128: 16-byte vectors).
  struct RowCase {
    std::int64_t rows, r;
    std::uint32_t vec, group;
  };
  for (const RowCase& c : {RowCase{1 << 20, 16, 4, 1}, RowCase{1 << 20, 25, 1, 2}, RowCase{1 << 20, 33, 4, 2},
                           RowCase{1 << 20, 100, 4, 4}, RowCase{1 << 20, 12, 1, 1}, RowCase{1 << 18, 128, 8, 4}}) {
    s = builtin_axis_spec(Op::sum, f16, shape_of({c.rows, c.r}, {1}), 132);
    EXPECT_EQ(s.vec, c.vec) << "R = " << c.r;
    EXPECT_EQ(s.group, c.group) << "R = " << c.r;
  }
  // Longer rows: a group of lanes per row, each lane about four vectors of it.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 64}, {1}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 4u);
  EXPECT_EQ(s.rows_per_pass, 1u);
  EXPECT_EQ(s.block, 256u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 18, 100}, {1}), 132);
  EXPECT_EQ(s.group, 4u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 16, 1024}, {1}), 132);
  EXPECT_EQ(s.group, 32u);
  // Few rows: smaller blocks so that every SM gets some, and no split below 2048.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1024, 1024}, {1}), 132);
  EXPECT_EQ(s.group, 32u);
  EXPECT_EQ(s.block, 128u);
  EXPECT_EQ(s.split, AxisSplit::none);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1000, 16}, {1}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.block, 128u);
  // Sliced rows (not contiguous) take the rows family too.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32,
                              canonicalize(TensorDesc::strided({1 << 20, 8}, {9, 1}), {1}).axes, 132).family,
            AxisFamily::rows);
  // Rows below 2048 elements: a warp each; above, a warp while a row holds fewer than
  // 1024 vectors and the rows are many, else the block.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({4096, 2047}, {1}), 132);
  EXPECT_EQ(s.group, 32u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({16385, 3073}, {1}), 132);
  EXPECT_EQ(s.group, 32u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({16385, 4096}, {1}), 132);
  EXPECT_EQ(s.group, s.block);
  // Few rows: blocks of 128, of 256 over 2 to 4 rows per SM (a block per row, unsplit).
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1000, 2048}, {1}), 132);
  EXPECT_EQ(s.group, s.block);
  EXPECT_EQ(s.block, 128u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({512, 2048}, {1}), 132);
  EXPECT_EQ(s.group, s.block);
  EXPECT_EQ(s.block, 256u);
  // i64 min and max there: blocks of 512; sums, f64 and more rows per SM keep theirs.
  const TypeRule kI64{DType::i64, DType::i64, DType::i64};
  for (Op op : {Op::max, Op::min})
    for (std::int64_t rows : {264, 359, 527}) {
      s = builtin_axis_spec(op, kI64, shape_of({rows, 70000}, {1}), 132);
      EXPECT_EQ(s.block, 512u) << rows;
      EXPECT_EQ(s.group, 512u) << rows;
      EXPECT_EQ(s.split, AxisSplit::none) << rows;
    }
  for (std::int64_t rows : {264, 397, 527}) {  // the GPU test's rows of 2049
    s = builtin_axis_spec(Op::min, kI64, shape_of({rows, 2049}, {1}), 132);
    EXPECT_EQ(s.block, 512u) << rows;
    EXPECT_EQ(s.group, 512u) << rows;
    EXPECT_EQ(s.split, AxisSplit::none) << rows;
    EXPECT_EQ(builtin_axis_spec(Op::sum, kI64, shape_of({rows, 2049}, {1}), 132).block, 256u) << rows;
  }
  EXPECT_EQ(builtin_axis_spec(Op::max, kI64, shape_of({528, 70000}, {1}), 132).block, 128u);
  s = builtin_axis_spec(Op::sum, kI64, shape_of({264, 70000}, {1}), 132);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.split, AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::max, TypeRule{DType::f64, DType::f64, DType::f64}, shape_of({359, 70281}, {1}), 132)
                .block,
            256u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({528, 70000}, {1}), 132).block, 128u);
  // Long rows, many of them: a block per row, 16-byte loads, no split.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({4096, 1 << 14}, {1}), 132);
  EXPECT_EQ(s.group, s.block);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.split, AxisSplit::none);
  // Two very long rows: split across blocks, the last block folds the partials, the
  // splits taking tiles of the row in turn (at most 16 rows from R = 2^20 on).
  s = builtin_axis_spec(Op::sum, kF32, shape_of({2, 1 << 24}, {1}), 132);
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.blocks_per_sm, 8u);
  auto plan = plan_axis_launch(s, shape_of({2, 1 << 24}, {1}), 132);
  EXPECT_GT(plan.splits, 1u);
  EXPECT_EQ(plan.grid % plan.splits, 0u);
  EXPECT_EQ(plan.partial_count, 2 * plan.splits);
  EXPECT_EQ(plan.finalize_grid, 0u);
  // A hundred long rows: split, the splits taking tiles in turn, the last block folding;
  // in blocks of 512 at 16 per SM from 2^25 elements, of 256 at 8 per SM below; 16-bit
  // rows, up to 256 of them, in blocks of 128 at 8 per SM.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({100, 1 << 20}, {1}), 132);
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.group, 512u);
  EXPECT_EQ(s.blocks_per_sm, 16u);
  s = builtin_axis_spec(Op::sum, f16, shape_of({100, 1 << 20}, {1}), 132);
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.block, 128u);
  EXPECT_EQ(s.blocks_per_sm, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f16, shape_of({257, 8193}, {1}), 132).block, 256u);  // below 2^22 elements
  plan = plan_axis_launch(s, shape_of({100, 1 << 20}, {1}), 132);
  EXPECT_GT(plan.splits, 1u);
  EXPECT_EQ(plan.finalize_grid, 0u);
  s = builtin_axis_spec(Op::max, kF32, shape_of({100, 16385}, {1}), 132);  // below 2^22 elements
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.blocks_per_sm, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f16, shape_of({100, 65537}, {1}), 132).block, 128u);
  // Up to 64 such rows below 2^22 elements: contiguous splits in blocks of 128, the last
  // block folding.
  s = builtin_axis_spec(Op::max, kF32, shape_of({33, 65537}, {1}), 132);
  EXPECT_EQ(s.split, AxisSplit::ticket);
  EXPECT_EQ(s.block, 128u);
  // Rows of 4-byte elements, 128 to 512 bytes but not a power of two, 2^21 elements
  // and more: staged through shared memory (rows_dense), a lane per row below 64
  // elements, four from 64.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 100}, {1}), 132);
  EXPECT_EQ(s.family, AxisFamily::rows_dense);
  EXPECT_EQ(s.group, 4u);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(axis_spec_mismatch(s, shape_of({1 << 20, 100}, {1})), "");
  s = builtin_axis_spec(Op::max, kF32, shape_of({65537, 33}, {1}), 132);
  EXPECT_EQ(s.family, AxisFamily::rows_dense);
  EXPECT_EQ(s.group, 1u);
  // Rows of 4 and 7 four-byte elements (the others packed, above): staged too, a lane
  // per row, from 2^24 rows; below, a thread per row.
  const TypeRule i32_sum{DType::i32, DType::i32, DType::i32};
  for (const auto& [outputs, r] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1 << 24, 4}, {(1 << 24) + 3, 7}}) {
    s = builtin_axis_spec(Op::sum, kF32, shape_of({outputs, r}, {1}), 132);
    EXPECT_EQ(s.family, AxisFamily::rows_dense) << outputs << " x " << r;
    EXPECT_EQ(s.group, 1u);
    EXPECT_EQ(s.block, 256u);
    EXPECT_EQ(s.vec, 4u);
    EXPECT_EQ(axis_spec_mismatch(s, shape_of({outputs, r}, {1})), "");
    EXPECT_EQ(builtin_axis_spec(Op::max, i32_sum, shape_of({outputs, r}, {1}), 132).family, AxisFamily::rows_dense);
  }
  for (const auto& [outputs, r] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1 << 22, 2}, {(1 << 22) + 1, 3}, {(1 << 24) - 1, 4}, {(1 << 24) - 1, 7}, {1 << 24, 8}, {1 << 24, 1}})
    EXPECT_NE(builtin_axis_spec(Op::sum, kF32, shape_of({outputs, r}, {1}), 132).family, AxisFamily::rows_dense)
        << outputs << " x " << r;
  // Means: over a power of two only (a mean of 5 is slower staged); packed as sums are.
  const TypeRule f32_mean = *resolve_types(Op::mean, DType::f32, DType::f32).rule;
  EXPECT_EQ(builtin_axis_spec(Op::mean, f32_mean, shape_of({1 << 24, 4}, {1}), 132).family, AxisFamily::rows_dense);
  EXPECT_EQ(builtin_axis_spec(Op::mean, f32_mean, shape_of({1 << 24, 7}, {1}), 132).family, AxisFamily::rows);
  EXPECT_EQ(builtin_axis_spec(Op::mean, f32_mean, shape_of({1 << 22, 3}, {1}), 132).family, AxisFamily::rows_packed);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f16, shape_of({1 << 24, 3}, {1}), 132).family, AxisFamily::rows_packed);
  EXPECT_EQ(builtin_axis_spec(Op::sum, TypeRule{DType::f64, DType::f64, DType::f64}, shape_of({1 << 24, 3}, {1}), 132)
                .family,
            AxisFamily::rows_packed);
  const CanonicalResult spaced_rows = canonicalize(TensorDesc::strided({1 << 22, 3}, {4, 1}), {1});
  ASSERT_TRUE(spaced_rows.ok);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, spaced_rows.axes, 132).family, AxisFamily::rows);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 64}, {1}), 132).family, AxisFamily::rows);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 129}, {1}), 132).family, AxisFamily::rows);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({20000, 100}, {1}), 132).family, AxisFamily::rows);
  const TypeRule wide{DType::f64, DType::f64, DType::f64};
  EXPECT_EQ(builtin_axis_spec(Op::sum, wide, shape_of({1 << 20, 33}, {1}), 132).family, AxisFamily::rows);
  const CanonicalResult sliced_rows = canonicalize(TensorDesc::strided({1 << 20, 100}, {103, 1}), {1});
  ASSERT_TRUE(sliced_rows.ok);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, sliced_rows.axes, 132).family, AxisFamily::rows);
  // Small problems are not split (a second launch would cost more than it saves).
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({7, 4097}, {1}), 132).split, AxisSplit::none);
  // Columns with many outputs: one thread per output walks R; few outputs: threads
  // across R, split across blocks when R is long.
  s = builtin_axis_spec(Op::max, kF32, shape_of({64, 1 << 20}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.rows_per_pass, 1u);
  // Very short columns over many outputs off the 16-byte grid: four outputs per thread
  // and pass (from 2^21 outputs, R = 2 or 3: the twin's vectors, capped); on the grid, a
  // vector of four adjacent outputs.
  s = builtin_axis_spec(Op::max, kF32, shape_of({3, (1 << 20) + 1}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.vec, 1u);
  EXPECT_EQ(s.rows_per_pass, 4u);
  s = builtin_axis_spec(Op::max, kF32, shape_of({4, (1 << 22) + 1}, {0}), 132);  // from R = 4, one
  EXPECT_EQ(s.vec, 1u);
  EXPECT_EQ(s.rows_per_pass, 1u);
  s = builtin_axis_spec(Op::max, kF32, shape_of({3, (1 << 22) + 1}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.rows_per_pass, 1u);
  EXPECT_EQ(s.occupancy, 1024u);
  // (Two vectors a thread a pass: 4-byte short columns of 2^21 outputs and more.)
  s = builtin_axis_spec(Op::max, kF32, shape_of({3, 1 << 22}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.rows_per_pass, 2u);
  EXPECT_EQ(s.split, AxisSplit::none);
  s = builtin_axis_spec(Op::max, kF32, shape_of({3, 1 << 20}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.rows_per_pass, 1u);
  s = builtin_axis_spec(Op::max, kF32, shape_of({1 << 16, 1000}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_GT(s.group, 1u);
  EXPECT_LE(s.group, s.block / 32);  // a warp still reads 32 neighbouring outputs
  // Narrow columns (inner <= 64) read as one contiguous run per block: up to 16 outputs
  // split in single steps interleaved across the blocks, four loads in flight (16-bit
  // max and min eight), the last block folding; 17 to 32 in tiles of eight steps in turn;
  // 33 to 64 in contiguous splits and a second kernel, eight loads in flight.
  s = builtin_axis_spec(Op::max, kF32, shape_of({1 << 20, 16}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.vec, 4u);  // the run is read in 16-byte vectors
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.unroll, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF16, shape_of({1 << 20, 16}, {0}), 132).unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::min, kBF16, shape_of({1 << 20, 16}, {0}), 132).unroll, 8u);
  // 16-bit sums interleave up to 8 outputs below 2^22 elements.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({1 << 20, 16}, {0}), 132).unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({1 << 19, 8}, {0}), 132).unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({(1 << 19) - 1, 8}, {0}), 132).unroll, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::mean, kBF16, shape_of({(1 << 19) - 1, 8}, {0}), 132).unroll, 4u);
  s = builtin_axis_spec(Op::max, kF32, shape_of({1 << 20, 17}, {0}), 132);
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.unroll, 8u);
  // Eight loads in flight take tiles: their splits keep at least 4096 elements each.
  s = builtin_axis_spec(Op::max, kF16, shape_of({1 << 20, 7}, {0}), 132);
  EXPECT_EQ(plan_axis_launch(s, shape_of({65537, 7}, {0}), 132).splits, 65537u / 586);
  // Interleaved steps: a split for every four steps of 1008 elements (252 threads of four
  // f32 each, whole rows of 7), at most four blocks per SM: 65537 x 7 is 456 steps.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({65537, 7}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(plan_axis_launch(s, shape_of({65537, 7}, {0}), 132).splits, 114u);
  EXPECT_EQ(plan_axis_launch(s, shape_of({1 << 20, 7}, {0}), 132).splits, 528u);
  // Tiles (17 outputs and more) keep at least 4096 elements a split.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 17}, {0}), 132);
  EXPECT_EQ(plan_axis_launch(s, shape_of({1 << 16, 17}, {0}), 132).splits, (1u << 16) / 241);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 33}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.split, AxisSplit::two_pass);
  EXPECT_EQ(s.unroll, 8u);
  EXPECT_GT(plan_axis_launch(s, shape_of({1 << 20, 33}, {0}), 132).finalize_grid, 0u);
  // Wider rows (65 .. 256 outputs) read dense over R >= 2^17, and over R >= 2^16 where a
  // row holds 240 bytes or more; the columns program below that.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({262145, 200}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({65537, 65}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({65535, 65}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16385, 256}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 18, 257}, {0}), 132).family, AxisFamily::columns);
  // Over 64 outputs, 4-byte elements keep four loads in flight, split contiguously.
  s = builtin_axis_spec(Op::max, kF32, shape_of({524289, 100}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.split, AxisSplit::two_pass);
  EXPECT_EQ(s.unroll, 4u);
  // Columns with a thousand outputs and a long R: enough blocks along R.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({4097, 1000}, {0}), 132);
  EXPECT_GE(plan_axis_launch(s, shape_of({4097, 1000}, {0}), 132).grid, 132u * 2);
  s = builtin_axis_spec(Op::max, kF32, shape_of({(1 << 16) - 1, 100}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  s = builtin_axis_spec(Op::max, kF32, shape_of({1 << 20, 257}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  // 16-bit columns: four adjacent outputs per thread over many outputs, on that grid (or
  // off it, the twin, below R = 32), or a long R; one where the outputs are few.
  const TypeRule h{DType::f16, DType::f16, DType::f32};
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({16, 1 << 20}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({16, (1 << 20) + 1}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({31, (1 << 20) + 3}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({256, 1 << 14}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 1000}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 100}, {0}), 132).vec, 1u);
  // From R = 32 off the grid a thread per output, eight loads in flight where it walks R
  // alone below R = 256 (on the 2-element grid two: SixteenBitColumnsOnTheTwoElementGrid-
  // ReadPairs); vectors again on the grid. One slice from R = 255 (revision 37): the twin's
  // funnel, four outputs a thread in blocks of 128 with 4 threads across R, four loads in
  // flight, unsplit. Slices keep a thread per output.
  for (const auto& off : {shape_of({32, (1 << 20) + 1}, {0}), shape_of({64, (1 << 20) + 1}, {0}),
                          shape_of({100, (1 << 20) - 1}, {0}), shape_of({254, (1 << 21) - 1}, {0}),
                          shape_of({255, (1 << 21) - 1}, {0}), shape_of({256, (1 << 19) + 3}, {0}),
                          shape_of({1000, (1 << 18) + 1}, {0}), shape_of({3, 300, (1 << 18) + 1}, {1})}) {
    s = builtin_axis_spec(Op::sum, h, off, 132);
    const bool funnel = off.reduced >= 255 && off.outputs == off.inner;
    const std::string at = std::to_string(off.reduced) + " x " + std::to_string(off.outputs);
    EXPECT_EQ(s.family, AxisFamily::columns) << at;
    EXPECT_EQ(s.vec, funnel ? 4u : 1u) << at;
    EXPECT_EQ(s.group, funnel ? 4u : 1u) << at;
    EXPECT_EQ(s.block, funnel ? 128u : 256u) << at;
    EXPECT_EQ(s.unroll, !funnel && off.reduced < 256 ? 8u : 4u) << at;
    if (funnel) {
      EXPECT_EQ(s.split, AxisSplit::none) << at;
    }
  }
  // Fewer outputs: from 896 per SM (blocks of 128 filling 7/8 of a wave at 8 an SM).
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({1000, 131071}, {0}), 132).group, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({1000, 118267}, {0}), 132).vec, 1u);
  // (Long 16-bit columns an output a thread: split and capped, AxisSpec.SplitColumns-
  // LoadsInFlightFollowTheOp.)
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 1001}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({12345, 1001}, {0}), 132).vec, 1u);
  // (two outputs a thread on the 2-element grid over few outputs and a long R: below)
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 1002}, {0}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 1058}, {0}), 132).vec, 2u);  // from 8 per SM too
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({12345, 1058}, {0}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({8191, 1058}, {0}), 132).vec, 1u);   // R < 8192
  // On the 4-element grid from R = 2^16: four outputs a thread, but two from 8 up to 31
  // outputs per SM.
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 1052}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 1056}, {0}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 2000}, {0}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 2112}, {0}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 2300}, {0}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({100, 1 << 20}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({100, 1 << 20}, {0}), 132).unroll, 8u);
  // Eight loads in flight where a thread walks R >= 8 alone over four outputs; not at
  // R = 3, nor for f32.
  s = builtin_axis_spec(Op::sum, h, shape_of({16, 1 << 22}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({8, 1 << 24}, {0}), 132).unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({3, 1 << 24}, {0}), 132).unroll, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16, 1 << 22}, {0}), 132).unroll, 4u);
  // 16-bit dense columns as 4-byte ones (tiles of R up to 32 outputs, eight loads in
  // flight), and at every width the dense rule takes: 33 .. 256 outputs split contiguously.
  s = builtin_axis_spec(Op::max, h, shape_of({1 << 24, 7}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.vec, 8u);
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(s.unroll, 8u);
  s = builtin_axis_spec(Op::sum, h, shape_of({1048577, 100}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.split, AxisSplit::two_pass);
  EXPECT_EQ(s.unroll, 8u);
  // 16-bit rows of 240 bytes and more read dense from R = 2^16, narrower ones from 2^17.
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 128}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 120}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 119}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({65537, 100}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({131071, 65}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({131073, 65}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({262145, 100}, {0}), 132).family, AxisFamily::columns_dense);
  // 8-byte elements keep the columns program below R = 2^18, and from there over more
  // than 200 outputs below R = 2^20; dense ones take blocks of 512 for min and max, and
  // over more than 64 outputs.
  const TypeRule f64_rule{DType::f64, DType::f64, DType::f64};
  const TypeRule i64_rule{DType::i64, DType::i64, DType::i64};
  EXPECT_EQ(builtin_axis_spec(Op::sum, f64_rule, shape_of({(1 << 18) - 1, 65}, {0}), 132).family,
            AxisFamily::columns);
  s = builtin_axis_spec(Op::sum, f64_rule, shape_of({1 << 18, 65}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(builtin_axis_spec(Op::max, i64_rule, shape_of({1 << 18, 200}, {0}), 132).family,
            AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::max, i64_rule, shape_of({1 << 18, 201}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f64_rule, shape_of({1 << 20, 256}, {0}), 132).family,
            AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f64_rule, shape_of({1 << 20, 9}, {0}), 132).block, 256u);
  // (8-byte dense columns of up to 64 outputs that split: blocks of 256, below.)
  EXPECT_EQ(builtin_axis_spec(Op::max, i64_rule, shape_of({1 << 20, 9}, {0}), 132).block, 256u);
  EXPECT_EQ(builtin_axis_spec(Op::min, i64_rule, shape_of({100000, 41}, {0}), 132).block, 256u);
  EXPECT_EQ(builtin_axis_spec(Op::max, i64_rule, shape_of({1 << 18, 100}, {0}), 132).block, 512u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 9}, {0}), 132).block, 256u);
  // 4-byte columns: the same vectors (16 bytes) over R <= 128 and many outputs on the
  // grid; not off the grid, past R = 128, under 1024 outputs per SM, or for 8-byte types.
  const TypeRule i32{DType::i32, DType::i32, DType::i32};
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16, 1 << 20}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, i32, shape_of({2, 1 << 18}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({128, 1 << 20}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({129, 1 << 20}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16, (1 << 20) + 2}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16, 1 << 16}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f64, shape_of({16, 1 << 20}, {0}), 132).vec, 1u);
  // A sliced view whose rows are 2^20 + 2 elements apart: off the grid.
  const CanonicalResult sliced =
      canonicalize(TensorDesc::strided({16, 1 << 20}, {(1 << 20) + 2, 1}), AxisList{0});
  ASSERT_TRUE(sliced.ok) << sliced.error;
  EXPECT_EQ(sliced.axes.layout, AxisLayout::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, sliced.axes, 132).vec, 1u);
  // Wider elements: a 16-byte vector of adjacent outputs, in blocks of 128, over a long
  // R split across blocks and more than 256 outputs; a thread per output otherwise.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({65537, 1000}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.block, 128u);
  EXPECT_EQ(s.split, AxisSplit::two_pass);  // tiles of 128 outputs over 66 splits: a second kernel folds
  EXPECT_GE(plan_axis_launch(s, shape_of({65537, 1000}, {0}), 132).grid, 132u * 2);
  // Not 8-byte elements, nor min and max off the 4-element grid: a thread per output.
  const TypeRule d{DType::f64, DType::f64, DType::f64};
  EXPECT_EQ(builtin_axis_spec(Op::max, d, shape_of({4097, 1001}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, d, shape_of({4097, 1001}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({20249, 2047}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::min, kF32, shape_of({20249, 2047}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({20249, 2047}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({40000, 2000}, {0}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({20249, 2048}, {0}), 132).vec, 1u);  // split, capped
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16385, 256}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({4095, 1000}, {0}), 132).vec, 1u);
  // 4-byte columns with R > 512 over 64 outputs per SM and more, on the 4-element grid: a
  // 16-byte vector of outputs per thread, unsplit, 8 to 32 threads across R for about
  // 1024 threads per SM.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({4097, 16384}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 32u);
  EXPECT_EQ(s.block, 1024u);
  EXPECT_EQ(s.split, AxisSplit::none);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1000, 24576}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 16u);
  EXPECT_EQ(s.block, 512u);
  s = builtin_axis_spec(Op::max, kF32, shape_of({1000, 262144}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 8u);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.split, AxisSplit::none);
  // Off that grid, whatever the outputs' count mod 4, a thread per output.
  for (std::int64_t outputs : {16383, 16385, 16386, 24577, 65535, 262145})
    EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({4097, outputs}, {0}), 132).vec, 1u) << outputs;
  // 16-bit elements the same way (8-byte loads) below 1024 outputs per SM, on the grid;
  // not off it.
  s = builtin_axis_spec(Op::sum, h, shape_of({4097, 16384}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 32u);
  EXPECT_EQ(s.block, 1024u);
  EXPECT_EQ(s.unroll, 8u);  // eight loads in flight from R = 4096 (16-bit only)
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({30001, 8448}, {0}), 132).unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::max, kBF16, shape_of({4096, 8448}, {0}), 132).unroll, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({4095, 8448}, {0}), 132).unroll, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({30001, 8448}, {0}), 132).unroll, 4u);
  // Off it in one slice, the twin's funnel (revision 37), four loads in flight: 32 threads
  // across R from R = 4096 where the blocks of 1024 make 0.9 of a wave, 16 from R = 2048
  // where those of 512 make 1.75 an SM; not over more slices.
  s = builtin_axis_spec(Op::sum, h, shape_of({4097, 16385}, {0}), 132);  // 129 blocks
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 32u);
  EXPECT_EQ(s.block, 1024u);
  EXPECT_EQ(s.unroll, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({8191, 16383}, {0}), 132).vec, 4u);
  s = builtin_axis_spec(Op::max, kBF16, shape_of({8191, 32767}, {0}), 132);  // 256 blocks of 512
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 16u);
  EXPECT_EQ(s.unroll, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({2048, 30001}, {0}), 132).group, 16u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({2047, 30001}, {0}), 132).vec, 1u);   // R < 2048
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({4095, 16385}, {0}), 132).vec, 1u);   // R < 4096
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({5001, 20479}, {0}), 132).vec, 1u);   // 160 blocks
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({12345, 9999}, {0}), 132).vec, 1u);   // 79 blocks
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({2049, 50001}, {0}), 132).vec, 1u);   // 8 across R
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({2, 4097, 16385}, {1}), 132).vec, 1u);  // slices
  s = builtin_axis_spec(Op::sum, h, shape_of({1000, 100000}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 8u);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({1000, 100001}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, h, shape_of({4097, 1000}, {0}), 132).vec, 1u);
  // Not at R <= 512, nor for 8-byte elements.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({512, 1 << 16}, {0}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, f64, shape_of({1000, 1 << 16}, {0}), 132).vec, 1u);
  // Many outputs that fill one wave of blocks of 512 (32 outputs each, four per SM),
  // R <= 512: 16 threads across R; more outputs than that, or a short R: blocks of 256.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({512, 16385}, {0}), 132);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.group, 16u);
  EXPECT_EQ(s.split, AxisSplit::none);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({512, 24577}, {0}), 132);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.group, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({100, 16385}, {0}), 132).block, 256u);
  // Columns of a thread per output (or two) between the one wave above and a block of 1024
  // per SM, and around them. Threads across R unsplit: eight loads in flight where few
  // threads are resident per SM (outputs x threads across R / SMs: up to 1750 for 16-bit
  // elements, 1280 for 4-byte ones) and each reads at least 48 rows. From 31 outputs per
  // SM up to the one wave, R > 2048: unsplit in blocks of 1024 (f32 too, whose R >= 4096
  // read four outputs a thread below 20 outputs per SM off the 4-element grid, 64 on it);
  // 16-bit on the 2-element grid there, two outputs a thread, split, the last block folding
  // (from R = 16384 on the 4-element grid four outputs a thread in blocks of 128). Below 31 outputs per
  // SM, a split thread per output from 15 per SM: eight loads in flight; so too from 257
  // outputs up to 8 per SM over R >= 8192, two outputs a thread on the 2-element grid.
  struct ColumnsCase {
    TypeRule types;
    std::int64_t r, outputs;
    std::uint32_t vec, block, group;
    AxisSplit split;
    std::uint32_t unroll;
  };
  // Split columns of up to 16 MiB fold in one launch (a ticket per group of blocks).
  const AxisSplit none = AxisSplit::none, folded = AxisSplit::ticket, two = AxisSplit::two_pass;
  for (const ColumnsCase& c : {
           // (16-bit rows off the grid in one slice: the funnel's vectors of four where
           // their blocks fill most of a wave, revision 37)
           ColumnsCase{h, 12345, 9999, 1, 512, 16, none, 8},     // 1212 threads per SM: 79 blocks
           ColumnsCase{h, 12345, 16383, 4, 1024, 32, none, 4},   // 1986: 128 blocks
           ColumnsCase{h, 5001, 20479, 1, 256, 8, none, 8},      // 1241: 160 blocks of 512
           ColumnsCase{h, 5001, 30001, 4, 512, 16, none, 4},     // 1818: 235 blocks
           ColumnsCase{h, 2049, 50001, 1, 256, 4, none, 8},      // 1515
           ColumnsCase{h, 600, 9999, 1, 512, 16, none, 4},       // 37 rows a thread
           ColumnsCase{h, 768, 9999, 1, 512, 16, none, 8},       // 48 rows a thread
           ColumnsCase{kF32, 12345, 8449, 1, 512, 16, none, 8},  // 1024
           ColumnsCase{kF32, 12345, 12287, 1, 512, 16, none, 4}, // 1489
           ColumnsCase{kF32, 2049, 40001, 1, 256, 4, none, 8},   // 1212
           ColumnsCase{kF32, 2049, 50001, 1, 256, 4, none, 4},   // 1515
           ColumnsCase{f64, 12345, 8449, 1, 512, 16, none, 4},   // 8-byte elements: four
           ColumnsCase{h, 12287, 4093, 1, 1024, 32, none, 8},    // 31 outputs per SM
           ColumnsCase{h, 30001, 4093, 1, 256, 8, folded, 8},    // 16-bit, R >= 12288: split
           ColumnsCase{h, 12288, 6199, 1, 256, 8, folded, 8},    // up to 6200 outputs
           ColumnsCase{h, 12288, 6201, 1, 1024, 32, none, 8},
           ColumnsCase{h, 30001, 7001, 1, 1024, 32, none, 8},    // 1697 threads per SM
           ColumnsCase{h, 30001, 8447, 1, 1024, 32, none, 4},    // 2047
           ColumnsCase{kF32, 30001, 5001, 1, 1024, 32, none, 8}, // 1212
           ColumnsCase{kF32, 30001, 7001, 1, 1024, 32, none, 4}, // 1697
           ColumnsCase{kF32, 30001, 8447, 1, 1024, 32, none, 4},
           ColumnsCase{kF32, 30001, 2637, 4, 128, 4, two, 4},    // under 20 outputs per SM
           ColumnsCase{kF32, 30001, 4096, 1, 256, 8, folded, 8}, // on the grid: up to 48, capped
           ColumnsCase{kF32, 65537, 4096, 1, 256, 8, folded, 8}, // rows of whole 128 bytes
           ColumnsCase{kF32, 65537, 5000, 4, 128, 4, folded, 4}, // or R < 16384: vectors of four,
           ColumnsCase{kF32, 16384, 5000, 4, 128, 4, folded, 4}, // folded where the fold is short
           ColumnsCase{kF32, 16383, 5000, 1, 256, 8, folded, 8},
           ColumnsCase{kF32, 30001, 3000, 4, 128, 4, two, 4},    // (six round trips: a second kernel)
           ColumnsCase{kF32, 30001, 7000, 4, 128, 4, folded, 4}, // over 48 up to 64
           ColumnsCase{kF32, 30001, 2000, 4, 128, 4, two, 4},    // under 2048 from R = 16384
           ColumnsCase{kF32, 16383, 2000, 1, 256, 8, folded, 8},
           ColumnsCase{kF32, 30001, 2641, 1, 256, 8, two, 8},    // 20 per SM
           ColumnsCase{h, 30001, 3001, 1, 256, 8, folded, 8},
           ColumnsCase{kF32, 2049, 3001, 1, 256, 8, folded, 8},
           ColumnsCase{h, 30001, 1979, 1, 256, 8, folded, 8},       // 16-bit sums: from 8 outputs per SM
           ColumnsCase{h, 30001, 4094, 2, 256, 8, folded, 8},    // the 2-element grid: pairs,
           ColumnsCase{h, 30001, 8446, 2, 256, 8, folded, 8},    // the last block folding
           ColumnsCase{h, 100003, 5002, 2, 256, 8, folded, 8},   // (one round trip) at any size
           ColumnsCase{h, 16383, 5000, 2, 256, 8, folded, 8},    // the 4-element grid, R < 16384
           ColumnsCase{h, 16384, 5000, 4, 128, 4, folded, 8},    // from R = 16384 vectors of four
           ColumnsCase{h, 30001, 4096, 4, 128, 4, folded, 8},    // in blocks of 128, folded
           ColumnsCase{h, 100003, 5000, 4, 128, 4, folded, 8},
           ColumnsCase{h, 65537, 8444, 4, 128, 4, folded, 8},    // up to 64 outputs per SM
           ColumnsCase{h, 65537, 8448, 4, 1024, 32, none, 8},    // (64: unsplit)
           ColumnsCase{h, 65537, 4088, 4, 128, 4, folded, 8},    // 16 to 31 from R = 2^16 where
           ColumnsCase{h, 65537, 2400, 4, 128, 4, folded, 8},    // the fold takes 7 trips or fewer
           ColumnsCase{h, 65537, 2300, 2, 256, 8, folded, 8},    // (8 trips: pairs)
           ColumnsCase{h, 65535, 3000, 2, 256, 8, folded, 8},    // (R < 2^16: pairs)
           ColumnsCase{h, 100003, 2112, 2, 256, 8, two, 8},      // (pairs past 384 MiB: two passes)
           ColumnsCase{h, 65537, 1056, 2, 256, 8, folded, 8},    // pairs from 8 per SM
           ColumnsCase{h, 262145, 1800, 2, 256, 8, two, 8},      // (past 384 MiB a second kernel)
           ColumnsCase{h, 65537, 1052, 4, 128, 4, two, 8},       // under 8 per SM from R = 2^16:
           ColumnsCase{h, 1048577, 512, 4, 128, 4, two, 8},      // vectors of four in blocks of 128
           ColumnsCase{h, 65537, 508, 2, 256, 8, two, 8},        // (under 512 outputs pairs,
           ColumnsCase{h, 65535, 1000, 2, 256, 8, two, 8},       // and under R = 2^16)
           ColumnsCase{h, 2048, 4096, 1, 1024, 32, none, 8},     // R <= 2048: a thread per output
           ColumnsCase{h, 30001, 4091, 1, 256, 8, folded, 8},  // under 31 outputs per SM
           ColumnsCase{h, 30001, 4090, 2, 256, 8, folded, 8},  // pairs: the last block folds
           // 257 outputs up to 8 per SM over R >= 8192: split, eight loads in flight, two
           // outputs a thread on the 2-element grid (f32 off the 4-element grid only)
           ColumnsCase{h, 27344, 462, 2, 256, 8, two, 8},
           ColumnsCase{h, 8192, 1054, 2, 256, 8, two, 8},
           ColumnsCase{h, 32768, 757, 1, 256, 8, folded, 8},
           ColumnsCase{kF32, 27344, 462, 2, 256, 8, two, 8},
           ColumnsCase{kF32, 37217, 669, 1, 256, 8, folded, 8},
           ColumnsCase{kF32, 65537, 500, 4, 128, 4, two, 4},      // on the 4-element grid: four (a long fold)
           // split a thread per output in blocks of 256: eight loads in flight, capped, the
           // last block folding, wherever those split (capped_split_columns)
           ColumnsCase{h, 8191, 600, 1, 256, 8, folded, 8},       // R < 8192
           ColumnsCase{h, 30001, 256, 1, 256, 8, folded, 8},      // 256 outputs
           ColumnsCase{h, 30001, 1057, 1, 256, 8, folded, 8},     // 8 outputs per SM
           ColumnsCase{h, 30001, 1056, 2, 256, 8, folded, 8},     // pairs from 8 per SM
           ColumnsCase{h, 4097, 1055, 1, 256, 8, folded, 8}}) {   // under 8 per SM, R < 8192
    s = builtin_axis_spec(Op::sum, c.types, shape_of({c.r, c.outputs}, {0}), 132);
    const std::string at = std::to_string(c.r) + " x " + std::to_string(c.outputs) + " " +
                           std::string(to_string(c.types.in));
    // Where the columns program would read an output a thread over long columns of a few
    // thousand, the staged kernel reads them instead (ColumnsStaged tests below), but on
    // the 16-byte grid (split and capped there).
    const CanonicalAxes here = shape_of({c.r, c.outputs}, {0});
    if (c.vec == 1 && columns_staged_pays(Op::sum, c.types, here) &&
        !axis_on_16byte_grid(here, size_of(c.types.in))) {
      EXPECT_EQ(s.family, AxisFamily::columns_staged) << at;
      continue;
    }
    EXPECT_EQ(s.family, AxisFamily::columns) << at;
    EXPECT_EQ(s.vec, c.vec) << at;
    EXPECT_EQ(s.block, c.block) << at;
    EXPECT_EQ(s.group, c.group) << at;
    EXPECT_EQ(s.split, c.split) << at;
    EXPECT_EQ(s.unroll, c.unroll) << at;
    // Split a thread per output in blocks of 256: registers capped to keep the plan's four
    // blocks per SM resident, and only those.
    const bool capped = c.vec == 1 && c.block == 256 && c.group == 8 && c.split != none;
    EXPECT_EQ(s.occupancy, capped ? 1024u : 0u) << at;
    if (capped) {
      EXPECT_EQ(s.blocks_per_sm, 4u) << at;
    }
  }
  // 16-bit vectors of four in blocks of 128 only where the base is on the 8-byte grid too
  // (their twin reads scalars): a base 4 bytes past it reads pairs, folded by the last block.
  const void* pairs_base = reinterpret_cast<const void*>(std::uintptr_t{1} << 20 | 4);
  const void* quads_base = reinterpret_cast<const void*>(std::uintptr_t{1} << 20 | 8);
  for (const auto& [r, outputs] : {std::pair<std::int64_t, std::int64_t>{65537, 5000}, {65537, 1000}}) {
    const std::string at = std::to_string(r) + " x " + std::to_string(outputs);
    const AxisKernelSpec quads = builtin_axis_spec(Op::sum, h, shape_of({r, outputs}, {0}), 132, nullptr, quads_base);
    EXPECT_EQ(quads.vec, 4u) << at;
    EXPECT_EQ(quads.block, 128u) << at;
    const AxisKernelSpec off = builtin_axis_spec(Op::sum, h, shape_of({r, outputs}, {0}), 132, nullptr, pairs_base);
    EXPECT_NE(off.block, 128u) << at;
    if (outputs >= 31 * 132) {
      EXPECT_EQ(off.vec, 2u) << at;
      EXPECT_EQ(off.split, AxisSplit::ticket) << at;
    }
  }
  // 8-byte elements keep the split.
  EXPECT_EQ(builtin_axis_spec(Op::sum, f64, shape_of({30001, 5001}, {0}), 132).split, AxisSplit::two_pass);
  // Long columns: up to 256 of them read as one contiguous run; rows that are not
  // contiguous (a slice of wider ones), a few hundred over 2^18 rows and more: blocks of
  // 512, the last block folding.
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 20, 100}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.vec, 4u);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({1 << 18, 200}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  const CanonicalResult slice_of_wider =
      canonicalize(TensorDesc::strided({1 << 18, 200}, {256, 1}), AxisList{0});
  ASSERT_TRUE(slice_of_wider.ok) << slice_of_wider.error;
  s = builtin_axis_spec(Op::sum, kF32, slice_of_wider.axes, 132);
  EXPECT_EQ(s.family, AxisFamily::columns);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.group, 16u);
  EXPECT_EQ(s.split, AxisSplit::ticket);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({65536, 200}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns_dense);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.split, AxisSplit::two_pass);
  // Short columns that a plan would split: one launch, 16 threads across R in blocks of
  // 512 up to R = 512, 32 in blocks of 1024 up to R = 1024 (2048 over 1000 outputs and
  // more); a longer R over few outputs splits in blocks of 512, the last block folding.
  for (std::int64_t outputs : {2, 33, 100, 4097}) {
    s = builtin_axis_spec(Op::sum, kF32, shape_of({256, outputs}, {0}), 132);
    EXPECT_EQ(s.family, AxisFamily::columns) << outputs;
    EXPECT_EQ(s.block, 512u) << outputs;
    EXPECT_EQ(s.group, 16u) << outputs;
    EXPECT_EQ(s.split, AxisSplit::none) << outputs;
    s = builtin_axis_spec(Op::max, kF32, shape_of({1000, outputs}, {0}), 132);
    EXPECT_EQ(s.block, 1024u) << outputs;
    EXPECT_EQ(s.group, 32u) << outputs;
    EXPECT_EQ(s.split, AxisSplit::none) << outputs;
    EXPECT_EQ(plan_axis_launch(s, shape_of({1000, outputs}, {0}), 132).splits, 1u);
  }
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({2048, 1000}, {0}), 132).block, 1024u);
  // Up to R = 2560 over 256 to 1999 outputs, unsplit too; below 256, or past 2560, split
  // (in one launch).
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({2048, 512}, {0}), 132).split, AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({2049, 571}, {0}), 132).split, AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({2560, 256}, {0}), 132).split, AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({2048, 255}, {0}), 132).split, AxisSplit::ticket);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({2561, 571}, {0}), 132).split, AxisSplit::ticket);
  s = builtin_axis_spec(Op::max, kF32, shape_of({2048, 33}, {0}), 132);
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.split, AxisSplit::ticket);
  s = builtin_axis_spec(Op::sum, kF32, shape_of({2049, 33}, {0}), 132);
  EXPECT_EQ(s.family, AxisFamily::columns);  // 2^20 elements or fewer: not dense
  EXPECT_EQ(s.block, 512u);
  EXPECT_EQ(s.group, 16u);
  EXPECT_EQ(s.split, AxisSplit::ticket);
  // One slice of few outputs that interleaves reads dense from 2^17 elements and R = 2^15
  // (16-bit: R = 2^16); wider ones from 2^20 elements.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({32767, 7}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({32768, 7}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({32768, 3}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({43691, 3}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({32767, 16}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({32768, 16}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({65535, 7}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({65536, 7}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::mean, kBF16, shape_of({65535, 2}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::mean, kBF16, shape_of({65536, 2}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({65537, 9}, {0}), 132).family, AxisFamily::columns);
  // 16-bit max and min keep eight loads in flight in tiles, so the columns program up to
  // 2^20 elements, as wider slices.
  EXPECT_EQ(builtin_axis_spec(Op::max, kF16, shape_of({65537, 7}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::min, kBF16, shape_of({65537, 7}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({61680, 17}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({61681, 17}, {0}), 132).family, AxisFamily::columns_dense);
  // Several slices of few outputs: the 2^20 edge (two slices of 2^16 x 8).
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({2, 1 << 16, 8}, {1}), 132).family, AxisFamily::columns);
  // Many slices of narrow columns: dense where a slice holds 16 KiB or more, a block
  // folding each through shared memory; smaller slices read faster a thread per output.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 12, 64, 8}, {1}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 12, 512, 8}, {1}), 132).family,
            AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({1 << 12, 511, 8}, {1}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::mean, kBF16, shape_of({2049 * 13, 67, 7}, {1}), 132).family,
            AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kBF16, shape_of({512, 1000, 33}, {1}), 132).family,
            AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({4, 64, 8}, {1}), 132).family, AxisFamily::columns);
  // 16-bit columns of more than 16 outputs over R > 1024 stay dense.
  const TypeRule half{DType::f16, DType::f16, DType::f32};
  EXPECT_EQ(builtin_axis_spec(Op::max, half, shape_of({2049, 33}, {0}), 132).family, AxisFamily::columns_dense);
  EXPECT_EQ(builtin_axis_spec(Op::max, half, shape_of({2049, 7}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::max, half, shape_of({1000, 33}, {0}), 132).block, 1024u);
  // Many outputs over a short R are not split: four per thread (above).
  s = builtin_axis_spec(Op::sum, kF32, shape_of({2048, 1 << 14}, {0}), 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.split, AxisSplit::none);
  EXPECT_EQ(plan_axis_launch(s, shape_of({2048, 1 << 14}, {0}), 132).splits, 1u);
  // General: lanes along the reduced dimensions where a reduced one is the densest, with
  // vectors where the innermost is contiguous and every reduced stride a multiple of one.
  s = builtin_axis_spec(Op::min, kF32, shape_of({6, 7, 8}, {0, 2}), 132);
  EXPECT_EQ(s.family, AxisFamily::general);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_GT(s.group, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::min, kF16, shape_of({6, 7, 8}, {0, 2}), 132).vec, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::min, kF16, shape_of({6, 7, 12}, {0, 2}), 132).vec, 4u);
  EXPECT_EQ(builtin_axis_spec(Op::min, kF32, shape_of({6, 7, 9}, {0, 2}), 132).vec, 1u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({32, 256, 56, 56}, {0, 2, 3}), 132).vec, 4u);
  // A block per output over a long R, split: the last block folds the partials up to 256
  // outputs (one launch), a second kernel past that; unsplit where the outputs fill the GPU.
  for (const auto& [kept, split] : std::vector<std::pair<std::int64_t, AxisSplit>>{
           {128, AxisSplit::ticket}, {256, AxisSplit::ticket}, {260, AxisSplit::two_pass}, {300, AxisSplit::none}}) {
    for (const TypeRule& t : {kF32, kF16}) {
      const CanonicalAxes general = shape_of({64, kept, 512}, {0, 2});
      s = builtin_axis_spec(Op::sum, t, general, 132);
      EXPECT_EQ(s.family, AxisFamily::general);
      EXPECT_EQ(s.group, s.block) << to_string(s);
      EXPECT_EQ(s.split, split) << kept << " outputs: " << to_string(s);
    }
  }
  // Such blocks read element by element (a strided densest reduced dimension, or one
  // whose extent no vector divides) and split, along one reduced dimension or 24 KiB a
  // split and more: blocks of 256 with eight loads in flight. Unsplit along one
  // dimension: eight loads in flight. Shorter splits along two dimensions, and blocks that
  // read vectors along R, keep blocks of 128 with four.
  for (const TypeRule& t : {kF32, kF16, TypeRule{DType::f64, DType::f64, DType::f64}}) {
    const auto strided = [](std::initializer_list<std::int64_t> e, std::initializer_list<std::int64_t> st,
                            AxisList axes) { return canonicalize(TensorDesc::strided(e, st), axes).axes; };
    for (const CanonicalAxes& split_shape :
         {strided({37046327}, {2}, {0}), strided({1000003}, {3}, {0}), strided({24, 262143}, {524286, 2}, {1}),
          strided({257, 65537}, {131074, 2}, {1}), shape_of({1000, 100, 1001}, {0, 2})}) {
      s = builtin_axis_spec(Op::max, t, split_shape, 132);
      EXPECT_EQ(s.family, AxisFamily::general) << split_shape.to_string();
      EXPECT_EQ(s.vec, 1u) << split_shape.to_string() << " " << to_string(s);
      EXPECT_NE(s.split, AxisSplit::none) << split_shape.to_string();
      EXPECT_EQ(s.block, 256u) << split_shape.to_string();
      EXPECT_EQ(s.group, 256u) << split_shape.to_string();
      EXPECT_EQ(s.unroll, 8u) << split_shape.to_string();
      EXPECT_EQ(s.blocks_per_sm, 4u) << split_shape.to_string();
    }
    s = builtin_axis_spec(Op::max, t, strided({500, 4096}, {8192, 2}, {1}), 132);  // 500 blocks: unsplit
    EXPECT_EQ(s.split, AxisSplit::none);
    EXPECT_EQ(s.block, 256u);  // 2 to 4 rows per SM
    EXPECT_EQ(builtin_axis_spec(Op::max, t, strided({600, 4096}, {8192, 2}, {1}), 132).block, 128u);
    EXPECT_EQ(s.unroll, 8u);
    EXPECT_EQ(s.vec, 1u);
    // Four splits of 8208: 128 x 4 blocks are four per SM, 128 x 5 would give some SMs
    // five. 4- and 8-byte elements read 24 KiB a split or more there; 16-bit ones do not.
    const CanonicalAxes two_short = shape_of({64, 128, 513}, {0, 2});
    s = builtin_axis_spec(Op::max, t, two_short, 132);
    EXPECT_EQ(s.vec, 1u);
    EXPECT_EQ(plan_axis_launch(s, two_short, 132).splits, 4u);
    EXPECT_EQ(s.block, t.in == DType::f16 ? 128u : 256u) << to_string(s);
    EXPECT_EQ(s.unroll, t.in == DType::f16 ? 4u : 8u) << to_string(s);
    // Splits of 5143 along two dimensions ([3,9,5,20001] over (1,3)): 8-byte elements only.
    const CanonicalAxes shorter = shape_of({3, 9, 5, 20001}, {1, 3});
    s = builtin_axis_spec(Op::max, t, shorter, 132);
    EXPECT_EQ(s.family, AxisFamily::general) << to_string(s);
    EXPECT_EQ(plan_axis_launch(s, shorter, 132).splits * 5143, 180005u);
    EXPECT_EQ(s.block, t.in == DType::f64 ? 256u : 128u) << to_string(s);
    // Four outputs of 3148561 over two dimensions, 23853 a split: every element size.
    s = builtin_axis_spec(Op::max, t, shape_of({2, 13, 2, 242197}, {1, 3}), 132);
    EXPECT_EQ(s.block, 256u) << to_string(s);
    EXPECT_EQ(s.unroll, 8u) << to_string(s);
    s = builtin_axis_spec(Op::max, t, shape_of({64, 128, 512}, {0, 2}), 132);  // vectors along R
    EXPECT_GT(s.vec, 1u);
    EXPECT_EQ(s.block, 128u);
    EXPECT_EQ(s.unroll, 4u);
  }
  // Runs of 2 to 4 contiguous reduced elements side by side with the outputs' ([n, m, e]
  // over (0, 2)): g lanes per output, the smallest power of two that gives 768 threads
  // per SM, where that is at most 4; eight loads in flight, blocks of 256. Fewer outputs,
  // longer runs, or runs not side by side keep the lanes along R.
  for (const TypeRule& t : {kF32, kF16}) {
    for (const auto& [extents, group] : std::vector<std::pair<std::vector<std::int64_t>, std::uint32_t>>{
             {{146, 32768, 3}, 4u}, {{100, 65536, 2}, 2u}, {{64, 100000, 4}, 2u}, {{16, 262144, 3}, 1u},
             {{50, 200000, 3}, 1u}, {{100, 25344, 3}, 4u},
             // R of 2048 and more, where a block would take each output otherwise
             {{1024, 65213, 2}, 2u}, {{4096, 200000, 2}, 1u}}) {
      const CanonicalAxes shape = shape_of({extents[0], extents[1], extents[2]}, {0, 2});
      s = builtin_axis_spec(Op::max, t, shape, 132);
      EXPECT_EQ(s.family, AxisFamily::general) << shape.to_string();
      EXPECT_EQ(s.group, group) << shape.to_string();
      EXPECT_EQ(s.block, 256u) << shape.to_string();
      EXPECT_EQ(s.unroll, 8u) << shape.to_string();
      EXPECT_EQ(s.rows_per_pass, 1u) << shape.to_string();
      EXPECT_EQ(s.split, AxisSplit::none) << shape.to_string();
    }
    for (const auto& extents : std::vector<std::vector<std::int64_t>>{
             {1000, 10000, 3},    // 10000 outputs: would need groups of 16
             {100, 25343, 3},     // one output short of 192 per SM
             {100, 32768, 5}}) {  // a run of 5
      const CanonicalAxes shape = shape_of({extents[0], extents[1], extents[2]}, {0, 2});
      EXPECT_GT(builtin_axis_spec(Op::max, t, shape, 132).group, 4u) << shape.to_string();
    }
    // Runs not side by side with the outputs (a gap of one element after each).
    const CanonicalAxes gapped = canonicalize(TensorDesc::strided({146, 32768, 3}, {131072, 4, 1}), {0, 2}).axes;
    EXPECT_GT(builtin_axis_spec(Op::max, t, gapped, 132).group, 4u) << gapped.to_string();
  }
  // Rows keep their own choice (ticket_tiles there): the rule is the general family's.
  EXPECT_NE(builtin_axis_spec(Op::sum, kF32, shape_of({128, 32768}, {1}), 132).split, AxisSplit::ticket);
  // A kept dimension the densest (the outputs of the last one contiguous): a thread per
  // vector of adjacent outputs, threads across R where the outputs are too few to fill the
  // GPU, and splits across blocks where they are fewer still.
  const CanonicalAxes few = shape_of({64, 32, 128, 128}, {0, 2});
  s = builtin_axis_spec(Op::sum, kF32, few, 132);
  EXPECT_EQ(s.family, AxisFamily::general);
  EXPECT_EQ(s.group, 32u);  // 1024 vectors of four outputs: 32 threads across R each
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.rows_per_pass, 1u);
  EXPECT_EQ(s.split, AxisSplit::none);
  EXPECT_EQ(plan_axis_launch(s, few, 132).grid, 128u);
  // Loads of 8 bytes (16-bit, four outputs a thread) in fewer blocks than SMs (128 here):
  // split as well, in blocks of 128 and a second kernel.
  s = builtin_axis_spec(Op::sum, kF16, few, 132);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.group, 32u);
  EXPECT_EQ(s.split, AxisSplit::two_pass) << to_string(s);
  EXPECT_EQ(s.block, 128u);
  EXPECT_GT(plan_axis_launch(s, few, 132).splits, 1u);
  // In one to two blocks per SM (132 to 263 here), from a base off the 8-byte vector grid
  // (the twin's scalar loads), split over R of 10000 and more, in blocks of 256; unsplit
  // over shorter R, in more blocks, or from a base on the grid (the address below is
  // never read: the choice looks at its alignment alone).
  const auto* grid = reinterpret_cast<const unsigned char*>(std::uintptr_t{1} << 20);
  const void* off_grid = grid + 2;  // one 16-bit element in
  const CanonicalAxes long_view = shape_of({100, 33, 100, 128}, {0, 2});  // 132 blocks
  AxisLaunchPlan given;
  s = builtin_axis_spec(Op::sum, kF16, long_view, 132, &given, off_grid);
  EXPECT_EQ(s.split, AxisSplit::two_pass) << to_string(s);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(s.group, 32u);
  EXPECT_GT(given.splits, 1u);
  EXPECT_TRUE(axis_launch_takes_twin(s, long_view, given, off_grid));
  for (const void* aligned : {static_cast<const void*>(grid), static_cast<const void*>(grid + 8), static_cast<const void*>(nullptr)}) {
    s = builtin_axis_spec(Op::sum, kF16, long_view, 132, &given, aligned);
    EXPECT_EQ(s.split, AxisSplit::none) << to_string(s);
    EXPECT_EQ(s.block, 256u);
    EXPECT_EQ(given.splits, 1u);
    EXPECT_FALSE(axis_launch_takes_twin(s, long_view, given, aligned));
  }
  // One to three 16-bit elements in are all off the grid of four.
  for (int in : {1, 3}) {
    s = builtin_axis_spec(Op::sum, kF16, long_view, 132, nullptr, grid + 2 * in);
    EXPECT_EQ(s.split, AxisSplit::two_pass) << in;
  }
  s = builtin_axis_spec(Op::sum, kBF16, shape_of({100, 65, 100, 128}, {0, 2}), 132, nullptr, off_grid);  // 260 blocks
  EXPECT_EQ(s.split, AxisSplit::two_pass) << to_string(s);
  EXPECT_EQ(s.block, 256u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kBF16, shape_of({100, 65, 100, 128}, {0, 2}), 132, nullptr, grid).split,
            AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({100, 66, 100, 128}, {0, 2}), 132, nullptr, off_grid).split,
            AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({99, 33, 101, 128}, {0, 2}), 132, nullptr, off_grid).split,
            AxisSplit::none);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({50, 40, 30, 200}, {0, 2}), 132, nullptr, off_grid).split,
            AxisSplit::none);
  // Not 4-byte elements in those blocks (16-byte loads).
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, long_view, 132, nullptr, grid + 4).split, AxisSplit::none);
  // On a GPU of 16 SMs: 8 blocks split, 16 do not.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({64, 2, 64, 128}, {0, 2}), 16).split, AxisSplit::two_pass);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({64, 4, 64, 128}, {0, 2}), 16).split, AxisSplit::none);
  // 16-byte loads split in fewer blocks than half the SMs (48 and 64 here, not 66; not 128
  // above).
  s = builtin_axis_spec(Op::sum, kF32, shape_of({40, 24, 300, 64}, {0, 2}), 132);
  EXPECT_EQ(s.split, AxisSplit::two_pass) << to_string(s);
  EXPECT_EQ(s.block, 128u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({40, 32, 300, 64}, {0, 2}), 132).split, AxisSplit::two_pass);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({40, 33, 300, 64}, {0, 2}), 132).split, AxisSplit::none);
  // 8-byte loads with fewer than 32 threads across R fill the SMs unsplit.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, shape_of({100, 100, 100, 100}, {0, 2}), 132).split, AxisSplit::none);
  // The views of the GPU test Axes.GeneralKeptDensestFoldAcrossR: unsplit, the last block
  // folding, a second kernel; threads across R in each.
  const TypeRule kF64{DType::f64, DType::f64, DType::f64};
  for (const TypeRule& t : {kF32, kF16, kF64}) {
    const AxisKernelSpec a = builtin_axis_spec(Op::sum, t, shape_of({8, 32, 64, 128}, {0, 2}), 132);
    const AxisKernelSpec b = builtin_axis_spec(Op::sum, t, shape_of({3, 6, 20000, 8}, {0, 2}), 132);
    const AxisKernelSpec c = builtin_axis_spec(Op::sum, t, shape_of({100, 10, 100, 20}, {0, 2}), 132);
    // 16-bit: four outputs a thread, 8-byte loads too few for one launch (above).
    EXPECT_EQ(a.split, t.in == DType::f16 ? AxisSplit::two_pass : AxisSplit::none) << to_string(a);
    EXPECT_EQ(b.split, AxisSplit::two_pass) << to_string(b);
    EXPECT_EQ(b.block, 128u) << to_string(b);
    EXPECT_EQ(c.split, AxisSplit::two_pass) << to_string(c);
    EXPECT_EQ(c.block, 128u) << to_string(c);
    for (const auto& x : {a, b, c}) EXPECT_GT(x.group, 1u) << to_string(x);
  }
  // Split in blocks of 128 and a second kernel however few the outputs from 1.5 x 2^20
  // elements (48, 40, 4, 8 and 64 outputs here), in every element size; below it, up to
  // 64 outputs, the last block folds them in blocks of 256.
  for (const TypeRule& t : {kF32, kBF16, kF64}) {
    for (const CanonicalAxes& smaller : {shape_of({20000, 2, 3, 2}, {0, 2}), shape_of({5000, 20, 3, 2}, {0, 2}),
                                         shape_of({2, 32, 12287, 2}, {0, 2})}) {
      s = builtin_axis_spec(Op::sum, t, smaller, 132);
      EXPECT_EQ(s.split, AxisSplit::ticket) << smaller.to_string() << " " << to_string(s);
      EXPECT_EQ(s.block, 256u) << smaller.to_string() << " " << to_string(s);
      const AxisLaunchPlan p = plan_axis_launch(s, smaller, 132);
      EXPECT_GT(p.splits, 1u) << smaller.to_string();
      EXPECT_EQ(p.finalize_grid, 0u) << smaller.to_string();
    }
    for (const CanonicalAxes& fewer : {shape_of({3, 6, 100000, 8}, {0, 2}), shape_of({20000, 20, 3, 2}, {0, 2}),
                                       shape_of({40000, 4, 5, 2}, {0, 2}), shape_of({2, 32, 12288, 2}, {0, 2})}) {
      s = builtin_axis_spec(Op::sum, t, fewer, 132);
      EXPECT_EQ(s.group, 32u) << fewer.to_string();
      EXPECT_EQ(s.split, AxisSplit::two_pass) << fewer.to_string() << " " << to_string(s);
      EXPECT_EQ(s.block, 128u) << fewer.to_string() << " " << to_string(s);
      const AxisLaunchPlan p = plan_axis_launch(s, fewer, 132);
      EXPECT_GT(p.splits, 1u) << fewer.to_string();
      EXPECT_GT(p.finalize_grid, 0u) << fewer.to_string();
    }
  }
  // Scalar loads of 4 bytes and less (an odd innermost kept extent) over R >= 6000 split
  // in fewer blocks than SMs (62 and 110 blocks of 256 here), and over 128 outputs or
  // more a split takes groups of 8 across R and a second kernel (231 outputs: split in
  // fewer blocks than a quarter of the SMs). Not over R = 4096, nor in 231 blocks, nor
  // 8-byte scalars; fewer outputs keep their groups of 32.
  for (const TypeRule& t : {kF32, kF16, kBF16}) {
    for (const CanonicalAxes& scalars : {shape_of({3, 11, 20001, 45}, {0, 2}), shape_of({5, 25, 4001, 35}, {0, 2}),
                                         shape_of({2, 7, 3541, 33}, {0, 2}), shape_of({2, 9, 8193, 37}, {0, 2}),
                                         shape_of({2, 9, 3000, 37}, {0, 2})}) {
      s = builtin_axis_spec(Op::sum, t, scalars, 132);
      EXPECT_EQ(s.vec, 1u) << scalars.to_string();
      EXPECT_EQ(s.split, AxisSplit::two_pass) << scalars.to_string() << " " << to_string(s);
      EXPECT_EQ(s.block, 128u) << scalars.to_string() << " " << to_string(s);
      EXPECT_EQ(s.group, 8u) << scalars.to_string() << " " << to_string(s);
    }
    for (const CanonicalAxes& unsplit : {shape_of({2, 9, 2999, 37}, {0, 2}), shape_of({8, 21, 512, 33}, {0, 2}),
                                         shape_of({16, 41, 513, 45}, {0, 2}), shape_of({2, 120, 5001, 33}, {0, 2})}) {
      s = builtin_axis_spec(Op::sum, t, unsplit, 132);
      EXPECT_EQ(s.split, AxisSplit::none) << unsplit.to_string() << " " << to_string(s);
      EXPECT_EQ(s.group, 32u) << unsplit.to_string() << " " << to_string(s);
    }
    // (Folded columns from 2^22 elements: [100000, 3, 7, 3] is one.)
    EXPECT_EQ(builtin_axis_spec(Op::max, t, shape_of({100000, 3, 7, 3}, {0, 2}), 132).family,
              AxisFamily::columns_folded);
    for (const CanonicalAxes& few : {shape_of({4, 3, 50001, 7}, {0, 2}), shape_of({60000, 3, 7, 3}, {0, 2})}) {
      s = builtin_axis_spec(Op::max, t, few, 132);
      EXPECT_EQ(s.split, AxisSplit::two_pass) << few.to_string() << " " << to_string(s);
      EXPECT_EQ(s.group, 32u) << few.to_string() << " " << to_string(s);
    }
    // Where the last block folds (40 outputs below 1.5 x 2^20 elements), groups of 32.
    s = builtin_axis_spec(Op::sum, t, shape_of({2, 8, 3001, 5}, {0, 2}), 132);
    EXPECT_EQ(s.split, AxisSplit::ticket) << to_string(s);
    EXPECT_EQ(s.group, 32u) << to_string(s);
  }
  for (DType d : {DType::f64, DType::i64}) {
    s = builtin_axis_spec(Op::sum, TypeRule{d, d, d}, shape_of({2, 7, 3541, 33}, {0, 2}), 132);
    EXPECT_EQ(s.group, 32u) << to_string(s);
    EXPECT_EQ(builtin_axis_spec(Op::sum, TypeRule{d, d, d}, shape_of({5, 25, 4001, 35}, {0, 2}), 132).group, 32u);
  }
  const CanonicalAxes many = shape_of({16, 1024, 16, 256}, {0, 2});
  s = builtin_axis_spec(Op::sum, kF32, many, 132);
  EXPECT_EQ(s.group, 1u);
  EXPECT_EQ(s.vec, 4u);
  EXPECT_EQ(s.split, AxisSplit::none);
  EXPECT_EQ(plan_axis_launch(s, many, 132).grid, 262144u / (256 * 4));  // a thread per vector of outputs
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF16, many, 132).vec, 8u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16, 1024, 16, 258}, {0, 2}), 132).vec, 2u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({16, 1024, 16, 257}, {0, 2}), 132).vec, 1u);
  // A reversed kept dimension counts by its stride's size.
  const CanonicalResult reversed = canonicalize(TensorDesc::strided({30, 50, 20}, {1000, 20, -1}), {0});
  ASSERT_TRUE(reversed.ok) << reversed.error;
  ASSERT_EQ(reversed.axes.layout, AxisLayout::general);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, reversed.axes, 132).vec, 1u);
  // Reduced runs with a stride (every other element of a row): lanes along them.
  const CanonicalResult strided = canonicalize(TensorDesc::strided({1000, 513}, {1100, 2}), {1});
  ASSERT_TRUE(strided.ok) << strided.error;
  ASSERT_EQ(strided.axes.layout, AxisLayout::general);
  EXPECT_GT(builtin_axis_spec(Op::sum, kF32, strided.axes, 132).group, 1u);
  // Every built-in spec is valid.
  for (auto shape : {shape_of({3, 5}, {1}), shape_of({3, 5}, {0}), shape_of({1 << 10, 3, 1 << 10}, {1}),
                     shape_of({7, 1}, {0}), shape_of({1 << 22, 2}, {0})})
    EXPECT_EQ(axis_spec_problem(builtin_axis_spec(Op::sum, kF32, shape, 132)), "");
}

// Rows that a plan splits, 4 bytes and less, from 2^22 elements: blocks of 128 whose
// splits take tiles of R in turn (the last block folding), four per SM below 2^23
// elements and eight from there, eight loads in flight for 4-byte elements and four for
// 16-bit ones; 4-byte rows over more than 64 outputs from 2^25 elements keep blocks of
// 512 at 16 per SM; 8-byte rows and shapes below 2^22 elements keep the choice before.
TEST(AxisSpec, SplitRowsFromTwoToThe22ElementsTakeTilesInBlocksOf128) {
  const TypeRule i32{DType::i32, DType::i32, DType::i32};
  const TypeRule u32{DType::u32, DType::u32, DType::u32};
  int checked = 0;
  for (const TypeRule& t : {kF32, kF16, kBF16, i32, u32})
    for (Op op : {Op::sum, Op::max, Op::min, Op::mean, Op::prod}) {
      if (op == Op::mean && (t.in == DType::i32 || t.in == DType::u32)) continue;
      const TypeRule types = op == Op::mean ? *resolve_types(op, t.in, t.in).rule : t;
      struct Case {
        std::int64_t rows, r;
        std::uint32_t per_sm;
      };
      for (const Case& c : {Case{4, 1 << 20, 4}, Case{7, 898779, 4}, Case{24, 262145, 4}, Case{100, 65537, 4},
                            Case{256, 24577, 4}, Case{8, 1 << 20, 8}, Case{33, 1 << 20, 8}, Case{64, 393217, 8},
                            Case{100, 335543, 8}, Case{256, 98305, 8}}) {
        const CanonicalAxes shape = shape_of({c.rows, c.r}, {1});
        AxisLaunchPlan plan;
        const AxisKernelSpec s = builtin_axis_spec(op, types, shape, 132, &plan);
        const std::string what = std::string(to_string(op)) + " " + shape.to_string();
        ASSERT_EQ(s.family, AxisFamily::rows) << what;
        EXPECT_EQ(s.block, 128u) << what;
        EXPECT_EQ(s.group, 128u) << what;
        EXPECT_EQ(s.split, AxisSplit::ticket_tiles) << what;
        EXPECT_EQ(s.blocks_per_sm, c.per_sm) << what;
        EXPECT_EQ(s.unroll, size_of(types.in) == 4 ? 8u : 4u) << what;
        EXPECT_GT(plan.splits, 1u) << what;
        EXPECT_EQ(plan.finalize_grid, 0u) << what;
        EXPECT_EQ(axis_spec_mismatch(s, shape), "") << what;
        ++checked;
      }
      // 4-byte rows over more than 64 outputs from 2^25 elements: blocks of 512 at 16
      // per SM; 16-bit ones take blocks of 128 at eight per SM there too.
      const AxisKernelSpec wide = builtin_axis_spec(op, types, shape_of({100, 335545}, {1}), 132);
      EXPECT_EQ(wide.split, AxisSplit::ticket_tiles);
      EXPECT_EQ(wide.block, size_of(types.in) == 4 ? 512u : 128u) << to_string(op);
      EXPECT_EQ(wide.blocks_per_sm, size_of(types.in) == 4 ? 16u : 8u) << to_string(op);
      // One element short of 2^22: the choice before (contiguous splits for 7 rows of
      // R < 2^20, at four per SM).
      const AxisKernelSpec below = builtin_axis_spec(op, types, shape_of({7, 599185}, {1}), 132);
      EXPECT_EQ(below.split, AxisSplit::ticket) << to_string(op);
      EXPECT_EQ(below.unroll, 4u) << to_string(op);
    }
  EXPECT_EQ(checked, (5 * 5 - 2) * 10);
  // 8-byte rows keep the choice before: contiguous splits over 17 to 64 rows.
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  const AxisKernelSpec eight = builtin_axis_spec(Op::sum, f64, shape_of({24, 1 << 20}, {1}), 132);
  EXPECT_EQ(eight.split, AxisSplit::ticket);
  EXPECT_EQ(eight.unroll, 4u);
}

// Rows split in tiles in blocks of 128 at eight per SM: the split count rounded down
// where rounding up would give an SM more than 8.5 blocks, up otherwise; at four per SM,
// and in other blocks, always rounded up.
TEST(AxisPlan, TiledRowsAtEightPerSmRoundTheirSplitsDownPastEightAndAHalfBlocksAnSm) {
  const auto splits_of = [](const std::string& config, std::int64_t rows, std::int64_t r, int sms) {
    const auto s = parse_axis_config(config, Op::sum, kF16);
    EXPECT_TRUE(s.has_value()) << config;
    return plan_axis_launch(*s, shape_of({rows, r}, {1}), sms).splits;
  };
  const std::string eight = "rows:block=128,group=128,vec=8,split=ticket_tiles,rows=1,unroll=4,sm=8";
  const std::string four = "rows:block=128,group=128,vec=8,split=ticket_tiles,rows=1,unroll=4,sm=4";
  // 132 SMs, 1056 blocks wanted, 1122 at most before rounding down.
  EXPECT_EQ(splits_of(eight, 256, 393217, 132), 4u);   // 5 would be 1280 blocks
  EXPECT_EQ(splits_of(eight, 200, 369099, 132), 5u);   // 6: 1200
  EXPECT_EQ(splits_of(eight, 128, 576717, 132), 8u);   // 9: 1152
  EXPECT_EQ(splits_of(eight, 100, 1006633, 132), 11u);  // 1100: rounded up
  EXPECT_EQ(splits_of(eight, 160, 629145, 132), 7u);   // 1120
  EXPECT_EQ(splits_of(eight, 80, 922747, 132), 14u);   // 1120
  // Another SM count: 114 SMs, 912 wanted, 969 at most.
  EXPECT_EQ(splits_of(eight, 100, 1006633, 114), 9u);  // 10 would be 1000
  EXPECT_EQ(splits_of(eight, 64, 1006633, 114), 15u);  // 960
  // Four per SM, or blocks of 256 at eight: rounded up.
  EXPECT_EQ(splits_of(four, 200, 30001, 132), 3u);
  EXPECT_EQ(splits_of(four, 256, 24577, 132), 3u);
  EXPECT_EQ(splits_of("rows:block=256,group=256,vec=8,split=ticket_tiles,rows=1,unroll=4,sm=8", 256, 393217, 132), 5u);
  // Contiguous splits are not tiles: rounded up.
  EXPECT_EQ(splits_of("rows:block=128,group=128,vec=8,split=ticket,rows=1,unroll=4,sm=8", 256, 393217, 132), 5u);
}

// The batched tail (tail=1) where a thread's run along R ends in two or more loads past
// its last whole tile: rows of 8 to 32 lanes with vectors longer than a tile, columns of
// 16 or 32 threads across R unsplit, and columns whose one thread per output reads fewer
// loads than a tile over 2^22 elements or more. The guarded loop elsewhere.
// Per output (C order over the kept dimensions of `view`), the sum over its elements of
// value(offset): a host reduction of any view, for checking a reduction's pieces.
std::vector<std::int64_t> host_sums(const TensorDesc& view, const AxisList& axes,
                                    const std::function<std::int64_t(std::int64_t)>& value) {
  bool reduced_dim[kMaxRank] = {};
  for (int i = 0; i < axes.count; ++i) reduced_dim[(axes.axes[i] + view.rank) % view.rank] = true;
  std::int64_t total = 1, outputs = 1;
  for (int d = 0; d < view.rank; ++d) {
    total *= view.extents[d];
    if (!reduced_dim[d]) outputs *= view.extents[d];
  }
  std::vector<std::int64_t> sums(static_cast<std::size_t>(outputs), 0);
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t rest = flat, offset = 0, j = 0, scale = 1;
    for (int d = view.rank - 1; d >= 0; --d) {
      const std::int64_t i = rest % view.extents[d];
      rest /= view.extents[d];
      offset += i * view.strides[d];
      if (!reduced_dim[d]) {
        j += i * scale;
        scale *= view.extents[d];
      }
    }
    sums[static_cast<std::size_t>(j)] += value(offset);
  }
  return sums;
}

// Small reductions in one launch (set AJ): columns whose splits leave at most 1536
// partials fold them in the last block; up to 8 outputs over a short R take one block
// with every thread across R; general views with a kept dimension the densest give no
// output more lanes than R / 2; small permuted views are not reordered.
CanonicalAxes view_of(std::initializer_list<std::int64_t> extents, std::initializer_list<std::int64_t> strides,
                      AxisList axes) {
  const CanonicalResult r = canonicalize(TensorDesc::strided(extents, strides), axes);
  EXPECT_TRUE(r.ok) << r.error;
  return r.axes;
}

// Columns of a thread per output split in blocks of 256, 8 threads across R (set BO): every
// op and element of 4 bytes and less takes eight loads in flight at four blocks per SM,
// registers capped to keep just those resident, and the last block of each group folds
// at any size (before, min and max kept four, at eight blocks per SM over 257 outputs up
// to 8 per SM, and past 16 MiB a second kernel folded). Two outputs a thread (the
// 2-element grid) keep their plan: up to 16 MiB in one launch, past that two, uncapped.
// 8-byte elements keep four loads and a second kernel, capped but for min and max.
TEST(AxisSpec, SplitColumnsLoadsInFlightFollowTheOp) {
  struct Case {
    TypeRule types;
    Op op;
    std::int64_t r, inner;
    std::uint32_t vec;
  };
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  for (const Case& c : {Case{kF16, Op::sum, 4097, 1500, 1}, Case{kBF16, Op::sum, 4097, 1056, 1},
                        Case{kF16, Op::sum, 4097, 1055, 1}, Case{kF16, Op::max, 4097, 1500, 1},
                        Case{kF32, Op::sum, 2049, 3001, 1}, Case{kF32, Op::max, 2049, 3001, 1},
                        Case{kF16, Op::min, 2049, 3001, 1}, Case{kBF16, Op::max, 32768, 757, 1},
                        Case{kF32, Op::min, 32768, 757, 1}, Case{kF16, Op::sum, 32768, 757, 1},
                        Case{kF16, Op::mean, 100003, 1233, 1}, Case{kF32, Op::max, 20000, 3001, 1},
                        Case{kBF16, Op::max, 32768, 462, 2}, Case{f64, Op::sum, 30001, 3001, 1},
                        Case{f64, Op::max, 65537, 1001, 1},
                        // 4-byte columns on the grid up to 48 outputs per SM (R < 16384 from
                        // 257 outputs, else from 2048; rows of whole 128 bytes from R = 32768)
                        Case{kF32, Op::sum, 12345, 6144, 1}, Case{kF32, Op::max, 30001, 4096, 1},
                        Case{kF32, Op::mean, 4097, 300, 1},
                        Case{TypeRule{DType::i32, DType::i64, DType::i64}, Op::sum, 65537, 4096, 1},
                        // 16-bit pairs from 8 up to 31 outputs per SM: uncapped, the last block
                        // folding up to 384 MiB
                        Case{kF16, Op::mean, 100003, 1234, 2}, Case{kBF16, Op::max, 30001, 3000, 2},
                        Case{kF16, Op::sum, 100003, 3002, 2}, Case{kF16, Op::sum, 8193, 2002, 2}}) {
    const CanonicalAxes shape = shape_of({c.r, c.inner}, {0});
    AxisLaunchPlan plan;
    const AxisKernelSpec s = builtin_axis_spec(c.op, c.types, shape, 132, &plan);
    const std::string at = std::string(to_string(c.op)) + " " + shape.to_string() + " " + to_string(s);
    // The plan the call path gets is the spec's own.
    const AxisLaunchPlan own = plan_axis_launch(s, shape, 132);
    EXPECT_EQ(plan.grid, own.grid) << at;
    EXPECT_EQ(plan.splits, own.splits) << at;
    EXPECT_EQ(plan.finalize_grid, own.finalize_grid) << at;
    EXPECT_EQ(plan.partial_count, own.partial_count) << at;
    EXPECT_EQ(s.family, AxisFamily::columns) << at;
    EXPECT_EQ(s.group, 8u) << at;
    EXPECT_EQ(s.vec, c.vec) << at;
    EXPECT_EQ(s.blocks_per_sm, 4u) << at;
    const bool small = static_cast<std::uint64_t>(c.r * c.inner) * size_of(c.types.in) <= (1u << 24);
    if (size_of(c.types.in) == 8) {
      EXPECT_EQ(s.unroll, 4u) << at;
      EXPECT_EQ(s.split, AxisSplit::two_pass) << at;
      EXPECT_EQ(s.occupancy, c.op == Op::max ? 0u : 1024u) << at;  // 8-byte min and max: uncapped
    } else if (c.vec == 1) {
      EXPECT_EQ(s.unroll, 8u) << at;
      EXPECT_EQ(s.split, AxisSplit::ticket) << at;
      EXPECT_EQ(s.occupancy, 1024u) << at;
    } else {
      const bool pairs = c.inner >= 8 * 132 && c.inner < 31 * 132 &&
                         static_cast<std::uint64_t>(c.r * c.inner) * size_of(c.types.in) <= (384ull << 20);
      EXPECT_EQ(s.unroll, 8u) << at;
      EXPECT_EQ(s.split, small || pairs ? AxisSplit::ticket : AxisSplit::two_pass) << at;
      EXPECT_EQ(s.occupancy, 0u) << at;
    }
    EXPECT_EQ(capped_split_columns(s), s.occupancy == 1024u) << at;
  }
  // The cap is the plan's residency: a spec at eight blocks per SM, with four loads in
  // flight (but 8-byte elements), with a vector of outputs a thread, threads other than 8
  // across R, or unsplit, keeps the compiler's choice.
  AxisKernelSpec capped{.op = Op::sum, .types = kF16, .family = AxisFamily::columns, .block = 256, .group = 8,
                        .vec = 1, .split = AxisSplit::ticket, .unroll = 8, .blocks_per_sm = 4};
  ASSERT_EQ(axis_spec_problem(capped), "");
  EXPECT_TRUE(capped_split_columns(capped));
  EXPECT_EQ(occupancy_that_pays(capped, shape_of({30001, 3001}, {0})), 1024u);
  for (auto change : std::initializer_list<void (*)(AxisKernelSpec&)>{
           [](AxisKernelSpec& t) { t.blocks_per_sm = 8; }, [](AxisKernelSpec& t) { t.unroll = 4; },
           [](AxisKernelSpec& t) { t.vec = 2; }, [](AxisKernelSpec& t) { t.group = 16; t.block = 512; },
           [](AxisKernelSpec& t) { t.split = AxisSplit::none; }, [](AxisKernelSpec& t) { t.block = 512; t.group = 8; },
           [](AxisKernelSpec& t) { t.types = TypeRule{DType::f64, DType::f64, DType::f64}; t.split = AxisSplit::ticket; }}) {
    AxisKernelSpec t = capped;
    change(t);
    EXPECT_FALSE(capped_split_columns(t)) << to_string(t);
    EXPECT_EQ(occupancy_that_pays(t, shape_of({30001, 3001}, {0})), 0u) << to_string(t);
  }
}

// Split columns with a ticket take a slot per group of blocks (rt::columns_ticket_finish):
// their plans keep the groups within kAxisTicketSlots, the blocks past them taking more
// tiles in turn; a second kernel's plan needs no slot and keeps its blocks.
TEST(AxisSpec, SplitColumnsKeepTheirGroupsWithinTheTicketSlots) {
  const CanonicalAxes shape = shape_of({1 << 20, 5000 * 32}, {0});  // 5000 tiles of 32 outputs
  AxisKernelSpec s{.op = Op::sum, .types = kF32, .family = AxisFamily::columns, .block = 256, .group = 8, .vec = 1,
                   .split = AxisSplit::ticket, .blocks_per_sm = 16};
  ASSERT_EQ(axis_spec_problem(s), "");
  const int sms = 1000;  // a GPU whose 32 blocks per SM exceed the slots
  const AxisLaunchPlan ticket = plan_axis_launch(s, shape, sms);
  ASSERT_GT(ticket.splits, 1u);
  EXPECT_EQ(ticket.grid % ticket.splits, 0u);
  EXPECT_EQ(ticket.grid / ticket.splits, kAxisTicketSlots);
  EXPECT_EQ(ticket.finalize_grid, 0u);
  s.split = AxisSplit::two_pass;
  const AxisLaunchPlan two = plan_axis_launch(s, shape, sms);
  EXPECT_EQ(two.splits, ticket.splits);
  EXPECT_EQ(two.grid / two.splits, 5000u);
  EXPECT_GT(two.finalize_grid, 0u);
  // The fold's round trips, as rt::columns_ticket_finish folds: 32 outputs a tile over 8
  // threads each (8 lanes an output, 4 loads in flight a lane); 128 outputs a tile of 128
  // threads (a lane each); four outputs a thread (1024 a tile, four passes of 256).
  s.blocks_per_sm = 4;
  EXPECT_EQ(axis_columns_fold_trips(s, 32), 1u);
  EXPECT_EQ(axis_columns_fold_trips(s, 33), 2u);
  EXPECT_EQ(axis_columns_fold_trips(s, 132), 5u);
  AxisKernelSpec v4 = s;
  v4.block = 128;
  v4.group = 4;
  v4.vec = 4;
  EXPECT_EQ(axis_columns_fold_trips(v4, 66), 17u);
  AxisKernelSpec rows4 = s;
  rows4.group = 1;
  rows4.rows_per_pass = 4;
  EXPECT_EQ(axis_columns_fold_trips(rows4, 4), 4u);
  EXPECT_EQ(axis_columns_fold_trips(rows4, 5), 8u);
  // On 132 SMs the groups stay below the slots anyway.
  s.split = AxisSplit::ticket;
  const AxisLaunchPlan h100 = plan_axis_launch(s, shape_of({1 << 20, 1000}, {0}), 132);
  EXPECT_GT(h100.splits, 1u);
  EXPECT_LE(h100.grid / h100.splits, kAxisTicketSlots);
}

TEST(AxisSpec, SmallReductionsTakeOneLaunch) {
  // Split columns up to 16 MiB: a ticket per group of blocks, where each group's fold
  // takes at most eight round trips (four for 8-byte partials), however many partials in
  // all; a second kernel past that. Dense columns:
  // with 1536 partials or fewer the last block folds them all; more: a second kernel.
  struct SplitCase {
    TypeRule types;
    CanonicalAxes shape;
    AxisFamily family;
    AxisSplit split;
  };
  const AxisFamily dense = AxisFamily::columns_dense, columns = AxisFamily::columns;
  for (const SplitCase& c : {SplitCase{kBF16, shape_of({2047, 41}, {0}), dense, AxisSplit::ticket},     // 820 partials
                             SplitCase{kBF16, shape_of({10000, 33}, {0}), dense, AxisSplit::two_pass},  // 2640
                             SplitCase{kF32, shape_of({1285, 100}, {0}), columns, AxisSplit::ticket},   // 1000
                             SplitCase{kF16, shape_of({1285, 150}, {0}), columns, AxisSplit::ticket},   // 1500
                             SplitCase{kF32, shape_of({1285, 197}, {0}), columns, AxisSplit::ticket},   // 1970
                             SplitCase{kF32, shape_of({4096, 65}, {0}), columns, AxisSplit::ticket},    // 2080
                             SplitCase{kF16, shape_of({4096, 757}, {0}), columns, AxisSplit::ticket},
                             // tiles of 128 outputs over 66 splits: a second kernel folds
                             SplitCase{kF32, shape_of({65537, 1000}, {0}), columns, AxisSplit::two_pass},
                             // 132 splits of 32-output tiles: five round trips, which 8-byte
                             // partials do not fold in one launch (4-byte ones up to eight)
                             SplitCase{kF32, shape_of({20000, 100}, {0}), columns, AxisSplit::ticket},
                             SplitCase{TypeRule{DType::i64, DType::i64, DType::i64}, shape_of({20000, 100}, {0}),
                                       columns, AxisSplit::two_pass}}) {
    AxisLaunchPlan plan;
    const AxisKernelSpec s = builtin_axis_spec(Op::sum, c.types, c.shape, 132, &plan);
    EXPECT_EQ(s.family, c.family) << c.shape.to_string() << " " << to_string(s);
    EXPECT_EQ(s.split, c.split) << c.shape.to_string() << " " << to_string(s);
    EXPECT_GT(plan.splits, 1u) << c.shape.to_string();
    EXPECT_EQ(plan.finalize_grid > 0, c.split == AxisSplit::two_pass) << c.shape.to_string();
    if (c.family == dense) {
      EXPECT_EQ(plan.partial_count > 1536, c.split == AxisSplit::two_pass) << c.shape.to_string();
    }
  }
  // Up to 8 outputs over R <= 8192, where each thread reads at most 64 rows: one block of
  // 512, all of it across R, unsplit.
  struct FewCase {
    CanonicalAxes shape;
    std::uint32_t across;  // 0: split as before
  };
  for (const TypeRule& t : {kF32, kBF16}) {
    for (const FewCase& c : {FewCase{view_of({2011, 7}, {14, 1}, {0}), 64}, FewCase{shape_of({4096, 7}, {0}), 64},
                             FewCase{shape_of({1100, 2}, {0}), 256}, FewCase{view_of({8192, 2}, {4, 1}, {0}), 256},
                             FewCase{shape_of({8192, 3}, {0}), 128}, FewCase{shape_of({8192, 7}, {0}), 0},
                             FewCase{shape_of({8193, 2}, {0}), 0}, FewCase{shape_of({2011, 9}, {0}), 0}}) {
      AxisLaunchPlan plan;
      const AxisKernelSpec s = builtin_axis_spec(Op::max, t, c.shape, 132, &plan);
      EXPECT_EQ(s.family, AxisFamily::columns) << c.shape.to_string();
      if (c.across == 0) {
        EXPECT_NE(s.split, AxisSplit::none) << c.shape.to_string() << " " << to_string(s);
        EXPECT_GT(plan.splits, 1u) << c.shape.to_string();
        continue;
      }
      EXPECT_EQ(s.block, 512u) << c.shape.to_string();
      EXPECT_EQ(s.group, c.across) << c.shape.to_string();
      EXPECT_EQ(s.split, AxisSplit::none) << c.shape.to_string();
      EXPECT_EQ(s.unroll, 8u) << c.shape.to_string();
      EXPECT_EQ(plan.grid, 1u) << c.shape.to_string();
      EXPECT_EQ(plan.partial_count, 0u) << c.shape.to_string();
    }
  }
  // A kept dimension the densest: at most R / 2 lanes per output.
  struct LaneCase {
    CanonicalAxes shape;
    std::uint32_t group;
  };
  for (const LaneCase& c : {LaneCase{view_of({8, 128, 129}, {16512, 1, 128}, {0}), 4},
                            LaneCase{view_of({16, 1024, 16}, {16384, 1, 1024}, {0}), 8},
                            LaneCase{view_of({4, 256, 257}, {65792, 1, 256}, {0}), 2},
                            LaneCase{view_of({64, 64, 64}, {4096, 1, 64}, {0}), 32}}) {
    const AxisKernelSpec s = builtin_axis_spec(Op::max, kBF16, c.shape, 132);
    EXPECT_EQ(s.family, AxisFamily::general) << c.shape.to_string();
    EXPECT_EQ(s.group, c.group) << c.shape.to_string() << " " << to_string(s);
  }
  // Permuted views ([R, a, b] with strides [a*b, 1, a] along 0) are reordered from R = 257
  // or past 2^18 elements; below both, the general kernel reads them in one launch.
  struct ReorderCase {
    std::int64_t r, a, b;
    bool pays;
  };
  for (const ReorderCase& c : {ReorderCase{256, 32, 32, false}, ReorderCase{64, 64, 64, false},
                               ReorderCase{255, 3, 7, false}, ReorderCase{257, 32, 32, true},
                               ReorderCase{64, 64, 65, true}, ReorderCase{1024, 229, 3, true}}) {
    const TensorDesc view = TensorDesc::strided({c.r, c.a, c.b}, {c.a * c.b, 1, c.a});
    const CanonicalResult r = canonicalize(view, AxisList{0});
    ASSERT_TRUE(r.ok) << r.error;
    const std::optional<AxisReorder> reorder = axis_reorder(view, AxisList{0}, r.axes);
    ASSERT_TRUE(reorder.has_value()) << r.axes.to_string();
    EXPECT_FALSE(reorder->reduces_densest()) << r.axes.to_string();
    EXPECT_EQ(axis_reorder_pays(*reorder, r.axes, 4), c.pays) << r.axes.to_string();
    EXPECT_EQ(axis_reorder_may_pay(r.axes), c.pays) << r.axes.to_string();
  }
  // A transposed batch of rows ([a, b, R] strides [R, a*R, 1] along 2) pays up to 2^18
  // outputs at any size (written in one launch); past that for rows of 32 bytes at most.
  struct RowsCase {
    std::int64_t a, b, r;
    std::size_t in_size;
    bool pays;
  };
  for (const RowsCase& c : {RowsCase{16, 32, 4, 4, true}, RowsCase{16, 32, 300, 2, true},
                            RowsCase{512, 512, 1000, 8, true}, RowsCase{513, 512, 4, 4, true},
                            RowsCase{513, 512, 8, 4, true}, RowsCase{513, 512, 9, 4, false},
                            RowsCase{1023, 1024, 4, 4, true}, RowsCase{1024, 1024, 4, 4, true},
                            RowsCase{1024, 1024, 8, 2, true}, RowsCase{1024, 1024, 8, 4, true},
                            RowsCase{1024, 1024, 16, 2, true}, RowsCase{1024, 1024, 16, 4, false},
                            RowsCase{1024, 1024, 2, 8, false}, RowsCase{1024, 1024, 32, 2, false}}) {
    const TensorDesc view = TensorDesc::strided({c.a, c.b, c.r}, {c.r, c.a * c.r, 1});
    const CanonicalResult r = canonicalize(view, AxisList{2});
    ASSERT_TRUE(r.ok) << r.error;
    const std::optional<AxisReorder> reorder = axis_reorder(view, AxisList{2}, r.axes);
    if (c.r < static_cast<std::int64_t>(kAxisReorderMinReduced)) {
      EXPECT_FALSE(reorder.has_value()) << r.axes.to_string();
      continue;
    }
    ASSERT_TRUE(reorder.has_value()) << r.axes.to_string();
    EXPECT_TRUE(reorder->reduces_densest());
    EXPECT_EQ(axis_reorder_pays(*reorder, r.axes, c.in_size), c.pays) << r.axes.to_string() << " " << c.in_size;
    EXPECT_TRUE(axis_reorder_may_pay(r.axes)) << r.axes.to_string();
  }
}

// A reorder's every field, as text, to compare two answers.
std::string describe(const std::optional<AxisReorder>& r) {
  if (!r) return "none";
  std::ostringstream os;
  auto view = [&](const TensorDesc& t) {
    for (int i = 0; i < t.rank; ++i) os << t.extents[i] << ":" << t.strides[i] << " ";
    os << "| ";
  };
  view(r->stage1);
  for (int i = 0; i < r->stage1_axes.count; ++i) os << r->stage1_axes.axes[i] << " ";
  os << "| " << r->stage1_shape.to_string() << " base " << r->stage1_shape.base_offset << " | ";
  view(r->copy);
  os << r->copy_shape.to_string() << " base " << r->copy_shape.base_offset << " | ";
  for (int i = 0; i < r->order.rank; ++i) os << r->order.extents[i] << ":" << r->order.strides[i] << " ";
  return os.str();
}

// The runtime's per-thread cache of reorders answers as axis_reorder does, for random
// views and axes (permuted, sliced, reversed, broadcast, extents of 1), each asked several
// times among others that share its slots; a repeated view is a hit.
TEST(AxisReorderCache, AnswersAsAxisReorderDoes) {
  std::mt19937 rng(2026);
  struct Asked {
    TensorDesc view;
    AxisList axes;
    CanonicalAxes shape;
    std::string want;
  };
  std::vector<Asked> asked;
  int reordered = 0;
  while (asked.size() < 400) {
    const int rank = 2 + static_cast<int>(rng() % 4);
    std::int64_t extents[kMaxRank], contiguous[kMaxRank], strides[kMaxRank];
    for (int d = 0; d < rank; ++d) extents[d] = rng() % 5 == 0 ? 1 : 2 + static_cast<std::int64_t>(rng() % 300);
    std::int64_t step = 1;
    for (int d = rank - 1; d >= 0; --d) {
      contiguous[d] = step * (rng() % 4 == 0 ? 2 : 1);  // every other element here and there
      step = contiguous[d] * extents[d];
    }
    int perm[kMaxRank];
    for (int d = 0; d < rank; ++d) perm[d] = d;
    std::shuffle(perm, perm + rank, rng);
    std::int64_t permuted_extents[kMaxRank];
    for (int d = 0; d < rank; ++d) {
      permuted_extents[d] = extents[perm[d]];
      strides[d] = contiguous[perm[d]];
      if (rng() % 10 == 0) strides[d] = -strides[d];  // reversed
      if (rng() % 15 == 0) strides[d] = 0;            // broadcast
    }
    AxisList axes;
    for (int d = 0; d < rank; ++d)
      if (rng() % 2 == 0) axes.axes[axes.count++] = rng() % 3 == 0 ? d - rank : d;
    if (axes.count == 0) axes.axes[axes.count++] = static_cast<int>(rng() % rank);
    const TensorDesc view = TensorDesc::strided(permuted_extents, strides, rank);
    const CanonicalResult c = canonicalize(view, axes);
    if (!c.ok) continue;
    const std::optional<AxisReorder> want = axis_reorder(view, axes, c.axes);
    reordered += want.has_value();
    asked.push_back({view, axes, c.axes, describe(want)});
  }
  EXPECT_GT(reordered, 20);  // the draw reaches reordered views (33 of 400), not only refusals
  AxisReorderCache cache;
  std::uint64_t asks = 0;
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < asked.size(); ++i) {
      // Each view asked twice in a row (the second a hit), between others.
      for (int twice = 0; twice < 2; ++twice) {
        const Asked& a = asked[(i * 7 + static_cast<std::size_t>(round) * 13) % asked.size()];
        EXPECT_EQ(describe(cache.get(a.view, a.axes, a.shape)), a.want) << a.shape.to_string();
        ++asks;
      }
    }
  EXPECT_EQ(cache.hits() + cache.misses(), asks);
  EXPECT_GE(cache.hits(), asks / 2);
  // Twelve views of one shape, their strides permuted or stepped, over the same axes:
  // more than the cache's slots, so some share one, and none takes another's answer.
  const std::int64_t permutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const AxisList& axes : {AxisList{0}, AxisList{1}, AxisList{0, 2}})
    for (int round = 0; round < 2; ++round)
      for (int v = 0; v < 12; ++v) {
        const std::int64_t unit = v < 6 ? 1 : 2, strides[3] = {4096 * unit, 64 * unit, unit};
        const std::int64_t* p = permutations[v % 6];
        const TensorDesc t = TensorDesc::strided({64, 64, 64}, {strides[p[0]], strides[p[1]], strides[p[2]]});
        const CanonicalAxes shape = canonicalize(t, axes).axes;
        EXPECT_EQ(describe(cache.get(t, axes, shape)), describe(axis_reorder(t, axes, shape))) << shape.to_string();
      }
  // The same view with other axes, and the same axes over another view: not confused.
  const TensorDesc view = TensorDesc::strided({300, 64, 65}, {64 * 65, 1, 64});
  for (const AxisList& axes : {AxisList{0}, AxisList{0, 2}, AxisList{2}, AxisList{-3}})
    for (int k = 0; k < 2; ++k) {
      const CanonicalAxes shape = canonicalize(view, axes).axes;
      EXPECT_EQ(describe(cache.get(view, axes, shape)), describe(axis_reorder(view, axes, shape)));
      const TensorDesc other = TensorDesc::strided({300, 64, 65}, {64 * 65, 1, 64 + k});
      const CanonicalResult o = canonicalize(other, axes);
      if (o.ok) {
        EXPECT_EQ(describe(cache.get(other, axes, o.axes)), describe(axis_reorder(other, axes, o.axes)));
      }
    }
}

// The one-launch form of a reordered view: the stage-1 result's dimensions with their
// strides in the caller's output, for up to kAxisDirectOrderAnyRows outputs whatever R,
// up to kAxisDirectOrderFewOutputs where an output reads more than 64 bytes.
TEST(AxisSpec, ReorderedViewsWriteTheCallersOrderWhereTheOutputsAreFew) {
  // [3, 300, 501] strides [1, 3, 900] along 1: stage 1 keeps the 501 (stride 900), then
  // the 3 (stride 1); the caller's output is [3, 501].
  const TensorDesc view = TensorDesc::strided({3, 300, 501}, {1, 3, 900});
  const CanonicalResult r = canonicalize(view, AxisList{1});
  ASSERT_TRUE(r.ok) << r.error;
  const std::optional<AxisReorder> reorder = axis_reorder(view, AxisList{1}, r.axes);
  ASSERT_TRUE(reorder.has_value());
  ASSERT_EQ(reorder->order.rank, 2);
  EXPECT_EQ(reorder->order.extents[0], 501u);
  EXPECT_EQ(reorder->order.strides[0], 1u);
  EXPECT_EQ(reorder->order.extents[1], 3u);
  EXPECT_EQ(reorder->order.strides[1], 501u);
  EXPECT_EQ(reorder->order.offset(0), 0u);
  EXPECT_EQ(reorder->order.offset(1), 501u);    // stage-1 output 1: the 3's second
  EXPECT_EQ(reorder->order.offset(3), 1u);      // the 501's second
  EXPECT_EQ(reorder->order.offset(1502), 1502u);  // the last
  EXPECT_TRUE(axis_reorder_writes_directly(*reorder, 4));
  // Five kept dimensions that stay five in stage-1 order (base [2,3,5,7,11,13] reversed,
  // the 7 reduced): more than the kernels take.
  {
    const TensorDesc q = TensorDesc::strided({13, 11, 7, 5, 3, 2}, {1, 13, 143, 1001, 5005, 15015});
    const CanonicalResult cq = canonicalize(q, AxisList{2});
    ASSERT_TRUE(cq.ok) << cq.error;
    const std::optional<AxisReorder> o = axis_reorder(q, AxisList{2}, cq.axes);
    ASSERT_TRUE(o.has_value()) << cq.axes.to_string();
    EXPECT_EQ(o->order.rank, 5);
    EXPECT_FALSE(axis_reorder_writes_directly(*o, 4));
  }
  static_assert(kAxisDirectOrderAnyRows == 131072 && kAxisDirectOrderFewOutputs == 262144 &&
                kAxisDirectOrderLongRowBytes == 64);
  // [R, a, b] strides [a*b, 1, a] along 0: direct up to 2^17 outputs whatever R, up to
  // 2^18 where an output reads more than 64 bytes (the copy in tiles read faster past
  // that).
  struct Case {
    std::int64_t r, a, b;
    bool direct;
    std::size_t in_size = 4;
  };
  for (const Case& c : {Case{1024, 229, 3, true}, Case{4, 512, 256, true}, Case{64, 512, 256, true, 2},
                        Case{4, 512, 257, false}, Case{4, 512, 512, false}, Case{16, 512, 512, false},
                        Case{17, 512, 512, true}, Case{64, 512, 384, true}, Case{32, 512, 512, false, 2},
                        Case{33, 512, 512, true, 2}, Case{256, 512, 512, true}, Case{4, 512, 513, false},
                        Case{256, 512, 513, false}, Case{8, 1024, 1024, false}, Case{32, 2048, 2048, false},
                        Case{1024, 1024, 1024, false}}) {
    const TensorDesc v = TensorDesc::strided({c.r, c.a, c.b}, {c.a * c.b, 1, c.a});
    const CanonicalResult cr = canonicalize(v, AxisList{0});
    ASSERT_TRUE(cr.ok) << cr.error;
    const std::optional<AxisReorder> o = axis_reorder(v, AxisList{0}, cr.axes);
    ASSERT_TRUE(o.has_value()) << cr.axes.to_string();
    EXPECT_EQ(axis_reorder_writes_directly(*o, c.in_size), c.direct) << cr.axes.to_string() << " " << c.in_size;
    // [b, a]: the stage-1 output j = (b index) * a + (a index) lands at (a index) * b + (b index).
    ASSERT_EQ(o->order.rank, 2);
    EXPECT_EQ(o->order.offset(1), static_cast<std::uint64_t>(c.b));
    EXPECT_EQ(o->order.offset(static_cast<std::uint64_t>(c.a)), 1u);
  }
  // Transposed rows, [a, b, R] strides [R, a*R, 1] along 2 (stage 1: rows over [b, a]):
  // the same limits.
  for (const Case& c : {Case{64, 512, 512, true}, Case{8, 512, 512, false}, Case{8, 512, 256, true},
                        Case{16, 512, 384, false, 2}, Case{64, 513, 512, false}, Case{8, 2048, 2048, false},
                        Case{300, 1024, 1024, false}, Case{4, 100, 30, true}}) {
    const TensorDesc v = TensorDesc::strided({c.a, c.b, c.r}, {c.r, c.a * c.r, 1});
    const CanonicalResult cr = canonicalize(v, AxisList{2});
    ASSERT_TRUE(cr.ok) << cr.error;
    const std::optional<AxisReorder> o = axis_reorder(v, AxisList{2}, cr.axes);
    ASSERT_TRUE(o.has_value()) << cr.axes.to_string();
    ASSERT_TRUE(o->reduces_densest());
    EXPECT_EQ(axis_reorder_writes_directly(*o, c.in_size), c.direct) << cr.axes.to_string() << " " << c.in_size;
    // Stage-1 output j = (b index) * a + (a index) lands at (a index) * b + (b index).
    ASSERT_EQ(o->order.rank, 2);
    EXPECT_EQ(o->order.offset(1), static_cast<std::uint64_t>(c.b));
    EXPECT_EQ(o->order.offset(static_cast<std::uint64_t>(c.a)), 1u);
  }
}

// A spec's ordered form (the runtime's, for a reordered view written in one launch) is
// the same program but for the template's last argument; the others' sources are as they
// were before it existed; every family has one, and it needs an order.
TEST(AxisSpec, OrderedFormsWriteThroughAnOrder) {
  AxisKernelSpec s;
  s.family = AxisFamily::columns;
  s.block = 256;
  s.group = 8;
  s.vec = 1;
  s.split = AxisSplit::two_pass;
  ASSERT_EQ(axis_spec_problem(s), "");
  AxisKernelSpec o = s;
  o.ordered = 1;
  EXPECT_EQ(axis_spec_problem(o), "");
  EXPECT_NE(axis_spec_key(o), axis_spec_key(s));
  EXPECT_EQ(to_string(o), to_string(s) + ",ordered=1");
  const std::optional<AxisKernelSpec> parsed = parse_axis_config(axis_config_text(o), o.op, o.types);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, o);
  const std::string plain = make_axis_compile_request(s, 90).source, ordered = make_axis_compile_request(o, 90).source;
  EXPECT_NE(plain.find(", 1, 4> rt_axis_instance;"), std::string::npos) << plain;  // rows, unroll: no tail, no order
  EXPECT_NE(ordered.find(", 1, 4, 0, 1> rt_axis_instance;"), std::string::npos) << ordered;
  for (AxisFamily f : {AxisFamily::columns_dense, AxisFamily::general, AxisFamily::rows, AxisFamily::rows_dense}) {
    AxisKernelSpec g = o;
    g.family = f;
    g.group = f == AxisFamily::general ? 32 : f == AxisFamily::columns_dense ? 1 : 8;
    if (f == AxisFamily::rows || f == AxisFamily::rows_dense) g.split = AxisSplit::none;
    EXPECT_EQ(axis_spec_problem(g), "") << to_string(g);
    const std::string text = make_axis_compile_request(g, 90).source;
    EXPECT_NE(text.find(", 1> rt_axis_instance;"), std::string::npos) << text;
  }
  o.ordered = 2;
  EXPECT_EQ(axis_spec_problem(o), "ordered is 0 or 1");
  // An ordered launch needs an order the kernels take.
  o.ordered = 1;
  const CanonicalAxes shape = shape_of({1000, 30}, {0});
  const AxisLaunchPlan plan = plan_axis_launch(o, shape, 132);
  EXPECT_THROW(make_axis_params(o, shape, plan, nullptr, nullptr, nullptr), Error);
  AxisOutputOrder order;
  order.rank = kAxisOrderMaxRank + 1;
  EXPECT_THROW(make_axis_params(o, shape, plan, nullptr, nullptr, nullptr, &order), Error);
  order.rank = 2;
  order.extents[0] = 5;
  order.extents[1] = 6;
  order.strides[0] = 1;
  order.strides[1] = 5;
  const AxisKernelParams p = make_axis_params(o, shape, plan, nullptr, nullptr, nullptr, &order);
  EXPECT_EQ(p.out_rank, 2);
  EXPECT_EQ(p.out_extents[1], 6u);
  EXPECT_EQ(p.out_strides[1], 5u);
  // The plain spec ignores an order.
  EXPECT_EQ(make_axis_params(s, shape, plan, nullptr, nullptr, nullptr, &order).out_rank, 0);
}

// Permuted views whose densest dimension is kept but is not the outputs' innermost, or
// reduced with the kept ones out of their strides' order, are reduced in the order of
// their strides, then copied into the caller's order: the two steps together give every
// output of the view itself (checked on the host with values that tell every element
// apart), and the first step is columns, kept-densest general or rows.
// Views the general kernels read well as they are, or that the reorder cannot serve, stay.
TEST(AxisSpec, PermutedViewsAreReducedInStrideOrderThenCopied) {
  struct Case {
    TensorDesc view;
    AxisList axes;
    bool reordered;
    AxisLayout first;  // the first step's layout, where reordered
  };
  const Case cases[] = {
      // base [156,211,105,9] permuted (1,0,3,2), the 156 reduced: columns over 199395 outputs
      {TensorDesc::strided({211, 156, 9, 105}, {945, 199395, 1, 9}), {1}, true, AxisLayout::columns},
      // base [5013,4096,3] reversed in order, the 4096 reduced: columns [5013, 4096, 3]
      {TensorDesc::strided({3, 4096, 5013}, {1, 3, 12288}), {1}, true, AxisLayout::columns},
      // base [84673,7,17] permuted (2,0,1), the 7 reduced: columns [84673, 7, 17]
      {TensorDesc::strided({17, 84673, 7}, {1, 119, 17}), {2}, true, AxisLayout::columns},
      // two reduced dimensions around the kept ones: general, its outputs along the densest
      // (base [6,7,8,5], the 6 and the 8 reduced)
      {TensorDesc::strided({5, 6, 7, 8}, {1, 280, 40, 5}), {1, 3}, true, AxisLayout::general},
      // the same with a reversed reduced dimension and an extent-1 dimension
      {TensorDesc::strided({5, 1, 6, 7, 8}, {1, 99, -280, 40, 5}), {2, 4}, true, AxisLayout::general},
      // the densest kept dimension is the outputs' innermost already: as it is
      {TensorDesc::strided({6, 7, 5}, {35, 5, 1}), {1}, false, AxisLayout::columns},
      {TensorDesc::contiguous({7, 3, 11, 5, 13}), {1, 3}, false, AxisLayout::general},
      // the densest dimension reduced, the kept ones permuted: rows in stride order
      // (base [6,5,9], the 9 reduced; base [6,5,3,4], the 3 and the 4 reduced)
      {TensorDesc::strided({5, 6, 9}, {9, 45, 1}), {2}, true, AxisLayout::rows},
      {TensorDesc::strided({5, 6, 3, 4}, {12, 60, 4, 1}), {2, 3}, true, AxisLayout::rows},
      // ... but not where the stride order is no better (a gap between the kept ones)
      {TensorDesc::strided({5, 6, 9}, {9, 90, 1}), {2}, false, AxisLayout::general},
      // R below kAxisReorderMinReduced, one kept dimension, a reversed or broadcast output
      {TensorDesc::strided({3, 3, 50}, {1, 3, 9}), {1}, false, AxisLayout::general},
      {TensorDesc::strided({40, 9}, {1, 40}), {1}, false, AxisLayout::general},
      {TensorDesc::strided({3, 8, 50}, {-1, 3, 24}), {1}, false, AxisLayout::general},
      {TensorDesc::strided({3, 8, 50}, {1, 3, 0}), {1}, false, AxisLayout::general},
  };
  for (const Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << r.error;
    const std::optional<AxisReorder> reorder = axis_reorder(c.view, c.axes, r.axes);
    ASSERT_EQ(reorder.has_value(), c.reordered) << r.axes.to_string();
    if (!reorder) continue;
    EXPECT_EQ(r.axes.layout, AxisLayout::general);
    EXPECT_EQ(reorder->stage1_shape.layout, c.first) << reorder->stage1_shape.to_string();
    EXPECT_EQ(reorder->stage1_shape.outputs, r.axes.outputs);
    EXPECT_EQ(reorder->stage1_shape.reduced, r.axes.reduced);
    EXPECT_EQ(reorder->copy_shape.reduced, 1u);
    // The runtime launches the copy from the staged result's start, with no workspace.
    EXPECT_EQ(reorder->copy_shape.base_offset, 0);
    AxisLaunchPlan copy_plan;
    builtin_axis_spec(Op::max, kF32, reorder->copy_shape, 132, &copy_plan);
    EXPECT_EQ(copy_plan.partial_count, 0u);
    EXPECT_EQ(copy_plan.splits, 1u);
    // Every output of the view: the sum of (offset + 10000)^2 over its elements, which
    // tells its set of elements from the others'. The first step reduces the reordered view from the same base;
    // the copy reads its C-contiguous result at the offsets the copy view gives.
    const auto mark = [](std::int64_t offset) { return (offset + 10000) * (offset + 10000); };
    const std::vector<std::int64_t> want = host_sums(c.view, c.axes, mark);
    const std::vector<std::int64_t> staged = host_sums(reorder->stage1, reorder->stage1_axes, mark);
    const std::vector<std::int64_t> got =
        host_sums(reorder->copy, AxisList{}, [&](std::int64_t offset) { return staged.at(static_cast<std::size_t>(offset)); });
    EXPECT_EQ(got, want) << r.axes.to_string();
  }
}

// Views that reduce nothing and whose densest kept dimension is not the outputs'
// innermost (the staged reorder's copies among them) take the transpose family: tiles
// over the two dimensions, the others walked per tile; not where either extent is below
// kAxisTransposeMinExtent, something is reduced, or the densest is the innermost.
TEST(AxisSpec, CopiesThatTransposeTakeTiles) {
  struct Case {
    TensorDesc view;
    AxisList axes;
    int dim;  // the densest kept dimension among the canonical ones, or -1: not a transpose
    std::uint64_t tiles;
  };
  const Case cases[] = {
      {TensorDesc::strided({33, 1, 100}, {1, 5, 33}), {1}, 0, 2 * 4},
      {TensorDesc::strided({3, 40, 1, 70}, {2800, 1, 1, 40}), {2}, 1, 3 * 2 * 3},
      {TensorDesc::strided({40, 3, 70, 1}, {1, 3000, 40, 1}), {3}, 0, 3 * 2 * 3},
      {TensorDesc::strided({8, 1, 8}, {1, 1, 8}), {1}, 0, 1},
      {TensorDesc::strided({64, 1, 48}, {2, 1, 128}), {1}, 0, 2 * 2},
      {TensorDesc::strided({3, 50, 1, 40}, {-2000, 1, 1, -50}), {2}, 1, 3 * 2 * 2},
      // an extent below 8, something reduced, the densest the innermost, one kept run
      {TensorDesc::strided({1000, 1, 4}, {1, 1, 1000}), {1}, -1, 0},
      {TensorDesc::strided({7, 1, 100}, {1, 1, 7}), {1}, -1, 0},
      {TensorDesc::strided({33, 2, 100}, {1, 5000, 33}), {1}, -1, 0},
      {TensorDesc::strided({100, 1, 33}, {40, 1, 1}), {1}, -1, 0},
      {TensorDesc::contiguous({30, 1, 40}), {1}, -1, 0},
  };
  for (const Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(axis_transpose_dim(r.axes), c.dim) << r.axes.to_string();
    AxisLaunchPlan plan;
    const AxisKernelSpec s = builtin_axis_spec(Op::sum, kF32, r.axes, 132, &plan);
    EXPECT_EQ(s.family == AxisFamily::transpose, c.dim >= 0) << to_string(s) << " for " << r.axes.to_string();
    AxisKernelSpec transpose;
    transpose.family = AxisFamily::transpose;
    transpose.group = 1;
    EXPECT_EQ(axis_spec_mismatch(transpose, r.axes).empty(), c.dim >= 0) << r.axes.to_string();
    if (c.dim < 0) continue;
    EXPECT_EQ(axis_spec_problem(s), "");
    EXPECT_EQ(plan.grid, c.tiles) << r.axes.to_string();
    EXPECT_EQ(plan.splits, 1u);
    EXPECT_EQ(plan.partial_count, 0u);
    EXPECT_EQ(plan.finalize_grid, 0u);
    EXPECT_EQ(plan.block, s.block);
  }
  // Many tiles: blocks take them in turn, 32 blocks per SM.
  const CanonicalResult big = canonicalize(TensorDesc::strided({4096, 1, 4096}, {1, 1, 4096}), {1});
  ASSERT_TRUE(big.ok);
  AxisLaunchPlan plan;
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, big.axes, 132, &plan).family, AxisFamily::transpose);
  EXPECT_EQ(plan.grid, 32u * 132u);
  // The staged reorders' copies of both kinds are transposes.
  for (const auto& [view, axes] : {std::pair{TensorDesc::strided({16, 1024, 1024}, {1048576, 1, 1024}), AxisList{0}},
                                   std::pair{TensorDesc::strided({1024, 1024, 4}, {4, 4096, 1}), AxisList{2}}}) {
    const CanonicalResult r = canonicalize(view, axes);
    ASSERT_TRUE(r.ok);
    const std::optional<AxisReorder> reorder = axis_reorder(view, axes, r.axes);
    ASSERT_TRUE(reorder.has_value()) << r.axes.to_string();
    EXPECT_EQ(builtin_axis_spec(Op::max, kF32, reorder->copy_shape, 132).family, AxisFamily::transpose)
        << reorder->copy_shape.to_string();
  }
  // Its config: a block of a power of two, one thread an element, nothing split.
  const std::optional<AxisKernelSpec> parsed =
      parse_axis_config("transpose:block=256,group=1,vec=1,split=none", Op::max, kF32);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->family, AxisFamily::transpose);
  EXPECT_EQ(parse_axis_config(axis_config_text(*parsed), Op::max, kF32), parsed);
  for (const char* bad : {"transpose:block=256,group=2,vec=1,split=none", "transpose:block=256,group=1,vec=4,split=none",
                          "transpose:block=256,group=1,vec=1,split=ticket", "transpose:block=96,group=1,vec=1,split=none",
                          "transpose:block=256,group=1,vec=1,split=none,rows=4"}) {
    std::string error;
    EXPECT_FALSE(parse_axis_config(bad, Op::max, kF32, &error).has_value()) << bad;
    EXPECT_NE(error.find("transpose"), std::string::npos) << error;
  }
}

// Reductions of extents of 1 only (R = 1) whose outputs lie in one contiguous run are
// converting copies: the short_columns family at unroll=1 (one row, no loop along R), a
// 16-byte vector a thread, as many blocks as that takes, capped at 2048 threads per SM;
// strided runs, stepped columns and transposes are not, and only copies fit that form.
TEST(AxisSpec, ConvertingCopiesTakeShortColumnsOfOneRow) {
  struct Case {
    TensorDesc view;
    AxisList axes;
    bool copies;
  };
  const Case cases[] = {
      {TensorDesc::contiguous({1, 16777216}), {0}, true},
      {TensorDesc::contiguous({70001, 1}), {1}, true},
      {TensorDesc::contiguous({3, 1, 4099}), {1}, true},            // kept dimensions merged around it
      {TensorDesc::contiguous({1, 7}), {0}, true},                  // fewer than a vector
      {TensorDesc::strided({5003, 1}, {3, 1}), {1}, false},          // strided outputs: rows of one element
      {TensorDesc::strided({1000, 1}, {2, 1}), {1}, false},          // every other element: stepped columns
      {TensorDesc::strided({100, 1, 50}, {64, 1, 1}), {1}, false},   // runs of 50 a row of 64 apart
      {TensorDesc::strided({64, 1, 48}, {1, 1, 64}), {1}, false},    // a transpose
      {TensorDesc::contiguous({2, 16777216}), {0}, false},          // R = 2
  };
  const std::pair<Op, TypeRule> kinds[] = {{Op::sum, kF32},
                                           {Op::mean, *resolve_types(Op::mean, DType::bf16, DType::bf16).rule},
                                           {Op::sum, *resolve_types(Op::sum, DType::f16, DType::f32).rule},
                                           {Op::max, *resolve_types(Op::max, DType::f64, DType::f64).rule},
                                           {Op::prod, *resolve_types(Op::prod, DType::i32, DType::i64).rule}};
  int copies = 0;
  for (const Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(axis_copies(r.axes), c.copies) << r.axes.to_string();
    for (const auto& [op, t] : kinds) {
      AxisLaunchPlan plan;
      const AxisKernelSpec s = builtin_axis_spec(op, t, r.axes, 132, &plan);
      EXPECT_EQ(s.family == AxisFamily::short_columns && s.unroll == 1, c.copies)
          << to_string(s) << " for " << r.axes.to_string();
      AxisKernelSpec copy;
      copy.op = op;
      copy.types = t;
      copy.family = AxisFamily::short_columns;
      copy.group = 1;
      copy.unroll = 1;
      EXPECT_EQ(axis_spec_mismatch(copy, r.axes).empty(), c.copies) << r.axes.to_string();
      // Four blocks, a vector or an element a thread, each also capped at 2048 threads.
      std::size_t copy_candidates = 0;
      for (const AxisKernelSpec& k : axis_candidates(op, t, r.axes, 132))
        copy_candidates += k.family == AxisFamily::short_columns && k.unroll == 1 ? 1 : 0;
      EXPECT_EQ(copy_candidates, c.copies ? 16u : 0u) << r.axes.to_string();
      if (!c.copies) continue;
      ++copies;
      EXPECT_EQ(axis_spec_problem(s), "");
      EXPECT_EQ(s.vec * size_of(t.in), 16u) << to_string(s);
      EXPECT_EQ(s.unroll, 1u);
      EXPECT_EQ(s.occupancy, 2048u);
      EXPECT_EQ(s.block, 256u);
      EXPECT_EQ(s.split, AxisSplit::none);
      EXPECT_EQ(plan.grid, (r.axes.outputs + 256 * s.vec - 1) / (256 * s.vec)) << r.axes.to_string();
      EXPECT_EQ(plan.block, 256u);
      EXPECT_EQ(plan.splits, 1u);
      EXPECT_EQ(plan.partial_count, 0u);
      EXPECT_EQ(plan.finalize_grid, 0u);
    }
  }
  EXPECT_EQ(copies, 4 * 5);
  // Its config: one vector (or element) a thread, nothing split, folded, capped or ordered.
  const std::optional<AxisKernelSpec> parsed =
      parse_axis_config("short_columns:block=512,group=1,vec=4,split=none", Op::max, kF32);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->family, AxisFamily::short_columns);
  EXPECT_EQ(parse_axis_config(axis_config_text(*parsed), Op::max, kF32), parsed);
  for (const char* bad : {"short_columns:block=256,group=2,vec=4,split=none",
                          "short_columns:block=256,group=1,vec=4,split=two_pass",
                          "short_columns:block=256,group=1,vec=4,split=none,rows=4",
                          "short_columns:block=512,group=1,vec=4,split=none,occ=768",
                          "short_columns:block=256,group=1,vec=4,split=none,tail=1",
                          "short_columns:block=256,group=1,vec=4,split=none,unroll=3",
                          "short_columns:block=256,group=1,vec=4,split=none,ordered=1"}) {
    std::string error;
    EXPECT_FALSE(parse_axis_config(bad, Op::max, kF32, &error).has_value()) << bad;
    EXPECT_NE(error.find("short_columns"), std::string::npos) << error;
  }
}

// The same over random views (rank 2 to 5, permuted, some dimensions sliced, reversed or
// of extent 1, random axes): wherever axis_reorder takes a view, its two steps give every
// output of the view; it takes only general views whose densest dimension is kept and not
// the outputs' innermost.
TEST(AxisSpec, RandomViewsReducedInStrideOrderGiveEveryOutput) {
  std::mt19937 rng(12);
  int reordered = 0, general = 0, rows = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int rank = 2 + static_cast<int>(rng() % 4);
    std::vector<int> order(static_cast<std::size_t>(rank));
    for (int d = 0; d < rank; ++d) order[static_cast<std::size_t>(d)] = d;
    std::shuffle(order.begin(), order.end(), rng);
    TensorDesc view;
    view.rank = rank;
    std::int64_t step = 1;
    for (int i = rank - 1; i >= 0; --i) {
      const int d = order[static_cast<std::size_t>(i)];
      view.extents[d] = 1 + static_cast<std::int64_t>(rng() % 7);
      const int kind = static_cast<int>(rng() % 8);
      view.strides[d] = kind == 0 ? 2 * step : kind == 1 ? -step : step;  // sliced, reversed, plain
      step *= view.extents[d] * (kind == 0 ? 2 : 1);
    }
    AxisList axes;
    for (int d = 0; d < rank; ++d)
      if (rng() % 2) axes.axes[axes.count++] = d;
    const CanonicalResult r = canonicalize(view, axes);
    ASSERT_TRUE(r.ok) << r.error;
    if (r.axes.layout == AxisLayout::general) ++general;
    const std::optional<AxisReorder> reorder = axis_reorder(view, axes, r.axes);
    if (!reorder) continue;
    // The runtime's first question never turns away a reorder that pays.
    for (std::size_t in_size : {2, 4, 8})
      if (axis_reorder_pays(*reorder, r.axes, in_size)) {
        ASSERT_TRUE(axis_reorder_may_pay(r.axes)) << "trial " << trial;
      }
    ++reordered;
    ASSERT_EQ(r.axes.layout, AxisLayout::general);
    ASSERT_GE(r.axes.reduced, kAxisReorderMinReduced);
    // The second kind (the densest dimension reduced) only where stage 1 is rows.
    int densest = -1;
    for (int d = 0; d < rank; ++d)
      if (view.extents[d] > 1 && (densest < 0 || std::abs(view.strides[d]) < std::abs(view.strides[densest])))
        densest = d;
    bool densest_reduced = false;
    for (int i = 0; i < axes.count; ++i) densest_reduced = densest_reduced || axes.axes[i] == densest;
    ASSERT_EQ(reorder->reduces_densest(), densest_reduced) << "trial " << trial << ": " << r.axes.to_string();
    if (densest_reduced) {
      ASSERT_EQ(reorder->stage1_shape.layout, AxisLayout::rows) << "trial " << trial;
      ++rows;
    }
    ASSERT_EQ(reorder->copy_shape.base_offset, 0);
    for (const TypeRule& t : {kF32, kF16}) {
      AxisLaunchPlan copy_plan;
      builtin_axis_spec(Op::max, t, reorder->copy_shape, 132, &copy_plan);
      ASSERT_EQ(copy_plan.partial_count, 0u) << reorder->copy_shape.to_string();
    }
    const auto mark = [](std::int64_t offset) { return (offset + 10000) * (offset + 10000); };
    const std::vector<std::int64_t> want = host_sums(view, axes, mark);
    const std::vector<std::int64_t> staged = host_sums(reorder->stage1, reorder->stage1_axes, mark);
    const std::vector<std::int64_t> got = host_sums(
        reorder->copy, AxisList{}, [&](std::int64_t offset) { return staged.at(static_cast<std::size_t>(offset)); });
    ASSERT_EQ(got, want) << "trial " << trial << ": " << r.axes.to_string();
    // The one-launch form: stage-1 result j written at order.offset(j) is the caller's
    // output, every place written once.
    ASSERT_GT(reorder->order.rank, 0);
    std::vector<std::int64_t> direct(want.size(), -1);
    for (std::size_t j = 0; j < staged.size(); ++j) {
      const std::uint64_t at = reorder->order.offset(j);
      ASSERT_LT(at, direct.size()) << "trial " << trial;
      ASSERT_EQ(direct[at], -1) << "trial " << trial << ": output " << at << " written twice";
      direct[at] = staged[j];
    }
    ASSERT_EQ(direct, want) << "trial " << trial << ": " << r.axes.to_string();
    for (int d = 0; d + 1 < reorder->order.rank; ++d)  // merged where one run
      EXPECT_NE(reorder->order.strides[d], std::uint64_t{reorder->order.strides[d + 1]} * reorder->order.extents[d + 1]);
  }
  std::printf("[ counts   ] %d general views of 3000, %d of them reordered, %d of those as rows\n", general, reordered,
              rows);
  EXPECT_GT(reordered, 50);
  EXPECT_GT(rows, 20);
}

TEST(AxisSpec, TheBatchedTailWhereARunEndsInSeveralLoadsALane) {
  const TypeRule f16{DType::f16, DType::f16, DType::f32};
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  struct Case {
    TypeRule types;
    std::int64_t d0, d1;
    int axis;
    std::uint32_t tail;
  };
  const Case cases[] = {
      {kF32, 16385, 1000, 1, 1},   // 250 vectors, 32 lanes: the last tile 122 vectors
      {kF32, 100000, 999, 1, 1},   //
      {kF32, 16385, 2000, 1, 1},   // 500 vectors: 116 in the last tile
      {f16, 16385, 1000, 1, 1},    // 125 vectors of 8, 16 lanes: 61
      {kF32, 16385, 300, 1, 0},    // 75 vectors, 16 lanes: 11 left, one a lane at most
      {f16, 16385, 300, 1, 0},     // 37 vectors, 8 lanes: 5 left
      {kF32, 1 << 20, 100, 1, 0},  // 4 lanes a row
      {kF32, 1 << 20, 3, 1, 0},    // a thread per row
      {kF32, 3, 1 << 24, 0, 1},    // columns: 3 loads a thread, under a tile, 2^25.6 elements
      {f16, 3, (1 << 24) + 4, 0, 1},  // (on the 16-byte grid: short_columns)
      {kF32, 3, 1 << 20, 0, 0},    // the same under 2^22 elements
      {kF32, 7, 1 << 20, 0, 0},    // a tile and three loads, vectors of four outputs a thread
      {kF32, 7, (1 << 20) + 1, 0, 1},  // the same off the grid: a thread per output
      {f64, 6, 1 << 20, 0, 1},         // a tile and two loads, a thread per output
      {kF32, 5, (1 << 20) + 1, 0, 0},  // a tile and one load
      {kF32, 7, 300001, 0, 0},         // a tile and three loads under 2^22 elements
      {kF32, 1000, 1000, 0, 1},    // 32 threads across R: 31 loads a thread, 3 past 7 tiles
      {kF32, 65537, 100, 0, 0},    // split across blocks
  };
  for (const Case& c : cases) {
    const CanonicalAxes shape = shape_of({c.d0, c.d1}, {c.axis});
    const AxisKernelSpec s = builtin_axis_spec(Op::sum, c.types, shape, 132);
    EXPECT_EQ(s.tail, c.tail) << shape.to_string() << " " << to_string(s);
    EXPECT_EQ(batched_tail_pays(s, shape), c.tail == 1) << shape.to_string();
    // The tuner measures both reads where the built-in choice takes the batched one.
    if (c.tail == 1) {
      AxisKernelSpec guarded = s;
      guarded.tail = 0;
      const auto candidates = axis_candidates(Op::sum, c.types, shape, 132);
      EXPECT_NE(std::find(candidates.begin(), candidates.end(), s), candidates.end()) << shape.to_string();
      const auto tails = std::count_if(candidates.begin(), candidates.end(), [](const AxisKernelSpec& k) { return k.tail == 1; });
      EXPECT_GT(tails, 0) << shape.to_string();
      EXPECT_LT(static_cast<std::size_t>(tails), candidates.size()) << shape.to_string();
      // The source names the batched tail as the template's last argument; without it,
      // the source is what it was before the tail existed.
      // (Both without the capped registers of short columns, the argument after it.)
      AxisKernelSpec batched_spec = s;
      batched_spec.occupancy = guarded.occupancy = 0;
      const std::string batched = make_axis_compile_request(batched_spec, 90).source;
      const std::string plain = make_axis_compile_request(guarded, 90).source;
      EXPECT_NE(batched.find(", 4, 1> rt_axis_instance"), std::string::npos) << batched;
      EXPECT_NE(plain.find(", 4> rt_axis_instance"), std::string::npos) << plain;
    }
  }
  // Past a whole tile the batched tail is for sums: max keeps the guarded loads.
  const AxisKernelSpec max7 = builtin_axis_spec(Op::max, kF32, shape_of({7, (1 << 20) + 1}, {0}), 132);
  EXPECT_EQ(max7.tail, 0u) << to_string(max7);
  // 8-byte sums of R = 3 over many outputs: a thread per output, batched, from 2^22
  // elements; four outputs a pass below that, for max, and over R = 2.
  const TypeRule f64_max{DType::f64, DType::f64, DType::f64};
  const AxisKernelSpec sum3 = builtin_axis_spec(Op::sum, f64, shape_of({3, 2000001}, {0}), 132);
  EXPECT_EQ(sum3.rows_per_pass, 1u) << to_string(sum3);
  EXPECT_EQ(sum3.tail, 1u) << to_string(sum3);
  const AxisKernelSpec small3 = builtin_axis_spec(Op::sum, f64, shape_of({3, 600001}, {0}), 132);
  EXPECT_EQ(small3.rows_per_pass, 4u) << to_string(small3);
  const AxisKernelSpec max3 = builtin_axis_spec(Op::max, f64_max, shape_of({3, 2000001}, {0}), 132);
  EXPECT_EQ(max3.rows_per_pass, 4u) << to_string(max3);
  // R = 2 keeps four outputs a pass.
  const AxisKernelSpec sum2 = builtin_axis_spec(Op::sum, f64, shape_of({2, 4000001}, {0}), 132);
  EXPECT_EQ(sum2.rows_per_pass, 4u) << to_string(sum2);
}

// 16-bit means of R = 2 or 3 take the guarded loads where sums (and 4-byte means) take
// the batched tail, and the tuner's candidates have no batched twin for them.
TEST(AxisSpec, SixteenBitMeansOfTwoOrThreeRowsTakeNoBatchedTail) {
  for (DType d : {DType::f16, DType::bf16})
    for (std::int64_t r : {2, 3}) {
      // On the 8-byte grid, off the 16-byte one (there: short_columns).
      const CanonicalAxes shape = shape_of({r, (1 << 23) + 4}, {0});
      const TypeRule mean = *resolve_types(Op::mean, d, d).rule;
      const TypeRule sum = *resolve_types(Op::sum, d, d).rule;
      const AxisKernelSpec m = builtin_axis_spec(Op::mean, mean, shape, 132);
      EXPECT_EQ(m.family, AxisFamily::columns) << to_string(m);
      EXPECT_EQ(m.tail, 0u) << to_string(m);
      EXPECT_FALSE(batched_tail_pays(m, shape)) << to_string(m);
      EXPECT_EQ(builtin_axis_spec(Op::sum, sum, shape, 132).tail, 1u) << shape.to_string();
      for (const AxisKernelSpec& c : axis_candidates(Op::mean, mean, shape, 132))
        EXPECT_EQ(c.tail, 0u) << to_string(c);
    }
  const CanonicalAxes shape = shape_of({3, 1 << 24}, {0});
  EXPECT_EQ(builtin_axis_spec(Op::mean, *resolve_types(Op::mean, DType::f32, DType::f32).rule, shape, 132).tail, 1u);
}

// Short columns of vectors of outputs (R = 2 and 3, a thread walking R alone, unsplit, 2^21
// outputs and more; 4-byte ones off the grid too) are compiled to fit more threads per SM:
// 1024 for 4-byte elements, 1536 for 16-bit ones. Not from R = 4, not for 8-byte elements,
// not where a thread reads one output, not below 2^21 outputs; the
// tuner measures both forms, and the config text, key and source carry the cap.
TEST(AxisSpec, ShortColumnsOfVectorsAreCompiledToFitMoreThreads) {
  struct Case {
    DType dtype;
    Op op;
    std::int64_t r, outputs;
    std::uint32_t occupancy;
  };
  const Case cases[] = {
      {DType::f32, Op::sum, 2, 1 << 23, 1024},   {DType::f32, Op::max, 3, 1 << 22, 1024},
      {DType::f32, Op::sum, 3, 2622080, 1024},   {DType::i32, Op::min, 2, 1 << 22, 1024},
      {DType::u32, Op::max, 3, 1 << 23, 1024},   {DType::bf16, Op::mean, 2, (1 << 23) + 4, 1536},
      {DType::f16, Op::sum, 3, (1 << 24) + 4, 1536},   {DType::bf16, Op::sum, 2, 2622084, 1536},
      {DType::f16, Op::max, 2, (1 << 21) + 4, 1536},   {DType::f32, Op::sum, 4, 1 << 22, 0},
      {DType::f16, Op::max, 2, (1 << 21) - 4, 0},  {DType::f32, Op::sum, 3, 1 << 20, 0},  // under 2^21 outputs
      {DType::bf16, Op::mean, 4, 1 << 22, 0},    {DType::f16, Op::sum, 8, 1 << 21, 0},
      {DType::f32, Op::sum, 16, 1 << 20, 0},     {DType::f64, Op::sum, 2, 1 << 23, 0},
      {DType::i64, Op::max, 3, 1 << 22, 0},      {DType::f32, Op::sum, 3, (1 << 22) + 1, 1024},  // off the grid
      {DType::i32, Op::sum, 2, (1 << 21) + 2, 1024}, {DType::f32, Op::max, 3, (1 << 21) - 1, 0},
      {DType::bf16, Op::sum, 2, 4095, 0},  // too few outputs for vectors
  };
  for (const Case& c : cases) {
    const TypeRule types = *resolve_types(c.op, c.dtype, default_out_dtype(c.op, c.dtype)).rule;
    const CanonicalAxes shape = shape_of({c.r, c.outputs}, {0});
    const AxisKernelSpec s = builtin_axis_spec(c.op, types, shape, 132);
    const std::string what = shape.to_string() + " " + to_string(s);
    EXPECT_EQ(s.occupancy, c.occupancy) << what;
    EXPECT_EQ(occupancy_that_pays(s, shape), c.occupancy) << what;
    EXPECT_EQ(axis_spec_problem(s), "") << what;
    const auto candidates = axis_candidates(c.op, types, shape, 132);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), s), candidates.end()) << what;
    if (c.occupancy == 0) continue;
    EXPECT_EQ(s.family, AxisFamily::columns) << what;
    EXPECT_GT(s.vec, 1u) << what;
    // 4-byte elements on the grid: two vectors a thread a pass, and the candidates hold
    // the capped form of one vector too; off it (the twin), one.
    const bool two = c.occupancy == 1024 && c.outputs % 4 == 0;
    EXPECT_EQ(s.rows_per_pass, two ? 2u : 1u) << what;
    AxisKernelSpec one = s;
    one.rows_per_pass = 1;
    EXPECT_EQ(two_vectors_a_pass_pay(one, shape), two) << what;
    EXPECT_FALSE(two_vectors_a_pass_pay(s, shape)) << what;  // already two
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), one), candidates.end()) << what;
    AxisKernelSpec plain = one;
    plain.occupancy = 0;
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), plain), candidates.end()) << what;
    EXPECT_NE(axis_spec_key(plain), axis_spec_key(s)) << what;
    const std::string text = axis_config_text(s);
    EXPECT_NE(text.find(",occ=" + std::to_string(c.occupancy)), std::string::npos) << text;
    EXPECT_NE(to_string(s).find(",occ=" + std::to_string(c.occupancy)), std::string::npos) << what;
    const auto parsed = parse_axis_config(text, c.op, types);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(*parsed, s) << text;
    // The template's last argument; the plain form's source ends before it, as it did
    // before the cap existed.
    const std::string source = make_axis_compile_request(s, 90).source;
    EXPECT_NE(source.find(", " + std::to_string(c.occupancy) + "> rt_axis_instance"), std::string::npos) << source;
    EXPECT_EQ(make_axis_compile_request(plain, 90).source.find(std::to_string(c.occupancy) + "> rt_axis_instance"),
              std::string::npos);
  }
}

// The batched tail's rule for columns counts the loads of every thread across R without
// a division per thread (the runtime asks it on every call it serves with the built-in
// choice): the same answer as counting them one by one.
TEST(AxisSpec, TheBatchedTailRuleForColumnsCountsEveryThreadsLoads) {
  int checked = 0;
  for (std::uint32_t by : {1u, 2u, 4u, 8u, 16u, 32u})
    for (std::uint32_t unroll : {4u, 8u})
      for (std::uint64_t r = 2; r <= 600; ++r)
        for (std::uint64_t outputs : {std::uint64_t{1} << 10, std::uint64_t{1} << 22}) {
          AxisKernelSpec s;
          s.family = AxisFamily::columns;
          s.block = 1024;
          s.group = by;
          s.unroll = unroll;
          CanonicalAxes shape;
          shape.layout = AxisLayout::columns;
          shape.reduced = r;
          shape.outputs = outputs;
          shape.inner = outputs;
          bool expected = false;
          const std::uint64_t longest = (r + by - 1) / by;
          if (longest < unroll) {
            expected = longest >= 2 && by == 1 && r * outputs >= (1u << 22);
          } else if (by == 1 && longest < 2 * unroll) {
            // One tile and two or more loads past it, a thread per output (sums).
            expected = r % unroll >= 2 && r * outputs >= (1u << 22);
          } else if (by >= 16) {
            std::uint64_t most_left = 0;
            for (std::uint64_t t = 0; t < by && t < r; ++t)
              most_left = std::max<std::uint64_t>(most_left, ((r - t + by - 1) / by) % unroll);
            expected = most_left >= 2;
          }
          EXPECT_EQ(batched_tail_pays(s, shape), expected) << "R=" << r << " by=" << by << " unroll=" << unroll;
          ++checked;
        }
  EXPECT_EQ(checked, 6 * 2 * 599 * 2);
}

std::vector<CanonicalAxes> tuning_shapes();  // below

// The runtime's kernel cache is keyed by axis_spec_key: two different specs never share a
// key, over every candidate of the tuning shapes (the batched twins among them), f32 and
// f16, and a spec and its batched twin differ.
TEST(AxisSpec, EverySpecHasAKeyOfItsOwn) {
  const TypeRule f16{DType::f16, DType::f16, DType::f32};
  std::map<std::uint64_t, AxisKernelSpec> seen;
  int twins = 0, capped_twins = 0;
  for (const TypeRule& types : {kF32, f16})
    for (Op op : {Op::sum, Op::max})
      for (const auto& shape : tuning_shapes())
        for (const auto& c : axis_candidates(op, types, shape, 132)) {
          const auto [it, fresh] = seen.emplace(axis_spec_key(c), c);
          if (!fresh) {
            EXPECT_EQ(it->second, c) << to_string(it->second) << " and " << to_string(c) << " share a key";
          }
          AxisKernelSpec other = c;
          other.tail = c.tail ? 0 : 1;
          EXPECT_NE(axis_spec_key(other), axis_spec_key(c)) << to_string(c);
          twins += c.tail;
          if (c.family == AxisFamily::columns) {
            for (std::uint32_t occupancy : {0u, 1024u, 1536u, 2048u}) {
              AxisKernelSpec capped = c;
              capped.occupancy = occupancy;
              if (capped == c || !axis_spec_problem(capped).empty()) continue;
              EXPECT_NE(axis_spec_key(capped), axis_spec_key(c)) << to_string(c) << " occ=" << occupancy;
            }
            capped_twins += c.occupancy != 0;
          }
        }
  EXPECT_GT(seen.size(), 1000u);
  EXPECT_GT(twins, 0);
  EXPECT_GT(capped_twins, 0);
}

TEST(AxisSpec, TheChoiceComesWithThePlanOfItsSpec) {
  for (auto shape : {shape_of({3, 5}, {1}), shape_of({2, 1 << 24}, {1}), shape_of({100, 1 << 20}, {1}),
                     shape_of({1 << 20, 16}, {0}), shape_of({4097, 1000}, {0}), shape_of({1 << 20, 8}, {1}),
                     shape_of({6, 7, 8}, {0, 2}), shape_of({1 << 16, 1000}, {0})}) {
    AxisLaunchPlan given;
    const AxisKernelSpec s = builtin_axis_spec(Op::sum, kF32, shape, 132, &given);
    const AxisLaunchPlan planned = plan_axis_launch(s, shape, 132);
    EXPECT_EQ(given.grid, planned.grid) << to_string(s);
    EXPECT_EQ(given.block, planned.block) << to_string(s);
    EXPECT_EQ(given.splits, planned.splits) << to_string(s);
    EXPECT_EQ(given.finalize_grid, planned.finalize_grid) << to_string(s);
    EXPECT_EQ(given.partial_count, planned.partial_count) << to_string(s);
  }
}

// A class's winner may split R at the class's corner and not at a shape with more
// outputs: its plan then has one split, no partials and no finalize kernel.
TEST(AxisSpec, ASplitSpecOnAShapeThatNeedsNoSplitPlansNone) {
  for (AxisFamily family : {AxisFamily::rows, AxisFamily::columns}) {
    AxisKernelSpec s;
    s.family = family;
    s.group = family == AxisFamily::rows ? 256 : 8;
    for (AxisSplit split : {AxisSplit::two_pass, AxisSplit::ticket, AxisSplit::ticket_tiles}) {
      if (split == AxisSplit::ticket_tiles && family != AxisFamily::rows) continue;
      s.split = split;
      const CanonicalAxes few = family == AxisFamily::rows ? shape_of({7, 1 << 20}, {1}) : shape_of({1 << 20, 7}, {0});
      const CanonicalAxes many = family == AxisFamily::rows ? shape_of({1 << 20, 1024}, {1}) : shape_of({1024, 1 << 20}, {0});
      EXPECT_GT(plan_axis_launch(s, few, 132).splits, 1u) << to_string(s);
      const AxisLaunchPlan plan = plan_axis_launch(s, many, 132);
      EXPECT_EQ(plan.splits, 1u) << to_string(s);
      EXPECT_EQ(plan.partial_count, 0u) << to_string(s);
      EXPECT_EQ(plan.finalize_grid, 0u) << to_string(s);
    }
  }
}

TEST(AxisSpec, InvalidSpecsAreNamed) {
  AxisKernelSpec s;
  s.block = 48;
  EXPECT_NE(axis_spec_problem(s).find("block"), std::string::npos);
  s = AxisKernelSpec{};
  s.group = 64;  // between a warp and the block
  EXPECT_NE(axis_spec_problem(s).find("group"), std::string::npos);
  s = AxisKernelSpec{};
  s.vec = 8;  // 32 bytes of f32
  EXPECT_NE(axis_spec_problem(s).find("vec"), std::string::npos);
  s = AxisKernelSpec{};
  s.family = AxisFamily::general;
  s.vec = 4;  // vectors along the innermost reduced dimension, where a shape allows
  EXPECT_EQ(axis_spec_problem(s), "");
  s.family = AxisFamily::columns_dense;
  s.group = 1;
  EXPECT_EQ(axis_spec_problem(s), "");
  s.family = AxisFamily::columns;  // vectors of adjacent outputs
  EXPECT_EQ(axis_spec_problem(s), "");
  s.rows_per_pass = 4;  // and 2 or 4 of them a thread a pass, unsplit, by = 1
  EXPECT_EQ(axis_spec_problem(s), "");
  s.rows_per_pass = 2;
  EXPECT_EQ(axis_spec_problem(s), "");
  s.rows_per_pass = 3;
  EXPECT_NE(axis_spec_problem(s).find("vectors"), std::string::npos);
  s.rows_per_pass = 2;
  s.split = AxisSplit::two_pass;
  EXPECT_NE(axis_spec_problem(s).find("vectors"), std::string::npos);
  s.split = AxisSplit::none;
  s.group = 2;
  EXPECT_NE(axis_spec_problem(s).find("vectors"), std::string::npos);
  s = AxisKernelSpec{};
  s.group = 256;
  s.rows_per_pass = 4;  // several rows per pass need groups within a warp
  EXPECT_NE(axis_spec_problem(s).find("rows per pass"), std::string::npos);
  EXPECT_THROW(make_axis_compile_request(s, 90), InvalidArgument);
}

TEST(AxisSpec, PlansCoverEveryOutputOnce) {
  for (std::uint64_t outputs : {1ull, 7ull, 1000ull, 1ull << 24, 3ull << 30}) {
    CanonicalAxes shape;
    shape.layout = AxisLayout::rows;
    shape.outputs = outputs;
    shape.reduced = 1 << 12;
    AxisKernelSpec s = builtin_axis_spec(Op::sum, kF32, shape, 132);
    const auto plan = plan_axis_launch(s, shape, 132);
    EXPECT_GE(plan.grid, 1u);
    EXPECT_LE(plan.grid, 0x7fffffffu);
    EXPECT_EQ(plan.grid % plan.splits, 0u);
    EXPECT_EQ(plan.block, s.block);
  }
}

// Shapes of every layout and size regime the tuner's candidates are drawn for.
std::vector<CanonicalAxes> tuning_shapes() {
  std::vector<CanonicalAxes> shapes;
  for (std::int64_t r : {2, 3, 16, 31, 100, 1025, 1 << 16, 1 << 22})
    for (std::int64_t o : {2, 7, 1000, 1 << 16, 1 << 22}) {
      if (r * o > (std::int64_t{1} << 30)) continue;
      shapes.push_back(shape_of({o, r}, {1}));  // rows
      shapes.push_back(shape_of({r, o}, {0}));  // columns
    }
  return shapes;
}

TEST(AxisConfig, CanonicalTextRoundTripsForEveryCandidate) {
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  int seen = 0;
  for (const TypeRule& types : {kF32, f64})
    for (const auto& shape : tuning_shapes())
      for (const auto& c : axis_candidates(Op::max, types, shape, 132)) {
        const std::string text = axis_config_text(c);
        std::string error;
        const auto parsed = parse_axis_config(text, Op::max, types, &error);
        ASSERT_TRUE(parsed) << text << ": " << error;
        EXPECT_EQ(*parsed, c) << text;
        EXPECT_EQ(axis_config_text(*parsed), text);
        ++seen;
      }
  EXPECT_GT(seen, 500);
  // The documented example parses, fields in any order, `by` for columns.
  const auto rows = parse_axis_config("rows:block=256,group=4,vec=4,split=none,rows=4", Op::sum, kF32);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->family, AxisFamily::rows);
  EXPECT_EQ(rows->group, 4u);
  EXPECT_EQ(rows->rows_per_pass, 4u);
  const auto columns = parse_axis_config("columns:split=ticket,vec=1,by=8,block=256", Op::sum, kF32);
  ASSERT_TRUE(columns);
  EXPECT_EQ(columns->group, 8u);
  EXPECT_EQ(columns->split, AxisSplit::ticket);
  EXPECT_EQ(columns->rows_per_pass, 1u);
  EXPECT_EQ(columns->unroll, 4u);
  EXPECT_EQ(columns->blocks_per_sm, 4u);
  EXPECT_EQ(axis_config_text(*columns), "columns:block=256,by=8,vec=1,split=ticket,rows=1,unroll=4,sm=4");
  const auto deep = parse_axis_config("rows:block=256,group=256,vec=4,split=two_pass,unroll=8,sm=16", Op::sum, kF32);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->unroll, 8u);
  EXPECT_EQ(deep->blocks_per_sm, 16u);
  const auto tiles = parse_axis_config("rows:block=512,group=512,vec=4,split=ticket_tiles,sm=8", Op::sum, kF32);
  ASSERT_TRUE(tiles);
  EXPECT_EQ(tiles->split, AxisSplit::ticket_tiles);
  EXPECT_EQ(axis_config_text(*tiles), "rows:block=512,group=512,vec=4,split=ticket_tiles,rows=1,unroll=4,sm=8");
  // The batched tail is written only where it is taken, so that every text stored before
  // it existed reads as the spec it was.
  const auto tail = parse_axis_config("rows:block=256,group=32,vec=4,split=none,tail=1", Op::sum, kF32);
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->tail, 1u);
  EXPECT_EQ(axis_config_text(*tail), "rows:block=256,group=32,vec=4,split=none,rows=1,unroll=4,sm=4,tail=1");
  EXPECT_NE(to_string(*tail).find(",tail=1"), std::string::npos);
  EXPECT_EQ(rows->tail, 0u);
  EXPECT_EQ(axis_config_text(*rows).find("tail"), std::string::npos);
}

// A few long rows split with a last-block finish are searched in both reading orders:
// contiguous chunks (every blocks-per-SM count) and tiles in turn (4 and 8 per SM), and
// so are dense columns. The columns family, and splits into a second kernel or none,
// never take tiles.
TEST(AxisConfig, FewLongRowsAreSearchedInBothReadingOrders) {
  const auto count = [](const std::vector<AxisKernelSpec>& candidates, AxisSplit split, std::uint32_t per_sm) {
    return std::count_if(candidates.begin(), candidates.end(), [&](const AxisKernelSpec& c) {
      return c.split == split && c.blocks_per_sm == per_sm;
    });
  };
  const auto few = axis_candidates(Op::max, kF32, shape_of({7, 1 << 24}, {1}), 132);
  for (std::uint32_t per_sm : {4u, 8u}) {
    EXPECT_GT(count(few, AxisSplit::ticket_tiles, per_sm), 0) << per_sm;
    // Every contiguous ticket split at 4 and 8 blocks per SM has its tiled twin.
    EXPECT_EQ(count(few, AxisSplit::ticket_tiles, per_sm), count(few, AxisSplit::ticket, per_sm)) << per_sm;
  }
  EXPECT_EQ(count(few, AxisSplit::ticket_tiles, 16), 0);
  EXPECT_GT(count(few, AxisSplit::ticket, 16), 0);
  for (const auto& c : few)
    if (c.split == AxisSplit::ticket_tiles) {
      AxisKernelSpec chunks = c;
      chunks.split = AxisSplit::ticket;
      EXPECT_NE(std::find(few.begin(), few.end(), chunks), few.end()) << to_string(c);
    }
  // The built-in choice takes tiles for up to 16 long rows from R = 2^20 on (in blocks of
  // 128 at 8 per SM, a candidate) and over 64 rows (blocks of 256 at 8 per SM, or 512 at
  // 16 from 2^25 elements), contiguous chunks for 17 to 64 rows, and tiles for dense
  // columns of up to 32 outputs.
  const AxisKernelSpec builtin = builtin_axis_spec(Op::max, kF32, shape_of({7, 1 << 24}, {1}), 132);
  EXPECT_EQ(builtin.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(builtin.blocks_per_sm, 8u);
  EXPECT_NE(std::find(few.begin(), few.end(), builtin), few.end());
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({16, 1 << 20}, {1}), 132).split, AxisSplit::ticket_tiles);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({17, 1 << 17}, {1}), 132).split, AxisSplit::ticket);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({3, (1 << 20) - 1}, {1}), 132).split, AxisSplit::ticket);
  // From 2^22 elements every split row of 4 bytes takes tiles (blocks of 128).
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({17, 1 << 22}, {1}), 132).split, AxisSplit::ticket_tiles);
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({7, (1 << 20) - 1}, {1}), 132).split, AxisSplit::ticket_tiles);
  const AxisKernelSpec many = builtin_axis_spec(Op::max, kF32, shape_of({257, 1 << 18}, {1}), 132);
  EXPECT_EQ(many.split, AxisSplit::ticket_tiles);
  EXPECT_EQ(many.block, 512u);
  EXPECT_EQ(many.blocks_per_sm, 16u);
  const auto many_candidates = axis_candidates(Op::max, kF32, shape_of({257, 1 << 18}, {1}), 132);
  EXPECT_NE(std::find(many_candidates.begin(), many_candidates.end(), many), many_candidates.end());
  EXPECT_EQ(builtin_axis_spec(Op::max, kF32, shape_of({1 << 24, 7}, {0}), 132).split, AxisSplit::ticket_tiles);
  // Dense columns over a long R (7 columns of 2^24 rows) too; the columns family never.
  const auto narrow = axis_candidates(Op::max, kF32, shape_of({1 << 24, 7}, {0}), 132);
  int dense_tiles = 0;
  for (const auto& c : narrow) {
    if (c.split != AxisSplit::ticket_tiles) continue;
    EXPECT_EQ(c.family, AxisFamily::columns_dense) << to_string(c);
    ++dense_tiles;
  }
  EXPECT_GT(dense_tiles, 0);
  const CanonicalAxes others[] = {shape_of({1000, 1 << 20}, {1}), shape_of({1 << 20, 1000}, {1}),
                                  shape_of({1 << 20, 1000}, {0})};
  for (const CanonicalAxes& shape : others)
    for (const auto& c : axis_candidates(Op::max, kF32, shape, 132))
      EXPECT_NE(c.split, AxisSplit::ticket_tiles) << to_string(c) << " for " << shape.to_string();
}

// The tuner's split columns candidates follow the built-in choice's rule: up to 16 MiB,
// where a group's fold is short, the last block of each group folds (one launch); past
// 16 MiB, or for tiles of many outputs over many splits, a second kernel.
TEST(AxisConfig, SplitColumnsCandidatesFoldInOneLaunchWhereTheRuleDoes) {
  const auto splits_of = [](const CanonicalAxes& shape) {
    std::set<AxisSplit> splits;
    for (const auto& c : axis_candidates(Op::sum, kF32, shape, 132))
      if (c.family == AxisFamily::columns && c.split != AxisSplit::none) splits.insert(c.split);
    return splits;
  };
  // 4095 x 479 f32 (7.8 MB) and 3000 x 100: a split columns candidate folds in one launch
  // exactly where its group's fold takes at most eight round trips in at most four
  // passes; some do.
  for (const CanonicalAxes& shape : {shape_of({4095, 479}, {0}), shape_of({3000, 100}, {0})}) {
    int one_launch = 0;
    for (const auto& c : axis_candidates(Op::sum, kF32, shape, 132)) {
      if (c.family != AxisFamily::columns || c.split == AxisSplit::none) continue;
      AxisKernelSpec ticket = c;
      ticket.split = AxisSplit::ticket;
      const bool short_fold = axis_columns_fold_trips(ticket, 1) <= 4 &&  // passes over the tile
                              axis_columns_fold_trips(ticket, plan_axis_launch(ticket, shape, 132).splits) <= 8;
      EXPECT_EQ(c.split, short_fold ? AxisSplit::ticket : AxisSplit::two_pass) << to_string(c) << " " << shape.to_string();
      one_launch += c.split == AxisSplit::ticket;
    }
    EXPECT_GT(one_launch, 0) << shape.to_string();
  }
  // 30001 x 3001 f32 (360 MB): a second kernel.
  const std::set<AxisSplit> large = splits_of(shape_of({30001, 3001}, {0}));
  ASSERT_FALSE(large.empty());
  EXPECT_EQ(large, std::set<AxisSplit>{AxisSplit::two_pass});
  // Every candidate split with a ticket keeps its groups within the slots and its fold
  // within the rule's round trips.
  for (const CanonicalAxes& shape : {shape_of({4095, 479}, {0}), shape_of({3000, 100}, {0}),
                                     shape_of({1285, 197}, {0}), shape_of({8192, 669}, {0})})
    for (const auto& c : axis_candidates(Op::sum, kF32, shape, 132)) {
      if (c.family != AxisFamily::columns || c.split != AxisSplit::ticket) continue;
      const AxisLaunchPlan plan = plan_axis_launch(c, shape, 132);
      EXPECT_LE(plan.grid / plan.splits, kAxisTicketSlots) << to_string(c);
      EXPECT_LE(axis_columns_fold_trips(c, plan.splits), 8u) << to_string(c) << " " << shape.to_string();
      EXPECT_EQ(plan.finalize_grid, 0u) << to_string(c);
    }
}

TEST(AxisConfig, BadTextIsRefusedWithTheReason) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "FAMILY"},
      {"rows", "FAMILY"},
      {"diagonal:block=256,group=1,vec=1,split=none", "unknown family"},
      {"rows:block=256,group=4,vec=4", "split is required"},
      {"rows:block=256,group=4,split=none", "required"},
      {"rows:block=256,group=4,vec=4,split=sideways", "unknown split"},
      {"rows:block=256,group=4,vec=4,split=none,colour=red", "unknown key"},
      {"rows:block=256,group=4,group=8,vec=4,split=none", "twice"},
      {"rows:block=2x6,group=4,vec=4,split=none", "number"},
      {"rows:block=256,group=4,vec=8,split=none", "vec"},  // 32 bytes of f32
      {"rows:block=48,group=4,vec=4,split=none", "block"},
      {"rows_dense:block=256,group=1,vec=1,split=two_pass", "never split"},
      {"rows_dense:block=512,group=1,vec=4,split=none,unroll=8", "at most 32 KiB"},
      {"rows_dense:block=256,group=64,vec=4,split=none", "at most 32 lanes"},
      {"rows:block=256,group=4,vec=4,split=none,unroll=6", "unroll is 4 or 8"},
      {"rows:block=256,group=256,vec=4,split=two_pass,sm=5", "sm is 4, 8 or 16"},
      {"rows:block=256,group=4,vec=4,split=none,sm=8", "split plans only"},
      {"columns:block=256,by=8,vec=1,split=ticket_tiles", "ticket_tiles splits rows, columns_dense and columns_folded only"},
      {"rows:block=256,group=32,vec=4,split=none,tail=2", "tail is 0 or 1"},
      {"general:block=256,group=8,vec=1,split=none,tail=1", "tail=1 is for rows and columns"},
      {"columns_dense:block=256,group=1,vec=4,split=none,tail=1", "tail=1 is for rows and columns"},
      {"rows:block=512,group=512,vec=4,split=ticket_tiles,sm=8,tail=1", "not split in tiles"},
      {"columns:block=256,by=1,vec=4,split=none,occ=512", "occ is 0, 1024, 1536 or 2048"},
      {"columns:block=256,by=1,vec=4,split=none,occ=many", "number"},
      {"rows:block=256,group=4,vec=4,split=none,occ=1024", "occ applies to columns"},
      {"columns:block=1024,by=32,vec=1,split=none,occ=1536", "a multiple of the block"},
  };
  for (const auto& [text, why] : bad) {
    std::string error;
    EXPECT_FALSE(parse_axis_config(text, Op::sum, kF32, &error)) << text;
    EXPECT_NE(error.find(why), std::string::npos) << text << " -> " << error;
  }
}

TEST(AxisConfig, CandidatesAreValidFitTheirShapeAndIncludeTheBuiltInChoice) {
  const TypeRule f16{DType::f16, DType::f16, DType::f32};
  for (const TypeRule& types : {kF32, f16})
  for (const auto& shape : tuning_shapes()) {
    const auto candidates = axis_candidates(Op::sum, types, shape, 132);
    ASSERT_FALSE(candidates.empty()) << shape.to_string();
    const AxisKernelSpec builtin = builtin_axis_spec(Op::sum, types, shape, 132);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), builtin), candidates.end()) << shape.to_string();
    for (const auto& c : candidates) {
      EXPECT_EQ(axis_spec_problem(c), "") << to_string(c);
      EXPECT_EQ(axis_spec_mismatch(c, shape), "") << to_string(c) << " for " << shape.to_string();
      EXPECT_EQ(std::count(candidates.begin(), candidates.end(), c), 1) << to_string(c);
    }
    // Rows search more than one width of group; columns more than one split of R across
    // a block's threads, wherever R allows it.
    std::set<std::uint32_t> groups;
    for (const auto& c : candidates) groups.insert(c.group);
    if (shape.reduced >= 16) {
      EXPECT_GE(groups.size(), 3u) << shape.to_string();
    }
    // The default run's classes (4- and 8-byte types) stay within 96 candidates; 16-bit
    // columns add vectors of adjacent outputs at every split, and 16-bit rows 8-byte
    // vectors beside 16-byte ones (16-bit axis classes are tuned when named).
    EXPECT_LE(candidates.size(), size_of(types.in) == 2 ? 176u : 96u) << shape.to_string();
    // 16-bit rows long enough for vectors search both widths.
    if (size_of(types.in) == 2 && shape.layout == AxisLayout::rows && shape.reduced >= 16) {
      std::set<std::uint32_t> vecs;
      for (const auto& c : candidates)
        if (c.family == AxisFamily::rows) vecs.insert(c.vec);
      EXPECT_TRUE(vecs.count(4) && vecs.count(8)) << shape.to_string();
    }
  }
  // Short columns: the unsplit specs, blocks of 1024 among them; none past R = 2048.
  for (std::int64_t r : {256, 1000, 2048, 2049}) {
    const auto candidates = axis_candidates(Op::sum, kF32, shape_of({r, 100}, {0}), 132);
    const bool has_1024 = std::any_of(candidates.begin(), candidates.end(), [](const AxisKernelSpec& c) {
      return c.block == 1024 && c.group == 32 && c.split == AxisSplit::none;
    });
    EXPECT_EQ(has_1024, r <= 2048) << r;
    const bool unsplit_256 = std::any_of(candidates.begin(), candidates.end(), [](const AxisKernelSpec& c) {
      return c.family == AxisFamily::columns && c.block == 256 && c.group == 8 && c.split == AxisSplit::none;
    });
    EXPECT_EQ(unsplit_256, r <= 2048) << r;
  }
}

TEST(AxisConfig, AFamilyOfAnotherLayoutOrPastItsLimitsDoesNotFit) {
  AxisKernelSpec rows;
  rows.family = AxisFamily::rows;
  const CanonicalAxes columns_shape = shape_of({1000, 64}, {0});
  const CanonicalAxes rows_shape = shape_of({64, 1000}, {1});
  EXPECT_NE(axis_spec_mismatch(rows, columns_shape), "");
  EXPECT_EQ(axis_spec_mismatch(rows, rows_shape), "");
  AxisKernelSpec columns;
  columns.family = AxisFamily::columns;
  columns.group = 1;
  EXPECT_NE(axis_spec_mismatch(columns, rows_shape), "");
  EXPECT_EQ(axis_spec_mismatch(columns, columns_shape), "");
  AxisKernelSpec general;
  general.family = AxisFamily::general;
  EXPECT_EQ(axis_spec_mismatch(general, rows_shape), "");
  EXPECT_EQ(axis_spec_mismatch(general, columns_shape), "");
  // rows_dense: contiguous rows of at most an eighth of its tile (block x unroll x vec
  // elements): 256 x 4 x 1 = 1024 elements here, 4096 with vectors of four, 8192 at
  // unroll 8.
  AxisKernelSpec dense;
  dense.family = AxisFamily::rows_dense;
  dense.group = 1;
  EXPECT_EQ(axis_spec_mismatch(dense, shape_of({4096, 2}, {1})), "");
  EXPECT_EQ(axis_spec_mismatch(dense, shape_of({4096, 128}, {1})), "");
  EXPECT_NE(axis_spec_mismatch(dense, shape_of({4096, 129}, {1})), "");
  dense.vec = 4;
  EXPECT_EQ(axis_spec_mismatch(dense, shape_of({4096, 512}, {1})), "");
  EXPECT_NE(axis_spec_mismatch(dense, shape_of({4096, 513}, {1})), "");
  dense.unroll = 8;
  EXPECT_EQ(axis_spec_mismatch(dense, shape_of({4096, 1024}, {1})), "");
  EXPECT_NE(axis_spec_mismatch(dense, shape_of({4096, 1025}, {1})), "");
  dense.vec = 1;
  dense.unroll = 4;
  const CanonicalResult strided = canonicalize(TensorDesc::strided({4096, 8}, {16, 1}), {1});
  ASSERT_TRUE(strided.ok);
  ASSERT_EQ(strided.axes.layout, AxisLayout::rows);
  EXPECT_NE(axis_spec_mismatch(dense, strided.axes), "");
  // columns_dense: inner within the block, reduced rows contiguous.
  AxisKernelSpec cdense;
  cdense.family = AxisFamily::columns_dense;
  cdense.group = 1;
  cdense.block = 256;
  EXPECT_EQ(axis_spec_mismatch(cdense, shape_of({1 << 16, 64}, {0})), "");
  EXPECT_NE(axis_spec_mismatch(cdense, shape_of({1 << 16, 257}, {0})), "");
}

// 16-bit columns of R = 2 to 4 over 2^21 outputs and more on the 16-byte grid take the
// short_columns family: eight outputs a thread, R = 2 two rows a round in blocks of 256,
// R = 3 and 4 four in blocks of 128; not off that grid (outputs, strides or a known base),
// not for 4-byte elements, not from R = 5, not below 2^21 outputs. Its configs are the
// tuner's candidates where the vectors fit, and they read the rows in rounds of any R.
// 16-bit columns on the 2-element grid but off the 4-element one (outputs and strides of
// 2 mod 4), R >= 32: two outputs a thread, eight loads in flight; a thread walking R alone
// over many outputs, 16 threads across R in blocks of 512 over R >= 1000 and fewer (four
// loads in flight over more than 1750 threads per SM). Not on the 4-element grid, off the
// 2-element one, below R = 32, for 4-byte elements, for stepped columns, nor from a base
// off the 4-byte grid.
TEST(AxisSpec, SixteenBitColumnsOnTheTwoElementGridReadPairs) {
  struct Case {
    TypeRule types;
    Op op;
    TensorDesc view;
    AxisList axes;
    std::uint32_t block, by, unroll;  // block 0: not this rule
  };
  const TypeRule bf16_max = *resolve_types(Op::max, DType::bf16, DType::bf16).rule;
  const TypeRule f16_mean = *resolve_types(Op::mean, DType::f16, DType::f16).rule;
  const Case cases[] = {
      {kF16, Op::sum, TensorDesc::contiguous({100, 1048578}), {0}, 256, 1, 8},
      {bf16_max, Op::max, TensorDesc::contiguous({33, 4194302}), {0}, 256, 1, 8},
      {f16_mean, Op::mean, TensorDesc::contiguous({1000, 262146}), {0}, 256, 1, 8},
      {kF16, Op::sum, TensorDesc::contiguous({4, 40, 65538}), {1}, 256, 1, 8},             // four slices
      {kF16, Op::sum, TensorDesc::strided({300, 262144}, {262146, 1}), {0}, 256, 1, 8},    // rows 2 mod 4 apart
      {kF16, Op::sum, TensorDesc::contiguous({4097, 16386}), {0}, 512, 16, 8},
      {bf16_max, Op::max, TensorDesc::contiguous({2049, 30002}), {0}, 512, 16, 4},
      {kF16, Op::sum, TensorDesc::contiguous({1000, 8450}), {0}, 512, 16, 8},               // 64 outputs per SM
      {kF16, Op::sum, TensorDesc::contiguous({1000, 30002}), {0}, 512, 16, 4},
      {kF16, Op::sum, TensorDesc::contiguous({600, 40002}), {0}, 0, 0, 0},                  // R < 1000, fewer
      {kF16, Op::sum, TensorDesc::contiguous({1000, 8446}), {0}, 0, 0, 0},                  // fewer
      {kF16, Op::sum, TensorDesc::contiguous({31, 1048578}), {0}, 0, 0, 0},                 // R < 32
      {kF16, Op::sum, TensorDesc::contiguous({100, 1048576}), {0}, 0, 0, 0},                // the 4-element grid
      {kF16, Op::sum, TensorDesc::contiguous({100, 1048577}), {0}, 0, 0, 0},                // off both
      {kF16, Op::sum, TensorDesc::strided({100, 1048576}, {1048578, 1}), {0}, 256, 1, 8},   // rows off the 4-element grid
      {kF16, Op::sum, TensorDesc::strided({100, 1048576}, {1048577, 1}), {0}, 0, 0, 0},     // rows off both
      {kF32, Op::sum, TensorDesc::contiguous({100, 1048578}), {0}, 0, 0, 0},
      {kF16, Op::sum, TensorDesc::strided({100, 524289}, {1048578, 2}), {0}, 0, 0, 0},     // stepped columns
  };
  alignas(16) static const unsigned char buffer[32] = {};
  for (const Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.axes.layout, AxisLayout::columns) << r.axes.to_string();
    AxisLaunchPlan plan;
    const AxisKernelSpec s = builtin_axis_spec(c.op, c.types, r.axes, 132, &plan);
    const std::string what = r.axes.to_string() + " " + to_string(s);
    const bool taken = s.family == AxisFamily::columns && s.vec == 2;
    EXPECT_EQ(taken, c.block != 0) << what;
    if (c.block == 0) continue;
    EXPECT_EQ(axis_spec_problem(s), "") << what;
    EXPECT_EQ(axis_spec_mismatch(s, r.axes), "") << what;
    EXPECT_EQ(s.block, c.block) << what;
    EXPECT_EQ(s.group, c.by) << what;
    EXPECT_EQ(s.unroll, c.unroll) << what;
    EXPECT_EQ(s.split, AxisSplit::none) << what;
    EXPECT_EQ(s.rows_per_pass, 1u) << what;
    EXPECT_EQ(s.occupancy, 0u) << what;
    EXPECT_EQ(plan.splits, 1u) << what;
    const AxisLaunchPlan again = plan_axis_launch(s, r.axes, 132);
    EXPECT_EQ(plan.grid, again.grid) << what;
    EXPECT_EQ(plan.block, again.block) << what;
    // The tuner holds the choice among its candidates; from an aligned base the launch
    // reads pairs, from one off the 4-byte grid the choice is another.
    const auto candidates = axis_candidates(c.op, c.types, r.axes, 132);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), s), candidates.end()) << what;
    EXPECT_FALSE(axis_launch_takes_twin(s, r.axes, plan, buffer + 4)) << what;
    EXPECT_EQ(builtin_axis_spec(c.op, c.types, r.axes, 132, nullptr, buffer + 4), s) << what;
    EXPECT_NE(builtin_axis_spec(c.op, c.types, r.axes, 132, nullptr, buffer + 2).vec, 2u) << what;
  }
}

TEST(AxisSpec, ShortSixteenBitColumnsOnTheVectorGridTakeShortColumns) {
  struct Case {
    TypeRule types;
    Op op;
    TensorDesc view;
    AxisList axes;
    bool taken;
  };
  const TypeRule bf16_mean = *resolve_types(Op::mean, DType::bf16, DType::bf16).rule;
  const Case cases[] = {
      {kF16, Op::sum, TensorDesc::contiguous({2, 1 << 23}), {0}, true},
      {kBF16, Op::max, TensorDesc::contiguous({3, 1 << 22}), {0}, true},
      {bf16_mean, Op::mean, TensorDesc::contiguous({4, 2097152}), {0}, true},
      {kF16, Op::sum, TensorDesc::contiguous({4, 3, 1 << 20}), {1}, true},          // four slices
      {kF16, Op::sum, TensorDesc::strided({3, 2097160}, {2097168, 1}), {0}, true},  // padded rows on the grid
      {kF16, Op::sum, TensorDesc::contiguous({2, (1 << 22) + 4}), {0}, false},      // the 8-byte grid only
      {kF16, Op::sum, TensorDesc::contiguous({3, (1 << 22) - 1}), {0}, false},
      {kF16, Op::sum, TensorDesc::contiguous({5, 1 << 22}), {0}, false},
      {kF16, Op::sum, TensorDesc::contiguous({2, 1 << 20}), {0}, false},
      {kF32, Op::sum, TensorDesc::contiguous({2, 1 << 23}), {0}, false},
      {kF16, Op::sum, TensorDesc::strided({2, 1 << 22}, {1, 2}), {0}, false},       // stepped columns
  };
  for (const Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << r.error;
    AxisLaunchPlan plan;
    const AxisKernelSpec s = builtin_axis_spec(c.op, c.types, r.axes, 132, &plan);
    const std::string what = r.axes.to_string() + " " + to_string(s);
    EXPECT_EQ(short_16bit_columns_pay(c.types, r.axes, nullptr), c.taken) << what;
    EXPECT_EQ(s.family == AxisFamily::short_columns, c.taken) << what;
    if (!c.taken) continue;
    EXPECT_EQ(axis_spec_problem(s), "") << what;
    EXPECT_EQ(axis_spec_mismatch(s, r.axes), "") << what;
    EXPECT_EQ(s.vec, 8u) << what;
    EXPECT_EQ(s.block, r.axes.reduced == 2 ? 256u : 128u) << what;
    EXPECT_EQ(s.unroll, r.axes.reduced == 2 ? 2u : 4u) << what;
    EXPECT_EQ(s.occupancy, 0u) << what;
    EXPECT_EQ(plan.grid, (r.axes.outputs / 8 + s.block - 1) / s.block) << what;
    EXPECT_EQ(plan.splits, 1u);
    const auto candidates = axis_candidates(c.op, c.types, r.axes, 132);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), s), candidates.end()) << what;
    // A base off the 16-byte grid takes the columns program, whose twin reads it.
    alignas(16) static const unsigned char buffer[32] = {};
    EXPECT_FALSE(short_16bit_columns_pay(c.types, r.axes, buffer + 2)) << what;
    EXPECT_EQ(builtin_axis_spec(c.op, c.types, r.axes, 132, nullptr, buffer + 2).family, AxisFamily::columns) << what;
    EXPECT_TRUE(short_16bit_columns_pay(c.types, r.axes, buffer + 16)) << what;
  }
  // Any R fits the family; unroll=1 fits only a converting copy.
  AxisKernelSpec k;
  k.types = kF16;
  k.family = AxisFamily::short_columns;
  k.group = 1;
  k.vec = 8;
  k.unroll = 4;
  EXPECT_EQ(axis_spec_mismatch(k, shape_of({1000, 4096}, {0})), "");
  EXPECT_NE(axis_spec_mismatch(k, shape_of({4096, 1000}, {1})), "");  // rows
  k.unroll = 1;
  EXPECT_NE(axis_spec_mismatch(k, shape_of({2, 4096}, {0})), "");
  EXPECT_EQ(axis_spec_mismatch(k, shape_of({1, 4096}, {0})), "");
}

// The 16-byte grid a tuned class may keep a second winner for: rows whose length and
// pitch, or columns whose slice, R stride and slice stride, are whole 16-byte vectors, and
// a base on the grid where one is given; never general views or stepped columns.
TEST(AxisSpec, TheSixteenByteGridOfTunedClasses) {
  struct Case {
    TensorDesc view;
    AxisList axes;
    std::size_t bytes;
    bool on;
  };
  const Case cases[] = {
      {TensorDesc::contiguous({1000, 8}), {1}, 2, true},              // rows of 16 bytes
      {TensorDesc::contiguous({1000, 4}), {1}, 4, true},
      {TensorDesc::contiguous({1000, 4}), {1}, 2, false},             // rows of 8 bytes
      {TensorDesc::contiguous({1000, 1021}), {1}, 4, false},
      {TensorDesc::strided({1000, 8}, {12, 1}), {1}, 2, false},       // rows 24 bytes apart
      {TensorDesc::strided({1000, 8}, {16, 1}), {1}, 2, true},        // padded rows on the grid
      {TensorDesc::contiguous({3, 1 << 23}), {0}, 2, true},           // columns
      {TensorDesc::contiguous({3, (1 << 23) + 1}), {0}, 2, false},
      {TensorDesc::contiguous({3, 12}), {0}, 4, true},                // 48 bytes: three vectors
      {TensorDesc::contiguous({5, 3, 8}), {1}, 2, true},              // slices of 16 bytes
      {TensorDesc::contiguous({5, 3, 4}), {1}, 2, false},             // slices of 8 bytes
      {TensorDesc::strided({2, 1 << 20}, {1, 2}), {0}, 2, false},     // stepped columns
      {TensorDesc::contiguous({64, 64, 64}), {0, 2}, 4, false},       // general
  };
  for (const Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << r.error;
    const std::string what = r.axes.to_string() + " of " + std::to_string(c.bytes) + "-byte elements";
    EXPECT_EQ(axis_on_16byte_grid(r.axes, c.bytes), c.on) << what;
    alignas(16) static const unsigned char buffer[64] = {};
    EXPECT_EQ(axis_on_16byte_grid(r.axes, c.bytes, buffer), c.on) << what;
    EXPECT_FALSE(axis_on_16byte_grid(r.axes, c.bytes, buffer + c.bytes)) << what;  // one element in
  }
}

// 16-bit columns of R <= 4 over 2^21 outputs and more, on the 4-element grid: vectors
// of four outputs in blocks of 128; longer R, fewer outputs or off the grid, not.
TEST(AxisSpec, ShortSixteenBitColumnsOfManyOutputsTakeBlocksOf128) {
  // (On the 8-byte grid but not the 16-byte one: there, short_columns.)
  for (const std::int64_t r : {2, 3, 4}) {
    const AxisKernelSpec s = builtin_axis_spec(Op::sum, kBF16, shape_of({r, (1 << 22) + 4}, {0}), 132);
    EXPECT_EQ(s.family, AxisFamily::columns) << r;
    EXPECT_EQ(s.vec, 4u) << r;
    EXPECT_EQ(s.block, 128u) << r;
  }
  EXPECT_EQ(builtin_axis_spec(Op::mean, kF16, shape_of({2, 2622084}, {0}), 132).block, 128u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kBF16, shape_of({8, 1 << 22}, {0}), 132).block, 256u);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kBF16, shape_of({2, 1 << 20}, {0}), 132).block, 256u);
  EXPECT_NE(builtin_axis_spec(Op::sum, kBF16, shape_of({2, (1 << 22) + 1}, {0}), 132).block, 128u);
  EXPECT_NE(builtin_axis_spec(Op::sum, kF32, shape_of({2, 1 << 22}, {0}), 132).block, 128u);
}

// Stepped columns (a view's outputs 2 .. kMaxInnerStep elements apart): the built-in
// choice reads them a thread per output with threads across R, never dense and never
// vectors of outputs (which need them adjacent); a dense config does not fit them, and
// no twin is launched for them. make_axis_params hands the kernels the step.
TEST(AxisSpec, SteppedColumnsAreReadAnOutputAThread) {
  const TypeRule i64{DType::i64, DType::i64, DType::i64};
  int shapes = 0;
  for (const std::int64_t step : {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, kMaxInnerStep})
    for (const std::int64_t r : {2, 64, 1024, 4097, 70000})
      for (const std::int64_t inner : {16, 64, 2048, 100000}) {
        const CanonicalAxes shape = view_of({r, inner}, {inner * step + 1, step}, {0});
        ASSERT_EQ(shape.layout, AxisLayout::columns) << shape.to_string();
        ASSERT_EQ(shape.inner_step, step) << shape.to_string();
        for (const TypeRule& types : {kF32, kF16, kBF16, i64})
          for (const Op op : {Op::sum, Op::max, Op::mean}) {
            AxisLaunchPlan plan;
            alignas(16) static std::uint16_t buffer[8];
            const AxisKernelSpec s = builtin_axis_spec(op, types, shape, 132, &plan, buffer);
            EXPECT_EQ(s.family, AxisFamily::columns) << shape.to_string() << " " << to_string(s);
            EXPECT_EQ(s.vec, 1u) << shape.to_string() << " " << to_string(s);
            EXPECT_EQ(axis_spec_mismatch(s, shape), "") << shape.to_string() << " " << to_string(s);
            ++shapes;
          }
      }
  EXPECT_EQ(shapes, 4 * 5 * 4 * 4 * 3);
  // A dense program does not fit, even where the rows' stride equals the outputs' count.
  AxisKernelSpec dense{.family = AxisFamily::columns_dense, .block = 256, .group = 1};
  EXPECT_EQ(axis_spec_mismatch(dense, shape_of({1 << 16, 64}, {0})), "");
  const CanonicalAxes overlapping = view_of({1 << 16, 64}, {64, 2}, {0});
  ASSERT_EQ(overlapping.layout, AxisLayout::columns);
  EXPECT_NE(axis_spec_mismatch(dense, overlapping), "");
  EXPECT_NE(builtin_axis_spec(Op::sum, kF32, overlapping, 132).family, AxisFamily::columns_dense);
  // Vectors of outputs run their plain program, reading each output by itself.
  AxisKernelSpec vectors{.types = kF16, .family = AxisFamily::columns, .group = 1, .vec = 4};
  alignas(16) static std::uint16_t buffer[8];
  const CanonicalAxes stepped = view_of({100, 4096}, {4096 * 2, 2}, {0});
  EXPECT_FALSE(axis_launch_takes_twin(vectors, stepped, AxisLaunchPlan{}, buffer + 1));
  EXPECT_TRUE(axis_launch_takes_twin(vectors, shape_of({100, 4096}, {0}), AxisLaunchPlan{}, buffer + 1));
  const AxisKernelSpec chosen = builtin_axis_spec(Op::sum, kF32, stepped, 132);
  const AxisLaunchPlan plan = plan_axis_launch(chosen, stepped, 132);
  EXPECT_EQ(make_axis_params(chosen, stepped, plan, nullptr, nullptr, nullptr).inner_step, 2);
  EXPECT_EQ(make_axis_params(chosen, shape_of({100, 4096}, {0}), plan, nullptr, nullptr, nullptr).inner_step, 1);
}

// columns_staged (rt::axis_columns_staged_kernel): a slice's columns in tiles of one
// width, a whole number of vectors, no more than the spec's widest, each tile holding at
// least four rows' segments.
TEST(ColumnsStaged, TilesCoverASliceInEvenWidthsOfWholeVectors) {
  int specs = 0;
  for (const TypeRule& t : {kF16, kF32, TypeRule{DType::f64, DType::f64, DType::f64}})
    for (std::uint32_t block : {64u, 128u, 256u, 512u})
      for (std::uint32_t group : {1u, 2u, 4u})
        for (std::uint32_t rows : {1u, 2u, 4u})
          for (std::uint32_t unroll : {4u, 8u}) {
            AxisKernelSpec s = columns_staged_builtin(Op::sum, t);
            s.block = block;
            s.group = group;
            s.rows_per_pass = rows;
            s.unroll = unroll;
            if (!axis_spec_problem(s).empty()) continue;
            ++specs;
            const std::uint64_t most = columns_staged_width(s);
            EXPECT_EQ(most, std::uint64_t{block} / group * rows);
            for (std::uint64_t inner = 1; inner < 5000; inner += inner < 300 ? 1 : 37) {
              const ColumnsStagedTiles tiles = columns_staged_tiles(s, inner);
              const std::string at = to_string(s) + " over " + std::to_string(inner);
              ASSERT_EQ(tiles.width % s.vec, 0u) << at;
              ASSERT_LE(tiles.width, most) << at;
              ASSERT_GE(tiles.count * tiles.width, inner) << at;
              ASSERT_LT((tiles.count - 1) * tiles.width, inner) << at;
              // Even: no tile more than a vector wider than the slice's share.
              ASSERT_LT(tiles.width, (inner + tiles.count - 1) / tiles.count + s.vec) << at;
              ASSERT_EQ(tiles.rows, std::uint64_t{block} * unroll / (tiles.width / s.vec + 1)) << at;
              ASSERT_GE(tiles.rows, 4u) << at;
            }
          }
  EXPECT_GT(specs, 60);
}

TEST(ColumnsStaged, InvalidSpecsAreNamedAndValidOnesRoundTripAsText) {
  for (const TypeRule& t : {kF16, kBF16, kF32, TypeRule{DType::f64, DType::f64, DType::f64}}) {
    const AxisKernelSpec s = columns_staged_builtin(Op::max, t);
    ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
    EXPECT_EQ(s.vec * size_of(t.in), 16u);
    const std::string text = axis_config_text(s);
    EXPECT_EQ(text.rfind("columns_staged:", 0), 0u) << text;
    const std::optional<AxisKernelSpec> back = parse_axis_config(text, Op::max, t);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, s) << text;
  }
  struct Bad {
    void (*edit)(AxisKernelSpec&);
    const char* says;
  };
  const Bad bad[] = {
      {[](AxisKernelSpec& s) { s.block = 1024; }, "block of 64, 128, 256 or 512"},
      {[](AxisKernelSpec& s) { s.block = 96; }, "block of 64, 128, 256 or 512"},
      {[](AxisKernelSpec& s) { s.group = 8; }, "1, 2 or 4 threads"},
      {[](AxisKernelSpec& s) { s.rows_per_pass = 3; }, "1, 2 or 4 columns a thread"},
      {[](AxisKernelSpec& s) { s.vec = 4; }, "16-byte vectors"},
      {[](AxisKernelSpec& s) { s.split = AxisSplit::ticket; }, "two passes only"},
      {[](AxisKernelSpec& s) { s.tail = 1; }, "no tail or occ"},
      {[](AxisKernelSpec& s) { s.occupancy = 1024; }, "no tail or occ"},
      {[](AxisKernelSpec& s) { s.split = AxisSplit::none, s.blocks_per_sm = 8; }, "split plans only"},
      {[](AxisKernelSpec& s) { s.block = 512, s.unroll = 8; }, "at most 48 KiB"},
      {[](AxisKernelSpec& s) {
         s.types = TypeRule{DType::f64, DType::f64, DType::f64}, s.vec = 2, s.rows_per_pass = 4;
       },
       "at least four rows"},
  };
  for (const Bad& b : bad) {
    AxisKernelSpec s = columns_staged_builtin(Op::sum, kF16);
    b.edit(s);
    const std::string problem = axis_spec_problem(s);
    EXPECT_NE(problem.find(b.says), std::string::npos) << to_string(s) << ": \"" << problem << "\"";
    EXPECT_FALSE(parse_axis_config(axis_config_text(s), Op::sum, s.types).has_value()) << to_string(s);
  }
}

// Split, the blocks fill the SMs blocks_per_sm / 4 times over at 1024 threads an SM, the
// count rounded down, each split at least two tiles of rows; the partials and the second
// kernel only where R is split.
TEST(ColumnsStaged, PlansFillTheSMsWithoutALastRoundOfAFewBlocks) {
  for (const TypeRule& t : {kF16, kF32})
    for (const int sms : {132, 114})
      for (std::uint32_t per_sm : {4u, 8u})
        for (const auto& [r, inner, outer] :
             {std::tuple<std::int64_t, std::int64_t, std::int64_t>{30001, 4093, 1}, {30001, 1001, 1}, {65537, 2049, 1},
              {262145, 1001, 1}, {16385, 3001, 1}, {4097, 40001, 1}, {100, 1001, 1}, {9, 1001, 1},
              {30001, 1001, 4}, {20000, 300, 7}}) {
          AxisKernelSpec s = columns_staged_builtin(Op::sum, t);
          s.blocks_per_sm = per_sm;
          const CanonicalAxes shape =
              outer == 1 ? shape_of({r, inner}, {0}) : shape_of({outer, r, inner}, {1});
          const std::string at = to_string(s) + " " + shape.to_string() + " on " + std::to_string(sms);
          ASSERT_EQ(axis_spec_mismatch(s, shape), "") << at;
          const ColumnsStagedTiles tiles = columns_staged_tiles(s, shape.inner);
          const std::uint64_t output_blocks = static_cast<std::uint64_t>(outer) * tiles.count;
          const AxisLaunchPlan plan = plan_axis_launch(s, shape, sms);
          EXPECT_EQ(plan.grid, output_blocks * plan.splits) << at;
          const std::uint64_t want = 4ull * sms * per_sm / 4;
          // Not far short of `want` either, unless one split more would leave a split
          // less than two tiles of rows.
          if (plan.grid + output_blocks <= want / 2) {
            EXPECT_LT((shape.reduced + plan.splits) / (plan.splits + 1), 2 * tiles.rows) << at;
          }
          if (plan.splits > 1) {
            EXPECT_LE(plan.grid, want) << at;
            const std::uint64_t chunk = (shape.reduced + plan.splits - 1) / plan.splits;
            EXPECT_GE(chunk, 2 * tiles.rows) << at;
            EXPECT_EQ((shape.reduced + chunk - 1) / chunk, plan.splits) << at;  // no empty split
            EXPECT_EQ(plan.partial_count, shape.outputs * plan.splits) << at;
            EXPECT_GT(plan.finalize_grid, 0u) << at;
          } else {
            EXPECT_EQ(plan.partial_count, 0u) << at;
            EXPECT_EQ(plan.finalize_grid, 0u) << at;
          }
          s.split = AxisSplit::none;
          s.blocks_per_sm = 4;
          EXPECT_EQ(plan_axis_launch(s, shape, sms).splits, 1u) << at;
          EXPECT_EQ(plan_axis_launch(s, shape, sms).grid, output_blocks) << at;
        }
}

TEST(ColumnsStaged, FitsColumnsOfOutputsSideBySideWhateverTheirStrides) {
  const AxisKernelSpec s = columns_staged_builtin(Op::sum, kF32);
  EXPECT_EQ(axis_spec_mismatch(s, shape_of({30001, 4093}, {0})), "");
  EXPECT_EQ(axis_spec_mismatch(s, shape_of({3, 30001, 4093}, {1})), "");
  // A slice of wider rows, and a base off the grid, are views it reads in place.
  EXPECT_EQ(axis_spec_mismatch(s, canonicalize(TensorDesc::strided({3000, 1001}, {1003, 1}), AxisList{0}).axes), "");
  EXPECT_NE(axis_spec_mismatch(s, shape_of({4093, 30001}, {1})), "");  // rows
  // Outputs a stride apart (every other column): not these.
  EXPECT_NE(axis_spec_mismatch(s, canonicalize(TensorDesc::strided({3000, 1001}, {2002, 2}), AxisList{0}).axes), "");
  // Slices in reverse, and a canonical form whose R runs backwards: read in place.
  const CanonicalAxes reversed =
      canonicalize(TensorDesc::strided({4, 50, 333}, {-50 * 333, 333, 1}), AxisList{1}).axes;
  ASSERT_EQ(reversed.layout, AxisLayout::columns);
  EXPECT_EQ(axis_spec_mismatch(s, reversed), "");
  CanonicalAxes backwards = shape_of({3000, 1001}, {0});
  backwards.reduced_stride = -1001;
  EXPECT_EQ(axis_spec_mismatch(s, backwards), "");
}

// The built-in choice reads long columns of a few thousand outputs side by side with the
// staged kernel where the columns program would read an output a thread: f32 sums and
// means from R = 24576 over 1000 to 6200 outputs (set BN), and 4-byte min and max (set BR). Not
// where that program reads vectors of outputs on their grid, nor past those edges, nor
// for 8-byte elements, nor for products, nor for 16-bit elements, which it read for sums
// from R = 20000 over 1000 to 5100 outputs until the capped split columns read them
// faster (set BO).
TEST(ColumnsStaged, TheBuiltInChoiceTakesItForLongColumnsOfAFewThousand) {
  const TypeRule f64{DType::f64, DType::f64, DType::f64};
  struct Case {
    TypeRule types;
    CanonicalAxes shape;
    bool staged, min_max;
  };
  const TypeRule i32{DType::i32, DType::i32, DType::i32}, u32{DType::u32, DType::u32, DType::u32};
  // staged: sums and means; min_max: 4-byte min and max too (from 2500 outputs, or from
  // 2^27 elements below that, set BR).
  const Case cases[] = {
      {i32, shape_of({65537, 5001}, {0}), true, true},     {i32, shape_of({24576, 1001}, {0}), true, false},
      {u32, shape_of({30001, 4093}, {0}), true, true},     {u32, shape_of({30001, 1234}, {0}), true, false},
      {kF16, shape_of({30001, 4093}, {0}), false, false},  {kBF16, shape_of({30001, 3001}, {0}), false, false},
      {kF16, shape_of({20000, 1500}, {0}), false, false},  {kF16, shape_of({262145, 1001}, {0}), false, false},
      {kF16, shape_of({30001, 5099}, {0}), false, false},  {kF16, shape_of({30001, 4096}, {0}), false, false},
      {kF32, shape_of({30001, 4093}, {0}), true, true},    {kF32, shape_of({24576, 1001}, {0}), true, false},
      {kF32, shape_of({65537, 3001}, {0}), true, true},    {kF32, shape_of({24575, 3001}, {0}), false, false},
      {kF32, shape_of({30001, 6143}, {0}), true, true},    {kF32, shape_of({30001, 6201}, {0}), false, false},
      {kF32, shape_of({30001, 999}, {0}), false, false},   {kF32, shape_of({262145, 1001}, {0}), true, true},
      {kF32, shape_of({30001, 1234}, {0}), true, false},   {kF32, shape_of({30001, 2641}, {0}), true, true},
      {kF32, shape_of({30001, 2049}, {0}), false, false},  // sums: vectors of four off the grid from 2048
      {kF32, shape_of({134218, 1001}, {0}), true, true},   // 2^27 elements and more
      {kF32, shape_of({134083, 1001}, {0}), true, false},  // just under 2^27
      {f64, shape_of({30001, 3001}, {0}), false, false},
      {kF32, shape_of({4, 30001, 1001}, {1}), true, true},    // four slices, 4004 outputs
      {kF32, shape_of({7, 30001, 1001}, {1}), false, false},  // 7007 outputs
      {kF32, shape_of({8, 30001, 500}, {1}), false, false},   // short rows
  };
  for (const Case& c : cases)
    for (Op op : kAllOps) {
      const TypeRule types = *resolve_types(op, c.types.in, default_out_dtype(op, c.types.in)).rule;
      AxisLaunchPlan plan;
      const AxisKernelSpec s = builtin_axis_spec(op, types, c.shape, 132, &plan);
      const std::string at =
          c.shape.to_string() + " " + std::string(to_string(types.in)) + " " + std::string(to_string(op));
      const bool staged = (op == Op::sum || op == Op::mean) ? c.staged
                          : (op == Op::min || op == Op::max) ? c.min_max
                                                             : false;
      EXPECT_EQ(s.family == AxisFamily::columns_staged, staged) << at << ": " << to_string(s);
      if (staged) {
        EXPECT_TRUE(columns_staged_pays(op, types, c.shape)) << at;
      }
      if (!staged) continue;
      AxisKernelSpec want = columns_staged_builtin(op, types);
      if (plan_axis_launch(want, c.shape, 132).splits <= 1) want.split = AxisSplit::none;
      EXPECT_EQ(s, want) << at;
      const AxisLaunchPlan p = plan_axis_launch(s, c.shape, 132);
      EXPECT_EQ(plan.grid, p.grid) << at;
      EXPECT_EQ(plan.splits, p.splits) << at;
      EXPECT_EQ(plan.finalize_grid, p.finalize_grid) << at;
      EXPECT_EQ(plan.partial_count, p.partial_count) << at;
    }
  // f32 sums the columns program reads as vectors of four outputs off their grid (split,
  // its twin): staged below 2048 outputs; from 2048, or on the grid, not.
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({30001, 1234}, {0}), 132).family, AxisFamily::columns_staged);
  EXPECT_EQ(builtin_axis_spec(Op::mean, kF32, shape_of({100003, 1502}, {0}), 132).family, AxisFamily::columns_staged);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({30001, 2049}, {0}), 132).family, AxisFamily::columns);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({30001, 2049}, {0}), 132).vec, 4u);
  const AxisKernelSpec on_grid = builtin_axis_spec(Op::sum, kF32, shape_of({30001, 1236}, {0}), 132);
  EXPECT_EQ(on_grid.family, AxisFamily::columns);
  EXPECT_EQ(on_grid.vec, 4u);
  // The same outputs one element past the 16-byte grid (the base's address is all the
  // choice reads of it): off the grid, staged.
  const void* one_in = reinterpret_cast<const void*>(std::uintptr_t{1} << 20 | 4);
  EXPECT_EQ(builtin_axis_spec(Op::sum, kF32, shape_of({30001, 1236}, {0}), 132, nullptr, one_in).family,
            AxisFamily::columns_staged);
  // The tuner searches it where rows are long enough to stage, beside the built-in choice.
  const auto staged_among = [](const std::vector<AxisKernelSpec>& specs) {
    return std::count_if(specs.begin(), specs.end(),
                         [](const AxisKernelSpec& s) { return s.family == AxisFamily::columns_staged; });
  };
  EXPECT_EQ(staged_among(axis_candidates(Op::sum, kF16, shape_of({30001, 4093}, {0}), 132)), 4);
  EXPECT_EQ(staged_among(axis_candidates(Op::sum, kF32, shape_of({8192, 300}, {0}), 132)), 4);
  EXPECT_EQ(staged_among(axis_candidates(Op::sum, kF32, shape_of({4095, 4093}, {0}), 132)), 0);
  EXPECT_EQ(staged_among(axis_candidates(Op::sum, kF32, shape_of({30001, 255}, {0}), 132)), 0);
  EXPECT_EQ(staged_among(axis_candidates(Op::sum, f64, shape_of({30001, 4093}, {0}), 132)), 0);
}

TEST(AxisKernels, EveryFamilyCompilesForEveryOp) {
  NvrtcCompiler compiler;
  struct Case {
    AxisFamily family;
    std::uint32_t group, vec;
    AxisSplit split;
    std::uint32_t rows = 1;
    std::uint32_t tail = 0;
    std::uint32_t occupancy = 0;
  };
  const Case cases[] = {{AxisFamily::rows, 4, 4, AxisSplit::none, 4}, {AxisFamily::general, 8, 1, AxisSplit::ticket, 4},         {AxisFamily::rows, 256, 4, AxisSplit::two_pass},
                        {AxisFamily::rows, 32, 4, AxisSplit::ticket},      {AxisFamily::general, 32, 1, AxisSplit::none},
                        {AxisFamily::columns, 8, 1, AxisSplit::two_pass},  {AxisFamily::columns, 8, 1, AxisSplit::ticket},
                        {AxisFamily::columns_dense, 1, 1, AxisSplit::ticket}, {AxisFamily::columns_dense, 1, 1, AxisSplit::none},
                        {AxisFamily::columns_dense, 1, 4, AxisSplit::ticket}, {AxisFamily::columns_dense, 1, 4, AxisSplit::two_pass},
                        {AxisFamily::columns, 4, 2, AxisSplit::two_pass}, {AxisFamily::columns, 1, 2, AxisSplit::none},
                        {AxisFamily::columns, 1, 1, AxisSplit::none, 4}, {AxisFamily::rows_dense, 1, 1, AxisSplit::none},
                        {AxisFamily::rows_dense, 8, 4, AxisSplit::none}, {AxisFamily::rows_dense, 32, 4, AxisSplit::none},
                        {AxisFamily::rows, 256, 4, AxisSplit::ticket_tiles}, {AxisFamily::rows, 32, 1, AxisSplit::ticket_tiles},
                        {AxisFamily::columns_dense, 1, 4, AxisSplit::ticket_tiles},
                        {AxisFamily::columns_dense, 1, 1, AxisSplit::ticket_tiles},
                        // The batched tail: rows of vectors and of elements, columns of a
                        // vector of outputs (and its twin), of several outputs a pass, and
                        // of threads across R with a second kernel.
                        {AxisFamily::rows, 32, 4, AxisSplit::none, 1, 1}, {AxisFamily::rows, 8, 1, AxisSplit::two_pass, 1, 1},
                        {AxisFamily::columns, 1, 4, AxisSplit::none, 1, 1}, {AxisFamily::columns, 1, 1, AxisSplit::none, 4, 1},
                        {AxisFamily::columns, 32, 1, AxisSplit::two_pass, 1, 1},
                        // Short columns compiled to fit more threads per SM.
                        {AxisFamily::columns, 1, 4, AxisSplit::none, 1, 1, 1024},
                        {AxisFamily::columns, 1, 4, AxisSplit::none, 1, 0, 1536},
                        // Columns of two and four vectors of outputs a thread a pass.
                        {AxisFamily::columns, 1, 4, AxisSplit::none, 2, 1, 1024},
                        {AxisFamily::columns, 1, 4, AxisSplit::none, 4},
                        // Split columns a thread per output, capped to the plan's four
                        // blocks of 256 an SM (capped_split_columns).
                        {AxisFamily::columns, 8, 1, AxisSplit::ticket, 1, 0, 1024},
                        // General of a thread per output, split in two passes; of
                        // vectors along the reduced dimensions.
                        {AxisFamily::general, 1, 1, AxisSplit::two_pass}, {AxisFamily::general, 32, 4, AxisSplit::ticket},
                        {AxisFamily::general, 1, 4, AxisSplit::ticket},
                        {AxisFamily::general, 256, 4, AxisSplit::two_pass},
                        // A copy in tiles (nothing reduced; every op's epilogue), and
                        // converting copies of a vector or an element a thread.
                        {AxisFamily::transpose, 1, 1, AxisSplit::none},
                        {AxisFamily::short_columns, 1, 4, AxisSplit::none},
                        {AxisFamily::short_columns, 1, 1, AxisSplit::none},
                        // Staged columns: a thread a column, unsplit; two threads a
                        // column folding two columns each, and four folding four, split
                        // in two passes.
                        {AxisFamily::columns_staged, 1, 4, AxisSplit::none, 1},
                        {AxisFamily::columns_staged, 2, 4, AxisSplit::two_pass, 2},
                        {AxisFamily::columns_staged, 4, 4, AxisSplit::two_pass, 4},
                        // Packed rows: whole 16-byte vectors (vec capped below).
                        {AxisFamily::rows_packed, 1, 16, AxisSplit::none},
                        // Folded columns, split in two passes and in tiles.
                        {AxisFamily::columns_folded, 1, 16, AxisSplit::two_pass},
                        {AxisFamily::columns_folded, 1, 16, AxisSplit::ticket_tiles}};
  for (Op op : kAllOps) {
    const DType in = op == Op::mean ? DType::i32 : (op == Op::prod ? DType::i64 : DType::f32);
    const TypeRule types = *resolve_types(op, in, default_out_dtype(op, in)).rule;
    for (const Case& c : cases) {
      AxisKernelSpec s;
      s.op = op;
      s.types = types;
      s.family = c.family;
      s.group = c.group;
      s.vec = static_cast<std::uint32_t>(std::min<std::size_t>(c.vec, 16 / size_of(in)));
      s.split = c.split;
      s.rows_per_pass = c.rows;
      s.tail = c.tail;
      s.occupancy = c.occupancy;
      ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
      const CompiledProgram program = compiler.compile(make_axis_compile_request(s, 90));
      EXPECT_FALSE(program.cubin.empty()) << to_string(s);
      // The main kernel, the finalize kernel where the spec splits in two passes (no
      // other plan launches it), and the main kernel's peeled twin where it has one;
      // KernelSet finds the finalize kernel by its name.
      const bool two_pass = s.split == AxisSplit::two_pass;
      ASSERT_EQ(program.lowered_names.size(), 1u + (two_pass ? 1u : 0u) + (axis_has_twin(s) ? 1u : 0u))
          << to_string(s);
      EXPECT_FALSE(is_finalize_kernel_name(program.lowered_names[0])) << program.lowered_names[0];
      std::size_t finalizes = 0;
      for (const std::string& name : program.lowered_names) finalizes += is_finalize_kernel_name(name) ? 1 : 0;
      EXPECT_EQ(finalizes, two_pass ? 1u : 0u) << to_string(s);
      if (two_pass) {
        EXPECT_TRUE(is_finalize_kernel_name(program.lowered_names[1])) << program.lowered_names[1];
      }
    }
  }
  // Short columns at each round of rows (1: a converting copy), capped or not, of 16-bit
  // vectors into their own type and into f32.
  for (const TypeRule& t : {*resolve_types(Op::mean, DType::bf16, DType::bf16).rule,
                            *resolve_types(Op::sum, DType::f16, DType::f32).rule})
    for (std::uint32_t unroll : {1u, 2u, 8u}) {
      AxisKernelSpec s;
      s.op = t.out == DType::f32 ? Op::sum : Op::mean;
      s.types = t;
      s.family = AxisFamily::short_columns;
      s.group = 1;
      s.vec = 8;
      s.unroll = unroll;
      s.occupancy = unroll == 1 ? 2048 : 0;
      ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
      const CompiledProgram program = compiler.compile(make_axis_compile_request(s, 90));
      EXPECT_FALSE(program.cubin.empty()) << to_string(s);
      EXPECT_EQ(program.lowered_names.size(), 1u) << to_string(s);
    }
  // Columns of four adjacent outputs per thread: 16-bit ones (an 8-byte load per row on
  // the vector grid) and 4-byte ones (16 bytes), sum and max; 16-bit ones of eight.
  for (DType in : {DType::f16, DType::bf16, DType::f32})
    for (Op op : {Op::sum, Op::max}) {
      AxisKernelSpec s;
      s.op = op;
      s.types = *resolve_types(op, in, default_out_dtype(op, in)).rule;
      s.family = AxisFamily::columns;
      s.group = 2;
      s.vec = 4;
      s.split = AxisSplit::two_pass;
      ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
      EXPECT_FALSE(compiler.compile(make_axis_compile_request(s, 90)).cubin.empty()) << to_string(s);
      s.tail = 1;
      EXPECT_FALSE(compiler.compile(make_axis_compile_request(s, 90)).cubin.empty()) << to_string(s);
      // And a whole 16-byte vector of 16-bit outputs.
      if (size_of(in) == 2) {
        s.vec = 8;
        EXPECT_FALSE(compiler.compile(make_axis_compile_request(s, 90)).cubin.empty()) << to_string(s);
      }
      // Two vectors of them a thread a pass, unsplit.
      s.group = 1;
      s.split = AxisSplit::none;
      s.rows_per_pass = 2;
      ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
      EXPECT_FALSE(compiler.compile(make_axis_compile_request(s, 90)).cubin.empty()) << to_string(s);
      // A thread per output and a vector of two, eight loads in flight (a 16-bit pair is
      // a single word, an element alone less than one).
      s.rows_per_pass = 1;
      s.unroll = 8;
      for (std::uint32_t vec : {1u, 2u}) {
        s.vec = vec;
        ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
        EXPECT_FALSE(compiler.compile(make_axis_compile_request(s, 90)).cubin.empty()) << to_string(s);
      }
    }
  // 16-bit results round in one instruction from sm_80 on and in integer arithmetic
  // before it: both forms compile (16-bit sums, means and max of columns).
  for (DType in : {DType::f16, DType::bf16})
    for (Op op : {Op::sum, Op::mean, Op::max})
      for (int arch : {75, 80}) {
        AxisKernelSpec s;
        s.op = op;
        s.types = *resolve_types(op, in, in).rule;
        s.family = AxisFamily::columns;
        s.group = 1;
        s.vec = 4;
        ASSERT_EQ(axis_spec_problem(s), "") << to_string(s);
        EXPECT_FALSE(compiler.compile(make_axis_compile_request(s, arch)).cubin.empty()) << to_string(s) << " sm_" << arch;
      }
}

// The bank model rows_dense_skew decides by: a warp's fold of rows R apart at skew s puts
// element q at slot q + (q >> 5) * s and counts the words of a bank it meets. Cases worked
// by hand: 32 lanes reading a row's 32 consecutive elements (G = 32) meet in no bank at
// any element size; a lane per row of 32 elements reads slots 33 l + t at skew 1 (a bank
// each) but all in one bank at skew 0 (a layout with no skew, fed in to show the model
// catches it); R = 62 with a lane per row met 16 to a bank at skew 1 (set BL in
// docs/BENCHMARKS.md). Bad arguments are refused.
// Packed rows (rt::axis_rows_packed_kernel): a thread takes the fewest whole rows that
// fill whole 16-byte vectors; the spec is group 1, 16-byte vectors, unsplit, one, two or
// four chunks a pass; it fits contiguous rows of 2 to 8 elements only; its plan gives
// every chunk a thread (up to the grid's limit) and round-trips as text.
// Which specs have an ordered form (a staged reorder's direct write takes one): every
// family's candidates over rows, columns and general views, all but short_columns and
// transpose, whose kernels write each output at its index.
TEST(AxisSpec, EveryFamilyButShortColumnsAndTransposeHasAnOrderedForm) {
  const TypeRule t{DType::f16, DType::f16, DType::f32};
  std::set<AxisFamily> with, without;
  for (const CanonicalAxes& shape :
       {shape_of({1000, 6}, {1}), shape_of({1 << 20, 6}, {1}), shape_of({1000, 300}, {1}), shape_of({3, 1 << 21}, {0}),
        shape_of({65537, 4096}, {0}), shape_of({1000, 100}, {0}), shape_of({64, 100, 64}, {0, 2}),
        shape_of({257, 64, 4}, {0, 2}), canonicalize(TensorDesc::strided({300, 256}, {1, 300}), AxisList{}).axes}) {
    for (const AxisKernelSpec& spec : axis_candidates(Op::sum, t, shape, 132)) {
      const bool has = axis_spec_has_ordered_form(spec);
      AxisKernelSpec ordered = spec;
      ordered.ordered = 1;
      EXPECT_EQ(has, axis_spec_problem(ordered).empty()) << to_string(spec);
      EXPECT_EQ(has, spec.family != AxisFamily::short_columns && spec.family != AxisFamily::transpose)
          << to_string(spec);
      (has ? with : without).insert(spec.family);
    }
  }
  EXPECT_EQ(without, (std::set<AxisFamily>{AxisFamily::short_columns, AxisFamily::transpose}));
  EXPECT_GE(with.size(), 6u);
}

// Folded columns (FoldedColumns): general views of dense rows [a][b][c] reduced over the
// rows and b, each output's place from the kept dimensions' order; the views that are not
// (rows apart, a negative stride, three reduced dimensions, rows past 1024 elements, a
// kept dimension of neither role) are refused. The built-in choice reads them from 2^22
// elements and 16 rows a slice, in a block at least a row wide, 16-byte vectors, in one
// launch with no staged reorder, split with a last-block fold up to 2048 partials and a
// second kernel past that; the family's specs round-trip as text, fit only such views,
// and plan partials per folded output, a last-block fold never more than 2048.
TEST(AxisFoldedColumns, ViewsRolesChoiceAndPlan) {
  const auto view = [](std::initializer_list<std::int64_t> e, std::initializer_list<std::int64_t> st,
                       AxisList axes) { return canonicalize(TensorDesc::strided(e, st), axes).axes; };
  struct Case {
    CanonicalAxes shape;
    FoldedColumns want;
  };
  // FoldedColumns{slices, slice_stride, rows, a, b, c, out_slice, out_a, out_c}
  const std::vector<Case> cases = {
      {view({2, 7, 3541, 33}, {1, 2, 462, 14}, {1, 2}), {1, 0, 3541, 33, 7, 2, 0, 1, 33}},
      {view({2, 7, 10623, 33}, {1, 2, 462, 14}, {1, 2}), {1, 0, 10623, 33, 7, 2, 0, 1, 33}},
      {view({2, 13, 2, 20011}, {1, 2, 520286, 26}, {0, 3}), {2, 520286, 20011, 13, 2, 1, 1, 2, 0}},
      {view({2, 13, 2, 242197}, {1, 2, 6297122, 26}, {0, 3}), {2, 6297122, 242197, 13, 2, 1, 1, 2, 0}},
      {shape_of({257, 64, 4}, {0, 2}), {1, 0, 257, 64, 4, 1, 0, 1, 0}},
      {shape_of({16384, 64, 4}, {0, 2}), {1, 0, 16384, 64, 4, 1, 0, 1, 0}},
      {shape_of({16383, 64, 4}, {0, 2}), {1, 0, 16383, 64, 4, 1, 0, 1, 0}},
      {shape_of({3, 2000, 50, 9}, {1, 3}), {3, 900000, 2000, 50, 9, 1, 50, 1, 0}},
      {shape_of({3001, 17, 3, 5}, {0, 2}), {1, 0, 3001, 17, 3, 5, 0, 5, 1}},
      {view({3, 12, 600, 5}, {1, 15, 180, 3}, {2, 3}), {1, 0, 600, 12, 5, 3, 0, 1, 12}},
      {view({100, 10, 3, 4}, {30, 3, 1, 5000}, {0, 2}), {4, 5000, 100, 10, 3, 1, 1, 4, 0}},
      {shape_of({5000, 16, 64, 4}, {1, 3}), {5000, 4096, 16, 64, 4, 1, 64, 1, 0}},
      {shape_of({5000, 15, 64, 4}, {1, 3}), {5000, 3840, 15, 64, 4, 1, 64, 1, 0}},
  };
  const TypeRule f32{DType::f32, DType::f32, DType::f32};
  const TypeRule bf16_mean{DType::bf16, DType::bf16, DType::f32};
  for (const Case& c : cases) {
    const std::optional<FoldedColumns> f = axis_folded_columns(c.shape);
    ASSERT_TRUE(f.has_value()) << c.shape.to_string();
    const FoldedColumns& w = c.want;
    EXPECT_EQ(std::vector<std::uint64_t>({f->slices, f->rows, f->a, f->b, f->c, f->out_slice, f->out_a, f->out_c}),
              std::vector<std::uint64_t>({w.slices, w.rows, w.a, w.b, w.c, w.out_slice, w.out_a, w.out_c}))
        << c.shape.to_string();
    if (f->slices > 1) {
      EXPECT_EQ(f->slice_stride, w.slice_stride) << c.shape.to_string();
    }
    EXPECT_EQ(f->slices * f->a * f->c, c.shape.outputs);
    EXPECT_EQ(f->rows * f->b, c.shape.reduced);
    const bool chosen = f->rows >= 16 && c.shape.outputs * c.shape.reduced >= (std::uint64_t{1} << 22);
    for (const TypeRule& t : {f32, bf16_mean}) {
      const Op op = t.in == DType::bf16 ? Op::mean : Op::sum;
      AxisLaunchPlan plan;
      AxisKernelSpec s = builtin_axis_spec(op, t, c.shape, 132, &plan);
      EXPECT_EQ(s.family == AxisFamily::columns_folded, chosen) << c.shape.to_string() << " " << to_string(s);
      if (!chosen) {
        // The family's spec as the built-in choice would make it.
        s.family = AxisFamily::columns_folded;
        s.group = 1;
        s.vec = static_cast<std::uint32_t>(16 / size_of(t.in));
        s.rows_per_pass = 1;
        s.unroll = 4;
        s.blocks_per_sm = 4;
        s.tail = 0;
        s.block = f->width() <= 256 ? 256 : f->width() <= 512 ? 512 : 1024;
        s.split = AxisSplit::two_pass;
        plan = plan_axis_launch(s, c.shape, 132);
      }
      EXPECT_GE(s.block, f->width());
      EXPECT_EQ(s.vec * size_of(t.in), 16u);
      EXPECT_EQ(axis_spec_mismatch(s, c.shape), "");
      if (plan.splits > 1) {
        EXPECT_EQ(plan.partial_count, c.shape.outputs * plan.splits) << to_string(s);
        EXPECT_EQ(plan.finalize_grid > 0, s.split == AxisSplit::two_pass) << to_string(s);
        if (chosen) {
          EXPECT_EQ(s.split, c.shape.outputs * plan.splits > 2048 ? AxisSplit::two_pass : AxisSplit::ticket_tiles)
              << to_string(s);
        }
      }
      // A last-block fold takes at most 2048 partials.
      for (AxisSplit split : {AxisSplit::ticket, AxisSplit::ticket_tiles}) {
        AxisKernelSpec ticket = s;
        ticket.split = split;
        const AxisLaunchPlan p = plan_axis_launch(ticket, c.shape, 132);
        EXPECT_LE(p.partial_count, std::max<std::uint64_t>(2048, c.shape.outputs)) << to_string(ticket);
      }
      EXPECT_EQ(parse_axis_config(axis_config_text(s), op, t), s) << to_string(s);
      // Not another layout's.
      EXPECT_NE(axis_spec_mismatch(s, shape_of({3541, 462}, {0})), "");
      EXPECT_NE(axis_spec_mismatch(s, shape_of({462, 3541}, {1})), "");
    }
    if (chosen) {
      EXPECT_FALSE(axis_reorder_may_pay(c.shape)) << c.shape.to_string();
    }
  }
  // Three outputs of 2^22 elements: a last-block fold (3 x 528 partials).
  const CanonicalAxes three = shape_of({349526, 3, 4}, {0, 2});
  AxisLaunchPlan plan;
  const AxisKernelSpec s = builtin_axis_spec(Op::sum, f32, three, 132, &plan);
  EXPECT_EQ(s.family, AxisFamily::columns_folded) << to_string(s);
  EXPECT_EQ(s.split, AxisSplit::ticket_tiles) << to_string(s);
  EXPECT_EQ(plan.partial_count, 3 * plan.splits);
  // Refused: rows apart (stride 470 over rows of 462), a reversed kept dimension, three
  // reduced dimensions, rows of 1025, a kept dimension of no role, nothing folded inside.
  for (const CanonicalAxes& shape :
       {view({2, 7, 10623, 33}, {1, 2, 470, 14}, {1, 2}), view({2, 7, 10623, 33}, {1, 2, 462, -14}, {1, 2}),
        view({5, 2, 7, 3000, 33}, {69300, 1, 2, 462, 14}, {0, 2, 3}), shape_of({4000, 205, 5}, {0, 2}),
        view({3, 12, 60000, 5}, {1, 16, 192, 3}, {2, 3}), shape_of({300000, 64}, {0}),
        shape_of({30000, 64, 4}, {1})}) {
    EXPECT_FALSE(axis_folded_columns(shape).has_value()) << shape.to_string();
    EXPECT_NE(builtin_axis_spec(Op::sum, f32, shape, 132).family, AxisFamily::columns_folded) << shape.to_string();
  }
  // A spec narrower than the rows does not fit them.
  AxisKernelSpec narrow = builtin_axis_spec(Op::sum, f32, cases[1].shape, 132);
  ASSERT_EQ(narrow.family, AxisFamily::columns_folded);
  narrow.block = 256;
  EXPECT_NE(axis_spec_mismatch(narrow, cases[1].shape), "");
}

TEST(AxisRowsPacked, ChunksSpecsFitsAndPlans) {
  // rows a chunk, by row bytes: 3 halves (6 bytes) 8 rows in 3 vectors; 3 floats 4 rows;
  // 3 doubles 2 rows; a 16-byte row alone.
  EXPECT_EQ(rows_packed_rows(3, 2), 8u);
  EXPECT_EQ(rows_packed_rows(2, 2), 4u);
  EXPECT_EQ(rows_packed_rows(6, 2), 4u);
  EXPECT_EQ(rows_packed_rows(8, 2), 1u);
  EXPECT_EQ(rows_packed_rows(3, 4), 4u);
  EXPECT_EQ(rows_packed_rows(2, 4), 2u);
  EXPECT_EQ(rows_packed_rows(4, 4), 1u);
  EXPECT_EQ(rows_packed_rows(3, 8), 2u);
  EXPECT_EQ(rows_packed_rows(8, 8), 1u);
  AxisKernelSpec s;
  s.types = kF16;
  s.family = AxisFamily::rows_packed;
  s.group = 1;
  s.vec = 8;
  for (std::uint32_t unroll : {1u, 2u, 4u}) {
    s.unroll = unroll;
    EXPECT_EQ(axis_spec_problem(s), "") << unroll;
    const auto back = parse_axis_config(axis_config_text(s), s.op, s.types);
    ASSERT_TRUE(back.has_value()) << axis_config_text(s);
    EXPECT_EQ(*back, s);
  }
  s.unroll = 8;
  EXPECT_NE(axis_spec_problem(s).find("unroll"), std::string::npos);
  s.unroll = 1;
  for (auto broken : std::vector<std::function<void(AxisKernelSpec&)>>{
           [](AxisKernelSpec& b) { b.vec = 4; }, [](AxisKernelSpec& b) { b.group = 2; },
           [](AxisKernelSpec& b) { b.split = AxisSplit::two_pass; }, [](AxisKernelSpec& b) { b.rows_per_pass = 4; },
           [](AxisKernelSpec& b) { b.tail = 1; }, [](AxisKernelSpec& b) { b.occupancy = 1024; }}) {
    AxisKernelSpec b = s;
    broken(b);
    EXPECT_NE(axis_spec_problem(b).find("rows_packed takes"), std::string::npos) << to_string(b);
  }
  // Packed rows write their outputs in a given order too (a staged reorder's rows of a
  // permuted view, written in the caller's order).
  EXPECT_TRUE(axis_spec_has_ordered_form(s));
  EXPECT_EQ(axis_spec_mismatch(s, shape_of({1000, 2}, {1})), "");
  EXPECT_EQ(axis_spec_mismatch(s, shape_of({1000, 8}, {1})), "");
  EXPECT_NE(axis_spec_mismatch(s, shape_of({1000, 9}, {1})), "");
  EXPECT_NE(axis_spec_mismatch(s, shape_of({8, 1000}, {0})), "");  // columns
  const CanonicalResult spaced = canonicalize(TensorDesc::strided({1000, 3}, {4, 1}), {1});
  ASSERT_TRUE(spaced.ok);
  EXPECT_EQ(axis_spec_mismatch(s, spaced.axes), "rows_packed needs contiguous rows");
  // A thread a chunk, `unroll` chunks a pass: 1003 rows of 3 halves are 126 chunks.
  EXPECT_EQ(plan_axis_launch(s, shape_of({1003, 3}, {1}), 132).grid, 1u);
  EXPECT_EQ(plan_axis_launch(s, shape_of({1 << 24, 3}, {1}), 132).grid, (1u << 21) / 256);
  s.unroll = 4;
  EXPECT_EQ(plan_axis_launch(s, shape_of({1 << 24, 3}, {1}), 132).grid, (1u << 21) / 1024);
  const AxisLaunchPlan one = plan_axis_launch(s, shape_of({1, 5}, {1}), 132);
  EXPECT_EQ(one.grid, 1u);
  EXPECT_EQ(one.splits, 1u);
  EXPECT_EQ(one.partial_count, 0u);
}

TEST(AxisRowsDense, TheBankModelCountsConflictsWorkedByHand) {
  for (std::size_t size : {2u, 4u, 8u}) EXPECT_DOUBLE_EQ(rows_dense_fold_passes(size, 32, 1, 64, 1), 1.0) << size;
  EXPECT_DOUBLE_EQ(rows_dense_fold_passes(4, 1, 1, 32, 1), 1.0);
  EXPECT_DOUBLE_EQ(rows_dense_fold_passes(4, 1, 1, 32, 0), 32.0);
  // 8-byte elements without a skew, a lane per row of 16: a half-warp's 16 lanes read
  // words 32 l + 2 t and 32 l + 2 t + 1, 16 to each of two banks.
  EXPECT_DOUBLE_EQ(rows_dense_fold_passes(8, 1, 1, 16, 0), 16.0);
  // 16-bit elements, two a word: lanes that read one word share it.
  EXPECT_DOUBLE_EQ(rows_dense_fold_passes(2, 32, 1, 64, 0), 1.0);
  EXPECT_DOUBLE_EQ(rows_dense_fold_passes(4, 1, 4, 62, 1), 16.0);
  EXPECT_LE(rows_dense_fold_passes(4, 1, 4, 62, kRowsDenseMaxSkew), 2.0);
  EXPECT_DOUBLE_EQ(rows_dense_fold_passes(4, 4, 4, 124, 1), 8.0);
  EXPECT_THROW(rows_dense_fold_passes(4, 3, 4, 62, 1), Error);
  EXPECT_THROW(rows_dense_fold_passes(4, 64, 4, 62, 1), Error);
  EXPECT_THROW(rows_dense_fold_passes(3, 4, 4, 62, 1), Error);
  EXPECT_THROW(rows_dense_fold_passes(4, 4, 32, 62, 1), Error);
  EXPECT_THROW(rows_dense_fold_passes(4, 4, 4, 0, 1), Error);
}

// The skew each shape takes. f32 in vectors of 4, as measured on an H200 (engine/src/
// axis.cpp): skew 3 where skew 1's fold met 4 to 16 to a bank (R = 62 a lane per row;
// 92, 93, 124 in groups of 4), skew 1 where skew 3 ran slower (72, 96, 104). Over every
// R a tile takes, for every element size, group and vector: skew 3 only where skew 1's
// fold averages kRowsDenseSkewConflict passes or more and skew 3 one fewer; the skew
// taken is stable (kept once computed); and no fold left at 4 passes or more where
// skew 3 would take one fewer.
TEST(AxisRowsDense, TheSkewIsThreeOnlyWhereSkewOneMeetsManyToABank) {
  EXPECT_EQ(rows_dense_skew(4, 1, 4, 62), kRowsDenseMaxSkew);
  for (std::uint64_t r : {92, 93, 124}) EXPECT_EQ(rows_dense_skew(4, 4, 4, r), kRowsDenseMaxSkew) << r;
  for (std::uint64_t r : {64, 72, 96, 100, 104, 128}) EXPECT_EQ(rows_dense_skew(4, 4, 4, r), 1u) << r;
  for (std::uint64_t r : {33, 35, 47, 63}) EXPECT_EQ(rows_dense_skew(4, 1, 4, r), 1u) << r;
  int threes = 0, cases = 0;
  for (std::size_t size : {2u, 4u, 8u}) {
    const std::uint32_t widest = static_cast<std::uint32_t>(16 / size);
    for (std::uint32_t vec : {1u, widest}) {
      for (std::uint32_t group : {1u, 4u, 32u}) {
        for (std::uint64_t r = group; r <= 256; r += r < 64 ? 1 : 3) {
          const std::uint32_t skew = rows_dense_skew(size, group, vec, r);
          const double one = rows_dense_fold_passes(size, group, vec, r, 1);
          const double three = rows_dense_fold_passes(size, group, vec, r, kRowsDenseMaxSkew);
          const std::string at = std::to_string(size) + "-byte G=" + std::to_string(group) +
                                 " vec=" + std::to_string(vec) + " R=" + std::to_string(r);
          ASSERT_TRUE(skew == 1 || skew == kRowsDenseMaxSkew) << at;
          if (skew == kRowsDenseMaxSkew) {
            EXPECT_GE(one, kRowsDenseSkewConflict) << at;
            EXPECT_LE(three, one - 1) << at;
            ++threes;
          } else {
            EXPECT_FALSE(one >= 4 && three <= one - 1) << at << ": " << one << " against " << three;
          }
          EXPECT_EQ(rows_dense_skew(size, group, vec, r), skew) << at;
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(threes, 0);
  EXPECT_LT(threes, cases / 4);
}

// The plan of a staged launch carries the skew, and a launch at skew 3 takes the
// program's twin (the tile skewed by 3), which every rows_dense program names.
TEST(AxisRowsDense, AtSkewThreeTheLaunchTakesTheTwin) {
  for (const auto& [r, skew] : std::vector<std::pair<std::int64_t, std::uint32_t>>{{124, 3}, {96, 1}, {62, 3}, {33, 1}}) {
    const CanonicalAxes shape = shape_of({131072, r}, {1});
    AxisLaunchPlan plan;
    const AxisKernelSpec s = builtin_axis_spec(Op::max, kF32, shape, 132, &plan);
    ASSERT_EQ(s.family, AxisFamily::rows_dense) << r;
    EXPECT_EQ(plan.skew, skew) << r;
    EXPECT_EQ(plan_axis_launch(s, shape, 132).skew, skew) << r;
    EXPECT_TRUE(axis_has_twin(s));
    EXPECT_EQ(axis_launch_takes_twin(s, shape, plan, nullptr), skew == kRowsDenseMaxSkew) << r;
    const CompileRequest request = make_axis_compile_request(s, 90);
    ASSERT_EQ(request.name_expressions.size(), 2u);
    EXPECT_NE(request.name_expressions[1].find(", true>"), std::string::npos) << request.name_expressions[1];
  }
  // Other families keep skew 1.
  AxisLaunchPlan plan;
  builtin_axis_spec(Op::sum, kF32, shape_of({131072, 64}, {1}), 132, &plan);
  EXPECT_EQ(plan.skew, 1u);
}

// Rows programs of vector loads have a peeled twin, except where a lane would hold more
// than 8 head and tail elements a pass; columns programs of several outputs per thread
// and general programs of a thread per vector of outputs have a twin for outputs off the
// grid; rows_dense programs one skewed by 3 (AxisRowsDense above); other families never
// do.
TEST(AxisKernels, TwinsForRowsOfFewPeeledElementsAndVectorsOfOutputs) {
  const TypeRule f32 = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  const TypeRule f16 = *resolve_types(Op::sum, DType::f16, DType::f32).rule;
  const auto spec = [](const TypeRule& t, AxisFamily family, std::uint32_t group, std::uint32_t vec,
                       std::uint32_t rows) {
    return AxisKernelSpec{.types = t, .family = family, .group = group, .vec = vec, .rows_per_pass = rows};
  };
  EXPECT_TRUE(axis_has_twin(spec(f32, AxisFamily::rows, 256, 4, 1)));
  EXPECT_TRUE(axis_has_twin(spec(f32, AxisFamily::rows, 1, 4, 1)));   // 3 + 3 elements
  EXPECT_TRUE(axis_has_twin(spec(f32, AxisFamily::rows, 4, 4, 4)));   // 1 + 1, four rows
  EXPECT_FALSE(axis_has_twin(spec(f32, AxisFamily::rows, 1, 4, 4)));  // 24 values
  EXPECT_FALSE(axis_has_twin(spec(f32, AxisFamily::rows, 32, 1, 1)));  // scalar loads
  EXPECT_TRUE(axis_has_twin(spec(f16, AxisFamily::rows, 8, 8, 4)));
  EXPECT_FALSE(axis_has_twin(spec(f16, AxisFamily::rows, 4, 8, 4)));  // 16 values
  EXPECT_FALSE(axis_has_twin(spec(f16, AxisFamily::rows, 2, 8, 1)));  // 4 + 4
  EXPECT_FALSE(axis_has_twin(spec(f32, AxisFamily::general, 32, 1, 1)));
  EXPECT_TRUE(axis_has_twin(spec(f32, AxisFamily::general, 32, 4, 1)));
  EXPECT_TRUE(axis_has_twin(spec(f16, AxisFamily::general, 1, 8, 1)));
  EXPECT_FALSE(axis_has_twin(spec(f32, AxisFamily::general, 128, 4, 1)));  // lanes along R alone
  EXPECT_TRUE(axis_has_twin(spec(f32, AxisFamily::columns, 1, 4, 1)));
  EXPECT_TRUE(axis_has_twin(spec(f16, AxisFamily::columns, 8, 4, 1)));
  EXPECT_FALSE(axis_has_twin(spec(f32, AxisFamily::columns, 8, 1, 4)));  // a thread per output
  EXPECT_FALSE(axis_has_twin(spec(f32, AxisFamily::columns_dense, 1, 4, 1)));
  EXPECT_TRUE(axis_has_twin(spec(f32, AxisFamily::rows_dense, 1, 4, 1)));
}

// The twin runs where some row that fold_row reads starts or ends off the vector grid,
// and is at most 16 vectors a lane long.
TEST(AxisKernels, PeeledTwinRunsForShortRowsOffTheVectorGrid) {
  const TypeRule f32 = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  AxisKernelSpec s{.types = f32, .family = AxisFamily::rows, .group = 256, .vec = 4};
  const auto rows = [](std::uint64_t outputs, std::uint64_t r, std::int64_t stride) {
    CanonicalAxes c;
    c.layout = AxisLayout::rows;
    c.outputs = outputs;
    c.reduced = r;
    c.outer_stride = stride;
    c.reduced_stride = 1;
    return c;
  };
  AxisLaunchPlan one;
  alignas(16) static float buffer[8];
  const void* aligned = buffer;
  const void* off = buffer + 1;
  EXPECT_FALSE(axis_launch_takes_twin(s, rows(100, 1000, 1000), one, aligned));  // every row on the grid
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(100, 1000, 1000), one, off));       // a base off it
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(100, 4097, 4097), one, aligned));   // a row not a multiple
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(100, 1000, 1001), one, aligned));   // a view's rows drift
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(100, 999, 1000), one, aligned));    // a tail in every row
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(100, 16383, 16383), one, aligned));  // 16 vectors a lane
  EXPECT_FALSE(axis_launch_takes_twin(s, rows(100, 16385, 16385), one, aligned));  // longer
  s.group = 32;
  EXPECT_FALSE(axis_launch_takes_twin(s, rows(100, 4097, 4097), one, aligned));  // 32 vectors a lane
  s.group = 256;
  AxisLaunchPlan split;
  split.splits = 3;  // 1000 in chunks of 334: the second chunk starts off the grid
  s.split = AxisSplit::two_pass;
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(4, 1000, 1000), split, aligned));
  split.splits = 5;  // chunks of 200
  EXPECT_FALSE(axis_launch_takes_twin(s, rows(4, 1000, 1000), split, aligned));
  s.split = AxisSplit::ticket_tiles;  // tiles read their heads in fold_row_split
  EXPECT_FALSE(axis_launch_takes_twin(s, rows(4, 4097, 4097), split, aligned));
  split.splits = 1;  // a tiles program that did not split folds with fold_row
  EXPECT_TRUE(axis_launch_takes_twin(s, rows(4, 4097, 4097), split, aligned));
  s.split = AxisSplit::none;
  s.vec = 1;  // no twin
  EXPECT_FALSE(axis_launch_takes_twin(s, rows(100, 4097, 4097), one, aligned));
}

// General programs of a thread per vector of outputs take their twin where a kept
// dimension is the densest and the base, the innermost kept dimension or another stride
// is off the grid of their vector, as the kernel's vector loads need.
TEST(AxisKernels, GeneralTwinRunsForKeptDensestVectorsOffTheGrid) {
  const TypeRule f32 = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  const TypeRule f16 = *resolve_types(Op::sum, DType::f16, DType::f32).rule;
  AxisKernelSpec s{.types = f32, .family = AxisFamily::general, .group = 32, .vec = 4};
  const auto shape = [](const TensorDesc& view, const AxisList& axes) {
    const CanonicalResult c = canonicalize(view, axes);
    EXPECT_TRUE(c.ok) << c.error;
    EXPECT_EQ(c.axes.layout, AxisLayout::general);
    return c.axes;
  };
  AxisLaunchPlan one;
  alignas(16) static float buffer[8];
  const void* aligned = buffer;
  const CanonicalAxes kept = shape(TensorDesc::contiguous({64, 32, 128, 128}), {0, 2});
  EXPECT_FALSE(axis_launch_takes_twin(s, kept, one, aligned));
  EXPECT_TRUE(axis_launch_takes_twin(s, kept, one, buffer + 1));  // a base off the grid
  EXPECT_TRUE(axis_launch_takes_twin(s, kept, one, buffer + 2));
  EXPECT_FALSE(axis_launch_takes_twin(s, kept, one, buffer + 4));
  // An innermost kept extent the vector does not divide (eight 16-bit outputs over runs of 100).
  const CanonicalAxes runs_of_100 = shape(TensorDesc::contiguous({100, 100, 100, 100}), {0, 2});
  EXPECT_FALSE(axis_launch_takes_twin(s, runs_of_100, one, aligned));
  AxisKernelSpec eight{.types = f16, .family = AxisFamily::general, .group = 32, .vec = 8};
  EXPECT_TRUE(axis_launch_takes_twin(eight, runs_of_100, one, aligned));
  // A reduced stride off the grid; a reversed innermost kept dimension.
  EXPECT_TRUE(axis_launch_takes_twin(
      s, shape(TensorDesc::strided({64, 32, 128, 128}, {524289, 16384, 128, 1}), {0, 2}), one, aligned));
  EXPECT_TRUE(
      axis_launch_takes_twin(s, shape(TensorDesc::strided({30, 50, 20}, {1000, 20, -1}), {0}), one, aligned));
  // A reduced dimension the densest: lanes along R, never the twin.
  EXPECT_FALSE(axis_launch_takes_twin(s, shape(TensorDesc::contiguous({5, 37, 9, 12}), {0, 2, 3}), one, buffer + 1));
  s.group = 128;  // no twin
  EXPECT_FALSE(axis_launch_takes_twin(s, kept, one, buffer + 1));
}

// Columns of several outputs per thread take their twin where the base, the R stride or
// the outer stride is off the grid of their vector, as the kernel decides for itself.
TEST(AxisKernels, ColumnsTwinRunsForOutputsOffTheVectorGrid) {
  const TypeRule f16 = *resolve_types(Op::sum, DType::f16, DType::f32).rule;
  AxisKernelSpec s{.types = f16, .family = AxisFamily::columns, .group = 1, .vec = 4};
  const auto columns = [](std::uint64_t outer, std::uint64_t r, std::uint64_t inner, std::int64_t r_stride,
                          std::int64_t outer_stride) {
    CanonicalAxes c;
    c.layout = AxisLayout::columns;
    c.outputs = outer * inner;
    c.reduced = r;
    c.inner = inner;
    c.reduced_stride = r_stride;
    c.outer_stride = outer_stride;
    return c;
  };
  AxisLaunchPlan one;
  alignas(16) static std::uint16_t buffer[8];
  const void* aligned = buffer;
  const void* off8 = buffer + 2;  // 4-byte aligned, not 8
  EXPECT_FALSE(axis_launch_takes_twin(s, columns(1, 100, 1 << 20, 1 << 20, 100 << 20), one, aligned));
  EXPECT_TRUE(axis_launch_takes_twin(s, columns(1, 100, 1 << 20, 1 << 20, 100 << 20), one, off8));
  EXPECT_TRUE(axis_launch_takes_twin(s, columns(1, 100, (1 << 20) + 1, (1 << 20) + 1, 100 * ((1 << 20) + 1)), one,
                                     aligned));                                               // odd rows
  EXPECT_TRUE(axis_launch_takes_twin(s, columns(3, 8, 64, 64, 8 * 64 + 2), one, aligned));   // slices drift
  EXPECT_FALSE(axis_launch_takes_twin(s, columns(3, 8, 64, -64, 8 * 64), one, aligned));     // reversed R
  s.vec = 1;  // no twin
  EXPECT_FALSE(axis_launch_takes_twin(s, columns(1, 100, (1 << 20) + 1, (1 << 20) + 1, 100 * ((1 << 20) + 1)), one,
                                      aligned));
}

// Every kernel of a program compiled for sm_90 or later launches programmatically, else
// serially: a two_pass plan's two, a ticket plan's one. (The kernels' side:
// rt::begin_after_previous_grid, tested on the GPU.)
class RecordingLauncher : public Launcher {
 public:
  void launch(const void* kernel, std::uint32_t grid, std::uint32_t, void*, void**, StreamOrder order) override {
    launches.push_back({kernel, grid, order});
  }
  struct Launch {
    const void* kernel;
    std::uint32_t grid;
    StreamOrder order;
  };
  std::vector<Launch> launches;
};

TEST(AxisKernels, KernelsLaunchProgrammaticallyFromSm90) {
  const CanonicalAxes shape = shape_of({4097, 100}, {0});  // columns: 100 outputs of 4097
  AxisKernelSpec s = builtin_axis_spec(Op::sum, kF32, shape, 132);
  s.split = AxisSplit::two_pass;
  const AxisLaunchPlan plan = plan_axis_launch(s, shape, 132);
  ASSERT_GT(plan.finalize_grid, 0u);
  std::vector<unsigned char> memory(kWorkspaceHeaderBytes + plan.partial_count * 4);
  const WorkspaceView ws = workspace_view(memory.data(), memory.size());
  alignas(16) static float data[4];
  KernelHandles k{reinterpret_cast<const void*>(0xa1), reinterpret_cast<const void*>(0xf1)};
  for (bool sm90 : {false, true}) {
    k.programmatic = sm90;
    const StreamOrder want = sm90 ? StreamOrder::programmatic : StreamOrder::serial;
    RecordingLauncher launcher;
    enqueue_axis_reduction(launcher, k, s, plan, shape, data, data, &ws, nullptr);
    ASSERT_EQ(launcher.launches.size(), 2u);
    EXPECT_EQ(launcher.launches[0].kernel, k.reduce);
    EXPECT_EQ(launcher.launches[0].order, want);
    EXPECT_EQ(launcher.launches[1].kernel, k.finalize);
    EXPECT_EQ(launcher.launches[1].grid, plan.finalize_grid);
    EXPECT_EQ(launcher.launches[1].order, want);
    AxisKernelSpec t = s;
    t.split = AxisSplit::ticket;
    const AxisLaunchPlan ticket = plan_axis_launch(t, shape, 132);
    ASSERT_GT(ticket.splits, 1u);
    launcher.launches.clear();
    enqueue_axis_reduction(launcher, k, t, ticket, shape, data, data, &ws, nullptr);
    ASSERT_EQ(launcher.launches.size(), 1u);
    EXPECT_EQ(launcher.launches[0].order, want);
  }
}

}  // namespace
}  // namespace reduce_tune
