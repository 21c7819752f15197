#pragma once
// Paced RTP sender of MXF-wrapped JPEG 2000 (RFC 6597 framing): header metadata every
// second, one content package (system item + picture element) per frame, packets spread
// evenly over the frame period.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/url.hpp"
#include "sender/encoded_loop.hpp"
#include "sender/sound.hpp"
#include "sender/source.hpp"

namespace j2k::sender {

/// Network impairments applied by the sender, reproducible with a seed. The first and the
/// last frame are never impaired, so that receiver counters can be compared exactly.
struct Impairments {
  double loss = 0;         ///< probability that a packet starts a loss event
  int burst = 1;           ///< packets lost per loss event
  int reorder_depth = 0;   ///< a reordered packet is sent after this many later packets
  double reorder = 0.01;   ///< probability that a packet is reordered (when reorder_depth > 0)
  double duplicate = 0;    ///< probability that a packet is sent twice
  double jitter_ms = 0;    ///< uniform extra delay per packet (may reorder as a side effect)
  double corrupt = 0;      ///< probability that a packet gets one byte after its RTP header changed
  std::uint64_t end_loss = 0;  ///< the last N packets of the stream are dropped (a burst at the very end)
  std::uint32_t seed = 1;

  /// True when random impairments apply (end_loss is separate: it hits only the end).
  bool any() const noexcept { return loss > 0 || reorder_depth > 0 || duplicate > 0 || jitter_ms > 0 || corrupt > 0; }
};

struct SendConfig {
  StreamUrl to;
  int fps_num = 50;
  int fps_den = 1;
  long long frames = -1;       ///< frames to send; −1 = forever (until stopped)
  std::size_t max_payload = 1400;
  std::uint32_t ssrc = 0;      ///< 0 = random
  double spread = 0.9;         ///< fraction of the frame period the packets are spread over
  Impairments impair;
  bool rfc5371 = false;        ///< RFC 5371 payload instead of MXF KLVs (RFC 6597)
  /// MXF as a plain byte stream: a frame's KLVs concatenated and cut at the MTU with no regard
  /// for KLV boundaries (several KLVs per packet, units starting mid-packet; M on the frame's
  /// last packet) — how loose senders behave.
  bool mxf_stream = false;
  int interlace = 0;           ///< 0 progressive, 1 I1 (a KLV per field), 2 I2 (fields in one KLV)
  /// Header KLVs to repeat every second instead of our own (from --mxf FILE).
  std::vector<std::vector<std::uint8_t>> mxf_header;
  /// RTCP sender reports on port + 1 (after the first frame, then about once a second) and
  /// SR + BYE after the last frame (RFC 3550 6.4.1, 6.6).
  bool rtcp = true;
  /// VSF TR-01: JPEG 2000 in an MPEG-2 TS (PAT, PMT, elsm, PCR) in RTP/MP2T (payload type 33).
  bool ts = false;
  /// SMPTE ST 2022-1 FEC (--fec LxD): L columns × D rows; column FEC to port+2, row FEC to
  /// port+4 of `to` (D = 0: row FEC only). 0 = off. FEC is computed before impairments.
  int fec_columns = 0, fec_rows = 0;
  /// SMPTE ST 2022-7: the same packets also to this second path, with their own loss.
  std::optional<StreamUrl> to2;
  double loss2 = 0;  ///< probability that a packet starts a loss event on path 2
  int burst2 = 1;    ///< packets lost per loss event on path 2
  /// Sound with the pictures: MXF sound elements (a WAVE descriptor in our header) or ST 302M
  /// PES on the TS's audio PID, due with the frame they come with. `file`: the frames' own
  /// (their KLVs for MXF, EncodedFrame::sound for TS).
  SoundSpec sound;
  /// Keep every frame's record (Sender::sent_frames, for --manifest); off, a sender that
  /// loops for days keeps nothing per frame.
  bool record_frames = false;
  /// The first frame's RTP timestamp; unset: random (RFC 3550 5.1).
  std::optional<std::uint32_t> timestamp_base;
};

struct SendTotals {
  std::uint64_t frames = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t send_errors = 0;
  std::uint64_t late_frames = 0;  ///< frames whose packets went out later than their slot
  std::uint64_t dropped = 0;      ///< impairments: packets not sent
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;    ///< packets sent after at least one later packet
  std::uint64_t corrupted = 0;
  std::uint64_t damaged_frames = 0;  ///< frames with at least one dropped packet
  std::uint64_t rtcp_reports = 0;    ///< sender reports sent (the last one with BYE)
  std::uint64_t dropped2 = 0;        ///< packets not sent on path 2 (2022-7)
  std::uint64_t dropped_both = 0;    ///< packets dropped on both paths (no merge can restore them)
  std::uint64_t fec_packets = 0;     ///< 2022-1 column + row packets sent
  std::uint64_t sound_samples = 0;   ///< sample frames of sound sent (per channel)
};

/// What was sent for one frame: its RTP timestamp and the checksum of its source picture.
struct SentFrame {
  std::uint32_t rtp_timestamp = 0;
  std::uint64_t checksum = 0;
  bool damaged = false;             ///< a packet of it was dropped or corrupted on purpose
  std::uint16_t first_sequence = 0; ///< sequence number of its first packet
  std::uint32_t packets = 0;        ///< packets made for it (including header metadata)
  std::uint32_t dropped = 0;        ///< of those, not sent
  std::uint32_t corrupted = 0;      ///< of those, sent with one byte changed
  std::uint32_t duplicated = 0;
  std::uint32_t reordered = 0;
  std::uint32_t dropped_path2 = 0;  ///< not sent on path 2 (2022-7)
  std::uint32_t dropped_both = 0;   ///< sent on neither path: what a merging receiver loses
};

/// One impaired packet: its RTP sequence number, and for a corrupted one the datagram offset
/// of the byte changed.
struct PacketEvent {
  std::uint16_t sequence = 0;
  std::uint32_t offset = 0;
};

/// Every impaired packet in sending order, so a receiver's event log can be checked against it.
struct ImpairmentLog {
  static constexpr std::size_t kMaxPerList = 1u << 20;  // bounded; `truncated` says when hit
  std::vector<PacketEvent> dropped, duplicated, reordered, corrupted;
  std::vector<PacketEvent> dropped_path2;  ///< 2022-7: not sent on path 2
  bool truncated = false;
};

class Sender {
 public:
  Sender(SendConfig config, PictureFormat format, std::vector<EncodedFrame> frames);
  /// Sends until the frame count is reached or `stop` becomes true. Errors only for set-up.
  Result<SendTotals> run(const std::atomic<bool>& stop);
  /// Every frame sent, in order (for lossless end-to-end checks), with SendConfig::record_frames:
  /// at most kMaxRecordedFrames (5.8 hours at 50 fps; frames_truncated() says when more were sent).
  static constexpr std::size_t kMaxRecordedFrames = std::size_t{1} << 20;
  const std::vector<SentFrame>& sent_frames() const noexcept { return sent_frames_; }
  bool frames_truncated() const noexcept { return frames_truncated_; }
  const ImpairmentLog& impairment_log() const noexcept { return events_; }

 private:
  SendConfig config_;
  PictureFormat format_;
  std::vector<EncodedFrame> frames_;
  std::vector<SentFrame> sent_frames_;
  bool frames_truncated_ = false;
  ImpairmentLog events_;
};

}  // namespace j2k::sender
