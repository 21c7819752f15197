#pragma once
// Test content from real photographs (../shared/media), never only synthetic gradients.
#include <gtest/gtest.h>

#include <string>

#include "core/planar_image.hpp"
#include "media/image_io.hpp"

namespace j2k::test {

inline std::string media_path(const std::string& name) { return std::string(J2K_MEDIA_DIR) + "/" + name; }

/// A window of flower.png converted to YCbCr BT.709 at `bits`, chroma subsampled by `chroma_dx`.
inline PlanarImage photo_ycbcr(int width, int height, int bits, int chroma_dx, int x = 700, int y = 500) {
  static const PlanarImage flower = [] {
    auto img = media::load_rgb(media_path("flower.png"));
    if (!img.ok()) throw std::runtime_error(img.error().message);
    return std::move(img).value();
  }();
  return media::rgb_to_ycbcr709(media::crop(flower, x, y, width, height), bits, chroma_dx);
}

}  // namespace j2k::test
