#pragma once
// Which decoder a tool or the receive pipeline uses: decided here and only here.
//
//   backend own       our decoder; reconstruction on the GPU when `gpu` allows (on / auto)
//   backend cuda      our decoder with GPU reconstruction required (= own + gpu on)
//   backend openjpeg  OpenJPEG, on the CPU
//
// Every tool starts from the same default (own, gpu auto) and builds through make_decoder().
#include <memory>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "decoder/decoder.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_tier1.hpp"

namespace j2k::gpu {
class CudaDecoder;
}

namespace j2k::app {

enum class DecoderBackend { own, cuda, openjpeg };

std::optional<DecoderBackend> parse_decoder_backend(const std::string& text);
const char* to_string(DecoderBackend backend) noexcept;

struct DecoderChoice {
  DecoderBackend backend = DecoderBackend::own;
  gpu::GpuMode gpu = gpu::GpuMode::automatic;
  decoder::DecodeLimits limits{};
  /// Where code-blocks are decoded (--tier1): on the CPU, on the GPU (required), or on the
  /// GPU where usable (auto, the default: wherever the reconstruction runs on the GPU, tier-1
  /// does too — faster on every frame measured, bit-exact). The GPU needs the own decoder with
  /// the GPU not off.
  gpu::Tier1Mode tier1 = gpu::Tier1Mode::automatic;
  /// --tier1-host: with tier-1 on the GPU, the heaviest code-blocks decoded on the CPU
  /// beside the kernel (hybrid tier-1, gpu/tier1_split.hpp): -1 a per-frame cost model
  /// picks how many, 0 none, N the N heaviest.
  long tier1_host_blocks = -1;

  /// The GPU mode the decoder runs with: cuda means on, openjpeg means off, and --tier1 gpu
  /// makes auto on.
  gpu::GpuMode effective_gpu() const noexcept;
  /// True when this choice may reconstruct on the GPU (own/cuda with the GPU not off).
  bool may_use_gpu() const noexcept { return effective_gpu() != gpu::GpuMode::off; }
  /// "own (GPU auto)", "cuda", "openjpeg" for messages.
  std::string describe() const;
  /// Contradictions a user can type: `--backend cuda --gpu off`, `--backend openjpeg --gpu on`.
  Status validate() const;
};

/// From the command-line words ("own|cuda|openjpeg", "on|off|auto", "cpu|gpu|auto"); the error
/// says which is wrong.
Result<DecoderChoice> parse_decoder_choice(const std::string& backend, const std::string& gpu,
                                           const std::string& tier1 = "auto");

/// The one factory: every tool and the receive pipeline build their decoders here.
Result<std::unique_ptr<decoder::Decoder>> make_decoder(const DecoderChoice& choice);

/// The same decoder typed as the CUDA decoder (for the GPU display path); fails when this
/// choice cannot use the GPU or CUDA is unusable, and the caller then uses make_decoder().
/// (Callers that hold the result include gpu/cuda_decoder.hpp.)
Result<std::unique_ptr<gpu::CudaDecoder>> make_gpu_decoder(const DecoderChoice& choice);

}  // namespace j2k::app
