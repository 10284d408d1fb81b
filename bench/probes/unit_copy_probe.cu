// Probe (not part of the build): how fast an f32 copy of 2^22 to 2^25 elements can go on
// this GPU, against the HBM peak counted for the bytes read and written. An axis
// reduction over R = 1 is such a copy (core/src/tensor.cpp canonicalizes it as columns
// [1, outputs]). The built-in choice ran the columns kernel with one 16-byte load and
// store a thread (block=256, by=1, vec=4), 40.5 us for 2^24 outputs on an H200 (set AE),
// 69% of its peak for the 128 MiB moved; since set BA it runs the short_columns family
// (rt::axis_short_columns_kernel), whose form is one/256 below. The variants:
//   memcpy        cudaMemcpyAsync, device to device;
//   one/B/LD/ST   one 16-byte vector a thread, B threads a block, a load (plain, nc, cs)
//                 and a store (plain, cs) instruction;
//   run/B/U       U vectors a thread in one run of U * B vectors a block, loads first;
//   stride/B/G/U  G blocks an SM, grid-stride over tiles of U * B vectors (stride/256/32/1
//                 is the grid the axis plan gives the columns kernel there: 32 blocks an
//                 SM at most, then grid-stride).
// Each launch reads another slice of a 2 GiB buffer, so no input is in L2 from the
// launch before, and writes another slice of a second one; with `fixed-out` every launch
// writes the same output, as reduce_tune_axis_bench's calls do.
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/probes/unit_copy_probe.cu -o unit_copy_probe
//   unit_copy_probe [rounds] [fixed-out]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "probe_common.cuh"

template <int ST>
__device__ __forceinline__ void store4(float4* p, float4 v) {
  if (ST == 0)
    asm volatile("st.global.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
  else
    asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}

template <int LD, int ST>
__global__ void one_vector(const float4* in, float4* out, long long vectors) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) store4<ST>(out + i, load4<LD>(in + i));
}

template <int U>
__global__ void run_vectors(const float4* in, float4* out, long long vectors) {
  const long long base = static_cast<long long>(blockIdx.x) * blockDim.x * U + threadIdx.x;
  float4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const long long i = base + static_cast<long long>(u) * blockDim.x;
    if (i < vectors) v[u] = load4<0>(in + i);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const long long i = base + static_cast<long long>(u) * blockDim.x;
    if (i < vectors) store4<0>(out + i, v[u]);
  }
}

template <int U>
__global__ void stride_vectors(const float4* in, float4* out, long long vectors) {
  const long long tile = static_cast<long long>(blockDim.x) * U;
  for (long long t = static_cast<long long>(blockIdx.x) * tile; t < vectors; t += tile * gridDim.x) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long i = t + threadIdx.x + static_cast<long long>(u) * blockDim.x;
      if (i < vectors) v[u] = load4<0>(in + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long i = t + threadIdx.x + static_cast<long long>(u) * blockDim.x;
      if (i < vectors) store4<0>(out + i, v[u]);
    }
  }
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const bool fixed_out = argc > 2 && std::string(argv[2]) == "fixed-out";
  int dev = 0, sms = 0, bus = 0, clock = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev));
  CK(cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, dev));
  const double peak = 2.0 * clock * 1e3 * (bus / 8) / 1e9;  // GB/s
  std::printf("device: %s, %d SMs, L2 %d MiB, peak %.0f GB/s (bytes read and written)\n", prop.name, sms,
              prop.l2CacheSize >> 20, peak);
  const std::size_t buffer_bytes = 2ull << 30;
  float4 *in = nullptr, *out = nullptr;
  CK(cudaMalloc(&in, buffer_bytes));
  CK(cudaMalloc(&out, buffer_bytes));
  CK(cudaMemset(in, 0x3c, buffer_bytes));
  CK(cudaMemset(out, 0, buffer_bytes));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));

  for (long long n : {1ll << 22, (1ll << 24) + 4, 1ll << 24, 1ll << 25}) {
    const long long vectors = (n + 3) / 4;
    const std::size_t bytes = static_cast<std::size_t>(n) * 4;
    const std::size_t slice_bytes = (bytes + 4095) / 4096 * 4096;
    const int slices = static_cast<int>(buffer_bytes / slice_bytes);
    std::printf("n = %lld f32 (%.1f MiB each way)%s\n", n, bytes / 1048576.0, fixed_out ? ", one output" : "");
    struct Variant {
      std::string name;
      std::function<void(const float4*, float4*)> run;
    };
    std::vector<Variant> variants;
    variants.push_back({"memcpy", [&](const float4* i, float4* o) {
                          CK(cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice, stream));
                        }});
    for (int block : {256, 512, 1024}) {
      const unsigned grid = static_cast<unsigned>((vectors + block - 1) / block);
      auto add = [&](const char* ld, const char* st, void (*k)(const float4*, float4*, long long)) {
        variants.push_back({"one/" + std::to_string(block) + "/" + ld + "/" + st,
                            [=](const float4* i, float4* o) { k<<<grid, block, 0, stream>>>(i, o, vectors); }});
      };
      add("plain", "plain", one_vector<0, 0>);
      add("nc", "plain", one_vector<1, 0>);
      add("cs", "plain", one_vector<5, 0>);
      add("plain", "cs", one_vector<0, 1>);
      add("cs", "cs", one_vector<5, 1>);
    }
    for (int block : {256, 512}) {
      auto add_run = [&](int u, void (*k)(const float4*, float4*, long long)) {
        const unsigned grid = static_cast<unsigned>((vectors + block * u - 1) / (block * u));
        variants.push_back({"run/" + std::to_string(block) + "/" + std::to_string(u),
                            [=](const float4* i, float4* o) { k<<<grid, block, 0, stream>>>(i, o, vectors); }});
      };
      add_run(2, run_vectors<2>);
      add_run(4, run_vectors<4>);
      if (block == 256) {
        const unsigned grid = static_cast<unsigned>(sms * 32);
        variants.push_back({"stride/256/32/1", [=](const float4* i, float4* o) {
                              stride_vectors<1><<<grid, 256, 0, stream>>>(i, o, vectors);
                            }});
      }
      for (int g : {2, 4, 8}) {
        auto add_stride = [&](int u, void (*k)(const float4*, float4*, long long)) {
          const unsigned grid = static_cast<unsigned>(sms * g * 256 / block);
          variants.push_back({"stride/" + std::to_string(block) + "/" + std::to_string(g * 256 / block) + "/" +
                                  std::to_string(u),
                              [=](const float4* i, float4* o) { k<<<grid, block, 0, stream>>>(i, o, vectors); }});
        };
        add_stride(2, stride_vectors<2>);
        add_stride(4, stride_vectors<4>);
      }
    }
    // Correctness of every variant on slice 0 before timing.
    for (auto& v : variants) {
      CK(cudaMemsetAsync(out, 0, bytes, stream));
      v.run(in, out);
      CK(cudaStreamSynchronize(stream));
      CK(cudaGetLastError());
      int bad = 0;
      std::vector<unsigned char> host(bytes);
      CK(cudaMemcpy(host.data(), out, bytes, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < bytes; ++i) bad += host[i] != 0x3c;
      if (bad) std::printf("  %s: %d bytes wrong\n", v.name.c_str(), bad);
    }
    const int launches = 20;
    std::vector<std::vector<double>> times(variants.size());
    int slice = 0;
    for (int r = 0; r < rounds; ++r)
      for (std::size_t vi = 0; vi < variants.size(); ++vi) {
        const std::size_t v = (r % 2 == 0) ? vi : variants.size() - 1 - vi;
        CK(cudaEventRecord(a, stream));
        for (int l = 0; l < launches; ++l) {
          const auto* i = reinterpret_cast<const float4*>(reinterpret_cast<const char*>(in) + slice * slice_bytes);
          auto* o = reinterpret_cast<float4*>(reinterpret_cast<char*>(out) + (fixed_out ? 0 : slice * slice_bytes));
          variants[v].run(i, o);
          slice = (slice + 1) % slices;
        }
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        times[v].push_back(ms * 1e3 / launches);
      }
    for (std::size_t v = 0; v < variants.size(); ++v) {
      auto t = times[v];
      std::sort(t.begin(), t.end());
      const double us = t[t.size() / 2];
      std::printf("  %-22s %9.2f us  %7.1f GB/s  %5.1f%%  (min %.2f, max %.2f)\n", variants[v].name.c_str(), us,
                  2.0 * bytes / (us * 1e3), 100 * 2.0 * bytes / (us * 1e3) / peak, t.front(), t.back());
    }
  }
  return 0;
}
