// Strategy `neighbored_less` — Harris reduce1, "reduceNeighboredLess". What changes from
// `neighbored`: the active threads are packed at the front (index = 2*s*tid), so whole
// warps retire instead of diverging; the strided index now causes bank conflicts.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyNeighboredLess {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_striped<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) { return tree_neighbored_less<typename C::Op>(v, smem); }
};
}  // namespace rt
