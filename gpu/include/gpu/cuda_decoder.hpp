#pragma once
// The "cuda" decoding backend: parsing, tier-2 and tier-1 on CPU threads (the own
// decoder's coefficient output), everything after tier-1 on the GPU.
#include <memory>

#include "core/result.hpp"
#include "decoder/decoder.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_reconstructor.hpp"

namespace j2k::gpu {

struct CudaDecoderOptions {
  GpuMode mode = GpuMode::automatic;  ///< off: CPU only; on: fail without CUDA; automatic: fall back
  int device = 0;
  decoder::DecodeLimits limits{};
};

/// A decoder::Decoder whose reconstruction runs on the GPU, plus display output.
/// If a GPU step fails in GpuMode::automatic, that frame (and every later one) is
/// reconstructed on the CPU instead and `gpu_active()` turns false.
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
  /// Decodes and writes the display picture into a registered GL PBO (map, kernel,
  /// unmap on the decoder's stream; returns once the PBO is unmapped and written).
  /// row0/row_step place a field picture (0 or 1, and 2) for field weave.
  virtual Status decode_to_pbo(Bytes codestream, const decoder::DecodeOptions& options, CudaGlPbo& pbo,
                               const ColourInterpretation& colour, int row0 = 0, int row_step = 1) = 0;
  /// Per-stage GPU times of the last frame (zero when it ran on the CPU).
  virtual GpuTimes last_gpu_times() const = 0;
};

/// Creates the backend. mode off -> the own CPU decoder (not a CudaDecoder);
/// on -> an error if CUDA is unusable; automatic -> CPU decoder when CUDA is unusable.
Result<std::unique_ptr<decoder::Decoder>> make_cuda_decoder(const CudaDecoderOptions& options = {});

/// The same, typed, for callers that want decode_to_pbo; fails when CUDA is unusable.
Result<std::unique_ptr<CudaDecoder>> make_cuda_decoder_typed(const CudaDecoderOptions& options = {});

}  // namespace j2k::gpu
