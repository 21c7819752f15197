#include "sender/source.hpp"

#include <fmt/format.h>

#include <QImage>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "media/image_io.hpp"

namespace j2k::sender {

namespace fs = std::filesystem;

namespace {

/// The source's RGB as the stream carries it: SDR BT.709, or graded into HDR (BT.2020).
PlanarImage to_ycbcr(const PlanarImage& rgb, const PictureFormat& f) {
  if (f.dci) return media::rgb_to_dci_xyz(rgb, f.bits);
  if (f.transfer == TransferFunction::sdr) return media::rgb_to_ycbcr709(rgb, f.bits, f.chroma_dx);
  return media::rgb_to_ycbcr_hdr(rgb, f.bits, f.chroma_dx, f.transfer);
}

class ImageSource final : public FrameSource {
 public:
  ImageSource(std::vector<PlanarImage> images, std::string identity, const PictureFormat& format)
      : images_(std::move(images)), identity_(std::move(identity)), format_(format) {}

  PlanarImage frame(int index, int loop_frames) const override {
    const int per_image = std::max(1, loop_frames / static_cast<int>(images_.size()));
    const PlanarImage& img = images_[static_cast<std::size_t>(index / per_image) % images_.size()];
    // Triangle wave over the loop: pan out and back so the loop joins without a jump.
    const double t = static_cast<double>(index % per_image) / per_image;
    const double tri = t < 0.5 ? 2 * t : 2 - 2 * t;
    const int span_x = std::min(img.width - format_.width, 6 * per_image);
    const int span_y = std::min(img.height - format_.height, 3 * per_image);
    const int x = static_cast<int>(std::lround(tri * std::max(0, span_x)));
    const int y = static_cast<int>(std::lround(tri * std::max(0, span_y)));
    return to_ycbcr(media::crop(img, x, y, format_.width, format_.height), format_);
  }
  std::string identity() const override { return identity_; }

 private:
  std::vector<PlanarImage> images_;
  std::string identity_;
  PictureFormat format_;
};

/// Scales an image up (keeping aspect) when it is smaller than the picture.
Result<PlanarImage> load_covering(const fs::path& file, const PictureFormat& format) {
  QImage q(QString::fromStdString(file.string()));
  if (q.isNull()) return make_error(ErrorKind::io, fmt::format("cannot read image '{}'", file.string()));
  if (q.width() < format.width || q.height() < format.height) {
    q = q.scaled(format.width, format.height, Qt::KeepAspectRatioByExpanding, Qt::SmoothTransformation);
    const fs::path tmp = fs::temp_directory_path() / fmt::format("j2ksend-scaled-{}.png", ::getpid());
    q.save(QString::fromStdString(tmp.string()));
    auto img = media::load_rgb(tmp.string());
    fs::remove(tmp);
    return img;
  }
  return media::load_rgb(file.string());
}

// 7-segment digits: segments a b c d e f g as bits 0..6.
constexpr std::uint8_t kSegments[10] = {0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F};

class PatternSource final : public FrameSource {
 public:
  explicit PatternSource(const PictureFormat& format) : format_(format) {}

  PlanarImage frame(int index, int loop_frames) const override {
    const int w = format_.width, h = format_.height;
    PlanarImage rgb;
    rgb.width = w;
    rgb.height = h;
    rgb.colour = ColourCoding::rgb;
    rgb.planes.resize(3);
    for (auto& p : rgb.planes) {
      p.width = w;
      p.height = h;
      p.precision = 8;
      p.samples.assign(static_cast<std::size_t>(w) * h, 16);
    }
    auto fill = [&](int x0, int y0, int x1, int y1, int r, int g, int b) {
      for (int y = std::max(0, y0); y < std::min(h, y1); ++y)
        for (int x = std::max(0, x0); x < std::min(w, x1); ++x) {
          const std::size_t i = static_cast<std::size_t>(y) * w + x;
          rgb.planes[0].samples[i] = r;
          rgb.planes[1].samples[i] = g;
          rgb.planes[2].samples[i] = b;
        }
    };
    // 75 % colour bars over the top two thirds.
    static constexpr int bars[7][3] = {{191, 191, 191}, {191, 191, 0}, {0, 191, 191}, {0, 191, 0},
                                       {191, 0, 191},   {191, 0, 0},   {0, 0, 191}};
    for (int b = 0; b < 7; ++b) fill(b * w / 7, 0, (b + 1) * w / 7, 2 * h / 3, bars[b][0], bars[b][1], bars[b][2]);
    // A box sweeping across the bars, one step per frame, back to the start at the loop's end.
    const int box = std::max(8, h / 8);
    const int pos = static_cast<int>(static_cast<long long>(index % loop_frames) * (w - box) / std::max(1, loop_frames));
    fill(pos, h / 3 - box / 2, pos + box, h / 3 + box / 2, 235, 235, 235);
    // The frame number in 7-segment digits along the bottom third.
    const std::string digits = fmt::format("{:06d}", index);
    const int dh = h / 4, dw = dh / 2, t = std::max(2, dh / 10);
    int x = w / 2 - static_cast<int>(digits.size()) * (dw + t * 2) / 2;
    const int y = 2 * h / 3 + (h / 3 - dh) / 2;
    for (char ch : digits) {
      const std::uint8_t s = kSegments[ch - '0'];
      if (s & 0x01) fill(x, y, x + dw, y + t, 235, 235, 235);
      if (s & 0x02) fill(x + dw - t, y, x + dw, y + dh / 2, 235, 235, 235);
      if (s & 0x04) fill(x + dw - t, y + dh / 2, x + dw, y + dh, 235, 235, 235);
      if (s & 0x08) fill(x, y + dh - t, x + dw, y + dh, 235, 235, 235);
      if (s & 0x10) fill(x, y + dh / 2, x + t, y + dh, 235, 235, 235);
      if (s & 0x20) fill(x, y, x + t, y + dh / 2, 235, 235, 235);
      if (s & 0x40) fill(x, y + dh / 2 - t / 2, x + dw, y + dh / 2 + t / 2, 235, 235, 235);
      x += dw + 2 * t;
    }
    return to_ycbcr(rgb, format_);
  }
  std::string identity() const override { return "pattern-v1"; }

 private:
  PictureFormat format_;
};

}  // namespace

Result<std::unique_ptr<FrameSource>> make_image_source(const std::string& path, const PictureFormat& format) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const auto ext = entry.path().extension().string();
      if (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp" || ext == ".ppm") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) return make_error(ErrorKind::io, fmt::format("no images (.png/.jpg/.bmp/.ppm) in '{}'", path));
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    return make_error(ErrorKind::io, fmt::format("image '{}' does not exist", path));
  }
  std::vector<PlanarImage> images;
  std::string identity;
  for (const auto& f : files) {
    auto img = load_covering(f, format);
    if (!img) return img.error();
    images.push_back(std::move(img).value());
    identity += fmt::format("{}:{}:{};", fs::absolute(f).string(), fs::file_size(f, ec),
                            fs::last_write_time(f, ec).time_since_epoch().count());
  }
  return std::unique_ptr<FrameSource>(new ImageSource(std::move(images), identity, format));
}

std::unique_ptr<FrameSource> make_pattern_source(const PictureFormat& format) {
  return std::make_unique<PatternSource>(format);
}

}  // namespace j2k::sender
