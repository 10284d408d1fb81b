// Probe (not part of the build): how close a plain streaming read of 2^26 to 2^28 f32
// comes to the HBM peak with each load instruction the kernels could use (plain,
// ld.global.nc, with an L2 prefetch size of 128 or 256 bytes, no L1 allocation, or
// ld.global.cs), for blocks of 256 and 512 threads, 4 or 8 16-byte loads in flight a
// thread, grids of 1 to 8 blocks per SM, and two orders: tiles taken grid-stride (a
// flat sum's order) or one contiguous chunk per block (a split axis reduction's order);
// plain loads also software-pipelined (the next tile's loads issued before this one's
// values are folded). Each launch reads another slice of a 4 GiB buffer, so none finds
// its input in L2 (the first run of set AD, `…-load-hint-probe.log`, read one buffer
// again and again). It answers whether a load hint, rather than the kernels' structure,
// holds the axis kernels below 90% of peak at 2^26 elements (docs/BENCHMARKS.md, set AD).
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/probes/load_hint_probe.cu -o load_hint_probe
//   load_hint_probe [reps] [fill: 0 1 + i % 7, 1 small integers as the axis bench's, 2
//                   random bits] [quick: plain and cs, 4 loads, 1024 or 2048 threads an SM]
//   load_hint_probe 1 FILL one LOAD BLOCK U CHUNKED GRID N   three launches (for ncu)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_common.cuh"

// CHUNKED 0: tiles of B * U vectors, tile blockIdx.x, + gridDim.x, ...; 1: block b reads
// the vectors [b * chunk, (b + 1) * chunk) in tiles of B * U. PIPE 1: the next tile's
// loads are issued before this tile's values are folded (a thread always has loads in
// flight).
template <int LOAD, int B, int U, int CHUNKED, int PIPE>
__global__ void __launch_bounds__(B) read_kernel(const float4* in, size_t nvec, float* out) {
  float acc = 0.f;
  size_t end = nvec, stride = (size_t)gridDim.x * B * U;
  size_t first = (size_t)blockIdx.x * B * U;
  if (CHUNKED) {
    const size_t chunk = (nvec + gridDim.x - 1) / gridDim.x;
    const size_t begin = (size_t)blockIdx.x * chunk < nvec ? (size_t)blockIdx.x * chunk : nvec;
    end = begin + chunk < nvec ? begin + chunk : nvec;
    first = begin;
    stride = (size_t)B * U;
  }
  size_t i = first + threadIdx.x;
  if (PIPE) {
    if (i + (U - 1) * B < end) {
      float4 x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = load4<LOAD>(in + i + u * B);
      for (i += stride; i + (U - 1) * B < end; i += stride) {
        float4 y[U];
#pragma unroll
        for (int u = 0; u < U; ++u) y[u] = load4<LOAD>(in + i + u * B);
#pragma unroll
        for (int u = 0; u < U; ++u) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
#pragma unroll
        for (int u = 0; u < U; ++u) x[u] = y[u];
      }
#pragma unroll
      for (int u = 0; u < U; ++u) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
  } else {
    for (; i + (U - 1) * B < end; i += stride) {
      float4 x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = load4<LOAD>(in + i + u * B);
#pragma unroll
      for (int u = 0; u < U; ++u) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
  }
  for (; i < end; i += B) {
    const float4 x = load4<LOAD>(in + i);
    acc += (x.x + x.y) + (x.z + x.w);
  }
  if (acc == -1.2345f) out[0] = acc;  // never true for the inputs below: keeps the loads
}

typedef void (*Kernel)(const float4*, size_t, float*);

struct Variant {
  int load, block, unroll, chunked, pipe;
  Kernel kernel;
};

template <int LOAD, int B, int U, int CH>
void add(std::vector<Variant>& v) {
  v.push_back({LOAD, B, U, CH, 0, read_kernel<LOAD, B, U, CH, 0>});
  if (LOAD == 0 && U == 4) v.push_back({LOAD, B, U, CH, 1, read_kernel<LOAD, B, U, CH, 1>});
}
template <int LOAD>
void add_load(std::vector<Variant>& v) {
  add<LOAD, 256, 4, 0>(v);
  add<LOAD, 256, 8, 0>(v);
  add<LOAD, 512, 4, 0>(v);
  add<LOAD, 512, 8, 0>(v);
  add<LOAD, 256, 4, 1>(v);
  add<LOAD, 256, 8, 1>(v);
  add<LOAD, 512, 4, 1>(v);
  add<LOAD, 512, 8, 1>(v);
}

// The input's values: 0, 1.0f + i % 7; 1, small integers from a hash of i (as
// reduce_tune_axis_bench fills its input); 2, every bit from a hash of i (finite floats).
__global__ void fill(float* p, size_t n, int kind) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const unsigned long long h = i * 0x9E3779B97F4A7C15ull;
    if (kind == 0)
      p[i] = 1.0f + (float)(i % 7);
    else if (kind == 1)
      p[i] = (float)((int)(h >> 61) - 3);
    else
      p[i] = __uint_as_float((unsigned)(h >> 32) & 0xBF7FFFFFu);
  }
}

int main(int argc, char** argv) {
  int device = 0;
  CK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, device));
  int bus = 0, clock_khz = 0;
  CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, device));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  const double peak = 2.0 * clock_khz * 1e3 * (bus / 8) / 1e9;  // GB/s
  std::printf("device: %s, %d SMs, peak %.0f GB/s\n", prop.name, prop.multiProcessorCount, peak);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const size_t sizes[] = {(size_t)1 << 26, (size_t)100 * 1048577, (size_t)1 << 27, (size_t)1 << 28};
  // Each launch reads another slice of a buffer of 4 GiB or more (at least two slices),
  // as the benches rotate their inputs: no launch finds its input in L2.
  const size_t pool = std::max((size_t)1 << 30, 2 * ((size_t)1 << 28));
  float* d = nullptr;
  float* out = nullptr;
  CK(cudaMalloc(&d, pool * sizeof(float)));
  CK(cudaMalloc(&out, sizeof(float)));
  const int kind = argc > 2 ? std::atoi(argv[2]) : 0;
  const bool quick = argc > 3 && std::strcmp(argv[3], "quick") == 0;  // plain and cs, U = 4, 4 blocks per SM
  std::vector<Variant> variants;
  add_load<0>(variants);
  add_load<1>(variants);
  add_load<2>(variants);
  add_load<3>(variants);
  add_load<4>(variants);
  add_load<5>(variants);
  // "one LOAD BLOCK U CHUNKED GRID N": that variant only, three launches (for ncu).
  if (argc > 9 && std::strcmp(argv[3], "one") == 0) {
    const int load = std::atoi(argv[4]), block = std::atoi(argv[5]), unroll = std::atoi(argv[6]),
              chunked = std::atoi(argv[7]), grid = std::atoi(argv[8]);
    const size_t n = std::strtoull(argv[9], nullptr, 10);
    fill<<<1024, 256>>>(d, pool, kind);
    for (const Variant& v : variants)
      if (v.load == load && v.block == block && v.unroll == unroll && v.chunked == chunked && v.pipe == 0)
        for (int l = 0; l < 3; ++l) v.kernel<<<grid, v.block>>>(reinterpret_cast<const float4*>(d + l * n), n / 4, out);
    CK(cudaDeviceSynchronize());
    return 0;
  }
  fill<<<1024, 256>>>(d, pool, kind);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int grids_per_sm[] = {1, 2, 4, 8};
  for (size_t n : sizes) {
    const size_t nvec = n / 4;
    const double bytes = (double)nvec * 16;
    const size_t slices = std::max<size_t>(2, pool / n);
    std::printf("\nn = %zu f32 (%.1f MB), %zu slices\n", n, bytes / 1e6, slices);
    std::printf("%-28s %5s %3s %-8s %4s %5s | %9s %7s %6s\n", "load", "block", "U", "order", "pipe", "grid", "us", "GB/s",
                "%peak");
    double best_load[kLoads][2];
    for (auto& b : best_load) b[0] = b[1] = 1e30;
    for (const Variant& v : variants) {
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, v.block, 0));
      if (quick && (v.unroll != 4 || (v.load != 0 && v.load != 5))) continue;
      for (int g : grids_per_sm) {
        if (g > per_sm || (quick && g * v.block != 1024 && g * v.block != 2048)) continue;
        const int grid = g * prop.multiProcessorCount;
        const int launches = 20;
        std::vector<float> times;
        for (int r = 0; r < reps; ++r) {
          v.kernel<<<grid, v.block>>>(reinterpret_cast<const float4*>(d), nvec, out);
          CK(cudaEventRecord(e0));
          for (int l = 0; l < launches; ++l)
            v.kernel<<<grid, v.block>>>(reinterpret_cast<const float4*>(d + (1 + l) % slices * n), nvec, out);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          times.push_back(ms * 1e3f / launches);
        }
        std::sort(times.begin(), times.end());
        const double us = times[times.size() / 2];
        const double gbs = bytes / (us * 1e3);
        best_load[v.load][v.chunked] = std::min(best_load[v.load][v.chunked], us);
        std::printf("%-28s %5d %3d %-8s %4d %5d | %9.2f %7.1f %5.1f%%\n", kLoadNames[v.load], v.block, v.unroll,
                    v.chunked ? "chunked" : "tiles", v.pipe, grid, us, gbs, 100 * gbs / peak);
      }
    }
    std::printf("best per load, n = %zu, fill %d: tiles | chunked (%% of peak)\n", n, kind);
    for (int l = 0; l < kLoads; ++l)
      std::printf("  %-28s %5.1f%% | %5.1f%%\n", kLoadNames[l], 100 * bytes / (best_load[l][0] * 1e3) / peak,
                  100 * bytes / (best_load[l][1] * 1e3) / peak);
  }
  CK(cudaGetLastError());
  return 0;
}
