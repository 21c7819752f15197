#pragma once
// RTCP (RFC 3550 section 6) as a receiver reads it: compound packets from the sender's
// control port (the RTP port + 1), of which we use the sender report (6.4.1: the sender's
// packet and octet counts, NTP and RTP timestamps of one instant) and BYE (6.6). The counts
// let the receiver account for packets and frames the sender sent after the last one that
// arrived: losses at the very end of a stream, which sequence numbers alone cannot show.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::depacketizer {

struct SenderReport {
  std::uint32_t ssrc = 0;
  std::uint64_t ntp_timestamp = 0;  ///< 32.32 fixed-point seconds since 1900 (RFC 3550 4)
  std::uint32_t rtp_timestamp = 0;  ///< the same instant on the media clock
  std::uint32_t packet_count = 0;   ///< RTP data packets sent since the start (wraps at 2^32)
  std::uint32_t octet_count = 0;    ///< payload octets sent since the start (wraps at 2^32)
};

/// What one compound RTCP datagram said that we use; other packet types are skipped.
struct RtcpCompound {
  std::optional<SenderReport> sender_report;  ///< the first SR of the compound
  std::vector<std::uint32_t> bye;             ///< SSRCs that said BYE (at most 31 per BYE)
  int packets = 0;                            ///< RTCP packets in the compound
};

/// Parses one compound packet with the validity checks of RFC 3550 A.2: version 2, the first
/// packet an SR or RR without padding, padding only in the last packet, and lengths that add
/// up to the datagram exactly. Every read is bounds-checked; an error names what was wrong.
Result<RtcpCompound> parse_rtcp(Bytes datagram);

/// What the receiver learned from the sender's reports (a copy, for statistics).
struct RtcpSnapshot {
  std::uint64_t datagrams = 0;         ///< control datagrams of any kind
  std::uint64_t malformed = 0;         ///< failed the A.2 checks (dropped)
  std::uint64_t foreign = 0;           ///< reports about other SSRCs than the stream followed
  /// Sender reports of the followed stream whose packet count would put more packets after
  /// the last one received than the stream's own rate allows (forged or broken): not used.
  std::uint64_t implausible = 0;
  std::uint64_t sender_reports = 0;    ///< SRs of the followed stream, all of the run (every pass of a loop)
  std::uint64_t sender_packets = 0;    ///< packet count of its latest SR (extended past 2^32)
  std::uint64_t sender_octets = 0;     ///< octet count of its latest SR (extended past 2^32)
  bool bye = false;                    ///< the followed stream's sender said BYE
  std::uint64_t packets_lost_at_end = 0;   ///< sent after the last packet that arrived
  std::uint64_t frames_missing_at_end = 0; ///< whole frames after the last one that arrived (after BYE)
};

/// Maps the sender's packet count onto our extended sequence numbers, so that packets sent
/// after the last one received count as lost (RFC 3550 A.3 counts only up to the highest
/// sequence received). Sequence numbers go up by one per packet sent, so "sequence minus
/// count" is one constant per stream; each SR gives a lower bound of it (the packets sent
/// before the SR may not all have arrived), and the largest bound seen is used.
class SenderTail {
 public:
  /// A sender report of the followed stream; `highest` is the highest extended sequence
  /// received when it was read (none before the first packet).
  void on_report(const SenderReport& sr, std::optional<std::uint64_t> highest);
  /// The sender said BYE: its last report is final.
  void on_bye() noexcept { bye_ = true; }
  void reset() noexcept { *this = SenderTail{}; }

  /// Packets the sender had sent by its latest report beyond `highest` (0 until calibrated).
  std::uint64_t lost_after(std::uint64_t highest) const noexcept;
  /// After BYE: whole frames whose timestamps lie between `last_frame_timestamp` (the last
  /// frame that arrived, complete or not) and the final report. The sender reports its
  /// clock's time, which is after its last frame's timestamp but less than a frame period
  /// past the next frame's slot when it keeps pace, so one period is taken off.
  std::uint64_t frames_after(std::uint32_t last_frame_timestamp, double frame_interval_ticks) const noexcept;

  std::uint64_t reports() const noexcept { return reports_; }
  std::uint64_t packet_count() const noexcept { return packets_; }
  std::uint64_t octet_count() const noexcept { return octets_; }
  bool bye() const noexcept { return bye_; }

 private:
  std::uint64_t reports_ = 0;
  std::uint64_t packets_ = 0;  // extended packet count of the latest SR
  std::uint64_t octets_ = 0;
  std::optional<std::int64_t> offset_;  // extended sequence − packet count, largest bound seen
  std::optional<std::uint32_t> last_rtp_timestamp_;
  bool bye_ = false;
};

}  // namespace j2k::depacketizer
