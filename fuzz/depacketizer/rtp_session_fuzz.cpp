// Fuzz harness: a sequence of datagrams through RTP parsing, sequence accounting, MXF/KLV
// reassembly and descriptor parsing. Input format: repeated [u16 length][bytes].
#include <cstddef>
#include <cstdint>

#include "datagram_input.hpp"
#include "depacketizer/rtp_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  std::size_t units = 0, bytes = 0;
  RtpSession session([&](CodestreamUnit&& unit) {
    ++units;
    bytes += unit.total_bytes();
  });
  const auto t0 = std::chrono::steady_clock::now();
  j2k::fuzz::for_each_datagram(data, size, [&](j2k::Bytes datagram, int n) {
    session.on_datagram(datagram, t0 + std::chrono::microseconds(100 * n));
  });
  session.flush();
  auto s = session.snapshot();
  // Invariants that must hold whatever arrives.
  if (s.packets_lost > (1u << 20) * 64u) __builtin_trap();
  if (units != s.frames_complete + s.frames_incomplete) __builtin_trap();
  return 0;
}
