// SMPTE ST 2022-7 two-path merge.
#include "depacketizer/path_merge_2022_7.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace j2k::depacketizer {

namespace {
constexpr int kRestartRun = 64;  // consistent out-of-window packets on one path before re-anchoring
}

PathMerger::PathMerger(Output output, PathMergeConfig config)
    : output_(std::move(output)), config_(config), slots_(std::max<std::uint32_t>(config.window, 64)) {}

void PathMerger::restart(std::int64_t seq) {
  for (auto& s : slots_) s = Slot{};
  highest_ = seq;
  for (auto& p : paths_) {
    p.stray_run = 0;
    p.stray_last = -1;
  }
}

void PathMerger::push(int path, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  if (path < 0 || path >= kPaths) return;
  Path& p = paths_[path];
  auto packet = parse_rtp(datagram);
  if (!packet.ok()) {
    ++p.c.malformed;
    return;
  }
  if (!started_) {
    started_ = true;
    highest_ = packet->sequence;
  }
  // Extended sequence nearest the highest seen (16-bit serial arithmetic).
  const auto delta = static_cast<std::int16_t>(static_cast<std::uint16_t>(packet->sequence - static_cast<std::uint16_t>(highest_)));
  std::int64_t seq = highest_ + delta;
  const std::int64_t window = static_cast<std::int64_t>(slots_.size());
  if (seq > highest_ + window / 2 || seq < 0) {
    // Far ahead of the stream: a path with a huge sequence skew, or the sender restarted.
    // Dropped and counted, unless this path keeps sending a consistent new run.
    ++p.c.out_of_window;
    const bool continues = p.stray_last >= 0 && static_cast<std::uint16_t>(p.stray_last + 1) == packet->sequence;
    p.stray_run = continues ? p.stray_run + 1 : 1;
    p.stray_last = packet->sequence;
    if (p.stray_run < kRestartRun) return;
    logger("depacketizer")->warn("2022-7: path {} moved to a new run of sequence numbers ({}); following it", path + 1,
                                 packet->sequence);
    restart(packet->sequence);
    seq = highest_;
  } else {
    p.stray_run = 0;
  }
  if (seq <= highest_ - window) {
    ++p.c.late;  // older than anything remembered: its first copy (if any) is long gone
    return;
  }
  (void)p.tracker.accept(packet->sequence);
  p.c.received = p.tracker.received();
  p.c.lost = p.tracker.lost();
  if (seq > highest_) highest_ = seq;
  Slot& s = slot(seq);
  if (s.seq == seq) {
    // A second copy (or a duplicate on the same path).
    const double skew = std::chrono::duration<double, std::milli>(arrival - s.first_arrival).count();
    if (s.first_path != path) {
      // This path runs `skew` behind the other: both estimates move (RFC 3550-style 1/16 gain).
      Path& other = paths_[1 - path];
      p.c.skew_ms += (skew - p.c.skew_ms) / 16.0;
      other.c.skew_ms += (-skew - other.c.skew_ms) / 16.0;
    }
    if (arrival - s.first_arrival > config_.max_skew) ++p.c.late;
    else ++p.c.redundant;
    return;
  }
  s.seq = seq;
  s.first_path = path;
  s.first_arrival = arrival;
  ++p.c.used;
  ++forwarded_;
  output_(datagram, arrival);
}

PathCounters PathMerger::counters(int path) const {
  if (path < 0 || path >= kPaths) return {};
  return paths_[path].c;
}

}  // namespace j2k::depacketizer
