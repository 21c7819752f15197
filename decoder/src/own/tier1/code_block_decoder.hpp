#pragma once
// Tier-1 (15444-1 Annex D): decodes one code-block's coding passes into coefficients.
#include <cstdint>
#include <vector>

#include "tier1/t1_kernel.hpp"
#include "tier2/tile_structure.hpp"

namespace j2k::decoder::own {

/// What one code-block decode needs; `out` points at the block's first coefficient in
/// its subband (row stride `stride`), written as 2x the quantisation index with the
/// reconstruction midpoint in bit 0 (see coefficients.hpp).
struct CodeBlockJob {
  const CodeBlock* block = nullptr;
  BandOrientation orientation = BandOrientation::LL;
  int magnitude_bits = 0;  ///< Mb + ROI shift
  int roi_shift = 0;
  int cb_style = 0;
  std::int32_t* out = nullptr;
  int stride = 0;
  std::uint32_t bytes = 0;  ///< for scheduling (largest first)
  Rect zero_rect;           ///< when `block` is null: a precinct without data, zeroed at `out`
};

/// Tier-1 kernels (dsp.hpp); declared here so that this header needs no more than tier-1.
struct T1Dsp;

/// Per-thread scratch, reused from block to block so the hot data stays in cache.
class CodeBlockDecoder {
 public:
  /// `dsp`: the kernel table to use (t1_dsp(): all this CPU has); it must outlive the decoder.
  explicit CodeBlockDecoder(const T1Dsp& dsp);
  /// Decodes; returns false when the block was found damaged (its output is then zeroed).
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
