// A fixed pool of worker threads for background compilation. Jobs have a priority; a
// worker takes the oldest job of the highest priority queued.
#pragma once

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace reduce_tune::tuner {

class ThreadPool {
 public:
  // With `background`, the workers (and threads they start) run at a lower scheduling
  // priority (nice +10): compiles and host references then never take the core of the
  // thread that launches and times kernels, whose timings of microsecond-scale calls
  // would otherwise measure the contention.
  explicit ThreadPool(unsigned threads, bool background = false);
  ~ThreadPool();  // finishes queued work, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  static constexpr int kPriorities = 3;
  // Queues a job at `priority` (0 lowest .. kPriorities - 1).
  void post(std::function<void()> job, int priority = 0) {
    {
      std::lock_guard lock(mutex_);
      queues_[static_cast<std::size_t>(std::clamp(priority, 0, kPriorities - 1))].push_back(std::move(job));
    }
    ready_.notify_one();
  }

  template <typename F>
  auto submit(F f) -> std::shared_future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
    auto future = task->get_future().share();
    post([task] { (*task)(); });
    return future;
  }

 private:
  void work(bool background);
  std::mutex mutex_;
  std::condition_variable ready_;
  std::array<std::deque<std::function<void()>>, kPriorities> queues_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace reduce_tune::tuner
