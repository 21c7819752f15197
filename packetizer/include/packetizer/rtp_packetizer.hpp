#pragma once
// Cuts data units (KLVs) into RTP packets (RFC 6597 framing: payloads concatenate,
// M is set on the packet that ends a unit). Used by the test sender.
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include "packetizer/rtp_packetizer_base.hpp"

namespace j2k::packetizer {

class RtpPacketizer : public RtpPacketizerBase {
 public:
  RtpPacketizer(std::uint32_t ssrc, std::uint8_t payload_type, std::uint16_t first_sequence,
                std::size_t max_payload = 1400)
      : RtpPacketizerBase(ssrc, payload_type, first_sequence, max_payload) {}

  /// Appends the packets of one unit to `out`; all carry `timestamp`.
  void packetize(Bytes unit, std::uint32_t timestamp, std::vector<std::vector<std::uint8_t>>& out);
};

}  // namespace j2k::packetizer
