#pragma once
// What the test sender shows: a window moving over real photographs, or a synthetic
// pattern with a frame counter (for pixel-exact checks).
#include <memory>
#include <string>
#include <vector>

#include "core/planar_image.hpp"
#include "core/result.hpp"

namespace j2k::sender {

struct PictureFormat {
  int width = 1280;
  int height = 720;
  int bits = 8;        ///< 8..16
  int chroma_dx = 2;   ///< 2 = 4:2:2, 1 = 4:4:4
  /// SDR: YCbCr BT.709 as the source is; PQ or HLG: the source graded into BT.2100 HDR, YCbCr
  /// BT.2020 (media::rgb_to_ycbcr_hdr).
  TransferFunction transfer = TransferFunction::sdr;
  /// Digital cinema X'Y'Z' (media::rgb_to_dci_xyz) instead of YCbCr; 4:4:4.
  bool dci = false;
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  /// Frame `index` of a loop of `loop_frames` (the loop returns to its start seamlessly).
  virtual PlanarImage frame(int index, int loop_frames) const = 0;
  /// Identifies the content for the encode cache (file names, sizes, modification times).
  virtual std::string identity() const = 0;
};

/// A window panning back and forth across the image(s); a directory is played in name order.
Result<std::unique_ptr<FrameSource>> make_image_source(const std::string& path, const PictureFormat& format);
/// Colour bars, a moving box and the frame number in large digits.
std::unique_ptr<FrameSource> make_pattern_source(const PictureFormat& format);

}  // namespace j2k::sender
