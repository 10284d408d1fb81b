// The __global__ entry points, thin wrappers over a strategy (gather + block combine)
// and the pass structure:
//   reduce_kernel    every block reduces its tiles to one partial, then, by `passes`:
//                    two_pass: writes partials[block]; finalize_kernel runs next;
//                    single_pass_ticket: writes partials[block], takes a ticket; the
//                      last block reduces all partials in a fixed order (deterministic):
//                      warp 0 alone, with shuffles, for at most 32 partials;
//                    single_pass_atomic: folds its partial into one accumulator
//                      atomically; the last block (by ticket) writes the result.
//                    With one block, the block writes the result directly.
//   finalize_kernel  one block reduces `count` partials into the output (two_pass).
//                    Both are programmatic dependent launches on sm_90 and later
//                    (common.cuh).
// A workspace starts with its ticket at 0 and its accumulators at their identities (the
// engine copies that image in when it makes one); single-pass kernels leave it so.
#pragma once
#include "rt/atomics.cuh"
#include "rt/strategies/complete_unroll.cuh"
#include "rt/strategies/interleaved.cuh"
#include "rt/strategies/neighbored.cuh"
#include "rt/strategies/neighbored_less.cuh"
#include "rt/strategies/unroll_last_warp.cuh"
#include "rt/strategies/vectorized.cuh"
#include "rt/strategies/warp_shuffle.cuh"

namespace rt {

template <class C, int S> struct StrategyOf;
template <class C> struct StrategyOf<C, strategy_neighbored> { typedef StrategyNeighbored<C> type; };
template <class C> struct StrategyOf<C, strategy_neighbored_less> { typedef StrategyNeighboredLess<C> type; };
template <class C> struct StrategyOf<C, strategy_interleaved> { typedef StrategyInterleaved<C> type; };
template <class C> struct StrategyOf<C, strategy_unroll_last_warp> { typedef StrategyUnrollLastWarp<C> type; };
template <class C> struct StrategyOf<C, strategy_complete_unroll> { typedef StrategyCompleteUnroll<C> type; };
template <class C> struct StrategyOf<C, strategy_warp_shuffle> { typedef StrategyWarpShuffle<C> type; };
template <class C> struct StrategyOf<C, strategy_vectorized> { typedef StrategyVectorized<C> type; };

// One instantiation's compile-time configuration: the host's ReduceConfig and types.
template <class OpT, class InT, class AccT, class OutT, int STRATEGY, int BLOCK, int ITEMS,
          int VEC, int UNROLL, int WARP, int PASSES, int LOAD>
struct Config {
  typedef OpT Op;
  typedef InT In;
  typedef AccT Acc;
  typedef OutT Out;
  static constexpr int kStrategy = STRATEGY;
  static constexpr int kBlock = BLOCK;
  static constexpr int kItems = ITEMS;
  static constexpr int kVec = VEC;
  static constexpr int kUnroll = UNROLL;
  static constexpr int kWarp = WARP;
  static constexpr int kPasses = PASSES;
  static constexpr int kLoad = LOAD;
  // Elements one block consumes per tile; the host sizes grids with the same product.
  static constexpr unsigned long long kTileElements = (unsigned long long)BLOCK * ITEMS * VEC;
  static constexpr int kTempElements = BlockTemp<BLOCK>::kElements;
  typedef typename StrategyOf<Config, STRATEGY>::type Strategy;

  static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0, "block must be 32..1024, a multiple of 32");
  static_assert(VEC == 1 || VEC * sizeof(InT) <= 16, "vector loads are at most 16 bytes");
  static_assert(UNROLL >= 1 && ITEMS >= 1, "items and unroll are at least 1");
};

// Kernel arguments, passed as one struct (one pointer in cudaLaunchKernelExC's array):
// rt::Params is defined at the top of every generated source from the host's one list
// of its fields (REDUCE_TUNE_KERNEL_PARAMS in the engine's launch.h).

template <class C>
__device__ __forceinline__ typename C::Acc reduce_partials(const typename C::Acc* partials,
                                                           unsigned count,
                                                           typename C::Acc* smem) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  A v = Op::template identity<A>();
  for (unsigned i = threadIdx.x; i < count; i += C::kBlock) v = Op::template apply<A>(v, __ldcg(partials + i));
  return C::Strategy::combine(v, smem);
}

template <class C>
__global__ void __launch_bounds__(C::kBlock) reduce_kernel(Params p) {
  typedef typename C::Acc A;
  typedef typename C::Op Op;
  __shared__ A smem[C::kTempElements];
  __shared__ bool is_last_block;
  begin_after_previous_grid(true, C::kPasses == passes_two_pass);  // common.cuh

  const typename C::In* in = static_cast<const typename C::In*>(p.in);
  u64 n = p.n;
  // Mutations 2 and 3 (common.cuh): one element fewer at the end, or at the start.
  if (RT_MUTATION == 2 && n > 0) n -= 1;
  if (RT_MUTATION == 3 && C::kStrategy != strategy_vectorized && n > 0) {
    in += 1;
    n -= 1;
  }
  A v = C::Strategy::gather(in, n);
  v = C::Strategy::combine(v, smem);

  typename C::Out* out = static_cast<typename C::Out*>(p.out);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = epilogue<Op, typename C::Out>(v, p.n);
    return;
  }
  A* partials = static_cast<A*>(p.partials);
  if (C::kPasses == passes_two_pass) {
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
    return;
  }
  // The finish by ticket. Where the last block's work fits one warp (the atomic
  // accumulator, or at most 32 partials), the other warps are done here and warp 0
  // finishes with shuffles: no block barrier, no shared flag.
  if (C::kPasses == passes_single_pass_atomic || gridDim.x <= 32) {
    if (threadIdx.x >= 32) return;
    unsigned last = 0;
    if (threadIdx.x == 0) {
      if (C::kPasses == passes_single_pass_atomic)
        AtomicCombine<Op, A>::apply(static_cast<A*>(p.accumulator), v);
      else
        partials[blockIdx.x] = v;
      last = take_ticket(p.ticket) == gridDim.x - 1;
    }
    __syncwarp();  // orders lane 0's acquire before the other lanes' reads
    if (!__shfl_sync(kFullMask, last, 0)) return;
    if (C::kPasses == passes_single_pass_atomic) {
      if (threadIdx.x == 0) {
        const A total = atomic_take(static_cast<A*>(p.accumulator), Op::template identity<A>());
        *out = epilogue<Op, typename C::Out>(total, p.n);
        *p.ticket = 0;
      }
      return;
    }
    A w = threadIdx.x < gridDim.x ? __ldcg(partials + threadIdx.x) : Op::template identity<A>();
    w = warp_reduce_shuffle<Op>(w);
    if (threadIdx.x == 0) {
      *out = epilogue<Op, typename C::Out>(w, p.n);
      *p.ticket = 0;
    }
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    is_last_block = take_ticket(p.ticket) == gridDim.x - 1;
  }
  // Thread 0's acquire, then this barrier, orders every partial before the reads below.
  __syncthreads();
  if (!is_last_block) return;
  v = reduce_partials<C>(partials, gridDim.x, smem);
  if (threadIdx.x == 0) {
    *out = epilogue<Op, typename C::Out>(v, p.n);
    *p.ticket = 0;
  }
}

template <class C>
__global__ void __launch_bounds__(C::kBlock) finalize_kernel(Params p, unsigned count) {
  typedef typename C::Acc A;
  __shared__ A smem[C::kTempElements];
  begin_after_previous_grid(false, true);  // reduce_kernel's partials (common.cuh)
  const A v = reduce_partials<C>(static_cast<const A*>(p.partials), count, smem);
  if (threadIdx.x == 0)
    *static_cast<typename C::Out*>(p.out) = epilogue<typename C::Op, typename C::Out>(v, p.n);
}

}  // namespace rt
