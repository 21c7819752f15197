#pragma once
// RTP packets of an MXF stream (RFC 6597) as j2ksend sends it, for depacketizer tests: header
// metadata (partition pack, primer pack, picture descriptor) on the first frame and then
// every few frames, and each frame's system item and picture element.
#include <cstdint>
#include <vector>

#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_packetizer.hpp"

namespace j2k::test {

struct MxfStream {
  std::uint32_t ssrc = 0xCAFE;
  std::uint16_t first_sequence = 100;
  std::size_t mtu = 1400;                ///< largest RTP payload
  std::uint32_t first_timestamp = 0;
  std::uint32_t timestamp_step = 3600;   ///< per frame
  int header_every = 10;                 ///< header metadata on frames 0, n, 2n…
  packetizer::MxfPictureParams picture = {.width = 1280, .height = 720, .depth = 10};
  int elements_per_frame = 1;            ///< 2: a picture element per field (I1 wrapping)
};

/// The packets of `frames` frames; `codestream(f)` gives frame f's picture.
template <typename Codestream>
std::vector<std::vector<std::uint8_t>> mxf_rtp_packets(const MxfStream& s, int frames, Codestream codestream) {
  packetizer::RtpPacketizer packetizer(s.ssrc, 96, s.first_sequence, s.mtu);
  std::vector<std::vector<std::uint8_t>> out;
  for (int f = 0; f < frames; ++f) {
    const auto ts = s.first_timestamp + static_cast<std::uint32_t>(f) * s.timestamp_step;
    if (f % s.header_every == 0) {
      const auto primer = packetizer::mxf_primer_pack();
      const auto desc = packetizer::mxf_cdci_descriptor(s.picture);
      packetizer.packetize(packetizer::mxf_partition_pack(f == 0, 0, primer.size() + desc.size()), ts, out);
      packetizer.packetize(primer, ts, out);
      packetizer.packetize(desc, ts, out);
    }
    packetizer.packetize(packetizer::mxf_system_item(static_cast<std::uint16_t>(f)), ts, out);
    if (s.elements_per_frame == 1) packetizer.packetize(packetizer::mxf_picture_element(codestream(f)), ts, out);
    else  // element count and number in the key, as j2ksend writes I1 fields
      for (int e = 0; e < s.elements_per_frame; ++e)
        packetizer.packetize(packetizer::mxf_picture_element(codestream(f), s.elements_per_frame, e + 1), ts, out);
  }
  return out;
}

}  // namespace j2k::test
