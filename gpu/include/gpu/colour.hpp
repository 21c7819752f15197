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
  /// PQ or HLG: the picture is high dynamic range (BT.2100, BT.2020 primaries) and is mapped
  /// for an SDR display (hdr_to_sdr below).
  TransferFunction transfer = TransferFunction::sdr;
};

/// The HDR → SDR display mapping, on non-linear BT.2100 R'G'B' in [0, 1] (after the YCbCr
/// matrix), per channel, into display R'G'B' in [0, 1] (BT.709 primaries, sRGB's encoding, as a
/// computer's display decodes what it is given; SDR pictures reach it unchanged):
///  1. to light relative to HDR reference white, 203 cd/m² (BT.2408): PQ's EOTF / 203; HLG's
///     inverse OETF, then its OOTF for a 1000 cd/m² display (system gamma 1.2, per channel), / 203;
///  2. BT.2020 → BT.709 primaries (BT.2087's matrix, in light), negatives clipped;
///  3. a tone curve: unchanged up to 0.75, above it highlights rolled off towards 1 (slope 1 at
///     the knee, 1 - 0.25·e^(-(L-0.75)/0.25)): reference white lands at 0.908, 1000 cd/m² at 0.9999;
///  4. sRGB's encoding (IEC 61966-2-1): a photograph graded into HDR with reference white at its
///     white comes back as it was below the knee.
/// The CUDA colour kernel evaluates the same steps (to 1 code); this is the CPU's, and the tests'.
void hdr_to_sdr(TransferFunction transfer, float rgb[3]) noexcept;

/// Digital cinema's X'Y'Z' in [0, 1] (ColourCoding::xyz: a code over its maximum) into display
/// R'G'B' in [0, 1]: XYZ = v^2.6 · 52.37 / 48 (SMPTE 428-1: 48 cd/m² is white), the sRGB matrix
/// (IEC 61966-2-1, no white-point adaptation), clipped, sRGB's encoding. The CUDA kernel's twin.
void dci_xyz_to_display(float xyz[3]) noexcept;

/// Converts a reconstructed image (grey, RGB, or YCbCr 4:4:4/4:2:2/4:2:0 at any depth
/// up to 16 bits) into RGBA8. Chroma is upsampled linearly: co-sited horizontally and
/// centred vertically (MPEG-2/BT.709 siting). `out` is resized as needed and reused.
Status to_rgba8(const PlanarImage& image, const ColourInterpretation& colour, RgbaImage& out);

/// A 10-bit-per-channel picture for GL_RGB10_A2 textures (GL_UNSIGNED_INT_2_10_10_10_REV):
/// one 32-bit word per pixel, R in bits 0-9, G in 10-19, B in 20-29, alpha (3) in 30-31.
struct Rgb10A2Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint32_t> pixels;  ///< width*height, row-major
};

constexpr std::uint32_t pack_rgb10a2(std::uint32_t r, std::uint32_t g, std::uint32_t b) noexcept {
  return r | (g << 10) | (b << 20) | (3u << 30);
}

/// The same conversion as `to_rgba8` with 1023 as the top code (deep-colour displays).
Status to_rgb10a2(const PlanarImage& image, const ColourInterpretation& colour, Rgb10A2Image& out);

/// Field weave: interleaves two field pictures (in decoding order) into one frame.
/// `top_field_first` (field dominance): the first field holds the frame's even rows.
/// The first field may be one row taller than the second (odd frame heights).
Result<RgbaImage> weave_fields(const RgbaImage& first, const RgbaImage& second, bool top_field_first);

}  // namespace j2k::gpu
