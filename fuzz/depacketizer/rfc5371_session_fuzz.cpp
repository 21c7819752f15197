// Fuzz harness: datagrams through an RTP session carrying RFC 5371 payloads (fragment
// offsets, main-header flags, fields) and the unit normalisation (split, merge, fields).
// Input format: repeated [u16 length][bytes].
#include <cstddef>
#include <cstdint>

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
  std::size_t pos = 0;
  int n = 0;
  while (pos + 2 <= size) {
    const std::size_t len = static_cast<std::size_t>(data[pos] << 8 | data[pos + 1]);
    pos += 2;
    const std::size_t take = len < size - pos ? len : size - pos;
    session.on_datagram(j2k::Bytes(data + pos, take), t0 + std::chrono::microseconds(50 * n++));
    pos += take;
  }
  session.flush();
  auto s = session.snapshot();
  if (units != s.frames_complete + s.frames_incomplete) __builtin_trap();
  return 0;
}
