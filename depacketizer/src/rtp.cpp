#include "depacketizer/rtp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace j2k::depacketizer {

Result<RtpPacket> parse_rtp(Bytes datagram) {
  ByteReader r(datagram);
  if (datagram.size() < 12) return make_error(ErrorKind::corrupt, fmt::format("runt RTP packet of {} bytes", datagram.size()));
  std::uint8_t b0 = r.u8();
  std::uint8_t b1 = r.u8();
  if ((b0 >> 6) != 2) return make_error(ErrorKind::corrupt, fmt::format("RTP version {} (expected 2)", b0 >> 6));
  RtpPacket p;
  const bool padding = b0 & 0x20;
  const bool extension = b0 & 0x10;
  const int csrc_count = b0 & 0x0F;
  p.marker = b1 & 0x80;
  p.payload_type = b1 & 0x7F;
  p.sequence = r.u16();
  p.timestamp = r.u32();
  p.ssrc = r.u32();
  // CC×4 bytes of CSRC must fit before any payload.
  if (!r.has(4u * csrc_count)) return make_error(ErrorKind::corrupt, "CSRC list longer than the packet");
  r.skip(4u * csrc_count);
  if (extension) {
    if (!r.has(4)) return make_error(ErrorKind::corrupt, "extension header cut short");
    r.skip(2);  // profile-defined id
    std::size_t words = r.u16();
    if (!r.has(4 * words)) return make_error(ErrorKind::corrupt, "extension longer than the packet");
    r.skip(4 * words);
  }
  Bytes rest = r.rest();
  if (padding) {
    // The last byte counts the padding bytes, itself included (RFC 3550 5.1).
    std::size_t pad = rest.empty() ? 0 : rest.back();
    if (pad == 0 || pad > rest.size()) return make_error(ErrorKind::corrupt, "RTP padding count is inconsistent");
    rest = rest.first(rest.size() - pad);
  }
  p.payload = rest;
  return p;
}

bool RtpSequenceTracker::seen(std::uint64_t ext) const noexcept {
  const auto slot = static_cast<std::uint32_t>(ext % kWindow);
  return (window_[slot / 64] >> (slot % 64)) & 1u;
}
void RtpSequenceTracker::mark(std::uint64_t ext) noexcept {
  const auto slot = static_cast<std::uint32_t>(ext % kWindow);
  window_[slot / 64] |= std::uint64_t{1} << (slot % 64);
}

RtpSequenceTracker::Verdict RtpSequenceTracker::accept(std::uint16_t seq) {
  last_gap_ = 0;
  if (!started_) {
    started_ = true;
    // Start the extended counter one cycle up so late packets before the first one do not underflow.
    base_ = highest_ = last_extended_ = (first_cycle_ << 16) + seq;
    mark(highest_);
    ++received_;  // (after restart() the totals carry on)
    return Verdict::in_order;
  }
  // Serial arithmetic on 16 bits: how far ahead of the highest sequence seen (RFC 3550 A.1).
  const auto ahead = static_cast<std::uint16_t>(seq - static_cast<std::uint16_t>(highest_));
  if (ahead != 0 && ahead < kMaxDropout) {
    const std::uint64_t ext = highest_ + ahead;
    last_extended_ = ext;
    // Forget window slots that the advance reuses, then mark this one.
    for (std::uint64_t s = highest_ + 1; s <= ext && s - highest_ <= kWindow; ++s) {
      const auto slot = static_cast<std::uint32_t>(s % kWindow);
      window_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    }
    mark(ext);
    const std::uint64_t skipped = ext - highest_ - 1;
    highest_ = ext;
    ++received_;
    last_gap_ = skipped;
    bad_sequence_.reset();
    return skipped ? Verdict::gap : Verdict::in_order;
  }
  const std::uint32_t behind = static_cast<std::uint16_t>(-ahead);  // 0 for the highest itself
  if (behind < kWindow) {
    const std::uint64_t ext = highest_ - behind;
    last_extended_ = ext;
    if (seen(ext)) {
      ++duplicates_;
      return Verdict::duplicate;
    }
    ++out_of_order_;
    if (ext < base_) return Verdict::out_of_order;  // from before we started: not ours to count
    mark(ext);
    ++received_;  // a reordered packet fills its gap
    return Verdict::out_of_order;
  }
  // Far outside the window either way: a stray packet, or the sender restarted. Two packets
  // in sequence from the new place mean a restart (RFC 3550 A.1 probation).
  if (bad_sequence_ && *bad_sequence_ == seq) {
    ++restarts_;
    expected_before_restart_ += static_cast<std::uint64_t>(highest_ - base_) + 1;
    base_ = (first_cycle_ << 16) + static_cast<std::uint16_t>(seq - 1);
    highest_ = base_ + 1;
    std::fill(std::begin(window_), std::end(window_), 0);
    mark(base_);
    mark(highest_);
    received_ += 2;
    last_extended_ = highest_;
    bad_sequence_.reset();
    return Verdict::restart;
  }
  bad_sequence_ = static_cast<std::uint16_t>(seq + 1);
  ++stray_;
  return Verdict::stray;
}

void RtpSequenceTracker::restart() noexcept {
  if (!started_) return;
  ++restarts_;
  expected_before_restart_ += static_cast<std::uint64_t>(highest_ - base_) + 1;
  started_ = false;
  bad_sequence_.reset();
  std::fill(std::begin(window_), std::end(window_), 0);
}

std::uint64_t RtpSequenceTracker::expected() const noexcept {
  return expected_before_restart_ + (started_ ? static_cast<std::uint64_t>(highest_ - base_) + 1 : 0);
}

std::uint64_t RtpSequenceTracker::lost() const noexcept {
  std::uint64_t e = expected();
  return e > received_ ? e - received_ : 0;
}

void JitterEstimator::update(std::uint32_t rtp_timestamp, double arrival_ticks) {
  if (started_ && rtp_timestamp == last_timestamp_) return;
  const double transit = arrival_ticks - static_cast<double>(rtp_timestamp);
  if (started_) {
    // Transit differences, with the timestamp's 32-bit wrap folded away.
    double d = transit - last_transit_;
    d = std::remainder(d, 4294967296.0);
    jitter_ += (std::fabs(d) - jitter_) / 16.0;
  }
  started_ = true;
  last_timestamp_ = rtp_timestamp;
  last_transit_ = transit;
}

}  // namespace j2k::depacketizer
