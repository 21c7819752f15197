#pragma once
// A frame's tier-1 work as a list of jobs, made from tier-2's tiles.
#include <cstdint>
#include <vector>

#include "decoder/coefficients.hpp"
#include "decoder/tier1_batch.hpp"
#include "tier1/code_block_decoder.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder::own {

struct Tier1Work {
  std::uint64_t coded_blocks = 0;         ///< code-blocks with passes to decode (plan_block)
  std::uint64_t coding_passes = 0;        ///< their passes
  std::uint64_t constant_components = 0;  ///< tile-components without any (ComponentCoefficients::zero)
  std::uint64_t zero_fills = 0;           ///< zeroing jobs (areas without data, merged)
  /// Damaged code-blocks (plan_block) of those tile-components: their jobs are dropped, so
  /// tier-1 does not count them (it counts the damaged blocks of the jobs it runs).
  std::uint64_t dropped_damaged_blocks = 0;
  /// Code-blocks of more than 30 bit-planes (plan_block: kTooDeep), all of them: zeroed.
  std::uint64_t too_deep_blocks = 0;
};

/// Appends to `jobs` one job per code-block of the resolutions kept, and one zeroing job per
/// area that no packet reached: the coefficient buffers are recycled without clearing, so
/// every coefficient is written by exactly one job. Areas without data are merged into
/// few rectangles (runs of precincts, runs of rows). A tile-component without a single
/// coding pass to decode is marked `zero` and cleared subband by subband (without buffers,
/// a tile without data costs its geometry only).
///
/// A collection in two parts (tier-1 started before tier-2 ends, decode_deferred's
/// EarlyTier1): CollectPart::early_resolutions appends the jobs of the code-blocks of every
/// resolution but each tile-component's last (no zeroing jobs, `zero` flags untouched) and
/// notes in `carry` what the full collection would have counted there;
/// CollectPart::last_resolutions then appends the last resolutions' jobs and returns the
/// frame's work as CollectPart::all would (and the same jobs for those resolutions; a
/// tile-component found without a coding pass is cleared subband by subband as there).
enum class CollectPart { all, early_resolutions, last_resolutions };
struct CollectCarry {
  struct Component {
    std::uint64_t passes = 0, zero_fills = 0, coded_blocks = 0;
  };
  std::vector<Component> components;  ///< per tile-component, tile-major
};
Tier1Work collect_tier1_jobs(std::vector<Tile>& tiles, CoefficientFrame& frame, std::vector<CodeBlockJob>& jobs,
                             CollectPart part = CollectPart::all, CollectCarry* carry = nullptr);

/// One row of a Tier1Batch through `dec` (`cb`: its reused scratch) into `out` with row
/// stride `stride`; false when the block was damaged (and zeroed).
bool decode_tier1_row(CodeBlockDecoder& dec, CodeBlock& cb, const Tier1Batch& batch, const Tier1Block& b,
                      std::int32_t* out, std::uint32_t stride);

}  // namespace j2k::decoder::own
