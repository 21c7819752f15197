#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpu/colour.hpp"

namespace j2k::gpu {

namespace {

struct Matrix {
  double kr, kb;
};

Matrix matrix_for(ColourCoding c) {
  switch (c) {
    case ColourCoding::ycbcr_bt601: return {0.299, 0.114};
    case ColourCoding::ycbcr_bt2020: return {0.2627, 0.0593};
    default: return {0.2126, 0.0722};  // BT.709
  }
}

/// Upsamples one chroma row to `width` samples, co-sited: even outputs copy, odd ones average.
void upsample_row(const std::int32_t* src, int src_width, int dx, int width, float* dst) {
  if (dx == 1) {
    for (int x = 0; x < width; ++x) dst[x] = static_cast<float>(src[std::min(x, src_width - 1)]);
    return;
  }
  for (int x = 0; x < width; ++x) {
    const int i = x / dx;
    const int phase = x % dx;
    const float a = static_cast<float>(src[std::min(i, src_width - 1)]);
    const float b = static_cast<float>(src[std::min(i + 1, src_width - 1)]);
    dst[x] = a + (b - a) * static_cast<float>(phase) / static_cast<float>(dx);
  }
}

/// One chroma plane row at full luma resolution, interpolating vertically for dy = 2
/// (chroma sited between the two luma rows it covers).
void chroma_row(const Plane& p, int y, int width, std::vector<float>& tmp_a, std::vector<float>& tmp_b,
                float* dst) {
  if (p.dy == 1) {
    upsample_row(&p.samples[static_cast<std::size_t>(std::min(y, p.height - 1)) * p.width], p.width, p.dx, width, dst);
    return;
  }
  // Output row y sits at chroma position (y + 0.5)/dy − 0.5.
  const double pos = (y + 0.5) / p.dy - 0.5;
  const int r0 = std::clamp(static_cast<int>(std::floor(pos)), 0, p.height - 1);
  const int r1 = std::min(r0 + 1, p.height - 1);
  const float w1 = static_cast<float>(std::clamp(pos - std::floor(pos), 0.0, 1.0));
  upsample_row(&p.samples[static_cast<std::size_t>(r0) * p.width], p.width, p.dx, width, tmp_a.data());
  upsample_row(&p.samples[static_cast<std::size_t>(r1) * p.width], p.width, p.dx, width, tmp_b.data());
  for (int x = 0; x < width; ++x) dst[x] = tmp_a[x] + (tmp_b[x] - tmp_a[x]) * (pos < 0 ? 0.0f : w1);
}

std::uint8_t to_u8(float v) { return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

}  // namespace

Status to_rgba8(const PlanarImage& image, const ColourInterpretation& colour, RgbaImage& out) {
  if (image.planes.empty() || image.width <= 0 || image.height <= 0)
    return make_error(ErrorKind::corrupt, "nothing to convert: empty image");
  const Plane& first = image.planes[0];
  if (first.dx != 1 || first.dy != 1)
    return make_error(ErrorKind::unsupported, "first component is subsampled; cannot display");
  const int width = first.width, height = first.height;
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<std::size_t>(width) * height * 4);

  auto shift = [](const Plane& p) { return std::ldexp(1.0, p.precision); };
  if (image.planes.size() < 3) {
    const float scale = static_cast<float>(255.0 / (shift(first) - 1.0));
    const float offset = first.is_signed ? static_cast<float>(shift(first) / 2) : 0.0f;
    for (std::size_t i = 0; i < first.samples.size(); ++i) {
      const std::uint8_t v = to_u8((static_cast<float>(first.samples[i]) + offset) * scale);
      std::uint8_t* px = &out.pixels[4 * i];
      px[0] = px[1] = px[2] = v;
      px[3] = 255;
    }
    return {};
  }
  for (int c = 1; c < 3; ++c) {
    const Plane& p = image.planes[c];
    if (p.dx < 1 || p.dy < 1 || p.dx > 4 || p.dy > 4 || p.width * p.dx < width || p.height * p.dy < height)
      return make_error(ErrorKind::unsupported, fmt::format("component {} geometry {}x{} /{}x{} does not cover the image", c,
                                                            p.width, p.height, p.dx, p.dy));
  }

  ColourCoding coding = colour.coding;
  if (coding == ColourCoding::unknown)
    coding = image.colour == ColourCoding::rgb ? ColourCoding::rgb
             : image.colour == ColourCoding::unknown ? ColourCoding::ycbcr_bt709 : image.colour;
  const bool rgb = coding == ColourCoding::rgb;
  const Matrix m = matrix_for(coding);
  const double max_in = shift(first) - 1.0;
  const double s = shift(first) / 256.0;  // code scale relative to 8 bit
  const bool full = colour.full_range || rgb;
  // Y' = (Y − y_off)·y_gain, C' = (C − c_off)·c_gain, in units where Y' ∈ [0,1], C' ∈ [−½,½].
  const float y_off = full ? 0.0f : static_cast<float>(16.0 * s);
  const float y_gain = static_cast<float>(full ? 1.0 / max_in : 1.0 / (219.0 * s));
  const float c_off = static_cast<float>(full ? (max_in + 1.0) / 2.0 : 128.0 * s);
  const float c_gain = static_cast<float>(full ? 1.0 / max_in : 1.0 / (224.0 * s));
  const float kr = static_cast<float>(m.kr), kb = static_cast<float>(m.kb), kg = 1.0f - kr - kb;
  const float r_cr = 2.0f * (1.0f - kr);
  const float b_cb = 2.0f * (1.0f - kb);
  const float g_cb = -b_cb * kb / kg;
  const float g_cr = -r_cr * kr / kg;
  const float rgb_scale = static_cast<float>(255.0 / max_in);

  std::vector<float> cb(width), cr(width), tmp_a(width), tmp_b(width);
  for (int y = 0; y < height; ++y) {
    chroma_row(image.planes[1], y, width, tmp_a, tmp_b, cb.data());
    chroma_row(image.planes[2], y, width, tmp_a, tmp_b, cr.data());
    const std::int32_t* yrow = &first.samples[static_cast<std::size_t>(y) * width];
    std::uint8_t* px = &out.pixels[static_cast<std::size_t>(y) * width * 4];
    if (rgb) {
      for (int x = 0; x < width; ++x, px += 4) {
        px[0] = to_u8(static_cast<float>(yrow[x]) * rgb_scale);
        px[1] = to_u8(cb[x] * rgb_scale);
        px[2] = to_u8(cr[x] * rgb_scale);
        px[3] = 255;
      }
      continue;
    }
    for (int x = 0; x < width; ++x, px += 4) {
      const float yy = (static_cast<float>(yrow[x]) - y_off) * y_gain;
      const float u = (cb[x] - c_off) * c_gain;
      const float v = (cr[x] - c_off) * c_gain;
      px[0] = to_u8((yy + r_cr * v) * 255.0f);
      px[1] = to_u8((yy + g_cb * u + g_cr * v) * 255.0f);
      px[2] = to_u8((yy + b_cb * u) * 255.0f);
      px[3] = 255;
    }
  }
  return {};
}

}  // namespace j2k::gpu
