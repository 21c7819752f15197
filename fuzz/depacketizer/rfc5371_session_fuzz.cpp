// Fuzz harness: datagrams through an RTP session carrying RFC 5371 payloads (fragment
// offsets, main-header flags, fields) and the unit normalisation (split, merge, fields).
// Input format: repeated [u16 length][bytes].
#include <cstddef>
#include <cstdint>

#include "session_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::size_t units = 0;
  auto session = j2k::fuzz::counting_session(j2k::depacketizer::PayloadFormat::rfc5371, units);
  j2k::fuzz::feed_datagrams(session, data, size, std::chrono::microseconds(50));
  j2k::fuzz::check_units_counted(session, units);
  return 0;
}
