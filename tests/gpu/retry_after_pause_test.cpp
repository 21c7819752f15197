#include "gpu/retry_after_pause.hpp"

#include <gtest/gtest.h>

namespace j2k::gpu {
namespace {

using namespace std::chrono_literals;

TEST(RetryAfterPause, DoublesWhileFailingUpToTheMost) {
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
}

TEST(RetryAfterPause, FailuresAreForgottenOnlyAfterWorkingForTheLongestPause) {
  // A step that fails on the large frames and works on the small ones in between (GPU memory
  // enough for the small ones only) must back off too, not be tried again every second.
  RetryAfterPause r(1000ms, 60000ms);
  auto t = RetryAfterPause::Clock::time_point{} + 1h;
  for (const auto w : {1000ms, 2000ms, 4000ms, 8000ms}) {
    r.failed(t);  // a large frame
    EXPECT_EQ(r.pause(), w);
    r.worked(t + w);  // a small frame
    t += w;
  }
  const auto last_failure = t - 8000ms;
  r.worked(last_failure + 59999ms);  // still within the longest pause of the last failure
  r.failed(last_failure + 59999ms);
  EXPECT_EQ(r.pause(), 16000ms);
  t = last_failure + 59999ms;
  r.worked(t + 60000ms);  // a whole longest pause without a failure: forgotten
  EXPECT_EQ(r.pause(), 0ms);
  r.failed(t + 60000ms);
  EXPECT_EQ(r.pause(), 1000ms);
}

TEST(RetryAfterPause, ZeroFirstPauseMeansTheNextFrameAndHugePausesDoNotOverflow) {
  RetryAfterPause r(0ms, 60000ms);
  const auto t0 = RetryAfterPause::Clock::now();
  for (int i = 0; i < 30; ++i) {
    r.failed(t0);
    EXPECT_TRUE(r.due(t0));
  }
  RetryAfterPause never(std::chrono::milliseconds::max(), std::chrono::milliseconds::max());
  never.failed(t0);
  EXPECT_FALSE(never.due(t0 + std::chrono::hours(24 * 6)));
  EXPECT_GT(never.pause(), 0ms);
}

}  // namespace
}  // namespace j2k::gpu
