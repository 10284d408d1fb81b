// Strategy `complete_unroll` — Harris reduce5, "reduceCompleteUnroll". What changes from
// `unroll_last_warp`: the block size is a compile-time constant, so the tree loop is
// fully unrolled and the dead steps for small blocks disappear.
// With a machine-sized grid, many items per thread and several accumulators this code
// path is also multi_element (reduce6, algorithm cascading): a row of the engine's
// strategy table.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyCompleteUnroll {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_striped<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) {
    return tree_interleaved<typename C::Op, A, C::kBlock, true, C::kWarp>(v, smem);
  }
};
}  // namespace rt
