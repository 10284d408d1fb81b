// Probe (not part of the build): the prototype of rt::axis_columns_staged_kernel (set BN
// in docs/BENCHMARKS.md). Columns [R, inner], inner off the 16-byte grid or not, read
// through shared memory: a block owns W adjacent columns and a chunk of R; each row's W
// elements are read as the aligned 16-byte vectors that hold them (W / VE + 1 of them, VE
// elements a vector), stored to shared memory as they are, and thread c folds column c of
// each staged row at its row's shift. The next tile's loads are in flight while a tile
// folds. Splits of R write partials that a second kernel folds in order. Timed with the
// tuner's method (held and paced, tuner/measure.h) beside the library's call of the same
// view (no database: the built-in choice), each result checked against the host's exact
// column sums (small integers). Sum only, f16 and f32 into f32. From the repository root,
// after the Release build:
//   nvcc -O3 -arch=sm_90 -std=c++20 -Icore/include -Iengine/include -Iruntime/include \
//     -Ituner/include -Idb/include bench/probes/columns_staged_probe.cu -o columns_staged_probe \
//     build/runtime/libreduce_tune_runtime.a build/tuner/libreduce_tune_tuner.a \
//     build/db/libreduce_tune_db.a build/engine/libreduce_tune_engine.a \
//     build/core/libreduce_tune_core.a /usr/lib/x86_64-linux-gnu/libsqlite3.a \
//     /usr/lib/x86_64-linux-gnu/liblzma.a /usr/lib/x86_64-linux-gnu/libz.a -lnvrtc -ldl -lpthread -lrt
//   ./columns_staged_probe f16 30001x4093,12345x2641 [BASE]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "reduce_tune/reduce_tune.h"
#include "reduce_tune/tuner/measure.h"

#include "probe_common.cuh"

typedef unsigned long long u64;

struct alignas(16) Vec16 {
  unsigned w[4];
};

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }

// Columns [c0, c0 + W) of rows [lo, hi) of the view at `in` ([R, inner], rows `pitch`
// elements apart). `base_mis`: in's element offset from the 16-byte grid. The view's
// first and last element bound every vector read (a vector past either is read element by
// element).
template <class T, int W, int THREADS, int U>
__global__ void __launch_bounds__(THREADS) staged_columns(const T* in, u64 R, u64 inner, u64 pitch, u64 chunk,
                                                          unsigned splits, float* partials, float* out) {
  constexpr int VE = 16 / sizeof(T);
  constexpr int NVR = W / VE + 1;             // vector slots a row
  constexpr int H = THREADS * U / NVR;        // rows a tile
  constexpr int SLOTS = H * NVR;
  static_assert(H >= 1, "tile");
  __shared__ Vec16 tile[SLOTS];
  const unsigned t = threadIdx.x;
  const u64 tiles_x = (inner + W - 1) / W;
  const u64 bx = blockIdx.x % tiles_x, split = blockIdx.x / tiles_x;
  const u64 c0 = bx * W;
  const u64 w = inner - c0 < (u64)W ? inner - c0 : (u64)W;
  const u64 lo = split * chunk < R ? split * chunk : R;
  const u64 hi = lo + chunk < R ? lo + chunk : R;
  const unsigned base_mis = (unsigned)(((uintptr_t)in / sizeof(T)) & (VE - 1));
  const T* grid0 = in - base_mis;            // on the 16-byte grid
  const u64 view_end = (R - 1) * pitch + inner + base_mis;  // in grid0's elements
  // A slot's row and vector are the same in every tile: its segment's first element
  // moves H rows a tile.
  unsigned row_of[U], k_of[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const unsigned slot = t + u * THREADS;
    row_of[u] = slot < SLOTS ? slot / NVR : 0xffffffffu;
    k_of[u] = slot % NVR;
  }
  Vec16 x[U];
  auto load = [&](u64 r0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      x[u] = Vec16{{0, 0, 0, 0}};
      if (row_of[u] != 0xffffffffu && r0 + row_of[u] < hi) {
        const u64 e0 = (r0 + row_of[u]) * pitch + c0 + base_mis;
        const u64 a = (e0 & ~(u64)(VE - 1)) + (u64)k_of[u] * VE;
        if (a < e0 + w) {
          if (a >= base_mis && a + VE <= view_end) {
            const uint4 q = __ldg(reinterpret_cast<const uint4*>(grid0 + a));
            x[u] = Vec16{{q.x, q.y, q.z, q.w}};
          } else {
            T* e = reinterpret_cast<T*>(&x[u]);
            for (int j = 0; j < VE; ++j)
              if (a + j >= base_mis && a + j < view_end) e[j] = grid0[a + j];
          }
        }
      }
    }
  };
  // Thread t folds columns t, t + THREADS, ... < W (COLS of them) of rows g, g + PER, ...
  // of a tile (PER = THREADS / W threads a column where THREADS > W).
  constexpr int PER = THREADS >= W ? THREADS / W : 1;
  constexpr int COLS = THREADS >= W ? 1 : W / THREADS;
  float acc[COLS], acc2[COLS];
#pragma unroll
  for (int i = 0; i < COLS; ++i) acc[i] = acc2[i] = 0.f;
  const T* st = reinterpret_cast<const T*>(tile);
  const unsigned pm = (unsigned)(pitch & (VE - 1));
  const unsigned c = THREADS >= W ? t % W : t, g = THREADS >= W ? t / W : 0;
  // Row r's shift: (r * pitch + c0 + base_mis) mod VE.
  unsigned shift0 = (unsigned)((lo * pitch + c0 + base_mis) & (VE - 1));
  const unsigned tile_shift = (unsigned)((H * (u64)pm) & (VE - 1));
  const unsigned per_shift = (PER * pm) & (VE - 1);
  u64 r0 = lo;
  if (r0 < hi) load(r0);
  for (; r0 < hi; r0 += H) {
    __syncthreads();
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const unsigned slot = t + u * THREADS;
      if (slot < SLOTS) tile[slot] = x[u];
    }
    __syncthreads();
    if (r0 + H < hi) load(r0 + H);
    const unsigned rows = hi - r0 < (u64)H ? (unsigned)(hi - r0) : (unsigned)H;
    unsigned s = (shift0 + g * pm) & (VE - 1);
    const T* at = st + g * NVR * VE + c;
    unsigned row = g;
    for (; row + PER < rows; row += 2 * PER) {
      const unsigned s1 = (s + per_shift) & (VE - 1);
#pragma unroll
      for (int i = 0; i < COLS; ++i) {
        acc[i] += to_f(at[s + i * THREADS]);
        acc2[i] += to_f(at[PER * NVR * VE + s1 + i * THREADS]);
      }
      s = (s1 + per_shift) & (VE - 1);
      at += 2 * PER * NVR * VE;
    }
    if (row < rows)
#pragma unroll
      for (int i = 0; i < COLS; ++i) acc[i] += to_f(at[s + i * THREADS]);
    shift0 = (shift0 + tile_shift) & (VE - 1);
  }
  // (Columns past w fold staged garbage or zeros: never written.)
  __shared__ float red[THREADS >= W ? THREADS : 1];
#pragma unroll
  for (int i = 0; i < COLS; ++i) acc[i] += acc2[i];
  if (THREADS > W) {
    __syncthreads();
    red[t] = acc[0];
    __syncthreads();
    if (g == 0)
      for (int q = 1; q < PER; ++q) acc[0] += red[q * W + c];
  }
  if (g == 0)
#pragma unroll
    for (int i = 0; i < COLS; ++i) {
      const unsigned cc = c + i * THREADS;
      if (cc < w) {
        if (splits > 1)
          partials[split * inner + c0 + cc] = acc[i];
        else
          out[c0 + cc] = acc[i];
      }
    }
}

__global__ void finish_columns(const float* partials, u64 inner, unsigned splits, float* out) {
  for (u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x; c < inner; c += (u64)gridDim.x * blockDim.x) {
    float v = 0.f;
    for (unsigned s = 0; s < splits; ++s) v += partials[s * inner + c];
    out[c] = v;
  }
}

struct Variant {
  int w, threads, u, blocks_per_sm;
  std::string name() const {
    return "W=" + std::to_string(w) + ",threads=" + std::to_string(threads) + ",U=" + std::to_string(u) +
           ",bps=" + std::to_string(blocks_per_sm);
  }
};

template <class T, int W, int THREADS, int U>
void launch(const T* in, u64 R, u64 inner, int bps, int sms, float* partials, float* out, cudaStream_t stream) {
  const u64 tiles_x = (inner + W - 1) / W;
  const u64 target = (u64)sms * bps;
  u64 splits = (target + tiles_x - 1) / tiles_x;
  constexpr int VE = 16 / sizeof(T);
  constexpr int H = THREADS * U / (W / VE + 1);
  // At least two tiles a split.
  const u64 max_splits = std::max<u64>(1, R / (2 * H));
  splits = std::max<u64>(1, std::min<u64>({splits, max_splits, 512}));
  const u64 chunk = (R + splits - 1) / splits;
  splits = (R + chunk - 1) / chunk;
  staged_columns<T, W, THREADS, U><<<(unsigned)(tiles_x * splits), THREADS, 0, stream>>>(
      in, R, inner, inner, chunk, (unsigned)splits, partials, out);
  if (splits > 1) finish_columns<<<(unsigned)((inner + 255) / 256), 256, 0, stream>>>(partials, inner, (unsigned)splits, out);
}

template <class T>
void run_variant(const Variant& v, const T* in, u64 R, u64 inner, int sms, float* partials, float* out,
                 cudaStream_t stream) {
#define RT_CASE(WW, TT, UU)                                                                  \
  if (v.w == WW && v.threads == TT && v.u == UU) {                                           \
    launch<T, WW, TT, UU>(in, R, inner, v.blocks_per_sm, sms, partials, out, stream);        \
    return;                                                                                  \
  }
  RT_CASE(128, 256, 4) RT_CASE(256, 256, 4) RT_CASE(256, 256, 8) RT_CASE(512, 512, 4) RT_CASE(512, 256, 4)
  RT_CASE(1024, 512, 4) RT_CASE(1024, 256, 4) RT_CASE(256, 512, 4)
#undef RT_CASE
  std::printf("no such variant %s\n", v.name().c_str());
  std::exit(1);
}

template <class T>
T from_int(int v) {
  return static_cast<T>(v);
}
template <>
__half from_int<__half>(int v) {
  return __float2half(static_cast<float>(v));
}

template <class T>
void probe(const char* dtype, u64 R, u64 inner, u64 base, int sms, cudaStream_t stream) {
  namespace rt = reduce_tune;
  namespace tn = reduce_tune::tuner;
  const u64 n = R * inner;
  std::vector<T> host(n + base);
  std::vector<double> expect(inner, 0.0);
  for (u64 i = 0; i < n + base; ++i) {
    const int val = static_cast<int>((i * 0x9E3779B97F4A7C15ull) >> 61) - 3;
    host[i] = from_int<T>(val);
    if (i >= base) expect[(i - base) % inner] += val;
  }
  // Rotate through copies past 4x L2 (50 MiB on an H200) as the tuner's timing does.
  const u64 bytes = (n + base) * sizeof(T);
  const int copies = bytes * 4 < (50ull << 20) ? 1 : (int)std::min<u64>(64, (200ull << 20) / bytes + 2);
  std::vector<T*> dev(copies);
  for (auto& d : dev) {
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  float *out, *partials;
  CK(cudaMalloc(&out, inner * sizeof(float)));
  CK(cudaMalloc(&partials, inner * 512 * sizeof(float)));
  std::vector<float> got(inner);
  auto check = [&](const char* what) {
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(got.data(), out, inner * sizeof(float), cudaMemcpyDeviceToHost));
    u64 bad = 0;
    for (u64 c = 0; c < inner; ++c)
      if ((double)got[c] != expect[c]) ++bad;
    if (bad) std::printf("  %s: %llu of %llu columns WRONG (col 0 %.1f vs %.1f)\n", what, bad, inner, got[0], expect[0]);
    return bad == 0;
  };
  const double gb = (double)n * sizeof(T) / 1e9;
  const tn::TimingPolicy held{};
  const tn::TimingPolicy paced = tn::bench_policy();
  // The library's call (no database).
  static rt::Context* ctx = nullptr;
  if (!ctx) {
    rt::ContextOptions o;
    o.database = std::filesystem::path("/nonexistent/none.db");
    o.kernel_cache = std::filesystem::path("off");
    ctx = new rt::Context(o);
  }
  const rt::TensorDesc desc = rt::TensorDesc::contiguous({(std::int64_t)R, (std::int64_t)inner});
  const rt::AxisList axes{0};
  const rt::DType in_type = sizeof(T) == 2 ? rt::DType::f16 : rt::DType::f32;
  auto lib = [&](int i) {
    ctx->reduce_axes(rt::Op::sum, in_type, rt::DType::f32, dev[i % copies] + base, desc, axes, out, stream);
  };
  lib(0);
  check("library");
  const auto explain = ctx->explain_axes(rt::Op::sum, in_type, rt::DType::f32, desc, axes, dev[0] + base);
  const double lib_held = tn::time_reduction(lib, copies, stream, held).median_ms * 1e3;
  const double lib_paced = tn::time_reduction(lib, copies, stream, paced).median_ms * 1e3;
  std::printf("%s %llux%llu+%llu | library held %.2f us (%.0f GB/s) paced %.2f | %s\n", dtype, R, inner, base, lib_held,
              gb / lib_held * 1e6, lib_paced, explain.kernel.c_str());
  std::vector<Variant> variants;
  if (sizeof(T) == 2)
    variants = {{256, 256, 8, 4}, {512, 512, 4, 4}, {512, 256, 4, 4}, {512, 256, 4, 8}, {1024, 512, 4, 4}, {1024, 256, 4, 8}};
  else
    variants = {{128, 256, 4, 4}, {128, 256, 4, 8}, {256, 256, 4, 8}, {256, 512, 4, 4}, {512, 512, 4, 4}, {512, 256, 4, 8}};
  for (const auto& v : variants) {
    auto call = [&](int i) { run_variant<T>(v, dev[i % copies] + base, R, inner, sms, partials, out, stream); };
    CK(cudaMemset(out, 0, inner * sizeof(float)));
    call(0);
    CK(cudaGetLastError());
    const bool ok = check(v.name().c_str());
    const double h = tn::time_reduction(call, copies, stream, held).median_ms * 1e3;
    const double p = tn::time_reduction(call, copies, stream, paced).median_ms * 1e3;
    std::printf("  staged %s | held %.2f us (%.0f GB/s, %.2fx library) paced %.2f | %s\n", v.name().c_str(), h,
                gb / h * 1e6, lib_held / h, p, ok ? "right" : "WRONG");
  }
  for (auto d : dev) CK(cudaFree(d));
  CK(cudaFree(out));
  CK(cudaFree(partials));
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::printf("usage: %s f16|f32 RxINNER,... [BASE]\n", argv[0]);
    return 2;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const u64 base = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 0;
  std::string list = argv[2];
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t x = item.find('x');
    const u64 R = std::strtoull(item.substr(0, x).c_str(), nullptr, 10);
    const u64 inner = std::strtoull(item.substr(x + 1).c_str(), nullptr, 10);
    if (std::strcmp(argv[1], "f16") == 0)
      probe<__half>("f16", R, inner, base, sms, stream);
    else
      probe<float>("f32", R, inner, base, sms, stream);
  }
  return 0;
}
