#pragma once
// Small parsers for command-line values shared by the tools.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "core/result.hpp"

namespace j2k::cli {

/// "1280x720" → width, height, each within [min, max]. The error (for `option`) tells a
/// value that is not of the form WxH from one that is, but out of range.
inline Result<std::pair<int, int>> parse_size(const std::string& option, const std::string& s, int min = 16,
                                              int max = 16384) {
  const auto x = s.find_first_of("xX");
  auto number = [](const std::string& part, int& out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return !part.empty() && ec == std::errc() && end == part.data() + part.size();
  };
  int w = 0, h = 0;
  if (x == std::string::npos || !number(s.substr(0, x), w) || !number(s.substr(x + 1), h))
    return make_error(ErrorKind::corrupt, fmt::format("{} '{}' is not WxH (e.g. 1280x720)", option, s));
  if (w < min || h < min || w > max || h > max)
    return make_error(ErrorKind::corrupt,
                      fmt::format("{} {}x{} is out of range: width and height must be {}..{}", option, w, h, min, max));
  return std::make_pair(w, h);
}

/// The frame rates the tools accept, in frames per second.
inline constexpr double kMinFps = 1, kMaxFps = 1000;

/// "50", "25", "30000/1001", "29.97", "59.94" → rational frame rate, kMinFps..kMaxFps.
inline std::optional<std::pair<int, int>> parse_fps(const std::string& s) {
  int num = 0, den = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%d/%d%c", &num, &den, &tail) == 2) {
    if (num <= 0 || den <= 0) return std::nullopt;
    const double v = static_cast<double>(num) / den;
    if (v < kMinFps || v > kMaxFps) return std::nullopt;
    return std::make_pair(num, den);
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < kMinFps || v > kMaxFps) return std::nullopt;
  if (std::fabs(v - std::round(v)) < 1e-9) return std::make_pair(static_cast<int>(std::lround(v)), 1);
  // NTSC-family rates: 23.976, 29.97, 59.94 are n·1000/1001.
  const double ntsc = v * 1.001;
  if (std::fabs(ntsc - std::round(ntsc)) < 0.01) return std::make_pair(static_cast<int>(std::lround(ntsc)) * 1000, 1001);
  return std::make_pair(static_cast<int>(std::lround(v * 1000)), 1000);
}

/// "40M", "800k", "1.5G", "40000000" → bits per second (finite, above 0, at most 100 Gbit/s).
inline std::optional<double> parse_bitrate(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v <= 0) return std::nullopt;
  std::string unit(end);
  if (unit == "k" || unit == "K") v *= 1e3;
  else if (unit == "M" || unit == "m") v *= 1e6;
  else if (unit == "G" || unit == "g") v *= 1e9;
  else if (!unit.empty()) return std::nullopt;
  if (v > 100e9) return std::nullopt;
  return v;
}

}  // namespace j2k::cli
