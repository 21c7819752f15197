#include "gpu/retry_after_pause.hpp"

#include <gtest/gtest.h>

namespace j2k::gpu {
namespace {

using namespace std::chrono_literals;

TEST(RetryAfterPause, DoublesWhileFailingUpToTheMostAndForgetsOnceItWorks) {
  RetryAfterPause r(1000ms, 60000ms);
  const auto t0 = RetryAfterPause::Clock::time_point{} + 1h;
  EXPECT_TRUE(r.due(t0));  // nothing failed yet
  r.failed(t0);
  EXPECT_EQ(r.pause(), 1000ms);
  EXPECT_FALSE(r.due(t0 + 999ms));
  EXPECT_TRUE(r.due(t0 + 1000ms));
  const std::chrono::milliseconds want[] = {2000ms, 4000ms, 8000ms, 16000ms, 32000ms, 60000ms, 60000ms};
  auto t = t0 + 1000ms;
  for (const auto w : want) {
    r.failed(t);
    EXPECT_EQ(r.pause(), w);
    EXPECT_FALSE(r.due(t + w - 1ms));
    EXPECT_TRUE(r.due(t + w));
    t += w;
  }
  for (int i = 0; i < 100; ++i) r.failed(t);  // no overflow however long it keeps failing
  EXPECT_EQ(r.pause(), 60000ms);
  EXPECT_TRUE(r.due(t + 60000ms));
  r.worked();
  EXPECT_EQ(r.pause(), 0ms);
  r.failed(t);
  EXPECT_EQ(r.pause(), 1000ms);
}

TEST(RetryAfterPause, ZeroFirstPauseMeansTheNextFrame) {
  RetryAfterPause r(0ms, 60000ms);
  const auto t0 = RetryAfterPause::Clock::now();
  for (int i = 0; i < 30; ++i) {
    r.failed(t0);
    EXPECT_TRUE(r.due(t0));
  }
}

}  // namespace
}  // namespace j2k::gpu
