#pragma once
// Helpers for the CUDA tests: a device picture to convert into, and a textured test
// picture for the CPU-fallback tests that must run without Qt (no PNG loader).
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/planar_image.hpp"
#include "gpu/cuda_reconstructor.hpp"

#if J2K_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace j2k::test {

/// A device buffer of width*height 32-bit pixels, freed on destruction.
struct DeviceImage {
  gpu::DeviceTarget target;
  DeviceImage() = default;
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;
  ~DeviceImage() { release(); }

  bool allocate(int w, int h, gpu::OutputFormat f) {
    release();
    target = {};
    target.width = w;
    target.height = h;
    target.pitch = static_cast<std::size_t>(w) * 4 + 64;  // a pitch wider than a row, on purpose
    target.format = f;
#if J2K_HAVE_CUDA
    if (cudaMalloc(&target.data, target.pitch * static_cast<std::size_t>(h)) != cudaSuccess) return false;
    // Poison, so that a pixel the kernel forgets is seen.
    return cudaMemset(target.data, 0xA5, target.pitch * static_cast<std::size_t>(h)) == cudaSuccess;
#else
    return false;
#endif
  }
  std::vector<std::uint32_t> download() const {
    std::vector<std::uint32_t> px(static_cast<std::size_t>(target.width) * target.height);
#if J2K_HAVE_CUDA
    if (cudaMemcpy2D(px.data(), static_cast<std::size_t>(target.width) * 4, target.data, target.pitch,
                     static_cast<std::size_t>(target.width) * 4, static_cast<std::size_t>(target.height),
                     cudaMemcpyDeviceToHost) != cudaSuccess)
      px.assign(px.size(), 0xDEADBEEF);
#endif
    return px;
  }
  void release() {
#if J2K_HAVE_CUDA
    if (target.data) cudaFree(target.data);
#endif
    target.data = nullptr;
  }
};

/// Textured YCbCr content (several frequencies plus noise): exercises every subband.
inline PlanarImage textured_ycbcr(int w, int h, int bits, int chroma_dx, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.03);
  PlanarImage img;
  img.width = w;
  img.height = h;
  img.colour = ColourCoding::ycbcr_bt709;
  const double top = (1 << bits) - 1;
  for (int c = 0; c < 3; ++c) {
    Plane p;
    p.dx = c ? chroma_dx : 1;
    p.width = (w + p.dx - 1) / p.dx;
    p.height = h;
    p.precision = bits;
    p.samples.resize(static_cast<std::size_t>(p.width) * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < p.width; ++x) {
        double v = 0.5 + 0.2 * std::sin(x * 0.07 * (c + 1) + y * 0.03) + 0.15 * std::cos(x * y * 0.0009 + c) +
                   0.1 * std::sin(x * 0.9 + y * 1.3) + noise(rng);
        v = std::clamp(v, 0.0, 1.0);
        p.samples[static_cast<std::size_t>(y) * p.width + x] = static_cast<std::int32_t>(std::lround(v * top));
      }
    img.planes.push_back(std::move(p));
  }
  return img;
}

}  // namespace j2k::test
