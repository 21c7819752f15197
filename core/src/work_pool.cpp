#include "core/work_pool.hpp"

#include <time.h>

#include <algorithm>
#include <limits>

namespace j2k {

namespace {

using Clock = std::chrono::steady_clock;

// The task open on this thread (a loop started here belongs to it), if any. A helper takes
// the task of the loop it helps, so that a loop started inside one of its indices ranks and
// counts with it (and runs on the helper's slot) as it would on the caller.
thread_local WorkPool::Task* t_task = nullptr;
// True on a helper while it runs a loop's indices: its task's own thread is elsewhere.
thread_local bool t_helping = false;

constexpr std::uint64_t kLeastUrgent = std::numeric_limits<std::uint64_t>::max();

}  // namespace

WorkPool::WorkPool(int threads) {
  threads = std::clamp(threads, 1, 1024);
  helpers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int slot = 1; slot < threads; ++slot) helpers_.emplace_back([this, slot] { helper(slot); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  for (auto& t : helpers_) t.join();
}

std::chrono::nanoseconds WorkPool::thread_cpu_time() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::uint64_t WorkPool::current_urgency(const WorkPool& pool) noexcept {
  return t_task && &t_task->pool_ == &pool ? t_task->urgency_ : kLeastUrgent;
}

WorkPool::Task::Task(WorkPool& pool, std::uint64_t urgency)
    : pool_(pool), urgency_(urgency), outer_(t_task), start_(Clock::now()), cpu_start_(thread_cpu_time()) {
  t_task = this;
  pool_.take_slot();
}

WorkPool::Task::~Task() {
  pool_.give_slot();
  t_task = outer_;
}

std::chrono::nanoseconds WorkPool::Task::work() const {
  const auto own = Clock::now() - start_ - waited_;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(own) + std::chrono::nanoseconds(helper_ns_.load());
}

std::chrono::nanoseconds WorkPool::Task::cpu_time() const {
  return thread_cpu_time() - cpu_start_ + std::chrono::nanoseconds(helper_cpu_ns_.load());
}

WorkPool::Waiting::Waiting(WorkPool* pool) noexcept {
  if (!pool || t_helping || !t_task || &t_task->pool_ != pool) return;
  task_ = t_task;
  pool->give_slot();
}

WorkPool::Waiting::~Waiting() {
  if (task_) task_->pool_.take_slot();  // a caller always runs (as a task's start does)
}

bool WorkPool::try_take_slot() noexcept {
  int held = running_.load();
  while (held < size())
    if (running_.compare_exchange_weak(held, held + 1)) return true;
  return false;
}

void WorkPool::give_slot() {
  running_.fetch_sub(1);
  // A helper may be waiting for a slot. (It counts itself a sleeper before it looks at the
  // slots, so either it sees this one free or this sees it asleep: no wake-up is lost.)
  if (sleepers_.load() > 0) {
    std::lock_guard lock(mutex_);
    wake_.notify_one();
  }
}

WorkPool::Loop* WorkPool::most_urgent() const {
  Loop* best = nullptr;
  for (Loop* l : loops_)
    if (l->next.load(std::memory_order_relaxed) < l->n && (!best || l->urgency < best->urgency)) best = l;
  return best;
}

void WorkPool::run(Loop& loop, int slot) {
  try {
    for (std::size_t i; (i = loop.next.fetch_add(1, std::memory_order_relaxed)) < loop.n;) (*loop.fn)(i, slot);
  } catch (...) {
    loop.next.store(loop.n);  // hand out nothing more
    std::lock_guard lock(mutex_);
    if (!loop.error) loop.error = std::current_exception();
  }
}

void WorkPool::helper(int slot) {
  for (;;) {
    Loop* loop = nullptr;
    {
      std::unique_lock lock(mutex_);
      for (;;) {
        if (quit_) return;
        sleepers_.fetch_add(1);
        loop = most_urgent();
        if (loop && try_take_slot()) {
          sleepers_.fetch_sub(1);
          break;
        }
        wake_.wait(lock);
        sleepers_.fetch_sub(1);
      }
      ++loop->helpers;  // the caller waits for it before its loop goes away
    }
    const auto start = Clock::now();
    const auto cpu_start = thread_cpu_time();
    t_task = loop->task;
    t_helping = true;
    run(*loop, slot);
    t_task = nullptr;
    t_helping = false;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    helper_ns_.fetch_add(ns, std::memory_order_relaxed);
    if (loop->task) {
      loop->task->helper_ns_.fetch_add(ns, std::memory_order_relaxed);
      loop->task->helper_cpu_ns_.fetch_add((thread_cpu_time() - cpu_start).count(), std::memory_order_relaxed);
    }
    give_slot();
    std::lock_guard lock(mutex_);
    if (--loop->helpers == 0) loop->finished.notify_one();
  }
}

void WorkPool::parallel_for(std::size_t n, const std::function<void(std::size_t, int)>& fn) {
  if (n == 0) return;
  if (helpers_.empty() || n == 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  Task* task = t_task && &t_task->pool_ == this ? t_task : nullptr;
  if (!task) take_slot();  // a caller without a task holds a slot for the loop only
  Loop loop;
  loop.fn = &fn;
  loop.n = n;
  loop.urgency = task ? task->urgency_ : kLeastUrgent;
  loop.task = task;
  {
    std::lock_guard lock(mutex_);
    loops_.push_back(&loop);
    // As many helpers as could take part (each takes a slot or goes back to sleep).
    const int wanted = static_cast<int>(std::min<std::size_t>(n - 1, helpers_.size()));
    for (int k = std::min(wanted, sleepers_.load()); k > 0; --k) wake_.notify_one();
  }
  run(loop, 0);
  {
    std::unique_lock lock(mutex_);
    loops_.erase(std::find(loops_.begin(), loops_.end(), &loop));
    if (loop.helpers > 0) {
      // Helpers still run the last indices: the slot goes to whoever else has work meanwhile.
      running_.fetch_sub(1);
      if (sleepers_.load() > 0) wake_.notify_one();
      const auto waiting = Clock::now();
      loop.finished.wait(lock, [&] { return loop.helpers == 0; });
      // (On a helper the wait is inside the time its help adds to the task.)
      if (task && !t_helping) task->waited_ += Clock::now() - waiting;
      take_slot();
    }
  }
  if (!task) give_slot();
  if (loop.error) std::rethrow_exception(loop.error);
}

}  // namespace j2k
