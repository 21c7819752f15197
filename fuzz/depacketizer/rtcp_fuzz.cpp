// Fuzz harness: RTCP compound packets (RFC 3550 6, A.2), alone and mixed with RTP data into
// one session, where sender reports and BYE account for the packets and frames lost at a
// stream's end. Input format: repeated [u16 length][bytes]; a datagram whose second byte is
// an RTCP packet type (200–204, RFC 5761 4) goes to the control side, others to the data side;
// datagram n arrives at 50 n µs (a third of the reports without a time, a third read late).
#include <cstddef>
#include <cstdint>

#include "core/log.hpp"
#include "datagram_input.hpp"
#include "depacketizer/rtcp.hpp"
#include "depacketizer/rtp_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  // The session logs every malformed datagram: a fuzzer feeds little else.
  static const bool quiet = [] { j2k::set_log_level("off"); return true; }();
  (void)quiet;
  SessionConfig config;
  config.format = (size > 0 && data[0] & 1) ? PayloadFormat::rfc5371 : PayloadFormat::mxf;
  config.reorder.max_packets = 16;
  RtpSession session([](CodestreamUnit&&) {}, config);
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t control = 0;
  j2k::fuzz::for_each_datagram(data, size, [&](j2k::Bytes datagram, int n) {
    if (datagram.size() >= 2 && datagram[1] >= 200 && datagram[1] <= 204) {
      ++control;
      auto parsed = parse_rtcp(datagram);
      // A compound holds at least one packet of at least 4 bytes, and a BYE at most 31 sources each.
      if (parsed.ok() && (parsed->packets < 1 || static_cast<std::size_t>(parsed->packets) * 4 > datagram.size() ||
                          parsed->bye.size() > 31u * static_cast<std::size_t>(parsed->packets)))
        __builtin_trap();
      // Without an arrival time, at its place among the data, or read 200 µs late (its socket's
      // thread behind the data's): the report relates to the packets that arrived before it.
      const auto at = t0 + std::chrono::microseconds(50 * n);
      if (n % 3 == 0) session.on_rtcp(datagram);
      else session.on_rtcp(datagram, n % 3 == 1 ? at : at - std::chrono::microseconds(200));
    } else {
      session.on_datagram(datagram, t0 + std::chrono::microseconds(50 * n));
    }
  });
  session.flush();
  const auto s = session.snapshot();
  if (s.rtcp.datagrams != control || s.rtcp.malformed + s.rtcp.foreign > control) __builtin_trap();
  if (s.rtcp.sender_reports > control) __builtin_trap();
  // The tail is what the sender counted beyond our highest sequence: never more than it counted.
  if (s.rtcp.packets_lost_at_end > s.rtcp.sender_packets + (1ull << 32)) __builtin_trap();
  return 0;
}
