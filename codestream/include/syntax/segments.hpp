#pragma once
// The one marker-segment reader for JPEG 2000 codestreams (ISO/IEC 15444-1 A.1.4, A.4), used by
// the decoder, the depacketizer's codestream tools and the RTP packetizer alike, so that every
// one of them accepts and refuses the same byte sequences.
//
//   marker segment:  | FF xx | Lmar (16, counts itself, not the marker) | Lmar - 2 bytes of parameters |
//   main header:     SOC  SIZ  { COD COC QCD QCC RGN POC PPM TLM PLM CRG COM ... }  SOT ...
//   tile-part:       SOT(Lsot=10, Isot, Psot, TPsot, TNsot) { COD COC QCD QCC RGN POC PPT PLT COM ... } SOD data
//
// Markers FF30..FF3F have no segment and are skipped wherever a segment may stand (A.1.4).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::syntax {

using Out = std::vector<std::uint8_t>;

struct Segment {
  std::uint16_t marker = 0;
  std::size_t offset = 0;  ///< of the marker code, in the data being walked
  Bytes body;              ///< the parameters after Lmar (a view into that data)
};

/// Reads the marker segment at the reader's position (marker, Lmar, parameters), never past the
/// reader's end. Errors (corrupt): the code is not a marker (FF30..FFFF), the marker has no
/// segment, Lmar < 2, or the segment runs past the end.
Result<Segment> read_segment(ByteReader& r);

/// Appends marker, Lmar and `body`; an error when the body does not fit a 16-bit length.
Status write_segment(Out& out, std::uint16_t marker, Bytes body);

/// SOC, SIZ and the main header's marker segments up to the first SOT (A.4.1, Table A.3).
struct MainHeader {
  Segment siz;                    ///< the SIZ segment, which must follow SOC
  std::vector<Segment> segments;  ///< the other segments in codestream order (FF30..FF3F skipped)
  std::size_t length = 0;         ///< offset of the first SOT: the bytes of SOC and the main header

  /// The first segment with this marker, or nullptr.
  const Segment* find(std::uint16_t marker) const noexcept;
};

/// Walks the main header of the codestream that starts at `codestream[0]`. Checks structure only
/// (SOC, SIZ first, each Lmar inside the data, no marker that belongs elsewhere: SIZ again, SOD,
/// PPT, SOP, EPH, EOC); the parameters are read by parameters.hpp. Marker segments this code does
/// not know are kept (a reader skips them).
Result<MainHeader> read_main_header(Bytes codestream);

/// The SOT marker segment (A.4.2).
struct Sot {
  std::uint16_t tile = 0;    ///< Isot
  std::uint32_t length = 0;  ///< Psot: bytes of the tile-part from SOT's first byte; 0 = up to EOC
  std::uint8_t index = 0;    ///< TPsot
  std::uint8_t count = 0;    ///< TNsot (0 = not given)
};

/// Reads SOT at the reader's position. Corrupt when truncated, when Lsot is not 10 or when Psot is
/// neither 0 nor at least 14 (the SOT segment and SOD).
Result<Sot> read_sot(ByteReader& r);
void write_sot(Out& out, const Sot& sot);

/// The marker segments between SOT and SOD of one tile-part.
struct TilePartHeader {
  std::vector<Segment> segments;
  std::size_t body = 0;  ///< offset of the first byte after SOD
};

/// Walks from `offset` (just after the SOT segment) to SOD, not past `end` (the tile-part's end
/// from Psot, or the data's). ErrorKind::need_more_data when `end` comes before SOD (a cut
/// tile-part); corrupt when a segment runs past `end` or the bytes are not markers.
Result<TilePartHeader> read_tile_part_header(Bytes data, std::size_t offset, std::size_t end);

}  // namespace j2k::syntax
