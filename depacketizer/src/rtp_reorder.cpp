#include "depacketizer/rtp_reorder.hpp"

#include <algorithm>

namespace j2k::depacketizer {

RtpReorderBuffer::RtpReorderBuffer(ReorderConfig config, Release release)
    : config_(config), release_(std::move(release)) {
  config_.max_packets = std::max<std::uint32_t>(1, config_.max_packets);
  slots_.resize(config_.max_packets);
  for (auto& s : slots_) s.data.reserve(config_.max_packet_bytes);
}

void RtpReorderBuffer::push(Bytes packet, std::uint32_t seq, std::chrono::steady_clock::time_point arrival) {
  if (!started_) {
    started_ = true;
    next_ = seq;
  }
  if (static_cast<std::int32_t>(seq - next_) < 0) {
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
  // Beyond the window: declare the oldest gaps lost until this packet fits.
  while (seq - next_ >= config_.max_packets) {
    if (waiting_ == 0) {
      counters_.lost += seq - next_ - (config_.max_packets - 1);
      next_ = seq - (config_.max_packets - 1);
      pending_loss_ = true;
      break;
    }
    skip_to_oldest_waiting();
    release_ready();
  }
  // A packet behind one that is already waiting arrived out of order: it fills a gap in time.
  for (const auto& s : slots_)
    if (s.used && static_cast<std::int32_t>(s.sequence - seq) > 0) {
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
  std::uint32_t best = 0;
  bool found = false;
  for (const auto& s : slots_)
    if (s.used && (!found || static_cast<std::int32_t>(s.sequence - best) < 0)) {
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
    // The oldest waiting packet decides: once it has waited max_delay, its gap is lost.
    std::chrono::steady_clock::time_point oldest = now;
    for (const auto& s : slots_)
      if (s.used) oldest = std::min(oldest, s.arrival);
    if (now - oldest < config_.max_delay) return;
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
