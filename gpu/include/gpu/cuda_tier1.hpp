#pragma once
// Tier-1 on the GPU (15444-1 Annex C, D, H.1) for a frame's code-block table
// (decoder::Tier1Batch): the decoder backend runs it inside CudaReconstructor (see
// ReconstructRequest::tier1); this synchronous entry point serves the tests and the bench.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "decoder/tier1_batch.hpp"

namespace j2k::gpu {

/// --tier1 cpu|gpu|auto: where code-blocks are decoded (auto: the GPU where CUDA is usable,
/// the CPU otherwise and after any GPU error).
enum class Tier1Mode { cpu, gpu, automatic };
const char* to_string(Tier1Mode mode) noexcept;
/// "cpu", "gpu", "auto"; nullopt otherwise.
std::optional<Tier1Mode> parse_tier1_mode(const std::string& text);

/// Validates the batch (decoder::validate_tier1_batch), decodes it on `device` and returns
/// the frame's coefficients (coefficient_count values; zero where no block writes) with the
/// count of damaged blocks. ErrorKind::unsupported without CUDA.
struct Tier1GpuResult {
  std::vector<std::int32_t> coefficients;
  std::uint64_t damaged = 0;
  std::size_t host_blocks = 0;  ///< of the blocks, decoded on the CPU (hybrid split)
};
/// `host_blocks` > 0: a hybrid split (gpu/tier1_split.hpp) with that many of the heaviest
/// blocks decoded on the CPU (this thread) and scattered into the device's coefficients.
Result<Tier1GpuResult> decode_tier1_batch_gpu(const decoder::Tier1Batch& batch, int device = 0, long host_blocks = 0);
/// Code-blocks the GPU tier-1 decodes at once on `device` (its SMs times the warps of
/// 64 x 64 blocks that fit on one); 0 without CUDA.
int tier1_gpu_chains(int device = 0);
/// The GPU kernel's own code (one code-block per warp) run on the host with one lane, for
/// the tests on machines without a GPU; the same result as decode_tier1_batch_gpu.
/// ErrorKind::unsupported in a build without CUDA.
Result<Tier1GpuResult> decode_tier1_batch_emulated(const decoder::Tier1Batch& batch);

}  // namespace j2k::gpu
