#pragma once
// Tile → component → resolution → band → precinct → code-block geometry (15444-1 B.5–B.7)
// and the per-code-block state that tier-2 fills and tier-1 consumes.
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
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
  // A constructor of our own: `blocks.emplace_back()` value-initialises, which for a class
  // without one zero-fills the whole object (small vectors' inline storage included) before
  // the member initialisers run again; that fill was ~8 % of a GPU tier-1 frame's host part.
  CodeBlock() noexcept {}
  Rect rect;  ///< in band coordinates
  bool included = false;
  int zero_bitplanes = 0;
  int lblock = 3;  ///< B.10.7.1: starts at 3
  int passes = 0;
  // The packet headers' count (B.10.7.2): passes so far, and those of the last codeword
  // segment and its capacity. The same as `passes` and `segments` unless layers are read
  // past --layers without being kept: their headers still say where the next segment starts.
  int header_passes = 0;
  std::uint16_t header_in_last = 0, header_cap = 0;
  // One segment and one chunk in place (a frame of one layer without per-pass termination,
  // the usual video frame, then allocates nothing per code-block: the heap traffic of
  // ~4 000 blocks was ~15 % of a 2160 frame's tier-2).
  boost::container::small_vector<Segment, 1> segments;
  boost::container::small_vector<Bytes, 1> chunks;  ///< the code-block's bytes, one view per contributing packet
};

/// The code-blocks of one precinct-band and their tag trees (B.10.2). Created when the
/// first packet of the precinct carries data, so that memory follows what the packets
/// contain rather than what the header declares (a hostile header can declare millions
/// of code-blocks in a few bytes; each packet that reaches them costs at least a byte).
struct PrecinctCodeBlocks {
  std::vector<CodeBlock> blocks;  ///< raster order (B.10.1)
  TagTreeDecoder inclusion;
  TagTreeDecoder zero_bitplanes;
};

struct PrecinctBand {
  Rect rect;                 ///< the precinct in band coordinates, clipped to the band (empty: none)
  int cb_x0 = 0, cb_y0 = 0;  ///< first code-block's index on the band's code-block grid
  int cb_cols = 0, cb_rows = 0;
  std::unique_ptr<PrecinctCodeBlocks> coded;  ///< null until a packet brings data
};

/// A precinct (B.6) in the one (resolution 0) or three bands of its resolution. Made when
/// the first non-empty packet of the precinct arrives (materialize_precinct): a header
/// declares up to millions of precincts in a few bytes, and those no packet reaches
/// cost a null pointer, not their geometry.
struct Precinct {
  PrecinctBand bands[3];
};

/// Bytes a decode may still allocate (DecodeLimits::max_memory). Everything whose size the
/// codestream controls is charged here *before* it is allocated, so a hostile header is
/// refused with ErrorKind::limit instead of exhausting memory.
class MemoryBudget {
 public:
  explicit MemoryBudget(long long limit) : limit_(limit) {}
  /// False (and nothing charged) when `bytes` would exceed the limit.
  bool charge(long long bytes) {
    if (bytes < 0 || bytes > limit_ - used_) return false;
    used_ += bytes;
    return true;
  }
  long long used() const noexcept { return used_; }
  long long limit() const noexcept { return limit_; }

 private:
  long long limit_;
  long long used_ = 0;
};

/// Creates `pb.coded` (code-block rectangles, tag trees) after charging `budget`; an
/// ErrorKind::limit error when the budget is exhausted.
Status materialize_code_blocks(PrecinctBand& pb, int xcb, int ycb, MemoryBudget& budget);

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
  int xcb = 6, ycb = 6;  ///< code-block size exponents inside this resolution's precincts (B-17, B-18)
  int band_ppx = 15, band_ppy = 15;  ///< precinct size exponents in the bands' coordinates
  Band bands[3];
  std::vector<std::unique_ptr<Precinct>> precincts;  ///< prec_cols * prec_rows, raster order; null: no data
  std::vector<int> next_layer;                       ///< per precinct: next layer to read (POC bookkeeping)
};

/// The part of precinct `p` of `res` in band `b` (B.6, B.7): its rectangle in band
/// coordinates clipped to the band (empty when it has none) and its code-block grid.
PrecinctBand precinct_band(const Resolution& res, int p, int b);
/// The rectangle that row `py` of precincts covers in band `b` (the union of their
/// precinct_band() rectangles; empty when none).
Rect precinct_row(const Resolution& res, int py, int b);
/// Creates `res.precincts[p]` (its geometry; code-blocks come with
/// materialize_code_blocks) after charging `budget`.
Status materialize_precinct(Resolution& res, int p, MemoryBudget& budget);

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

/// What a tile brings to build_tile.
enum class TileData {
  coded,             ///< tile-parts: everything, for the packets to fill
  empty,             ///< no tile-part (no packet can reach it): geometry and zeroed buffers only
  empty_no_buffers,  ///< no tile-part, and the frame stays with a reconstruction that honours
                     ///< ComponentCoefficients::zero: geometry only, `data` left empty
};

/// Builds tile geometry; also sizes the CoefficientFrame's subbands of this tile.
/// The structures (components, resolutions, precincts) are charged to `budget` first;
/// fails with ErrorKind::limit when they would exceed it. Code-blocks are not created here
/// (materialize_code_blocks, when packets reach them). A tile without data (TileData::empty*)
/// gets no precincts and no resolutions, so it costs its geometry only.
Status build_tile(const Codestream& cs, int tile_index, TileParams params, int reduce, Tile& tile,
                  TileCoefficients& out, MemoryBudget& budget, TileData data = TileData::coded);

}  // namespace j2k::decoder::own
