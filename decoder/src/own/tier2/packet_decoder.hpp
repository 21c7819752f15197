#pragma once
// Tier-2 (15444-1 Annex B.9–B.12): walks the packets of a tile in progression order
// (with POC) and assigns each code-block its codeword segments.
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
};

struct Tier2Options {
  int max_layers = 0;  ///< 0 = all
  bool strict = false;
};

/// `body`: the tile's packet data (all tile-parts concatenated). `packed_headers`: the
/// packet headers from PPM/PPT, or empty when headers are in `body`.
/// Resilient mode stops at the first damaged packet and keeps what came before it.
/// Code-blocks are created (and charged to `budget`) when a packet first brings data to
/// their precinct; an exhausted budget is an ErrorKind::limit error in either mode.
Status decode_tile_packets(Tile& tile, Bytes body, Bytes packed_headers, bool headers_packed,
                           const Tier2Options& options, Tier2Counters& counters, MemoryBudget& budget);

/// Tier-2 of a tile whose tile-parts each hold whole components (a component-first
/// progression split at component changes, as broadcast and cinema encoders write it, or
/// luma and chroma merged: depacketizer/codestream_tools), one tile-part per thread of
/// `pool`. `parts`: the tile-parts' packet data in order, headers in them (no PPM/PPT).
/// The split is a guess checked by the data: each tile-part's packets must fill it exactly,
/// with no damage, and then the result is what decode_tile_packets makes of the parts
/// joined. Returns false, with the tile as it was, where the guess does not hold or
/// anything went wrong; the caller then reads the tile with decode_tile_packets, which
/// reports what there is to report.
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
                                Tier2Counters& counters, MemoryBudget& budget, WorkPool& pool,
                                const std::function<void()>& between = {});

}  // namespace j2k::decoder::own
