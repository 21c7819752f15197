#pragma once
// JPEG 2000 encoding through OpenJPEG (libopenjp2): what the test sender uses.
#include <cstdint>
#include <vector>

#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k::packetizer {

enum class Progression { LRCP, RLCP, RPCL, PCRL, CPRL };

struct EncodeParams {
  bool lossless = false;             ///< reversible 5/3; otherwise irreversible 9/7
  std::size_t target_bytes = 0;      ///< lossy: codestream size to aim for (0 = quality 40:1)
  int resolutions = 6;               ///< decomposition levels + 1
  int codeblock = 64;                ///< code-block width and height
  Progression progression = Progression::CPRL;
  int layers = 1;                    ///< quality layers (lossy: rates spread up to the target)
  int precinct_log2 = 0;             ///< precinct width/height as a power of two; 0 = maximal
  int tile = 0;                      ///< tile width (and height); 0 = one tile
  int tile_height = 0;               ///< tile height when it differs from the width
  bool sop = false;
  bool eph = false;
  /// One tile-part per component (OpenJPEG's tile-part division 'C'), as cinema and
  /// broadcast encoders write a component-first (CPRL) frame.
  bool tile_part_per_component = false;
  int threads = 1;
  /// Rsiz to declare (0: OpenJPEG's); 3 or 4 say digital cinema 2K or 4K (the content must then
  /// be X'Y'Z': ColourCoding::xyz, 12-bit 4:4:4; the profile's other limits are the caller's).
  std::uint16_t rsiz = 0;
};

/// Encodes a planar image (any components/subsampling) into a raw J2K codestream.
Result<std::vector<std::uint8_t>> encode_openjpeg(const PlanarImage& image, const EncodeParams& params);

}  // namespace j2k::packetizer
