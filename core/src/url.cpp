#include "core/url.hpp"

#include <arpa/inet.h>

#include <fstream>
#include <sstream>

#include "core/sdp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace j2k {

namespace {

constexpr const char* kExample = "expected e.g. rtp://239.1.1.1:5004?iface=127.0.0.1";

Error bad(const std::string& text, const std::string& why) {
  return make_error(ErrorKind::corrupt, fmt::format("invalid stream URL '{}': {} ({})", text, why, kExample));
}

bool is_ipv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

bool parse_int(const std::string& s, int min, int max, int& out) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max) return false;
  out = v;
  return true;
}

/// Edit distance (insertions, deletions, substitutions, transpositions of neighbours), for
/// "did you mean": a typed key is usually one or two keystrokes from the intended one.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// The query keys each scheme understands. Anything else is refused: a mistyped key
/// (`ifcae=`) silently ignored would join the wrong interface.
std::vector<std::string> known_keys(StreamUrl::Scheme scheme) {
  switch (scheme) {
    case StreamUrl::Scheme::rtp: return {"iface", "source", "format", "ttl", "bind", "fec", "fec_column", "fec_row"};
    case StreamUrl::Scheme::pcap: return {"port", "dst", "timing", "format", "loop", "fec", "fec_column", "fec_row"};
    case StreamUrl::Scheme::demo: return {};
  }
  return {};
}

std::string unknown_key_reason(const std::string& key, StreamUrl::Scheme scheme) {
  const auto keys = known_keys(scheme);
  std::string why = fmt::format("unknown parameter '{}'", key);
  const std::string* best = nullptr;
  std::size_t best_distance = 3;  // suggest only what is at most two edits away
  for (const auto& k : keys)
    if (const auto dist = edit_distance(key, k); dist < best_distance) {
      best_distance = dist;
      best = &k;
    }
  if (best) why += fmt::format(" — did you mean '{}'?", *best);
  if (keys.empty()) return why + " (this scheme takes none)";
  std::string list;
  for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
  return why + fmt::format(" (known: {})", list);
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

namespace {

/// What is wrong with a session description is about the file, not the URL's syntax: no
/// rtp:// example, but how to get a description that works.
Error bad_sdp(const std::string& file, const std::string& why) {
  return make_error(ErrorKind::corrupt,
                    fmt::format("session description '{}': {} (j2kplay and j2kprobe read RFC 5371, RFC 6597 or MP2T media, "
                                "as j2ksend --sdp FILE writes them)",
                                file, why));
}

/// sdp:FILE[?iface=ADDR]: the stream a session description names (RFC 8866).
Result<StreamUrl> stream_url_from_sdp(const std::string& text) {
  std::string rest = text.substr(4);
  if (rest.rfind("//", 0) == 0) rest = rest.substr(2);
  std::string iface;
  if (auto q = rest.find('?'); q != std::string::npos) {
    const std::string query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    if (query.rfind("iface=", 0) != 0 || query.find('&') != std::string::npos)
      return bad(text, "an sdp: URL takes only ?iface=ADDR (the rest is in the file)");
    iface = query.substr(6);
  }
  std::ifstream in(rest);
  if (!in) return bad_sdp(rest, "cannot be read (does the file exist?)");
  std::stringstream body;
  body << in.rdbuf();
  if (body.str().size() > (1u << 20)) return bad_sdp(rest, "larger than 1 MiB");
  auto sdp = parse_sdp(body.str());
  if (!sdp) return bad_sdp(rest, sdp.error().message);
  return to_stream_url(*sdp, iface);
}

}  // namespace

Result<StreamUrl> parse_stream_url(const std::string& text) {
  StreamUrl url;
  std::string rest;
  if (text.rfind("sdp:", 0) == 0) return stream_url_from_sdp(text);
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
    return bad(text, "unknown scheme (use rtp://, udp://, pcap:, sdp: or demo://)");
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
        // Twice, or empty (a script's unset variable: iface=$IFACE): said, never the last one
        // silently, nor the kernel's default interface.
        const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        if (value.empty()) return bad(text, fmt::format("'{}=' has no value", key));
        if (!url.query.emplace(key, value).second) return bad(text, fmt::format("'{}' is given twice", key));
      }
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }

  for (const auto& [key, value] : url.query) {
    const auto keys = known_keys(url.scheme);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) return bad(text, unknown_key_reason(key, url.scheme));
    if (key == "iface") url.iface = value;
    else if (key == "source") {
      if (!is_ipv4(value)) return bad(text, fmt::format("source '{}' is not an IPv4 address", value));
      url.source = value;
    }
    else if (key == "format") url.format = value;
    else if (key == "ttl") {
      if (!parse_int(value, 0, 255, url.ttl)) return bad(text, "ttl must be 0..255");
    } else if (key == "port" && url.scheme == StreamUrl::Scheme::pcap) {
      int port = 0;
      if (!parse_int(value, 1, 65535, port)) return bad(text, "port must be 1..65535");
      url.port = static_cast<std::uint16_t>(port);
    } else if (key == "timing" && value != "capture" && value != "fast") {
      return bad(text, fmt::format("timing '{}' is not capture or fast", value));
    } else if (key == "loop" && value != "1" && value != "0") {
      return bad(text, fmt::format("loop '{}' is not 1 (play the capture again at its end) or 0", value));
    } else if (key == "fec" && value != "1" && value != "0") {
      return bad(text, fmt::format("fec '{}' is not 1 (join the ST 2022-1 FEC ports) or 0", value));
    } else if (key == "fec_column" || key == "fec_row") {
      int port = 0;
      if (!parse_int(value, 1, 65535, port)) return bad(text, fmt::format("{} '{}' is not a port 1..65535", key, value));
    } else if ((key == "bind" || key == "dst") && !is_ipv4(value)) {
      return bad(text, fmt::format("{} '{}' is not an IPv4 address", key, value));
    }
  }
  if (url.format != "mxf" && url.format != "rfc5371" && url.format != "ts")
    return bad(text, fmt::format("format '{}' is not mxf, rfc5371 or ts", url.format));

  if (url.scheme == StreamUrl::Scheme::demo) return url;
  if (url.scheme == StreamUrl::Scheme::pcap) {
    if (authority.empty()) return bad(text, "missing capture file name");
    // Every UDP datagram of the capture as one stream would mix in its RTCP, FEC and other
    // streams (the sender's reports then go uncounted): the stream's port is named.
    if (url.port == 0)
      return bad(text, "a capture needs ?port=N, the stream's UDP destination port (a port the capture lacks makes "
                       "j2kprobe list those it holds)");
    url.host = authority;
    return url;
  }

  auto colon = authority.rfind(':');
  if (colon == std::string::npos) return bad(text, "missing :PORT");
  url.host = authority.substr(0, colon);
  if (url.host.size() >= 2 && url.host.front() == '[' && url.host.back() == ']')
    url.host = url.host.substr(1, url.host.size() - 2);
  if (url.host.empty()) url.host = "0.0.0.0";
  if (url.host == "localhost") url.host = "127.0.0.1";
  if (!is_ipv4(url.host))
    return bad(text, fmt::format("host '{}' is not an IPv4 address (IPv6 and host names are not supported)", url.host));
  int port = 0;
  if (!parse_int(authority.substr(colon + 1), 1, 65535, port)) return bad(text, "port must be 1..65535");
  url.port = static_cast<std::uint16_t>(port);
  return url;
}

Status check_second_path(const StreamUrl& first, const StreamUrl& second) {
  if (first.scheme != StreamUrl::Scheme::rtp || second.scheme != StreamUrl::Scheme::rtp)
    return make_error(ErrorKind::corrupt,
                      "a second path (SMPTE ST 2022-7) is for live streams: give two rtp:// URLs; a capture is "
                      "replayed one file at a time, and the demo has one path");
  return {};
}

}  // namespace j2k
