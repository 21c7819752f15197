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

/// Where one code-block's state lies in its warp's shared memory (byte offsets; see
/// tier1_block.hpp for what each part holds). A stripe is four rows; its samples are
/// numbered 4x + k (column x, row k) and kept as bits of 32-bit mask words, 8 columns a
/// word.
struct T1SharedLayout {
  std::uint32_t sig = 0;      ///< (stripes + 2) x (words + 2) masks, a zero border all round
  std::uint32_t refine = 0;   ///< stripes x words masks each: significant before the plane,
  std::uint32_t visited = 0;  ///< coded by its significance pass,
  std::uint32_t refined = 0;  ///< refined at least once,
  std::uint32_t near = 0;     ///< with a significant neighbour (refinement contexts),
  std::uint32_t rbits = 0;    ///< the refinement pass's decoded bits
  std::uint32_t colw = 0;     ///< (stripes + 2) x (w + 2) column words
  std::uint32_t ctx = 0;      ///< 20 context words
  std::uint32_t next = 0;     ///< 188 successor words (MQ state table)
  std::uint32_t zc = 0;       ///< 512 zero-coding contexts (3 x 3 neighbourhood)
  std::uint32_t sc = 0;       ///< 1024 sign contexts
  std::uint32_t total = 0;
};
constexpr int t1_mask_words(int w) { return (w + 7) / 8; }
constexpr T1SharedLayout t1_shared_layout(int w, int h) {
  const std::uint32_t stripes = static_cast<std::uint32_t>((h + 3) / 4);
  const std::uint32_t words = static_cast<std::uint32_t>(t1_mask_words(w));
  const std::uint32_t masks = 4 * stripes * words;
  T1SharedLayout l;
  l.sig = 0;
  l.refine = l.sig + 4 * (stripes + 2) * (words + 2);
  l.visited = l.refine + masks;
  l.refined = l.visited + masks;
  l.near = l.refined + masks;
  l.rbits = l.near + masks;
  l.colw = l.rbits + masks;
  l.ctx = l.colw + 4 * (stripes + 2) * static_cast<std::uint32_t>(w + 2);
  l.next = l.ctx + 4 * 20;
  l.zc = l.next + 4 * 188;
  l.sc = l.zc + 512;
  l.total = (l.sc + 1024 + 15) / 16 * 16;
  return l;
}
/// Shared memory of one block's warp (10.4 KB for 64 x 64; at most ~14 KB, 4 x 1024). The
/// magnitudes are not here: they build up in the block's place in the frame's
/// coefficients (global memory), which keeps 20 blocks per H100 SM resident instead of 8.
constexpr std::size_t t1_shared_bytes(int w, int h) { return t1_shared_layout(w, h).total; }

cudaError_t launch_tier1(const T1Launch& launch, cudaStream_t stream);
/// Code-blocks an SM runs at once with `shared_bytes` each (the occupancy calculator: shared
/// memory, registers, the CTA limit); 0 when the runtime cannot say.
int tier1_blocks_per_sm(std::size_t shared_bytes);

/// A code-block decoded elsewhere (the CPU's share of a hybrid tier-1): width x height
/// values at `src` (row stride = width) in a packed array go to `dst` (row stride `stride`)
/// in the frame's coefficients.
struct T1Scatter {
  std::uint64_t dst, src;
  std::uint32_t stride;
  std::uint16_t width, height;
};
/// One CTA per row; rows from a validated table (inside both arrays).
cudaError_t launch_tier1_scatter(const T1Scatter* rows, int count, const std::int32_t* packed,
                                 std::int32_t* coefficients, cudaStream_t stream);

}  // namespace j2k::gpu::cuda
