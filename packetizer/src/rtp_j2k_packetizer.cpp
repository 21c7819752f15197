#include "packetizer/rtp_j2k_packetizer.hpp"

#include <algorithm>

#include <fmt/format.h>

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
  // The payload header's fragment offset has 24 bits (RFC 5371 3.1): a larger codestream
  // cannot be sent whole; its offsets would wrap and receivers reassemble nonsense.
  constexpr std::size_t kMaxCodestream = 0xFFFFFF;
  if (cs.size() > kMaxCodestream)
    return make_error(ErrorKind::limit, fmt::format("a {}-byte codestream is more than RFC 5371 can carry ({} bytes: the "
                                                    "fragment offset has 24 bits); lower the bit rate or use another "
                                                    "payload format (mxf, ts)",
                                                    cs.size(), kMaxCodestream));
  auto header_len = main_header_length(cs);
  if (!header_len) return header_len.error();
  std::size_t offset = 0;
  while (offset < cs.size()) {
    const bool in_header = offset < *header_len;
    // Main-header packets carry only the main header (MHF 1/2/3), the rest carry packets.
    const std::size_t limit = in_header ? *header_len : cs.size();
    const std::size_t take = std::min(max_payload() - 8, limit - offset);
    const bool last = offset + take == cs.size();
    Rfc5371Header h;
    h.tp = tp;
    if (in_header) {
      const bool first = offset == 0, ends = offset + take == *header_len;
      h.mhf = first && ends ? 3 : ends ? 2 : 1;
    }
    h.tile_invalid = true;
    h.fragment_offset = static_cast<std::uint32_t>(offset);
    PacketBytes pkt = start_packet(timestamp, last, 8 + take);
    append_rfc5371_header(pkt, h);
    ByteWriter<PacketBytes>(pkt).bytes(cs.subspan(offset, take));
    out.push_back(std::move(pkt));
    offset += take;
  }
  return {};
}

}  // namespace j2k::packetizer
