#include "core/sdp.hpp"

#include <cctype>
#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace j2k {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

bool to_int(std::string_view s, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

Error bad(int line, std::string_view text, const std::string& why) {
  return make_error(ErrorKind::corrupt, fmt::format("SDP line {} '{}': {}", line, text, why));
}

/// "IN IP4 239.1.1.1/32" -> address and TTL.
bool parse_connection(std::string_view value, std::string& address, int& ttl) {
  const auto parts = split(value, ' ');
  if (parts.size() != 3 || parts[0] != "IN" || parts[1] != "IP4") return false;
  const auto slash = split(parts[2], '/');
  address = std::string(slash[0]);
  ttl = 0;
  if (slash.size() >= 2 && !to_int(slash[1], ttl)) return false;
  return !address.empty();
}

std::string format_of(std::string_view encoding) {
  std::string e;
  for (char c : encoding) e += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (e == "jpeg2000") return "rfc5371";
  if (e == "smpte336m") return "mxf";
  if (e == "mp2t") return "ts";
  return {};
}

}  // namespace

Result<SdpStream> parse_sdp(std::string_view text) {
  SdpStream s;
  std::string session_address;
  int session_ttl = 0;
  bool in_media = false, media_found = false, media_usable = false;
  std::map<int, std::string> encodings;  // payload type -> encoding name
  std::string fmtp_line;
  std::vector<int> media_types;
  int line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    if (line.size() < 2 || line[1] != '=') return bad(line_no, line, "not TYPE=VALUE");
    const char type = line[0];
    const std::string_view value = line.substr(2);
    if (type == 'm') {
      if (media_usable) break;  // the first usable media description wins
      in_media = true;
      media_found = true;
      const auto parts = split(value, ' ');
      if (parts.size() < 4) return bad(line_no, line, "needs MEDIA PORT PROTO FORMAT");
      int port = 0;
      if (!to_int(split(parts[1], '/')[0], port) || port < 1 || port > 65535)
        return bad(line_no, line, "port must be 1..65535");
      if (parts[2] != "RTP/AVP" && parts[2] != "RTP/AVPF" && parts[2] != "udp")
        return bad(line_no, line, "only RTP/AVP (or udp for raw TS) can be received");
      s.port = static_cast<std::uint16_t>(port);
      media_types.clear();
      for (std::size_t i = 3; i < parts.size(); ++i) {
        int pt = 0;
        if (to_int(parts[i], pt)) media_types.push_back(pt);
      }
      encodings.clear();
      fmtp_line.clear();
      if (!media_types.empty() && media_types[0] == 33) encodings[33] = "MP2T";  // static type
      media_usable = !media_types.empty();
      s.address.clear();
      s.ttl = 0;
    } else if (type == 'c') {
      std::string address;
      int ttl = 0;
      if (!parse_connection(value, address, ttl)) return bad(line_no, line, "expected c=IN IP4 ADDRESS[/TTL]");
      if (in_media) { s.address = address; s.ttl = ttl; }
      else { session_address = address; session_ttl = ttl; }
    } else if (type == 's' && !in_media) {
      s.session_name = std::string(value);
    } else if (type == 'a' && in_media) {
      if (value.rfind("rtpmap:", 0) == 0) {
        const auto rest = value.substr(7);
        const auto space = rest.find(' ');
        int pt = 0;
        if (space == std::string_view::npos || !to_int(rest.substr(0, space), pt))
          return bad(line_no, line, "expected a=rtpmap:PT NAME/CLOCK");
        encodings[pt] = std::string(split(trim(rest.substr(space + 1)), '/')[0]);
      } else if (value.rfind("fmtp:", 0) == 0) {
        fmtp_line = std::string(value.substr(5));
      } else if (value.rfind("source-filter:", 0) == 0) {
        // RFC 4570: a=source-filter: incl IN IP4 DEST SRC...
        const auto parts = split(trim(value.substr(14)), ' ');
        if (parts.size() >= 5 && parts[0] == "incl") s.source = std::string(parts[4]);
      }
    }
  }
  if (!media_found) return make_error(ErrorKind::corrupt, "SDP has no media description (m=)");
  s.payload_type = media_types.empty() ? 96 : media_types[0];
  const auto enc = encodings.find(s.payload_type);
  if (enc == encodings.end())
    return make_error(ErrorKind::unsupported, fmt::format("SDP payload type {} has no a=rtpmap", s.payload_type));
  s.format = format_of(enc->second);
  if (s.format.empty())
    return make_error(ErrorKind::unsupported,
                      fmt::format("SDP encoding '{}' is not jpeg2000 (RFC 5371), smpte336m (MXF) or MP2T (TR-01)", enc->second));
  if (s.address.empty()) { s.address = session_address; s.ttl = session_ttl; }
  if (s.address.empty()) return make_error(ErrorKind::corrupt, "SDP has no connection address (c=)");
  // fmtp: "96 sampling=YCbCr-4:2:2; width=1920; height=1080; interlace"
  if (!fmtp_line.empty()) {
    const auto space = fmtp_line.find(' ');
    for (auto item : split(space == std::string::npos ? std::string_view{} : std::string_view(fmtp_line).substr(space + 1), ';')) {
      item = trim(item);
      if (item.empty()) continue;
      const auto eq = item.find('=');
      s.fmtp[std::string(trim(item.substr(0, eq)))] = eq == std::string_view::npos ? "" : std::string(trim(item.substr(eq + 1)));
    }
  }
  return s;
}

std::string write_sdp(const SdpStream& s, const std::string& origin_address) {
  const bool multicast = [&] {
    int first = 0;
    const auto dot = s.address.find('.');
    return to_int(std::string_view(s.address).substr(0, dot), first) && first >= 224 && first <= 239;
  }();
  std::string out;
  out += "v=0\r\n";
  out += fmt::format("o=- 0 0 IN IP4 {}\r\n", origin_address.empty() ? "127.0.0.1" : origin_address);
  out += fmt::format("s={}\r\n", s.session_name);
  out += "t=0 0\r\n";
  const bool ts = s.format == "ts";
  const int pt = ts ? 33 : s.payload_type;
  out += fmt::format("m={} {} RTP/AVP {}\r\n", s.format == "mxf" ? "application" : "video", s.port, pt);
  out += multicast ? fmt::format("c=IN IP4 {}/{}\r\n", s.address, s.ttl > 0 ? s.ttl : 1)
                   : fmt::format("c=IN IP4 {}\r\n", s.address);
  if (!s.source.empty()) out += fmt::format("a=source-filter: incl IN IP4 {} {}\r\n", s.address, s.source);
  if (ts) out += "a=rtpmap:33 MP2T/90000\r\n";
  else if (s.format == "mxf") out += fmt::format("a=rtpmap:{} smpte336m/90000\r\n", pt);
  else out += fmt::format("a=rtpmap:{} jpeg2000/90000\r\n", pt);
  if (!s.fmtp.empty()) {
    std::string params;
    for (const auto& [k, v] : s.fmtp) {
      if (!params.empty()) params += "; ";
      params += v.empty() ? k : k + "=" + v;
    }
    out += fmt::format("a=fmtp:{} {}\r\n", pt, params);
  }
  out += "a=recvonly\r\n";
  return out;
}

StreamUrl to_stream_url(const SdpStream& s, const std::string& iface) {
  StreamUrl url;
  url.scheme = StreamUrl::Scheme::rtp;
  url.host = s.address;
  url.port = s.port;
  url.source = s.source;
  url.iface = iface;
  url.format = s.format;
  if (s.ttl > 0) url.ttl = s.ttl;
  url.query["format"] = s.format;
  if (!iface.empty()) url.query["iface"] = iface;
  if (!s.source.empty()) url.query["source"] = s.source;
  return url;
}

}  // namespace j2k
