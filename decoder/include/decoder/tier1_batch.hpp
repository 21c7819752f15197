#pragma once
// Tier-1 work of a whole frame as plain tables, for a tier-1 that does not run here (the
// GPU's): tier-2 stays on the CPU and describes every coded code-block (15444-1 Annex D
// inputs: size, band, bit-planes, passes, style, segments, ROI shift) plus the compressed
// bytes, concatenated, so that the whole frame travels in one copy.
//
// Output layout: the frame's coefficients as one array, the tiles' components' `data`
// vectors (CoefficientFrame::tiles[t].components[c].data) one after the other in tile
// then component order (`component_base`), each value written as in SubbandCoefficients
// (twice the quantisation index with the midpoint in bit 0, ROI shift undone). Code-blocks
// that are not in `blocks` (nothing coded, no magnitude bit-planes) are zero; a block found
// damaged by the tier-1 that decodes it (a wrong segmentation symbol, D.5) is zeroed.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory_resource>
#include <span>
#include <vector>

#include "core/result.hpp"

namespace j2k::decoder {

/// Code-block style bits of COD/COC SPcod (Table A.19), as in the batch's `style`.
enum Tier1Style : std::uint8_t {
  kTier1Bypass = 0x01,        ///< selective arithmetic coding bypass (D.6)
  kTier1Reset = 0x02,         ///< reset context probabilities after each pass
  kTier1TermAll = 0x04,       ///< termination on each pass (tier-2 already made the segments)
  kTier1Causal = 0x08,        ///< vertically causal context formation (D.7)
  kTier1Predictable = 0x10,   ///< predictable termination (nothing to do when decoding)
  kTier1Segmentation = 0x20,  ///< segmentation symbols (D.5)
};

struct Tier1Block {
  std::uint64_t out = 0;         ///< element offset of the block's first coefficient in the frame's array
  std::uint32_t stride = 0;      ///< row stride of the block's subband (elements)
  std::uint32_t byte_offset = 0; ///< start of the block's first segment in `bytes`
  std::uint32_t seg_first = 0;   ///< index of its first segment in `segments`
  std::uint16_t seg_count = 0;
  std::uint16_t passes = 0;      ///< coding passes included (all layers)
  std::uint16_t width = 0, height = 0;
  std::uint8_t numbps = 0;       ///< magnitude bit-planes to decode: Mb + ROI shift - zero bit-planes (1..30)
  std::uint8_t band = 0;         ///< zero-coding table: 0 LL/LH, 1 HL, 2 HH (Table D.1)
  std::uint8_t style = 0;        ///< Tier1Style bits
  std::uint8_t roi_shift = 0;    ///< H.1 maxshift value s (0: none)
};
static_assert(sizeof(Tier1Block) == 32, "the table's row stays 32 bytes");

/// One codeword segment: `length` bytes (following the block's previous segment) that
/// hold `passes` coding passes.
struct Tier1Segment {
  std::uint32_t length = 0;
  std::uint32_t passes = 0;
};

struct Tier1Batch {
  Tier1Batch() = default;
  /// `bytes` in that memory (a pmr vector keeps its resource for life: assigning another
  /// vector to it does not change it, so the resource is given here).
  explicit Tier1Batch(std::pmr::memory_resource* bytes_memory) : bytes(bytes_memory) {}

  std::vector<Tier1Block> blocks;
  std::vector<Tier1Segment> segments;
  /// The segments' bytes. Its memory resource is the owner's choice: the GPU backend gives
  /// it pinned host memory, so that the copy engine reads the bytes where tier-2 gathered
  /// them (no staging copy); clear() keeps it.
  std::pmr::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> component_base;  ///< per tile-component (tile-major): first element
  std::uint64_t coefficient_count = 0;        ///< elements in the frame's array
  std::uint64_t rejected_blocks = 0;          ///< damaged (more zero bit-planes than the band has): zeroed, as the CPU does

  void clear() {
    blocks.clear();
    segments.clear();
    bytes.clear();
    component_base.clear();
    coefficient_count = 0;
    rejected_blocks = 0;
  }
};

/// Tier-1 started before tier-2 ends (CoefficientDecoder::decode_deferred). In a frame of one
/// tile whose tile-parts each hold whole components and end with the packets of their
/// components' last resolution (CPRL with one precinct per resolution, as broadcast encoders
/// write 1080 frames, or RPCL), once every other packet is read, if they gave the table rows,
/// `start` is called on a thread of the decoder's pool, beside the threads that read the last resolutions' packets,
/// with the batch as it stands: rows [0, rows) are final (every packet of their code-blocks
/// read) and stay where they are; the last resolutions' rows follow them. What `start`
/// writes is the decoding thread's again when decode_deferred returns. `start` must not keep references
/// into `blocks` or `segments` (they grow after it returns); `bytes` does not move while the
/// frame is decoded (its capacity covers everything it can receive), so the range it held
/// may be read from elsewhere (a copy engine) until the frame is done with.
struct EarlyTier1 {
  std::function<void(const Tier1Batch& batch)> start;
  std::size_t rows = 0;  ///< set by decode_deferred: the rows handed to `start` (0: it was not called)
  /// Set by decode_deferred: those rows are the final batch's first rows, unchanged. False after
  /// a start when tier-2 had to read the tile again (a tile-part that did not hold what its
  /// first packets promised): the batch was rebuilt, and what started on it is void.
  bool kept = false;
};

/// Limits that a tier-1 may rely on (15444-1 A.6.1: xcb, ycb <= 10 and xcb + ycb <= 12).
constexpr int kTier1MaxBlockSamples = 4096;
constexpr int kTier1MaxSide = 1024;
constexpr int kTier1MaxPasses = 3 * 30 - 2 + 64;  ///< more than the planes hold is ignored, never read past

/// Checks every row against the arrays it points into: sizes and strides inside
/// `coefficient_count`, segments inside `segments` and their bytes inside `bytes`,
/// bit-planes, passes, band and ROI shift in range. A batch that passes may be handed to
/// a tier-1 that trusts it (no access outside the arrays); one that fails is rejected
/// whole (ErrorKind::corrupt, naming the first bad row).
Status validate_tier1_batch(const Tier1Batch& batch);

/// The CPU tier-1 over a batch (the reference for other tier-1s): decodes every block into
/// `coefficients` (coefficient_count elements; blocks not listed are left as they are).
/// Returns the number of damaged (zeroed) blocks. The batch must be valid.
std::uint64_t decode_tier1_batch_cpu(const Tier1Batch& batch, std::int32_t* coefficients);

/// Packed layout of some rows of a batch (a tier-1 split between CPU and GPU: the rows that
/// the CPU decodes travel to the device in one copy): row rows[j] occupies width x height
/// elements (row stride = width) from offsets[j] on, one after the other. Returns the
/// total element count.
std::uint64_t tier1_packed_offsets(const Tier1Batch& batch, std::span<const std::uint32_t> rows,
                                   std::vector<std::uint64_t>& offsets);
/// `rows` of a valid batch `from` as a batch of their own in `to` (cleared first): row j of
/// `to` is row rows[j] of `from` with its segments and their bytes copied, `component_base`
/// and `coefficient_count` the same. A CPU share of an early tier-1 (EarlyTier1) reads such a
/// copy while tier-2 still adds rows to `from`.
void copy_tier1_rows(const Tier1Batch& from, std::span<const std::uint32_t> rows, Tier1Batch& to);
/// The CPU tier-1 over `rows` of a valid batch into `packed` (tier1_packed_offsets layout),
/// on the calling thread (CoefficientDecoder::decode_tier1_rows uses its pool). Returns the
/// number of damaged (zeroed) blocks.
std::uint64_t decode_tier1_rows_cpu(const Tier1Batch& batch, std::span<const std::uint32_t> rows, std::int32_t* packed);

}  // namespace j2k::decoder
