// Parts of the CUDA stage's interface that need no CUDA.
#include "gpu/cuda.hpp"

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

}  // namespace j2k::gpu
