#pragma once
// Helpers for the CUDA tests: the GPU test corpus, the CPU path's picture to compare with, a
// device picture to convert into, and a textured test picture for the CPU-fallback tests that
// must run without Qt (no PNG loader).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/planar_image.hpp"
#include "decoder/own_decoder.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_reconstructor.hpp"

#if J2K_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/// Skips the test, visibly, where there is no CUDA device.
#define J2K_REQUIRE_CUDA()                                                                                                        \
  do {                                                                                                                            \
    if (!::j2k::gpu::cuda_available()) GTEST_SKIP() << "SKIPPED: no CUDA device (" << ::j2k::gpu::cuda_describe() << ")"; \
  } while (0)

namespace j2k::test {

/// The GPU test corpus (made by gpu_corpus_maker; J2K_GPU_CORPUS names another folder).
inline std::filesystem::path corpus_dir() {
  if (const char* e = std::getenv("J2K_GPU_CORPUS")) return e;
  return J2K_GPU_CORPUS_DIR;
}

inline std::vector<std::uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The bytes of the first of `names` that the corpus holds; empty when it has none.
inline std::vector<std::uint8_t> read_corpus(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const auto path = corpus_dir() / name; std::filesystem::exists(path)) return read_file(path);
  return {};
}

/// What the CPU path makes of a codestream: the own decoder's picture and its RGBA, which the
/// GPU display paths must match.
struct CpuPicture {
  PlanarImage planar;
  gpu::RgbaImage rgba;
};

/// Decodes `bytes` with the own decoder (`options`). Fatal on failure: call it inside
/// ASSERT_NO_FATAL_FAILURE.
inline void cpu_picture(const std::vector<std::uint8_t>& bytes, const decoder::DecodeOptions& options, CpuPicture& out) {
  auto cpu = decoder::make_own_decoder()->decode(bytes, options);
  ASSERT_TRUE(cpu.ok());
  out.planar = std::move(cpu).value();
  ASSERT_TRUE(gpu::to_rgba8(out.planar, {}, out.rgba));
}

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
