// Strategy `interleaved` — Harris reduce2 (sequential addressing), "reduceInterleaved".
// What changes from `neighbored_less`: the stride starts at half the block and halves,
// so active threads read consecutive words (no bank conflicts) and stay packed. Still
// one element per thread, so half the threads idle from the first step.
// With more items per thread this one code path is also first_add (reduce3, 2 items)
// and unroll_blocks (reduceUnrolling4/8, 4 or 8 items): rows of the engine's strategy table.
#pragma once
#include "rt/block_reduce.cuh"
#include "rt/gather.cuh"

namespace rt {
template <class C> struct StrategyInterleaved {
  typedef typename C::Acc A;
  static __device__ __forceinline__ A gather(const typename C::In* in, u64 n) {
    return gather_striped<typename C::Op, typename C::In, A, C::kBlock, C::kItems, C::kUnroll, C::kLoad>(in, n);
  }
  static __device__ __forceinline__ A combine(A v, A* smem) {
    return tree_interleaved<typename C::Op, A, C::kBlock, false, -1>(v, smem);
  }
};
}  // namespace rt
