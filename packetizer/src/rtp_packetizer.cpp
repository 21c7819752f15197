#include "packetizer/rtp_packetizer.hpp"

#include <algorithm>

namespace j2k::packetizer {

void RtpPacketizer::packetize(Bytes unit, std::uint32_t timestamp, std::vector<std::vector<std::uint8_t>>& out) {
  std::size_t offset = 0;
  do {
    const std::size_t take = std::min(max_payload(), unit.size() - offset);
    const bool last = offset + take == unit.size();
    PacketBytes pkt = start_packet(timestamp, last, take);
    ByteWriter<PacketBytes>(pkt).bytes(unit.subspan(offset, take));
    out.push_back(std::move(pkt));
    offset += take;
  } while (offset < unit.size());
}

}  // namespace j2k::packetizer
