// Warp-level reductions of 32 values to one (valid in lane 0), three implementations:
//  - shuffle: __shfl_down_sync butterfly in registers (the warp-shuffle lineage);
//  - smem: the classic "unrolled last warp" in shared memory, made race-free for
//    independent thread scheduling (Volta+): every step is separated by __syncwarp
//    instead of relying on volatile and implicit lock-step execution;
//  - redux: the sm_80 redux.sync instruction, for 32-bit integer add/min/max.
#pragma once
#include "rt/ops.cuh"

namespace rt {

constexpr unsigned kFullMask = 0xffffffffu;

template <class Op, class A>
__device__ __forceinline__ A warp_reduce_shuffle(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = Op::template apply<A>(v, __shfl_down_sync(kFullMask, v, offset));
  return v;
}

// `scratch` is 32 elements owned by this warp. In the step of width `offset`, lanes
// below it read slots [offset, 2*offset) and write slots [0, offset): disjoint, so one
// __syncwarp after the writes orders each step before the next.
template <class Op, class A>
__device__ __forceinline__ A warp_reduce_smem(A v, A* scratch, unsigned lane) {
  scratch[lane] = v;
  __syncwarp();
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    if (lane < offset) {
      v = Op::template apply<A>(v, scratch[lane + offset]);
      scratch[lane] = v;
    }
    __syncwarp();
  }
  return v;
}

// redux.sync exists for 32-bit integers and add/min/max only; the host rejects other
// combinations before compiling, this fallback keeps every instantiation well-formed.
template <class Op, class A> struct Redux {
  static __device__ __forceinline__ A reduce(A v) { return warp_reduce_shuffle<Op>(v); }
};
#if __CUDA_ARCH__ >= 800
template <> struct Redux<SumOp, int> {
  static __device__ __forceinline__ int reduce(int v) { return __reduce_add_sync(kFullMask, v); }
};
template <> struct Redux<SumOp, unsigned int> {
  static __device__ __forceinline__ unsigned int reduce(unsigned int v) {
    return __reduce_add_sync(kFullMask, v);
  }
};
template <> struct Redux<MinOp, int> {
  static __device__ __forceinline__ int reduce(int v) { return __reduce_min_sync(kFullMask, v); }
};
template <> struct Redux<MinOp, unsigned int> {
  static __device__ __forceinline__ unsigned int reduce(unsigned int v) {
    return __reduce_min_sync(kFullMask, v);
  }
};
template <> struct Redux<MaxOp, int> {
  static __device__ __forceinline__ int reduce(int v) { return __reduce_max_sync(kFullMask, v); }
};
template <> struct Redux<MaxOp, unsigned int> {
  static __device__ __forceinline__ unsigned int reduce(unsigned int v) {
    return __reduce_max_sync(kFullMask, v);
  }
};
#endif

template <int WARP, class Op, class A>
__device__ __forceinline__ A warp_reduce(A v, A* scratch, unsigned lane) {
  if (WARP == warp_smem) return warp_reduce_smem<Op>(v, scratch, lane);
  if (WARP == warp_redux) return Redux<Op, A>::reduce(v);
  return warp_reduce_shuffle<Op>(v);
}

}  // namespace rt
