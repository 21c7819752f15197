// MXF writer → RTP packetizer → depacketizer round trips, with loss and garbage.
#include <gtest/gtest.h>

#include <random>

#include "depacketizer/mxf.hpp"
#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"
#include "depacketizer/rtp_session.hpp"
#include "mxf_stream.hpp"

using namespace j2k;
using namespace j2k::depacketizer;
using namespace j2k::packetizer;

namespace {

using Packets = std::vector<std::vector<std::uint8_t>>;

std::vector<std::uint8_t> fake_codestream(int frame, std::size_t size) {
  std::vector<std::uint8_t> cs(size);
  std::mt19937 rng(static_cast<unsigned>(frame));
  for (auto& b : cs) b = static_cast<std::uint8_t>(rng());
  cs[0] = 0xFF; cs[1] = 0x4F;
  return cs;
}

/// A stream as j2ksend makes it: header metadata on frame 0 and every `repeat` frames.
Packets make_stream(int frames, std::size_t frame_bytes, int repeat = 10, std::size_t mtu = 1400) {
  return test::mxf_rtp_packets({.first_sequence = 65000, .mtu = mtu, .timestamp_step = 1800, .header_every = repeat}, frames,
                               [&](int f) { return fake_codestream(f, frame_bytes + static_cast<std::size_t>(f) * 37); });
}

}  // namespace

TEST(Klv, BerLengthsShortAndLongForm) {
  std::vector<std::uint8_t> k = {0x06, 0x0E, 0x2B, 0x34, 1, 2, 1, 1, 0x0D, 1, 3, 1, 0x15, 1, 8, 1, 0x05};
  auto h = parse_klv_header(k);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->length, 5u);
  EXPECT_EQ(h->header_size, 17u);
  EXPECT_EQ(classify_key(h->key), KlvKind::picture_element);
  k[16] = 0x83;
  EXPECT_EQ(parse_klv_header(k).error().kind, ErrorKind::need_more_data);
  k.insert(k.end(), {0x01, 0x00, 0x00});
  EXPECT_EQ(parse_klv_header(k)->length, 65536u);
  k[16] = 0x89;  // 9 length bytes: invalid
  EXPECT_EQ(parse_klv_header(k).error().kind, ErrorKind::corrupt);
  k[0] = 0x07;
  EXPECT_EQ(parse_klv_header(k).error().kind, ErrorKind::corrupt);
}

namespace {
/// The picture descriptor mxf_cdci_descriptor writes for `p`, read back by the receiver's parser.
Result<PictureDescriptor> written_descriptor(const MxfPictureParams& p) {
  auto klv = mxf_cdci_descriptor(p);
  auto h = parse_klv_header(klv);
  if (!h) return h.error();
  return parse_picture_descriptor(Bytes(klv).subspan(h->header_size), false);
}
}  // namespace

TEST(MxfDescriptor, TheTransferCharacteristicSaysPqOrHlg) {
  for (const TransferFunction t : {TransferFunction::sdr, TransferFunction::pq, TransferFunction::hlg}) {
    MxfPictureParams p;
    p.depth = 10;
    p.coding = ColourCoding::ycbcr_bt2020;
    p.transfer = t;
    auto d = written_descriptor(p);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->transfer, t);
    EXPECT_EQ(d->describe().find("HDR") != std::string::npos, t != TransferFunction::sdr) << d->describe();
  }
  // The BT.709 transfer UL (byte 13 = 02), and a UL of another node with 0A in byte 13: SDR.
  for (const std::uint8_t node12 : {0x01, 0x02}) {
    const std::vector<std::uint8_t> set = {0x32, 0x10, 0x00, 0x10, 0x06, 0x0E, 0x2B, 0x34, 0x04, 0x01, 0x01, 0x0D,
                                           0x04, 0x01, 0x01, 0x01, node12, static_cast<std::uint8_t>(node12 == 0x01 ? 0x02 : 0x0A),
                                           0x00, 0x00};
    auto d = parse_picture_descriptor(set, false);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->transfer, TransferFunction::sdr);
  }
}

TEST(MxfDescriptor, WriterAndParserAgree) {
  MxfPictureParams p;
  p.width = 1920; p.height = 540; p.frame_layout = 1; p.field_dominance = 1; p.depth = 10;
  p.rate_num = 30000; p.rate_den = 1001; p.coding = ColourCoding::ycbcr_bt2020;
  auto klv = mxf_cdci_descriptor(p);
  auto h = parse_klv_header(klv);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(classify_key(h->key), KlvKind::cdci_descriptor);
  auto d = parse_picture_descriptor(Bytes(klv).subspan(h->header_size), false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->stored_width, 1920u);
  EXPECT_EQ(d->stored_height, 540u);
  EXPECT_EQ(d->frame_layout, 1);
  EXPECT_EQ(d->field_dominance, 1);
  EXPECT_EQ(d->component_depth, 10u);
  EXPECT_EQ(d->horizontal_subsampling, 2u);
  EXPECT_NEAR(d->frame_rate(), 29.97, 0.01);
  EXPECT_EQ(d->coding, ColourCoding::ycbcr_bt2020);
  EXPECT_FALSE(d->full_range());
  EXPECT_EQ(d->wrapping, 1);
}

// Review 2026-11-29: narrow range was written with ColorRange 226 (8 bits) or 901 (10 bits)
// where ST 377-1 counts the colour-difference levels, 16..240 (225) and 64..960 (897); FFmpeg
// recognises only those and called our streams' range unspecified.
TEST(MxfDescriptor, TheRangeItemsAreThoseOfSt377) {
  for (const std::uint32_t depth : {8u, 10u, 12u})
    for (const bool full : {false, true}) {
      MxfPictureParams p;
      p.depth = depth;
      p.full_range = full;
      auto d = written_descriptor(p);
      ASSERT_TRUE(d.ok());
      const std::uint32_t shift = depth - 8;
      EXPECT_EQ(d->black_level, full ? 0u : 16u << shift) << depth;
      EXPECT_EQ(d->white_level, full ? (1u << depth) - 1 : 235u << shift) << depth;
      EXPECT_EQ(d->colour_range, full ? 1u << depth : (224u << shift) + 1) << depth;
      EXPECT_EQ(d->full_range(), full);
    }
}

TEST(MxfDescriptor, RejectsItemsLongerThanTheSet) {
  std::vector<std::uint8_t> v = {0x32, 0x03, 0x00, 0x10, 0, 0};
  EXPECT_FALSE(parse_picture_descriptor(v, false).ok());
}

TEST(MxfRtpDepacketizer, ReassemblesEveryFrameIntact) {
  const int frames = 40;
  Packets packets = make_stream(frames, 20000);
  std::vector<CodestreamUnit> units;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); });
  for (auto& p : packets) session.on_datagram(p, std::chrono::steady_clock::now());
  session.flush();
  ASSERT_EQ(units.size(), static_cast<std::size_t>(frames));
  for (int f = 0; f < frames; ++f) {
    ASSERT_TRUE(units[f].complete);
    ASSERT_EQ(units[f].codestreams.size(), 1u);
    EXPECT_EQ(units[f].codestreams[0], fake_codestream(f, 20000 + static_cast<std::size_t>(f) * 37)) << f;
    EXPECT_EQ(units[f].rtp_timestamp, static_cast<std::uint32_t>(f * 1800));
    ASSERT_TRUE(units[f].descriptor.has_value());
  }
  auto s = session.snapshot();
  EXPECT_EQ(s.packets_received, packets.size());
  EXPECT_EQ(s.packets_lost, 0u);
  EXPECT_EQ(s.frames_complete, static_cast<std::uint64_t>(frames));
  EXPECT_EQ(s.descriptor->stored_width, 1280u);
  EXPECT_NEAR(s.frame_rate, 50.0, 0.01);
}

TEST(MxfRtpDepacketizer, LossMarksOnlyAffectedFramesAndResyncs) {
  const int frames = 30;
  Packets packets = make_stream(frames, 14000);  // ~11 packets per frame
  // Drop one packet in the middle of frame 5's codestream and all of frame 12's packets but the first.
  std::vector<std::uint32_t> ts_of;
  for (auto& p : packets) ts_of.push_back(static_cast<std::uint32_t>(p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7]));
  std::vector<bool> drop(packets.size(), false);
  int seen5 = 0;
  bool first12 = true;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (ts_of[i] == 5 * 1800 && ++seen5 == 6) drop[i] = true;
    if (ts_of[i] == 12 * 1800) { if (!first12) drop[i] = true; first12 = false; }
  }
  std::vector<CodestreamUnit> units;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); });
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (drop[i]) { ++dropped; continue; }
    session.on_datagram(packets[i], std::chrono::steady_clock::now());
  }
  session.flush();
  ASSERT_EQ(units.size(), static_cast<std::size_t>(frames));
  int complete = 0;
  for (const auto& u : units) {
    const auto f = static_cast<int>(u.rtp_timestamp / 1800);
    if (f == 5 || f == 12) {
      EXPECT_FALSE(u.complete) << f;
    } else {
      EXPECT_TRUE(u.complete) << f;
      EXPECT_EQ(u.codestreams.at(0), fake_codestream(f, 14000 + static_cast<std::size_t>(f) * 37));
      ++complete;
    }
  }
  EXPECT_EQ(complete, frames - 2);
  auto s = session.snapshot();
  EXPECT_EQ(s.packets_lost, dropped);
  EXPECT_EQ(s.frames_incomplete, 2u);
}

TEST(MxfRtpDepacketizer, GarbageAndRuntsAreCountedNeverFatal) {
  std::vector<CodestreamUnit> units;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); });
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::uint8_t> junk(rng() % 1500);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    if (i % 3 == 0 && junk.size() > 12) junk[0] = 0x80;  // valid-looking RTP with junk payload
    session.on_datagram(junk, std::chrono::steady_clock::now());
  }
  // The real stream still gets through afterwards.
  Packets packets = make_stream(5, 3000);
  for (auto& p : packets) session.on_datagram(p, std::chrono::steady_clock::now());
  session.flush();
  auto s = session.snapshot();
  EXPECT_GT(s.packets_malformed, 1000u);
  EXPECT_GE(s.frames_complete, 4u);  // follows the real SSRC once it persists
}

TEST(MxfRtpDepacketizer, CutElementKeepsItsExactPrefixForResilientDecoding) {
  Packets packets = make_stream(8, 14000);
  // Drop the 8th packet of frame 3 (inside its codestream).
  std::vector<CodestreamUnit> units;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); });
  int seen = 0;
  for (auto& p : packets) {
    const auto ts = static_cast<std::uint32_t>(p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7]);
    if (ts == 3 * 1800 && ++seen == 8) continue;
    session.on_datagram(p, std::chrono::steady_clock::now());
  }
  session.flush();
  ASSERT_EQ(units.size(), 8u);
  const CodestreamUnit& cut = units[3];
  EXPECT_FALSE(cut.complete);
  ASSERT_EQ(cut.codestreams.size(), 1u);
  const auto full = fake_codestream(3, 14000 + 3 * 37);
  ASSERT_LT(cut.codestreams[0].size(), full.size());
  EXPECT_GT(cut.missing_bytes, 0u);
  EXPECT_TRUE(std::equal(cut.codestreams[0].begin(), cut.codestreams[0].end(), full.begin()));
  ASSERT_EQ(cut.missing_ranges.size(), 1u);  // the cut tail, exactly
  EXPECT_EQ(cut.missing_ranges[0].begin, cut.codestreams[0].size());
  EXPECT_EQ(cut.missing_ranges[0].end, full.size());
}

TEST(MxfRtpDepacketizer, TimestampJumpStartsANewFrameAndKeepsTheRate) {
  Packets packets = make_stream(20, 3000);
  // From frame 10 on, the sender's timestamps jump by an arbitrary offset (restart of its clock).
  for (auto& p : packets) {
    auto ts = static_cast<std::uint32_t>(p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7]);
    if (ts >= 10 * 1800) ts += 123456789;
    p[4] = static_cast<std::uint8_t>(ts >> 24); p[5] = static_cast<std::uint8_t>(ts >> 16);
    p[6] = static_cast<std::uint8_t>(ts >> 8); p[7] = static_cast<std::uint8_t>(ts);
  }
  std::vector<CodestreamUnit> units;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); });
  for (auto& p : packets) session.on_datagram(p, std::chrono::steady_clock::now());
  session.flush();
  ASSERT_EQ(units.size(), 20u);
  for (const auto& u : units) EXPECT_TRUE(u.complete);
  EXPECT_NEAR(session.snapshot().frame_rate, 50.0, 0.5);  // the jump is not taken as a frame interval
}

#include "depacketizer/rfc5371.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"

TEST(Rfc5371Depacketizer, HoleInTheFragmentChainIsNeverComplete) {
  // A real-looking codestream: SOC, a minimal main header, SOT, data; cut into fragments.
  std::vector<std::uint8_t> cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A,
                                  0, 0, 0, 0, 0, 0, 0, 1};
  for (int i = 0; i < 3000; ++i) cs.push_back(static_cast<std::uint8_t>(i * 7));
  cs.push_back(0xFF);
  cs.push_back(0xD9);
  Rfc5371Packetizer packetizer(0x77, 96, 1, 500);
  std::vector<std::vector<std::uint8_t>> packets;
  ASSERT_TRUE(packetizer.packetize(cs, 9000, 0, packets));
  ASSERT_GT(packets.size(), 4u);
  std::vector<CodestreamUnit> units;
  Rfc5371Depacketizer d([&](CodestreamUnit&& u) { units.push_back(std::move(u)); });
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (i == 3) continue;  // a hole
    auto p = parse_rtp(packets[i]);
    ASSERT_TRUE(p.ok());
    d.push(*p, i == 4, std::chrono::steady_clock::now());
  }
  d.flush();
  ASSERT_EQ(units.size(), 1u);
  EXPECT_FALSE(units[0].complete);
  ASSERT_EQ(units[0].missing_ranges.size(), 1u);
  const auto& hole = units[0].missing_ranges[0];
  EXPECT_EQ(hole.end - hole.begin, units[0].missing_bytes);
  EXPECT_EQ(hole.end - hole.begin, packets[3].size() - 20);  // the lost payload (RTP 12 + RFC 5371 8)
  // Everything outside the hole is the sender's bytes.
  EXPECT_TRUE(std::equal(units[0].codestreams[0].begin(), units[0].codestreams[0].begin() + static_cast<std::ptrdiff_t>(hole.begin), cs.begin()));
  EXPECT_TRUE(std::equal(units[0].codestreams[0].begin() + static_cast<std::ptrdiff_t>(hole.end), units[0].codestreams[0].end(), cs.begin() + static_cast<std::ptrdiff_t>(hole.end)));
}
