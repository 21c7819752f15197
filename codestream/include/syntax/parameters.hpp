#pragma once
// Readers and writers of the parameter marker segments (ISO/IEC 15444-1 A.5-A.7): SIZ, COD, COC,
// QCD, QCC, RGN, POC, TLM. A reader takes a segment's body (segments.hpp finds it), checks every
// field against the standard's ranges, and returns values; a writer appends the whole segment.
// Readers check syntax only; resource caps a consumer puts on the values (how large a picture it
// decodes) are check_limits() below, the same for every consumer.
#include <array>
#include <cstdint>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/result.hpp"
#include "syntax/segments.hpp"

namespace j2k::syntax {

enum class ProgressionOrder : std::uint8_t { LRCP = 0, RLCP = 1, RPCL = 2, PCRL = 3, CPRL = 4 };

/// Code-block style flags, SPcod/SPcoc (15444-1 Table A.19).
enum CodeBlockStyle : std::uint8_t {
  kBypass = 0x01,          ///< selective arithmetic coding bypass
  kReset = 0x02,           ///< reset context probabilities on each pass
  kTermAll = 0x04,         ///< terminate on each coding pass
  kVerticalCausal = 0x08,  ///< vertically causal context formation
  kPredictableTerm = 0x10, ///< predictable termination (encoder side only)
  kSegmentation = 0x20,    ///< segmentation symbols after each cleanup pass
};

constexpr int kMaxLevels = 32;  // A.6.1: NL is 0..32

// ---- SIZ (A.5.1) ----

struct ComponentSiz {
  int precision = 8;  ///< bits, 1..38
  bool is_signed = false;
  int dx = 1, dy = 1;  ///< XRsiz, YRsiz
};

struct Siz {
  std::uint16_t rsiz = 0;                          // capabilities
  std::uint32_t x1 = 0, y1 = 0, x0 = 0, y0 = 0;    // Xsiz, Ysiz, XOsiz, YOsiz
  std::uint32_t tw = 0, th = 0, tx0 = 0, ty0 = 0;  // XTsiz, YTsiz, XTOsiz, YTOsiz
  std::vector<ComponentSiz> components;
  int tiles_x = 0, tiles_y = 0;  ///< derived: the tile grid (B-5)
};

/// Reads the SIZ body. Besides A.5.1's ranges the grid is capped at 2^30 (ErrorKind::limit), so
/// that every derived coordinate fits an int.
Result<Siz> read_siz(Bytes body);
/// Rsiz of a digital cinema profile (A.5.1 with its amendments: 2K, 4K, scalable 2K and 4K, long-
/// term storage): such codestreams carry X'Y'Z' (SMPTE 428-1).
constexpr bool is_digital_cinema(std::uint16_t rsiz) noexcept { return rsiz >= 3 && rsiz <= 7; }
Status write_siz(Out& out, const Siz& siz);

/// A consumer's caps on what a codestream may ask for (the decoders' defaults).
struct PictureLimits {
  long long max_pixels = 16384LL * 16384;  ///< image area, all components counted once
  int max_components = 16384;
  int max_precision = 16;                  ///< our integer pipelines stop at 16 bits
};
/// ErrorKind::limit for a picture or component count beyond `limits`, unsupported beyond the
/// precision.
Status check_limits(const Siz& siz, const PictureLimits& limits);

// ---- COD, COC (A.6.1, A.6.2) ----

/// The component part of COD/COC (SPcod / SPcoc, with the precinct flag of Scod / Scoc).
struct ComponentCoding {
  int levels = 5;
  int cb_width_exp = 6;  ///< log2 of the nominal code-block width (xcb)
  int cb_height_exp = 6;
  std::uint8_t cb_style = 0;
  bool reversible = true;  ///< 5/3 when true, 9/7 otherwise
  bool explicit_precincts = false;  ///< Scod/Scoc bit 0: PPx/PPy given per resolution
  /// PPx | PPy << 4 per resolution; 15/15 when no precincts are signalled (A.6.1).
  std::array<std::uint8_t, kMaxLevels + 1> precincts{};
};

/// The whole COD (Scod, SGcod, SPcod).
struct CodingStyle {
  bool sop = false;
  bool eph = false;
  ProgressionOrder progression = ProgressionOrder::LRCP;
  int layers = 1;
  bool mct = false;
  ComponentCoding component;
};

Result<CodingStyle> read_cod(Bytes body);
Status write_cod(Out& out, const CodingStyle& cod);

/// What a COC or QCC segment says: one component's coding style or quantisation.
template <typename T>
struct OfComponent {
  int component = 0;
  T value;
};
using ComponentCodingOf = OfComponent<ComponentCoding>;
/// COC of a codestream with `csiz` components (the index is 16 bits when Csiz >= 257, A.6.2).
Result<ComponentCodingOf> read_coc(Bytes body, std::size_t csiz);
Status write_coc(Out& out, const ComponentCodingOf& coc, std::size_t csiz);

// ---- QCD, QCC (A.6.4, A.6.5) ----

struct Quantization {
  int style = 0;  ///< 0 none (reversible), 1 scalar derived, 2 scalar expounded
  int guard_bits = 2;
  /// (exponent, mantissa) per subband in LL, HL1, LH1, HH1, HL2 ... order; one entry when derived.
  std::vector<std::pair<std::uint8_t, std::uint16_t>> steps;
};

Result<Quantization> read_qcd(Bytes body);
Status write_qcd(Out& out, const Quantization& q);

using QuantizationOf = OfComponent<Quantization>;
Result<QuantizationOf> read_qcc(Bytes body, std::size_t csiz);
Status write_qcc(Out& out, const QuantizationOf& qcc, std::size_t csiz);

// ---- RGN (A.6.3) ----

struct RoiShift {
  int component = 0;
  int shift = 0;  ///< maxshift bit-planes (SPrgn)
};
/// Only the maxshift style (Srgn 0) is Part 1; others are ErrorKind::unsupported.
Result<RoiShift> read_rgn(Bytes body, std::size_t csiz);
Status write_rgn(Out& out, const RoiShift& roi, std::size_t csiz);

// ---- POC (A.6.6) ----

struct ProgressionChange {
  int res_start = 0, comp_start = 0, layer_end = 0, res_end = 0;
  int comp_end = 0;  ///< exclusive; a coded 0 reads as 256 (or 65536 when Csiz >= 257)
  ProgressionOrder order = ProgressionOrder::LRCP;
};
Result<std::vector<ProgressionChange>> read_poc(Bytes body, std::size_t csiz);
Status write_poc(Out& out, const std::vector<ProgressionChange>& changes, std::size_t csiz);

// ---- TLM (A.7.1) ----

struct TileLengths {
  std::uint8_t index = 0;  ///< Ztlm
  int tile_bytes = 2;      ///< ST: size of Ttlm, 0 (tiles in order, one tile-part each), 1 or 2
  int length_bytes = 4;    ///< SP: size of Ptlm, 2 or 4
  struct Part {
    std::uint16_t tile = 0;    ///< Ttlm (with ST 0: the running index)
    std::uint32_t length = 0;  ///< Ptlm: as Psot of that tile-part
  };
  std::vector<Part> parts;
};
Result<TileLengths> read_tlm(Bytes body);
Status write_tlm(Out& out, const TileLengths& tlm);

}  // namespace j2k::syntax
