#include "media/image_io.hpp"

#include <fmt/format.h>

#include <QBuffer>
#include <QByteArray>
#include <QImage>
#include <algorithm>
#include <cmath>
#include <fstream>

namespace j2k::media {

Result<PlanarImage> load_rgb(const std::string& path) {
  QImage img(QString::fromStdString(path));
  if (img.isNull())
    return make_error(ErrorKind::io, fmt::format("cannot read image '{}' (missing, or not a PNG/JPEG/BMP?)", path));
  const bool deep = img.depth() > 32;
  img = img.convertToFormat(deep ? QImage::Format_RGBX64 : QImage::Format_RGB888);
  PlanarImage out;
  out.width = img.width();
  out.height = img.height();
  out.colour = ColourCoding::rgb;
  out.full_range = true;
  for (int c = 0; c < 3; ++c) {
    Plane p;
    p.width = out.width;
    p.height = out.height;
    p.precision = deep ? 16 : 8;
    p.samples.resize(static_cast<std::size_t>(p.width) * p.height);
    out.planes.push_back(std::move(p));
  }
  for (int y = 0; y < out.height; ++y) {
    if (deep) {
      const auto* row = reinterpret_cast<const std::uint16_t*>(img.constScanLine(y));
      for (int x = 0; x < out.width; ++x)
        for (int c = 0; c < 3; ++c) out.planes[c].samples[static_cast<std::size_t>(y) * out.width + x] = row[4 * x + c];
    } else {
      const std::uint8_t* row = img.constScanLine(y);
      for (int x = 0; x < out.width; ++x)
        for (int c = 0; c < 3; ++c) out.planes[c].samples[static_cast<std::size_t>(y) * out.width + x] = row[3 * x + c];
    }
  }
  return out;
}

PlanarImage crop(const PlanarImage& rgb, int x0, int y0, int width, int height) {
  PlanarImage out = rgb;
  out.width = width;
  out.height = height;
  for (std::size_t c = 0; c < rgb.planes.size(); ++c) {
    const Plane& src = rgb.planes[c];
    Plane& dst = out.planes[c];
    dst.width = width;
    dst.height = height;
    dst.samples.assign(static_cast<std::size_t>(width) * height, 0);
    for (int y = 0; y < height; ++y) {
      int sy = std::clamp(y0 + y, 0, src.height - 1);
      for (int x = 0; x < width; ++x) {
        int sx = std::clamp(x0 + x, 0, src.width - 1);
        dst.samples[static_cast<std::size_t>(y) * width + x] = src.at(sx, sy);
      }
    }
  }
  return out;
}

namespace {

/// R'G'B' (any precision) → narrow-range YCbCr with the matrix (kr, kb) at `bits`; Y 16..235,
/// C 16..240 (scaled to `bits`), chroma averaged over `chroma_dx` columns.
PlanarImage rgb_to_ycbcr(const PlanarImage& rgb, int bits, int chroma_dx, double kr, double kb, ColourCoding coding) {
  const double kg = 1.0 - kr - kb;
  const double in_max = std::ldexp(1.0, rgb.planes[0].precision) - 1.0;
  const double scale = std::ldexp(1.0, bits - 8);
  const int max_code = (1 << bits) - 1;
  const int w = rgb.width, h = rgb.height;
  const int cw = (w + chroma_dx - 1) / chroma_dx;

  PlanarImage out;
  out.width = w;
  out.height = h;
  out.colour = coding;
  out.full_range = false;
  out.planes.resize(3);
  for (int c = 0; c < 3; ++c) {
    Plane& p = out.planes[c];
    p.width = c == 0 ? w : cw;
    p.height = h;
    p.dx = c == 0 ? 1 : chroma_dx;
    p.precision = bits;
    p.samples.resize(static_cast<std::size_t>(p.width) * h);
  }
  std::vector<double> cb_row(w), cr_row(w);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      std::size_t i = static_cast<std::size_t>(y) * w + x;
      double r = rgb.planes[0].samples[i] / in_max, g = rgb.planes[1].samples[i] / in_max,
             b = rgb.planes[2].samples[i] / in_max;
      double yy = kr * r + kg * g + kb * b;
      cb_row[x] = (b - yy) / (2.0 * (1.0 - kb));
      cr_row[x] = (r - yy) / (2.0 * (1.0 - kr));
      int code = static_cast<int>(std::lround((16.0 + 219.0 * yy) * scale));
      out.planes[0].samples[i] = std::clamp(code, 0, max_code);
    }
    for (int cx = 0; cx < cw; ++cx) {
      double cb = 0, cr = 0;
      int n = 0;
      for (int k = 0; k < chroma_dx && cx * chroma_dx + k < w; ++k, ++n) {
        cb += cb_row[cx * chroma_dx + k];
        cr += cr_row[cx * chroma_dx + k];
      }
      std::size_t ci = static_cast<std::size_t>(y) * cw + cx;
      out.planes[1].samples[ci] = std::clamp(static_cast<int>(std::lround((128.0 + 224.0 * cb / n) * scale)), 0, max_code);
      out.planes[2].samples[ci] = std::clamp(static_cast<int>(std::lround((128.0 + 224.0 * cr / n) * scale)), 0, max_code);
    }
  }
  return out;
}

}  // namespace

PlanarImage rgb_to_ycbcr709(const PlanarImage& rgb, int bits, int chroma_dx) {
  return rgb_to_ycbcr(rgb, bits, chroma_dx, 0.2126, 0.0722, ColourCoding::ycbcr_bt709);  // BT.709
}

PlanarImage rgb_to_ycbcr_hdr(const PlanarImage& rgb, int bits, int chroma_dx, TransferFunction transfer) {
  // sRGB → light (SDR white = 1) → cd/m² → BT.2020 primaries → PQ or HLG, as 16-bit R'G'B'.
  static constexpr double k709to2020[9] = {0.6274, 0.3293, 0.0433, 0.0691, 0.9195, 0.0114, 0.0164, 0.0880, 0.8956};
  const double in_max = std::ldexp(1.0, rgb.planes[0].precision) - 1.0;
  PlanarImage hdr = rgb;
  for (auto& p : hdr.planes) p.precision = 16;
  const std::size_t n = static_cast<std::size_t>(rgb.width) * rgb.height;
  for (std::size_t i = 0; i < n; ++i) {
    double nits[3];
    for (int c = 0; c < 3; ++c) {
      const double v = rgb.planes[c].samples[i] / in_max;
      const double lin = v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
      nits[c] = 203.0 * lin + (lin > 0.8 ? (lin - 0.8) / 0.2 * 800.0 : 0.0);
    }
    for (int c = 0; c < 3; ++c) {
      const double l = std::max(0.0, k709to2020[3 * c] * nits[0] + k709to2020[3 * c + 1] * nits[1] +
                                          k709to2020[3 * c + 2] * nits[2]);
      double e;
      if (transfer == TransferFunction::hlg) {
        const double scene = std::pow(l / 1000.0, 1.0 / 1.2);
        e = scene <= 1.0 / 12.0 ? std::sqrt(3.0 * scene) : 0.17883277 * std::log(12.0 * scene - 0.28466892) + 0.55991073;
      } else {
        const double y = std::pow(l / 10000.0, 2610.0 / 16384.0);
        e = std::pow((3424.0 / 4096.0 + 2413.0 / 4096.0 * 32.0 * y) / (1.0 + 2392.0 / 4096.0 * 32.0 * y), 2523.0 / 4096.0 * 128.0);
      }
      hdr.planes[c].samples[i] = static_cast<std::int32_t>(std::lround(std::clamp(e, 0.0, 1.0) * 65535.0));
    }
  }
  return rgb_to_ycbcr(hdr, bits, chroma_dx, 0.2627, 0.0593, ColourCoding::ycbcr_bt2020);  // BT.2020 non-constant luminance
}

PlanarImage rgb_to_dci_xyz(const PlanarImage& rgb, int bits) {
  static constexpr double kSrgbToXyz[9] = {0.4124, 0.3576, 0.1805, 0.2126, 0.7152, 0.0722, 0.0193, 0.1192, 0.9505};
  const double in_max = std::ldexp(1.0, rgb.planes[0].precision) - 1.0;
  const double out_max = std::ldexp(1.0, bits) - 1.0;
  PlanarImage out = rgb;
  out.colour = ColourCoding::xyz;
  for (auto& p : out.planes) p.precision = bits;
  const std::size_t n = static_cast<std::size_t>(rgb.width) * rgb.height;
  for (std::size_t i = 0; i < n; ++i) {
    double lin[3];
    for (int c = 0; c < 3; ++c) {
      const double v = rgb.planes[c].samples[i] / in_max;
      lin[c] = v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    }
    for (int c = 0; c < 3; ++c) {
      const double xyz = kSrgbToXyz[3 * c] * lin[0] + kSrgbToXyz[3 * c + 1] * lin[1] + kSrgbToXyz[3 * c + 2] * lin[2];
      const double e = std::pow(std::clamp(xyz * 48.0 / 52.37, 0.0, 1.0), 1.0 / 2.6);
      out.planes[c].samples[i] = static_cast<std::int32_t>(std::lround(e * out_max));
    }
  }
  return out;
}

Status write_png_rgba(const std::string& path, const std::uint8_t* rgba, int width, int height) {
  // Encoded in memory, then written and closed with every step checked: QImage::save to a file
  // said yes for a small picture on a full disk (the loss shows only when the file is closed).
  QImage img(rgba, width, height, width * 4, QImage::Format_RGBA8888);
  QByteArray png;
  QBuffer buffer(&png);
  if (!buffer.open(QIODevice::WriteOnly) || !img.save(&buffer, "PNG"))
    return make_error(ErrorKind::io, fmt::format("cannot encode the PNG for '{}'", path));
  std::ofstream f(path, std::ios::binary);
  f.write(png.constData(), static_cast<std::streamsize>(png.size()));
  f.close();
  if (!f) return make_error(ErrorKind::io, fmt::format("cannot write '{}'", path));
  return {};
}

Status write_pgm(const std::string& path, const Plane& plane) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return make_error(ErrorKind::io, fmt::format("cannot write '{}'", path));
  const int maxval = plane.precision > 8 ? (1 << std::min(plane.precision, 16)) - 1 : 255;
  f << "P5\n" << plane.width << ' ' << plane.height << '\n' << maxval << '\n';
  std::vector<std::uint8_t> row;
  for (int y = 0; y < plane.height; ++y) {
    row.clear();
    for (int x = 0; x < plane.width; ++x) {
      int v = std::clamp(plane.at(x, y), 0, maxval);
      if (maxval > 255) row.push_back(static_cast<std::uint8_t>(v >> 8));
      row.push_back(static_cast<std::uint8_t>(v));
    }
    f.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(row.size()));
  }
  f.close();
  if (!f) return make_error(ErrorKind::io, fmt::format("error writing '{}'", path));
  return {};
}

}  // namespace j2k::media
