// The runtime's promises about threads, streams, graphs and pointers, on the GPU:
// - threads sharing cudaStreamPerThread (one handle, a different stream per thread) get
//   their own workspaces;
// - a graph captured before a workspace grows still replays correctly afterwards;
// - the first call on a stream may itself be captured;
// - a synchronous call waiting on its stream blocks no other thread;
// - synchronous calls sharing one stream each get their own result;
// - pointers the device cannot read are refused before anything is launched, and the
//   process can reduce afterwards;
// - the calls per second of 8 threads against 1, and the host cost of each check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "gpu_env.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/engine/pointer_check.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/reduce_tune.h"

namespace reduce_tune {
namespace {

using Clock = std::chrono::steady_clock;

using testing::no_database;
using testing::temp_dir;

// Ends a capture left open by a failing call, so one failed test does not break the next.
struct CaptureGuard {
  cudaStream_t stream;
  ~CaptureGuard() {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t graph = nullptr;
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
    }
    cudaGetLastError();
  }
};

// Small integers: every summation order gives the exact float value.
std::vector<float> small_integers(std::size_t n, int salt) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + salt) % 9) - 4);
  return v;
}
double exact_sum(const std::vector<float>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(Concurrency, SixteenThreadsOnThePerThreadDefaultStream) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  // Many blocks with a last-block ticket: two calls sharing a workspace at once would
  // mix their partials and tickets.
  const std::size_t n = (std::size_t{1} << 22) + 5;
  std::atomic<int> wrong{0}, checked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      RT_CUDA_CHECK(cudaSetDevice(0));
      const auto host = small_integers(n, t);
      const float expected = static_cast<float>(exact_sum(host));
      DeviceBuffer in(n * 4), out(64 * 4);
      RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
      for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < 64; ++k)
          ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), n, out.as<float>() + k, cudaStreamPerThread);
        RT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
        float got[64];
        RT_CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof(got), cudaMemcpyDeviceToHost));
        for (float g : got) {
          ++checked;
          if (g != expected) ++wrong;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << "of " << checked.load();
  EXPECT_EQ(checked.load(), 16 * 20 * 64);
}

TEST(Concurrency, SynchronousCallsSharingOneStreamEachGetTheirOwnResult) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  Stream shared;
  const std::size_t n = 100003;
  std::vector<DeviceBuffer> inputs;
  std::vector<double> expected;
  for (int t = 0; t < 8; ++t) {
    const auto host = small_integers(n, 3 * t + 1);
    expected.push_back(exact_sum(host));
    inputs.emplace_back(n * 4);
    RT_CUDA_CHECK(cudaMemcpy(inputs.back().get(), host.data(), n * 4, cudaMemcpyHostToDevice));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      RT_CUDA_CHECK(cudaSetDevice(0));
      for (int i = 0; i < 200; ++i) {
        float got = 0;
        ctx.reduce_to_host(Op::sum, DType::f32, DType::f32, inputs[t].get(), n, &got, shared.get());
        if (got != static_cast<float>(expected[t])) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0) << "of " << 8 * 200;
}

TEST(Concurrency, AWaitingSynchronousCallBlocksNoOtherThread) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  Stream blocked, free_stream;
  const std::size_t n = 1 << 20;
  DeviceBuffer in(n * 4), out(4);
  RT_CUDA_CHECK(cudaMemset(in.get(), 0, n * 4));
  ctx.reduce(Op::max, DType::f32, DType::f32, in.get(), n, out.get(), free_stream.get());  // warm
  RT_CUDA_CHECK(cudaStreamSynchronize(free_stream.get()));

  // The blocked stream waits on a host function until the test releases it, so the
  // synchronous call below sits in its wait for as long as the test decides.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto wait_for_release = [](void* data) { static_cast<std::shared_future<void>*>(data)->wait(); };
  RT_CUDA_CHECK(cudaLaunchHostFunc(blocked.get(), wait_for_release, &released));
  std::atomic<bool> sync_returned{false};
  std::thread waiter([&] {
    RT_CUDA_CHECK(cudaSetDevice(0));
    float value = 0;
    ctx.reduce_to_host(Op::max, DType::f32, DType::f32, in.get(), n, &value, blocked.get());
    sync_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the waiter is now in its wait

  // Another thread's warm calls must go through while it waits.
  std::promise<int> done;
  auto done_future = done.get_future();
  std::thread caller([&] {
    RT_CUDA_CHECK(cudaSetDevice(0));
    for (int i = 0; i < 100; ++i)
      ctx.reduce(Op::max, DType::f32, DType::f32, in.get(), n, out.get(), free_stream.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(free_stream.get()));
    done.set_value(100);
  });
  const bool finished = done_future.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  EXPECT_TRUE(finished) << "warm calls on another stream waited for a synchronous call";
  EXPECT_FALSE(sync_returned.load()) << "the synchronous call returned before its stream ran";
  release.set_value();
  caller.join();
  waiter.join();
  EXPECT_TRUE(sync_returned.load());
}

// A database whose winner for sum<f32> needs 32 KiB of partials at 2^20 (one block per
// 128 elements, two passes), more than a new workspace holds.
std::filesystem::path database_with_a_wide_two_pass_winner(const DeviceKey& key) {
  const auto path = temp_dir("rt_conc_graph") / "tuning.db";
  testing::store_test_winner(
      path, key, std::uint64_t{1} << 20,
      *parse_config("complete_unroll:block=64,items=2,vec=1,grid=tiles,warp=smem,passes=two_pass,load=ldg,unroll=1")
           .config,
      0.01);
  return path;
}

TEST(Graphs, AGraphCapturedBeforeTheWorkspaceGrewStillReplays) {
  RT_REQUIRE_GPU();
  ContextOptions o;
  o.database = database_with_a_wide_two_pass_winner(*testing::test_device());
  Context ctx(o);
  Stream stream;
  const std::size_t small = 4097, large = std::size_t{1} << 20;
  const auto host = small_integers(large, 5);
  DeviceBuffer in(large * 4), out_small(4), out_large(4);
  RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), large * 4, cudaMemcpyHostToDevice));
  const float expected_small = static_cast<float>(std::accumulate(host.begin(), host.begin() + small, 0.0));
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), small, out_small.get(), stream.get());
  RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  cudaGraph_t graph = nullptr;
  CaptureGuard guard{stream.get()};
  RT_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), small, out_small.get(), stream.get());
  RT_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  RT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  // Outgrows the workspace the graph holds: the old one must stay alive.
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), large, out_large.get(), stream.get());
  EXPECT_EQ(ctx.explain(Op::sum, DType::f32, DType::f32, large).config.passes, Passes::two_pass);
  for (int i = 0; i < 3; ++i) {
    RT_CUDA_CHECK(cudaMemsetAsync(out_small.get(), 0xff, 4, stream.get()));
    RT_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), large, out_large.get(), stream.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    float got_small = 0, got_large = 0;
    RT_CUDA_CHECK(cudaMemcpy(&got_small, out_small.get(), 4, cudaMemcpyDeviceToHost));
    RT_CUDA_CHECK(cudaMemcpy(&got_large, out_large.get(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got_small, expected_small);
    EXPECT_EQ(got_large, static_cast<float>(exact_sum(host)));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(Graphs, TheFirstCallOnAStreamMayBeCaptured) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());  // nothing loaded yet: the first call compiles and allocates
  Stream stream;
  const std::size_t n = (std::size_t{3} << 20) + 1;
  const auto host = small_integers(n, 2);
  DeviceBuffer in(n * 4), out(4);
  RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
  cudaGraph_t graph = nullptr;
  CaptureGuard guard{stream.get()};
  RT_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), n, out.get(), stream.get());
  RT_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  RT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) {
    RT_CUDA_CHECK(cudaMemsetAsync(out.get(), 0, 4, stream.get()));
    RT_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    float got = 0;
    RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, static_cast<float>(exact_sum(host)));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(PointerChecks, HostAndOutOfRangePointersAreRefusedAndTheProcessStillReduces) {
  RT_REQUIRE_GPU();
  cudaGetLastError();
  Context ctx(no_database());
  const std::size_t n = 1 << 16;
  const auto host = small_integers(n, 1);
  const float expected = static_cast<float>(exact_sum(host));
  DeviceBuffer in(n * 4), out(4);
  RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
  int device_pageable = 0;
  RT_CUDA_CHECK(cudaDeviceGetAttribute(&device_pageable, cudaDevAttrPageableMemoryAccess, 0));
  std::printf("[ pointers ] cudaDevAttrPageableMemoryAccess = %d\n", device_pageable);

  auto describe = [](const char* what, const void* p) {
    const PointerInfo i = query_pointer(p);
    std::printf("[ pointers ] %-14s type=%u device=%d managed=%d devptr=%s range=%zu access=%u\n", what, i.memory_type,
                i.device_ordinal, i.managed ? 1 : 0, i.device_pointer == reinterpret_cast<std::uintptr_t>(p) ? "same" : "other",
                i.range_size, i.access_flags);
  };
  describe("cudaMalloc", in.get());
  describe("pageable", host.data());

  // Refused with a warm thread (the device buffers already passed, so they are
  // remembered), by a context that trusts what its thread has seen and by one that asks
  // the driver every time.
  ContextOptions strict_options = no_database();
  strict_options.check_pointers_every_call = true;
  Context strict(strict_options);
  for (Context* c : {&ctx, &strict}) {
    c->reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n, out.get(), nullptr);
    RT_CUDA_CHECK(cudaDeviceSynchronize());
    if (!device_pageable) {
      // Pageable input and output: refused with a message, nothing launched.
      try {
        c->reduce(Op::sum, DType::f32, DType::f32, host.data(), n, out.get(), nullptr);
        ADD_FAILURE() << "a pageable input was accepted";
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("pageable"), std::string::npos) << e.what();
      }
      float host_out = 0;
      EXPECT_THROW(c->reduce(Op::sum, DType::f32, DType::f32, in.get(), n, &host_out, nullptr), InvalidArgument);
    }
    // A range running past its allocation, starting inside one this thread has seen.
    try {
      c->reduce(Op::sum, DType::f32, DType::f32, in.as<float>() + 10, n, out.get(), nullptr);
      ADD_FAILURE() << "a range past the allocation was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("past the end"), std::string::npos) << e.what();
    }
  }
  // The context is healthy: the next call is right.
  EXPECT_EQ(sum_value(in.as<float>(), n), expected);
  RT_CUDA_CHECK(cudaGetLastError());

  // Memory the device can read works: page-locked host memory and managed memory.
  float* pinned = nullptr;
  RT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), n * 4));
  std::copy(host.begin(), host.end(), pinned);
  describe("cudaMallocHost", pinned);
  EXPECT_EQ(sum_value(pinned, n), expected);
  float* managed = nullptr;
  RT_CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void**>(&managed), n * 4));
  std::copy(host.begin(), host.end(), managed);
  describe("managed", managed);
  EXPECT_EQ(sum_value(managed, n), expected);
  float* registered = static_cast<float*>(std::aligned_alloc(4096, n * 4));
  std::copy(host.begin(), host.end(), registered);
  RT_CUDA_CHECK(cudaHostRegister(registered, n * 4, cudaHostRegisterDefault));
  describe("registered", registered);
  EXPECT_EQ(sum_value(registered, n), expected);
  RT_CUDA_CHECK(cudaHostUnregister(registered));
  std::free(registered);
  RT_CUDA_CHECK(cudaFreeHost(pinned));
  RT_CUDA_CHECK(cudaFree(managed));
}

// A thread remembers buffers that passed; a buffer freed and replaced by a smaller one at
// the same address must not inherit the old extent (the driver's buffer id tells them
// apart), so a range past the new end is still refused.
TEST(PointerChecks, ABufferFreedAndReplacedAtTheSameAddressIsCheckedAnew) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::size_t big = 1 << 20, small = 1 << 16;
  DeviceBuffer out(4);
  int reused = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    void* first = nullptr;
    RT_CUDA_CHECK(cudaMalloc(&first, big * 4));
    RT_CUDA_CHECK(cudaMemset(first, 0, big * 4));
    for (int i = 0; i < 3; ++i) ctx.reduce(Op::sum, DType::f32, DType::f32, first, big, out.get(), nullptr);
    RT_CUDA_CHECK(cudaDeviceSynchronize());
    RT_CUDA_CHECK(cudaFree(first));
    void* second = nullptr;
    RT_CUDA_CHECK(cudaMalloc(&second, small * 4));
    RT_CUDA_CHECK(cudaMemset(second, 0, small * 4));
    reused += second == first;
    EXPECT_THROW(ctx.reduce(Op::sum, DType::f32, DType::f32, second, big, out.get(), nullptr), InvalidArgument);
    ctx.reduce(Op::sum, DType::f32, DType::f32, second, small, out.get(), nullptr);
    float got = -1;
    RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, 0.0f);
    RT_CUDA_CHECK(cudaFree(second));
  }
  std::printf("[ pointers ] the freed address came back in %d of 4 attempts\n", reused);
  RT_CUDA_CHECK(cudaGetLastError());
}

// A call that repeats an earlier one exactly launches what that one launched, once the
// driver confirms the same allocations: a repeat after the input or the output was freed
// is refused (nothing launched, the context stays usable), and a repeat on another
// stream, with another n or with new data reduces what it is given.
TEST(PointerChecks, ARepeatedCallIsCheckedAgainstTheAllocationsItWasMadeWith) {
  RT_REQUIRE_GPU();
  cudaGetLastError();
  Context ctx(no_database());
  const std::size_t n = (std::size_t{1} << 20) + 3;
  const auto host = small_integers(n, 2);
  const auto other = small_integers(n, 5);
  Stream s1, s2;
  DeviceBuffer out(8);
  auto result = [&] {
    float got = -1;
    RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    return got;
  };
  {
    DeviceBuffer in((n + 1) * 4);  // one float more, for an output inside the allocation
    RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
    for (int i = 0; i < 3; ++i) ctx.reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n, out.get(), s1.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(s1.get()));
    EXPECT_EQ(result(), static_cast<float>(exact_sum(host)));
    // New data under the same pointers, another stream, a shorter n.
    RT_CUDA_CHECK(cudaMemcpy(in.get(), other.data(), n * 4, cudaMemcpyHostToDevice));
    ctx.reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n, out.get(), s2.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(s2.get()));
    EXPECT_EQ(result(), static_cast<float>(exact_sum(other)));
    ctx.reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n - 1000, out.get(), s2.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(s2.get()));
    EXPECT_EQ(result(), static_cast<float>(exact_sum(std::vector<float>(other.begin(), other.end() - 1000))));
    // The same call, with the output inside the input's allocation, twice.
    float* inside = in.as<float>() + n;
    for (int i = 0; i < 2; ++i) ctx.reduce(Op::max, DType::f32, DType::f32, in.as<float>(), n, inside, s1.get());
    float got = -1;
    RT_CUDA_CHECK(cudaMemcpy(&got, inside, 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, *std::max_element(other.begin(), other.end()));
    // Freed: the repeat is refused before anything is launched.
    void* freed = in.get();
    in = DeviceBuffer();
    EXPECT_THROW(ctx.reduce(Op::sum, DType::f32, DType::f32, freed, n, out.get(), s1.get()), InvalidArgument);
    EXPECT_THROW(ctx.reduce(Op::max, DType::f32, DType::f32, freed, n, static_cast<float*>(freed) + n, s1.get()),
                 InvalidArgument);
  }
  // The output freed under a repeated call.
  DeviceBuffer in(n * 4);
  RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
  {
    DeviceBuffer own_out(8);
    for (int i = 0; i < 3; ++i) ctx.reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n, own_out.get(), s1.get());
    RT_CUDA_CHECK(cudaStreamSynchronize(s1.get()));
    void* freed = own_out.get();
    own_out = DeviceBuffer();
    EXPECT_THROW(ctx.reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n, freed, s1.get()), InvalidArgument);
  }
  // Nothing launched on freed memory: the context still reduces.
  RT_CUDA_CHECK(cudaDeviceSynchronize());
  ctx.reduce(Op::sum, DType::f32, DType::f32, in.as<float>(), n, out.get(), s1.get());
  RT_CUDA_CHECK(cudaStreamSynchronize(s1.get()));
  EXPECT_EQ(result(), static_cast<float>(exact_sum(host)));
  RT_CUDA_CHECK(cudaGetLastError());
}

// Not a timed test: calls per second from 1 thread and from 8 threads on their own
// streams (the scaling goes into the issue note), with every result checked.
TEST(Concurrency, ReportsCallsPerSecondOfEightThreadsAgainstOne) {
  RT_REQUIRE_GPU();
  Context ctx(no_database());
  const std::size_t n = 4096;
  const auto host = small_integers(n, 4);
  const float expected = static_cast<float>(exact_sum(host));
  DeviceBuffer in(n * 4);
  RT_CUDA_CHECK(cudaMemcpy(in.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
  std::atomic<int> wrong{0};
  auto run = [&](int threads, int calls_each) {
    std::vector<std::thread> pool;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    Clock::time_point start;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        RT_CUDA_CHECK(cudaSetDevice(0));
        Stream stream;
        DeviceBuffer out(4);
        ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), n, out.get(), stream.get());  // warm
        RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        ++ready;
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < calls_each; ++i)
          ctx.reduce(Op::sum, DType::f32, DType::f32, in.get(), n, out.get(), stream.get());
        RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        float got = 0;
        RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
        if (got != expected) ++wrong;
      });
    while (ready.load() < threads) std::this_thread::yield();
    start = Clock::now();
    go = true;
    for (auto& th : pool) th.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return threads * calls_each / seconds;
  };
  const double one = run(1, 20000);
  const double eight = run(8, 20000);
  std::printf("[ scaling  ] n=4096 f32 sum, own stream per thread: 1 thread %.0f calls/s, 8 threads %.0f calls/s "
              "(%.2fx)\n",
              one, eight, eight / one);
  EXPECT_EQ(wrong.load(), 0);
}

// Not a timed test: the host cost of each per-call check, beside a warm call.
TEST(Concurrency, ReportsTheHostCostOfEachCheck) {
  RT_REQUIRE_GPU();
  DeviceBuffer in(4096 * 4);
  Stream stream;
  const int calls = 100000;
  auto per_call_us = [&](auto&& body) {
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) body();
      best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    }
    return best;
  };
  int device = 0;
  const double get_device = per_call_us([&] { cudaGetDevice(&device); });
  const double pointer = per_call_us([&] { (void)query_pointer(in.get(), 0); });
  const double runtime_query = per_call_us([&] {
    cudaPointerAttributes a{};
    cudaPointerGetAttributes(&a, in.get());
  });
  const double check = per_call_us([&] { check_device_accessible(in.get(), 4096 * 4, 0, false, "input"); });
  std::printf("[ overhead ] per call: cudaGetDevice %.3f us, pointer query (5 attributes) %.3f us, "
              "cudaPointerGetAttributes %.3f us, full pointer check %.3f us\n",
              get_device, pointer, runtime_query, check);
}

// Not a timed test: what one launch of an empty kernel costs through each launch path
// the library could use (host time per launch, and back-to-back time per launch by CUDA
// events, as the bench times calls).
TEST(Concurrency, ReportsTheCostOfEachLaunchPath) {
  RT_REQUIRE_GPU();
  CompileRequest request;
  request.source = "extern \"C\" __global__ void empty_kernel() {}\n"
                   "struct P { const void* a; unsigned long long b; void* c; void* d; void* e; void* f; };\n"
                   "extern \"C\" __global__ void params_kernel(P p) { if (p.b == 12345) *(int*)p.c = 1; }\n";
  request.arch = testing::test_device()->arch();
  NvrtcCompiler compiler;
  const CompiledProgram program = compiler.compile(request);
  LoadedLibrary library(program.cubin);
  const cudaKernel_t empty = library.kernel("empty_kernel");
  const cudaKernel_t with_params = library.kernel("params_kernel");
  Stream stream;
  KernelParams params{};
  void* no_args[] = {nullptr};
  void* param_args[] = {&params};
  auto launch_ex = [&](cudaKernel_t k, void** args) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1);
    config.blockDim = dim3(32);
    config.stream = stream.get();
    RT_CUDA_CHECK(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(k), args));
  };
  // The driver path: the context's CUfunction of the library kernel, launched by
  // cuLaunchKernel (both through the runtime's entry-point query).
  using GetFunction = int (*)(void**, void*);
  using LaunchKernel = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                               void**, void**);
  void* get_function = nullptr;
  void* launch_kernel = nullptr;
  cudaDriverEntryPointQueryResult status;
  RT_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuKernelGetFunction", &get_function, 12000, cudaEnableDefault, &status));
  RT_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &launch_kernel, 12000, cudaEnableDefault, &status));
  void* empty_function = nullptr;
  void* params_function = nullptr;
  ASSERT_EQ(reinterpret_cast<GetFunction>(get_function)(&empty_function, reinterpret_cast<void*>(empty)), 0);
  ASSERT_EQ(reinterpret_cast<GetFunction>(get_function)(&params_function, reinterpret_cast<void*>(with_params)), 0);
  auto launch_driver = [&](void* f, void** args) {
    const int r = reinterpret_cast<LaunchKernel>(launch_kernel)(f, 1, 1, 1, 32, 1, 1, 0, stream.get(), args, nullptr);
    if (r != 0) throw CudaError(r, "cuLaunchKernel", "failed");
  };
  const int calls = 2000;
  auto measure = [&](const char* name, auto&& launch) {
    double best_host = 1e9;
    std::vector<double> event_us;
    Event start, stop;
    for (int rep = 0; rep < 7; ++rep) {
      RT_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
      const auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) launch();
      best_host = std::min(best_host, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
      RT_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
      RT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      RT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      event_us.push_back(static_cast<double>(ms) * 1e3 / calls);
    }
    std::sort(event_us.begin(), event_us.end());
    std::printf("[ launch   ] %-44s host %.2f us, back to back %.2f us per launch\n", name, best_host, event_us[3]);
  };
  measure("cudaLaunchKernelExC(cudaKernel_t), no args", [&] { launch_ex(empty, no_args); });
  measure("cudaLaunchKernelExC(cudaKernel_t), 48-byte params", [&] { launch_ex(with_params, param_args); });
  measure("cuLaunchKernel(CUfunction), no args", [&] { launch_driver(empty_function, nullptr); });
  measure("cuLaunchKernel(CUfunction), 48-byte params", [&] { launch_driver(params_function, param_args); });
  measure("cudaLaunchKernel(cudaKernel_t), 48-byte params", [&] {
    RT_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(with_params), dim3(1), dim3(32), param_args, 0,
                                   stream.get()));
  });
}

}  // namespace
}  // namespace reduce_tune
