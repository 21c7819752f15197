#pragma once
// Tier-1 (15444-1 Annex D): decodes one code-block's coding passes into coefficients.
#include <cstdint>
#include <vector>

#include "tier1/t1_kernel.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder::own {

/// What tier-1 decodes of a code-block, decided from tier-2's data alone, so that every
/// tier-1 (CodeBlockDecoder, the tables for the GPU) does the same work:
///   - numbps = Mb - P (B.10.5). P > Mb, or P = Mb with coded passes, cannot come from an
///     encoder (P counts the missing bit-planes of Mb; a block with none left has nothing
///     to code), and beyond 30 planes the magnitudes leave 32 bits: the block is damaged.
///   - passes beyond the last bit-plane are not coding passes (D.1: 3 * numbps - 2).
/// The bytes do not bound the passes further: a terminated segment that codes no symbol,
/// or only symbols the decoder's 1-bit feed past the end reproduces, may be empty (C.3.4;
/// the corpus's -M 63 streams from both encoders have such passes), so a pass without
/// bytes is decoded like any other. Work per block stays below 3 * 30 - 2 passes over its
/// samples, and blocks exist only where packets brought data (materialize_code_blocks).
struct BlockPlan {
  int numbps = 0;        ///< magnitude bit-planes coded
  int passes = 0;        ///< coding passes to decode; 0: the block stays zero
  int segments = 0;      ///< codeword segments those passes use
  int zeroed = 0;        ///< why the block stays zero, when it must not: kDamaged, kTooDeep
  // Four ints, no padding: a plan copied into a CodeBlockJob is two 8-byte moves (with a bool
  // last, 13 bytes were copied through an overlapping load: a store-forwarding stall).
};
/// BlockPlan::zeroed: inconsistent with 15444-1 (more zero bit-planes than the band has):
/// damage, counted; more magnitude bit-planes than 30 (a large ROI shift, A.6.3 allows up to
/// 37: legal, but past the 32-bit samples this decoder keeps, as OpenJPEG's): counted apart.
constexpr int kDamaged = 1, kTooDeep = 2;
BlockPlan plan_block(const CodeBlock& cb, int magnitude_bits);

/// What one code-block decode needs; `out` points at the block's first coefficient in
/// its subband (row stride `stride`), written as 2x the quantisation index with the
/// reconstruction midpoint in bit 0 (see coefficients.hpp).
struct CodeBlockJob {
  // A constructor of our own, as CodeBlock's: `jobs.emplace_back()` would otherwise zero-fill
  // the whole object first (a `rep stos` per code-block, measured at a fifth of
  // collect_tier1_jobs once the job grew past 80 bytes) before the initialisers below.
  CodeBlockJob() noexcept {}
  const CodeBlock* block = nullptr;
  BandOrientation orientation = BandOrientation::LL;
  int magnitude_bits = 0;  ///< Mb + ROI shift
  int roi_shift = 0;
  int cb_style = 0;
  std::int32_t* out = nullptr;
  int stride = 0;
  std::uint32_t bytes = 0;  ///< for scheduling (largest first)
  Rect zero_rect;           ///< when `block` is null: a precinct without data, zeroed at `out`
  const std::int32_t* frame_data = nullptr;  ///< the tile-component's data (Tier1Batch offsets)
  std::uint64_t frame_base = 0;              ///< its first element in the frame's array
  BlockPlan plan;                            ///< plan_block's answer, as collect_tier1_jobs found it
};


/// Tier-1 kernels (dsp.hpp); declared here so that this header needs no more than tier-1.
struct T1Dsp;

/// Per-thread scratch, reused from block to block so the hot data stays in cache.
class CodeBlockDecoder {
 public:
  /// `dsp`: the kernel table to use (t1_dsp(): all this CPU has); it must outlive the decoder.
  explicit CodeBlockDecoder(const T1Dsp& dsp);
  /// Decodes the passes plan_block() allows and writes the whole block: what was
  /// decoded, or zeros when nothing was coded or the block is damaged. Returns false
  /// when it is damaged (plan_block(), or a wrong segmentation symbol).
  bool decode(const CodeBlockJob& job);

 private:
  std::vector<std::uint16_t> flags_;
  std::vector<std::int32_t> data_;
  std::vector<std::uint64_t> masks_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint32_t> seg_offsets_;
  std::vector<T1Segment> segs_;
  const T1Dsp* dsp_;
};

}  // namespace j2k::decoder::own
