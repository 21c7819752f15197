#pragma once
// What the RTP session harnesses share: a session fed the input's datagrams, and the
// invariants a session keeps whatever arrives.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "datagram_input.hpp"
#include "depacketizer/rtp_session.hpp"

namespace j2k::fuzz {

/// Gives `session` every datagram of the input (for_each_datagram's format), `spacing` apart
/// in arrival time, then flushes it.
inline void feed_datagrams(depacketizer::RtpSession& session, const std::uint8_t* data, std::size_t size,
                           std::chrono::microseconds spacing) {
  const auto t0 = std::chrono::steady_clock::now();
  for_each_datagram(data, size, [&](Bytes datagram, int n) { session.on_datagram(datagram, t0 + spacing * n); });
  session.flush();
}

/// Traps unless each of the `units` the session delivered is counted complete or incomplete.
inline void check_units_counted(const depacketizer::RtpSession& session, std::size_t units) {
  const auto s = session.snapshot();
  if (units != s.frames_complete + s.frames_incomplete) __builtin_trap();
}

/// A session for `format` with a small reorder window (so that its bound is reached), which
/// counts the units it delivers into `units` and traps when a whole unit claims more
/// codestreams than two fields' worth.
inline depacketizer::RtpSession counting_session(depacketizer::PayloadFormat format, std::size_t& units) {
  depacketizer::SessionConfig config;
  config.format = format;
  config.reorder.max_packets = 16;
  return depacketizer::RtpSession(
      [&units](depacketizer::CodestreamUnit&& unit) {
        ++units;
        if (unit.complete && unit.problem.empty() && unit.codestreams.size() > 2) __builtin_trap();
      },
      config);
}

}  // namespace j2k::fuzz
