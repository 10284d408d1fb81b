// Thread-level gathering: each thread folds its share of the input into UNROLL
// independent accumulators, tile by tile, then into one value. A tile is the
// BLOCK * ITEMS * VW elements one block consumes per step; block b takes tiles
// b, b + gridDim.x, ... (one tile per block when the grid covers the input, the classic
// shape; a grid-stride loop when the grid is smaller). All indices are 64-bit.
//
// Loads within a tile are striped: load j of thread t reads vector j*BLOCK + t, so a
// warp's loads are contiguous. All ITEMS loads of a full tile are issued before any is
// combined (that is the classic "unrolling": several loads in flight per thread).
#pragma once
#include "rt/load.cuh"
#include "rt/ops.cuh"

namespace rt {

template <class Op, class A, int UNROLL>
struct Accumulators {
  A acc[UNROLL];
  __device__ __forceinline__ Accumulators() {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = Op::template identity<A>();
  }
  __device__ __forceinline__ void add(int k, A v) {
    acc[k % UNROLL] = Op::template apply<A>(acc[k % UNROLL], v);
  }
  __device__ __forceinline__ A total() const {
    A t = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; ++u) t = Op::template apply<A>(t, acc[u]);
    return t;
  }
};

// Scalar (or already aligned vector) loads over `count` units of V, VW elements each.
template <class Op, class T, class A, int BLOCK, int ITEMS, int VW, int UNROLL, int LOAD>
__device__ __forceinline__ void gather_tiles(const typename VectorOf<T, VW>::type* in, u64 count,
                                             Accumulators<Op, A, UNROLL>& accs) {
  typedef typename VectorOf<T, VW>::type V;
  constexpr u64 kTile = (u64)BLOCK * ITEMS;
  const u64 num_tiles = (count + kTile - 1) / kTile;
  const unsigned tid = threadIdx.x;
  for (u64 tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    if (RT_MUTATION == 1 && num_tiles > 1 && tile == num_tiles / 2) continue;
    const u64 base = tile * kTile + tid;
    if ((tile + 1) * kTile <= count) {
      V v[ITEMS];
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) v[j] = load_hinted<LOAD>(in + base + (u64)j * BLOCK);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j)
#pragma unroll
        for (int e = 0; e < VW; ++e) accs.add(j * VW + e, (A)vector_element<T>(v[j], e));
    } else {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const u64 i = base + (u64)j * BLOCK;
        if (i < count) {
          const V v = load_hinted<LOAD>(in + i);
#pragma unroll
          for (int e = 0; e < VW; ++e) accs.add(j * VW + e, (A)vector_element<T>(v, e));
        }
      }
    }
  }
}

template <class Op, class T, class A, int BLOCK, int ITEMS, int UNROLL, int LOAD>
__device__ __forceinline__ A gather_striped(const T* in, u64 n) {
  Accumulators<Op, A, UNROLL> accs;
  gather_tiles<Op, T, A, BLOCK, ITEMS, 1, UNROLL, LOAD>(in, n, accs);
  return accs.total();
}

// Vector loads of VW elements (16 bytes at most). The input need only be aligned to its
// element: the head up to the first VW-element boundary and the tail after the last
// whole vector (fewer than VW elements each) are peeled off and read by block 0.
template <class Op, class T, class A, int BLOCK, int ITEMS, int VW, int UNROLL, int LOAD>
__device__ __forceinline__ A gather_vectorized(const T* in, u64 n) {
  typedef typename VectorOf<T, VW>::type V;
  const u64 misalignment = ((u64)(size_t)in / sizeof(T)) % VW;
  u64 head = misalignment == 0 ? 0 : VW - misalignment;
  if (head > n) head = n;
  const u64 vectors = (n - head) / VW;
  const u64 tail = n - head - vectors * VW;
  Accumulators<Op, A, UNROLL> accs;
  if (blockIdx.x == 0) {
    const unsigned tid = threadIdx.x;
    if (RT_MUTATION != 3 && tid < head) accs.add(0, (A)load_hinted<LOAD>(in + tid));
    if (tid < tail) accs.add(0, (A)load_hinted<LOAD>(in + head + vectors * VW + tid));
  }
  gather_tiles<Op, T, A, BLOCK, ITEMS, VW, UNROLL, LOAD>(reinterpret_cast<const V*>(in + head),
                                                         vectors, accs);
  return accs.total();
}

}  // namespace rt
