#include "depacketizer/source_guard.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace j2k::depacketizer {

SourceGuard::Verdict SourceGuard::accept(int channel, Bytes datagram, Source from, Clock::time_point arrival) {
  // RTP version 2 with a whole fixed header; anything else (plain TS, junk) is not ours to judge.
  if (from.address == 0 || datagram.size() < 12 || (datagram[0] >> 6) != 2) return Verdict::pass;
  const std::uint32_t ssrc = static_cast<std::uint32_t>(datagram[8]) << 24 | static_cast<std::uint32_t>(datagram[9]) << 16 |
                             static_cast<std::uint32_t>(datagram[10]) << 8 | datagram[11];
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.channel == channel && e.ssrc == ssrc; });
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxEntries) {
      // A sender hopping SSRCs must not grow the table: the least recent gives way.
      entries_.erase(std::min_element(entries_.begin(), entries_.end(),
                                      [](const Entry& a, const Entry& b) { return a.last < b.last; }));
    }
    entries_.push_back(Entry{channel, ssrc, from, arrival, std::nullopt, {}});
    return Verdict::pass;
  }
  Entry& e = *it;
  if (e.source == from) {
    e.last = std::max(e.last, arrival);
    return Verdict::pass;
  }
  finding_ = Finding{ssrc, e.source, from, false};
  if (arrival - e.last >= quiet_) {
    // The first source went quiet: a backup with the same settings, or the sender again on a
    // new port. The new one is the SSRC's source now.
    ++counters_.takeovers;
    e.source = from;
    e.last = arrival;
    e.said.reset();
    return Verdict::takeover;
  }
  ++counters_.collisions;
  // Said when the colliding source is new, at most once a second per SSRC (a spoofer from
  // ever new ports must not turn each packet into an event).
  if (e.said != from && (!e.said || arrival - e.said_at >= std::chrono::seconds(1))) {
    finding_.first_time = true;
    e.said = from;
    e.said_at = arrival;
  }
  return Verdict::collision;
}

std::string to_string(const SourceGuard::Source& s) {
  return fmt::format("{}.{}.{}.{}:{}", s.address >> 24, (s.address >> 16) & 0xFF, (s.address >> 8) & 0xFF, s.address & 0xFF,
                     s.port);
}

}  // namespace j2k::depacketizer
