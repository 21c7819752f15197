// The sender side: both RTP packetizers write their fixed header through one base, so a
// stream switching between them keeps one sequence and the header layout of RFC 3550 5.1.
#include <gtest/gtest.h>

#include <vector>

#include "depacketizer/rfc5371.hpp"
#include "depacketizer/rtp.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "packetizer/rtp_packetizer.hpp"

using namespace j2k;
using namespace j2k::packetizer;

namespace {
std::vector<std::uint8_t> tiny_codestream(std::size_t body) {
  std::vector<std::uint8_t> cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A,
                                  0, 0, 0, 0, 0, 0, 0, 1};
  for (std::size_t i = 0; i < body; ++i) cs.push_back(static_cast<std::uint8_t>(i * 13));
  return cs;
}
}  // namespace

TEST(RtpPacketizers, KlvFramingWritesTheFixedHeaderAndMarksTheUnitsLastPacket) {
  RtpPacketizer p(0xCAFEBABE, 96, 0xFFFE, 100);
  std::vector<std::uint8_t> unit(250, 0x5A);
  std::vector<std::vector<std::uint8_t>> out;
  p.packetize(unit, 123456, out);
  ASSERT_EQ(out.size(), 3u);
  const std::uint16_t expected_seq[] = {0xFFFE, 0xFFFF, 0x0000};  // wraps modulo 2^16
  std::size_t payload = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i][0], 0x80);  // V=2, P=0, X=0, CC=0
    auto rtp = depacketizer::parse_rtp(out[i]);
    ASSERT_TRUE(rtp.ok());
    EXPECT_EQ(rtp->sequence, expected_seq[i]);
    EXPECT_EQ(rtp->marker, i + 1 == out.size());
    EXPECT_EQ(rtp->payload_type, 96);
    EXPECT_EQ(rtp->timestamp, 123456u);
    EXPECT_EQ(rtp->ssrc, 0xCAFEBABEu);
    EXPECT_LE(rtp->payload.size(), 100u);
    payload += rtp->payload.size();
  }
  EXPECT_EQ(payload, unit.size());
  EXPECT_EQ(p.next_sequence(), 1);
}

// Review 2026-11-29: a codestream of 16 MiB or more was sent with its 24-bit fragment offsets
// wrapping to 0 mid-frame (GStreamer's depayloader then drops what it gathered). Refused now,
// with what to do instead.
TEST(RtpPacketizers, Rfc5371RefusesACodestreamItsOffsetsCannotReach) {
  Rfc5371Packetizer p(1, 97, 0, 1400);
  std::vector<std::vector<std::uint8_t>> out;
  const auto fits = tiny_codestream(0xFFFFFF - 200);
  EXPECT_TRUE(p.packetize(fits, 0, 0, out));
  out.clear();
  const auto large = tiny_codestream(0xFFFFFF + 1);
  auto st = p.packetize(large, 0, 0, out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("24 bits"), std::string::npos) << st.error().message;
  EXPECT_TRUE(out.empty());
}

TEST(RtpPacketizers, Rfc5371PacketsCarryTheSameFixedHeaderThenThePayloadHeader) {
  const auto cs = tiny_codestream(400);
  Rfc5371Packetizer p(0x01020304, 97, 500, 150);
  std::vector<std::vector<std::uint8_t>> out;
  ASSERT_TRUE(p.packetize(cs, 90000, 0, out));
  ASSERT_GE(out.size(), 3u);
  std::vector<std::uint8_t> joined;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto rtp = depacketizer::parse_rtp(out[i]);
    ASSERT_TRUE(rtp.ok());
    EXPECT_EQ(rtp->sequence, 500 + i);
    EXPECT_EQ(rtp->marker, i + 1 == out.size());
    EXPECT_EQ(rtp->payload_type, 97);
    EXPECT_EQ(rtp->ssrc, 0x01020304u);
    EXPECT_LE(rtp->payload.size(), 150u);
    Bytes body;
    auto h = depacketizer::parse_rfc5371_header(rtp->payload, body);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->fragment_offset, joined.size());
    joined.insert(joined.end(), body.begin(), body.end());
  }
  EXPECT_EQ(joined, cs);
  EXPECT_EQ(p.next_sequence(), 500 + out.size());
}
