#pragma once
// The GPU tier-1 kernel's launcher and the table rows it reads: the same layout as
// decoder::Tier1Block / Tier1Segment (decoder/tier1_batch.hpp; the host side checks that
// with static_asserts and copies the rows as they are). Kept free of the decoder's
// headers so that nvcc compiles this as plain C++17.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace j2k::gpu::cuda {

struct T1Block {
  std::uint64_t out;
  std::uint32_t stride, byte_offset, seg_first;
  std::uint16_t seg_count, passes, width, height;
  std::uint8_t numbps, band, style, roi_shift;
};
struct T1Segment {
  std::uint32_t length, passes;
};
constexpr std::uint8_t kT1Bypass = 0x01, kT1Reset = 0x02, kT1Causal = 0x08, kT1Segmentation = 0x20;

/// One launch over a validated table (decoder::validate_tier1_batch): every row's block
/// lies inside `coefficients`, its segments inside `bytes`.
struct T1Launch {
  const T1Block* blocks = nullptr;
  int count = 0;
  const T1Segment* segments = nullptr;
  const std::uint8_t* bytes = nullptr;
  std::size_t shared_bytes = 0;                    ///< t1_shared_bytes of the largest block
  std::int32_t* coefficients = nullptr;            ///< zeroed where no block writes
  unsigned* damaged = nullptr;                     ///< += blocks zeroed for a wrong segmentation symbol
};

/// State words of one block (stripe columns with a border, see tier1.cu).
constexpr std::uint32_t t1_state_words(int w, int h) {
  return static_cast<std::uint32_t>(w + 2) * static_cast<std::uint32_t>((h + 3) / 4 + 2);
}
/// Shared memory of one block: its state and its magnitudes (at most 28.7 KB: 1024 x 4).
constexpr std::size_t t1_shared_bytes(int w, int h) {
  return 4 * (static_cast<std::size_t>(t1_state_words(w, h)) + static_cast<std::size_t>(w) * h);
}

cudaError_t launch_tier1(const T1Launch& launch, cudaStream_t stream);

}  // namespace j2k::gpu::cuda
