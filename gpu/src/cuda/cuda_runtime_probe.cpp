// gpu::cuda_available(): must answer false, quickly and quietly, on machines without a
// GPU or without a driver (CI). The runtime is linked statically, so no libcudart is
// needed; without libcuda the first call fails with cudaErrorInsufficientDriver.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <new>

#include "gpu/cuda.hpp"
#include "kernels.hpp"

namespace j2k::gpu {

namespace {

struct Probe {
  bool ok = false;
  std::string text;
};

Probe run_probe() {
  Probe p;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    p.text = e != cudaSuccess ? fmt::format("no usable CUDA driver/device ({})", cudaGetErrorString(e)) : "no CUDA device";
    cudaGetLastError();
    return p;
  }
  cudaDeviceProp prop{};
  if ((e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess) {
    p.text = fmt::format("cudaGetDeviceProperties: {}", cudaGetErrorString(e));
    cudaGetLastError();
    return p;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  p.text = fmt::format("{} (sm_{}{}, {} SMs, {:.1f} GiB, driver {}.{})", prop.name, prop.major, prop.minor,
                       prop.multiProcessorCount, static_cast<double>(prop.totalGlobalMem) / (1 << 30), driver / 1000,
                       (driver % 1000) / 10);
  // The device must be able to run the kernels this binary carries (its architecture list).
  if ((e = cuda::probe_kernels()) != cudaSuccess) {
    p.text += fmt::format(": kernels not loadable ({})", cudaGetErrorString(e));
    cudaGetLastError();
    return p;
  }
  p.ok = true;
  return p;
}

const Probe& probe() {
  static const Probe p = run_probe();  // computed once; immutable afterwards
  return p;
}

}  // namespace

bool cuda_available() noexcept {
  try {
    return probe().ok;
  } catch (...) {
    return false;
  }
}

std::string cuda_describe() { return probe().text; }

namespace {

/// cudaHostAlloc, or operator new where the runtime refuses. A 64-byte header in front of
/// each block says which, so that freeing never has to ask the runtime (which may already
/// be gone when a static owner is destroyed at exit).
class PinnedResource final : public std::pmr::memory_resource {
  static constexpr std::size_t kHeader = 64;
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (alignment > kHeader) throw std::bad_alloc();
    void* base = nullptr;
    bool pinned = false;
    if (cuda_available() && cudaHostAlloc(&base, bytes + kHeader, cudaHostAllocPortable) == cudaSuccess) {
      pinned = true;
      count_cuda_buffer_allocation();
    } else {
      (void)cudaGetLastError();
      base = ::operator new(bytes + kHeader, std::align_val_t(kHeader));
    }
    *static_cast<unsigned char*>(base) = pinned ? 1 : 0;
    return static_cast<unsigned char*>(base) + kHeader;
  }
  void do_deallocate(void* p, std::size_t, std::size_t) override {
    unsigned char* base = static_cast<unsigned char*>(p) - kHeader;
    if (*base == 1) {
      (void)cudaFreeHost(base);
      (void)cudaGetLastError();
    } else {
      ::operator delete(base, std::align_val_t(kHeader));
    }
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

}  // namespace

std::pmr::memory_resource* cuda_pinned_resource() noexcept {
  static PinnedResource resource;  // stateless; lives to the end (vectors may outlive main's locals)
  return &resource;
}

std::size_t cuda_device_memory(int device) noexcept {
  if (!cuda_available()) return 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return prop.totalGlobalMem;
}

}  // namespace j2k::gpu
