// Fuzz harness: a sequence of datagrams through RTP parsing, sequence accounting, MXF/KLV
// reassembly and descriptor parsing. Input format: repeated [u16 length][bytes].
#include <cstddef>
#include <cstdint>

#include "session_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  std::size_t units = 0, bytes = 0;
  RtpSession session([&](CodestreamUnit&& unit) {
    ++units;
    bytes += unit.total_bytes();
  });
  j2k::fuzz::feed_datagrams(session, data, size, std::chrono::microseconds(100));
  // Invariants that must hold whatever arrives.
  if (session.snapshot().packets_lost > (1u << 20) * 64u) __builtin_trap();
  j2k::fuzz::check_units_counted(session, units);
  return 0;
}
