// Parts of the CUDA stage's interface that need no CUDA.
#include <atomic>

#include "core/enum_names.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_tier1.hpp"

namespace j2k::gpu {

namespace {
constexpr EnumName<GpuMode> kGpuModes[] = {{GpuMode::off, "off"}, {GpuMode::on, "on"}, {GpuMode::automatic, "auto"}};
constexpr EnumName<Tier1Mode> kTier1Modes[] = {{Tier1Mode::cpu, "cpu"}, {Tier1Mode::gpu, "gpu"}, {Tier1Mode::automatic, "auto"}};
}  // namespace

namespace {
std::atomic<std::uint64_t> buffer_allocations{0};
}  // namespace

std::uint64_t cuda_buffer_allocations() noexcept { return buffer_allocations.load(std::memory_order_relaxed); }
void count_cuda_buffer_allocation() noexcept { buffer_allocations.fetch_add(1, std::memory_order_relaxed); }

std::optional<GpuMode> parse_gpu_mode(const std::string& text) { return value_of(kGpuModes, text); }
const char* to_string(GpuMode mode) noexcept { return name_of(kGpuModes, mode); }

std::optional<Tier1Mode> parse_tier1_mode(const std::string& text) { return value_of(kTier1Modes, text); }
const char* to_string(Tier1Mode mode) noexcept { return name_of(kTier1Modes, mode); }

}  // namespace j2k::gpu
