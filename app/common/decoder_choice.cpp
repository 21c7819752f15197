#include "common/decoder_choice.hpp"

#include <fmt/format.h>

#include "core/enum_names.hpp"
#include "gpu/cuda_decoder.hpp"

namespace j2k::app {

namespace {
constexpr EnumName<DecoderBackend> kBackends[] = {
    {DecoderBackend::own, "own"}, {DecoderBackend::cuda, "cuda"}, {DecoderBackend::openjpeg, "openjpeg"}};
}  // namespace

std::optional<DecoderBackend> parse_decoder_backend(const std::string& text) { return value_of(kBackends, text); }
const char* to_string(DecoderBackend backend) noexcept { return name_of(kBackends, backend); }

gpu::GpuMode DecoderChoice::effective_gpu() const noexcept {
  switch (backend) {
    case DecoderBackend::cuda: return gpu::GpuMode::on;
    case DecoderBackend::openjpeg: return gpu::GpuMode::off;
    case DecoderBackend::own: break;
  }
  // --tier1 gpu needs the GPU: with --gpu auto it is required, as with --backend cuda (it
  // used to decode on the CPU without a word where no GPU was usable).
  if (tier1 == gpu::Tier1Mode::gpu && gpu == gpu::GpuMode::automatic) return gpu::GpuMode::on;
  return gpu;
}

std::string DecoderChoice::describe() const {
  // Only a choice that differs from what the GPU setting implies is named.
  const bool named = tier1 == gpu::Tier1Mode::gpu || (tier1 == gpu::Tier1Mode::cpu && may_use_gpu());
  const std::string t1 = named ? fmt::format(", tier-1 {}", gpu::to_string(tier1)) : "";
  if (backend != DecoderBackend::own) return to_string(backend) + t1;
  return fmt::format("own (GPU {}{})", gpu::to_string(gpu), t1);
}

Status DecoderChoice::validate() const {
  if (backend == DecoderBackend::cuda && gpu == gpu::GpuMode::off)
    return make_error(ErrorKind::corrupt, "--backend cuda reconstructs on the GPU: it cannot be combined with --gpu off");
  if (backend == DecoderBackend::openjpeg && gpu == gpu::GpuMode::on)
    return make_error(ErrorKind::corrupt, "--backend openjpeg runs on the CPU: it cannot be combined with --gpu on");
  if (tier1 == gpu::Tier1Mode::gpu && effective_gpu() == gpu::GpuMode::off)
    return make_error(ErrorKind::corrupt, backend == DecoderBackend::openjpeg
                                              ? "--tier1 gpu is our decoder's: it cannot be combined with --backend openjpeg"
                                              : "--tier1 gpu needs the GPU: it cannot be combined with --gpu off");
  return {};
}

Result<DecoderChoice> parse_decoder_choice(const std::string& backend, const std::string& gpu, const std::string& tier1) {
  DecoderChoice c;
  auto b = parse_decoder_backend(backend);
  if (!b) return make_error(ErrorKind::corrupt, fmt::format("--backend '{}' is not own, cuda or openjpeg", backend));
  auto g = gpu::parse_gpu_mode(gpu);
  if (!g) return make_error(ErrorKind::corrupt, fmt::format("--gpu '{}' is not on, off or auto", gpu));
  auto t = gpu::parse_tier1_mode(tier1);
  if (!t) return make_error(ErrorKind::corrupt, fmt::format("--tier1 '{}' is not cpu, gpu or auto", tier1));
  c.backend = *b;
  c.gpu = *g;
  c.tier1 = *t;
  if (auto ok = c.validate(); !ok) return ok.error();
  return c;
}

Result<std::unique_ptr<decoder::Decoder>> make_decoder(const DecoderChoice& choice) {
  if (auto ok = choice.validate(); !ok) return ok.error();
  if (choice.backend == DecoderBackend::openjpeg) return decoder::make_decoder(decoder::Backend::openjpeg, choice.limits);
  // The own decoder: the CUDA decoder wraps it and reconstructs on the CPU when the mode is
  // off, or when it is auto and no GPU is usable. (decoder/ knows nothing of GPUs.)
  if (choice.effective_gpu() == gpu::GpuMode::off) return decoder::make_decoder(decoder::Backend::own, choice.limits);
  return gpu::make_cuda_decoder({choice.effective_gpu(), 0, choice.limits, choice.tier1, choice.tier1_host_blocks});
}

Result<std::unique_ptr<gpu::CudaDecoder>> make_gpu_decoder(const DecoderChoice& choice) {
  if (auto ok = choice.validate(); !ok) return ok.error();
  if (!choice.may_use_gpu())
    return make_error(ErrorKind::unsupported, fmt::format("the {} decoder does not use the GPU", choice.describe()));
  return gpu::make_cuda_decoder_typed({choice.effective_gpu(), 0, choice.limits, choice.tier1, choice.tier1_host_blocks});
}

}  // namespace j2k::app
