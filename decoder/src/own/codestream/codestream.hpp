#pragma once
// Main header and tile-part headers (15444-1 Annex A), parsed through ByteReader.
//
// The parser only records what the markers say; geometry is derived in tier2/.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "decoder/decoder.hpp"

namespace j2k::decoder::own {

enum class ProgressionOrder : std::uint8_t { LRCP = 0, RLCP = 1, RPCL = 2, PCRL = 3, CPRL = 4 };

/// Code-block style flags, SPcod/SPcoc (15444-1 Table A.19).
enum CodeBlockStyle : std::uint8_t {
  kBypass = 0x01,         ///< selective arithmetic coding bypass
  kReset = 0x02,          ///< reset context probabilities on each pass
  kTermAll = 0x04,        ///< terminate on each coding pass
  kVerticalCausal = 0x08, ///< vertically causal context formation
  kPredictableTerm = 0x10,///< predictable termination (encoder side only)
  kSegmentation = 0x20,   ///< segmentation symbols after each cleanup pass
};

constexpr int kMaxLevels = 32;  // A.6.1: NL is 0..32

/// The component part of COD/COC (SPcod / SPcoc).
struct ComponentCoding {
  int levels = 5;
  int cb_width_exp = 6;   ///< log2 of the nominal code-block width (xcb)
  int cb_height_exp = 6;
  std::uint8_t cb_style = 0;
  bool reversible = true;  ///< 5/3 when true, 9/7 otherwise
  /// PPx | PPy << 4 per resolution; 15/15 when no precincts are signalled (A.6.1).
  std::array<std::uint8_t, kMaxLevels + 1> precincts{};
};

/// The whole-tile part of COD (Scod, SGcod).
struct CodingStyle {
  bool sop = false;
  bool eph = false;
  ProgressionOrder progression = ProgressionOrder::LRCP;
  int layers = 1;
  bool mct = false;
  ComponentCoding component;
};

/// QCD/QCC (A.6.4, A.6.5).
struct Quantization {
  int style = 0;       ///< 0 none (reversible), 1 scalar derived, 2 scalar expounded
  int guard_bits = 2;
  /// (exponent, mantissa) per subband in LL, HL1, LH1, HH1, HL2 ... order.
  std::vector<std::pair<std::uint8_t, std::uint16_t>> steps;
};

struct ProgressionChange {  // POC entry (A.6.6)
  int res_start = 0, comp_start = 0, layer_end = 0, res_end = 0, comp_end = 0;
  ProgressionOrder order = ProgressionOrder::LRCP;
};

struct ComponentSiz {
  int precision = 8;
  bool is_signed = false;
  int dx = 1, dy = 1;
};

struct Siz {
  std::uint32_t x1 = 0, y1 = 0, x0 = 0, y0 = 0;     // Xsiz, Ysiz, XOsiz, YOsiz
  std::uint32_t tw = 0, th = 0, tx0 = 0, ty0 = 0;   // XTsiz, YTsiz, XTOsiz, YTOsiz
  std::vector<ComponentSiz> components;
  int tiles_x = 0, tiles_y = 0;
};

/// Coding parameters as set by one header (main or a tile's): what each marker overrode.
struct HeaderParams {
  std::optional<CodingStyle> cod;
  std::vector<std::optional<ComponentCoding>> coc;
  std::optional<Quantization> qcd;
  std::vector<std::optional<Quantization>> qcc;
  std::vector<std::optional<int>> roi_shift;  ///< RGN maxshift per component
  std::vector<ProgressionChange> poc;
};

struct TilePart {
  Bytes body;            ///< the bytes after SOD (packets, or packet bodies with PPM/PPT)
  Bytes packed_headers;  ///< PPT/PPM packet headers of this tile-part (may be empty)
  int index_in_tile = 0;
};

struct TileHeader {
  bool seen = false;
  HeaderParams params;
  std::vector<TilePart> parts;
  std::vector<std::pair<int, std::vector<std::uint8_t>>> ppt;  ///< (Zppt, data), sorted later
  std::vector<std::uint8_t> ppm_headers;  ///< PPM packet headers for this tile, concatenated
  bool truncated = false;                 ///< a tile-part ran past the end of the data
};

struct Codestream {
  Siz siz;
  HeaderParams main;
  bool has_ppm = false;
  std::vector<TileHeader> tiles;
  bool truncated = false;  ///< no EOC, or a tile-part cut short
};

/// Parses all headers of a codestream (starting at SOC). Tile-part bodies stay views into
/// `data`. In resilient mode a truncated stream keeps what was complete.
Result<Codestream> parse_codestream(Bytes data, const DecodeLimits& limits, bool strict);

/// SOC and SIZ only: the picture's geometry without reading the rest of the headers.
Result<Siz> parse_main_siz(Bytes data, const DecodeLimits& limits);

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
