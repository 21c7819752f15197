#pragma once
// The display end of reconstruction: chroma upsampling and YCbCr → RGB into an 8-bit
// RGBA picture. This is the CPU twin of the CUDA stage (same math, same rounding).
#include <cstdint>
#include <vector>

#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k::gpu {

/// An 8-bit RGBA picture ready for a texture or a PNG.
struct RgbaImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  ///< width*height*4, row-major, R G B A
};

/// How to interpret three components when the stream does not say.
struct ColourInterpretation {
  ColourCoding coding = ColourCoding::unknown;  ///< unknown: RGB if the image says so, else BT.709
  bool full_range = false;
};

/// Converts a reconstructed image (grey, RGB, or YCbCr 4:4:4/4:2:2/4:2:0 at any depth
/// up to 16 bits) into RGBA8. Chroma is upsampled linearly: co-sited horizontally and
/// centred vertically (MPEG-2/BT.709 siting). `out` is resized as needed and reused.
Status to_rgba8(const PlanarImage& image, const ColourInterpretation& colour, RgbaImage& out);

}  // namespace j2k::gpu
