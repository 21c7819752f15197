// The shared scheduler: every index once, slots unique within a loop, never more threads at
// work than slots, the most urgent loop served first, exceptions carried to the caller, and
// the work of a task summed. Gates, not sleeps, order the threads; nothing asserts on time
// except lower bounds that hold by construction.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <limits>
#include <thread>
#include <vector>

#include "core/work_pool.hpp"

namespace j2k {
namespace {

/// Counts threads inside a region and remembers the most seen at once.
struct Concurrency {
  std::atomic<int> now{0}, most{0};
  void enter() {
    const int n = now.fetch_add(1) + 1;
    for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {}
  }
  void leave() { now.fetch_sub(1); }
};

/// Threads wait at it until the test opens it.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void pass() {
    std::unique_lock l(m);
    ++waiting;
    cv.notify_all();
    cv.wait(l, [&] { return open; });
  }
  void wait_for(int n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return waiting >= n; });
  }
  void release() {
    std::lock_guard l(m);
    open = true;
    cv.notify_all();
  }
};

/// The most threads at work at once in a loop of `n` indices on `pool` whose indices all wait
/// at a gate until `n` threads wait there (a slot that is not free keeps one away: then the
/// gate opens after a minute anyway, and the count falls short instead of the test hanging).
int most_at_once(WorkPool& pool, int n) {
  Gate gate;
  Concurrency c;
  std::thread opener([&] {
    std::unique_lock l(gate.m);
    gate.cv.wait_for(l, std::chrono::minutes(1), [&] { return gate.waiting >= n; });
    gate.open = true;
    gate.cv.notify_all();
  });
  pool.parallel_for(static_cast<std::size_t>(n), [&](std::size_t, int) {
    c.enter();
    gate.pass();
    c.leave();
  });
  opener.join();
  return c.most.load();
}

TEST(WorkPool, EveryIndexOnceWithSlotsUniqueWithinTheLoop) {
  WorkPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  for (std::size_t n : {1u, 2u, 7u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    std::vector<std::atomic<int>> in_slot(static_cast<std::size_t>(pool.size()));
    std::atomic<bool> shared_slot{false};
    pool.parallel_for(n, [&](std::size_t i, int slot) {
      ASSERT_GE(slot, 0);
      ASSERT_LT(slot, pool.size());
      if (in_slot[static_cast<std::size_t>(slot)].fetch_add(1) != 0) shared_slot = true;
      hits[i].fetch_add(1);
      in_slot[static_cast<std::size_t>(slot)].fetch_sub(1);
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    EXPECT_FALSE(shared_slot.load());
  }
}

TEST(WorkPool, ManyCallersAtOnceNeverRunMoreThreadsThanSlots) {
  // Six frames in flight on a pool of three slots, each a task with serial work and loops.
  WorkPool pool(3);
  Concurrency working;
  std::atomic<long> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 6; ++c)
    callers.emplace_back([&, c] {
      for (int frame = 0; frame < 20; ++frame) {
        WorkPool::Task task(pool, static_cast<std::uint64_t>(frame * 6 + c));
        pool.parallel_for(64, [&](std::size_t i, int) {
          working.enter();
          sum.fetch_add(static_cast<long>(i));
          working.leave();
        });
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(sum.load(), 6L * 20 * (63 * 64 / 2));
  // (How many threads were at work at once is not asserted here: a helper that took a slot
  // before the six tasks opened may still finish its index after; the limit is checked below
  // with every slot held.)

  // Every slot held by tasks that wait at a gate: a fourth frame's loop gets no helper (it
  // runs on its caller alone), and once they end, helpers take part again.
  Gate gate;
  std::vector<std::thread> holders;
  for (int c = 0; c < pool.size(); ++c)
    holders.emplace_back([&] {
      WorkPool::Task task(pool, 1);
      gate.pass();
    });
  gate.wait_for(pool.size());
  std::set<std::thread::id> ran;
  std::mutex m;
  {
    WorkPool::Task task(pool, 0);  // the most urgent, and still no slot for a helper
    pool.parallel_for(256, [&](std::size_t, int) {
      std::lock_guard l(m);
      ran.insert(std::this_thread::get_id());
    });
  }
  EXPECT_EQ(ran, std::set<std::thread::id>{std::this_thread::get_id()});
  gate.release();
  for (auto& t : holders) t.join();
}

TEST(WorkPool, TheMostUrgentLoopIsHelpedFirst) {
  // Three slots, two helpers. The main thread holds the third slot while two tasks (urgency
  // 5 and 1) register a loop of two indices each and block in their first: no helper can
  // start. When the main thread lets its slot go, the one helper that can run must take the
  // urgent loop's second index first.
  WorkPool pool(3);
  Gate tasks_made, first_indices;
  std::mutex m;
  std::vector<std::string> helped;  // indices run by helpers, in order (guarded by m)
  std::thread a, b;
  {
    WorkPool::Task hold(pool, 0);
    auto frame = [&](std::uint64_t urgency, const char* name) {
      WorkPool::Task task(pool, urgency);
      tasks_made.pass();  // every slot is held before any loop exists
      pool.parallel_for(2, [&](std::size_t i, int slot) {
        if (slot == 0 && i == 0) first_indices.pass();
        if (slot != 0) {
          std::lock_guard l(m);
          helped.push_back(std::string(name) + std::to_string(i));
        }
      });
    };
    a = std::thread(frame, 5, "a");
    b = std::thread(frame, 1, "b");
    tasks_made.wait_for(2);
    tasks_made.release();
    first_indices.wait_for(2);
  }  // the main thread's slot goes: one helper may run
  // The callers stay in their first index until a helper has run the other loop's index, so
  // the first helper to run had both loops to choose from.
  for (;;) {
    std::lock_guard l(m);
    if (!helped.empty()) break;
  }
  first_indices.release();
  a.join();
  b.join();
  ASSERT_FALSE(helped.empty());
  EXPECT_EQ(helped.front(), "b1");
}

TEST(WorkPool, AnExceptionReachesTheCallerAndThePoolGoesOn) {
  WorkPool pool(4);
  EXPECT_THROW(pool.parallel_for(100,
                                 [](std::size_t i, int) {
                                   if (i == 37) throw std::runtime_error("index 37");
                                 }),
               std::runtime_error);
  std::atomic<int> n{0};
  pool.parallel_for(100, [&](std::size_t, int) { n.fetch_add(1); });
  EXPECT_EQ(n.load(), 100);
}

TEST(WorkPool, ATaskSumsTheWorkOfEveryThreadOnIt) {
  WorkPool pool(4);
  WorkPool::Task task(pool, 0);
  // 16 indices of at least 2 ms each: the task's work is at least 32 ms whoever ran them.
  pool.parallel_for(16, [](std::size_t, int) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  EXPECT_GE(task.work(), std::chrono::milliseconds(32));
  EXPECT_GE(task.work(), task.helper_time());
  EXPECT_EQ(pool.helper_work(), task.helper_time()) << "all helper time in this pool went to this task";
}

TEST(WorkPool, OneSlotRunsEverythingOnTheCaller) {
  WorkPool pool(1);
  const auto caller = std::this_thread::get_id();
  bool elsewhere = false;
  pool.parallel_for(50, [&](std::size_t, int slot) { elsewhere = elsewhere || slot != 0 || std::this_thread::get_id() != caller; });
  EXPECT_FALSE(elsewhere);
}

TEST(WorkPool, LoopsInsideALoopRunEveryIndexAndGiveTheirSlotsBack) {
  // The decoder's tier-2 runs a loop inside a loop (the tile-parts' reading inside "read
  // beside the table copy"), on the caller or on a helper: every inner index runs once, and
  // afterwards every slot is free again (a loop still gets size() threads at once).
  WorkPool pool(4);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> hits(3 * 8);
    pool.parallel_for(3, [&](std::size_t outer, int) {
      pool.parallel_for(8, [&](std::size_t inner, int) { hits[outer * 8 + inner].fetch_add(1); });
    });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1) << "round " << round;
  }
  EXPECT_EQ(most_at_once(pool, 4), 4);  // a leaked slot would keep one thread away
}

TEST(WorkPool, ACallerKnowsItsTasksUrgency) {
  // A thread working beside a frame's task (the GPU tier-1's side share) takes the frame's
  // urgency from it: the task's on its own pool, the least urgent elsewhere.
  WorkPool pool(2), other(2);
  const std::uint64_t least = WorkPool::current_urgency(pool);
  EXPECT_EQ(least, std::numeric_limits<std::uint64_t>::max());
  {
    WorkPool::Task task(pool, 7);
    EXPECT_EQ(WorkPool::current_urgency(pool), 7u);
    EXPECT_EQ(WorkPool::current_urgency(other), least);
    std::uint64_t seen = 0;
    std::thread beside([&] { seen = WorkPool::current_urgency(pool); });  // no task on that thread
    beside.join();
    EXPECT_EQ(seen, least);
  }
  EXPECT_EQ(WorkPool::current_urgency(pool), least);
}

TEST(WorkPool, AHelperWorksUnderTheTaskOfTheLoopItHelps) {
  // An index run by a helper belongs to the task of its loop: a loop started inside it ranks
  // with that task (the decoder's tier-2 loops run inside an index of "read beside the table
  // copy", which a helper may take). Helpers used to run without one: least urgent, and
  // taking a second slot for the inner loop.
  WorkPool pool(4);
  WorkPool::Task task(pool, 7);
  std::mutex m;
  std::set<std::thread::id> threads;
  std::vector<std::uint64_t> urgencies;
  std::atomic<int> inner_runs{0};
  pool.parallel_for(16, [&](std::size_t, int) {
    {
      std::lock_guard l(m);
      threads.insert(std::this_thread::get_id());
      urgencies.push_back(WorkPool::current_urgency(pool));
    }
    // Every index waits until a second thread has run one (a helper took part), for a minute
    // at most (then the count below fails instead of the test hanging).
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (;;) {
      {
        std::lock_guard l(m);
        if (threads.size() >= 2) break;
      }
      if (std::chrono::steady_clock::now() > until) break;
      std::this_thread::yield();
    }
    pool.parallel_for(4, [&](std::size_t, int) {
      inner_runs.fetch_add(1);
      std::lock_guard l(m);
      urgencies.push_back(WorkPool::current_urgency(pool));
    });
  });
  EXPECT_GE(threads.size(), 2u);
  EXPECT_EQ(inner_runs.load(), 16 * 4);
  for (const std::uint64_t u : urgencies) ASSERT_EQ(u, 7u);
  // And every slot is free again: with the task's own slot held, three threads at once.
  EXPECT_EQ(most_at_once(pool, 3), 3);
}

TEST(WorkPool, ATaskWaitingOutsideThePoolLendsItsSlot) {
  // A decode worker waiting for a free GPU reconstructor (every one leased by other frames)
  // used to keep its task's run slot: one helper fewer for every such worker. Here a task on
  // another thread waits: with its slot lent, this loop gets every slot of the pool.
  WorkPool pool(3);
  std::mutex m;
  std::condition_variable cv;
  bool waiting = false, release = false;
  std::chrono::nanoseconds waited{-1};
  std::thread worker([&] {
    WorkPool::Task task(pool, 1);
    {
      WorkPool::Waiting w(&pool);
      std::unique_lock l(m);
      waiting = true;
      cv.notify_all();
      cv.wait(l, [&] { return release; });
    }
    waited = task.wait_time();
  });
  {
    std::unique_lock l(m);
    cv.wait(l, [&] { return waiting; });
  }
  EXPECT_EQ(most_at_once(pool, 3), 3);  // this thread and both helpers: the task's slot was free
  {
    std::lock_guard l(m);
    release = true;
  }
  cv.notify_all();
  worker.join();
  // The wait stays the task's work (a frame waiting for a saturated GPU is load): it is not
  // among the waits for helpers that work() leaves out.
  EXPECT_EQ(waited, std::chrono::nanoseconds{0});
  EXPECT_EQ(most_at_once(pool, 3), 3);  // every slot free again once the task has ended
  // Outside a task of this pool, or with no pool: nothing to lend, nothing changes.
  WorkPool other(2);
  WorkPool::Task on_other(other, 1);
  { WorkPool::Waiting w(&pool); }
  { WorkPool::Waiting w(nullptr); }
  EXPECT_EQ(on_other.wait_time(), std::chrono::nanoseconds{0});
  EXPECT_EQ(most_at_once(pool, 3), 3);
}

}  // namespace
}  // namespace j2k
