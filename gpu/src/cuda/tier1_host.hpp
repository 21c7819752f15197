#pragma once
// Staging of a Tier1Batch for the GPU kernel: where its tables go in a staging area
// (copied to the device with everything else in one copy) and the launch that reads them.
#include <cstddef>
#include <cstdint>

#include "decoder/tier1_batch.hpp"
#include "tier1_kernel.hpp"

namespace j2k::gpu::detail {

struct Tier1Layout {
  std::size_t blocks_off = 0, segments_off = 0, bytes_off = 0, end = 0;  ///< bytes from the area's start
  std::size_t shared_bytes = 0;  ///< per CTA: the largest block's state and magnitudes
  int count = 0;
};

/// Where the batch's tables go from byte `base` on (aligned), and the shared memory it needs.
Tier1Layout plan_tier1(const decoder::Tier1Batch& batch, std::size_t base);
/// Writes the tables (rows as they are, bytes) at `area` + offsets.
void stage_tier1(const decoder::Tier1Batch& batch, const Tier1Layout& layout, std::byte* area);
/// The launch for a staged batch whose area is at `device_area` on the device.
cuda::T1Launch tier1_launch(const Tier1Layout& layout, const std::byte* device_area, std::int32_t* coefficients,
                            unsigned* damaged);

}  // namespace j2k::gpu::detail
