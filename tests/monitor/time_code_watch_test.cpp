// The time code's continuity as an operator needs it: one event when it stops running on,
// counts for every frame concerned (review 2026-11-29: a frame whose system item was lost
// arrived complete, and its missing time code went unsaid anywhere).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "monitor/stream_monitor.hpp"
#include "monitor/time_code_watch.hpp"

namespace j2k::monitor {
namespace {

std::string tc(int h, int m, int s, int f, bool drop = false) {
  return fmt::format("{:02}:{:02}:{:02}{}{:02}", h, m, s, drop ? ';' : ':', f);
}

TEST(TimeCodeValue, ParsesOnlyTheDepacketizersForm) {
  auto v = TimeCodeValue::parse("10:20:30;12");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->hours, 10);
  EXPECT_EQ(v->frames, 12);
  EXPECT_TRUE(v->drop_frame);
  for (const char* bad : {"", "10:20:30", "1:20:30:12", "24:00:00:00", "10:60:00:00", "10:20:30.12", "aa:bb:cc:dd"})
    EXPECT_FALSE(TimeCodeValue::parse(bad)) << bad;
}

TEST(TimeCodeValue, DropFrameNumberingSkipsTwoFramesAMinuteButEveryTenth) {
  // 29.97: 00:01:00;02 follows 00:00:59;29; 00:10:00;00 follows 00:09:59;29.
  EXPECT_EQ(frame_number(*TimeCodeValue::parse("00:01:00;02"), 30), frame_number(*TimeCodeValue::parse("00:00:59;29"), 30) + 1);
  EXPECT_EQ(frame_number(*TimeCodeValue::parse("00:10:00;00"), 30), frame_number(*TimeCodeValue::parse("00:09:59;29"), 30) + 1);
  EXPECT_EQ(frame_number(*TimeCodeValue::parse("01:00:00;00"), 30), 107892);  // frames in an hour at 29.97
}

TEST(TimeCodeWatch, ARunningTimeCodeSaysNothingAcrossSecondsMinutesAndMidnight) {
  TimeCodeWatch w;
  std::uint64_t frame = 0;
  // 25 frames/s across a minute, then across midnight; 29.97 drop-frame across a minute.
  for (int s = 58; s < 62; ++s)
    for (int f = 0; f < 25; ++f) EXPECT_FALSE(w.on_frame(frame++, tc(10, s / 60 ? 1 : 0, s % 60, f), 25.0));
  TimeCodeWatch midnight;
  EXPECT_FALSE(midnight.on_frame(0, tc(23, 59, 59, 24), 25.0));
  EXPECT_FALSE(midnight.on_frame(1, tc(0, 0, 0, 0), 25.0));
  TimeCodeWatch ntsc;
  EXPECT_FALSE(ntsc.on_frame(0, tc(0, 0, 59, 29, true), 30000.0 / 1001));
  EXPECT_FALSE(ntsc.on_frame(1, tc(0, 1, 0, 2, true), 30000.0 / 1001));
  // Rate unknown: the frames count up and start again at the next second.
  TimeCodeWatch unknown;
  EXPECT_FALSE(unknown.on_frame(0, tc(0, 0, 1, 23), 0));
  EXPECT_FALSE(unknown.on_frame(1, tc(0, 0, 1, 24), 0));
  EXPECT_FALSE(unknown.on_frame(2, tc(0, 0, 2, 0), 0));
  EXPECT_EQ(w.out_of_sequence() + midnight.out_of_sequence() + ntsc.out_of_sequence() + unknown.out_of_sequence(), 0u);
  // A stream without time code is no break either.
  TimeCodeWatch none;
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_FALSE(none.on_frame(i, "", 25.0));
  EXPECT_EQ(none.missing(), 0u);
}

TEST(TimeCodeWatch, AFrameWithoutItsTimeCodeIsSaidOnceAndTheNextFollowsOnAcrossIt) {
  TimeCodeWatch w;
  EXPECT_FALSE(w.on_frame(10, tc(1, 0, 0, 10), 25.0));
  auto gap = w.on_frame(11, "", 25.0);
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->detail["kind"], "missing");
  EXPECT_EQ(gap->detail["last"], "01:00:00:10");
  EXPECT_NE(gap->message.find("frame 11 came without its time code"), std::string::npos) << gap->message;
  EXPECT_FALSE(w.on_frame(12, "", 25.0));  // the same gap: counted, not said again
  EXPECT_FALSE(w.on_frame(13, tc(1, 0, 0, 13), 25.0)) << "frames 11 and 12 were there, without time code";
  EXPECT_EQ(w.missing(), 2u);
  EXPECT_EQ(w.out_of_sequence(), 0u);
}

TEST(TimeCodeWatch, JumpsStandingStillAndGoingBackAreSaidWithTheFramesOff) {
  TimeCodeWatch w;
  EXPECT_FALSE(w.on_frame(0, tc(1, 0, 0, 0), 25.0));
  auto jump = w.on_frame(1, tc(1, 0, 0, 3), 25.0);  // two frames never arrived
  ASSERT_TRUE(jump);
  EXPECT_EQ(jump->detail["kind"], "jump");
  EXPECT_EQ(jump->detail["frames_off"], 2);
  EXPECT_EQ(jump->message, "time code jumps from 01:00:00:00 to 01:00:00:03, 2 frames ahead (frame 1)");
  EXPECT_FALSE(w.on_frame(2, tc(1, 0, 0, 4), 25.0));  // runs on from there
  auto back = w.on_frame(3, tc(0, 59, 59, 24), 25.0);  // a looped capture starts again
  ASSERT_TRUE(back);
  EXPECT_EQ(back->detail["kind"], "back");
  EXPECT_EQ(back->detail["frames_off"], -6);
  EXPECT_FALSE(w.on_frame(4, tc(1, 0, 0, 0), 25.0));
  auto still = w.on_frame(5, tc(1, 0, 0, 0), 25.0);  // a source stamping one time code on every frame
  ASSERT_TRUE(still);
  EXPECT_EQ(still->detail["kind"], "stands_still");
  for (std::uint64_t i = 6; i < 100; ++i) EXPECT_FALSE(w.on_frame(i, tc(1, 0, 0, 0), 25.0)) << "one event, not one a frame";
  EXPECT_EQ(w.out_of_sequence(), 2u + 95u);
  // Beyond the frames a second has at the stream's rate.
  TimeCodeWatch rate;
  EXPECT_FALSE(rate.on_frame(0, tc(1, 0, 0, 24), 25.0));
  EXPECT_TRUE(rate.on_frame(1, tc(1, 0, 0, 25), 25.0));
}

TEST(TimeCodeWatch, ANewTimelineIsNoBreak) {
  TimeCodeWatch w;
  EXPECT_FALSE(w.on_frame(0, tc(0, 0, 0, 18), 25.0));
  EXPECT_FALSE(w.on_frame(1, tc(0, 0, 0, 19), 25.0));
  w.restart();  // a looped capture's next pass
  EXPECT_FALSE(w.on_frame(2, tc(0, 0, 0, 0), 25.0));
  EXPECT_FALSE(w.on_frame(3, tc(0, 0, 0, 1), 25.0));
  EXPECT_EQ(w.out_of_sequence(), 0u);
}

TEST(StreamMonitor, TheTimeCodesBreaksAreEventsAndCounts) {
  MonitorOptions o;
  const auto t0 = StreamMonitor::Clock::time_point{} + std::chrono::seconds(10);
  auto m = StreamMonitor::create(o, t0);
  ASSERT_TRUE(m) << m.error().message;
  for (std::uint64_t i = 0; i < 30; ++i) {
    FrameReport f;
    f.index = i;
    f.decoded = i != 12;
    f.dropped_decoder_behind = i == 12;  // dropped frames carry their time code all the same
    f.frame_rate = 25;
    f.time_code = i == 5 ? "" : tc(0, 0, i / 25 + (i >= 20 ? 1 : 0), i % 25);
    (*m)->on_frame(f, t0);
  }
  nlohmann::json summary = nlohmann::json::object();
  (*m)->add_to_summary(summary, t0);
  EXPECT_EQ(summary["time_code"]["frames_without"], 1);
  EXPECT_EQ(summary["time_code"]["frames_out_of_sequence"], 1);  // frame 20: a second ahead
  std::vector<std::string> kinds;
  for (const auto& e : (*m)->events().recent(100))
    if (e.kind == EventKind::time_code) kinds.push_back(e.detail.value("kind", ""));
  EXPECT_EQ(kinds, (std::vector<std::string>{"missing", "jump"}));
  EXPECT_NE(prometheus_text(summary, "u").find("j2k_time_code_missing_total{url=\"u\"} 1"), std::string::npos);
  // A frame that begins a new timeline (the source started again) starts the time code afresh.
  FrameReport again;
  again.index = 30;
  again.frame_rate = 25;
  again.time_code = tc(0, 0, 0, 0);
  again.new_timeline = true;
  (*m)->on_frame(again, t0);
  nlohmann::json after = nlohmann::json::object();
  (*m)->add_to_summary(after, t0);
  EXPECT_EQ(after["time_code"]["frames_out_of_sequence"], 1);
}

}  // namespace
}  // namespace j2k::monitor
