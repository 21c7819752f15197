#pragma once
// Main header and tile-part headers (15444-1 Annex A), walked and read by the shared syntax unit
// (syntax/segments.hpp, syntax/parameters.hpp); this file keeps what the decoder adds: the
// per-tile collection of tile-parts and PPM/PPT, resilience to cut streams, and the precedence
// of main and tile parameters.
//
// The parser only records what the markers say; geometry is derived in tier2/.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "decoder/decoder.hpp"
#include "syntax/parameters.hpp"

namespace j2k::decoder::own {

// The marker segments' values are the shared syntax unit's types (codestream/include/syntax).
using syntax::CodeBlockStyle;
using syntax::CodingStyle;
using syntax::ComponentCoding;
using syntax::ComponentSiz;
using syntax::kBypass;
using syntax::kMaxLevels;
using syntax::kPredictableTerm;
using syntax::kReset;
using syntax::kSegmentation;
using syntax::kTermAll;
using syntax::kVerticalCausal;
using syntax::ProgressionChange;
using syntax::ProgressionOrder;
using syntax::Quantization;
using syntax::Siz;

/// Coding parameters as set by one header (main or a tile's): what each marker overrode.
/// A header's per-component values (COC, QCC, RGN) for the components it names, by index:
/// a header costs what it holds, not what the image has (up to 16384 components, and a
/// tile-part's header is copied while it is read).
template <class T>
using PerComponent = std::map<int, T>;

struct HeaderParams {
  std::optional<CodingStyle> cod;
  PerComponent<ComponentCoding> coc;
  std::optional<Quantization> qcd;
  PerComponent<Quantization> qcc;
  PerComponent<int> roi_shift;  ///< RGN maxshift
  std::vector<ProgressionChange> poc;
};

struct TilePart {
  Bytes body;                             ///< the bytes after SOD (packets, or packet bodies with PPM/PPT)
  std::vector<std::uint8_t> ppm_headers;  ///< its packet headers from PPM (Nppm's share; A.7.4)
  int index_in_tile = 0;                  ///< TPsot
};

struct TileHeader {
  bool seen = false;
  HeaderParams params;
  /// Its tile-parts in TPsot order once parsed (A.4.2: a tile's packets continue from one
  /// part to the next), each index once, without a gap: parts after a missing or unreadable
  /// one are left out (their packets continue the lost ones').
  std::vector<TilePart> parts;
  std::vector<std::pair<int, std::vector<std::uint8_t>>> ppt;  ///< (TPsot * 256 + Zppt, data); in that order once read
  /// Its packet headers are in PPT segments (even where none of them could be used: its
  /// packets then have no headers, and are not read from the data).
  bool has_ppt = false;
  std::vector<std::uint8_t> ppm_headers;  ///< PPM packet headers for this tile, its parts' joined in order
  int announced_parts = 0;                ///< TNsot, the largest any of its parts gave (0: not given)
  /// A tile-part ran past the end of the data, one was left out or is missing, or its packet
  /// headers (PPT/PPM) are incomplete.
  bool truncated = false;
  /// Resilient mode: a tile-part of this tile could not be read (its header), so its later
  /// parts are left out too (their packets continue the lost ones').
  bool closed = false;
};

struct Codestream {
  Siz siz;
  HeaderParams main;
  bool has_ppm = false;
  std::vector<TileHeader> tiles;
  bool truncated = false;  ///< no EOC, or a tile-part cut short
  /// Resilient mode: tile-parts left out (an unreadable header, a tile index out of range, a
  /// TPsot given twice, or a later part of a tile whose earlier one was left out or is
  /// missing) and tile-parts missing (a gap in a tile's TPsot, fewer than its TNsot).
  std::uint32_t damaged_tile_parts = 0;
};

/// Parses all headers of a codestream (starting at SOC). Tile-part bodies stay views into
/// `data`. In resilient mode a truncated stream keeps what was complete.
Result<Codestream> parse_codestream(Bytes data, const DecodeLimits& limits, bool strict);

/// Effective parameters for one tile-component (precedence of A.6: tile COC > tile COD >
/// main COC > main COD; same for QCC/QCD).
struct TileComponentParams {
  ComponentCoding coding;
  Quantization quant;
  int roi_shift = 0;
};
struct TileParams {
  CodingStyle style;
  std::vector<TileComponentParams> components;
  std::vector<ProgressionChange> poc;
};
Result<TileParams> resolve_tile_params(const Codestream& cs, int tile);

}  // namespace j2k::decoder::own
