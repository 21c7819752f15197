#pragma once
// One received RTP stream: header validation, sequence accounting, jitter, and the
// payload depacketizer, producing access units. Runs on the depacketizer thread; its
// counters can be read from any thread (atomics) for statistics.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "core/log.hpp"
#include "depacketizer/codestream_unit.hpp"
#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "depacketizer/payload.hpp"
#include "depacketizer/rtp.hpp"
#include "depacketizer/rtp_reorder.hpp"
#include "depacketizer/ts_depacketizer.hpp"

namespace j2k::depacketizer {

/// A consistent copy of a stream's statistics.
struct StreamSnapshot {
  std::uint64_t packets_received = 0;   ///< unique RTP packets of the followed stream
  std::uint64_t packets_lost = 0;       ///< expected − received (RFC 3550)
  std::uint64_t packets_duplicate = 0;
  std::uint64_t packets_recovered = 0;  ///< arrived out of order, put back in order in time
  std::uint64_t packets_late = 0;       ///< arrived after their gap was declared lost (dropped)
  std::uint64_t packets_out_of_window = 0;  ///< sequence far outside the window (stray)
  std::uint64_t packets_malformed = 0;  ///< not RTP, or inconsistent header
  std::uint64_t packets_foreign = 0;    ///< other SSRCs than the one followed
  std::uint64_t payload_bytes = 0;
  std::uint64_t frames_complete = 0;
  std::uint64_t frames_incomplete = 0;
  std::uint64_t resync_skipped = 0;
  std::uint64_t klv_malformed = 0;
  std::uint64_t units_merged = 0;       ///< luma+chroma pairs merged into one codestream
  std::uint64_t units_unusable = 0;     ///< could not be split or merged (reason logged)
  double jitter_ms = 0;
  double frame_rate = 0;                ///< from RTP timestamps
  std::uint32_t ssrc = 0;
  std::optional<PictureDescriptor> descriptor;
};

struct SessionConfig {
  ReorderConfig reorder;
  PayloadFormat format = PayloadFormat::mxf;
};

/// Turns what a payload carried into decodable pictures: splits KLVs that hold two codestreams
/// (MXF I2), strips vendor prefixes, merges luma+chroma pairs, and marks field pairs. On
/// failure `problem` says why and the codestreams are left as they arrived (the unit may
/// still be complete as far as the network is concerned).
void normalize_unit(CodestreamUnit& unit, bool interlaced_payload);

class RtpSession {
 public:
  using Sink = std::function<void(CodestreamUnit&&)>;
  explicit RtpSession(Sink sink, SessionConfig config = {});

  /// Feeds one datagram (any bytes: malformed input is counted and dropped).
  void on_datagram(Bytes datagram, std::chrono::steady_clock::time_point arrival);
  /// Releases packets that waited too long for a gap to fill (call when idle).
  void tick(std::chrono::steady_clock::time_point now);
  /// Emits pending data (end of input).
  void flush();

  StreamSnapshot snapshot() const;
  /// The TS layer's state when the session carries MPEG-2 TS (format ts); thread-safe.
  std::optional<TsSnapshot> ts_snapshot() const;

 private:
  void process(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  void on_ordered(Bytes datagram, bool loss_before, std::chrono::steady_clock::time_point arrival);
  void publish_counters();
  void on_unit(CodestreamUnit&& unit);

  Sink sink_;
  bool interlaced_rfc5371_ = false;  // RFC 5371 units of two codestreams are field pairs (tp 1, 2)
  std::unique_ptr<PayloadDepacketizer> payload_;
  TsDepacketizer* ts_ = nullptr;  // payload_ when it is TS (plain UDP TS bypasses RTP)
  RtpSequenceTracker sequence_;
  JitterEstimator jitter_;
  RtpReorderBuffer reorder_;
  std::optional<std::uint32_t> ssrc_;
  std::vector<std::uint8_t> first_packet_;  // first packet of a stream not yet confirmed
  std::uint32_t first_ssrc_ = 0;
  std::chrono::steady_clock::time_point first_arrival_{};
  std::uint32_t candidate_ssrc_ = 0;
  int candidate_count_ = 0;
  std::chrono::steady_clock::time_point epoch_{};
  std::optional<std::uint32_t> last_unit_timestamp_;
  double frame_interval_ticks_ = 0;
  RateLimiter malformed_log_;

  // Totals readable from other threads.
  std::atomic<std::uint64_t> malformed_{0}, foreign_{0}, payload_bytes_{0};
  std::atomic<std::uint64_t> received_{0}, lost_{0}, duplicates_{0}, recovered_{0}, late_{0}, out_of_window_{0};
  std::atomic<std::uint64_t> complete_{0}, incomplete_{0}, resync_skipped_{0}, klv_malformed_{0};
  std::atomic<std::uint64_t> merged_{0}, unusable_{0};
  RateLimiter unit_log_;
  std::atomic<double> jitter_ticks_{0}, frame_rate_{0};
  std::atomic<std::uint32_t> ssrc_value_{0};
  mutable std::mutex descriptor_mutex_;  // guards descriptor_copy_
  std::optional<PictureDescriptor> descriptor_copy_;
};

}  // namespace j2k::depacketizer
