#pragma once
// Tier-2 (15444-1 Annex B.9–B.12): walks the packets of a tile in progression order
// (with POC) and assigns each code-block its codeword segments.
#include <cstdint>

#include "core/result.hpp"
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

}  // namespace j2k::decoder::own
