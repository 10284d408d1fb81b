// The host's floor under any call a bench times: an empty kernel launched back to back,
// timed as the reductions are (the median of three timings). Shared by both benches.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "reduce_tune/tuner/measure.h"

namespace reduce_tune_bench {

__global__ void empty_kernel() {}

inline double empty_launch_us(cudaStream_t stream, const reduce_tune::tuner::TimingPolicy& policy) {
  auto launch = [&](int) { empty_kernel<<<1, 32, 0, stream>>>(); };
  std::vector<double> medians;
  for (int round = 0; round < 3; ++round)
    medians.push_back(reduce_tune::tuner::time_reduction(launch, 1, stream, policy).median_ms);
  std::sort(medians.begin(), medians.end());
  return medians[1] * 1e3;
}

}  // namespace reduce_tune_bench
