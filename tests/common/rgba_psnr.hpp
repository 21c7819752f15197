#pragma once
// PSNR of two RGBA pictures over R, G and B (alpha ignored): how far a display conversion lands
// from what it should show.
#include <cmath>

#include "gpu/colour.hpp"

namespace j2k::test {

/// In dB; infinity when the pictures are equal. Both must have the same size.
inline double psnr_rgb(const gpu::RgbaImage& a, const gpu::RgbaImage& b) {
  double se = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    if (i % 4 == 3) continue;
    const double d = static_cast<double>(a.pixels[i]) - b.pixels[i];
    se += d * d;
    ++n;
  }
  return se == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 / (se / static_cast<double>(n)));
}

}  // namespace j2k::test
