#include "reduce_tune/tuner/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "reduce_tune/engine/cuda_api.h"

namespace reduce_tune::tuner {

int rotation_count(std::uint64_t input_bytes, std::int64_t l2_bytes, std::uint64_t available_bytes) {
  if (input_bytes == 0 || l2_bytes <= 0) return 1;
  const auto l2 = static_cast<std::uint64_t>(l2_bytes);
  if (input_bytes * 4 < l2) return 1;  // timed L2-resident
  std::uint64_t count = (4 * l2 + input_bytes - 1) / input_bytes + 1;
  count = std::min<std::uint64_t>(count, std::max<std::uint64_t>(1, available_bytes / input_bytes));
  return static_cast<int>(std::clamp<std::uint64_t>(count, 1, 64));
}

void median_and_spread(std::vector<double> s, double* median, double* spread) {
  std::sort(s.begin(), s.end());
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(s.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, s.size() - 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
  };
  *median = quantile(0.5);
  *spread = *median > 0 ? (quantile(0.75) - quantile(0.25)) / *median : 0;
}

bool abandon_after_first_call(double first_ms, const TimingPolicy& policy) {
  return policy.best_ms > 0 && first_ms >= policy.abandon_min_call_ms &&
         first_ms > policy.abandon_call_factor * policy.best_ms;
}

TimingStep timing_step(const std::vector<double>& samples, double elapsed_seconds, const TimingPolicy& policy) {
  const int n = static_cast<int>(samples.size());
  if (policy.best_ms > 0 && n >= 2 &&
      *std::min_element(samples.begin(), samples.end()) > policy.abandon_factor * policy.best_ms)
    return TimingStep::abandoned;
  if (n < policy.min_samples) return TimingStep::more;
  double median = 0, spread = 0;
  median_and_spread(samples, &median, &spread);
  if (spread <= policy.target_spread || n >= policy.max_samples || elapsed_seconds >= policy.max_seconds)
    return TimingStep::done;
  return TimingStep::more;
}

TimingResult time_reduction(const std::function<void(int slice)>& enqueue, int rotations,
                            cudaStream_t stream, const TimingPolicy& policy) {
  Event start, stop;
  int slice = 0;
  auto next = [&] {
    enqueue(slice);
    slice = (slice + 1) % std::max(rotations, 1);
  };
  for (int i = 0; i < policy.warmup_calls; ++i) next();
  // One timed call sizes the batch.
  RT_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  next();
  RT_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  RT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float first_ms = 0;
  RT_CUDA_CHECK(cudaEventElapsedTime(&first_ms, start.get(), stop.get()));
  TimingResult result;
  if (abandon_after_first_call(first_ms, policy)) {
    result.median_ms = first_ms;
    result.repetitions = result.samples = 1;
    result.abandoned = true;
    return result;
  }
  const int batch = std::clamp(static_cast<int>(std::ceil(policy.min_sample_ms / std::max(first_ms, 1e-4f))), 1, 512);

  std::vector<double> samples;
  const auto began = std::chrono::steady_clock::now();
  while (true) {
    RT_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int i = 0; i < batch; ++i) next();
    RT_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    RT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    RT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    samples.push_back(static_cast<double>(ms) / batch);
    result.repetitions += batch;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const TimingStep step = timing_step(samples, elapsed, policy);
    if (step == TimingStep::more) continue;
    median_and_spread(samples, &result.median_ms, &result.spread);
    result.abandoned = step == TimingStep::abandoned;
    break;
  }
  result.samples = static_cast<int>(samples.size());
  return result;
}

}  // namespace reduce_tune::tuner
