// StreamMonitor turns counters and frames into events, history rows, alarms and metrics.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "monitor/stream_monitor.hpp"

namespace j2k::monitor {
namespace {

using Clock = StreamMonitor::Clock;
using std::chrono::seconds;

std::vector<nlohmann::json> read_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(StreamMonitor, EventsHistoryAndAlarmsFromOneRun) {
  const auto path = std::filesystem::temp_directory_path() / "j2k_stream_monitor_test.jsonl";
  MonitorOptions o;
  o.events_path = path.string();
  o.url_label = "rtp://239.1.1.1:5004";
  const auto t0 = Clock::time_point{} + seconds(1000);
  auto m = StreamMonitor::create(o, t0);
  ASSERT_TRUE(m) << m.error().message;
  auto& mon = **m;
  mon.on_stream_event({EventKind::sequence_gap, 9000, 65535 + 10, 65535 + 13, 4, "4 packets lost"});
  for (std::uint64_t i = 0; i < 50; ++i) {
    FrameReport f;
    f.index = i;
    f.rtp_timestamp = static_cast<std::uint32_t>(i * 3600);
    f.decoded = i != 7;
    f.complete = i != 7;
    f.format = i < 30 ? "1920x1080 4:2:2 10-bit" : "1280x720 4:2:2 10-bit";
    f.look = FrameLook{i, false};
    mon.on_frame(f, t0 + std::chrono::milliseconds(40 * i));
  }
  SecondReport s;
  s.t = 1;
  s.packets_received = 1000;
  s.packets_lost = 4;
  s.packets_duplicate = 2;
  s.payload_bytes = 1'250'000;
  s.frames_received = 25;
  s.frames_decoded = 24;
  s.frames_damaged = 1;
  mon.on_second(s, t0 + seconds(2), nlohmann::json::object());
  mon.on_second(SecondReport{.t = 2}, t0 + seconds(3), nlohmann::json::object());
  mon.on_second(SecondReport{.t = 3}, t0 + seconds(4), nlohmann::json::object());  // 2 s without packets
  nlohmann::json summary = nlohmann::json::object();
  mon.add_to_summary(summary, t0 + seconds(4));
  mon.close();

  ASSERT_EQ(summary["history"].size(), 3u);
  EXPECT_DOUBLE_EQ(summary["history"][0]["bitrate_mbps"].get<double>(), 10.0);
  EXPECT_GE(summary["alarms"]["raised"].get<int>(), 1);
  const auto lines = read_lines(path);
  auto find = [&](const char* kind) {
    for (const auto& l : lines)
      if (l["event"] == kind) return l;
    return nlohmann::json();
  };
  const auto gap = find("sequence_gap");
  ASSERT_FALSE(gap.is_null());
  EXPECT_EQ(gap["first_missing"], 9);  // wrapped: 65545 & 0xFFFF
  EXPECT_EQ(gap["last_missing"], 12);
  EXPECT_EQ(gap["count"], 4);
  EXPECT_EQ(gap["rtp_timestamp"], 9000);
  EXPECT_EQ(find("frame_damaged")["frame"], 7);
  EXPECT_EQ(find("format_change")["to"], "1280x720 4:2:2 10-bit");
  EXPECT_EQ(find("duplicates")["count"], 2);
  EXPECT_FALSE(find("signal_lost").is_null());
  EXPECT_EQ(find("alarm_raised")["alarm"], "loss");
  std::filesystem::remove(path);
}

// Review 2026-11-29: with --no-decode every frame went to the alarms as a frame without a
// picture, i.e. an error: "since_last_error_s" read 0.03 s on a clean stream.
TEST(StreamMonitor, FramesNotDecodedBecauseDecodingIsOffAreNoErrors) {
  const auto t0 = Clock::time_point{} + seconds(1000);
  auto m = StreamMonitor::create(MonitorOptions{}, t0);
  ASSERT_TRUE(m) << m.error().message;
  for (std::uint64_t i = 0; i < 50; ++i) {
    FrameReport f;
    f.index = i;
    f.decoded = false;  // decoding off: complete, no error
    (*m)->on_frame(f, t0 + std::chrono::milliseconds(40 * i));
  }
  (*m)->on_second(SecondReport{.t = 1, .packets_received = 500, .frames_received = 25}, t0 + seconds(2), nlohmann::json::object());
  EXPECT_FALSE((*m)->alarm_status(t0 + seconds(2)).since_last_error_s) << "no error happened";
  FrameReport damaged;
  damaged.index = 50;
  damaged.complete = false;
  (*m)->on_frame(damaged, t0 + seconds(2));
  EXPECT_TRUE((*m)->alarm_status(t0 + seconds(3)).since_last_error_s) << "an incomplete frame is one";
}

// Review 2026-11-29: a frame that arrived whole but whose codestream the decoder found damaged
// (it decoded what it could read) went by as a healthy frame: no event, no error. It is the
// question a technician asks first: the network, or what was sent?
TEST(StreamMonitor, AWholeFrameWithADamagedCodestreamIsAnEventOfItsOwn) {
  const auto path = std::filesystem::temp_directory_path() / "j2k_stream_monitor_damage.jsonl";
  MonitorOptions o;
  o.events_path = path.string();
  const auto t0 = Clock::time_point{} + seconds(1000);
  auto m = StreamMonitor::create(o, t0);
  ASSERT_TRUE(m) << m.error().message;
  for (std::uint64_t i = 0; i < 3; ++i) {
    FrameReport f;
    f.index = i;
    f.decoded = true;
    f.complete = i != 2;
    if (i == 1) f.damage = "the codestream ends early";
    (*m)->on_frame(f, t0 + std::chrono::milliseconds(40 * i));
  }
  (*m)->close();
  std::vector<nlohmann::json> damaged;
  for (const auto& l : read_lines(path))
    if (l["event"] == "frame_damaged") damaged.push_back(l);
  ASSERT_EQ(damaged.size(), 2u);
  EXPECT_EQ(damaged[0]["frame"], 1);
  EXPECT_EQ(damaged[0]["cause"], "codestream");
  EXPECT_EQ(damaged[0]["damage"], "the codestream ends early");
  EXPECT_NE(damaged[0]["message"].get<std::string>().find("every packet arrived"), std::string::npos) << damaged[0].dump();
  EXPECT_EQ(damaged[1]["frame"], 2);
  EXPECT_EQ(damaged[1]["cause"], "packets lost");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace j2k::monitor
