// The tuner's timing on the GPU: with the launch queue held, a sample is the device's
// time per call however slowly the host enqueues; without, it is the host's pace; a hold
// that gives up (a host slower than its timeout) is detected and the sample taken again.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "gpu_env.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/tuner/measure.h"

namespace reduce_tune::tuner {
namespace {

// An enqueue that spends `host_us` of host time before launching an empty kernel: a host
// slower than the device, as the tuner's is while compile threads share its cores.
struct SlowHost {
  SlowHost() {
    CompileRequest request;
    request.source = "extern \"C\" __global__ void empty_kernel() {}\n";
    request.arch = testing::test_device()->arch();
    program = NvrtcCompiler().compile(request);
    library = std::make_unique<LoadedLibrary>(program.cubin);
    kernel = library->kernel("empty_kernel");
  }
  std::function<void(int)> enqueue(double host_us) {
    return [this, host_us](int) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(host_us);
      while (std::chrono::steady_clock::now() < until) {
      }
      void* args[] = {nullptr};
      CudaLauncher().launch(reinterpret_cast<const void*>(kernel), 1, 32, stream.get(), args, StreamOrder::serial);
    };
  }
  CompiledProgram program;
  std::unique_ptr<LoadedLibrary> library;
  cudaKernel_t kernel = nullptr;
  Stream stream;
};

TEST(Timing, AHeldQueueTimesTheDeviceNotTheHostsPace) {
  RT_REQUIRE_GPU();
  SlowHost slow;
  TimingPolicy held;
  const TimingResult device = time_reduction(slow.enqueue(20), 1, slow.stream.get(), held);
  TimingPolicy paced = held;
  paced.hold_queue = false;
  const TimingResult host = time_reduction(slow.enqueue(20), 1, slow.stream.get(), paced);
  std::printf("[ timing   ] empty kernel enqueued every 20 us: held %.2f us per call (%d calls), paced %.2f us\n",
              device.median_ms * 1e3, device.repetitions, host.median_ms * 1e3);
  EXPECT_TRUE(device.held);
  EXPECT_EQ(device.hold_timeouts, 0);
  EXPECT_FALSE(host.held);
  // The host's pace shows without the hold, and not with it: an empty kernel back to back
  // takes 1-2 us (14 us under compute-sanitizer, whose host pace is 70 us).
  EXPECT_GE(host.median_ms * 1e3, 19.0);
  EXPECT_LT(device.median_ms, 0.5 * host.median_ms);
  EXPECT_GT(device.median_ms, 0.0);
}

TEST(Timing, AHoldThatGivesUpIsDetectedAndTheSampleTakenAgain) {
  RT_REQUIRE_GPU();
  SlowHost slow;
  TimingPolicy policy;
  policy.hold_timeout_ms = 0.1;  // the host takes 0.3 ms per call: every held batch times out
  policy.min_sample_ms = 1;
  policy.max_samples = 5;
  const TimingResult r = time_reduction(slow.enqueue(300), 1, slow.stream.get(), policy);
  std::printf("[ timing   ] hold of 0.1 ms, host 0.3 ms per call: %d timeouts, %.1f us per call, held %d\n",
              r.hold_timeouts, r.median_ms * 1e3, r.held ? 1 : 0);
  EXPECT_GT(r.hold_timeouts, 0);
  EXPECT_FALSE(r.held);  // reported: the samples were paced by the host
  // Paced by the host: a call's time includes most of its 0.3 ms of host time (the part
  // after the hold gave up), far above the device's few microseconds.
  EXPECT_GE(r.median_ms * 1e3, 150.0);
  // The stream is usable afterwards and a hold with room to wait holds again.
  policy.hold_timeout_ms = 50;
  const TimingResult again = time_reduction(slow.enqueue(1), 1, slow.stream.get(), policy);
  EXPECT_TRUE(again.held);
  EXPECT_EQ(again.hold_timeouts, 0);
}

}  // namespace
}  // namespace reduce_tune::tuner
