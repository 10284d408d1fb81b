// Strategy `unroll_last_warp` — Harris reduce4, "reduceUnrollWarps8". What changes from
// `unroll_blocks`: the tree stops at 64 values and warp 0 finishes without block
// barriers. The classic did this with `volatile` shared memory and implicit warp
// lock-step, a race since Volta; here the last warp is a warp reduction (smem with
// __syncwarp between steps, shuffle, or redux.sync), chosen by `warp`.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyUnrollLastWarp {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_striped<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) {
    return tree_interleaved<typename C::Op, A, C::kBlock, false, C::kWarp>(v, smem);
  }
};
}  // namespace rt
