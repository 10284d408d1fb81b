// Axis reductions on the GPU against a host reference: every layout class with odd
// extents, every op and dtype, misaligned bases, permuted, sliced and reversed views,
// NaN in one row, empty extents, and refused arguments followed by a working call.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_env.h"
#include "host_reference.h"
#include "reduce_tune/reduce_tune.h"

namespace reduce_tune {
namespace {

using testing::no_database;

// A device buffer of `count` elements and its host copy.
struct Buffer {
  testing::HostArray host;
  DeviceBuffer device;
};

Buffer upload(const testing::HostArray& host) {
  Buffer b{host, DeviceBuffer(host.bytes.size() + 64)};
  RT_CUDA_CHECK(cudaMemcpy(b.device.get(), host.bytes.data(), host.bytes.size(), cudaMemcpyHostToDevice));
  return b;
}

// Every output of op along `axes` of the view at element `base` of `buffer`, checked
// against the host: each output's elements gathered, then the flat reference.
// Returns the first mismatch, or "".
std::string check(Context& ctx, Op op, const TypeRule& t, const Buffer& buffer, std::int64_t base,
                  const TensorDesc& view, const AxisList& axes) {
  const CanonicalResult c = canonicalize(view, axes);
  if (!c.ok) return "canonicalize: " + c.error;
  const std::uint64_t outputs = c.axes.outputs;
  const std::size_t in_size = size_of(t.in), out_size = size_of(t.out);
  DeviceBuffer out(std::max<std::uint64_t>(outputs, 1) * out_size + 16);
  RT_CUDA_CHECK(cudaMemset(out.get(), 0xa5, std::max<std::uint64_t>(outputs, 1) * out_size + 16));
  ctx.reduce_axes(op, t.in, t.out, static_cast<const unsigned char*>(buffer.device.get()) + base * static_cast<std::int64_t>(in_size),
                  view, axes, out.get(), nullptr);
  std::vector<unsigned char> got(std::max<std::uint64_t>(outputs, 1) * out_size);
  RT_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size(), cudaMemcpyDeviceToHost));

  // Host: walk every index, gather per output (C order over the kept dimensions).
  bool reduced_dim[kMaxRank] = {};
  for (int i = 0; i < axes.count; ++i) reduced_dim[(axes.axes[i] + view.rank) % std::max(view.rank, 1)] = true;
  std::vector<std::vector<std::int64_t>> members(outputs);
  std::int64_t total = 1;
  for (int d = 0; d < view.rank; ++d) total *= view.extents[d];
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t rest = flat, offset = base;
    std::uint64_t j = 0, scale = 1;
    for (int d = view.rank - 1; d >= 0; --d) {
      const std::int64_t i = rest % view.extents[d];
      rest /= view.extents[d];
      offset += i * view.strides[d];
      if (!reduced_dim[d]) {
        j += static_cast<std::uint64_t>(i) * scale;
        scale *= static_cast<std::uint64_t>(view.extents[d]);
      }
    }
    members[j].push_back(offset);
  }
  for (std::uint64_t j = 0; j < outputs; ++j) {
    testing::HostArray gathered{t.in, std::vector<unsigned char>(members[j].size() * in_size)};
    for (std::size_t k = 0; k < members[j].size(); ++k)
      std::memcpy(gathered.bytes.data() + k * in_size,
                  buffer.host.bytes.data() + static_cast<std::size_t>(members[j][k]) * in_size, in_size);
    const auto e = testing::expect(op, t, gathered, 0, members[j].size());
    std::uint64_t bits = 0;
    std::memcpy(&bits, got.data() + j * out_size, out_size);
    const std::string m = testing::mismatch(t, bits, e, 64);
    if (!m.empty())
      return std::string(to_string(op)) + "<" + std::string(to_string(t.in)) + "> " + c.axes.to_string() + " output " +
             std::to_string(j) + " of " + std::to_string(outputs) + ": " + m;
  }
  return {};
}

TypeRule rule(Op op, DType in) { return *resolve_types(op, in, default_out_dtype(op, in)).rule; }

struct Shape {
  TensorDesc view;
  AxisList axes;
};

// Odd extents (1, 2, 3, primes, 2^k +- 1) in each layout class.
std::vector<Shape> odd_shapes() {
  return {
      {TensorDesc::contiguous({3, 5}), {1}},              // rows, tiny
      {TensorDesc::contiguous({1025, 1023}), {1}},        // rows
      {TensorDesc::contiguous({7, 65537}), {1}},          // few long rows: split, one pass
      {TensorDesc::contiguous({2, 1}), {1}},              // R = 1
      {TensorDesc::contiguous({4099, 3}), {1}},           // many tiny rows
      {TensorDesc::contiguous({1023, 1025}), {0}},        // columns, outer = 1
      {TensorDesc::contiguous({131073, 2}), {0}},         // tall, two columns: split
      {TensorDesc::contiguous({13, 17, 19}), {1}},        // [outer, R, inner]
      {TensorDesc::contiguous({13, 17, 19}), {0, 2}},     // general
      {TensorDesc::contiguous({2, 3, 5, 7}), {1, 3}},     // general
      {TensorDesc::contiguous({31, 33, 5}), {0, 1}},      // rows after merging? no: columns of 5
      {TensorDesc::contiguous({257, 31, 2}), {0, 1}},     // R merged, inner 2
      {TensorDesc::contiguous({9, 8191}), {0, 1}},        // flat
      {TensorDesc::contiguous({65537, 7}), {0}},          // dense columns, split
      {TensorDesc::contiguous({3, 4099, 5}), {1}},        // dense columns with an outer
      {TensorDesc::contiguous({3, 1001, 64}), {1}},       // dense columns, the widest
      {TensorDesc::contiguous({100003, 4}), {1}},         // short rows: a lane per element
      {TensorDesc::contiguous({349526, 3}), {1}},         // many short rows: staged through shared memory
      {TensorDesc::contiguous({69907, 15}), {1}},         // the longest staged rows (4-byte types)
      {TensorDesc::contiguous({70001, 1}), {1}},          // R = 1: a copy
      {TensorDesc::contiguous({100, 10007}), {1}},        // rows split, two passes
      {TensorDesc::contiguous({4097, 100}), {0}},         // columns split, two passes
      {TensorDesc::strided({1000, 8}, {100, 1}), {0}},    // sliced columns, split, one pass
  };
}

TEST(Axes, EveryLayoutClassEveryOpAndDtypeMatchesTheHost) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  int checked = 0;
  // Quick mode (the sanitizer pass): one 4-byte and one 8-byte type.
  const std::vector<DType> dtypes = testing::quick_mode() ? std::vector<DType>{DType::f32, DType::i64}
                                                          : std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  for (DType dtype : dtypes)
    for (Op op : kAllOps) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 1100000, 7));
      for (const Shape& s : odd_shapes()) {
        EXPECT_EQ(check(ctx, op, t, buffer, 0, s.view, s.axes), "");
        ++checked;
      }
    }
  std::printf("[ counts   ] axes: %d (op, dtype, shape) cases\n", checked);
}

TEST(Axes, MisalignedBasesAndRowStarts) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  for (DType dtype : {DType::f32, DType::f64, DType::i32}) {
    const TypeRule t = rule(Op::sum, dtype);
    const Buffer buffer = upload(testing::make_input(Op::sum, dtype, testing::Pattern::exact, 200000, 9));
    for (std::int64_t base : {0, 1, 2, 3, 5}) {
      // Rows of odd length (each row starts at another alignment), rows sliced from a
      // wider tensor, and a long row that is split.
      EXPECT_EQ(check(ctx, Op::sum, t, buffer, base, TensorDesc::contiguous({37, 1001}), {1}), "") << base;
      EXPECT_EQ(check(ctx, Op::sum, t, buffer, base, TensorDesc::strided({37, 999}, {1003, 1}), {1}), "") << base;
      EXPECT_EQ(check(ctx, Op::sum, t, buffer, base, TensorDesc::contiguous({2, 70001}), {1}), "") << base;
      EXPECT_EQ(check(ctx, Op::max, rule(Op::max, dtype), buffer, base, TensorDesc::contiguous({101, 33}), {0}), "")
          << base;
    }
  }
}

TEST(Axes, PermutedSlicedAndReversedViews) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  std::mt19937 rng(5);
  const std::size_t count = 1 << 20;
  struct Kind {
    Op op;
    DType dtype;
  };
  const Kind kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::i32}, {Op::mean, DType::f64}, {Op::prod, DType::i64},
                        {Op::min, DType::u32}};
  int views = 0;
  for (const Kind& k : kinds) {
    const Buffer buffer = upload(testing::make_input(k.op, k.dtype, testing::Pattern::exact, count, 11));
    for (int trial = 0; trial < 40; ++trial) {
      const int rank = 1 + static_cast<int>(rng() % 4);
      std::vector<int> order(static_cast<std::size_t>(rank));
      for (int d = 0; d < rank; ++d) order[static_cast<std::size_t>(d)] = d;
      std::shuffle(order.begin(), order.end(), rng);
      TensorDesc view;
      view.rank = rank;
      std::int64_t step = 1, base = 0;
      for (int i = rank - 1; i >= 0; --i) {
        const int d = order[static_cast<std::size_t>(i)];
        view.extents[d] = 1 + static_cast<std::int64_t>(rng() % 40);
        const int kind = static_cast<int>(rng() % 6);
        const std::int64_t slice = kind == 0 ? 3 : 1;
        view.strides[d] = step * slice;
        if (kind == 1) {  // reversed: start at the far end
          base += (view.extents[d] - 1) * step;
          view.strides[d] = -step;
        }
        step *= view.extents[d] * slice + (kind == 2 ? 5 : 0);
      }
      if (static_cast<std::size_t>(step + base) >= count) continue;
      AxisList axes;
      for (int d = 0; d < rank; ++d)
        if (rng() % 2) axes.axes[axes.count++] = d;
      EXPECT_EQ(check(ctx, k.op, rule(k.op, k.dtype), buffer, base, view, axes), "") << "trial " << trial;
      ++views;
    }
  }
  std::printf("[ counts   ] axes: %d random views\n", views);
}

TEST(Axes, NanInOneRowAndInfinities) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  for (Op op : {Op::sum, Op::max, Op::min, Op::mean}) {
    const TypeRule t = rule(op, DType::f32);
    testing::HostArray host = testing::make_input(op, DType::f32, testing::Pattern::exact, 64 * 1000, 3);
    float* x = reinterpret_cast<float*>(host.bytes.data());
    x[17 * 1000 + 500] = std::nanf("");                         // row 17
    x[40 * 1000 + 3] = std::numeric_limits<float>::infinity();  // row 40
    x[41 * 1000 + 9] = -std::numeric_limits<float>::infinity(); // row 41
    const Buffer buffer = upload(host);
    EXPECT_EQ(check(ctx, op, t, buffer, 0, TensorDesc::contiguous({64, 1000}), {1}), "");
    EXPECT_EQ(check(ctx, op, t, buffer, 0, TensorDesc::contiguous({1000, 64}), {0}), "");  // NaN in one column
  }
}

TEST(Axes, EmptyExtentsGiveTheIdentityOrWriteNothing) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const Buffer buffer = upload(testing::make_input(Op::sum, DType::f32, testing::Pattern::exact, 1024, 1));
  for (Op op : kAllOps) {
    // Reduced extent 0: every output is the identity (mean: NaN).
    EXPECT_EQ(check(ctx, op, rule(op, DType::f32), buffer, 0, TensorDesc::contiguous({6, 0}), {1}), "");
    EXPECT_EQ(check(ctx, op, rule(op, DType::f32), buffer, 0, TensorDesc::contiguous({0, 6}), {0}), "");
  }
  // No outputs: nothing written, not even through a null output pointer.
  ctx.reduce_axes(Op::sum, DType::f32, DType::f32, buffer.device.get(), TensorDesc::contiguous({0, 6}), {1}, nullptr,
                  nullptr);
  RT_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(Axes, RefusedArgumentsLeaveTheContextWorking) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const Buffer buffer = upload(testing::make_input(Op::sum, DType::f32, testing::Pattern::exact, 4096, 2));
  DeviceBuffer out(4096 * 4);
  auto* in = static_cast<const float*>(buffer.device.get());
  auto refused = [&](auto&& call, const char* needle) {
    try {
      call();
      return std::string("accepted");
    } catch (const InvalidArgument& e) {
      return std::string(e.what()).find(needle) == std::string::npos ? std::string("message: ") + e.what()
                                                                      : std::string();
    }
  };
  EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, in, TensorDesc::contiguous({64, 64}), {2}, out.get(), nullptr); },
                    "axis 2 is out of range"), "");
  EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, in, TensorDesc::contiguous({64, 64}), {1, 1}, out.get(), nullptr); },
                    "repeated"), "");
  // The output inside the input view.
  EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, in, TensorDesc::contiguous({64, 64}), {1},
                                          static_cast<float*>(buffer.device.get()) + 100, nullptr); },
                    "overlaps"), "");
  // A view reaching past its allocation.
  EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, in, TensorDesc::contiguous({65, 64}), {1}, out.get(), nullptr); },
                    "past the end"), "");
  // Host memory as input and as output.
  std::vector<float> host(4096, 1.0f);
  int pageable = 0;
  RT_CUDA_CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
  if (!pageable) {
    EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, host.data(), TensorDesc::contiguous({64, 64}), {1}, out.get(), nullptr); },
                      "pageable"), "");
    EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, in, TensorDesc::contiguous({64, 64}), {1}, host.data(), nullptr); },
                      "pageable"), "");
  }
  // Misaligned output.
  EXPECT_EQ(refused([&] { ctx.reduce_axes(Op::sum, DType::f32, DType::f32, in, TensorDesc::contiguous({64, 64}), {1},
                                          static_cast<unsigned char*>(out.get()) + 2, nullptr); },
                    "aligned"), "");
  RT_CUDA_CHECK(cudaGetLastError());
  EXPECT_EQ(check(ctx, Op::sum, rule(Op::sum, DType::f32), buffer, 0, TensorDesc::contiguous({64, 64}), {1}), "");
  const AxisExplanation e = ctx.explain_axes(Op::sum, DType::f32, DType::f32, TensorDesc::contiguous({64, 64}), {0});
  EXPECT_EQ(e.shape.layout, AxisLayout::columns);
  EXPECT_NE(e.to_string().find("columns"), std::string::npos) << e.to_string();
}

}  // namespace
}  // namespace reduce_tune
