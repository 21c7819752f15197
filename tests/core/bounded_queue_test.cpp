#include "core/bounded_queue.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using j2k::BoundedQueue;

TEST(BoundedQueue, TryPushFailsWhenFull) {
  BoundedQueue<int> q(2);
  EXPECT_TRUE(q.try_push(1));
  EXPECT_TRUE(q.try_push(2));
  EXPECT_FALSE(q.try_push(3));
  EXPECT_EQ(q.size(), 2u);
}

TEST(BoundedQueue, DropOldestReturnsEvicted) {
  BoundedQueue<int> q(2);
  EXPECT_FALSE(q.push_drop_oldest(1).has_value());
  EXPECT_FALSE(q.push_drop_oldest(2).has_value());
  auto evicted = q.push_drop_oldest(3);
  ASSERT_TRUE(evicted.has_value());
  EXPECT_EQ(*evicted, 1);
  EXPECT_EQ(*q.try_pop(), 2);
  EXPECT_EQ(*q.try_pop(), 3);
  EXPECT_FALSE(q.try_pop().has_value());
}

TEST(BoundedQueue, CloseWakesConsumerAndKeepsFifoAcrossThreads) {
  BoundedQueue<int> q(8);
  long long sum = 0;
  std::thread consumer([&] {
    while (auto v = q.pop_for(std::chrono::seconds(5))) sum += *v;
  });
  for (int i = 1; i <= 1000; ++i) ASSERT_TRUE(q.push_wait(i));
  q.close();
  consumer.join();
  EXPECT_EQ(sum, 1000LL * 1001 / 2);
}

TEST(BoundedQueue, PopWaitsForItemsInOrderAndEndsOnlyWhenClosedAndDrained) {
  BoundedQueue<int> q(4);
  std::vector<int> got;
  std::thread consumer([&] {
    while (auto v = q.pop()) got.push_back(*v);
  });
  for (int i = 1; i <= 100; ++i) ASSERT_TRUE(q.push_wait(i));
  q.close();  // what is still queued is delivered before pop() says closed
  consumer.join();
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i + 1);
  EXPECT_FALSE(q.pop().has_value());  // closed and empty: no wait
}
