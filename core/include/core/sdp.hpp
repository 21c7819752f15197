#pragma once
// Session descriptions (RFC 8866) for the streams we receive and send: RFC 5371 JPEG 2000
// (`jpeg2000/90000` with its fmtp), MXF KLVs in RTP (RFC 6597, `smpte336m`), and TR-01
// transport streams (SMPTE ST 2022-2, static payload type 33 `MP2T/90000`), with the
// connection address, port, TTL and an RFC 4570 source filter for SSM.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/url.hpp"

namespace j2k {

struct SdpStream {
  std::string session_name = "j2kplay stream";
  std::string address;       ///< connection address (unicast or multicast group)
  std::uint16_t port = 0;
  int ttl = 0;               ///< multicast TTL from "c=IN IP4 GROUP/TTL" (0: none given)
  std::string source;        ///< SSM source from a=source-filter (empty: any)
  int payload_type = 96;
  std::string format;        ///< "rfc5371", "mxf" or "ts" (our payload format names)
  std::map<std::string, std::string> fmtp;  ///< sampling, width, height, depth, interlace…
};

/// Reads the first media description we can receive; errors say which line is wrong.
Result<SdpStream> parse_sdp(std::string_view text);
/// Writes a description GStreamer (sdpdemux) and FFmpeg (ffplay x.sdp) accept.
std::string write_sdp(const SdpStream& stream, const std::string& origin_address);
/// The stream URL an SDP file describes (`iface` chooses the local interface, as in URLs).
StreamUrl to_stream_url(const SdpStream& stream, const std::string& iface = {});

}  // namespace j2k
