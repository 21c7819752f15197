// Fuzz harness: datagrams through an RTP session carrying RFC 5371 payloads (fragment
// offsets, main-header flags, fields) and the unit normalisation (split, merge, fields).
// Input format: repeated [u16 length][bytes].
#include <cstddef>
#include <cstdint>

#include "datagram_input.hpp"
#include "depacketizer/rtp_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  std::size_t units = 0;
  SessionConfig config;
  config.format = PayloadFormat::rfc5371;
  config.reorder.max_packets = 16;
  RtpSession session([&](CodestreamUnit&& unit) {
    ++units;
    // Whatever arrived, a unit never claims more codestreams than two fields' worth.
    if (unit.complete && unit.problem.empty() && unit.codestreams.size() > 2) __builtin_trap();
  }, config);
  const auto t0 = std::chrono::steady_clock::now();
  j2k::fuzz::for_each_datagram(data, size, [&](j2k::Bytes datagram, int n) {
    session.on_datagram(datagram, t0 + std::chrono::microseconds(50 * n));
  });
  session.flush();
  auto s = session.snapshot();
  if (units != s.frames_complete + s.frames_incomplete) __builtin_trap();
  return 0;
}
