#pragma once
// Decoder choice on the command line, shared by j2kprobe and j2kplay:
//   --backend own|cuda|openjpeg   --gpu on|off|auto
#include <CLI/CLI.hpp>
#include <string>

#include "core/result.hpp"
#include "decoder/decoder.hpp"
#include "gpu/cuda.hpp"

namespace j2k::cli {

struct DecoderChoice {
  std::string backend = "own";
  std::string gpu = "auto";

  void add_to(CLI::App& app) {
    app.add_option("--backend", backend, "decoder: own, cuda (own with GPU reconstruction) or openjpeg")
        ->check(CLI::IsMember({"own", "cuda", "openjpeg"}))
        ->capture_default_str();
    app.add_option("--gpu", gpu, "own decoder's reconstruction on the GPU: on, off or auto")
        ->check(CLI::IsMember({"on", "off", "auto"}))
        ->capture_default_str();
  }

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
