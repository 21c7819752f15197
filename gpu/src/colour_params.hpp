#pragma once
// The numbers of the display conversion (chroma siting, matrix, range, output scale),
// computed once on the host and shared by the CPU twin (colour_cpu.cpp) and the CUDA
// kernel (cuda/kernels.cu), so both evaluate the same float expression.
#include <cstdint>

#include "core/planar_image.hpp"
#include "core/result.hpp"
#include "gpu/colour.hpp"

namespace j2k::gpu::detail {

enum class ColourMode : std::int32_t { grey = 0, rgb = 1, ycbcr = 2 };

/// Plain-old-data so it can be passed to a kernel by value.
struct ColourParams {
  ColourMode mode = ColourMode::grey;
  float out_max = 255.0f;  ///< 255 for RGBA8, 1023 for RGB10_A2
  // grey
  float grey_scale = 0, grey_offset = 0;
  // rgb: code * rgb_scale
  float rgb_scale = 0;
  // ycbcr: Y' = (Y - y_off) * y_gain, C' = (C - c_off) * c_gain
  float y_off = 0, y_gain = 0, c_off = 0, c_gain = 0;
  float r_cr = 0, g_cb = 0, g_cr = 0, b_cb = 0;
  /// 0 SDR (the values above are the display's); 1 PQ, 2 HLG: the matrix gives BT.2100 R'G'B'
  /// in [0, 1], mapped by hdr_to_sdr (colour.hpp) before the output scale; 3: rgb mode holds
  /// digital cinema X'Y'Z', mapped by dci_xyz_to_display.
  std::int32_t transfer = 0;
  float rgb_norm = 0;  ///< rgb mode, HDR: code * rgb_norm is R'G'B' in [0, 1]
};

/// The numbers of hdr_to_sdr, shared by the CPU's and the kernel's evaluation.
namespace hdr {
inline constexpr float kPqM1 = 2610.0f / 16384.0f, kPqM2 = 2523.0f / 4096.0f * 128.0f;
inline constexpr float kPqC1 = 3424.0f / 4096.0f, kPqC2 = 2413.0f / 4096.0f * 32.0f, kPqC3 = 2392.0f / 4096.0f * 32.0f;
inline constexpr float kHlgA = 0.17883277f, kHlgB = 0.28466892f, kHlgC = 0.55991073f;
inline constexpr float kReferenceWhite = 203.0f;  ///< cd/m², BT.2408
inline constexpr float kHlgPeak = 1000.0f, kHlgGamma = 1.2f;
inline constexpr float kKnee = 0.75f;
/// Digital cinema (SMPTE 428-1): X'Y'Z' gamma, and the code-range top over white.
inline constexpr float kDciGamma = 2.6f, kDciScale = 52.37f / 48.0f;
/// CIE XYZ → linear sRGB (IEC 61966-2-1).
inline constexpr float kXyzToSrgb[9] = {3.2406f, -1.5372f, -0.4986f, -0.9689f, 1.8758f, 0.0415f, 0.0557f, -0.2040f, 1.0570f};
/// BT.2020 → BT.709 primaries, on light (BT.2087).
inline constexpr float kGamut[9] = {1.6605f, -0.5876f, -0.0728f, -0.1246f, 1.1329f, -0.0083f, -0.0182f, -0.1006f, 1.1187f};
}  // namespace hdr

/// Checks the geometry (first plane full size, chroma planes covering it) and derives
/// the conversion. `out_max` is the largest output code (255 or 1023).
Result<ColourParams> make_colour_params(const PlanarImage& geometry, const ColourInterpretation& colour, float out_max);

}  // namespace j2k::gpu::detail
