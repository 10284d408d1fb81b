// Strategy `multi_element` — Harris reduce6 (algorithm cascading). What changes from
// `complete_unroll`: a grid sized to the machine rather than the input (grid policy
// sm*K), each thread folding many elements in a grid-stride loop, optionally into
// several independent accumulators (`unroll`), before the unrolled tree and last warp.
#pragma once
#include "rt/strategies/complete_unroll.cuh"

namespace rt {
template <class C> struct StrategyMultiElement : StrategyCompleteUnroll<C> {};
}  // namespace rt
