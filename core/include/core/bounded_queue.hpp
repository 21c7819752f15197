#pragma once
// A bounded multi-producer/multi-consumer queue for handing work between threads.
//
// The producer chooses the back-pressure policy explicitly: `try_push` fails when
// full (caller drops and counts), `push_drop_oldest` evicts the oldest item and
// returns it so the caller can count what was dropped. Consumers wait with a
// timeout (to do other work meanwhile) or until the queue is closed and drained;
// `close()` wakes everybody.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace j2k {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity ? capacity : 1) {}

  /// Adds `item` unless the queue is full or closed; returns false (item untouched) then.
  bool try_push(T& item) {
    {
      std::lock_guard lock(mutex_);
      if (closed_ || items_.size() >= capacity_) return false;
      items_.push_back(std::move(item));
    }
    not_empty_.notify_one();
    return true;
  }
  bool try_push(T&& item) { return try_push(item); }

  /// Adds `item`; when full, removes and returns the oldest item instead of blocking.
  std::optional<T> push_drop_oldest(T item) {
    std::optional<T> evicted;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return std::optional<T>(std::move(item));
      if (items_.size() >= capacity_) {
        evicted.emplace(std::move(items_.front()));
        items_.pop_front();
      }
      items_.push_back(std::move(item));
    }
    not_empty_.notify_one();
    return evicted;
  }

  /// Blocks while full (used only where the producer may wait, e.g. file input).
  bool push_wait(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    lock.unlock();
    not_empty_.notify_one();
    return true;
  }

  /// Waits up to `timeout` for an item. Empty result on timeout or when closed and drained.
  template <typename Rep, typename Period>
  std::optional<T> pop_for(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock lock(mutex_);
    if (!not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); })) return std::nullopt;
    return take(lock);
  }

  std::optional<T> try_pop() { return pop_for(std::chrono::seconds(0)); }

  /// Waits for an item. Empty result only once the queue is closed and drained: a consumer
  /// that has nothing else to do loops `while (auto item = queue.pop())`.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    return take(lock);
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
  }
  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  /// The front item, if any; releases `lock` (held on mutex_) and wakes a waiting producer.
  std::optional<T> take(std::unique_lock<std::mutex>& lock) {
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return item;
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;  // guards items_ and closed_
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace j2k
