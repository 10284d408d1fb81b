// Strategy `first_add` — Harris reduce3 ("first add during global load"),
// "reduceUnrolling2". What changes from `interleaved`: each thread loads two elements a
// block apart and adds them before the tree (items = 2), so half the blocks cover the
// same input and no thread idles at the first step.
#pragma once
#include "rt/strategies/interleaved.cuh"

namespace rt {
template <class C> struct StrategyFirstAdd : StrategyInterleaved<C> {};
}  // namespace rt
