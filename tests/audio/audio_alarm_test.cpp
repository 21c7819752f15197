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
  // Review 2026-11-29: silence=0 marked every channel, loud ones too, silent for good (and a
  // "stalled"/"back" pair of events every second).
  for (const char* zero : {"silence=0", "silence=0s", "freeze=0ms", "signal=0", "black=0"}) {
    auto z = parse_alarm_spec(zero);
    ASSERT_FALSE(z) << zero;
    EXPECT_NE(z.error().message.find("must last some time"), std::string::npos) << z.error().message;
  }
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

// Review 2026-11-29: a silence that began and ended between two looks was counted as a
// channel silent "now": the alarm was raised a second after the sound came back and stood
// for that second (the player's banner said AUDIO SILENCE over sound). Such an episode is
// raised and cleared at once; one still going is raised and stays.
TEST(SoundAlarms, AnEpisodeAlreadyOverIsRaisedAndClearedAtOnce) {
  const auto t0 = AlarmMonitor::Clock::now();
  AlarmMonitor m(AlarmThresholds{}, t0);
  SecondSample s{.packets_received = 100};
  s.audio = AudioSecond{.channels = 2};
  EXPECT_TRUE(m.on_second(s, t0 + seconds(1)).empty());
  s.audio->silence_began = 1;  // fell silent and came back within the second
  auto e = m.on_second(s, t0 + seconds(2));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].kind, EventKind::alarm_raised);
  EXPECT_EQ(e[0].detail["alarm"], "audio_silence");
  EXPECT_NE(e[0].message.find("over now"), std::string::npos) << e[0].message;
  EXPECT_EQ(e[1].kind, EventKind::alarm_cleared);
  EXPECT_TRUE(m.status(t0 + seconds(2)).active.empty()) << "no alarm up while the sound is there";
  EXPECT_EQ(m.raised(), 1u);
  // Still silent at the look: raised, and it stays until the channel has sound.
  s.audio->silent_channels = 1;
  e = m.on_second(s, t0 + seconds(3));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].kind, EventKind::alarm_raised);
  s.audio->silence_began = 0;
  EXPECT_TRUE(m.on_second(s, t0 + seconds(4)).empty());
  EXPECT_EQ(m.status(t0 + seconds(4)).headline(), "AUDIO SILENCE");
  // A clip that is over by the look: the same.
  s.audio->silent_channels = 0;
  s.audio->clipping_began = 2;
  e = m.on_second(s, t0 + seconds(5));
  ASSERT_EQ(e.size(), 3u);  // silence cleared, clipping raised and cleared
  EXPECT_EQ(e[1].detail["alarm"], "audio_clipping");
  EXPECT_TRUE(m.status(t0 + seconds(5)).active.empty());
}

}  // namespace
}  // namespace j2k::monitor
