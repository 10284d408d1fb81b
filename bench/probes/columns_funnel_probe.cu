// Probe (not part of the build): columns [R, inner] of 16-bit data whose rows lie off the
// vector grid (inner not a multiple of the vector), read as whole aligned vectors with
// each thread's own columns fixed: thread tx of a warp owns columns c0 + V*tx .. +V-1 of
// every row. In a row whose tile starts K elements before the next grid point, the
// aligned vector at c0 + V*tx + K holds the thread's columns K..V-1 and the next thread's
// 0..K-1; the thread takes its columns 0..K-1 from its lower neighbour's vector by a
// shuffle (lane 0 loads that vector itself). BY thread rows take rows y, y + BY, ...,
// with BY * pitch a multiple of V, so K is fixed for a thread row and the loop is
// instantiated once per K (a warp-uniform switch outside the loop). Thread rows fold in
// shared memory in order; splits of R write partials that a second kernel folds.
//   nvcc -O3 -arch=sm_90 -std=c++20 -Icore/include -Iengine/include -Iruntime/include \
//     -Ituner/include -Idb/include -Ibench/probes bench/probes/columns_funnel_probe.cu -o columns_funnel_probe \
//     build/runtime/libreduce_tune_runtime.a build/tuner/libreduce_tune_tuner.a \
//     build/db/libreduce_tune_db.a build/engine/libreduce_tune_engine.a \
//     build/core/libreduce_tune_core.a /usr/lib/x86_64-linux-gnu/libsqlite3.a \
//     /usr/lib/x86_64-linux-gnu/liblzma.a /usr/lib/x86_64-linux-gnu/libz.a -lnvrtc -ldl -lpthread -lrt
//   ./columns_funnel_probe 4097x16385,100x1048577 [BASE]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
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

// V halves in V / 2 32-bit words.
template <int V> struct alignas(2 * V) HVec { unsigned w[V / 2]; };

template <int V>
__device__ __forceinline__ HVec<V> load_vec(const __half* p) {
  HVec<V> x;
  if constexpr (V == 8) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
    x.w[0] = v.x; x.w[1] = v.y; x.w[2] = v.z; x.w[3] = v.w;
  } else if constexpr (V == 4) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    x.w[0] = v.x; x.w[1] = v.y;
  } else {
    x.w[0] = __ldg(reinterpret_cast<const unsigned*>(p));
  }
  return x;
}

__device__ __forceinline__ float half_at(unsigned w, int hi) {
  const unsigned short b = hi ? (unsigned short)(w >> 16) : (unsigned short)(w & 0xffffu);
  return __half2float(__ushort_as_half(b));
}

template <int V>
__device__ __forceinline__ float elem(const HVec<V>& x, int j) {
  return half_at(x.w[j / 2], j & 1);
}

// One thread row's rows [k, hi) (step BY) at fixed shift K. a: the grid index of the
// thread's aligned vector in row k. live_x: the vector holds a column of the view's row;
// live_y: lane 0 needs its own lower vector (K > 0 and its columns live).
template <int V, int BY, int U, int K>
__device__ __forceinline__ void fold_rows(const __half* grid0, u64 k, u64 hi, u64 a, u64 row_step, bool live_x,
                                          bool own_y, float (&acc)[V]) {
  const unsigned lane = threadIdx.x & 31u;
  auto one = [&](const HVec<V>& x, const HVec<V>& yown) {
    if constexpr (K == 0) {
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] += elem<V>(x, j);
    } else {
      HVec<V> y;
#pragma unroll
      for (int w = 0; w < V / 2; ++w) {
        const unsigned s = __shfl_up_sync(0xffffffffu, x.w[w], 1);
        y.w[w] = lane == 0 ? yown.w[w] : s;
      }
#pragma unroll
      for (int j = 0; j < K; ++j) acc[j] += elem<V>(y, V - K + j);
#pragma unroll
      for (int j = K; j < V; ++j) acc[j] += elem<V>(x, j - K);
    }
  };
  HVec<V> zero;
#pragma unroll
  for (int w = 0; w < V / 2; ++w) zero.w[w] = 0u;
  for (; k + (U - 1) * BY < hi; k += U * BY, a += U * row_step) {
    HVec<V> x[U], y[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      x[u] = live_x ? load_vec<V>(grid0 + a + u * row_step) : zero;
      if constexpr (K > 0) y[u] = own_y ? load_vec<V>(grid0 + a + u * row_step - V) : zero;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) one(x[u], K > 0 ? y[u] : zero);
  }
  for (; k < hi; k += BY, a += row_step) {
    const HVec<V> x = live_x ? load_vec<V>(grid0 + a) : zero;
    HVec<V> y = zero;
    if constexpr (K > 0) y = own_y ? load_vec<V>(grid0 + a - V) : zero;
    one(x, y);
  }
}

template <int V, int BX, int BY, int U>
__global__ void __launch_bounds__(BX* BY) funnel_columns(const __half* in, u64 R, u64 inner, u64 pitch, u64 chunk,
                                                          unsigned splits, float* partials, float* out) {
  constexpr int W = BX * V;
  __shared__ float sm[BY][W];
  const unsigned t = threadIdx.x, tx = t % BX, ty = t / BX;
  const u64 tiles = (inner + W - 1) / W;
  const unsigned base_mis = (unsigned)(((uintptr_t)in / sizeof(__half)) & (V - 1));
  const __half* grid0 = in - base_mis;
  const u64 row_step = (u64)BY * pitch;
  for (u64 b = blockIdx.x; b < tiles * splits; b += gridDim.x) {
    const u64 tile = b % tiles, split = b / tiles;
    const u64 c0 = tile * W;
    const u64 cols = inner - c0 < (u64)W ? inner - c0 : (u64)W;  // live columns of the tile
    const u64 lo = split * chunk < R ? split * chunk : R;
    const u64 hi = lo + chunk < R ? lo + chunk : R;
    float acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = 0.f;
    const u64 k = lo + ty;
    const u64 e0 = k * pitch + c0 + base_mis;
    const unsigned K = (unsigned)((V - (e0 & (V - 1))) & (V - 1));
    const u64 a = e0 + (u64)tx * V + K;
    const bool live_x = (u64)tx * V + K < cols;
    const bool own_y = (threadIdx.x & 31u) == 0 && K > 0 && (u64)tx * V < cols;
    if (k < hi) {
      switch (K) {
#define RT_K(KK) \
  case KK:       \
    if constexpr (KK < V) fold_rows<V, BY, U, KK>(grid0, k, hi, a, row_step, live_x, own_y, acc); \
    break;
        RT_K(0) RT_K(1) RT_K(2) RT_K(3) RT_K(4) RT_K(5) RT_K(6) RT_K(7)
#undef RT_K
      }
    }
    __syncthreads();
#pragma unroll
    for (int e = 0; e < V; ++e) sm[ty][tx * V + e] = acc[e];
    __syncthreads();
    for (unsigned c = t; c < (unsigned)cols; c += BX * BY) {
      float v = 0.f;
#pragma unroll
      for (int y = 0; y < BY; ++y) v += sm[y][c];
      if (splits > 1)
        partials[split * inner + c0 + c] = v;
      else
        out[c0 + c] = v;
    }
  }
}


// Runtime shift: every row its own K (any BY), V = 4 halves (one u64) or 2 (one u32):
// the thread's window of the concatenation [Y, X] starting at half V - K.
template <int V>
__device__ __forceinline__ unsigned long long funnel_bits(unsigned long long y, unsigned long long x, unsigned K) {
  constexpr unsigned kBits = 16 * V;
  if (K == 0) return x;
  const unsigned long long lo = y >> (kBits - 16 * K);
  const unsigned long long hi = x << (16 * K);
  if constexpr (kBits == 64) return lo | hi;
  else return (lo | hi) & ((1ull << kBits) - 1);
}

template <int V, int BX, int BY, int U>
__global__ void __launch_bounds__(BX* BY) funnel_rt_columns(const __half* in, u64 R, u64 inner, u64 pitch, u64 chunk,
                                                             unsigned splits, float* partials, float* out) {
  static_assert(V == 4 || V == 2, "u64 or u32 windows");
  typedef typename std::conditional<V == 4, unsigned long long, unsigned>::type W_t;
  constexpr int W = BX * V;
  __shared__ float sm[BY][W];
  const unsigned t = threadIdx.x, tx = t % BX, ty = t / BX;
  const unsigned lane = t & 31u;
  const u64 tiles = (inner + W - 1) / W;
  const unsigned base_mis = (unsigned)(((uintptr_t)in / sizeof(__half)) & (V - 1));
  const __half* grid0 = in - base_mis;
  for (u64 b = blockIdx.x; b < tiles * splits; b += gridDim.x) {
    const u64 tile = b % tiles, split = b / tiles;
    const u64 c0 = tile * W;
    const u64 cols = inner - c0 < (u64)W ? inner - c0 : (u64)W;
    const u64 lo = split * chunk < R ? split * chunk : R;
    const u64 hi = lo + chunk < R ? lo + chunk : R;
    float acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = 0.f;
    const bool mine = (u64)tx * V < cols;
    u64 k = lo + ty;
    const u64 step = (u64)BY * pitch;
    u64 e = k * pitch + c0 + base_mis;
    const __half* g = grid0 + (u64)tx * V;
    auto row = [&](u64 e0, W_t& x, W_t& y, unsigned& K) {
      K = (unsigned)((V - ((unsigned)e0 & (V - 1))) & (V - 1));
      const __half* a = g + e0 + K;
      x = (u64)tx * V + K < cols ? __ldg(reinterpret_cast<const W_t*>(a)) : (W_t)0;
      y = (lane == 0 && K > 0 && mine) ? __ldg(reinterpret_cast<const W_t*>(a - V)) : (W_t)0;
    };
    auto fold = [&](W_t x, W_t y, unsigned K) {
      W_t up;
      if constexpr (V == 4) {
        const unsigned lo32 = __shfl_up_sync(0xffffffffu, (unsigned)x, 1);
        const unsigned hi32 = __shfl_up_sync(0xffffffffu, (unsigned)(x >> 32), 1);
        up = ((unsigned long long)hi32 << 32) | lo32;
      } else {
        up = __shfl_up_sync(0xffffffffu, x, 1);
      }
      if (lane == 0) up = y;
      const unsigned long long w = funnel_bits<V>(up, x, K);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] += __half2float(__ushort_as_half((unsigned short)(w >> (16 * j))));
    };
    for (; k + (u64)(U - 1) * BY < hi; k += (u64)U * BY, e += U * step) {
      W_t x[U], y[U];
      unsigned K[U];
#pragma unroll
      for (int u = 0; u < U; ++u) row(e + u * step, x[u], y[u], K[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) fold(x[u], y[u], K[u]);
    }
    for (; k < hi; k += BY, e += step) {
      W_t x, y;
      unsigned K;
      row(e, x, y, K);
      fold(x, y, K);
    }
    if (BY > 1) {
      __syncthreads();
#pragma unroll
      for (int e = 0; e < V; ++e) sm[ty][tx * V + e] = acc[e];
      __syncthreads();
      for (unsigned c = t; c < (unsigned)cols; c += BX * BY) {
        float v = 0.f;
#pragma unroll
        for (int y = 0; y < BY; ++y) v += sm[y][c];
        if (splits > 1) partials[split * inner + c0 + c] = v;
        else out[c0 + c] = v;
      }
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const u64 c = (u64)tx * V + e;
        if (c >= cols) break;
        if (splits > 1) partials[split * inner + c0 + c] = acc[e];
        else out[c0 + c] = acc[e];
      }
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
  int v, bx, by, u, bps;
  std::string name() const {
    return (v < 0 ? std::string("rtV=") + std::to_string(-v) : "V=" + std::to_string(v)) + ",BX=" + std::to_string(bx) + ",BY=" + std::to_string(by) + ",U=" + std::to_string(u) +
           ",bps=" + std::to_string(bps);
  }
};

template <int V, int BX, int BY, int U>
bool launch(const __half* in, u64 R, u64 inner, int bps, int sms, float* partials, float* out, cudaStream_t stream) {
  if ((BY * inner) % V != 0) return false;  // the thread rows' shifts would move
  constexpr int W = BX * V;
  const u64 tiles = (inner + W - 1) / W;
  // bps: blocks an SM to aim for (splits of R to fill them); 0: no split.
  const u64 target = (u64)sms * bps;
  u64 splits = bps == 0 ? 1 : (target + tiles - 1) / tiles;
  const u64 max_splits = std::max<u64>(1, R / (2 * (u64)U * BY));  // two rounds a split
  splits = std::max<u64>(1, std::min<u64>({splits, max_splits, 512}));
  const u64 chunk = (R + splits - 1) / splits;
  splits = (R + chunk - 1) / chunk;
  const u64 blocks = std::min<u64>(tiles * splits, (u64)sms * 32);
  funnel_columns<V, BX, BY, U><<<(unsigned)blocks, BX * BY, 0, stream>>>(in, R, inner, inner, chunk, (unsigned)splits,
                                                                       partials, out);
  if (splits > 1) finish_columns<<<(unsigned)((inner + 255) / 256), 256, 0, stream>>>(partials, inner, (unsigned)splits, out);
  return true;
}


template <int V, int BX, int BY, int U>
bool launch_rt(const __half* in, u64 R, u64 inner, int bps, int sms, float* partials, float* out, cudaStream_t stream) {
  constexpr int W = BX * V;
  const u64 tiles = (inner + W - 1) / W;
  const u64 target = (u64)sms * bps;
  u64 splits = bps == 0 ? 1 : (target + tiles - 1) / tiles;
  const u64 max_splits = std::max<u64>(1, R / (2 * (u64)U * BY));
  splits = std::max<u64>(1, std::min<u64>({splits, max_splits, 512}));
  const u64 chunk = (R + splits - 1) / splits;
  splits = (R + chunk - 1) / chunk;
  const u64 blocks = std::min<u64>(tiles * splits, (u64)sms * 32);
  funnel_rt_columns<V, BX, BY, U><<<(unsigned)blocks, BX * BY, 0, stream>>>(in, R, inner, inner, chunk, (unsigned)splits,
                                                                          partials, out);
  if (splits > 1) finish_columns<<<(unsigned)((inner + 255) / 256), 256, 0, stream>>>(partials, inner, (unsigned)splits, out);
  return true;
}

bool run_variant(const Variant& v, const __half* in, u64 R, u64 inner, int sms, float* partials, float* out,
                 cudaStream_t stream) {
#define RT_RT(VV, XX, YY, UU) \
  if (v.v == -VV && v.bx == XX && v.by == YY && v.u == UU) return launch_rt<VV, XX, YY, UU>(in, R, inner, v.bps, sms, partials, out, stream);
  RT_RT(4, 256, 1, 8) RT_RT(4, 256, 1, 4) RT_RT(4, 64, 4, 8) RT_RT(4, 64, 4, 4) RT_RT(4, 32, 32, 8) RT_RT(4, 32, 16, 8)
  RT_RT(4, 128, 2, 8) RT_RT(4, 32, 8, 4) RT_RT(4, 32, 8, 8) RT_RT(2, 256, 1, 8) RT_RT(4, 128, 1, 8) RT_RT(4, 512, 1, 8)
#undef RT_RT
#define RT_CASE(VV, XX, YY, UU) \
  if (v.v == VV && v.bx == XX && v.by == YY && v.u == UU) return launch<VV, XX, YY, UU>(in, R, inner, v.bps, sms, partials, out, stream);
  RT_CASE(4, 32, 8, 4) RT_CASE(4, 32, 8, 8) RT_CASE(4, 64, 4, 8) RT_CASE(4, 64, 8, 4) RT_CASE(8, 32, 8, 4)
  RT_CASE(8, 32, 8, 2) RT_CASE(4, 128, 4, 4) RT_CASE(4, 32, 16, 4) RT_CASE(8, 64, 8, 4) RT_CASE(2, 64, 8, 8)
  RT_CASE(2, 128, 4, 8)
#undef RT_CASE
  std::printf("no such variant %s\n", v.name().c_str());
  std::exit(1);
}

void probe(u64 R, u64 inner, u64 base, int sms, cudaStream_t stream, const std::vector<Variant>& variants) {
  namespace rt = reduce_tune;
  namespace tn = reduce_tune::tuner;
  const u64 n = R * inner;
  std::vector<__half> host(n + base);
  std::vector<double> expect(inner, 0.0);
  for (u64 i = 0; i < n + base; ++i) {
    const int val = static_cast<int>((i * 0x9E3779B97F4A7C15ull) >> 61) - 3;
    host[i] = __float2half(static_cast<float>(val));
    if (i >= base) expect[(i - base) % inner] += val;
  }
  const u64 bytes = (n + base) * sizeof(__half);
  const int copies = bytes * 4 < (50ull << 20) ? 1 : (int)std::min<u64>(64, (200ull << 20) / bytes + 2);
  std::vector<__half*> dev(copies);
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
    u64 bad = 0, first = 0;
    for (u64 c = 0; c < inner; ++c)
      if ((double)got[c] != expect[c]) {
        if (!bad) first = c;
        ++bad;
      }
    if (bad)
      std::printf("  %s: %llu of %llu columns WRONG (first %llu: %.1f vs %.1f)\n", what, bad, inner, first, got[first],
                  expect[first]);
    return bad == 0;
  };
  const double gb = (double)n * sizeof(__half) / 1e9;
  const tn::TimingPolicy held{};
  const tn::TimingPolicy paced = tn::bench_policy();
  static rt::Context* ctx = nullptr;
  if (!ctx) {
    rt::ContextOptions o;
    o.database = std::filesystem::path("/nonexistent/none.db");
    o.kernel_cache = std::filesystem::path("off");
    ctx = new rt::Context(o);
  }
  const rt::TensorDesc desc = rt::TensorDesc::contiguous({(std::int64_t)R, (std::int64_t)inner});
  const rt::AxisList axes{0};
  auto lib = [&](int i) {
    ctx->reduce_axes(rt::Op::sum, rt::DType::f16, rt::DType::f32, dev[i % copies] + base, desc, axes, out, stream);
  };
  lib(0);
  check("library");
  const auto explain = ctx->explain_axes(rt::Op::sum, rt::DType::f16, rt::DType::f32, desc, axes, dev[0] + base);
  const double lib_held = tn::time_reduction(lib, copies, stream, held).median_ms * 1e3;
  const double lib_paced = tn::time_reduction(lib, copies, stream, paced).median_ms * 1e3;
  const rt::TensorDesc flat_desc = rt::TensorDesc::contiguous({(std::int64_t)n});
  const rt::AxisList flat_axes{0};
  auto flat = [&](int i) {
    ctx->reduce_axes(rt::Op::sum, rt::DType::f16, rt::DType::f32, dev[i % copies] + base, flat_desc, flat_axes, partials,
                     stream);
  };
  flat(0);
  CK(cudaStreamSynchronize(stream));
  const double flat_held = tn::time_reduction(flat, copies, stream, held).median_ms * 1e3;
  std::printf("f16 %llux%llu+%llu | library held %.2f us (%.0f GB/s) paced %.2f | flat held %.2f (%.0f GB/s) | %s\n", R,
              inner, base, lib_held, gb / lib_held * 1e6, lib_paced, flat_held, gb / flat_held * 1e6,
              explain.kernel.c_str());
  for (const auto& v : variants) {
    auto call = [&](int i) { run_variant(v, dev[i % copies] + base, R, inner, sms, partials, out, stream); };
    CK(cudaMemset(out, 0, inner * sizeof(float)));
    if (!run_variant(v, dev[0] + base, R, inner, sms, partials, out, stream)) {
      std::printf("  funnel %s | not for this pitch\n", v.name().c_str());
      continue;
    }
    CK(cudaGetLastError());
    const bool ok = check(v.name().c_str());
    const double h = tn::time_reduction(call, copies, stream, held).median_ms * 1e3;
    const double p = tn::time_reduction(call, copies, stream, paced).median_ms * 1e3;
    std::printf("  funnel %s | held %.2f us (%.0f GB/s, %.3fx library, %.3fx flat) paced %.2f | %s\n", v.name().c_str(),
                h, gb / h * 1e6, lib_held / h, flat_held / h, p, ok ? "right" : "WRONG");
  }
  for (auto d : dev) CK(cudaFree(d));
  CK(cudaFree(out));
  CK(cudaFree(partials));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: %s RxINNER,... [BASE] [VARIANTS: v,bx,by,u,bps;...]\n", argv[0]);
    return 2;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const u64 base = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  std::vector<Variant> variants = {{4, 32, 8, 4, 8},  {4, 32, 8, 8, 8},  {4, 64, 4, 8, 8},  {4, 64, 8, 4, 4},
                                   {8, 32, 8, 4, 8},  {8, 32, 8, 2, 8},  {4, 128, 4, 4, 4}, {4, 32, 16, 4, 4},
                                   {8, 64, 8, 4, 4},  {2, 64, 8, 8, 4},  {2, 128, 4, 8, 4}};
  if (argc > 3) {
    variants.clear();
    std::string spec = argv[3];
    size_t pos = 0;
    while (pos < spec.size()) {
      size_t semi = spec.find(';', pos);
      if (semi == std::string::npos) semi = spec.size();
      Variant v{};
      std::sscanf(spec.substr(pos, semi - pos).c_str(), "%d,%d,%d,%d,%d", &v.v, &v.bx, &v.by, &v.u, &v.bps);
      variants.push_back(v);
      pos = semi + 1;
    }
  }
  std::string list = argv[1];
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t x = item.find('x');
    const u64 R = std::strtoull(item.substr(0, x).c_str(), nullptr, 10);
    const u64 inner = std::strtoull(item.substr(x + 1).c_str(), nullptr, 10);
    probe(R, inner, base, sms, stream, variants);
  }
  return 0;
}
