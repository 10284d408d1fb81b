// Canonical forms of axis reductions: every shape error, the layout classes, and a
// property check that the canonical form reads exactly the elements the caller's tensor
// and axes name, for each output, over thousands of random views.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "reduce_tune/tensor.h"

namespace reduce_tune {
namespace {

CanonicalAxes ok(const TensorDesc& t, const AxisList& a) {
  const CanonicalResult r = canonicalize(t, a);
  EXPECT_TRUE(r.ok) << r.error;
  return r.axes;
}

std::string error(const TensorDesc& t, const AxisList& a) {
  const CanonicalResult r = canonicalize(t, a);
  EXPECT_FALSE(r.ok);
  return r.error;
}

TEST(Canonicalize, RefusesBadShapesAndAxesWithAMessageThatNamesThem) {
  EXPECT_NE(error(TensorDesc::contiguous({4, 5}), {2}).find("axis 2 is out of range"), std::string::npos);
  EXPECT_NE(error(TensorDesc::contiguous({4, 5}), {-3}).find("axis -3 is out of range"), std::string::npos);
  EXPECT_NE(error(TensorDesc::contiguous({4, 5}), {1, -1}).find("axis -1 is repeated"), std::string::npos);
  EXPECT_NE(error(TensorDesc::contiguous({4, 5}), {0, 1, 0}).find("3 axes for a tensor of rank 2"), std::string::npos);
  EXPECT_NE(error(TensorDesc::contiguous({4, -5}), {0}).find("dimension 1 has a negative extent"), std::string::npos);
  EXPECT_NE(error(TensorDesc::contiguous({1, 2, 3, 4, 5, 6, 7, 8, 9}), {0}).find("rank 9"), std::string::npos);
  EXPECT_NE(error(TensorDesc::strided({4, 5}, {1}), {0}).find("2 extents but 1 strides"), std::string::npos);
  // 2^32 * 2^32 elements: the product overflows.
  EXPECT_NE(error(TensorDesc::strided({1ll << 32, 1ll << 32}, {1, 1}), {0}).find("product overflows 64 bits"),
            std::string::npos);
  // Few elements, but offsets past 2^63.
  EXPECT_NE(error(TensorDesc::strided({3, 2}, {1ll << 62, 1}), {0}).find("overflow 64 bits"), std::string::npos);
  EXPECT_NE(error(TensorDesc::strided({3, 2}, {-(1ll << 62), 1}), {0}).find("overflow 64 bits"), std::string::npos);
  // Offsets within 64 bits, but a span no allocation holds.
  EXPECT_NE(error(TensorDesc::strided({3, 2}, {1ll << 61, 1}), {0}).find("more than any allocation"),
            std::string::npos);
  EXPECT_NE(error(TensorDesc::strided({2, 2}, {1ll << 61, -(1ll << 61)}), {0}).find("more than any allocation"),
            std::string::npos);
  // An empty dimension makes every size zero, whatever the others are.
  EXPECT_EQ(ok(TensorDesc::strided({0, 1ll << 40, 1ll << 40}, {1, 1, 1}), {1}).outputs, 0u);
}

TEST(Canonicalize, ClassifiesContiguousTensors) {
  auto c = ok(TensorDesc::contiguous({6, 7, 8}), {0, 1, 2});
  EXPECT_EQ(c.layout, AxisLayout::flat);
  EXPECT_EQ(c.reduced, 336u);
  c = ok(TensorDesc::contiguous({6, 7, 8}), {2});
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.outputs, 42u);
  EXPECT_EQ(c.reduced, 8u);
  EXPECT_EQ(c.outer_stride, 8);
  c = ok(TensorDesc::contiguous({6, 7, 8}), {1, 2});  // merged into rows of 56
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.reduced, 56u);
  c = ok(TensorDesc::contiguous({6, 7, 8}), {0});  // [R=6, inner=56]
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 56u);
  EXPECT_EQ(c.outputs, 56u);
  EXPECT_EQ(c.reduced_stride, 56);
  c = ok(TensorDesc::contiguous({6, 7, 8}), {1});  // [outer=6, R=7, inner=8]
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 8u);
  EXPECT_EQ(c.outputs, 48u);
  EXPECT_EQ(c.outer_stride, 56);
  EXPECT_EQ(c.reduced_stride, 8);
  c = ok(TensorDesc::contiguous({6, 7, 8}), {0, 2});  // neither: general
  EXPECT_EQ(c.layout, AxisLayout::general);
  EXPECT_EQ(c.outputs, 7u);
  EXPECT_EQ(c.reduced, 48u);
  c = ok(TensorDesc::contiguous({6, 7, 8}), {});  // nothing reduced: a copy, R = 1, as columns [1, 336]
  EXPECT_EQ(c.reduced, 1u);
  EXPECT_EQ(c.outputs, 336u);
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 336u);
  EXPECT_EQ(c.reduced_stride, 336);
  c = ok(TensorDesc::contiguous({}), {});  // rank 0
  EXPECT_EQ(c.layout, AxisLayout::flat);
  EXPECT_EQ(c.reduced, 1u);
  EXPECT_EQ(c.outputs, 1u);
}

TEST(Canonicalize, DropsUnitDimensionsAndMergesThroughThem) {
  // [1, 6, 1, 8] reducing the last axis: rows of 8, the unit axes gone.
  auto c = ok(TensorDesc::contiguous({1, 6, 1, 8}), {3});
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.outputs, 6u);
  EXPECT_EQ(c.kept_rank, 1);
  // Reducing only unit axes is a copy: contiguous outputs read as columns [1, 48].
  c = ok(TensorDesc::contiguous({6, 1, 8}), {1});
  EXPECT_EQ(c.reduced, 1u);
  EXPECT_EQ(c.outputs, 48u);
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 48u);
  // Over outputs that are not contiguous (the first element of every other row of a
  // [12, 8] tensor, a unit axis reduced), a copy stays rows of one element.
  c = ok(TensorDesc::strided({6, 1}, {16, 1}), {1});
  EXPECT_EQ(c.reduced, 1u);
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.outer_stride, 16);
}

TEST(Canonicalize, ViewsKeepTheirClassWhereTheirMemoryAllowsIt) {
  // A transposed [8, 6] view of a contiguous [6, 8]: reducing its axis 0 walks rows of
  // the original, contiguous: rows.
  auto c = ok(TensorDesc::strided({8, 6}, {1, 8}), {0});
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.outer_stride, 8);
  EXPECT_EQ(c.outputs, 6u);
  // Reducing its axis 1 is columns of the original.
  c = ok(TensorDesc::strided({8, 6}, {1, 8}), {1});
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 8u);
  // Every other column of a [6, 16] tensor, rows reduced: R strided by 2: general.
  c = ok(TensorDesc::strided({6, 8}, {16, 2}), {1});
  EXPECT_EQ(c.layout, AxisLayout::general);
  // Rows sliced out of a wider tensor stay rows with a longer stride.
  c = ok(TensorDesc::strided({6, 8}, {100, 1}), {1});
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.outer_stride, 100);
  // A reversed reduced axis reads the same elements forwards from its far end.
  c = ok(TensorDesc::strided({6, 8}, {8, -1}), {1});
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.base_offset, -7);
  EXPECT_EQ(c.lowest_offset, -7);
  EXPECT_EQ(c.highest_offset, 40);
  // Every other column of a [1024, 4096] tensor, columns reduced: outputs 2 elements
  // apart, rows 4096: stepped columns.
  c = ok(TensorDesc::strided({1024, 2048}, {4096, 2}), {0});
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner, 2048u);
  EXPECT_EQ(c.inner_step, 2);
  EXPECT_EQ(c.reduced_stride, 4096);
  EXPECT_EQ(c.outer_stride, 0);
  // With an outer kept dimension: [4, R = 10, 6 outputs 3 apart] of a [4, 10, 18].
  c = ok(TensorDesc::strided({4, 10, 6}, {180, 18, 3}), {1});
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.outer_stride, 180);
  EXPECT_EQ(c.inner, 6u);
  EXPECT_EQ(c.inner_step, 3);
  EXPECT_EQ(c.to_string(), "columns outputs=24 R=10 outer=4 outer_stride=180 R_stride=18 inner=6 inner_step=3");
  // Stepped by kMaxInnerStep still; by more, general.
  c = ok(TensorDesc::strided({100, 16}, {kMaxInnerStep * 16, kMaxInnerStep}), {0});
  EXPECT_EQ(c.layout, AxisLayout::columns);
  EXPECT_EQ(c.inner_step, kMaxInnerStep);
  c = ok(TensorDesc::strided({100, 16}, {(kMaxInnerStep + 1) * 16, kMaxInnerStep + 1}), {0});
  EXPECT_EQ(c.layout, AxisLayout::general);
  // General where the rows are denser than the outputs (R stride 2, outputs 3 apart),
  // the outputs run backwards, or the outer kept dimension is the denser one.
  EXPECT_EQ(ok(TensorDesc::strided({5, 4}, {2, 3}), {0}).layout, AxisLayout::general);
  EXPECT_EQ(ok(TensorDesc::strided({100, 16}, {64, -2}), {0}).layout, AxisLayout::general);
  EXPECT_EQ(ok(TensorDesc::strided({3, 100, 16}, {1, 64, 4}), {1}).layout, AxisLayout::general);
  // Reduced extent 0: every output is the identity, nothing is read.
  c = ok(TensorDesc::contiguous({6, 0}), {1});
  EXPECT_EQ(c.outputs, 6u);
  EXPECT_EQ(c.reduced, 0u);
  EXPECT_TRUE(c.reads_nothing());
  EXPECT_EQ(c.layout, AxisLayout::rows);
  EXPECT_EQ(c.outer_stride, 0);
}

// The input offsets output j reduces, from the canonical form (through its layout's own
// fields, as the kernels read them).
std::vector<std::int64_t> canonical_offsets(const CanonicalAxes& c, std::uint64_t j) {
  std::vector<std::int64_t> out;
  switch (c.layout) {
    case AxisLayout::flat:
      for (std::uint64_t k = 0; k < c.reduced; ++k) out.push_back(c.base_offset + static_cast<std::int64_t>(k));
      break;
    case AxisLayout::rows:
      for (std::uint64_t k = 0; k < c.reduced; ++k)
        out.push_back(c.base_offset + static_cast<std::int64_t>(j) * c.outer_stride + static_cast<std::int64_t>(k));
      break;
    case AxisLayout::columns: {
      const auto o = static_cast<std::int64_t>(j / c.inner), i = static_cast<std::int64_t>(j % c.inner);
      for (std::uint64_t k = 0; k < c.reduced; ++k)
        out.push_back(c.base_offset + o * c.outer_stride + i * c.inner_step +
                      static_cast<std::int64_t>(k) * c.reduced_stride);
      break;
    }
    case AxisLayout::general: {
      std::int64_t kept = 0;
      std::uint64_t rest = j;
      for (int d = c.kept_rank - 1; d >= 0; --d) {
        const auto e = static_cast<std::uint64_t>(c.kept_extents[d]);
        kept += static_cast<std::int64_t>(rest % e) * c.kept_strides[d];
        rest /= e;
      }
      for (std::uint64_t k = 0; k < c.reduced; ++k) {
        std::int64_t off = 0;
        std::uint64_t r = k;
        for (int d = c.reduced_rank - 1; d >= 0; --d) {
          const auto e = static_cast<std::uint64_t>(c.reduced_extents[d]);
          off += static_cast<std::int64_t>(r % e) * c.reduced_strides[d];
          r /= e;
        }
        out.push_back(c.base_offset + kept + off);
      }
      break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Canonicalize, ReadsExactlyTheElementsOfEachOutputForRandomViews) {
  std::mt19937 rng(12);
  std::map<AxisLayout, int> seen;
  int stepped_columns = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int rank = static_cast<int>(rng() % 6);
    TensorDesc t;
    t.rank = rank;
    // A random permutation of a contiguous base, random slicing steps, sometimes a
    // reversal, a broadcast, or unit extents.
    std::vector<int> order(static_cast<std::size_t>(rank));
    for (int d = 0; d < rank; ++d) order[static_cast<std::size_t>(d)] = d;
    std::shuffle(order.begin(), order.end(), rng);
    std::int64_t step = 1;
    for (int k = rank - 1; k >= 0; --k) {
      const int d = order[static_cast<std::size_t>(k)];
      t.extents[d] = 1 + static_cast<std::int64_t>(rng() % 4);
      const int kind = static_cast<int>(rng() % 10);
      const std::int64_t slice = kind == 0 ? 2 : 1;
      t.strides[d] = kind == 1 ? 0 : (kind == 2 ? -step * slice : step * slice);
      step *= t.extents[d] * slice + (kind == 3 ? 1 : 0);
    }
    AxisList axes;
    for (int d = 0; d < rank; ++d)
      if (rng() % 2) axes.axes[axes.count++] = (rng() % 2) ? d : d - rank;
    const CanonicalResult r = canonicalize(t, axes);
    ASSERT_TRUE(r.ok) << r.error;
    const CanonicalAxes& c = r.axes;
    ++seen[c.layout];
    if (c.layout == AxisLayout::columns && c.inner_step != 1) ++stepped_columns;
    // Naive: walk every index of the tensor.
    bool reduced_dim[kMaxRank] = {};
    for (int i = 0; i < axes.count; ++i) reduced_dim[(axes.axes[i] + rank) % std::max(rank, 1)] = true;
    std::map<std::uint64_t, std::vector<std::int64_t>> expected;
    std::int64_t total = 1;
    for (int d = 0; d < rank; ++d) total *= t.extents[d];
    for (std::int64_t flat = 0; flat < total; ++flat) {
      std::int64_t rest = flat, offset = 0;
      std::uint64_t out_index = 0, out_scale = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const std::int64_t i = rest % t.extents[d];
        rest /= t.extents[d];
        offset += i * t.strides[d];
        if (!reduced_dim[d]) {
          out_index += static_cast<std::uint64_t>(i) * out_scale;
          out_scale *= static_cast<std::uint64_t>(t.extents[d]);
        }
      }
      expected[out_index].push_back(offset);
    }
    ASSERT_EQ(c.outputs, expected.size());
    std::int64_t lo = 0, hi = 0;
    bool any = false;
    for (auto& [j, offsets] : expected) {
      std::sort(offsets.begin(), offsets.end());
      ASSERT_EQ(canonical_offsets(c, j), offsets) << "trial " << trial << ": " << c.to_string() << " output " << j;
      for (auto o : offsets) {
        lo = any ? std::min(lo, o) : o;
        hi = any ? std::max(hi, o) : o;
        any = true;
      }
    }
    EXPECT_LE(c.lowest_offset, std::min<std::int64_t>(lo, 0)) << c.to_string();
    EXPECT_GE(c.highest_offset, hi) << c.to_string();
  }
  // Every class came up, stepped columns among them.
  for (auto l : {AxisLayout::flat, AxisLayout::rows, AxisLayout::columns, AxisLayout::general})
    EXPECT_GT(seen[l], 50) << to_string(l);
  EXPECT_GT(stepped_columns, 20);
}

}  // namespace
}  // namespace reduce_tune
