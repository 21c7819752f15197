#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "colour_params.hpp"
#include "gpu/colour.hpp"

namespace j2k::gpu {

namespace detail {

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

}  // namespace

Result<ColourParams> make_colour_params(const PlanarImage& image, const ColourInterpretation& colour, float out_max) {
  if (image.planes.empty() || image.width <= 0 || image.height <= 0)
    return make_error(ErrorKind::corrupt, "nothing to convert: empty image");
  const Plane& first = image.planes[0];
  if (first.dx != 1 || first.dy != 1)
    return make_error(ErrorKind::unsupported, "first component is subsampled; cannot display");
  if (first.precision < 1 || first.precision > 16)
    return make_error(ErrorKind::unsupported, fmt::format("{}-bit samples cannot be displayed", first.precision));
  ColourParams p;
  p.out_max = out_max;
  const double range = std::ldexp(1.0, first.precision);
  if (image.planes.size() < 3) {
    p.mode = ColourMode::grey;
    p.grey_scale = static_cast<float>(out_max / (range - 1.0));
    p.grey_offset = first.is_signed ? static_cast<float>(range / 2) : 0.0f;
    return p;
  }
  for (int c = 1; c < 3; ++c) {
    const Plane& pl = image.planes[c];
    if (pl.dx < 1 || pl.dy < 1 || pl.dx > 4 || pl.dy > 4 || pl.width < 1 || pl.height < 1 ||
        pl.width * pl.dx < first.width || pl.height * pl.dy < first.height)
      return make_error(ErrorKind::unsupported, fmt::format("component {} geometry {}x{} /{}x{} does not cover the image", c,
                                                            pl.width, pl.height, pl.dx, pl.dy));
  }
  ColourCoding coding = colour.coding;
  if (coding == ColourCoding::unknown)
    coding = image.colour == ColourCoding::rgb ? ColourCoding::rgb
             : image.colour == ColourCoding::unknown ? ColourCoding::ycbcr_bt709 : image.colour;
  const double max_in = range - 1.0;
  p.rgb_scale = static_cast<float>(out_max / max_in);
  p.rgb_norm = static_cast<float>(1.0 / max_in);
  p.transfer = colour.transfer == TransferFunction::pq ? 1 : colour.transfer == TransferFunction::hlg ? 2 : 0;
  if (coding == ColourCoding::xyz) {
    p.mode = ColourMode::rgb;
    p.transfer = 3;
    return p;
  }
  if (coding == ColourCoding::rgb) {
    p.mode = ColourMode::rgb;
    return p;
  }
  p.mode = ColourMode::ycbcr;
  const Matrix m = matrix_for(coding);
  const double s = range / 256.0;  // code scale relative to 8 bit
  const bool full = colour.full_range;
  p.y_off = full ? 0.0f : static_cast<float>(16.0 * s);
  p.y_gain = static_cast<float>(full ? 1.0 / max_in : 1.0 / (219.0 * s));
  p.c_off = static_cast<float>(full ? (max_in + 1.0) / 2.0 : 128.0 * s);
  p.c_gain = static_cast<float>(full ? 1.0 / max_in : 1.0 / (224.0 * s));
  const float kr = static_cast<float>(m.kr), kb = static_cast<float>(m.kb), kg = 1.0f - kr - kb;
  p.r_cr = 2.0f * (1.0f - kr);
  p.b_cb = 2.0f * (1.0f - kb);
  p.g_cb = -p.b_cb * kb / kg;
  p.g_cr = -p.r_cr * kr / kg;
  return p;
}

}  // namespace detail

void hdr_to_sdr(TransferFunction transfer, float rgb[3]) noexcept {
  using namespace detail::hdr;
  if (transfer == TransferFunction::sdr) return;
  float light[3];
  for (int c = 0; c < 3; ++c) {
    const float e = std::clamp(rgb[c], 0.0f, 1.0f);
    float nits;
    if (transfer == TransferFunction::pq) {
      const float p = std::pow(e, 1.0f / kPqM2);
      nits = 10000.0f * std::pow(std::max(p - kPqC1, 0.0f) / (kPqC2 - kPqC3 * p), 1.0f / kPqM1);
    } else {
      const float scene = e <= 0.5f ? e * e / 3.0f : (std::exp((e - kHlgC) / kHlgA) + kHlgB) / 12.0f;
      nits = kHlgPeak * std::pow(scene, kHlgGamma);
    }
    light[c] = nits / kReferenceWhite;
  }
  for (int c = 0; c < 3; ++c) {
    float l = kGamut[3 * c] * light[0] + kGamut[3 * c + 1] * light[1] + kGamut[3 * c + 2] * light[2];
    l = std::max(l, 0.0f);
    if (l > kKnee) l = kKnee + (1.0f - kKnee) * (1.0f - std::exp(-(l - kKnee) / (1.0f - kKnee)));
    rgb[c] = l <= 0.0031308f ? 12.92f * l : 1.055f * std::pow(l, 1.0f / 2.4f) - 0.055f;
  }
}

void dci_xyz_to_display(float xyz[3]) noexcept {
  using namespace detail::hdr;
  float light[3];
  for (int c = 0; c < 3; ++c) light[c] = std::pow(std::clamp(xyz[c], 0.0f, 1.0f), kDciGamma) * kDciScale;
  for (int c = 0; c < 3; ++c) {
    float l = kXyzToSrgb[3 * c] * light[0] + kXyzToSrgb[3 * c + 1] * light[1] + kXyzToSrgb[3 * c + 2] * light[2];
    l = std::clamp(l, 0.0f, 1.0f);
    xyz[c] = l <= 0.0031308f ? 12.92f * l : 1.055f * std::pow(l, 1.0f / 2.4f) - 0.055f;
  }
}

namespace {

using detail::ColourMode;
using detail::ColourParams;

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

long to_code(float v, long max) { return std::clamp(std::lround(v), 0L, max); }

/// Evaluates the conversion for every pixel; `store(index, r, g, b)` receives codes in
/// [0, out_max]. One function for both output formats so they cannot drift apart.
template <typename Store>
Status convert(const PlanarImage& image, const ColourInterpretation& colour, float out_max, Store&& store) {
  auto params = detail::make_colour_params(image, colour, out_max);
  if (!params) return params.error();
  const ColourParams& p = *params;
  const long max = std::lround(out_max);
  const TransferFunction transfer = colour.transfer;
  const Plane& first = image.planes[0];
  const int width = first.width, height = first.height;
  if (p.mode == ColourMode::grey) {
    for (std::size_t i = 0; i < first.samples.size(); ++i) {
      const long v = to_code((static_cast<float>(first.samples[i]) + p.grey_offset) * p.grey_scale, max);
      store(i, v, v, v);
    }
    return {};
  }
  std::vector<float> cb(width), cr(width), tmp_a(width), tmp_b(width);
  for (int y = 0; y < height; ++y) {
    chroma_row(image.planes[1], y, width, tmp_a, tmp_b, cb.data());
    chroma_row(image.planes[2], y, width, tmp_a, tmp_b, cr.data());
    const std::int32_t* yrow = &first.samples[static_cast<std::size_t>(y) * width];
    const std::size_t base = static_cast<std::size_t>(y) * width;
    if (p.mode == ColourMode::rgb && p.transfer) {
      for (int x = 0; x < width; ++x) {
        float v[3] = {static_cast<float>(yrow[x]) * p.rgb_norm, cb[x] * p.rgb_norm, cr[x] * p.rgb_norm};
        if (p.transfer == 3) dci_xyz_to_display(v);
        else hdr_to_sdr(transfer, v);
        store(base + x, to_code(v[0] * out_max, max), to_code(v[1] * out_max, max), to_code(v[2] * out_max, max));
      }
      continue;
    }
    if (p.mode == ColourMode::rgb) {
      for (int x = 0; x < width; ++x)
        store(base + x, to_code(static_cast<float>(yrow[x]) * p.rgb_scale, max), to_code(cb[x] * p.rgb_scale, max),
              to_code(cr[x] * p.rgb_scale, max));
      continue;
    }
    if (p.transfer) {
      for (int x = 0; x < width; ++x) {
        const float yy = (static_cast<float>(yrow[x]) - p.y_off) * p.y_gain;
        const float u = (cb[x] - p.c_off) * p.c_gain;
        const float v = (cr[x] - p.c_off) * p.c_gain;
        float rgb[3] = {yy + p.r_cr * v, (yy + p.g_cb * u) + p.g_cr * v, yy + p.b_cb * u};
        hdr_to_sdr(transfer, rgb);
        store(base + x, to_code(rgb[0] * out_max, max), to_code(rgb[1] * out_max, max), to_code(rgb[2] * out_max, max));
      }
      continue;
    }
    for (int x = 0; x < width; ++x) {
      const float yy = (static_cast<float>(yrow[x]) - p.y_off) * p.y_gain;
      const float u = (cb[x] - p.c_off) * p.c_gain;
      const float v = (cr[x] - p.c_off) * p.c_gain;
      store(base + x, to_code((yy + p.r_cr * v) * out_max, max), to_code((yy + p.g_cb * u + p.g_cr * v) * out_max, max),
            to_code((yy + p.b_cb * u) * out_max, max));
    }
  }
  return {};
}

}  // namespace

Status to_rgba8(const PlanarImage& image, const ColourInterpretation& colour, RgbaImage& out) {
  if (auto p = detail::make_colour_params(image, colour, 255.0f); !p) return p.error();
  out.width = image.planes[0].width;
  out.height = image.planes[0].height;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * 4);
  std::uint8_t* px = out.pixels.data();
  return convert(image, colour, 255.0f, [px](std::size_t i, long r, long g, long b) {
    px[4 * i + 0] = static_cast<std::uint8_t>(r);
    px[4 * i + 1] = static_cast<std::uint8_t>(g);
    px[4 * i + 2] = static_cast<std::uint8_t>(b);
    px[4 * i + 3] = 255;
  });
}

Status to_rgb10a2(const PlanarImage& image, const ColourInterpretation& colour, Rgb10A2Image& out) {
  if (auto p = detail::make_colour_params(image, colour, 1023.0f); !p) return p.error();
  out.width = image.planes[0].width;
  out.height = image.planes[0].height;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height);
  std::uint32_t* px = out.pixels.data();
  return convert(image, colour, 1023.0f, [px](std::size_t i, long r, long g, long b) {
    px[i] = pack_rgb10a2(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(b));
  });
}

Result<RgbaImage> weave_fields(const RgbaImage& first, const RgbaImage& second, bool top_field_first) {
  if (first.width != second.width || first.height < second.height || first.height > second.height + 1)
    return make_error(ErrorKind::corrupt, fmt::format("fields {}x{} and {}x{} do not weave into one frame", first.width,
                                                      first.height, second.width, second.height));
  const RgbaImage& top = top_field_first ? first : second;
  const RgbaImage& bottom = top_field_first ? second : first;
  RgbaImage frame;
  frame.width = first.width;
  frame.height = first.height + second.height;
  frame.pixels.resize(static_cast<std::size_t>(frame.width) * frame.height * 4);
  const std::size_t row = static_cast<std::size_t>(frame.width) * 4;
  for (int y = 0; y < frame.height; ++y) {
    const RgbaImage& f = (y & 1) ? bottom : top;
    const int src = y / 2;
    if (src >= f.height) continue;  // a frame of odd height whose shorter field is the bottom one
    std::copy_n(f.pixels.data() + src * row, row, frame.pixels.data() + y * row);
  }
  return frame;
}

}  // namespace j2k::gpu
