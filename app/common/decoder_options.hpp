#pragma once
// Decoder choice on the command line, shared by j2kprobe and j2kplay:
//   --backend own|cuda|openjpeg   --gpu on|off|auto
#include <CLI/CLI.hpp>
#include <string>

#include "core/result.hpp"
#include "decoder/decoder.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_tier1.hpp"

namespace j2k::cli {

struct DecoderChoice {
  std::string backend = "own";
  std::string gpu = "auto";
  std::string tier1 = "cpu";

  void add_to(CLI::App& app) {
    app.add_option("--backend", backend, "decoder: own, cuda (own with GPU reconstruction) or openjpeg")
        ->check(CLI::IsMember({"own", "cuda", "openjpeg"}))
        ->capture_default_str();
    app.add_option("--gpu", gpu, "own decoder's reconstruction on the GPU: on, off or auto")
        ->check(CLI::IsMember({"on", "off", "auto"}))
        ->capture_default_str();
    app.add_option("--tier1", tier1, "code-block decoding: cpu, gpu (needs the GPU) or auto (GPU where usable, else CPU)")
        ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
        ->capture_default_str();
  }
  /// --tier1 as a mode (checked by CLI11 already).
  gpu::Tier1Mode tier1_mode() const { return gpu::parse_tier1_mode(tier1).value_or(gpu::Tier1Mode::cpu); }

  /// The backend and GPU mode the options mean ("cuda" is the own decoder with the GPU required).
  Result<std::pair<decoder::Backend, gpu::GpuMode>> resolve() const {
    auto mode = gpu::parse_gpu_mode(gpu);
    if (!mode) return make_error(ErrorKind::corrupt, "--gpu '" + gpu + "' is not on, off or auto");
    if (backend == "cuda") return std::make_pair(decoder::Backend::own, gpu::GpuMode::on);
    auto b = decoder::parse_backend(backend);
    if (!b) return make_error(ErrorKind::corrupt, "--backend '" + backend + "' is not own, cuda or openjpeg");
    return std::make_pair(*b, *mode);
  }
};

}  // namespace j2k::cli
