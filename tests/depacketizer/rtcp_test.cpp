// RTCP sender reports and BYE (RFC 3550 6.4.1, 6.6): the parser's A.2 checks, the writer the
// sender uses, and the receiver's accounting of packets and frames lost at a stream's end.
#include "depacketizer/rtcp.hpp"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <vector>

#include "depacketizer/rtp_session.hpp"
#include "packetizer/rtcp_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"

using namespace j2k;
using namespace j2k::depacketizer;
using Bytes8 = std::vector<std::uint8_t>;

namespace {
SenderReport report(std::uint32_t packets, std::uint32_t rtp_timestamp = 1000) {
  SenderReport sr;
  sr.ssrc = 0xABCD0123;
  sr.ntp_timestamp = 0xE1234567'80000000ull;
  sr.rtp_timestamp = rtp_timestamp;
  sr.packet_count = packets;
  sr.octet_count = packets * 1000u;
  return sr;
}

/// Four RFC 5371 frames of equal size, 3600 ticks apart, sequence numbers from 100.
void four_frames(std::vector<Bytes8>& packets) {
  packetizer::Rfc5371Packetizer p(0xABCD0123, 96, 100, 400);
  Bytes8 cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0, 1};
  cs.resize(cs.size() + 1500, 0x44);
  for (int f = 0; f < 4; ++f) ASSERT_TRUE(p.packetize(cs, static_cast<std::uint32_t>(3600 * f), 0, packets));
}

/// Ten RFC 5371 frames of equal size from sequence `first`, 3600 ticks apart from 1000;
/// `frame_end[f]`: the packets up to and including frame f's last.
void ten_frames(std::uint16_t first, std::uint8_t fill, std::vector<Bytes8>& packets, std::vector<std::size_t>& frame_end) {
  Bytes8 cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0, 1};
  cs.resize(cs.size() + 1500, fill);
  packetizer::Rfc5371Packetizer p(0xABCD0123, 96, first, 400);
  for (int f = 0; f < 10; ++f) {
    ASSERT_TRUE(p.packetize(cs, static_cast<std::uint32_t>(1000 + 3600 * f), 0, packets));
    frame_end.push_back(packets.size());
  }
}

SessionConfig rfc5371_config() {
  SessionConfig config;
  config.format = PayloadFormat::rfc5371;
  return config;
}
}  // namespace

TEST(Rtcp, ParsesTheSenderReportSdesAndByeTheSenderWrites) {
  const Bytes8 bytes = packetizer::rtcp_sender_report(report(77, 4242), "j2ksend@127.0.0.1", true);
  EXPECT_EQ(bytes.size() % 4, 0u);  // every RTCP packet is a whole number of 32-bit words
  auto c = parse_rtcp(bytes);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->packets, 3);
  ASSERT_TRUE(c->sender_report);
  EXPECT_EQ(c->sender_report->ssrc, 0xABCD0123u);
  EXPECT_EQ(c->sender_report->ntp_timestamp, 0xE1234567'80000000ull);
  EXPECT_EQ(c->sender_report->rtp_timestamp, 4242u);
  EXPECT_EQ(c->sender_report->packet_count, 77u);
  EXPECT_EQ(c->sender_report->octet_count, 77000u);
  ASSERT_EQ(c->bye.size(), 1u);
  EXPECT_EQ(c->bye[0], 0xABCD0123u);
  // Without BYE: SR + SDES only.
  auto plain = parse_rtcp(packetizer::rtcp_sender_report(report(1), "x", false));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->packets, 2);
  EXPECT_TRUE(plain->bye.empty());
}

TEST(Rtcp, NtpTimestampCountsFrom1900) {
  // 1970-01-01 is 2 208 988 800 s after 1900-01-01; half a second is 2^31 in the fraction.
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(500));
  EXPECT_EQ(packetizer::ntp_timestamp(t), (2208988800ull << 32) | 0x80000000ull);
}

TEST(Rtcp, RejectsWhatRfc3550A2Rejects) {
  const Bytes8 good = packetizer::rtcp_sender_report(report(5), "abc", true);
  ASSERT_TRUE(parse_rtcp(good).ok());
  auto with = [&](auto edit) { Bytes8 b = good; edit(b); return parse_rtcp(b).ok(); };
  EXPECT_FALSE(with([](Bytes8& b) { b[0] = 0x40; }));                 // version 1
  EXPECT_FALSE(with([](Bytes8& b) { b[1] = 202; }));                  // compound starts with SDES
  EXPECT_FALSE(with([](Bytes8& b) { b[3] = 200; }));                  // SR length past the datagram
  EXPECT_FALSE(with([](Bytes8& b) { b[0] |= 0x20; }));                // padding in a packet that is not the last
  EXPECT_FALSE(with([](Bytes8& b) { b.push_back(0); b.push_back(0); }));  // stray bytes after the last packet
  EXPECT_FALSE(with([](Bytes8& b) { b.resize(b.size() - 4); }));      // BYE cut short
  EXPECT_FALSE(with([](Bytes8& b) { b[0] = 0x81; }));                 // one report block that is not there
  EXPECT_FALSE(with([](Bytes8& b) { b[b.size() - 8] = 0x83; }));      // BYE of 3 sources in one word
  EXPECT_FALSE(parse_rtcp(Bytes8{}).ok());
  EXPECT_FALSE(parse_rtcp(Bytes8{0x80, 200, 0, 0}).ok());             // a header and nothing else
}

TEST(Rtcp, SkipsReceiverReportsAndUnknownTypesButReadsByeInAnyPosition) {
  // RR with one report block (2 + 6 words), APP (3 words), BYE of two sources with a reason.
  Bytes8 b = {0x81, 201, 0, 7};
  b.resize(b.size() + 28, 0x11);
  for (int x : {0x80, 204, 0, 2, 0, 0, 0, 1, 0x6E, 0x61, 0x6D, 0x65}) b.push_back(static_cast<std::uint8_t>(x));
  for (int x : {0x82, 203, 0, 3, 0, 0, 0, 7, 0, 0, 0, 9, 2, 0x6F, 0x6B, 0}) b.push_back(static_cast<std::uint8_t>(x));
  auto c = parse_rtcp(b);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->packets, 3);
  EXPECT_FALSE(c->sender_report);
  EXPECT_EQ(c->bye, (std::vector<std::uint32_t>{7, 9}));
}

TEST(SenderTail, PacketsSentAfterTheLastOneReceivedCountAsLost) {
  SenderTail tail;
  EXPECT_EQ(tail.lost_after(500), 0u);  // nothing known yet
  // The receiver had packets up to extended sequence 1049 when the sender had sent 50.
  tail.on_report(report(50), 1049u);
  EXPECT_EQ(tail.lost_after(1049), 0u);
  // The sender goes on to 80 packets; the receiver's last is 1075: 4 more were sent.
  tail.on_report(report(80), 1075u);
  EXPECT_EQ(tail.lost_after(1075), 4u);
  EXPECT_EQ(tail.lost_after(1079), 0u);  // they arrive late after all
  EXPECT_EQ(tail.reports(), 2u);
  EXPECT_EQ(tail.packet_count(), 80u);
}

TEST(SenderTail, AReportThatOvertookItsPacketsDoesNotLowerTheBound) {
  SenderTail tail;
  tail.on_report(report(100), 1099u);  // in step: sequence − count = 999
  tail.on_report(report(200), 1150u);  // read before the last 49 packets before it: bound 950
  EXPECT_EQ(tail.lost_after(1150), 49u);  // the larger bound stands: 999 + 200 − 1150
}

TEST(SenderTail, CountsContinuePastTwoToThe32) {
  SenderTail tail;
  tail.on_report(report(0xFFFFFFF0u), 0xFFFFFFF0u + 10);
  tail.on_report(report(0x00000010u), std::nullopt);  // wrapped: 2^32 + 16
  EXPECT_EQ(tail.packet_count(), (1ull << 32) + 16);
}

TEST(SenderTail, FramesAfterTheLastArrivalAreCountedFromTheFinalReport) {
  SenderTail tail;
  tail.on_report(report(10, 3600 * 10 + 100), 9u);  // sent in the slot after frame 9's (3600 ticks at 25 fps)
  EXPECT_EQ(tail.frames_after(3600 * 9, 3600), 0u);  // no BYE yet: not final
  tail.on_bye();
  EXPECT_EQ(tail.frames_after(3600 * 9, 3600), 0u);  // the last frame arrived
  EXPECT_EQ(tail.frames_after(3600 * 7, 3600), 2u);  // frames 8 and 9 never did
  EXPECT_EQ(tail.frames_after(3600 * 7, 0), 0u);     // no frame interval known: no guess
}

TEST(RtpSessionRtcp, LossAtTheVeryEndIsCountedFromTheSendersReports) {
  spdlog::set_level(spdlog::level::off);
  // Ten RFC 5371 frames; the stream's last 7 packets (the last frame and part of the one
  // before) never arrive. Without RTCP the receiver cannot know they were sent.
  std::vector<Bytes8> packets;
  std::vector<std::size_t> frame_end;
  ASSERT_NO_FATAL_FAILURE(ten_frames(65530, 0x33, packets, frame_end));
  const std::size_t per_frame = frame_end[0];
  ASSERT_GT(per_frame, 4u);
  const std::size_t lost_at_end = per_frame + 2;
  std::vector<CodestreamUnit> units;
  SessionConfig config;
  config.format = PayloadFormat::rfc5371;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); }, config);
  auto t = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i + lost_at_end < packets.size(); ++i) {
    session.on_datagram(packets[i], t += std::chrono::microseconds(100));
    for (int f : {0, 5})  // a report after frames 0 and 5, 0.9 frame periods into their slots
      if (i + 1 == frame_end[static_cast<std::size_t>(f)])
        session.on_rtcp(packetizer::rtcp_sender_report(
            report(static_cast<std::uint32_t>(i + 1), static_cast<std::uint32_t>(1000 + 3600 * f + 3240)), "t", false));
  }
  EXPECT_EQ(session.snapshot().packets_lost, 0u);
  // The final report comes in the slot after the last frame, with BYE.
  session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(packets.size()), 1000 + 3600 * 10 + 50), "t", true));
  session.flush();
  const auto s = session.snapshot();
  EXPECT_EQ(s.packets_lost, lost_at_end);
  EXPECT_EQ(s.rtcp.packets_lost_at_end, lost_at_end);
  EXPECT_EQ(s.rtcp.sender_reports, 3u);
  EXPECT_EQ(s.rtcp.sender_packets, packets.size());
  EXPECT_TRUE(s.rtcp.bye);
  EXPECT_EQ(s.rtcp.frames_missing_at_end, 1u);  // frame 9: not one packet of it arrived
  EXPECT_EQ(s.frames_incomplete, 1u);           // frame 8: its last two packets are missing
  EXPECT_EQ(s.frames_complete, 8u);
}

// Review 2026-11-28: a capture replayed with loop=1 (its RTCP replayed too) and stopped just
// after a new pass began showed the previous pass's final report against the new pass's
// sequence numbers: 496 packets "lost at the end" of a clean capture, a loss alarm and exit
// status 4. A report speaks for the run of sequence numbers it came in, not the next.
TEST(RtpSessionRtcp, TheLastPassesFinalReportIsNotCountedAgainstTheNextPass) {
  spdlog::set_level(spdlog::level::off);
  std::vector<Bytes8> packets;
  std::vector<std::size_t> frame_end;
  ASSERT_NO_FATAL_FAILURE(ten_frames(100, 0x44, packets, frame_end));
  std::vector<CodestreamUnit> units;
  SessionConfig config;
  config.format = PayloadFormat::rfc5371;
  RtpSession session([&](CodestreamUnit&& u) { units.push_back(std::move(u)); }, config);
  auto t = std::chrono::steady_clock::now();
  for (const auto& p : packets) session.on_datagram(p, t += std::chrono::microseconds(100));
  session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(packets.size()), 1000 + 3600 * 10 + 50), "t", true));
  EXPECT_EQ(session.snapshot().rtcp.packets_lost_at_end, 0u);
  // The second pass: the same packets again, the first two frames of it so far.
  session.restart();
  for (std::size_t i = 0; i < frame_end[1]; ++i) session.on_datagram(packets[i], t += std::chrono::microseconds(100));
  session.flush();
  const auto s = session.snapshot();
  EXPECT_EQ(s.rtcp.packets_lost_at_end, 0u);
  EXPECT_EQ(s.rtcp.frames_missing_at_end, 0u);
  EXPECT_FALSE(s.rtcp.bye) << "the BYE ended the first pass";
  EXPECT_EQ(s.packets_lost, 0u);
  // Review 2026-11-29: the count of reports started again at 0 with each pass (the JSON said
  // 0 reports after a loop of a capture that holds them); it adds up over the run.
  EXPECT_EQ(s.rtcp.sender_reports, 1u);
  session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(frame_end[1]), 1000 + 3600 * 2), "t", false));
  // The second pass's first frame begins a new timeline (the monitor's time code starts afresh).
  ASSERT_GE(units.size(), 11u);
  for (std::size_t i = 0; i < units.size(); ++i) EXPECT_EQ(units[i].new_timeline, i == 10) << i;
  const auto after = session.snapshot().rtcp;
  EXPECT_EQ(after.sender_reports, 2u);
  EXPECT_EQ(after.implausible + after.foreign, 0u) << "a report of the second pass, taken";
}

// Review 2026-11-25: packets.lost added the latest report's "sent after the last packet
// received" while the stream ran. Reports then made the counter go down and up (/metrics'
// j2k_packets_lost_total read 0, 1403, 0, 96, 0…) and the per-second loss and the loss alarm
// counted every rise again. While the stream runs, lost only counts gaps; the reports' tail
// is added once it has ended.
TEST(RtpSessionRtcp, LostNeverGoesDownWhileReportsComeAndGo) {
  spdlog::set_level(spdlog::level::off);
  std::vector<Bytes8> packets;
  std::vector<std::size_t> frame_end;
  ASSERT_NO_FATAL_FAILURE(ten_frames(100, 0x33, packets, frame_end));
  RtpSession session([](CodestreamUnit&&) {}, rfc5371_config());
  auto t = std::chrono::steady_clock::now();
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    session.on_datagram(packets[i], t += std::chrono::microseconds(100));
    for (int f = 0; f < 10; ++f)
      if (i + 1 == frame_end[static_cast<std::size_t>(f)]) {
        // Every other report counts 40 packets more than have arrived (on their way, or
        // a forged count within what the stream's rate allows), the next one exactly.
        const auto count = static_cast<std::uint32_t>(i + 1 + (f % 2 == 0 ? 40 : 0));
        session.on_rtcp(packetizer::rtcp_sender_report(
            report(count, static_cast<std::uint32_t>(1000 + 3600 * f + 3240)), "t", false));
        const std::uint64_t lost = session.snapshot().packets_lost;
        EXPECT_GE(lost, previous) << "after the report of frame " << f;
        EXPECT_EQ(lost, 0u) << "nothing is missing from the sequence, frame " << f;
        previous = lost;
      }
  }
  // The stream ends with a report of 25 packets more than arrived: those are lost at its end.
  session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(packets.size() + 25), 1000 + 36000 + 50), "t", true));
  session.flush();
  EXPECT_EQ(session.snapshot().packets_lost, 25u);
}

TEST(RtpSessionRtcp, AReportCountingFarMorePacketsThanTheStreamCouldHaveSentIsIgnored) {
  spdlog::set_level(spdlog::level::off);
  // A forged (or broken) sender report with the stream's SSRC: its packet count 2^31 ahead
  // made 2^31 packets "lost at the end", in the JSON, /metrics and the loss alarm.
  Bytes8 cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0, 1};
  cs.resize(cs.size() + 1500, 0x33);
  packetizer::Rfc5371Packetizer p(0xABCD0123, 96, 100, 400);
  std::vector<Bytes8> packets;
  for (int f = 0; f < 10; ++f) ASSERT_TRUE(p.packetize(cs, static_cast<std::uint32_t>(1000 + 3600 * f), 0, packets));
  SessionConfig config;
  config.format = PayloadFormat::rfc5371;
  RtpSession session([](CodestreamUnit&&) {}, config);
  auto t = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < packets.size(); ++i) {
    session.on_datagram(packets[i], t += std::chrono::microseconds(100));
    if (i + 1 == packets.size() / 2)  // a genuine report half way
      session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(i + 1), 1000 + 3600 * 4 + 3240), "t", false));
  }
  const auto sent = static_cast<std::uint32_t>(packets.size());
  session.on_rtcp(packetizer::rtcp_sender_report(report(sent + 2147483632u, 1000 + 3600 * 10), "t", false));
  auto s = session.snapshot();
  EXPECT_EQ(s.rtcp.implausible, 1u);
  EXPECT_EQ(s.rtcp.packets_lost_at_end, 0u);
  EXPECT_EQ(s.packets_lost, 0u);
  // A genuine final report that counts a few packets more than arrived still counts them.
  session.on_rtcp(packetizer::rtcp_sender_report(report(sent + 3, 1000 + 3600 * 10 + 50), "t", true));
  s = session.snapshot();
  EXPECT_EQ(s.rtcp.packets_lost_at_end, 3u);
  EXPECT_EQ(s.rtcp.implausible, 1u);
}

namespace {
/// Four frames into a session, every datagram 100 µs after the previous; the report the sender
/// sent after frame 0 (stamped `report_timestamp`) is read only after 3 packets of frame 1; the
/// stream's last `missing` packets never arrive; then the final report with BYE. With
/// `with_arrival` the reports carry their arrival times (the pipeline's kernel timestamps).
void report_read_late(std::uint32_t report_timestamp, bool with_arrival, std::size_t missing, StreamSnapshot& out) {
  std::vector<Bytes8> packets;
  ASSERT_NO_FATAL_FAILURE(four_frames(packets));
  const std::size_t per_frame = packets.size() / 4;
  RtpSession session([](CodestreamUnit&&) {}, rfc5371_config());
  auto t = std::chrono::steady_clock::now();
  const auto send = [&](std::size_t i) { session.on_datagram(packets[i], t += std::chrono::microseconds(100)); };
  const auto sent_at = [&](auto at) { return with_arrival ? std::optional(at) : std::nullopt; };
  for (std::size_t i = 0; i < per_frame; ++i) send(i);
  const auto report_arrival = t + std::chrono::microseconds(50);  // before frame 1's first packet
  for (std::size_t i = per_frame; i < per_frame + 3; ++i) send(i);
  session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(per_frame), report_timestamp), "t", false),
                  sent_at(report_arrival));
  for (std::size_t i = per_frame + 3; i + missing < packets.size(); ++i) send(i);
  session.on_rtcp(packetizer::rtcp_sender_report(report(static_cast<std::uint32_t>(packets.size()), 3600 * 4 + 50), "t", true),
                  sent_at(t + std::chrono::microseconds(50)));
  out = session.snapshot();
}
}  // namespace

TEST(RtpSessionRtcp, AReportReadAfterPacketsSentAfterItStillCountsExactly) {
  spdlog::set_level(spdlog::level::off);
  // Under load the receiver may read a report after some packets the sender sent after it
  // (two sockets, two threads). Only packets of frames sampled before the report count.
  StreamSnapshot s;
  ASSERT_NO_FATAL_FAILURE(report_read_late(3240, false, 2, s));  // stamped before frame 1's slot
  EXPECT_EQ(s.rtcp.packets_lost_at_end, 2u);
  EXPECT_EQ(s.packets_lost, 2u);
}

TEST(RtpSessionRtcp, AReportStampedPastAFrameInProgressIsPlacedByItsArrival) {
  spdlog::set_level(spdlog::level::off);
  // A sender running late stamps its report (sent after frame 0) past frame 1's slot, and the
  // receiver reads it after three packets of frame 1 (issue 9 item 9; seen once as 3 packets
  // "lost at the end" of a lossless loopback stream under load). The report's arrival time
  // places it before those packets.
  StreamSnapshot s;
  ASSERT_NO_FATAL_FAILURE(report_read_late(3600 + 400, true, 0, s));
  EXPECT_EQ(s.rtcp.packets_lost_at_end, 0u) << "every packet sent arrived";
  EXPECT_EQ(s.packets_lost, 0u);
}

TEST(RtpSessionRtcp, MalformedAndForeignReportsAreCountedAndChangeNothing) {
  spdlog::set_level(spdlog::level::off);
  RtpSession session([](CodestreamUnit&&) {}, {});
  session.on_rtcp(Bytes8{0x80, 202, 0, 0});                                      // starts with SDES
  session.on_rtcp(packetizer::rtcp_sender_report(report(5), "x", true));          // no stream followed yet
  const auto s = session.snapshot();
  EXPECT_EQ(s.rtcp.datagrams, 2u);
  EXPECT_EQ(s.rtcp.malformed, 1u);
  EXPECT_EQ(s.rtcp.foreign, 1u);
  EXPECT_EQ(s.rtcp.sender_reports, 0u);
  EXPECT_FALSE(s.rtcp.bye);
  EXPECT_EQ(s.packets_lost, 0u);
}

// Review 2026-11-29: a packet that came after its gap was given up (late) was counted
// received, so packets.lost went down by one: j2k_packets_lost_total, a Prometheus counter,
// went N -> N-1 (read as a counter reset), while the event log kept its "1 packet lost".
// A late packet stays lost (and is counted late).
TEST(RtpSessionCounters, APacketThatComesAfterItsGapWasGivenUpStaysLost) {
  spdlog::set_level(spdlog::level::off);
  std::vector<Bytes8> packets;
  std::vector<std::size_t> frame_end;
  ASSERT_NO_FATAL_FAILURE(ten_frames(100, 0x55, packets, frame_end));
  RtpSession session([](CodestreamUnit&&) {}, rfc5371_config());
  auto t = std::chrono::steady_clock::now();
  const std::size_t held = 5;
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (i == held) continue;
    session.on_datagram(packets[i], t += std::chrono::milliseconds(2));
    if (i == held + 40) session.on_datagram(packets[held], t += std::chrono::milliseconds(2));  // long after its gap
    const auto now = session.snapshot().packets_lost;
    EXPECT_GE(now, previous) << "lost never goes down (packet " << i << ")";
    previous = now;
  }
  session.flush();
  const auto s = session.snapshot();
  EXPECT_EQ(s.packets_late, 1u);
  EXPECT_EQ(s.packets_lost, 1u);
  EXPECT_EQ(s.packets_received + s.packets_lost, packets.size() + 1) << "the late one is both";
}
