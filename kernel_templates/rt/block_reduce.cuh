// Block-level reductions: BLOCK per-thread values to one, valid in thread 0.
// Each starts with a barrier so that the same shared memory can be reused by a second
// reduction in the same kernel (the last block of a single-pass reduction does that).
//
// Shared-memory trees, the classic lineage (each a step of Harris' reduce0..reduce5):
//   tree_neighbored       reduce0: neighbour pairs, `tid % (2*s)` picks the active
//                         threads, so every warp diverges at every step.
//   tree_neighbored_less  reduce1: strided index 2*s*tid keeps active threads packed;
//                         shared-memory bank conflicts remain.
//   tree_interleaved      reduce2: sequential addressing, the stride halves; no
//                         divergence within warps until fewer than 32 remain.
// tree_interleaved optionally stops at 64 values and hands them to a warp reduction
// (reduce4's unrolled last warp); the loop bound is the run-time blockDim.x (reduce4)
// or the compile-time BLOCK, fully unrolled (reduce5).
// block_warp_reductions: each warp reduces its 32 values, then warp 0 reduces the
// warp results (the warp-shuffle lineage; CUB's BLOCK_REDUCE_WARP_REDUCTIONS).
#pragma once
#include "rt/warp_reduce.cuh"

namespace rt {

// Shared memory a block reduction needs, in accumulator elements.
template <int BLOCK> struct BlockTemp {
  static constexpr int kElements = BLOCK + 64;  // values or warp scratch, plus warp totals
};

template <class Op, class A>
__device__ __forceinline__ A tree_neighbored(A v, A* smem) {
  const unsigned tid = threadIdx.x;
  __syncthreads();
  smem[tid] = v;
  __syncthreads();
#pragma unroll 1
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) smem[tid] = Op::template apply<A>(smem[tid], smem[tid + s]);
    __syncthreads();
  }
  return smem[0];
}

template <class Op, class A>
__device__ __forceinline__ A tree_neighbored_less(A v, A* smem) {
  const unsigned tid = threadIdx.x;
  __syncthreads();
  smem[tid] = v;
  __syncthreads();
#pragma unroll 1
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) smem[index] = Op::template apply<A>(smem[index], smem[index + s]);
    __syncthreads();
  }
  return smem[0];
}

// COMPILE_TIME_BOUND: loop over the template BLOCK, unrolled (reduce5), else over
// blockDim.x at run time (reduce2..4). LAST_WARP < 0: the tree runs to one value;
// otherwise it stops at 64 and warp 0 finishes with warp reduction LAST_WARP.
template <class Op, class A, int BLOCK, bool COMPILE_TIME_BOUND, int LAST_WARP>
__device__ __forceinline__ A tree_interleaved(A v, A* smem) {
  const unsigned tid = threadIdx.x;
  const unsigned bound = COMPILE_TIME_BOUND ? (unsigned)BLOCK : blockDim.x;
  const unsigned stop = LAST_WARP < 0 ? 0u : 32u;
  __syncthreads();
  smem[tid] = v;
  __syncthreads();
  if (COMPILE_TIME_BOUND) {
#pragma unroll
    for (unsigned s = BLOCK / 2; s > stop; s >>= 1) {
      if (tid < s) smem[tid] = Op::template apply<A>(smem[tid], smem[tid + s]);
      __syncthreads();
    }
  } else {
#pragma unroll 1
    for (unsigned s = bound / 2; s > stop; s >>= 1) {
      if (tid < s) smem[tid] = Op::template apply<A>(smem[tid], smem[tid + s]);
      __syncthreads();
    }
  }
  if (LAST_WARP < 0) return smem[0];
  A w = Op::template identity<A>();
  if (tid < 32) {
    w = bound >= 64 ? Op::template apply<A>(smem[tid], smem[tid + 32]) : smem[tid];
    // Separate scratch past the tree's values: lanes still read smem[tid + 32].
    w = warp_reduce<LAST_WARP < 0 ? warp_shuffle : LAST_WARP, Op>(w, smem + BLOCK, tid);
  }
  return w;
}

template <class Op, class A, int BLOCK, int WARP>
__device__ __forceinline__ A block_warp_reductions(A v, A* smem) {
  constexpr int kWarps = BLOCK / 32;
  const unsigned tid = threadIdx.x;
  const unsigned lane = tid & 31u;
  const unsigned warp = tid >> 5;
  A* warp_totals = smem + BLOCK;
  __syncthreads();
  v = warp_reduce<WARP, Op>(v, smem + warp * 32, lane);
  if (kWarps == 1) return v;
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (unsigned)kWarps ? warp_totals[lane] : Op::template identity<A>();
    v = warp_reduce<WARP, Op>(v, smem, lane);
  }
  return v;
}

}  // namespace rt
