#pragma once
// Marker-level work on JPEG 2000 codestreams (ISO/IEC 15444-1 Annex A) that the
// depacketizer needs without decoding: splitting two codestreams carried in one KLV,
// tolerating vendor prefixes and padding, and merging a luma (Csiz 1) and a chroma
// (Csiz 2) codestream into one 3-component codestream, bit-exact, without transcoding.
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"

namespace j2k::depacketizer {

/// Skips a vendor prefix (up to 64 bytes before `FF 4F FF 51`) and trims zero padding after
/// the final EOC. Returns the codestream proper, or an error when no SOC+SIZ is found.
Result<Bytes> trim_codestream(Bytes data);

/// Splits `SOC…EOC SOC…EOC …` by walking each codestream's marker segments and its tile-part
/// (Psot) chain — never by searching for FF 4F, which can occur inside coded data. A Psot of 0
/// (last tile-part runs to EOC) is resolved at `FF D9 FF 4F FF 51`.
Result<std::vector<Bytes>> split_codestreams(Bytes data);

/// Number of components (Csiz) in the SIZ segment of a codestream.
Result<int> component_count(Bytes codestream);

/// Merges luma (Csiz 1) and chroma (Csiz 2) codestreams into one with Csiz 3 (wire-format.md §3):
/// SIZ from luma with the chroma's XRsiz/YRsiz, COD from luma with MCT off, COC/QCC for the
/// chroma components, a POC replaying each source's progression when they are not both CPRL,
/// and per tile the luma tile-parts followed by the chroma tile-parts (SOP numbers continued).
/// When the layer counts differ, the merged codestream has the larger count L; the source with
/// fewer layers L_s gets LYE = L_s in its POC entry plus an LRCP entry up to L, and per tile one
/// more tile-part after its own holding (L − L_s) × (its precincts over components and
/// resolutions) empty packets, with SOP/EPH as the sources use them (then a POC is written even
/// when both are CPRL). Unsupported combinations (PPM, PPT, source POC, unequal SOP/EPH use,
/// inconsistent tiling, tile-part COD) are reported as ErrorKind::unsupported with the reason.
Result<std::vector<std::uint8_t>> merge_luma_chroma(Bytes luma, Bytes chroma);

}  // namespace j2k::depacketizer
