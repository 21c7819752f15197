#pragma once
// Stream addresses as users type them:
//   rtp://239.1.1.1:5004?iface=192.168.1.10&source=10.0.0.5&format=mxf
//   udp://0.0.0.0:5004           (same as rtp://, the payload is RTP either way)
//   pcap:capture.pcapng?port=5004
//   demo://                      (built-in sender on loopback)
#include <cstdint>
#include <map>
#include <string>

#include "core/result.hpp"

namespace j2k {

struct StreamUrl {
  enum class Scheme { rtp, pcap, demo };
  Scheme scheme = Scheme::rtp;
  std::string host;       ///< group or unicast address (rtp), file path (pcap)
  std::uint16_t port = 0;
  std::string iface;      ///< local interface address for multicast (empty: any)
  std::string source;     ///< source-specific multicast sender (empty: any source)
  std::string format = "mxf";
  int ttl = 1;
  std::map<std::string, std::string> query;  ///< every query parameter, including unknown ones

  /// "239.1.1.1:5004 via 127.0.0.1" for messages.
  std::string describe() const;
};

/// Parses a URL; the error message says what is wrong and shows a valid example.
Result<StreamUrl> parse_stream_url(const std::string& text);

/// The second path of an ST 2022-7 link: both URLs live network ones (a capture is replayed
/// one file at a time, the demo has one path). An error says what to do instead.
Status check_second_path(const StreamUrl& first, const StreamUrl& second);

}  // namespace j2k
