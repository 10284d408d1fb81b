// Probe (not part of the build): what a one-launch reduction of a small input costs,
// back to back and inside a CUDA graph, against an empty launch, for four ways to finish
// it: a last-block ticket taken after __threadfence (the kernels before commit a620a2d),
// a ticket taken with one acq_rel atomic (the kernels since), a thread-block cluster
// reducing through distributed shared memory, and one block. The H100 output that chose
// the acq_rel ticket is h100-2026-11-22h-small-probe.log in docs/bench/2026-11-logs.tar.xz.
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/probes/small_launch_probe.cu -o small_probe
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1);} } while (0)

__global__ void empty_kernel() {}

template <int B>
__device__ float block_sum(float v, float* sm) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
  if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < B / 32 ? sm[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
  }
  return v;
}

template <int B>
__device__ float gather(const float* in, unsigned n) {
  float a = 0, b = 0;
  const float4* v4 = reinterpret_cast<const float4*>(in);
  unsigned n4 = n / 4;
  unsigned i = blockIdx.x * B + threadIdx.x, stride = gridDim.x * B;
  for (; i + stride < n4; i += 2 * stride) {
    float4 x = __ldg(v4 + i), y = __ldg(v4 + i + stride);
    a += (x.x + x.y) + (x.z + x.w);
    b += (y.x + y.y) + (y.z + y.w);
  }
  if (i < n4) { float4 x = __ldg(v4 + i); a += (x.x + x.y) + (x.z + x.w); }
  for (unsigned j = n4 * 4 + blockIdx.x * B + threadIdx.x; j < n; j += stride) a += in[j];
  return a + b;
}

template <int B, int MODE>
__global__ void __launch_bounds__(B) ticket_kernel(const float* in, unsigned n, float* partials, unsigned* ticket, float* out) {
  __shared__ float sm[32];
  __shared__ bool last;
  float v = block_sum<B>(gather<B>(in, n), sm);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    unsigned t;
    if (MODE == 0) {
      __threadfence();
      t = atomicAdd(ticket, 1u);
    } else {
      asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(ticket) : "memory");
    }
    last = t == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  if (MODE == 0) __threadfence();
  float s = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += B) s += __ldcg(partials + i);
  __syncthreads();
  s = block_sum<B>(s, sm);
  if (threadIdx.x == 0) { *out = s; *ticket = 0; }
}

template <int B>
__global__ void __launch_bounds__(B) cluster_kernel(const float* in, unsigned n, float* out) {
  __shared__ float sm[32];
  __shared__ float mine;
  float v = block_sum<B>(gather<B>(in, n), sm);
  if (threadIdx.x == 0) mine = v;
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
  if (cl.block_rank() == 0 && threadIdx.x < 32) {
    float s = 0;
    for (unsigned r = threadIdx.x; r < cl.num_blocks(); r += 32) s += *cl.map_shared_rank(&mine, r);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
    if (threadIdx.x == 0) *out = s;
  }
  cl.sync();
}

// The median over `rounds` of the event-timed `body`, per kernel (`per_round` of them).
template <class F>
double median_event_us(cudaStream_t s, int rounds, int per_round, F body) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<double> v;
  for (int r = 0; r < rounds; ++r) {
    CK(cudaEventRecord(a, s));
    body();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    v.push_back(ms * 1e3 / per_round);
  }
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Launches back to back: host and GPU time together, as a caller sees them.
template <class F>
double time_us(cudaStream_t s, F launch) {
  for (int i = 0; i < 200; ++i) launch();
  return median_event_us(s, 15, 500, [&] { for (int i = 0; i < 500; ++i) launch(); });
}

// Same launches captured into a graph: the GPU's own time per kernel, with no host cost.
template <class F>
double graph_us(cudaStream_t s, F launch) {
  cudaGraph_t g; cudaGraphExec_t e;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 200; ++i) launch();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&e, g, 0));
  CK(cudaGraphLaunch(e, s)); CK(cudaStreamSynchronize(s));
  const double us = median_event_us(s, 9, 200, [&] { CK(cudaGraphLaunch(e, s)); });
  CK(cudaGraphExecDestroy(e)); CK(cudaGraphDestroy(g));
  return us;
}

template <int B, int MODE>
void run_ticket(cudaStream_t s, const float* in, unsigned n, float* partials, unsigned* ticket, float* out, int grid, double ref) {
  auto l = [&] { ticket_kernel<B, MODE><<<grid, B, 0, s>>>(in, n, partials, ticket, out); };
  double t = time_us(s, l), g = graph_us(s, l);
  float h; CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
  printf("n=%7u ticket%s B=%4d grid=%3d: %.2f us back to back, %.2f us in a graph  %s\n", n, MODE ? "-acqrel" : "-fence ", B, grid, t, g,
         h == (float)ref ? "ok" : "WRONG");
}

template <int B>
void run_cluster(cudaStream_t s, const float* in, unsigned n, float* out, int csize, double ref) {
  auto kern = cluster_kernel<B>;
  if (csize > 8) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  auto l = [&] {
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(csize); c.blockDim = dim3(B); c.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = csize; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    c.attrs = at; c.numAttrs = 1;
    CK(cudaLaunchKernelEx(&c, kern, in, n, out));
  };
  double t = time_us(s, l), g = graph_us(s, l);
  float h; CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
  printf("n=%7u cluster       B=%4d size=%3d: %.2f us back to back, %.2f us in a graph  %s\n", n, B, csize, t, g, h == (float)ref ? "ok" : "WRONG");
}

int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const unsigned maxn = 1u << 18;
  std::vector<float> h(maxn);
  for (unsigned i = 0; i < maxn; ++i) h[i] = (float)(i % 7);
  float *in, *partials, *out; unsigned* ticket;
  CK(cudaMalloc(&in, maxn * 4)); CK(cudaMalloc(&partials, 4096 * 4)); CK(cudaMalloc(&out, 4)); CK(cudaMalloc(&ticket, 4));
  CK(cudaMemcpy(in, h.data(), maxn * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(ticket, 0, 4));
  {
    auto l = [&] { empty_kernel<<<1, 32, 0, s>>>(); };
    printf("empty: %.2f us back to back, %.2f us in a graph\n", time_us(s, l), graph_us(s, l));
  }
  for (unsigned n : {4096u, 16384u, 65536u, 65536u + 4097u, 262144u}) {
    double ref = 0; for (unsigned i = 0; i < n; ++i) ref += h[i];
    for (int grid : {8, 16, 32, 66, 132}) {
      run_ticket<256, 0>(s, in, n, partials, ticket, out, grid, ref);
      run_ticket<256, 1>(s, in, n, partials, ticket, out, grid, ref);
      run_ticket<512, 1>(s, in, n, partials, ticket, out, grid, ref);
    }
    run_ticket<1024, 0>(s, in, n, partials, ticket, out, 1, ref);
    for (int c : {2, 4, 8, 16}) {
      run_cluster<256>(s, in, n, out, c, ref);
      run_cluster<512>(s, in, n, out, c, ref);
      run_cluster<1024>(s, in, n, out, c, ref);
    }
  }
  return 0;
}
