// Time code from an MXF system item, as FFmpeg 5.1 writes it (-timecode 10:20:30:12).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "depacketizer/mxf.hpp"
#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "depacketizer/rtp.hpp"
#include "depacketizer/timecode.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"
#include "sound_fixtures.hpp"
#include "hex.hpp"

namespace j2k::depacketizer {
namespace {

using test::hex;

TEST(TimeCode, FromAnFfmpegSystemItem) {
  const auto v = hex("58040000000000" "060e2b34040101070d010301020c0100" "0000000000000000000000000000000000"
                     "8112302010000000000000000000000000");
  ASSERT_EQ(v.size(), 57u);
  auto tc = system_item_timecode(v);
  ASSERT_TRUE(tc);
  EXPECT_EQ(tc->to_string(), "10:20:30:12");
  EXPECT_FALSE(tc->drop_frame);
}

TEST(TimeCode, DropFrameAndBadDigits) {
  auto df = parse_smpte12m(hex("49595923"));
  ASSERT_TRUE(df);
  EXPECT_EQ(df->to_string(), "23:59:59;09");
  EXPECT_FALSE(parse_smpte12m(hex("1A302010")));  // frames digit A
  EXPECT_FALSE(parse_smpte12m(hex("12603010")));  // 60 seconds
  EXPECT_FALSE(parse_smpte12m(hex("123020")));    // cut short
}

// Review 2026-11-28: j2ksend wrote frame numbers of 40 and over in BCD, the tens digit
// spilling into the drop-frame flag: at 50 frames/s frame 45 read back as "00:00:00;05".
// Above 30 frames/s ST 12-1 counts frame pairs and flags the second frame of a pair.
TEST(TimeCode, AboveThirtyFramesASecondTheCountIsInFramePairs) {
  for (double rate : {50.0, 60.0, 60000.0 / 1001, 25.0, 30.0, 24.0}) {
    const int frames = static_cast<int>(std::lround(rate));
    for (int f = 0; f < frames; ++f) {
      TimeCode tc;
      tc.hours = 23;
      tc.minutes = 59;
      tc.seconds = 58;
      tc.frames = f;
      const auto bytes = smpte12m_bytes(tc, rate);
      EXPECT_LE(bytes[0] & 0x3F, 0x39) << "the frames field fits its two tens bits";
      EXPECT_EQ(bytes[0] & 0x40, 0) << "not drop-frame: " << rate << " " << f;
      const auto back = parse_smpte12m(Bytes(bytes.data(), bytes.size()), rate);
      ASSERT_TRUE(back) << rate << " " << f;
      EXPECT_EQ(*back, tc) << rate << " " << f;
    }
  }
  // The flag's place: the hours byte at 50, the seconds byte at 60.
  TimeCode odd;
  odd.frames = 45;
  const auto at50 = smpte12m_bytes(odd, 50), at60 = smpte12m_bytes(odd, 60);
  EXPECT_EQ(hex("22000080"), std::vector<std::uint8_t>(at50.begin(), at50.end()));
  EXPECT_EQ(hex("22800000"), std::vector<std::uint8_t>(at60.begin(), at60.end()));
  // Through a system item as j2ksend writes it and the depacketizer reads it.
  const auto item = packetizer::mxf_system_item(7, odd, 50);
  auto h = parse_klv_header(item);
  ASSERT_TRUE(h.ok());
  auto read = system_item_timecode(Bytes(item).subspan(h->header_size), 50);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->to_string(), "00:00:00:45");
}

TEST(TimeCode, SystemItemsWithoutOrWithCutStamps) {
  EXPECT_FALSE(system_item_timecode(hex("48040000000000")));  // no user stamp flag
  EXPECT_FALSE(system_item_timecode(hex("58040000000000060e2b34")));  // cut inside the label
  EXPECT_FALSE(system_item_timecode({}));
}

// Review 2026-11-28: every system item was read for a time code; FFmpeg follows the system
// metadata pack with a package metadata set (a local set, item 02), and a set whose bytes
// happen to read as a stamp would replace the pack's time code. Only the pack holds it.
TEST(TimeCode, OnlyTheSystemMetadataPackGivesTheTimeCode) {
  std::vector<CodestreamUnit> units;
  MxfRtpDepacketizer depack{[&](CodestreamUnit&& u) { units.push_back(std::move(u)); }};
  packetizer::RtpPacketizer rtp{0x1234, 96, 100, 1400};
  TimeCode right;
  right.hours = 1;
  right.minutes = 2;
  right.seconds = 3;
  right.frames = 4;
  // A package metadata set key (06 0E 2B 34 02 43 ... 04 01 02 01) around bytes that read as
  // a pack with time code 00:00:00:00.
  auto set = packetizer::mxf_system_item(0, TimeCode{}, 25);
  set[5] = 0x43;
  set[14] = 0x02;
  set[15] = 0x01;
  std::vector<std::vector<std::uint8_t>> datagrams;
  for (const auto& klv : {packetizer::mxf_system_item(0, right, 25), set,
                          packetizer::mxf_picture_element(test::stand_in_codestream(500))})
    rtp.packetize(klv, 3600, datagrams);
  for (const auto& d : datagrams) {
    auto p = parse_rtp(d);
    ASSERT_TRUE(p);
    depack.push(*p, false, std::chrono::steady_clock::now());
  }
  depack.flush();
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0].time_code, "01:02:03:04");
}

// Review 2026-11-29 (found by the time code's continuity check end to end): after a loss at
// the end of a frame, the next frame's unit was opened before its system item was read, and
// its time code, which arrived, was left out (the operator was told it was missing).
TEST(TimeCode, AFrameAfterALossKeepsTheTimeCodeItBrought) {
  std::vector<CodestreamUnit> units;
  MxfRtpDepacketizer depack{[&](CodestreamUnit&& u) { units.push_back(std::move(u)); }};
  packetizer::RtpPacketizer rtp{0x1234, 96, 100, 400};
  std::vector<std::vector<std::uint8_t>> frames[2];
  for (int f = 0; f < 2; ++f) {
    TimeCode tc;
    tc.seconds = 1;
    tc.frames = f;
    for (const auto& klv : {packetizer::mxf_system_item(static_cast<std::uint16_t>(f), tc, 25),
                            packetizer::mxf_picture_element(test::stand_in_codestream(1500))})
      rtp.packetize(klv, static_cast<std::uint32_t>(3600 * f), frames[f]);
  }
  ASSERT_GT(frames[0].size(), 2u);
  frames[0].pop_back();  // frame 0's last packet is lost
  bool loss = false;
  for (int f = 0; f < 2; ++f)
    for (const auto& d : frames[f]) {
      auto p = parse_rtp(d);
      ASSERT_TRUE(p);
      depack.push(*p, std::exchange(loss, false), std::chrono::steady_clock::now());
      loss = f == 0 && &d == &frames[0].back();
    }
  depack.flush();
  ASSERT_EQ(units.size(), 2u);
  EXPECT_FALSE(units[0].complete);
  EXPECT_EQ(units[0].time_code, "00:00:01:00");
  EXPECT_TRUE(units[1].complete);
  EXPECT_EQ(units[1].time_code, "00:00:01:01") << "its system item arrived after the loss";
}

}  // namespace
}  // namespace j2k::depacketizer
