#pragma once
// Reconstructed or source samples, one plane per component (the `Picture` of architecture.md).
#include <cstdint>
#include <string>
#include <vector>

namespace j2k {

/// How three components relate to colour, so the display stage converts correctly.
/// xyz: digital cinema's X'Y'Z' (SMPTE 428-1: CIE XYZ, gamma 2.6, white 48 cd/m² at 52.37 of
/// the code range), what DCI codestreams (Rsiz cinema profiles) carry.
enum class ColourCoding { unknown, rgb, ycbcr_bt601, ycbcr_bt709, ycbcr_bt2020, grey, xyz };

const char* to_string(ColourCoding coding) noexcept;

/// The transfer function of the coded samples: SDR (BT.709 / BT.1886 gamma), or high dynamic
/// range per BT.2100: PQ (SMPTE ST 2084, absolute luminance up to 10 000 cd/m²) or HLG (hybrid
/// log-gamma, relative to the display's peak).
enum class TransferFunction { sdr, pq, hlg };

const char* to_string(TransferFunction transfer) noexcept;

struct Plane {
  int width = 0;
  int height = 0;
  int dx = 1;  ///< horizontal subsampling relative to the image grid (XRsiz)
  int dy = 1;  ///< vertical subsampling (YRsiz)
  int precision = 8;
  bool is_signed = false;
  std::vector<std::int32_t> samples;  ///< row-major, width*height

  std::int32_t at(int x, int y) const { return samples[static_cast<std::size_t>(y) * width + x]; }
};

struct PlanarImage {
  int width = 0;   ///< full-resolution width of the image area
  int height = 0;
  ColourCoding colour = ColourCoding::unknown;
  bool full_range = false;  ///< YCbCr: full (0..2^n-1) or narrow/video range
  std::vector<Plane> planes;

  bool empty() const noexcept { return planes.empty(); }
  /// "1280x720 4:2:2 10-bit" style summary.
  std::string describe() const;
};

/// FNV-1a 64 over every sample of every plane (as 32-bit little-endian values) and the geometry.
/// Sender and receiver compute it the same way, so lossless streams can be verified end to end.
std::uint64_t checksum(const PlanarImage& image) noexcept;

/// "4:2:2", "4:2:0", "4:4:4", or "" when the planes do not form a usual layout.
std::string subsampling_name(const PlanarImage& image);

}  // namespace j2k
