#include "reduce_tune/tuner/measure.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/log.h"

namespace reduce_tune::tuner {

namespace {

// rt_queue_hold(flags, timeout_ns): one thread spins until the host writes flags[0] != 0,
// or until timeout_ns have passed on %globaltimer, in which case it sets flags[1] = 1.
// `flags` is mapped host memory. PTX rather than CUDA C: the tuner library is plain C++
// and the driver JIT-compiles this for whatever GPU runs it, with no NVRTC in the path.
constexpr char kQueueHoldPtx[] = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry rt_queue_hold(.param .u64 flags_param, .param .u64 timeout_param)
{
    .reg .pred %p<3>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<7>;
    ld.param.u64 %rd1, [flags_param];
    ld.param.u64 %rd2, [timeout_param];
    cvta.to.global.u64 %rd3, %rd1;
    mov.u64 %rd4, %globaltimer;
WAIT:
    ld.volatile.global.u32 %r1, [%rd3];
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u64 %rd5, %globaltimer;
    sub.s64 %rd6, %rd5, %rd4;
    setp.lt.u64 %p2, %rd6, %rd2;
    @%p2 bra WAIT;
    mov.u32 %r2, 1;
    st.volatile.global.u32 [%rd3+4], %r2;
DONE:
    ret;
}
)";

// The process's hold kernel and a pool of flag pairs in one mapped host allocation, made
// on first use and never freed (a static destructor would run after the CUDA runtime's
// own teardown). Unavailable (null) if either cannot be made; timing then goes unheld.
class QueueHolds {
 public:
  static QueueHolds* get() {
    static QueueHolds* holds = [] {
      try {
        return new QueueHolds();
      } catch (const std::exception& e) {
        log_message(LogLevel::warning, std::string("timing without holding the launch queue: ") + e.what());
        return static_cast<QueueHolds*>(nullptr);
      }
    }();
    return holds;
  }
  // A free flag pair, or -1 when all are in use.
  int acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return -1;
    const int slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void release(int slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(slot);
  }
  volatile std::uint32_t* host_flags(int slot) const {
    return static_cast<volatile std::uint32_t*>(flags_.host()) + 2 * slot;
  }
  void* device_flags(int slot) const { return static_cast<std::uint32_t*>(flags_.device()) + 2 * slot; }
  cudaKernel_t kernel() const { return kernel_; }

 private:
  static constexpr int kSlots = 512;
  QueueHolds() : flags_(2 * kSlots * sizeof(std::uint32_t)), library_(ptx()), kernel_(library_.kernel("rt_queue_hold")) {
    for (int slot = kSlots - 1; slot >= 0; --slot) free_.push_back(slot);
  }
  static std::vector<char> ptx() { return std::vector<char>(kQueueHoldPtx, kQueueHoldPtx + sizeof(kQueueHoldPtx)); }
  PinnedBuffer flags_;
  LoadedLibrary library_;  // PTX, NUL-terminated: cudaLibraryLoadData JIT-compiles it
  cudaKernel_t kernel_;
  std::mutex mutex_;
  std::vector<int> free_;
};

// One held stretch of a stream: construction enqueues the hold kernel, so what the host
// enqueues next waits behind it; release() lets the device run it all back to back.
class QueueHold {
 public:
  QueueHold(QueueHolds* holds, cudaStream_t stream, double timeout_ms)
      : holds_(holds), slot_(holds ? holds->acquire() : -1) {
    if (slot_ < 0) return;
    volatile std::uint32_t* flags = holds_->host_flags(slot_);
    flags[0] = 0;
    flags[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    void* device_flags = holds_->device_flags(slot_);
    auto timeout_ns = static_cast<unsigned long long>(timeout_ms * 1e6);
    void* args[] = {&device_flags, &timeout_ns};
    try {
      CudaLauncher().launch(reinterpret_cast<const void*>(holds_->kernel()), 1, 1, stream, args, StreamOrder::serial);
    } catch (...) {
      holds_->release(slot_);
      throw;
    }
  }
  ~QueueHold() {
    if (slot_ < 0) return;
    release();
    holds_->release(slot_);
  }
  QueueHold(const QueueHold&) = delete;
  QueueHold& operator=(const QueueHold&) = delete;
  bool holding() const { return slot_ >= 0; }
  void release() {
    if (slot_ < 0) return;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    holds_->host_flags(slot_)[0] = 1;
  }
  // Whether the hold gave up waiting before release() (read after the stream passed it).
  bool timed_out() const { return slot_ >= 0 && holds_->host_flags(slot_)[1] != 0; }

 private:
  QueueHolds* holds_;
  int slot_;
};

// Per device, scratch memory twice the L2's size, written before a candidate's warm-up
// so that nothing read before (another kernel's input) is left in L2. Made on first use
// and never freed, as the holds above.
void evict_l2(cudaStream_t stream) {
  static std::mutex mutex;
  static auto* scratch = new std::map<int, DeviceBuffer>();
  int device = 0;
  RT_CUDA_CHECK(cudaGetDevice(&device));
  void* memory = nullptr;
  std::size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = scratch->find(device);
    if (it == scratch->end()) {
      int l2 = 0;
      RT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
      it = scratch->emplace(device, DeviceBuffer(2 * static_cast<std::size_t>(std::max(l2, 1 << 20)))).first;
    }
    memory = it->second.get();
    bytes = it->second.size();
  }
  RT_CUDA_CHECK(cudaMemsetAsync(memory, 0, bytes, stream));
}

}  // namespace

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
  QueueHolds* holds = policy.hold_queue ? QueueHolds::get() : nullptr;
  TimingResult result;
  result.held = holds != nullptr;
  // `calls` calls between two events; with the queue held, retried with half as many
  // while the hold gives up before the host has enqueued them (a host stalled that long,
  // or a launch queue too short for them), so that no sample is paced by the host.
  auto timed = [&](int& calls) {
    while (true) {
      QueueHold hold(holds, stream, policy.hold_timeout_ms);
      RT_CUDA_CHECK(cudaEventRecord(start.get(), stream));
      for (int i = 0; i < calls; ++i) next();
      RT_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
      hold.release();
      RT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      RT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      if (holds && !hold.holding()) result.held = false;
      if (!hold.timed_out()) return static_cast<double>(ms);
      ++result.hold_timeouts;
      if (calls == 1) {
        result.held = false;
        return static_cast<double>(ms);
      }
      calls = std::max(1, calls / 2);
    }
  };
  if (policy.evict_l2 && rotations <= 1) evict_l2(stream);
  for (int i = 0; i < policy.warmup_calls; ++i) next();
  // One timed call sizes the batch.
  int one = 1;
  const double first_ms = timed(one);
  if (abandon_after_first_call(first_ms, policy)) {
    result.median_ms = first_ms;
    result.repetitions = result.samples = 1;
    result.abandoned = true;
    return result;
  }
  int batch = std::clamp(static_cast<int>(std::ceil(policy.min_sample_ms / std::max(first_ms, 1e-4))), 1,
                         holds ? kMaxHeldCalls : 512);

  std::vector<double> samples;
  const auto began = std::chrono::steady_clock::now();
  while (true) {
    const double ms = timed(batch);
    samples.push_back(ms / batch);
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
