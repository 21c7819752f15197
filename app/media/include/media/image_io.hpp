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

/// An sRGB picture graded into high dynamic range (BT.2100: BT.2020 primaries, PQ or HLG) as
/// YCbCr BT.2020 narrow range at `bits`: its white at HDR reference white (203 cd/m², BT.2408)
/// and its brightest fifth stretched into highlights up to 1000 cd/m²; HLG for a 1000 cd/m²
/// display (system gamma 1.2, per channel). What a test sender needs to exercise an HDR link;
/// the player's hdr_to_sdr (gpu/colour.hpp) brings it back to the photograph below the knee.
PlanarImage rgb_to_ycbcr_hdr(const PlanarImage& rgb, int bits, int chroma_dx, TransferFunction transfer);

/// An sRGB picture as digital cinema's X'Y'Z' (SMPTE 428-1) at `bits` (12 in DCI), 4:4:4: CIE XYZ
/// from the sRGB matrix, the picture's white at 48 cd/m² (52.37 is the code range's top), gamma
/// 1/2.6. ColourCoding::xyz.
PlanarImage rgb_to_dci_xyz(const PlanarImage& rgb, int bits);

/// Writes an 8-bit RGBA buffer (width*height*4 bytes) as PNG.
Status write_png_rgba(const std::string& path, const std::uint8_t* rgba, int width, int height);

/// Writes each plane as a binary PGM (8-bit, or 16-bit big-endian when precision > 8).
Status write_pgm(const std::string& path, const Plane& plane);

}  // namespace j2k::media
