// Fuzz harness: MPEG-2 TS (VSF TR-01) through the demultiplexer and through an RTP session.
// First byte even: the rest is raw TS bytes for TsDemux (small PES bound, so memory limits are
// exercised); odd: repeated [u16 length][datagram] for an RtpSession with format ts (RTP/MP2T
// and plain UDP TS).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/log.hpp"
#include "depacketizer/ts.hpp"
#include "session_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  static const bool quiet = [] { j2k::set_log_level("off"); return true; }();
  (void)quiet;
  if (size < 1) return 0;
  if (data[0] % 2 == 0) {
    ts::DemuxConfig config;
    config.max_pes_bytes = 64 * 1024;
    std::uint64_t units = 0;
    ts::TsDemux demux([&](ts::AccessUnit&& u) {
      ++units;
      if (u.codestreams.size() > 2) __builtin_trap();
      std::size_t total = 0;
      for (const auto& c : u.codestreams) total += c.size();
      if (total > config.max_pes_bytes) __builtin_trap();  // memory stays within the bound
      if (u.complete && u.codestreams.empty()) __builtin_trap();
    }, config);
    // Cut the input at data-dependent points so datagram edges and loss flags vary too.
    std::size_t pos = 1;
    while (pos < size) {
      const std::size_t take = std::min<std::size_t>(size - pos, 188 * (1 + data[pos] % 7));
      demux.push(j2k::Bytes(data + pos, take), data[pos] == 0xAA);
      pos += take;
    }
    demux.flush();
    const auto& c = demux.counters();
    if (units != c.units_complete + c.units_incomplete) __builtin_trap();
    for (const auto& p : demux.pids())
      if (p.pid > 0x1FFF) __builtin_trap();
    return 0;
  }
  std::size_t units = 0;
  auto session = j2k::fuzz::counting_session(PayloadFormat::ts, units);
  j2k::fuzz::feed_datagrams(session, data + 1, size - 1, std::chrono::microseconds(50));
  j2k::fuzz::check_units_counted(session, units);
  if (!session.ts_snapshot()) __builtin_trap();
  return 0;
}
