// The sound's alarms in the operator's view: silence (a dead channel, or sound gone) is
// critical like a frozen picture, clipping a warning; both parse from --alarm.
#include <gtest/gtest.h>

#include "monitor/alarms.hpp"

namespace j2k::monitor {
namespace {

using std::chrono::seconds;

TEST(SoundAlarms, ParseSilenceAndClipping) {
  auto t = parse_alarm_spec("silence=600ms,clipping=off");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_DOUBLE_EQ(t->silence_s, 0.6);
  EXPECT_LT(t->clipping, 0);
  auto d = parse_alarm_spec("loss=1%");
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(d->silence_s, 2.0);
  EXPECT_GE(d->clipping, 0) << "on unless turned off";
  EXPECT_FALSE(parse_alarm_spec("clipping=3s"));
  EXPECT_FALSE(parse_alarm_spec("silence=loud"));
}

TEST(SoundAlarms, ADeadChannelIsCriticalClippingAWarningAndNoPacketsIsNotSilence) {
  const auto t0 = AlarmMonitor::Clock::now();
  AlarmMonitor m(AlarmThresholds{}, t0);
  SecondSample s{.packets_received = 100};
  EXPECT_TRUE(m.on_second(s, t0 + seconds(1)).empty()) << "no sound in the stream: no sound alarms";
  s.audio = AudioSecond{.channels = 2};
  EXPECT_TRUE(m.on_second(s, t0 + seconds(2)).empty());
  s.audio->silent_channels = 1;
  auto e = m.on_second(s, t0 + seconds(3));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].detail["alarm"], "audio_silence");
  auto st = m.status(t0 + seconds(3));
  EXPECT_EQ(st.severity, Severity::critical);
  EXPECT_EQ(st.headline(), "AUDIO SILENCE");
  s.audio->silent_channels = 0;
  s.audio->clipping_channels = 2;
  e = m.on_second(s, t0 + seconds(4));
  ASSERT_EQ(e.size(), 2u);  // silence cleared, clipping raised
  st = m.status(t0 + seconds(4));
  EXPECT_EQ(st.severity, Severity::warning);
  EXPECT_EQ(st.headline(), "AUDIO CLIPPING");
  // Sound that stopped arriving with the packets: that is no signal, not silence.
  SecondSample quiet{.packets_received = 0};
  quiet.audio = AudioSecond{.channels = 2, .stalled = true};
  e = m.on_second(quiet, t0 + seconds(5));
  for (const auto& ev : e) EXPECT_NE(ev.detail["alarm"], "audio_silence");
  // While packets flow, sound that stopped is silence on every channel.
  SecondSample stalled{.packets_received = 100};
  stalled.audio = AudioSecond{.channels = 2, .stalled = true};
  bool raised = false;
  for (const auto& ev : m.on_second(stalled, t0 + seconds(6)))
    raised |= ev.kind == EventKind::alarm_raised && ev.detail["alarm"] == "audio_silence";
  EXPECT_TRUE(raised);
  EXPECT_EQ(m.raised(), 3u);
}

}  // namespace
}  // namespace j2k::monitor
