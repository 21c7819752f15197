#pragma once
// Paced RTP sender of MXF-wrapped JPEG 2000 (RFC 6597 framing): header metadata every
// second, one content package (system item + picture element) per frame, packets spread
// evenly over the frame period.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/url.hpp"
#include "sender/encoded_loop.hpp"
#include "sender/source.hpp"

namespace j2k::sender {

struct SendConfig {
  StreamUrl to;
  int fps_num = 50;
  int fps_den = 1;
  long long frames = -1;       ///< frames to send; −1 = forever (until stopped)
  std::size_t max_payload = 1400;
  std::uint32_t ssrc = 0;      ///< 0 = random
  double spread = 0.9;         ///< fraction of the frame period the packets are spread over
};

struct SendTotals {
  std::uint64_t frames = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t send_errors = 0;
  std::uint64_t late_frames = 0;  ///< frames whose packets went out later than their slot
};

class Sender {
 public:
  Sender(SendConfig config, PictureFormat format, std::vector<EncodedFrame> frames);
  /// Sends until the frame count is reached or `stop` becomes true. Errors only for set-up.
  Result<SendTotals> run(const std::atomic<bool>& stop);
  /// The checksum of every frame sent, in order (for lossless end-to-end checks).
  const std::vector<std::uint64_t>& sent_checksums() const noexcept { return sent_checksums_; }

 private:
  SendConfig config_;
  PictureFormat format_;
  std::vector<EncodedFrame> frames_;
  std::vector<std::uint64_t> sent_checksums_;
};

}  // namespace j2k::sender
