#include "core/planar_image.hpp"

#include <fmt/format.h>

#include "core/result.hpp"

namespace j2k {

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::need_more_data: return "need more data";
    case ErrorKind::corrupt: return "corrupt";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::limit: return "over limit";
    case ErrorKind::io: return "i/o";
  }
  return "?";
}

const char* to_string(ColourCoding coding) noexcept {
  switch (coding) {
    case ColourCoding::unknown: return "unknown";
    case ColourCoding::rgb: return "RGB";
    case ColourCoding::ycbcr_bt601: return "YCbCr BT.601";
    case ColourCoding::ycbcr_bt709: return "YCbCr BT.709";
    case ColourCoding::ycbcr_bt2020: return "YCbCr BT.2020";
    case ColourCoding::grey: return "grey";
    case ColourCoding::xyz: return "X'Y'Z' (digital cinema)";
  }
  return "?";
}

const char* to_string(TransferFunction transfer) noexcept {
  switch (transfer) {
    case TransferFunction::sdr: return "SDR";
    case TransferFunction::pq: return "HDR PQ";
    case TransferFunction::hlg: return "HDR HLG";
  }
  return "?";
}

std::string subsampling_name(const PlanarImage& image) {
  if (image.planes.size() != 3) return image.planes.size() == 1 ? "4:0:0" : "";
  const Plane& y = image.planes[0];
  const Plane& c = image.planes[1];
  if (y.dx != 1 || y.dy != 1 || image.planes[2].dx != c.dx || image.planes[2].dy != c.dy) return "";
  if (c.dx == 1 && c.dy == 1) return "4:4:4";
  if (c.dx == 2 && c.dy == 1) return "4:2:2";
  if (c.dx == 2 && c.dy == 2) return "4:2:0";
  return "";
}

std::string PlanarImage::describe() const {
  if (planes.empty()) return "empty";
  std::string sub = subsampling_name(*this);
  if (sub.empty()) sub = fmt::format("{} components", planes.size());
  return fmt::format("{}x{} {} {}-bit", width, height, sub, planes[0].precision);
}

std::uint64_t checksum(const PlanarImage& image) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<std::uint32_t>(image.planes.size()));
  for (const Plane& p : image.planes) {
    mix(static_cast<std::uint32_t>(p.width));
    mix(static_cast<std::uint32_t>(p.height));
    for (std::int32_t s : p.samples) mix(static_cast<std::uint32_t>(s));
  }
  return h;
}

}  // namespace j2k
