#pragma once
// MXF KLVs carried in RTP (RFC 6597) → access units.
//
// Payloads of consecutive packets concatenate to the MXF byte stream; one KLV may span
// many packets (M marks the packet that ends a KLV unit) and loose senders put several
// KLVs in one packet. After a loss the stream resynchronises at the next payload that
// begins with a known key. A content package (all packets with one RTP timestamp) yields
// one CodestreamUnit when its picture elements are all in, or when the timestamp moves on.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/log.hpp"
#include "depacketizer/codestream_unit.hpp"
#include "depacketizer/mxf.hpp"
#include "depacketizer/payload.hpp"
#include "depacketizer/rtp.hpp"

namespace j2k::depacketizer {

/// The counters every payload format keeps (resync_skipped_packets: payloads dropped while
/// looking for a key; malformed: bad key/length, over-long KLV; units_capped: the pending unit
/// passed the byte or time cap; descriptors_rejected: implausible values, also counted in
/// malformed), and the MXF ones.
struct MxfDepacketizerCounters : PayloadCounters {
  std::uint64_t klv_units = 0;
  std::uint64_t picture_elements = 0;
  std::uint64_t damaged_elements = 0;  ///< lost packets inside a KLV
  std::uint64_t descriptors = 0;
  /// KLVs whose declared length outran their packets: cut at the next key after a marker
  /// bit (also counted as malformed) or at the time cap (also counted as units_capped).
  std::uint64_t klv_overruns = 0;
};

/// Bounds on what one content package may hold before it is handed on.
struct MxfUnitLimits {
  std::size_t max_klv_bytes = 256u << 20;   ///< one KLV (a larger declared length is malformed)
  /// All picture elements of one timestamp (a picture element declared longer is malformed).
  std::size_t max_unit_bytes = 128u << 20;
  /// Longest a unit may stay pending (arrival of its first packet to now): a content package
  /// is one frame period of packets, so a unit still open after this is fed by a stuck or
  /// hostile sender (e.g. a key announcing 255 elements, all with one timestamp).
  /// The same bound holds for one KLV still arriving (from the packet that began it) once
  /// packets of later timestamps are taken into it.
  std::chrono::milliseconds max_unit_age{1000};
};

class MxfRtpDepacketizer final : public PayloadDepacketizer {
 public:

  explicit MxfRtpDepacketizer(Sink sink, MxfUnitLimits limits = {});

  /// Feeds one packet of the stream in sequence order. `loss_before` is true when packets
  /// were lost between the previous packet and this one.
  void push(const RtpPacket& packet, bool loss_before, std::chrono::steady_clock::time_point arrival) override;

  /// Emits whatever is pending (end of stream).
  void flush() override;

  const MxfDepacketizerCounters& counters() const noexcept { return counters_; }
  const std::optional<PictureDescriptor>& descriptor() const override { return descriptor_; }
  PayloadCounters payload_counters() const override { return counters_; }
  void set_audio_sink(AudioSink sink) override { audio_sink_ = std::move(sink); }
  AudioCounters audio_counters() const override { return audio_counters_; }
  /// Bytes held by the unit being assembled (for tests and memory accounting).
  std::size_t pending_bytes() const noexcept { return pending_ ? pending_->total_bytes() : 0; }

 private:
  void lose_sync();
  /// Parses the complete KLVs held; true when it consumed any.
  bool consume_buffer();
  static bool begins_with_known_key(Bytes payload);
  void handle_klv(const KlvHeader& header, Bytes value);
  void begin_unit_if_needed(std::uint32_t timestamp, std::chrono::steady_clock::time_point arrival);
  void emit_pending();
  bool over_cap(std::size_t adding) const;
  void cap_pending();
  void on_sound_descriptor(Bytes value);
  void on_sound_element(const KlvHeader& header, Bytes value);

  Sink sink_;
  MxfUnitLimits limits_;
  MxfDepacketizerCounters counters_;
  std::optional<PictureDescriptor> descriptor_;

  std::vector<std::uint8_t> buffer_;   // MXF bytes not yet consumed (at most one KLV + one packet)
  bool synced_ = false;
  std::optional<KlvHeader> partial_;   // header of the KLV being assembled, when known
  std::chrono::steady_clock::time_point klv_since_{};  // arrival of the packet that began it
  std::uint32_t klv_timestamp_ = 0;                     // and its RTP timestamp
  bool previous_marker_ = false;       // the marker bit of the last packet pushed

  std::optional<CodestreamUnit> pending_;
  std::uint32_t current_timestamp_ = 0;
  bool have_timestamp_ = false;
  bool emitted_current_ = false;      // a unit was emitted for current_timestamp_
  std::chrono::steady_clock::time_point current_arrival_{};
  std::uint64_t next_index_ = 0;
  int last_element_count_ = 1;       // cc of the last picture element seen
  bool capped_current_ = false;      // current_timestamp_'s unit hit a cap: drop its other elements
  std::string time_code_;             // of the last system item, and the timestamp it came with
  std::optional<std::uint32_t> time_code_timestamp_;
  RateLimiter cap_log_, descriptor_log_;

  // Sound (mxf_rtp_sound.cpp): one track is followed, the first whose element arrives; its
  // format is that of the first sound descriptor after the last partition pack.
  static constexpr std::size_t kMaxSoundDescriptors = 16;
  /// One second of the largest sound we play (16 channels of 32-bit containers at 192 kHz):
  /// a longer sound element is malformed, refused before it is buffered.
  static constexpr std::uint64_t kMaxSoundElementBytes = 192000ull * 16 * 4;
  AudioSink audio_sink_;
  AudioCounters audio_counters_;
  std::vector<std::optional<AudioFormat>> sound_formats_;  // per descriptor since the last partition pack
  std::optional<AudioFormat> sound_format_;                 // of the followed track
  std::optional<int> sound_track_;                          // element number followed
  std::optional<AudioFormat> last_block_format_;
  AudioSequenceCheck sound_sequence_;
  RateLimiter sound_log_;
};

}  // namespace j2k::depacketizer
