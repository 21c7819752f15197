// Parts of the CUDA stage's interface that need no CUDA.
#include "gpu/cuda.hpp"
#include "gpu/cuda_tier1.hpp"

namespace j2k::gpu {

std::optional<GpuMode> parse_gpu_mode(const std::string& text) {
  if (text == "off") return GpuMode::off;
  if (text == "on") return GpuMode::on;
  if (text == "auto") return GpuMode::automatic;
  return std::nullopt;
}

const char* to_string(GpuMode mode) noexcept {
  switch (mode) {
    case GpuMode::off: return "off";
    case GpuMode::on: return "on";
    case GpuMode::automatic: return "auto";
  }
  return "?";
}

std::optional<Tier1Mode> parse_tier1_mode(const std::string& text) {
  if (text == "cpu") return Tier1Mode::cpu;
  if (text == "gpu") return Tier1Mode::gpu;
  if (text == "auto") return Tier1Mode::automatic;
  return std::nullopt;
}

const char* to_string(Tier1Mode mode) noexcept {
  switch (mode) {
    case Tier1Mode::cpu: return "cpu";
    case Tier1Mode::gpu: return "gpu";
    case Tier1Mode::automatic: return "auto";
  }
  return "?";
}

}  // namespace j2k::gpu
