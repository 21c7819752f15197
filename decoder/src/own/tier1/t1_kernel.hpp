#pragma once
// The tier-1 kernel's interface: plain data only, so that the kernel can be compiled
// twice (baseline x86-64 / any target, and x86-64-v3 with BMI/LZCNT) and picked at run
// time without the two copies sharing any out-of-line function (see t1_kernel.inl).
#include <cstdint>

namespace j2k::decoder::own {

struct T1Segment {
  std::uint32_t offset;  ///< into T1Kernel::bytes; each segment is followed by 0xFF 0xFF
  int passes;
};

/// Mask words per stripe (one bit per sample, 16 columns per word).
constexpr int t1_mask_words(int w) { return (4 * w + 63) / 64; }
/// Scratch words the kernel needs for a w x h block (T1Kernel::masks).
constexpr int t1_mask_size(int w, int h) {
  const int stripes = (h + 3) / 4, words = t1_mask_words(w);
  return (stripes + 2) * (words + 2) + 2 * stripes * words;
}

struct T1Kernel {
  std::uint16_t* flags;  ///< (stripes + 2) x (w + 2) x 4, zeroed
  std::int32_t* data;    ///< stripes x w x 4, need not be cleared
  std::uint64_t* masks;  ///< t1_mask_size(w, h) scratch words
  int w, h;
  int zc_table;          ///< 0 LL/LH, 1 HL, 2 HH
  int numbps;
  int passes;
  const T1Segment* segments;
  int num_segments;
  const std::uint8_t* bytes;
  bool bypass, reset, causal, segmentation;
};

namespace t1_base {
/// Runs the coding passes; false when a segmentation symbol was wrong.
bool run_passes(const T1Kernel& k);
}
namespace t1_v3 {
bool run_passes(const T1Kernel& k);
}

// Which copy runs is the dispatch table's choice (dsp.hpp).

}  // namespace j2k::decoder::own
