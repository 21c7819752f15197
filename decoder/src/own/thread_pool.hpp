#pragma once
// A small pool that runs one parallel loop at a time with dynamic scheduling: workers and
// the calling thread take indices from a shared atomic counter, so the big code-blocks that
// the caller puts first spread over all threads and the small ones fill the gaps.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace j2k::decoder::own {

class ThreadPool {
 public:
  /// `threads` counts the caller: threads - 1 workers are started.
  explicit ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const noexcept { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(index, thread_slot) for every index in [0, n); thread_slot is in [0, size()).
  void parallel_for(std::size_t n, const std::function<void(std::size_t, int)>& fn) {
    if (n == 0) return;
    if (workers_.empty() || n == 1) {
      for (std::size_t i = 0; i < n; ++i) fn(i, 0);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      job_ = &fn;
      count_ = n;
      next_.store(0, std::memory_order_relaxed);
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    run(0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void run(int slot) {
    for (;;) {
      std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count_) break;
      (*job_)(i, slot);
    }
  }
  void worker(int slot) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);  // guards job_, count_, generation_, busy_, quit_
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
      }
      run(slot);
      {
        std::lock_guard lock(mutex_);
        if (--busy_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, int)>* job_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  int busy_ = 0;
  std::uint64_t generation_ = 0;
  bool quit_ = false;
};

}  // namespace j2k::decoder::own
