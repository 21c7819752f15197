// SMPTE ST 2022-7 two-path merge.
#include "depacketizer/path_merge_2022_7.hpp"

#include <algorithm>

namespace j2k::depacketizer {

PathMerger::PathMerger(Output output, PathMergeConfig config, Events events)
    : output_(std::move(output)),
      config_(config),
      slots_(std::max<std::uint32_t>(config.window, 64)),
      follower_(config.ssrc_quiet),
      events_(std::move(events)) {}

void PathMerger::restart(std::uint16_t sequence) {
  // A new run of numbers (or the first): nothing remembered belongs to it.
  if (started_) {
    ++restarts_;
    decide_through(highest_);  // the old run's numbers are counted as they stand
  }
  for (auto& s : slots_) s = Slot{};
  started_ = true;
  highest_ = sequence;
  decided_ = highest_ - 1;
  stray_.clear();
  for (auto& p : paths_) {
    p.tracker.restart();  // each path's count goes on from the new numbers
    p.last_seq.reset();
  }
}

bool PathMerger::foreign_seen(std::uint32_t ssrc, std::uint16_t sequence) {
  // Bit 48 marks a key in use: an empty entry (0) is never SSRC 0's packet 0.
  const std::uint64_t key = std::uint64_t{1} << 48 | static_cast<std::uint64_t>(ssrc) << 16 | sequence;
  if (std::find(foreign_recent_.begin(), foreign_recent_.end(), key) != foreign_recent_.end()) return true;
  foreign_recent_[foreign_next_++ % foreign_recent_.size()] = key;
  return false;
}

void PathMerger::follow(std::uint32_t ssrc) {
  if (follower_.followed() == ssrc) return;
  follower_.follow(ssrc);
  restart_at_next_ = true;
}

void PathMerger::reset() {
  if (started_) decide_through(highest_);
  follower_.reset();
  stray_.clear();
  last_fit_.reset();
  for (auto& s : slots_) s = Slot{};
  started_ = false;
  for (auto& p : paths_) p.tracker.restart();
}

void PathMerger::push(int path, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  if (path < 0 || path >= kPaths) return;
  Path& p = paths_[path];
  auto packet = parse_rtp(datagram);
  if (!packet.ok()) {
    ++p.c.malformed;
    return;
  }
  switch (follower_.accept(packet->ssrc, packet->sequence, arrival)) {
    case SsrcFollower::Verdict::foreign:
      // Neither takes a number nor moves the window; handed on unmerged, so that the session,
      // which chooses its stream by what the packets carry, sees every sender on the group.
      ++p.c.foreign;
      if (!foreign_seen(packet->ssrc, packet->sequence)) output_(datagram, arrival, true);  // one copy of two
      return;
    case SsrcFollower::Verdict::changed:
      if (started_ && restart_log_.allow())
        logger("depacketizer")->warn("2022-7: the stream continues as SSRC 0x{:08X} from sequence {}", packet->ssrc,
                                     packet->sequence);
      restart(packet->sequence);
      break;
    case SsrcFollower::Verdict::followed:
      if (restart_at_next_) restart(packet->sequence);  // follow() switched to this stream
      break;
  }
  restart_at_next_ = false;
  watch_paths(path, arrival);
  // Extended sequence nearest the highest seen (16-bit serial arithmetic).
  const auto delta = static_cast<std::int16_t>(static_cast<std::uint16_t>(packet->sequence - static_cast<std::uint16_t>(highest_)));
  std::int64_t seq = highest_ + delta;
  const std::int64_t window = static_cast<std::int64_t>(slots_.size());
  // Does it fit the stream as it stands? Far ahead, behind everything remembered, or a
  // number already taken by another packet (a copy has the first one's RTP timestamp) is a
  // stray — or the sender started again: one stray is dropped, a run of them followed.
  const bool far = seq > highest_ + window / 2 || seq < 0;
  const bool behind = !far && seq <= highest_ - window;
  const bool taken = !far && !behind && slot(seq).seq == seq && slot(seq).first_path != kNone &&
                     slot(seq).timestamp != packet->timestamp;
  if (far || behind || taken) {
    const bool others_fit = last_fit_ && arrival - *last_fit_ < config_.stray_quiet;
    if (stray_.add(packet->sequence) < kRestartRun || others_fit) {
      if (behind) ++p.c.late;  // older than anything remembered: its first copy (if any) is long gone
      else ++p.c.out_of_window;
      return;
    }
    if (restart_log_.allow())
      logger("depacketizer")->warn("2022-7: the sender moved to a new run of sequence numbers ({}); following it",
                                   packet->sequence);
    restart(packet->sequence);
    seq = highest_;
  } else {
    stray_.clear();
  }
  last_fit_ = arrival;
  if (p.c.down) {
    // Back: the numbers between its last packet before and this one are what it missed.
    p.c.down = false;
    const std::int64_t missed = p.last_seq ? seq - *p.last_seq - 1 : 0;
    if (events_) events_(PathEvent{path, false, static_cast<std::uint64_t>(std::max<std::int64_t>(missed, 0)), arrival - p.down_since});
  }
  if (!p.last_seq || seq > *p.last_seq) p.last_seq = seq;
  (void)p.tracker.accept(packet->sequence);
  p.c.received = p.tracker.received();
  if (seq > highest_) {
    // Numbers about to be reused are decided first; those skipped are known missing from now.
    const std::int64_t window_start = seq - window + 1;
    decide_through(std::min(highest_, window_start - 1));
    for (std::int64_t n = std::max(highest_ + 1, window_start); n < seq; ++n) {
      Slot& gap = slot(n);
      gap = Slot{};
      gap.seq = n;
      gap.first_arrival = arrival;
    }
    decided_ = std::max(decided_, window_start - 1);  // numbers never in the window: no path brought them
    highest_ = seq;
  }
  Slot& s = slot(seq);
  if (s.seq == seq) s.seen |= static_cast<std::uint8_t>(1u << path);
  if (s.seq == seq && s.first_path != kNone) {
    // A second copy (or a duplicate on the same path).
    const double skew = std::chrono::duration<double, std::milli>(arrival - s.first_arrival).count();
    if (s.first_path != path && s.first_path != kRebuilt) {
      // This path runs `skew` behind the other: both estimates move (RFC 3550-style 1/16 gain).
      Path& other = paths_[1 - path];
      p.c.skew_ms += (skew - p.c.skew_ms) / 16.0;
      other.c.skew_ms += (-skew - other.c.skew_ms) / 16.0;
    }
    if (arrival - s.first_arrival > config_.max_skew) ++p.c.late;
    else ++p.c.redundant;
    return;
  }
  s.first_arrival = arrival;
  s.seq = seq;
  s.seen = static_cast<std::uint8_t>(1u << path);
  s.first_path = path;
  s.timestamp = packet->timestamp;
  ++p.c.used;
  ++forwarded_;
  output_(datagram, arrival, !(p.c.skew_ms > kLagging));
  decide(arrival);
}

void PathMerger::decide(std::chrono::steady_clock::time_point now) {
  // A number is decided once its first copy (or the news that it is missing) is max_skew old:
  // a path that has not brought it by then lost it.
  while (decided_ < highest_) {
    const Slot& s = slot(decided_ + 1);
    if (s.seq == decided_ + 1 && now - s.first_arrival < config_.max_skew) break;
    decide_through(decided_ + 1);
  }
}

void PathMerger::decide_through(std::int64_t last) {
  for (; decided_ < last; ++decided_) {
    const std::int64_t n = decided_ + 1;
    const Slot& s = slot(n);
    for (int p = 0; p < kPaths; ++p)
      if (s.seq != n || !(s.seen & (1u << p))) ++paths_[p].c.lost;
  }
}

void PathMerger::finish() {
  if (started_) decide_through(highest_);
}

void PathMerger::watch_paths(int p, std::chrono::steady_clock::time_point now) {
  Path& self = paths_[p];
  Path& other = paths_[1 - p];
  self.last = now;
  // The other path is down once it has brought nothing for down_after while this one did
  // (a path that never brought anything is down from the first packet plus that time).
  if (!first_packet_) first_packet_ = now;
  const auto since = other.last ? *other.last : *first_packet_;
  if (!other.c.down && now - since >= config_.down_after) {
    other.c.down = true;
    ++other.c.outages;
    other.down_since = since;
    if (events_) events_(PathEvent{1 - p, true, 0, now - since});
  }
}

void PathMerger::claim(Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  auto packet = parse_rtp(datagram);
  if (!packet.ok() || !started_ || follower_.followed() != packet->ssrc) return;
  const auto delta = static_cast<std::int16_t>(static_cast<std::uint16_t>(packet->sequence - static_cast<std::uint16_t>(highest_)));
  const std::int64_t seq = highest_ + delta;
  const std::int64_t window = static_cast<std::int64_t>(slots_.size());
  if (seq < 0 || seq > highest_ || seq <= highest_ - window) return;  // FEC rebuilds only numbers behind the newest
  Slot& s = slot(seq);
  if (s.seq == seq && s.first_path != kNone) return;
  if (s.seq != seq) s.first_arrival = arrival;
  s.seq = seq;
  s.first_path = kRebuilt;
  s.timestamp = packet->timestamp;
}

bool PathMerger::awaited(std::uint16_t sequence, std::chrono::steady_clock::time_point now,
                         std::chrono::steady_clock::duration wait) const {
  if (!started_ || paths_[0].c.down || paths_[1].c.down) return false;  // one path: nothing else comes
  const auto delta = static_cast<std::int16_t>(static_cast<std::uint16_t>(sequence - static_cast<std::uint16_t>(highest_)));
  const std::int64_t seq = highest_ + delta;
  if (seq < 0 || seq > highest_ || seq <= highest_ - static_cast<std::int64_t>(slots_.size())) return false;
  const Slot& s = slot(seq);
  // A slot of another number was never known missing here (it left the window's memory).
  return s.seq == seq && s.first_path == kNone && now - s.first_arrival < wait;
}

PathCounters PathMerger::counters(int path) const {
  if (path < 0 || path >= kPaths) return {};
  return paths_[path].c;
}

}  // namespace j2k::depacketizer
