// Probe (not part of the build; no GPU): the host time of axis_reorder for a permuted view
// (a bf16 mean's [2,7,3541,33] permuted (3,2,0,1), reduced over (1,2), from the random
// sweep) against a hit of the runtime's per-thread AxisReorderCache, copied out (the
// runtime reads it in place, so this is its cost or more). Build against a build folder (one line):
//   g++ -O2 -std=c++20 -Iengine/include -Icore/include -I/usr/local/cuda/include
//     bench/probes/axis_reorder_cache_probe.cpp build/engine/libreduce_tune_engine.a
//     build/core/libreduce_tune_core.a -L/usr/local/cuda/lib64 -lcudart_static -lnvrtc -ldl -lpthread -lrt -o reorder_probe
#include <chrono>
#include <cstdio>
#include <optional>

#include "reduce_tune/engine/axis.h"
#include "reduce_tune/tensor.h"
using namespace reduce_tune;
int main() {
  const std::int64_t extents[4] = {33, 3541, 2, 7}, strides[4] = {1, 33, 817971, 116853};
  const TensorDesc view = TensorDesc::strided(extents, strides, 4);
  const AxisList axes{1, 2};
  const CanonicalAxes shape = canonicalize(view, axes).axes;
  const int n = 400000;
  volatile std::uint64_t sink = 0;
  AxisReorderCache cache;
  auto us = [&](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / n; };
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      const std::optional<AxisReorder> r = axis_reorder(view, axes, shape);
      sink = sink + (r ? r->stage1_shape.outputs : 0);
    }
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      const std::optional<AxisReorder> r = cache.get(view, axes, shape);
      sink = sink + (r ? r->stage1_shape.outputs : 0);
    }
    const auto t2 = std::chrono::steady_clock::now();
    std::printf("axis_reorder %.3f us a call; a cache hit, copied out, %.3f us (hits %llu, misses %llu)\n",
                us(t0, t1), us(t1, t2), static_cast<unsigned long long>(cache.hits()),
                static_cast<unsigned long long>(cache.misses()));
  }
}
