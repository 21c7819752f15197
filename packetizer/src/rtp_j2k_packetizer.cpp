#include "packetizer/rtp_j2k_packetizer.hpp"

#include <algorithm>

#include "depacketizer/rfc5371.hpp"
#include "syntax/locate.hpp"
#include "syntax/segments.hpp"

namespace j2k::packetizer {

// The KLV/wire-format vocabulary (keys, BER lengths, payload headers) is the depacketizer's;
// the sender writes what the receiver reads.
using namespace j2k::depacketizer;

Result<std::size_t> main_header_length(Bytes cs) {
  // Main header: SOC, SIZ and marker segments until the first SOT (15444-1 A.4.1), walked by the
  // same reader as the decoder's.
  auto header = syntax::read_main_header(cs);
  if (!header) return make_error(header.error().kind, "main header: " + header.error().message);
  return header->length;
}

Status Rfc5371Packetizer::packetize(Bytes input, std::uint32_t timestamp, int tp,
                                    std::vector<std::vector<std::uint8_t>>& out) {
  // RFC 5371 carries the codestream itself: a JP2 file (as FFmpeg writes into MXF) sends its jp2c box.
  auto located = syntax::locate_codestream(input);
  if (!located) return located.error();
  const Bytes cs = *located;
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
