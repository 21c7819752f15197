#pragma once
// The "cuda" decoding backend: parsing and tier-2 on CPU threads; tier-1 on CPU threads
// (the own decoder's coefficient output) or on the GPU (--tier1); everything after
// tier-1 on the GPU.
//
// GPU memory is bounded: every CudaDecoder of a device shares a small pool of
// reconstructors (cuda_reconstructor_limit: one per 4 GiB of device memory, 2 to 16; each
// with its own streams, pinned and device buffers, made only when that many frames are
// decoded at once), leased for one frame at a time, so memory does not grow with the
// number of decode workers beyond the limit; the limit is also how many frames the GPU
// works on at once.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "core/result.hpp"
#include "decoder/decoder.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_reconstructor.hpp"
#include "gpu/cuda_tier1.hpp"

namespace j2k::gpu {

struct CudaDecoderOptions {
  GpuMode mode = GpuMode::automatic;  ///< off: CPU only; on: fail without CUDA; automatic: fall back
  int device = 0;
  decoder::DecodeLimits limits{};
  Tier1Mode tier1 = Tier1Mode::cpu;   ///< gpu: fail on a GPU tier-1 error; automatic: fall back (counted)
  /// Hybrid tier-1 (gpu/tier1_split.hpp) while tier-1 runs on the GPU: -1 the cost model
  /// picks, per frame, how many of the heaviest code-blocks the CPU decodes beside the
  /// kernel; N >= 0 exactly that many (0: every block on the GPU).
  long tier1_host_blocks = -1;
  /// Wait for the GPU by spinning on a core instead of sleeping (CudaReconstructor::Options;
  /// benchmarks compare the two). Applies to reconstructors this decoder's device pool creates.
  bool spin_wait = false;
  /// Tier-1 on the GPU starts before tier-2 ends where the frame allows it
  /// (decoder::EarlyTier1: tile-parts of whole components that end with their last
  /// resolution): the kernel and the CPU's share take every other resolution's code-blocks
  /// while the last resolutions' packets are read, and a second kernel then takes those.
  /// It pays where the last resolution's blocks are light, so it is done in frames of code-blocks
  /// of at most 32 x 32 (broadcast and IMF frames), not with 64 x 64 (false: never).
  bool early_tier1 = true;
  /// GpuMode::automatic and Tier1Mode::automatic: a GPU step that failed (reconstruction,
  /// tier-1) is tried again this long after its failure; the pause doubles while it keeps
  /// failing, up to gpu_retry_most, and is forgotten once the step has gone gpu_retry_most
  /// without failing (a step that fails on some frames only backs off too). A failure may
  /// pass (GPU memory that another program held, a device that was busy): a receiver that
  /// runs for days must not stay on the CPU for good after one. Zero: the next frame.
  std::chrono::milliseconds gpu_retry_first{1000};
  std::chrono::milliseconds gpu_retry_most{60000};
};

/// Reconstructors (and so GPU buffers, and frames the GPU works on at once) per device,
/// shared by all CudaDecoders: at most this many.
constexpr int kMaxReconstructorsPerDevice = 16;
/// The limit for a device with `memory` bytes: one reconstructor per 4 GiB (a 2160 4:2:2
/// frame's buffers take ~0.5 GB), at least 2 and at most kMaxReconstructorsPerDevice. A
/// frame's GPU time is its heaviest code-block's chain, during which the GPU is mostly
/// idle, so frames in flight are what fills a large GPU (issue 15: with 4, an H100 stopped
/// at ~580 frames/s of 1080 however many workers decoded). 0 without memory (no CUDA).
constexpr int reconstructor_limit_for_memory(std::size_t memory) {
  if (memory == 0) return 0;
  const std::size_t per_4gib = memory / (std::size_t{4} << 30);
  return per_4gib < 2 ? 2 : per_4gib > kMaxReconstructorsPerDevice ? kMaxReconstructorsPerDevice : static_cast<int>(per_4gib);
}
/// reconstructor_limit_for_memory of `device`'s memory; 0 without CUDA.
int cuda_reconstructor_limit(int device = 0);
/// Reconstructors alive now for `device` (0 when no CudaDecoder uses it).
int cuda_reconstructors_alive(int device = 0);

/// A decoder::Decoder whose reconstruction runs on the GPU, plus display output.
/// If a GPU step fails in GpuMode::automatic, that frame is reconstructed on the CPU
/// instead and `gpu_active()` turns false until the GPU is tried again
/// (CudaDecoderOptions::gpu_retry_first).
class CudaDecoder : public decoder::Decoder {
 public:
  /// Backend::own: the enum has no "cuda" member yet (decoder/ owns it); see gpu_active().
  decoder::Backend backend() const noexcept override { return decoder::Backend::own; }
  /// True while reconstruction runs on the GPU.
  virtual bool gpu_active() const noexcept = 0;
  /// Decodes and converts for display into `target` (device memory); when
  /// `want_planar`, also returns the planar picture (else an empty one).
  virtual Result<PlanarImage> decode_to_device(Bytes codestream, const decoder::DecodeOptions& options,
                                               const DeviceTarget& target, const ColourInterpretation& colour,
                                               bool want_planar = false) = 0;
  /// Whether the last frame's tier-1 ran on the GPU.
  virtual bool last_tier1_on_gpu() const noexcept = 0;
  /// Frames whose GPU tier-1 failed and that were decoded on the CPU instead (--tier1 auto:
  /// then later frames too, until the GPU's tier-1 is tried again: gpu_retry_first).
  virtual std::uint64_t tier1_fallbacks() const noexcept = 0;
  /// Why the GPU's last step to fail did (tier-1 or reconstruction); empty if none did.
  virtual std::string last_gpu_error() const = 0;
  /// Per-stage GPU times of the last frame (zero when it ran on the CPU).
  virtual GpuTimes last_gpu_times() const = 0;
};

/// Creates the backend. mode off -> the own CPU decoder (not a CudaDecoder);
/// on -> an error if CUDA is unusable; automatic -> CPU decoder when CUDA is unusable.
Result<std::unique_ptr<decoder::Decoder>> make_cuda_decoder(const CudaDecoderOptions& options = {});

/// The same, typed, for callers that want decode_to_device; fails when CUDA is unusable.
Result<std::unique_ptr<CudaDecoder>> make_cuda_decoder_typed(const CudaDecoderOptions& options = {});

}  // namespace j2k::gpu
