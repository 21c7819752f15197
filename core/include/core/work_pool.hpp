#pragma once
// One scheduler for frame-level and in-frame parallelism.
//
// A fixed set of threads (size() - 1 helpers, started once) serves the parallel loops of any
// number of callers at once. Each caller runs its own loop's indices too; helpers join the
// loops that still have indices to hand out, the most urgent first (the oldest frame: it is
// due first). A run slot is held by every thread doing work: a caller inside a Task (its whole
// frame, serial parts included) or inside parallel_for, and a helper while it runs indices.
// Helpers take a slot only while fewer than size() are held, so the pool never runs more
// threads than it has slots (callers always run: they would otherwise idle). A caller waiting
// for helpers to finish its last indices gives its slot up meanwhile.
//
// With few frames in flight each frame gets every core (low latency); with many, each gets
// about its share, and no core idles while any frame has work left (throughput).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace j2k {

class WorkPool {
 public:
  /// `threads` run slots: threads - 1 helper threads are started (the callers are the rest).
  explicit WorkPool(int threads);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  /// Run slots; also the bound on the `slot` argument of a loop's function.
  int size() const noexcept { return static_cast<int>(helpers_.size()) + 1; }

  /// A unit of work (a frame's decode) on the calling thread, for its lifetime: it holds a run
  /// slot, its loops are ranked by `urgency` (smaller first) and the work done for it by any
  /// thread is summed. One at a time per thread.
  class Task {
   public:
    Task(WorkPool& pool, std::uint64_t urgency);
    ~Task();
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    /// Thread time spent on this task so far: the caller's, less its waits for helpers, plus
    /// the helpers' time in its loops (wall time of each: preemption by other programs counts).
    std::chrono::nanoseconds work() const;
    /// The helpers' part of it, and the time the caller waited for helpers (not work): a
    /// caller that measures its own time (on its own clock) adds the first and takes off the second.
    std::chrono::nanoseconds helper_time() const noexcept { return std::chrono::nanoseconds(helper_ns_.load()); }
    std::chrono::nanoseconds wait_time() const noexcept {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(waited_);
    }
    /// CPU time spent on this task so far (the caller's and the helpers' in its loops):
    /// unlike work(), not inflated when other programs take the cores.
    std::chrono::nanoseconds cpu_time() const;

   private:
    friend class WorkPool;
    WorkPool& pool_;
    std::uint64_t urgency_;
    Task* outer_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::duration waited_{};  // caller thread only
    std::chrono::nanoseconds cpu_start_{};          // the caller's thread CPU time at the start
    std::atomic<std::int64_t> helper_ns_{0}, helper_cpu_ns_{0};
  };

  /// While it lives, the calling thread waits for something outside the pool (a free GPU
  /// reconstructor, say): if the thread runs a Task of `pool`, that task's run slot goes to
  /// the helpers meanwhile. The wait still counts as the task's work (work() is wall time):
  /// a frame that waits for a saturated GPU is load that the degrade control must see. Does
  /// nothing otherwise (no pool, another pool's task, a helper: a helper's slot is its loop's).
  class Waiting {
   public:
    explicit Waiting(WorkPool* pool) noexcept;
    ~Waiting();
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    Task* task_ = nullptr;
  };

  /// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID).
  static std::chrono::nanoseconds thread_cpu_time() noexcept;
  /// The urgency of the calling thread's task on `pool`, or the least urgent outside one: a
  /// thread that works for the same frame beside its task (the GPU tier-1's side share) makes
  /// a Task of its own with it, so that its loops rank with the frame's.
  static std::uint64_t current_urgency(const WorkPool& pool) noexcept;

  /// Calls fn(index, slot) for every index in [0, n), on the caller and on helpers; returns
  /// when all are done. `slot` is in [0, size()) and no two threads run the same loop with the
  /// same slot (the caller has 0): per-thread scratch can be indexed by it. An exception from
  /// fn stops handing out indices and is rethrown here once the others have finished.
  void parallel_for(std::size_t n, const std::function<void(std::size_t, int)>& fn);

  /// Thread time helpers spent working, over the pool's life (for tests and figures).
  std::chrono::nanoseconds helper_work() const noexcept { return std::chrono::nanoseconds(helper_ns_.load()); }

 private:
  struct Loop {
    const std::function<void(std::size_t, int)>* fn = nullptr;
    std::size_t n = 0;
    std::atomic<std::size_t> next{0};
    std::uint64_t urgency = 0;
    Task* task = nullptr;
    int helpers = 0;  // helpers running its indices (guarded by mutex_)
    std::exception_ptr error;  // the first exception (guarded by mutex_)
    std::condition_variable finished;  // helpers reached 0 (mutex_)
  };

  void helper(int slot);
  Loop* most_urgent() const;  // under mutex_
  bool try_take_slot() noexcept;
  void take_slot() noexcept { running_.fetch_add(1); }
  void give_slot();
  void run(Loop& loop, int slot);  // indices until none are left; records an exception

  std::vector<std::thread> helpers_;
  mutable std::mutex mutex_;  // guards loops_, quit_, and each Loop's helpers/error
  std::condition_variable wake_;
  std::vector<Loop*> loops_;  // loops with indices possibly left to hand out
  bool quit_ = false;
  std::atomic<int> running_{0};   // run slots held
  std::atomic<int> sleepers_{0};  // helpers waiting for work or a slot
  std::atomic<std::int64_t> helper_ns_{0};
};

}  // namespace j2k
