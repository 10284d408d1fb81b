// Strategy `warp_shuffle` — the warp-shuffle reduction (Kepler and later). What changes
// from `multi_element`: no shared-memory tree at all; each warp reduces in registers and
// only the 32 warp totals pass through shared memory, with two block barriers in all.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyWarpShuffle {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_striped<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) {
    return block_warp_reductions<typename C::Op, A, C::kBlock, C::kWarp>(v, smem);
  }
};
}  // namespace rt
