// gpu::cuda_available(): must answer false, quickly and quietly, on machines without a
// GPU or without a driver (CI). The runtime is linked statically, so no libcudart is
// needed; without libcuda the first call fails with cudaErrorInsufficientDriver.
#include <cuda_runtime.h>
#include <fmt/format.h>

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
