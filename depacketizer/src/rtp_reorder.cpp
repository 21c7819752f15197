#include "depacketizer/rtp_reorder.hpp"

#include <algorithm>

namespace j2k::depacketizer {

RtpReorderBuffer::RtpReorderBuffer(ReorderConfig config, Release release)
    : config_(config), delay_(config.max_delay), release_(std::move(release)) {
  config_.max_packets = std::max<std::uint32_t>(1, config_.max_packets);
  config_.adaptive_max_packets = std::max(config_.adaptive_max_packets, config_.max_packets);
  config_.adaptive_max_delay = std::max(config_.adaptive_max_delay, config_.max_delay);
  slots_.resize(config_.max_packets);
  for (auto& s : slots_) s.data.reserve(config_.max_packet_bytes);
}

void RtpReorderBuffer::set_delay(std::chrono::microseconds delay) noexcept {
  delay_ = std::clamp(delay, config_.max_delay, config_.adaptive ? config_.adaptive_max_delay : config_.max_delay);
}

std::uint32_t RtpReorderBuffer::undecided() const noexcept {
  if (waiting_ == 0) return 0;
  std::uint64_t newest = next_;
  for (const auto& s : slots_)
    if (s.used && static_cast<std::int64_t>(s.sequence - newest) > 0) newest = s.sequence;
  return static_cast<std::uint32_t>(newest + 1 - next_ - waiting_);
}

void RtpReorderBuffer::grow(std::size_t n) {
  // Every waiting sequence lies in [next_, next_ + old size), so they stay distinct modulo
  // the larger size: move each slot to its new place (no copies of the packet bytes).
  std::vector<Slot> bigger(n);
  for (auto& s : slots_)
    if (s.used) bigger[s.sequence % n] = std::move(s);
  slots_ = std::move(bigger);
}

void RtpReorderBuffer::push(Bytes packet, std::uint64_t seq, std::chrono::steady_clock::time_point arrival, bool from_network) {
  if (!started_) {
    started_ = true;
    next_ = seq;
  }
  if (static_cast<std::int64_t>(seq - next_) < 0) {
    ++counters_.late;  // its gap was already declared lost and released past
    return;
  }
  if (seq == next_ && waiting_ == 0) {
    // The common case: in order with nothing waiting — hand on without copying.
    release_(packet, seq, pending_loss_, arrival);
    pending_loss_ = false;
    ++counters_.released;
    ++next_;
    return;
  }
  if (packet.size() > config_.max_packet_bytes) {
    ++counters_.overflow;
    return;
  }
  // Beyond the window. An adaptive window first grows (reordering deeper than the window is
  // what it adapts to; the time limit still bounds how long a gap waits) ...
  while (config_.adaptive && seq - next_ >= slots_.size() && slots_.size() < config_.adaptive_max_packets &&
         seq - next_ < config_.adaptive_max_packets)
    grow(std::min<std::size_t>(config_.adaptive_max_packets, slots_.size() * 2));
  // ... then the oldest gaps are declared lost until this packet fits.
  const std::uint32_t depth = static_cast<std::uint32_t>(slots_.size());
  while (seq - next_ >= depth) {
    if (waiting_ == 0) {
      counters_.lost += seq - next_ - (depth - 1);
      next_ = seq - (depth - 1);
      pending_loss_ = true;
      break;
    }
    skip_to_oldest_waiting();
    release_ready();
  }
  // A packet behind one that is already waiting arrived out of order: it fills a gap in time.
  if (from_network)
    for (const auto& s : slots_)
      if (s.used && static_cast<std::int64_t>(s.sequence - seq) > 0) {
        ++counters_.recovered;
        break;
      }
  Slot& s = slot(seq);
  s.used = true;
  s.sequence = seq;
  s.arrival = arrival;
  s.data.assign(packet.begin(), packet.end());
  ++waiting_;
  release_ready();
}

void RtpReorderBuffer::release_ready() {
  while (waiting_ > 0) {
    Slot& s = slot(next_);
    if (!s.used || s.sequence != next_) return;
    release_(Bytes(s.data), s.sequence, pending_loss_, s.arrival);
    pending_loss_ = false;
    s.used = false;
    --waiting_;
    ++counters_.released;
    ++next_;
  }
}

void RtpReorderBuffer::skip_to_oldest_waiting() {
  // Lowest waiting sequence ahead of next_: everything before it is lost.
  std::uint64_t best = 0;
  bool found = false;
  for (const auto& s : slots_)
    if (s.used && (!found || static_cast<std::int64_t>(s.sequence - best) < 0)) {
      best = s.sequence;
      found = true;
    }
  if (!found) return;
  counters_.lost += best - next_;
  if (best != next_) pending_loss_ = true;
  next_ = best;
}

void RtpReorderBuffer::tick(std::chrono::steady_clock::time_point now) {
  while (waiting_ > 0) {
    // The oldest waiting packet decides: once it has waited the delay, its gap is lost.
    std::chrono::steady_clock::time_point oldest = now;
    for (const auto& s : slots_)
      if (s.used) oldest = std::min(oldest, s.arrival);
    if (now - oldest < delay_) return;
    skip_to_oldest_waiting();
    release_ready();
  }
}

void RtpReorderBuffer::flush() {
  while (waiting_ > 0) {
    skip_to_oldest_waiting();
    release_ready();
  }
}

void RtpReorderBuffer::reset() {
  flush();
  started_ = false;
  pending_loss_ = false;
}

}  // namespace j2k::depacketizer
