// Strategy `vectorized` — past the classic lineage. What changes from `warp_shuffle`:
// 16-byte (or 8-byte) vector loads with the unaligned head and tail peeled, so any
// element offset works; several independent accumulators per thread; loads with a cache
// hint. With a single-pass policy this is the one-launch kernel for all sizes.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyVectorized {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_vectorized<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kVec, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) {
    return block_warp_reductions<typename C::Op, A, C::kBlock, C::kWarp>(v, smem);
  }
};
}  // namespace rt
