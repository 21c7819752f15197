#pragma once
// What every RTP packetizer of one sending stream shares: its SSRC, payload type, the next
// sequence number and the payload size limit, and the one place the RTP fixed header
// (RFC 3550 5.1) is written.
#include <cstdint>
#include <vector>

namespace j2k::packetizer {

using PacketBytes = std::vector<std::uint8_t>;

class RtpPacketizerBase {
 public:
  static constexpr std::size_t kHeaderBytes = 12;  // fixed header, no CSRC, no extension

  std::uint16_t next_sequence() const noexcept { return sequence_; }
  std::uint32_t ssrc() const noexcept { return ssrc_; }
  std::size_t max_payload() const noexcept { return max_payload_; }

 protected:
  RtpPacketizerBase(std::uint32_t ssrc, std::uint8_t payload_type, std::uint16_t first_sequence,
                    std::size_t max_payload)
      : ssrc_(ssrc), payload_type_(payload_type), sequence_(first_sequence), max_payload_(max_payload) {}
  ~RtpPacketizerBase() = default;

  /// A packet holding only the fixed header with the next sequence number (which advances);
  /// room is reserved for `payload_bytes` more.
  PacketBytes start_packet(std::uint32_t timestamp, bool marker, std::size_t payload_bytes);

 private:
  std::uint32_t ssrc_;
  std::uint8_t payload_type_;
  std::uint16_t sequence_;
  std::size_t max_payload_;
};

}  // namespace j2k::packetizer
