// The real-time policies on their own: stream clock, degrade controller, latency histogram.
// Driven with made-up times: deterministic, no clocks read, no timing assertions.
#include <gtest/gtest.h>

#include "pipeline/scheduling.hpp"

namespace j2k::pipeline {
namespace {

using namespace std::chrono_literals;
const Clock::time_point t0 = Clock::time_point(100s);

TEST(StreamClock, DueTimesFollowTheRtpTimestampsFromTheLeastDelayedFrame) {
  StreamClock c;
  // 25 frames/s: 3600 ticks apart. Frame 1 arrives 30 ms late (jitter), frame 2 on time.
  EXPECT_EQ(c.on_frame(0, t0), t0);
  EXPECT_EQ(c.on_frame(3600, t0 + 70ms), t0 + 40ms);
  EXPECT_EQ(c.on_frame(7200, t0 + 80ms), t0 + 80ms);
  EXPECT_EQ(c.due(36000, t0), t0 + 400ms);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(c.frame_interval()), 40ms);
}

TEST(StreamClock, AnEarlierFrameMovesTheAnchorAndTheTimestampWraps) {
  StreamClock c;
  const std::uint32_t start = 0xFFFFFFFFu - 3600;  // wraps after the second frame
  c.on_frame(start, t0 + 20ms);
  c.on_frame(start + 3600, t0 + 40ms);        // 20 ms less delayed than the first
  EXPECT_EQ(c.due(start, t0), t0);
  EXPECT_EQ(c.due(start + 7200, t0), t0 + 80ms);  // across the wrap
}

TEST(StreamClock, ALargeTimestampJumpStartsANewTimeline) {
  StreamClock c;
  c.on_frame(1000, t0);
  c.on_frame(4600, t0 + 40ms);
  const auto due = c.on_frame(50'000'000, t0 + 80ms);  // sender restarted
  EXPECT_EQ(due, t0 + 80ms);
  EXPECT_EQ(c.due(50'003'600, t0), t0 + 120ms);
}

TEST(DegradeController, EngagesWhenTheDecodersCannotKeepUpAndRelaxesWithHeadroom) {
  DegradeController::Config cfg;
  cfg.dwell_frames = 10;
  DegradeController d(cfg);
  const auto interval = 40ms;  // 25 frames/s
  // 2 workers, 100 ms a frame: load 100 / 80 = 1.25 > 0.95.
  d.on_decoded(0, 100ms, 2, interval, 0);
  EXPECT_EQ(d.level(), 0) << "one frame per worker before judging";
  d.on_decoded(0, 100ms, 2, interval, 0);
  EXPECT_EQ(d.level(), 1);
  // At half resolution 30 ms: load 0.375; the full level is still predicted at 1.25.
  for (int i = 0; i < 30; ++i) d.on_decoded(1, 30ms, 2, interval, 0);
  EXPECT_EQ(d.level(), 1);
  DegradeController e(cfg);
  e.on_decoded(0, 100ms, 2, interval, 0);
  e.on_decoded(0, 100ms, 2, interval, 0);
  ASSERT_EQ(e.level(), 1);
  // Then the stream slows to 10 frames/s: the full level's 100 ms is load 0.5.
  for (int i = 0; i < 9; ++i) e.on_decoded(1, 30ms, 2, 100ms, 0);
  EXPECT_EQ(e.level(), 1) << "stays for the dwell";
  e.on_decoded(1, 30ms, 2, 100ms, 0);
  EXPECT_EQ(e.level(), 0);
}

TEST(DegradeController, ABacklogEngagesEvenWhenTheMeanLooksFine) {
  DegradeController d;
  d.on_decoded(0, 20ms, 1, 40ms, 2);
  EXPECT_EQ(d.level(), 0) << "two frames waiting per worker is still normal";
  d.on_decoded(0, 20ms, 1, 40ms, 5);
  EXPECT_EQ(d.level(), 1);
  d.on_decoded(1, 5ms, 1, 40ms, 3);
  EXPECT_EQ(d.level(), 2);
  d.on_decoded(2, 2ms, 1, 40ms, 3);
  EXPECT_EQ(d.level(), 2) << "max_level is 2 by default";
}

TEST(DegradeController, NeverAsksForMoreLevelsThanTheCodestreamHasNorWhenOff) {
  DegradeController d;
  d.cap(1);
  for (int i = 0; i < 5; ++i) d.on_decoded(d.level(), 200ms, 1, 40ms, 10);
  EXPECT_EQ(d.level(), 1);
  DegradeController::Config off;
  off.enabled = false;
  DegradeController o(off);
  for (int i = 0; i < 5; ++i) o.on_decoded(0, 200ms, 1, 40ms, 10);
  EXPECT_EQ(o.level(), 0);
}

TEST(DegradeController, RelaxingTooEarlyMakesTheNextDwellLonger) {
  DegradeController::Config cfg;
  cfg.dwell_frames = 4;
  DegradeController d(cfg);
  d.on_decoded(0, 100ms, 1, 40ms, 0);
  ASSERT_EQ(d.level(), 1);
  // The stream slows so that the finer level looks affordable, then speeds up again.
  int relaxed_after = 0;
  for (int i = 0; i < 100 && d.level() == 1; ++i, ++relaxed_after) d.on_decoded(1, 10ms, 1, 200ms, 0);
  ASSERT_EQ(d.level(), 0);
  d.on_decoded(0, 100ms, 1, 40ms, 0);
  ASSERT_EQ(d.level(), 1);
  int second = 0;
  for (int i = 0; i < 100 && d.level() == 1; ++i, ++second) d.on_decoded(1, 10ms, 1, 200ms, 0);
  EXPECT_GT(second, relaxed_after);
}

TEST(LatencyHistogram, PercentilesAndIntervals) {
  LatencyHistogram h;
  for (int i = 1; i <= 100; ++i) h.add(i);  // 1 … 100 ms
  const auto f = LatencyFigures::of(h);
  EXPECT_EQ(f.count, 100u);
  EXPECT_NEAR(f.p50, 50, 50 * 0.03);
  EXPECT_NEAR(f.p95, 95, 95 * 0.03);
  EXPECT_NEAR(f.p99, 99, 99 * 0.03);
  const LatencyHistogram before = h;
  for (int i = 0; i < 10; ++i) h.add(500);
  const auto recent = LatencyFigures::of(h.since(before));
  EXPECT_EQ(recent.count, 10u);
  EXPECT_NEAR(recent.p50, 500, 500 * 0.03);
  EXPECT_EQ(LatencyFigures::of(LatencyHistogram{}).p99, 0);
}

}  // namespace
}  // namespace j2k::pipeline
