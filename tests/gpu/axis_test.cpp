// Axis reductions on the GPU against a host reference: every layout class with odd
// extents, every op and dtype, misaligned bases, permuted, sliced and reversed views,
// NaN in one row, empty extents, and refused arguments followed by a working call.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "../common/axis_grid_class.h"
#include "gpu_env.h"
#include "host_reference.h"
#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/reduce_tune.h"
#include "reduce_tune/tuner/axis_tuner.h"
#include "reduce_tune/tuner/tuner.h"

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

// A zeroed workspace of a direct kernel launch's own: the ticket, then `partial_bytes`
// of partials.
struct LaunchWorkspace {
  DeviceBuffer buffer;
  WorkspaceView view;
  explicit LaunchWorkspace(std::size_t partial_bytes) : buffer(kWorkspaceHeaderBytes + partial_bytes + 16) {
    RT_CUDA_CHECK(cudaMemset(buffer.get(), 0, buffer.size()));
    view.ticket = buffer.as<unsigned int>();
    view.partials = static_cast<unsigned char*>(buffer.get()) + kWorkspaceHeaderBytes;
    view.partials_bytes = partial_bytes;
  }
};

// The kernels of `spec` compiled for `arch`, loaded as a set of one program.
KernelSet compile_axis_kernels(Compiler& compiler, const AxisKernelSpec& spec, int arch) {
  return KernelSet(std::make_shared<const CompiledProgram>(compiler.compile(make_axis_compile_request(spec, arch))), 1,
                   arch);
}

// Every output of op along `axes` of the view at element `base` of `buffer`, checked
// against the host: each output's elements gathered, then the flat reference.
// Returns the first mismatch, or "".
// `reduce(in, out)` reduces the view at `in` into `out` (the runtime's call, or a
// given kernel's launch).
std::string check_with(const std::function<void(const void*, void*)>& reduce, Op op, const TypeRule& t,
                       const Buffer& buffer, std::int64_t base, const TensorDesc& view, const AxisList& axes) {
  const CanonicalResult c = canonicalize(view, axes);
  if (!c.ok) return "canonicalize: " + c.error;
  const std::uint64_t outputs = c.axes.outputs;
  const std::size_t in_size = size_of(t.in), out_size = size_of(t.out);
  DeviceBuffer out(std::max<std::uint64_t>(outputs, 1) * out_size + 16);
  RT_CUDA_CHECK(cudaMemset(out.get(), 0xa5, std::max<std::uint64_t>(outputs, 1) * out_size + 16));
  reduce(static_cast<const unsigned char*>(buffer.device.get()) + base * static_cast<std::int64_t>(in_size), out.get());
  std::vector<unsigned char> got(std::max<std::uint64_t>(outputs, 1) * out_size + 16);
  RT_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size(), cudaMemcpyDeviceToHost));
  // The 16 bytes after the last output keep their fill: no vector store ran past it.
  for (std::size_t k = got.size() - 16; k < got.size(); ++k)
    if (got[k] != 0xa5)
      return std::string(to_string(op)) + "<" + std::string(to_string(t.in)) + "> " + c.axes.to_string() +
             ": wrote byte " + std::to_string(k - (got.size() - 16)) + " past the last output";

  const auto compare = [&](std::uint64_t j, const testing::Expectation& e) -> std::string {
    std::uint64_t bits = 0;
    std::memcpy(&bits, got.data() + j * out_size, out_size);
    const std::string m = testing::mismatch(t, bits, e, 64);
    if (m.empty()) return {};
    return std::string(to_string(op)) + "<" + std::string(to_string(t.in)) + "> " + c.axes.to_string() + " output " +
           std::to_string(j) + " of " + std::to_string(outputs) + ": " + m;
  };
  // Host, C-contiguous [outputs, R] along 1 (the most common view, and the largest the
  // tests take): each output's elements are one run of the buffer.
  if (view.rank == 2 && axes.count == 1 && (axes.axes[0] == 1 || axes.axes[0] == -1) && view.strides[1] == 1 &&
      view.strides[0] == view.extents[1]) {
    const std::uint64_t r = static_cast<std::uint64_t>(view.extents[1]);
    for (std::uint64_t j = 0; j < outputs; ++j) {
      const std::string m =
          compare(j, testing::expect(op, t, buffer.host, static_cast<std::size_t>(base) + j * r, r));
      if (!m.empty()) return m;
    }
    return {};
  }
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
    const std::string m = compare(j, testing::expect(op, t, gathered, 0, members[j].size()));
    if (!m.empty()) return m;
  }
  return {};
}

// A view and the axes it reduces.
struct ViewAxes {
  TensorDesc view;
  AxisList axes;
};

// A view, its axes, and a piece of the config the built-in choice names for it on a GPU
// of 132 SMs.
struct ViewConfig {
  TensorDesc view;
  AxisList axes;
  const char* config;
};

// The split of an explained kernel ("none", "ticket", "two_pass", ...), or "" where its
// config names none.
std::string split_of(const std::string& kernel) {
  const std::size_t at = kernel.find("split=");
  if (at == std::string::npos) return "";
  const std::size_t from = at + 6;
  return kernel.substr(from, kernel.find(',', from) - from);
}

std::string check(Context& ctx, Op op, const TypeRule& t, const Buffer& buffer, std::int64_t base,
                  const TensorDesc& view, const AxisList& axes) {
  return check_with([&](const void* in, void* out) { ctx.reduce_axes(op, t.in, t.out, in, view, axes, out, nullptr); },
                    op, t, buffer, base, view, axes);
}

TypeRule rule(Op op, DType in) { return *resolve_types(op, in, default_out_dtype(op, in)).rule; }

// Each (op, dtype) of `kinds` over each case, against the host from an aligned base and
// from one element in (over `elements` of make_input's exact data from `seed`): the
// explanation names the case's config on a GPU of 132 SMs, and passes `also`. Returns the
// number of cases checked.
int check_views_name_their_configs(Context& ctx, const std::vector<ViewConfig>& cases,
                                   const std::vector<std::pair<Op, DType>>& kinds, std::size_t elements,
                                   std::uint64_t seed,
                                   const std::function<void(const AxisExplanation&)>& also = nullptr) {
  const bool on_132 = testing::test_device()->sm_count == 132;
  int checked = 0;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, elements, seed));
    for (const ViewConfig& c : cases) {
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
      if (also) also(e);
      if (on_132) {
        EXPECT_NE(e.kernel.find(c.config), std::string::npos) << e.to_string();
      }
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, base, c.view, c.axes), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
  }
  return checked;
}

// `reduce` (as check_with takes it) writing into an output one element past the vector
// grid, then copied into check_with's output.
std::function<void(const void*, void*)> off_grid_output(const TypeRule& t, std::uint64_t outputs,
                                                        std::function<void(const void*, void*)> reduce) {
  return [t, outputs, reduce](const void* in, void* out) {
    DeviceBuffer scratch((outputs + 1) * size_of(t.out));
    void* shifted = static_cast<unsigned char*>(scratch.get()) + size_of(t.out);
    reduce(in, shifted);
    RT_CUDA_CHECK(cudaMemcpy(out, shifted, outputs * size_of(t.out), cudaMemcpyDeviceToDevice));
  };
}

// fn(dtype) for every dtype, each in a thread of its own: the kernels a test needs compile
// in parallel (NVRTC runs outside the runtime's locks), which is most of these tests' time,
// and the GPU work interleaves on the legacy default stream. gtest's assertions are
// thread-safe; an exception fails the test with the dtype named.
void for_each_dtype_in_threads(const std::vector<DType>& dtypes, const std::function<void(DType)>& fn) {
  std::vector<std::thread> threads;
  for (DType dtype : dtypes)
    threads.emplace_back([&fn, dtype] {
      try {
        fn(dtype);
      } catch (const std::exception& e) {
        ADD_FAILURE() << to_string(dtype) << ": " << e.what();
      }
    });
  for (auto& t : threads) t.join();
}

// fn(op, dtype) for each kind, each in a thread of its own, as for_each_dtype_in_threads.
void for_each_kind_in_threads(const std::vector<std::pair<Op, DType>>& kinds,
                              const std::function<void(Op, DType)>& fn) {
  std::vector<std::thread> threads;
  for (const auto& [op, dtype] : kinds)
    threads.emplace_back([&fn, op = op, dtype = dtype] {
      try {
        fn(op, dtype);
      } catch (const std::exception& e) {
        ADD_FAILURE() << to_string(op) << "<" << to_string(dtype) << ">: " << e.what();
      }
    });
  for (auto& t : threads) t.join();
}

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
      {TensorDesc::contiguous({2, 1048579}), {1}},        // few very long rows: splits take tiles in turn
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
      {TensorDesc::contiguous({3, 4099, 5}), {1}},        // dense columns with an outer: vector and scalar slices
      {TensorDesc::contiguous({3, 1001, 64}), {1}},       // dense columns, the widest
      {TensorDesc::contiguous({20011, 7}), {0}},          // dense columns, a step of 7-element rows and vectors
      {TensorDesc::contiguous({4, 262144}), {0}},         // many short columns: 4 adjacent outputs a thread
      {TensorDesc::contiguous({100003, 4}), {1}},         // short rows: a lane per element
      {TensorDesc::contiguous({349526, 3}), {1}},         // many short rows: a thread per row
      {TensorDesc::contiguous({69907, 15}), {1}},         // misaligned short rows: scalar loads
      {TensorDesc::contiguous({70001, 1}), {1}},          // R = 1: a copy, columns [1, 70001]
      {TensorDesc::contiguous({1, 262144}), {0}},         // R = 1 on the 16-byte grid: vectors of outputs
      {TensorDesc::strided({5003, 1}, {3, 1}), {1}},      // R = 1 over strided outputs: rows of one element
      {TensorDesc::contiguous({100, 10007}), {1}},        // rows split, two passes
      {TensorDesc::contiguous({4097, 100}), {0}},         // columns split, two passes
      {TensorDesc::strided({1000, 8}, {100, 1}), {0}},    // sliced columns, split, one pass
  };
}

TEST(Axes, EveryLayoutClassEveryOpAndDtypeMatchesTheHost) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  std::atomic<int> checked{0};
  // Quick mode (the sanitizer pass): one 4-byte and one 8-byte type.
  const std::vector<DType> dtypes = testing::quick_mode() ? std::vector<DType>{DType::f32, DType::i64}
                                                          : std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    for (Op op : kAllOps) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 2100000, 7));
      for (const Shape& s : odd_shapes()) {
        EXPECT_EQ(check(ctx, op, t, buffer, 0, s.view, s.axes), "");
        ++checked;
      }
    }
  });
  std::printf("[ counts   ] axes: %d (op, dtype, shape) cases\n", checked.load());
}

// Reducing only extents of 1 is a converting copy: over contiguous outputs it runs the
// columns kernels ([1, inner]: 16-byte vectors of outputs on the grid, a thread per output
// or four a pass off it), over strided ones rows of one element. Every op and dtype, the
// 16-bit sums into f32 too, from an aligned and a misaligned base.
TEST(Axes, UnitReducedExtentsAreConvertingCopies) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<Shape> shapes = {
      {TensorDesc::contiguous({70001, 1}), {1}},        // off the grid: a thread per output
      {TensorDesc::contiguous({1, 262144}), {0}},       // on the grid: vectors of four outputs
      {TensorDesc::contiguous({600001, 1}), {1}},       // off the grid, many: four outputs a pass (4-byte)
      {TensorDesc::contiguous({3, 1, 4099}), {1}},      // kept dimensions merged around the unit axis
      {TensorDesc::strided({5003, 1}, {3, 1}), {1}},    // strided outputs: rows of one element
      {TensorDesc::contiguous({1, 1}), {0, 1}},         // one element: flat
  };
  std::atomic<int> checked{0};
  for_each_dtype_in_threads(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)), [&](DType dtype) {
    for (Op op : kAllOps) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 1300000, 7));
      for (const Shape& s : shapes)
        for (std::int64_t base : {0, 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, base, s.view, s.axes), "");
          ++checked;
        }
    }
  });
  for (DType dtype : {DType::f16, DType::bf16}) {
    const TypeRule t = *resolve_types(Op::sum, dtype, DType::f32).rule;
    const Buffer buffer = upload(testing::make_input(Op::sum, dtype, testing::Pattern::exact, 1300000, 7));
    for (const Shape& s : shapes)
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, Op::sum, t, buffer, base, s.view, s.axes), "");
        ++checked;
      }
  }
  // The contiguous copies are columns, the strided one rows.
  EXPECT_EQ(ctx.explain_axes(Op::sum, DType::f32, DType::f32, shapes[1].view, shapes[1].axes).shape.layout,
            AxisLayout::columns);
  EXPECT_EQ(ctx.explain_axes(Op::sum, DType::f32, DType::f32, shapes[4].view, shapes[4].axes).shape.layout,
            AxisLayout::rows);
  std::printf("[ counts   ] unit extents: %d (op, dtype, shape, base) cases\n", checked.load());
}

// `spec` compiled and launched directly on the view at `buffer`'s start and an element
// into it, writing its outputs where check_with puts them (and, with `output_off_grid`,
// also an element off the vector grid): each against the host. Returns the cases checked.
int check_launched(Compiler& compiler, Launcher& launcher, const DeviceKey& device, const AxisKernelSpec& spec,
                   const Buffer& buffer, const ViewAxes& v, bool output_off_grid) {
  const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
  const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
  const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
  const std::function<void(const void*, void*)> direct = [&](const void* in, void* out) {
    enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, in, out, nullptr, nullptr);
  };
  int checked = 0;
  for (std::int64_t base : {0, 1}) {
    EXPECT_EQ(check_with(direct, spec.op, spec.types, buffer, base, v.view, v.axes), "")
        << to_string(spec) << " " << shape.to_string() << " base " << base;
    ++checked;
    if (!output_off_grid) continue;
    EXPECT_EQ(check_with(off_grid_output(spec.types, shape.outputs, direct), spec.op, spec.types, buffer, base, v.view,
                         v.axes),
              "")
        << to_string(spec) << " base " << base << ", the output off the grid";
    ++checked;
  }
  return checked;
}
int check_launched_on_and_off_the_grid(Compiler& compiler, Launcher& launcher, const DeviceKey& device,
                                       const AxisKernelSpec& spec, const Buffer& buffer, const ViewAxes& v) {
  return check_launched(compiler, launcher, device, spec, buffer, v, true);
}

// Converting copies (R = 1 over one contiguous run) take the short_columns family at
// unroll=1, a vector of outputs a thread: the built-in choice for every op and dtype, and
// every such config the tuner tries for a few of them, against the host, over fewer
// outputs than a vector, runs that end inside a vector, and one slice after another;
// from an element into the input (scalar loads) and into an output an element off the
// vector grid (scalar stores); 16-bit sums into f32 (outputs wider than the inputs).
TEST(Axes, ConvertingCopiesReadAVectorAThread) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const DeviceKey device = *testing::test_device();
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  const ViewAxes views[] = {{TensorDesc::contiguous({1, 7}), {0}},
                            {TensorDesc::contiguous({2053, 1}), {1}},
                            {TensorDesc::contiguous({1, 262151}), {0}},
                            {TensorDesc::contiguous({5, 1, 4096}), {1}}};
  std::atomic<int> checked{0}, copies{0};
  for_each_dtype_in_threads(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)), [&](DType dtype) {
    for (Op op : kAllOps) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 262151 + 16, 31));
      for (const ViewAxes& v : views) {
        const std::uint64_t outputs = canonicalize(v.view, v.axes).axes.outputs;
        const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, v.view, v.axes);
        EXPECT_EQ(e.kernel.find(std::string(to_string(op)) + "<"), 0u) << e.to_string();
        copies += e.kernel.find("> short_columns:") != std::string::npos;
        EXPECT_NE(e.kernel.find("> short_columns:"), std::string::npos) << e.to_string();
        const auto runtime = [&](const void* in, void* out) {
          ctx.reduce_axes(op, t.in, t.out, in, v.view, v.axes, out, nullptr);
        };
        for (std::int64_t base : {0, 1}) {
          EXPECT_EQ(check_with(runtime, op, t, buffer, base, v.view, v.axes), "") << e.kernel << " base " << base;
          EXPECT_EQ(check_with(off_grid_output(t, outputs, runtime), op, t, buffer, base, v.view, v.axes), "")
              << e.kernel << " base " << base << ", the output off the grid";
          checked += 2;
        }
      }
    }
  });
  // Every candidate of the family, launched directly, for a few kinds.
  const TypeRule kinds[] = {rule(Op::sum, DType::f32), rule(Op::max, DType::f16), rule(Op::mean, DType::bf16),
                            rule(Op::prod, DType::i64), *resolve_types(Op::sum, DType::f16, DType::f32).rule};
  const Op kind_ops[] = {Op::sum, Op::max, Op::mean, Op::prod, Op::sum};
  int forced = 0;
  for (int k = 0; k < 5; ++k) {
    const Op op = kind_ops[k];
    const TypeRule& t = kinds[k];
    const Buffer buffer = upload(testing::make_input(op, t.in, testing::Pattern::exact, 262151 + 16, 37));
    const ViewAxes& v = views[2];
    const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
    for (const AxisKernelSpec& spec : axis_candidates(op, t, shape, device.sm_count)) {
      if (spec.family != AxisFamily::short_columns) continue;
      ++forced;
      checked += check_launched_on_and_off_the_grid(compiler, launcher, device, spec, buffer, v);
    }
  }
  std::printf("[ counts   ] converting copies: %d cases, %d built-in copies, %d copy configs forced\n", checked.load(),
              copies.load(), forced);
  EXPECT_EQ(copies.load(), 4 * 5 * 7);
  EXPECT_EQ(forced, 5 * 16);  // four blocks, a vector or an element a thread, capped or not
}

// 16-bit columns of R = 2 to 4 over 2^21 outputs and more on the 16-byte grid take the
// short_columns family, eight outputs a thread with every row's load in flight: the
// built-in choice for sum, min, max and mean of f16 and bf16 over one slice, four slices
// and padded rows, from the base and from 16 bytes into the buffer (a base off the grid
// takes the columns program); then short_columns configs forced at every round of rows
// and block the tuner tries, over R that is and is not a multiple of the round, slices,
// and a base and an output off the grid (read an element at a time), for 16- and 4- and
// 8-byte elements and f16 sums into f32. Each against the host.
TEST(Axes, ShortColumnsReadEveryRowOfAVectorAtOnce) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const DeviceKey device = *testing::test_device();
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  const ViewAxes builtin[] = {{TensorDesc::contiguous({2, 2097152}), {0}},
                              {TensorDesc::contiguous({4, 3, 524288}), {1}},                    // four slices
                              {TensorDesc::strided({3, 2097160}, {2097168, 1}), {0}}};        // padded rows
  std::atomic<int> checked{0}, taken{0};
  for_each_dtype_in_threads({DType::f16, DType::bf16}, [&](DType dtype) {
    for (Op op : {Op::sum, Op::min, Op::max, Op::mean}) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 3 * 2097168 + 16, 41));
      for (const ViewAxes& v : builtin)
        for (std::int64_t base : {0, 8, 1}) {
          const void* at = static_cast<const unsigned char*>(buffer.device.get()) + base * 2;
          const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, v.view, v.axes, at);
          const bool short_columns = e.kernel.find("> short_columns:") != std::string::npos;
          EXPECT_EQ(short_columns, base != 1) << e.to_string() << " base " << base;
          taken += short_columns;
          EXPECT_EQ(check(ctx, op, t, buffer, base, v.view, v.axes), "") << e.kernel << " base " << base;
          ++checked;
        }
    }
  });
  const ViewAxes forced_views[] = {{TensorDesc::contiguous({2, 4096}), {0}},
                                   {TensorDesc::contiguous({5, 8200}), {0}},
                                   {TensorDesc::contiguous({13, 1000}), {0}},
                                   {TensorDesc::contiguous({3, 7, 512}), {1}},
                                   {TensorDesc::contiguous({1, 1003}), {0}}};
  const std::pair<Op, TypeRule> kinds[] = {{Op::sum, rule(Op::sum, DType::f16)},
                                           {Op::mean, rule(Op::mean, DType::bf16)},
                                           {Op::sum, *resolve_types(Op::sum, DType::f16, DType::f32).rule},
                                           {Op::max, rule(Op::max, DType::f32)},
                                           {Op::min, rule(Op::min, DType::i64)}};
  int forced = 0;
  for (const auto& [op, t] : kinds) {
    const Buffer buffer = upload(testing::make_input(op, t.in, testing::Pattern::exact, 13 * 8200 + 16, 43));
    const std::uint32_t vec = static_cast<std::uint32_t>(16 / size_of(t.in));
    for (const ViewAxes& v : forced_views) {
      const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
      for (std::uint32_t block : {128u, 256u})
        for (std::uint32_t unroll : {1u, 2u, 4u, 8u}) {
          AxisKernelSpec spec;
          spec.op = op;
          spec.types = t;
          spec.family = AxisFamily::short_columns;
          spec.block = block;
          spec.group = 1;
          spec.vec = vec;
          spec.unroll = unroll;
          ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
          if (!axis_spec_mismatch(spec, shape).empty()) {
            EXPECT_TRUE(unroll == 1 && shape.reduced > 1) << to_string(spec) << " " << shape.to_string();
            continue;
          }
          ++forced;
          checked += check_launched_on_and_off_the_grid(compiler, launcher, device, spec, buffer, v);
        }
    }
  }
  std::printf("[ counts   ] short columns: %d cases, %d built-in choices short_columns, %d configs forced\n",
              checked.load(), taken.load(), forced);
  EXPECT_EQ(taken.load(), 2 * 4 * 3 * 2);
  EXPECT_EQ(forced, 5 * 2 * (4 * 3 + 4));
}

// Views that reduce nothing (an extent-1 reduced dimension) and whose densest kept
// dimension is not the outputs' innermost: copies the transpose family makes in 32 x 32
// tiles (the staged reorder's copy is one). Tiles cut at both edges (extents 8, 31, 33,
// 100, 1025), other kept dimensions outside, between and inside the two it transposes,
// reversed ones, a densest dimension of stride 2, and a misaligned base; every op and
// dtype (converting copies: 16-bit sums into f32). Each view must take the transpose
// family, so that a rule change that moves them off it fails here.
TEST(Axes, TransposedCopiesTakeTilesOfBothDimensions) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<Shape> shapes = {
      {TensorDesc::strided({33, 1, 100}, {1, 5, 33}), {1}},            // [100, 33] transposed
      {TensorDesc::strided({1025, 8, 1}, {1, 1025, 1}), {2}},          // the least extents in b
      {TensorDesc::strided({8, 1, 31}, {1, 1, 8}), {1}},               // and in a
      {TensorDesc::strided({3, 40, 1, 70}, {2800, 1, 1, 40}), {2}},    // a batch outside
      {TensorDesc::strided({40, 3, 70, 1}, {1, 3000, 40, 1}), {3}},    // a batch between
      {TensorDesc::strided({33, 1, 5, 64}, {1, 1, 33, 165}), {1}},     // a batch inside (a, batch, b)
      {TensorDesc::strided({2, 33, 3, 65, 1}, {6435, 1, 2145, 33, 1}), {4}},  // two batches
      {TensorDesc::strided({64, 1, 48}, {2, 1, 128}), {1}},            // a of stride 2
      {TensorDesc::strided({3, 50, 1, 40}, {-2000, 1, 1, -50}), {2}},  // reversed batch and b
  };
  // The reversed view starts at its far end: element 2000 * 2 + 50 * 39.
  const std::int64_t reversed_base = 2000 * 2 + 50 * 39;
  std::atomic<int> checked{0};
  for (const Shape& s : shapes) {
    const std::string kernel = ctx.explain_axes(Op::sum, DType::f32, DType::f32, s.view, s.axes).kernel;
    EXPECT_NE(kernel.find(" transpose:"), std::string::npos) << kernel;
  }
  for_each_dtype_in_threads(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)), [&](DType dtype) {
    const Buffer buffer = upload(testing::make_input(Op::sum, dtype, testing::Pattern::exact, 20000, 11));
    std::vector<Op> ops(std::begin(kAllOps), std::end(kAllOps));
    if (testing::quick_mode()) ops = {Op::max};
    for (Op op : ops) {
      const TypeRule t = rule(op, dtype);
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        const std::int64_t first = i + 1 == shapes.size() ? reversed_base : 0;
        for (std::int64_t base : {first, first + 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, base, shapes[i].view, shapes[i].axes), "") << "shape " << i;
          ++checked;
        }
      }
    }
  });
  for (DType dtype : {DType::f16, DType::bf16}) {
    const TypeRule t = *resolve_types(Op::sum, dtype, DType::f32).rule;
    const Buffer buffer = upload(testing::make_input(Op::sum, dtype, testing::Pattern::exact, 20000, 7));
    EXPECT_EQ(check(ctx, Op::sum, t, buffer, 0, shapes[0].view, shapes[0].axes), "");
    ++checked;
  }
  // NaN and infinities keep their place.
  for (testing::Pattern pattern : {testing::Pattern::nan, testing::Pattern::mixed_inf}) {
    const Buffer special = upload(testing::make_input(Op::max, DType::f32, pattern, 20000, 3));
    EXPECT_EQ(check(ctx, Op::max, rule(Op::max, DType::f32), special, 0, shapes[3].view, shapes[3].axes), "");
  }
  std::printf("[ counts   ] transposed copies: %d (op, dtype, shape, base) cases\n", checked.load());
}

// The built-in choice on either side of its columns rules' edges, through the runtime
// with no database: dense rows of 65 .. 256 outputs (from R = 2^16 where a row holds 240
// bytes or more, from 2^17 otherwise), 16-bit dense columns with eight loads in flight
// (tiles of R up to 32 outputs, contiguous splits past them), and 16-bit columns of four
// outputs a thread walking R >= 8 with eight loads in flight, on the vector grid and off
// it; one slice of up to 16 f32 outputs (16-bit sums: 8, below 2^22 elements) read dense
// from 2^17 elements and R = 2^15 (16-bit: 2^16), split in interleaved steps with four
// loads in flight; 16-bit max, and 17 outputs, in tiles of eight steps (and the columns
// program up to 2^20 elements).
// Each case names the kernel it means to run (for max where it differs), so that a rule
// change that moves it off the path it tests fails here too. Every case runs at an
// aligned base and one element past it (scalar loads). In quick mode (the sanitizer run):
// f16 sums only.
// The built-in choice (no database) over columns [r, inner]: it runs `meant` where given
// (a part of the config text the runtime explains; one naming parameters but no unroll
// means not unroll=8; a family alone, "columns:", any config of it) and matches the host
// at bases 0 and 1.
// The built-in choice (no database) over [a, b] along `axis`: as above.
void expect_builtin(Context& ctx, Op op, const TypeRule& t, const Buffer& buffer, std::int64_t a, std::int64_t b,
                    int axis, const std::string* meant, std::atomic<int>& checked) {
  const TensorDesc view = TensorDesc::contiguous({a, b});
  if (meant != nullptr) {
    const std::string kernel = ctx.explain_axes(op, t.in, t.out, view, {axis}).kernel;
    EXPECT_NE(kernel.find(*meant), std::string::npos)
        << to_string(t.in) << " " << a << " x " << b << " along " << axis << " ran " << kernel << ", meant " << *meant;
    if (meant->find("unroll") == std::string::npos && meant->find('=') != std::string::npos) {
      EXPECT_EQ(kernel.find("unroll=8"), std::string::npos) << kernel;
    }
  }
  for (std::int64_t base : {0, 1}) {
    EXPECT_EQ(check(ctx, op, t, buffer, base, view, {axis}), "") << a << " x " << b << " along " << axis << " base "
                                                                 << base;
    ++checked;
  }
}

void expect_builtin_columns(Context& ctx, Op op, const TypeRule& t, const Buffer& buffer, std::int64_t r,
                            std::int64_t inner, const std::string* meant, std::atomic<int>& checked) {
  expect_builtin(ctx, op, t, buffer, r, inner, 0, meant, checked);
}

// A view [a, b] and a part of the config text of the kernel its built-in choice means to run.
struct BuiltinCase {
  std::int64_t a, b;
  const char* kernel;
};

// The (dtype, op) pairs the built-in columns tests run, a thread per dtype: f16 sum alone
// in quick mode; f32, f16 and bf16, sum and max otherwise.
void for_each_columns_rule_case(const std::function<void(DType, Op, const TypeRule&)>& body) {
  const bool quick = testing::quick_mode();
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16}
                                          : std::vector<DType>{DType::f32, DType::f16, DType::bf16};
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    for (Op op : {Op::sum, Op::max}) {
      if (quick && op != Op::sum) continue;
      body(dtype, op, rule(op, dtype));
    }
  });
}

TEST(Axes, BuiltInChoiceAtItsColumnsRulesEdges) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  struct Case {
    std::int64_t r, inner;
    const char* kernel;  // a part of the config text the runtime explains
    const char* max_kernel = nullptr;  // for max, where it differs
  };
  const std::map<DType, std::vector<Case>> cases = {
      {DType::f32,
       {{65537, 65, "columns_dense:block=256,group=1,vec=4,split=two_pass"},
        {65535, 65, "columns:"},
        {262147, 70, "columns_dense:block=256,group=1,vec=4,split=two_pass"},
        {65537, 7, "columns_dense:block=256,group=1,vec=4,split=ticket_tiles"},
        {32768, 7, "columns_dense:block=256,group=1,vec=4,split=ticket_tiles"},
        {32767, 7, "columns:"},
        {65537, 17, "columns_dense:block=256,group=1,vec=4,split=ticket_tiles,unroll=8"}}},
      {DType::f16,
       {{65537, 128, "columns_dense:block=256,group=1,vec=8,split=two_pass,unroll=8"},
        {65537, 100, "columns:"},
        {262147, 7, "columns_dense:block=256,group=1,vec=8,split=ticket_tiles",
         "columns_dense:block=256,group=1,vec=8,split=ticket_tiles,unroll=8"},
        {1048577, 7, "columns_dense:block=256,group=1,vec=8,split=ticket_tiles,unroll=8"},
        {16, 1048579, "columns:block=256,by=1,vec=4,split=none,unroll=8"},
        {3, 262144, "columns:block=256,by=1,vec=4,split=none"}}},
      {DType::bf16,
       {{131075, 70, "columns_dense:block=256,group=1,vec=8,split=two_pass,unroll=8"},
        {8, 1048576, "columns:block=256,by=1,vec=4,split=none,unroll=8"},
        {65537, 3, "columns_dense:block=256,group=1,vec=8,split=ticket_tiles", "columns:"}}},
  };
  std::atomic<int> checked{0};
  for_each_columns_rule_case([&](DType dtype, Op op, const TypeRule& t) {
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 262147 * 70 + 1, 11));
    for (const Case& c : cases.at(dtype)) {
      const std::string meant = op == Op::max && c.max_kernel ? c.max_kernel : c.kernel;
      expect_builtin_columns(ctx, op, t, buffer, c.r, c.inner, &meant, checked);
    }
  });
  std::printf("[ counts   ] built-in columns rules: %d (op, dtype, shape) cases\n", checked.load());
}

// Rows of 2 to 7 four-byte elements (engine: AxisSpec.BuiltInChoiceFollowsTheShape): of 2
// and 3 packed (rows_packed) about 2^22 rows; of 4 staged a tile at a time, a lane per row,
// from 2^24 rows, a thread per row just below. Each runs the kernel meant and matches the
// host from an aligned base and one element in (every tile's start off the vector grid;
// packed rows there take another kernel), for f32 sum, max and mean and i32 sum (2^24
// rows: f32 sum alone, the host's reference of 2^26 elements being most of the test's
// time). In quick mode (the sanitizer run): f32 sum, up to 2^22 rows.
TEST(Axes, TinyFourByteRowsAreStaged) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const bool quick = testing::quick_mode();
  // [outputs, R] along 1
  std::vector<BuiltinCase> cases = {{1 << 22, 2, "rows_packed:block=256,group=1,vec=4,split=none"},
                                    {(1 << 22) + 1, 3, "rows_packed:block=256,group=1,vec=4,split=none"},
                                    {(1 << 22) - 1, 3, "rows_packed:block=256,group=1,vec=4,split=none"}};
  if (!quick) {
    cases.push_back({1 << 24, 4, "rows_dense:block=256,group=1,vec=4,split=none"});
    cases.push_back({(1 << 24) - 1, 4, "rows:block=256,group=1,vec=1,split=none"});
  }
  std::atomic<int> checked{0};
  std::vector<std::pair<Op, DType>> calls = {{Op::sum, DType::f32}};
  if (!quick) calls.insert(calls.end(), {{Op::max, DType::f32}, {Op::mean, DType::f32}, {Op::sum, DType::i32}});
  for (const auto& [op, dtype] : calls) {
    const TypeRule t = rule(op, dtype);
    const bool large = !quick && op == Op::sum && dtype == DType::f32;
    const Buffer buffer =
        upload(testing::make_input(op, dtype, testing::Pattern::exact, large ? (1 << 24) * 4 + 2 : (1 << 22) * 3 + 4, 23));
    for (const BuiltinCase& c : cases) {
      if (c.a >= (1 << 24) - 1 && !large) continue;
      const std::string meant = c.kernel;
      expect_builtin(ctx, op, t, buffer, c.a, c.b, 1, &meant, checked);
    }
  }
  std::printf("[ counts   ] tiny staged rows: %d (op, dtype, shape, base) cases\n", checked.load());
}

// Dense rows of 9 to 16 elements over 2^24 rows and more, a thread per row, run in blocks
// of 512 (rule revision 34; engine: AxisSpec.BuiltInChoiceFollowsTheShape), one row fewer
// in blocks of 256; 16-bit sums, min and max of rows of 16, f64 sums and means and i64
// min and max four rows a pass (revision 36).
// Each runs the kernel meant and matches the host from an aligned base and one element
// in: f32 sum over rows of 16, 12 (2^24 + 1 of them) and 9 (no vectors), f16 max over
// rows of 16, f64 sum over rows of 9 (and one row fewer) and 13 (2^24 + 1 of them), i64
// max over rows of 10. In quick mode (the sanitizer run): the f32 sum of 2^24 rows of 16
// alone.
TEST(Axes, ManyRowsOfNineToSixteenRunInBlocksOf512) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const bool quick = testing::quick_mode();
  struct Kind {
    Op op;
    DType dtype;
    std::vector<BuiltinCase> cases;
  };
  std::vector<Kind> kinds = {{Op::sum, DType::f32, {{1 << 24, 16, "rows:block=512,group=1,vec=4,split=none"}}}};
  if (!quick) {
    kinds[0].cases.insert(kinds[0].cases.end(), {{(1 << 24) - 1, 16, "rows:block=256,group=1,vec=4,split=none"},
                                                 {(1 << 24) + 1, 12, "rows:block=512,group=1,vec=4,split=none"},
                                                 {1 << 24, 9, "rows:block=512,group=1,vec=1,split=none"}});
    kinds.push_back({Op::max, DType::f16, {{1 << 24, 16, "rows:block=512,group=1,vec=4,split=none,rows=4"}}});
    kinds.push_back({Op::sum,
                     DType::f64,
                     {{1 << 24, 9, "rows:block=512,group=1,vec=2,split=none,rows=4"},
                      {(1 << 24) - 1, 9, "rows:block=256,group=1,vec=2,split=none"},
                      {(1 << 24) + 1, 13, "rows:block=512,group=1,vec=2,split=none,rows=4"}}});
    kinds.push_back({Op::max, DType::i64, {{1 << 24, 10, "rows:block=512,group=1,vec=2,split=none,rows=4"}}});
  }
  std::atomic<int> checked{0};
  for (const Kind& kind : kinds) {
    const TypeRule t = rule(kind.op, kind.dtype);
    // The largest view and one element more (the base one element in).
    std::int64_t largest = 0;
    for (const BuiltinCase& c : kind.cases) largest = std::max<std::int64_t>(largest, c.a * c.b);
    const Buffer buffer = upload(testing::make_input(kind.op, kind.dtype, testing::Pattern::exact, largest + 12, 29));
    for (const BuiltinCase& c : kind.cases) {
      const std::string meant = c.kernel;
      expect_builtin(ctx, kind.op, t, buffer, c.a, c.b, 1, &meant, checked);
    }
  }
  std::printf("[ counts   ] many rows of 9 to 16: %d (op, dtype, shape, base) cases\n", checked.load());
}

// Revision 36's configs (four rows a pass, a thread per row, blocks of 512), taken from
// the built-in choice over 2^24 rows and launched directly over 1003 and 65541 rows: passes
// that end short of four rows and blocks short of their rows, from an aligned base and one
// element in, writing on and off the output's vector grid, each against the host. f16 sum
// and max and bf16 min of rows of 16; f64 sums and means and i64 min and max of rows of 9,
// 12 and 13. In quick mode (the sanitizer run): f16 sum and f64 sum over 1003 rows.
TEST(Axes, FourRowsAPassOfManyShortRowsMatchOverFewRows) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  std::vector<std::pair<Op, DType>> kinds = {{Op::sum, DType::f16}, {Op::sum, DType::f64}};
  if (!quick)
    kinds.insert(kinds.end(), {{Op::max, DType::f16}, {Op::min, DType::bf16}, {Op::mean, DType::f64},
                               {Op::min, DType::i64}, {Op::max, DType::i64}});
  std::atomic<int> checked{0};
  for_each_kind_in_threads(kinds, [&](Op op, DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 65541 * 16 + 16, 37));
    const std::vector<std::int64_t> lengths = size_of(dtype) == 2 ? std::vector<std::int64_t>{16}
                                                                  : std::vector<std::int64_t>{9, 12, 13};
    for (std::int64_t r : lengths) {
      const AxisKernelSpec spec = builtin_axis_spec(op, t, canonicalize(TensorDesc::contiguous({1 << 24, r}), {1}).axes,
                                                    device.sm_count);
      ASSERT_EQ(spec.rows_per_pass, 4u) << to_string(spec);
      ASSERT_EQ(spec.block, 512u) << to_string(spec);
      for (std::int64_t rows : {1003, 65541}) {
        if (quick && rows != 1003) continue;
        const ViewAxes v{TensorDesc::contiguous({rows, r}), {1}};
        ASSERT_EQ(axis_spec_mismatch(spec, canonicalize(v.view, v.axes).axes), "") << to_string(spec);
        checked += check_launched_on_and_off_the_grid(compiler, launcher, device, spec, buffer, v);
      }
    }
  });
  std::printf("[ counts   ] four rows a pass over few rows: %d (op, dtype, view, base, output) cases\n", checked.load());
  EXPECT_EQ(checked.load(), quick ? (1 + 3) * 4 : (3 * 1 * 2 + 4 * 3 * 2) * 4);
}

// Contiguous rows of 2 to 8 elements packed a chunk of whole rows a thread
// (rt::axis_rows_packed_kernel): every op and dtype, each R, over 3 rows (fewer than a
// chunk of 4 or 8: the kernel's thread per row alone), 1003 rows (chunks and a tail of rows short of one) and 65541;
// launched directly at two configs from an aligned base and from one element in (the
// kernel's thread per row), writing on the output's vector grid and an element off it
// (scalar stores). Over 2^20 rows, the built-in choice names the family where
// rows_packed_pays has it, and the runtime's call over rows of 3 matches the host from an
// aligned base (packed) and one element in. In quick mode (the sanitizer run): f16 sum
// and f32 max.
TEST(Axes, TinyContiguousRowsArePacked) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  std::vector<std::pair<Op, DType>> kinds;
  if (quick) {
    kinds = {{Op::sum, DType::f16}, {Op::max, DType::f32}};
  } else {
    for (DType dtype : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32, DType::i64, DType::u32})
      for (Op op : {Op::sum, Op::prod, Op::min, Op::max, Op::mean}) kinds.emplace_back(op, dtype);
  }
  std::atomic<int> checked{0}, named{0};
  for_each_kind_in_threads(kinds, [&](Op op, DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 65541 * 8 + 16, 29));
    const Buffer large = upload(testing::make_input(op, dtype, testing::Pattern::exact, (1 << 20) * 3 + 16, 31));
    for (std::uint32_t unroll : {1u, 4u}) {
      AxisKernelSpec spec;
      spec.op = op;
      spec.types = t;
      spec.family = AxisFamily::rows_packed;
      spec.block = unroll == 1 ? 256 : 128;
      spec.group = 1;
      spec.vec = static_cast<std::uint32_t>(16 / size_of(dtype));
      spec.unroll = unroll;
      ASSERT_EQ(axis_spec_problem(spec), "");
      for (std::int64_t r = 2; r <= 8; ++r)
        for (std::int64_t outputs : {3, 1003, 65541}) {
          if (quick && outputs == 65541) continue;
          const ViewAxes v{TensorDesc::contiguous({outputs, r}), {1}};
          ASSERT_EQ(axis_spec_mismatch(spec, canonicalize(v.view, v.axes).axes), "");
          checked += check_launched_on_and_off_the_grid(compiler, launcher, device, spec, buffer, v);
          if (unroll != 1 || outputs != 65541) continue;
          // The built-in choice over 2^20 rows (2^20 elements at least).
          const ViewAxes many{TensorDesc::contiguous({std::int64_t{1} << 20, r}), {1}};
          const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, many.view, many.axes);
          const bool packed = rows_packed_pays(op, t, e.shape, nullptr);
          EXPECT_EQ(e.kernel.find("rows_packed:block=256,group=1") != std::string::npos, packed) << e.to_string();
          named += packed;
          if (r == 3) {  // the runtime's call, from an aligned base (packed) and one element in
            for (std::int64_t base : {0, 1}) {
              EXPECT_EQ(check(ctx, op, t, large, base, many.view, many.axes), "") << e.to_string() << " base " << base;
              ++checked;
            }
          }
        }
    }
  });
  std::printf("[ counts   ] packed rows: %d cases, %d built-in choices named rows_packed\n", checked.load(),
              named.load());
  // f16 and bf16: R = 2 to 7, means not over 4; 4-byte: 2, 3, 6; 8-byte: 2, 3, 4, 6.
  EXPECT_EQ(named.load(), quick ? 0 : 2 * (4 * 6 + 5) + 3 * 5 * 3 + 2 * 5 * 4);
}

// 16-bit columns on the 2-element grid but off the 4-element one (engine: AxisSpec.
// SixteenBitColumnsOnTheTwoElementGridReadPairs): two outputs a thread, a thread walking R
// alone over many outputs or 16 across it over fewer, and the edges beside them (R < 32,
// R < 1000 over fewer, off both grids). Each runs the kernel meant and matches the host,
// from an aligned base and from one element in (off the 4-byte grid, where the call's
// choice is another); f32 over the same shapes matches too.
TEST(Axes, SixteenBitColumnsOnTheTwoElementGridReadPairs) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<BuiltinCase> cases = {  // [R, inner] along 0
      {40, 262146, "columns:block=256,by=1,vec=2,split=none,unroll=8"},
      {1000, 16386, "columns:block=512,by=16,vec=2,split=none,unroll=8"},
      {1000, 30002, "columns:block=512,by=16,vec=2,split=none"},
      {600, 40002, "columns:block=256,by=4,vec=1,split=none,unroll=8"},
      {4097, 8450, "columns:block=512,by=16,vec=2,split=none,unroll=8"},
      {31, 1048578, "columns:block=256,by=1,vec=4,split=none,unroll=8"},
      {40, 262145, "columns:block=256,by=1,vec=1,split=none,unroll=8"},
  };
  std::atomic<int> checked{0};
  for_each_columns_rule_case([&](DType dtype, Op op, const TypeRule& t) {
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 4097 * 8450 + 1, 13));
    for (const BuiltinCase& c : cases) {
      const std::string meant = c.kernel;
      expect_builtin_columns(ctx, op, t, buffer, c.a, c.b, size_of(dtype) == 2 ? &meant : nullptr, checked);
    }
  });
  std::printf("[ counts   ] 16-bit columns on the 2-element grid: %d (op, dtype, shape, base) cases\n", checked.load());
}

// 8-byte dense columns of up to 64 outputs a slice, split (engine: AxisSpec.
// EightByteDenseColumnsSplitInBlocksOf256): blocks of 256, up to 16 outputs in interleaved
// steps that the last block folds, from 17 in contiguous splits and a second kernel; one
// slice of a few outputs dense from R = 2^16. Each runs the kernel meant and matches the
// host, from an aligned base and one element in (off the 16-byte grid: the twin); several
// slices too, of R >= 2^16 (the new forms) and shorter (the splits before). i64 and f64,
// sum, min, max (and i64 prod), a thread per dtype.
TEST(Axes, EightByteDenseColumnsSplitInBlocksOf256) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const bool quick = testing::quick_mode();
  std::atomic<int> checked{0};
  for_each_dtype_in_threads({DType::i64, DType::f64}, [&](DType dtype) {
    for (Op op : {Op::sum, Op::min, Op::max, Op::prod}) {
      if ((quick && op != Op::sum && op != Op::max) || (op == Op::prod && dtype == DType::f64)) continue;
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 150001 * 33 * 2 + 1, 5));
      for (std::int64_t inner : {2, 3, 7, 15, 16, 17, 33, 41, 64}) {
        const std::string meant = std::string("columns_dense:block=256,group=1,vec=2,split=") +
                                  (inner <= 16 ? "ticket_tiles" : "two_pass");
        expect_builtin_columns(ctx, op, t, buffer, 65537, inner, &meant, checked);
      }
      const std::string columns = "columns:";
      expect_builtin_columns(ctx, op, t, buffer, 65535, 3, &columns, checked);
      for (const Shape& sh : {Shape{TensorDesc::contiguous({3, 65537, 15}), {1}},
                              Shape{TensorDesc::contiguous({2, 150001, 33}), {1}},
                              Shape{TensorDesc::contiguous({64, 1921, 15}), {1}},
                              Shape{TensorDesc::contiguous({3, 40001, 33}), {1}}})
        for (std::int64_t base : {0, 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, base, sh.view, sh.axes), "") << to_string(dtype) << " base " << base;
          ++checked;
        }
    }
  });
  std::printf("[ counts   ] 8-byte dense columns: %d (op, dtype, shape, base) cases\n", checked.load());
}

// The built-in columns choice between the grid's output counts (a thread per output): eight
// loads in flight where few threads are resident per SM, blocks of 1024 unsplit from 31
// outputs per SM over R > 2048, a split with eight loads in flight below (from 257 outputs
// over R >= 8192 too, two outputs a thread on the 2-element grid). On a GPU of 132
// SMs (H100, H200) each case runs the kernel it is meant to; on others the same shapes
// are checked against the host whatever the choice.
TEST(Axes, BuiltInChoiceBetweenTheGridsOutputCounts) {
  RT_REQUIRE_GPU();
  const bool sm132 = testing::test_device()->sm_count == 132;
  if (!sm132) std::printf("[ note     ] %d SMs: the kernels' configs are not checked, only the results\n",
                          testing::test_device()->sm_count);
  Context ctx(no_database());
  struct Case {
    std::int64_t r, inner;
    const char* f16_kernel;
    const char* f32_kernel;
    const char* f16_max = nullptr;  // max where it differs from the sum's kernel
    const char* f32_max = nullptr;
  };
  // A thread per output split in blocks of 256, 8 threads across R: every op eight loads in
  // flight at four blocks per SM, registers capped to keep those resident, the last block
  // of each group folding (capped_split_columns; before set BO, min and max read four
  // loads, at eight blocks per SM in the band of 257 outputs up to 8 per SM over R >= 8192,
  // and past 16 MiB a second kernel folded).
  const char* capped = "columns:block=256,by=8,vec=1,split=ticket,unroll=8,occ=1024";
  const std::vector<Case> cases = {
      // 16-bit: the funnel's vectors of four (one slice off the grid from R = 1000, revision 37)
      {1000, 9999, "columns:block=512,by=16,vec=1,split=none,unroll=8", "columns:block=512,by=16,vec=1,split=none,unroll=8"},
      {300, 40001, "columns:block=256,by=4,vec=1,split=none,unroll=8", "columns:block=256,by=4,vec=1,split=none,unroll=8"},
      {2049, 5001, "columns:block=1024,by=32,vec=1,split=none,unroll=8", "columns:block=1024,by=32,vec=1,split=none,unroll=8"},
      {2049, 7001, "columns:block=1024,by=32,vec=1,split=none,unroll=8", "columns:block=1024,by=32,vec=1,split=none"},
      {4097, 4093, "columns:block=1024,by=32,vec=1,split=none,unroll=8", "columns:block=1024,by=32,vec=1,split=none,unroll=8"},
      {2049, 3001, capped, capped},
      {4097, 2641, capped, capped},
      // 16-bit sums from 8 outputs per SM (and max, capped); f32 on the 4-element grid up
      // to 48 outputs per SM too (R < 16384 from 257 outputs; set BP)
      {4097, 1500, capped, capped},
      {4097, 4096, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", capped},
      // 257 outputs up to 8 per SM over R >= 8192
      {8192, 462, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", "columns:block=256,by=8,vec=2,split=ticket,unroll=8"},
      {8192, 669, capped, capped},
      {8192, 500, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", capped},
      // 16-bit pairs from 8 up to 31 outputs per SM, uncapped, the last block folding (f32
      // sums off the 4-element grid: four outputs a thread, a second kernel; max capped)
      {12345, 2002, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", "columns:block=128,by=4,vec=4,split=two_pass",
       nullptr, capped},
      // f32 from R = 32768 on the grid: rows of whole 128 bytes capped, others four outputs
      // a thread (16-bit from R = 2^16 over 16 outputs per SM: pairs)
      {32768, 2112, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", capped},
      {32768, 2116, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", "columns:block=128,by=4,vec=4,split=two_pass"},
      // f32 vectors of four whose groups fold in at most four round trips: the last block
      // folds; 16-bit vectors of four unsplit from R = 4096: eight loads in flight; 16-bit
      // pairs over 31 to 64 outputs per SM: the last block folds (set BQ)
      {4097, 6400, "columns:block=256,by=8,vec=2,split=ticket,unroll=8", "columns:block=128,by=4,vec=4,split=ticket"},
      {4097, 8448, "columns:block=1024,by=32,vec=4,split=none,unroll=8", "columns:block=1024,by=32,vec=4,split=none"},
      // 16-bit vectors of four in blocks of 128 on the 4-element grid: from R = 16384 over
      // 31 to 64 outputs per SM, the last block folding; from R = 2^16 over 512 outputs up
      // to 8 per SM, a second kernel (set BQ; from one element in, pairs and the twin)
      {16384, 4096, "columns:block=128,by=4,vec=4,split=ticket,unroll=8", capped},
      {65536, 512, "columns:block=128,by=4,vec=4,split=two_pass,unroll=8", "columns:block=128,by=4,vec=4,split=two_pass"},
  };
  std::int64_t largest = 0;
  for (const Case& c : cases) largest = std::max(largest, c.r * c.inner);
  std::atomic<int> checked{0};
  for_each_columns_rule_case([&](DType dtype, Op op, const TypeRule& t) {
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, largest + 8, 13));
    for (const Case& c : cases) {
      const char* max = dtype == DType::f32 ? c.f32_max : c.f16_max;
      const std::string meant = op == Op::max && max != nullptr ? max : dtype == DType::f32 ? c.f32_kernel : c.f16_kernel;
      expect_builtin_columns(ctx, op, t, buffer, c.r, c.inner, sm132 ? &meant : nullptr, checked);
    }
  });
  std::printf("[ counts   ] built-in columns between the grid's outputs: %d (op, dtype, shape) cases\n", checked.load());
}

// [outer, R, inner] views along 1 (the outputs of several slices side by side), each
// (op, dtype) call in a thread of its own: on an H200-sized device (132 SMs) the kernel
// the runtime explains is the one `meant` says (`matches`), and every view matches the
// host from an aligned base and from one element in. Returns the cases checked.
struct SliceView {
  std::int64_t outer, r, inner;
};
int check_builtin_over_slices(Context& ctx, const std::vector<std::pair<Op, DType>>& calls,
                              const std::vector<SliceView>& views, std::uint64_t seed,
                              const std::function<std::string(Op, DType, const SliceView&)>& meant,
                              const std::function<bool(const std::string& kernel, const std::string& meant)>& matches) {
  const bool sm132 = testing::test_device()->sm_count == 132;
  std::int64_t largest = 0;
  for (const SliceView& v : views) largest = std::max(largest, v.outer * v.r * v.inner);
  std::atomic<int> checked{0};
  std::vector<std::thread> threads;
  for (const auto& [op, dtype] : calls)
    threads.emplace_back([&, op = op, dtype = dtype] {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, largest + 8, seed));
      for (const SliceView& v : views) {
        const TensorDesc view = TensorDesc::contiguous({v.outer, v.r, v.inner});
        const std::string at = std::string(to_string(op)) + "<" + std::string(to_string(dtype)) + "> [" +
                               std::to_string(v.outer) + "," + std::to_string(v.r) + "," + std::to_string(v.inner) +
                               "] along 1";
        if (sm132) {
          const std::string kernel = ctx.explain_axes(op, t.in, t.out, view, {1}).kernel;
          const std::string want = meant(op, dtype, v);
          EXPECT_TRUE(matches(kernel, want)) << at << " ran " << kernel << ", meant " << want;
        }
        for (std::int64_t base : {0, 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, base, view, {1}), "") << at << " base " << base;
          ++checked;
        }
      }
    });
  for (auto& th : threads) th.join();
  return checked.load();
}

// The 16-bit columns rules of sets BP and BQ over slices: [outer, R, inner] along 1, the
// outputs of several slices side by side (outer_stride R x inner). Each runs the kernel
// the rule means for its outputs (vectors of four in blocks of 128, the last block
// folding or a second kernel; pairs, the last block folding) and matches the host, from
// an aligned base and from one element in (off the vector grids: another kernel). f16 sum
// and max and bf16 sum, a thread each; in quick mode (the sanitizer run) f16 sum over
// the two smallest.
TEST(Axes, SixteenBitColumnsRulesOverSlices) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  Context ctx(no_database());
  const char* quads_ticket = "columns:block=128,by=4,vec=4,split=ticket,unroll=8";
  const char* quads_two_pass = "columns:block=128,by=4,vec=4,split=two_pass,unroll=8";
  const char* pairs_ticket = "columns:block=256,by=8,vec=2,split=ticket,unroll=8";
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, const char*> kernels = {
      {{8, 4097, 800}, pairs_ticket}, {{2, 65536, 300}, quads_two_pass}};
  if (!quick)
    kernels.insert({{{2, 16384, 2048}, quads_ticket},
                    {{8, 65536, 100}, quads_two_pass},
                    {{3, 16384, 1366}, pairs_ticket}});
  std::vector<SliceView> views;
  for (const auto& [v, kernel] : kernels) views.push_back({std::get<0>(v), std::get<1>(v), std::get<2>(v)});
  std::vector<std::pair<Op, DType>> calls = {{Op::sum, DType::f16}};
  if (!quick) calls.insert(calls.end(), {{Op::max, DType::f16}, {Op::sum, DType::bf16}});
  const int checked = check_builtin_over_slices(
      ctx, calls, views, 19,
      [&](Op, DType, const SliceView& v) { return std::string(kernels.at({v.outer, v.r, v.inner})); },
      [](const std::string& kernel, const std::string& meant) { return kernel.find(meant) != std::string::npos; });
  std::printf("[ counts   ] 16-bit columns rules over slices: %d (op, dtype, view, base) cases\n", checked);
}

// A thread per output over R = 6 and 7 (rule revision 30): from 2^22 elements the
// built-in choice sums a tile and then the two or three loads past it together (the
// batched tail), over many small slices and one wide one; max keeps the guarded loads.
// Over R = 3 and slices of 5, four outputs a thread a pass (no vectors across the slices'
// ends), but for 8-byte sums, batched. Each runs the kernel the rule means and matches
// the host from an aligned base and one element in: f32 sum and max, f64 and i32 sum; in
// quick mode (the sanitizer run) f32 sum.
TEST(Axes, ShortColumnsOfAThreadPerOutputBatchTheirTail) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  Context ctx(no_database());
  const std::vector<SliceView> views = {{90000, 7, 7}, {150000, 6, 5}, {1, 7, 600001}, {300000, 3, 5}, {1, 5, 900001}};
  const std::string plain = "columns:block=256,by=1,vec=1,split=none";
  std::vector<std::pair<Op, DType>> calls = {{Op::sum, DType::f32}};
  if (!quick) calls.insert(calls.end(), {{Op::max, DType::f32}, {Op::sum, DType::f64}, {Op::sum, DType::i32}});
  const int checked = check_builtin_over_slices(
      ctx, calls, views, 29,
      [&](Op op, DType dtype, const SliceView& v) {
        if (v.r == 3) return op == Op::sum && size_of(dtype) == 8 ? plain + ",tail=1" : plain + ",rows=4";
        return v.r != 5 && op == Op::sum ? plain + ",tail=1" : plain;
      },
      // The config text ends the kernel's name in the explanation.
      [](const std::string& kernel, const std::string& meant) {
        return kernel.size() >= meant.size() && kernel.compare(kernel.size() - meant.size(), meant.size(), meant) == 0;
      });
  std::printf("[ counts   ] short columns, a thread per output: %d (op, dtype, view, base) cases\n", checked);
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
  // Rows the built-in choice stages through shared memory a tile at a time (4-byte rows
  // of 33 and 100 elements, 2^21 elements and more): tiles start off the vector grid at
  // every base; rows of 100 sliced from rows of 103 are read by the rows kernel.
  for (DType dtype : {DType::f32, DType::i32}) {
    const Buffer big = upload(testing::make_input(Op::sum, dtype, testing::Pattern::exact, 2170000, 5));
    for (std::int64_t base : {0, 1, 2, 3}) {
      EXPECT_EQ(check(ctx, Op::sum, rule(Op::sum, dtype), big, base, TensorDesc::contiguous({21001, 100}), {1}), "")
          << base;
      EXPECT_EQ(check(ctx, Op::max, rule(Op::max, dtype), big, base, TensorDesc::contiguous({63601, 33}), {1}), "")
          << base;
      EXPECT_EQ(check(ctx, Op::sum, rule(Op::sum, dtype), big, base, TensorDesc::strided({21001, 100}, {103, 1}), {1}),
                "")
          << base;
    }
  }
  // 16-bit columns read as vectors of four outputs: from an aligned base, and from bases
  // off the vector grid (each output its own scalar loads).
  for (DType dtype : {DType::f16, DType::bf16}) {
    const TypeRule t = rule(Op::sum, dtype);
    const Buffer buffer = upload(testing::make_input(Op::sum, dtype, testing::Pattern::exact, (1 << 20) + 8, 3));
    for (std::int64_t base : {0, 1, 2, 3, 4})
      EXPECT_EQ(check(ctx, Op::sum, t, buffer, base, TensorDesc::contiguous({4, 262144}), {0}), "") << base;
  }
}

// A columns spec launched directly (its twin where the rows lie off its grid) over
// `view` along `axes`, the view's lowest element 0 to vec - 1 elements (those of
// `shifts`) into an allocation that holds exactly the elements up to its highest one
// (memcheck sees a load past either end), each against the host. Returns the cases
// checked and, in *twins, how many of them took the twin.
struct ColumnsView {
  TensorDesc view;
  AxisList axes;
};
int check_columns_spec_over_views(Compiler& compiler, Launcher& launcher, const DeviceKey& device,
                                  const AxisKernelSpec& spec, const std::vector<ColumnsView>& views,
                                  std::initializer_list<std::int64_t> shifts, int* twins) {
  const Op op = spec.op;
  const TypeRule& t = spec.types;
  const DType dtype = t.in;
  const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
  int checked = 0;
  for (const ColumnsView& v : views) {
    const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
    EXPECT_EQ(shape.layout, AxisLayout::columns) << shape.to_string();
    if (shape.layout != AxisLayout::columns) continue;
    const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
    const std::size_t partial_bytes = plan.partial_count * size_of(t.acc);
    LaunchWorkspace workspace(partial_bytes);
    WorkspaceView& ws = workspace.view;
    for (std::int64_t shift : shifts) {
      if (shift >= static_cast<std::int64_t>(spec.vec) && shift != 0) continue;
      const std::int64_t base = shift - shape.lowest_offset;
      const std::size_t count = static_cast<std::size_t>(base + shape.highest_offset + 1);
      const testing::HostArray host = testing::make_input(op, dtype, testing::Pattern::exact, count, 17);
      Buffer buffer{host, DeviceBuffer(host.bytes.size())};
      RT_CUDA_CHECK(cudaMemcpy(buffer.device.get(), host.bytes.data(), host.bytes.size(), cudaMemcpyHostToDevice));
      // The kernels take canonical offset 0 (a reversed R starts at its far end).
      const std::int64_t origin = (base + shape.base_offset) * static_cast<std::int64_t>(size_of(dtype));
      const bool twin = axis_launch_takes_twin(spec, shape, plan,
                                               static_cast<const unsigned char*>(buffer.device.get()) + origin);
      const std::string why = check_with(
          [&](const void* in, void* out) {
            enqueue_axis_reduction(
                launcher, set.handles(0), spec, plan, shape,
                static_cast<const unsigned char*>(in) + shape.base_offset * static_cast<std::int64_t>(size_of(dtype)), out,
                plan.partial_count > 0 ? &ws : nullptr, nullptr);
          },
          op, t, buffer, base, v.view, v.axes);
      EXPECT_EQ(why, "") << to_string(spec) << " " << shape.to_string() << " base " << base << (twin ? " (twin)" : "");
      ++checked;
      *twins += twin;
    }
  }
  return checked;
}

// Columns programs of several adjacent outputs per thread, launched where their rows
// lie off the vector grid (odd rows, odd R strides, bases 1 to 7 elements off), so that
// the twin runs. Every vector width each element size takes, a thread per column and
// threads across R, the guarded and the batched tail, one slice and several, R reversed,
// fewer outputs than a vector; the data end exactly where the allocation does, so a read
// past the view's last element is caught under compute-sanitizer's memcheck (the tests'
// sanitizer run), and the results are checked against the host.
TEST(Axes, ColumnsOffTheVectorGridReadOnlyTheView) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  const std::vector<ColumnsView> views = {
      {TensorDesc::contiguous({37, 1001}), {0}},               // odd rows
      {TensorDesc::contiguous({1000, 263}), {0}},              // R split across blocks
      {TensorDesc::strided({129, 64}, {67, 1}), {0}},          // rows on the grid, their stride not
      {TensorDesc::contiguous({3, 129, 77}), {1}},             // slices of odd rows
      {TensorDesc::contiguous({9, 3}), {0}},                   // fewer outputs than a vector
      // Rows of 997 (5 mod 8): every shift of a row against the vectors, in R long
      // enough for whole passes of loads in flight, a batched tail and single steps.
      {TensorDesc::contiguous({300, 997}), {0}},
      {TensorDesc::strided({4, 50, 333}, {-50 * 333, 333, 1}), {1}},  // slices reversed
      {TensorDesc::strided({40, 1001}, {0, 1}), {0}},                  // R broadcast (stride 0)
      {TensorDesc::strided({50, 777}, {-779, 1}), {0}},                // R reversed, an odd stride
      {TensorDesc::contiguous({64, 4097}), {0}},                       // many blocks of pairs
  };
  std::atomic<int> checked{0}, twins{0};
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16, DType::f32}
                                          : std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::f64,
                                                               DType::i32, DType::i64};
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    for (Op op : {Op::sum, Op::max}) {
      if ((quick || size_of(dtype) != 4) && op == Op::max) continue;
      const TypeRule t = rule(op, dtype);
      for (std::uint32_t vec : {2u, 4u, 8u}) {
        if (vec * size_of(dtype) > 16) continue;
        for (std::uint32_t by : {1u, 8u}) {
          AxisKernelSpec spec;
          spec.op = op;
          spec.types = t;
          spec.family = AxisFamily::columns;
          spec.block = 256;
          spec.group = by;
          spec.vec = vec;
          spec.split = AxisSplit::two_pass;
          spec.tail = by == 8 ? 1 : 0;
          spec.unroll = size_of(dtype) == 2 && by == 1 ? 8 : 4;
          ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
          ASSERT_TRUE(axis_has_twin(spec)) << to_string(spec);
          int twinned = 0;
          checked += check_columns_spec_over_views(compiler, launcher, device, spec, views, {0, 1, 3, 5, 7}, &twinned);
          twins += twinned;
        }
      }
    }
  });
  EXPECT_GT(twins.load(), checked.load() / 2) << "the twin ran in few of the cases";
  std::printf("[ counts   ] columns off the vector grid: %d (config, view, base) cases, %d of them the twin\n",
              checked.load(), twins.load());
}

// 16-bit columns off the vector grid in the twin's funnel (rt::columns_funnel_rows, rule
// revision 37): the configs the built-in choice takes for one slice of odd rows over many
// outputs (300 x 524287) and over fewer (4097 x 16385 and 8191 x 32767), and vectors of
// eight, launched directly over views whose rows start at every shift from the grid: odd
// rows, rows of 2 mod 4 (the shift alternating row by row), R shorter than the threads
// across it, fewer outputs than a warp's vectors, rows whose last warp holds fewer
// outputs than K, R reversed and broadcast, padded rows, overlapping rows (the guarded
// rows more than the last), and slices (the funnel not taken there); from
// every base within a vector, the allocation ending at the view's last element. Every op
// of f16 and bf16, each against the host. In quick mode (the sanitizer run): f16 sum and
// max.
TEST(Axes, SixteenBitColumnsOffTheGridFunnelMatchTheHost) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  const std::vector<ColumnsView> views = {
      {TensorDesc::contiguous({37, 1001}), {0}},
      {TensorDesc::contiguous({300, 997}), {0}},
      {TensorDesc::contiguous({1000, 263}), {0}},
      {TensorDesc::contiguous({64, 4097}), {0}},
      {TensorDesc::contiguous({33, 130}), {0}},                 // rows of 2 mod 4
      {TensorDesc::contiguous({17, 4094}), {0}},
      {TensorDesc::contiguous({5, 33}), {0}},                   // R < threads across it; 9 vectors
      {TensorDesc::contiguous({3, 4099}), {0}},
      {TensorDesc::strided({129, 66}, {67, 1}), {0}},           // padded rows
      {TensorDesc::strided({50, 777}, {-779, 1}), {0}},         // R reversed
      {TensorDesc::strided({40, 1001}, {0, 1}), {0}},           // R broadcast
      // Overlapping rows, 2 and 3 elements apart: a row-end vector reaches past the
      // view's end from the last 2 to 4 rows (the EDGE loop's rows), not only the last.
      {TensorDesc::strided({23, 1001}, {2, 1}), {0}},
      {TensorDesc::strided({41, 999}, {3, 1}), {0}},
      {TensorDesc::contiguous({3, 129, 77}), {1}},              // slices: not the funnel
      // Rows whose last warp holds fewer outputs than K (1 or 2 past 128 outputs a warp
      // of vectors of four, 1 to 6 past 256 of eight) where the base shift makes K larger:
      // that warp reads them as scalars (4097 and 130 above are such rows too).
      {TensorDesc::contiguous({45, 517}), {0}},
      {TensorDesc::contiguous({31, 1026}), {0}},
  };
  const TypeRule probe{DType::f16, DType::f16, DType::f32};
  std::vector<AxisKernelSpec> rule_specs;
  for (const auto& big : {TensorDesc::contiguous({300, (1 << 19) - 1}), TensorDesc::contiguous({4097, 16385}),
                          TensorDesc::contiguous({8191, 32767})}) {
    const AxisKernelSpec spec = builtin_axis_spec(Op::sum, probe, canonicalize(big, {0}).axes, device.sm_count);
    ASSERT_EQ(spec.family, AxisFamily::columns) << to_string(spec);
    ASSERT_GT(spec.vec, 1u) << to_string(spec);
    ASSERT_EQ(spec.group % 4, 0u) << to_string(spec);  // thread rows a whole number of vectors apart
    rule_specs.push_back(spec);
  }
  {
    // Vectors of eight, which the rule does not take but a tune may.
    AxisKernelSpec eight = rule_specs.front();
    eight.block = 256;
    eight.group = 8;
    eight.vec = 8;
    eight.unroll = 4;
    rule_specs.push_back(eight);
  }
  std::vector<std::pair<Op, DType>> kinds;
  for (DType dtype : {DType::f16, DType::bf16})
    for (Op op : kAllOps)
      if (!quick || (dtype == DType::f16 && (op == Op::sum || op == Op::max))) kinds.emplace_back(op, dtype);
  std::atomic<int> checked{0}, twins{0};
  for_each_kind_in_threads(kinds, [&](Op op, DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    for (AxisKernelSpec spec : rule_specs) {
      spec.op = op;
      spec.types = rule(op, dtype);
      ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
      ASSERT_TRUE(axis_has_twin(spec)) << to_string(spec);
      int twinned = 0;
      checked += check_columns_spec_over_views(compiler, launcher, device, spec, views, {0, 1, 2, 3, 5, 7}, &twinned);
      twins += twinned;
    }
  });
  std::printf("[ counts   ] 16-bit columns in the funnel: %d (op, dtype, config, view, base) cases, %d of them the twin\n",
              checked.load(), twins.load());
  // Every base shift of the test's below the vector (0 to 3 for vectors of four; 0, 1, 2,
  // 3, 5 and 7 for eight), every view, every spec, every kind.
  int shifts_per_view = 0;
  for (const AxisKernelSpec& spec : rule_specs)
    for (int shift : {0, 1, 2, 3, 5, 7}) shifts_per_view += shift == 0 || shift < static_cast<int>(spec.vec);
  EXPECT_EQ(checked.load(), static_cast<int>(kinds.size() * views.size()) * shifts_per_view);
  EXPECT_GT(twins.load(), checked.load() * 3 / 4) << "the twin ran in few of the cases";
}

// columns_staged (rt::axis_columns_staged_kernel) launched directly: tiles of one width
// or several across a slice, every shift of a row against the vectors, slices, rows a
// stride apart, a broadcast R, R split or not, every op and dtype, each against the
// host. The view's lowest element lies 0 to vec - 1 elements into an allocation that
// ends at its highest one, so that memcheck sees any load past either end (the kernel
// reads a vector that reaches past the view element by element).
TEST(Axes, StagedColumnsReadOnlyTheViewForEveryOpAndDtype) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  struct View {
    TensorDesc view;
    AxisList axes;
  };
  const std::vector<View> views = {
      {TensorDesc::contiguous({37, 1001}), {0}},               // few rows: one split
      {TensorDesc::contiguous({300, 997}), {0}},               // every shift of a row
      {TensorDesc::contiguous({2000, 1025}), {0}},             // tiles evened out, R split
      {TensorDesc::contiguous({5000, 2049}), {0}},             // many splits
      {TensorDesc::contiguous({3, 129, 77}), {1}},             // slices narrower than a tile
      {TensorDesc::strided({4, 50, 333}, {-50 * 333, 333, 1}), {1}},  // slices reversed
      {TensorDesc::strided({600, 1001}, {1003, 1}), {0}},      // a slice of wider rows
      {TensorDesc::strided({40, 1001}, {0, 1}), {0}},          // R broadcast (stride 0)
      {TensorDesc::contiguous({9, 3}), {0}},                   // fewer outputs than a vector
  };
  struct Form {
    std::uint32_t block, group, rows, unroll;
    AxisSplit split;
  };
  const std::vector<Form> forms = {{256, 1, 2, 4, AxisSplit::two_pass},
                                   {256, 2, 1, 4, AxisSplit::two_pass},
                                   {128, 4, 4, 8, AxisSplit::two_pass},
                                   {64, 1, 1, 8, AxisSplit::none}};
  std::atomic<int> checked{0}, split{0};
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16, DType::f32}
                                          : std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::f64,
                                                               DType::i32, DType::i64};
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    const std::vector<Op> ops = quick ? std::vector<Op>{Op::sum} : std::vector<Op>(std::begin(kAllOps), std::end(kAllOps));
    for (Op op : ops) {
      const TypeRule t = rule(op, dtype);
      for (const Form& f : forms) {
        AxisKernelSpec spec = columns_staged_builtin(op, t);
        spec.block = f.block;
        spec.group = f.group;
        spec.rows_per_pass = f.rows;
        spec.unroll = f.unroll;
        spec.split = f.split;
        if (!axis_spec_problem(spec).empty()) continue;  // a tile too small for 8-byte rows
        if (quick && f.block != 256) continue;
        const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
        for (const View& v : views) {
          const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
          ASSERT_EQ(shape.layout, AxisLayout::columns) << shape.to_string();
          ASSERT_EQ(axis_spec_mismatch(spec, shape), "") << shape.to_string();
          const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
          LaunchWorkspace workspace(plan.partial_count * size_of(t.acc));
          WorkspaceView& ws = workspace.view;
          for (std::int64_t shift : {0, 1, 3, 5, 7}) {
            if (shift >= static_cast<std::int64_t>(spec.vec) || (quick && shift > 1)) continue;
            const std::int64_t base = shift - shape.lowest_offset;
            const std::size_t count = static_cast<std::size_t>(base + shape.highest_offset + 1);
            const testing::HostArray host = testing::make_input(op, dtype, testing::Pattern::exact, count, 23);
            Buffer buffer{host, DeviceBuffer(host.bytes.size())};
            RT_CUDA_CHECK(cudaMemcpy(buffer.device.get(), host.bytes.data(), host.bytes.size(), cudaMemcpyHostToDevice));
            const std::string why = check_with(
                [&](const void* in, void* out) {
                  enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, in, out,
                                         plan.partial_count > 0 ? &ws : nullptr, nullptr);
                },
                op, t, buffer, base, v.view, v.axes);
            EXPECT_EQ(why, "") << to_string(spec) << " " << shape.to_string() << " base " << base << " splits "
                               << plan.splits;
            ++checked;
            split += plan.splits > 1;
          }
        }
      }
    }
  });
  EXPECT_GT(split.load(), checked.load() / 4) << "few cases split R";
  std::printf("[ counts   ] staged columns: %d (config, view, base) cases, %d of them split\n", checked.load(),
              split.load());
}

// Columns stepped over their outputs (x[:, ::k] reduced along 0; core's inner_step):
// the call's built-in choice for every op and dtype, and columns programs of each kind
// launched directly (a thread per output or vectors of outputs, threads across R, split
// in two passes or by a ticket, four outputs a pass), each against the host. The view's
// allocation ends at its last element, so that memcheck sees a load past it.
TEST(Axes, SteppedColumnsReadEachOutputsOwnElements) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  const std::vector<Shape> views = {
      {TensorDesc::strided({1024, 2048}, {4096, 2}), {0}},           // every other column
      {TensorDesc::strided({3557, 65}, {129, 2}), {0}},              // odd rows
      {TensorDesc::strided({4, 10, 6}, {180, 18, 3}), {1}},          // an outer dimension
      {TensorDesc::strided({300, 33}, {8 * 33 + 5, 8}), {0}},        // the widest step
      {TensorDesc::strided({2, 70001}, {140003, 2}), {0}},           // R = 2 over many outputs
      {TensorDesc::strided({3, 4, 50001}, {-800016, 200004, 4}), {0, 1}},  // R reversed, then merged
      {TensorDesc::strided({70001, 9}, {28, 3}), {0}},               // few outputs, long R: split
  };
  for (const Shape& v : views) {
    const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
    ASSERT_EQ(shape.layout, AxisLayout::columns) << shape.to_string();
    ASSERT_GT(shape.inner_step, 1) << shape.to_string();
  }
  std::atomic<int> calls{0}, launches{0};
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16, DType::f32, DType::i64}
                                          : std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    Context ctx(no_database());
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    for (Op op : {Op::sum, Op::max, Op::mean, Op::prod}) {
      if (!resolve_types(op, dtype, default_out_dtype(op, dtype)).rule) continue;
      const TypeRule t = rule(op, dtype);
      std::vector<AxisKernelSpec> specs;
      if (op == Op::sum || op == Op::max)
        for (std::uint32_t vec : {1u, 4u})
          for (std::uint32_t by : {1u, 8u})
            for (AxisSplit split : {AxisSplit::two_pass, AxisSplit::ticket}) {
              if (vec * size_of(dtype) > 16 || (quick && split == AxisSplit::ticket && vec == 4)) continue;
              // Four outputs a pass where a thread walks R alone and one launch folds.
              const AxisKernelSpec spec{.op = op, .types = t, .family = AxisFamily::columns, .block = 256,
                                        .group = by, .vec = vec, .split = split,
                                        .rows_per_pass = by == 1 && vec == 1 && split == AxisSplit::ticket ? 4u : 1u};
              ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
              specs.push_back(spec);
            }
      for (const AxisKernelSpec& spec : specs) {
        const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
        for (const Shape& v : views) {
          const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
          const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
          LaunchWorkspace workspace(plan.partial_count * size_of(t.acc));
          const std::int64_t base = -shape.lowest_offset;
          const Buffer buffer = upload(testing::make_input(
              op, dtype, testing::Pattern::exact, static_cast<std::size_t>(base + shape.highest_offset + 1), 23));
          const std::string why = check_with(
              [&](const void* in, void* out) {
                // The kernels take canonical offset 0 (a reversed R starts at its far end).
                const void* origin = static_cast<const unsigned char*>(in) +
                                     shape.base_offset * static_cast<std::int64_t>(size_of(dtype));
                enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, origin, out,
                                       plan.partial_count > 0 ? &workspace.view : nullptr, nullptr);
              },
              op, t, buffer, base, v.view, v.axes);
          EXPECT_EQ(why, "") << to_string(spec) << " " << shape.to_string();
          ++launches;
        }
      }
      for (const Shape& v : views) {
        const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
        for (std::int64_t shift : {0, 1}) {
          const std::int64_t base = shift - shape.lowest_offset;
          const Buffer buffer = upload(testing::make_input(
              op, dtype, testing::Pattern::exact, static_cast<std::size_t>(base + shape.highest_offset + 1), 29));
          EXPECT_EQ(check(ctx, op, t, buffer, base, v.view, v.axes), "")
              << ctx.explain_axes(op, t.in, t.out, v.view, v.axes).to_string();
          ++calls;
        }
      }
    }
  });
  std::printf("[ counts   ] stepped columns: %d calls, %d direct launches\n", calls.load(), launches.load());
}

// Split columns fold in one launch: the last of each group of blocks sharing tiles of
// outputs folds those outputs (rt::columns_ticket_finish, a ticket slot per group). Each
// columns program (a thread per output four a pass, vectors of two and four outputs,
// 8 and 32 threads across R; f32 and i64, sum and max) over shapes of 33 to 4096
// outputs, launched directly with
// its plan and with a plan of three groups, whose blocks then take several tiles each
// (the fold's grid-stride). Each launch twice on one workspace: both checked against the
// host, and every ticket slot back at zero after each.
TEST(Axes, SplitColumnsFoldEachGroupsOutputsInOneLaunch) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  const std::vector<Shape> views = {
      {TensorDesc::contiguous({4095, 479}), {0}},  {TensorDesc::contiguous({1285, 197}), {0}},
      {TensorDesc::contiguous({3001, 1000}), {0}}, {TensorDesc::contiguous({2049, 4096}), {0}},
      {TensorDesc::contiguous({20001, 33}), {0}},  {TensorDesc::contiguous({5, 3001, 67}), {1}},  // outer slices
  };
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  int launches = 0;
  for (DType dtype : quick ? std::vector<DType>{DType::f32} : std::vector<DType>{DType::f32, DType::i64}) {
    for (Op op : {Op::sum, Op::max}) {
      const TypeRule t = rule(op, dtype);
      std::vector<AxisKernelSpec> specs;
      for (std::uint32_t by : {1u, 8u, 32u})
        for (std::uint32_t vec : {1u, 2u, 4u}) {
          if (vec * size_of(dtype) > 16 || (by == 1 && vec > 1) || (by == 32 && vec == 2)) continue;
          specs.push_back(AxisKernelSpec{.op = op, .types = t, .family = AxisFamily::columns, .block = 256,
                                         .group = by, .vec = vec, .split = AxisSplit::ticket,
                                         .rows_per_pass = by == 1 ? 4u : 1u});
          ASSERT_EQ(axis_spec_problem(specs.back()), "") << to_string(specs.back());
        }
      for (const AxisKernelSpec& spec : specs) {
        const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
        for (const Shape& v : views) {
          const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
          ASSERT_EQ(shape.layout, AxisLayout::columns) << shape.to_string();
          const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
          if (plan.splits <= 1) continue;
          AxisLaunchPlan three = plan;  // three groups: each block takes several tiles
          three.grid = static_cast<std::uint32_t>(3 * plan.splits);
          for (const AxisLaunchPlan& p : {plan, three}) {
            ASSERT_EQ(p.finalize_grid, 0u);
            ASSERT_LE(p.grid / p.splits, kAxisTicketSlots);
            LaunchWorkspace workspace(p.partial_count * size_of(t.acc));
            for (std::int64_t shift : {0, 1}) {
              const std::int64_t base = shift - shape.lowest_offset;
              const Buffer buffer = upload(testing::make_input(
                  op, dtype, testing::Pattern::exact, static_cast<std::size_t>(base + shape.highest_offset + 1), 31));
              const std::string why = check_with(
                  [&](const void* in, void* out) {
                    const void* origin = static_cast<const unsigned char*>(in) +
                                         shape.base_offset * static_cast<std::int64_t>(size_of(dtype));
                    enqueue_axis_reduction(launcher, set.handles(0), spec, p, shape, origin, out, &workspace.view,
                                           nullptr);
                  },
                  op, t, buffer, base, v.view, v.axes);
              EXPECT_EQ(why, "") << to_string(spec) << " " << shape.to_string() << " grid " << p.grid << " splits "
                                 << p.splits << " shift " << shift;
              std::vector<unsigned int> slots(kAxisTicketSlots);
              RT_CUDA_CHECK(cudaMemcpy(slots.data(),
                                       static_cast<const unsigned char*>(workspace.buffer.get()) +
                                           kWorkspaceAxisTicketsOffset,
                                       slots.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
              EXPECT_EQ(std::count(slots.begin(), slots.end(), 0u), static_cast<std::ptrdiff_t>(slots.size()))
                  << "a ticket slot left set by " << to_string(spec) << " " << shape.to_string();
              ++launches;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(launches, 0);
  std::printf("[ counts   ] split columns folded by group: %d launches\n", launches);
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

// General layouts (neither rows nor columns after merging), whose kernel walks the
// reduced dimensions by carries instead of a division per element: a reduced dimension
// the densest (a group of lanes per output, the walk's step its width: carries into every
// dimension; vectors along a contiguous innermost run, 16 or 8 bytes or none, with
// outputs on and off the vector grid; splits starting mid-walk) and a kept dimension the
// densest (a thread per output, split across blocks where the outputs are few), a
// reversed kept dimension, rank 8. Every op and dtype against the host; the built-in
// choice is checked to be the one each shape is here for.
TEST(Axes, GeneralLayoutsWalkEveryDimensionWhicheverIsDensest) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  struct Case {
    TensorDesc view;
    AxisList axes;
    std::int64_t base;
    bool thread_per_output;  // a kept dimension is the densest
  };
  const std::vector<Case> cases = {
      {TensorDesc::contiguous({5, 37, 9, 11}), {0, 2, 3}, 0, false},           // runs of 99, carries
      {TensorDesc::contiguous({5, 37, 9, 12}), {0, 2, 3}, 0, false},           // runs of 108: vectors
      {TensorDesc::contiguous({5, 37, 9, 12}), {0, 2, 3}, 1, false},           // the same off the grid
      {TensorDesc::strided({6, 5, 8}, {80, 10, 1}), {0, 2}, 0, false},         // outputs on and off it
      {TensorDesc::contiguous({64, 33, 129}), {0, 2}, 0, false},               // runs of 129, 33 outputs
      {TensorDesc::contiguous({8, 5, 40000}), {0, 2}, 0, false},               // 5 long outputs: split mid-walk
      {TensorDesc::contiguous({7, 3, 40001}), {0, 2}, 0, false},               // the same without vectors
      {TensorDesc::strided({1000, 513}, {1100, 2}), {1}, 3, false},            // every other element of a row
      {TensorDesc::strided({64, 130, 16}, {130, 1, 8320}), {1, 2}, 0, false},  // permuted: pairs
      {TensorDesc::contiguous({3, 2, 5, 2, 3, 2, 3, 5}), {0, 2, 4, 6}, 0, true},    // rank 8
      {TensorDesc::contiguous({3, 2, 5, 2, 3, 2, 3, 8}), {0, 2, 4, 6, 7}, 0, false},  // rank 8, vectors
      {TensorDesc::contiguous({3, 6, 1000, 7}), {0, 2}, 0, true},              // 42 outputs, split
      {TensorDesc::contiguous({3, 6, 1000, 8}), {0, 2}, 0, true},              // vectors of outputs, split
      {TensorDesc::contiguous({3, 6, 1000, 8}), {0, 2}, 2, true},              // the same off the grid
      {TensorDesc::contiguous({300, 5, 130, 4}), {0, 2}, 0, true},             // 20 outputs of 39000
      {TensorDesc::contiguous({300, 5, 130, 3}), {0, 2}, 0, true},             // 15 outputs of 39000
      {TensorDesc::contiguous({2, 40, 3, 2000}), {0, 2}, 0, true},             // 80000 outputs of 6
      {TensorDesc::contiguous({7, 3, 11, 5, 13}), {1, 3}, 0, true},            // two of each, interleaved
      {TensorDesc::strided({30, 50, 20}, {1000, 20, -1}), {0}, 19, true},      // reversed densest kept
  };
  const std::vector<DType> dtypes = testing::quick_mode() ? std::vector<DType>{DType::f32, DType::f16}
                                                          : std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  std::atomic<int> checked{0}, vectors{0};
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    for (Op op : kAllOps) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 1700000, 13));
      for (const Case& c : cases) {
        const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
        EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
        EXPECT_NE(e.kernel.find(" general:"), std::string::npos) << e.to_string();
        const bool one = e.kernel.find(",group=1,") != std::string::npos;
        const bool scalars = e.kernel.find(",vec=1,") != std::string::npos;
        // Lanes (or vectors) along R where a reduced dimension is the densest (a thread
        // per output or vector of them where a kept one is, with threads across R where
        // they are few: any group).
        if (!c.thread_per_output) {
          EXPECT_TRUE(!one || !scalars) << e.to_string();
        }
        if (!scalars) ++vectors;
        EXPECT_EQ(check(ctx, op, t, buffer, c.base, c.view, c.axes), "");
        ++checked;
      }
    }
  });
  std::printf("[ counts   ] axes: %d general (op, dtype, shape) cases, %d of them with vectors\n", checked.load(),
              vectors.load());
  EXPECT_GT(vectors.load(), 0);
}

// General views whose densest dimension is kept and whose outputs are few: threads across
// R for each vector of outputs, folded in shared memory, unsplit, split with the last
// block folding and split in two launches (each view that the built-in choice splits
// in two launches also with the last block folding, by its config; small enough for the
// sanitizers); from an
// aligned base, and from one an element off the vector grid (each output of a vector
// its own scalar loads, one walk for them all).
TEST(Axes, GeneralKeptDensestFoldAcrossR) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const DeviceKey device = *testing::test_device();
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  const ViewAxes cases[] = {{TensorDesc::contiguous({8, 32, 64, 128}), {0, 2}},  // 4096 outputs, unsplit (16-bit: split)
                            {TensorDesc::contiguous({3, 6, 20000, 8}), {0, 2}},  // 48, split: a second kernel
                            {TensorDesc::contiguous({20000, 2, 3, 2}), {0, 2}},  // 4, split: the last block folds
                            {TensorDesc::contiguous({100, 10, 100, 20}), {0, 2}}};  // 200, split: a second kernel
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::f16}, {Op::mean, DType::f64}};
  int checked = 0, forced = 0;
  std::set<std::string> splits;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 3 * 6 * 20000 * 8 + 1, 17));
    for (const ViewAxes& c : cases) {
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
      EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
      EXPECT_EQ(e.kernel.find(",group=1,"), std::string::npos) << e.to_string();  // threads across R
      const std::string split = split_of(e.kernel);
      ASSERT_NE(split, "") << e.kernel;
      splits.insert(split);
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, base, c.view, c.axes), "") << base;
        ++checked;
      }
      // The built-in choice split: the same kernel with the other fold, the last block
      // folding the partials (a tuned config may take it).
      const CanonicalAxes shape = canonicalize(c.view, c.axes).axes;
      AxisKernelSpec spec = builtin_axis_spec(op, t, shape, device.sm_count);
      if (spec.split != AxisSplit::two_pass) continue;
      spec.split = AxisSplit::ticket;
      const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
      ASSERT_GT(plan.splits, 1u) << to_string(spec);
      ASSERT_EQ(plan.finalize_grid, 0u) << to_string(spec);
      const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
      LaunchWorkspace workspace(plan.partial_count * size_of(t.acc));
      ++forced;
      for (std::int64_t base : {0, 1}) {
        const std::string why = check_with(
            [&](const void* in, void* out) {
              const void* origin = static_cast<const unsigned char*>(in) +
                                   shape.base_offset * static_cast<std::int64_t>(size_of(t.in));
              enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, origin, out, &workspace.view,
                                     nullptr);
            },
            op, t, buffer, base, c.view, c.axes);
        EXPECT_EQ(why, "") << to_string(spec) << " base " << base;
        ++checked;
      }
    }
  }
  std::printf("[ counts   ] axes: %d general kept-densest cases, %zu kinds of split, %d views folded by the last "
              "block by their config\n",
              checked, splits.size(), forced);
  EXPECT_EQ(splits.size(), 3u);  // none, ticket, two_pass
  EXPECT_GT(forced, 0);
}

// 16-bit kept-densest views of one to two blocks per SM over a long R, on the vector grid
// (unsplit) and off it (the twin, split in blocks of 256 on a GPU of 132 SMs). The
// explanation given the pointer names the split the call takes.
TEST(Axes, GeneralKeptDensestLong16BitReductions) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  // 132 blocks of the view are one to two per SM on a GPU of 67 to 132 SMs.
  const bool in_band = testing::test_device()->sm_count > 66 && testing::test_device()->sm_count <= 132;
  const TensorDesc view = TensorDesc::contiguous({100, 33, 100, 128});
  const AxisList axes{0, 2};
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f16}, {Op::max, DType::bf16}, {Op::mean, DType::f16}};
  int checked = 0, split = 0;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 100 * 33 * 100 * 128 + 1, 23));
    for (std::int64_t base : {0, 1}) {
      const void* at = static_cast<const unsigned char*>(buffer.device.get()) + base * 2;
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, view, axes, at);
      std::printf("[ kernel   ] base %lld: %s\n", static_cast<long long>(base), e.kernel.c_str());
      EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
      if (in_band) {
        EXPECT_EQ(split_of(e.kernel), base == 0 ? "none" : "two_pass") << e.kernel;
      }
      if (split_of(e.kernel) == "two_pass") ++split;
      EXPECT_EQ(check(ctx, op, t, buffer, base, view, axes), "") << base;
      ++checked;
    }
    // Without the pointer, the explanation is the aligned base's.
    EXPECT_EQ(ctx.explain_axes(op, t.in, t.out, view, axes).kernel,
              ctx.explain_axes(op, t.in, t.out, view, axes, buffer.device.get()).kernel);
  }
  std::printf("[ counts   ] axes: %d long 16-bit kept-densest cases, %d of them split\n", checked, split);
}

// Kept-densest views read element by element (an innermost kept extent off every vector's
// grid) over many outputs, split: in groups of 8 lanes across R and a second kernel on a
// GPU of 132 SMs (fewer outputs keep groups of 32); the permuted one through the runtime's
// reorder (its outputs written in the caller's order). Every op kind against the host,
// from an aligned base and from one element in.
TEST(Axes, GeneralKeptDensestScalarsSplitInGroupsOfEight) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<ViewConfig> cases = {
      // 333 outputs in 42 blocks of 256 over R = 16386: split.
      {TensorDesc::contiguous({2, 9, 8193, 37}), {0, 2}, "group=8,vec=1,split=two_pass"},
      // 231 outputs, split as fewer blocks than a quarter of the SMs.
      {TensorDesc::contiguous({2, 7, 3541, 33}), {0, 2}, "group=8,vec=1,split=two_pass"},
      // [2,7,3541,33] permuted to [33,7,2,3541], its [2,3541] reduced: stage 1 is the above.
      {TensorDesc::strided({33, 7, 2, 3541}, {1, 116853, 817971, 33}), {2, 3}, "group=8,vec=1,split=two_pass"},
      // 21 outputs: groups of 32.
      {TensorDesc::contiguous({4, 3, 20001, 7}), {0, 2}, "group=32,vec=1,split=two_pass"}};
  const int checked = check_views_name_their_configs(
      ctx, cases, {{Op::sum, DType::f32}, {Op::max, DType::bf16}, {Op::mean, DType::f16}, {Op::prod, DType::i32},
                   {Op::min, DType::u32}},
      2 * 9 * 8193 * 37 + 1, 47,
      [](const AxisExplanation& e) { EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string(); });
  std::printf("[ counts   ] axes: %d kept-densest scalar cases\n", checked);
}

// General views of a block per output over a long R, split across blocks: up to 256
// outputs the last block folds the partials (split=ticket, one launch), past that a
// second kernel (260 outputs on a GPU of 132 SMs) or none; a permuted view among them,
// views from an element into their storage too.
TEST(Axes, GeneralBlockPerOutputSplitsFoldInTheLastBlock) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  struct Case {
    TensorDesc view;
    AxisList axes;
    std::int64_t outputs;
  };
  const Case cases[] = {{TensorDesc::strided({96, 512, 64}, {512, 1, 49152}), {1, 2}, 96},  // permuted [64,96,512]
                        {TensorDesc::contiguous({64, 200, 512}), {0, 2}, 200},
                        {TensorDesc::contiguous({16, 256, 2048}), {0, 2}, 256},
                        {TensorDesc::contiguous({64, 260, 512}), {0, 2}, 260},  // 132 SMs: a second kernel
                        {TensorDesc::contiguous({64, 300, 512}), {0, 2}, 300},
                        // Read element by element (blocks of 256, eight loads in flight):
                        // every other element, every third, rows of every other element.
                        {TensorDesc::strided({1000003}, {2}), {0}, 1},
                        {TensorDesc::strided({700001}, {3}), {0}, 1},
                        {TensorDesc::strided({24, 40001}, {80002, 2}), {1}, 24},
                        {TensorDesc::strided({257, 16385}, {32770, 2}), {1}, 257},
                        // Two reduced dimensions, splits of 11250 (blocks of 256 from 4-byte
                        // elements on a GPU of 132 SMs).
                        {TensorDesc::contiguous({8, 3, 8, 30001}), {1, 3}, 64}};
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::f16}, {Op::mean, DType::f64},
                                        {Op::prod, DType::i32}};
  int checked = 0, folded = 0;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 64 * 300 * 512 + 1, 29));
    for (const Case& c : cases) {
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
      EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
      EXPECT_EQ(e.shape.outputs, static_cast<std::uint64_t>(c.outputs)) << e.to_string();
      const std::string split = split_of(e.kernel);
      ASSERT_NE(split, "") << e.kernel;
      if (split != "none") {
        EXPECT_EQ(split, c.outputs <= 256 ? "ticket" : "two_pass") << e.kernel;
      }
      if (split == "ticket") ++folded;
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, base, c.view, c.axes), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
  }
  std::printf("[ counts   ] axes: %d general block-per-output cases, %d (op, view) of them folded by the last block\n",
              checked, folded);
  EXPECT_GT(folded, 0);
}

// Runs of 2 to 4 contiguous reduced elements side by side with the outputs ([n, m, e]
// over (0, 2)), read by 1 to 4 lanes per output: every op kind against the host, from an
// aligned base and from one element in (off the vector grid), with the group the built-in
// choice names.
TEST(Axes, InterleavedRunsReadWithFewLanesPerOutput) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const bool on_132 = testing::test_device()->sm_count == 132;
  struct Case {
    std::int64_t n, m, e;
    const char* group;  // on a GPU of 132 SMs
  };
  const Case cases[] = {{146, 32768, 3, "group=4,"}, {100, 65536, 2, "group=2,"}, {20, 100000, 4, "group=2,"},
                        {9, 262144, 3, "group=1,"}};
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::f16}, {Op::mean, DType::f64},
                                        {Op::prod, DType::i32}, {Op::min, DType::bf16}};
  int checked = 0;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 146 * 32768 * 3 + 8, 37));
    for (const Case& c : cases) {
      const TensorDesc view = TensorDesc::contiguous({c.n, c.m, c.e});
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, view, {0, 2});
      EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
      if (on_132) {
        EXPECT_NE(e.kernel.find(c.group), std::string::npos) << e.to_string();
      }
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, base, view, {0, 2}), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
  }
  std::printf("[ counts   ] axes: %d interleaved-run cases%s\n", checked,
              on_132 ? "" : " (not 132 SMs: the groups are not checked)");
}

// Every other element of 16-bit data (a reduced dimension of stride 2) is read by
// block-wide groups as the aligned 16-byte vectors that hold it, their even elements
// folded (fold_every_other in axis.cuh), where each lane has a pass of vectors: flat runs
// split across blocks and a few long rows of them, every 16-bit op kind against the host
// from each element of the 16-byte grid's first vector (every head length; odd ones off
// the 4-byte grid read scalars); short runs and 4-byte elements (scalars) beside them.
// The view's last element is its allocation's last, so that a vector reaching past it
// shows in the sanitizer run (memcheck). A program whose vectors leave an element out
// (mutation 8) gives a wrong answer.
TEST(Axes, EveryOtherSixteenBitElementIsReadInAlignedVectors) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  Context ctx(no_database());
  std::vector<ViewAxes> views;
  for (std::int64_t n : {2, 3, 5, 9, 17, 1000, 1000003, 8388609})
    if (!quick || n == 9 || n == 8388609) views.push_back({TensorDesc::strided({n}, {2}), {0}});
  views.push_back({TensorDesc::strided({4, 2000001}, {4000003, 2}), {1}});  // rows a step off each other
  if (!quick) views.push_back({TensorDesc::strided({24, 40001}, {80002, 2}), {1}});
  std::vector<std::pair<Op, DType>> kinds = {{Op::sum, DType::f16}, {Op::max, DType::f16}, {Op::min, DType::bf16},
                                             {Op::mean, DType::bf16}, {Op::sum, DType::f32}};
  if (quick) kinds = {{Op::sum, DType::f16}};
  int checked = 0;
  for (const auto& [op, dtype] : kinds) {
    // 16-bit sums into f32 (exact over these data).
    const TypeRule t =
        op == Op::sum && is_16bit_float(dtype) ? *resolve_types(op, dtype, DType::f32).rule : rule(op, dtype);
    for (const ViewAxes& v : views) {
      std::int64_t last = 0, elements = 1;
      for (int d = 0; d < v.view.rank; ++d) {
        last += (v.view.extents[d] - 1) * v.view.strides[d];
        elements *= v.view.extents[d];
      }
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, v.view, v.axes);
      EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
      EXPECT_NE(e.kernel.find("vec=1,"), std::string::npos) << e.to_string();
      for (std::int64_t base = 0; base < 8; ++base) {
        if ((quick || elements > 2000000) && base != 0 && base != 1 && base != 6) continue;
        // An allocation that ends at the view's last element.
        const testing::HostArray host =
            testing::make_input(op, dtype, testing::Pattern::exact, static_cast<std::size_t>(base + last + 1), 41);
        Buffer buffer{host, DeviceBuffer(host.bytes.size())};
        RT_CUDA_CHECK(cudaMemcpy(buffer.device.get(), host.bytes.data(), host.bytes.size(), cudaMemcpyHostToDevice));
        EXPECT_EQ(check(ctx, op, t, buffer, base, v.view, v.axes), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
  }
  std::printf("[ counts   ] axes: %d every-other-element cases\n", checked);
  if (quick) return;
  // The long run's built-in program with one element of each vector left out.
  const DeviceKey device = *testing::test_device();
  const TypeRule t = *resolve_types(Op::sum, DType::f16, DType::f32).rule;
  const ViewAxes v{TensorDesc::strided({8388609}, {2}), {0}};
  const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
  const AxisKernelSpec spec = builtin_axis_spec(Op::sum, t, shape, device.sm_count);
  const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  const Buffer buffer = upload(testing::make_input(Op::sum, DType::f16, testing::Pattern::exact, 16777226, 43));
  for (int mutation : {0, 8}) {
    CompileRequest request = make_axis_compile_request(spec, device.arch());
    if (mutation) request.extra_options.push_back("-DRT_MUTATION=" + std::to_string(mutation));
    const KernelSet set(std::make_shared<const CompiledProgram>(compiler.compile(request)), 1, device.arch());
    for (std::int64_t base : {0, 2}) {
      LaunchWorkspace ws(plan.partial_count * size_of(t.acc));
      const std::string why = check_with(
          [&](const void* in, void* out) {
            enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, in, out,
                                   plan.partial_count > 0 ? &ws.view : nullptr, nullptr);
          },
          Op::sum, t, buffer, base, v.view, v.axes);
      if (mutation == 0)
        EXPECT_EQ(why, "") << to_string(spec) << " base " << base;
      else
        EXPECT_NE(why, "") << to_string(spec) << " base " << base << ": mutation 8 gave the right answer";
    }
  }
}

// Folded columns (rt::axis_columns_folded_kernel, the engine's FoldedColumns): general
// views of dense rows whose neighbouring columns fold into one output, as x.view(N, C, K)
// reduced over (0, 2), or a permuted [rows][a][b][c] reduced over the rows and b.
// - Through the runtime, views of 2^22 elements and more, whose built-in choice it is
//   (two kernels, and a last-block fold over three outputs), for five op kinds against
//   the host from an aligned base and from one element in (scalar loads), the allocation
//   ending at the view's last element; NaN and infinities among f32 and f16 values. (Not
//   in quick mode, the sanitizer's run.)
// - The family's spec as the built-in choice makes it, launched directly, for eight op
//   kinds over smaller views: outputs along a, along c, both, in either order, and slices
//   of rows, contiguous, apart, or the outputs' innermost; rows of 255 and of 1024.
// - Specs across blocks, vectors, unrolls and every split (none, two passes, a last-block
//   fold over contiguous chunks or tiles) over three views, those with a ticket launched
//   twice over one workspace; programs that drop the last reduced element (mutation 2)
//   or the last output (mutation 5) are caught.
TEST(Axes, FoldedColumnsMatchTheHost) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  Context ctx(no_database());
  const DeviceKey device = *testing::test_device();
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  const auto last_offset = [](const TensorDesc& view) {
    std::int64_t last = 0;
    for (int d = 0; d < view.rank; ++d) last += (view.extents[d] - 1) * view.strides[d];
    return last;
  };
  // A view's input: exact data from `base`, the allocation ending at its last element.
  const auto input = [&](Op op, DType dtype, const TensorDesc& view, std::int64_t base, std::uint64_t seed) {
    return upload(testing::make_input(op, dtype, testing::Pattern::exact,
                                      static_cast<std::size_t>(base + last_offset(view) + 1), seed));
  };
  // `spec` launched directly over the view at `base`: "" or the first mismatch (each
  // program compiled once).
  std::map<std::pair<std::uint64_t, int>, std::unique_ptr<KernelSet>> programs;
  const auto launch = [&](const AxisKernelSpec& spec, const ViewAxes& v, const Buffer& buffer, std::int64_t base,
                          int mutation) {
    const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
    const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
    std::unique_ptr<KernelSet>& cached = programs[{axis_spec_key(spec), mutation}];
    if (!cached) {
      CompileRequest request = make_axis_compile_request(spec, device.arch());
      if (mutation) request.extra_options.push_back("-DRT_MUTATION=" + std::to_string(mutation));
      cached = std::make_unique<KernelSet>(std::make_shared<const CompiledProgram>(compiler.compile(request)), 1,
                                           device.arch());
    }
    const KernelSet& set = *cached;
    LaunchWorkspace ws(plan.partial_count * size_of(spec.types.acc));
    const auto once = [&] {
      return check_with(
          [&](const void* in, void* out) {
            enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, in, out,
                                   plan.partial_count > 0 ? &ws.view : nullptr, nullptr);
          },
          spec.op, spec.types, buffer, base, v.view, v.axes);
    };
    // Split with a ticket, twice over one workspace: the last block sets the ticket back
    // to zero.
    std::string why = once();
    if (why.empty() && (spec.split == AxisSplit::ticket || spec.split == AxisSplit::ticket_tiles) && plan.splits > 1)
      why = once();
    return why;
  };
  std::vector<std::pair<Op, DType>> kinds = {{Op::sum, DType::f32},  {Op::max, DType::f16}, {Op::mean, DType::f64},
                                             {Op::prod, DType::i32}, {Op::min, DType::bf16}, {Op::sum, DType::bf16},
                                             {Op::max, DType::i64},  {Op::mean, DType::bf16}};
  if (quick) kinds = {{Op::sum, DType::f32}, {Op::mean, DType::bf16}};

  // Through the runtime.
  const std::vector<ViewAxes> large = {
      {TensorDesc::strided({2, 7, 10623, 33}, {1, 2, 462, 14}), {1, 2}},      // [10623][33][7][2]: a 33, b 7, c 2
      {TensorDesc::strided({2, 13, 2, 81001}, {1, 2, 2106026, 26}), {0, 3}},  // two slices of [81001][13][2]
      {TensorDesc::contiguous({349526, 3, 4}), {0, 2}},                       // three outputs: the last block folds
  };
  int checked = 0;
  for (const auto& [op, dtype] : kinds) {
    if (quick) break;  // the sanitizer's run: the smaller views below
    if (dtype == DType::f64 || dtype == DType::i32 || (op == Op::sum && dtype == DType::bf16)) continue;
    const TypeRule t = rule(op, dtype);
    for (const ViewAxes& v : large) {
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, v.view, v.axes);
      EXPECT_NE(e.kernel.find("columns_folded:"), std::string::npos) << e.to_string();
      for (std::int64_t base : {0, 1}) {
        if (quick && base != 0) continue;
        const Buffer buffer = input(op, dtype, v.view, base, 47);
        EXPECT_EQ(check(ctx, op, t, buffer, base, v.view, v.axes), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
  }
  // NaN and infinities among the first view's values (f32 and f16 max and min): a NaN
  // wins its output, an infinity its own where no NaN is.
  for (const auto& [op, dtype] : std::vector<std::pair<Op, DType>>{
           {Op::max, DType::f32}, {Op::min, DType::f32}, {Op::max, DType::f16}, {Op::min, DType::f16}}) {
    if (quick) break;
    const ViewAxes& v = large[0];
    const std::int64_t last = last_offset(v.view);
    testing::HostArray host =
        testing::make_input(op, dtype, testing::Pattern::exact, static_cast<std::size_t>(last + 1), 59);
    const auto put = [&](std::int64_t at, double value) {
      if (dtype == DType::f32) {
        const float x = static_cast<float>(value);
        std::memcpy(host.bytes.data() + at * 4, &x, 4);
      } else {
        const std::uint16_t h = std::isnan(value) ? 0x7e00 : value > 0 ? 0x7c00 : 0xfc00;
        std::memcpy(host.bytes.data() + at * 2, &h, 2);
      }
    };
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    put(17, nan);
    put(last / 2, nan);
    put(last, nan);
    put(last / 3, inf);
    put(2 * last / 3, -inf);
    put(last / 5, -inf);
    const Buffer buffer = upload(host);
    const TypeRule t = rule(op, dtype);
    EXPECT_EQ(check(ctx, op, t, buffer, 0, v.view, v.axes), "") << "NaN and infinities";
    ++checked;
  }
  // Rows past the widest the family reads: a general view.
  const ViewAxes wide{TensorDesc::contiguous({4000, 205, 5}), {0, 2}};
  const AxisExplanation e = ctx.explain_axes(Op::sum, DType::f32, DType::f32, wide.view, wide.axes);
  EXPECT_EQ(e.kernel.find("columns_folded"), std::string::npos) << e.to_string();

  // The built-in choice's form of the spec, over smaller views.
  const std::vector<ViewAxes> views = {
      {TensorDesc::strided({2, 7, 3541, 33}, {1, 2, 462, 14}), {1, 2}},      // [3541][33][7][2]: a 33, b 7, c 2
      {TensorDesc::strided({2, 13, 2, 20011}, {1, 2, 520286, 26}), {0, 3}},  // two slices of [20011][13][2]
      {TensorDesc::contiguous({257, 64, 4}), {0, 2}},                        // a 64, b 4
      {TensorDesc::contiguous({1000, 30, 7}), {0, 2}},                       // rows of 210
      {TensorDesc::contiguous({3, 2000, 50, 9}), {1, 3}},                    // three slices of [2000][50][9]
      {TensorDesc::contiguous({3001, 17, 3, 5}), {0, 2}},                    // rows of 255: a 17, b 3, c 5
      {TensorDesc::strided({3, 12, 600, 5}, {1, 15, 180, 3}), {2, 3}},       // outputs [c][a]
      {TensorDesc::strided({4, 100, 10, 3}, {5000, 30, 3, 1}), {1, 3}},      // slices 5000 apart, 3000 read
      {TensorDesc::strided({100, 10, 3, 4}, {30, 3, 1, 5000}), {0, 2}},      // outputs [a][slice]
      {TensorDesc::contiguous({100, 256, 4}), {0, 2}},                       // rows of 1024
  };
  const auto folded_spec = [&](Op op, const TypeRule& t, const CanonicalAxes& shape) {
    AxisKernelSpec spec;
    spec.op = op;
    spec.types = t;
    spec.family = AxisFamily::columns_folded;
    spec.group = 1;
    spec.vec = static_cast<std::uint32_t>(16 / size_of(t.in));
    spec.unroll = 4;
    const std::uint64_t width = axis_folded_columns(shape)->width();
    spec.block = width <= 256 ? 256 : width <= 512 ? 512 : 1024;
    spec.split = AxisSplit::two_pass;
    const std::uint64_t splits = plan_axis_launch(spec, shape, device.sm_count).splits;
    spec.split = splits <= 1 ? AxisSplit::none
                 : shape.outputs * splits <= 2048 ? AxisSplit::ticket_tiles
                                                  : AxisSplit::two_pass;
    return spec;
  };
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    for (const ViewAxes& v : views) {
      const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
      ASSERT_TRUE(axis_folded_columns(shape).has_value()) << shape.to_string();
      const AxisKernelSpec spec = folded_spec(op, t, shape);
      for (std::int64_t base : {0, 1}) {
        if (quick && base != 0) continue;
        EXPECT_EQ(launch(spec, v, input(op, dtype, v.view, base, 49), base, 0), "") << to_string(spec) << " base " << base;
        ++checked;
      }
    }
  }
  std::printf("[ counts   ] axes: %d folded-columns cases\n", checked);

  // Specs of every split over three views, and their mutants.
  struct Form {
    std::uint32_t block, vec, unroll;
    AxisSplit split;
    std::uint32_t per_sm;
  };
  std::vector<Form> forms = {{256, 0, 4, AxisSplit::none, 4},         {256, 0, 4, AxisSplit::two_pass, 8},
                             {256, 1, 4, AxisSplit::ticket, 4},       {512, 0, 4, AxisSplit::ticket_tiles, 8},
                             {1024, 0, 4, AxisSplit::two_pass, 4},    {256, 0, 8, AxisSplit::ticket_tiles, 4}};
  if (quick) forms.resize(2);
  struct Target {
    std::size_t view;
    Op op;
    DType dtype;
  };
  int specs = 0, rejected = 0, mutants = 0;
  for (const Target& target : {Target{0, Op::mean, DType::bf16}, Target{6, Op::sum, DType::i64},
                               Target{4, Op::sum, DType::f32}}) {
    const ViewAxes& v = views[target.view];
    const TypeRule t = rule(target.op, target.dtype);
    const CanonicalAxes shape = canonicalize(v.view, v.axes).axes;
    const Buffer buffer = input(target.op, target.dtype, v.view, 1, 53);
    for (const Form& form : forms) {
      AxisKernelSpec spec;
      spec.op = target.op;
      spec.types = t;
      spec.family = AxisFamily::columns_folded;
      spec.block = form.block;
      while (spec.block < axis_folded_columns(shape)->width()) spec.block *= 2;  // a row's columns a block
      spec.group = 1;
      spec.vec = form.vec != 0 ? form.vec : static_cast<std::uint32_t>(16 / size_of(target.dtype));
      spec.unroll = form.unroll;
      spec.split = form.split;
      spec.blocks_per_sm = form.split == AxisSplit::none ? 4 : form.per_sm;
      ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
      ASSERT_EQ(axis_spec_mismatch(spec, shape), "") << to_string(spec) << " " << shape.to_string();
      if (spec.split != AxisSplit::none) {
        EXPECT_GT(plan_axis_launch(spec, shape, device.sm_count).splits, 1u) << to_string(spec) << " "
                                                                             << shape.to_string();
      }
      for (int mutation : {0, 2, 5}) {
        if (mutation != 0 && (quick || form.vec == 1)) continue;
        for (std::int64_t base : {0, 1}) {
          const std::string why = launch(spec, v, buffer, base, mutation);
          if (mutation == 0) {
            EXPECT_EQ(why, "") << to_string(spec) << " base " << base;
            ++specs;
          } else {
            EXPECT_NE(why, "") << to_string(spec) << " base " << base << ": mutation " << mutation
                               << " gave the right answer";
            rejected += !why.empty();
            ++mutants;
          }
        }
      }
    }
  }
  std::printf("[ counts   ] folded columns: %d spec cases right, %d of %d broken ones rejected\n", specs, rejected,
              mutants);
}

// Small reductions in one launch: columns splits whose partials (at most 1536) fold in
// the last block, up to 8 outputs over a short R in one block of 512 threads across R,
// and kept-densest general views with at most R / 2 lanes per output. Every op kind
// against the host, from an aligned base and from one element in, with the config the
// built-in choice names (on a GPU of 132 SMs).
TEST(Axes, SmallReductionsTakeOneLaunch) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<ViewConfig> cases = {
      {TensorDesc::contiguous({2047, 41}), {0}, "split=ticket"},          // 820 partials (16-bit: dense columns)
      {TensorDesc::contiguous({1285, 100}), {0}, "split=ticket"},         // 1000
      {TensorDesc::contiguous({1285, 150}), {0}, "split=ticket"},         // 1500
      {TensorDesc::strided({2011, 7}, {14, 1}), {0}, "by=64,vec=1,split=none"},  // every other row
      {TensorDesc::contiguous({1100, 2}), {0}, "by=256,vec=1,split=none"},
      {TensorDesc::contiguous({8192, 3}), {0}, "by=128,vec=1,split=none"},
      {TensorDesc::strided({8, 128, 129}, {16512, 1, 128}), {0}, "group=4,"},
      {TensorDesc::strided({16, 1024, 16}, {16384, 1, 1024}), {0}, "group=8,"},
  };
  const int checked = check_views_name_their_configs(
      ctx, cases,
      {{Op::sum, DType::f32}, {Op::max, DType::f16}, {Op::mean, DType::f64}, {Op::prod, DType::i32},
       {Op::min, DType::bf16}, {Op::sum, DType::bf16}},
      16 * 16384 + 8, 41,
      [](const AxisExplanation& e) { EXPECT_EQ(e.kernel.find(", then a copy"), std::string::npos) << e.to_string(); });
  std::printf("[ counts   ] axes: %d small one-launch cases%s\n", checked,
              testing::test_device()->sm_count == 132 ? "" : " (not 132 SMs: the configs are not checked)");
}

// Permuted views whose densest dimension is kept but is not the outputs' innermost, or
// reduced with the kept ones out of their strides' order (transposed batches of rows):
// reduced in the order of their strides (columns, general with the outputs along the
// densest dimension, or rows), each output written at its place in the caller's order, in
// one launch; past axis_reorder_writes_directly's limits into the workspace, then copied
// into the caller's order; small ones of the first kind (R <= 256 and at most 2^18
// elements: axis_reorder_pays) in one launch as they are. Every op and dtype against the
// host, from an aligned base and from one element in; a NaN and infinities among the
// values; the explanation names the form.
TEST(Axes, PermutedViewsAreReducedInStrideOrder) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  enum Form { as_is, ordered, copied };
  struct Case {
    TensorDesc view;
    AxisList axes;
    std::int64_t base;  // the element (0, ..., 0) of the view
    Form form;
  };
  const std::vector<Case> cases = {
      {TensorDesc::strided({3, 300, 501}, {1, 3, 900}), {1}, 0, ordered},   // base [501,300,3] reversed in order
      {TensorDesc::strided({17, 7001, 7}, {1, 119, 17}), {2}, 0, ordered},  // base [7001,7,17] permuted (2,0,1)
      // general first step: base [6,35,50,20] permuted (3,0,1,2), the 6 and the 50 reduced
      {TensorDesc::strided({20, 6, 35, 50}, {1, 35000, 1000, 20}), {1, 3}, 0, ordered},
      // the same with a reversed reduced dimension and an extent-1 dimension
      {TensorDesc::strided({20, 1, 6, 35, 50}, {1, 99, -35000, 1000, 20}), {2, 4}, 175000, ordered},
      // three kept dimensions, two of them one run in stage-1 order: base [4,7,300,9] permuted (1,3,2,0)
      {TensorDesc::strided({7, 9, 300, 4}, {2700, 1, 9, 18900}), {2}, 0, ordered},
      // transposed rows: (B, S, H, D) over memory (B, H, S, D), D reduced
      {TensorDesc::strided({3, 40, 5, 64}, {12800, 64, 2560, 1}), {3}, 0, ordered},
      {TensorDesc::strided({300, 50, 8}, {8, 2400, 1}), {2}, 0, ordered},  // short rows: base [50,300,8]
      {TensorDesc::strided({40, 30, 7, 9}, {63, 2520, 9, 1}), {2, 3}, 0, ordered},  // two reduced: base [30,40,7,9]
      {TensorDesc::strided({3, 4, 20000}, {20000, 60000, 1}), {2}, 0, ordered},  // few long rows: splits
      // small: one launch
      {TensorDesc::strided({21, 40, 9, 15}, {135, 2835, 1, 9}), {1}, 0, as_is},  // base [40,21,15,9] permuted (1,0,3,2)
      {TensorDesc::strided({5, 6, 7, 8}, {1, 280, 40, 5}), {1, 3}, 0, as_is},
      {TensorDesc::strided({5, 1, 6, 7, 8}, {1, 99, -280, 40, 5}), {2, 4}, 1400, as_is},
      {TensorDesc::strided({8, 128, 129}, {16512, 1, 128}), {0}, 0, as_is},  // R = 8: four lanes an output
  };
  const auto form_of = [](const AxisExplanation& e) {
    if (e.kernel.find(", then a copy into the output's order: ") != std::string::npos) return copied;
    if (e.kernel.find(", each output written at its place in the output's order") != std::string::npos) return ordered;
    return as_is;
  };
  const std::vector<DType> dtypes = testing::quick_mode() ? std::vector<DType>{DType::f32, DType::f16}
                                                          : std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  std::atomic<int> checked{0};
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    for (Op op : kAllOps) {
      const TypeRule t = rule(op, dtype);
      const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 8467 * 7 * 17 + 8, 29));
      for (const Case& c : cases) {
        const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
        EXPECT_EQ(e.shape.layout, AxisLayout::general) << e.to_string();
        EXPECT_EQ(form_of(e), c.form) << e.to_string();
        for (std::int64_t shift : {0, 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, c.base + shift, c.view, c.axes), "") << e.to_string();
          ++checked;
        }
      }
    }
  });
  // Past kAxisDirectOrderFewOutputs with R = 4: staged, then copied. Base [4,513,512]
  // seen as [4,512,513] along the 4: 262656 outputs. Transposed rows ([a, b, R] strides
  // [R, a*R, 1] along 2): staged where a row is 32 bytes or less, else as they are.
  // Between kAxisDirectOrderAnyRows and kAxisDirectOrderFewOutputs (140000 outputs):
  // written directly where an output reads more than 64 bytes, else staged.
  static_assert(kAxisDirectOrderFewOutputs < 512 * 513 && kAxisReorderShortRowBytes == 32);
  static_assert(kAxisDirectOrderAnyRows < 140000 && kAxisDirectOrderFewOutputs > 140000 &&
                kAxisDirectOrderLongRowBytes == 64);
  const Case big{TensorDesc::strided({4, 512, 513}, {512 * 513, 1, 512}), {0}, 0, copied};
  const auto rows_of = [](std::int64_t a, std::int64_t b, std::int64_t r) {
    return TensorDesc::strided({a, b, r}, {r, a * r, 1});
  };
  for (const auto& [op, dtype] : {std::pair{Op::sum, DType::f32}, std::pair{Op::max, DType::f16}}) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 8 * 1024 * 1024 + 8, 37));
    const bool short_rows = 16 * size_of(dtype) <= 32;
    for (const Case& c : {big, Case{rows_of(1024, 1024, 4), {2}, 0, copied},
                          Case{rows_of(1024, 1024, 8), {2}, 0, copied},
                          Case{rows_of(513, 512, 16), {2}, 0, short_rows ? copied : as_is},
                          Case{rows_of(513, 512, 4), {2}, 0, copied},
                          Case{TensorDesc::strided({17, 400, 350}, {140000, 1, 400}), {0}, 0,
                               17 * size_of(dtype) > 64 ? ordered : copied},
                          Case{rows_of(400, 350, 8), {2}, 0, copied},
                          Case{rows_of(400, 350, 20), {2}, 0, 20 * size_of(dtype) > 64 ? ordered : copied}}) {
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
      EXPECT_EQ(form_of(e), c.form) << e.to_string();
      for (std::int64_t shift : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, shift, c.view, c.axes), "") << e.to_string();
        ++checked;
      }
    }
  }
  // NaN and infinities reach the output through the one launch and through both steps.
  for (Op op : {Op::sum, Op::max, Op::min, Op::mean}) {
    const TypeRule t = rule(op, DType::f32);
    testing::HostArray host = testing::make_input(op, DType::f32, testing::Pattern::exact, 3 * 300 * 501, 3);
    float* x = reinterpret_cast<float*>(host.bytes.data());
    x[7 * 900 + 5 * 3 + 1] = std::nanf("");
    x[9 * 900 + 2] = std::numeric_limits<float>::infinity();
    x[11 * 900 + 3 + 2] = -std::numeric_limits<float>::infinity();
    const Buffer buffer = upload(host);
    EXPECT_EQ(check(ctx, op, t, buffer, 0, cases[0].view, cases[0].axes), "");
    EXPECT_EQ(check(ctx, op, t, buffer, 0, cases[5].view, cases[5].axes), "");  // transposed rows
    EXPECT_EQ(check(ctx, op, t, buffer, 0, cases[6].view, cases[6].axes), "");  // and short ones
    checked += 3;
  }
  {
    const TypeRule t = rule(Op::max, DType::f32);
    testing::HostArray host = testing::make_input(Op::max, DType::f32, testing::Pattern::exact, 4 * 512 * 513, 5);
    float* x = reinterpret_cast<float*>(host.bytes.data());
    x[2 * 512 * 513 + 77 * 512 + 100] = std::nanf("");
    x[3 * 512 * 513 + 5] = std::numeric_limits<float>::infinity();
    const Buffer buffer = upload(host);
    EXPECT_EQ(check(ctx, Op::max, t, buffer, 0, big.view, big.axes), "");
    ++checked;
  }
  std::printf("[ counts   ] axes: %d permuted (op, dtype, view, base) cases reduced in stride order\n",
              checked.load());
}

// Every family (a reordered view's first step can take any of them) writes its outputs
// through an output order in its ordered form (ordered=1, the one-launch form of a
// reordered view): each view M below is reduced by the candidates' kernels (one of each
// family, split, vector and group kind the tuner would measure) made ordered, their
// outputs written in the order of M's two kept dimensions swapped, and checked against
// the view with those dimensions swapped (bases 0 and 1: the twins), folded columns among
// them.
TEST(Axes, EveryFamilyWritesItsOutputsInAGivenOrder) {
  RT_REQUIRE_GPU();
  const DeviceKey device = *testing::test_device();
  struct View {
    TensorDesc m;
    AxisList axes;
    int p, q;  // the kept dimensions, outer then inner
  };
  const std::vector<View> views = {
      {TensorDesc::contiguous({5, 4000, 300}), {1}, 0, 2},      // columns
      {TensorDesc::contiguous({3, 20000, 7}), {1}, 0, 2},       // dense columns: splits
      {TensorDesc::contiguous({2, 513, 256}), {1}, 0, 2},       // columns on the vector grid
      {TensorDesc::contiguous({6, 9, 5, 40}), {0, 2}, 1, 3},    // general, kept densest
      {TensorDesc::contiguous({9, 6, 40, 50}), {1, 3}, 0, 2},   // general, reduced densest
      {TensorDesc::contiguous({40, 30, 300}), {2}, 0, 1},       // rows
      {TensorDesc::contiguous({50, 60, 6}), {2}, 0, 1},         // rows of 6: rows_dense
      {TensorDesc::contiguous({3, 2, 30000}), {2}, 0, 1},       // few long rows: splits
      {TensorDesc::contiguous({300, 8, 5, 6}), {0, 2}, 1, 3},   // rows of [8][5][6]: folded columns
  };
  std::atomic<int> checked{0}, programs{0}, folded{0};
  const std::vector<DType> dtypes = testing::quick_mode() ? std::vector<DType>{DType::f32}
                                                          : std::vector<DType>{DType::f32, DType::f16, DType::f64};
  for_each_dtype_in_threads(dtypes, [&](DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    const Op op = dtype == DType::f16 ? Op::max : Op::sum;
    const TypeRule t = rule(op, dtype);
    for (const View& v : views) {
      const CanonicalAxes shape = canonicalize(v.m, v.axes).axes;
      TensorDesc swapped = v.m;
      std::swap(swapped.extents[v.p], swapped.extents[v.q]);
      std::swap(swapped.strides[v.p], swapped.strides[v.q]);
      AxisOutputOrder order;
      order.rank = 2;
      order.extents[0] = static_cast<std::uint32_t>(v.m.extents[v.p]);
      order.extents[1] = static_cast<std::uint32_t>(v.m.extents[v.q]);
      order.strides[0] = 1;
      order.strides[1] = order.extents[0];
      // One candidate of each kind.
      std::set<std::string> kinds;
      for (AxisKernelSpec spec : axis_candidates(op, t, shape, device.sm_count)) {
        spec.ordered = 1;
        ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
        const std::string kind = std::string(to_string(spec.family)) + "/" + std::string(to_string(spec.split)) +
                                 "/v" + std::to_string(spec.vec > 1) + "/g" + std::to_string(spec.group > 32) +
                                 "/r" + std::to_string(spec.rows_per_pass > 1) + "/t" + std::to_string(spec.tail);
        if (!kinds.insert(kind).second) continue;
        const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
        const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
        ++programs;
        folded += spec.family == AxisFamily::columns_folded;
        const std::size_t partial_bytes = plan.partial_count * size_of(t.acc);
        LaunchWorkspace workspace(partial_bytes);
        WorkspaceView& ws = workspace.view;
        const Buffer buffer =
            upload(testing::make_input(op, dtype, testing::Pattern::exact,
                                       static_cast<std::size_t>(shape.highest_offset + 2), 31));
        for (std::int64_t base : {0, 1}) {
          const std::string why = check_with(
              [&](const void* in, void* out) {
                enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, in, out,
                                       plan.partial_count > 0 ? &ws : nullptr, nullptr, &order);
              },
              op, t, buffer, base, swapped, v.axes);
          EXPECT_EQ(why, "") << to_string(spec) << " " << shape.to_string() << " base " << base;
          ++checked;
        }
      }
    }
  });
  std::printf("[ counts   ] %d programs (%d of folded columns), %d (program, view, base) cases written in a given "
              "order\n",
              programs.load(), folded.load(), checked.load());
  EXPECT_GT(folded.load(), 0);
}

// Columns of 8 to 15 rows over 2^17 to 2^18 outputs (four outputs a thread, 1024 a block,
// fewer blocks than two per SM on a GPU of 132 SMs) are not split: two splits of a few
// rows wrote and read again partials of nearly the input's size in a second launch.
TEST(Axes, ColumnsOfFewRowsOverManyOutputsAreNotSplit) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f16}, {Op::max, DType::bf16}, {Op::sum, DType::f32}};
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 15 * 196612 + 8, 31));
    for (const auto& [r, outputs] : {std::pair<std::int64_t, std::int64_t>{10, 196611}, {8, 135168}, {15, 196612}}) {
      const TensorDesc view = TensorDesc::contiguous({r, outputs});
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, view, {0});
      EXPECT_EQ(split_of(e.kernel), "none") << e.to_string();
      for (std::int64_t base : {0, 1}) EXPECT_EQ(check(ctx, op, t, buffer, base, view, {0}), "") << e.to_string();
    }
  }
}

// Short columns of many outputs (R = 2 and 3, vectors of outputs a thread, 2^21 outputs and
// more) take kernels compiled to fit more threads per SM, their registers capped (1024 for
// 4-byte elements, 1536 for 16-bit ones, 40 registers and some spills): the built-in choice
// on and off the vector grid, contiguous, with padded rows and across slices; and a config
// compiled at every cap and at none, on fewer outputs, each against the host. (The views
// lie off the 16-byte grid for 16-bit elements, where short_columns reads them.)
TEST(Axes, ShortColumnsCompiledToFitMoreThreadsMatchTheHost) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const DeviceKey device = *testing::test_device();
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  const ViewAxes builtin[] = {{TensorDesc::contiguous({2, 2097156}), {0}},
                              {TensorDesc::strided({3, 2100000}, {2100004, 1}), {0}},  // padded rows
                              {TensorDesc::contiguous({4, 2, 600004}), {1}}};          // four slices
  const ViewAxes forced_cases[] = {{TensorDesc::contiguous({2, 262148}), {0}},
                                   {TensorDesc::strided({3, 270000}, {270008, 1}), {0}}};
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::f32}, {Op::min, DType::i32},
                                        {Op::mean, DType::bf16}, {Op::sum, DType::f16}, {Op::max, DType::bf16}};
  int checked = 0, capped = 0, forced = 0;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 2 * 2100008 + 2100000 + 16, 23));
    for (const ViewAxes& c : builtin) {
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
      const std::uint32_t want = size_of(t.in) == 2 ? 1536 : 1024;
      EXPECT_NE(e.kernel.find(",occ=" + std::to_string(want)), std::string::npos) << e.to_string();
      capped += e.kernel.find(",occ=") != std::string::npos;
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, base, c.view, c.axes), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
    for (const ViewAxes& c : forced_cases) {
      const CanonicalAxes shape = canonicalize(c.view, c.axes).axes;
      for (std::uint32_t occupancy : {0u, 1024u, 1536u, 2048u}) {
        AxisKernelSpec spec = builtin_axis_spec(op, t, shape, device.sm_count);
        ASSERT_EQ(spec.family, AxisFamily::columns) << to_string(spec);
        ASSERT_GT(spec.vec, 1u) << to_string(spec);
        spec.occupancy = occupancy;
        if (!axis_spec_problem(spec).empty()) continue;
        ++forced;
        checked += check_launched(compiler, launcher, device, spec, buffer, c, false);
      }
    }
  }
  std::printf("[ counts   ] axes: %d short-column cases, %d built-in choices capped, %d configs forced\n", checked,
              capped, forced);
  EXPECT_EQ(capped, 18);
  EXPECT_EQ(forced, 48);
}

// Columns of two or four vectors of outputs a thread a pass (rows=2|4 with vec > 1): the
// built-in choice of 4-byte short columns of 2^21 outputs and more (off the grid, the
// twin's vectors of one a pass), and configs forced on
// fewer, each against the host: on the vector grid, with padded rows, across slices, where
// a slice ends inside a vector (its pass reads each output by itself), over R long enough
// for several rounds of loads, and from an element into the buffer (the twin).
TEST(Axes, ColumnsOfSeveralVectorsAPassMatchTheHost) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const DeviceKey device = *testing::test_device();
  NvrtcCompiler compiler;
  CudaLauncher launcher;
  // The built-in choice: two vectors a pass on the grid; off it (3 mod 4 outputs) the
  // twin's vectors, one a pass, capped too.
  const ViewAxes builtin[] = {{TensorDesc::contiguous({2, 2097156}), {0}},
                              {TensorDesc::strided({3, 2100000}, {2100008, 1}), {0}},
                              {TensorDesc::contiguous({3, 2097155}), {0}}};
  const ViewAxes forced_cases[] = {{TensorDesc::contiguous({2, 262148}), {0}},
                                   {TensorDesc::strided({3, 70001}, {70008, 1}), {0}},   // padded rows
                                   {TensorDesc::contiguous({4, 2, 60000}), {1}},          // four slices
                                   {TensorDesc::strided({3, 2, 4093}, {8192, 4096, 1}), {1}},  // a slice ends in a vector
                                   {TensorDesc::contiguous({37, 4100}), {0}}};            // R past the loads of a round
  const std::pair<Op, DType> kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::f32}, {Op::min, DType::i32},
                                        {Op::mean, DType::bf16}, {Op::sum, DType::f16}, {Op::prod, DType::f64},
                                        {Op::max, DType::bf16}};
  int checked = 0, two = 0, forced = 0;
  for (const auto& [op, dtype] : kinds) {
    const TypeRule t = rule(op, dtype);
    const Buffer buffer = upload(testing::make_input(op, dtype, testing::Pattern::exact, 2 * 2100008 + 2100000 + 16, 41));
    if (size_of(t.in) == 4)
      for (const ViewAxes& c : builtin) {
        const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
        const bool on_grid = c.view.extents[1] % 4 == 0;
        EXPECT_EQ(e.kernel.find(",rows=2") != std::string::npos, on_grid) << e.to_string();
        EXPECT_NE(e.kernel.find("vec=4"), std::string::npos) << e.to_string();
        EXPECT_NE(e.kernel.find(",occ=1024"), std::string::npos) << e.to_string();
        two += e.kernel.find(",rows=2") != std::string::npos;
        for (std::int64_t base : {0, 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, base, c.view, c.axes), "") << e.kernel << " base " << base;
          ++checked;
        }
      }
    for (const ViewAxes& c : forced_cases) {
      const CanonicalAxes shape = canonicalize(c.view, c.axes).axes;
      for (std::uint32_t rows : {2u, 4u})
        for (std::uint32_t block : {128u, 256u}) {
          AxisKernelSpec spec;
          spec.op = op;
          spec.types = t;
          spec.family = AxisFamily::columns;
          spec.block = block;
          spec.group = 1;
          spec.vec = static_cast<std::uint32_t>(16 / size_of(t.in));
          spec.rows_per_pass = rows;
          spec.tail = rows == 2 ? 1 : 0;
          spec.occupancy = rows == 2 && block == 256 ? 1024 : 0;
          ASSERT_EQ(axis_spec_problem(spec), "") << to_string(spec);
          ASSERT_EQ(axis_spec_mismatch(spec, shape), "") << to_string(spec) << " " << shape.to_string();
          ++forced;
          checked += check_launched(compiler, launcher, device, spec, buffer, c, false);
        }
    }
  }
  std::printf("[ counts   ] axes: %d cases of several vectors a pass, %d built-in choices, %d configs forced\n",
              checked, two, forced);
  EXPECT_EQ(two, 6);
  EXPECT_EQ(forced, 140);
}

// Long i64 rows, 2 to 4 per SM (a block each): min and max read in blocks of 512, sums
// in blocks of 256; rows of an odd length, so that most start off the vector grid, and
// from an element into the buffer.
TEST(Axes, FewLongI64RowsOfComparesReadInBlocksOf512) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::int64_t sms = testing::test_device()->sm_count;
  const std::int64_t r = 2049;
  int checked = 0;
  for (Op op : {Op::max, Op::min, Op::sum}) {
    const TypeRule t = rule(op, DType::i64);
    const Buffer buffer =
        upload(testing::make_input(op, DType::i64, testing::Pattern::exact, static_cast<std::size_t>(4 * sms * r + 1), 37));
    for (std::int64_t rows : {2 * sms, 3 * sms + 1, 4 * sms - 1}) {
      const TensorDesc view = TensorDesc::contiguous({rows, r});
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, view, {1});
      EXPECT_NE(e.kernel.find(op == Op::sum ? "rows:block=256,group=256," : "rows:block=512,group=512,"),
                std::string::npos)
          << e.to_string();
      EXPECT_EQ(split_of(e.kernel), "none") << e.to_string();
      for (std::int64_t base : {0, 1}) {
        EXPECT_EQ(check(ctx, op, t, buffer, base, view, {1}), "") << e.kernel << " base " << base;
        ++checked;
      }
    }
  }
  std::printf("[ counts   ] axes: %d long i64 rows cases\n", checked);
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

// Min and max fold a NaN or an infinity through every columns path. A staged f32 element
// folds with one instruction (rt::staged_fold: min.NaN/max.NaN), the others compare and
// select. Each shape takes one candidate the tuner draws of each (threads across R,
// vector, split, outputs a thread), up to kKinds a family, launched directly, and the
// built-in choice of 4-byte min and max over long columns (staged, set BR) runs through
// the runtime (i32 with its extremes in place of NaN and infinities). The data holds a NaN in a column's first row, in another's last row and in
// the input's last element, +Inf and -Inf in one column each, and a NaN beside a -Inf.
// Checked from an aligned base and from an element in (the vector kernels' twins),
// against the host.
TEST(Axes, ColumnsFoldNanAndInfinitiesInEveryPath) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  const DeviceKey device = *testing::test_device();
  const bool sm132 = device.sm_count == 132;
  struct Case {
    std::uint64_t r, outputs;
    AxisFamily family;  // a family the candidates must include
    bool builtin;       // also the built-in choice through the runtime
  };
  // Off the vector grid, long columns (columns_staged), few outputs (columns_dense),
  // short columns of many outputs (several outputs a thread), on the grid.
  std::vector<Case> shapes = {{3001, 517, AxisFamily::columns, false},
                              {6000, 1234, AxisFamily::columns_staged, false},
                              {65537, 7, AxisFamily::columns_dense, false}};
  if (!quick)
    shapes.insert(shapes.end(), {{40, 8192, AxisFamily::columns, false},
                                 {3, 1 << 18, AxisFamily::columns, false},
                                 {2049, 1024, AxisFamily::columns, false},
                                 {24576, 2501, AxisFamily::columns_staged, true}});
  const std::size_t kKinds = quick ? 1 : 4;
  std::vector<std::pair<Op, DType>> calls = {{Op::max, DType::f32}, {Op::min, DType::f32}};
  if (!quick) calls.insert(calls.end(), {{Op::max, DType::f16}, {Op::max, DType::i32}, {Op::min, DType::i32}});
  std::atomic<int> checked{0};
  for_each_kind_in_threads(calls, [&](Op op, DType dtype) {
    NvrtcCompiler compiler;
    CudaLauncher launcher;
    Context ctx(no_database());
    const TypeRule t = rule(op, dtype);
    for (const Case& c : shapes) {
      if (dtype == DType::i32 && !c.builtin) continue;  // i32: the staged built-in choice only
      const std::uint64_t n = c.r * c.outputs;
      testing::HostArray host = testing::make_input(op, dtype, testing::Pattern::exact, n + 1, 29);
      auto put = [&](std::uint64_t row, std::uint64_t column, double value) {
        const std::uint64_t at = std::min(row * c.outputs + column, n);
        if (dtype == DType::f32) {
          const float v = static_cast<float>(value);
          std::memcpy(host.bytes.data() + at * 4, &v, 4);
        } else if (dtype == DType::i32) {  // the extremes in place of NaN and infinities
          const std::int32_t v = value > 0 || std::isnan(value) ? std::numeric_limits<std::int32_t>::max()
                                                                : std::numeric_limits<std::int32_t>::min();
          std::memcpy(host.bytes.data() + at * 4, &v, 4);
        } else {
          const std::uint16_t h = std::isnan(value) ? 0x7e00 : value > 0 ? 0x7c00 : 0xfc00;
          std::memcpy(host.bytes.data() + at * 2, &h, 2);
        }
      };
      const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
      put(0, 1 % c.outputs, nan);
      put(c.r - 1, c.outputs / 2, nan);
      put(c.r / 3, c.outputs / 3, inf);
      put(c.r / 2, (c.outputs * 2) / 3, -inf);
      put(c.r / 2, c.outputs - 1, -inf);
      put(c.r / 4, c.outputs - 1, nan);
      put(c.r, 0, nan);  // the input's last element (one past the aligned view's)
      const Buffer buffer = upload(host);
      const ViewAxes v{TensorDesc::contiguous({static_cast<std::int64_t>(c.r), static_cast<std::int64_t>(c.outputs)}),
                       {0}};
      const std::string at = std::string(to_string(op)) + "<" + std::string(to_string(dtype)) + "> R=" + std::to_string(c.r) +
                             " x " + std::to_string(c.outputs);
      if (c.builtin) {
        const std::string kernel = ctx.explain_axes(op, t.in, t.out, v.view, v.axes).kernel;
        if (sm132 && size_of(dtype) == 4) {
          EXPECT_NE(kernel.find("columns_staged:"), std::string::npos) << at << " ran " << kernel;
        }
        for (std::int64_t base : {0, 1}) {
          EXPECT_EQ(check(ctx, op, t, buffer, base, v.view, v.axes), "") << at << " base " << base;
          ++checked;
        }
        if (dtype != DType::f32) continue;  // f16 and i32: the built-in choice only
      }
      const CanonicalAxes shape =
          tuner::canonical_axis_shape(tuner::AxisShape{AxisLayout::columns, c.r, c.outputs});
      std::map<AxisFamily, std::set<std::string>> kinds;
      for (const AxisKernelSpec& spec : axis_candidates(op, t, shape, device.sm_count)) {
        std::set<std::string>& seen = kinds[spec.family];
        if (seen.size() == kKinds) continue;
        const std::string kind = std::to_string(spec.group) + "/" + std::to_string(spec.vec) + "/" +
                                 to_string(spec.split) + "/" + std::to_string(spec.rows_per_pass);
        if (!seen.insert(kind).second) continue;
        const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
        const KernelSet set = compile_axis_kernels(compiler, spec, device.arch());
        LaunchWorkspace workspace(plan.partial_count * size_of(t.acc));
        for (std::int64_t base : {0, 1}) {
          RT_CUDA_CHECK(cudaMemset(workspace.buffer.get(), 0, workspace.buffer.size()));
          EXPECT_EQ(check_with(
                        [&](const void* in, void* out) {
                          enqueue_axis_reduction(launcher, set.handles(0), spec, plan, shape, in, out,
                                                 plan.partial_count > 0 ? &workspace.view : nullptr, nullptr);
                        },
                        op, t, buffer, base, v.view, v.axes),
                    "")
              << to_string(spec) << " " << at << " base " << base;
          ++checked;
        }
      }
      EXPECT_FALSE(kinds[c.family].empty()) << at << ": no " << to_string(c.family) << " candidate";
    }
  });
  std::printf("[ counts   ] columns with NaN and infinities: %d (op, dtype, config, shape, base) cases\n",
              checked.load());
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

// Axis reductions from eight threads at once through one fresh context, each thread on
// a stream of its own and nothing synchronised until its last call (explain compiles
// nothing, so the threads' first calls compile every kernel): columns split with a
// second kernel and with the last block's fold, long rows split in tiles, a permuted view
// staged and copied and one written in place, a general view and a flat one, each four
// times over, the threads starting at different cases so that first uses race. Every
// kernel is deterministic, so each result must be the bits of one call made afterwards
// and checked against the host: a workspace, ticket or staged result shared between streams, or a
// kernel handed out before it was loaded, shows as a difference.
TEST(Axes, ThreadsOnTheirOwnStreamsShareOneContext) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  struct Kind {
    Op op;
    DType dtype;
  };
  const Kind kinds[] = {{Op::sum, DType::f32}, {Op::max, DType::bf16}};
  struct Case {
    const char* what;
    TensorDesc view;
    AxisList axes;
    const char* form;  // in the built-in choice's explanation, for both kinds
    std::uint64_t outputs;
  };
  std::vector<Case> cases = {
      {"columns, the last block of each group folding", TensorDesc::contiguous({2000, 197}), {0}, "split=ticket", 0},
      {"dense columns, a second kernel", TensorDesc::contiguous({60000, 40}), {0}, "split=two_pass", 0},
      {"columns, a fold by group", TensorDesc::contiguous({1285, 100}), {0}, "split=ticket", 0},
      {"long rows in tiles", TensorDesc::contiguous({3, 1048577}), {1}, "split=ticket_tiles", 0},
      {"permuted, staged and copied", TensorDesc::strided({1024, 1024, 4}, {4, 4096, 1}), {2},
       ", then a copy into the output's order: ", 0},
      {"permuted, written in place", TensorDesc::strided({17, 7001, 7}, {1, 119, 17}), {2},
       ", each output written at its place in the output's order", 0},
      {"general", TensorDesc::contiguous({64, 1000, 3}), {0, 2}, " general:", 0},
      {"everything", TensorDesc::contiguous({1000003}), {0}, "flat ", 0},
  };
  const std::size_t count = 4 * 1024 * 1024 + 8;
  std::uint64_t outputs_per_round = 0;
  for (Case& c : cases) {
    const CanonicalResult r = canonicalize(c.view, c.axes);
    ASSERT_TRUE(r.ok) << c.what;
    ASSERT_LT(static_cast<std::size_t>(r.axes.highest_offset), count) << c.what;
    c.outputs = r.axes.outputs;
    outputs_per_round += c.outputs;
    for (const Kind& k : kinds) {
      const TypeRule t = rule(k.op, k.dtype);
      const std::string e = ctx.explain_axes(k.op, t.in, t.out, c.view, c.axes).to_string();
      EXPECT_NE(e.find(c.form), std::string::npos) << c.what << ": " << e;
    }
  }
  std::vector<Buffer> inputs;
  for (const Kind& k : kinds) inputs.push_back(upload(testing::make_input(k.op, k.dtype, testing::Pattern::exact, count, 43)));
  constexpr int kThreads = 8, kRounds = 4;
  // results[thread][kind]: every round's outputs of every case, back to back.
  std::vector<std::vector<std::vector<unsigned char>>> results(kThreads, std::vector<std::vector<unsigned char>>(2));
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      try {
        cudaStream_t stream = nullptr;
        RT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        std::vector<DeviceBuffer> outs;
        for (int k = 0; k < 2; ++k) outs.emplace_back(kRounds * outputs_per_round * size_of(kinds[k].dtype) + 16);
        for (int round = 0; round < kRounds; ++round)
          for (std::size_t ci = 0; ci < cases.size(); ++ci)
            for (int k = 0; k < 2; ++k) {
              // Each thread starts at another case, so that first uses collide.
              const Case& c = cases[(ci + static_cast<std::size_t>(th)) % cases.size()];
              std::uint64_t at = round * outputs_per_round;
              for (const Case& before : cases) {
                if (&before == &c) break;
                at += before.outputs;
              }
              const TypeRule t = rule(kinds[k].op, kinds[k].dtype);
              ctx.reduce_axes(kinds[k].op, t.in, t.out, inputs[static_cast<std::size_t>(k)].device.get(), c.view, c.axes,
                              static_cast<unsigned char*>(outs[static_cast<std::size_t>(k)].get()) + at * size_of(t.out),
                              stream);
            }
        RT_CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int k = 0; k < 2; ++k) {
          results[th][k].resize(kRounds * outputs_per_round * size_of(kinds[k].dtype));
          RT_CUDA_CHECK(cudaMemcpy(results[th][k].data(), outs[static_cast<std::size_t>(k)].get(), results[th][k].size(),
                                   cudaMemcpyDeviceToHost));
        }
        RT_CUDA_CHECK(cudaStreamDestroy(stream));
      } catch (const std::exception& e) {
        errors[th] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int th = 0; th < kThreads; ++th) ASSERT_EQ(errors[th], "") << "thread " << th;
  // The reference bits: one call of each, checked against the host, then compared.
  int compared = 0;
  for (int k = 0; k < 2; ++k) {
    const TypeRule t = rule(kinds[k].op, kinds[k].dtype);
    const std::size_t size = size_of(t.out);
    std::uint64_t at = 0;
    for (const Case& c : cases) {
      const Buffer& in = inputs[static_cast<std::size_t>(k)];
      ASSERT_EQ(check(ctx, kinds[k].op, t, in, 0, c.view, c.axes), "") << c.what;
      DeviceBuffer once(c.outputs * size + 16);
      ctx.reduce_axes(kinds[k].op, t.in, t.out, in.device.get(), c.view, c.axes, once.get(), nullptr);
      std::vector<unsigned char> want(c.outputs * size);
      RT_CUDA_CHECK(cudaMemcpy(want.data(), once.get(), want.size(), cudaMemcpyDeviceToHost));
      for (int th = 0; th < kThreads; ++th)
        for (int round = 0; round < kRounds; ++round) {
          const unsigned char* got = results[th][k].data() + (round * outputs_per_round + at) * size;
          EXPECT_EQ(std::memcmp(got, want.data(), want.size()), 0)
              << to_string(kinds[k].op) << "<" << to_string(kinds[k].dtype) << "> " << c.what << ": thread " << th
              << ", round " << round;
          ++compared;
        }
      at += c.outputs;
    }
  }
  std::printf("[ counts   ] threads on their own streams: %d results compared\n", compared);
}

// Sixteen threads on the legacy default stream (where PyTorch's current stream is unless
// a program picks another), each making the first calls of many kinds at once: every op,
// dtype and output type the type rules allow over rows, columns, general, transposed and
// flat views, each kind called twice in a row into outputs carved from one allocation per
// thread (as PyTorch's caching allocator gives them), the threads starting at different
// kinds so that first uses and compiles collide. Each pair gives the same bits, and every
// thread the bits of one call checked against the host afterwards.
TEST(Axes, SixteenThreadsOfFirstCallsOfEveryKindOnTheLegacyStream) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<ViewAxes> views = {
      {TensorDesc::contiguous({3, 5, 7}), {2}},
      {TensorDesc::contiguous({3, 5, 7}), {0}},
      {TensorDesc::contiguous({3, 5, 7}), {0, 2}},
      {TensorDesc::contiguous({17, 1, 33}), {0}},
      {TensorDesc::contiguous({2, 3, 4, 5, 6}), {1, 3}},
      {TensorDesc::strided({129, 257}, {1, 129}), {0}},
      {TensorDesc::contiguous({1, 100003}), {1}},
      {TensorDesc::contiguous({100003}), {0}},
  };
  struct Kind {
    Op op;
    TypeRule types;
    std::size_t input;  // into inputs: one exact input per (op, dtype)
  };
  std::vector<Kind> kinds;
  std::vector<Buffer> inputs;
  const std::size_t count = 100003 + 64;
  for (Op op : kAllOps)
    for (DType in : kAllDTypes) {
      inputs.push_back(upload(testing::make_input(op, in, testing::Pattern::exact, count, 53)));
      for (DType out : kAllDTypes)
        if (const auto r = resolve_types(op, in, out).rule) kinds.push_back({op, *r, inputs.size() - 1});
    }
  const std::size_t cells = kinds.size() * views.size();
  std::uint64_t max_outputs = 1;
  std::vector<std::uint64_t> outputs(views.size());
  for (std::size_t v = 0; v < views.size(); ++v) {
    const CanonicalResult c = canonicalize(views[v].view, views[v].axes);
    ASSERT_TRUE(c.ok) << c.error;
    outputs[v] = c.axes.outputs;
    max_outputs = std::max(max_outputs, outputs[v]);
  }
  constexpr int kThreads = 16;
  // results[thread][cell]: the first call's bits; errors[thread]: the first failure.
  std::vector<std::vector<std::vector<unsigned char>>> results(kThreads, std::vector<std::vector<unsigned char>>(cells));
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      try {
        RT_CUDA_CHECK(cudaSetDevice(0));
        const std::size_t slot = (max_outputs * 8 + 255) / 256 * 256;
        constexpr std::size_t kSlots = 64;
        DeviceBuffer pool(kSlots * slot);
        std::size_t next = static_cast<std::size_t>(th);
        for (std::size_t k = 0; k < cells; ++k) {
          const std::size_t cell = (k + static_cast<std::size_t>(th) * cells / kThreads) % cells;
          const Kind& kind = kinds[cell / views.size()];
          const std::size_t v = cell % views.size();
          const std::size_t bytes = outputs[v] * size_of(kind.types.out);
          unsigned char* out[2];
          for (auto& o : out) o = static_cast<unsigned char*>(pool.get()) + (next++ % kSlots) * slot;
          for (unsigned char* o : out)
            ctx.reduce_axes(kind.op, kind.types.in, kind.types.out, inputs[kind.input].device.get(), views[v].view,
                            views[v].axes, o, nullptr);
          std::vector<unsigned char> first(bytes), again(bytes);
          RT_CUDA_CHECK(cudaMemcpy(first.data(), out[0], bytes, cudaMemcpyDeviceToHost));
          RT_CUDA_CHECK(cudaMemcpy(again.data(), out[1], bytes, cudaMemcpyDeviceToHost));
          if (first != again) {
            errors[th] = std::string(to_string(kind.op)) + "<" + std::string(to_string(kind.types.in)) + "->" +
                         std::string(to_string(kind.types.out)) + "> view " + std::to_string(v) +
                         ": a repeated call gave other bits";
            return;
          }
          results[th][cell] = std::move(first);
        }
      } catch (const std::exception& e) {
        errors[th] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int th = 0; th < kThreads; ++th) ASSERT_EQ(errors[th], "") << "thread " << th;
  int compared = 0;
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const Kind& kind = kinds[cell / views.size()];
    const ViewAxes& va = views[cell % views.size()];
    ASSERT_EQ(check(ctx, kind.op, kind.types, inputs[kind.input], 0, va.view, va.axes), "");
    const std::size_t bytes = outputs[cell % views.size()] * size_of(kind.types.out);
    DeviceBuffer once(bytes + 16);
    ctx.reduce_axes(kind.op, kind.types.in, kind.types.out, inputs[kind.input].device.get(), va.view, va.axes, once.get(),
                    nullptr);
    std::vector<unsigned char> want(bytes);
    RT_CUDA_CHECK(cudaMemcpy(want.data(), once.get(), bytes, cudaMemcpyDeviceToHost));
    for (int th = 0; th < kThreads; ++th) {
      EXPECT_EQ(results[th][cell], want) << to_string(kind.op) << "<" << to_string(kind.types.in) << "->"
                                         << to_string(kind.types.out) << "> view " << cell % views.size()
                                         << ", thread " << th;
      ++compared;
    }
  }
  std::printf("[ counts   ] %zu kinds over %zu views, %d threads on the legacy stream: %d results compared\n",
              kinds.size(), views.size(), kThreads, compared);
}

// Axis reductions captured into a CUDA graph as a fresh context's first calls on a stream
// (compiling, and making the stream's workspace, inside the capture): a split with a
// second kernel, the last block's fold (its ticket) and a permuted view staged in the
// workspace and copied. A larger staged view then outgrows that workspace; each replay
// after it must still give the bits of the same calls made directly.
TEST(Axes, AGraphOfAxisCallsReplaysAfterTheWorkspaceGrew) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const TypeRule t = rule(Op::sum, DType::f32);
  const std::size_t count = 4 * 1024 * 1024 + 8;
  const Buffer in = upload(testing::make_input(Op::sum, DType::f32, testing::Pattern::exact, count, 47));
  struct Case {
    TensorDesc view;
    AxisList axes;
    const char* form;
  };
  const std::vector<Case> captured = {
      {TensorDesc::contiguous({2000, 197}), {0}, "split=ticket"},
      {TensorDesc::contiguous({60000, 40}), {0}, "split=two_pass"},  // dense columns: a second kernel
      {TensorDesc::contiguous({1285, 100}), {0}, "split=ticket"},
      {TensorDesc::strided({400, 350, 8}, {8, 3200, 1}), {2}, ", then a copy into the output's order: "},
  };
  const Case larger{TensorDesc::strided({1024, 1024, 4}, {4, 4096, 1}), {2}, ", then a copy into the output's order: "};
  std::vector<DeviceBuffer> outs;
  std::vector<std::vector<unsigned char>> want;
  for (const Case& c : captured) {
    const CanonicalAxes shape = canonicalize(c.view, c.axes).axes;
    const std::string e = ctx.explain_axes(Op::sum, t.in, t.out, c.view, c.axes).to_string();
    EXPECT_NE(e.find(c.form), std::string::npos) << e;
    outs.emplace_back(shape.outputs * 4);
    want.emplace_back(shape.outputs * 4);
  }
  EXPECT_NE(ctx.explain_axes(Op::sum, t.in, t.out, larger.view, larger.axes).to_string().find(larger.form),
            std::string::npos);
  cudaStream_t stream = nullptr;
  RT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  RT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    for (std::size_t i = 0; i < captured.size(); ++i)
      ctx.reduce_axes(Op::sum, t.in, t.out, in.device.get(), captured[i].view, captured[i].axes, outs[i].get(), stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    throw;
  }
  RT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  RT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  // The bits each call gives made directly (checked against the host), on another stream.
  for (std::size_t i = 0; i < captured.size(); ++i) {
    ASSERT_EQ(check(ctx, Op::sum, t, in, 0, captured[i].view, captured[i].axes), "");
    DeviceBuffer once(want[i].size());
    ctx.reduce_axes(Op::sum, t.in, t.out, in.device.get(), captured[i].view, captured[i].axes, once.get(), nullptr);
    RT_CUDA_CHECK(cudaMemcpy(want[i].data(), once.get(), want[i].size(), cudaMemcpyDeviceToHost));
  }
  DeviceBuffer large_out(1024 * 1024 * 4);
  for (int replay = 0; replay < 3; ++replay) {
    // Outgrows the captured workspace (the first time), then runs between replays.
    ctx.reduce_axes(Op::sum, t.in, t.out, in.device.get(), larger.view, larger.axes, large_out.get(), stream);
    for (auto& o : outs) RT_CUDA_CHECK(cudaMemsetAsync(o.get(), 0xff, o.size(), stream));
    RT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < captured.size(); ++i) {
      std::vector<unsigned char> got(want[i].size());
      RT_CUDA_CHECK(cudaMemcpy(got.data(), outs[i].get(), got.size(), cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, want[i]) << "case " << i << ", replay " << replay;
    }
  }
  EXPECT_EQ(check(ctx, Op::sum, t, in, 0, larger.view, larger.axes), "");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  RT_CUDA_CHECK(cudaStreamDestroy(stream));
}

// Views of more than 2^31 elements (and outputs past 2^31), one of each kind of kernel the
// built-in choice takes: long and short rows, columns wide and narrow, a general view, a
// permuted one, converting copies in order and transposed, and everything reduced. int32
// sums wrap, so every element counts and any order gives the same bits; each element is
// a hash of its offset, so the host reference needs no copy of the 8.6 GB input.
std::uint32_t hashed(std::uint64_t i) {
  std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return static_cast<std::uint32_t>(z ^ (z >> 31));
}

// fn(begin, end) over [0, n) in parallel chunks.
void parallel_for(std::uint64_t n, const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t chunk = (n + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    const std::uint64_t begin = std::min<std::uint64_t>(n, w * chunk), end = std::min<std::uint64_t>(n, begin + chunk);
    if (begin < end) threads.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  for (auto& t : threads) t.join();
}

// The wrapped int32 sum of each output of `view` along `axes`, the view's offset 0 at
// element `base`: kept index j over the kept dimensions (C order), the reduced ones walked
// by an odometer. Work is split over outputs, and over the reduced run where the outputs
// are few.
std::vector<std::uint32_t> reference_sums(const TensorDesc& view, const AxisList& axes, std::int64_t base) {
  bool reduced[kMaxRank] = {};
  for (int i = 0; i < axes.count; ++i) reduced[axes.axes[i]] = true;
  std::vector<std::int64_t> kext, kstr, rext, rstr;
  for (int d = 0; d < view.rank; ++d) {
    (reduced[d] ? rext : kext).push_back(view.extents[d]);
    (reduced[d] ? rstr : kstr).push_back(view.strides[d]);
  }
  std::uint64_t outputs = 1, r = 1;
  for (auto e : kext) outputs *= static_cast<std::uint64_t>(e);
  for (auto e : rext) r *= static_cast<std::uint64_t>(e);
  const std::uint64_t pieces = std::max<std::uint64_t>(1, 256 / outputs);
  std::vector<std::uint32_t> partial(outputs * pieces);
  parallel_for(outputs * pieces, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t unit = begin; unit < end; ++unit) {
      const std::uint64_t j = unit / pieces, piece = unit % pieces;
      std::int64_t at = base;
      std::uint64_t rest = j;
      for (std::size_t d = kext.size(); d-- > 0;) {
        at += static_cast<std::int64_t>(rest % static_cast<std::uint64_t>(kext[d])) * kstr[d];
        rest /= static_cast<std::uint64_t>(kext[d]);
      }
      const std::uint64_t lo = r * piece / pieces, hi = r * (piece + 1) / pieces;
      std::int64_t digit[kMaxRank] = {};
      rest = lo;
      for (std::size_t d = rext.size(); d-- > 0;) {
        digit[d] = static_cast<std::int64_t>(rest % static_cast<std::uint64_t>(rext[d]));
        rest /= static_cast<std::uint64_t>(rext[d]);
        at += digit[d] * rstr[d];
      }
      std::uint32_t sum = 0;
      for (std::uint64_t k = lo; k < hi; ++k) {
        sum += hashed(static_cast<std::uint64_t>(at));
        for (std::size_t d = rext.size(); d-- > 0;) {
          at += rstr[d];
          if (++digit[d] < rext[d]) break;
          at -= rext[d] * rstr[d];
          digit[d] = 0;
        }
      }
      partial[unit] = sum;
    }
  });
  if (pieces == 1) return partial;
  std::vector<std::uint32_t> sums(outputs, 0);
  for (std::uint64_t u = 0; u < partial.size(); ++u) sums[u / pieces] += partial[u];
  return sums;
}

TEST(Axes, ViewsPastTwoToThe31Elements) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const std::uint64_t n = (1ull << 31) + (1ull << 20);
  const std::uint64_t most_outputs = n;
  std::size_t free_bytes = 0, total_bytes = 0;
  RT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t needed = (n + most_outputs + 4) * 4 + (1ull << 30);
  if (free_bytes < needed)
    GTEST_SKIP() << "needs " << (needed >> 20) << " MiB of device memory, " << (free_bytes >> 20) << " MiB free";

  DeviceBuffer input(n * 4);
  {
    const std::uint64_t chunk = 1ull << 26;
    std::vector<std::uint32_t> host(chunk);
    for (std::uint64_t at = 0; at < n; at += chunk) {
      const std::uint64_t count = std::min(chunk, n - at);
      parallel_for(count, [&](std::uint64_t b, std::uint64_t e) {
        for (std::uint64_t i = b; i < e; ++i) host[i] = hashed(at + i);
      });
      RT_CUDA_CHECK(cudaMemcpy(static_cast<std::uint32_t*>(input.get()) + at, host.data(), count * 4,
                               cudaMemcpyHostToDevice));
    }
  }
  DeviceBuffer output((most_outputs + 4) * 4);
  Context ctx(no_database());
  struct View {
    const char* what;
    TensorDesc view;
    AxisList axes;
    std::int64_t base;
  };
  const std::vector<View> views = {
      {"everything reduced", TensorDesc::contiguous({static_cast<std::int64_t>(n) - 1}), {0}, 1},
      {"three long rows", TensorDesc::contiguous({3, 715827883}), {1}, 0},
      {"short rows", TensorDesc::contiguous({126322568, 17}), {1}, 3},
      {"wide columns", TensorDesc::contiguous({5, 429496730}), {0}, 0},
      {"narrow columns", TensorDesc::contiguous({65075263, 33}), {0}, 1},
      {"columns a row apart", TensorDesc::strided({46341, 46341}, {1, 46341}), {1}, 0},
      {"general", TensorDesc::contiguous({3, 5, 143165577}), {0, 2}, 0},
      {"permuted", TensorDesc::strided({1000, 2148, 1000}, {1, 1000000, 1000}), {1}, 0},
      {"converting copy", TensorDesc::contiguous({(1ll << 31) + 1, 1}), {1}, 5},
      {"transposed copy", TensorDesc::strided({46341, 46341, 1}, {1, 46341, 1}), {2}, 0},
  };
  for (const View& v : views) {
    const CanonicalResult c = canonicalize(v.view, v.axes);
    ASSERT_TRUE(c.ok) << v.what << ": " << c.error;
    ASSERT_LE(static_cast<std::uint64_t>(v.base + c.axes.highest_offset), n - 1) << v.what;
    ASSERT_LE(c.axes.outputs, most_outputs) << v.what;
    const std::uint64_t elements = c.axes.outputs * c.axes.reduced;
    EXPECT_GT(std::max<std::uint64_t>(elements, c.axes.outputs), 1ull << 31) << v.what;
    const AxisExplanation e = ctx.explain_axes(Op::sum, DType::i32, DType::i32, v.view, v.axes);
    RT_CUDA_CHECK(cudaMemset(output.get(), 0xa5, (c.axes.outputs + 4) * 4));
    ctx.reduce_axes(Op::sum, DType::i32, DType::i32, static_cast<const std::int32_t*>(input.get()) + v.base, v.view,
                    v.axes, output.get(), nullptr);
    RT_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint32_t> got(c.axes.outputs + 4);
    RT_CUDA_CHECK(cudaMemcpy(got.data(), output.get(), got.size() * 4, cudaMemcpyDeviceToHost));
    const std::vector<std::uint32_t> want = reference_sums(v.view, v.axes, v.base);
    std::atomic<std::uint64_t> first_wrong{~0ull}, wrong{0};
    parallel_for(want.size(), [&](std::uint64_t b, std::uint64_t end) {
      for (std::uint64_t j = b; j < end; ++j)
        if (got[j] != want[j]) {
          ++wrong;
          std::uint64_t seen = first_wrong.load();
          while (j < seen && !first_wrong.compare_exchange_weak(seen, j)) {
          }
        }
    });
    EXPECT_EQ(wrong.load(), 0u) << v.what << " (" << e.to_string() << "): first at output " << first_wrong.load()
                                << " of " << want.size();
    for (std::size_t k = want.size(); k < got.size(); ++k)
      EXPECT_EQ(got[k], 0xa5a5a5a5u) << v.what << ": wrote past its last output";
    std::printf("[ views    ] %s: %llu outputs of %llu elements, %s\n", v.what,
                static_cast<unsigned long long>(c.axes.outputs), static_cast<unsigned long long>(c.axes.reduced),
                e.to_string().c_str());
  }
}


// ---- Tuned axis reductions (issue 12) ----

class SilentProgress : public tuner::Progress {
 public:
  void device_started(const DeviceKey&, int, int) override {}
  void bucket_finished(const tuner::BucketReport& b) override { finished.push_back(b); }
  void note(std::string_view) override {}
  std::vector<tuner::BucketReport> finished;
};

// A small tuning run over two rows and two columns classes: every class gets a verified
// winner measured at both of its sample shapes; a context over the database then serves
// shapes of those classes (and the mean, from the sum's winner) with it, right at every
// output; min starts from the sum's best; a fresh rerun compiles nothing. The classes
// one bucket from them are filled: each gets a winner timed at both of its sample
// shapes, is not marked tuned, and serves its own shapes exactly and right.
TEST(AxisTuning, TunedClassesServeEveryShapeInThemAndARerunCompilesNothing) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const auto dir = testing::temp_dir("rt_axis_tune");
  const auto db_path = dir / "tuning.db";
  std::filesystem::remove(db_path);
  tuner::TuneOptions o;
  o.layouts = {AxisLayout::rows, AxisLayout::columns};
  o.ops = {Op::sum, Op::min};
  o.dtypes = {DType::f32};
  o.axis_shapes = {{16, 1 << 16}, {1 << 12, 64}};
  o.keep_all_binaries = true;  // --keep-binaries all: a fresh rerun compiles nothing
  std::atomic<bool> interrupt{false};
  SilentProgress progress;
  const auto first = tuner::tune_device(0, o, db_path, progress, interrupt);
  EXPECT_EQ(first.axis_classes_tuned, 8);
  EXPECT_EQ(first.buckets_tuned, 0);
  EXPECT_FALSE(first.interrupted);
  // Each of the 8 classes has 4 neighbours; a neighbour whose candidates are all one
  // config is left to the runtime's fallback, which gives that config.
  EXPECT_GT(first.axis_classes_filled, 0);
  EXPECT_LE(first.axis_classes_filled, 32);
  std::printf("[ tuning   ] axis run: %d classes and %d filled, %d candidates (%d failed), %zu compiles, %.1f s\n",
              first.axis_classes_tuned, first.axis_classes_filled, first.candidates, first.failed_candidates,
              first.compiles.compiles, first.seconds);
  std::map<std::string, std::string> winners;  // class -> config
  std::vector<db::AxisProblemClass> filled;
  {
    auto database = db::Database::open(db_path);
    const auto id = database.find_device(first.device.uuid);
    ASSERT_TRUE(id);
    const auto stored = database.axis_winners_for_device(*id);
    const auto tuned = database.axis_tuned_buckets(*id);
    EXPECT_EQ(tuned.size(), 8u);
    EXPECT_EQ(stored.size(), 8u + static_cast<std::size_t>(first.axis_classes_filled));
    // Every kernel a winner serves is stored, the means of sums too (compiled in the
    // background and stored at the run's end): no call compiles.
    std::set<std::string> in_file;
    for (const auto& b : database.list_binaries()) in_file.insert(b.key);
    NvrtcCompiler compiler;
    for (const auto& key : tuner::winner_binary_keys(database, compiler))
      EXPECT_TRUE(in_file.count(key)) << "a winner's binary is missing: " << key;
    for (const auto& w : stored) {
      if (std::find(tuned.begin(), tuned.end(), w.problem) == tuned.end()) filled.push_back(w.problem);
      winners[db::to_string(w.problem)] = w.config;
      ASSERT_TRUE(w.measurement_id);
      // The winner was verified and timed at every sample shape of its class (the built-in
      // choice made at each shape: checked below).
      const bool builtin_winner = w.config == kAxisBuiltinConfig;
      const auto ms = database.axis_measurements(*id, w.problem);
      std::set<std::pair<std::uint64_t, std::uint64_t>> shapes;
      for (const auto& m : ms)
        if (m.config == w.config) {
          EXPECT_EQ(m.status, db::MeasurementStatus::ok) << m.detail;
          shapes.insert({m.reduced, m.outputs});
        }
      if (!builtin_winner) {
        EXPECT_EQ(shapes.size(), tuner::axis_sample_shapes(w.problem, first.device.sm_count).size())
            << db::to_string(w.problem);
      }
      // The built-in choice at each sample shape was timed there, and the winner holds
      // against it (tuner::kAxisHoldFactor) at every shape where any complete config does.
      const auto samples = tuner::axis_sample_shapes(w.problem, first.device.sm_count);
      std::map<std::string, std::vector<double>> times;  // config -> time at each sample
      for (const auto& m : ms)
        for (std::size_t i = 0; i < samples.size(); ++i)
          if (m.status == db::MeasurementStatus::ok && m.reduced == samples[i].reduced &&
              m.outputs == samples[i].outputs) {
            auto& t = times.emplace(m.config, std::vector<double>(samples.size(), NAN)).first->second;
            t[i] = std::isnan(t[i]) ? m.median_ms : std::min(t[i], m.median_ms);
          }
      std::vector<std::string> builtins;
      for (const auto& s : samples) {
        const AxisKernelSpec b = builtin_axis_spec(w.problem.op, rule(w.problem.op, DType::f32),
                                                   tuner::canonical_axis_shape(s), first.device.sm_count);
        builtins.push_back(axis_config_text(b));
        bool fits = axis_spec_mismatch(b, tuner::canonical_axis_shape(tuner::axis_top_shape(w.problem))).empty();
        for (const auto& other : samples) fits = fits && axis_spec_mismatch(b, tuner::canonical_axis_shape(other)).empty();
        if (fits) {
          EXPECT_TRUE(times.count(builtins.back()) && !std::isnan(times[builtins.back()][builtins.size() - 1]))
              << db::to_string(w.problem) << ": the built-in choice " << builtins.back() << " was not timed at R="
              << s.reduced << " x " << s.outputs;
        }
      }
      // A winner holds at the sample shapes it serves: a class that keeps a second winner
      // for the 16-byte grid, each side's at that side's shapes.
      std::vector<bool> on_grid;
      for (const auto& s : samples) on_grid.push_back(axis_on_16byte_grid(tuner::canonical_axis_shape(s), 4));
      auto holds = [&](const std::vector<double>& t, int side /* 0 every shape, 1 on the grid, 2 off it */) {
        for (std::size_t i = 0; i < samples.size(); ++i) {
          if ((side == 1 && !on_grid[i]) || (side == 2 && on_grid[i])) continue;
          auto b = times.find(builtins[i]);
          if (std::isnan(t[i])) return false;
          if (b != times.end() && !std::isnan(b->second[i]) && t[i] > b->second[i] * tuner::kAxisHoldFactor)
            return false;
        }
        return true;
      };
      // A config's times, or for the built-in choice made at each shape, each sample
      // shape's own built-in choice timed there.
      auto times_of = [&](const std::string& config) {
        std::vector<double> t(samples.size(), NAN);
        for (std::size_t i = 0; i < samples.size(); ++i) {
          const std::string& c = config == kAxisBuiltinConfig ? builtins[i] : config;
          if (times.count(c)) t[i] = times[c][i];
        }
        return t;
      };
      const std::vector<double> builtin_times = times_of(std::string(kAxisBuiltinConfig));
      const bool builtin_timed =
          std::none_of(builtin_times.begin(), builtin_times.end(), [](double t) { return std::isnan(t); });
      EXPECT_TRUE(builtin_timed || !builtin_winner) << db::to_string(w.problem)
                                                    << ": the built-in choice was not timed at every sample shape";
      const bool split = !w.grid_config.empty();
      bool some_config_holds = false;
      for (const auto& [config, t] : times) some_config_holds = some_config_holds || holds(t, 0);
      if (builtin_timed || (some_config_holds && !split)) {
        EXPECT_TRUE(holds(times_of(w.config), split ? 2 : 0))
            << db::to_string(w.problem) << ": " << w.config << " trails the built-in choice at a sample shape";
      }
      if (split && builtin_timed) {
        EXPECT_TRUE(holds(times_of(w.grid_config), 1)) << db::to_string(w.problem) << ": " << w.grid_config
                                                       << " trails the built-in choice at a sample shape on the grid";
      }
      if (w.problem.op == Op::min && std::find(tuned.begin(), tuned.end(), w.problem) != tuned.end()) {
        // min searched the sum's four best configs and the built-in choice at each sample
        // shape, not the space.
        std::set<std::string> configs;
        for (const auto& m : ms) configs.insert(m.config);
        const std::set<std::string> distinct_builtins(builtins.begin(), builtins.end());
        EXPECT_LE(configs.size(), 4u + distinct_builtins.size()) << db::to_string(w.problem);
      }
    }
  }
  ContextOptions options;
  options.database = db_path;
  Context ctx(options);
  struct Case {
    TensorDesc view;
    AxisList axes;
  };
  const Case cases[] = {
      {TensorDesc::contiguous({70001, 16}), {1}},    // rows, class R 2^4 x 2^16
      {TensorDesc::contiguous({65536, 31}), {1}},    // the top of its R bucket
      {TensorDesc::contiguous({100, 5000}), {1}},    // rows, class R 2^12 x 2^6
      {TensorDesc::contiguous({20, 77777}), {0}},    // columns, class R 2^4 x 2^16
      {TensorDesc::contiguous({4097, 127}), {0}},    // columns, class R 2^12 x 2^6
  };
  for (const auto& c : cases)
    for (Op op : {Op::sum, Op::mean, Op::min}) {
      const TypeRule t = rule(op, DType::f32);
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, c.axes);
      EXPECT_EQ(e.match, MatchKind::exact) << e.to_string();
      std::int64_t count = 1;
      for (int d = 0; d < c.view.rank; ++d) count *= c.view.extents[d];
      const Buffer buffer = upload(testing::make_input(op, DType::f32, testing::Pattern::exact,
                                                       static_cast<std::size_t>(count), 21));
      EXPECT_EQ(check(ctx, op, t, buffer, 0, c.view, c.axes), "") << e.to_string();
    }
  // Filled classes serve their own shapes (the interior one: odd extents), right.
  ASSERT_EQ(filled.size(), static_cast<std::size_t>(first.axis_classes_filled));
  for (const auto& f : filled) {
    const auto samples = tuner::axis_sample_shapes(f);
    const auto odd = std::find_if(samples.begin(), samples.end(),
                                  [](const tuner::AxisShape& s) { return s.reduced % 2 == 1 && s.outputs % 2 == 1; });
    const tuner::AxisShape inside = odd == samples.end() ? samples.back() : *odd;
    const auto r = static_cast<std::int64_t>(inside.reduced), outputs = static_cast<std::int64_t>(inside.outputs);
    const Case c = f.layout == AxisLayout::rows ? Case{TensorDesc::contiguous({outputs, r}), {1}}
                                                 : Case{TensorDesc::contiguous({r, outputs}), {0}};
    const TypeRule t = rule(f.op, DType::f32);
    const AxisExplanation e = ctx.explain_axes(f.op, t.in, t.out, c.view, c.axes);
    EXPECT_EQ(e.match, MatchKind::exact) << e.to_string();
    const Buffer buffer = upload(testing::make_input(f.op, DType::f32, testing::Pattern::exact,
                                                     static_cast<std::size_t>(r * outputs), 22));
    EXPECT_EQ(check(ctx, f.op, t, buffer, 0, c.view, c.axes), "") << e.to_string();
  }
  // A fresh rerun finds every binary the first stored in the database. (min starts from
  // the sum's best configs over both runs' measurements, so it may try a config the
  // first run did not: its compiles are exactly the binaries new to the database.)
  auto binary_keys = [&] {
    auto database = db::Database::open(db_path);
    std::set<std::string> keys;
    for (const auto& b : database.list_binaries()) keys.insert(b.key);
    return keys;
  };
  const auto before = binary_keys();
  o.fresh = true;
  SilentProgress again;
  const auto second = tuner::tune_device(0, o, db_path, again, interrupt);
  EXPECT_EQ(second.axis_classes_tuned, 8);
  EXPECT_GT(second.axis_classes_filled, 0);
  std::size_t new_keys = 0;
  for (const auto& k : binary_keys()) new_keys += before.count(k) == 0;
  EXPECT_EQ(second.compiles.compiles, new_keys) << "a second run compiled what the first stored";
  EXPECT_GT(second.compiles.store_hits, 0u);
  std::printf("[ tuning   ] axis rerun: %zu compiles (%zu binaries new to the database), %zu from the database, "
              "%.1f s\n", second.compiles.compiles, new_keys, second.compiles.store_hits, second.seconds);
  std::filesystem::remove_all(dir);
}

// A class that keeps a second winner for its shapes on the 16-byte grid (as the tuner
// stores it where the grid's side chose another config than the class):
// a context over the database runs the grid's winner for f16 columns on the grid, the
// class's winner off it (odd outputs, or a base one element off), each reported as the
// class's tuned winner, and every result right (sum, and the mean it serves).
TEST(AxisTuning, AWinnerOnTheGridServesItsShapesAndTheClassWinnerTheRest) {
  RT_REQUIRE_GPU();
  const DeviceKey key = *testing::test_device();
  const auto dir = testing::temp_dir("rt_axis_grid");
  const auto db_path = dir / "tuning.db";
  std::filesystem::remove(db_path);
  const std::string off = "columns:block=256,by=1,vec=4,split=none,rows=1,unroll=4,sm=4,tail=1";
  const std::string on = "short_columns:block=256,group=1,vec=8,split=none,rows=1,unroll=2,sm=4";
  {
    auto database = db::Database::open(db_path);
    database.store_axis_bucket(
        testing::axis_class_with_grid_winner(key, Op::sum, DType::f16, 1, 20, 2, 1u << 20, off, on, 0.004));
  }
  ContextOptions options;
  options.database = db_path;
  Context ctx(options);
  struct Case {
    TensorDesc view;
    std::int64_t base;
    bool grid;
  };
  const Case cases[] = {{TensorDesc::contiguous({3, 1 << 20}), 0, true},
                        {TensorDesc::contiguous({2, (1 << 20) + 8}), 8, true},
                        {TensorDesc::contiguous({3, 1 << 20}), 1, false},
                        {TensorDesc::contiguous({3, (1 << 20) + 1}), 0, false},
                        {TensorDesc::contiguous({2, (1 << 21) - 1}), 0, false}};
  for (Op op : {Op::sum, Op::mean}) {
    const TypeRule t = rule(op, DType::f16);
    const Buffer buffer = upload(testing::make_input(op, DType::f16, testing::Pattern::exact, 3 * (1 << 21) + 16, 51));
    for (const Case& c : cases) {
      const void* at = static_cast<const unsigned char*>(buffer.device.get()) + c.base * 2;
      const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, c.view, {0}, at);
      EXPECT_EQ(e.match, MatchKind::exact) << e.to_string();
      EXPECT_NE(e.kernel.find(c.grid ? "> short_columns:" : "> columns:"), std::string::npos) << e.to_string();
      EXPECT_EQ(e.reason.find("16-byte grid") != std::string::npos, c.grid) << e.to_string();
      EXPECT_EQ(check(ctx, op, t, buffer, c.base, c.view, {0}), "") << e.kernel << " base " << c.base;
    }
  }
  std::filesystem::remove_all(dir);
}

// A database at `path` holding one axis class of `key`: one measurement of `config` at
// R x outputs, and `winner_config` (`config`, or kAxisBuiltinConfig) its winner.
void store_one_axis_class(const std::filesystem::path& path, const DeviceKey& key, const db::AxisProblemClass& problem,
                          std::uint64_t r, std::uint64_t outputs, const std::string& config, double ms,
                          std::string_view winner_config) {
  db::AxisBucketResult result;
  result.device = key;
  result.problem = problem;
  result.measurements = {testing::axis_measurement(problem.op, problem.dtype, problem.layout, r, outputs, config, ms)};
  result.winner = 0;
  result.winner_config = std::string(winner_config);
  result.tool_version = "reduce-tune test";
  result.created_at = db::now_timestamp();
  auto database = db::Database::open(path);
  database.store_axis_bucket(result);
}

// A permuted view whose stage-1 columns (in stride order) a class's tuned winner serves,
// over few enough outputs that the reorder would write them straight to the caller's
// order: a winner of a family without an ordered form (short_columns) reduces into the
// workspace and the copy puts the outputs in order; a right result, not a refused one.
TEST(AxisTuning, ATunedWinnerWithoutAnOrderedFormServesAPermutedView) {
  RT_REQUIRE_GPU();
  const DeviceKey key = *testing::test_device();
  const auto dir = testing::temp_dir("rt_axis_unordered");
  const auto db_path = dir / "tuning.db";
  std::filesystem::remove(db_path);
  const std::string config = "short_columns:block=256,group=1,vec=8,split=none,rows=1,unroll=2,sm=4";
  const TypeRule t = rule(Op::sum, DType::f16);
  store_one_axis_class(db_path, key, {Op::sum, t.in, t.out, AxisLayout::columns, 2, 16}, 4, 65536, config, 0.004,
                       config);
  ContextOptions options;
  options.database = db_path;
  Context ctx(options);
  // [4, 300, 256] permuted to [4, 256, 300]... as [4, 300, 256] with strides [76800, 1, 300]:
  // stage 1 is columns of R = 4 over 76800 outputs (at most 2^17: written directly).
  const TensorDesc view = TensorDesc::strided({4, 300, 256}, {76800, 1, 300});
  const CanonicalAxes shape = canonicalize(view, {0}).axes;
  const std::optional<AxisReorder> reorder = axis_reorder(view, {0}, shape);
  ASSERT_TRUE(reorder.has_value());
  EXPECT_TRUE(axis_reorder_writes_directly(*reorder, 2)) << reorder->stage1_shape.to_string();
  const Buffer buffer = upload(testing::make_input(Op::sum, DType::f16, testing::Pattern::exact, 4 * 76800 + 8, 71));
  const AxisExplanation e = ctx.explain_axes(Op::sum, t.in, t.out, view, {0});
  EXPECT_NE(e.kernel.find("short_columns:"), std::string::npos) << e.to_string();
  for (std::int64_t base : {0, 8}) EXPECT_EQ(check(ctx, Op::sum, t, buffer, base, view, {0}), "") << e.to_string();
  std::filesystem::remove_all(dir);
}

// A class that keeps the built-in choice made at each shape (kAxisBuiltinConfig, as the
// tuner stores it where no config beat that choice at every sample shape): f32 rows of
// R 2^6 x 2^17 outputs run the plain rows kernel at 64 and the staged one at 100, as
// untuned, each reported as the class's tuned winner, and right (sum, and the mean).
TEST(AxisTuning, AClassThatKeepsTheBuiltInChoiceRunsTheChoiceMadeForEachShape) {
  RT_REQUIRE_GPU();
  const DeviceKey key = *testing::test_device();
  const auto dir = testing::temp_dir("rt_axis_builtin");
  const auto db_path = dir / "tuning.db";
  std::filesystem::remove(db_path);
  store_one_axis_class(db_path, key, {Op::sum, DType::f32, DType::f32, AxisLayout::rows, 6, 17}, 64, 131072,
                       "rows:block=256,group=4,vec=4,split=none,rows=1,unroll=4,sm=4", 0.018, kAxisBuiltinConfig);
  ContextOptions options;
  options.database = db_path;
  Context ctx(options);
  const std::int64_t outputs = 131072;
  const Buffer buffer = upload(testing::make_input(Op::sum, DType::f32, testing::Pattern::exact,
                                                   static_cast<std::size_t>(outputs * 127 + 4), 61));
  std::set<std::string> kernels;
  for (std::int64_t r : {64, 100, 97, 127})
    for (Op op : {Op::sum, Op::mean})
      for (std::int64_t base : {0, 1}) {
        const TypeRule t = rule(op, DType::f32);
        const TensorDesc view = TensorDesc::contiguous({outputs, r});
        const void* at = static_cast<const unsigned char*>(buffer.device.get()) + base * 4;
        const AxisExplanation e = ctx.explain_axes(op, t.in, t.out, view, {1}, at);
        const CanonicalAxes shape = canonicalize(view, {1}).axes;
        const AxisKernelSpec expected = builtin_axis_spec(op, t, shape, key.sm_count, nullptr, at);
        EXPECT_EQ(e.kernel, to_string(expected)) << e.to_string();
        EXPECT_EQ(e.match, MatchKind::exact) << e.to_string();
        EXPECT_NE(e.reason.find("the built-in choice made for each shape"), std::string::npos) << e.to_string();
        kernels.insert(to_string(expected));
        EXPECT_EQ(check(ctx, op, t, buffer, base, view, {1}), "") << e.kernel << " base " << base;
      }
  EXPECT_GE(kernels.size(), 3u);  // the choice changes inside the class
  std::filesystem::remove_all(dir);
}

// The axis tuner's checks bite: every family compiled with a deliberate fault (the last
// reduced element dropped, the rows' scalar head dropped, the identity returned, the
// last output left unwritten) is rejected at shapes with odd extents, and passes without
// the fault; a wrong answer handed to the comparison is caught at the output it is in.
// Columns that read several adjacent outputs per thread (16-bit types four, 8-byte
// loads; wider types a 16-byte vector where R is split or short) and write them as one
// vector where unsplit: every such candidate the tuner draws for a split shape (outputs
// off the vector grid, a tail of them), for short columns on the grid and off it (rows
// of 262147 elements: scalar loads, vector stores), reduces right, and one that drops
// the last element is caught.
// In quick mode (the sanitizer run): one candidate per shape, f16 and f32, no mutants.
// The first `limit` candidates the tuner draws for `shape` that `keep` accepts, each with
// a label that names it and the shape.
std::vector<std::pair<AxisKernelSpec, std::string>> drawn_candidates(
    const TypeRule& t, const tuner::AxisShape& shape, int sm_count, int limit,
    const std::function<bool(const AxisKernelSpec&)>& keep) {
  std::vector<std::pair<AxisKernelSpec, std::string>> drawn;
  for (const auto& spec : axis_candidates(Op::sum, t, tuner::canonical_axis_shape(shape), sm_count)) {
    if (static_cast<int>(drawn.size()) == limit) break;
    if (!keep(spec)) continue;
    drawn.emplace_back(spec, to_string(spec) + " R=" + std::to_string(shape.reduced) + " x " +
                                 std::to_string(shape.outputs));
  }
  return drawn;
}

// The element types a mutation test covers: every width (16-bit both kinds, 4- and
// 8-byte floats and integers), or in quick mode (the sanitizer run) f16 and f32.
std::vector<DType> mutation_dtypes(bool quick) {
  if (quick) return {DType::f16, DType::f32};
  return {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32, DType::i64};
}

TEST(AxisMutation, ColumnVectorsAreRightAndBrokenOnesRejected) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  int checked = 0, rejected = 0;
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16, DType::f32}
                                          : std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32};
  for (DType dtype : dtypes) {
    // 16-bit types summed into f32, where the exact data's totals are exact: a dropped
    // element shows.
    const TypeRule t = *resolve_types(Op::sum, dtype, is_16bit_float(dtype) ? DType::f32 : dtype).rule;
    const std::uint32_t vec = size_of(dtype) == 2 ? 4 : static_cast<std::uint32_t>(16 / size_of(dtype));
    const std::vector<tuner::AxisShape> shapes =
        size_of(dtype) == 2
            ? std::vector<tuner::AxisShape>{{AxisLayout::columns, 70001, 517}, {AxisLayout::columns, 9, 1 << 18}}
            : std::vector<tuner::AxisShape>{{AxisLayout::columns, 70001, 517},
                                            {AxisLayout::columns, 20000, 1024},
                                            {AxisLayout::columns, 3, 1 << 18},
                                            {AxisLayout::columns, 5, 262147}};
    for (const tuner::AxisShape& shape : shapes) {
      const auto drawn = drawn_candidates(t, shape, device.sm_count, quick ? 1 : 4, [&](const AxisKernelSpec& spec) {
        return spec.family == AxisFamily::columns && spec.vec == vec;
      });
      for (const auto& [spec, label] : drawn) {
        EXPECT_EQ(checker.check(spec, shape), "") << label;
        ++checked;
        if (quick) continue;
        const std::string why = checker.check(spec, shape, {"-DRT_MUTATION=2"});
        EXPECT_NE(why, "") << label << " drops the last element and passed";
        rejected += !why.empty();
      }
      EXPECT_FALSE(drawn.empty()) << "no vector columns candidate for " << to_string(dtype) << " R=" << shape.reduced;
    }
  }
  std::printf("[ counts   ] column vectors: %d right, %d of %d broken ones rejected\n", checked, rejected,
              quick ? 0 : checked);
}

// Staged columns: every columns_staged candidate the tuner draws for long columns of a
// few hundred to a few thousand outputs (rows' segments off the vector grid) reduces
// right, and one that drops the last element of R, or leaves the last output unwritten,
// is caught by the tuner's checker.
TEST(AxisMutation, StagedColumnsAreRightAndBrokenOnesRejected) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  int checked = 0, rejected = 0, mutants = 0;
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16, DType::f32}
                                          : std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::i32};
  for (DType dtype : dtypes) {
    const TypeRule t = *resolve_types(Op::sum, dtype, is_16bit_float(dtype) ? DType::f32 : dtype).rule;
    for (const tuner::AxisShape& shape : {tuner::AxisShape{AxisLayout::columns, 30001, 1001},
                                          tuner::AxisShape{AxisLayout::columns, 4099, 333}}) {
      const auto drawn = drawn_candidates(t, shape, device.sm_count, quick ? 1 : 4, [](const AxisKernelSpec& spec) {
        return spec.family == AxisFamily::columns_staged;
      });
      EXPECT_FALSE(drawn.empty()) << "no staged columns candidate for " << to_string(dtype) << " R=" << shape.reduced;
      for (const auto& [spec, label] : drawn) {
        EXPECT_EQ(checker.check(spec, shape), "") << label;
        ++checked;
        if (quick) continue;
        for (const char* mutation : {"-DRT_MUTATION=2", "-DRT_MUTATION=5"}) {
          const std::string why = checker.check(spec, shape, {mutation});
          EXPECT_NE(why, "") << label << " " << mutation << " passed";
          rejected += !why.empty();
          ++mutants;
        }
      }
    }
  }
  std::printf("[ counts   ] staged columns: %d right, %d of %d broken ones rejected\n", checked, rejected, mutants);
}

// Few long rows, and few dense columns over a long R, split with a last-block finish
// whose splits take tiles of R in turn (split=ticket_tiles): every such candidate the
// tuner draws, on rows whose starts fall off the 16-byte grid (a scalar head and tail per
// row) and on columns of 3 and 9 outputs (a partial last vector), reduces right; one
// that drops the last element (or a row's head) is caught.
// In quick mode (the sanitizer run): one candidate per shape, f16 and f32, no mutants.
TEST(AxisMutation, TiledSplitsAreRightAndBrokenOnesRejected) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  int checked = 0, rejected = 0, cases = 0;
  const std::vector<DType> dtypes = quick ? std::vector<DType>{DType::f16, DType::f32}
                                          : std::vector<DType>{DType::f16, DType::f32, DType::f64, DType::i64};
  for (DType dtype : dtypes) {
    const TypeRule t = *resolve_types(Op::sum, dtype, is_16bit_float(dtype) ? DType::f32 : dtype).rule;
    for (const tuner::AxisShape shape :
         {tuner::AxisShape{AxisLayout::rows, 300007, 3}, tuner::AxisShape{AxisLayout::rows, 1048579, 2},
          tuner::AxisShape{AxisLayout::rows, 65541, 9}, tuner::AxisShape{AxisLayout::columns, 300007, 3},
          tuner::AxisShape{AxisLayout::columns, 1048579, 9}}) {
      const auto drawn = drawn_candidates(t, shape, device.sm_count, quick ? 1 : 6, [](const AxisKernelSpec& spec) {
        return spec.split == AxisSplit::ticket_tiles;
      });
      for (const auto& [spec, label] : drawn) {
        EXPECT_EQ(checker.check(spec, shape), "") << label;
        ++checked;
        if (quick) continue;
        for (int k : {2, 3}) {
          if (k == 3 && (spec.family != AxisFamily::rows || spec.vec == 1)) continue;  // rows' vector head only
          ++cases;
          const std::string why = checker.check(spec, shape, {"-DRT_MUTATION=" + std::to_string(k)});
          EXPECT_NE(why, "") << label << (k == 2 ? " drops the last element" : " drops the head") << " and passed";
          rejected += !why.empty();
        }
      }
      EXPECT_FALSE(drawn.empty()) << "no ticket_tiles candidate for " << to_string(dtype) << " R=" << shape.reduced << " "
                          << to_string(shape.layout);
    }
  }
  std::printf("[ counts   ] tiled splits: %d right, %d of %d broken ones rejected\n", checked, rejected, cases);
}

// Rows staged through shared memory a tile at a time (rows_dense): every such candidate
// the tuner draws reduces rows of odd and even lengths right, for every element size,
// over enough rows that the tiles start off the vector grid (a scalar head and tail per
// tile) and the last tile is partial; one that drops each row's last element, a tile's
// head, returns the identity or leaves the last row unwritten is caught. The built-in
// choice at R = 62 and 124 (f32) is checked too: both are staged at skew 3
// (rows_dense_skew), the draws at skew 1 and 3 alike.
// In quick mode (the sanitizer run): one candidate per shape, f16 and f32, no mutants.
TEST(AxisMutation, StagedRowsAreRightAndBrokenOnesRejected) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  int checked = 0, rejected = 0, cases = 0, at_skew_one = 0, at_skew_three = 0;
  const std::vector<DType> dtypes = mutation_dtypes(quick);
  for (DType dtype : dtypes) {
    const TypeRule t = *resolve_types(Op::sum, dtype, is_16bit_float(dtype) ? DType::f32 : dtype).rule;
    for (const tuner::AxisShape shape :
         {tuner::AxisShape{AxisLayout::rows, 2, 5003}, tuner::AxisShape{AxisLayout::rows, 3, 100003},
          tuner::AxisShape{AxisLayout::rows, 13, 70001}, tuner::AxisShape{AxisLayout::rows, 33, 65537},
          tuner::AxisShape{AxisLayout::rows, 100, 4099}, tuner::AxisShape{AxisLayout::rows, 127, 3001},
          // Rows whose folds meet in few banks at skew 1 (98) or only at skew 3 (62 with a
          // lane per row, 124 with groups of 4: 16 and 8 to a bank at skew 1).
          tuner::AxisShape{AxisLayout::rows, 62, 5003}, tuner::AxisShape{AxisLayout::rows, 98, 4001},
          tuner::AxisShape{AxisLayout::rows, 124, 3001}}) {
      auto drawn = drawn_candidates(t, shape, device.sm_count, quick ? 1 : 8, [](const AxisKernelSpec& spec) {
        return spec.family == AxisFamily::rows_dense;
      });
      EXPECT_FALSE(drawn.empty()) << "no rows_dense candidate for " << to_string(dtype) << " R=" << shape.reduced;
      if (dtype == DType::f32 && (shape.reduced == 62 || shape.reduced == 124)) {
        // The built-in choice for many such rows (it stages from 2^21 elements).
        const tuner::AxisShape many{AxisLayout::rows, shape.reduced, 65537};
        AxisLaunchPlan plan;
        const AxisKernelSpec builtin =
            builtin_axis_spec(Op::sum, t, tuner::canonical_axis_shape(many), device.sm_count, &plan);
        EXPECT_EQ(builtin.family, AxisFamily::rows_dense) << "R=" << shape.reduced;
        EXPECT_EQ(plan.skew, kRowsDenseMaxSkew) << "R=" << shape.reduced;
        drawn.insert(drawn.begin(), {builtin, "built-in " + to_string(builtin)});
      }
      for (const auto& [spec, label] : drawn) {
        const std::uint32_t skew =
            rows_dense_skew(size_of(spec.types.in), spec.group, spec.vec, shape.reduced);
        (skew == 1 ? at_skew_one : at_skew_three)++;
        EXPECT_EQ(checker.check(spec, shape), "") << label << " at skew " << skew;
        ++checked;
        if (quick) continue;
        for (int k : {2, 3, 4, 5}) {
          if (k == 2 && shape.reduced == 1) continue;  // nothing to drop
          // A tile's head exists where a second tile starts off the vector grid.
          const std::uint64_t tile = static_cast<std::uint64_t>(spec.block) * spec.unroll * spec.vec;
          const std::uint64_t rows_per_tile = (tile - (spec.vec - 1)) / shape.reduced;
          if (k == 3 && (spec.vec == 1 || shape.outputs <= rows_per_tile ||
                         (rows_per_tile * shape.reduced) % spec.vec == 0))
            continue;
          ++cases;
          const std::string why = checker.check(spec, shape, {"-DRT_MUTATION=" + std::to_string(k)});
          EXPECT_NE(why, "") << label << " with fault " << k << " passed";
          rejected += !why.empty();
        }
      }
    }
  }
  EXPECT_GT(at_skew_one, 0);
  EXPECT_GT(at_skew_three, 0);
  std::printf("[ counts   ] staged rows: %d right (%d at skew 1, %d at skew 3), %d of %d broken ones rejected\n",
              checked, at_skew_one, at_skew_three, rejected, cases);
}

// Packed rows (rt::axis_rows_packed_kernel): the first two rows_packed candidates the
// tuner draws for rows of 2 to 8 elements, over a count of rows that leaves a tail short
// of a chunk, reduce right; at R = 3 (chunks of several rows) and 8 (a row a chunk), one
// that drops each row's last element, returns the identity or leaves the last output
// unwritten is caught. In quick mode (the sanitizer run): one candidate per shape, f16
// and f32, no mutants.
TEST(AxisMutation, PackedRowsAreRightAndBrokenOnesRejected) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  int checked = 0, rejected = 0, cases = 0;
  for (DType dtype : mutation_dtypes(quick)) {
    const TypeRule t = *resolve_types(Op::sum, dtype, is_16bit_float(dtype) ? DType::f32 : dtype).rule;
    for (std::uint64_t r = 2; r <= kRowsPackedMaxReduced; ++r) {
      const tuner::AxisShape shape{AxisLayout::rows, r, 20011};
      const auto drawn = drawn_candidates(t, shape, device.sm_count, quick ? 1 : 2, [](const AxisKernelSpec& spec) {
        return spec.family == AxisFamily::rows_packed;
      });
      EXPECT_FALSE(drawn.empty()) << "no rows_packed candidate for " << to_string(dtype) << " R=" << r;
      for (const auto& [spec, label] : drawn) {
        EXPECT_EQ(checker.check(spec, shape), "") << label;
        ++checked;
        if (quick || (r != 3 && r != 8)) continue;
        for (int k : {2, 4, 5}) {
          ++cases;
          const std::string why = checker.check(spec, shape, {"-DRT_MUTATION=" + std::to_string(k)});
          EXPECT_NE(why, "") << label << " with fault " << k << " passed";
          rejected += !why.empty();
        }
      }
    }
  }
  std::printf("[ counts   ] packed rows: %d right, %d of %d broken ones rejected\n", checked, rejected, cases);
}

// The batched tail (tail=1: a run's last, partial tile of loads issued together, the
// loads past the end folded as the identity): the candidates the tuner draws with it
// reduce rows whose last tile leaves lanes several loads (R = 999 .. 2003, rows on the
// 16-byte grid and off it) and columns whose threads end in several loads (R = 3 over
// 2^22 elements and more, R = 1000 and 1001 with 16 or 32 threads across R) right, for
// every op (the identity folded in each op's own way) and element size; a sum that drops
// the last element, or a row's scalar head, is caught. Per shape: three sum candidates
// with their mutants, two of every other op.
// In quick mode (the sanitizer run): one sum and one max candidate per shape, f16 and
// f32, no mutants.
TEST(AxisMutation, BatchedTailsAreRightAndBrokenOnesRejected) {
  RT_REQUIRE_GPU();
  const bool quick = testing::quick_mode();
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  int checked = 0, rejected = 0, cases = 0;
  const std::vector<DType> dtypes = mutation_dtypes(quick);
  const std::vector<Op> ops = quick ? std::vector<Op>{Op::sum, Op::max}
                                    : std::vector<Op>{Op::sum, Op::max, Op::min, Op::prod, Op::mean};
  for (DType dtype : dtypes)
    for (Op op : ops) {
      const TypeRule t = *resolve_types(op, dtype, op == Op::sum && is_16bit_float(dtype) ? DType::f32
                                                                                            : default_out_dtype(op, dtype))
                              .rule;
      const int per_shape = quick ? 1 : op == Op::sum ? 3 : 2;
      for (const tuner::AxisShape shape :
           {tuner::AxisShape{AxisLayout::rows, 1000, 4099}, tuner::AxisShape{AxisLayout::rows, 1001, 2053},
            tuner::AxisShape{AxisLayout::rows, 2003, 1025}, tuner::AxisShape{AxisLayout::rows, 999, 3001},
            tuner::AxisShape{AxisLayout::columns, 3, (1 << 22) / 3 + 7}, tuner::AxisShape{AxisLayout::columns, 1000, 1000},
            tuner::AxisShape{AxisLayout::columns, 1001, 1003}}) {
        int drawn_here = 0;
        for (const auto& spec : axis_candidates(op, t, tuner::canonical_axis_shape(shape), device.sm_count)) {
          if (spec.tail != 1) continue;
          if (drawn_here == per_shape) break;
          ++drawn_here;
          const std::string label = to_string(spec) + " R=" + std::to_string(shape.reduced) + " x " +
                                    std::to_string(shape.outputs);
          EXPECT_EQ(checker.check(spec, shape), "") << label;
          ++checked;
          if (quick || op != Op::sum) continue;
          for (int k : {2, 3}) {
            // The rows' vector head, where rows start off the vector grid (the checks'
            // base is aligned: rows of a multiple of the vector have none).
            if (k == 3 && (spec.family != AxisFamily::rows || spec.vec == 1 || shape.reduced % spec.vec == 0)) continue;
            ++cases;
            const std::string why = checker.check(spec, shape, {"-DRT_MUTATION=" + std::to_string(k)});
            EXPECT_NE(why, "") << label << (k == 2 ? " drops the last element" : " drops the head") << " and passed";
            rejected += !why.empty();
          }
        }
        // Every shape has batched candidates for the 4- and 8-byte types.
        if (size_of(dtype) >= 4) {
          EXPECT_GT(drawn_here, 0) << "no batched candidate for " << to_string(op) << "<" << to_string(dtype) << "> R="
                                   << shape.reduced << " " << to_string(shape.layout);
        }
      }
    }
  std::printf("[ counts   ] batched tails: %d right, %d of %d broken ones rejected\n", checked, rejected, cases);
  EXPECT_GT(checked, 0);
}

TEST(AxisMutation, BrokenAxisKernelsAreRejected) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  tuner::AxisChecker checker(0);
  const DeviceKey device = *testing::test_device();
  const char* mutations[] = {"", "", "drops the last element", "drops the head", "returns the identity",
                             "leaves the last output unwritten"};
  int rejected = 0, cases = 0;
  for (DType dtype : {DType::f32, DType::f64})
    for (Op op : {Op::sum, Op::max}) {
      const TypeRule t = rule(op, dtype);
      for (const tuner::AxisShape shape :
           {tuner::AxisShape{AxisLayout::rows, 1001, 4099}, tuner::AxisShape{AxisLayout::rows, 1000, 4099},
            tuner::AxisShape{AxisLayout::rows, 13, 70001},
            tuner::AxisShape{AxisLayout::rows, 300001, 7}, tuner::AxisShape{AxisLayout::columns, 1001, 4099},
            tuner::AxisShape{AxisLayout::columns, 200003, 9}, tuner::AxisShape{AxisLayout::columns, 4097, 33},
            tuner::AxisShape{AxisLayout::columns, 8193, 200}, tuner::AxisShape{AxisLayout::columns, 1, 70001},
            tuner::AxisShape{AxisLayout::columns, 5, 70000}}) {
        const CanonicalAxes canonical = tuner::canonical_axis_shape(shape);
        // Every family of this layout the tuner may pick here: the first candidate of
        // each (family, split) pair.
        std::vector<AxisKernelSpec> specs;
        for (const auto& c : axis_candidates(op, t, canonical, device.sm_count)) {
          bool seen = false;
          for (const auto& s : specs) seen = seen || (s.family == c.family && s.split == c.split);
          if (!seen) specs.push_back(c);
        }
        for (const auto& spec : specs) {
          const std::string label = to_string(spec) + " R=" + std::to_string(shape.reduced) + " x " +
                                    std::to_string(shape.outputs) + " " + to_string(shape.layout);
          EXPECT_EQ(checker.check(spec, shape), "") << label << " (no fault)";
          for (int k : {2, 3, 4, 5}) {
            // The head peel exists only where rows load vectors (max ignores a dropped
            // element of an arbitrary value only by luck; sum never does).
            // Rows of 1000 lie on the vector grid (no head: the plain kernel, not the
            // peeled twin, reads them).
            if (k == 3 && !(spec.family == AxisFamily::rows && spec.vec > 1 && op == Op::sum)) continue;
            if (k == 3 && shape.reduced % spec.vec == 0) continue;
            if (k == 2 && (op != Op::sum || shape.reduced == 1)) continue;  // R = 1: no element to drop
            ++cases;
            const std::string why = checker.check(spec, shape, {"-DRT_MUTATION=" + std::to_string(k)});
            if (!why.empty()) ++rejected;
            EXPECT_NE(why, "") << label << " " << mutations[k] << " and passed";
          }
        }
      }
    }
  std::printf("[ counts   ] axis mutation test: %d of %d broken kernels rejected\n", rejected, cases);

  // Split programs on shapes where their plan does not split (a class's winner chosen at
  // a corner that splits, serving a shape of the class with more outputs): right, with
  // no partials and no finalize kernel.
  for (AxisSplit split : {AxisSplit::two_pass, AxisSplit::ticket, AxisSplit::ticket_tiles}) {
    AxisKernelSpec rows_spec;
    rows_spec.op = Op::sum;
    rows_spec.types = rule(Op::sum, DType::f32);
    rows_spec.family = AxisFamily::rows;
    rows_spec.group = 32;
    rows_spec.vec = 4;
    rows_spec.split = split;
    AxisKernelSpec columns_spec = rows_spec;
    columns_spec.family = AxisFamily::columns;
    columns_spec.group = 8;
    columns_spec.vec = 1;
    if (split == AxisSplit::ticket_tiles) columns_spec.split = AxisSplit::ticket;  // rows only
    const std::pair<AxisKernelSpec, tuner::AxisShape> unsplit[] = {
        {rows_spec, {AxisLayout::rows, 769, 12289}}, {columns_spec, {AxisLayout::columns, 769, 12289}}};
    for (const auto& [spec, shape] : unsplit) {
      const CanonicalAxes canonical = tuner::canonical_axis_shape(shape);
      ASSERT_EQ(plan_axis_launch(spec, canonical, device.sm_count).splits, 1u) << to_string(spec);
      EXPECT_EQ(checker.check(spec, shape), "") << to_string(spec) << " unsplit at R=" << shape.reduced;
    }
  }

  // A wrong answer fed to the comparison: the right one with one output off by one,
  // then all zeros.
  const tuner::AxisShape shape{AxisLayout::rows, 1000, 5000};
  const TypeRule t = rule(Op::sum, DType::f32);
  const AxisKernelSpec spec = builtin_axis_spec(Op::sum, t, tuner::canonical_axis_shape(shape), device.sm_count);
  DeviceBuffer answer(5000 * sizeof(float));
  checker.run(spec, shape, answer.get());
  EXPECT_EQ(checker.compare(Op::sum, t, shape, answer.get()), "");
  std::vector<float> values(5000);
  RT_CUDA_CHECK(cudaMemcpy(values.data(), answer.get(), values.size() * sizeof(float), cudaMemcpyDeviceToHost));
  values[1234] += 1.0f;
  RT_CUDA_CHECK(cudaMemcpy(answer.get(), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
  const std::string one = checker.compare(Op::sum, t, shape, answer.get());
  EXPECT_NE(one.find("1 of 5000 outputs wrong"), std::string::npos) << one;
  EXPECT_NE(one.find("output 1234"), std::string::npos) << one;
  RT_CUDA_CHECK(cudaMemset(answer.get(), 0, 5000 * sizeof(float)));
  const std::string zeros = checker.compare(Op::sum, t, shape, answer.get());
  EXPECT_NE(zeros.find("outputs wrong"), std::string::npos) << zeros;
}

}  // namespace
}  // namespace reduce_tune
