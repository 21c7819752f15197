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
};

/// Checks the geometry (first plane full size, chroma planes covering it) and derives
/// the conversion. `out_max` is the largest output code (255 or 1023).
Result<ColourParams> make_colour_params(const PlanarImage& geometry, const ColourInterpretation& colour, float out_max);

}  // namespace j2k::gpu::detail
