#pragma once
// How far a codestream can be decoded at reduced resolution: its decomposition levels.
#include <optional>

#include "core/byte_reader.hpp"

namespace j2k::pipeline {

/// The fewest decomposition levels (NL, ISO/IEC 15444-1 A.6.1) any component has in any tile:
/// the main header's COD and COCs, and those of every tile-part header, which override them
/// for their tile. Decoding at `reduce` above this is impossible (B.5); below it, possible.
/// nullopt when the headers cannot be read (the decoder then reports what is wrong).
std::optional<int> fewest_decomposition_levels(Bytes codestream);

}  // namespace j2k::pipeline
