// Tier-1 on the GPU (15444-1 Annex C, D, H.1): one warp decodes one code-block.
//
// The decode itself is tier1_block.hpp (shared with the host emulation that the tests run
// without a GPU). A code-block's coded symbols are one chain of data-dependent MQ decodes,
// so one lane runs them; its 31 neighbours clear the state, build the lookup tables, work
// out the refinement contexts before each refinement pass, apply its bits to the
// magnitudes after it, and write the block out. Many code-blocks run at once, one per
// 32-thread CTA, and the host orders the table heaviest first (stage_tier1), so that the
// longest chains start in the first wave.
#include <cuda_runtime.h>

#include <cstdint>

#include "tier1_block.hpp"
#include "tier1_kernel.hpp"

namespace j2k::gpu::cuda {

namespace {

__constant__ std::uint32_t kQe[47] = J2K_T1_QE_TABLE;

__global__ void __launch_bounds__(32) tier1_kernel(const T1Launch L) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = static_cast<int>(threadIdx.x);
  const bool ok = t1::run_block(L, static_cast<int>(blockIdx.x), smem, kQe, lane, 32);
  if (!ok && lane == 0) atomicAdd(L.damaged, 1u);
}

__global__ void __launch_bounds__(256) tier1_scatter_kernel(const T1Scatter* rows, const std::int32_t* packed,
                                                            std::int32_t* coefficients) {
  const T1Scatter r = rows[blockIdx.x];
  const int w = r.width, n = r.width * r.height;
  const std::int32_t* src = packed + r.src;
  std::int32_t* dst = coefficients + r.dst;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    const int y = i / w, x = i - y * w;
    dst[static_cast<std::uint64_t>(y) * r.stride + x] = src[i];
  }
}

}  // namespace

cudaError_t launch_tier1_scatter(const T1Scatter* rows, int count, const std::int32_t* packed,
                                 std::int32_t* coefficients, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  tier1_scatter_kernel<<<count, 256, 0, stream>>>(rows, packed, coefficients);
  return cudaGetLastError();
}

int tier1_blocks_per_sm(std::size_t shared_bytes) {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, tier1_kernel, 32, shared_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

cudaError_t launch_tier1(const T1Launch& launch, cudaStream_t stream) {
  if (launch.count <= 0) return cudaSuccess;
  if (launch.shared_bytes > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(tier1_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(launch.shared_bytes));
    if (e != cudaSuccess) return e;
  }
  tier1_kernel<<<launch.count, 32, launch.shared_bytes, stream>>>(launch);
  return cudaGetLastError();
}

}  // namespace j2k::gpu::cuda
