#pragma once
// Cuts data units (KLVs) into RTP packets (RFC 6597 framing: payloads concatenate,
// M is set on the packet that ends a unit). Used by the test sender.
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"

namespace j2k::packetizer {

class RtpPacketizer {
 public:
  RtpPacketizer(std::uint32_t ssrc, std::uint8_t payload_type, std::uint16_t first_sequence,
                std::size_t max_payload = 1400)
      : ssrc_(ssrc), payload_type_(payload_type), sequence_(first_sequence), max_payload_(max_payload) {}

  /// Appends the packets of one unit to `out`; all carry `timestamp`.
  void packetize(Bytes unit, std::uint32_t timestamp, std::vector<std::vector<std::uint8_t>>& out);
  std::uint16_t next_sequence() const noexcept { return sequence_; }

 private:
  std::uint32_t ssrc_;
  std::uint8_t payload_type_;
  std::uint16_t sequence_;
  std::size_t max_payload_;
};

}  // namespace j2k::packetizer
