#include "packetizer/rtp_packetizer_base.hpp"

#include "core/byte_reader.hpp"

namespace j2k::packetizer {

PacketBytes RtpPacketizerBase::start_packet(std::uint32_t timestamp, bool marker, std::size_t payload_bytes) {
  PacketBytes pkt;
  pkt.reserve(kHeaderBytes + payload_bytes);
  ByteWriter<PacketBytes> w(pkt);
  w.u8(0x80);  // V=2, no padding, no extension, no CSRC (RFC 3550 5.1)
  w.u8(static_cast<std::uint8_t>((marker ? 0x80 : 0) | (payload_type_ & 0x7F)));
  w.u16(sequence_++);  // wraps modulo 2^16
  w.u32(timestamp);
  w.u32(ssrc_);
  return pkt;
}

}  // namespace j2k::packetizer
