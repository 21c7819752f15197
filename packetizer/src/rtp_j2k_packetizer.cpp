#include "packetizer/rtp_j2k_packetizer.hpp"

#include <algorithm>

#include "depacketizer/rfc5371.hpp"

namespace j2k::packetizer {

// The KLV/wire-format vocabulary (keys, BER lengths, payload headers) is the depacketizer's;
// the sender writes what the receiver reads.
using namespace j2k::depacketizer;

Result<std::size_t> main_header_length(Bytes cs) {
  ByteReader r(cs);
  if (r.u16() != 0xFF4F) return make_error(ErrorKind::corrupt, "codestream does not start with SOC");
  // Main header: marker segments (marker, Lxxx ≥ 2, body) until the first SOT (15444-1 A.4).
  while (r.remaining() >= 4) {
    const std::uint16_t marker = r.peek_u16();
    if (marker == 0xFF90) return r.position();
    if ((marker & 0xFF00) != 0xFF00) return make_error(ErrorKind::corrupt, "main header: expected a marker");
    r.skip(2);
    const std::uint16_t length = r.u16();
    if (length < 2 || !r.has(length - 2u)) return make_error(ErrorKind::corrupt, "main header: segment length runs past the end");
    r.skip(length - 2u);
  }
  return make_error(ErrorKind::corrupt, "main header: no SOT marker");
}

Status Rfc5371Packetizer::packetize(Bytes cs, std::uint32_t timestamp, int tp,
                                    std::vector<std::vector<std::uint8_t>>& out) {
  auto header_len = main_header_length(cs);
  if (!header_len) return header_len.error();
  std::size_t offset = 0;
  while (offset < cs.size()) {
    const bool in_header = offset < *header_len;
    // Main-header packets carry only the main header (MHF 1/2/3), the rest carry packets.
    const std::size_t limit = in_header ? *header_len : cs.size();
    const std::size_t take = std::min(max_payload_ - 8, limit - offset);
    const bool last = offset + take == cs.size();
    Rfc5371Header h;
    h.tp = tp;
    if (in_header) {
      const bool first = offset == 0, ends = offset + take == *header_len;
      h.mhf = first && ends ? 3 : ends ? 2 : 1;
    }
    h.tile_invalid = true;
    h.fragment_offset = static_cast<std::uint32_t>(offset);
    std::vector<std::uint8_t> pkt;
    pkt.reserve(20 + take);
    ByteWriter<std::vector<std::uint8_t>> w(pkt);
    w.u8(0x80);
    w.u8(static_cast<std::uint8_t>((last ? 0x80 : 0) | (payload_type_ & 0x7F)));
    w.u16(sequence_++);
    w.u32(timestamp);
    w.u32(ssrc_);
    append_rfc5371_header(pkt, h);
    w.bytes(cs.subspan(offset, take));
    out.push_back(std::move(pkt));
    offset += take;
  }
  return {};
}

}  // namespace j2k::packetizer
