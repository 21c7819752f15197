#pragma once
// Staging of a Tier1Batch for the GPU kernel: where its tables go in a staging area
// (copied to the device with everything else in one copy) and the launch that reads them.
#include <cstddef>
#include <cstdint>
#include <span>

#include "decoder/tier1_batch.hpp"
#include "tier1_kernel.hpp"

namespace j2k::gpu::detail {

struct Tier1Layout {
  std::size_t blocks_off = 0, segments_off = 0, bytes_off = 0, end = 0;  ///< bytes from the area's start
  std::size_t shared_bytes = 0;  ///< per CTA: the largest block's state and magnitudes
  int count = 0;
};

/// Where the tables for the kernel's `rows` of the batch (heaviest first: its CTAs start in
/// table order, so the longest chains start in the first wave) go from byte `base` on
/// (aligned), and the shared memory they need.
Tier1Layout plan_tier1(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows, std::size_t base);
/// Writes the tables (those rows as they are, all segments and, unless `with_bytes` is
/// false, the bytes) at `area` + offsets.
void stage_tier1(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows, const Tier1Layout& layout,
                 std::byte* area, bool with_bytes = true);

/// The CPU's share of a hybrid tier-1 in its own staging area: the scatter rows
/// (cuda::T1Scatter) and then the packed coefficients (decoder::tier1_packed_offsets
/// layout) that the CPU decodes into.
struct Tier1HostLayout {
  std::size_t table_off = 0, packed_off = 0, end = 0;  ///< bytes from the area's start
  int count = 0;
};
Tier1HostLayout plan_tier1_host(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows);
/// Writes the scatter rows; returns where the CPU writes its coefficients.
std::int32_t* stage_tier1_host(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows,
                               const Tier1HostLayout& layout, std::byte* area);
/// Enqueues the scatter of a staged, copied host share at `device_area` into `coefficients`.
cudaError_t scatter_tier1_host(const Tier1HostLayout& layout, const std::byte* device_area, std::int32_t* coefficients,
                               cudaStream_t stream);
/// The launch for a staged batch whose area is at `device_area` on the device.
cuda::T1Launch tier1_launch(const Tier1Layout& layout, const std::byte* device_area, std::int32_t* coefficients,
                            unsigned* damaged);

}  // namespace j2k::gpu::detail
