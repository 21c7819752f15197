#pragma once
// The session description of what j2ksend sends (RFC 8866), so that other receivers
// (GStreamer's sdpdemux, FFmpeg) need no hand-written caps: RFC 5371 `jpeg2000/90000` with
// its fmtp (sampling, width, height, interlace), RFC 6597 `smpte336m/90000` for MXF, or
// `MP2T/90000` on payload type 33 for TR-01 transport streams; a
// source filter (RFC 4570) when the sender's address is fixed, for source-specific multicast.
#include <cstdint>
#include <string>

#include "core/url.hpp"
#include "sender/source.hpp"

namespace j2k::sender {

struct SdpParams {
  StreamUrl to;                  ///< destination (group or unicast address, port, ttl)
  std::string source;            ///< the sender's own address ("" unknown: no source filter)
  bool rfc5371 = false;          ///< payload format: RFC 5371 instead of MXF (RFC 6597)
  bool ts = false;               ///< VSF TR-01: MPEG-2 TS in RTP (RFC 2250, static payload type 33)
  PictureFormat format;
  bool interlaced = false;
  int fps_num = 50, fps_den = 1;
  std::uint8_t payload_type = 96;
  std::uint64_t session_id = 0;  ///< o= session id (e.g. the NTP time)
};

std::string make_sdp(const SdpParams& params);

}  // namespace j2k::sender
