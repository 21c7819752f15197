#pragma once
// One received RTP stream: header validation, sequence accounting, jitter, and the
// payload depacketizer, producing access units. Runs on the depacketizer thread; its
// counters can be read from any thread (atomics) for statistics.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "depacketizer/codestream_unit.hpp"
#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "depacketizer/payload.hpp"
#include "depacketizer/rtcp.hpp"
#include "depacketizer/payload_probe.hpp"
#include "depacketizer/rtp.hpp"
#include "depacketizer/rtp_reorder.hpp"
#include "depacketizer/ts_depacketizer.hpp"

namespace j2k::depacketizer {

/// One SSRC seen on the port: the followed stream(s) with their own counts, and the others.
struct SsrcStats {
  std::uint32_t ssrc = 0;
  std::uint64_t datagrams = 0;          ///< valid RTP packets with this SSRC (any payload)
  std::uint64_t bytes = 0;
  PayloadLook look = PayloadLook::none;  ///< what its payload looked like (strongest sign seen)
  bool followed = false;                ///< it was (or is) the followed stream
  // For followed streams (totals over each time it was followed):
  std::uint64_t packets_received = 0;
  std::uint64_t packets_lost = 0;
  std::uint64_t frames_complete = 0;
  std::uint64_t frames_incomplete = 0;
};

/// A consistent copy of a stream's statistics. Packet and frame counts are totals over every
/// stream followed in turn (a sender that restarts comes back with a new SSRC); `ssrcs` has
/// each one's share.
struct StreamSnapshot {
  std::uint64_t packets_received = 0;   ///< unique RTP packets of the followed stream(s)
  std::uint64_t packets_lost = 0;       ///< expected − received (RFC 3550), gaps the reorder window still waits on excluded
  std::uint64_t packets_duplicate = 0;
  std::uint64_t packets_recovered = 0;  ///< arrived out of order, put back in order in time
  std::uint64_t packets_late = 0;       ///< arrived after their gap was declared lost (dropped)
  std::uint64_t packets_out_of_window = 0;  ///< sequence far outside the window (stray)
  std::uint64_t packets_suspect = 0;    ///< followed SSRC, but sequence/timestamp implausible and never confirmed (spoofed)
  std::uint64_t packets_malformed = 0;  ///< not RTP, or inconsistent header
  std::uint64_t packets_foreign = 0;    ///< other SSRCs than the one followed
  std::uint64_t packets_wrong_format = 0;  ///< streams whose payload looks like another format than the stated one
  std::uint64_t payload_bytes = 0;
  std::uint64_t frames_complete = 0;
  std::uint64_t frames_incomplete = 0;
  /// Frames of which no packet came (a whole frame lost): a timestamp step of k frame
  /// intervals between two units is k − 1 of them (the interval: the least step of the last 8).
  std::uint64_t frames_missing = 0;
  std::uint64_t resync_skipped = 0;     ///< payloads dropped while looking for a unit start
  std::uint64_t klv_malformed = 0;      ///< payload errors: bad KLVs (MXF) or RFC 5371 headers
  std::uint64_t units_capped = 0;       ///< units cut at the byte or time cap
  std::uint64_t offsets_rejected = 0;   ///< RFC 5371 fragment offsets beyond what arrived
  std::uint64_t descriptors_rejected = 0;  ///< picture descriptors with implausible values
  std::uint64_t units_merged = 0;       ///< luma+chroma pairs merged into one codestream
  std::uint64_t units_unusable = 0;     ///< could not be split or merged (reason logged)
  std::uint64_t ssrc_changes = 0;       ///< times the followed stream changed
  double jitter_ms = 0;
  double reorder_window_ms = 0;         ///< the (adaptive) reorder delay in force
  double frame_rate = 0;                ///< from RTP timestamps
  /// The streams' own time, from their RTP timestamps: the steps between their units (a lost
  /// frame's included; a jump of 10 s or more, or a new stream, starts a new timeline) plus
  /// one frame interval for each timeline's last unit. A fast replay or a silence after the
  /// end does not lengthen it, and a frame rate that changed is counted at each rate.
  double stream_seconds = 0;
  std::uint32_t ssrc = 0;
  std::string payload_format;           ///< "mxf", "rfc5371", or "" before a stream is followed
  bool format_detected = false;         ///< decided from the payload (no format= given)
  std::vector<SsrcStats> ssrcs;         ///< every SSRC seen (at most kMaxListedSsrcs)
  std::uint64_t ssrcs_unlisted = 0;     ///< datagrams of SSRCs beyond the list
  std::optional<PictureDescriptor> descriptor;
  RtcpSnapshot rtcp;                    ///< the sender's reports; packets_lost includes rtcp.packets_lost_at_end once the stream ended (BYE, or flushed)
  AudioCounters audio;                  ///< the sound that came with the pictures (MXF sound elements, ST 302M)
};

/// Something that happened to the stream, as it happened (for the operator's event log).
struct SessionEvent {
  enum class Kind { sequence_gap, ssrc_change, descriptor_change, restart, ssrc_collision, path_down, path_back };
  Kind kind = Kind::sequence_gap;
  std::uint64_t first = 0, last = 0, count = 0;  ///< gaps: first and last missing extended sequence, count
  std::optional<std::uint32_t> rtp_timestamp;    ///< of the packet after a gap, or of the unit
  std::string message;
};

struct SessionConfig {
  ReorderConfig reorder;
  /// The stated payload format; nullopt: decide from the first packets that carry a unit start.
  std::optional<PayloadFormat> format = PayloadFormat::mxf;
  /// Called on the depacketizer thread for each event (a gap when the reorder window gives it
  /// up, an SSRC change, a changed picture descriptor). Must not block.
  std::function<void(const SessionEvent&)> on_event;
  /// Called on the depacketizer thread with each block of sound (MXF sound elements, ST 302M
  /// PES), stamped with the 90 kHz time of its first sample. Must not block.
  AudioSink on_audio;
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

  /// Feeds one datagram (any bytes: malformed input is counted and dropped). `timing`: its
  /// arrival says something about the network's timing (false for a packet rebuilt by FEC,
  /// or a lagging ST 2022-7 path's copy standing in for one the other path lost): it then
  /// counts as received but is no jitter sample.
  void on_datagram(Bytes datagram, std::chrono::steady_clock::time_point arrival, bool timing = true);
  /// The least time a gap waits in the reorder window (ST 2022-7: the other path's copy may
  /// come this much later); the adaptive delay never goes below it.
  void set_reorder_floor(std::chrono::microseconds floor);
  /// Releases packets that waited too long for a gap to fill (call when idle).
  void tick(std::chrono::steady_clock::time_point now);
  /// Emits pending data (end of input).
  void flush();
  /// The source starts again with the same SSRC (a looped capture): the followed stream is
  /// closed as at an SSRC change (pending units end, counts kept) and its sequence numbers,
  /// timestamps and jitter begin afresh. Depacketizer thread.
  void restart();

  /// One datagram from the control port (RTP port + 1): RTCP of the stream's sender
  /// (rtp_session_rtcp.cpp). Malformed ones are counted and dropped. `arrival`: its receive
  /// time on the data packets' clock, when known — a report then relates only to the packets
  /// that arrived before it, however late its own socket's thread handed it on.
  void on_rtcp(Bytes datagram, std::optional<std::chrono::steady_clock::time_point> arrival = std::nullopt);
  void on_sender_report(const SenderReport& report,
                        std::optional<std::chrono::steady_clock::time_point> arrival = std::nullopt);
  void on_bye(std::uint32_t ssrc);

  /// The SSRC of the stream followed, if any (depacketizer thread).
  std::optional<std::uint32_t> followed_ssrc() const noexcept { return ssrc_; }

  StreamSnapshot snapshot() const;
  /// Unique RTP packets of the followed stream so far (snapshot().packets_received, cheaply).
  std::uint64_t packets_received() const noexcept { return received_.load(std::memory_order_relaxed); }
  /// The TS layer's state when the session carries MPEG-2 TS (format ts); thread-safe.
  std::optional<TsSnapshot> ts_snapshot() const;

 private:
  /// A packet kept until its stream is followed or its move is confirmed.
  struct Held {
    std::vector<std::uint8_t> data;
    std::chrono::steady_clock::time_point arrival;
  };
  /// An SSRC that is not followed (yet): it becomes the followed stream only when one of its
  /// payloads looks like the format, a packet in sequence follows that one, and the followed
  /// stream (if any) has gone quiet.
  struct Candidate {
    std::uint32_t ssrc = 0;
    bool evidence = false;              // held.front() (or an earlier, dropped packet) began a unit
    bool confirmed = false;             // a packet in sequence followed the evidence
    bool mismatch = false;              // looks like another format than the stated one
    std::uint16_t evidence_sequence = 0;
    std::uint32_t evidence_timestamp = 0;
    std::optional<PayloadFormat> format;  // what its unit start looked like (the evidence)
    std::deque<Held> held;
    std::size_t held_bytes = 0;
    std::chrono::steady_clock::time_point last_arrival{};
  };
  /// A packet of the followed SSRC that does not fit its sequence or timestamps.
  struct Probation {
    bool used = false;
    std::uint16_t sequence = 0;
    std::uint32_t timestamp = 0;
    Held packet;
  };
  /// A new place in the followed stream's number space that two packets in sequence showed.
  /// The stream moves there only once its current place has been quiet for
  /// kQuietBeforeSwitch (an outage, a restart): a spoofed pair beside a live stream never
  /// moves it. Its packets wait here meanwhile (bounded), counted as suspect.
  struct PendingMove {
    bool active = false;
    std::uint16_t highest = 0;    // highest sequence number seen at the new place
    std::uint32_t timestamp = 0;  // timestamp of that packet
    std::deque<Held> held;        // in arrival order
    std::size_t bytes = 0;
  };

  void on_candidate(const RtpPacket& packet, PayloadLook look, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  void follow(std::size_t candidate);
  void close_followed();  // ends the followed stream's sequence space (an SSRC change, a restart)
  void follow_quiet_successor(std::chrono::steady_clock::time_point now);
  void on_followed(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  /// Starts a pending move with the confirming pair (the probation packet and this one).
  void begin_move(Held&& first, std::uint16_t first_sequence, const RtpPacket& packet, Bytes datagram,
                  std::chrono::steady_clock::time_point arrival);
  void hold_for_move(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  /// Moves the stream to the pending place when the current one has been quiet long enough.
  void settle_move(std::chrono::steady_clock::time_point now);
  void complete_move();
  void drop_move();
  void note_ssrc(const RtpPacket& packet, std::size_t size, PayloadLook look);
  void process(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival);
  void on_ordered(Bytes datagram, std::uint64_t extended_sequence, bool loss_before,
                  std::chrono::steady_clock::time_point arrival);
  void post_event(SessionEvent&& event) { if (on_event_) on_event_(event); }
  void make_payload();  // the payload depacketizer for format_
  void adapt_reorder_delay();
  void publish_counters();
  void on_unit(CodestreamUnit&& unit);
  void publish_rtcp();
  void note_for_rtcp(std::uint32_t timestamp, bool newest, std::chrono::steady_clock::time_point arrival);

  Sink sink_;
  ReorderConfig reorder_config_;
  std::function<void(const SessionEvent&)> on_event_;
  AudioSink on_audio_;
  std::optional<std::uint64_t> last_released_;
  std::atomic<bool> ended_{false};  // flushed at the stream's end (until a packet comes again)  // extended sequence of the last packet handed on
  std::optional<std::string> last_descriptor_;  // describe() of the last picture descriptor seen
  std::optional<PayloadFormat> format_;  // stated, or decided by the first followed stream
  bool format_stated_ = false;
  bool interlaced_rfc5371_ = false;  // RFC 5371 units of two codestreams are field pairs (tp 1, 2)
  // One depacketizer per payload format met (a detected format changes when a sender starts
  // again with another): each is made once and kept, so that what other threads read of
  // them (ts_snapshot) never goes away, and their counts add up.
  std::array<std::unique_ptr<PayloadDepacketizer>, 3> payloads_;
  PayloadDepacketizer* payload_ = nullptr;  // the current format's
  TsDepacketizer* ts_ = nullptr;  // the TS one once made (plain UDP TS bypasses RTP)
  RtpSequenceTracker sequence_;
  JitterEstimator jitter_;
  RtpReorderBuffer reorder_;
  std::optional<std::uint32_t> ssrc_;
  std::vector<Candidate> candidates_;
  std::size_t held_bytes_ = 0;           // bytes held by all candidates (bounded)
  std::chrono::steady_clock::time_point followed_last_arrival_{};
  std::uint32_t last_timestamp_ = 0;      // newest accepted timestamp of the followed stream
  std::vector<Probation> probation_;
  std::size_t probation_next_ = 0;
  PendingMove move_;
  std::chrono::steady_clock::time_point place_last_arrival_{};  // last packet that fit the stream's place
  std::chrono::microseconds late_floor_{0};  // reorder delay raised by packets that came late
  std::chrono::microseconds path_floor_{0};  // set_reorder_floor
  bool timing_sample_ = true;                // the datagram being handled is a jitter sample
  std::uint64_t late_seen_ = 0;
  std::chrono::steady_clock::time_point epoch_{};
  std::optional<std::uint32_t> last_unit_timestamp_;
  bool new_timeline_ = false;  // the next unit begins a new run or stream (CodestreamUnit::new_timeline)
  double frame_interval_ticks_ = 0;
  std::array<std::uint32_t, 8> recent_steps_{};  // the last timestamp steps between units (0: none yet)
  std::size_t recent_steps_next_ = 0;
  RateLimiter malformed_log_, candidate_log_, probation_log_, ssrc_change_log_;
  // Totals of the streams followed before the current one.
  std::uint64_t prior_received_ = 0, prior_lost_ = 0, prior_duplicates_ = 0, prior_out_of_window_ = 0;
  std::uint64_t prior_recovered_ = 0, prior_late_ = 0;
  std::uint64_t stream_start_complete_ = 0, stream_start_incomplete_ = 0;  // frame totals when it was followed

  // Totals readable from other threads.
  std::atomic<std::uint64_t> malformed_{0}, foreign_{0}, payload_bytes_{0}, suspect_{0}, wrong_format_{0};
  std::atomic<std::uint64_t> received_{0}, lost_{0}, duplicates_{0}, recovered_{0}, late_{0}, out_of_window_{0};
  std::atomic<std::uint64_t> complete_{0}, incomplete_{0}, resync_skipped_{0}, klv_malformed_{0};
  std::atomic<std::uint64_t> capped_{0}, offsets_rejected_{0}, descriptors_rejected_{0}, ssrc_changes_{0};
  std::atomic<std::uint64_t> merged_{0}, unusable_{0}, missing_{0};
  std::atomic<std::uint64_t> followed_datagrams_{0}, followed_bytes_{0};  // of the current followed SSRC
  RateLimiter unit_log_;
  std::atomic<double> jitter_ticks_{0}, frame_rate_{0}, reorder_delay_ms_{0};
  std::atomic<std::uint64_t> timeline_ticks_{0}, timelines_{0};  // stream_seconds (depacketizer thread writes)
  std::atomic<std::uint32_t> ssrc_value_{0};
  mutable std::mutex descriptor_mutex_;  // guards the members below
  std::optional<PictureDescriptor> descriptor_copy_;
  AudioCounters audio_copy_;

  // RTCP (depacketizer thread), and its copy for other threads.
  SenderTail tail_;
  std::optional<std::uint32_t> tail_ssrc_;     // the stream tail_ was calibrated on
  std::uint64_t tail_restarts_ = 0;            // sequence restarts when it was
  std::optional<std::uint32_t> newest_timestamp_;  // RTP timestamp of the highest sequence received
  // Highest extended sequence received per RTP timestamp, for the last frames: a report
  // relates only to packets of frames sampled before it (those sent after it may have been
  // read first). A ring of distinct timestamps.
  std::array<std::pair<std::uint32_t, std::uint64_t>, 16> recent_frames_{};  // (RTP timestamp, extended sequence)
  std::size_t recent_count_ = 0;
  std::pair<std::uint32_t, std::uint64_t> recent_stream_{};  // SSRC and sequence restarts the ring is of
  // Arrival time and extended sequence of the last packets (of the same stream as the ring
  // above): a report with an arrival time relates to those that arrived before it.
  std::array<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>, 1024> recent_arrivals_{};
  std::size_t arrivals_count_ = 0;
  RtcpSnapshot rtcp_;
  /// The most packets a report stamped `timestamp` may say were sent after the last one
  /// received: twice the stream's packets per tick over its recent frames, times the time
  /// from the newest packet to the report (at most a minute), plus 1024.
  std::uint64_t plausible_unseen(std::uint32_t timestamp) const;
  RateLimiter rtcp_log_;
  mutable std::mutex rtcp_mutex_;  // guards rtcp_copy_
  RtcpSnapshot rtcp_copy_;
  std::vector<SsrcStats> ssrcs_;
  std::uint64_t ssrcs_unlisted_ = 0;
  std::string format_copy_;
  std::uint64_t prior_received_seen_ = 0, prior_lost_seen_ = 0;  // copies of the depacketizer thread's,
  std::uint64_t stream_start_complete_seen_ = 0, stream_start_incomplete_seen_ = 0;  // taken at a switch

 public:
  static constexpr std::size_t kMaxListedSsrcs = 32;
};

}  // namespace j2k::depacketizer
