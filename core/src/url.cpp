#include "core/url.hpp"

#include <fmt/format.h>

#include <charconv>

namespace j2k {

namespace {

constexpr const char* kExample = "expected e.g. rtp://239.1.1.1:5004?iface=127.0.0.1";

Error bad(const std::string& text, const std::string& why) {
  return make_error(ErrorKind::corrupt, fmt::format("invalid stream URL '{}': {} ({})", text, why, kExample));
}

bool parse_int(const std::string& s, int min, int max, int& out) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return false;
  out = v;
  return true;
}

}  // namespace

std::string StreamUrl::describe() const {
  switch (scheme) {
    case Scheme::demo: return "built-in demo stream";
    case Scheme::pcap: return fmt::format("capture {} port {}", host, port);
    case Scheme::rtp: break;
  }
  std::string s = fmt::format("{}:{}", host, port);
  if (!source.empty()) s += fmt::format(" from {}", source);
  if (!iface.empty()) s += fmt::format(" via {}", iface);
  return s;
}

Result<StreamUrl> parse_stream_url(const std::string& text) {
  StreamUrl url;
  std::string rest;
  if (text.rfind("demo://", 0) == 0 || text == "demo") {
    url.scheme = StreamUrl::Scheme::demo;
    rest = text == "demo" ? "" : text.substr(7);
  } else if (text.rfind("rtp://", 0) == 0) {
    rest = text.substr(6);
  } else if (text.rfind("udp://", 0) == 0) {
    rest = text.substr(6);
  } else if (text.rfind("pcap:", 0) == 0) {
    url.scheme = StreamUrl::Scheme::pcap;
    rest = text.substr(5);
    if (rest.rfind("//", 0) == 0) rest = rest.substr(2);
  } else {
    return bad(text, "unknown scheme (use rtp://, udp://, pcap: or demo://)");
  }

  std::string authority = rest;
  if (auto q = rest.find('?'); q != std::string::npos) {
    authority = rest.substr(0, q);
    std::string query = rest.substr(q + 1);
    std::size_t start = 0;
    while (start <= query.size()) {
      std::size_t amp = query.find('&', start);
      std::string item = query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      if (!item.empty()) {
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0) return bad(text, fmt::format("query item '{}' is not key=value", item));
        url.query[item.substr(0, eq)] = item.substr(eq + 1);
      }
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }

  for (const auto& [key, value] : url.query) {
    if (key == "iface") url.iface = value;
    else if (key == "source") url.source = value;
    else if (key == "format") url.format = value;
    else if (key == "ttl") {
      if (!parse_int(value, 0, 255, url.ttl)) return bad(text, "ttl must be 0..255");
    } else if (key == "port" && url.scheme == StreamUrl::Scheme::pcap) {
      int port = 0;
      if (!parse_int(value, 1, 65535, port)) return bad(text, "port must be 1..65535");
      url.port = static_cast<std::uint16_t>(port);
    }
  }
  if (url.format != "mxf" && url.format != "rfc5371" && url.format != "ts")
    return bad(text, fmt::format("format '{}' is not mxf, rfc5371 or ts", url.format));

  if (url.scheme == StreamUrl::Scheme::demo) return url;
  if (url.scheme == StreamUrl::Scheme::pcap) {
    if (authority.empty()) return bad(text, "missing capture file name");
    url.host = authority;
    return url;
  }

  auto colon = authority.rfind(':');
  if (colon == std::string::npos) return bad(text, "missing :PORT");
  url.host = authority.substr(0, colon);
  if (url.host.size() >= 2 && url.host.front() == '[' && url.host.back() == ']')
    url.host = url.host.substr(1, url.host.size() - 2);
  if (url.host.empty()) url.host = "0.0.0.0";
  int port = 0;
  if (!parse_int(authority.substr(colon + 1), 1, 65535, port)) return bad(text, "port must be 1..65535");
  url.port = static_cast<std::uint16_t>(port);
  return url;
}

}  // namespace j2k
