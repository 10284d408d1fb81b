// Strategy `unroll_blocks` — "reduceUnrolling4/8" in Professional CUDA C. What changes
// from `first_add`: each thread block consumes 4 or 8 data blocks (items = 4 or 8), all
// loads issued before the first add, so more bytes are in flight per thread.
#pragma once
#include "rt/strategies/interleaved.cuh"

namespace rt {
template <class C> struct StrategyUnrollBlocks : StrategyInterleaved<C> {};
}  // namespace rt
