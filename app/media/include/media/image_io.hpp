#pragma once
// Image files and colour conversions for the tools (sender sources, dumps, screenshots).
#include <string>

#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k::media {

/// Loads a PNG/JPEG/… file as 3-plane RGB (8 or 16 bit per sample, as stored).
Result<PlanarImage> load_rgb(const std::string& path);

/// Copies a width×height window at (x, y) from every plane of a 4:4:4 image.
PlanarImage crop(const PlanarImage& rgb, int x, int y, int width, int height);

/// RGB (any precision) → YCbCr with BT.709 narrow-range coefficients, at `bits` per sample,
/// chroma subsampled horizontally by `chroma_dx` (1 = 4:4:4, 2 = 4:2:2) by averaging pairs.
PlanarImage rgb_to_ycbcr709(const PlanarImage& rgb, int bits, int chroma_dx);

/// Writes an 8-bit RGBA buffer (width*height*4 bytes) as PNG.
Status write_png_rgba(const std::string& path, const std::uint8_t* rgba, int width, int height);

/// Writes each plane as a binary PGM (8-bit, or 16-bit big-endian when precision > 8).
Status write_pgm(const std::string& path, const Plane& plane);

}  // namespace j2k::media
