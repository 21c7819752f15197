// The RTCP fuzz harness as an ordinary test: its committed corpus, then deterministic
// mutations of a stream of RFC 5371 packets interleaved with sender reports and a final BYE.
#include <gtest/gtest.h>

#include "fuzz_replay.hpp"
#include "packetizer/rtcp_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"

using namespace j2k::test::fuzz;
extern "C" int fuzz_rtcp(const std::uint8_t* data, std::size_t size);

namespace {

/// Five frames, a report after each, the last three packets missing, then SR + BYE.
Input stream_with_reports() {
  std::vector<std::uint8_t> cs = {0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x04, 0x00, 0x00, 0xFF, 0x90, 0x00, 0x0A,
                                  0, 0, 0, 0, 0, 0, 0, 1};
  cs.resize(cs.size() + 600, 0x5C);
  j2k::packetizer::Rfc5371Packetizer p(0x600DF00D, 96, 65533, 200);
  Input out = {1};  // first byte odd: the harness reads RFC 5371
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint32_t sent = 0;
  for (int f = 0; f < 5; ++f) {
    packets.clear();
    (void)p.packetize(cs, static_cast<std::uint32_t>(3600 * f), 0, packets);
    for (std::size_t i = 0; i < packets.size(); ++i)
      if (f < 4 || i + 3 < packets.size()) append_datagram(out, packets[i]);
    sent += static_cast<std::uint32_t>(packets.size());
    j2k::depacketizer::SenderReport sr{0x600DF00D, 0, static_cast<std::uint32_t>(3600 * f + 3000), sent, sent * 200};
    append_datagram(out, j2k::packetizer::rtcp_sender_report(sr, "fuzz@127.0.0.1", f == 4));
  }
  return out;
}

}  // namespace

TEST(RtcpFuzzReplay, CorpusAndMutationsOfAStreamWithReports) {
  replay(fuzz_rtcp, "rtcp", {{"stream_with_reports.bin", stream_with_reports()}}, {.rounds = 3000, .seed = 2026, .keep = 1});
}
