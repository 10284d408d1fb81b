// f16 and bf16 on the GPU: every op into the 16-bit type and into f32, at odd sizes and
// offsets that leave the 16-byte loads misaligned, with NaN, Inf, subnormals, totals
// past f16's range, round-to-nearest-even of the final result, along axes, and through
// CUDA's own __half / __nv_bfloat16 with <reduce_tune/reduce_fp16.h>. References are the
// tests' own (host_reference.h) and the host conversions of reduce_tune/float16.h, which
// core_tests check against a nearest-value search.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_env.h"
#include "host_reference.h"
#include "reduce_tune/float16.h"
#include "reduce_tune/reduce_fp16.h"

namespace reduce_tune {
namespace {

using testing::no_database;

constexpr DType k16[] = {DType::f16, DType::bf16};

// Runs op<in, out> over `count` elements starting `offset` elements into a device copy of
// `bytes`; returns the output's bytes.
std::uint64_t reduce_bytes(Context& ctx, Op op, DType in, DType out, const std::vector<unsigned char>& bytes,
                           std::size_t offset, std::uint64_t count) {
  DeviceBuffer d(bytes.size() + 16), o(8);
  RT_CUDA_CHECK(cudaMemcpy(d.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  const std::uint64_t poison = 0xa5a5a5a5a5a5a5a5ull;
  RT_CUDA_CHECK(cudaMemcpy(o.get(), &poison, 8, cudaMemcpyHostToDevice));
  ctx.reduce(op, in, out, static_cast<const unsigned char*>(d.get()) + offset * size_of(in), count, o.get(), nullptr);
  RT_CUDA_CHECK(cudaDeviceSynchronize());
  std::uint64_t got = 0;
  RT_CUDA_CHECK(cudaMemcpy(&got, o.get(), size_of(out), cudaMemcpyDeviceToHost));
  return got;
}

// Bytes of `count` copies of the 16-bit pattern `bits`.
std::vector<unsigned char> repeated(std::uint16_t bits, std::size_t count) {
  std::vector<unsigned char> b(count * 2);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(b.data() + 2 * i, &bits, 2);
  return b;
}

float as_float(DType out, std::uint64_t got) {
  if (out == DType::f32) {
    float f;
    std::memcpy(&f, &got, 4);
    return f;
  }
  const auto bits = static_cast<std::uint16_t>(got & 0xffff);
  return out == DType::f16 ? f16_bits_to_float(bits) : bf16_bits_to_float(bits);
}

TEST(Float16, EveryOpPatternSizeAndOffsetMatchesTheReference) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<std::uint64_t> sizes = testing::quick_mode() ? std::vector<std::uint64_t>{1, 4099}
                                                                 : std::vector<std::uint64_t>{1, 7, 9, 4099, 1000003};
  const testing::Pattern patterns[] = {testing::Pattern::exact, testing::Pattern::real, testing::Pattern::nan,
                                       testing::Pattern::inf, testing::Pattern::mixed_inf};
  int runs = 0;
  for (DType in : k16)
    for (Op op : kAllOps)
      for (testing::Pattern pattern : patterns) {
        const auto host = testing::make_input(op, in, pattern, sizes.back() + 8, 11);
        DeviceBuffer d(host.bytes.size()), o(8);
        RT_CUDA_CHECK(cudaMemcpy(d.get(), host.bytes.data(), host.bytes.size(), cudaMemcpyHostToDevice));
        for (DType out : {in, DType::f32}) {
          const TypeRule t = *resolve_types(op, in, out).rule;
          for (std::uint64_t n : sizes)
            for (std::size_t offset : {0, 1, 3, 7}) {
              const std::uint64_t poison = 0xa5a5a5a5a5a5a5a5ull;
              RT_CUDA_CHECK(cudaMemcpy(o.get(), &poison, 8, cudaMemcpyHostToDevice));
              ctx.reduce(op, in, out, static_cast<const unsigned char*>(d.get()) + offset * 2, n, o.get(), nullptr);
              std::uint64_t got = 0;
              RT_CUDA_CHECK(cudaMemcpy(&got, o.get(), size_of(out), cudaMemcpyDeviceToHost));
              const auto expected = testing::expect(op, t, host, offset, n);
              ++runs;
              EXPECT_EQ(testing::mismatch(t, got, expected, 1 << 20), "")
                  << to_string(op) << "<" << to_string(in) << "," << to_string(out) << "> "
                  << testing::pattern_name(pattern) << " n=" << n << " offset=" << offset;
            }
        }
      }
  std::printf("[ counts   ] 16-bit floats: %d runs\n", runs);
}

TEST(Float16, ATotalPastF16sRangeIsInfInF16AndExactInF32) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::size_t n = 1000;
  const auto bytes = repeated(Half(60000.0f).bits, n + 3);
  // 60000 * 1000 = 6e7: every partial sum is exact in f32.
  EXPECT_EQ(as_float(DType::f32, reduce_bytes(ctx, Op::sum, DType::f16, DType::f32, bytes, 3, n)), 6e7f);
  EXPECT_EQ(reduce_bytes(ctx, Op::sum, DType::f16, DType::f16, bytes, 3, n), 0x7c00u);  // +Inf
  // The mean divides the f32 total: 60000 again, exactly, in f16.
  EXPECT_EQ(as_float(DType::f16, reduce_bytes(ctx, Op::mean, DType::f16, DType::f16, bytes, 1, n)), 60000.0f);
  EXPECT_EQ(as_float(DType::f16, reduce_bytes(ctx, Op::max, DType::f16, DType::f16, bytes, 0, n)), 60000.0f);
  // A product that overflows f16 but not f32.
  const auto twos = repeated(Half(2.0f).bits, 40);
  EXPECT_EQ(as_float(DType::f32, reduce_bytes(ctx, Op::prod, DType::f16, DType::f32, twos, 0, 20)), 1048576.0f);
  EXPECT_EQ(reduce_bytes(ctx, Op::prod, DType::f16, DType::f16, twos, 0, 20), 0x7c00u);
  // bf16 has f32's range: the same total is finite there (6e7 rounded once to bf16).
  const auto bbytes = repeated(BFloat16(60000.0f).bits, n);
  const float b = static_cast<float>(BFloat16(60000.0f));
  EXPECT_EQ(reduce_bytes(ctx, Op::sum, DType::bf16, DType::bf16, bbytes, 0, n), BFloat16(b * 1000.0f).bits);
}

TEST(Float16, SubnormalsAddExactly) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  // 1000 times f16's smallest subnormal (2^-24) is the subnormal 1000 * 2^-24.
  const auto tiny = repeated(0x0001, 1001);
  EXPECT_EQ(reduce_bytes(ctx, Op::sum, DType::f16, DType::f16, tiny, 1, 1000), 1000u);
  EXPECT_EQ(as_float(DType::f32, reduce_bytes(ctx, Op::sum, DType::f16, DType::f32, tiny, 0, 1000)), 1000 * 0x1p-24f);
  // bf16 subnormals are f32 subnormals: 2^-133 and friends.
  std::vector<unsigned char> mixed = repeated(0x0003, 999);  // 3 * 2^-133
  const std::uint16_t smallest = 0x0001, negative = 0x8002;
  std::memcpy(mixed.data() + 2 * 500, &smallest, 2);
  std::memcpy(mixed.data() + 2 * 998, &negative, 2);
  EXPECT_EQ(reduce_bytes(ctx, Op::min, DType::bf16, DType::bf16, mixed, 0, 999), 0x8002u);
  EXPECT_EQ(reduce_bytes(ctx, Op::min, DType::bf16, DType::bf16, mixed, 0, 998), 0x0001u);
  EXPECT_EQ(reduce_bytes(ctx, Op::max, DType::bf16, DType::bf16, mixed, 0, 999), 0x0003u);
  // 997 * 3 + 1 - 2 = 2990 units of 2^-133: exact in f32, and rounded once in bf16 (to
  // 2992 units: 2990 needs 12 significant bits, bf16 keeps 8).
  const float total = 2990 * 0x1p-133f;
  EXPECT_EQ(as_float(DType::f32, reduce_bytes(ctx, Op::sum, DType::bf16, DType::f32, mixed, 0, 999)), total);
  EXPECT_EQ(reduce_bytes(ctx, Op::sum, DType::bf16, DType::bf16, mixed, 0, 999), float_to_bf16_bits(total));
}

// The total is exact in f32; its one rounding to bf16 goes to the nearest value, and a
// tie to the even significand.
TEST(Float16, Bf16ResultRoundsToNearestEven) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  struct Case {
    float total;
    std::uint16_t want;
  };
  // Between 256 and 512 bf16's step is 2: 257 ties down to 256 (even), 259 up to 260,
  // 258.5 rounds to 258; from 2^16 on the step is 512: 65792 ties down, 66304 up.
  const Case cases[] = {{257.0f, 0x4380}, {259.0f, 0x4382}, {258.5f, 0x4381}, {65792.0f, 0x4780},
                        {66304.0f, 0x4782}, {-257.0f, 0xc380}};
  for (const Case& c : cases) {
    // total = 256 (or the sign's) + the rest in halves, as bf16 values that are exact.
    const float sign = c.total < 0 ? -1.0f : 1.0f;
    const float big = c.total * sign >= 65536.0f ? 65536.0f : 256.0f;
    float rest = c.total * sign - big;
    std::vector<float> values = {big * sign};
    while (rest > 0) {
      const float piece = rest >= 128.0f ? 128.0f : rest >= 1.0f ? 1.0f : 0.5f;
      values.push_back(piece * sign);
      rest -= piece;
    }
    std::vector<unsigned char> bytes(values.size() * 2);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const BFloat16 b(values[i]);
      ASSERT_EQ(static_cast<float>(b), values[i]);
      std::memcpy(bytes.data() + 2 * i, &b.bits, 2);
    }
    EXPECT_EQ(float_to_bf16_bits(c.total), c.want) << c.total;  // the host agrees with the table
    EXPECT_EQ(reduce_bytes(ctx, Op::sum, DType::bf16, DType::bf16, bytes, 0, values.size()), c.want) << c.total;
    EXPECT_EQ(as_float(DType::f32, reduce_bytes(ctx, Op::sum, DType::bf16, DType::f32, bytes, 0, values.size())),
              c.total);
  }
}

// A mean whose quotient lies just below a midpoint of the 16-bit values, so close that
// the quotient rounded to float is the midpoint itself: rounded again, that tie would go
// to the even neighbour, above. The kernels round the quotient once (quotient_to_odd in
// kernel_templates/rt/common.cuh): flat, along rows and along columns.
TEST(Float16, MeanRoundsItsQuotientOnce) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  struct Case {
    DType type;
    std::int64_t n, twos;  // n elements: `twos` of them 2, the others 1
    std::uint16_t want;    // the bits of (n + twos) / n rounded once
  };
  // f16: 8888 / 8875 = 1 + 3 * 2^-11 - 5.5e-8 -> 1 + 2^-10; bf16: 66477 / 65707 =
  // 1 + 3 * 2^-8 - 5.9e-8 -> 1 + 2^-7.
  const Case cases[] = {{DType::f16, 8875, 13, 0x3c01}, {DType::bf16, 65707, 770, 0x3f81}};
  for (const Case& c : cases) {
    const bool brain = c.type == DType::bf16;
    const double q = static_cast<double>(c.n + c.twos) / static_cast<double>(c.n);
    ASSERT_EQ(brain ? double_to_bf16_bits(q) : double_to_f16_bits(q), c.want);
    const float twice = static_cast<float>(c.n + c.twos) / static_cast<float>(c.n);  // a float quotient
    ASSERT_NE(brain ? float_to_bf16_bits(twice) : float_to_f16_bits(twice), c.want) << "the case must tell";
    const std::uint16_t one = brain ? 0x3f80 : 0x3c00, two = 0x4000;  // 2 has these bits in both
    // Rows [3, n] (each row the same, its twos spread out) and columns [n, 3] of them.
    const std::int64_t ways = 3;
    std::vector<unsigned char> rows(static_cast<std::size_t>(ways * c.n) * 2), cols(rows.size());
    for (std::int64_t k = 0; k < c.n; ++k) {
      const std::uint16_t bits = k % (c.n / c.twos) == 0 && k / (c.n / c.twos) < c.twos ? two : one;
      for (std::int64_t w = 0; w < ways; ++w) {
        std::memcpy(rows.data() + 2 * (w * c.n + k), &bits, 2);
        std::memcpy(cols.data() + 2 * (k * ways + w), &bits, 2);
      }
    }
    EXPECT_EQ(reduce_bytes(ctx, Op::mean, c.type, c.type, rows, 0, static_cast<std::uint64_t>(c.n)), c.want)
        << to_string(c.type) << " flat";
    DeviceBuffer d(rows.size()), o(16);
    for (int layout = 0; layout < 2; ++layout) {
      const auto& bytes = layout == 0 ? rows : cols;
      RT_CUDA_CHECK(cudaMemcpy(d.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
      const TensorDesc desc = layout == 0 ? TensorDesc::contiguous({ways, c.n}) : TensorDesc::contiguous({c.n, ways});
      ctx.reduce_axes(Op::mean, c.type, c.type, d.get(), desc, AxisList{layout == 0 ? 1 : 0}, o.get(), nullptr);
      std::uint16_t got[ways] = {};
      RT_CUDA_CHECK(cudaMemcpy(got, o.get(), sizeof got, cudaMemcpyDeviceToHost));
      for (std::int64_t w = 0; w < ways; ++w)
        EXPECT_EQ(got[w], c.want) << to_string(c.type) << (layout == 0 ? " rows" : " columns") << " output " << w;
    }
  }
}

// Means of many rows and columns rounded once to 16 bits, each against the exact
// quotient. First sums of small integers scaled by a power of two a row (exact in float,
// over f16's subnormal results up to its largest, bf16's from its subnormals), R from 1
// to 1000: most quotients lie
// clear of a 16-bit rounding boundary (the epilogue's fast path), some exactly on one
// (ties, its exact path). Then rows whose quotient lies within half a float ulp of a
// boundary but not on it, found by search (R = 2^14 + 1 .. for f16, 2^16 + 1 .. for
// bf16): a float division rounded to 16 bits gets each of them wrong.
void expect_means(Context& ctx, DType type, std::int64_t rows, std::int64_t r, const std::vector<std::uint16_t>& by_rows,
                  const std::vector<std::uint16_t>& want, const char* what) {
  std::vector<std::uint16_t> by_cols(by_rows.size());
  for (std::int64_t j = 0; j < rows; ++j)
    for (std::int64_t k = 0; k < r; ++k)
      by_cols[static_cast<std::size_t>(k * rows + j)] = by_rows[static_cast<std::size_t>(j * r + k)];
  DeviceBuffer d(by_rows.size() * 2), o(want.size() * 2);
  for (int layout = 0; layout < 2; ++layout) {
    const auto& data = layout == 0 ? by_rows : by_cols;
    RT_CUDA_CHECK(cudaMemcpy(d.get(), data.data(), data.size() * 2, cudaMemcpyHostToDevice));
    const TensorDesc desc = layout == 0 ? TensorDesc::contiguous({rows, r}) : TensorDesc::contiguous({r, rows});
    ctx.reduce_axes(Op::mean, type, type, d.get(), desc, AxisList{layout == 0 ? 1 : 0}, o.get(), nullptr);
    std::vector<std::uint16_t> got(want.size());
    RT_CUDA_CHECK(cudaMemcpy(got.data(), o.get(), got.size() * 2, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (std::size_t j = 0; j < want.size(); ++j)
      if (got[j] != want[j] && ++wrong <= 3)
        ADD_FAILURE() << to_string(type) << " " << what << (layout == 0 ? " rows" : " columns") << " R = " << r
                      << " output " << j << ": got 0x" << std::hex << got[j] << ", want 0x" << want[j] << std::dec;
    EXPECT_EQ(wrong, 0) << to_string(type) << " " << what << (layout == 0 ? " rows" : " columns") << " R = " << r;
  }
}

TEST(Float16, MeansOfManyRowsRoundOnce) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  std::mt19937 rng(71);
  for (DType type : k16) {
    const bool brain = type == DType::bf16;
    const auto to16 = [&](double v) { return brain ? double_to_bf16_bits(v) : double_to_f16_bits(v); };
    for (const std::int64_t r : {1, 2, 3, 4, 7, 100, 1000}) {
      // R = 2 and 3 over 2^21 outputs too: vectors of four, read with the guarded loads
      // (no batched tail for 16-bit means, set AV).
      const std::int64_t rows = r <= 3 ? (std::int64_t{1} << 21) : r <= 100 ? 4096 : 512;
      std::vector<std::uint16_t> data(static_cast<std::size_t>(rows * r)), want(static_cast<std::size_t>(rows));
      for (std::int64_t j = 0; j < rows; ++j) {
        // bf16 down to its subnormals (totals below 2^-100 take the double division).
        const int e = brain ? static_cast<int>(rng() % 174) - 133 : static_cast<int>(rng() % 28) - 20;
        double sum = 0;
        for (std::int64_t k = 0; k < r; ++k) {
          const double v = std::ldexp(static_cast<double>(static_cast<int>(rng() % 513) - 256), e);
          const std::uint16_t bits = to16(v);
          ASSERT_EQ(brain ? bf16_bits_to_float(bits) : f16_bits_to_float(bits), v) << "inputs must be exact";
          data[static_cast<std::size_t>(j * r + k)] = bits;
          sum += v;
        }
        // Within 2^-53 of the exact quotient, which lies 2^-30 or more from a boundary
        // unless on it: rounds to 16 bits as the exact one does.
        want[static_cast<std::size_t>(j)] = to16(sum / static_cast<double>(r));
      }
      expect_means(ctx, type, rows, r, data, want, "scaled integers");
    }
    // Rows of ones and twos summing to s, where s / r lies within half a float ulp (2^-24
    // in [1, 2)) of a boundary m / 2^(p + 1) (m odd, p the format's fraction bits), so
    // that the float quotient is the boundary, and its tie breaks the wrong way.
    const int p = brain ? 7 : 10;
    int rows_found = 0;
    for (std::int64_t r = (brain ? 65536 : 16384) + 1; rows_found < 6 && r < (brain ? 70000 : 20000); ++r) {
      std::vector<std::int64_t> sums;
      for (std::int64_t i = 0; i < (std::int64_t{1} << p); ++i) {
        const std::int64_t m = (std::int64_t{2} << p) + 2 * i + 1;
        const std::int64_t nearest = (m * r + (std::int64_t{1} << p)) >> (p + 1);
        for (std::int64_t sum = nearest - 1; sum <= nearest + 1; ++sum) {
          const std::int64_t off = std::abs((sum << (p + 1)) - m * r);
          if (off == 0 || (off << 24) >= (r << (p + 1)) || sum < r || sum > 2 * r) continue;
          // The float quotient is the boundary itself; keep the rows whose tie breaks the
          // other way than the exact quotient rounds.
          const float in_float = static_cast<float>(sum) / static_cast<float>(r);
          const double q = static_cast<double>(sum) / static_cast<double>(r);
          if ((brain ? float_to_bf16_bits(in_float) : float_to_f16_bits(in_float)) != to16(q)) sums.push_back(sum);
        }
      }
      if (sums.empty()) continue;
      const auto rows = static_cast<std::int64_t>(sums.size());
      std::vector<std::uint16_t> data(static_cast<std::size_t>(rows * r)), want(sums.size());
      const std::uint16_t one = brain ? 0x3f80 : 0x3c00, two = 0x4000;
      for (std::int64_t j = 0; j < rows; ++j) {
        const std::int64_t twos = sums[static_cast<std::size_t>(j)] - r;
        for (std::int64_t k = 0; k < r; ++k) data[static_cast<std::size_t>(j * r + k)] = k < twos ? two : one;
        want[static_cast<std::size_t>(j)] =
            to16(static_cast<double>(sums[static_cast<std::size_t>(j)]) / static_cast<double>(r));
      }
      expect_means(ctx, type, rows, r, data, want, "near a boundary");
      rows_found += static_cast<int>(rows);
    }
    EXPECT_GE(rows_found, 6) << to_string(type) << ": the search found too few rows near a boundary";
  }
}

TEST(Float16, AlongAxesWithOddExtentsAndAViewOfColumns) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  for (DType in : k16)
    for (Op op : {Op::sum, Op::max, Op::min, Op::mean}) {
      // [37, 1031] reduced along each axis, from an element offset of 1.
      const std::int64_t rows = 37, cols = 1031;
      const auto host = testing::make_input(op, in, testing::Pattern::exact, rows * cols + 1, 5);
      DeviceBuffer d(host.bytes.size()), o(cols * 4);
      RT_CUDA_CHECK(cudaMemcpy(d.get(), host.bytes.data(), host.bytes.size(), cudaMemcpyHostToDevice));
      const auto* base = static_cast<const unsigned char*>(d.get()) + 2;
      for (DType out : {in, DType::f32})
        for (int axis : {0, 1}) {
          const TypeRule t = *resolve_types(op, in, out).rule;
          ctx.reduce_axes(op, in, out, base, TensorDesc::contiguous({rows, cols}), AxisList{axis}, o.get(), nullptr);
          const std::int64_t outputs = axis == 0 ? cols : rows, r = axis == 0 ? rows : cols;
          std::vector<unsigned char> got(static_cast<std::size_t>(outputs) * size_of(out));
          RT_CUDA_CHECK(cudaMemcpy(got.data(), o.get(), got.size(), cudaMemcpyDeviceToHost));
          for (std::int64_t j = 0; j < outputs; ++j) {
            // Gather output j's elements into a row of their own for the host reference.
            testing::HostArray line{in, std::vector<unsigned char>(static_cast<std::size_t>(r) * 2)};
            for (std::int64_t k = 0; k < r; ++k) {
              const std::int64_t e = 1 + (axis == 0 ? k * cols + j : j * cols + k);
              std::memcpy(line.bytes.data() + 2 * k, host.bytes.data() + 2 * e, 2);
            }
            const auto expected = testing::expect(op, t, line, 0, static_cast<std::uint64_t>(r));
            std::uint64_t g = 0;
            std::memcpy(&g, got.data() + j * size_of(out), size_of(out));
            ASSERT_EQ(testing::mismatch(t, g, expected, 1 << 12), "")
                << to_string(op) << "<" << to_string(in) << "," << to_string(out) << "> axis " << axis << " output " << j;
          }
        }
    }
}

TEST(Float16, CudaHalfAndBfloat16GoThroughTheTypedApi) {
  RT_REQUIRE_GPU();
  const std::size_t n = 4097;
  std::vector<__half> h(n);
  std::vector<__nv_bfloat16> b(n);
  float sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(static_cast<int>(i % 7) - 3);
    h[i] = __float2half(v);
    b[i] = __float2bfloat16(v);
    sum += v;
  }
  __half* dh = nullptr;
  __nv_bfloat16* db = nullptr;
  float* dsum = nullptr;
  RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dh), n * 2));
  RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&db), n * 2));
  RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dsum), 4));
  RT_CUDA_CHECK(cudaMemcpy(dh, h.data(), n * 2, cudaMemcpyHostToDevice));
  RT_CUDA_CHECK(cudaMemcpy(db, b.data(), n * 2, cudaMemcpyHostToDevice));
  reduce_tune::sum(dh, n, dsum);
  float got = 0;
  RT_CUDA_CHECK(cudaMemcpy(&got, dsum, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, sum);
  EXPECT_EQ(__half2float(reduce_tune::sum_value(dh, n)), sum);
  EXPECT_EQ((reduce_tune::sum_value<__nv_bfloat16, float>(db, n)), sum);
  EXPECT_EQ(__bfloat162float(reduce_tune::max_value(db, n)), 3.0f);
  EXPECT_EQ(__half2float(reduce_tune::min_value(dh, n)), -3.0f);
  EXPECT_EQ(__half2float(reduce_tune::mean_value(dh, n)), static_cast<float>(Half(static_cast<double>(sum) / n)));
  // A bf16 type on an f16 array is the caller's mistake the types cannot see; a wrong
  // output type is one they can: sum<f16, f64> is refused.
  double* dd = nullptr;
  RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dd), 8));
  EXPECT_THROW(reduce_tune::sum(dh, n, dd), InvalidArgument);
  cudaFree(dh);
  cudaFree(db);
  cudaFree(dsum);
  cudaFree(dd);
}

}  // namespace
}  // namespace reduce_tune
