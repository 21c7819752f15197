#pragma once
// Tier-2 (15444-1 Annex B.9–B.12): walks the packets of a tile in progression order
// (with POC) and assigns each code-block its codeword segments.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "core/result.hpp"
#include "core/work_pool.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder::own {

struct Tier2Counters {
  std::uint64_t packets = 0;
  std::uint64_t damaged_packets = 0;
  std::uint64_t bytes_after_packets = 0;  ///< tile data (and packed headers) after a tile's last packet
};

struct Tier2Options {
  int max_layers = 0;  ///< 0 = all
  bool strict = false;
};

/// Work budget of tier-2 over one codestream, shared by all its tiles (a codestream of many
/// tiny tiles gets no more than one of their bytes together). A step is one unit of work
/// whose count the header controls: a POC entry, a (resolution, component) pair an entry
/// covers, a precinct position of a position-driven order and each component and resolution
/// probed there, a visit of a precinct, and every code-block a non-empty packet header goes
/// through (once a tag tree's bound is past the layer, a precinct's blocks cost no bit
/// each: a one-byte packet walks them all). Every packet costs at least one byte, so a codestream
/// that needs far more steps than it has bytes follows a hostile header rather than data;
/// real frames use a small fraction (DecodeStats::tier2_steps).
class Tier2Budget {
 public:
  explicit Tier2Budget(long long steps) : limit_(steps) {}
  /// The budget of a codestream of `bytes` bytes: 2^24 steps and 128 per byte (real frames,
  /// 4K and 8K with 4 x 4 to 64 x 64 blocks, 1 to 20 layers, every order, use under 2 per
  /// byte; at ~18 ns a step in the worst layouts, a hostile header costs at most ~0.3 s
  /// plus ~2.3 us a byte).
  static Tier2Budget for_bytes(std::size_t bytes) { return Tier2Budget((1LL << 24) + 128LL * static_cast<long long>(bytes)); }
  /// False (and nothing charged) when `steps` would exceed the budget.
  bool charge(long long steps) {
    if (steps < 0 || steps > limit_ - used_) return false;
    used_ += steps;
    return true;
  }
  long long used() const noexcept { return used_; }
  long long left() const noexcept { return limit_ - used_; }

 private:
  long long limit_;
  long long used_ = 0;
};

/// `body`: the tile's packet data (all tile-parts concatenated). `packed_headers`: the
/// packet headers from PPM/PPT, or empty when headers are in `body`.
/// Resilient mode stops at the first damaged packet and keeps what came before it. A
/// progression that ends with packets of the tile never read (POC entries that leave some
/// out) is damage too: ErrorKind::corrupt in strict mode, one damaged packet otherwise.
/// Code-blocks are created (and charged to `budget`) when a packet first brings data to
/// their precinct; the walk's work is charged to `steps`; an exhausted budget is an
/// ErrorKind::limit error in either mode.
Status decode_tile_packets(Tile& tile, Bytes body, Bytes packed_headers, bool headers_packed,
                           const Tier2Options& options, Tier2Counters& counters, MemoryBudget& budget,
                           Tier2Budget& steps);

/// Tier-2 of a tile whose tile-parts each hold whole components (a component-first
/// progression split at component changes, as broadcast and cinema encoders write it, or
/// luma and chroma merged: depacketizer/codestream_tools), one tile-part per thread of
/// `pool`. `parts`: the tile-parts' packet data in order, headers in them (no PPM/PPT).
/// The split is a guess checked by the data: each tile-part's packets must fill it exactly,
/// with no damage, and then the result is what decode_tile_packets makes of the parts
/// joined. Returns false, with the tile as it was, where the guess does not hold or
/// anything went wrong; the caller then reads the tile with decode_tile_packets, which
/// reports what there is to report. The steps of the guess are charged to `steps` either
/// way (a failed guess must not buy a tile work the codestream's budget does not have).
///
/// `between`, when given, is called (on a thread of `pool`) once every tile-part has been read
/// up to its packets of the last resolution of its components, where those come last in it
/// (a resolution-major order within the component: CPRL with one precinct per resolution,
/// RPCL, ...) and at least one tile-part has them: the code-blocks of the other resolutions
/// are then complete (tier-1 may start on them while the rest is read: it runs beside the
/// reading of the last resolutions, and must touch no code-block of theirs). Not called where
/// no tile-part can be cut so. A later failure of the guess (false) still reads the tile
/// again from the start.
bool decode_tile_parts_parallel(Tile& tile, std::span<const Bytes> parts, const Tier2Options& options,
                                Tier2Counters& counters, MemoryBudget& budget, Tier2Budget& steps, WorkPool& pool,
                                const std::function<void()>& between = {});

}  // namespace j2k::decoder::own
