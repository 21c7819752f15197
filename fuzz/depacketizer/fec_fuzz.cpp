// Fuzz harness: ST 2022-1 FEC decoder and ST 2022-7 path merge. Input: repeated
// [kind u8][u16 length][datagram]; kind % 4: 0 media on path 1, 1 media on path 2,
// 2 column FEC, 3 row FEC. Media go through the 2022-7 merger into the FEC decoder.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/log.hpp"
#include "depacketizer/fec_2022_1.hpp"
#include "depacketizer/path_merge_2022_7.hpp"
#include "depacketizer/rtp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  static const bool quiet = [] { j2k::set_log_level("off"); return true; }();
  (void)quiet;
  fec::FecConfig config;
  config.history = 128;
  config.max_pending = 32;
  std::uint64_t rebuilt = 0;
  fec::FecDecoder decoder([&](j2k::Bytes d) {
    ++rebuilt;
    // A rebuilt packet is always valid RTP within the size bound.
    if (!parse_rtp(d).ok() || d.size() > config.max_packet_bytes + 12) __builtin_trap();
  }, config);
  PathMergeConfig mc;
  mc.window = 256;
  PathMerger merger([&](j2k::Bytes d, std::chrono::steady_clock::time_point t, bool) { decoder.on_media(d, t); }, mc);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t pos = 0;
  int n = 0;
  while (pos + 3 <= size) {
    const int kind = data[pos] % 4;
    const std::size_t len = static_cast<std::size_t>(data[pos + 1] << 8 | data[pos + 2]);
    pos += 3;
    const std::size_t take = std::min(len, size - pos);
    j2k::Bytes d(data + pos, take);
    pos += take;
    ++n;
    if (kind < 2) merger.push(kind, d, t0 + std::chrono::microseconds(100 * n));
    else decoder.on_fec(d);
    if (decoder.pending() > config.max_pending) __builtin_trap();
  }
  if (rebuilt != decoder.counters().recovered) __builtin_trap();
  // A FEC packet rebuilds at most one media packet (copies of a group are refused).
  if (rebuilt > decoder.counters().fec_packets) __builtin_trap();
  const auto a = merger.counters(0), b = merger.counters(1);
  if (a.used + b.used != merger.forwarded()) __builtin_trap();
  return 0;
}
