#pragma once
// Cuts J2K codestreams into RFC 5371 packets (the sender side of rfc5371.hpp).
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::packetizer {

/// Offset of the first SOT marker (end of the main header), walking marker segments from
/// SOC; an error when the segments do not chain.
Result<std::size_t> main_header_length(Bytes codestream);

class Rfc5371Packetizer {
 public:
  Rfc5371Packetizer(std::uint32_t ssrc, std::uint8_t payload_type, std::uint16_t first_sequence,
                    std::size_t max_payload = 1400)
      : ssrc_(ssrc), payload_type_(payload_type), sequence_(first_sequence), max_payload_(max_payload) {}

  /// Appends the packets of one codestream; `tp` 0 progressive, 1/2 field; M on its last packet.
  Status packetize(Bytes codestream, std::uint32_t timestamp, int tp, std::vector<std::vector<std::uint8_t>>& out);

 private:
  std::uint32_t ssrc_;
  std::uint8_t payload_type_;
  std::uint16_t sequence_;
  std::size_t max_payload_;
};

}  // namespace j2k::packetizer
