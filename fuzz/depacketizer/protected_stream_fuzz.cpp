// Fuzz harness: ProtectedStream — an RTP session (format ts) behind the ST 2022-7 merge and
// the ST 2022-1 FEC decoder, with the source's restart. Input: repeated
// [kind u8][u16 length][datagram]; kind % 8: 0 media on path 1, 1 media on path 2, 2 column
// FEC, 3 row FEC, 4 media on both paths (30 µs apart), 5 restart() (the datagram is
// ignored), 6 time jumps 200 ms (beyond the skew and SSRC quiet times) then media on path 1,
// 7 the session's idle tick. Arrivals are 100 µs apart otherwise.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "core/log.hpp"
#include "depacketizer/protected_stream.hpp"
#include "session_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  static const bool quiet = [] { j2k::set_log_level("off"); return true; }();
  (void)quiet;
  std::size_t units = 0;
  auto session = j2k::fuzz::counting_session(PayloadFormat::ts, units);
  ProtectionConfig config;
  config.two_paths = true;
  config.fec = true;
  config.merge.window = 256;  // small bounds, so that they are reached
  config.fec_config.history = 128;
  config.fec_config.max_pending = 32;
  ProtectedStream stream(session, config);
  std::uint64_t pushed[PathMerger::kPaths] = {0, 0};
  std::uint64_t media = 0;
  auto t = std::chrono::steady_clock::now();
  std::size_t pos = 0;
  while (pos + 3 <= size) {
    const int kind = data[pos] % 8;
    const std::size_t len = static_cast<std::size_t>(data[pos + 1] << 8 | data[pos + 2]);
    pos += 3;
    const std::size_t take = std::min(len, size - pos);
    j2k::Bytes d(data + pos, take);
    pos += take;
    t += std::chrono::microseconds(100);
    switch (kind) {
      case 0:
      case 1:
        stream.on_datagram(kind, d, t);
        ++pushed[kind];
        break;
      case 2: stream.on_datagram(kFecColumn, d, t); break;
      case 3: stream.on_datagram(kFecRow, d, t); break;
      case 4:
        stream.on_datagram(kMediaPath1, d, t);
        stream.on_datagram(kMediaPath2, d, t + std::chrono::microseconds(30));
        ++pushed[0];
        ++pushed[1];
        break;
      case 5: stream.restart(); break;
      case 6:
        t += std::chrono::milliseconds(200);
        stream.on_datagram(kMediaPath1, d, t);
        ++pushed[0];
        break;
      default: session.tick(t); break;
    }
    media = pushed[0] + pushed[1];
  }
  session.flush();
  j2k::fuzz::check_units_counted(session, units);
  const auto s = stream.snapshot();
  for (int p = 0; p < PathMerger::kPaths; ++p) {
    // Each media packet of a path is counted exactly once.
    const auto& c = s.paths[p];
    if (c.malformed + c.foreign + c.late + c.out_of_window + c.used + c.redundant != pushed[p]) __builtin_trap();
  }
  if (s.merge_restarts > media) __builtin_trap();
  // A FEC packet rebuilds at most one media packet (copies of a group are refused).
  if (s.fec_counters.recovered > s.fec_counters.fec_packets) __builtin_trap();
  if (s.fec_counters.foreign + s.fec_counters.restarts > media) __builtin_trap();
  return 0;
}
