// Timing one candidate on the GPU, as design section 7 says: CUDA events around whole
// reductions (every pass; the kernels need no output initialisation), warm-up first,
// samples until their spread is under the target or a cap, the median stored with its
// spread and the repetition count.
//
// Small reductions take a few microseconds, below the events' resolution, so one sample
// times a batch of back-to-back calls and divides. By default the batch is enqueued
// behind a hold kernel that spins until the host has enqueued all of it (hold_queue):
// the device then runs the calls back to back, and a sample is the device's time per
// call, not the pace at which the host happens to launch (a few microseconds per call,
// slower while compile threads share the host), which hid the differences between
// small-size candidates and made two runs disagree. The bench times a caller's view,
// host pace included (hold_queue = false).
//
// L2: an input smaller than a quarter of L2 is timed L2-resident, as repeated calls on
// the same data see it; larger inputs rotate among disjoint slices whose total
// exceeds 4x L2, so no call finds its input left in L2 by the previous one. Before an
// L2-resident input's warm-up, scratch memory twice the L2's size is written
// (evict_l2): the calls are timed from what their own warm-up leaves in L2, not on lines
// another kernel brought in. Loads that do not keep their lines in L2 (ld.global.cs)
// were timed 15-25% faster on the previous candidate's lines than on their own (an H100,
// docs/BENCHMARKS-history.md, ninth set).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace reduce_tune::tuner {

// The tuner's policy (the defaults) times many candidates and needs only to rank them;
// the bench's (bench_policy) times few implementations and reports their numbers.
struct TimingPolicy {
  int warmup_calls = 2;
  int min_samples = 5;
  int max_samples = 15;
  double target_spread = 0.01;   // relative interquartile range
  double max_seconds = 0.2;      // per candidate, after warm-up
  // Batch calls until a sample takes this long: long enough (tens to hundreds of calls
  // at the smallest sizes) that one sample measures back-to-back throughput, not the
  // latency of the first call after the host waited for the previous sample.
  double min_sample_ms = 0.2;
  // Racing (with best_ms > 0, the best median so far among the candidates of the same
  // reduction): a candidate clearly slower than it is timed only enough to rank it.
  // It stops after one timed call of at least abandon_min_call_ms that took over
  // abandon_call_factor x best_ms, or after two samples both over abandon_factor x best_ms.
  // Finalists are picked within 1.15x of the best, so no candidate stopped early is one.
  double best_ms = 0;
  double abandon_factor = 1.25;
  double abandon_call_factor = 2.0;
  double abandon_min_call_ms = 0.05;
  // Hold the stream while a sample's calls are enqueued (see above). A hold gives up after
  // hold_timeout_ms; that sample is taken again with half the calls.
  bool hold_queue = true;
  double hold_timeout_ms = 50;
  bool evict_l2 = true;  // with one rotation (see above)
};
// Calls per held sample at most: a two-pass call is two launches, and a stream's launch
// queue holds about a thousand before the host blocks.
constexpr int kMaxHeldCalls = 256;
inline TimingPolicy bench_policy() {
  TimingPolicy p;
  p.hold_queue = false;  // a caller's view: back-to-back calls at the host's pace
  p.max_samples = 25;
  p.max_seconds = 0.3;
  p.min_sample_ms = 0.5;
  return p;
}

struct TimingResult {
  double median_ms = 0;
  double spread = 0;        // (q3 - q1) / median of the samples
  int repetitions = 0;      // calls timed, over all samples
  int samples = 0;
  bool abandoned = false;   // stopped early by racing: slower than the best so far
  bool held = false;        // every sample was timed with the launch queue held
  int hold_timeouts = 0;    // samples taken again because the hold gave up first
};

// After the first timed call (`first_ms`): whether racing stops the candidate there.
bool abandon_after_first_call(double first_ms, const TimingPolicy& policy);
// After each sample: whether to take more, stop (enough samples, a tight spread or a cap
// reached), or stop because racing shows the candidate clearly slower than the best.
enum class TimingStep { more, done, abandoned };
TimingStep timing_step(const std::vector<double>& samples, double elapsed_seconds, const TimingPolicy& policy);

// How many disjoint input slices to rotate through (1: no rotation).
int rotation_count(std::uint64_t input_bytes, std::int64_t l2_bytes, std::uint64_t available_bytes);

// Times `enqueue(slice)`, which must enqueue one whole reduction on `stream` reading
// input slice `slice` (0 <= slice < rotations). Throws CudaError on a CUDA failure.
TimingResult time_reduction(const std::function<void(int slice)>& enqueue, int rotations,
                            cudaStream_t stream, const TimingPolicy& policy = {});

// Median and relative interquartile range of samples (exposed for tests).
void median_and_spread(std::vector<double> samples, double* median, double* spread);

}  // namespace reduce_tune::tuner
