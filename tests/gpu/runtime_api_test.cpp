// The public API on the GPU: every op and dtype against a CPU reference at awkward sizes
// and offsets, many threads on many streams, CUDA graph capture, bit-for-bit
// determinism, an output inside the input, and the host cost of a call.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fstream>
#include <map>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>
#include <atomic>
#include <cmath>
#include <limits>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/compiler.h"
#include "gpu_env.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/pointer_check.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/reduce_tune.h"
#include "reduce_tune/runtime/selector.h"
#include "host_reference.h"

namespace reduce_tune {
namespace {

using Clock = std::chrono::steady_clock;

using testing::no_database;
using testing::temp_dir;

struct DeviceArray {
  testing::HostArray host;
  DeviceBuffer device;
};

DeviceArray upload(Op op, DType dtype, std::size_t count, std::uint64_t seed = 3) {
  DeviceArray a{testing::make_input(op, dtype, testing::Pattern::exact, count, seed), DeviceBuffer(count * size_of(dtype) + 8)};
  RT_CUDA_CHECK(cudaMemcpy(a.device.get(), a.host.bytes.data(), a.host.bytes.size(), cudaMemcpyHostToDevice));
  return a;
}

std::uint64_t run(Context& ctx, Op op, const TypeRule& t, const DeviceArray& a, std::size_t offset, std::uint64_t n,
                  cudaStream_t stream = nullptr) {
  DeviceBuffer out(8);
  const std::uint64_t poison = 0xa5a5a5a5a5a5a5a5ull;
  RT_CUDA_CHECK(cudaMemcpy(out.get(), &poison, 8, cudaMemcpyHostToDevice));
  ctx.reduce(op, t.in, t.out, static_cast<const unsigned char*>(a.device.get()) + offset * size_of(t.in), n, out.get(),
             stream);
  std::uint64_t got = 0;
  RT_CUDA_CHECK(cudaStreamSynchronize(stream));
  RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), size_of(t.out), cudaMemcpyDeviceToHost));
  return got;
}

TEST(RuntimeApi, EveryOpAndDtypeMatchesTheReference) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::vector<std::uint64_t> sizes = {0, 1, 33, 4097, 1048579, 10000019};
  int runs = 0;
  for (Op op : kAllOps)
    for (DType in : kAllDTypes) {
      std::vector<DType> outs = {default_out_dtype(op, in)};
      if (op == Op::sum && in == DType::i32) outs.push_back(DType::i64);
      if (op == Op::sum && in == DType::f32) outs.push_back(DType::f64);
      const auto a = upload(op, in, sizes.back() + 4);
      for (DType out : outs) {
        const TypeRule t = *resolve_types(op, in, out).rule;
        for (auto n : sizes)
          for (std::size_t offset : {0, 1, 3}) {
            const auto expected = testing::expect(op, t, a.host, offset, n);
            const auto got = run(ctx, op, t, a, offset, n);
            ++runs;
            EXPECT_EQ(testing::mismatch(t, got, expected, 1 << 20), "")
                << to_string(op) << "<" << to_string(in) << "," << to_string(out) << "> n=" << n << " offset=" << offset;
          }
      }
    }
  std::printf("[ counts   ] public API: %d runs\n", runs);
}

TEST(RuntimeApi, TypedAndSynchronousFormsAgree) {
  RT_REQUIRE_GPU();
  const std::uint64_t n = 100003;
  std::vector<std::int32_t> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<std::int32_t>(i * 2654435761u);
  std::int32_t* d = nullptr;
  RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), n * 4));
  RT_CUDA_CHECK(cudaMemcpy(d, host.data(), n * 4, cudaMemcpyHostToDevice));
  std::int64_t wide = 0;
  std::int32_t narrow = 0, lo = 0, hi = 0;
  for (auto v : host) {
    wide += v;
    narrow = static_cast<std::int32_t>(static_cast<std::uint32_t>(narrow) + static_cast<std::uint32_t>(v));
  }
  lo = *std::min_element(host.begin(), host.end());
  hi = *std::max_element(host.begin(), host.end());
  EXPECT_EQ((sum_value<std::int32_t, std::int64_t>(d, n)), wide);
  EXPECT_EQ(sum_value(d, n), narrow);  // wraps like two's complement
  EXPECT_EQ(min_value(d, n), lo);
  EXPECT_EQ(max_value(d, n), hi);
  EXPECT_DOUBLE_EQ(mean_value(d, n), static_cast<double>(wide) / n);
  std::int64_t* d_out = nullptr;
  RT_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_out), 8));
  sum(d, n, d_out);
  std::int64_t got = 0;
  RT_CUDA_CHECK(cudaMemcpy(&got, d_out, 8, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, wide);
  // Empty input: the identities, NaN for mean.
  EXPECT_EQ(sum_value(d, 0), 0);
  EXPECT_EQ(prod_value(d, 0), 1);
  EXPECT_EQ(min_value(d, 0), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(max_value(d, 0), std::numeric_limits<std::int32_t>::min());
  EXPECT_TRUE(std::isnan(mean_value(d, 0)));
  const auto e = explain<std::int32_t>(Op::sum, n);
  EXPECT_FALSE(e.to_string().empty());
  cudaFree(d);
  cudaFree(d_out);
}

TEST(RuntimeApi, ManyThreadsOnManyStreams) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::uint64_t n = 1 << 20;
  const Op ops[] = {Op::sum, Op::max, Op::min, Op::prod};
  std::vector<DeviceArray> arrays;
  for (Op op : ops) arrays.push_back(upload(op, DType::i32, n, 11));
  std::vector<std::uint64_t> expected;
  for (std::size_t k = 0; k < 4; ++k)
    expected.push_back(testing::expect(ops[k], *resolve_types(ops[k], DType::i32, DType::i32).rule,
                                                arrays[k].host, 0, n - k * 1000).bits);
  std::atomic<int> failures{0}, calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      RT_CUDA_CHECK(cudaSetDevice(0));
      Stream streams[2];
      DeviceBuffer outs(8 * 2 * 4);
      for (int iter = 0; iter < 50; ++iter) {
        for (int s = 0; s < 2; ++s)
          for (std::size_t k = 0; k < 4; ++k) {
            const std::size_t op_index = (k + t + s) % 4;
            ctx.reduce(ops[op_index], DType::i32, DType::i32, arrays[op_index].device.get(), n - op_index * 1000,
                       outs.as<unsigned char>() + (s * 4 + op_index) * 8, streams[s].get());
          }
        for (int s = 0; s < 2; ++s) {
          RT_CUDA_CHECK(cudaStreamSynchronize(streams[s].get()));
          std::uint32_t got[4 * 2];
          for (std::size_t k = 0; k < 4; ++k) {
            RT_CUDA_CHECK(cudaMemcpy(&got[k], outs.as<unsigned char>() + (s * 4 + k) * 8, 4, cudaMemcpyDeviceToHost));
            calls++;
            if (got[k] != static_cast<std::uint32_t>(expected[k])) failures++;
          }
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << "of " << calls.load() << " results";
  EXPECT_EQ(calls.load(), 8 * 50 * 2 * 4);
}

TEST(RuntimeApi, CallsCanBeCapturedIntoAGraphAndReplayed) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  Stream stream;
  const std::uint64_t n = 3 << 20;
  DeviceBuffer in(n * 4), out(8);
  std::vector<float> host(n, 1.0f);
  RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), n, out.get(), stream.get());  // warm-up
  RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  cudaGraph_t graph = nullptr;
  RT_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), n, out.get(), stream.get());
  RT_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  RT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  float got = 0;
  for (float value : {1.0f, 2.0f, -0.5f}) {
    std::fill(host.begin(), host.end(), value);
    // On the graph's stream: a pageable cudaMemcpy on the legacy stream is not ordered
    // before work on a non-blocking stream.
    RT_CUDA_CHECK(cudaMemcpyAsync(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice, stream.get()));
    RT_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, value * static_cast<float>(n));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(RuntimeApi, SameCallSameBitsEveryTime) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::uint64_t n = (1 << 24) + 17;
  const auto a = [&] {
    DeviceArray x{testing::make_input(Op::sum, DType::f32, testing::Pattern::real, n, 5), DeviceBuffer(n * 4)};
    RT_CUDA_CHECK(cudaMemcpy(x.device.get(), x.host.bytes.data(), n * 4, cudaMemcpyHostToDevice));
    return x;
  }();
  const TypeRule t = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  const std::uint64_t first = run(ctx, Op::sum, t, a, 0, n);
  int different = 0;
  for (int i = 0; i < 100; ++i) different += run(ctx, Op::sum, t, a, 0, n) != first;
  EXPECT_EQ(different, 0);
  EXPECT_TRUE(ctx.explain(Op::sum, DType::f32, DType::f32, n).deterministic);
}

TEST(RuntimeApi, OutputInsideTheInputIsWrittenAfterTheInputIsRead) {
  RT_REQUIRE_GPU();
  const std::uint64_t n = (1 << 22) + 3;
  std::vector<float> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  double expected = 0;
  for (float v : host) expected += v;
  DeviceBuffer in(n * 4);
  for (std::uint64_t where : {std::uint64_t{0}, n / 2, n - 1}) {
    RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
    float* out = in.as<float>() + where;
    sum(in.as<float>(), n, out);
    float got = 0;
    RT_CUDA_CHECK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, static_cast<float>(expected)) << "output at element " << where;
  }
}

TEST(RuntimeApi, TunedWinnerIsUsedAndExplained) {
  RT_REQUIRE_GPU();
  const DeviceKey key = *testing::test_device();
  const auto path = temp_dir("rt_api_tuned") / "tuning.db";
  ReduceConfig config = *parse_config("complete_unroll:block=128,items=8,warp=smem").config;
  testing::store_test_winner(path, key, 4096, config, 0.0031);
  ContextOptions o;
  o.database = path;
  Context ctx(o);
  const auto e = ctx.explain(Op::sum, DType::f32, DType::f32, 5000);
  EXPECT_EQ(e.match, MatchKind::exact);
  EXPECT_EQ(e.config.strategy, Strategy::complete_unroll);
  ASSERT_TRUE(e.measured);
  EXPECT_EQ(e.measured->bucket, 12);
  EXPECT_NE(e.to_string().find("match: exact"), std::string::npos) << e.to_string();
  const auto a = upload(Op::sum, DType::f32, 5000);
  const TypeRule t = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
  EXPECT_EQ(testing::mismatch(t, run(ctx, Op::sum, t, a, 1, 4999), testing::expect(Op::sum, t, a.host, 1, 4999), 64),
            "");
  EXPECT_EQ(ctx.explain(Op::sum, DType::f32, DType::f32, 1 << 20).match, MatchKind::nearest_size);
  EXPECT_EQ(ctx.explain(Op::max, DType::f32, DType::f32, 1 << 20).match, MatchKind::default_config);
  std::filesystem::remove_all(path.parent_path());
}

TEST(RuntimeApi, CorruptDatabaseFallsBackToDefaultsWithOneReport) {
  RT_REQUIRE_GPU();
  const auto dir = temp_dir("rt_api_corrupt");
  const auto path = dir / "tuning.db";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fputs("this is not a database, it is a text file of some length........................", f);
    std::fclose(f);
  }
  std::vector<std::string> errors;
  auto previous = set_log_sink([&](LogLevel level, std::string_view m) {
    if (level == LogLevel::error) errors.emplace_back(m);
  });
  ContextOptions o;
  o.database = path;
  Context ctx(o);
  const auto a = upload(Op::max, DType::f64, 1000);
  const TypeRule t = *resolve_types(Op::max, DType::f64, DType::f64).rule;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(testing::mismatch(t, run(ctx, Op::max, t, a, 0, 1000), testing::expect(Op::max, t, a.host, 0, 1000), 1), "");
  set_log_sink(previous);
  EXPECT_EQ(errors.size(), 1u);
  std::filesystem::remove_all(dir);
}

// Not a timed test: prints the host cost of a warm call, next to a bare launch of the
// same kernel, and the cost of a first call with and without a cached binary.
TEST(RuntimeApi, ReportsHostOverheadAndFirstCallLatency) {
  RT_REQUIRE_GPU();
  const DeviceKey key = *testing::test_device();
  Stream stream;
  DeviceBuffer in(4096 * 4), out(8);
  RT_CUDA_CHECK(cudaMemset(in.get(), 0, 4096 * 4));
  const auto dir = temp_dir("rt_api_latency");

  // First call, nothing cached: selection, NVRTC compile, load, workspace.
  ContextOptions cold_options;
  cold_options.database = dir / "none.db";
  cold_options.kernel_cache = "off";
  Context cold(cold_options);
  auto t0 = Clock::now();
  cold.reduce(Op::min, DType::u32, DType::u32, in.get(), 4096, out.get(), stream.get());
  const double cold_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  // A database holding the binary, as the tuner leaves it.
  const TypeRule t = *resolve_types(Op::min, DType::u32, DType::u32).rule;
  const KernelSpec spec{Op::min, t, builtin_default_config(Op::min, t, key.arch())};
  NvrtcCompiler compiler;
  const std::vector<KernelSpec> one = {spec};
  const CompileRequest request = make_compile_request(one, key.arch());
  const auto blob = serialize(compiler.compile(request));
  {
    auto database = db::Database::open(dir / "cached.db");
    db::CompiledBinary b;
    b.key = binary_cache_key(request, compiler.version());
    b.arch = key.arch();
    b.nvrtc_version = compiler.version();
    b.cubin.resize(blob.size());
    std::memcpy(b.cubin.data(), blob.data(), blob.size());
    b.created_at = db::now_timestamp();
    database.put_binary(b);
  }
  ContextOptions warm_options;
  warm_options.database = dir / "cached.db";
  warm_options.kernel_cache = "off";
  Context cached(warm_options);
  t0 = Clock::now();
  cached.reduce(Op::min, DType::u32, DType::u32, in.get(), 4096, out.get(), stream.get());
  const double cached_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  // No database, the kernel kept in the kernel cache folder by an earlier context.
  ContextOptions kept_options;
  kept_options.database = dir / "none.db";
  kept_options.kernel_cache = dir / "kernels";
  {
    Context first(kept_options);
    first.reduce(Op::min, DType::u32, DType::u32, in.get(), 4096, out.get(), stream.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }
  Context later(kept_options);
  t0 = Clock::now();
  later.reduce(Op::min, DType::u32, DType::u32, in.get(), 4096, out.get(), stream.get());
  const double kept_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  // Warm calls against the same kernel through the launcher alone (no context), timed
  // in alternating batches (the GPU runs behind; 200 calls stay within the queue), so
  // that drifting launch costs hit both sides alike; medians of 41 batches each.
  KernelSet set(std::make_shared<const CompiledProgram>(deserialize_program(blob)), 1, key.arch());
  Workspace ws(4096, stream.get());
  const auto view = ws.view();
  const auto plan = plan_launch(spec, 4096, key.sm_count);
  CudaLauncher launcher;
  const int calls = 200;
  std::vector<double> call_us, launch_us, overhead_us;
  for (int rep = 0; rep < 41; ++rep) {
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i) cached.reduce(Op::min, DType::u32, DType::u32, in.get(), 4096, out.get(), stream.get());
    call_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i)
      enqueue_reduction(launcher, set.handles(0), spec, plan, view, in.get(), 4096, out.get(), stream.get());
    launch_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    overhead_us.push_back(call_us.back() - launch_us.back());
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  // Single calls interleaved with single launches, each timed alone, in an order that
  // rotates: all sides see the same driver and queue state, and the medians of 20,000
  // each do not move with a slow batch. A sync every 200 rounds keeps the queue short
  // (the GPU keeps up with one 4096-element kernel per launch anyway). The third side is
  // the launch after the driver queries a warm call makes (the current device, the
  // buffer ids of input and output), to tell their cost in place from the rest.
  auto call = [&] { cached.reduce(Op::min, DType::u32, DType::u32, in.get(), 4096, out.get(), stream.get()); };
  auto launch = [&] {
    enqueue_reduction(launcher, set.handles(0), spec, plan, view, in.get(), 4096, out.get(), stream.get());
  };
  volatile std::uint64_t sink = 0;
  auto queries_then_launch = [&] {
    sink = sink + static_cast<std::uint64_t>(current_device_ordinal()) + query_buffer_id(in.get()) +
           query_buffer_id(out.get());
    launch();
  };
  std::vector<double> sides[3];
  for (auto& side : sides) side.reserve(20000);
  for (int chunk = 0; chunk < 100; ++chunk) {
    for (int i = 0; i < calls; ++i) {
      for (int k = 0; k < 3; ++k) {
        const int which = (i + k) % 3;
        const auto a = Clock::now();
        if (which == 0) call();
        else if (which == 1) launch();
        else queries_then_launch();
        sides[which].push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
      }
    }
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }
  const double single_call_us = median(sides[0]), single_launch_us = median(sides[1]);
  const double queried_launch_us = median(sides[2]);
  std::printf("[ overhead ] warm call, single calls interleaved with single launches (medians of %zu each): "
              "call %.3f us, the same kernel through the launcher alone %.3f us; library overhead %.3f us, of "
              "which the driver queries in place (launch after them %.3f us) %.3f us\n",
              sides[0].size(), single_call_us, single_launch_us, single_call_us - single_launch_us,
              queried_launch_us, queried_launch_us - single_launch_us);
  const double best_call_us = median(call_us), best_launch_us = median(launch_us);
  const double overhead = median(overhead_us);
  // cudaLaunchKernel and cudaLaunchKernelExC on the same cudaKernel_t handle.
  double best_plain_us = 1e9;
  {
    KernelParams params = make_kernel_params(spec, view, in.get(), 4096, out.get());
    void* args[] = {&params};
    for (int rep = 0; rep < 5; ++rep) {
      t0 = Clock::now();
      for (int i = 0; i < calls; ++i)
        RT_CUDA_CHECK(cudaLaunchKernel(set.handles(0).reduce, dim3(plan.grid), dim3(plan.block), args, 0, stream.get()));
      best_plain_us = std::min(best_plain_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
      RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    }
  }
  double best_ex_us = 1e9;
  {
    KernelParams params = make_kernel_params(spec, view, in.get(), 4096, out.get());
    void* args[] = {&params};
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(plan.grid);
    config.blockDim = dim3(plan.block);
    config.stream = stream.get();
    for (int rep = 0; rep < 5; ++rep) {
      t0 = Clock::now();
      for (int i = 0; i < calls; ++i) RT_CUDA_CHECK(cudaLaunchKernelExC(&config, set.handles(0).reduce, args));
      best_ex_us = std::min(best_ex_us, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
      RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    }
  }
  std::printf("[ overhead ] bare launches of the same kernel handle: cudaLaunchKernel %.2f us, cudaLaunchKernelExC %.2f us per call\n",
              best_plain_us, best_ex_us);
  std::printf("[ overhead ] first call: %.1f ms without a cached binary (NVRTC), %.2f ms with the binary in the "
              "database, %.2f ms with it in the kernel cache folder\n",
              cold_ms, cached_ms, kept_ms);
  const double fastest_call_us = *std::min_element(call_us.begin(), call_us.end());
  const double fastest_launch_us = *std::min_element(launch_us.begin(), launch_us.end());
  std::printf("[ overhead ] warm call: %.2f us host time per call; the same kernel through the launcher alone: %.2f us; "
              "library overhead %.2f us (median of per-batch differences), %.2f us (fastest batch against fastest "
              "batch)\n",
              best_call_us, best_launch_us, overhead, fastest_call_us - fastest_launch_us);
  EXPECT_LT(cached_ms, cold_ms);
  EXPECT_LT(kept_ms, cold_ms);
  std::filesystem::remove_all(dir);
}

// The kernel cache folder (ContextOptions::kernel_cache): a later context (a later
// process) loads the kernels an earlier one compiled, rewriting none of them; a damaged
// file is compiled again and replaced; "off" keeps nothing, whatever the variable says;
// a folder that cannot be created leaves every call right; a size limit holds. Flat and
// axis calls, each checked against the host.
TEST(RuntimeApi, ALaterContextLoadsTheKernelsAnEarlierOneKept) {
  RT_REQUIRE_GPU();
  namespace fs = std::filesystem;
  const fs::path dir = temp_dir("rt_kernel_cache");
  fs::remove_all(dir);
  const std::uint64_t n = 1000003;
  const TypeRule t = *resolve_types(Op::sum, DType::i64, DType::i64).rule;
  const auto a = upload(Op::sum, DType::i64, n + 4);
  const auto expected = testing::expect(Op::sum, t, a.host, 1, n);
  // Columns of 37 outputs over R = 1000 from element 1: the i64 sums the host adds too.
  const std::int64_t rows = 1000, cols = 37;
  std::vector<std::int64_t> column_sums(cols, 0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      std::int64_t v = 0;
      std::memcpy(&v, a.host.bytes.data() + (1 + r * cols + c) * 8, 8);
      column_sums[static_cast<std::size_t>(c)] += v;
    }
  auto calls_are_right = [&](ContextOptions options) {
    Context ctx(options);
    EXPECT_EQ(testing::mismatch(t, run(ctx, Op::sum, t, a, 1, n), expected, 1 << 20), "");
    DeviceBuffer out(cols * 8);
    ctx.reduce_axes(Op::sum, DType::i64, DType::i64, static_cast<const std::int64_t*>(a.device.get()) + 1,
                    TensorDesc::contiguous({rows, cols}), {0}, out.get(), nullptr);
    std::vector<std::int64_t> got(cols);
    RT_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), cols * 8, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, column_sums);
  };
  // Each kept file and its inode: a file stored again is a new file renamed into place.
  auto kept = [&](const fs::path& folder) {
    std::map<std::string, ino_t> files;
    if (!fs::exists(folder)) return files;
    for (const auto& e : fs::directory_iterator(folder)) {
      struct stat st {};
      EXPECT_EQ(::stat(e.path().c_str(), &st), 0);
      files[e.path().filename().string()] = st.st_ino;
    }
    return files;
  };
  ContextOptions options = no_database();
  options.kernel_cache = dir / "kernels";
  calls_are_right(options);
  const auto first = kept(dir / "kernels");
  ASSERT_GE(first.size(), 2u);  // the flat kernel and the axis program at least
  for (const auto& [name, inode] : first) EXPECT_EQ(fs::path(name).extension(), ".rtk") << name;
  calls_are_right(options);
  EXPECT_EQ(kept(dir / "kernels"), first) << "a later context compiled and stored again what was kept";
  // A damaged file: compiled again and replaced (a new file), the others untouched.
  const fs::path damaged = dir / "kernels" / first.begin()->first;
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x5a');
  }
  calls_are_right(options);
  const auto after = kept(dir / "kernels");
  ASSERT_EQ(after.size(), first.size());
  for (const auto& [name, inode] : first)
    if (name == first.begin()->first) EXPECT_NE(after.at(name), inode) << "the damaged file was not replaced";
    else EXPECT_EQ(after.at(name), inode) << name;
  // "off" keeps nothing, even where the variable names a folder.
  ::setenv("REDUCE_TUNE_KERNEL_CACHE", (dir / "from_env").c_str(), 1);
  ContextOptions off = no_database();
  off.kernel_cache = "off";
  calls_are_right(off);
  EXPECT_FALSE(fs::exists(dir / "from_env"));
  // Without the option, the variable decides.
  calls_are_right(no_database());
  EXPECT_GE(kept(dir / "from_env").size(), 2u);
  ::unsetenv("REDUCE_TUNE_KERNEL_CACHE");
  // A size limit, by the option and by the variable: the folder never holds more, and
  // every call is still right. Room for the largest kernel: at least one stays.
  std::uint64_t largest = 0;
  for (const auto& e : fs::directory_iterator(dir / "kernels"))
    largest = std::max<std::uint64_t>(largest, fs::file_size(e.path()));
  auto bytes_in = [](const fs::path& folder) {
    std::uint64_t total = 0;
    for (const auto& e : fs::directory_iterator(folder)) total += fs::file_size(e.path());
    return total;
  };
  ContextOptions small = no_database();
  small.kernel_cache = dir / "small";
  small.kernel_cache_max_bytes = largest;
  calls_are_right(small);
  calls_are_right(small);
  EXPECT_LE(bytes_in(dir / "small"), largest);
  EXPECT_GE(kept(dir / "small").size(), 1u);
  ::setenv("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE", std::to_string(largest).c_str(), 1);
  ContextOptions by_variable = no_database();
  by_variable.kernel_cache = dir / "small_by_variable";
  calls_are_right(by_variable);
  ::unsetenv("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE");
  EXPECT_LE(bytes_in(dir / "small_by_variable"), largest);
  EXPECT_GE(kept(dir / "small_by_variable").size(), 1u);
  // A folder that cannot be created (a file is in the way): every call still right.
  { std::ofstream(dir / "file") << "x"; }
  ContextOptions blocked = no_database();
  blocked.kernel_cache = dir / "file" / "kernels";
  calls_are_right(blocked);
  fs::remove_all(dir);
}


// Where a warm call's host time goes: each driver query and lookup the call makes, timed
// alone in a loop (printed for the note and for docs/BENCHMARKS.md; nothing asserted on
// time). The output in its own allocation costs a second pointer query; the output
// inside the input's allocation does not.
TEST(RuntimeApi, ReportsWhereTheWarmCallTimeGoes) {
  RT_REQUIRE_GPU();
  const DeviceKey key = *testing::test_device();
  DeviceBuffer in(4096 * 4 + 64), out(8);
  RT_CUDA_CHECK(cudaMemset(in.get(), 0, 4096 * 4 + 64));
  Stream stream;
  Context ctx(no_database());
  const int iters = 20000;
  auto time_us = [&](auto&& body) {
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) body();
      best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters);
    }
    return best;
  };
  int dev = 0;
  const double get_device = time_us([&] { cudaGetDevice(&dev); });
  int ordinal = -1;
  const double library_device = time_us([&] { ordinal = current_device_ordinal(); });
  EXPECT_EQ(ordinal, dev);
  const double query = time_us([&] { (void)query_pointer(in.get(), dev); });
  cudaPointerAttributes attrs{};
  const double runtime_query = time_us([&] { cudaPointerGetAttributes(&attrs, in.get()); });
  const double plan = time_us([&] {
    const TypeRule t = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
    volatile auto g = plan_launch(KernelSpec{Op::sum, t, builtin_default_config(Op::sum, t, key.arch())}, 4096, key.sm_count).grid;
    (void)g;
  });
  auto* in_f = static_cast<const float*>(in.get());
  auto* out_inside = reinterpret_cast<float*>(static_cast<unsigned char*>(in.get()) + 4096 * 4);
  auto* out_apart = static_cast<float*>(out.get());
  // Calls queue behind the GPU; batches of 200 stay inside the launch queue.
  ContextOptions strict_options = no_database();
  strict_options.check_pointers_every_call = true;
  Context strict(strict_options);
  auto call_us = [&](Context& c, float* o) {
    double best = 1e9;
    for (int rep = 0; rep < 41; ++rep) {
      const auto t0 = Clock::now();
      for (int i = 0; i < 200; ++i) c.reduce(Op::sum, DType::f32, DType::f32, in_f, 4096, o, stream.get());
      best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 200);
      RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    }
    return best;
  };
  const double apart = call_us(ctx, out_apart), inside = call_us(ctx, out_inside);
  const double strict_apart = call_us(strict, out_apart), strict_inside = call_us(strict, out_inside);
  // The driver's own entry points, for what a cheaper check could use.
  auto entry = [](const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    RT_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status));
    return fn;
  };
  using GetAttributeFn = int (*)(void*, int, unsigned long long);
  using GetAttributesFn = int (*)(unsigned, int*, void**, unsigned long long);
  using CtxGetCurrentFn = int (*)(void**);
  using CtxGetDeviceFn = int (*)(int*);
  auto get_attribute = reinterpret_cast<GetAttributeFn>(entry("cuPointerGetAttribute"));
  auto get_attributes = reinterpret_cast<GetAttributesFn>(entry("cuPointerGetAttributes"));
  auto ctx_get_current = reinterpret_cast<CtxGetCurrentFn>(entry("cuCtxGetCurrent"));
  auto ctx_get_device = reinterpret_cast<CtxGetDeviceFn>(entry("cuCtxGetDevice"));
  const auto address = reinterpret_cast<unsigned long long>(in.get());
  unsigned long long value = 0;
  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, BUFFER_ID = 7, RANGE_START_ADDR = 11, RANGE_SIZE = 12.
  const double one_type = time_us([&] { get_attribute(&value, 2, address); });
  const double one_buffer_id = time_us([&] { get_attribute(&value, 7, address); });
  const double one_range = time_us([&] { get_attribute(&value, 12, address); });
  int two_attrs[] = {2, 12};
  unsigned long long two_values[2];
  void* two_data[] = {&two_values[0], &two_values[1]};
  const double two = time_us([&] { get_attributes(2, two_attrs, two_data, address); });
  void* current = nullptr;
  const double ctx_current = time_us([&] { ctx_get_current(&current); });
  int ctx_device = -1;
  const double ctx_dev = time_us([&] { ctx_get_device(&ctx_device); });
  std::printf("[ overhead ] driver: cuPointerGetAttribute memory type %.3f us, buffer id %.3f us, range size %.3f us; "
              "cuPointerGetAttributes 2 attributes %.3f us; cuCtxGetCurrent %.3f us, cuCtxGetDevice %.3f us\n",
              one_type, one_buffer_id, one_range, two, ctx_current, ctx_dev);
  std::printf("[ overhead ] pieces: cudaGetDevice %.3f us (the library's current_device_ordinal %.3f us), cuPointerGetAttributes (5 attributes) %.3f us, "
              "cudaPointerGetAttributes %.3f us, types + plan %.3f us\n",
              get_device, library_device, query, runtime_query, plan);
  std::printf("[ overhead ] warm call (best batch): output in its own allocation %.3f us, inside the input's %.3f us; "
              "asking the driver every call: %.3f us and %.3f us\n",
              apart, inside, strict_apart, strict_inside);
  EXPECT_EQ(dev, 0);
}

const void* address(const DeviceBuffer& b) { return b.get(); }
const void* address(const void* p) { return p; }

// Memory of a second device, reduced while the first is current: refused, naming the
// reason, input or output, flat or along axes, and the context then works on both
// devices (each call on the current one); read over peer access once the caller enables
// it, and refused again once it is disabled (other devices' memory is checked on every
// call, never cached as verified); memory of the second device's pool likewise, as the
// pool grants access.
TEST(Devices, AnotherDevicesMemoryIsRefusedUnlessPeerAccessLetsTheCurrentOneReadIt) {
  RT_REQUIRE_GPU();
  int count = 0;
  RT_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) GTEST_SKIP() << "needs two CUDA devices (" << count << " here)";
  const std::int64_t rows = 1001, row = 1047;
  const std::uint64_t n = static_cast<std::uint64_t>(rows * row);
  std::vector<float> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<float>(static_cast<int>(i % 9) - 4);
  double total = 0;
  std::vector<float> row_sums(static_cast<std::size_t>(rows), 0.0f);
  for (std::uint64_t i = 0; i < n; ++i) {
    total += host[i];
    row_sums[i / static_cast<std::uint64_t>(row)] += host[i];  // exact: small integers
  }
  const auto upload_to = [&](int device) {
    RT_CUDA_CHECK(cudaSetDevice(device));
    DeviceBuffer b(n * 4);
    RT_CUDA_CHECK(cudaMemcpy(b.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
    return b;
  };
  DeviceBuffer in1 = upload_to(1), out1(static_cast<std::size_t>(rows) * 4);
  DeviceBuffer in0 = upload_to(0), out0(static_cast<std::size_t>(rows) * 4);
  Context ctx(no_database());
  const auto refused = [&](auto&& call) {
    try {
      call();
      RT_CUDA_CHECK(cudaDeviceSynchronize());
      return std::string("accepted");
    } catch (const InvalidArgument& e) {
      return std::string(e.what()).find("another device") == std::string::npos ? std::string("message: ") + e.what()
                                                                                : std::string();
    }
  };
  const auto flat = [&](const auto& in, const DeviceBuffer& out) {
    ctx.reduce(Op::sum, DType::f32, DType::f32, address(in), n, out.get(), nullptr);
  };
  const auto rows_of = [&](const auto& in, const DeviceBuffer& out) {
    ctx.reduce_axes(Op::sum, DType::f32, DType::f32, address(in), TensorDesc::contiguous({rows, row}), {1}, out.get(),
                    nullptr);
  };
  const auto flat_result = [&](const DeviceBuffer& out) {
    RT_CUDA_CHECK(cudaDeviceSynchronize());
    float got = 0;
    RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    return got;
  };
  const auto rows_result = [&](const DeviceBuffer& out) {
    RT_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> got(static_cast<std::size_t>(rows));
    RT_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
    return got;
  };
  RT_CUDA_CHECK(cudaSetDevice(0));
  EXPECT_EQ(refused([&] { flat(in1, out0); }), "");
  EXPECT_EQ(refused([&] { flat(in0, out1); }), "");
  EXPECT_EQ(refused([&] { rows_of(in1, out0); }), "");
  EXPECT_EQ(refused([&] { rows_of(in0, out1); }), "");
  RT_CUDA_CHECK(cudaGetLastError());
  flat(in0, out0);
  EXPECT_EQ(flat_result(out0), static_cast<float>(total));
  rows_of(in0, out0);
  EXPECT_EQ(rows_result(out0), row_sums);
  RT_CUDA_CHECK(cudaSetDevice(1));
  flat(in1, out1);
  EXPECT_EQ(flat_result(out1), static_cast<float>(total));
  rows_of(in1, out1);
  EXPECT_EQ(rows_result(out1), row_sums);
  EXPECT_EQ(refused([&] { flat(in0, out1); }), "");
  RT_CUDA_CHECK(cudaSetDevice(0));
  int can = 0;
  RT_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
  if (can) {
    RT_CUDA_CHECK(cudaDeviceEnablePeerAccess(1, 0));
    RT_CUDA_CHECK(cudaMemset(out0.get(), 0, out0.size()));
    flat(in1, out0);
    EXPECT_EQ(flat_result(out0), static_cast<float>(total));
    rows_of(in1, out0);
    EXPECT_EQ(rows_result(out0), row_sums);
    RT_CUDA_CHECK(cudaDeviceDisablePeerAccess(1));
    EXPECT_EQ(refused([&] { flat(in1, out0); }), "");
    EXPECT_EQ(refused([&] { rows_of(in1, out0); }), "");
  }
  // Memory of device 1's default pool (cudaMallocAsync): reachable from device 0 only
  // where the pool grants it access.
  RT_CUDA_CHECK(cudaSetDevice(1));
  cudaStream_t stream1 = nullptr;
  RT_CUDA_CHECK(cudaStreamCreate(&stream1));
  void* pooled = nullptr;
  RT_CUDA_CHECK(cudaMallocAsync(&pooled, n * 4, stream1));
  RT_CUDA_CHECK(cudaMemcpyAsync(pooled, host.data(), n * 4, cudaMemcpyHostToDevice, stream1));
  RT_CUDA_CHECK(cudaStreamSynchronize(stream1));
  cudaMemPool_t pool = nullptr;
  RT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 1));
  RT_CUDA_CHECK(cudaSetDevice(0));
  EXPECT_EQ(refused([&] { flat(pooled, out0); }), "");
  EXPECT_EQ(refused([&] { rows_of(pooled, out0); }), "");
  if (can) {
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = 0;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    RT_CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));
    flat(pooled, out0);
    EXPECT_EQ(flat_result(out0), static_cast<float>(total));
    rows_of(pooled, out0);
    EXPECT_EQ(rows_result(out0), row_sums);
    access.flags = cudaMemAccessFlagsProtNone;
    RT_CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));
    EXPECT_EQ(refused([&] { flat(pooled, out0); }), "");
  }
  RT_CUDA_CHECK(cudaSetDevice(1));
  RT_CUDA_CHECK(cudaFreeAsync(pooled, stream1));
  RT_CUDA_CHECK(cudaStreamSynchronize(stream1));
  RT_CUDA_CHECK(cudaStreamDestroy(stream1));
  RT_CUDA_CHECK(cudaSetDevice(0));
  flat(in0, out0);
  EXPECT_EQ(flat_result(out0), static_cast<float>(total));
  std::printf("[ devices  ] %d devices; peer access and pool access from 0 to 1 %s\n", count,
              can ? "granted, read and taken back" : "not possible here");
}

}  // namespace
}  // namespace reduce_tune
