#include "reduce_tune/tuner/thread_pool.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace reduce_tune::tuner {

ThreadPool::ThreadPool(unsigned threads, bool background) {
  for (unsigned i = 0; i < std::max(threads, 1u); ++i) threads_.emplace_back([this, background] { work(background); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::work(bool background) {
#ifdef __linux__
  // Linux keeps a nice value per thread (and new threads inherit it); raising one's own
  // needs no privilege. A failure only leaves the default priority.
  if (background) (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#else
  (void)background;
#endif
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      auto queued = [this] {
        for (const auto& q : queues_)
          if (!q.empty()) return true;
        return false;
      };
      ready_.wait(lock, [&] { return stopping_ || queued(); });
      if (!queued()) return;
      for (auto q = queues_.rbegin(); q != queues_.rend(); ++q)
        if (!q->empty()) {
          job = std::move(q->front());
          q->pop_front();
          break;
        }
    }
    job();
  }
}

}  // namespace reduce_tune::tuner
