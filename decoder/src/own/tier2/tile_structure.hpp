#pragma once
// Tile → component → resolution → band → precinct → code-block geometry (15444-1 B.5–B.7)
// and the per-code-block state that tier-2 fills and tier-1 consumes.
#include <cstdint>
#include <vector>

#include "codestream/codestream.hpp"
#include "decoder/coefficients.hpp"
#include "tier2/tag_tree.hpp"

namespace j2k::decoder::own {

/// A codeword segment (B.10.7): bytes ending in an MQ or raw termination.
struct Segment {
  std::uint32_t length = 0;
  std::uint16_t passes = 0;
  std::uint16_t max_passes = 0;
};

struct CodeBlock {
  Rect rect;  ///< in band coordinates
  bool included = false;
  int zero_bitplanes = 0;
  int lblock = 3;  ///< B.10.7.1: starts at 3
  int passes = 0;
  std::vector<Segment> segments;
  std::vector<Bytes> chunks;  ///< the code-block's bytes, one view per contributing packet
};

struct PrecinctBand {
  int cb_cols = 0, cb_rows = 0;
  std::vector<CodeBlock> blocks;  ///< raster order (B.10.1)
  TagTreeDecoder inclusion;
  TagTreeDecoder zero_bitplanes;
};

struct Band {
  BandOrientation orientation = BandOrientation::LL;
  Rect rect;
  int magnitude_bits = 0;  ///< Mb (E-2) plus the ROI shift
  int roi_shift = 0;
  float step = 1.0f;
  int subband_index = 0;  ///< into ComponentCoefficients::subbands
};

struct Resolution {
  Rect rect;
  int ppx = 15, ppy = 15;  ///< precinct size exponents
  int prec_x0 = 0, prec_y0 = 0;  ///< floor(trx0 / 2^PPx): grid origin of precinct 0
  int prec_cols = 0, prec_rows = 0;
  int num_bands = 1;
  Band bands[3];
  std::vector<PrecinctBand> precincts;  ///< prec_cols * prec_rows * num_bands, band fastest
  std::vector<int> next_layer;          ///< per precinct: next layer to read (POC bookkeeping)
};

struct TileComponent {
  Rect rect;
  std::vector<Resolution> resolutions;  ///< NL + 1
  int cb_style = 0;
  bool reversible = true;
  int dx = 1, dy = 1;  ///< XRsiz, YRsiz
};

struct Tile {
  int index = 0;
  Rect rect;  ///< on the reference grid
  TileParams params;
  std::vector<TileComponent> components;
};

/// Builds tile geometry; also sizes the CoefficientFrame's subbands of this tile.
/// Fails with ErrorKind::limit when the structure would be unreasonably large.
Status build_tile(const Codestream& cs, int tile_index, TileParams params, int reduce, Tile& tile,
                  TileCoefficients& out);

}  // namespace j2k::decoder::own
