#pragma once
// RTP (RFC 3550) header parsing and per-stream sequence accounting.
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |V=2|P|X|  CC   |M|     PT      |       sequence number         |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                           timestamp                           |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                             SSRC                              |
//   +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//   |            CSRC list (CC × 32 bits), extension (if X)         |
#include <cstdint>
#include <optional>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::depacketizer {

struct RtpPacket {
  bool marker = false;
  std::uint8_t payload_type = 0;
  std::uint16_t sequence = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t ssrc = 0;
  Bytes payload;  ///< view into the datagram, after CSRCs, extension and before padding
};

/// Validates and parses one datagram. Runts, version ≠ 2, and lengths (CSRC, extension,
/// padding) that do not fit the datagram are errors, never reads past its end.
Result<RtpPacket> parse_rtp(Bytes datagram);

/// Sequence-number bookkeeping for one SSRC (RFC 3550 A.1, A.3, A.8).
/// Call `accept` for every parsed packet in arrival order.
class RtpSequenceTracker {
 public:
  enum class Verdict { in_order, gap, duplicate, out_of_order, stray, restart };

  /// Classifies the packet. `gap` means packets were skipped (they count as lost until
  /// they arrive late); `out_of_order` is an old packet arriving after a newer one; `duplicate`
  /// was already received. `stray` is far outside the window (ignored unless the next packet
  /// follows it, which makes that one a `restart`: the sender began a new run of numbers).
  Verdict accept(std::uint16_t sequence);
  RtpSequenceTracker() = default;
  /// Tests: the extended numbers start in this cycle of 2^16 (normally the first above 0, so
  /// that packets from before the first one do not go below zero), e.g. just below 2^32.
  explicit RtpSequenceTracker(std::uint64_t first_cycle) : first_cycle_(first_cycle) {}
  /// The sender began a new run of numbers (its move confirmed elsewhere): what was expected
  /// so far is kept, and the next packet starts the new run.
  void restart() noexcept;
  bool started() const noexcept { return started_; }

  std::uint64_t received() const noexcept { return received_; }   ///< unique packets
  std::uint64_t expected() const noexcept;                        ///< from first to highest extended seq
  std::uint64_t lost() const noexcept;                            ///< expected − received (never negative)
  std::uint64_t duplicates() const noexcept { return duplicates_; }
  std::uint64_t out_of_order() const noexcept { return out_of_order_; }
  std::uint64_t restarts() const noexcept { return restarts_; }
  std::uint64_t strays() const noexcept { return stray_; }
  std::uint64_t last_gap() const noexcept { return last_gap_; }   ///< packets skipped by the last `gap`
  std::uint64_t highest_extended() const noexcept { return highest_; }
  /// Extended sequence number of the packet last passed to `accept`.
  std::uint64_t last_extended() const noexcept { return last_extended_; }

 private:
  bool seen(std::uint64_t extended) const noexcept;
  void mark(std::uint64_t extended) noexcept;

  static constexpr std::uint32_t kWindow = 1024;      // remembered sequence numbers for duplicate detection
  static constexpr std::uint16_t kMaxDropout = 3000;  // a larger forward jump is not believed as loss
  bool started_ = false;
  std::uint64_t first_cycle_ = 1;
  // Extended sequence numbers in 64 bits: 2^32 packets are 13 hours of a 1 Gbit/s link, and
  // a monitor runs for days (32 bits wrapped: loss hidden, reordered packets not counted).
  std::uint64_t base_ = 0;      // extended sequence of the first packet
  std::uint64_t highest_ = 0;   // highest extended sequence seen
  std::uint64_t expected_before_restart_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t last_extended_ = 0;
  std::uint64_t duplicates_ = 0, out_of_order_ = 0, restarts_ = 0, stray_ = 0;  // packets given those verdicts
  std::optional<std::uint16_t> bad_sequence_;  // sequence that would confirm a restart
  std::uint64_t last_gap_ = 0;
  std::uint64_t window_[kWindow / 64] = {};
};

/// RFC 3550 A.8 interarrival jitter, in RTP timestamp units (90 kHz for video).
class JitterEstimator {
 public:
  /// `arrival_ticks`: arrival time in timestamp units. Packets of one frame share a
  /// timestamp, so only the first packet of each timestamp is used (as receivers of
  /// video commonly do, otherwise the frame's burst dominates).
  void update(std::uint32_t rtp_timestamp, double arrival_ticks);
  double jitter_ticks() const noexcept { return jitter_; }

 private:
  bool started_ = false;
  std::uint32_t last_timestamp_ = 0;
  double last_transit_ = 0;
  double jitter_ = 0;
};

}  // namespace j2k::depacketizer
