#pragma once
// Runtime presence of the CUDA stage. Every function here works in a build without CUDA
// and on a machine without a GPU or driver (the runtime is linked statically).
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string>

// The CUDA runtime's own spelling, so that public headers need not include cuda_runtime.h.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // NOLINT(modernize-use-using)

namespace j2k::gpu {

/// True when this build has the CUDA stage and a device of compute capability >= 7.0 is
/// usable (driver loaded, device count > 0). Cheap after the first call.
bool cuda_available() noexcept;

/// "NVIDIA H100 80GB HBM3 (sm_90, driver 13.0)", or why there is none.
std::string cuda_describe();

/// The device's global memory in bytes; 0 without CUDA or when the runtime cannot say.
std::size_t cuda_device_memory(int device = 0) noexcept;

/// Page-locked host memory (cudaHostAlloc) as a memory resource, for buffers the copy
/// engine reads directly (decoder::Tier1Batch::bytes in the GPU backend); where it cannot be
/// had (no CUDA, or the runtime refuses), ordinary memory, which CUDA copies from too.
std::pmr::memory_resource* cuda_pinned_resource() noexcept;

/// GPU and page-locked buffers this process has allocated so far (every reconstructor,
/// table and device-picture pool: they grow to the largest frame and are kept). A frame
/// decoded while the count moved paid for start-up allocations (a reconstructor's slot used
/// for the first time costs ~100 ms at 2160): its time is no measure of the stream, and the
/// live pipeline's degrade control skips it. Stays 0 without CUDA.
std::uint64_t cuda_buffer_allocations() noexcept;
/// Counts one such allocation (called where they are made).
void count_cuda_buffer_allocation() noexcept;

/// --gpu on|off|auto: `on` fails when CUDA is unusable, `auto` falls back to the CPU.
enum class GpuMode { off, on, automatic };
std::optional<GpuMode> parse_gpu_mode(const std::string& text);
const char* to_string(GpuMode mode) noexcept;

}  // namespace j2k::gpu
