#pragma once
// The payload formats a session can carry, behind one interface: packets in sequence
// order go in (with a flag for loss before them), access units come out.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "depacketizer/audio.hpp"
#include "depacketizer/codestream_unit.hpp"
#include "depacketizer/rtp.hpp"

namespace j2k::depacketizer {

struct PayloadCounters {
  std::uint64_t units_complete = 0;
  std::uint64_t units_incomplete = 0;
  std::uint64_t resync_skipped_packets = 0;  ///< payloads dropped while looking for a start
  std::uint64_t malformed = 0;               ///< payload headers or KLVs that make no sense
  std::uint64_t units_capped = 0;            ///< units cut short at the byte or time cap per unit
  std::uint64_t offsets_rejected = 0;        ///< RFC 5371 fragments placed implausibly far ahead
  std::uint64_t descriptors_rejected = 0;    ///< picture descriptors with implausible values
};

class PayloadDepacketizer {
 public:
  using Sink = std::function<void(CodestreamUnit&&)>;
  virtual ~PayloadDepacketizer() = default;
  virtual void push(const RtpPacket& packet, bool loss_before, std::chrono::steady_clock::time_point arrival) = 0;
  virtual void flush() = 0;
  virtual PayloadCounters payload_counters() const = 0;
  virtual const std::optional<PictureDescriptor>& descriptor() const = 0;
  /// The sound that comes with the pictures (MXF sound elements, SMPTE ST 302M PES), handed
  /// on on the same thread as the units, stamped with the 90 kHz time of its first sample.
  /// Formats that carry no sound ignore it.
  virtual void set_audio_sink(AudioSink sink) { (void)sink; }
  /// Same thread as push().
  virtual AudioCounters audio_counters() const { return {}; }
};

enum class PayloadFormat { mxf, rfc5371, ts };

/// "mxf", "rfc5371" or "ts" (MPEG-2 TS, VSF TR-01).
std::optional<PayloadFormat> parse_payload_format(const std::string& name);

std::unique_ptr<PayloadDepacketizer> make_depacketizer(PayloadFormat format, PayloadDepacketizer::Sink sink);

}  // namespace j2k::depacketizer
