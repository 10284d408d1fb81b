// Strategy `neighbored` — Harris reduce0, "reduceNeighbored" in Professional CUDA C.
// One element per thread, then a shared-memory tree over neighbouring pairs where
// `tid % (2*s) == 0` chooses the active threads: half of each warp idles at the first
// step and warps diverge at every step. Kept as the baseline of the lineage.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyNeighbored {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_striped<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) { return tree_neighbored<typename C::Op>(v, smem); }
};
}  // namespace rt
