#include "sender/sdp.hpp"

#include <fmt/format.h>

namespace j2k::sender {

namespace {
bool is_multicast_v4(const std::string& address) {
  const auto dot = address.find('.');
  if (dot == std::string::npos) return false;
  const int first = std::atoi(address.substr(0, dot).c_str());
  return first >= 224 && first <= 239;
}
}  // namespace

std::string make_sdp(const SdpParams& p) {
  const bool multicast = is_multicast_v4(p.to.host);
  const std::string origin = !p.source.empty() ? p.source : !p.to.iface.empty() ? p.to.iface : std::string("127.0.0.1");
  std::string s;
  // RFC 8866 5: v, o, s, then c and t; lines end in CRLF.
  s += "v=0\r\n";
  s += fmt::format("o=- {} 1 IN IP4 {}\r\n", p.session_id, origin);
  s += "s=j2ksend\r\n";
  // IPv4 multicast connection addresses carry a TTL (RFC 8866 5.7).
  s += multicast ? fmt::format("c=IN IP4 {}/{}\r\n", p.to.host, p.to.ttl) : fmt::format("c=IN IP4 {}\r\n", p.to.host);
  s += "t=0 0\r\n";
  // TR-01: RTP/MP2T has the static payload type 33 (RFC 3551), named all the same.
  const int pt = p.ts ? 33 : p.payload_type;
  s += fmt::format("m=video {} RTP/AVP {}\r\n", p.to.port, pt);
  if (multicast && !p.source.empty())  // RFC 4570: only this sender (SSM)
    s += fmt::format("a=source-filter: incl IN IP4 {} {}\r\n", p.to.host, p.source);
  if (p.ts) {
    s += fmt::format("a=rtpmap:{} MP2T/90000\r\n", pt);
  } else if (p.rfc5371) {
    // RFC 5371 6.1: rate 90000, sampling required; width, height and interlace optional.
    const char* sampling = p.format.chroma_dx == 2 ? "YCbCr-4:2:2" : "YCbCr-4:4:4";
    s += fmt::format("a=rtpmap:{} jpeg2000/90000\r\n", p.payload_type);
    s += fmt::format("a=fmtp:{} sampling={}; width={}; height={}; interlace={}\r\n", p.payload_type, sampling,
                     p.format.width, p.format.height, p.interlaced ? 1 : 0);
  } else {
    // RFC 6597: MXF (SMPTE ST 336 KLV) in RTP, on the 90 kHz video clock.
    s += fmt::format("a=rtpmap:{} smpte336m/90000\r\n", p.payload_type);
  }
  s += p.fps_den == 1 ? fmt::format("a=framerate:{}\r\n", p.fps_num)
                      : fmt::format("a=framerate:{:.3f}\r\n", static_cast<double>(p.fps_num) / p.fps_den);
  return s;
}

}  // namespace j2k::sender
