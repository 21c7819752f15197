// Fuzz harness: a sequence of datagrams through RTP parsing, sequence accounting, MXF/KLV
// reassembly and descriptor parsing. Input format: repeated [u16 length][bytes].
#include <cstddef>
#include <cstdint>

#include "depacketizer/rtp_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  std::size_t units = 0, bytes = 0;
  RtpSession session([&](CodestreamUnit&& unit) {
    ++units;
    bytes += unit.total_bytes();
  });
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t pos = 0;
  int n = 0;
  while (pos + 2 <= size) {
    const std::size_t len = static_cast<std::size_t>(data[pos] << 8 | data[pos + 1]);
    pos += 2;
    const std::size_t take = len < size - pos ? len : size - pos;
    session.on_datagram(j2k::Bytes(data + pos, take), t0 + std::chrono::microseconds(100 * n++));
    pos += take;
  }
  session.flush();
  auto s = session.snapshot();
  // Invariants that must hold whatever arrives.
  if (s.packets_lost > (1u << 20) * 64u) __builtin_trap();
  if (units != s.frames_complete + s.frames_incomplete) __builtin_trap();
  return 0;
}
