// Probe (not part of the build): what a small call costs on the host and on the GPU, flat
// against axis reductions, beside an empty launch. For each case: the host's time per
// call to enqueue a burst of 256 calls (below the launch queue's depth, so the host's own
// cost; the median of 200 bursts, the stream drained between them), and the time per
// call of 4000 calls back to back by CUDA events (whichever of the host and the GPU is
// slower). The built-in choice (no database).
//   nvcc -O3 -std=c++17 -arch=sm_90 -Iruntime/include -Icore/include bench/probes/axis_host_cost_probe.cu \
//     build/runtime/libreduce_tune_runtime.a build/engine/libreduce_tune_engine.a \
//     build/db/libreduce_tune_db.a build/core/libreduce_tune_core.a /usr/lib/x86_64-linux-gnu/libsqlite3.a \
//     /usr/local/cuda/lib64/libnvrtc.so -lz -llzma -o axis_host_cost_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "reduce_tune/reduce_tune.h"

namespace rt = reduce_tune;

__global__ void empty_kernel() {}

int main() {
  float* in = nullptr;
  float* out = nullptr;
  cudaMalloc(&in, 64 << 20);
  cudaMalloc(&out, 64 << 20);
  cudaMemset(in, 0, 64 << 20);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  rt::ContextOptions options;
  options.database = "/nonexistent/reduce-tune-probe.db";
  rt::Context ctx(options);
  struct Case {
    std::string name;
    std::function<void()> call;
  };
  const auto axes = [&](rt::Op op, rt::TensorDesc t, rt::AxisList a) {
    return [&ctx, op, t, a, in, out, stream] { ctx.reduce_axes(op, rt::DType::f32, rt::DType::f32, in, t, a, out, stream); };
  };
  std::vector<Case> cases = {
      {"empty launch", [&] { empty_kernel<<<1, 32, 0, stream>>>(); }},
      {"flat sum 1000", [&] { ctx.reduce(rt::Op::sum, rt::DType::f32, rt::DType::f32, in, 1000, out, stream); }},
      {"flat sum 16000", [&] { ctx.reduce(rt::Op::sum, rt::DType::f32, rt::DType::f32, in, 16000, out, stream); }},
      {"flat max 16000", [&] { ctx.reduce(rt::Op::max, rt::DType::f32, rt::DType::f32, in, 16000, out, stream); }},
      {"columns sum 16x1000", axes(rt::Op::sum, rt::TensorDesc::contiguous({16, 1000}), {0})},
      {"columns max 16x1000", axes(rt::Op::max, rt::TensorDesc::contiguous({16, 1000}), {0})},
      {"columns sum 1000x7", axes(rt::Op::sum, rt::TensorDesc::contiguous({1000, 7}), {0})},
      {"rows sum 1000x7", axes(rt::Op::sum, rt::TensorDesc::contiguous({7, 1000}), {1})},
      {"rows sum 100x100", axes(rt::Op::sum, rt::TensorDesc::contiguous({100, 100}), {1})},
      {"rows max 1000x16", axes(rt::Op::max, rt::TensorDesc::contiguous({1000, 16}), {1})},
      {"general [64,100,33] over (0,2)", axes(rt::Op::sum, rt::TensorDesc::contiguous({64, 100, 33}), {0, 2})},
  };
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::printf("%-32s | host us per call (bursts of 256) | back to back us per call (events)\n", "case");
  for (const Case& c : cases) {
    for (int i = 0; i < 300; ++i) c.call();  // warm: kernels loaded, workspaces made
    cudaStreamSynchronize(stream);
    std::vector<double> host;
    for (int burst = 0; burst < 200; ++burst) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 256; ++i) c.call();
      const auto t1 = std::chrono::steady_clock::now();
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 256);
      cudaStreamSynchronize(stream);
    }
    std::sort(host.begin(), host.end());
    std::vector<double> device;
    for (int round = 0; round < 5; ++round) {
      cudaEventRecord(a, stream);
      for (int i = 0; i < 4000; ++i) c.call();
      cudaEventRecord(b, stream);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      device.push_back(ms * 1e3 / 4000);
    }
    std::sort(device.begin(), device.end());
    std::printf("%-32s | %6.2f (p10 %.2f, p90 %.2f) | %6.2f\n", c.name.c_str(), host[100], host[20], host[180],
                device[2]);
  }
  const cudaError_t e = cudaGetLastError();
  std::printf("last error: %s\n", cudaGetErrorString(e));
  return 0;
}
