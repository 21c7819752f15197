#pragma once
// A JPEG 2000 corpus made at test time with the reference encoders (opj_compress,
// grk_compress) from real photograph crops and a few synthetic images.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/planar_image.hpp"
#include "decoder/decoder.hpp"
#include "media/image_io.hpp"
#include "test_images.hpp"

namespace j2k::test {

enum class Source {
  rgb8,        ///< flower crop, RGB 8-bit, written as PPM
  grey8,       ///< luma of the crop, written as PGM
  grey12,      ///< 12-bit luma, PGM (16-bit samples)
  grey16,      ///< 16-bit luma, PGM
  ycc422_10,   ///< YCbCr 4:2:2 10-bit, raw with -F ...@1x1:2x1:2x1
  ycc420_8,    ///< YCbCr 4:2:0 8-bit, raw with -F ...@1x1:2x2:2x2
  rgba8,       ///< 4 components (RGB + luma as a 4th), raw
  signed12,    ///< 1 signed 12-bit component (synthetic ramp + photo), raw
  tiny1bit,    ///< 1-bit synthetic, raw
};

enum class Encoder { opj, grk };

struct CorpusCase {
  std::string name;
  Source source;
  int width, height;
  std::string args;  ///< encoder arguments
  bool lossless;
  Encoder encoder = Encoder::opj;
  /// OpenJPEG decodes this stream off the standard (see the case's comment): a lossy case is
  /// then checked against the source, at least as close as OpenJPEG's decode, instead of
  /// within ±1 of it.
  bool openjpeg_off_standard = false;
};

inline std::filesystem::path scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::path(::testing::TempDir()) / ("j2k_own_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline const PlanarImage& flower_rgb() {
  static const PlanarImage flower = [] {
    auto img = media::load_rgb(media_path("flower.png"));
    if (!img.ok()) throw std::runtime_error(img.error().message);
    return std::move(img).value();
  }();
  return flower;
}

inline PlanarImage make_source(Source s, int w, int h) {
  PlanarImage img;
  auto grey_from = [&](int bits) {
    PlanarImage y = photo_ycbcr(w, h, bits, 1);
    y.planes.resize(1);
    y.colour = ColourCoding::grey;
    return y;
  };
  switch (s) {
    case Source::rgb8: return media::crop(flower_rgb(), 700, 500, w, h);
    case Source::grey8: return grey_from(8);
    case Source::grey12: return grey_from(12);
    case Source::grey16: return grey_from(16);
    case Source::ycc422_10: return photo_ycbcr(w, h, 10, 2);
    case Source::ycc420_8: {
      img = photo_ycbcr(w, h, 8, 2);
      for (int c = 1; c < 3; ++c) {  // average row pairs: 4:2:2 -> 4:2:0
        Plane& p = img.planes[c];
        Plane q = p;
        q.height = (p.height + 1) / 2;
        q.dy = 2;
        q.samples.assign(static_cast<std::size_t>(q.width) * q.height, 0);
        for (int y = 0; y < q.height; ++y)
          for (int x = 0; x < q.width; ++x) {
            int a = p.at(x, 2 * y), b = p.at(x, std::min(2 * y + 1, p.height - 1));
            q.samples[static_cast<std::size_t>(y) * q.width + x] = (a + b + 1) / 2;
          }
        p = q;
      }
      return img;
    }
    case Source::rgba8: {
      img = media::crop(flower_rgb(), 300, 200, w, h);
      img.planes.push_back(grey_from(8).planes[0]);
      return img;
    }
    case Source::signed12: {
      img = grey_from(12);
      Plane& p = img.planes[0];
      p.is_signed = true;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          auto& v = p.samples[static_cast<std::size_t>(y) * w + x];
          v = std::clamp(v - 2048 + ((x * 13 + y * 7) % 200) - 100, -2048, 2047);
        }
      return img;
    }
    case Source::tiny1bit: {
      img = grey_from(8);
      Plane& p = img.planes[0];
      p.precision = 1;
      for (auto& v : p.samples) v = v > 120 ? 1 : 0;
      return img;
    }
  }
  return img;
}

/// Writes the source in the form the encoders read; returns the path and extra -F argument.
inline std::pair<std::string, std::string> write_source(const PlanarImage& img, Source s, const std::string& stem) {
  auto dir = scratch_dir();
  if (s == Source::rgb8) {
    std::string path = (dir / (stem + ".ppm")).string();
    std::ofstream f(path, std::ios::binary);
    f << "P6\n" << img.width << ' ' << img.height << "\n255\n";
    for (std::size_t i = 0; i < img.planes[0].samples.size(); ++i)
      for (int c = 0; c < 3; ++c) f.put(static_cast<char>(img.planes[c].samples[i]));
    return {path, ""};
  }
  if (s == Source::grey8 || s == Source::grey12 || s == Source::grey16) {
    std::string path = (dir / (stem + ".pgm")).string();
    EXPECT_TRUE(media::write_pgm(path, img.planes[0]).ok());
    return {path, ""};
  }
  // Raw: components one after the other, big-endian 16-bit samples above 8 bits.
  std::string path = (dir / (stem + ".raw")).string();
  std::ofstream f(path, std::ios::binary);
  const Plane& p0 = img.planes[0];
  std::string spec = std::to_string(img.width) + "," + std::to_string(img.height) + "," +
                     std::to_string(img.planes.size()) + "," + std::to_string(p0.precision) + "," +
                     (p0.is_signed ? "s" : "u");
  bool sub = false;
  for (auto& p : img.planes) sub |= p.dx != 1 || p.dy != 1;
  if (sub) {
    spec += "@";
    for (std::size_t c = 0; c < img.planes.size(); ++c)
      spec += (c ? ":" : "") + std::to_string(img.planes[c].dx) + "x" + std::to_string(img.planes[c].dy);
  }
  for (const Plane& p : img.planes)
    for (std::int32_t v : p.samples) {
      auto u = static_cast<std::uint32_t>(v);
      if (p.precision > 8) f.put(static_cast<char>(u >> 8));
      f.put(static_cast<char>(u));
    }
  return {path, "-F " + spec};
}

inline std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// Encodes `img` with the case's encoder; empty on failure (the test reports it).
inline std::vector<std::uint8_t> encode_case(const PlanarImage& img, const CorpusCase& c, const std::string& ext = ".j2k") {
  auto [in, raw_arg] = write_source(img, c.source, c.name);
  std::string out = (scratch_dir() / (c.name + ext)).string();
  std::string tool = c.encoder == Encoder::opj ? "opj_compress" : "grk_compress";
  std::string cmd = tool + " -i " + in + " -o " + out + " " + raw_arg + " " + c.args + " > " +
                    (scratch_dir() / (c.name + ".log")).string() + " 2>&1";
  std::filesystem::remove(out);
  if (std::system(cmd.c_str()) != 0) return {};
  return read_file(out);
}

}  // namespace j2k::test
