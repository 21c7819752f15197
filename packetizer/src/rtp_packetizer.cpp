#include "packetizer/rtp_packetizer.hpp"

#include <algorithm>

namespace j2k::packetizer {

void RtpPacketizer::packetize(Bytes unit, std::uint32_t timestamp, std::vector<std::vector<std::uint8_t>>& out) {
  std::size_t offset = 0;
  do {
    const std::size_t take = std::min(max_payload_, unit.size() - offset);
    const bool last = offset + take == unit.size();
    std::vector<std::uint8_t> pkt;
    pkt.reserve(12 + take);
    ByteWriter<std::vector<std::uint8_t>> w(pkt);
    w.u8(0x80);  // V=2, no padding, no extension, no CSRC
    w.u8(static_cast<std::uint8_t>((last ? 0x80 : 0) | (payload_type_ & 0x7F)));
    w.u16(sequence_++);
    w.u32(timestamp);
    w.u32(ssrc_);
    w.bytes(unit.subspan(offset, take));
    out.push_back(std::move(pkt));
    offset += take;
  } while (offset < unit.size());
}

}  // namespace j2k::packetizer
