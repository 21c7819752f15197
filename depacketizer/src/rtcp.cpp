#include "depacketizer/rtcp.hpp"

#include <fmt/format.h>

#include <cmath>

namespace j2k::depacketizer {

namespace {
// RTCP packet types (RFC 3550 12.1).
constexpr int kSr = 200, kRr = 201, kBye = 203;
constexpr std::size_t kReportBlock = 24;  // RFC 3550 6.4.1

/// Extends a 32-bit counter that only grows (and wraps) to 64 bits.
std::uint64_t extend(std::uint64_t previous, std::uint32_t value) {
  std::uint64_t candidate = (previous & ~0xFFFFFFFFull) | value;
  if (candidate + 0x80000000ull < previous) candidate += 1ull << 32;  // wrapped forwards
  else if (candidate > previous + 0x80000000ull && candidate >= (1ull << 32)) candidate -= 1ull << 32;  // older report
  return candidate;
}
}  // namespace

Result<RtcpCompound> parse_rtcp(Bytes datagram) {
  RtcpCompound out;
  ByteReader r(datagram);
  if (datagram.size() < 8) return make_error(ErrorKind::corrupt, "RTCP datagram shorter than one header");
  while (!r.empty()) {
    const std::size_t start = r.position();
    if (!r.has(4)) return make_error(ErrorKind::corrupt, fmt::format("RTCP: {} stray bytes at the end", r.remaining()));
    const std::uint8_t b0 = r.u8();
    const int type = r.u8();
    const std::size_t length = (static_cast<std::size_t>(r.u16()) + 1) * 4;  // in 32-bit words, minus one
    const int count = b0 & 0x1F;
    const bool padding = b0 & 0x20;
    if ((b0 >> 6) != 2) return make_error(ErrorKind::corrupt, fmt::format("RTCP version {} (expected 2)", b0 >> 6));
    if (length > datagram.size() - start)
      return make_error(ErrorKind::corrupt, fmt::format("RTCP packet type {} of {} bytes runs past the datagram", type, length));
    // A.2: a compound starts with an SR or RR, and only the last packet may be padded.
    if (out.packets == 0 && type != kSr && type != kRr)
      return make_error(ErrorKind::corrupt, fmt::format("RTCP compound starts with packet type {}, not SR or RR", type));
    const bool last = start + length == datagram.size();
    std::size_t body_end = start + length;
    if (padding) {
      if (!last) return make_error(ErrorKind::corrupt, "RTCP padding in a packet that is not the last");
      const std::uint8_t pad = datagram[start + length - 1];
      if (pad == 0 || pad > length - 4) return make_error(ErrorKind::corrupt, "RTCP padding count does not fit");
      body_end -= pad;
    }
    ByteReader body(datagram.subspan(start + 4, body_end - start - 4));
    if (type == kSr) {
      SenderReport sr;
      sr.ssrc = body.u32();
      sr.ntp_timestamp = body.u64();
      sr.rtp_timestamp = body.u32();
      sr.packet_count = body.u32();
      sr.octet_count = body.u32();
      if (body.failed() || !body.has(static_cast<std::size_t>(count) * kReportBlock))
        return make_error(ErrorKind::corrupt, fmt::format("RTCP SR with {} report blocks does not fit its length", count));
      if (!out.sender_report) out.sender_report = sr;
    } else if (type == kRr) {
      body.skip(4 + static_cast<std::size_t>(count) * kReportBlock);
      if (body.failed()) return make_error(ErrorKind::corrupt, fmt::format("RTCP RR with {} report blocks does not fit its length", count));
    } else if (type == kBye) {
      if (!body.has(static_cast<std::size_t>(count) * 4))
        return make_error(ErrorKind::corrupt, fmt::format("RTCP BYE of {} sources does not fit its length", count));
      for (int i = 0; i < count; ++i) out.bye.push_back(body.u32());
      // An optional reason (length byte + text) may follow; we do not need it.
    }
    // SDES, APP and the feedback/XR types are skipped whole.
    ++out.packets;
    r.seek(start + length);
  }
  return out;
}

void SenderTail::on_report(const SenderReport& sr, std::optional<std::uint64_t> highest) {
  packets_ = reports_ == 0 ? sr.packet_count : extend(packets_, sr.packet_count);
  octets_ = reports_ == 0 ? sr.octet_count : extend(octets_, sr.octet_count);
  ++reports_;
  last_rtp_timestamp_ = sr.rtp_timestamp;
  if (!highest) return;
  // The packet with extended sequence `highest` was at most the packets_-th one sent, so
  // (sequence of packet number n) = n + offset with offset ≥ highest − packets_.
  const std::int64_t bound = static_cast<std::int64_t>(*highest) - static_cast<std::int64_t>(packets_);
  if (!offset_ || bound > *offset_) offset_ = bound;
}

std::uint64_t SenderTail::lost_after(std::uint64_t highest) const noexcept {
  if (!offset_) return 0;
  const std::int64_t last_sent = *offset_ + static_cast<std::int64_t>(packets_);
  return last_sent > static_cast<std::int64_t>(highest) ? static_cast<std::uint64_t>(last_sent - static_cast<std::int64_t>(highest)) : 0;
}

std::uint64_t SenderTail::frames_after(std::uint32_t last_frame_timestamp, double frame_interval_ticks) const noexcept {
  if (!bye_ || !last_rtp_timestamp_ || !(frame_interval_ticks > 0)) return 0;
  const auto ahead = static_cast<std::int32_t>(*last_rtp_timestamp_ - last_frame_timestamp);  // RFC 3550 modular
  if (ahead <= 0) return 0;
  const double periods = std::floor(static_cast<double>(ahead) / frame_interval_ticks);
  // Bounded: a report far ahead (a sender that was paused) says nothing about frames.
  if (periods < 1 || periods > 1e6) return 0;
  return static_cast<std::uint64_t>(periods) - 1;
}

}  // namespace j2k::depacketizer
