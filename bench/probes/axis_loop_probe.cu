// Probe (not part of the build): axis_columns_dense_kernel (and its finalize kernel) from
// kernel_templates/, or from an edited copy of it, timed in load_hint_probe.cu's harness
// beside a plain chunked read of the same bytes: launches back to back, each on another
// slice of a 4 GiB buffer, the median of 5 batches of 20. Columns 1048577 x 100 and
// 16777216 x 7, f32 sums: the main kernel of two_pass (blocks of 256 and 512) and of
// ticket_tiles (four and eight loads in flight) at 264, 528 and 1056 splits, with each
// result checked against the host's exact column sums. Set AD in docs/BENCHMARKS.md
// compares the kernels' loop forms with it.
//   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernel_templates bench/probes/axis_loop_probe.cu -o axis_loop_probe
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstdint>
namespace rt {
struct AxisParams {
  const void* in; void* out; void* partials; unsigned int* ticket;
  unsigned long long outputs, reduced; long long outer_stride, reduced_stride;
  unsigned long long inner, splits; int kept_rank, reduced_rank;
  long long kept_extents[8], kept_strides[8], reduced_extents[8], reduced_strides[8];
};
}
#include "rt/axis.cuh"
#include "probe_common.cuh"

template <int B, int U>
__global__ void __launch_bounds__(B) probe_chunked(const float4* in, size_t nvec, float* out) {
  float acc = 0.f;
  const size_t chunk = (nvec + gridDim.x - 1) / gridDim.x;
  const size_t begin = (size_t)blockIdx.x * chunk < nvec ? (size_t)blockIdx.x * chunk : nvec;
  const size_t end = begin + chunk < nvec ? begin + chunk : nvec;
  size_t i = begin + threadIdx.x;
  for (; i + (U - 1) * B < end; i += B * U) {
    float4 x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = in[i + u * B];
#pragma unroll
    for (int u = 0; u < U; ++u) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
  }
  for (; i < end; i += B) { const float4 x = in[i]; acc += (x.x + x.y) + (x.z + x.w); }
  if (acc == -1.2345f) out[0] = acc;
}

__global__ void fill(float* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (float)((int)((i * 0x9E3779B97F4A7C15ull) >> 61) - 3);
}

typedef rt::AxisConfig<rt::SumOp, float, float, float, 3, 256, 1, 4, 1, 1, 4, 0> Dense2P;
typedef rt::AxisConfig<rt::SumOp, float, float, float, 3, 512, 1, 4, 1, 1, 4, 0> Dense2P512;
typedef rt::AxisConfig<rt::SumOp, float, float, float, 3, 256, 1, 4, 3, 1, 4, 0> DenseTT;
typedef rt::AxisConfig<rt::SumOp, float, float, float, 3, 256, 1, 4, 3, 1, 8, 0> DenseTT8;

int main() {
  const size_t pool = (size_t)1 << 30;
  float *d, *out, *partials; unsigned* ticket;
  CK(cudaMalloc(&d, pool * 4)); CK(cudaMalloc(&out, 1 << 20)); CK(cudaMalloc(&partials, 64 << 20)); CK(cudaMalloc(&ticket, 4096));
  CK(cudaMemset(ticket, 0, 4096));
  fill<<<1024, 256>>>(d, pool);
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<float> h;
  for (int shape = 0; shape < 2; ++shape) {
    const size_t R = shape == 0 ? 1048577 : 16777216, inner = shape == 0 ? 100 : 7, n = R * inner;
    const size_t slices = pool / n;
    printf("columns %zu x %zu f32 sum\n", R, inner);
    auto time = [&](const char* name, auto launch) {
      std::vector<float> t;
      for (int r = 0; r < 5; ++r) {
        launch(0);
        CK(cudaEventRecord(e0));
        for (int l = 0; l < 20; ++l) launch((1 + l) % slices);
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1e3f / 20);
      }
      std::sort(t.begin(), t.end());
      printf("  %-50s %8.2f us  %5.1f%% of 4814 GB/s\n", name, t[2], 100.0 * n * 4 / (t[2] * 1e3) / 4814);
      CK(cudaGetLastError());
    };
    auto params = [&](size_t slice, unsigned splits) {
      rt::AxisParams p{};
      p.in = d + slice * n; p.out = out; p.partials = partials; p.ticket = ticket;
      p.outputs = inner; p.reduced = R; p.outer_stride = (long long)(R * inner); p.reduced_stride = (long long)inner;
      p.inner = inner; p.splits = splits;
      return p;
    };
    h.resize(n); CK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
    std::vector<double> ref(inner, 0.0);
    for (size_t r = 0; r < R; ++r) for (size_t c = 0; c < inner; ++c) ref[c] += h[r * inner + c];
    auto check = [&](const char* name) {
      CK(cudaDeviceSynchronize());
      std::vector<float> o(inner); CK(cudaMemcpy(o.data(), out, inner * 4, cudaMemcpyDeviceToHost));
      int bad = 0; for (size_t c = 0; c < inner; ++c) bad += o[c] != (float)ref[c];
      printf("  check %s: %d of %zu columns differ from the host's sums\n", name, bad, inner);
      CK(cudaMemset(out, 0, inner * 4));
    };
    time("probe chunked 256x4, 528 blocks", [&](size_t s) { probe_chunked<256, 4><<<528, 256>>>((const float4*)(d + s * n), n / 4, out); });
    time("probe chunked 512x4, 528 blocks", [&](size_t s) { probe_chunked<512, 4><<<528, 512>>>((const float4*)(d + s * n), n / 4, out); });
    const unsigned fin = (unsigned)((inner + 7) / 8);
    for (unsigned splits : {264u, 528u, 1056u}) {
      char name[100];
      snprintf(name, sizeof name, "two_pass 256 main, %u splits", splits);
      time(name, [&](size_t s) { rt::axis_columns_dense_kernel<Dense2P><<<splits, 256>>>(params(s, splits)); });
      snprintf(name, sizeof name, "two_pass 256 main+finalize, %u", splits);
      auto both = [&](size_t s) {
        auto p = params(s, splits);
        rt::axis_columns_dense_kernel<Dense2P><<<splits, 256>>>(p);
        rt::axis_finalize_kernel<Dense2P><<<fin, 256>>>(p);
      };
      time(name, both);
      both(0); check(name);
      snprintf(name, sizeof name, "two_pass 512 main, %u splits", splits);
      time(name, [&](size_t s) { rt::axis_columns_dense_kernel<Dense2P512><<<splits, 512>>>(params(s, splits)); });
      snprintf(name, sizeof name, "ticket_tiles 256 unroll 4, %u splits", splits);
      time(name, [&](size_t s) { rt::axis_columns_dense_kernel<DenseTT><<<splits, 256>>>(params(s, splits)); });
      rt::axis_columns_dense_kernel<DenseTT><<<splits, 256>>>(params(0, splits)); check(name);
      snprintf(name, sizeof name, "ticket_tiles 256 unroll 8, %u splits", splits);
      time(name, [&](size_t s) { rt::axis_columns_dense_kernel<DenseTT8><<<splits, 256>>>(params(s, splits)); });
      rt::axis_columns_dense_kernel<DenseTT8><<<splits, 256>>>(params(0, splits)); check(name);
    }
  }
  return 0;
}
